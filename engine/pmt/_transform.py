"""PMT: public-moment-guided truncation of unbounded private features.

The transform of Cao & Zhang (arXiv:2508.18037, Algorithm 1), used by DP-PMTRR and DP-PMTLR in
Cao, Bi & Zhang, "Differentially Private Truncation of Unbounded Data via Public Second Moments"
(arXiv:2602.22282, 2026). Working specification: ``docs/specs/PMT.md`` section 2.

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
from dataclasses import dataclass, field

import numpy as np

from engine.pmt._blas import blas_limit
from engine.pmt._bounds import _as_2d_finite, _kappa_from_eigs, pmt_radius
from engine.pmt._moment import PublicMoment, public_moment
from engine.pmt._whiten import FEW_COLUMNS, _add_row, _chunked, _whiten_blocks, _whiten_few, truncate_rows_inplace

__all__ = ["PMTTransform", "pmt_transform"]


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

    The display-only quantities are properties computed when first read (a fit pays for what
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
    validates its data once, then calls this. Checks the columns against the moment and eta.

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
            # quantity comes from d x d matrices or the truncated rows only.
            if _chunked(n, d):  # compute-bound: fixed row blocks on the pool (same numbers for any thread count)
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
