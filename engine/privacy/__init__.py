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

Specification: ``docs/specs/PMT.md`` section 1.

Layout: :mod:`engine.privacy._checks` (validation), :mod:`engine.privacy.gdp` (conversions,
composition, splits); the noise samplers, calibration and the ledger live here.

Examples
--------
>>> round(gdp_epsilon(1.0, 1e-5), 4)
4.3772
>>> round(analytic_gaussian_sigma(1.0, 1e-5), 4)
3.7306
>>> compose_gdp([3.0, 4.0])
5.0
"""


from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from engine.privacy._checks import (  # noqa: F401  (re-exported; the underscored ones are used by the engine)
    BOUND_RANGE,
    NEIGHBOURING,
    DeltaTooLargeWarning,
    PrivacyLeakWarning,
    _as_float,
    _suggest_delta,
    _validate_sensitivity,
    check_bound,
    check_delta,
    validate_delta,
    validate_epsilon,
    validate_mu,
    validate_neighbouring,
)
from engine.privacy.gdp import (  # noqa: F401
    _check_k,
    _delta_certified,
    _div_up,
    compose_gdp,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    split_epsilon,
    split_mu,
)

__all__ = [
    "PrivacyLeakWarning",
    "sum_rounding_factor",
    "validate_epsilon",
    "validate_delta",
    "validate_mu",
    "check_delta",
    "check_bound",
    "BOUND_RANGE",
    "DeltaTooLargeWarning",
    "SAMPLERS",
    "gdp_delta",
    "gdp_mu",
    "gdp_epsilon",
    "compose_gdp",
    "split_mu",
    "split_epsilon",
    "gaussian_sigma",
    "gaussian_mu",
    "analytic_gaussian_sigma",
    "classical_gaussian_sigma",
    "gaussian_noise",
    "add_gaussian_noise",
    "symmetric_gaussian_noise",
    "Release",
    "PrivacyLedger",
    "check_random_state",
    "NEIGHBOURING",
    "validate_neighbouring",
]

#: The neighbouring relations the engine supports. Replace-one (n public) is the default of
#: PMT.md section 1; under add/remove each statistic's sensitivity is stated by its own function


# --------------------------------------------------------------------------------------------
# Gaussian mechanism calibration
# --------------------------------------------------------------------------------------------
def gaussian_sigma(sensitivity: float, mu: float) -> float:
    """Noise scale of the Gaussian mechanism for an L2 sensitivity at mu-GDP: ``sensitivity / mu``.

    Adding N(0, sigma^2) to each coordinate of a statistic whose L2 sensitivity is Delta is
    (Delta / sigma)-GDP (Dong, Roth & Su 2022, Theorem 2.7). ``mu = inf`` gives sigma = 0. Rounded
    up (the smallest float >= the exact ratio), so ``gaussian_mu(sensitivity, sigma) <= mu``.

    Examples
    --------
    >>> gaussian_sigma(2.0, 0.5)
    4.0
    """
    s = _validate_sensitivity(sensitivity)
    m = validate_mu(mu, allow_inf=True)
    return 0.0 if math.isinf(m) else _div_up(s, m)


#: Unit roundoffs: float32 (per-row terms of the float32 sweeps) and float64 (every accumulation).
_U32, _U64 = 2.0**-24, 2.0**-53


def sum_rounding_factor(n: int, d: int, *, exp_range: float = 0.0) -> float:
    """Factor by which a released float average of n clipped terms may move beyond its exact sensitivity.

    A released average ``fl(sum_i v_i) / n`` of per-row terms ``v_i`` (each of norm <= B in exact
    arithmetic) is computed with the per-row terms in float32 or float64 and **accumulated in float64**
    (every sum of the engine: BLAS/numpy products, the fused DP-GD kernel, Dask blocks). On neighbouring
    data sets (at the same iterate) the n - 1 common rows give bit-identical terms, so

    * the replaced row's term exceeds B by at most a relative ``kappa = (d + 4) u32 (1 + exp_range)``
      (the bound and the unit row rounded to the working dtype, the product rounded; ``exp_range`` = the
      range R B_theta of an exponential's argument, whose rounding ``d u32 |u|`` enters ``e^u``: Poisson);
    * each side's accumulation errs by at most ``gamma_{n+2} sum_i ||v_i|| <= gamma_{n+2} n B (1 + kappa)``
      in norm (``gamma_k = k u64 / (1 - k u64)``, the standard bound for any summation order, Higham,
      *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Lemma 3.1 and eq. 4.4; the division by n
      included);

    so the released average moves by at most ``(2B / n) (1 + kappa) (1 + n gamma_{n+2})``: this function
    returns ``(1 + kappa)(1 + n gamma_{n+2})``, rounded up. It is ``1 + 2e-6`` at n = 1e4, d = 10 and
    ``1 + 4.4e-4`` at n = 2e6 (float32 accumulation would need ``1 + n^2 2^-24``, useless: hence float64).

    Parameters
    ----------
    n : int
        Rows summed, ``1 <= n < 2^50``.
    d : int
        Length of each term (``>= 1``).
    exp_range : float, default 0
        ``|u| <= exp_range`` for terms that contain ``e^u`` (0 otherwise).

    Returns
    -------
    float >= 1

    Examples
    --------
    >>> f = sum_rounding_factor(2_000_000, 3)
    >>> 1.0004 < f < 1.0005
    True
    """
    n, d = int(n), int(d)
    if not 1 <= n < 2**50 or d < 1:
        raise ValueError(f"need 1 <= n < 2^50 and d >= 1, got n={n}, d={d}")
    kappa = (d + 4) * _U32 * (1.0 + float(exp_range))
    k = n + 2
    gamma = k * _U64 / (1.0 - k * _U64)
    return math.nextafter((1.0 + kappa) * (1.0 + n * gamma) * (1.0 + 4 * _U64), math.inf)


def gaussian_mu(sensitivity: float, sigma: float) -> float:
    """The mu-GDP of adding N(0, sigma^2) to a statistic of L2 sensitivity Delta: ``Delta/sigma``.

    ``sigma = 0`` gives mu = inf (no privacy). Rounded up (never understates the loss).

    Examples
    --------
    >>> gaussian_mu(1.0, 4.0)
    0.25
    """
    s = _validate_sensitivity(sensitivity)
    sg = _as_float(sigma, "sigma")
    if sg < 0:
        raise ValueError(f"sigma must be >= 0, got {sg!r}")
    if math.isinf(sg):
        raise ValueError("sigma must be finite (accepted range: 0 <= sigma < inf), got inf")
    return math.inf if sg == 0 else _div_up(s, sg)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest Gaussian noise scale that is (epsilon, delta)-DP (analytic Gaussian mechanism).

    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
    Calibration and Optimal Denoising", ICML 2018, Theorem 8. Its privacy profile is exactly the
    mu-GDP curve with mu = sensitivity / sigma, so ``sigma = sensitivity / gdp_mu(epsilon, delta)``,
    rounded up, and then raised until the mechanism's own ``gaussian_mu(sensitivity, sigma)`` is
    certified to meet (epsilon, delta).

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
    sigma = gaussian_sigma(s, gdp_mu(eps, dlt))
    # the mechanism's mu is s / sigma: make sure float rounding of that ratio cannot overspend
    while not _delta_certified(eps, gaussian_mu(s, sigma), dlt):
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


#: Noise samplers: ``"numpy"`` (default, fast; ``Generator.normal`` in float64, open to floating-point
#: attacks, see docs/dev/threat_model.md) and ``"opendp"`` (OpenDP's ``make_gaussian``: exact discrete
#: Gaussian sampling on a fine lattice with a CSPRNG, rounded to float; package ``opendp``, and with it the
#: estimators' ``sampler="opendp"``: :mod:`engine.privacy.opendp`).
SAMPLERS = ("numpy", "opendp")


def _check_sigma(sigma) -> float:
    sg = _as_float(sigma, "sigma")
    if sg < 0 or math.isinf(sg):
        raise ValueError(f"sigma must be finite and >= 0 (accepted range: 0 <= sigma < inf), got {sg!r}")
    return sg


def _opendp_gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - opendp is in requirements-dev.txt
        raise ImportError("sampler='opendp' needs the optional package opendp (pip install opendp)") from exc
    dp.enable_features("contrib")
    flat = np.ascontiguousarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(flat)):
        raise ValueError("the statistic has a non-finite entry; refusing to release it")
    meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                              scale=float(sigma))
    return np.asarray(meas(flat.tolist()), dtype=float).reshape(np.shape(values))


def gaussian_noise(shape, sigma: float, rng: np.random.Generator, sampler: str = "numpy") -> np.ndarray:
    """iid N(0, sigma^2) noise of the given shape (zeros when sigma = 0).

    Parameters
    ----------
    shape : int or tuple of int
    sigma : float
        Standard deviation, ``0 <= sigma < inf``.
    rng : numpy.random.Generator
        Used by ``sampler="numpy"`` only; OpenDP draws from its own cryptographic generator (so a seed
        does not reproduce its noise).
    sampler : {"numpy", "opendp"}, default "numpy"
        ``"numpy"``: ``rng.normal`` in float64 (fast: about 1e8 draws/s; the default, used by every
        estimator). ``"opendp"``: OpenDP's ``make_gaussian`` applied to zeros (about 1e4 draws/s).
        Noise made here and *then added* in float arithmetic loses part of OpenDP's protection against
        floating-point attacks; :func:`add_gaussian_noise` passes the statistic itself through OpenDP.
        See docs/dev/threat_model.md.

    Returns
    -------
    ndarray of float64, of the given shape

    Raises
    ------
    ValueError
        sigma negative, infinite or NaN; unknown sampler.
    """
    sg = _check_sigma(sigma)
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sg == 0:
        return np.zeros(shape)
    if sampler == "opendp":
        return _opendp_gaussian(np.zeros(shape), sg)
    return rng.normal(0.0, sg, size=shape)


def add_gaussian_noise(value, sigma: float, rng: np.random.Generator, sampler: str = "numpy") -> np.ndarray:
    """Release ``value + N(0, sigma^2 I)``: the Gaussian mechanism on a finite float statistic.

    With ``sampler="opendp"`` the statistic goes through OpenDP's ``make_gaussian`` itself (the sum is
    formed on OpenDP's lattice, not in float), which resists the floating-point attacks described in
    docs/dev/threat_model.md. With ``"numpy"`` it is ``value + rng.normal(0, sigma, value.shape)``.

    Parameters
    ----------
    value : array-like of float
        The statistic (finite entries only).
    sigma, rng, sampler
        As in :func:`gaussian_noise`.

    Returns
    -------
    ndarray of float64, of value's shape

    Raises
    ------
    ValueError
        A non-finite entry in value (checked before any noise is drawn), or bad sigma / sampler.
    """
    v = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(v)):
        raise ValueError("the statistic has a non-finite entry (NaN or inf); refusing to release it")
    sg = _check_sigma(sigma)
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sg == 0:
        return v.copy()
    if sampler == "opendp":
        return _opendp_gaussian(v, sg)
    return v + rng.normal(0.0, sg, size=v.shape)


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
    certified_epsilon : float, optional
        The total epsilon another accountant certifies for these releases (OpenDP's map, for
        ``sampler="opendp"``); the ``total`` row of :meth:`to_records` then shows it, named after
        ``certified_by``, instead of the mu-GDP conversion (which can be smaller: OpenDP's
        zCDP-based map is looser).
    certified_by : str, default ""

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
    certified_epsilon: float | None = None
    certified_by: str = ""

    def __post_init__(self):
        self.delta = validate_delta(self.delta)

    def record(self, name: str, *, sensitivity: float, sigma: float, neighbouring: str = "replace-one") -> Release:
        """Append a release and return its record (mu = sensitivity / sigma)."""
        rel = Release(str(name), _validate_sensitivity(sensitivity), float(sigma), gaussian_mu(sensitivity, sigma), neighbouring)
        self.releases.append(rel)
        return rel

    def record_steps(self, names, *, sensitivity: float, sigma: float, neighbouring: str = "replace-one") -> list[Release]:
        """Append one release per name, all of the same ``sensitivity`` and ``sigma`` (e.g. DP-GD's equal gradient
        steps), validated and converted to mu once: the records equal :meth:`record` called per name.

        Examples
        --------
        >>> a, b = PrivacyLedger(delta=1e-5), PrivacyLedger(delta=1e-5)
        >>> rels = a.record_steps(["step 1", "step 2"], sensitivity=0.5, sigma=4.0)
        >>> rels == [b.record("step 1", sensitivity=0.5, sigma=4.0), b.record("step 2", sensitivity=0.5, sigma=4.0)]
        True
        >>> PrivacyLedger(delta=1e-5).record_steps(["step 1"], sensitivity=0.0, sigma=1.0)
        Traceback (most recent call last):
        ...
        ValueError: sensitivity must be a finite L2 norm > 0 (accepted range: 0 < sensitivity < inf), got 0.0
        """
        s, mu = _validate_sensitivity(sensitivity), gaussian_mu(sensitivity, sigma)
        rels = [Release(str(name), s, float(sigma), mu, neighbouring) for name in names]
        self.releases.extend(rels)
        return rels

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
        eps_of: dict = {}  # one conversion per distinct mu: DP-GD records one release per step, all alike
        for r in self.releases:
            row = asdict(r)
            if r.mu not in eps_of:
                eps_of[r.mu] = r.epsilon(self.delta)
            row["epsilon"] = eps_of[r.mu]
            row["delta"] = self.delta
            rows.append(row)
        certified = self.certified_epsilon is not None
        rows.append(
            {
                "name": f"total (composed; epsilon certified by {self.certified_by or 'another accountant'})"
                if certified else "total (composed)",
                "sensitivity": float("nan"),
                "sigma": float("nan"),
                "mu": self.total_mu,
                "neighbouring": self.releases[0].neighbouring if self.releases else "",
                "epsilon": float(self.certified_epsilon) if certified else self.total_epsilon,
                "delta": self.delta,
            }
        )
        return rows

    def to_frame(self):
        """The ledger as a pandas DataFrame (see :meth:`to_records`)."""
        import pandas as pd

        return pd.DataFrame(self.to_records())
