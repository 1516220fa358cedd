"""The public second moment of PMT and its scale-free whitening (``docs/specs/PMT.md`` section 2, steps 1-2).

``Sigma_pub = (1/m) X_pub^T X_pub`` (uncentered; :func:`second_moment`), or Tyler's robust moment
(:func:`engine.pmt._tyler.tyler_moment`); the columns are equilibrated by their public RMS ``D``,
``C = D^{-1} Sigma_pub D^{-1}`` is regularised with ``tau I`` when singular to working precision (or
``on_singular="raise"``), and ``W = D^{-1} C^{-1/2}`` whitens rows (``x~ = W^T x``).
:func:`public_moment` returns a :class:`PublicMoment`; the other matrices it offers are computed on
first access. Only public rows enter here.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field

import numpy as np

from engine.pmt._bounds import _as_2d_finite, _kappa_from_eigs, add_intercept
from engine.pmt._lapack import _eigh, _eigvalsh
from engine.pmt._tyler import tyler_moment


#: What to do when the public second moment is singular or ``n_pub < d``.
ON_SINGULAR = ("regularize", "raise")

#: ``tau = REGULARIZATION_FACTOR * trace(C) / d`` is added to the diagonal of the equilibrated moment when needed.
REGULARIZATION_FACTOR = 1e-6

#: Relative eigenvalue threshold below which the **equilibrated** moment (unit diagonal) counts as
#: singular: about 1e4 float64 rounding units, below which an eigenvalue of a unit-diagonal matrix of
#: modest size carries no correct digit.
SINGULAR_RCOND = 1e-12


class SmallPublicSampleWarning(UserWarning):
    """Fewer public rows than columns (``n_pub < d``, intercept included): the public second moment cannot be
    full rank, so it is regularised (``tau I`` in equilibrated units) and the directions the public rows never
    saw are whitened by that ridge alone. Public information only (n_pub and d)."""


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

@dataclass(frozen=True)
class PublicMoment:
    """The public second moment and the whitening built from it (all public; cost no privacy).

    Scale-free whitening (``docs/specs/PMT.md`` section 2, step 1): the columns are first equilibrated by
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
    #: from which the other matrices are computed on first access (a fit uses W only).
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
    options already checked: the estimators' ``fit`` validates once, then calls this."""
    if fit_intercept:
        A = add_intercept(A)
    m, d = A.shape
    if not A.any():
        raise ValueError("the public second moment is zero (all public rows are zero); PMT cannot whiten")
    S = _second_moment_rows(A) if estimator == "sample" else tyler_moment(A)
    return _whiten_moment(S, m, fit_intercept, on_singular, estimator)


def _whiten_moment(S: np.ndarray, m: int, fit_intercept: bool, on_singular: str, estimator: str) -> PublicMoment:
    """The scale-free whitening of a public second moment ``S`` (d x d, PSD) of ``m`` public rows (or a published
    moment: :func:`engine.pmt.public_info.moment_from_matrix`): equilibrate, test singularity, ``W = D^{-1} C^{-1/2}``."""
    d = S.shape[0]
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
        if m < d:
            warnings.warn(
                f"only {m} public row{'s' if m != 1 else ''} for d = {d} columns (intercept included): the public second moment is "
                f"rank-deficient and is regularised with tau = {tau:.3g} (equilibrated units); the fit is then "
                "shaped by that regularisation in the directions the public rows never saw. Use at least d public rows.",
                SmallPublicSampleWarning, stacklevel=4)
    w, V = _eigh(C)
    w = np.maximum(w, np.finfo(float).tiny)
    W = (V / np.sqrt(w)) @ V.T / scale[:, None]  # D^{-1} C^{-1/2}
    # Sigma_pub, its square root, inverse and eigenvalues are properties computed from (w, V, C, S) when read
    return PublicMoment(W, float(tau), bool(singular), int(m), int(d), bool(fit_intercept), w_eq, scale, estimator,
                        (w, V, C, S))
