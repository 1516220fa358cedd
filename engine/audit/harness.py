"""The audit harness: :func:`audit` (sample, test, verdict) and its :class:`AuditResult` (see :mod:`engine.audit`)."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from engine import privacy as P
from engine.audit.mechanisms import MECHANISMS, sample_releases
from engine.audit.stats import distinguishing_test, separation_interval, separation_power

__all__ = ["AuditResult", "audit", "DEFAULT_ALPHA", "DEFAULT_AUDIT_EPSILON", "PILOT_SHARE"]

#: False-alarm rate of one audit: the probability that a correct mechanism is flagged (one-sided,
#: Bonferroni-split over the audited releases of that mechanism).
DEFAULT_ALPHA = 1e-3

#: Default claimed epsilon of an audit: at 4 (mu = 0.925 at delta 1e-5) a 10 % under-calibration is caught
#: with 20,000 trials per data set by every mechanism (``docs/audit.md``: the power column).
DEFAULT_AUDIT_EPSILON = 4.0

#: Share of the runs that fixes the test direction of a release without a fixed one (a black-box output).
PILOT_SHARE = 0.2


@dataclass
class AuditResult:
    """One audit: the claim, the estimated separation of each audited release and the verdict.

    Attributes
    ----------
    mechanism, label : str
    broken : str or None
    epsilon, delta : float
        The claim.
    mu_claimed : float
        The estimator's own total mu-GDP.
    trials : int
        Runs per data set.
    alpha : float
        False-alarm rate of the verdict (one-sided, split evenly over the releases: Bonferroni).
    releases : list of dict
        Per audited release: ``name``, ``mu_claim`` (its claimed mu), ``bound`` (what a correct release can
        show: ``mu_claim``, or ``sqrt(exp(mu_claim^2) - 1)`` for a non-Gaussian output), ``mu_hat``,
        ``lower`` / ``upper`` (one-sided bounds at ``alpha / len(releases)`` each), ``ratio`` (noise-free
        movement over the stated sensitivity), ``gaussian``, ``runs`` (per side, used for the interval),
        ``violation``, ``power_10pct`` (probability of flagging a 10 % under-calibration with these runs,
        normal approximation), ``epsilon_lb`` (Clopper-Pearson lower bound on epsilon at ``confidence``,
        from the threshold test of :func:`engine.audit.stats.distinguishing_test`; informative only).
    mu_hat_ratio : float
        The largest ``mu_hat / mu_claim`` over the releases (1 for a tight correct mechanism).
    violation : bool
        Some release's lower bound exceeds what a correct release can show: evidence that the mechanism
        does not meet its claim (a correct mechanism is flagged with probability <= ``alpha``).
    seconds : float
    """

    mechanism: str
    label: str
    broken: str | None
    epsilon: float
    delta: float
    mu_claimed: float
    trials: int
    alpha: float
    releases: list
    mu_hat_ratio: float
    violation: bool
    seed: int
    released: str
    confidence: float
    seconds: float
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _scores(rel, alpha_j, pilot_share):
    """Project the release on its direction (fixed, or estimated on a pilot share) and bound mu."""
    X0 = np.asarray(rel.out0, dtype=float).reshape(len(rel.out0), -1)
    X1 = np.asarray(rel.out1, dtype=float).reshape(len(rel.out1), -1)
    with np.errstate(invalid="ignore", over="ignore"):
        X0 = np.nan_to_num(X0, nan=0.0, posinf=1e300, neginf=-1e300)
        X1 = np.nan_to_num(X1, nan=0.0, posinf=1e300, neginf=-1e300)
    if rel.direction is not None and np.any(rel.direction):
        w = np.asarray(rel.direction, dtype=float).ravel()
        main0, main1 = X0, X1
    else:
        k = max(2, int(round(pilot_share * X0.shape[0])))
        p0, p1, main0, main1 = X0[:k], X1[:k], X0[k:], X1[k:]
        var = 0.5 * (p0.var(0) + p1.var(0))
        w = (p1.mean(0) - p0.mean(0)) / np.maximum(var, 1e-300)
    scale = float(np.max(np.abs(w))) or 1.0
    w = w / scale
    with np.errstate(invalid="ignore", over="ignore"):
        s0, s1 = main0 @ w, main1 @ w
    return separation_interval(s0, s1, alpha_j), main0.shape[0]


def audit(mechanism: str, *, epsilon: float = DEFAULT_AUDIT_EPSILON, delta: float = 1e-5, trials: int = 20_000,
          seed: int = 0, broken: str | None = None, alpha: float = DEFAULT_ALPHA, confidence: float = 0.95,
          n: int = 100, pilot_share: float = PILOT_SHARE) -> AuditResult:
    """Audit a mechanism: worst-case neighbouring data sets, many runs, a confidence interval on mu.

    For every release the mechanism makes on its worst-case pair (:mod:`engine.audit.mechanisms`), the
    outputs are projected on a test direction fixed before looking at them (the noise-free movement, or
    a direction estimated on a pilot share of the runs), the standardised separation ``mu_hat`` of the
    projections gets one-sided bounds at ``alpha / k`` (k releases; Bonferroni), and the verdict is a
    **violation** when a lower bound exceeds what a correct release can show (its claimed mu, or
    ``sqrt(exp(mu^2) - 1)`` for a non-Gaussian output). A correct mechanism is therefore flagged with
    probability at most ``alpha`` (asymptotically in the trials).

    Parameters
    ----------
    mechanism : str
        A key of :data:`engine.audit.MECHANISMS`.
    epsilon : float, default 4.0
        Claimed epsilon, ``0 < epsilon < inf``.
    delta : float, default 1e-5
        ``0 < delta < 1``.
    trials : int, default 20000
        Runs per data set and release.
    seed : int, default 0
    broken : None or str
        Audit a deliberately broken copy instead (:func:`engine.audit.hooks.parse_broken`).
    alpha : float, default 1e-3
        False-alarm rate of the verdict, ``0 < alpha < 1``.
    confidence : float, default 0.95
        Confidence of the informative Clopper-Pearson epsilon bound.
    n : int, default 100
        Private rows.
    pilot_share : float, default 0.2
        Share of the runs that fixes a black-box release's test direction, in (0, 0.9].

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        Unknown mechanism or broken copy, trials < 4, epsilon/delta/alpha/confidence out of range.

    Examples
    --------
    >>> r = audit("dp-rr", epsilon=4.0, trials=2000, seed=1)
    >>> r.violation, len(r.releases)
    (False, 2)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if not 0 < pilot_share <= 0.9:
        raise ValueError(f"pilot_share must lie in (0, 0.9], got {pilot_share!r}")
    t0 = time.perf_counter()
    releases, info = sample_releases(mechanism, epsilon=epsilon, delta=delta, trials=trials, seed=seed,
                                     broken=broken, n=n)
    a_j = float(alpha) / len(releases)
    rows = []
    for rel in releases:
        (mu_hat, lo, hi), runs = _scores(rel, a_j, pilot_share)
        bound = rel.mu_claim if rel.gaussian else math.sqrt(math.expm1(rel.mu_claim**2))
        test = distinguishing_test(rel.out0, rel.out1, delta, confidence)
        # power against a 10 % under-calibration of this release as built (a broken copy's pair can move by
        # more than the stated sensitivity: the power is that of the correct pair, ratio <= 1)
        true10 = rel.mu_claim / 0.9 * (min(rel.ratio, 1.0) if math.isfinite(rel.ratio) else 1.0)
        rows.append({
            "name": rel.name, "mu_claim": float(rel.mu_claim), "bound": float(bound), "mu_hat": float(mu_hat),
            "lower": float(lo), "upper": float(hi), "ratio": float(rel.ratio), "gaussian": bool(rel.gaussian),
            "runs": int(runs), "violation": bool(lo > bound),
            "power_10pct": separation_power(true10, bound, runs, a_j) if rel.gaussian else math.nan,
            "epsilon_lb": float(test["epsilon_lb"]),
            "release_epsilon": float(P.gdp_epsilon(rel.mu_claim, delta)),
        })
    m = MECHANISMS[mechanism]
    return AuditResult(
        mechanism=mechanism, label=m.label, broken=broken, epsilon=float(epsilon), delta=float(delta),
        mu_claimed=float(info["mu_claimed"]), trials=int(trials), alpha=float(alpha), releases=rows,
        mu_hat_ratio=max(r["mu_hat"] / r["mu_claim"] for r in rows), violation=any(r["violation"] for r in rows),
        seed=int(seed), released=m.released, confidence=float(confidence), seconds=time.perf_counter() - t0,
        extra={k: v for k, v in info.items() if k != "mu_claimed"},
    )
