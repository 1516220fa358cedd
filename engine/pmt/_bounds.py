"""The public bounds of PMT and the row operations around them (``docs/specs/PMT.md`` section 2, steps 3-4).

The radius ``R = sqrt(d (1 + ln(2 n / eta)))`` (:func:`pmt_radius`), the response bound ``B_y`` from
public responses (:func:`response_bound`), the truncation of rows onto the sphere of radius R
(:func:`truncate_rows`), the intercept column (:func:`add_intercept`, appended last) and condition
numbers (:func:`condition_number`). Everything here depends on d, n, eta and public rows only; the
whitening by the public moment is in :mod:`engine.pmt._moment`, the transform in
:mod:`engine.pmt._transform`.
"""

from __future__ import annotations

import math

import numpy as np


def _as_2d_finite(X, name: str) -> np.ndarray:
    try:
        A = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric (array-like of floats)") from None
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got shape {A.shape}")
    if A.shape[0] < 1 or A.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {A.shape}")
    if not _all_finite(A):
        bad = int(np.size(A) - np.count_nonzero(np.isfinite(A)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s); all entries must be finite")
    return A

def _all_finite(A: np.ndarray) -> bool:
    """Whether every entry of a float array is finite, without an ``A``-sized temporary.

    ``max`` propagates NaN and reaches +inf, ``min`` reaches -inf: two reductions instead of the
    boolean array of ``np.isfinite(A)`` (whose count is only computed for the error message).
    """
    if A.size == 0:
        return True
    return math.isfinite(float(np.max(A))) and math.isfinite(float(np.min(A)))

def add_intercept(X) -> np.ndarray:
    """Append a constant-1 column (last) to ``X``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_features + 1)

    Examples
    --------
    >>> add_intercept([[2.0], [3.0]])
    array([[2., 1.],
           [3., 1.]])
    """
    A = np.asarray(X, dtype=float)
    return np.hstack([A, np.ones((A.shape[0], 1), dtype=A.dtype)])

def pmt_radius(d: int, n: int, eta: float = 0.05) -> float:
    """The PMT truncation radius ``R = sqrt(d (1 + ln(2 n / eta)))``.

    Parameters
    ----------
    d : int
        Number of transformed columns (the intercept column included), ``d >= 1``.
    n : int
        Private sample size, ``n >= 1``.
    eta : float, default 0.05
        Failure probability of "no row truncated", ``0 < eta < 1``.

    Returns
    -------
    float
        R, in whitened units (an L2 norm).

    Raises
    ------
    ValueError
        For d < 1, n < 1 or eta outside (0, 1).

    Source: Cao & Zhang, arXiv:2508.18037, Algorithm 1; PMT.md section 2, step 3.

    Examples
    --------
    >>> round(pmt_radius(20, 50_000, 0.05), 2)
    17.61
    """
    d_, n_, eta_ = _check_dn_eta(d, n, eta)
    return math.sqrt(d_ * (1.0 + math.log(2.0 * n_ / eta_)))

def _check_dn_eta(d, n, eta):
    for name, v in (("d", d), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    e = float(eta)
    if not (0.0 < e < 1.0):
        raise ValueError(f"eta must lie strictly between 0 and 1 (accepted range: 0 < eta < 1), got {eta!r}")
    return int(d), int(n), e

def response_bound(y_pub, n: int, eta: float = 0.05) -> float:
    """Public response bound ``B_y = sqrt(mean(y_pub^2) (1 + ln(2n/eta)))`` (PMT.md section 3, step 1).

    The 1-d version of the PMT radius applied to the public labels ("our reading").

    Parameters
    ----------
    y_pub : array-like of shape (m,)
        Public responses (finite).
    n : int
        Private sample size.
    eta : float, default 0.05

    Returns
    -------
    float
        B_y > 0, in the units of y.

    Raises
    ------
    ValueError
        If y_pub is empty, not finite, or all zero.

    Examples
    --------
    >>> round(response_bound([1.0, -1.0], 1000, 0.05), 4)
    3.4054
    """
    y = np.asarray(y_pub, dtype=float).ravel()
    if y.size < 1:
        raise ValueError("y_pub must contain at least one public response")
    if not np.all(np.isfinite(y)):
        raise ValueError("y_pub contains NaN or infinite values; all entries must be finite")
    return _response_bound_rows(y, n, eta)

def _response_bound_rows(y: np.ndarray, n, eta) -> float:
    """:func:`response_bound` of public labels already validated (float64, 1-D, non-empty, finite).

    ``np.add.reduce(y * y) / size`` is how ``np.mean`` computes it: the same float with less overhead.
    """
    _, n_, eta_ = _check_dn_eta(1, n, eta)
    m2 = float(np.add.reduce(y * y)) / y.size
    if m2 <= 0:
        if y.size == 1:  # one public row: its label minus the public mean (itself) is 0
            raise ValueError("n_pub = 1: one public row gives no public spread of the response (its label, centred by "
                             "the public mean, is 0, so the response bound B_y would be 0); use n_pub >= 2, or pass "
                             "response_bound=<float>")
        raise ValueError("y_pub is all zero, so the public response bound B_y would be 0; pass response_bound=<float>")
    return math.sqrt(m2 * (1.0 + math.log(2.0 * n_ / eta_)))

def truncate_rows(Z, radius: float):
    """Scale every row with ``||z_i|| > radius`` onto the sphere of that radius.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
    radius : float
        ``radius > 0``.

    Returns
    -------
    Z_trunc : ndarray of shape (n, d)
        A new array; rows have L2 norm <= radius.
    norms_before : ndarray of shape (n,)
    truncated : ndarray of bool, shape (n,)
        Which rows were scaled (display only).

    Examples
    --------
    >>> Zt, nb, tr = truncate_rows(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)
    >>> Zt.round(3).tolist(), nb.tolist(), tr.tolist()
    ([[0.6, 0.8], [0.3, 0.4]], [5.0, 0.5], [True, False])
    """
    r = float(radius)
    if not (r > 0 and math.isfinite(r)):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    Z = np.asarray(Z, dtype=float)
    norms = np.linalg.norm(Z, axis=1)
    truncated = norms > r
    scale = np.ones_like(norms)
    scale[truncated] = r / norms[truncated]
    return Z * scale[:, None], norms, truncated

def condition_number(M) -> float:
    """Spectral condition number of a symmetric matrix: ``max|w| / min w``.

    Returns ``inf`` when the smallest eigenvalue is <= 0 (not positive definite), so an
    indefinite noisy matrix is never reported as well conditioned.

    Parameters
    ----------
    M : ndarray of shape (d, d) or (k, d, d)

    Returns
    -------
    float or ndarray of shape (k,)

    Examples
    --------
    >>> condition_number(np.diag([4.0, 2.0]))
    2.0
    >>> condition_number(np.diag([4.0, -2.0]))
    inf
    """
    w = np.linalg.eigvalsh(np.asarray(M, dtype=float))
    return _kappa_from_eigs(w)

def _kappa_from_eigs(w):
    """``max|w| / min w`` of ascending eigenvalues ``w`` (..., d), inf where ``min w <= 0``."""
    w = np.asarray(w, dtype=float)
    if w.ndim == 1:  # one ascending spectrum: max|w| is at an end; the same float as below, without ufunc overhead
        lo = float(w[0])
        return max(abs(lo), abs(float(w[-1]))) / lo if lo > 0 else math.inf
    lo, hi = w[..., 0], np.max(np.abs(w), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(lo > 0, hi / np.where(lo > 0, lo, 1.0), np.inf)
    return float(k) if np.ndim(k) == 0 else k
