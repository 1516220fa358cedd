"""Three kinds of public information for PMT: labelled rows, unlabelled rows, published moments.

PMT whitens the private rows with a public second moment (``docs/specs/PMT.md`` section 2; Cao, Bi & Zhang,
arXiv:2602.22282, whose point is exactly that a *second moment* suffices: public covariates without
labels, or published statistics such as a census covariance table). :class:`PublicInfo` holds what the
user has, in one of three modes (:data:`PUBLIC_MODES`):

- ``"labelled"``: public rows with their responses (``X_pub``, ``y_pub``). Every method is offered,
  including the public-only fit and PMT-pooled (they need public labels);
- ``"unlabelled"``: public covariates only (``X_pub``). PMT and the private-only baselines; a response
  bound (and centre) must come from the user, a stated public fact, never from the private rows;
- ``"moments"``: a published moment only: the uncentered second moment (or covariance plus mean) of
  the public covariates, their column names and the ``n_pub`` it came from (file formats:
  :meth:`PublicInfo.load`, :meth:`PublicInfo.save`). PMT whitens with it directly.

In every mode the object carries the augmented second moment ``S = E[(x, 1)(x, 1)^T]`` (the intercept
column last), so the public column means are ``S[-1, :-1]``: PMT's centring uses those (public)
statistics, never the private rows.

Validation (:meth:`PublicInfo.from_moments`, :meth:`PublicInfo.load`), before any noise: finite
entries, a square matrix matching the column names, symmetric within ``SYMMETRY_RTOL`` of its largest
entry, positive semi-definite within ``PSD_RTOL`` of its largest eigenvalue (after equilibrating the
columns), a non-negative diagonal (variances), unique column names, an integer ``n_pub > d`` (d the
number of columns PMT whitens, intercept included), and columns that match the private file's
(:meth:`PublicInfo.align`: reordered by name; missing or extra names raise ``ValueError`` naming them).

Directions the public information never spans (:meth:`PublicInfo.unspanned`): a column whose public
variance is zero (e.g. a binary column that is 0 in all 200 public rows: a rare category) makes the
public moment singular; the regularised whitening then stretches that direction by about 1e3 and, at
lam = 0, PMT returned -132 for a true coefficient of 2 with ``converged=True`` and no warning. The
default here (``unspanned="drop"``) drops such columns from the PMT fit, warns naming them
(:class:`UnspannedWarning`), and reports their coefficient as 0 with the reason in
``report_.extra["dropped_columns"]``: the public information says nothing about them, and any
threshold on them would be a choice made from private rows. This is a decision on public data only,
so it costs no privacy. ``unspanned="regularize"`` keeps the former behaviour (``tau I`` on the
equilibrated moment), still with the warning.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> Xq = rng.normal(size=(50, 2)) + [3.0, -1.0]
>>> info = PublicInfo.from_rows(Xq, columns=["a", "b"])
>>> info.mode, info.n_pub, info.mean.round(2).tolist() == Xq.mean(axis=0).round(2).tolist()
('unlabelled', 50, True)
>>> pm = info.public_moment()
>>> pm.d, bool(np.allclose(pm.Sigma_pub, info.second_moment))
(3, True)
"""

from __future__ import annotations

import csv
import io
import json
import os
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from engine.pmt._bounds import add_intercept
from engine.pmt._moment import SINGULAR_RCOND, PublicMoment, _whiten_moment

__all__ = [
    "PUBLIC_MODES",
    "MODE_LABELS",
    "MODE_NOTES",
    "UNSPANNED",
    "SYMMETRY_RTOL",
    "PSD_RTOL",
    "VARIANCE_RTOL",
    "FORMAT",
    "MAX_MOMENTS_BYTES",
    "MAX_MOMENT_COLUMNS",
    "MAX_N_PUB",
    "MAX_MEAN_ABS",
    "MAX_MOMENT_ABS",
    "UnspannedWarning",
    "PublicInfo",
    "moment_from_matrix",
    "standardizing_moment",
    "check_mode",
    "unspanned_message",
]

#: The three kinds of public information.
PUBLIC_MODES = ("labelled", "unlabelled", "moments")
#: Display names of the modes.
MODE_LABELS = {"labelled": "Labelled public rows", "unlabelled": "Unlabelled public rows (covariates only)",
               "moments": "Published moments only"}
#: One line per mode: what is offered and why.
MODE_NOTES = {
    "labelled": "Public rows with labels: every method, including the public-only fit and PMT-pooled.",
    "unlabelled": "Public covariates without labels: public-only and PMT-pooled are not offered (both need "
                  "public labels); the response bound comes from you.",
    "moments": "A published second moment only: public-only and PMT-pooled are not offered (no public rows or "
               "labels); the response bound comes from you.",
}
#: What to do with a column the public information never spans.
UNSPANNED = ("drop", "regularize")
#: Largest accepted asymmetry ``max|S - S^T|`` relative to ``max|S|``.
SYMMETRY_RTOL = 1e-8
#: Smallest accepted eigenvalue of the equilibrated moment, relative to its largest: ``-PSD_RTOL``.
PSD_RTOL = 1e-8
#: A column whose public variance is at most this fraction of its public mean square counts as unspanned.
VARIANCE_RTOL = 1e-10
#: The ``format`` tag of a moments file.
FORMAT = "pmt-public-moments"
#: Largest accepted moments file (bytes; 1,000 columns of 17-digit numbers take about 18 MB as CSV).
MAX_MOMENTS_BYTES = 24 * 2**20
#: Most columns in a moments file.
MAX_MOMENT_COLUMNS = 1000
#: Longest column name in a moments file (characters).
MAX_NAME_CHARS = 200
#: Accepted public sample sizes: an integer ``d + 1 < n_pub <= MAX_N_PUB``.
MAX_N_PUB = 10**9
#: Largest accepted magnitude of a mean entry and of a second-moment / covariance entry (squares of values
#: up to 1e50 stay far inside float64's range through the whitening's products).
MAX_MEAN_ABS = 1e50
MAX_MOMENT_ABS = 1e100


class UnspannedWarning(UserWarning):
    """A direction of the private columns that the public information never spans (named in the message)."""


def moment_from_matrix(S, n_pub: int, *, fit_intercept: bool, on_singular: str = "regularize",
                       estimator: str = "sample") -> PublicMoment:
    """The scale-free whitening of a given public second moment (the steps of :func:`engine.pmt.public_moment`).

    ``D = diag(S)^{1/2}`` (1 for a zero diagonal entry), ``C = D^{-1} S D^{-1}``; if ``C``'s smallest
    eigenvalue is at most ``SINGULAR_RCOND`` times its largest, or ``n_pub < d``, ``tau I`` with
    ``tau = 1e-6 trace(C) / d`` is added (``on_singular="regularize"``) or ``ValueError`` raised;
    ``W = D^{-1} C^{-1/2}``. For ``S`` the moment of public rows this is the same whitening
    :func:`engine.pmt.public_moment` builds from the rows.

    Parameters
    ----------
    S : ndarray of shape (d, d)
        Symmetric PSD (validated by the caller), intercept column last when ``fit_intercept``.
    n_pub : int
    fit_intercept : bool
        Whether the last column of ``S`` is the intercept column.
    on_singular : {"regularize", "raise"}
    estimator : str
        Recorded in the moment (``"sample"`` or ``"published"``).

    Returns
    -------
    PublicMoment

    Examples
    --------
    >>> pm = moment_from_matrix(np.diag([4.0, 1.0]), 10, fit_intercept=False)
    >>> pm.Sigma_pub_inv_sqrt.round(3).tolist(), pm.regularized
    ([[0.5, 0.0], [0.0, 1.0]], False)
    """
    S = np.asarray(S, dtype=float)
    S = (S + S.T) / 2.0
    if not S.any():
        raise ValueError("the public second moment is zero; PMT cannot whiten")
    if np.any(np.diag(S) < 0):
        raise ValueError("the public second moment has a negative diagonal entry")
    return _whiten_moment(S, int(n_pub), bool(fit_intercept), on_singular, estimator)


def standardizing_moment(moment: PublicMoment) -> PublicMoment:
    """The diagonal counterpart of a public moment: centre and scale each column by its public mean and sd.

    ``z = (x - m) / s`` with the intercept column kept (``W = T^T`` for ``z_aug = T x_aug``, ``m`` and ``s`` the
    public mean and standard deviation read off the moment's intercept block). ``E[z z^T]`` is the public
    correlation matrix beside a 1, so ``E||z||^2 = d`` exactly as for the fully whitened rows, and the PMT
    radius applies unchanged; but the columns are not decorrelated. Used by PMTLogistic's ``whiten="auto"``
    when its noisy Newton is noise-dominated (see :class:`engine.pmt.PMTLogistic`). Needs an intercept column.

    Returns
    -------
    PublicMoment
        ``Sigma_pub_inv_sqrt = T^T``, ``Sigma_pub`` the original moment, ``Sigma_pub_sqrt = T^{-T}``,
        ``Sigma_pub_inv = T^T T`` (set on the instance; not the symmetric square roots), ``estimator``
        ``"<estimator>+standardize"``.
    """
    if not moment.fit_intercept:
        raise ValueError("a standardising moment needs the intercept column (fit_intercept=True)")
    S = moment.factors[3]
    d = S.shape[0]
    m = S[-1, :-1]
    var = np.clip(np.diag(S)[:-1] - m**2, 0.0, None)
    sd = np.sqrt(var)
    sd = np.where(sd > 0, sd, 1.0)
    T = np.zeros((d, d))
    T[:-1, :-1] = np.diag(1.0 / sd)
    T[:-1, -1] = -m / sd
    T[-1, -1] = 1.0
    W = T.T.copy()
    Ti = np.linalg.inv(T)
    out = PublicMoment(W, moment.tau, moment.regularized, moment.n_pub, d, True, moment.eigenvalues_equilibrated,
                       moment.col_scale, f"{moment.estimator}+standardize", moment.factors)
    Sig = moment.Sigma_pub
    out.__dict__.update(Sigma_pub=Sig, Sigma_pub_sqrt=Ti.T @ np.eye(d), Sigma_pub_inv=T.T @ T,
                        eigenvalues=moment.eigenvalues)
    return out


def _augmented(mean: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``[[M, mean], [mean^T, 1]]``: the second moment of ``(x, 1)``."""
    p = mean.shape[0]
    S = np.empty((p + 1, p + 1))
    S[:p, :p] = M
    S[:p, p] = mean
    S[p, :p] = mean
    S[p, p] = 1.0
    return S


def _finite_matrix(M, name, p=None):
    try:
        A = np.asarray(M, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric matrix") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {A.shape}")
    if p is not None and A.shape[0] != p:
        raise ValueError(f"{name} is {A.shape[0]} x {A.shape[1]} but there are {p} column names; they must match")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinite entries; all entries must be finite")
    big = float(np.max(np.abs(A))) if A.size else 0.0
    if big > MAX_MOMENT_ABS:
        raise ValueError(f"{name} has an entry of magnitude {big:.3g}; accepted are |entry| <= {MAX_MOMENT_ABS:g} "
                         "(rescale the columns)")
    return A


@dataclass(frozen=True)
class PublicInfo:
    """What the user knows publicly: labelled rows, unlabelled rows, or a published moment (module docstring).

    Build with :meth:`from_rows`, :meth:`from_moments` or :meth:`load`; never from private rows.

    Attributes
    ----------
    mode : {"labelled", "unlabelled", "moments"}
    columns : tuple of str
        Feature names, in the order of ``second_moment``'s first p rows.
    n_pub : int
        Public sample size the moment came from.
    second_moment : ndarray of shape (p + 1, p + 1)
        ``E[(x, 1)(x, 1)^T]`` over the public sample (intercept column last), uncentered.
    X_pub : ndarray of shape (n_pub, p) or None
        The public rows (modes "labelled" and "unlabelled").
    y_pub : ndarray of shape (n_pub,) or None
        The public responses (mode "labelled").
    source : str
        Where it came from (a file name, "rows"), for reports.
    """

    mode: str
    columns: tuple
    n_pub: int
    second_moment: np.ndarray
    X_pub: np.ndarray | None = field(default=None, repr=False)
    y_pub: np.ndarray | None = field(default=None, repr=False)
    source: str = "rows"

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_rows(cls, X_pub, y_pub=None, *, columns=None, source: str = "rows") -> "PublicInfo":
        """Public rows, with labels (mode "labelled") or without (mode "unlabelled").

        Parameters
        ----------
        X_pub : array-like of shape (n_pub, p)
            Finite public features.
        y_pub : array-like of shape (n_pub,), optional
        columns : sequence of str, optional
            Feature names (default ``x0, x1, ...``).

        Raises
        ------
        ValueError
            Not 2-D, no rows, NaN/inf, ``y_pub`` of another length or not finite, wrong number of names.
        """
        try:
            X = np.asarray(X_pub, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("X_pub must be numeric") from None
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"X_pub must be 2-D with at least one row and column, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X_pub contains NaN or infinite values; all entries must be finite")
        m, p = X.shape
        cols = cls._names(columns, p)
        yq = None
        if y_pub is not None:
            yq = np.asarray(y_pub, dtype=float).ravel()
            if yq.shape[0] != m:
                raise ValueError(f"y_pub has {yq.shape[0]} entries but X_pub has {m} rows; they must match")
            if not np.all(np.isfinite(yq)):
                raise ValueError("y_pub contains NaN or infinite values; all entries must be finite")
        Xa = add_intercept(X)
        S = Xa.T @ Xa / m
        return cls("labelled" if yq is not None else "unlabelled", cols, int(m), (S + S.T) / 2.0, X, yq, source)

    @classmethod
    def from_moments(cls, *, columns, n_pub, mean, second_moment=None, covariance=None, ddof: int = 1,
                     source: str = "moments") -> "PublicInfo":
        """A published moment: the uncentered second moment ``E[x x^T]`` or the covariance, plus the mean.

        Parameters
        ----------
        columns : sequence of str
            Unique feature names (p of them).
        n_pub : int
            The public sample size the statistics came from (``> p + 1``: the number of columns PMT whitens,
            intercept included).
        mean : array-like of shape (p,)
        second_moment : array-like of shape (p, p), optional
            ``(1/n_pub) sum x_i x_i^T`` (uncentered). Give exactly one of this and ``covariance``.
        covariance : array-like of shape (p, p), optional
            ``(1/(n_pub - ddof)) sum (x_i - mean)(x_i - mean)^T``.
        ddof : {0, 1}, default 1
            The covariance's denominator (1: the sample covariance of numpy / pandas).

        Raises
        ------
        ValueError
            Module docstring ("Validation"), naming the problem and the accepted range.
        """
        cols = cls._names(columns, None)
        p = len(cols)
        if isinstance(n_pub, bool) or not isinstance(n_pub, (int, np.integer)) and not (
                isinstance(n_pub, float) and float(n_pub).is_integer()):
            raise ValueError(f"n_pub must be an integer with {p + 1} < n_pub <= {MAX_N_PUB:,}, got {str(n_pub)[:40]!r}")
        if isinstance(n_pub, float) and not abs(n_pub) <= MAX_N_PUB:
            raise ValueError(f"n_pub must be an integer with {p + 1} < n_pub <= {MAX_N_PUB:,}, got {n_pub!r}")
        m = int(n_pub)
        if m > MAX_N_PUB:
            raise ValueError(f"n_pub must be an integer with {p + 1} < n_pub <= {MAX_N_PUB:,}, got {m:.3g}")
        if m <= p + 1:
            raise ValueError(f"n_pub must be > d = {p + 1} (the {p} columns plus the intercept) for a usable public "
                             f"moment, got n_pub={m}")
        try:
            mu = np.asarray(mean, dtype=float).ravel() if mean is not None else None
        except (TypeError, ValueError):
            raise ValueError(f"mean must be a list of {p} numbers (one per column)") from None
        if mu is None or mu.shape[0] != p:
            raise ValueError(f"mean must have one entry per column ({p}), got "
                             f"{None if mu is None else mu.shape[0]}")
        if not np.all(np.isfinite(mu)):
            raise ValueError("mean contains NaN or infinite entries")
        if np.any(np.abs(mu) > MAX_MEAN_ABS):
            raise ValueError(f"mean has an entry of magnitude {float(np.max(np.abs(mu))):.3g}; accepted are "
                             f"|mean| <= {MAX_MEAN_ABS:g} (rescale the columns)")
        if (second_moment is None) == (covariance is None):
            raise ValueError("give exactly one of second_moment (uncentered E[x x^T]) or covariance")
        if covariance is not None:
            if ddof not in (0, 1):
                raise ValueError(f"ddof must be 0 or 1, got {ddof!r}")
            Cv = _finite_matrix(covariance, "covariance", p)
            cls._check_symmetric_psd(Cv, "covariance", cols)
            M = Cv * (m - ddof) / m + np.outer(mu, mu)
        else:
            M = _finite_matrix(second_moment, "second_moment", p)
        S = _augmented(mu, M)
        cls._check_symmetric_psd(S, "second_moment" if covariance is None else "the implied second moment", cols + ("(intercept)",))
        return cls("moments", cols, m, (S + S.T) / 2.0, None, None, source)

    @staticmethod
    def _names(columns, p):
        if columns is None:
            return tuple(f"x{j}" for j in range(p))
        cols = tuple(str(c) for c in columns)
        if p is not None and len(cols) != p:
            raise ValueError(f"{len(cols)} column names given for {p} columns")
        if not cols:
            raise ValueError("at least one column name is required")
        dup = sorted({c for c in cols if cols.count(c) > 1})
        if dup:
            raise ValueError(f"column names must be unique; repeated: {dup}")
        return cols

    @staticmethod
    def _check_symmetric_psd(S, name, cols):
        big = float(np.max(np.abs(S))) or 1.0
        asym = float(np.max(np.abs(S - S.T)))
        if asym > SYMMETRY_RTOL * big:
            i, j = np.unravel_index(int(np.argmax(np.abs(S - S.T))), S.shape)
            raise ValueError(f"{name} is not symmetric: entry ({cols[i]}, {cols[j]}) differs from ({cols[j]}, "
                             f"{cols[i]}) by {asym:.3g} (accepted: {SYMMETRY_RTOL:g} x the largest entry)")
        dg = np.diag(S)
        if np.any(dg < 0):
            bad = [cols[k] for k in np.flatnonzero(dg < 0)]
            raise ValueError(f"{name} has negative diagonal entries (variances) for {bad}")
        sc = np.sqrt(np.where(dg > 0, dg, 1.0))
        w = np.linalg.eigvalsh(((S + S.T) / 2.0) / np.outer(sc, sc))
        if w[0] < -PSD_RTOL * max(float(w[-1]), 1.0):
            raise ValueError(f"{name} is not positive semi-definite: smallest eigenvalue {w[0]:.3g} after "
                             f"equilibrating the columns (accepted: >= -{PSD_RTOL:g} x the largest, {w[-1]:.3g})")

    # ---------------------------------------------------------------- views
    @property
    def p(self) -> int:
        """Number of feature columns (intercept excluded)."""
        return len(self.columns)

    @property
    def mean(self) -> np.ndarray:
        """Public column means ``S[-1, :-1]`` (shape (p,))."""
        return self.second_moment[-1, :-1].copy()

    @property
    def covariance(self) -> np.ndarray:
        """Public covariance with denominator ``n_pub`` (shape (p, p))."""
        mu = self.mean
        return self.second_moment[:-1, :-1] - np.outer(mu, mu)

    @property
    def has_labels(self) -> bool:
        return self.y_pub is not None

    def y_mean(self) -> float | None:
        """The public mean of the responses (mode "labelled"), else None."""
        return None if self.y_pub is None else float(np.mean(self.y_pub))

    def unspanned(self) -> list[int]:
        """Indices of the columns the public information never spans (public variance ~ 0).

        A column counts when its public variance is at most ``VARIANCE_RTOL`` times its public mean
        square (constant in every public row; an all-zero column included).
        """
        ms = np.diag(self.second_moment)[:-1]
        var = np.diag(self.covariance)
        return [int(j) for j in np.flatnonzero(var <= VARIANCE_RTOL * np.maximum(ms, np.finfo(float).tiny))]

    def collinear_columns(self, keep=None, *, top: int = 6) -> list[str]:
        """Columns loading on the null directions of the (kept) public moment after equilibration (empty when none)."""
        idx = list(range(self.p)) if keep is None else list(keep)
        S = self.second_moment[np.ix_(idx + [self.p], idx + [self.p])]
        sc = np.sqrt(np.where(np.diag(S) > 0, np.diag(S), 1.0))
        w, V = np.linalg.eigh(S / np.outer(sc, sc))
        null = w <= SINGULAR_RCOND * w[-1]
        if not null.any():
            return []
        load = np.max(np.abs(V[:, null]), axis=1)[:-1]
        order = [k for k in np.argsort(-load) if load[k] > 0.1][:top]
        return [self.columns[idx[k]] for k in order]

    def subset(self, keep) -> "PublicInfo":
        """The same information restricted to the columns ``keep`` (indices, in order)."""
        keep = [int(k) for k in keep]
        rows = keep + [self.p]
        S = self.second_moment[np.ix_(rows, rows)]
        Xq = None if self.X_pub is None else self.X_pub[:, keep]
        return replace(self, columns=tuple(self.columns[k] for k in keep), second_moment=S, X_pub=Xq)

    def public_moment(self, *, fit_intercept: bool = True, on_singular: str = "regularize",
                      estimator: str = "sample") -> PublicMoment:
        """The :class:`engine.pmt.PublicMoment` PMT whitens with (intercept column last when ``fit_intercept``).

        With public rows this is :func:`engine.pmt.public_moment` of the rows; with a published moment
        it is built from the matrix (:func:`moment_from_matrix`).
        """
        if self.X_pub is not None:
            from engine.pmt._moment import public_moment

            return public_moment(self.X_pub, fit_intercept=fit_intercept, on_singular=on_singular, estimator=estimator)
        if estimator != "sample":
            raise ValueError(f"public moment estimator {estimator!r} needs public rows; a published moment is used as is")
        S = self.second_moment if fit_intercept else self.second_moment[:-1, :-1]
        return moment_from_matrix(S, self.n_pub, fit_intercept=fit_intercept, on_singular=on_singular,
                                  estimator="published")

    def align(self, columns) -> "PublicInfo":
        """Reorder to the private file's ``columns`` (by name); ``ValueError`` naming missing / extra names."""
        want = tuple(str(c) for c in columns)
        missing = [c for c in want if c not in self.columns]
        extra = [c for c in self.columns if c not in want]
        if missing or extra:
            parts = []
            def names(v):
                return str(v) if len(v) <= 8 else str(v[:8])[:-1] + f", ... ({len(v)} in all)]"

            if missing:
                parts.append(f"missing from the public information: {names(missing)}")
            if extra:
                parts.append(f"not in the private data: {names(extra)}")
            raise ValueError(f"the public columns do not match the private columns ({'; '.join(parts)})")
        if want == self.columns:
            return self
        return self.subset([self.columns.index(c) for c in want])

    # ---------------------------------------------------------------- files
    def to_dict(self) -> dict:
        """The JSON form (mode "moments" on reading: the rows and labels are not written)."""
        return {"format": FORMAT, "version": 1, "columns": list(self.columns), "n_pub": int(self.n_pub),
                "mean": self.mean.tolist(), "second_moment": self.second_moment[:-1, :-1].tolist(),
                "note": "uncentered second moment E[x x^T] and mean of the public covariates (PMT, docs/specs/PMT.md)"}

    def save(self, path) -> None:
        """Write the moments to ``path``: JSON (``.json``) or CSV (any other suffix; see :meth:`load`)."""
        path = os.fspath(path)
        if path.lower().endswith(".json"):
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(self.to_dict(), fh, indent=1)
            return
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(self.to_csv())

    def to_csv(self) -> str:
        """The CSV form: header ``second_moment,<col>...``, a row ``n_pub``, a row ``mean``, then one row per column."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["second_moment", *self.columns])
        w.writerow(["n_pub", self.n_pub, *[""] * (self.p - 1)])
        w.writerow(["mean", *[repr(float(v)) for v in self.mean]])
        M = self.second_moment[:-1, :-1]
        for j, c in enumerate(self.columns):
            w.writerow([c, *[repr(float(v)) for v in M[j]]])
        return buf.getvalue()

    @classmethod
    def load(cls, path) -> "PublicInfo":
        """Read a moments file (mode "moments").

        JSON: ``{"columns": [...], "n_pub": int, "mean": [...], "second_moment": [[...]]}`` or
        ``"covariance": [[...]]`` (with optional ``"ddof"``, default 1) instead of ``second_moment``.
        CSV: the first header cell is ``second_moment`` or ``covariance``, the other header cells the column
        names; a row ``n_pub`` (first value), a row ``mean``, then one row per column named in the first cell
        (in any order; matched by name).

        Raises
        ------
        ValueError
            Unreadable file, missing fields, and everything :meth:`from_moments` checks.
        """
        path = os.fspath(path)
        name = os.path.basename(path)
        try:
            size = os.path.getsize(path)
            if size > MAX_MOMENTS_BYTES:
                raise ValueError(f"moments file {name!r}: the file is {size / 2**20:.1f} MB; at most "
                                 f"{MAX_MOMENTS_BYTES // 2**20} MB are accepted")
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ValueError(f"cannot read the moments file {path}: {exc.strerror or exc}") from None
        return cls.from_bytes(data, name)

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "moments") -> "PublicInfo":
        """Read and validate a moments file from its bytes, in memory (the page's upload; :meth:`load` reads a path).

        Checked before parsing: the size (:data:`MAX_MOMENTS_BYTES`), UTF-8 text, bracket depth, value length and
        digits (:func:`engine.datasets.guard.check_raw_limits`); then the structure and types (a list of
        :data:`MAX_MOMENT_COLUMNS` or fewer unique names of up to :data:`MAX_NAME_CHARS` characters, numbers where
        numbers belong, no NaN or Infinity), everything :meth:`from_moments` checks (finite, magnitudes, symmetric,
        positive semi-definite, ``n_pub`` an integer in ``(d + 1, MAX_N_PUB]``), and that PMT can whiten with it.

        Raises
        ------
        ValueError
            One message of at most :data:`engine.datasets.guard.MAX_MESSAGE_CHARS` characters, starting with
            ``moments file '<name>':``.
        """
        from engine.datasets.guard import bounded

        try:
            info = cls._from_bytes(bytes(data), str(name))
        except ValueError as exc:
            raise ValueError(bounded(f"moments file {name}: {exc}")) from None
        return info

    @classmethod
    def _from_bytes(cls, data: bytes, name: str) -> "PublicInfo":
        from engine.datasets.guard import check_encoding, check_raw_limits

        if len(data) > MAX_MOMENTS_BYTES:
            raise ValueError(f"the file is {len(data) / 2**20:.1f} MB; at most {MAX_MOMENTS_BYTES // 2**20} MB are "
                             "accepted")
        if not data.strip():
            raise ValueError("the file is empty")
        if b"\x00" in data:
            raise ValueError("the file is binary (it contains NUL bytes), not JSON or CSV text; save it as UTF-8")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValueError(f"the file is not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x}); save it as "
                             "UTF-8") from None
        is_json = name.lower().endswith(".json") or text.lstrip().startswith(("{", "["))
        check_raw_limits(data, json=is_json)
        check_encoding(data, text, "utf-8")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        info = cls._from_json(text, name) if is_json else cls._from_csv(text, name)
        for c in info.columns:
            if len(c) > MAX_NAME_CHARS or not c.strip():
                raise ValueError(f"column name {c[:40]!r}{'...' if len(c) > 40 else ''} ({len(c)} characters): names "
                                 f"must be non-empty and at most {MAX_NAME_CHARS} characters")
        try:  # PMT's whitening, now, so that a file accepted here never fails at compute
            with np.errstate(all="raise"), warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                pm = info.public_moment()
                if not all(np.all(np.isfinite(a)) for a in (pm.Sigma_pub_inv_sqrt, pm.Sigma_pub_sqrt, pm.Sigma_pub_inv)):
                    raise FloatingPointError("non-finite whitening")
        except (np.linalg.LinAlgError, FloatingPointError, RuntimeWarning, ArithmeticError) as exc:
            raise ValueError(f"PMT cannot whiten with this moment ({type(exc).__name__}): check its scale and that it "
                             "is the second moment of real rows") from None
        return info

    @classmethod
    def _from_json(cls, text, name):
        def no_constant(c):
            raise ValueError(f"{c} is not a number JSON allows; all entries must be finite numbers")

        try:
            obj = json.loads(text, parse_constant=no_constant)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: it breaks at line {exc.lineno}, column {exc.colno} (character "
                             f"{exc.pos:,} of {len(text):,}); a moments file is the JSON object that python -m engine "
                             "pmt-moments writes") from None
        except RecursionError:  # pragma: no cover - the raw depth check refuses deep files first
            raise ValueError("the JSON nests too deep") from None
        if not isinstance(obj, dict):
            raise ValueError("the JSON must be an object with columns, n_pub, mean and second_moment or covariance")
        missing = [k for k in ("columns", "n_pub", "mean") if k not in obj]
        if missing:
            raise ValueError(f"missing field(s) {missing}")
        kind = [k for k in ("second_moment", "covariance") if obj.get(k) is not None]
        if len(kind) != 1:
            raise ValueError("give exactly one of second_moment (uncentered E[x x^T]) or covariance")
        cols = obj["columns"]
        if not isinstance(cols, list) or not cols or not all(isinstance(c, str) for c in cols):
            raise ValueError(f"columns must be a non-empty list of names (strings), got {type(cols).__name__}")
        if len(cols) > MAX_MOMENT_COLUMNS:
            raise ValueError(f"{len(cols):,} columns; at most {MAX_MOMENT_COLUMNS:,} are accepted")
        p = len(cols)

        def number(v):
            return isinstance(v, (int, float)) and not isinstance(v, bool)

        n_pub = obj["n_pub"]
        if not number(n_pub):
            raise ValueError(f"n_pub must be an integer (the public sample size), got a {type(n_pub).__name__}")
        mean = obj["mean"]
        if not isinstance(mean, list) or len(mean) != p or not all(number(v) for v in mean):
            raise ValueError(f"mean must be a list of {p} numbers (one per column)")
        M = obj[kind[0]]
        if not (isinstance(M, list) and len(M) == p and all(isinstance(r, list) and len(r) == p for r in M)
                and all(number(v) for r in M for v in r)):
            raise ValueError(f"{kind[0]} must be a list of {p} rows of {p} numbers (one per column)")
        ddof = obj.get("ddof", 1)
        if ddof not in (0, 1) or isinstance(ddof, bool):
            raise ValueError(f"ddof must be 0 or 1, got {str(ddof)[:20]!r}")
        try:
            return cls.from_moments(columns=cols, n_pub=n_pub, mean=mean, ddof=int(ddof), source=name,
                                    **{kind[0]: M})
        except OverflowError:
            raise ValueError("a number is beyond float64's range") from None

    @classmethod
    def _from_csv(cls, text, name):
        rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
        if len(rows) < 3:
            raise ValueError("a CSV moments file needs a header, an n_pub row, a mean row and one row per column")
        head = [c.strip() for c in rows[0]]
        kind, cols = head[0].lower(), head[1:]
        if kind not in ("second_moment", "covariance"):
            raise ValueError(f"the first header cell must be 'second_moment' or 'covariance', got {head[0][:40]!r}")
        if len(cols) > MAX_MOMENT_COLUMNS:
            raise ValueError(f"{len(cols):,} columns; at most {MAX_MOMENT_COLUMNS:,} are accepted")
        body = {r[0].strip(): r[1:] for r in rows[1:]}

        def nums(label):
            if label not in body:
                raise ValueError(f"no row named {label!r}")
            vals = body[label]
            try:
                out = [float(v) for v in vals[:len(cols)]]
            except ValueError:
                raise ValueError(f"row {label[:40]!r} has a non-numeric entry") from None
            if len(out) != len(cols):
                raise ValueError(f"row {label[:40]!r} has {len(out)} values for {len(cols)} columns")
            return out

        if "n_pub" not in body or not body["n_pub"] or not body["n_pub"][0].strip():
            raise ValueError("no n_pub row (its first value: the public sample size)")
        try:
            n_pub = float(body["n_pub"][0])
        except ValueError:
            raise ValueError(f"n_pub must be an integer, got {body['n_pub'][0][:40]!r}") from None
        M = [nums(c) for c in cols]
        kw = {kind: M}
        return cls.from_moments(columns=cols, n_pub=int(n_pub) if n_pub.is_integer() else n_pub,
                                mean=nums("mean"), source=name, **kw)


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`PUBLIC_MODES`, else ``ValueError`` naming them."""
    if mode not in PUBLIC_MODES:
        raise ValueError(f"public mode must be one of {PUBLIC_MODES}, got {mode!r}")
    return mode


def unspanned_message(names) -> str:
    """The warning text for columns the public information never spans."""
    return (f"the public information never spans the column(s) {list(names)} (zero public variance: e.g. a category "
            "absent from every public row); PMT cannot whiten that direction, so it is left out of the PMT fit and its "
            "coefficient reported as 0 (unspanned='regularize' keeps it, badly scaled)")
