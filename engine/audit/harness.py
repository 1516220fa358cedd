"""The audit harness: :func:`audit` (sample, test, bound) and its :class:`AuditResult` (see :mod:`engine.audit`)."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

from engine.audit.mechanisms import MECHANISMS, sample_releases
from engine.audit.stats import distinguishing_test, ideal_epsilon_lower_bound

__all__ = ["AuditResult", "audit"]


@dataclass
class AuditResult:
    """One audit: the claim, the certified lower bound and what it rests on.

    Attributes
    ----------
    mechanism, label : str
    broken : str or None
    epsilon, delta : float
        The claim.
    mu_claimed : float
        The estimator's own total mu-GDP.
    trials : int
        Runs per data set (half train, half test).
    epsilon_lb : float
        Clopper-Pearson lower bound on epsilon at ``confidence`` (nats).
    ideal_epsilon_lb : float
        What a perfect test would certify for an exactly tight ``mu_claimed`` mechanism with the same
        number of test runs (:func:`ideal_epsilon_lower_bound`).
    ideal_pair_epsilon_lb : float
        The same for ``pair_mu_ratio * mu_claimed``: the best this pair and these trials can show for a
        correct mechanism.
    mu_hat : float
        Standardised separation of the test scores (point estimate of the pair's mu).
    pair_mu_ratio : float
        The largest mu / mu_claimed this pair can show if the mechanism is exactly as calibrated.
    fp, fn, n_test : int
    fpr_ub, fnr_ub : float
    confidence : float
    violation : bool
        ``epsilon_lb > epsilon``: evidence that the mechanism does not meet its claim.
    seconds : float
    """

    mechanism: str
    label: str
    broken: str | None
    epsilon: float
    delta: float
    mu_claimed: float
    trials: int
    epsilon_lb: float
    ideal_epsilon_lb: float
    ideal_pair_epsilon_lb: float
    mu_hat: float
    pair_mu_ratio: float
    fp: int
    fn: int
    n_test: int
    fpr_ub: float
    fnr_ub: float
    confidence: float
    violation: bool
    seed: int
    released: str
    seconds: float
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def audit(mechanism: str, *, epsilon: float, delta: float = 1e-5, trials: int = 20_000, seed: int = 0,
          broken: str | None = None, confidence: float = 0.95, n: int = 100) -> AuditResult:
    """Audit a mechanism: neighbouring data sets, many runs, a distinguishing test, a bound on epsilon.

    Parameters
    ----------
    mechanism : str
        ``"dp-pmtrr"``, ``"dp-rr"``, ``"dp-gd-ridge"``, ``"dp-pmtlr"``, ``"dp-newton"``, ``"dp-gd-logistic"``,
        ``"dp-pmt-poisson"``: see :data:`MECHANISMS`.
    epsilon : float
        Claimed epsilon, ``0 < epsilon < inf``.
    delta : float, default 1e-5
        ``0 < delta < 1``.
    trials : int, default 20000
        Runs per data set (half fix the test, half are counted).
    seed : int, default 0
    broken : None, "noise-0.2", "skip-clipping" or "partial-noise"
        Audit a deliberately broken copy instead (see the module docstring).
    confidence : float, default 0.95
    n : int, default 100
        Private rows.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        Unknown mechanism or broken variant, trials < 4, epsilon/delta out of range.

    Examples
    --------
    >>> r = audit("dp-rr", epsilon=2.0, trials=2000, seed=1)
    >>> r.violation, 0 <= r.epsilon_lb < 2.0
    (False, True)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    t0 = time.perf_counter()
    out0, out1, info = sample_releases(mechanism, epsilon=epsilon, delta=delta, trials=trials, seed=seed,
                                       broken=broken, n=n)
    test = distinguishing_test(out0, out1, delta, confidence)
    mu_c = float(info["mu_claimed"])
    ideal = ideal_epsilon_lower_bound(mu_c, delta, test["n_test"], confidence)
    ratio = float(info["pair_mu_ratio"])  # nan: not known in closed form for this pair
    ideal_pair = (ideal_epsilon_lower_bound(mu_c * ratio, delta, test["n_test"], confidence)
                  if math.isfinite(ratio) else math.nan)
    m = MECHANISMS[mechanism]
    return AuditResult(
        mechanism=mechanism, label=m.label, broken=broken, epsilon=float(epsilon), delta=float(delta),
        mu_claimed=mu_c, trials=int(trials), epsilon_lb=test["epsilon_lb"], ideal_epsilon_lb=ideal,
        ideal_pair_epsilon_lb=ideal_pair,
        mu_hat=test["mu_hat"], pair_mu_ratio=float(info["pair_mu_ratio"]), fp=test["fp"], fn=test["fn"],
        n_test=test["n_test"], fpr_ub=test["fpr_ub"], fnr_ub=test["fnr_ub"], confidence=confidence,
        violation=bool(test["epsilon_lb"] > float(epsilon)), seed=int(seed), released=m.released,
        seconds=time.perf_counter() - t0,
        extra={k: v for k, v in info.items() if k not in ("mu_claimed", "pair_mu_ratio")},
    )
