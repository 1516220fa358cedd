"""Tyler's M-estimator of the public moment (exported by :mod:`engine.pmt`).

Used by :func:`engine.pmt.public_moment` with ``estimator="tyler"`` for heavy-tailed public rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TYLER_MAX_ITER", "TYLER_TOL", "tyler_moment"]

#: Tyler's fixed point: stop when the relative change of the shape (Frobenius) is below this.
TYLER_TOL = 1e-9
#: Tyler's fixed point: at most this many iterations.
TYLER_MAX_ITER = 500


def tyler_moment(A, *, tol: float = TYLER_TOL, max_iter: int = TYLER_MAX_ITER) -> np.ndarray:
    """Tyler's M-estimator of shape for uncentered rows, scaled by the median Mahalanobis norm.

    Shape: the fixed point ``V = (d/m) sum_i a_i a_i^T / (a_i^T V^{-1} a_i)``, ``trace(V) = d``
    (D. E. Tyler, "A distribution-free M-estimator of multivariate scatter", Ann. Statist. 15(1),
    234-251, 1987; it exists and is unique when ``m > d`` and no proper subspace of dimension q holds
    ``m q / d`` or more rows, Kent & Tyler, Ann. Statist. 16(4), 1988). Each row's weight is the inverse
    of its own squared norm, so a few huge public rows cannot dominate it, unlike the sample moment
    whose entries have infinite variance when the features do (Student-t, df <= 4).
    Scale: Tyler's estimate fixes the shape only; it is multiplied by
    ``c = median_i(a_i^T V^{-1} a_i) / chi2_d.median`` so that the median squared whitened norm is
    the Gaussian one, ``chi2_d`` median, as for a Gaussian sample whose second moment is the
    identity (the usual consistency factor of robust scatter estimates: Maronna, Martin, Yohai &
    Salibian-Barrera, "Robust Statistics", 2nd ed., Wiley 2019, section 6.3). Then, as with the
    sample moment, most rows have ``||x~||^2`` near ``d`` and the PMT radius truncates only the tail.
    The iteration runs on RMS-equilibrated columns and is affine-equivariant, so the result does not
    depend on column scales. Public rows only: no privacy cost.

    Parameters
    ----------
    A : ndarray of shape (m, d)
        Public rows (intercept column included), ``m > d``.
    tol : float, default 1e-9
    max_iter : int, default 500

    Returns
    -------
    ndarray of shape (d, d)
        Symmetric positive definite.

    Raises
    ------
    ValueError
        If ``m <= d`` or a public row is zero (Tyler's weights are undefined), or the iteration does
        not converge (rows concentrated on a subspace).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> V = tyler_moment(rng.normal(size=(4000, 3)) * [1.0, 2.0, 4.0])
    >>> np.sqrt(np.diag(V)).round(1).tolist()
    [1.0, 2.0, 4.0]
    """
    from scipy import stats

    A = np.asarray(A, dtype=float)
    m, d = A.shape
    if m <= d:
        raise ValueError(f"the Tyler public moment needs more public rows than columns (n_pub={m}, d={d})")
    scale = np.sqrt(np.mean(A * A, axis=0))
    scale = np.where(scale > 0, scale, 1.0)
    B = A / scale
    if np.any(np.einsum("ij,ij->i", B, B) <= 0):
        raise ValueError("a public row is all zero; Tyler's M-estimator of the public moment is undefined for it")
    V = np.eye(d)
    for _ in range(max_iter):
        Li = np.linalg.cholesky(V)
        Z = np.linalg.solve(Li, B.T)  # columns L^{-1} b_i
        q = np.einsum("ij,ij->j", Z, Z)
        Vn = (B.T / q) @ B * (d / m)
        Vn = d * (Vn + Vn.T) / (2.0 * np.trace(Vn))
        if np.linalg.norm(Vn - V) <= tol * np.linalg.norm(V):
            V = Vn
            break
        V = Vn
    else:
        raise ValueError("Tyler's M-estimator of the public moment did not converge (public rows concentrated on a "
                         "subspace?); use public_moment='sample'")
    Li = np.linalg.cholesky(V)
    Z = np.linalg.solve(Li, B.T)
    q = np.einsum("ij,ij->j", Z, Z)
    V = V * float(np.median(q)) / float(stats.chi2.median(d))
    return (V + V.T) / 2.0 * np.outer(scale, scale)
