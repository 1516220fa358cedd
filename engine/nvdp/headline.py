"""The NVDP page's headline: clipped vs unclipped on the same pairs, and a verdict computed from the numbers.

Does clipping make sentences harder to tell apart *here*? Both models are evaluated under one
protocol on the same sentences, so their per-pair RD values line up pair by pair.
:func:`paired_comparison` counts, per form, the pairs where clipping lowers / raises the RD and the
pairs with no finite bound; :func:`headline_verdict` turns that, the worst pairs and the accuracy
into one sentence. Nothing is written by hand: where the papers' direction (clipping tightens the
bound at equal or better accuracy) does not hold, the sentence says so. No Streamlit here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PairedComparison", "paired_comparison", "headline_verdict", "HEADLINE_PRIVACY"]

#: Privacy label of every headline figure (:mod:`engine.privacy.labels`): the per-pair RD values, their
#: counts and the accuracies are computed from the evaluation sentences without noise.
HEADLINE_PRIVACY = "non-private diagnostic"


@dataclass(frozen=True)
class PairedComparison:
    """Per-pair comparison of one form of the RD between a clipped and an unclipped model.

    Attributes
    ----------
    form : str
        "paper" or "exact" (the guarantee form).
    n_pairs : int
        Pairs compared (the same pairs on both sides).
    n_lower, n_higher, n_equal : int
        Pairs where the clipped RD is lower / higher / equal (infinite values compare as usual:
        inf vs inf is equal; NaN pairs are left out).
    n_inf_clipped, n_inf_unclipped : int
        Pairs with no finite bound.
    median_diff : float
        Median of clipped - unclipped over the pairs finite on both sides (NaN if none).
    diff : ndarray of float64
        clipped - unclipped per pair where both are finite (for a figure).
    clipped, unclipped : ndarray of float64
        The two values of those same pairs (finite on both sides), for a paired scatter.
    """

    form: str
    n_pairs: int
    n_lower: int
    n_higher: int
    n_equal: int
    n_inf_clipped: int
    n_inf_unclipped: int
    median_diff: float
    diff: np.ndarray
    clipped: np.ndarray = None
    unclipped: np.ndarray = None


def paired_comparison(rd_clipped, rd_unclipped) -> PairedComparison:
    """Compare two :class:`~engine.nvdp.divergence.RDBoundResult` of the same pairs.

    Raises
    ------
    ValueError
        If the two results are not over the same pairs.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> a = NS(values=np.array([0.1, np.inf, 0.5]), pair_index=np.array([[0, 1], [0, 2], [1, 2]]), form="exact")
    >>> b = NS(values=np.array([0.2, np.inf, 0.4]), pair_index=a.pair_index, form="exact")
    >>> c = paired_comparison(a, b)
    >>> c.n_lower, c.n_higher, c.n_equal, c.n_inf_clipped
    (1, 1, 1, 1)
    """
    if not np.array_equal(rd_clipped.pair_index, rd_unclipped.pair_index):
        raise ValueError("the two results are not over the same pairs; evaluate both under one protocol")
    a = np.asarray(rd_clipped.values, dtype=np.float64)
    b = np.asarray(rd_unclipped.values, dtype=np.float64)
    ok = ~(np.isnan(a) | np.isnan(b))
    both = ok & np.isfinite(a) & np.isfinite(b)
    diff = a[both] - b[both]
    with np.errstate(invalid="ignore"):
        lower = int((ok & (a < b)).sum())
        higher = int((ok & (a > b)).sum())
    return PairedComparison(
        form=str(rd_clipped.form), n_pairs=int(a.size), n_lower=lower, n_higher=higher,
        n_equal=int(ok.sum()) - lower - higher, n_inf_clipped=int(np.isinf(a).sum()),
        n_inf_unclipped=int(np.isinf(b).sum()), median_diff=float(np.median(diff)) if diff.size else math.nan,
        diff=diff, clipped=a[both], unclipped=b[both],
    )


def _fmt(x: float) -> str:
    return "infinite" if math.isinf(x) else ("n/a" if math.isnan(x) else f"{x:.3g}")


def headline_verdict(res_c, res_u, label: str = "clipped") -> str:
    """One-line verdict from two :class:`~engine.nvdp.posthoc.PosthocResult` under one protocol.

    States, for the paper protocol and for the guarantee form, on how many of the same pairs
    clipping lowers the RD, how many pairs have no finite bound, and the accuracy change; then
    whether the papers' direction holds here (tighter paper-form worst case and mean, accuracy not
    lower by more than 1 point) -- "holds" or "does not hold", computed.
    """
    pp = paired_comparison(res_c.rd_paper, res_u.rd_paper)
    pe = paired_comparison(res_c.rd_exact, res_u.rd_exact)
    acc_d = 100.0 * (res_c.accuracy - res_u.accuracy)
    tighter = (res_c.rd_paper.max < res_u.rd_paper.max) and (res_c.rd_paper.mean < res_u.rd_paper.mean)
    holds = tighter and acc_d >= -1.0
    parts = [
        f"**Same pairs, {label} vs unclipped.** Paper protocol: clipping lowers the RD on {pp.n_lower} of "
        f"{pp.n_pairs} pairs and raises it on {pp.n_higher} (worst case {_fmt(res_c.rd_paper.max)} vs "
        f"{_fmt(res_u.rd_paper.max)}).",
        f"Guarantee form: lower on {pe.n_lower} of {pe.n_pairs}, higher on {pe.n_higher}; "
        f"{pe.n_inf_clipped} pairs have no finite bound with clipping, {pe.n_inf_unclipped} without.",
        f"Accuracy {100 * res_c.accuracy:.1f}% vs {100 * res_u.accuracy:.1f}%.",
        ("The papers' direction (a tighter bound at equal or better accuracy) **holds here** in the paper protocol."
         if holds else
         "The papers' direction (a tighter bound at equal or better accuracy) **does not hold here**"
         + (": the paper-protocol worst case or mean is not lower with clipping." if not tighter
            else f": accuracy drops by {-acc_d:.1f} points.")),
    ]
    return " ".join(parts)
