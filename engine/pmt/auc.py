"""ROC AUC of many score columns at once, counted exactly from ranks (no scipy.stats: a sweep's start-up never
pays for it). A leaf: the logistic sweep and the whitening choice both read it."""

from __future__ import annotations

import numpy as np

__all__ = ["roc_auc_columns"]


def roc_auc_columns(scores: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ROC AUC of every column of ``scores`` against labels ``y`` in {0, 1} (ties get average ranks).

    ``(sum of the positives' ranks - n1 (n1 + 1) / 2) / (n1 n0)``: the Mann-Whitney form, equal to
    ``sklearn.metrics.roc_auc_score(y, scores[:, r])``. NaN when y has one class only, and for a column
    with a NaN score (as ``scipy.stats.rankdata``'s ranks, which propagate it).

    The rank sum is counted exactly in integers: with ``v`` a column sorted, a positive's average rank is
    ``lo + (hi - lo + 1) / 2`` for ``lo``, ``hi`` its left and right positions in ``v``; twice the sum is an
    integer, so the result is the float ``rankdata`` gives (a sum of half-integers below 2^52 is exact in
    float64), at a sort and two searches per column instead of rankdata's ranking of every row.

    Examples
    --------
    >>> roc_auc_columns(np.array([[0.1, 1.0], [0.4, 1.0], [0.35, 1.0], [0.8, 1.0]]), np.array([0, 0, 1, 1])).tolist()
    [0.75, 0.5]
    """
    y = np.asarray(y) == 1
    n1, n0 = int(y.sum()), int((~y).sum())
    scores = np.asarray(scores, dtype=float)
    if n1 == 0 or n0 == 0:
        return np.full(scores.shape[1], np.nan)
    out = np.full(scores.shape[1], np.nan)
    St = np.ascontiguousarray(scores.T)  # one contiguous row per column: sorts and searches in place
    pos = St[:, y]
    St.sort(axis=1)
    for r in range(St.shape[0]):
        v = St[r]
        if np.isnan(v[-1]):  # NaN sorts last: a NaN score makes the column's AUC NaN
            continue
        lo = np.searchsorted(v, pos[r], side="left")
        hi = np.searchsorted(v, pos[r], side="right")
        twice = int(np.sum(lo + hi + 1))  # 2 x the positives' rank sum (ranks from 1)
        out[r] = (twice / 2 - n1 * (n1 + 1) / 2) / (n1 * n0)
    return out
