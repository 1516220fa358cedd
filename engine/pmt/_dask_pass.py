"""The one pass of the Dask path: the private rows as one Dask array, and their blockwise statistics.

:func:`private_array` turns Dask arrays or data frames into one float64 array ``[X | y]`` with known
row chunks (checking the schema first). :func:`blockwise_statistics` maps every block to one packed row
of statistics (its row count, ``A = Z^T Z``, ``b = Z^T clip(y, +-B_y)``, the raw ``Xa^T Xa`` and
``Xa^T y``, the truncation and clipping counts, per column the numbers of non-finite and too large
entries) and lets Dask's tree reduction add the rows. Bad entries raise :class:`PrivateInputError`
on the driver after the pass, naming column and chunk (or file), before any noise is drawn. The rows
are bounded exactly as in memory (:func:`engine.pmt.pmt_transform`, :func:`engine.pmt.truncate_rows`,
:func:`engine.pmt.ridge.sufficient_statistics`). Specification: ``docs/specs/PMT.md`` sections 3 and 5.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from engine.pmt._base import MAX_ABS_VALUE
from engine.pmt._dask_files import SLICE_ROWS, _dask, _file_problems
from engine.pmt._bounds import add_intercept, truncate_rows
from engine.pmt.ridge import SSPStatistics, sufficient_statistics


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


def _block_statistics(block, *, p, fit_intercept, whiten, radius, B_y, shift=None, div=None):
    """One block ``[X | y]`` -> one packed row of statistics (see :func:`_layout`). Runs on the workers.

    The rows are transformed exactly as in memory (:func:`engine.pmt.pmt_transform`:
    ``add_intercept(X) @ Sigma_pub^{-1/2}``, then :func:`engine.pmt.truncate_rows` at R; DP-RR: clipped
    at C) and summed with :func:`engine.pmt.ridge.sufficient_statistics`, in slices of
    :data:`SLICE_ROWS` rows. ``shift``, ``div`` (length p + 1): the public centring ``(B - shift) / div``
    applied after the checks of the raw entries (:mod:`engine.pmt._public_scale`).
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
    if shift is not None:
        B = (B - shift) / div
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


def blockwise_statistics(data, names, *, fit_intercept, whiten, radius, B_y, n, source=None, return_raw=False,
                         shift=None, div=None):
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
    shift, div : ndarray of shape (p + 1,), optional
        A public centring and scaling of ``[X | y]``, applied to each block after its entries are checked (the
        statistics, ``G_raw`` and ``xty_raw`` are then of the centred rows).

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
                           B_y=B_y, shift=shift, div=div, chunks=((1,) * nb, (K,)), dtype=float)
    from engine.pmt._blas import blas_limit

    with _reading(source, names), blas_limit(1):  # small-d block products: one BLAS thread each (engine.pmt._blas)
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
