"""PMT: public-moment-guided truncation of unbounded private features.

The transform of Cao & Zhang (arXiv:2508.18037, Algorithm 1), used by DP-PMTRR and DP-PMTLR in
Cao, Bi & Zhang, "Differentially Private Truncation of Unbounded Data via Public Second Moments"
(arXiv:2602.22282, 2026). Working specification: ``docs/PMT.md`` section 2.

1. ``Sigma_pub = (1/m) X_pub^T X_pub``: the **uncentered** public second moment (not a covariance),
   or optionally Tyler's robust moment for heavy-tailed public rows (:func:`tyler_moment`). The
   columns are equilibrated by their public RMS ``D`` before anything else: ``C = D^{-1} Sigma_pub D^{-1}``.
   When ``C`` is singular to working precision, or ``m < d``, ``tau I`` is added to ``C`` with
   ``tau = 1e-6 * trace(C) / d`` (``on_singular="regularize"``, the default; reported in
   :attr:`PublicMoment.regularized`), or a ``ValueError`` is raised (``on_singular="raise"``).
2. ``x~_i = W^T x_i`` with ``W = D^{-1} C^{-1/2}`` (symmetric inverse square root of the equilibrated
   moment by eigendecomposition), so ``W W^T = Sigma_pub^{-1}``. Rescaling any column (public and
   private together) leaves ``x~`` unchanged: PMT is scale-free (see :class:`PublicMoment`).
3. ``R = sqrt(d (1 + ln(2 n / eta)))``, ``n`` the private sample size and ``d`` the number of columns
   actually transformed (the intercept column included).
4. Rows with ``||x~_i|| > R`` are scaled onto the sphere of radius R. The fraction truncated is
   computed for display only; nothing in the mechanism depends on it.

Intercept (PMT.md section 2, "our reading"): with ``fit_intercept=True`` a constant-1 column is
appended **last** to both public and private features before step 1.

Everything the transform and the radius depend on is public: d, n, eta and the public rows.

Examples
--------
>>> round(pmt_radius(10, 10_000, 0.05), 2)
11.79
>>> rng = np.random.default_rng(0)
>>> X_pub, X = rng.normal(size=(200, 3)), rng.normal(size=(1000, 3))
>>> t = pmt_transform(X, X_pub, eta=0.05)
>>> t.d, t.X_tilde.shape, bool(np.all(t.norms_after <= t.radius * (1 + 1e-12)))
(4, (1000, 4), True)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from engine.pmt._blas import _blas_limit, blas_limit, blas_threads  # noqa: F401  (re-exported)
from engine.pmt._lapack import _eigh, _eigvalsh
from engine.pmt._tyler import TYLER_MAX_ITER, TYLER_TOL, tyler_moment  # noqa: F401  (re-exported)
from engine.pmt._whiten import (  # noqa: F401
    FEW_COLUMNS,
    _add_row,
    _chunked,
    _whiten_blocks,
    _whiten_few,
    truncate_rows_inplace,
)

__all__ = [
    "ON_SINGULAR",
    "REGULARIZATION_FACTOR",
    "add_intercept",
    "second_moment",
    "pmt_radius",
    "response_bound",
    "truncate_rows",
    "truncate_rows_inplace",
    "condition_number",
    "MOMENT_ESTIMATORS",
    "PublicMoment",
    "public_moment",
    "tyler_moment",
    "PMTTransform",
    "pmt_transform",
]

#: What to do when the public second moment is singular or ``n_pub < d``.
ON_SINGULAR = ("regularize", "raise")

#: ``tau = REGULARIZATION_FACTOR * trace(C) / d`` is added to the diagonal of the equilibrated moment when needed.
REGULARIZATION_FACTOR = 1e-6

#: Relative eigenvalue threshold below which the **equilibrated** moment (unit diagonal) counts as
#: singular: about 1e4 float64 rounding units, below which an eigenvalue of a unit-diagonal matrix of
#: modest size carries no correct digit.
SINGULAR_RCOND = 1e-12


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


def second_moment(X_pub) -> np.ndarray:
    """The uncentered second moment ``(1/m) X_pub^T X_pub`` (PMT.md section 2, step 1).

    Parameters
    ----------
    X_pub : array-like of shape (m, d)
        Public rows (already augmented with the intercept column if one is used).

    Returns
    -------
    ndarray of shape (d, d), symmetric positive semi-definite.

    Examples
    --------
    >>> second_moment([[1.0, 0.0], [1.0, 2.0]])
    array([[1., 1.],
           [1., 2.]])
    """
    return _second_moment_rows(_as_2d_finite(X_pub, "X_pub"))


def _second_moment_rows(A: np.ndarray) -> np.ndarray:
    """:func:`second_moment` of rows already validated (float64, 2-D, finite)."""
    S = A.T @ A / A.shape[0]
    return (S + S.T) / 2.0


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


@dataclass(frozen=True)
class PublicMoment:
    """The public second moment and the whitening built from it (all public; cost no privacy).

    Scale-free whitening (``docs/PMT.md`` section 2, step 1): the columns are first equilibrated by
    their public RMS, ``D = diag(sqrt(diag(Sigma_pub)))``, and the eigendecomposition is taken of the
    equilibrated moment ``C = D^{-1} Sigma_pub D^{-1}`` (unit diagonal). The whitening matrix is

        ``W = D^{-1} C^{-1/2}``  (``x~ = W^T x``; as rows ``X~ = X W``),

    which satisfies ``W W^T = Sigma_pub^{-1}`` and ``W^T Sigma_pub W = I``. Rescaling a column of the
    public and private rows by ``c`` rescales ``D`` by ``c`` and leaves ``C`` and every ``x~`` unchanged
    (up to rounding), so everything PMT releases is invariant to column scales. ``W`` is the symmetric
    inverse square root of ``Sigma_pub`` when all column RMS are equal (e.g. features standardised
    to unit RMS next to the intercept); in general it is not symmetric, so use ``W^T M W`` (never
    ``W M W``) to whiten a quadratic form and ``W theta~`` to map coefficients back.

    ``Sigma_pub``, ``Sigma_pub_sqrt``, ``Sigma_pub_inv``, ``eigenvalues`` and ``eigenvalues_unregularized``
    are properties computed on first access (the same floats as an eager computation).

    Attributes
    ----------
    Sigma_pub : ndarray of shape (d, d)
        ``D (C + tau I) D``: the (possibly regularised) moment actually used.
    Sigma_pub_inv_sqrt : ndarray of shape (d, d)
        The whitening matrix ``W = D^{-1} (C + tau I)^{-1/2}`` (also :attr:`whitener`).
    Sigma_pub_sqrt : ndarray of shape (d, d)
        ``W^{-1} = (C + tau I)^{1/2} D``; ``Sigma_pub = W^{-T} W^{-1}``.
    Sigma_pub_inv : ndarray of shape (d, d)
        ``Sigma_pub^{-1} = W W^T`` (symmetric).
    eigenvalues : ndarray of shape (d,)
        Eigenvalues of ``Sigma_pub`` (ascending, after regularisation); for display and for step
        sizes (the largest is accurate; the smallest may carry rounding when the column scales differ
        by many orders of magnitude; the whitening never uses them).
    eigenvalues_unregularized : ndarray of shape (d,)
        Eigenvalues of the sample (or robust) moment before ``tau`` was added.
    eigenvalues_equilibrated : ndarray of shape (d,)
        Eigenvalues of the equilibrated ``C`` (before ``tau``): what the singularity test looks at.
    col_scale : ndarray of shape (d,)
        The public RMS of each column (``D``'s diagonal; 1 for an all-zero public column).
    tau : float
        The ridge added to ``C``'s diagonal, in equilibrated units (0 when none); in the original
        units ``tau D^2`` is added.
    regularized : bool
        Whether ``tau`` was added (singular to working precision after equilibration, or ``n_pub < d``).
    n_pub : int
    d : int
        Number of columns (intercept included).
    fit_intercept : bool
    estimator : str
        ``"sample"`` (the paper's uncentered second moment) or ``"tyler"`` (see :func:`public_moment`).
    """

    Sigma_pub_inv_sqrt: np.ndarray
    tau: float
    regularized: bool
    n_pub: int
    d: int
    fit_intercept: bool
    eigenvalues_equilibrated: np.ndarray | None = None
    col_scale: np.ndarray | None = None
    estimator: str = "sample"
    #: ``(w, V, C, S)``: the floored eigenpairs of ``C + tau I``, that matrix and the unequilibrated moment,
    #: from which the other matrices are computed on first access (issue 16: a fit uses W only).
    factors: tuple | None = field(default=None, repr=False, compare=False)

    def _lazy(self, M: np.ndarray) -> np.ndarray:
        if not self.Sigma_pub_inv_sqrt.flags.writeable:  # a shared (memoised) moment: read-only throughout
            M.setflags(write=False)
        return M

    @functools.cached_property
    def Sigma_pub(self) -> np.ndarray:  # noqa: N802
        """``D (C + tau I) D`` (computed on first access)."""
        C, scale = self.factors[2], self.col_scale
        Sig = C * np.outer(scale, scale)
        return self._lazy((Sig + Sig.T) / 2.0)

    @functools.cached_property
    def Sigma_pub_sqrt(self) -> np.ndarray:  # noqa: N802
        """``W^{-1} = (C + tau I)^{1/2} D`` (computed on first access)."""
        w, V = self.factors[:2]
        return self._lazy((V * np.sqrt(w)) @ V.T * self.col_scale[None, :])

    @functools.cached_property
    def Sigma_pub_inv(self) -> np.ndarray:  # noqa: N802
        """``Sigma_pub^{-1} = W W^T`` (symmetric; computed on first access)."""
        w, V = self.factors[:2]
        inv = (V / w) @ V.T / np.outer(self.col_scale, self.col_scale)
        return self._lazy((inv + inv.T) / 2.0)

    @functools.cached_property
    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of ``Sigma_pub`` (ascending; computed on first access)."""
        return self._lazy(np.linalg.eigvalsh(self.Sigma_pub))

    @functools.cached_property
    def eigenvalues_unregularized(self) -> np.ndarray:
        """Eigenvalues of the moment before ``tau`` (computed on first access)."""
        return self._lazy(np.linalg.eigvalsh(self.factors[3])) if self.tau else self.eigenvalues

    @property
    def whitener(self) -> np.ndarray:
        """``W`` with ``x~ = W^T x`` (rows: ``X @ W``); same as :attr:`Sigma_pub_inv_sqrt`."""
        return self.Sigma_pub_inv_sqrt

    @property
    def kappa(self) -> float:
        """Condition number of ``Sigma_pub`` (after regularisation)."""
        return _kappa_from_eigs(self.eigenvalues)

    def prepare(self, X) -> np.ndarray:
        """Augment ``X`` with the intercept column if this moment has one."""
        A = np.asarray(X, dtype=float)
        return add_intercept(A) if self.fit_intercept else A

    def whiten_quadratic(self, M) -> np.ndarray:
        """``W^T M W``: a quadratic form in ``theta`` expressed in ``theta~ = W^{-1} theta``."""
        W = self.Sigma_pub_inv_sqrt
        Q = W.T @ np.asarray(M, dtype=float) @ W
        return (Q + Q.T) / 2.0

    def unwhiten_gram(self, S) -> np.ndarray:
        """``W^{-T} S W^{-1}``: a Gram matrix of whitened rows mapped back to the original columns."""
        Sh = self.Sigma_pub_sqrt
        Q = Sh.T @ np.asarray(S, dtype=float) @ Sh
        return (Q + Q.T) / 2.0


#: Public-moment estimators: the paper's uncentered sample second moment, or Tyler's shape with a
#: median scale (heavy-tailed public rows).
MOMENT_ESTIMATORS = ("sample", "tyler")

def public_moment(X_pub, *, fit_intercept: bool = True, on_singular: str = "regularize",
                  estimator: str = "sample") -> PublicMoment:
    """Compute ``Sigma_pub`` and the scale-free whitening from public rows (PMT.md section 2, steps 1-2).

    Steps: ``S = (1/m) A^T A`` (``A`` the public rows, intercept column appended last), or Tyler's
    robust moment (``estimator="tyler"``); ``D = diag(S)^{1/2}`` (public RMS per column);
    ``C = D^{-1} S D^{-1}``; if ``C`` is singular to working precision (smallest eigenvalue
    <= ``SINGULAR_RCOND`` times the largest; ``C`` has unit diagonal, so this is an absolute test
    about 1e4 float64 rounding units above zero) or ``m < d``, add ``tau I`` to ``C`` with
    ``tau = REGULARIZATION_FACTOR * trace(C) / d = 1e-6`` (equilibrated units, so the ridge scales
    with each column); then ``W = D^{-1} C^{-1/2}``. Testing singularity after equilibration means
    raw features next to the intercept (CCPP: raw kappa 5e10) are whitened exactly instead of being
    regularised, and no column scale in ``[1e-8, 1e8]`` changes the result.

    Parameters
    ----------
    X_pub : array-like of shape (m, p)
        Public feature rows (without intercept column), ``m >= 1``.
    fit_intercept : bool, default True
        Append a constant-1 column before computing the moment (so ``d = p + 1``).
    on_singular : {"regularize", "raise"}, default "regularize"
        What to do with a singular equilibrated moment or ``m < d``: add ``tau I`` (and set
        ``regularized=True``) or raise ``ValueError``.
    estimator : {"sample", "tyler"}, default "sample"
        ``"sample"``: the paper's uncentered second moment. ``"tyler"``: Tyler's M-estimator of shape
        with a median scale (:func:`tyler_moment`), for heavy-tailed public rows; needs ``m > d``.

    Returns
    -------
    PublicMoment

    Raises
    ------
    ValueError
        Bad shapes, NaN/inf, ``m < 1``, an all-zero moment, a singular moment with
        ``on_singular="raise"``, an unknown estimator, or ``estimator="tyler"`` with ``m <= d``.

    Examples
    --------
    >>> pm = public_moment(np.eye(3) * 2, fit_intercept=False)
    >>> pm.regularized, pm.Sigma_pub_inv_sqrt.round(6).tolist()[0]
    (False, [0.866025, 0.0, 0.0])
    >>> public_moment(np.ones((1, 2))).regularized
    True
    """
    if on_singular not in ON_SINGULAR:
        raise ValueError(f"on_singular must be one of {ON_SINGULAR}, got {on_singular!r}")
    if estimator not in MOMENT_ESTIMATORS:
        raise ValueError(f"public moment estimator must be one of {MOMENT_ESTIMATORS}, got {estimator!r}")
    return _public_moment_rows(_as_2d_finite(X_pub, "X_pub"), fit_intercept, on_singular, estimator)


def _public_moment_rows(A: np.ndarray, fit_intercept: bool, on_singular: str, estimator: str) -> PublicMoment:
    """:func:`public_moment` of public rows already validated (float64, 2-D, at least one row, finite) with
    options already checked: the estimators' ``fit`` validates once, then calls this (issue 16)."""
    if fit_intercept:
        A = add_intercept(A)
    m, d = A.shape
    if not A.any():
        raise ValueError("the public second moment is zero (all public rows are zero); PMT cannot whiten")
    S = _second_moment_rows(A) if estimator == "sample" else tyler_moment(A)
    scale = np.sqrt(np.diag(S))
    scale = np.where(scale > 0, scale, 1.0)
    C = S / np.outer(scale, scale)
    C = (C + C.T) / 2.0
    w_eq = _eigvalsh(C)
    singular = m < d or w_eq[0] <= SINGULAR_RCOND * w_eq[-1]
    tau = 0.0
    if singular:
        if on_singular == "raise":
            raise ValueError(
                f"the public second moment is singular (n_pub={m}, d={d}, smallest eigenvalue after equilibrating "
                f"the columns {w_eq[0]:.3g}); use more public rows or on_singular='regularize'"
            )
        tau = REGULARIZATION_FACTOR * float(np.trace(C)) / d
        C = C + tau * np.eye(d)
    w, V = _eigh(C)
    w = np.maximum(w, np.finfo(float).tiny)
    W = (V / np.sqrt(w)) @ V.T / scale[:, None]  # D^{-1} C^{-1/2}
    # Sigma_pub, its square root, inverse and eigenvalues are properties computed from (w, V, C, S) when read
    return PublicMoment(W, float(tau), bool(singular), int(m), int(d), bool(fit_intercept), w_eq, scale, estimator,
                        (w, V, C, S))


@dataclass(frozen=True)
class PMTTransform:
    """Result of the PMT transform of private rows: what the mechanism uses plus display diagnostics.

    Attributes
    ----------
    moment : PublicMoment
    X_tilde : ndarray of shape (n, d)
        Whitened and truncated private rows (``||x~_i|| <= radius``).
    radius : float
        R = sqrt(d (1 + ln(2n/eta))).
    eta : float
    n, d : int
        Private sample size; number of transformed columns (intercept included).
    norms_before : ndarray of shape (n,)
        Row norms after whitening, before truncation (display only).
    norms_after : ndarray of shape (n,)
        (Property, computed on first access.) Row norms after truncation (display only).
    truncated : ndarray of bool, shape (n,)
    frac_truncated : float
        Fraction of rows scaled onto the sphere (display only; never fed back into a mechanism).
    gram : ndarray of shape (d, d)
        ``X~^T X~`` of the whitened and truncated rows (the statistic ``A`` that PMTRidge releases,
        before noise): computed once here and reused.
    gram_untruncated : ndarray of shape (d, d)
        (Property, computed on first access.) ``U^T U`` of the whitened rows before truncation (private,
        display only: what ``gram_raw`` is mapped back from): ``X~^T X~`` plus
        ``((||u_i|| / R)^2 - 1) x~_i x~_i^T`` for each truncated row.
    gram_raw : ndarray of shape (d, d)
        (Property, computed on first access.) ``X^T X`` of the raw rows (intercept column included), mapped back from the whitened rows
        without a second pass over the data: ``W^{-T} (X~^T X~ + sum over truncated rows of
        ((||u_i|| / R)^2 - 1) x~_i x~_i^T) W^{-1}``, ``u_i`` the untruncated whitened row. Private:
        display only (agrees with the direct product to float rounding relative to its largest
        eigenvalue).
    norms_raw : ndarray of shape (n,) or None
        (Property, computed on first access from ``rows``.) Row norms of the raw rows (intercept column
        included), for the "before" panel of a truncation figure; None without ``rows``. Private:
        display only.
    eigenvalues_raw : ndarray of shape (d,)
        (Property, computed on first access.) Eigenvalues of the raw ``X^T X / n``. Private: display only.
    eigenvalues_pmt : ndarray of shape (d,)
        (Property, computed on first access.) Eigenvalues of ``X~^T X~ / n`` after truncation. Private:
        display only.
    xty : ndarray of shape (d,) or None
        ``X~^T y`` of the bounded responses given to the transform (PMTRidge's statistic ``b`` before
        noise), or None when none were given.
    rows : ndarray of shape (n, d - fit_intercept) or None
        The private rows given to the transform (the caller's array, not a copy; read by ``norms_raw``).

    The display-only quantities are properties computed when first read (issue 16: a fit pays for what
    it releases, a page for what it shows); each is the number the eager computation gave.
    """

    moment: PublicMoment
    X_tilde: np.ndarray
    radius: float
    eta: float
    n: int
    d: int
    norms_before: np.ndarray
    truncated: np.ndarray
    frac_truncated: float
    gram: np.ndarray
    xty: np.ndarray | None = None
    rows: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __getstate__(self):
        """Pickling (e.g. a dashboard cache) stores the display values, resolved, and not the input ``rows``."""
        for name in ("norms_after", "gram_untruncated", "norms_raw"):
            getattr(self, name)
        state = {k: v for k, v in self.__dict__.items() if k != "_truncated_rows"}
        state["rows"] = None
        return state

    @functools.cached_property
    def _truncated_rows(self):
        """``(idx, X~[idx])``: indices and (truncated) whitened rows of the rows scaled onto the sphere."""
        idx = np.flatnonzero(self.truncated)
        return idx, self.X_tilde[idx]

    @functools.cached_property
    def norms_after(self) -> np.ndarray:
        """Row norms after truncation (display only; computed on first access)."""
        idx, Zt = self._truncated_rows
        out = self.norms_before.copy()
        if idx.size:
            out[idx] = np.sqrt(np.einsum("ij,ij->i", Zt, Zt))
        return out

    @functools.cached_property
    def gram_untruncated(self) -> np.ndarray:
        """``U^T U`` of the whitened rows before truncation (private, display only; computed on first access)."""
        idx, Zt = self._truncated_rows
        if not idx.size:
            return self.gram
        # add back (||u||^2 / R^2 - 1) z z^T for the truncated rows, >= 0 weights
        wgt = (self.norms_before[idx] / self.radius) ** 2 - 1.0
        with blas_limit(1):
            return self.gram + (Zt * wgt[:, None]).T @ Zt

    @functools.cached_property
    def norms_raw(self) -> np.ndarray | None:
        """Row norms of the raw rows, intercept column included (display only; computed on first access)."""
        if self.rows is None:
            return None
        raw_sq = np.einsum("ij,ij->i", self.rows, self.rows)
        if self.moment.fit_intercept:
            raw_sq += 1.0
        return np.sqrt(raw_sq)

    @functools.cached_property
    def gram_raw(self) -> np.ndarray:
        """``X^T X`` of the raw rows (intercept included), ``W^{-T} U^T U W^{-1}`` (computed on first access)."""
        Wi = self.moment.Sigma_pub_sqrt
        Gu = self.gram_untruncated
        G_raw = Wi.T @ ((Gu + Gu.T) / 2.0) @ Wi
        return (G_raw + G_raw.T) / 2.0

    @functools.cached_property
    def eigenvalues_raw(self) -> np.ndarray:
        """Eigenvalues of the raw ``X^T X / n`` (ascending; computed on first access)."""
        return np.linalg.eigvalsh(self.gram_raw / self.n)

    @functools.cached_property
    def eigenvalues_pmt(self) -> np.ndarray:
        """Eigenvalues of ``X~^T X~ / n`` (ascending; computed on first access)."""
        return np.linalg.eigvalsh(self.gram / self.n)

    @property
    def Sigma_pub(self) -> np.ndarray:
        return self.moment.Sigma_pub

    @property
    def Sigma_pub_inv_sqrt(self) -> np.ndarray:
        return self.moment.Sigma_pub_inv_sqrt

    @property
    def eigenvalues_public(self) -> np.ndarray:
        return self.moment.eigenvalues

    @property
    def kappa_raw(self) -> float:
        """kappa(X^T X) of the raw private rows (intercept included)."""
        return _kappa_from_eigs(self.eigenvalues_raw)

    @property
    def kappa_pub(self) -> float:
        """kappa(Sigma_pub)."""
        return self.moment.kappa

    @property
    def kappa_pmt(self) -> float:
        """kappa(X~^T X~) after whitening and truncation."""
        return _kappa_from_eigs(self.eigenvalues_pmt)


def pmt_transform(
    X,
    X_pub=None,
    *,
    moment: PublicMoment | None = None,
    eta: float = 0.05,
    fit_intercept: bool = True,
    on_singular: str = "regularize",
    estimator: str = "sample",
) -> PMTTransform:
    """Whiten private rows with the public second moment and truncate them at R (PMT.md section 2).

    Parameters
    ----------
    X : array-like of shape (n, p)
        Private feature rows (without intercept column).
    X_pub : array-like of shape (m, p), optional
        Public feature rows. Give either ``X_pub`` or ``moment``.
    moment : PublicMoment, optional
        A precomputed public moment (its ``fit_intercept`` is then used).
    eta : float, default 0.05
        ``0 < eta < 1``; enters R.
    fit_intercept : bool, default True
        Append a constant-1 column to public and private rows (ignored when ``moment`` is given).
    on_singular : {"regularize", "raise"}, default "regularize"
        See :func:`public_moment`.
    estimator : {"sample", "tyler"}, default "sample"
        Public moment estimator (ignored when ``moment`` is given); see :func:`public_moment`.

    Returns
    -------
    PMTTransform

    Raises
    ------
    ValueError
        On NaN/inf, mismatched numbers of columns, or neither/both of X_pub and moment.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(5000, 4)) * [1, 10, 100, 1000]
    >>> t = pmt_transform(X, X[:200], fit_intercept=False)
    >>> t.kappa_raw > 1e5, t.kappa_pmt < 2
    (True, True)
    """
    if (X_pub is None) == (moment is None):
        raise ValueError("give exactly one of X_pub (public rows) or moment (a PublicMoment)")
    Xp = _as_2d_finite(X, "X")
    if moment is None:
        Xpub = _as_2d_finite(X_pub, "X_pub")
        if Xpub.shape[1] != Xp.shape[1]:
            raise ValueError(f"X_pub has {Xpub.shape[1]} columns but X has {Xp.shape[1]}; they must match")
        moment = public_moment(Xpub, fit_intercept=fit_intercept, on_singular=on_singular, estimator=estimator)
    return _transform_rows(Xp, moment, eta)


def _transform_rows(Xp: np.ndarray, moment: PublicMoment, eta: float, y: np.ndarray | None = None) -> PMTTransform:
    """:func:`pmt_transform` of private rows already validated (float64, 2-D, finite): the estimators' ``fit``
    validates its data once, then calls this (issue 16). Checks the columns against the moment and eta.

    ``y`` (optional, shape (n,)): responses already bounded (PMTRidge's ``clip(y, +-B_y)``); their product
    ``X~^T y`` with the truncated rows is then formed in the same pass and returned as :attr:`PMTTransform.xty`.
    """
    n, d = Xp.shape[0], Xp.shape[1] + int(moment.fit_intercept)
    if d != moment.d:
        raise ValueError(f"X has {d} columns after the intercept but the public moment has {moment.d}")
    R = pmt_radius(d, n, eta)
    W = moment.Sigma_pub_inv_sqrt
    # one BLAS thread for everything below (the blocked shapes use their own threads, one BLAS thread each):
    # memory-bound or small products, and numbers that do not depend on the machine's load
    with blas_limit(1):
        if d < FEW_COLUMNS:
            # (the truncation passed by its name here, which the audit's skip-clipping copy replaces)
            Z, norms_before, truncated, G, xty = _whiten_few(Xp, W, moment.fit_intercept, R, y, truncate_rows_inplace)
        else:
            # One pass of BLAS over the rows for X~ = X W (the intercept column's row of W added, so the
            # augmented copy of X is never built) and one symmetric product for X~^T X~; every other
            # quantity comes from d x d matrices or the truncated rows only (issue 16).
            if _chunked(n, d):  # compute-bound: fixed row blocks, spread over idle cores (same numbers on any count)
                Z, norms_before, truncated, G = _whiten_blocks(Xp, W, moment.fit_intercept, R)
            else:
                if moment.fit_intercept:
                    Z = Xp @ W[:-1]
                    _add_row(Z, W[-1])
                else:
                    Z = Xp @ W
                norms_before, truncated = truncate_rows_inplace(Z, R)
                G = Z.T @ Z
            xty = None if y is None else Z.T @ y
    # the display-only norms after truncation, untruncated Gram and raw row norms are computed when read
    return PMTTransform(moment, Z, R, float(eta), int(n), int(d), norms_before, truncated,
                        np.count_nonzero(truncated) / n, G, xty, Xp)  # count / n: the mean of ``truncated``

