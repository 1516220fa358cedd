"""Bayesian differential privacy (BDP) accountant of Triastcyn & Faltings (ICML 2020).

Bayesian DP bounds the privacy loss on average over pairs of inputs drawn from the data
distribution instead of over the worst pair. For a mechanism with output distributions p (input x)
and p' (input x'), the privacy loss L = ln p(w)/p'(w) satisfies, by the Chernoff bound,

    Pr[L >= epsilon] <= E_{x,x'}[ E_w[e^{lam L}] ] e^{-lam epsilon},
    E_w[e^{lam L}] = exp(lam D_{lam+1}(p || p')),

so the per-batch privacy cost is the log-moment ``c = ln E_pairs[exp(lam D)]``, estimated from the
pairs of the batch with a one-sided Student-t upper confidence bound (Triastcyn & Faltings 2020,
"Bayesian Differential Privacy for Machine Learning", ICML, section 4: the estimator with
m samples is ``mean + t_{conf, m-1} * std / sqrt(m)`` on the moments). Costs add over batches
(composition) and

    epsilon_BDP = (sum_t c_t - ln(delta - (1 - conf^B))) / lam,

where each of the B per-batch confidence bounds can fail with probability 1 - conf and that
failure probability is charged to delta (``docs/specs/NVDP.md`` section 5;
``background/nvdp_research.md`` section 2.5). With zero divergence every cost is 0 and
epsilon = ln(1/delta)/lam: ln(1e5)/1.1 = 10.466, the floor of the papers' tables.

Which divergence order? The moment of order ``renyi_order`` = lam needs divergences of order
lam + 1 for the bound above to hold. :func:`bdp_from_posteriors` computes exactly that.
:func:`bdp_epsilon` takes whatever per-pair divergences it is given and uses ``lam * D`` as the
log-moment; feeding it order-lam divergences (e.g. the RD bound at 1.1) gives the plug-in figure
that the NVDP papers report, which is smaller than the guaranteed one (Renyi divergences grow with
the order). The order used is recorded in ``BDPResult.divergence_order``.

Not reproduced from the authors' code (``nvdp_research.md`` section 6, A11): their subsampling
amplification with ratio q = 16/|test| and integer moment order int(lam + 1) = 2, their scalar
batch-mean sigma, and their mapping of NaN/inf terms to 0. Here each shared sample is one input's
(no subsampling) and non-finite divergences propagate.

Examples
--------
>>> res = bdp_epsilon([np.zeros(120)] * 4, renyi_order=1.1, delta=1e-5)
>>> round(res.epsilon, 3)
10.466
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from engine.nvdp.divergence import RDBoundResult, pairwise_rd_bound, validate_renyi_order
from engine.privacy import validate_delta

__all__ = ["BDPResult", "bdp_epsilon", "bdp_from_posteriors", "DEFAULT_CONFIDENCE"]

#: Confidence of each per-batch Student-t bound used by the NVDP authors' accountant (1 - 1e-16).
DEFAULT_CONFIDENCE = 1.0 - 1e-16


@dataclass(frozen=True)
class BDPResult:
    """Outcome of the Bayesian-DP accountant (:func:`bdp_epsilon`).

    Attributes
    ----------
    epsilon : float
        epsilon_BDP at ``delta`` (``inf`` if any divergence is infinite, NaN if any is NaN).
    privacy_cost : float
        Sum of the per-batch log-moment bounds (nats).
    batch_costs : ndarray of float64, shape (n_batches,)
    n_batches, n_pairs : int
    renyi_order : float
        The moment order lam (epsilon is divided by it).
    delta : float
        Target delta.
    confidence : float
        Confidence of each per-batch Student-t bound.
    delta_effective : float
        ``delta - (1 - confidence ** n_batches)``, the part of delta left for the Chernoff bound.
    n_inf, n_nan : int
        Infinite / NaN pair divergences (never dropped).
    divergence_order : float or None
        The Renyi order of the divergences that were fed in, when known (lam + 1 is the order
        that makes epsilon a valid bound on the sampled pairs; lam gives the papers' plug-in figure).
    """

    epsilon: float
    privacy_cost: float
    batch_costs: np.ndarray
    n_batches: int
    n_pairs: int
    renyi_order: float
    delta: float
    confidence: float
    delta_effective: float
    n_inf: int
    n_nan: int
    divergence_order: float | None = None

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-ready)."""
        return {
            "epsilon": float(self.epsilon),
            "privacy_cost": float(self.privacy_cost),
            "batch_costs": [float(c) for c in self.batch_costs],
            "n_batches": int(self.n_batches),
            "n_pairs": int(self.n_pairs),
            "renyi_order": float(self.renyi_order),
            "delta": float(self.delta),
            "confidence": float(self.confidence),
            "delta_effective": float(self.delta_effective),
            "n_inf": int(self.n_inf),
            "n_nan": int(self.n_nan),
            "divergence_order": None if self.divergence_order is None else float(self.divergence_order),
        }


def _batches(divergences, batch_index):
    if isinstance(divergences, RDBoundResult):
        if batch_index is not None:
            raise ValueError("batch_index must be None when divergences is an RDBoundResult (it carries its own)")
        divergences, batch_index = divergences.values, divergences.batch_index
    if batch_index is None:
        if isinstance(divergences, np.ndarray) and divergences.ndim == 1:
            raise ValueError(
                "a flat array of divergences needs batch_index (one batch id per pair); "
                "pass a list of per-batch arrays instead, or a 2-D array of shape (n_batches, n_pairs)"
            )
        try:
            groups = [np.asarray(g, dtype=np.float64).ravel() for g in divergences]
        except (TypeError, ValueError):
            raise TypeError("divergences must be a sequence of per-batch arrays of real numbers") from None
    else:
        vals = np.asarray(divergences, dtype=np.float64)
        ids = np.asarray(batch_index)
        if vals.ndim != 1 or ids.shape != vals.shape:
            raise ValueError(
                f"divergences and batch_index must be 1-D of equal length, got shapes {vals.shape} and {ids.shape}"
            )
        groups = [vals[ids == b] for b in np.unique(ids)]
    if not groups:
        raise ValueError("divergences is empty: need at least one batch of pair divergences")
    for k, g in enumerate(groups):
        if g.size == 0:
            raise ValueError(f"batch {k} has no pair divergences; every batch needs at least one pair")
    return groups


def _batch_cost(log_moments: np.ndarray, confidence: float) -> float:
    """ln of the Student-t upper confidence bound on mean(exp(log_moments)), in log space."""
    if np.isnan(log_moments).any():
        return math.nan
    if np.isposinf(log_moments).any():
        return math.inf
    m = float(log_moments.max())
    e = np.exp(log_moments - m)
    p = e.size
    est = e.mean()
    if p >= 2:
        sd = e.std(ddof=1)
        if sd > 0:
            from scipy.stats import t as student_t  # here, not at import: scipy.stats costs ~47 MiB of RSS

            est = est + float(student_t.isf(1.0 - confidence, p - 1)) * sd / math.sqrt(p)
    return m + math.log(est)


def bdp_epsilon(
    divergences,
    batch_index=None,
    *,
    renyi_order: float = 1.1,
    delta: float = 1e-5,
    confidence: float = DEFAULT_CONFIDENCE,
    divergence_order: float | None = None,
) -> BDPResult:
    """Bayesian-DP epsilon from per-pair Renyi divergences grouped in batches.

    Parameters
    ----------
    divergences : RDBoundResult, sequence of 1-D arrays, 2-D array, or 1-D array with ``batch_index``
        Per-pair divergences D (nats) for each batch of inputs. For an unordered pair use
        ``max(D(a||b), D(b||a))`` (the default of :func:`pairwise_rd_bound`), which bounds the
        larger of the two directional moments of Triastcyn & Faltings. An ``RDBoundResult``
        supplies its ``values`` and ``batch_index``.
    batch_index : array_like of int, shape (n_pairs,), optional
        Batch id of each pair when ``divergences`` is a flat array.
    renyi_order : float, default 1.1
        The moment order lam > 1; the log-moment of a pair is ``lam * D``.
    delta : float, default 1e-5
        0 < delta < 1.
    confidence : float, default 1 - 1e-16
        Confidence of each per-batch one-sided Student-t bound (the NVDP authors' value); the B
        batches together may fail with probability ``1 - confidence**B``, which is taken from
        delta. Accepted range: 0 < confidence < 1.
    divergence_order : float, optional
        The Renyi order at which ``divergences`` were computed, recorded in the result
        (``renyi_order + 1`` makes epsilon a valid bound on the sampled pairs; see the module docstring).

    Returns
    -------
    BDPResult

    Raises
    ------
    ValueError
        If ``renyi_order <= 1``, delta is outside (0, 1), confidence is outside (0, 1),
        ``delta <= 1 - confidence**B``, or a batch is empty / shapes disagree.
    TypeError
        If ``divergences`` is not numeric.

    Notes
    -----
    Per batch with P pairs and log-moments ``c_p = lam * D_p``:
    ``cost = ln(mean_p e^{c_p} + t_{conf, P-1} * std_p(e^{c_p}) / sqrt(P))`` (std with ddof = 1,
    which equals the authors' ``std_ddof0 / sqrt(P - 1)``), evaluated in log space so that large
    divergences do not overflow. A batch with a single pair, or with zero spread, uses the mean
    alone (no spread to correct). Infinite divergences give an infinite cost and epsilon; NaN
    divergences give NaN (with a ``RuntimeWarning``).

    epsilon grows when every pair's divergence grows (a common shift or scale factor), when the
    largest pair grows and when batches are added. It is *not* monotone in a single low pair:
    raising it towards the others shrinks the spread term ``t * std`` (with ``confidence`` =
    1 - 1e-16 the Student-t quantile is large: 9.55 at 119 degrees of freedom). Source: Triastcyn & Faltings (2020),
    section 4 (estimator and Theorem 2); NVDP.md section 5.

    Examples
    --------
    >>> round(bdp_epsilon(np.zeros((16, 120))).epsilon, 4)  # the floor ln(1e5)/1.1
    10.4663
    >>> bdp_epsilon(np.full((16, 120), 0.1)).epsilon > 10.4663
    True
    """
    lam = validate_renyi_order(renyi_order)
    delta = validate_delta(delta)
    if isinstance(confidence, bool):
        raise TypeError("confidence must be a real number, got a boolean")
    confidence = float(confidence)
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must lie strictly between 0 and 1 (accepted range: 0 < confidence < 1), got {confidence!r}")
    if divergence_order is not None:
        divergence_order = validate_renyi_order(divergence_order)
    groups = _batches(divergences, batch_index)
    n_batches = len(groups)
    fail = -math.expm1(n_batches * math.log(confidence))  # 1 - confidence**B, accurately
    delta_eff = delta - fail
    if not delta_eff > 0:
        raise ValueError(
            f"delta = {delta!r} must exceed 1 - confidence**B = {fail!r} (B = {n_batches} batches); "
            "raise confidence or delta"
        )
    allv = np.concatenate(groups)
    n_nan = int(np.isnan(allv).sum())
    n_inf = int(np.isinf(allv).sum())
    if n_nan:
        warnings.warn(f"{n_nan} pair divergences are NaN; epsilon_BDP is NaN", RuntimeWarning, stacklevel=2)
    costs = np.array([_batch_cost(lam * g, confidence) for g in groups], dtype=np.float64)
    cost = float(costs.sum())
    eps = (cost - math.log(delta_eff)) / lam
    return BDPResult(
        epsilon=float(eps),
        privacy_cost=cost,
        batch_costs=costs,
        n_batches=n_batches,
        n_pairs=int(allv.size),
        renyi_order=lam,
        delta=delta,
        confidence=confidence,
        delta_effective=float(delta_eff),
        n_inf=n_inf,
        n_nan=n_nan,
        divergence_order=divergence_order,
    )


def bdp_from_posteriors(
    mu,
    sigma,
    alpha,
    mask,
    *,
    renyi_order: float = 1.1,
    delta: float = 1e-5,
    confidence: float = DEFAULT_CONFIDENCE,
    batch_size: int = 16,
    form: str = "exact",
    divergence_order: float | None = None,
    **rd_kwargs,
) -> tuple[BDPResult, RDBoundResult]:
    """BDP epsilon of NVIB posteriors: pair divergences within eval batches, then :func:`bdp_epsilon`.

    Parameters
    ----------
    mu, sigma, alpha, mask
        As in :func:`engine.nvdp.divergence.pairwise_rd_bound` (shapes (B, K, D), (B, K, D),
        (B, K), (B, K)).
    renyi_order : float, default 1.1
        Moment order lam.
    delta, confidence
        As in :func:`bdp_epsilon`.
    batch_size : int, default 16
        Inputs per batch (pairs are formed within consecutive batches, like the authors' eval
        batches of 16).
    form : {"exact", "paper"}, default "exact"
        Which form of the pair divergences to use.
    divergence_order : float, optional
        Renyi order of the pair divergences. None means ``renyi_order + 1`` (Triastcyn &
        Faltings: E[e^{lam L}] = e^{lam D_{lam+1}}, so epsilon bounds the sampled pairs). Pass
        ``renyi_order`` for the papers' plug-in figure.
    **rd_kwargs
        Passed to ``pairwise_rd_bound`` (e.g. ``dtype``, ``padding``). ``outlier_z`` is forced to
        None: the accountant uses every pair.

    Returns
    -------
    (BDPResult, RDBoundResult)

    Raises
    ------
    ValueError
        As the two functions it calls.

    Examples
    --------
    >>> import torch
    >>> mu = torch.zeros(32, 3, 4); sigma = torch.ones(32, 3, 4)
    >>> alpha = torch.ones(32, 3); mask = torch.ones(32, 3, dtype=torch.bool)
    >>> bdp, rd = bdp_from_posteriors(mu, sigma, alpha, mask)
    >>> round(bdp.epsilon, 3), bdp.n_batches, rd.n_pairs
    (10.466, 2, 240)
    """
    lam = validate_renyi_order(renyi_order)
    order = lam + 1.0 if divergence_order is None else validate_renyi_order(divergence_order)
    rd_kwargs.pop("outlier_z", None)
    rd = pairwise_rd_bound(
        mu, sigma, alpha, mask, renyi_order=order, form=form, pairs="batch", batch_size=batch_size,
        outlier_z=None, **rd_kwargs,
    )
    res = bdp_epsilon(rd, renyi_order=lam, delta=delta, confidence=confidence, divergence_order=order)
    return res, rd
