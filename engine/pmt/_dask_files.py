"""Private Parquet / CSV files for the Dask path: opening them lazily, and naming the file behind an error.

:func:`read_private` opens private files (globs, directories) with :func:`dask.dataframe.read_parquet`
or ``read_csv`` without reading any rows beyond the header or the Parquet schema; :func:`read_public`
reads the one public file in memory (CSV through :func:`engine.datasets.upload.read_csv_upload`).
:func:`_file_problems` is the error path only: when the blockwise pass met bad entries it looks at the
files again (in parallel) so that the error names file, column and row. Used by
:mod:`engine.pmt._dask_pass` and :mod:`engine.pmt.dask`.
"""

from __future__ import annotations

import glob
import os

import numpy as np

from engine.pmt._base import MAX_ABS_VALUE, _check_X, _check_y

#: Rows per slice inside a block (and per batch when a file is re-read on the error path): caps the
#: temporaries of one task at about 5 x 2^16 x d x 8 bytes.
SLICE_ROWS = 1 << 16
_PARQUET_EXT = (".parquet", ".parq", ".pq")
_CSV_EXT = (".csv", ".csv.gz", ".txt", ".tsv")


def _dask():
    try:
        import dask.array as da
        import dask.dataframe as dd
    except ImportError as e:  # pragma: no cover - dask is a requirement
        raise ImportError("the Dask engine needs dask: pip install 'dask[array,dataframe]' distributed pyarrow") from e
    return da, dd



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
