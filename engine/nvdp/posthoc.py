"""Post-hoc clipping of a trained NVDP model: what one clipping configuration does on fixed sentences.

:class:`LiveEvaluator` prepares a trained model once; its ``evaluate`` (and :func:`posthoc_evaluate`)
returns the accuracy with the clipping applied inside the model, the pairwise RD bound in both
labelled forms, the BDP epsilon in both variants, the fractions clipped and the posterior
distributions before and after clipping (NVDP.md sections 3 to 6). Nothing here imports Streamlit.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import torch

from engine.nvdp.bdp import BDPResult, bdp_epsilon, bdp_from_posteriors
from engine.nvdp.clipping import ClipConfig, ClipStats, RepeatedClipper
from engine.nvdp.divergence import RDBoundResult, pairwise_rd_bound
from engine.nvdp.encoder import TokenStates
from engine.nvdp.layer import Posteriors
from engine.nvdp.protocol import DEFAULT_PROTOCOL, EvalProtocol, evaluate_bounds

__all__ = ["AccuracyCancelled", "PosthocResult", "LiveEvaluator", "sample_latents_with", "raw_posteriors", "posthoc_evaluate", "posthoc_bounds", "mu_norm_range"]

#: Bounds an evaluator keeps (least recently used dropped first; dropping all at once past 32, as before, also
#: dropped settings a caller had just computed ahead with :meth:`LiveEvaluator.prefetch_bounds`).
BOUNDS_CACHE_SIZE = 32


class _LazyDistributions(Mapping):
    """``{"before": ..., "after": ...}``, each a value or a callable computed on first access (only the
    posterior-parameters view and the exports read "after"; a slider move does not pay for it
    otherwise). Same values as eager."""

    def __init__(self, **makers):
        self._makers = makers
        self._values: dict = {k: v for k, v in makers.items() if not callable(v)}

    def __getitem__(self, key):
        if key not in self._values:
            self._values[key] = self._makers[key]()
        return self._values[key]

    def __iter__(self):
        return iter(self._makers)

    def __len__(self):
        return len(self._makers)

    def __repr__(self):
        return f"_LazyDistributions({list(self._makers)})"


def _distributions_after(clipper, lock, mask, clip: ClipConfig, max_values: int) -> dict:
    """:func:`engine.nvdp.diagnostics.posterior_distributions` of ``clipper(clip)`` (an evaluator's clipped posteriors)."""
    from engine.nvdp.diagnostics import posterior_distributions

    with lock:
        mu, sigma, alpha, _ = clipper(clip)
    return posterior_distributions(Posteriors(mu, sigma, alpha, mask), max_values=max_values)


class AccuracyCancelled(RuntimeError):
    """:meth:`LiveEvaluator.accuracy` was stopped (its ``stop`` event set) before it finished."""


def raw_posteriors(trained, states: TokenStates) -> Posteriors:
    """Unclipped NVIB posteriors of ``states`` (deterministic: no sampling), prior component at index 0.

    Returns
    -------
    Posteriors
        mu, sigma (n, L + 1, d); alpha, mask (n, L + 1); CPU, detached.
    """
    model = getattr(trained, "model", trained)
    with torch.no_grad():
        return model.posteriors(states.states, states.mask).detach()


def mu_norm_range(raw: Posteriors, *, quantiles=(0.01, 0.99)) -> tuple[float, float]:
    """A slider range for C_mu from the observed ||mu|| of real token components.

    Returns (lo, hi): lo = the 1 % quantile rounded down to 0.1 (at least 0.1), hi = 1.25 x the
    99 % quantile rounded up to an integer, so the default C_mu = 5 of the 384-dim encoder usually
    lies inside.

    >>> mu = torch.zeros(2, 3, 4); mu[:, 1:, 0] = torch.tensor([[2.0, 4.0], [6.0, 8.0]])
    >>> post = Posteriors(mu, torch.ones(2, 3, 4), torch.ones(2, 3), torch.ones(2, 3, dtype=torch.bool))
    >>> mu_norm_range(post)
    (2.0, 10.0)
    """
    real = raw.mask.clone().bool()
    real[:, 0] = False
    norms = torch.linalg.vector_norm(raw.mu.float(), dim=-1)[real].numpy()
    if norms.size == 0:
        raise ValueError("no real token components to calibrate C_mu on")
    q_lo, q_hi = np.quantile(norms, quantiles)
    lo = max(0.1, math.floor(q_lo * 10) / 10)
    hi = max(lo + 1.0, float(math.ceil(1.25 * q_hi)))
    return float(lo), float(hi)


@dataclass
class PosthocResult:
    """What one clipping configuration does to a trained model on the test sentences.

    Attributes
    ----------
    accuracy : float or None
        Test accuracy with this clipping applied inside the model (samples seeded by ``seed``);
        None when evaluated with ``with_accuracy=False`` (see :meth:`LiveEvaluator.complete`).
    clip : ClipConfig
    rd_exact : RDBoundResult
        Guarantee form: exact bound (nats, summed over components and dims, max of both orders,
        ``protocol.padding``) over all pairs of the first ``protocol.n_eval`` test sentences.
    rd_paper : RDBoundResult
        The authors' protocol (normalised, eval batches of 16, |z| > 0.5 filter with the population
        std, NaN-mean over undefined dims) on the same sentences.
    bdp : BDPResult
        BDP epsilon from exact divergences of order lambda + 1 (exact form), same sentences: a sample-based
        estimate over the evaluation sentences (not a guarantee for other data).
    bdp_paper : engine.nvdp.paper_protocol.PaperBDPResult
        The authors' subsampled accountant (q = 16 / n_eval).
        The papers' plug-in figure: paper-form divergences of order lambda.
    clip_stats : ClipStats
        Fractions of real token components changed by each rule (all test sentences).
    distributions : Mapping
        ``{"before": {...}, "after": {...}}`` with arrays ``mu_norm``, ``sigma``, ``alpha``
        (:class:`LiveEvaluator` computes each on first access).
    nan_count, inf_count : int
        Non-finite values in posteriors, samples and logits (-1 until the accuracy is computed).
    n_test : int
    seconds : float
    protocol : EvalProtocol
    seed : int
        Seed of the samples behind the accuracy.
    """

    accuracy: float
    clip: ClipConfig
    rd_exact: RDBoundResult
    rd_paper: RDBoundResult
    bdp: BDPResult
    bdp_paper: object
    clip_stats: ClipStats
    distributions: dict
    nan_count: int
    inf_count: int
    n_test: int
    seconds: float = 0.0
    protocol: EvalProtocol = DEFAULT_PROTOCOL
    seed: int = 0

    def summary(self) -> dict:
        """Flat JSON-ready dict of the headline numbers (for CSV/JSON export)."""
        s = self.clip_stats.to_dict()
        return {
            "accuracy": self.accuracy,
            "rd_exact_max": self.rd_exact.max,
            "rd_exact_mean": self.rd_exact.mean,
            "rd_exact_mean_finite": self.rd_exact.mean_finite,
            "rd_exact_n_pairs": self.rd_exact.n_pairs,
            "rd_exact_n_inf": self.rd_exact.n_inf,
            "rd_paper_max": self.rd_paper.max,
            "rd_paper_mean": self.rd_paper.mean,
            "rd_paper_max_unfiltered": self.rd_paper.max_unfiltered,
            "rd_paper_n_pairs": self.rd_paper.n_pairs,
            "rd_paper_n_inf": self.rd_paper.n_inf,
            "rd_paper_n_undefined": self.rd_paper.n_undefined,
            "bdp_epsilon": self.bdp.epsilon,
            "bdp_epsilon_paper": self.bdp_paper.epsilon,
            "frac_mu_clipped": s["frac_mu"],
            "frac_sigma_raised": s["frac_sigma"],
            "frac_sigma_lowered": s["frac_sigma_high"],
            "frac_alpha_low": s["frac_alpha_low"],
            "frac_alpha_high": s["frac_alpha_high"],
            "n_components": s["n_components"],
            "nan_count": self.nan_count,
            "inf_count": self.inf_count,
            "n_test": self.n_test,
        }


def summary_privacy(summary: dict) -> dict:
    """Privacy label of each key of :meth:`PosthocResult.summary` (:mod:`engine.privacy.labels`).

    Every NVDP figure is computed from the model's posteriors on the evaluation sentences (or the test
    set) without noise: a non-private diagnostic. In particular ``bdp_epsilon`` /
    ``bdp_epsilon_paper`` are sample-based estimates over the evaluation sentences
    (:data:`engine.privacy.labels.BDP_ESTIMATE_LABEL`), not a DP guarantee. Counts of the protocol
    (``n_components``, ``n_test``) are public settings."""
    from engine.privacy.labels import DIAGNOSTIC, PUBLIC

    return {k: (PUBLIC if k in ("n_components", "n_test") else DIAGNOSTIC) for k in summary}


def _trim(post: Posteriors, n: int) -> Posteriors:
    k = max(2, int(post.mask[:n].sum(1).max()))
    return Posteriors(post.mu[:n, :k], post.sigma[:n, :k], post.alpha[:n, :k], post.mask[:n, :k])


def posthoc_bounds(post: Posteriors, renyi_order: float, *, n_rd: int = 64, n_bdp: int = 256, delta: float = 1e-5,
                   n_latent: int | None = None):
    """RD bounds (both forms) and BDP epsilons (both variants) of already clipped posteriors.

    Parameters
    ----------
    post : Posteriors
        Clipped (or unclipped) posteriors of at least 2 inputs.
    renyi_order : float
        lambda > 1.
    n_rd : int, default 64
        Inputs for the exact all-pairs bound (n_rd (n_rd - 1) / 2 pairs).
    n_bdp : int, default 256
        Inputs for the paper-protocol bound and the BDP accountant (eval batches of 16).
    delta : float, default 1e-5
    n_latent : int, optional
        Normaliser of the paper form (default: the padded latent length of ``post``, which is
        max_length + 1 = 49 for stored test posteriors, the authors' convention).

    Returns
    -------
    rd_exact, rd_paper : RDBoundResult
    bdp, bdp_paper : BDPResult
    """
    n = len(post)
    if n < 2:
        raise ValueError(f"need at least 2 inputs for pairwise bounds; got {n}")
    n_latent = int(post.mu.shape[1]) if n_latent is None else int(n_latent)
    ex = _trim(post, min(n_rd, n))
    pb = _trim(post, min(n_bdp, n))
    rd_exact = pairwise_rd_bound(ex.mu, ex.sigma, ex.alpha, ex.mask, renyi_order=renyi_order, form="exact")
    rd_paper = pairwise_rd_bound(pb.mu, pb.sigma, pb.alpha, pb.mask, renyi_order=renyi_order, form="paper",
                                 n_latent=n_latent)
    bdp, _ = bdp_from_posteriors(pb.mu, pb.sigma, pb.alpha, pb.mask, renyi_order=renyi_order, delta=delta, form="exact")
    # The papers' plug-in BDP uses the same paper-form divergences of order lambda (before the outlier
    # filter, which the accountant does not apply): reuse them instead of computing them again.
    bdp_paper = bdp_epsilon(rd_paper.values, rd_paper.batch_index, renyi_order=renyi_order, delta=delta,
                            divergence_order=renyi_order)
    return rd_exact, rd_paper, bdp, bdp_paper


class LiveEvaluator:
    """A trained model prepared for fast repeated post-hoc clipping on a fixed set of sentences.

    The clipping-independent work is done once: the length-sorted, trimmed batches (those of
    :func:`engine.nvdp.training.evaluate`, 256 sentences each) and their unclipped posteriors, and the
    padded posteriors of all sentences in input order. :meth:`evaluate` then clips, samples and runs
    only the part of the model after the bottleneck (denoising attention, FFN, pooling, classifier),
    with the same random stream as ``evaluate``, so the accuracy is identical to
    ``evaluate(trained, states, labels, clip=clip, seed=seed).accuracy``.

    Per slider move the posteriors are clipped once and shared by the accuracy
    (per-batch slices) and the bounds, by a :class:`~engine.nvdp.clipping.RepeatedClipper` (the raw
    posteriors validated once, each rule's output kept for the settings it depends on); the
    attention queries (clean states only) are computed once per model; the random draws behind the
    accuracy come from a private generator and are reused while the clipped alpha is unchanged;
    NaN / inf counts skip the clipped posteriors of finite raw ones (clipping keeps them finite);
    the bounds are cached per clipping, and the pair terms that a move leaves unchanged (the
    Gaussian sums on an alpha move) are reused through a memo keyed by the settings
    (:func:`engine.nvdp.protocol.evaluate_bounds`). ``evaluate(..., with_accuracy=False)`` returns
    the bounds alone and :meth:`complete` adds the accuracy (the page draws the bounds first). All
    of this gives bit-identical values (``tests/engine/test_nvdp_live_speed.py``).

    Parameters
    ----------
    trained : TrainedNVDP or NVDPClassifier
    states : TokenStates
    labels : array-like of shape (n,)
    batch_size : int, default 256
        As in ``evaluate`` (changing it changes the random draws, hence the accuracy slightly).
    """

    def __init__(self, trained, states: TokenStates, labels, *, batch_size: int = 256):
        from engine.nvdp.training import _pad_posteriors, _trimmed, _validate_labels

        self.model = getattr(trained, "model", trained)
        self.model.eval()
        self.y = _validate_labels(states, labels, "states")
        self.n = states.n
        k = states.states.shape[1] + 1
        order = torch.argsort(states.mask.sum(1), stable=True)
        self.batches, raws = [], []
        with torch.no_grad():
            for s in range(0, states.n, batch_size):
                idx = order[s : s + batch_size]
                h, m = _trimmed(states, idx)
                raw = self.model.posteriors(h, m).detach()
                self.batches.append((idx, h, m, raw))
                raws.append(_pad_posteriors(raw, k))
        inv = torch.argsort(order)
        raw = Posteriors.cat(raws)
        self.raw = Posteriors(raw.mu[inv], raw.sigma[inv], raw.alpha[inv], raw.mask[inv])
        # validates the raw posteriors once (a non-finite one raises on every call, before anything is
        # computed) and keeps each rule's output for the settings it depends on
        self.clipper = RepeatedClipper(self.raw.mu, self.raw.sigma, self.raw.alpha, self.raw.mask)
        # Finite raw posteriors stay finite under clipping (scaling by a factor in [0, 1] and clamps;
        # clip_posteriors rejects non-finite inputs): their NaN / inf counts are then 0 without a pass.
        # The clipper's validation (done now, once) is that check: posteriors it refuses are never
        # clipped, so no accuracy is computed from them whatever this flag says.
        self._raw_finite = self.clipper.validated()
        self._acc_cache: dict = {}
        self._noise: dict = {}
        # the bounds of the settings asked for last (least recently used dropped first, BOUNDS_CACHE_SIZE): e.g. a
        # page's current ones and those it computed ahead (prefetch_bounds)
        self._bounds_cache: OrderedDict = OrderedDict()
        self._before: dict = {}
        # pair terms that a slider move leaves unchanged (e.g. the Gaussian sums on an alpha move),
        # keyed by what the evaluated mu and sigma depend on (engine.nvdp.protocol.evaluate_bounds)
        self._memo: dict = {}
        # the clipper's and the bounds' caches are shared by the page's thread and a prefetch
        # (:meth:`prefetch_bounds`) on another: one at a time (re-entrant)
        self._lock = threading.RLock()
        # the attention's queries read the clean states only: fixed per model, computed with the first
        # accuracy (the bounds never need them, so the page's first bounds do not wait for them)
        self._queries: list | None = None

    def queries(self) -> list:
        """The attention's queries of each batch (``model.attn.q`` of its clean states), computed once."""
        with self._lock:
            if self._queries is None:
                with torch.no_grad():
                    self._queries = [self.model.attn.q(h) for _, h, _, _ in self.batches]
            return self._queries

    def clip(self, clip: ClipConfig) -> tuple[Posteriors, ClipStats]:
        """``self.raw.clip(clip)``, the same values, with the rules' outputs reused across calls.

        Raises
        ------
        ValueError
            Non-finite or out-of-range raw posteriors (on every call; see :class:`RepeatedClipper`).
        """
        with self._lock:
            mu, sigma, alpha, stats = self.clipper(clip)
        return Posteriors(mu, sigma, alpha, self.raw.mask), stats

    def has_bounds(self, clip: ClipConfig, protocol: EvalProtocol = DEFAULT_PROTOCOL) -> bool:
        """Whether the bounds of ``clip`` under ``protocol`` are cached (then :meth:`bounds` returns at once).

        Does not wait for a computation in progress on another thread (the key is a pure function of
        the settings and a dict lookup is atomic): a page asking this never waits for a prefetch.
        """
        return self._bounds_key(clip, protocol) in self._bounds_cache

    def prefetch_bounds(self, clips, protocol: EvalProtocol = DEFAULT_PROTOCOL, stop=None) -> int:
        """Compute and cache the bounds of each of ``clips`` not cached yet; return how many were computed.

        For settings a user is likely to ask for next and that do not depend on the sliders' caps,
        e.g. the unclipped model at every Renyi order the page offers: a later :meth:`evaluate` of
        one of them then only looks its bounds up. The values are those :meth:`evaluate` would
        compute. ``stop`` (a :class:`threading.Event`) ends the loop between two settings.
        """
        n = 0
        for clip in clips:
            if stop is not None and stop.is_set():
                break
            if not self.has_bounds(clip, protocol):
                self._bounds(clip, None, protocol)
                n += 1
        return n

    @staticmethod
    def _acc_key(clip: ClipConfig, seed: int) -> str:
        # Clipping off: the mechanism does not depend on the other fields (the Renyi order only
        # sets the sigma floor of an enabled clipping), so an order move reuses the accuracy.
        import json

        d = clip.to_dict() if clip.enabled else {"enabled": False}
        return json.dumps(d, sort_keys=True, default=float) + f"|{int(seed)}"

    def accuracy_key(self, clip: ClipConfig, seed: int = 0) -> str:
        """What :meth:`accuracy` of (``clip``, ``seed``) depends on (a disabled clipping ignores its order)."""
        return self._acc_key(clip, seed)

    def has_accuracy(self, clip: ClipConfig, seed: int = 0) -> bool:
        """Whether :meth:`accuracy` for (``clip``, ``seed``) is memoised (then it returns at once)."""
        return self._acc_key(clip, seed) in self._acc_cache

    def accuracy(self, clip: ClipConfig, seed: int = 0, *, clipped: Posteriors | None = None,
                 stop=None) -> tuple[float, int, int]:
        """Accuracy with ``clip`` applied before sampling, and the NaN / inf counts (posteriors, samples, logits).

        Memoised per (effective clipping, seed): a disabled clipping ignores its Renyi order.
        ``clipped`` may pass ``self.clip(clip)[0]`` when the caller has it already (the per-batch
        posteriors are then slices of it: clipping is per component, so the values are those of
        clipping each batch).

        ``stop`` (a :class:`threading.Event`, optional) is checked before each batch of sentences:
        once it is set the computation is abandoned with :class:`AccuracyCancelled` and nothing is
        memoised (the background jobs of :mod:`engine.nvdp.background` use this when a newer
        slider move supersedes the one being computed). A completed result never depends on it.

        Raises
        ------
        AccuracyCancelled
            ``stop`` was set before the last batch was computed.
        """
        key = self._acc_key(clip, seed)
        out = self._acc_cache.get(key)  # (sessions share an evaluator: read once, never after a clear)
        if out is None:
            if clipped is None:
                clipped = self.clip(clip)[0]
            out = self._accuracy(clip, seed, clipped, stop)
            if len(self._acc_cache) > 64:
                self._acc_cache.clear()
            self._acc_cache[key] = out
        return out

    def _distributions_before(self, max_values: int) -> dict:
        """The unclipped distributions (fixed per model), computed once per ``max_values``."""
        from engine.nvdp.diagnostics import posterior_distributions

        if max_values not in self._before:
            self._before[max_values] = posterior_distributions(self.raw, max_values=max_values)
        return self._before[max_values]

    def _accuracy(self, clip: ClipConfig, seed: int, clipped: Posteriors, stop=None) -> tuple[float, int, int]:
        m_ = self.model
        correct = nan = inf = 0
        # A private generator seeded like ``evaluate``'s global one: the same draws, and safe when two
        # sessions of the dashboard evaluate at the same time (the global generator is left alone).
        # The draws depend on the seed and the clipped alpha only (the Gamma sampler's use of the stream
        # depends on alpha, so every later draw does too), not on mu or sigma: a C_mu or order move
        # reuses them, z = mu + sigma * eps being the same operation on the same values.
        nkey = (self.clipper.alpha_key(clip), int(seed))
        noise = self._noise.get(nkey)
        gen = torch.Generator().manual_seed(int(seed)) if noise is None else None
        fresh = []
        queries = self.queries()
        with torch.no_grad():
            for b, ((idx, h, mask, raw), q) in enumerate(zip(self.batches, queries)):
                if stop is not None and stop.is_set():
                    raise AccuracyCancelled("superseded by a newer request; nothing was memoised")
                k = raw.mu.shape[1]  # rows idx, first k positions of the clipped padded posteriors (same values)
                post = Posteriors(clipped.mu[idx, :k], clipped.sigma[idx, :k], clipped.alpha[idx, :k], raw.mask)
                if noise is None:
                    z, pi, eps = sample_latents_with(post, gen, return_eps=True)
                    fresh.append((eps, pi))
                else:
                    eps, pi = noise[b]
                    z = post.mu + post.sigma * eps
                a = m_.attn(h, z, pi, q=q)
                x = m_.ffn_norm(m_.ffn(a) + a)
                w = mask.to(x.dtype).unsqueeze(-1)
                logits = m_.classifier((x * w).sum(1) / w.sum(1).clamp_min(1.0))
                correct += int((logits.argmax(-1) == self.y[idx]).sum())
                checked = (z, pi, logits) if self._raw_finite else (post.mu, post.sigma, post.alpha, z, pi, logits)
                for t in checked:
                    if not bool(torch.isfinite(t).all()):  # one pass in the usual all-finite case
                        nan += int(torch.isnan(t).sum())
                        inf += int(torch.isinf(t).sum())
        if noise is None:
            self._noise.clear()  # one set of draws kept (about 4 bytes x n x k x d)
            self._noise[nkey] = fresh
        return correct / self.n, nan, inf

    def bounds(self, clip: ClipConfig, protocol: EvalProtocol = DEFAULT_PROTOCOL):
        """:func:`engine.nvdp.protocol.evaluate_bounds` of ``self.clip(clip)`` at ``clip.renyi_order``, cached per clipping."""
        return self._bounds(clip, None, protocol)

    def _bounds_key(self, clip: ClipConfig, protocol: EvalProtocol) -> tuple:
        return (self.clipper.mu_key(clip), self.clipper.sigma_key(clip), self.clipper.alpha_key(clip), clip.renyi_order,
                protocol)

    def _bounds(self, clip: ClipConfig, post: Posteriors | None, protocol: EvalProtocol):
        with self._lock:
            return self._bounds_locked(clip, post, protocol)

    def _bounds_locked(self, clip: ClipConfig, post: Posteriors | None, protocol: EvalProtocol):
        key = self._bounds_key(clip, protocol)
        out = self._bounds_cache.get(key)
        if out is not None:
            self._bounds_cache.move_to_end(key)
        else:
            # the memo's content key: the evaluated mu and sigma are functions of these settings alone
            mkey = repr((self.clipper.mu_key(clip), self.clipper.sigma_key(clip))).encode()
            post = self.clip(clip)[0] if post is None else post
            if len(self._memo) > 512:  # each kind is bounded (rd_kernel.memo_put); a safety net (values do not depend on it)
                self._memo.clear()
            # the mu-only key: what depends on mu alone (the paper accountant's distances) outlives an order move
            out = evaluate_bounds(post, clip.renyi_order, protocol, memo=self._memo, memo_key=mkey,
                                  memo_mu_key=repr(self.clipper.mu_key(clip)).encode(),
                                  memo_sigma_key=repr(self.clipper.sigma_key(clip)).encode())
            self._bounds_cache[key] = out
            while len(self._bounds_cache) > BOUNDS_CACHE_SIZE:
                self._bounds_cache.popitem(last=False)
        return out

    def evaluate(self, clip: ClipConfig, *, protocol: EvalProtocol = DEFAULT_PROTOCOL, seed: int | None = None,
                 max_values: int = 20000, with_accuracy: bool = True) -> "PosthocResult":
        """See :func:`posthoc_evaluate`.

        ``with_accuracy=False`` skips the accuracy (the model re-run after the bottleneck, most of the
        time of a call): the result then has ``accuracy=None`` and NaN / inf counts of -1 until
        :meth:`complete` fills them in. The page uses this to show the bounds of a slider move at once
        and the accuracy when it is ready (never an accuracy of other caps).
        """
        if not isinstance(clip, ClipConfig):
            raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
        if not isinstance(protocol, EvalProtocol):
            raise TypeError(f"protocol must be an EvalProtocol; got {type(protocol).__name__}")
        seed = protocol.seed if seed is None else seed
        t0 = time.perf_counter()
        post, stats = self.clip(clip)  # once, for the accuracy and the bounds
        acc, nan, inf = self.accuracy(clip, seed, clipped=post) if with_accuracy else (None, -1, -1)
        b = self._bounds(clip, post, protocol)
        return PosthocResult(
            accuracy=None if acc is None else float(acc),
            clip=clip,
            rd_exact=b.rd_exact,
            rd_paper=b.rd_paper,
            bdp=b.bdp,
            bdp_paper=b.bdp_paper,
            clip_stats=stats,
            # "after" is computed on first access from the evaluator's clipper (the same values as
            # ``post``): a cached result keeps no clipped tensors of its own, nor the evaluator
            distributions=_LazyDistributions(
                before=self._distributions_before(max_values),
                after=functools.partial(_distributions_after, self.clipper, self._lock, self.raw.mask, clip, max_values),
            ),
            nan_count=int(nan),
            inf_count=int(inf),
            n_test=int(self.n),
            seconds=time.perf_counter() - t0,
            protocol=protocol,
            seed=int(seed),
        )

    def complete(self, res: "PosthocResult") -> "PosthocResult":
        """``res`` with its accuracy and NaN / inf counts (computed now unless memoised); ``res`` if it has them."""
        if res.accuracy is not None:
            return res
        acc, nan, inf = self.accuracy(res.clip, res.seed)
        return replace(res, accuracy=float(acc), nan_count=int(nan), inf_count=int(inf))


def sample_latents_with(post: Posteriors, generator: torch.Generator, *, return_eps: bool = False):
    """:func:`engine.nvdp.layer.sample_latents` drawing from ``generator`` instead of torch's global one.

    A generator seeded with s gives the draws of ``sample_latents`` after ``torch.manual_seed(s)``
    (``tests/engine/test_nvdp_live_speed.py``). No gradient (evaluation only).

    Returns
    -------
    z : torch.Tensor of shape (B, k, d)
    pi : torch.Tensor of shape (B, k)
    eps : torch.Tensor of shape (B, k, d)
        Only with ``return_eps``: the standard normal draws, z = mu + sigma * eps.
    """
    from engine.nvdp.layer import sample_latents

    return sample_latents(post, generator=generator, return_eps=return_eps)


def posthoc_evaluate(
    trained,
    states: TokenStates,
    labels,
    clip: ClipConfig,
    *,
    protocol: EvalProtocol = DEFAULT_PROTOCOL,
    seed: int | None = None,
    max_values: int = 20000,
) -> PosthocResult:
    """Apply ``clip`` to a trained model on ``states``: accuracy, RD bounds, BDP, fractions clipped, distributions.

    The model is re-run with ``clip`` in place of the clipping it was trained with (inference-time
    clipping: ``enabled=False`` gives its unclipped mechanism). The bounds are those of the
    posteriors it then samples from. For repeated calls on the same sentences build a
    :class:`LiveEvaluator` once and call its ``evaluate`` (this function does exactly that).

    Parameters
    ----------
    trained : TrainedNVDP or NVDPClassifier
    states : TokenStates
        Test sentences (the first ``protocol.n_eval`` enter the bounds).
    labels : array-like of shape (n,)
    clip : ClipConfig
    protocol : EvalProtocol, default DEFAULT_PROTOCOL
        Which sentences, pairs, filter and accountant (:mod:`engine.nvdp.protocol`).
    seed : int, optional
        Seed of the posterior samples behind the accuracy (default ``protocol.seed``).
    max_values
        See :func:`engine.nvdp.diagnostics.posterior_distributions`.

    Returns
    -------
    PosthocResult

    Raises
    ------
    TypeError
        If ``clip`` is not a ClipConfig.
    ValueError
        Fewer than 2 test sentences.
    """
    if not isinstance(clip, ClipConfig):
        raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
    return LiveEvaluator(trained, states, labels).evaluate(clip, protocol=protocol, seed=seed, max_values=max_values)
