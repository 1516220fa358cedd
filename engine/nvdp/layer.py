"""The NVIB layer, its denoising attention and the small NVDP classifier (torch).

Sources: Henderson & Fehr, "A VAE for Transformers with Nonparametric Variational Information
Bottleneck", ICLR 2023 (NVIB); El Zein & Henderson, arXiv:2601.02307 (NVDP); El Zein, Kumar &
Henderson, arXiv:2603.09583 (clipping). Implemented from the formulas of NVDP.md section 2 and 3.

Pipeline for token states h (B, n, d) with mask (B, n):

1. posteriors: mu = W_mu h + b_mu, log sigma^2 = W_s h + b_s, log alpha = w1.h + w2.(h*h) + b_a;
   log alpha is clamped to [LOG_ALPHA_MIN, LOG_ALPHA_MAX] = [-20, 15] before exp (alpha in
   [2.1e-9, 3.3e6]) so that exp cannot overflow and Gamma sampling stays finite; log sigma^2 is
   clamped to [-20, 10] for the same reason (the clamps are inactive in normal training);
2. the prior component is prepended at index 0 (mu 0, sigma 1, alpha 1); padding gets alpha 0
   (or, with the length-hiding option ``NVIBConfig.n_components``, the prior's parameters, released);
3. optional clipping (:func:`engine.nvdp.clipping.clip_posteriors`);
4. reparameterised sampling, at train AND eval (the sample is what is shared):
   z = mu + sigma * eps, gamma ~ Gamma(alpha, 1) (``torch.distributions.Gamma.rsample``, drawn in
   float64), pi = gamma / sum of gamma over non-padding components; padding gets pi = 0 exactly
   (its gamma is never drawn: a placeholder concentration 1 is used and the draw is replaced by 0);
5. denoising attention: queries from the clean states h, keys/values from z, scores
   (q.k)/sqrt(d_h) + log pi_j - ||z_j||^2 / (2 sqrt(d_h)), padding and pi_j = 0 masked out, NO
   residual around it (LayerNorm(W_o attn)); then an FFN sub-layer with residual and LayerNorm;
6. masked mean pooling over the real query positions and a linear classifier.

Initialisation (documented choice, research notes A6): all Linear weights N(0, 0.02), biases 0
(what the released code effectively runs with under HF's re-initialisation), except that the
alpha bias is 0 so alpha starts near 1 = alpha_p.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from engine.nvdp.clipping import ClipConfig, ClipStats, clip_posteriors

__all__ = [
    "NVIBConfig",
    "Posteriors",
    "NVIBLayer",
    "DenoisingAttention",
    "NVDPClassifier",
    "sample_latents",
    "hide_length",
    "kl_gaussian",
    "kl_dirichlet",
    "LOG_ALPHA_MIN",
    "LOG_ALPHA_MAX",
]

LOG_ALPHA_MIN = -20.0
LOG_ALPHA_MAX = 15.0
LOGVAR_MIN = -20.0
LOGVAR_MAX = 10.0


@dataclass(frozen=True)
class NVIBConfig:
    """Architecture of :class:`NVDPClassifier`.

    Parameters
    ----------
    d : int, default 384
        Hidden size of the token states and of the latent (NVDP.md: posteriors live in d dims).
    n_heads : int, default 4
        Heads of the denoising attention (d_h = d / n_heads = 96).
    ffn_dim : int, default 512
        Inner size of the FFN sub-layer.
    n_classes : int, default 2
    n_components : int or None, default None
        The length-hiding mechanism (not in the papers): every input is released with exactly this
        many components (the prior's at index 0 included); positions beyond the input's tokens get
        the prior's parameters (mu 0, sigma 1, alpha 1), are clipped, sampled and released like the
        others, so a sample no longer reveals the length and the exact Renyi bound is finite across
        lengths (under clipping that bounds every term). None (the authors' layer): padding has
        alpha = 0 and pi = 0 exactly, and two inputs of different lengths are distinguishable.
        Must exceed the longest input (tokens + 1); typically max_length + 1.
    """

    d: int = 384
    n_heads: int = 4
    ffn_dim: int = 512
    n_classes: int = 2
    n_components: int | None = None

    def __post_init__(self):
        for name in ("d", "n_heads", "ffn_dim", "n_classes"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive int; got {v!r}")
        if self.d % self.n_heads:
            raise ValueError(f"d ({self.d}) must be divisible by n_heads ({self.n_heads})")
        if self.n_classes < 2:
            raise ValueError(f"n_classes must be >= 2; got {self.n_classes}")
        if self.n_components is not None and (isinstance(self.n_components, bool)
                                              or not isinstance(self.n_components, int) or self.n_components < 2):
            raise ValueError(f"n_components must be None or an int >= 2; got {self.n_components!r}")

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["n_components"] is None:
            d.pop("n_components")  # configs of the authors' layer stay as they were
        return d


def hide_length(post: "Posteriors", n_components: int) -> "Posteriors":
    """The length-hiding mechanism: every position beyond the input's tokens gets the prior's parameters
    (mu 0, sigma 1, alpha 1) and is released, up to exactly ``n_components`` components.

    Parameters
    ----------
    post : Posteriors
        Posteriors of the authors' layer (prior at index 0, padding masked), k <= n_components.
    n_components : int

    Returns
    -------
    Posteriors
        Shape (B, n_components, ...), mask all True (nothing is padding any more).

    Raises
    ------
    ValueError
        An input has more components than ``n_components``.

    Examples
    --------
    >>> p = Posteriors(torch.ones(1, 2, 3), torch.full((1, 2, 3), 0.5), torch.tensor([[1.0, 2.0]]),
    ...                torch.tensor([[True, True]]))
    >>> h = hide_length(p, 4)
    >>> h.alpha.tolist(), bool(h.mask.all()), h.mu[0, 3].tolist(), h.sigma[0, 3].tolist()
    ([[1.0, 2.0, 1.0, 1.0]], True, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    """
    B, k, d = post.mu.shape
    longest = int(post.mask.sum(1).max()) if B else 0
    if longest > n_components:
        raise ValueError(f"an input has {longest} components, more than the length-hiding n_components = {n_components}")
    keep = post.mask[:, :n_components].unsqueeze(-1)
    if k < n_components:
        extra = n_components - k
        mu = torch.cat([post.mu, post.mu.new_zeros(B, extra, d)], 1)
        sigma = torch.cat([post.sigma, post.sigma.new_ones(B, extra, d)], 1)
        alpha = torch.cat([post.alpha, post.alpha.new_ones(B, extra)], 1)
        keep = torch.cat([post.mask, post.mask.new_zeros(B, extra)], 1).unsqueeze(-1)
    else:
        mu, sigma, alpha = post.mu[:, :n_components], post.sigma[:, :n_components], post.alpha[:, :n_components]
    mu = torch.where(keep, mu, torch.zeros_like(mu))
    sigma = torch.where(keep, sigma, torch.ones_like(sigma))
    alpha = torch.where(keep[..., 0], alpha, torch.ones_like(alpha))
    return Posteriors(mu, sigma, alpha, torch.ones(B, n_components, dtype=torch.bool))


@dataclass
class Posteriors:
    """NVIB posterior parameters of a batch, prior component at index 0.

    Attributes
    ----------
    mu, sigma : torch.Tensor of shape (B, k, d), k = n_tokens + 1
    alpha : torch.Tensor of shape (B, k), 0 on padding
    mask : torch.Tensor of shape (B, k), bool; True on the prior component and real tokens
    """

    mu: torch.Tensor
    sigma: torch.Tensor
    alpha: torch.Tensor
    mask: torch.Tensor

    def detach(self) -> "Posteriors":
        """A detached CPU copy."""
        return Posteriors(self.mu.detach().cpu(), self.sigma.detach().cpu(), self.alpha.detach().cpu(), self.mask.detach().cpu())

    def clip(self, cfg: ClipConfig) -> tuple["Posteriors", ClipStats]:
        """Apply :func:`clip_posteriors` (post-hoc clipping of stored posteriors)."""
        mu, sigma, alpha, stats = clip_posteriors(self.mu, self.sigma, self.alpha, self.mask, cfg)
        return Posteriors(mu, sigma, alpha, self.mask), stats

    def __len__(self) -> int:
        return int(self.mu.shape[0])

    @staticmethod
    def cat(parts) -> "Posteriors":
        """Concatenate along the batch axis."""
        parts = list(parts)
        return Posteriors(*(torch.cat([getattr(p, f) for p in parts]) for f in ("mu", "sigma", "alpha", "mask")))


class NVIBLayer(nn.Module):
    """Posterior parameters mu, sigma, alpha of each token plus the prior component (NVDP.md section 2).

    Parameters
    ----------
    d : int
        Hidden size.
    """

    def __init__(self, d: int, n_components: int | None = None):
        super().__init__()
        self.d = d
        self.n_components = n_components
        self.mu_proj = nn.Linear(d, d)
        self.logvar_proj = nn.Linear(d, d)
        self.alpha_lin = nn.Linear(d, 1)
        self.alpha_quad = nn.Linear(d, 1, bias=False)
        for lin in (self.mu_proj, self.logvar_proj, self.alpha_lin, self.alpha_quad):
            nn.init.normal_(lin.weight, std=0.02)
            if lin.bias is not None:
                nn.init.zeros_(lin.bias)

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> Posteriors:
        """Posteriors of token states ``h`` (B, n, d) with ``mask`` (B, n); returns k = n + 1 components."""
        mu = self.mu_proj(h)
        logvar = self.logvar_proj(h).clamp(LOGVAR_MIN, LOGVAR_MAX)
        log_alpha = (self.alpha_lin(h) + self.alpha_quad(h * h)).squeeze(-1).clamp(LOG_ALPHA_MIN, LOG_ALPHA_MAX)
        sigma = torch.exp(0.5 * logvar)
        alpha = torch.exp(log_alpha)
        B = h.shape[0]
        mu = torch.cat([mu.new_zeros(B, 1, self.d), mu], dim=1)
        sigma = torch.cat([sigma.new_ones(B, 1, self.d), sigma], dim=1)
        alpha = torch.cat([alpha.new_ones(B, 1), alpha], dim=1)
        full_mask = torch.cat([mask.new_ones(B, 1, dtype=torch.bool), mask.bool()], dim=1)
        alpha = torch.where(full_mask, alpha, torch.zeros_like(alpha))
        post = Posteriors(mu, sigma, alpha, full_mask)
        return post if self.n_components is None else hide_length(post, self.n_components)


def sample_latents(post: Posteriors, *, generator: torch.Generator | None = None, return_eps: bool = False):
    """Reparameterised sample (z, pi) of the NVIB posterior.

    Parameters
    ----------
    post : Posteriors
        mu, sigma (B, k, d); alpha, mask (B, k).
    generator : torch.Generator, optional
        Draw from this generator instead of torch's global one (evaluation only: the Gamma draws
        are then ``torch._standard_gamma`` / 1 clamped at the smallest normal, the operations of
        ``Gamma.rsample``, so a generator seeded with s gives the draws of a call after
        ``torch.manual_seed(s)``; ``tests/engine/test_nvdp_live_speed.py``).
    return_eps : bool, default False
        Also return the standard normal draws.

    Returns
    -------
    z : torch.Tensor of shape (B, k, d)
        z = mu + sigma * eps, eps ~ N(0, I).
    pi : torch.Tensor of shape (B, k)
        gamma / sum(gamma) with gamma ~ Gamma(alpha, 1) over non-padding components; exactly 0 on
        padding, >= 0, rows summing to 1. Gamma draws use float64 and
        ``torch.distributions.Gamma.rsample`` (implicit reparameterisation gradients).
    eps : torch.Tensor of shape (B, k, d)
        Only with ``return_eps``: the standard normal draws.

    Notes
    -----
    Without ``generator`` randomness comes from torch's global generator: seed it
    (``torch.manual_seed``) or wrap the call in ``torch.random.fork_rng`` for reproducible draws.
    """
    if generator is None:
        eps = torch.randn_like(post.mu)
    else:
        eps = torch.randn(post.mu.shape, dtype=post.mu.dtype, generator=generator)
    z = post.mu + post.sigma * eps
    conc = torch.where(post.mask, post.alpha.double().clamp_min(1e-30), torch.ones_like(post.alpha, dtype=torch.float64))
    if generator is None:
        gamma = torch.distributions.Gamma(conc, torch.ones_like(conc)).rsample()
    else:  # Gamma(conc, rate 1).rsample() with the given generator (no gradient needed at evaluation)
        gamma = torch._standard_gamma(conc, generator=generator) / torch.ones_like(conc)
        gamma.clamp_(min=torch.finfo(gamma.dtype).tiny)
    gamma = torch.where(post.mask, gamma, torch.zeros_like(gamma))
    total = gamma.sum(dim=-1, keepdim=True)
    pi = gamma / total.clamp_min(torch.finfo(torch.float64).tiny)
    # All gammas of a row can underflow to 0 only if every alpha is tiny; then fall back to the prior.
    degenerate = total <= 0
    if bool(degenerate.any()):
        prior_only = torch.zeros_like(pi)
        prior_only[..., 0] = 1.0
        pi = torch.where(degenerate, prior_only, pi)
    return (z, pi.to(post.mu.dtype), eps) if return_eps else (z, pi.to(post.mu.dtype))


class DenoisingAttention(nn.Module):
    """Attention reading keys/values from the NVIB sample z and queries from the clean states.

    Score of query t on latent j (per head): (q_t . k_j) / sqrt(d_h) + log pi_j - ||z_j||^2 / (2 sqrt(d_h)),
    with ||z_j|| the norm of the full d-dim z_j; components with pi_j = 0 (padding) are masked out.
    Output: LayerNorm(W_o softmax(scores) V) -- no residual around the attention; the clean states still enter
    through the queries, so the privacy bounds cover the released latent (z, pi), not this layer's output.
    """

    def __init__(self, d: int, n_heads: int):
        super().__init__()
        self.d, self.n_heads, self.d_h = d, n_heads, d // n_heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        for lin in (self.q, self.k, self.v, self.out):
            nn.init.normal_(lin.weight, std=0.02)
            nn.init.zeros_(lin.bias)

    def forward(self, h: torch.Tensor, z: torch.Tensor, pi: torch.Tensor, q: torch.Tensor | None = None) -> torch.Tensor:
        """Attention output (B, n, d); ``q`` may pass ``self.q(h)`` computed before (it does not depend on z)."""
        B, n, _ = h.shape
        k = z.shape[1]
        H, dh = self.n_heads, self.d_h
        q = (self.q(h) if q is None else q).view(B, n, H, dh).transpose(1, 2)  # (B, H, n, dh)
        kk = self.k(z).view(B, k, H, dh).transpose(1, 2)  # (B, H, k, dh)
        v = self.v(z).view(B, k, H, dh).transpose(1, 2)
        scores = q @ kk.transpose(-1, -2) / math.sqrt(dh)  # (B, H, n, k)
        keep = pi > 0
        log_pi = torch.log(torch.where(keep, pi, torch.ones_like(pi)))
        bias = log_pi - (z * z).sum(-1) / (2.0 * math.sqrt(dh))  # (B, k)
        bias = bias.masked_fill(~keep, float("-inf"))
        attn = torch.softmax(scores + bias[:, None, None, :], dim=-1)
        ctx = (attn @ v).transpose(1, 2).reshape(B, n, self.d)
        return self.norm(self.out(ctx))


class NVDPClassifier(nn.Module):
    """NVIB layer + denoising attention + FFN + masked mean pooling + linear classifier.

    Parameters
    ----------
    config : NVIBConfig
    clip : ClipConfig, optional
        Clipping used in :meth:`forward` (train and eval). Default: disabled (the baseline).
    """

    def __init__(self, config: NVIBConfig | None = None, clip: ClipConfig | None = None):
        super().__init__()
        self.config = config or NVIBConfig()
        self.clip = clip or ClipConfig(enabled=False)
        d = self.config.d
        self.nvib = NVIBLayer(d, self.config.n_components)
        self.attn = DenoisingAttention(d, self.config.n_heads)
        self.ffn = nn.Sequential(nn.Linear(d, self.config.ffn_dim), nn.GELU(), nn.Linear(self.config.ffn_dim, d))
        self.ffn_norm = nn.LayerNorm(d)
        self.classifier = nn.Linear(d, self.config.n_classes)

    def posteriors(self, h: torch.Tensor, mask: torch.Tensor) -> Posteriors:
        """Unclipped posteriors (prior component at index 0)."""
        if h.ndim != 3 or h.shape[-1] != self.config.d:
            raise ValueError(f"token states must have shape (B, n, {self.config.d}); got {tuple(h.shape)}")
        return self.nvib(h, mask)

    def forward(self, h: torch.Tensor, mask: torch.Tensor, clip: ClipConfig | None = None) -> dict:
        """Logits and everything the loss and the diagnostics need.

        Parameters
        ----------
        h : torch.Tensor of shape (B, n, d)
        mask : torch.Tensor of shape (B, n), bool
        clip : ClipConfig, optional
            Overrides ``self.clip`` for this call.

        Returns
        -------
        dict with keys ``logits`` (B, n_classes), ``raw`` (unclipped :class:`Posteriors`), ``post``
        (clipped, or the same as raw when clipping is off), ``z`` (B, k, d), ``pi`` (B, k),
        ``clip_stats`` (:class:`ClipStats`).
        """
        clip = clip or self.clip
        raw = self.posteriors(h, mask)
        post, stats = raw.clip(clip)
        z, pi = sample_latents(post)
        a = self.attn(h, z, pi)
        x = self.ffn_norm(self.ffn(a) + a)
        m = mask.to(x.dtype).unsqueeze(-1)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        logits = self.classifier(pooled)
        return {"logits": logits, "raw": raw, "post": post, "z": z, "pi": pi, "clip_stats": stats}


def kl_gaussian(post: Posteriors) -> torch.Tensor:
    """alpha-weighted Gaussian KL to the prior N(0, I), averaged over dims (NVIB L_G).

    L_G = 1/2 sum_i (alpha_i / alpha_0) mean_d[sigma^2 + mu^2 - 1 - log sigma^2], summed over all
    non-padding components (prior included; its term is 0), alpha_0 = sum_i alpha_i.

    Returns
    -------
    torch.Tensor of shape (B,)
    """
    var = post.sigma * post.sigma
    per = 0.5 * (var + post.mu * post.mu - 1.0 - torch.log(var)).mean(-1)  # (B, k)
    w = post.alpha / post.alpha.sum(-1, keepdim=True).clamp_min(1e-30)
    return (w * per * post.mask).sum(-1)


def kl_dirichlet(post: Posteriors, prior_alpha: float = 1.0) -> torch.Tensor:
    """KL between symmetric Dirichlets Dir((alpha_0^q / k) 1_k) || Dir((alpha_0^p / k) 1_k), divided by k.

    k is the number of non-padding components of each input (prior included), alpha_0^q the sum of
    the posterior pseudo-counts, alpha_0^p = ``prior_alpha`` (= 1; delta = 0 in the NVDP code). The
    division by k follows the NVIB code's normalisation (research notes 1.5). Computed in float64.
    Unlike the released code, padding is excluded (the keyword mismatch there includes it; A12).

    Returns
    -------
    torch.Tensor of shape (B,)

    Examples
    --------
    >>> m = torch.tensor([[True, True, False]])
    >>> p = Posteriors(torch.zeros(1, 3, 2), torch.ones(1, 3, 2), torch.tensor([[0.5, 0.5, 0.0]]), m)
    >>> float(kl_dirichlet(p))  # alpha_0^q = alpha_0^p = 1 gives 0
    0.0
    """
    a_q = post.alpha.double().sum(-1)
    kk = post.mask.double().sum(-1)
    a_p = torch.full_like(a_q, float(prior_alpha))
    lg = torch.lgamma
    kl = lg(a_q) - lg(a_p) + (a_q - a_p) * (torch.digamma(a_q / kk) - torch.digamma(a_q)) + kk * (lg(a_p / kk) - lg(a_q / kk))
    return (kl / kk).to(post.alpha.dtype)
