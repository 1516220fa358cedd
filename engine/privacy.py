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
>>> compose_gdp([3.0, 4.0])
5.0
"""

from __future__ import annotations

import math
import struct
import warnings
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np
from scipy.special import log_ndtr

__all__ = [
    "PrivacyLeakWarning",
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
#: (e.g. sqrt(2) R^2 -> R^2 for X^T X, 2 R B -> R B for X^T y).
NEIGHBOURING = ("replace-one", "add-remove")


def validate_neighbouring(neighbouring: str) -> str:
    """Return ``neighbouring`` if it is one of :data:`NEIGHBOURING`, else raise ``ValueError``."""
    if neighbouring not in NEIGHBOURING:
        raise ValueError(f"neighbouring must be one of {NEIGHBOURING}, got {neighbouring!r}")
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
    if isinstance(delta, (float, np.floating)) and math.isnan(delta):
        raise ValueError("delta is NaN; it must be a real number (accepted range: 0 < delta < 1)")
    d = _as_float(delta, "delta")
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1 (accepted range: 0 < delta < 1), got {d!r}")
    return d


class DeltaTooLargeWarning(UserWarning):
    """Warned when delta > 1/n: a mechanism may then publish one whole row and still meet (epsilon, delta).

    (epsilon, delta)-DP allows the guarantee to fail with probability delta; "release a random row
    in the clear with probability delta" is (0, delta)-DP, so with delta >= 1/n a "private" release
    may expose about delta * n >= 1 records outright (Dwork & Roth 2014, section 2.3: delta should be
    much smaller than 1/n). Not an error: the accounting is still correct, the guarantee is weak.
    """


def check_delta(delta, n=None) -> float:
    """Validate delta (refuse delta <= 0 and delta >= 1) and warn if it exceeds 1/n.

    The one check that estimators, the CLI and the page call on a user-set delta.

    Parameters
    ----------
    delta : float
        Failure probability. Accepted range: ``0 < delta < 1``.
    n : int, optional
        Number of rows of the private data set (public under replace-one neighbours). When given and
        ``delta > 1/n`` in exact arithmetic, a :class:`DeltaTooLargeWarning` is issued (``delta == 1/n``
        exactly does not warn; note the float 0.0125 is slightly above 1/80).

    Returns
    -------
    float
        delta.

    Raises
    ------
    TypeError
        delta not a real number, or n not an integer.
    ValueError
        delta NaN or outside ``0 < delta < 1`` (the message names the range); n < 1.

    Warns
    -----
    DeltaTooLargeWarning
        When ``n`` is given and ``delta > 1/n``.

    Examples
    --------
    >>> check_delta(1e-5, n=1000)
    1e-05
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = check_delta(0.9, n=80)
    >>> w[0].category.__name__
    'DeltaTooLargeWarning'
    """
    d = validate_delta(delta)
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"n (number of private rows) must be an integer, got {n!r}")
        if n < 1:
            raise ValueError(f"n (number of private rows) must be >= 1, got {n!r}")
        if Fraction(d) * int(n) > 1:  # delta > 1/n, in exact arithmetic
            warnings.warn(
                f"delta = {d:g} exceeds 1/n = 1/{int(n)} = {1 / int(n):.3g}: (epsilon, delta)-DP then allows "
                f"a release that exposes whole rows with probability delta; choose delta much smaller "
                f"than 1/n (e.g. <= {_suggest_delta(int(n)):g})",
                DeltaTooLargeWarning,
                stacklevel=2,
            )
    return d


def _suggest_delta(n: int) -> float:
    return 10.0 ** math.floor(math.log10(1.0 / n) - 1)


#: Accepted range of user-set magnitude bounds (clip radii, response bounds, norms; see check_bound).
BOUND_RANGE = (1e-100, 1e100)


def check_bound(name: str, value, lo: float = BOUND_RANGE[0], hi: float = BOUND_RANGE[1]) -> float:
    """Validate a user-set magnitude bound (clip radius, response bound, ...) to ``lo <= value <= hi``.

    Why ``[1e-100, 1e100]``: the estimators square a bound (X^T X sensitivity ``sqrt(2) R^2``), multiply
    two (``2 R B``), sum it over up to ~1e8 rows and divide it by mu (down to ~1e-10) to get a noise
    scale. With ``|bound| <= 1e100`` every such product stays below ~1e220, far from float64 overflow
    (1.8e308), and with ``>= 1e-100`` the squares (>= 1e-200) and the noise scales stay normal floats
    (subnormal < 2.2e-308 loses precision and underflows to 0, which silently turns the noise off: the
    ``clip_radius=1e-170`` fault of issue 12). Each product is then an ordinary rounded float
    operation: relative error a few ulps, which the sensitivity analysis absorbs. Callers with a
    tighter arithmetic (e.g. float32 paths: use ``hi=1e15``, ``lo=1e-15``) pass their own range.

    Parameters
    ----------
    name : str
        Parameter name used in the message (e.g. ``"clip_radius"``).
    value : float
        The bound.
    lo, hi : float
        Accepted closed range, ``0 < lo <= hi < inf``.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        Not a real number (booleans included).
    ValueError
        NaN, infinite, or outside ``[lo, hi]``; the message names the parameter and the range.

    Examples
    --------
    >>> check_bound("clip_radius", 2.0)
    2.0
    >>> check_bound("clip_radius", 1e155)
    Traceback (most recent call last):
    ...
    ValueError: clip_radius must lie in [1e-100, 1e+100] (keeps squares, sums over rows and noise scales finite and exact to a few ulps), got 1e+155
    """
    v = _as_float(value, name)
    if not (0 < lo <= hi < math.inf):
        raise ValueError(f"check_bound range must satisfy 0 < lo <= hi < inf, got [{lo!r}, {hi!r}]")
    if not (lo <= v <= hi):  # inf lands here too
        raise ValueError(
            f"{name} must lie in [{lo:g}, {hi:g}] (keeps squares, sums over rows and noise scales finite and "
            f"exact to a few ulps), got {v!r}"
        )
    return v


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
# Accurate log-space evaluation of the GDP privacy profile with a rigorous error budget.
#
#     delta(eps; mu) = Phi(a) - e^eps Phi(b),   a = -eps/mu + mu/2,   b = a - mu
#                    = Phi(a) * (1 - exp(eps - D)),   D = log Phi(a) - log Phi(b) = int_b^a h(t) dt,
#
# with h = phi / Phi (the inverse Mills ratio of -t). The naive difference of the two Phi terms loses
# up to all its digits when mu is small (eps 1e-8, delta 1e-300: both terms ~1e-300 and they agree to 8
# digits), which is what made the old gdp_mu overshoot delta by 0.74 %. Here D comes from Gauss-Legendre
# quadrature of h on [b, a] when mu <= 2 (no cancellation) and from the log_ndtr difference otherwise
# (then D >= mu * min h is not small against the terms), and the bracket is evaluated with expm1/log.
#
# _log_delta_bounds returns the central estimate of log delta and an upper bound on the *exact* log delta
# of the two float arguments. The bound adds, term by term, the rounding of a, scipy's log_ndtr error
# (measured against mpmath at 80 digits on 3,800 points: <= 4.6e-16 relative for t <= 0, <= 1.8e-13
# for t > 0; the budget below is 8e-15 and 2e-12, i.e. >= 10x headroom), the quadrature and the
# subtraction eps - D. tests/test_privacy_oracle.py checks bound >= exact and central ~ exact with mpmath.
_U = 2.0**-53  # unit roundoff of float64
_GL_X, _GL_W = np.polynomial.legendre.leggauss(20)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_NDTR_REL_NEG = 8e-15  # log_ndtr relative error budget for t <= 0
_LOG_NDTR_REL_POS = 2e-12  # ... and for t > 0 (the value is then in [-log 2, 0))


def _log_ndtr_err(t: float, value: float) -> float:
    return abs(value) * (_LOG_NDTR_REL_NEG if t <= 0 else _LOG_NDTR_REL_POS)


def _mills(t: np.ndarray) -> np.ndarray:
    """h(t) = phi(t) / Phi(t), evaluated in log space (finite for every real t)."""
    return np.exp(-0.5 * t * t - _HALF_LOG_2PI - log_ndtr(t))


def _log_delta_bounds(eps: float, mu: float) -> tuple[float, float]:
    """(central estimate, rigorous upper bound) of log delta(eps; mu) for 0 <= eps < inf, 0 < mu < inf."""
    q = eps / mu
    a = -q + 0.5 * mu
    if not math.isfinite(a) or a < -40.0:
        # delta <= Phi(a) < Phi(-40) ~ 3.7e-350: below the smallest positive float, so below every target
        return -math.inf, -math.inf
    err_a = 4.0 * _U * (q + 0.5 * mu)  # rounding of eps/mu and of the sum
    la = float(log_ndtr(a))
    h_a = float(_mills(np.array(a)))
    err_la = _log_ndtr_err(a, la) + h_a * err_a
    if mu <= 2.0:
        # D = int_0^mu h(a - s) ds by composite 20-point Gauss-Legendre on panels of width <= 1/4.
        # |h'| <= 1, so the rounding of a moves D by <= mu * err_a; h's own error is that of
        # exp(-t^2/2 - c - log_ndtr(t)): <= |log_ndtr(t)| * rel + 4u (t^2/2 + c) relative.
        n_panels = max(1, math.ceil(mu / 0.25))
        width = mu / n_panels
        starts = a - width * np.arange(n_panels)
        t = (starts[:, None] - 0.5 * width * (1.0 + _GL_X)[None, :]).ravel()
        hv = _mills(t)
        D = float(np.sum(hv * np.tile(_GL_W, n_panels)) * 0.5 * width)
        lt = log_ndtr(t)
        rel_h = float(np.max(np.abs(lt) * np.where(t <= 0, _LOG_NDTR_REL_NEG, _LOG_NDTR_REL_POS)
                             + 4.0 * _U * (0.5 * t * t + _HALF_LOG_2PI + np.abs(lt)) + 4.0 * _U))
        err_D = D * (rel_h + 1e-14) + mu * err_a  # 1e-14: quadrature (20 nodes on width 1/4: ~1e-16 measured)
    else:
        b = a - mu
        lb = float(log_ndtr(b))
        h_b = float(_mills(np.array(b)))
        err_b = err_a + 2.0 * _U * abs(b)
        D = la - lb
        err_D = err_la + _log_ndtr_err(b, lb) + h_b * err_b + 2.0 * _U * abs(D)
    x = eps - D
    err_x = err_D + 2.0 * _U * abs(x)
    central = la + math.log(-math.expm1(x)) if x < 0 else -math.inf
    x_lo = x - err_x
    if x_lo >= 0:  # the exact bracket 1 - exp(eps - D) is <= 0: delta = 0 exactly (delta is never < 0)
        return central, -math.inf
    log_r_up = math.log(-math.expm1(x_lo))
    upper = la + err_la + log_r_up + 4.0 * _U * (abs(la) + abs(log_r_up)) + 1e-15
    return central, upper


#: gdp_mu certifies its mu against delta * exp(-1e-9) rather than delta. The certified upper bound is a
#: smooth function plus float noise of about 1e-13 in log delta; this margin (10^4 times that noise)
#: makes every later certification of the same (or a smaller) mu at any epsilon' >= epsilon succeed,
#: so that gdp_epsilon(mu') <= epsilon for mu' <= gdp_mu(epsilon, delta): a round trip never reports
#: more than was asked. It costs a relative 1e-9 of delta, i.e. about 1e-10 of mu.
_CALIBRATION_LOG_MARGIN = 1e-9


def _delta_certified(eps: float, mu: float, delta: float, log_margin: float = 0.0) -> bool:
    """True only if delta(eps; mu) <= delta * exp(-log_margin) holds in exact arithmetic."""
    if math.isinf(mu):
        return False
    if math.isinf(eps):
        return True
    _, upper = _log_delta_bounds(eps, mu)
    log_target = math.log(delta)
    return upper + 4.0 * _U * abs(log_target) + log_margin <= log_target


def _float_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _bits_float(i: int) -> float:
    return struct.unpack("<d", struct.pack("<q", i))[0]


def _bisect_floats(pred, lo: float, hi: float) -> tuple[float, float]:
    """Bisect over the float lattice (0 <= lo < hi) where pred(lo) != pred(hi): adjacent floats."""
    ilo, ihi = _float_bits(lo), _float_bits(hi)
    plo = pred(lo)
    while ihi - ilo > 1:
        mid = (ilo + ihi) // 2
        if pred(_bits_float(mid)) == plo:
            ilo = mid
        else:
            ihi = mid
    return _bits_float(ilo), _bits_float(ihi)


def gdp_delta(epsilon: float, mu: float) -> float:
    """The delta of a mu-GDP mechanism at a given epsilon.

    ``delta(epsilon; mu) = Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2)``,
    evaluated in log space as ``Phi(a) (1 - exp(epsilon - D))`` with ``D = log Phi(a) - log Phi(b)``
    (by quadrature of phi/Phi for mu <= 2), so that neither large epsilon nor tiny mu loses digits
    (relative error about 1e-12 or better over epsilon in [0, 50], delta down to 1e-300, checked
    against mpmath in ``tests/test_privacy_oracle.py``).

    Parameters
    ----------
    epsilon : float
        ``epsilon >= 0`` (nats).
    mu : float
        ``mu > 0``; ``inf`` gives delta = 1.

    Returns
    -------
    float
        delta in [0, 1] (a central estimate; the calibrations below use a certified upper bound).

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
    central, _ = _log_delta_bounds(eps, m)
    return float(min(1.0, max(0.0, math.exp(central))))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest mu such that mu-GDP implies (epsilon, delta)-DP, rounded towards more privacy.

    Returns the largest float mu for which ``delta(epsilon; mu) <= delta`` is *certified* in exact
    arithmetic: a rigorous upper bound on the exact delta of the float mu (log space, error budget
    for every rounding, see ``_log_delta_bounds``) is compared with the target, and the float lattice
    is bisected. The target is lowered by a relative 1e-9 (``_CALIBRATION_LOG_MARGIN``) so that
    :func:`gdp_epsilon` of this mu, or of any smaller mu, is certified ``<= epsilon`` despite float
    noise. The certified mu is below the exact root by a relative 1e-8 or less.

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
    pred = lambda m: _delta_certified(eps, m, dlt, _CALIBRATION_LOG_MARGIN)  # noqa: E731  True for small mu
    lo = hi = 1.0
    if pred(hi):
        while pred(hi):
            lo, hi = hi, hi * 2.0
            if hi > 1e300:  # pragma: no cover - delta(eps; mu) -> 1 > target as mu grows
                raise ValueError(f"no finite mu bounds delta={dlt} at epsilon={eps}")
    else:
        while not pred(lo):
            hi, lo = lo, lo / 2.0
            if lo == 0.0:  # pragma: no cover - delta(eps; mu) -> 0 as mu -> 0
                raise ValueError(f"no mu > 0 reaches delta={dlt} at epsilon={eps}")
    lo, _ = _bisect_floats(pred, lo, hi)
    return float(lo)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon such that mu-GDP implies (epsilon, delta)-DP, rounded up.

    Returns the smallest float epsilon for which ``delta(epsilon; mu) <= delta`` is certified in exact
    arithmetic (as in :func:`gdp_mu`), so the reported epsilon never understates the privacy loss. For
    ``mu <= gdp_mu(e, delta)`` the result is ``<= e`` (the round trip never reports more than the
    request).

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
    pred = lambda e: _delta_certified(e, m, dlt)  # noqa: E731  True for large epsilon
    if pred(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while not pred(hi):
        lo, hi = hi, hi * 2.0
        if hi > 1e300:  # pragma: no cover - delta(eps; mu) -> 0 as eps grows
            raise ValueError(f"no finite epsilon reaches delta={dlt} at mu={m}")
    _, hi = _bisect_floats(pred, lo, hi)
    return float(hi)


def _sqrt_up(s: Fraction) -> float:
    """The smallest float t >= 0 with t^2 >= s (exact rational comparison)."""
    t = math.sqrt(float(s))
    while Fraction(t) ** 2 < s:
        t = math.nextafter(t, math.inf)
    while t > 0 and Fraction(math.nextafter(t, 0.0)) ** 2 >= s:
        t = math.nextafter(t, 0.0)
    return t


def _div_up(num: float, den: float) -> float:
    """The smallest float q with q >= num / den exactly (num >= 0, den > 0, both finite)."""
    q = num / den
    exact = Fraction(num) / Fraction(den)
    if math.isinf(q):
        return q
    while Fraction(q) < exact:
        q = math.nextafter(q, math.inf)
    return q


def compose_gdp(mus: Iterable[float]) -> float:
    """Compose mu-GDP mechanisms: ``sqrt(sum mu_i^2)`` (Dong, Roth & Su 2022, Corollary 3.3).

    Rounded up: the result is the smallest float whose square is at least the exact sum of the
    squares of the given floats (checked in rational arithmetic), so a total never understates.

    Parameters
    ----------
    mus : iterable of float
        Each ``mu_i > 0`` (``inf`` allowed: the total is then inf).

    Returns
    -------
    float

    Examples
    --------
    >>> compose_gdp([1.0, 1.0, 1.0, 1.0]), compose_gdp([3.0, 4.0])
    (2.0, 5.0)
    >>> compose_gdp([0.6, 0.8])  # the floats 0.6 and 0.8 square to a little more than 1
    1.0000000000000002
    """
    vals = [validate_mu(m, allow_inf=True) for m in mus]
    if not vals:
        return 0.0
    if any(math.isinf(v) for v in vals):
        return math.inf
    return _sqrt_up(sum((Fraction(v) ** 2 for v in vals), Fraction(0)))


def _check_k(k) -> int:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k (number of releases) must be an integer >= 1, got {k!r}")
    return int(k)


def split_mu(mu: float, k: int) -> float:
    """Split a total mu evenly over k releases: ``mu / sqrt(k)``, rounded down.

    The result m is the largest float with ``k m^2 <= mu^2`` exactly, so ``compose_gdp([m] * k) <= mu``
    (no total of 8.000000000000002 from a budget of 8).

    Parameters
    ----------
    mu : float
        Total, ``0 < mu <= inf``.
    k : int
        Number of releases, ``>= 1``.

    Examples
    --------
    >>> split_mu(2.0, 4)
    1.0
    >>> compose_gdp([split_mu(1.0, 3)] * 3) <= 1.0
    True
    """
    m = validate_mu(mu, allow_inf=True)
    k = _check_k(k)
    if math.isinf(m):
        return m
    part = m / math.sqrt(k)
    target = Fraction(m) ** 2
    while k * Fraction(part) ** 2 > target:
        part = math.nextafter(part, 0.0)
    while k * Fraction(math.nextafter(part, math.inf)) ** 2 <= target:
        part = math.nextafter(part, math.inf)
    return part


def split_epsilon(epsilon: float, k: int) -> float:
    """Split an epsilon evenly over k releases under basic composition: ``epsilon / k``, rounded down.

    The result e is the largest float with ``k e <= epsilon`` exactly, so k parts add back to at most
    the budget (Dwork & Roth 2014, Theorem 3.16). The same applies to a delta budget.

    Examples
    --------
    >>> split_epsilon(8.0, 3) * 3 <= 8.0, split_epsilon(1.0, 4)
    (True, 0.25)
    """
    e = _as_float(epsilon, "epsilon")
    if not (0 < e < math.inf):
        raise ValueError(f"epsilon must be finite and > 0 (accepted range: 0 < epsilon < inf), got {e!r}")
    k = _check_k(k)
    part = e / k
    while k * Fraction(part) > Fraction(e):
        part = math.nextafter(part, 0.0)
    return part


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
#: attacks, see docs/threat_model.md) and ``"opendp"`` (OpenDP's ``make_gaussian``: exact discrete
#: Gaussian sampling on a fine lattice with a CSPRNG, rounded to float; optional dependency ``opendp``).
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
        See docs/threat_model.md.

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
    docs/threat_model.md. With ``"numpy"`` it is ``value + rng.normal(0, sigma, value.shape)``.

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
        ``"replace-one"`` or ``"add-remove"``.
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
