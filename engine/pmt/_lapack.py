"""numpy's LAPACK gufuncs behind ``np.linalg.eigh`` / ``eigvalsh`` / ``solve``, called without the wrappers.

For the d x d systems of a small fit (d = 5 on CCPP) the public wrappers' type checks, conversions and
``errstate`` set-up take half or more of the call. These run the very same gufunc on float64
input, under the same ``errstate`` handlers, so the floats and the ``LinAlgError`` are numpy's; anything
else (another dtype, or a numpy without the private module) goes through the public function.
"""

from __future__ import annotations

import numpy as np

__all__ = ["_eigh", "_eigvalsh", "_solve_columns"]


def _linalg_error(message):
    def handler(err, flag):
        raise np.linalg.LinAlgError(message)
    return handler


_EIG_NONCONVERGENCE = _linalg_error("Eigenvalues did not converge")
_SINGULAR = _linalg_error("Singular matrix")
try:  # numpy's LAPACK gufuncs behind np.linalg.eigh / solve (numpy >= 1.8 and 2.x)
    from numpy.linalg import _umath_linalg
except ImportError:  # pragma: no cover - then the public functions (the same LAPACK calls)
    _umath_linalg = None


def _eigvalsh(A):
    """``np.linalg.eigvalsh(A)`` of float64 ``A`` (see :func:`_eigh`)."""
    if _umath_linalg is None or A.dtype != np.float64:  # pragma: no cover
        return np.linalg.eigvalsh(A)
    with np.errstate(call=_EIG_NONCONVERGENCE, invalid="call", over="ignore", divide="ignore", under="ignore"):
        return _umath_linalg.eigvalsh_lo(A, signature="d->d")


def _eigh(A):
    """``np.linalg.eigh(A)`` of float64 ``A``: the same LAPACK call and floats without the wrapper's type
    checks and conversions (a third of its time on a 5 x 5 matrix). ``LinAlgError`` as numpy's."""
    if _umath_linalg is None or A.dtype != np.float64:  # pragma: no cover
        return np.linalg.eigh(A)
    with np.errstate(call=_EIG_NONCONVERGENCE, invalid="call", over="ignore", divide="ignore", under="ignore"):
        return _umath_linalg.eigh_lo(A, signature="d->dd")


def _solve_columns(M, B):
    """``np.linalg.solve(M, B)`` of float64 ``M`` (..., d, d) and ``B`` (..., d, k): the same LAPACK call and
    floats, without the wrapper (see :func:`_eigh`)."""
    if _umath_linalg is None or M.dtype != np.float64 or B.dtype != np.float64:  # pragma: no cover
        return np.linalg.solve(M, B)
    with np.errstate(call=_SINGULAR, invalid="call", over="ignore", divide="ignore", under="ignore"):
        return _umath_linalg.solve(M, B, signature="dd->d")
