"""mu-GDP <-> (epsilon, delta) conversions, composition and budget splits, rounded towards more privacy.

Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 84(1), 2022, Corollary 2.13 (the privacy
profile) and Corollary 3.3 (composition). Re-exported by :mod:`engine.privacy`; import from there.
"""

from __future__ import annotations

import functools
import math
import struct
from fractions import Fraction
from typing import Iterable

import numpy as np
from engine.privacy._checks import _as_float, validate_delta, validate_epsilon, validate_mu
from engine.privacy._ndtr import log_ndtr  # math.erfc-based: no SciPy import (keeps the CLI's start-up short)

__all__ = ["gdp_delta", "gdp_mu", "gdp_epsilon", "compose_gdp", "split_mu", "split_epsilon"]

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
# of the two float arguments. The bound adds, term by term, the rounding of a, log_ndtr's error
# (engine.privacy._ndtr, math.erfc-based; measured against mpmath at 80 digits: <= 3.9e-16 relative
# for t <= 0, <= 1.9e-13 for 0 < t <= 37, worst case no worse than scipy.special.log_ndtr's;
# the budget below is 8e-15 and 2e-12, i.e. >= 10x headroom; tests/engine/test_privacy_ndtr.py), the quadrature and the
# subtraction eps - D. tests/engine/test_privacy_oracle.py checks bound >= exact and central ~ exact with mpmath.
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
    against mpmath in ``tests/engine/test_privacy_oracle.py``).

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
    return _gdp_mu_cached(eps, dlt)


@functools.lru_cache(maxsize=1024)
def _gdp_mu_cached(eps: float, dlt: float) -> float:
    """:func:`gdp_mu` of validated floats, memoised per (epsilon, delta): a pure function."""
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
    """The smallest float q with q >= num / den exactly (num >= 0, den > 0, both finite).

    The exact comparison ``Fraction(q) >= Fraction(num) / Fraction(den)`` done on the floats' integer ratios
    (``q = qn/qd``, ``num = a/b``, ``den = c/e``: ``qn b c >= a e qd``), without building Fractions: the same
    answer in a few microseconds less (four of these per SSP release).
    """
    q = num / den
    if math.isinf(q):
        return q
    a, b = float(num).as_integer_ratio()
    c, e = float(den).as_integer_ratio()
    lhs, rhs = b * c, a * e  # q >= exact  <=>  qn * lhs >= rhs * qd  (b, c, e, qd > 0)
    while True:
        qn, qd = q.as_integer_ratio()
        if qn * lhs >= rhs * qd:
            return q
        q = math.nextafter(q, math.inf)


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
    mn, md = m.as_integer_ratio()
    tn, td = mn * mn, md * md  # target m^2 = tn / td exactly

    def above(v: float) -> bool:  # k v^2 > m^2, in exact (integer) arithmetic
        vn, vd = v.as_integer_ratio()
        return k * vn * vn * td > tn * vd * vd

    while above(part):
        part = math.nextafter(part, 0.0)
    while not above(math.nextafter(part, math.inf)):
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
