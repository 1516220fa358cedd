"""``log Phi(t)`` (the log of the standard normal CDF) from :func:`math.erfc`, without SciPy.

:mod:`engine.privacy` is imported by the ``privacy`` CLI subcommand, which must answer in well under half
a second; ``scipy.special`` alone costs about 0.3 s to import. This module evaluates the one
special function the accounting needs with the C library's ``erfc`` (correctly rounded to within a
few ulp in glibc) and, deep in the lower tail where ``erfc`` underflows, the asymptotic series of the
Mills ratio (Abramowitz & Stegun 26.2.12 / 7.1.23):

    log Phi(t) = -t^2/2 - log(-t) - log(2 pi)/2 + log(1 - 1/t^2 + 3/t^4 - 15/t^6 + ...),  t -> -inf.

Accuracy (measured against mpmath at 80 digits; ``tests/engine/test_privacy_ndtr.py``): relative error
<= 3.9e-16 for t <= 0 and <= 1.9e-13 for 0 < t <= 37 (the upper tail inherits ``erfc``'s argument
rounding, ``2 t^2`` ulp; beyond t = 37.5 ``|log Phi|`` < 1e-300 is not representable), a worst case no worse than
``scipy.special.log_ndtr``'s on the same points, and inside the error budget that
:mod:`engine.privacy.gdp` assumes (8e-15 and 2e-12) with 10x headroom.
"""

from __future__ import annotations

import math

import numpy as np

_SQRT1_2 = math.sqrt(0.5)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: Below this t the asymptotic series is used (its 16th term is < 1e-20 relative here).
_ASYMPTOTIC_BELOW = -20.0


def _log_ndtr_scalar(t: float) -> float:
    if t != t:
        return math.nan
    if t >= 0.0:
        # Phi(t) = 1 - erfc(t/sqrt2)/2, log1p keeps the tiny tail exactly (erfc is relative-accurate)
        return math.log1p(-0.5 * math.erfc(t * _SQRT1_2)) if t < 40.0 else -0.0
    if t > _ASYMPTOTIC_BELOW:
        return math.log(0.5 * math.erfc(-t * _SQRT1_2))
    if t == -math.inf:
        return -math.inf
    # asymptotic series of t Phi(t) / phi(t) = -(1 - 1/t^2 + 3/t^4 - ...): alternating, terms shrink
    # for k < t^2/2 (k <= 16 here, t^2 >= 400), error below the first omitted term (< 1e-20)
    x = 1.0 / (t * t)
    s, term = 1.0, 1.0
    for k in range(1, 17):
        term *= -(2 * k - 1) * x
        s += term
    return -0.5 * t * t - math.log(-t) - _HALF_LOG_2PI + math.log(s)


def log_ndtr(t):
    """``log Phi(t)`` for a float or an array (same shape), Phi the standard normal CDF.

    Examples
    --------
    >>> round(log_ndtr(0.0), 12), round(float(log_ndtr(-40.0)), 6)
    (-0.69314718056, -804.608442)
    """
    if isinstance(t, (float, int)) and not isinstance(t, bool):
        return _log_ndtr_scalar(float(t))
    a = np.asarray(t, dtype=float)
    out = np.fromiter((_log_ndtr_scalar(v) for v in a.ravel().tolist()), dtype=float, count=a.size)
    return out.reshape(a.shape) if a.ndim else out.reshape(())
