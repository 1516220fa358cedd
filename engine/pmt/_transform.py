"""PMT: public-moment-guided truncation of unbounded private features.

The transform of Cao & Zhang (arXiv:2508.18037, Algorithm 1), used by DP-PMTRR and DP-PMTLR in
Cao, Bi & Zhang, "Differentially Private Truncation of Unbounded Data via Public Second Moments"
(arXiv:2602.22282, 2026). Working specification: ``docs/PMT.md`` section 2.

1. ``Sigma_pub = (1/m) X_pub^T X_pub``: the **uncentered** public second moment (not a covariance).
   When it is singular, or ``m < d``, ``tau I`` is added with ``tau = 1e-6 * trace(Sigma_pub) / d``
   (``on_singular="regularize"``, the default; reported in :attr:`PublicMoment.regularized`), or a
   ``ValueError`` is raised (``on_singular="raise"``).
2. ``x~_i = Sigma_pub^{-1/2} x_i`` with the symmetric inverse square root from an
   eigendecomposition.
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

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ON_SINGULAR",
    "REGULARIZATION_FACTOR",
    "add_intercept",
    "second_moment",
    "pmt_radius",
    "response_bound",
    "truncate_rows",
    "condition_number",
    "PublicMoment",
    "public_moment",
    "PMTTransform",
    "pmt_transform",
]

#: What to do when the public second moment is singular or ``n_pub < d``.
ON_SINGULAR = ("regularize", "raise")

#: ``tau = REGULARIZATION_FACTOR * trace(Sigma_pub) / d`` is added to the diagonal when needed.
REGULARIZATION_FACTOR = 1e-6

#: Relative eigenvalue threshold below which ``Sigma_pub`` counts as singular.
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
    if not np.all(np.isfinite(A)):
        bad = int(np.size(A) - np.count_nonzero(np.isfinite(A)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s); all entries must be finite")
    return A


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
    A = _as_2d_finite(X_pub, "X_pub")
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
    _, n_, eta_ = _check_dn_eta(1, n, eta)
    m2 = float(np.mean(y * y))
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
    w = np.asarray(w, dtype=float)
    lo, hi = w[..., 0], np.max(np.abs(w), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(lo > 0, hi / np.where(lo > 0, lo, 1.0), np.inf)
    return float(k) if np.ndim(k) == 0 else k


@dataclass(frozen=True)
class PublicMoment:
    """The public second moment and its matrix powers (all public; cost no privacy).

    Attributes
    ----------
    Sigma_pub : ndarray of shape (d, d)
        ``(1/m) X_pub^T X_pub (+ tau I)``, the matrix actually used.
    Sigma_pub_inv_sqrt, Sigma_pub_sqrt, Sigma_pub_inv : ndarray of shape (d, d)
        Symmetric ``Sigma_pub^{-1/2}``, ``Sigma_pub^{1/2}``, ``Sigma_pub^{-1}``.
    eigenvalues : ndarray of shape (d,)
        Eigenvalues of ``Sigma_pub`` (ascending, after regularisation).
    eigenvalues_unregularized : ndarray of shape (d,)
        Eigenvalues before ``tau I`` was added.
    tau : float
        The ridge added to the diagonal (0 when none).
    regularized : bool
        Whether ``tau I`` was added (singular matrix or ``n_pub < d``).
    n_pub : int
    d : int
        Number of columns (intercept included).
    fit_intercept : bool
    """

    Sigma_pub: np.ndarray
    Sigma_pub_inv_sqrt: np.ndarray
    Sigma_pub_sqrt: np.ndarray
    Sigma_pub_inv: np.ndarray
    eigenvalues: np.ndarray
    eigenvalues_unregularized: np.ndarray
    tau: float
    regularized: bool
    n_pub: int
    d: int
    fit_intercept: bool

    @property
    def kappa(self) -> float:
        """Condition number of ``Sigma_pub`` (after regularisation)."""
        return _kappa_from_eigs(self.eigenvalues)

    def prepare(self, X) -> np.ndarray:
        """Augment ``X`` with the intercept column if this moment has one."""
        A = np.asarray(X, dtype=float)
        return add_intercept(A) if self.fit_intercept else A


def public_moment(X_pub, *, fit_intercept: bool = True, on_singular: str = "regularize") -> PublicMoment:
    """Compute ``Sigma_pub`` and its symmetric powers from public rows (PMT.md section 2, steps 1-2).

    Parameters
    ----------
    X_pub : array-like of shape (m, p)
        Public feature rows (without intercept column), ``m >= 1``.
    fit_intercept : bool, default True
        Append a constant-1 column before computing the moment (so ``d = p + 1``).
    on_singular : {"regularize", "raise"}, default "regularize"
        When ``Sigma_pub`` is singular (smallest eigenvalue <= 1e-12 times the largest) or
        ``m < d``: add ``tau I`` with ``tau = 1e-6 trace(Sigma_pub) / d`` and set
        ``regularized=True``, or raise ``ValueError``.

    Returns
    -------
    PublicMoment

    Raises
    ------
    ValueError
        Bad shapes, NaN/inf, ``m < 1``, an all-zero moment, or a singular moment with
        ``on_singular="raise"``.

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
    A = _as_2d_finite(X_pub, "X_pub")
    if fit_intercept:
        A = add_intercept(A)
    m, d = A.shape
    S = second_moment(A)
    w0 = np.linalg.eigvalsh(S)
    trace = float(np.trace(S))
    if trace <= 0:
        raise ValueError("the public second moment is zero (all public rows are zero); PMT cannot whiten")
    singular = m < d or w0[0] <= SINGULAR_RCOND * w0[-1]
    tau = 0.0
    if singular:
        if on_singular == "raise":
            raise ValueError(
                f"the public second moment is singular (n_pub={m}, d={d}, smallest eigenvalue {w0[0]:.3g}); "
                "use more public rows or on_singular='regularize'"
            )
        tau = REGULARIZATION_FACTOR * trace / d
        S = S + tau * np.eye(d)
    w, V = np.linalg.eigh(S)
    w = np.maximum(w, np.finfo(float).tiny)
    inv_sqrt = (V / np.sqrt(w)) @ V.T
    sqrt = (V * np.sqrt(w)) @ V.T
    inv = (V / w) @ V.T
    sym = lambda M: (M + M.T) / 2.0  # noqa: E731
    return PublicMoment(S, sym(inv_sqrt), sym(sqrt), sym(inv), w, w0, float(tau), bool(singular), int(m), int(d), bool(fit_intercept))


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
    norms_before, norms_after : ndarray of shape (n,)
        Row norms after whitening, before and after truncation (display only).
    truncated : ndarray of bool, shape (n,)
    frac_truncated : float
        Fraction of rows scaled onto the sphere (display only; never fed back into a mechanism).
    eigenvalues_raw : ndarray of shape (d,)
        Eigenvalues of the raw ``X^T X / n`` (intercept column included). Private: display only.
    eigenvalues_pmt : ndarray of shape (d,)
        Eigenvalues of ``X~^T X~ / n`` after truncation. Private: display only.
    norms_raw : ndarray of shape (n,)
        Row norms of the raw rows (intercept column included), for the "before" panel of a truncation
        figure. Private: display only.
    """

    moment: PublicMoment
    X_tilde: np.ndarray
    radius: float
    eta: float
    n: int
    d: int
    norms_before: np.ndarray
    norms_after: np.ndarray
    truncated: np.ndarray
    frac_truncated: float
    eigenvalues_raw: np.ndarray
    eigenvalues_pmt: np.ndarray
    norms_raw: np.ndarray | None = None

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
        moment = public_moment(Xpub, fit_intercept=fit_intercept, on_singular=on_singular)
    Xa = moment.prepare(Xp)
    n, d = Xa.shape
    if d != moment.d:
        raise ValueError(f"X has {d} columns after the intercept but the public moment has {moment.d}")
    R = pmt_radius(d, n, eta)
    Z, norms_before, truncated = truncate_rows(Xa @ moment.Sigma_pub_inv_sqrt, R)
    norms_after = np.linalg.norm(Z, axis=1)
    eig_raw = np.linalg.eigvalsh(Xa.T @ Xa / n)
    eig_pmt = np.linalg.eigvalsh(Z.T @ Z / n)
    return PMTTransform(
        moment, Z, R, float(eta), int(n), int(d), norms_before, norms_after, truncated,
        float(np.mean(truncated)), eig_raw, eig_pmt, np.linalg.norm(Xa, axis=1),
    )
