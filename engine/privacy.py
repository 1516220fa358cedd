"""Privacy accounting core: mu-Gaussian DP, (epsilon, delta) conversions, Gaussian noise, a ledger.

All accounting here is **mu-Gaussian differential privacy** (mu-GDP; Dong, Roth & Su,
"Gaussian Differential Privacy", JRSS-B 84(1), 2022). A mechanism is mu-GDP if telling two
neighbouring data sets apart from its output is no easier than telling N(0, 1) from N(mu, 1).

Conversions (Dong, Roth & Su 2022, Corollary 2.13)::

    delta(epsilon; mu) = Phi(-epsilon/mu + mu/2) - exp(epsilon) * Phi(-epsilon/mu - mu/2)

Every conversion rounds **towards more privacy**: a mu returned for a target (epsilon, delta) never
gives a delta above the target; an epsilon returned for (mu, delta) never understates the loss; a
noise scale is never smaller than the exact one. The analytic Gaussian mechanism of Balle & Wang
(ICML 2018, Theorem 8) is the same curve: sigma = sensitivity / mu(epsilon, delta).

Specification: ``shared/docs/PMT.md`` section 1.

Examples
--------
>>> round(gdp_epsilon(1.0, 1e-5), 4)
4.3772
>>> round(analytic_gaussian_sigma(1.0, 1e-5), 4)
3.7306
>>> compose_gdp([0.6, 0.8])
1.0
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

__all__ = [
    "PrivacyLeakWarning",
    "validate_epsilon",
    "validate_delta",
    "validate_mu",
    "gdp_delta",
    "gdp_mu",
    "gdp_epsilon",
    "compose_gdp",
    "split_mu",
    "gaussian_sigma",
    "gaussian_mu",
    "analytic_gaussian_sigma",
    "classical_gaussian_sigma",
    "gaussian_noise",
    "symmetric_gaussian_noise",
    "Release",
    "PrivacyLedger",
    "check_random_state",
    "NEIGHBOURING",
    "validate_neighbouring",
]

#: The neighbouring relations the engine supports: replace-one only (n public; PMT.md section 1).
#: Add/remove is not offered: n enters the radius R(d, n), the response bound B_y(n), the averages
#: and the noise scale, so halving the sensitivities would under-calibrate every release (issue 12).
NEIGHBOURING = ("replace-one",)


def validate_neighbouring(neighbouring: str) -> str:
    """Return ``neighbouring`` if it is ``"replace-one"``, else raise ``ValueError`` saying why.

    Raises
    ------
    ValueError
        For anything else, ``"add-remove"`` included: n is public under replace-one; add/remove is
        not offered because n enters R(d, n), B_y(n), the averages and the noise scale.
    """
    if neighbouring not in NEIGHBOURING:
        why = (" add/remove is not offered because n enters R(d, n), B_y(n), averages and the noise scale"
               if neighbouring == "add-remove" else "")
        raise ValueError(f"neighbouring must be 'replace-one' (n is public under replace-one), got "
                         f"{neighbouring!r};{why or ' no other relation is supported'}")
    return neighbouring


class PrivacyLeakWarning(UserWarning):
    """Warned whenever a bound, radius or scale is taken from private data.

    A bound that depends on the private data is itself a release that no noise protects, so
    the stated privacy guarantee no longer holds. Compare IBM diffprivlib's warning of the same
    name.
    """


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------
def _as_float(value, name: str) -> float:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got the boolean {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}") from None
    if math.isnan(out):
        raise ValueError(f"{name} is NaN; it must be a real number")
    return out


def validate_epsilon(epsilon, *, allow_inf: bool = False) -> float:
    """Check a privacy parameter epsilon and return it as a float.

    Parameters
    ----------
    epsilon : float
        Privacy loss, in nats. Accepted range: ``0 < epsilon < inf`` (``inf`` only when
        ``allow_inf``; it then means "no noise", a non-private run used to check convergence).
    allow_inf : bool, default False

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If epsilon is not a real number.
    ValueError
        If epsilon is NaN, <= 0, or infinite when that is not allowed.

    Examples
    --------
    >>> validate_epsilon(0.5)
    0.5
    >>> validate_epsilon(0)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be > 0 (accepted range: 0 < epsilon < inf), got 0.0
    """
    eps = _as_float(epsilon, "epsilon")
    rng = "0 < epsilon <= inf" if allow_inf else "0 < epsilon < inf"
    if eps <= 0:
        raise ValueError(f"epsilon must be > 0 (accepted range: {rng}), got {eps!r}")
    if math.isinf(eps) and not allow_inf:
        raise ValueError(f"epsilon must be finite (accepted range: {rng}), got inf")
    return eps


def validate_delta(delta) -> float:
    """Check a privacy parameter delta and return it as a float.

    Parameters
    ----------
    delta : float
        Failure probability. Accepted range: ``0 < delta < 1``.

    Raises
    ------
    TypeError, ValueError

    Examples
    --------
    >>> validate_delta(1e-5)
    1e-05
    >>> validate_delta(1)
    Traceback (most recent call last):
    ...
    ValueError: delta must lie strictly between 0 and 1 (accepted range: 0 < delta < 1), got 1.0
    """
    d = _as_float(delta, "delta")
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1 (accepted range: 0 < delta < 1), got {d!r}")
    return d


def validate_mu(mu, *, allow_inf: bool = False) -> float:
    """Check a GDP parameter mu (> 0; ``inf`` only when allowed) and return it as a float.

    Raises
    ------
    TypeError, ValueError

    Examples
    --------
    >>> validate_mu(1)
    1.0
    """
    m = _as_float(mu, "mu")
    if m <= 0:
        raise ValueError(f"mu must be > 0 (accepted range: 0 < mu {'<=' if allow_inf else '<'} inf), got {m!r}")
    if math.isinf(m) and not allow_inf:
        raise ValueError("mu must be finite (accepted range: 0 < mu < inf), got inf")
    return m


def _validate_sensitivity(sensitivity) -> float:
    s = _as_float(sensitivity, "sensitivity")
    if not (0 < s < math.inf):
        raise ValueError(f"sensitivity must be a finite L2 norm > 0 (accepted range: 0 < sensitivity < inf), got {s!r}")
    return s


# --------------------------------------------------------------------------------------------
# mu-GDP <-> (epsilon, delta)
# --------------------------------------------------------------------------------------------
def gdp_delta(epsilon: float, mu: float) -> float:
    """The delta of a mu-GDP mechanism at a given epsilon.

    ``delta(epsilon; mu) = Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2)``,
    evaluated in log space so that large epsilon does not overflow.

    Parameters
    ----------
    epsilon : float
        ``epsilon >= 0`` (nats).
    mu : float
        ``mu > 0``; ``inf`` gives delta = 1.

    Returns
    -------
    float
        delta in [0, 1].

    Source: Dong, Roth & Su (2022), Corollary 2.13.

    Examples
    --------
    >>> round(gdp_delta(4.3772, 1.0), 7)
    1e-05
    """
    eps = _as_float(epsilon, "epsilon")
    if eps < 0:
        raise ValueError(f"epsilon must be >= 0 here (accepted range: 0 <= epsilon), got {eps!r}")
    m = validate_mu(mu, allow_inf=True)
    if math.isinf(m):
        return 1.0
    if math.isinf(eps):
        return 0.0
    a = -eps / m + m / 2.0
    b = -eps / m - m / 2.0
    first = float(ndtr(a))
    second = math.exp(eps + float(log_ndtr(b)))
    return float(min(1.0, max(0.0, first - second)))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest mu such that mu-GDP implies (epsilon, delta)-DP.

    Solves ``delta(epsilon; mu) = delta`` for mu by bracketing and Brent's method, then steps mu
    down (one ulp at a time) until ``delta(epsilon; mu) <= delta``: rounding towards more privacy.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``0 < epsilon <= inf`` (inf gives mu = inf: no noise).
    delta : float
        Target delta, ``0 < delta < 1``.

    Returns
    -------
    float
        mu > 0.

    Raises
    ------
    ValueError
        For epsilon or delta outside their ranges (see :func:`validate_epsilon`,
        :func:`validate_delta`).

    Examples
    --------
    >>> mu = gdp_mu(1.0, 1e-5)
    >>> round(mu, 6), gdp_delta(1.0, mu) <= 1e-5
    (0.268051, True)
    """
    eps = validate_epsilon(epsilon, allow_inf=True)
    dlt = validate_delta(delta)
    if math.isinf(eps):
        return math.inf
    f = lambda m: gdp_delta(eps, m) - dlt  # noqa: E731  increasing in m
    lo, hi = 1e-12, 1.0
    while f(hi) < 0:
        lo, hi = hi, hi * 2.0
        if hi > 1e8:  # pragma: no cover - unreachable for delta < 1
            raise ValueError(f"no finite mu reaches delta={dlt} at epsilon={eps}")
    if f(lo) > 0:  # pragma: no cover - delta(eps; 1e-12) is ~0
        return lo
    mu = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    while gdp_delta(eps, mu) > dlt:
        mu = math.nextafter(mu, 0.0)
    return float(mu)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon such that mu-GDP implies (epsilon, delta)-DP.

    Solves ``delta(epsilon; mu) = delta`` for epsilon and rounds up, so the reported epsilon never
    understates the privacy loss.

    Parameters
    ----------
    mu : float
        ``0 < mu <= inf`` (inf gives epsilon = inf).
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float
        epsilon >= 0, in nats.

    Examples
    --------
    >>> round(gdp_epsilon(1.0, 1e-5), 4)
    4.3772
    """
    m = validate_mu(mu, allow_inf=True)
    dlt = validate_delta(delta)
    if math.isinf(m):
        return math.inf
    f = lambda e: gdp_delta(e, m) - dlt  # noqa: E731  decreasing in e
    if f(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi) > 0:
        lo, hi = hi, hi * 2.0
    eps = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    while gdp_delta(eps, m) > dlt:
        eps = math.nextafter(eps, math.inf)
    return float(eps)


def compose_gdp(mus: Iterable[float]) -> float:
    """Compose mu-GDP mechanisms: ``sqrt(sum mu_i^2)`` (Dong, Roth & Su 2022, Corollary 3.3).

    Parameters
    ----------
    mus : iterable of float
        Each ``mu_i > 0`` (``inf`` allowed: the total is then inf).

    Returns
    -------
    float

    Examples
    --------
    >>> compose_gdp([1.0, 1.0, 1.0, 1.0])
    2.0
    """
    vals = [validate_mu(m, allow_inf=True) for m in mus]
    if not vals:
        return 0.0
    if any(math.isinf(v) for v in vals):
        return math.inf
    return float(math.sqrt(math.fsum(v * v for v in vals)))


def split_mu(mu: float, k: int) -> float:
    """Split a total mu evenly over k releases: ``mu / sqrt(k)``, so that they compose back to mu.

    Examples
    --------
    >>> round(split_mu(2.0, 4), 12)
    1.0
    """
    m = validate_mu(mu, allow_inf=True)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k (number of releases) must be an integer >= 1, got {k!r}")
    return m / math.sqrt(int(k))


# --------------------------------------------------------------------------------------------
# Gaussian mechanism calibration
# --------------------------------------------------------------------------------------------
def gaussian_sigma(sensitivity: float, mu: float) -> float:
    """Noise scale of the Gaussian mechanism for an L2 sensitivity at mu-GDP: ``sensitivity / mu``.

    Adding N(0, sigma^2) to each coordinate of a statistic whose L2 sensitivity is Delta is
    (Delta / sigma)-GDP (Dong, Roth & Su 2022, Theorem 2.7). ``mu = inf`` gives sigma = 0.

    Examples
    --------
    >>> gaussian_sigma(2.0, 0.5)
    4.0
    """
    s = _validate_sensitivity(sensitivity)
    m = validate_mu(mu, allow_inf=True)
    return 0.0 if math.isinf(m) else s / m


def gaussian_mu(sensitivity: float, sigma: float) -> float:
    """The mu-GDP of adding N(0, sigma^2) to a statistic of L2 sensitivity Delta: ``Delta/sigma``.

    ``sigma = 0`` gives mu = inf (no privacy).

    Examples
    --------
    >>> gaussian_mu(1.0, 4.0)
    0.25
    """
    s = _validate_sensitivity(sensitivity)
    sg = _as_float(sigma, "sigma")
    if sg < 0:
        raise ValueError(f"sigma must be >= 0, got {sg!r}")
    return math.inf if sg == 0 else s / sg


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest Gaussian noise scale that is (epsilon, delta)-DP (analytic Gaussian mechanism).

    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
    Calibration and Optimal Denoising", ICML 2018, Theorem 8. Its privacy profile is exactly the
    mu-GDP curve with mu = sensitivity / sigma, so ``sigma = sensitivity / gdp_mu(epsilon, delta)``,
    rounded up.

    Parameters
    ----------
    epsilon : float
        ``0 < epsilon < inf``.
    delta : float
        ``0 < delta < 1``.
    sensitivity : float, default 1.0
        L2 sensitivity of the statistic, ``> 0``.

    Returns
    -------
    float
        sigma, in the units of the statistic.

    Examples
    --------
    >>> [round(analytic_gaussian_sigma(e, 1e-5), 4) for e in (0.1, 1.0, 8.0)]
    [30.7496, 3.7306, 0.6002]
    """
    eps = validate_epsilon(epsilon)
    dlt = validate_delta(delta)
    s = _validate_sensitivity(sensitivity)
    sigma = s / gdp_mu(eps, dlt)
    # the mechanism's mu is s / sigma: make sure float rounding of that ratio cannot overspend
    while gdp_delta(eps, s / sigma) > dlt:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classical Gaussian mechanism's scale ``sensitivity * sqrt(2 ln(1.25/delta)) / epsilon``.

    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy" (2014), Theorem A.1. The
    proof covers ``epsilon < 1`` only; for larger epsilon the formula is still returned (it is what
    many tools use) but a ``UserWarning`` says it is not proved there. It is always at least the
    analytic scale for epsilon < 1.

    Examples
    --------
    >>> round(classical_gaussian_sigma(1.0, 1e-5) , 4)
    4.8448
    """
    eps = validate_epsilon(epsilon)
    dlt = validate_delta(delta)
    s = _validate_sensitivity(sensitivity)
    if eps >= 1.0:
        warnings.warn(
            f"the classical Gaussian calibration is proved only for epsilon < 1 (got {eps}); "
            "use analytic_gaussian_sigma for a valid scale",
            UserWarning,
            stacklevel=2,
        )
    return s * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


# --------------------------------------------------------------------------------------------
# noise
# --------------------------------------------------------------------------------------------
def check_random_state(random_state) -> np.random.Generator:
    """Turn ``None`` / an int / a ``numpy.random.Generator`` into a Generator.

    ``None`` draws fresh OS entropy. A Generator is used as is (its state advances).

    Raises
    ------
    TypeError
        For anything else (``numpy.random.RandomState`` included).
    """
    if random_state is None or isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError(f"random_state must be None, an int or a numpy.random.Generator, got {type(random_state).__name__}")


def gaussian_noise(shape, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """iid N(0, sigma^2) noise of the given shape (zeros when sigma = 0)."""
    sg = _as_float(sigma, "sigma")
    if sg < 0 or math.isinf(sg):
        raise ValueError(f"sigma must be finite and >= 0, got {sg!r}")
    if sg == 0:
        return np.zeros(shape)
    return rng.normal(0.0, sg, size=shape)


def symmetric_gaussian_noise(d: int, sigma: float, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """A symmetric d x d noise matrix with iid N(0, sigma^2) on and above the diagonal.

    The entries below the diagonal mirror those above. For a symmetric statistic of Frobenius
    sensitivity Delta (replace-one: ``sqrt(2) R^2`` for ``X^T X`` with rows of norm <= R), this
    matrix with ``sigma = Delta / mu`` is mu-GDP: the upper triangle is a vector whose L2 norm is at
    most the Frobenius norm of the difference (PMT.md section 3, step 3).

    Parameters
    ----------
    d : int
        Matrix side.
    sigma : float
        Standard deviation of each free entry (>= 0).
    rng : numpy.random.Generator
    size : int, optional
        If given, return a stack of shape (size, d, d) of independent matrices.

    Returns
    -------
    ndarray of shape (d, d) or (size, d, d)
    """
    shape = (d, d) if size is None else (size, d, d)
    z = gaussian_noise(shape, sigma, rng)
    upper = np.triu(z)
    return upper + np.swapaxes(np.triu(z, 1), -1, -2)


# --------------------------------------------------------------------------------------------
# ledger
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Release:
    """An immutable record of one Gaussian release.

    Attributes
    ----------
    name : str
        What was released (e.g. ``"A = X~^T X~"``).
    sensitivity : float
        L2 (or Frobenius) sensitivity under the neighbouring relation in force.
    sigma : float
        Noise standard deviation per free coordinate (0 = no noise).
    mu : float
        ``sensitivity / sigma`` (inf when sigma = 0).
    neighbouring : str
        ``"replace-one"`` (the only relation offered).
    """

    name: str
    sensitivity: float
    sigma: float
    mu: float
    neighbouring: str = "replace-one"

    def epsilon(self, delta: float) -> float:
        """This release alone, as (epsilon, delta)-DP at the given delta."""
        return gdp_epsilon(self.mu, delta)


@dataclass
class PrivacyLedger:
    """Records each Gaussian release and reports the total in mu-GDP and in (epsilon, delta).

    Parameters
    ----------
    delta : float, default 1e-5
        The delta at which totals and per-release epsilons are reported.

    Examples
    --------
    >>> ledger = PrivacyLedger(delta=1e-5)
    >>> _ = ledger.record("b", sensitivity=1.0, sigma=1 / 0.6)
    >>> _ = ledger.record("A", sensitivity=1.0, sigma=1 / 0.8)
    >>> round(ledger.total_mu, 12)
    1.0
    >>> round(ledger.total_epsilon, 4)
    4.3772
    """

    delta: float = 1e-5
    releases: list = field(default_factory=list)

    def __post_init__(self):
        self.delta = validate_delta(self.delta)

    def record(self, name: str, *, sensitivity: float, sigma: float, neighbouring: str = "replace-one") -> Release:
        """Append a release and return its record (mu = sensitivity / sigma)."""
        rel = Release(str(name), _validate_sensitivity(sensitivity), float(sigma), gaussian_mu(sensitivity, sigma), neighbouring)
        self.releases.append(rel)
        return rel

    @property
    def total_mu(self) -> float:
        """Composed mu of every release so far (``sqrt(sum mu_i^2)``)."""
        return compose_gdp(r.mu for r in self.releases)

    @property
    def total_epsilon(self) -> float:
        """The composed total as epsilon at ``self.delta`` (rounded up)."""
        mu = self.total_mu
        return 0.0 if mu == 0 else gdp_epsilon(mu, self.delta)

    def to_records(self) -> list[dict]:
        """One dict per release plus its own epsilon at ``self.delta``, then a ``total`` row."""
        rows = []
        for r in self.releases:
            row = asdict(r)
            row["epsilon"] = r.epsilon(self.delta)
            row["delta"] = self.delta
            rows.append(row)
        rows.append(
            {
                "name": "total (composed)",
                "sensitivity": float("nan"),
                "sigma": float("nan"),
                "mu": self.total_mu,
                "neighbouring": self.releases[0].neighbouring if self.releases else "",
                "epsilon": self.total_epsilon,
                "delta": self.delta,
            }
        )
        return rows

    def to_frame(self):
        """The ledger as a pandas DataFrame (see :meth:`to_records`)."""
        import pandas as pd

        return pd.DataFrame(self.to_records())
