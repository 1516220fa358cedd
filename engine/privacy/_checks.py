"""Validation of privacy parameters and user-set bounds (the privacy core's front door).

Every public entry point of :mod:`engine.privacy` and the estimators check their inputs here, before
any noise is drawn: epsilon, delta (and delta against 1/n), mu, sensitivities and user-set bounds such
as clip radii, with messages that name the parameter and the accepted range. Re-exported by
:mod:`engine.privacy`; import from there.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["NEIGHBOURING", "validate_neighbouring", "PrivacyLeakWarning", "validate_epsilon", "validate_delta",
           "DeltaTooLargeWarning", "check_delta", "BOUND_RANGE", "check_bound", "validate_mu"]

#: The neighbouring relations the engine supports: replace-one only (n public; PMT.md section 1).
#: Add/remove is not offered: n enters the radius R(d, n), the response bound B_y(n), the averages
#: and the noise scale, so halving the sensitivities would under-calibrate every release.
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
        num, den = d.as_integer_ratio()
        if num * int(n) > den:  # delta > 1/n, in exact arithmetic (delta = num / den exactly)
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
    (subnormal < 2.2e-308 loses precision and underflows to 0, which silently turns the noise off, as a
    ``clip_radius=1e-170`` once did). Each product is then an ordinary rounded float
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
