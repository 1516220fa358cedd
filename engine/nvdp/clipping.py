"""Embedding-parameter clipping for NVDP (El Zein, Kumar & Henderson 2026, arXiv:2603.09583).

Three rules, applied to the NVIB posterior parameters after the prior component is added and
before sampling (NVDP.md section 3), behind one switch (:class:`ClipConfig.enabled`). Non-finite
inputs (NaN / inf in mu, sigma or alpha), sigma <= 0 and alpha < 0 raise ``ValueError`` first:
nothing is clipped or released.

- mean: mu_i <- mu_i * min(1, C_mu / ||mu_i||_2), the projection onto the L2 ball of radius C_mu
  around the prior mean mu_p = 0 (differentiable), nudged inwards by ulps so that the stored floats
  satisfy ||mu_i|| <= C_mu;
- std: sigma_i <- max(sigma_i, sqrt((lambda - 1) / lambda) * sigma_ref) with sigma_ref = 1 (the
  prior std; the neighbour is unknown at encoding time). At lambda = renyi_order = 1.1 the floor is
  0.30151;
- pseudo-count: alpha_i <- clamp(alpha_i, alpha_min, alpha_max).

Gradients are plain autograd (no straight-through estimator): clamped entries of sigma and alpha
get zero gradient, the mean projection passes a (projected) gradient.

Which components the rules touch. As in the authors' code, the rules are applied to *every*
component including the prior (index 0). mu_p = 0 and sigma_p = 1 are never changed by them; alpha_p
= 1 is changed only when alpha_max < 1 or alpha_min > 1. Padding keeps alpha = 0 (it is re-zeroed
after the clamp so that alpha_min > 0 cannot resurrect padding). :class:`ClipStats` counts only the
*real token* components (not the prior, not padding), so a fraction means "share of token
posteriors changed by this rule".

Defaults (d = 384, all-MiniLM-L6-v2 states). The paper's C_mu of 3-10 is for d = 1024 BERT-large.
Measured on our trained *unclipped* models (test split, 500 sentences, 8119 token components,
5 epochs, seed 0): ||mu|| has 5 % / 50 % / 95 % quantiles 2.2 / 4.8 / 9.4 at KL weight 1e-3 and
2.3 / 4.8 / 10.0 at 1e-2. The default C_mu = 5 sits at the median, so the mean rule binds for
about half of the token means (45 % measured), as a radius in the paper's range does for BERT-large;
C_mu = 10 would clip only 3 %. alpha_max = 1.0 is the authors' setting for SST-2 (the sentiment
task closest to ours); alpha_min = 0 is their default. With these rules the *exact* Renyi bound can
still be infinite (alpha_min = 0, and sigma has no upper bound, research notes A1/A2):
:meth:`ClipConfig.finite` adds alpha_min = :func:`finite_alpha_min` and sigma_max = 0.99, which makes
every Gaussian, Gamma and Dirichlet term finite.
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass

import torch

__all__ = [
    "ClipConfig",
    "ClipStats",
    "clip_posteriors",
    "RepeatedClipper",
    "sigma_floor",
    "finite_alpha_min",
    "DEFAULT_C_MU",
    "DEFAULT_ALPHA_MAX",
]

DEFAULT_C_MU = 5.0
DEFAULT_ALPHA_MAX = 1.0


def sigma_floor(renyi_order: float, sigma_ref: float = 1.0) -> float:
    """The std floor sqrt((lambda - 1) / lambda) * sigma_ref of the sigma rule.

    >>> round(sigma_floor(1.1), 5)
    0.30151
    """
    renyi_order = float(renyi_order)
    if not renyi_order > 1 or not math.isfinite(renyi_order):
        raise ValueError(f"renyi_order must be a finite number > 1; got {renyi_order}")
    return math.sqrt((renyi_order - 1.0) / renyi_order) * float(sigma_ref)


def finite_alpha_min(alpha_max: float, renyi_order: float = 1.1, margin: float = 0.01) -> float:
    """A lower pseudo-count bound just above ((lambda - 1) / lambda) * alpha_max, which keeps every Gamma term finite.

    With all alpha in [a_min, a_max], lambda*a - (lambda-1)*b > 0 for every pair (a, b) iff
    a_min > ((lambda-1)/lambda) * a_max (NVDP.md section 3; research notes 3.2). The inequality is
    strict (equality gives lnGamma(0) = inf), hence the relative ``margin``.

    >>> round(finite_alpha_min(1.0, 1.1), 6)
    0.091818
    >>> round(finite_alpha_min(1.0, 1.1, margin=0.0), 6)
    0.090909
    """
    renyi_order = float(renyi_order)
    if not renyi_order > 1:
        raise ValueError(f"renyi_order must be > 1; got {renyi_order}")
    return (renyi_order - 1.0) / renyi_order * float(alpha_max) * (1.0 + float(margin))


@dataclass(frozen=True)
class ClipConfig:
    """Settings of the three clipping rules (paper 2603.09583; NVDP.md section 3).

    Parameters
    ----------
    enabled : bool
        The switch. False gives the unclipped NVDP baseline (the other fields are still validated).
    C_mu : float, default 5.0 (DEFAULT_C_MU)
        Radius of the mean ball around mu_p = 0, > 0 (L2 norm over the d = 384 dims).
    alpha_min, alpha_max : float, default 0.0 and 1.0
        Pseudo-count clamp, 0 <= alpha_min <= alpha_max, alpha_max > 0.
    renyi_order : float, default 1.1
        Renyi order lambda > 1 that sets the std floor sqrt((lambda-1)/lambda).
    sigma_max : float or None, default None
        Optional upper clamp of sigma (not in the authors' rules; research notes A1). The floor
        sqrt((lambda-1)/lambda) * 1 makes the Gaussian RD term finite only against neighbours with
        sigma < 1, so ``sigma_max = 0.99`` (with :func:`finite_alpha_min` as alpha_min) gives the
        "guaranteed-finite" variant, see :meth:`finite`. Must exceed the floor.

    Raises
    ------
    ValueError
        C_mu <= 0 or non-finite, alpha_min < 0, alpha_min > alpha_max, alpha_max <= 0,
        renyi_order <= 1 or non-finite.

    Examples
    --------
    >>> round(ClipConfig(enabled=True, C_mu=5.0).sigma_min, 6)
    0.301511
    >>> ClipConfig(enabled=True, C_mu=0.0)
    Traceback (most recent call last):
    ...
    ValueError: C_mu must be a finite number > 0; got 0.0
    """

    enabled: bool = True
    C_mu: float = DEFAULT_C_MU
    alpha_min: float = 0.0
    alpha_max: float = DEFAULT_ALPHA_MAX
    renyi_order: float = 1.1
    sigma_max: float | None = None

    @classmethod
    def finite(cls, *, C_mu: float = None, alpha_max: float = None, renyi_order: float = 1.1,
               sigma_max: float = 0.99) -> "ClipConfig":
        """The guaranteed-finite variant: alpha_min = :func:`finite_alpha_min`, sigma_max = 0.99.

        The Gaussian term needs lambda s_b^2 - (lambda-1) s_a^2 > 0 strictly; with the floor
        sqrt((lambda-1)/lambda) * 1 this holds for every pair iff every sigma < 1, hence 0.99 (the
        pair (floor, 1) sits exactly on the boundary and gives +inf).

        >>> cfg = ClipConfig.finite()
        >>> round(cfg.alpha_min, 6), cfg.sigma_max
        (0.091818, 0.99)
        """
        C_mu = DEFAULT_C_MU if C_mu is None else C_mu
        alpha_max = DEFAULT_ALPHA_MAX if alpha_max is None else alpha_max
        return cls(enabled=True, C_mu=C_mu, alpha_min=finite_alpha_min(alpha_max, renyi_order), alpha_max=alpha_max,
                   renyi_order=renyi_order, sigma_max=sigma_max)

    def __post_init__(self):
        if not isinstance(self.enabled, bool):
            raise TypeError(f"enabled must be a bool; got {self.enabled!r}")
        for name in ("C_mu", "alpha_min", "alpha_max", "renyi_order"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"{name} must be a number; got {v!r}")
            object.__setattr__(self, name, float(v))
        if not (math.isfinite(self.C_mu) and self.C_mu > 0):
            raise ValueError(f"C_mu must be a finite number > 0; got {self.C_mu}")
        if not (math.isfinite(self.alpha_min) and self.alpha_min >= 0):
            raise ValueError(f"alpha_min must be a finite number >= 0; got {self.alpha_min}")
        if not (math.isfinite(self.alpha_max) and self.alpha_max > 0):
            raise ValueError(f"alpha_max must be a finite number > 0; got {self.alpha_max}")
        if self.alpha_min > self.alpha_max:
            raise ValueError(f"alpha_min ({self.alpha_min}) must be <= alpha_max ({self.alpha_max})")
        if not (math.isfinite(self.renyi_order) and self.renyi_order > 1):
            raise ValueError(f"renyi_order must be a finite number > 1; got {self.renyi_order}")
        if self.sigma_max is not None:
            if isinstance(self.sigma_max, bool) or not isinstance(self.sigma_max, (int, float)):
                raise TypeError(f"sigma_max must be a number or None; got {self.sigma_max!r}")
            object.__setattr__(self, "sigma_max", float(self.sigma_max))
            if not (math.isfinite(self.sigma_max) and self.sigma_max > self.sigma_min):
                raise ValueError(f"sigma_max must be a finite number > the floor {self.sigma_min:.5f}; got {self.sigma_max}")

    @property
    def sigma_min(self) -> float:
        """The std floor sqrt((renyi_order - 1) / renyi_order) (reference std 1, the prior's)."""
        return sigma_floor(self.renyi_order)

    def to_dict(self) -> dict:
        """Plain dict of the fields (JSON-serialisable)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ClipConfig":
        """Inverse of :meth:`to_dict`."""
        return cls(**{k: d[k] for k in ("enabled", "C_mu", "alpha_min", "alpha_max", "renyi_order", "sigma_max") if k in d})


@dataclass(frozen=True)
class ClipStats:
    """Share of real token components (prior and padding excluded) changed by each rule.

    Attributes
    ----------
    frac_mu : float
        Fraction of components with ||mu|| > C_mu (projected).
    frac_sigma : float
        Fraction of (component, dim) entries with sigma below the floor (raised).
    frac_sigma_high : float
        Fraction of (component, dim) entries above ``sigma_max`` (lowered; 0 when it is None).
    frac_alpha_low, frac_alpha_high : float
        Fractions of components with alpha < alpha_min / alpha > alpha_max.
    n_components : int
        Number of real token components counted.
    """

    frac_mu: float = 0.0
    frac_sigma: float = 0.0
    frac_alpha_low: float = 0.0
    frac_alpha_high: float = 0.0
    n_components: int = 0
    frac_sigma_high: float = 0.0

    @property
    def frac_alpha(self) -> float:
        """Fraction of components whose alpha was clamped (either side)."""
        return self.frac_alpha_low + self.frac_alpha_high

    def to_dict(self) -> dict:
        out = asdict(self)
        out["frac_alpha"] = self.frac_alpha
        return out


def _real_token_mask(mask: torch.Tensor) -> torch.Tensor:
    real = mask.clone()
    real[..., 0] = False  # the prior component
    return real


def _check_finite_posteriors(mu, sigma, alpha) -> None:
    """Refuse NaN / inf before anything is computed or released.

    A NaN mean has no norm to clip (``||mu|| = NaN`` is not <= C_mu), an infinite one projects to NaN,
    and a NaN sigma or alpha passes every clamp unchanged; any of these would reach the sampler with no
    bound on the divergence. They indicate a diverged encoder, so the call fails loudly instead of
    silently replacing values (which would hide the bug). Every entry is checked, padding included.
    """
    problems = []
    for name, t in (("mu", mu), ("sigma", sigma), ("alpha", alpha)):
        bad = ~torch.isfinite(t.detach())
        if bool(bad.any()):
            nan = int(torch.isnan(t.detach()).sum())
            problems.append(f"{name} has {int(bad.sum())} non-finite entries ({nan} NaN, {int(bad.sum()) - nan} inf)")
    if not problems:
        if bool((sigma.detach() <= 0).any()):
            problems.append("sigma has entries <= 0 (a standard deviation must be > 0)")
        if bool((alpha.detach() < 0).any()):
            problems.append("alpha has negative entries (a pseudo-count must be >= 0)")
    if problems:
        raise ValueError("clip_posteriors refuses non-finite or out-of-range posteriors (accepted: mu finite, "
                         "0 < sigma < inf, 0 <= alpha < inf): " + "; ".join(problems))


def _shrink_to_ball(mu_c: torch.Tensor, C_mu: float) -> torch.Tensor:
    """Make ||mu_c|| <= C_mu hold for the stored floats, not only in exact arithmetic.

    ``mu * (C / ||mu||)`` rounds every entry, so the result's norm can exceed C by a few ulps. The
    norm is evaluated in float64, where the exact norm is at most (1 + (d + 2) u) times the computed
    one (u = 2^-53; Higham 2002, section 3.1); rows above ``C / (1 + (d + 2) u)`` are scaled by
    ``limit / norm * (1 - eps)`` (eps of the tensor's dtype; a product rounds by <= eps / 2) until inside. The factor is a constant
    (no gradient through it), so gradients flow as through the plain projection.
    """
    d = mu_c.shape[-1]
    limit = C_mu / (1.0 + (d + 2) * 2.0**-53)
    eps = torch.finfo(mu_c.dtype).eps
    for _ in range(16):
        with torch.no_grad():
            norm = torch.linalg.vector_norm(mu_c.detach().double(), dim=-1, keepdim=True)
            over = norm > limit
            if not bool(over.any()):
                return mu_c
            factor = torch.where(over, limit / norm * (1.0 - eps), torch.ones_like(norm)).to(mu_c.dtype)
        mu_c = mu_c * factor
    raise AssertionError("mean projection did not converge into the C_mu ball")  # pragma: no cover


def clip_posteriors(mu, sigma, alpha, mask, cfg: ClipConfig):
    """Apply the three clipping rules of ``cfg`` (identity when ``cfg.enabled`` is False).

    Parameters
    ----------
    mu : torch.Tensor of shape (..., k, d)
        Posterior means, component 0 being the prior component.
    sigma : torch.Tensor of shape (..., k, d)
        Posterior standard deviations (> 0).
    alpha : torch.Tensor of shape (..., k)
        Pseudo-counts (0 on padding).
    mask : torch.Tensor of shape (..., k), bool
        True on the prior component and real tokens, False on padding.
    cfg : ClipConfig

    Returns
    -------
    mu, sigma, alpha : torch.Tensor
        Clipped parameters (new tensors; autograd flows through them).
    stats : ClipStats
        Fractions of real token components changed by each rule (computed on the inputs, so they
        are also reported with ``enabled=False``: "what clipping would have changed").

    Raises
    ------
    TypeError
        If ``cfg`` is not a :class:`ClipConfig`.
    ValueError
        If the shapes disagree, or any entry of mu, sigma or alpha is NaN or infinite, sigma <= 0 or
        alpha < 0 (checked on every entry, before any clipping; also with ``cfg.enabled`` False).

    Examples
    --------
    >>> mu = torch.tensor([[[0.0, 0.0], [3.0, 4.0]]]); sig = torch.tensor([[[1.0, 1.0], [0.1, 2.0]]])
    >>> a = torch.tensor([[1.0, 5.0]]); m = torch.tensor([[True, True]])
    >>> mu2, s2, a2, st = clip_posteriors(mu, sig, a, m, ClipConfig(enabled=True, C_mu=1.0, alpha_max=2.0))
    >>> [round(v, 6) for v in mu2[0, 1].tolist()], round(float(s2[0, 1, 0]), 5), a2.tolist(), st.frac_mu
    ([0.6, 0.8], 0.30151, [[1.0, 2.0]], 1.0)
    >>> bool(torch.linalg.vector_norm(mu2[0, 1].double()) <= 1.0)
    True
    """
    if not isinstance(cfg, ClipConfig):
        raise TypeError(f"cfg must be a ClipConfig; got {type(cfg).__name__}")
    if mu.shape != sigma.shape or mu.shape[:-1] != alpha.shape or alpha.shape != mask.shape:
        raise ValueError(
            f"shape mismatch: mu {tuple(mu.shape)}, sigma {tuple(sigma.shape)}, alpha {tuple(alpha.shape)}, mask {tuple(mask.shape)}"
        )
    mask = mask.bool()
    _check_finite_posteriors(mu, sigma, alpha)
    with torch.no_grad():
        real = _real_token_mask(mask)
        n_real = int(real.sum())
        norms = torch.linalg.vector_norm(mu.detach(), dim=-1)
        s_floor = cfg.sigma_min
        if n_real:
            d = mu.shape[-1]
            stats = ClipStats(
                frac_mu=float((norms > cfg.C_mu)[real].float().mean()),
                frac_sigma=float((sigma.detach() < s_floor)[real].float().sum() / (n_real * d)),
                frac_alpha_low=float((alpha.detach() < cfg.alpha_min)[real].float().mean()),
                frac_alpha_high=float((alpha.detach() > cfg.alpha_max)[real].float().mean()),
                n_components=n_real,
                frac_sigma_high=float((sigma.detach() > cfg.sigma_max)[real].float().sum() / (n_real * d))
                if cfg.sigma_max is not None else 0.0,
            )
        else:
            stats = ClipStats()
    if not cfg.enabled:
        return mu, sigma, alpha, stats
    norm = torch.linalg.vector_norm(mu, dim=-1, keepdim=True).clamp_min(1e-12)
    scale = torch.clamp(cfg.C_mu / norm, max=1.0)
    mu_c = _shrink_to_ball(mu * scale, cfg.C_mu)
    sigma_c = torch.clamp(sigma, min=s_floor, max=cfg.sigma_max)
    alpha_c = torch.clamp(alpha, min=cfg.alpha_min, max=cfg.alpha_max)
    alpha_c = torch.where(mask, alpha_c, torch.zeros_like(alpha_c))
    return mu_c, sigma_c, alpha_c, stats


def _shrink_rows_nograd(mu_c: torch.Tensor, C_mu: float) -> torch.Tensor:
    """:func:`_shrink_to_ball` without autograd, touching only the rows that are over the limit.

    The same float operations row by row (the float64 norm of a row, ``limit / norm * (1 - eps)``
    cast to the dtype, one product per entry), applied in place to the rows still over the limit,
    so the values are those of :func:`_shrink_to_ball` (rows it multiplies by exactly 1 are left
    as they are). ``mu_c`` must be a fresh contiguous tensor (it is modified in place).
    """
    d = mu_c.shape[-1]
    limit = C_mu / (1.0 + (d + 2) * 2.0**-53)
    eps = torch.finfo(mu_c.dtype).eps
    flat = mu_c.view(-1, d)
    norm = torch.linalg.vector_norm(flat.double(), dim=-1, keepdim=True)
    idx = torch.nonzero(norm[:, 0] > limit).squeeze(1)
    for _ in range(16):
        if idx.numel() == 0:
            return mu_c
        rows = flat[idx] * (limit / norm[idx] * (1.0 - eps)).to(mu_c.dtype)
        flat[idx] = rows
        norm = torch.zeros_like(norm)
        norm[idx] = torch.linalg.vector_norm(rows.double(), dim=-1, keepdim=True)
        idx = idx[norm[idx, 0] > limit]
    raise AssertionError("mean projection did not converge into the C_mu ball")  # pragma: no cover


class RepeatedClipper:
    """Clip one fixed set of posteriors under many settings (the dashboard's live sliders).

    Gives the values of :func:`clip_posteriors` (bit for bit, ``tests/engine/test_nvdp_live_speed.py``)
    with less work per call: the inputs are validated once, on the first call (invalid inputs raise
    the same ``ValueError`` on every call, as :func:`clip_posteriors` does: nothing is clipped or
    released), the norms of mu are computed once, and each rule's output and counts are kept for the
    settings it depends on (the mean rule for C_mu, the std rule for the order and ``sigma_max``,
    the pseudo-count rule for (alpha_min, alpha_max)), so a move of one slider recomputes one rule.
    The ``keep`` most recent outputs of each rule are kept (about 4 bytes x n x k x d each for mu
    and sigma). No autograd: for stored posteriors only.

    Parameters
    ----------
    mu, sigma : torch.Tensor of shape (n, k, d)
    alpha, mask : torch.Tensor of shape (n, k)
        As for :func:`clip_posteriors`; not modified, and must not be modified afterwards.
    keep : int, default 2

    Examples
    --------
    >>> mu = torch.tensor([[[0.0, 0.0], [3.0, 4.0]]]); sig = torch.tensor([[[1.0, 1.0], [0.1, 2.0]]])
    >>> a = torch.tensor([[1.0, 5.0]]); m = torch.tensor([[True, True]])
    >>> cfg = ClipConfig(enabled=True, C_mu=1.0, alpha_max=2.0)
    >>> out, ref = RepeatedClipper(mu, sig, a, m)(cfg), clip_posteriors(mu, sig, a, m, cfg)
    >>> all(torch.equal(x, y) for x, y in zip(out[:3], ref[:3])) and out[3] == ref[3]
    True
    """

    def __init__(self, mu, sigma, alpha, mask, *, keep: int = 2):
        if mu.shape != sigma.shape or mu.shape[:-1] != alpha.shape or alpha.shape != mask.shape:
            raise ValueError(f"shape mismatch: mu {tuple(mu.shape)}, sigma {tuple(sigma.shape)}, "
                             f"alpha {tuple(alpha.shape)}, mask {tuple(mask.shape)}")
        self.mu, self.sigma, self.alpha, self.mask = (t.detach() for t in (mu, sigma, alpha, mask.bool()))
        self.keep = max(1, int(keep))
        self._valid = False
        self._parts: dict = {}
        # the dashboard shares one clipper between sessions (threads): its caches change under a lock
        self._lock = threading.RLock()

    def _part(self, key, make):
        with self._lock:
            cache = self._parts.setdefault(key[0], {})
            if key not in cache:
                while len(cache) >= self.keep:
                    cache.pop(next(iter(cache)))
                cache[key] = make()
            return cache[key]

    def _setup(self) -> None:
        if self._valid:
            return
        _check_finite_posteriors(self.mu, self.sigma, self.alpha)  # raises on every call until valid
        with self._lock, torch.no_grad():
            self._real = _real_token_mask(self.mask)
            self._n_real = int(self._real.sum())
            self._norm = torch.linalg.vector_norm(self.mu, dim=-1, keepdim=True)
            self._norm_real = self._norm[..., 0][self._real]
            self._sigma_real = self.sigma[self._real]
            self._alpha_real = self.alpha[self._real]
        self._valid = True

    def validated(self) -> bool:
        """Validate the inputs now (once, as the first call would): True if valid, False if every call raises."""
        try:
            self._setup()
        except ValueError:
            return False
        return True

    def mu_key(self, cfg: ClipConfig):
        """What the clipped mu depends on (a part of a content key for these inputs)."""
        return ("mu", cfg.C_mu if cfg.enabled else None)

    def sigma_key(self, cfg: ClipConfig):
        """What the clipped sigma depends on."""
        return ("sigma", (cfg.sigma_min, cfg.sigma_max) if cfg.enabled else None)

    def alpha_key(self, cfg: ClipConfig):
        """What the clipped alpha depends on."""
        return ("alpha", (cfg.alpha_min, cfg.alpha_max) if cfg.enabled else None)

    def __call__(self, cfg: ClipConfig):
        """``clip_posteriors(mu, sigma, alpha, mask, cfg)`` for the stored inputs: (mu, sigma, alpha, stats).

        Raises
        ------
        TypeError
            If ``cfg`` is not a :class:`ClipConfig`.
        ValueError
            As :func:`clip_posteriors` for non-finite or out-of-range inputs.
        """
        if not isinstance(cfg, ClipConfig):
            raise TypeError(f"cfg must be a ClipConfig; got {type(cfg).__name__}")
        self._setup()
        n_real, d = self._n_real, self.mu.shape[-1]
        s_floor = cfg.sigma_min
        with torch.no_grad():
            if n_real:
                f_mu = self._part(("frac_mu", cfg.C_mu), lambda: float((self._norm_real > cfg.C_mu).float().mean()))
                f_s = self._part(("frac_sigma", s_floor), lambda: float((self._sigma_real < s_floor).float().sum()
                                                                      / (n_real * d)))
                f_sh = (self._part(("frac_sigma_high", cfg.sigma_max), lambda: float(
                    (self._sigma_real > cfg.sigma_max).float().sum() / (n_real * d))) if cfg.sigma_max is not None else 0.0)
                f_al = self._part(("frac_alpha_low", cfg.alpha_min),
                                  lambda: float((self._alpha_real < cfg.alpha_min).float().mean()))
                f_ah = self._part(("frac_alpha_high", cfg.alpha_max),
                                  lambda: float((self._alpha_real > cfg.alpha_max).float().mean()))
                stats = ClipStats(frac_mu=f_mu, frac_sigma=f_s, frac_alpha_low=f_al, frac_alpha_high=f_ah,
                                  n_components=n_real, frac_sigma_high=f_sh)
            else:
                stats = ClipStats()
            if not cfg.enabled:
                return self.mu, self.sigma, self.alpha, stats

            def mu_c():
                scale = torch.clamp(cfg.C_mu / self._norm.clamp_min(1e-12), max=1.0)
                return _shrink_rows_nograd((self.mu * scale).contiguous(), cfg.C_mu)

            def alpha_c():
                a = torch.clamp(self.alpha, min=cfg.alpha_min, max=cfg.alpha_max)
                return torch.where(self.mask, a, torch.zeros_like(a))

            mu = self._part(self.mu_key(cfg), mu_c)
            sigma = self._part(self.sigma_key(cfg), lambda: torch.clamp(self.sigma, min=s_floor, max=cfg.sigma_max))
            alpha = self._part(self.alpha_key(cfg), alpha_c)
        return mu, sigma, alpha, stats
