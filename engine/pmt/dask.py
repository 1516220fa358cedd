"""PMT ridge and DP-RR on data larger than memory: sufficient statistics on Dask (issue 17).

DP-PMTRR, PMT-pooled and DP-RR (``docs/PMT.md`` sections 3 and 5) release only sums over the private rows:
``A = Z^T Z`` and ``b = Z^T clip(y, +-B_y)`` of the bounded rows ``Z`` (PMT: whitened with the public
second moment and truncated at R; DP-RR: raw rows clipped at C). This module computes those sums
blockwise with Dask and hands them to the estimators' own release (:meth:`PMTRidge._release`,
:meth:`DPRidge._release`: noise, then the solve), so the Dask path and the in-memory path release the
same statistic with the same noise: for the same ``random_state`` the coefficients agree up to
floating-point summation order (tests: 1e-10 relative).

Design
------
- The private rows are one Dask array ``[X | y]`` (float64, one column chunk). Every block is mapped
  (:func:`dask.array.map_blocks`) to one row of statistics: its row count, ``A``, ``b``, the raw
  ``Xa^T Xa`` (for ``kappa_raw``; display only), the numbers of truncated rows and clipped responses, and
  per column the numbers of NaN/inf entries and of entries with ``|x| > 1e150``. Dask's own tree
  reduction (``.sum(axis=0)``) adds the rows: **one pass** over the private data.
- ``n`` must be known **before** the pass: R and B_y depend on it (``R = sqrt(d (1 + ln(2n/eta)))``).
  Under replace-one n is public. It is the row count of the data: free for a Dask array with known
  chunks, from the Parquet footers for Parquet files, and a counting pass (rows only) for CSV files or
  arrays with unknown chunks. The statistics pass counts the rows again and must agree.
- Bad input (NaN, inf, non-numeric, ``|x| > 1e150``) is found in that pass; the error names the
  column and the chunk (and, for files, the file, from a second look at the files that runs only on
  this error path), and is raised **before any noise is drawn**.
- Noise is added once, on the driver, after the reduction, by the estimator's release.
- Scheduler: Dask's default (the local threaded scheduler for arrays), or a ``dask.distributed``
  cluster when a scheduler address is given (:func:`run_from_files`, ``scheduler="tcp://..."``).

Not on Dask (raise a clear error): ``response="joint"``, ``"private"`` bounds, DP-GD and the GLMs
(each gradient or Newton step is one more pass over the private data).
"""

from __future__ import annotations

import contextlib
import glob
import math
import os
from dataclasses import dataclass

import numpy as np

from engine.pmt._base import MAX_ABS_VALUE, _check_n_ge_d, _check_X, _check_X_pub, _check_y, penalty_mask
from engine.pmt._transform import add_intercept, pmt_radius, public_moment, truncate_rows
from engine.pmt.baselines import DPRidge, DPRidgeOracle
from engine.pmt.pooled import PMTPooledRidge
from engine.pmt.ridge import PMTRidge, SSPStatistics, sufficient_statistics

__all__ = [
    "PrivateInputError",
    "fit_dask",
    "dask_statistics",
    "DaskStatistics",
    "RELEASE_PARAMS",
    "blockwise_statistics",
    "private_array",
    "read_private",
    "read_public",
    "run_from_files",
    "ENGINES",
    "DASK_METHODS",
]

#: Engines of the ``--engine`` CLI flag: in memory (pandas/numpy) or out of core (Dask).
ENGINES = ("memory", "dask")
#: Methods :func:`run_from_files` fits on Dask.
DASK_METHODS = {"pmt": PMTRidge, "dp-rr": DPRidge, "pmt-pooled": PMTPooledRidge}
#: Rows per slice inside a block: caps the temporaries of one task at about 5 x 2^16 x d x 8 bytes.
SLICE_ROWS = 1 << 16
_PARQUET_EXT = (".parquet", ".parq", ".pq")
_CSV_EXT = (".csv", ".csv.gz", ".txt", ".tsv")


class PrivateInputError(ValueError):
    """Bad private input found in the distributed pass (raised before any noise is drawn).

    Attributes
    ----------
    problems : list of dict
        One entry per (column, location): ``column``, ``problem``, ``count`` and ``where`` (a file or a
        chunk with its row range).
    """

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = list(problems)


# --------------------------------------------------------------------------------------------
# the private rows as one Dask array [X | y]
# --------------------------------------------------------------------------------------------
def _dask():
    try:
        import dask.array as da
        import dask.dataframe as dd
    except ImportError as e:  # pragma: no cover - dask is a requirement
        raise ImportError("the Dask engine needs dask: pip install 'dask[array,dataframe]' distributed pyarrow") from e
    return da, dd


def _check_numeric_dtypes(dtypes, names):
    bad = [f"{c!r} ({t})" for c, t in zip(names, dtypes) if getattr(t, "kind", "O") not in "biuf"]
    if bad:
        raise PrivateInputError(
            f"private column(s) {', '.join(bad)} are not numeric; PMT needs real-valued features and response",
            [{"column": c, "problem": "non-numeric", "count": math.nan, "where": "schema"} for c in bad],
        )


def _partition_lengths(frame):
    """Rows per partition: from the Parquet footers when Dask's optimizer can read them there (its
    ``Lengths`` expression), else by counting the rows of each partition (a pass; CSV)."""
    try:
        from dask.dataframe.dask_expr._expr import Lengths, Literal

        opt = Lengths(frame.expr).optimize()
        if isinstance(opt, Literal):
            return tuple(int(v) for v in opt.value)
    except (ImportError, AttributeError):  # pragma: no cover - other Dask internals: count instead
        pass
    return tuple(int(v) for v in frame.map_partitions(len).compute())


def private_array(X, y):
    """The private rows as one float64 Dask array ``[X | y]`` with known chunks, and the column names.

    Parameters
    ----------
    X : dask.array.Array of shape (n, p) or dask.dataframe.DataFrame
    y : dask.array.Array of shape (n,), dask.dataframe.Series, or an in-memory array of length n

    Returns
    -------
    data : dask.array.Array of shape (n, p + 1)
        One chunk along the columns; row chunks known (counted when unknown: a pass over the rows).
    names : list of str
        The p feature names and the response name (``"x0"``... and ``"y"`` for arrays).

    Raises
    ------
    PrivateInputError
        Non-numeric columns (from the schema, before any pass).
    ValueError
        Shapes that do not match, X not 2-D.
    """
    da, dd = _dask()
    if isinstance(X, dd.DataFrame):
        names = [str(c) for c in X.columns]
        _check_numeric_dtypes(list(X.dtypes), names)
        if isinstance(y, dd.Series):
            yname = str(y.name) if y.name is not None else "y"
            _check_numeric_dtypes([y.dtype], [yname])
            frame = X.assign(__pmt_response__=y)
            data = frame.to_dask_array(lengths=_partition_lengths(frame))
            return data.astype(float).rechunk({1: -1}), names + [yname]
        Xd = X.to_dask_array(lengths=_partition_lengths(X))
    elif isinstance(X, da.Array):
        Xd = X
        names = [f"x{j}" for j in range(X.shape[1])] if X.ndim == 2 else []
    else:
        raise TypeError(f"X must be a dask.array.Array or a dask.dataframe.DataFrame, got {type(X).__name__}")
    if Xd.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features), got {Xd.ndim} dimension(s)")
    _check_numeric_dtypes([Xd.dtype] * Xd.shape[1], names)
    if any(math.isnan(c) for c in Xd.chunks[0]):
        Xd = Xd.compute_chunk_sizes()
    if isinstance(y, dd.Series):
        yname = str(y.name) if y.name is not None else "y"
        yd = y.to_dask_array(lengths=_partition_lengths(y))
    elif isinstance(y, da.Array):
        yname, yd = "y", y
        if any(math.isnan(c) for c in yd.chunks[0]):
            yd = yd.compute_chunk_sizes()
    else:
        yname = "y"
        try:
            yv = np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("y must be numeric") from None
        yd = da.from_array(yv, chunks=(Xd.chunks[0],)) if yv.shape[:1] == Xd.shape[:1] else da.from_array(yv)
    _check_numeric_dtypes([yd.dtype], [yname])
    if yd.ndim == 2 and yd.shape[1] == 1:
        yd = yd[:, 0]
    if yd.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got {yd.ndim} dimension(s)")
    if yd.shape[0] != Xd.shape[0]:
        raise ValueError(f"y has {yd.shape[0]} entries but the features have {Xd.shape[0]} rows; they must match")
    if yd.chunks[0] != Xd.chunks[0]:
        yd = yd.rechunk((Xd.chunks[0],))
    data = da.concatenate([Xd.astype(float), yd.astype(float)[:, None]], axis=1).rechunk({1: -1})
    return data, names + [yname]


# --------------------------------------------------------------------------------------------
# the one pass: blockwise statistics, summed by Dask's reduction tree
# --------------------------------------------------------------------------------------------
def _layout(p, d):
    """Offsets of the packed statistics row: count | A | b | G | n_trunc | n_yclip | nonfinite | big."""
    sizes = [("n", 1), ("A", d * d), ("b", d), ("G", d * d), ("xty", d), ("trunc", 1), ("yclip", 1), ("nonfinite", p + 1),
             ("big", p + 1)]
    out, k = {}, 0
    for name, s in sizes:
        out[name] = slice(k, k + s)
        k += s
    return out, k


def _block_statistics(block, *, p, fit_intercept, whiten, radius, B_y):
    """One block ``[X | y]`` -> one packed row of statistics (see :func:`_layout`). Runs on the workers.

    The rows are transformed exactly as in memory (:func:`engine.pmt.pmt_transform`:
    ``add_intercept(X) @ Sigma_pub^{-1/2}``, then :func:`engine.pmt.truncate_rows` at R; DP-RR: clipped
    at C) and summed with :func:`engine.pmt.ridge.sufficient_statistics`, in slices of
    :data:`SLICE_ROWS` rows.
    """
    B = np.asarray(block, dtype=float)
    d = p + int(bool(fit_intercept))
    lay, K = _layout(p, d)
    out = np.zeros((1, K))
    out[0, lay["n"]] = B.shape[0]
    finite = np.isfinite(B)
    nonfinite = B.shape[0] - finite.sum(axis=0)
    with np.errstate(invalid="ignore"):
        big = (np.abs(np.where(finite, B, 0.0)) > MAX_ABS_VALUE).sum(axis=0)
    out[0, lay["nonfinite"]] = nonfinite
    out[0, lay["big"]] = big
    if nonfinite.any() or big.any():
        return out  # the driver raises before any noise; no statistics from bad rows
    A = np.zeros((d, d))
    b = np.zeros(d)
    G = np.zeros((d, d))
    xty = np.zeros(d)
    n_trunc = n_yclip = 0
    for s in range(0, B.shape[0], SLICE_ROWS):
        S = B[s:s + SLICE_ROWS]
        X, y = S[:, :p], S[:, p]
        Xa = add_intercept(X) if fit_intercept else np.ascontiguousarray(X)
        Z, _, truncated = truncate_rows(Xa @ whiten if whiten is not None else Xa, radius)
        A_s, b_s = sufficient_statistics(Z, y, B_y)
        A += A_s
        b += b_s
        G += Xa.T @ Xa
        xty += Xa.T @ y
        n_trunc += int(np.count_nonzero(truncated))
        n_yclip += int(np.count_nonzero(np.abs(y) > B_y))
    out[0, lay["A"]] = A.ravel()
    out[0, lay["b"]] = b
    out[0, lay["G"]] = G.ravel()
    out[0, lay["xty"]] = xty
    out[0, lay["trunc"]] = n_trunc
    out[0, lay["yclip"]] = n_yclip
    return out


def _chunk_problems(data, names):
    """Error path only: per chunk and column, the NaN/inf and |x| > 1e150 counts (a second pass)."""

    def counts(block):
        B = np.asarray(block, dtype=float)
        fin = np.isfinite(B)
        with np.errstate(invalid="ignore"):
            big = np.abs(np.where(fin, B, 0.0)) > MAX_ABS_VALUE
        return np.stack([(~fin).sum(axis=0), big.sum(axis=0)])[None]

    nb, ncol = data.numblocks[0], data.shape[1]
    c = data.map_blocks(counts, chunks=((1,) * nb, (2,), (ncol,)), new_axis=1, dtype=float).compute()
    starts = np.concatenate([[0], np.cumsum(data.chunks[0])])
    out = []
    for j, name in enumerate(names):
        for k, what in ((0, "NaN or infinite"), (1, f"|value| > {MAX_ABS_VALUE:g}")):
            blocks = np.flatnonzero(c[:, k, j])
            if blocks.size:
                i = int(blocks[0])
                out.append({"column": name, "problem": what, "count": int(c[:, k, j].sum()),
                            "where": f"chunk {i} (rows {int(starts[i])}-{int(starts[i + 1]) - 1})"})
    return out


def _raise_problems(problems, note=""):
    def one(q):
        count = "" if isinstance(q["count"], float) else f"{q['count']} "
        return f"column {q['column']!r}: {count}{q['problem']} value(s), first in {q['where']}"

    more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
    raise PrivateInputError(
        f"bad private input found in the distributed pass{note}: {'; '.join(one(q) for q in problems[:10])}{more}. "
        "All entries must be finite real numbers with |value| <= 1e150; no noise was drawn.", problems)


@contextlib.contextmanager
def _reading(source, names):
    """Turn an error met while reading the files (a non-numeric CSV field) into one naming file and column."""
    try:
        yield
    except PrivateInputError as exc:
        problems = _file_problems(source, names) if source is not None and not exc.problems[0]["where"].startswith(
            "file") else []
        if not problems:
            raise
        _raise_problems(problems)
    except (ValueError, TypeError) as exc:
        if source is None:
            raise
        problems = _file_problems(source, names)
        if not problems:
            raise
        _raise_problems(problems, f" (while reading: {exc})")


def blockwise_statistics(data, names, *, fit_intercept, whiten, radius, B_y, n, source=None, return_raw=False):
    """Compute :class:`engine.pmt.ridge.SSPStatistics` of ``[X | y]`` in one blockwise pass.

    Parameters
    ----------
    data : dask.array.Array of shape (n, p + 1)
        From :func:`private_array`.
    names : list of str
        Column names (p features, then the response), for error messages.
    fit_intercept : bool
    whiten : ndarray of shape (d, d) or None
        ``Sigma_pub^{-1/2}`` (PMT) or None (DP-RR: raw rows).
    radius : float
        R (PMT) or C (DP-RR).
    B_y : float
        Response bound.
    n : int
        The row count R and B_y were computed with; the pass must count the same.
    source : dict, optional
        ``{"files": [...], "format": "csv"|"parquet", "read_kwargs": {...}}`` when the rows come from
        files (:func:`read_private`): errors then name the file.

    return_raw : bool, default False
        Also return the raw ``Xa^T Xa`` and ``Xa^T y`` (unbounded, for the non-private reference only).

    Returns
    -------
    SSPStatistics, or ``(SSPStatistics, G_raw, xty_raw)`` with ``return_raw``

    Raises
    ------
    PrivateInputError
        NaN/inf, ``|x| > 1e150`` or unreadable (non-numeric) entries in any chunk, naming column and
        chunk (or file). Raised on the driver after the pass and before any noise.
    """
    p = data.shape[1] - 1
    d = p + int(bool(fit_intercept))
    lay, K = _layout(p, d)
    nb = data.numblocks[0]
    rows = data.map_blocks(_block_statistics, p=p, fit_intercept=fit_intercept, whiten=whiten, radius=radius,
                           B_y=B_y, chunks=((1,) * nb, (K,)), dtype=float)
    with _reading(source, names):
        tot = rows.sum(axis=0).compute()  # dask's tree reduction
    if tot[lay["nonfinite"]].any() or tot[lay["big"]].any():
        problems = _file_problems(source, names) if source is not None else []
        _raise_problems(problems or _chunk_problems(data, names))
    count = int(round(tot[lay["n"]][0]))
    if count != n:
        raise ValueError(f"the pass counted {count} private rows but n = {n} was used for the bounds; "
                         "the data changed between the count and the pass")
    A = tot[lay["A"]].reshape(d, d)
    G = tot[lay["G"]].reshape(d, d)
    stats = SSPStatistics(A=A, b=tot[lay["b"]].copy(), n=count, n_truncated=int(round(tot[lay["trunc"]][0])),
                          n_y_clipped=int(round(tot[lay["yclip"]][0])), eigenvalues_raw=np.linalg.eigvalsh(G))
    return (stats, G, tot[lay["xty"]].copy()) if return_raw else stats


# --------------------------------------------------------------------------------------------
# the estimators on Dask
# --------------------------------------------------------------------------------------------
def _public(X_pub, y_pub, p, *, need_X_pub, need_y_pub):
    Xq = _check_X_pub(X_pub, p, need_X_pub)
    yq = None
    if y_pub is not None:
        m = Xq.shape[0] if Xq is not None else np.asarray(y_pub).shape[0]
        yq = _check_y(y_pub, m, "y_pub")
    elif need_y_pub:
        raise ValueError("public labels are required here: pass y_pub to fit(), or give response_bound=<float>")
    return Xq, yq


def _no_private_bounds(est, *names):
    for name in names:
        if isinstance(getattr(est, name, None), str) and getattr(est, name) == "private":
            raise ValueError(f"{name}='private' is not supported on Dask (it needs the private data outside any "
                             "mechanism); give None (public default) or a float")


#: Parameters only the release uses: changing them needs no new pass over the private data.
RELEASE_PARAMS = ("epsilon", "delta", "lam", "neighbouring", "penalize_intercept", "eig_floor", "random_state",
                  "sampler")


@dataclass
class DaskStatistics:
    """The result of one pass over the private rows, ready for any number of releases.

    The statistics depend on ``n``, ``d``, ``eta``, the public rows and the bounds, not on epsilon, delta,
    lam or the seed; :meth:`release` draws the noise and solves for any of those (post-processing of the
    same pass; each release spends its own budget).

    Attributes
    ----------
    estimator : PMTRidge or DPRidge
        The template whose bound parameters were used.
    stats : SSPStatistics
    p : int
        Number of features.
    names : list of str
        Feature names and the response name.
    gram_raw, xty_raw : ndarray
        Raw ``Xa^T Xa`` and ``Xa^T y`` (not bounded): the non-private reference only (never released).
    """

    estimator: object
    stats: SSPStatistics
    p: int
    names: list
    gram_raw: np.ndarray
    xty_raw: np.ndarray
    _args: tuple

    def release(self, **params):
        """A fitted copy of the template with ``params`` (only :data:`RELEASE_PARAMS`) from these statistics."""
        from sklearn.base import clone

        other = sorted(set(params) - set(RELEASE_PARAMS))
        if other:
            raise ValueError(f"{other} change the statistics; only {RELEASE_PARAMS} can differ between releases")
        return _release(clone(self.estimator).set_params(**params), self)

    def reference_theta(self, lam: float, *, penalize_intercept: bool = False) -> np.ndarray:
        """Non-private ridge on the untruncated rows from the same pass (normal equations; not a release)."""
        d = self.gram_raw.shape[0]
        Pm = penalty_mask(d, fit_intercept=self.estimator.fit_intercept, penalize_intercept=penalize_intercept)
        return np.linalg.solve(self.gram_raw + self.stats.n * lam * Pm, self.xty_raw)


def dask_statistics(estimator, X, y, X_pub=None, y_pub=None, *, source=None) -> DaskStatistics:
    """Validate everything and run the one pass for ``estimator`` (PMTRidge ``response="clip"``,
    PMTPooledRidge or DPRidge).

    Validation order: the parameters, the schema and shapes, the public rows and bounds, then the pass
    over the private rows (bad entries raise :class:`PrivateInputError` here). No noise is drawn.
    Arguments as in :func:`fit_dask`.
    """
    if isinstance(estimator, DPRidgeOracle) or type(estimator) not in (PMTRidge, DPRidge, PMTPooledRidge):
        raise TypeError(f"{type(estimator).__name__} is not supported on Dask; use PMTRidge, PMTPooledRidge or "
                        "DPRidge")
    pmt = not isinstance(estimator, DPRidge)
    if isinstance(estimator, PMTPooledRidge):
        eta = estimator._privacy_params()[4]
    else:
        eta = estimator._check_params()[4]
    if isinstance(estimator, PMTRidge) and estimator.response != "clip":
        raise ValueError("response='joint' is not supported on Dask yet; use response='clip'")
    _no_private_bounds(estimator, "response_bound", "clip_radius")
    with _reading(source, source["columns"] if source else None):
        data, names = private_array(X, y)  # counts the rows when the chunks are unknown (CSV)
    n, p = int(data.shape[0]), int(data.shape[1]) - 1
    if p < 1:
        raise ValueError("X must have at least one column")
    d = _check_n_ge_d(n, p, estimator.fit_intercept)
    need_y_pub = estimator.response_bound is None or isinstance(estimator, PMTPooledRidge)
    Xq, yq = _public(X_pub, y_pub, p, need_X_pub=pmt, need_y_pub=need_y_pub)
    B_y = estimator._response_bound(yq, None, n, eta)
    if pmt:
        moment = public_moment(Xq, fit_intercept=estimator.fit_intercept, on_singular=estimator.on_singular,
                               estimator=getattr(estimator, "public_moment", "sample"))
        R = pmt_radius(d, n, eta)
        whiten, radius, args = moment.Sigma_pub_inv_sqrt, R, (moment, R, B_y, Xq, yq)
    else:
        C = estimator._clip_radius(None, d, n, eta)
        whiten, radius, args = None, C, (C, B_y, Xq)
    stats, G, xty = blockwise_statistics(data, names, fit_intercept=estimator.fit_intercept, whiten=whiten,
                                         radius=radius, B_y=B_y, n=n, source=source, return_raw=True)
    return DaskStatistics(estimator, stats, p, names, G, xty, args)


def fit_dask(estimator, X, y, X_pub=None, y_pub=None, *, source=None):
    """Fit :class:`PMTRidge` (``response="clip"``), :class:`PMTPooledRidge` or :class:`DPRidge` on Dask.

    Called by the estimators' ``fit`` when ``X`` or ``y`` is a Dask collection: :func:`dask_statistics`
    (validation and the one pass), then the estimator's own release (the only place noise is drawn).

    Parameters
    ----------
    estimator : PMTRidge, PMTPooledRidge or DPRidge
    X : dask.array.Array of shape (n, p) or dask.dataframe.DataFrame
    y : dask.array.Array of shape (n,), dask.dataframe.Series or in-memory array
    X_pub, y_pub : in-memory arrays, as for the estimator's ``fit``
    source : dict, optional
        File provenance (see :func:`blockwise_statistics`).

    Returns
    -------
    estimator
        Fitted; ``transform_`` is None (the transformed rows are never held), ``report_`` as in memory
        (``kappa_raw``, ``kappa_pmt``, ``frac_truncated`` and ``frac_y_clipped`` computed in the same pass).

    Raises
    ------
    PrivateInputError, ValueError, TypeError
        Before any noise is drawn.
    """
    return _release(estimator, dask_statistics(estimator, X, y, X_pub, y_pub, source=source))


def _release(est, ds):
    """The estimator's own release (noise, solve, report) from the statistics of the pass."""
    if isinstance(est, DPRidge):
        C, B_y, Xq = ds._args
        return est._release(ds.stats, C, B_y, ds.p, Xq)
    moment, R, B_y, Xq, yq = ds._args
    est.transform_ = None
    if isinstance(est, PMTPooledRidge):
        return est._release(ds.stats, moment, R, B_y, ds.p, Xq, yq)
    return est._release(ds.stats, moment, R, B_y, ds.p)


# --------------------------------------------------------------------------------------------
# files: Parquet / CSV globs
# --------------------------------------------------------------------------------------------
def _expand(paths):
    pats = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files = []
    for pat in pats:
        pat = os.fspath(pat)
        if os.path.isdir(pat):
            hits = sorted(f for f in glob.glob(os.path.join(pat, "*")) if f.lower().endswith(_PARQUET_EXT + _CSV_EXT))
        else:
            hits = sorted(glob.glob(pat)) if glob.has_magic(pat) else ([pat] if os.path.exists(pat) else [])
        if not hits:
            raise FileNotFoundError(f"no file matches {pat!r}")
        files += hits
    return files


def _format(files):
    kinds = {"parquet" if f.lower().endswith(_PARQUET_EXT) else "csv" if f.lower().endswith(_CSV_EXT) else "?"
             for f in files}
    if kinds == {"?"} or "?" in kinds or len(kinds) > 1:
        raise ValueError(f"the private files must all be Parquet ({', '.join(_PARQUET_EXT)}) or all CSV "
                         f"({', '.join(_CSV_EXT)}); got {sorted(set(os.path.splitext(f)[1] for f in files))}")
    return kinds.pop()


def _columns(files, fmt, sep):
    import pandas as pd

    if fmt == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(files[0]).names)
    return [str(c) for c in pd.read_csv(files[0], sep=sep, nrows=0).columns]


def read_private(paths, target, features=None, *, sep=",", blocksize="64MB"):
    """Open private Parquet or CSV files lazily with :func:`dask.dataframe.read_parquet` / ``read_csv``.

    Parameters
    ----------
    paths : str, path or list of them
        Files, directories (their Parquet/CSV files) or glob patterns (``"data/*.parquet"``).
    target : str
        Response column.
    features : list of str, optional
        Feature columns in order; default every column except the target.
    sep : str, default ","
        CSV delimiter.
    blocksize : str or int, default "64MB"
        CSV bytes per partition (Dask's ``blocksize``); Parquet is split by row groups.

    Returns
    -------
    X : dask.dataframe.DataFrame
    y : dask.dataframe.Series
    source : dict
        ``{"files", "format", "read_kwargs", "columns"}`` for :func:`fit_dask` error messages.

    Raises
    ------
    FileNotFoundError
        No file matches.
    ValueError
        Mixed or unknown formats; target or features missing from the files.
    """
    _, dd = _dask()
    files = _expand(paths)
    fmt = _format(files)
    cols = _columns(files, fmt, sep)
    if target not in cols:
        raise ValueError(f"target column {target!r} is not in {files[0]}; columns: {cols}")
    feats = [c for c in cols if c != target] if features is None else [str(f) for f in features]
    missing = [f for f in feats if f not in cols]
    if missing or not feats or target in feats:
        raise ValueError(f"features must be columns of {files[0]} other than the target; missing: {missing}; "
                         f"columns: {cols}")
    use = feats + [target]
    if fmt == "parquet":
        kw = {}
        ddf = dd.read_parquet(files, columns=use)
    else:
        kw = {"sep": sep}
        ddf = dd.read_csv(files, usecols=use, dtype={c: "float64" for c in use}, blocksize=blocksize, **kw)
    return ddf[feats], ddf[target], {"files": files, "format": fmt, "read_kwargs": kw, "columns": use}


def _one_file_problems(path, fmt, columns, read_kwargs):
    """Error path only: the first problem per column in one file (list of dicts)."""
    import pandas as pd

    found = {}

    def note(col, problem, count, row):
        key = (col, problem)
        if key in found:
            found[key]["count"] += count
        else:
            where = f"file {path}, " + (f"row {row} (0-based)" if fmt == "parquet" else f"line {row}")
            found[key] = {"column": col, "problem": problem, "count": count, "where": where}

    if fmt == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        have = set(pf.schema_arrow.names)
        for c in columns:
            if c not in have:
                note(c, "missing column", 1, "-")
        offset = 0
        for batch in pf.iter_batches(columns=[c for c in columns if c in have], batch_size=SLICE_ROWS):
            frame = batch.to_pandas()
            for c in frame.columns:
                s = frame[c]
                if s.dtype.kind not in "biuf":
                    v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
                    bad = np.flatnonzero(~np.isfinite(v))
                    if bad.size or s.dtype.kind not in "biufc":
                        note(c, f"non-numeric ({s.dtype})", int(max(bad.size, 1)), offset + int(bad[0] if bad.size else 0))
                    continue
                _numeric_problems(note, c, s.to_numpy(dtype=float), offset, header=0)
            offset += len(frame)
        return list(found.values())
    offset = 0
    for frame in pd.read_csv(path, usecols=lambda c: c in columns, dtype=str, keep_default_na=False,
                             chunksize=SLICE_ROWS, **read_kwargs):
        for c in frame.columns:
            s = frame[c].str.strip()
            v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
            empty = (s == "").to_numpy()
            unreadable = np.isnan(v) & ~empty & ~s.str.lower().isin(["nan", "na", "n/a", "null"]).to_numpy()
            if empty.any():
                note(c, "empty (NaN)", int(empty.sum()), offset + int(np.flatnonzero(empty)[0]) + 2)
            if unreadable.any():
                i = int(np.flatnonzero(unreadable)[0])
                note(c, f"non-numeric (e.g. {s.iloc[i]!r})", int(unreadable.sum()), offset + i + 2)
            _numeric_problems(note, c, np.where(empty | unreadable, 0.0, v), offset, header=2)
        offset += len(frame)
    return list(found.values())


def _numeric_problems(note, col, v, offset, *, header):
    fin = np.isfinite(v)
    if not fin.all():
        note(col, "NaN or infinite", int((~fin).sum()), offset + int(np.flatnonzero(~fin)[0]) + header)
    with np.errstate(invalid="ignore"):
        big = np.abs(np.where(fin, v, 0.0)) > MAX_ABS_VALUE
    if big.any():
        note(col, f"|value| > {MAX_ABS_VALUE:g}", int(big.sum()), offset + int(np.flatnonzero(big)[0]) + header)


def _file_problems(source, names):
    """Error path only: look at every file (in parallel, with :func:`dask.bag`-style ``dask.delayed``)."""
    import dask

    cols = source.get("columns", names)
    tasks = [dask.delayed(_one_file_problems)(f, source["format"], cols, source.get("read_kwargs", {}))
             for f in source["files"]]
    out = []
    for lst in dask.compute(*tasks):
        out += lst
    return out


# --------------------------------------------------------------------------------------------
# public rows and the file-level entry point (for the CLI)
# --------------------------------------------------------------------------------------------
def read_public(path, target, features, *, sep=None):
    """Public rows from one CSV (validated by :func:`engine.datasets.upload.read_csv_upload`) or Parquet file.

    Returns
    -------
    X_pub : ndarray of shape (n_pub, p)
    y_pub : ndarray of shape (n_pub,)
    """
    path = os.fspath(path)
    if path.lower().endswith(_PARQUET_EXT):
        import pandas as pd

        frame = pd.read_parquet(path)
        missing = [c for c in list(features) + [target] if c not in frame.columns]
        if missing:
            raise ValueError(f"public file {path} lacks column(s) {missing}")
        return (_check_X(frame[list(features)].to_numpy(), f"X_pub ({path})"),
                _check_y(frame[target].to_numpy(), len(frame), f"y_pub ({path})"))
    from engine.datasets.upload import read_csv_upload

    ds = read_csv_upload(path, target=target, features=list(features), task="regression", sep=sep)
    X, y = ds.to_numpy()
    return X, y


@contextlib.contextmanager
def scheduler_context(scheduler=None):
    """Dask's local threaded scheduler (None), a named local scheduler, or a ``dask.distributed`` cluster.

    Parameters
    ----------
    scheduler : None, "threads", "processes", "synchronous", a ``tcp://host:port`` address or a
        ``distributed.Client``
    """
    import dask

    if scheduler is None or scheduler == "threads":
        with dask.config.set(scheduler="threads"):
            yield None
    elif scheduler in ("processes", "synchronous", "sync", "single-threaded"):
        with dask.config.set(scheduler=scheduler):
            yield None
    elif isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client

        with Client(scheduler) as client:
            yield client
    elif hasattr(scheduler, "submit"):  # a distributed.Client
        with dask.config.set(scheduler=scheduler):
            yield scheduler
    else:
        raise ValueError(f"scheduler must be None, 'threads', 'processes', 'synchronous' or an address "
                         f"'tcp://host:port', got {scheduler!r}")


def run_from_files(paths, target, features=None, *, public, method="pmt", scheduler=None, sep=",",
                   statistics_only=False, **params):
    """Fit PMT ridge or DP-RR on private Parquet/CSV files out of core (the CLI's ``--engine dask``).

    Parameters
    ----------
    paths : str, path or list
        Private files or globs (``"data/*.parquet"``, ``"data/*.csv"``); see :func:`read_private`.
    target : str
    features : list of str, optional
    public : str or path
        One public CSV or Parquet file with the same columns (held in memory; never inferred from the
        private files).
    method : {"pmt", "dp-rr", "pmt-pooled"}, default "pmt"
    scheduler : see :func:`scheduler_context`
    sep : str, default ","
        CSV delimiter of the private files.
    statistics_only : bool, default False
        Return the :class:`DaskStatistics` of the pass (for many releases: epsilons, lams, seeds) instead
        of one fitted estimator.
    **params
        Estimator parameters (``epsilon``, ``delta``, ``lam``, ``eta``, ``random_state``, ...).

    Returns
    -------
    PMTRidge or DPRidge
        Fitted (or :class:`DaskStatistics` with ``statistics_only``).

    Raises
    ------
    PrivateInputError
        Bad private entries, naming file and column (no noise drawn).
    """
    if method not in DASK_METHODS:
        raise ValueError(f"method must be one of {sorted(DASK_METHODS)} on Dask, got {method!r}")
    est = DASK_METHODS[method](**params)
    X, y, source = read_private(paths, target, features, sep=sep)
    X_pub, y_pub = read_public(public, target, list(X.columns))
    with scheduler_context(scheduler):
        ds = dask_statistics(est, X, y, X_pub, y_pub, source=source)
    if statistics_only:
        return ds
    return ds.release(**{k: v for k, v in params.items() if k in RELEASE_PARAMS})
