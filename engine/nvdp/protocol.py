"""One evaluation protocol for every NVDP number: which sentences, which pairs, which filter, order, q.

The page (``app_pages/nvdp.py``), the CLI (``python -m engine nvdp evaluate``), the results script
(``scripts/nvdp_experiment.py``) and ``docs/nvdp_results.md`` all evaluate a model through
:func:`evaluate_bounds` with an :class:`EvalProtocol` (default :data:`DEFAULT_PROTOCOL`), and print
``protocol.to_dict()`` next to their numbers, so the same model and clipping give the same numbers
everywhere.

Two labelled forms, side by side (NVDP.md sections 4 and 5):

* **guarantee** -- the exact pairwise Renyi bound in nats, max of both directions, over *all* pairs
  of the evaluation sentences, with ``padding="strict"``: the NVIB layer gives padded positions
  pi = 0 exactly, so a shared sample reveals the number of components and two sentences of
  different lengths have an infinite divergence. Its BDP epsilon uses exact
  divergences of order lambda + 1. Never drops or zeroes anything.
* **paper protocol** -- the authors' released evaluation, exactly: normalised RD (mean over dims,
  divided by the padded latent length), their Dirichlet proxy, pairs within eval batches of 16,
  the |z| > 0.5 outlier filter with the population std, a NaN-mean over dims whose Gaussian term is
  undefined, and their subsampled accountant with q = B / N_eval (:mod:`engine.nvdp.paper_protocol`).
  Comparable with their tables; not a guarantee.

Examples
--------
>>> p = EvalProtocol()
>>> p.n_eval, p.batch_size, p.outlier_ddof, p.paper_undefined, p.padding
(128, 16, 0, 'nanmean', 'strict')
>>> p.q(128)
0.125
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["EvalProtocol", "DEFAULT_PROTOCOL", "Bounds", "evaluate_bounds"]


@dataclass(frozen=True)
class EvalProtocol:
    """What an NVDP evaluation measures (frozen; one definition for page, CLI, script and docs).

    Parameters
    ----------
    split : {"test", "val"}, default "test"
        The split the sentences come from (the stratified 2/3, 1/6, 1/6 split of the data by
        ``split_seed``; its sentences in ascending index order).
    n_eval : int, default 128
        The first ``n_eval`` sentences of the split enter the bounds (all of the split if fewer).
        Accuracy is measured on the whole split.
    batch_size : int, default 16
        Eval batch of the paper protocol (pairs within consecutive batches) and its q.
    outlier_z : float, default 0.5
        Paper protocol: the authors' |z| filter on the per-pair RD within a batch.
    outlier_ddof : int, default 0
        Std of that z-score: 0, the authors' population std.
    paper_undefined : {"nanmean", "inf"}, default "nanmean"
        Paper protocol: the authors drop undefined Gaussian dims by a NaN-mean ("nanmean").
    subsample : bool, default True
        Paper protocol: the authors' accountant with q = batch_size / n_eval.
    padding : {"strict", "prior"}, default "strict"
        Guarantee form: "strict" matches the mechanism (padding has pi = 0, so lengths are
        revealed); "prior" is the bound of a length-hiding mechanism that this layer is not.
    delta : float, default 1e-5
    seed : int, default 0
        Seed of the posterior samples behind the accuracy.

    Raises
    ------
    ValueError
        Any field outside its accepted range (named).
    """

    split: str = "test"
    n_eval: int = 128
    batch_size: int = 16
    outlier_z: float = 0.5
    outlier_ddof: int = 0
    paper_undefined: str = "nanmean"
    subsample: bool = True
    padding: str = "strict"
    delta: float = 1e-5
    seed: int = 0

    def __post_init__(self):
        if self.split not in ("test", "val"):
            raise ValueError(f"split must be 'test' or 'val'; got {self.split!r}")
        for name, lo in (("n_eval", 2), ("batch_size", 3), ("seed", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}; got {v!r}")
        if not (isinstance(self.outlier_z, (int, float)) and self.outlier_z > 0):
            raise ValueError(f"outlier_z must be > 0; got {self.outlier_z!r}")
        if self.outlier_ddof not in (0, 1):
            raise ValueError(f"outlier_ddof must be 0 or 1; got {self.outlier_ddof!r}")
        if self.paper_undefined not in ("nanmean", "inf"):
            raise ValueError(f"paper_undefined must be 'nanmean' or 'inf'; got {self.paper_undefined!r}")
        if self.padding not in ("strict", "prior"):
            raise ValueError(f"padding must be 'strict' or 'prior'; got {self.padding!r}")
        if not (0 < float(self.delta) < 1):
            raise ValueError(f"delta must lie in (0, 1); got {self.delta!r}")

    def q(self, n_eval: int) -> float:
        """The paper accountant's subsampling ratio for ``n_eval`` evaluated sentences (1 without subsampling)."""
        return min(1.0, self.batch_size / n_eval) if self.subsample else 1.0

    def to_dict(self) -> dict:
        """JSON-ready dict, with a one-line description of each form."""
        d = asdict(self)
        d["guarantee_form"] = (f"exact RD in nats, max of both directions, all pairs of the first {self.n_eval} "
                               f"{self.split} sentences, padding={self.padding}; BDP from order lambda+1")
        d["paper_form"] = (f"authors' protocol: normalised RD, Dirichlet proxy, pairs within batches of {self.batch_size}, "
                           f"|z| > {self.outlier_z} filter (std ddof {self.outlier_ddof}), undefined dims: "
                           f"{self.paper_undefined}; accountant q = {self.batch_size}/N_eval"
                           + ("" if self.subsample else " disabled (q = 1)"))
        return d


#: The protocol every surface uses unless told otherwise.
DEFAULT_PROTOCOL = EvalProtocol()


@dataclass(frozen=True)
class Bounds:
    """RD bounds and BDP epsilons of clipped posteriors under one protocol (see :func:`evaluate_bounds`).

    Attributes
    ----------
    rd_exact : RDBoundResult
        Guarantee form over all pairs of the evaluation sentences.
    rd_paper : RDBoundResult
        Paper protocol (within-batch pairs, filtered max / mean).
    bdp : BDPResult
        Guarantee-form BDP (exact divergences of order lambda + 1, no subsampling).
    bdp_paper : PaperBDPResult
        The authors' accountant (``.epsilon``, ``["q"]``).
    protocol : EvalProtocol
    n_eval : int
        Sentences that entered the bounds.
    n_paper : int
        Sentences that entered the paper form and its accountant: ``n_eval`` cut down to whole
        eval batches (a short last batch of a few sentences has few pairs, a wide Student-t
        correction, and would dominate the authors' accountant, e.g. 0.514 of a total cost of
        0.525 for a last batch of 4; so it is left out, and ``n_eval - n_paper`` says how many).
    """

    rd_exact: object
    rd_paper: object
    bdp: object
    bdp_paper: object
    protocol: EvalProtocol
    n_eval: int
    n_paper: int = -1


def evaluate_bounds(post, renyi_order: float, protocol: EvalProtocol = DEFAULT_PROTOCOL, *,
                    n_latent: int | None = None, with_bdp: bool = True, memo: dict | None = None,
                    memo_key: bytes | None = None, memo_mu_key: bytes | None = None,
                    memo_sigma_key: bytes | None = None) -> Bounds:
    """RD bounds (both forms) and BDP epsilons (both) of clipped posteriors under ``protocol``.

    Parameters
    ----------
    post : engine.nvdp.layer.Posteriors
        Clipped posteriors of the split's sentences in split order (at least 2), padded to the
        latent length (max_length + 1).
    renyi_order : float
        lambda > 1.
    protocol : EvalProtocol, default DEFAULT_PROTOCOL
    n_latent : int, optional
        Normaliser of the paper form (default: the padded latent length of ``post``).
    with_bdp : bool, default True
        False skips both accountants (``bdp`` and ``bdp_paper`` are None).
    memo : dict, optional
        A dict kept by the caller between calls (e.g. :class:`engine.nvdp.posthoc.LiveEvaluator`
        across slider moves): the pair terms that depend only on mu, sigma and the mask (the
        Gaussian sums, the squared distances of the paper accountant) are stored there under a
        SHA-256 digest of the content of the evaluated mu, sigma and mask, and reused when the
        same content comes again (an alpha move). The results are the same values with or without it.
    memo_key : bytes, optional
        The caller's own key for the content of the evaluated mu, sigma and mask in ``memo`` instead
        of the digest (saves hashing about 10 MB per call; the evaluated size n x k is added to it).
        It must change whenever the content of the first n rows does: :class:`engine.nvdp.posthoc.LiveEvaluator`
        uses the settings that mu and sigma are clipped with, its memo being private to its fixed
        raw posteriors and mask.
    memo_mu_key : bytes, optional
        Likewise, the caller's key for the content of the evaluated mu and mask alone (with ``memo_key``):
        the paper accountant's squared distances depend on nothing else, so a move of the Renyi
        order (which moves the sigma floor) reuses them. Without it they are keyed as the rest.
    memo_sigma_key : bytes, optional
        Likewise, the caller's key for the content of the evaluated sigma alone (with ``memo_key`` and
        ``memo_mu_key``): the paper accountant's batch-mean blur sigma_R depends on sigma and the kept
        components alone, so a C_mu move reuses it (keyed with the kept components).

    Returns
    -------
    Bounds

    Raises
    ------
    ValueError
        Fewer than 2 inputs.
    """
    from engine.nvdp.bdp import bdp_from_posteriors
    from engine.nvdp.divergence import pairwise_rd_bound
    from engine.nvdp.layer import Posteriors
    from engine.nvdp.paper_protocol import paper_bdp

    n = min(protocol.n_eval, len(post))
    if n < 2:
        raise ValueError(f"need at least 2 inputs for pairwise bounds; got {len(post)}")
    n_latent = int(post.mu.shape[1]) if n_latent is None else int(n_latent)
    k = max(2, int(post.mask[:n].sum(1).max()))
    # one contiguous copy of mu and sigma for the three pair computations below (each made its own)
    p = Posteriors(post.mu[:n, :k].contiguous(), post.sigma[:n, :k].contiguous(), post.alpha[:n, :k],
                   post.mask[:n, :k])
    if memo is None:
        # a memo private to this call (its inputs do not change within it): the three pair computations
        # share what depends on mu, sigma and the mask alone (the finiteness check, sum_d ln sigma^2)
        memo, memo_key, memo_mu_key, memo_sigma_key = {}, b"this call", b"this call", b"this call"
    mt = None
    if memo is not None:
        mt = (memo, _digest(p.mu, p.sigma, p.mask) if memo_key is None else b"key:%d:%d:" % (n, k) + bytes(memo_key))
        if memo_key is not None and memo_mu_key is not None:
            mt = mt + (b"mukey:%d:%d:" % (n, k) + bytes(memo_mu_key),)
            if memo_sigma_key is not None:
                mt = mt + (b"sigmakey:%d:%d:" % (n, k) + bytes(memo_sigma_key),)
    rd_exact = pairwise_rd_bound(p.mu, p.sigma, p.alpha, p.mask, renyi_order=renyi_order, form="exact",
                                 padding=protocol.padding, memo=mt)
    # the paper form and its accountant on whole eval batches only (see Bounds.n_paper)
    n_paper = n - n % protocol.batch_size if n >= protocol.batch_size else n
    pp = p if n_paper == n else Posteriors(p.mu[:n_paper], p.sigma[:n_paper], p.alpha[:n_paper], p.mask[:n_paper])
    mtp = mt if n_paper == n or mt is None else (mt[0],) + tuple(x + b":paper%d" % n_paper for x in mt[1:])
    rd_paper = pairwise_rd_bound(pp.mu, pp.sigma, pp.alpha, pp.mask, renyi_order=renyi_order, form="paper",
                                 batch_size=protocol.batch_size, outlier_z=protocol.outlier_z,
                                 outlier_ddof=protocol.outlier_ddof, undefined=protocol.paper_undefined,
                                 n_latent=n_latent, memo=mtp)
    bdp = bdp_paper = None
    if with_bdp:
        bdp, _ = bdp_from_posteriors(p.mu, p.sigma, p.alpha, p.mask, renyi_order=renyi_order, delta=protocol.delta,
                                     form="exact", batch_size=protocol.batch_size, padding=protocol.padding, memo=mt)
        bdp_paper = paper_bdp(pp.mu, pp.sigma, pp.alpha, pp.mask, renyi_order=renyi_order, delta=protocol.delta,
                              batch_size=protocol.batch_size, n_eval=n_paper, subsample=protocol.subsample,
                              n_latent=n_latent, memo=mtp)
    return Bounds(rd_exact, rd_paper, bdp, bdp_paper, protocol, n, n_paper)


def _digest(*tensors) -> bytes:
    """SHA-256 of the dtype, shape and bytes of each tensor (a content key for ``memo``)."""
    import hashlib

    h = hashlib.sha256()
    for t in tensors:
        a = np.ascontiguousarray(t.detach().cpu().numpy())
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.view(np.uint8).reshape(-1) if a.size else b"")
    return h.digest()


def finite_or_none(x: float):
    """``x`` for JSON, None when not finite (JSON has no inf)."""
    return float(x) if math.isfinite(x) else None
