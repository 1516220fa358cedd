"""The validating CSV loader for user uploads.

:func:`read_csv_upload` parses a user's CSV (a path, raw bytes, or a file-like object such as
Streamlit's ``UploadedFile``) and rejects every bad input listed in the project's conventions with a
:class:`ValueError` that names the column or value and what is accepted; :func:`read_csv_columns`
reads only the header (for column pickers). Nothing is written to disk.
"""

from __future__ import annotations

import codecs
import collections
import csv
import hashlib
import io
import numbers
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from engine.datasets._base import MAX_ABS_VALUE, MAX_UPLOAD_BYTES, TASKS, Dataset, _check_int
from engine.datasets.guard import check_encoding, check_names, check_raw_limits, looks_like_json

#: Delimiters :func:`read_csv_upload` sniffs among, in order of preference on ties.
_DELIMITERS: tuple[str, ...] = (",", ";", "\t")
_DELIM_NAMES = {",": "',' (comma)", ";": "';' (semicolon)", "\t": "tab"}

#: A number written with a decimal comma (``1,5``, ``-0,25``, ``3,``), as a whole cell.
_DECIMAL_COMMA = re.compile(r"\s*[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?\s*")



def _fmt_bytes(b: int) -> str:
    return f"{b / 2**20:.1f} MB" if b >= 2**20 else f"{b} bytes"


def _read_source(source, max_bytes: int) -> tuple[bytes, str]:
    """Return (raw bytes, file name) from a path, bytes, or a file-like object; enforce the size cap."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"no such file: {str(path)!r}")
        size = path.stat().st_size
        if size > max_bytes:
            raise ValueError(f"the file is {_fmt_bytes(size)}, larger than the upload limit of {_fmt_bytes(max_bytes)}")
        return path.read_bytes(), path.name
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
        if len(raw) > max_bytes:  # the same message as for a path of this size
            raise ValueError(f"the file is {_fmt_bytes(len(raw))}, larger than the upload limit of {_fmt_bytes(max_bytes)}")
        name = "data.csv"
    elif hasattr(source, "read"):
        size = getattr(source, "size", None)
        if isinstance(size, numbers.Integral) and size > max_bytes:
            raise ValueError(f"the file is {_fmt_bytes(int(size))}, larger than the upload limit of {_fmt_bytes(max_bytes)}")
        if hasattr(source, "getvalue"):
            raw = source.getvalue()
        else:
            if hasattr(source, "seek"):
                try:
                    source.seek(0)
                except (OSError, ValueError):
                    pass
            raw = source.read(max_bytes + 1)
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        if isinstance(size, numbers.Integral) and len(raw) > max_bytes:
            raise ValueError(f"the file is {_fmt_bytes(len(raw))}, larger than the upload limit of {_fmt_bytes(max_bytes)}")
        name = os.path.basename(str(getattr(source, "name", "") or "data.csv"))
    else:
        raise TypeError(
            f"source must be a path, bytes or a file-like object with .read(), got {type(source).__name__}"
        )
    if len(raw) > max_bytes:
        raise ValueError(f"the file is larger than the upload limit of {_fmt_bytes(max_bytes)} "
                         f"(read {_fmt_bytes(len(raw))} so far)")
    return raw, name


#: Byte-order marks of the Unicode encodings a spreadsheet may save a CSV in (longest first: the UTF-32 LE
#: mark starts with the UTF-16 LE one).
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def _decode(raw: bytes) -> str:
    """The file's text: UTF-8 (or UTF-16 / UTF-32 with a byte-order mark), else latin-1; one newline style.

    Raises ValueError for a NUL byte anywhere in a file without a UTF-16/32 byte-order mark (a binary
    file, or UTF-16 saved without its mark) and for a file that claims UTF-16/32 but does not decode.
    """
    encoding = next((enc for bom, enc in _BOMS if raw.startswith(bom)), None)
    if encoding in ("utf-16", "utf-32"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"the file starts with a {encoding.upper()} byte-order mark but is not valid {encoding.upper()} "
                f"(byte {exc.start}); save it again as CSV in UTF-8"
            ) from None
    else:
        if b"\x00" in raw:
            at = raw.index(b"\x00")
            raise ValueError(
                f"the file looks binary (it contains NUL bytes), not a CSV text file (the first NUL is at byte "
                f"{at}; or it is UTF-16 saved without a byte-order mark): export it as CSV (comma, semicolon or "
                "tab separated, UTF-8) first"
            )
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")  # every byte sequence decodes; Western-European spreadsheets
    if "\x00" in text:
        raise ValueError("the file looks binary (it contains NUL characters), not a CSV text file: "
                         "export it as CSV (comma, semicolon or tab separated, UTF-8) first")
    # One line ending: CRLF (Windows), CR (classic Mac OS, some Excel exports) and LF all become "\n".
    # pandas' reader splits rows on a lone CR as well, Python's csv module does not: normalising keeps
    # the header scan, the row diagnostics and the parse in agreement.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _encoding_of(raw: bytes) -> str:
    """What :func:`_decode` decodes ``raw`` as: "utf-16", "utf-32", "utf-8" or "latin-1" (the fallback)."""
    enc = next((enc for bom, enc in _BOMS if raw.startswith(bom)), None)
    if enc in ("utf-16", "utf-32"):
        return enc
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


#: Excel's first line naming the separator (``sep=;``), which Excel writes and reads but is no CSV row.
_SEP_LINE = re.compile(r"[ \t]*\"?sep=(.?)\"?[ \t]*(?:\n|$)", re.IGNORECASE)


def _load_text(raw: bytes, sep: str | None, *, digits: bool = True) -> tuple[str, str | None, str]:
    """The checked text of an upload: (text, separator or None to sniff, encoding).

    In order: the raw-byte limits of :func:`engine.datasets.guard.check_raw_limits` (fields per row,
    characters per field, digits in a row; linear in the file, bounded memory), the decoding of
    :func:`_decode`, encoding damage (:func:`engine.datasets.guard.check_encoding`), a JSON document uploaded as
    CSV, and Excel's ``sep=`` first line (the separator it names is used and the line dropped).
    """
    encoding = _encoding_of(raw)
    if encoding not in ("utf-16", "utf-32"):
        check_raw_limits(raw, digits=digits)
    text = _decode(raw)
    if encoding in ("utf-16", "utf-32"):
        check_raw_limits(text.encode("utf-8"), digits=digits)
    check_encoding(raw, text, encoding)
    if looks_like_json(text):
        raise ValueError("the file holds JSON (it starts with '{' or '['), not CSV: export the table as CSV with a "
                         "header row (a moments file belongs in the public-information section's moments upload)")
    m = _SEP_LINE.match(text)
    if m is not None:
        named = m.group(1)
        if named not in _DELIMITERS:
            raise ValueError(f"the file's first line 'sep={named}' (Excel's separator line) names the separator "
                             f"{named!r}; accepted are ',', ';' and tab: re-save the file as CSV")
        if sep is not None and sep != named:
            raise ValueError(f"the file's first line 'sep={named}' (Excel's separator line) names "
                             f"{_DELIM_NAMES[named]}, but the separator {_DELIM_NAMES[sep]} was chosen")
        text, sep = text[m.end():], named
    return text, sep, encoding


def _name(col, limit: int = 60) -> str:
    """A column name for an error message: quoted (repr) and cut to ``limit`` characters."""
    col = str(col)
    return repr(col) if len(col) <= limit else repr(col[: limit - 3]) + f"... ({len(col)} characters)"


def _names_list(names, limit: int = 20) -> str:
    shown = ", ".join(_name(c) for c in list(names)[:limit])
    return shown + (f", ... ({len(names)} columns in all)" if len(names) > limit else "")


def _csv_problem(exc: csv.Error, where: str) -> str:
    """Our words for a :class:`csv.Error` met while reading ``where`` (e.g. "the header line")."""
    text = str(exc)
    if "field larger than field limit" in text:
        return (f"{where} could not be read: a field is longer than {csv.field_size_limit():,} characters (a very "
                "long line, or a quote '\"' that is never closed and runs on through the file); column names and "
                "values must be short: check the file's quotes")
    return (f"{where} is not valid CSV (Python's csv module: {text.split(' - ')[0]}); check its quotes and "
            "delimiters, or save the file again as CSV")


#: Characters of the text the header scan reads (a header longer than this is cut and then fails its checks).
_HEAD_CHARS = 8 * 2**20


def _first_record(text: str, delim: str) -> list[str] | None:
    """The first non-blank record of ``text`` split at ``delim`` with CSV quoting (a quoted name may hold a
    newline), or None when every line is blank."""
    try:  # the head only: io.StringIO copies its text (a header is far shorter than 8 MB: the raw-byte limits)
        for record in csv.reader(io.StringIO(text[:_HEAD_CHARS]), delimiter=delim):
            if record and not (len(record) == 1 and not record[0].strip()):
                return record
    except csv.Error as exc:
        raise ValueError(_csv_problem(exc, "the header line")) from None
    return None


def _sniff_delimiter(text: str) -> str:
    """Pick the delimiter among ',', ';', tab that splits the header record into the most fields."""
    best, best_count = ",", 1
    for delim in _DELIMITERS:
        count = len(_first_record(text, delim) or ())
        if count > best_count:
            best, best_count = delim, count
    return best


def _row_list(mask: np.ndarray, limit: int = 5) -> str:
    """'data row 3' / 'data rows 3, 7, ...' for the True entries of mask (1-based, header not counted)."""
    rows = (np.flatnonzero(mask) + 1).tolist()
    shown = ", ".join(str(r) for r in rows[:limit])
    return ("data row " if len(rows) == 1 else "data rows ") + shown + (", ..." if len(rows) > limit else "")


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _decimal_comma_hint(series: pd.Series, unreadable: np.ndarray, delim: str) -> str:
    """A sentence for the "not numeric" error when every unreadable entry is a decimal-comma number."""
    cells = series[unreadable].astype(str)
    if not cells.map(lambda v: _DECIMAL_COMMA.fullmatch(v) is not None).all():
        return ""
    if delim != "," and cells.str.fullmatch(_THOUSANDS).all():
        cell = cells.iloc[0].strip()
        return (f"; these entries, such as {cell!r}, are ambiguous: {cell.replace(',', '')} with a thousands "
                f"separator, or {float(cell.replace(',', '.')):g} with a decimal comma, while the file's other numbers "
                "use a decimal point: write them without thousands separators")
    if delim == ",":
        return (
            "; these entries are numbers written with a decimal comma (like 1,5), which a comma-separated file "
            "cannot carry unambiguously ('1,000' could be one thousand or 1.0): re-save the file with ';' or tab "
            "as the separator, or with '.' as the decimal mark"
        )
    return "; these entries look like numbers written with a decimal comma (like 1,5), but the other numbers " \
        "in the file use a decimal point: use one decimal mark throughout"


#: A whole cell that reads as a number with thousands separators (``1,234``, ``-12,000``, ``1,234,567``).
_THOUSANDS = r"\s*[+-]?[1-9]\d{0,2}(?:,\d{3})+\s*"
#: A whole cell with a decimal comma that no thousands separator explains (``2,5``, ``0,125``, ``1,2345``).
_PLAIN_DECIMAL_COMMA = r"\s*[+-]?(?:\d*,\d*)(?:[eE][+-]?\d+)?\s*"


def _check_thousands(frame: pd.DataFrame, alt: pd.DataFrame, delim: str) -> None:
    """Before reading ``;``/tab numbers with a decimal comma: refuse a file whose commas may as well be
    thousands separators.

    A cell such as ``1,234`` or ``12,000`` (1-3 digits not starting with 0, then groups of exactly three digits
    after each comma) is one thousand two hundred and thirty-four, or 1.234. The documented rule: one mark per
    file. One entry anywhere in the columns that the decimal-comma reading turns numeric with a comma that no
    thousands separator explains (``2,5``, ``0,125``, ``1,2345``) makes the file's comma its decimal mark, and
    every such cell is read as a decimal; without one, the file is refused with an example.
    """
    turned = [c for c in frame.columns
              if not pd.api.types.is_numeric_dtype(frame[c].dtype) and pd.api.types.is_numeric_dtype(alt[c].dtype)]
    first = None
    for col in turned:
        cells = frame[col].astype(str)
        thousands = cells.str.fullmatch(_THOUSANDS).to_numpy() & frame[col].notna().to_numpy()
        if (cells.str.fullmatch(_PLAIN_DECIMAL_COMMA).to_numpy() & ~thousands & frame[col].notna().to_numpy()).any():
            return  # the file's decimal mark is the comma
        if first is None and thousands.any():
            first = (col, int(np.flatnonzero(thousands)[0]))
    if first is None:
        return
    col, at = first
    cell = str(frame[col].iloc[at]).strip()
    as_thousands = cell.replace(",", "")
    as_decimal = float(cell.replace(",", "."))
    raise ValueError(
        f"column {_name(col)} holds numbers such as {cell!r} (data row {at + 1}) that a "
        f"{_DELIM_NAMES[delim]}-separated file leaves ambiguous: {as_thousands} with a thousands separator, or "
        f"{as_decimal:g} with a decimal comma, and no number in the file shows which (a decimal comma followed by "
        f"other than three digits, like 2,5); write the numbers without thousands separators (like {as_thousands}), "
        "or with '.' as the decimal mark")


def _numeric_column(series: pd.Series, col: str, role: str, delim: str = ",") -> np.ndarray:
    """Convert one column to float64, rejecting non-numeric, missing, infinite and huge entries."""
    what = f"{role} column {_name(col)}"
    if series.dtype == bool:
        values = series.to_numpy(dtype=np.float64)
    else:
        try:
            values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
        except OverflowError:  # pragma: no cover - the raw check refuses more than MAX_DIGITS digits first
            raise ValueError(f"{what} has a number beyond float64's range; only finite numbers with |value| <= "
                             f"{MAX_ABS_VALUE:g} are accepted") from None
    missing_in_file = series.isna().to_numpy()
    if missing_in_file.all():
        raise ValueError(f"{what} is empty: all {len(series)} values are missing (NaN); drop the column")
    unreadable = np.isnan(values) & ~missing_in_file
    if unreadable.any():
        raise ValueError(
            f"{what} is not numeric: {int(unreadable.sum())} of {len(series)} values cannot be read as numbers "
            f"({_row_list(unreadable)}){_decimal_comma_hint(series, unreadable, delim)}; only numeric columns are "
            "accepted as features or a regression target: remove the column or encode it as numbers"
        )
    nan = np.isnan(values)
    if nan.any():
        raise ValueError(
            f"{what} has {_count(int(nan.sum()), 'missing (NaN) value')} ({_row_list(nan)}); "
            "missing values are not accepted: remove or impute those rows first"
        )
    inf = np.isinf(values)
    if inf.any():
        raise ValueError(
            f"{what} has {_count(int(inf.sum()), 'infinite value')} ({_row_list(inf)}): written as inf or infinity, "
            f"or a number beyond float64's range (about 1.8e308); only finite numbers with |value| <= "
            f"{MAX_ABS_VALUE:g} are accepted"
        )
    huge = np.abs(values) > MAX_ABS_VALUE
    if huge.any():
        raise ValueError(
            f"{what} has {_count(int(huge.sum()), 'value')} with magnitude above {MAX_ABS_VALUE:g} "
            f"({_row_list(huge)}); they are overflow-prone (their squares exceed float64's range), "
            f"accepted are finite numbers with |value| <= {MAX_ABS_VALUE:g}: rescale the column"
        )
    return values


def _binary_labels(series: pd.Series, col: str) -> np.ndarray:
    """Labels must be exactly 0/1 (or true/false); both classes must occur. Messages never reveal values."""
    if series.isna().any():
        miss = series.isna().to_numpy()
        raise ValueError(
            f"target column {_name(col)} has {_count(int(miss.sum()), 'missing label')} ({_row_list(miss)}); "
            "every row needs a label 0 or 1"
        )
    if series.dtype == bool:
        values = series.to_numpy(dtype=np.float64)
    elif not pd.api.types.is_numeric_dtype(series):
        lowered = series.astype(str).str.strip().str.lower().map({"true": 1.0, "false": 0.0})
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
        values = np.where(np.isnan(values), lowered.to_numpy(dtype=np.float64), values)
    else:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            f"classification target column {_name(col)} must hold only the labels 0 and 1 (or true/false); "
            f"{_count(int(bad.sum()), 'row')} with other values ({_row_list(bad)}): encode the positive class "
            "as 1 and the negative class as 0, or choose task 'regression'"
        )
    if np.all(values == values[0]):
        raise ValueError(
            f"classification target column {_name(col)} has only one class: both labels 0 and 1 must occur"
        )
    return values.astype(np.int64)


def _parse_header(text: str, sep: str | None) -> tuple[str, list[str]]:
    """Find the header line, choose the delimiter, and validate the column names."""
    if not text.strip():
        raise ValueError("the file is empty: expected a header line with column names and at least 2 data rows")
    delim = sep if sep is not None else _sniff_delimiter(text)
    record = _first_record(text, delim)
    if record is None:  # pragma: no cover - a non-blank text has a non-blank record
        raise ValueError("the file is empty: expected a header line with column names and at least 2 data rows")
    names = [h.strip() for h in record]
    if len(names) < 2:
        header = names[0]
        seen = [_DELIM_NAMES[c] for c in _DELIMITERS if c != delim and c in header]
        hint = (
            f"; the header contains {seen[0]}, so the file looks {seen[0].split()[0]}-separated: choose that delimiter"
            if seen
            else "; other delimiters such as '|' or spaces are not accepted: re-save the file as CSV"
        )
        raise ValueError(
            f"the file parsed into a single column ({_name(header)}) with delimiter {_DELIM_NAMES[delim]}: "
            f"need at least 2 columns (features and a target) separated by ',', ';' or tab{hint}"
        )
    check_names(names)
    _check_row_separator(text, delim, names)
    counts = collections.Counter(names)
    dupes = sorted(c for c, k in counts.items() if k > 1)
    if dupes:
        raise ValueError(f"column name {_name(dupes[0])} appears more than once in the header; column names must be unique")
    if any(c == "" for c in names):
        raise ValueError(f"column {names.index('') + 1} has an empty name in the header; every column needs a name")
    return delim, names


def _check_row_separator(text: str, delim: str, names: list[str]) -> None:
    """Refuse a header split by one separator over data rows split by another (a ';' header over ',' rows)."""
    try:
        records = csv.reader(io.StringIO(text[: 2**20]), delimiter=delim)
        data = (r for r in records if r and not (len(r) == 1 and not r[0].strip()))
        next(data, None)
        first = next(data, None)
    except csv.Error:
        return
    if first is None or len(first) != 1:
        return
    for other in _DELIMITERS:
        if other == delim:
            continue
        try:
            k = len(next(csv.reader(io.StringIO(first[0]), delimiter=other), []))
        except csv.Error:  # pragma: no cover - one short line
            continue
        if k == len(names):
            raise ValueError(
                f"the header line is {_DELIM_NAMES[delim]}-separated ({len(names)} columns) but the data rows are "
                f"{_DELIM_NAMES[other]}-separated (data row 1 has {k} fields at {other!r} and 1 at {delim!r}); use one "
                "separator throughout the file")


def _parse_problem(text: str, delim: str, names: list[str], exc: Exception) -> str:
    """Our words for a failed parse of the data rows: an unclosed quote, or the first row with too many fields."""
    what = f"the file could not be parsed as {_DELIM_NAMES[delim]}-separated CSV"
    if "EOF inside string" in str(exc):
        return (f"{what}: a quote '\"' is opened but never closed, so the quoted field runs on to the end of the "
                "file; close the quote or remove it")
    long_row = None
    try:
        records = csv.reader(io.StringIO(text), delimiter=delim)
        data = (r for r in records if r and not (len(r) == 1 and not r[0].strip()))
        next(data, None)  # the header
        for i, record in enumerate(data, start=1):
            if len(record) > len(names):
                long_row = (i, len(record))
                break
    except csv.Error:
        pass
    if long_row is None and not isinstance(exc, pd.errors.ParserWarning) and "Expected" not in str(exc):
        return f"{what} (check its quotes and that every row has one field per column); save it again as CSV"
    where = f" (data row {long_row[0]} has {long_row[1]})" if long_row else ""
    return (f"{what}: a row has more fields than the header's {len(names)} columns{where}; every row must have one "
            "field per column")


def read_csv_columns(source, *, max_bytes: int = MAX_UPLOAD_BYTES, sep: str | None = None) -> list[str]:
    """The column names of a CSV upload (header only), e.g. to offer target/feature pickers.

    Applies the same size cap, encoding, delimiter sniffing and header checks as
    :func:`read_csv_upload` (and raises the same :class:`ValueError` messages for them); the data
    rows are not validated.

    Parameters
    ----------
    source : str, os.PathLike, bytes, or file-like
    max_bytes : int, default 50 MiB
    sep : {",", ";", "\\t"}, optional

    Returns
    -------
    list of str

    Examples
    --------
    >>> read_csv_columns(b"x;y;label\\n1;2;0\\n")
    ['x', 'y', 'label']
    """
    max_bytes = _check_int(max_bytes, "max_bytes", 1)
    if sep is not None and sep not in _DELIMITERS:
        raise ValueError(f"sep must be one of ',', ';', '\\t' (or None to sniff), got {sep!r}")
    raw, _ = _read_source(source, max_bytes)
    text, sep, _ = _load_text(raw, sep)
    return _parse_header(text, sep)[1]


def read_csv_upload(
    source,
    *,
    target: str | None = None,
    features=None,
    task: str | None = None,
    max_bytes: int = MAX_UPLOAD_BYTES,
    sep: str | None = None,
) -> Dataset:
    """Parse and validate a user's CSV into a :class:`Dataset`.

    Parameters
    ----------
    source : str, os.PathLike, bytes, or file-like
        A path to a CSV file, its raw bytes, or an object with ``.read()`` (Streamlit's
        ``UploadedFile`` works: its ``.size`` is checked before reading, its ``.name`` is kept).
    target : str, optional
        Target column. Default: the LAST column.
    features : sequence of str, optional
        Feature columns, in order. Default: every column except the target.
    task : {"regression", "classification", "text-classification"}, optional
        The analysis the target is prepared for: the user's choice. ``"text-classification"`` needs
        exactly one (string) feature column. The task is never inferred from the target's values,
        because they are private: with a rule such as "only 0/1 values means classification" one
        row (a 2 among 0/1 labels) would switch the whole analysis, which tells neighbouring data
        sets apart with certainty. With ``None`` (default) the task follows the column's declared type
        only: ``"classification"`` when the target column is typed boolean (written as
        ``true``/``false`` words, which pandas reads as dtype ``bool``), else ``"regression"``; so
        a 0/1 column is a regression target unless ``task="classification"`` is given. Since the
        target column's declared type belongs to the file's schema, a boolean column in which
        one entry is not a boolean word is not reinterpreted: it is read as a (then failing)
        regression target and the error names the column.
    max_bytes : int, default 50 MiB
        Size cap; a larger file is rejected before it is parsed.
    sep : {",", ";", "\\t"}, optional
        Delimiter. Default: sniffed from the header line (the candidate giving the most fields).
        A ``;``- or tab-separated file whose numbers use a decimal comma (``1,5``) is read with
        ``decimal=","`` when that turns more columns numeric (a comma inside such a number is
        then always the decimal mark: ``1,000`` is 1.0), unless no number in the file has a decimal comma that a
        thousands separator cannot explain (``2,5``): then ``1,234`` is refused as ambiguous, with the example.
        Excel's first line ``sep=;`` names the separator (the line is dropped). A comma-separated file cannot carry
        decimal-comma numbers unambiguously; quoted ones (``"1,5"``) are rejected with an error
        that names the decimal comma. CR-only and CRLF line endings are accepted (every ``\\r`` becomes a
        line break, as pandas' reader treats it). Encoding: UTF-8 (with or without its byte-order mark),
        UTF-16 or UTF-32 with a byte-order mark, else latin-1; encoding damage is refused, named
        (:func:`engine.datasets.guard.check_encoding`, :func:`engine.datasets.guard.check_names`), and so are
        rows over 20,000 fields, fields over 131,072 characters and numbers over 160 digits, checked on the
        raw bytes before parsing (:func:`engine.datasets.guard.check_raw_limits`).

    Returns
    -------
    Dataset
        ``name="upload:<filename>"``, float64 features, float64 (regression) or int64 {0, 1}
        (classification) target, empty citation.

    Raises
    ------
    ValueError
        With a message naming the column or value and what is accepted, for: a file over
        ``max_bytes``; an empty file; a binary file; a header without rows; a single data row; a
        file that parses into one column (wrong delimiter); duplicate column names; a missing target
        or feature column; a non-numeric or all-missing column; NaN, infinite or overflow-prone
        (``|x| > MAX_ABS_VALUE = 1e150``, so 1e308 is rejected) values in a feature or the target; NUL
        bytes anywhere (a binary file, or UTF-16 without its mark); a header field longer than
        ``csv.field_size_limit()`` (131,072 characters); a quote that is never closed; a
        constant column; two identical feature columns; labels other than 0/1 or a single class for
        classification; n <= d (need more rows than features).
    TypeError
        ``source`` of an unsupported type.

    Notes
    -----
    Messages name columns and 1-based data-row numbers (the header is not counted) but, for the
    class-balance check, never the data values (an all-0 and an all-1 target give the same message).
    Nothing is written to disk.

    Examples
    --------
    >>> ds = read_csv_upload(b"a;b;y\\n1;2;0\\n2;1;1\\n3;5;0\\n4;4;1\\n", task="classification")
    >>> ds.name, ds.task, ds.feature_names, ds.n
    ('upload:data.csv', 'classification', ('a', 'b'), 4)
    >>> read_csv_upload(b"a;b;y\\n1;2;0\\n2;1;1\\n3;5;0\\n4;4;1\\n").task  # 0/1 numbers: regression by default
    'regression'
    >>> read_csv_upload(b"a;b;y\\n1;2;false\\n2;1;true\\n3;5;false\\n4;4;true\\n").task  # a boolean column
    'classification'
    """
    max_bytes = _check_int(max_bytes, "max_bytes", 1)
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)} (or None to infer), got {task!r}")
    if sep is not None and sep not in _DELIMITERS:
        raise ValueError(f"sep must be one of ',', ';', '\\t' (or None to sniff), got {sep!r}")

    raw, filename = _read_source(source, max_bytes)
    text, sep, _ = _load_text(raw, sep)
    delim, names = _parse_header(text, sep)

    try:
        with warnings.catch_warnings():
            # pandas only warns (and drops data) when a row has more fields than the header.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.StringIO(text), sep=delim, header=0, names=names, index_col=False,
                                skip_blank_lines=True, skipinitialspace=True)
    except pd.errors.EmptyDataError as exc:
        raise ValueError("the file is empty: expected a header line with column names and at least 2 data rows") from exc
    except (pd.errors.ParserError, pd.errors.ParserWarning, csv.Error) as exc:
        raise ValueError(_parse_problem(text, delim, names, exc)) from None
    def n_text(f: pd.DataFrame) -> int:
        return sum(not pd.api.types.is_numeric_dtype(t) for t in f.dtypes)

    if delim != "," and n_text(frame) > 0:
        # Semicolon and tab files from European spreadsheets often write decimals with a comma ("1,5").
        # Not for comma-separated files: there a quoted "1,000" may as well be one thousand.
        try:
            alt = pd.read_csv(io.StringIO(text), sep=delim, header=0, names=names, index_col=False,
                              skip_blank_lines=True, skipinitialspace=True, decimal=",")
        except (pd.errors.ParserError, ValueError, csv.Error):  # pragma: no cover - the first parse succeeded
            alt = None
        if alt is not None and n_text(alt) < n_text(frame):
            _check_thousands(frame, alt, delim)
            frame = alt
    if len(frame) == 0:
        raise ValueError(f"the file has a header ({len(names)} columns) but no data rows; need at least 2 rows")
    if len(frame) == 1:
        raise ValueError("the file has only one data row; need at least 2 rows (and more rows than features)")

    # --- choose columns ---------------------------------------------------------------------------
    if target is None:
        target = names[-1]
    if target not in names:
        raise ValueError(f"target column {_name(target)} not found; the columns are: {_names_list(names)}")
    if features is None:
        features = [c for c in names if c != target]
    else:
        if isinstance(features, str):
            features = [features]
        features = list(features)
        if not features:
            raise ValueError("features is empty: choose at least one feature column")
        missing = [c for c in features if c not in names]
        if missing:
            raise ValueError(f"feature column {_name(missing[0])} not found; the columns are: {_names_list(names)}")
        if target in features:
            raise ValueError(f"column {_name(target)} is the target and cannot also be a feature")
        dup_feat = sorted(c for c, k in collections.Counter(features).items() if k > 1)
        if dup_feat:
            raise ValueError(f"feature column {_name(dup_feat[0])} is listed more than once")

    if task != "text-classification" and len(frame) <= len(features):
        # The shape first (n and d are public under replace-one): a 10,000-column file is refused at once,
        # before 10,000 columns are validated one by one.
        raise ValueError(
            f"too few rows: n = {len(frame)} rows for d = {len(features)} features; need more rows than features "
            f"(n >= d + 1 = {len(features) + 1})"
        )

    # --- task ---------------------------------------------------------------------------------------
    if task is None:
        # The column's declared type only, never its values (they are private): see the docstring.
        task = "classification" if frame[target].dtype == bool else "regression"

    # --- target ------------------------------------------------------------------------------------
    if task == "regression":
        y_values = _numeric_column(frame[target], target, "target", delim)
        if np.all(y_values == y_values[0]):
            raise ValueError(f"target column {_name(target)} is constant (every row has the same value): nothing to learn")
        y = pd.Series(y_values, name=target)
    else:
        y = pd.Series(_binary_labels(frame[target], target), name=target)

    # --- features ----------------------------------------------------------------------------------
    if task == "text-classification":
        if len(features) != 1:
            raise ValueError(
                f"task 'text-classification' needs exactly one text feature column, got {len(features)}: "
                f"{_names_list(features)}"
            )
        col = features[0]
        s = frame[col]
        blank = s.isna().to_numpy() | (s.astype(str).str.strip() == "").to_numpy()
        if blank.any():
            raise ValueError(
                f"text column {_name(col)} has {_count(int(blank.sum()), 'empty entry').replace('entrys', 'entries')} ({_row_list(blank)}); "
                "every row needs a sentence"
            )
        X = pd.DataFrame({"sentence": s.astype(str).to_numpy()})
        feature_names: tuple[str, ...] = ("sentence",)
    else:
        cols = {c: _numeric_column(frame[c], c, "feature", delim) for c in features}
        for c, v in cols.items():
            if np.all(v == v[0]):
                raise ValueError(
                    f"feature column {_name(c)} is constant (every row has the same value); it carries no information "
                    "and makes the second-moment matrix singular: drop it"
                )
        seen: dict[bytes, str] = {}
        for c, v in cols.items():
            key = hashlib.sha256(np.ascontiguousarray(v + 0.0).tobytes()).digest()
            if key in seen and np.array_equal(cols[seen[key]], v):
                raise ValueError(
                    f"feature columns {_name(seen[key])} and {_name(c)} are identical; the design matrix would be "
                    "rank-deficient: drop one of them"
                )
            seen[key] = c
        X = pd.DataFrame(cols)
        feature_names = tuple(features)
        n, d = len(X), len(feature_names)
        if n <= d:
            raise ValueError(
                f"too few rows: n = {n} rows for d = {d} features; need more rows than features (n >= d + 1 = {d + 1})"
            )

    return Dataset(
        name=f"upload:{filename}",
        X=X,
        y=y,
        task=task,
        feature_names=feature_names,
        target_name=target,
        citation="",
        doi=None,
        description=f"Uploaded file {filename!r}: {len(X)} rows, {len(feature_names)} features, target {_name(target)} "
        f"({task}).",
    )
