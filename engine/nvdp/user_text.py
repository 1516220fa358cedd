"""Bring your own text: a CSV of texts with a label column, validated, encoded and trained in memory.

:func:`read_text_csv` reads an upload (the Data page's size cap, encoding and delimiter rules,
:mod:`engine.datasets.upload`) and checks it for the NVDP explorer: a text column and a label
column (binary or multi-class, any values: they are coded 0..k-1 in sorted order), no empty
text, no text longer than ``max_chars`` characters, at least ``min_rows`` rows and at least
``min_per_class`` rows of every class (the stratified 2/3, 1/6, 1/6 split needs them), at least
two classes. Every problem is a :class:`ValueError` naming the rows and the accepted range,
raised before anything is encoded.

:func:`train_on_texts` encodes the texts (``use_cache=False`` unless the caller opts in: a user's
texts and token states are not written to disk) with a progress callback and a time estimate,
splits them, and trains the clipped and unclipped models in memory (nothing saved), returning the
same ``(ExploreData, models)`` pair as :func:`engine.nvdp.explorer_models.load_or_train`, so every
view of the page works on it. No Streamlit here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.datasets._base import MAX_UPLOAD_BYTES

__all__ = ["TextDataset", "read_text_csv", "train_on_texts", "MAX_CHARS", "MIN_ROWS", "MIN_PER_CLASS", "MAX_ROWS"]

#: Longest accepted text in characters (the encoder reads at most 48 word pieces; longer texts are
#: refused rather than silently cut).
MAX_CHARS = 1000
#: Fewest rows, fewest rows per class, most rows (encoding time grows linearly).
MIN_ROWS = 30
MIN_PER_CLASS = 6
MAX_ROWS = 5000

_TEXT_NAMES = ("text", "sentence", "review", "comment", "message", "document")
_LABEL_NAMES = ("label", "class", "target", "sentiment", "category", "y")


@dataclass(frozen=True)
class TextDataset:
    """A validated text upload.

    Attributes
    ----------
    texts : list of str
        Stripped texts, in file order.
    labels : ndarray of int64, shape (n,)
        Codes 0..k-1 of the label values in sorted order.
    classes : list of str
        The label values, ``classes[code]``.
    text_column, label_column : str
    encoding : str
        "utf-8" or "latin-1" (the fallback when the file is not valid UTF-8).
    """

    texts: list
    labels: np.ndarray
    classes: list
    text_column: str
    label_column: str
    encoding: str

    @property
    def n(self) -> int:
        return len(self.texts)

    def key(self) -> str:
        """SHA-256 of the texts and labels (an in-memory cache key; never written anywhere)."""
        h = hashlib.sha256()
        h.update("\x1f".join(self.texts).encode("utf-8"))
        h.update(self.labels.tobytes())
        return h.hexdigest()


def _rows(mask: np.ndarray, limit: int = 5) -> str:
    rows = (np.flatnonzero(mask) + 1).tolist()
    head = ", ".join(str(r) for r in rows[:limit])
    return f"data row{'s' if len(rows) > 1 else ''} {head}" + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def _pick(names: list[str], wanted: tuple[str, ...], given: str | None, role: str) -> str:
    if given is not None:
        if given not in names:
            raise ValueError(f"the {role} column {given!r} is not in the file; its columns are: {', '.join(names)}")
        return given
    for n in names:
        if n.strip().lower() in wanted:
            return n
    raise ValueError(f"no {role} column found: name one of the columns ({', '.join(names)}) or call it "
                     f"{' / '.join(repr(w) for w in wanted[:3])}")


def read_text_csv(source, *, text_column: str | None = None, label_column: str | None = None,
                  max_bytes: int = MAX_UPLOAD_BYTES, max_chars: int = MAX_CHARS, min_rows: int = MIN_ROWS,
                  min_per_class: int = MIN_PER_CLASS, max_rows: int = MAX_ROWS) -> TextDataset:
    """Read and validate a CSV of texts with a label column.

    Parameters
    ----------
    source : str, os.PathLike, bytes or file-like
        The upload (a Streamlit ``UploadedFile`` works).
    text_column, label_column : str, optional
        Column names; by default the first column called text / sentence / review / comment /
        message / document, and label / class / target / sentiment / category / y.
    max_bytes : int, default 50 MiB
    max_chars : int, default 1000
        Longest accepted text (characters).
    min_rows, min_per_class, max_rows : int, default 30, 6, 5000

    Returns
    -------
    TextDataset

    Raises
    ------
    ValueError
        Binary (not text) file, larger than ``max_bytes``, a single column, a missing column, an
        empty text, a text over ``max_chars``, a missing label, one class only, fewer than
        ``min_rows`` rows or ``min_per_class`` of some class, more than ``max_rows`` rows. The
        message names the rows and the accepted range.

    Examples
    --------
    >>> csv = "text,label\\n" + "".join(f"good {i},pos\\nbad {i},neg\\n" for i in range(20))
    >>> ds = read_text_csv(csv.encode())
    >>> ds.n, ds.classes, ds.labels[:2].tolist()
    (40, ['neg', 'pos'], [1, 0])
    """
    import io
    import warnings

    from engine.datasets.upload import _DELIM_NAMES, _load_text, _parse_header, _read_source

    raw, _ = _read_source(source, int(max_bytes))
    text, sep, encoding = _load_text(raw, None, digits=False)  # limits, encoding damage, JSON, Excel's sep= line
    encoding = "utf-8" if encoding != "latin-1" else "latin-1"
    delim, names = _parse_header(text, sep)
    tcol = _pick(names, _TEXT_NAMES, text_column, "text")
    lcol = _pick(names, _LABEL_NAMES, label_column, "label")
    if tcol == lcol:
        raise ValueError(f"the text and the label column are both {tcol!r}; choose two different columns")
    quote_hint = (f"a text that contains the separator {_DELIM_NAMES[delim]} must be in double quotes, like "
                  f'"Good{delim if delim != chr(9) else ","} but slow"{delim}pos (a quote inside a quoted text is '
                  'written twice: "")')
    _check_fields(text, delim, names, quote_hint)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)  # pandas drops the extra fields of a long row
            df = pd.read_csv(io.StringIO(text), sep=delim, header=0, names=names, dtype=str, keep_default_na=False,
                             skipinitialspace=True, index_col=False)
    except (pd.errors.ParserError, pd.errors.ParserWarning, csv_error()) as exc:
        raise ValueError(f"the file could not be read as {_DELIM_NAMES[delim]}-separated CSV "
                         f"({type(exc).__name__}); check its quotes: {quote_hint}") from None
    n = len(df)
    if n > max_rows:
        raise ValueError(f"the file has {n} rows; at most {max_rows} are accepted (encoding time grows with the rows)")
    if n < min_rows:
        raise ValueError(f"too few rows: {n}; need at least {min_rows} texts (a train, a validation and a test part)")
    texts = df[tcol].astype(str).str.strip()
    empty = (texts == "").to_numpy()
    if empty.any():
        raise ValueError(f"{int(empty.sum())} empty text(s) in column {tcol!r} ({_rows(empty)}); every row needs a text")
    lengths = texts.str.len().to_numpy()
    long = lengths > max_chars
    if long.any():
        raise ValueError(f"{int(long.sum())} text(s) longer than {max_chars} characters ({_rows(long)}, longest "
                         f"{int(lengths.max())}); shorten or split them (the encoder reads at most 48 word pieces)")
    lab = df[lcol].astype(str).str.strip()
    missing = (lab == "").to_numpy()
    if missing.any():
        raise ValueError(f"{int(missing.sum())} missing label(s) in column {lcol!r} ({_rows(missing)}); every row needs a label")
    classes = sorted(lab.unique().tolist())
    if len(classes) < 2:
        raise ValueError(f"the label column {lcol!r} has one class only ({classes[0]!r}); need at least 2 classes")
    codes = np.searchsorted(np.array(classes, dtype=object), lab.to_numpy(dtype=object)).astype(np.int64)
    counts = np.bincount(codes, minlength=len(classes))
    few = [f"{classes[i]!r} ({int(c)})" for i, c in enumerate(counts) if c < min_per_class]
    if few:
        raise ValueError(f"too few rows of class {', '.join(few)}; every class needs at least {min_per_class} rows "
                         "for the stratified train / validation / test split")
    return TextDataset(texts.tolist(), codes, classes, tcol, lcol, encoding)


def _check_fields(text: str, delim: str, names, quote_hint: str) -> None:
    """Every row must have one field per column: a text with an unquoted separator is refused, never cut.

    (pandas would take the extra leading fields of such rows as an index and drop them silently.)
    """
    import csv
    import io

    try:
        records = csv.reader(io.StringIO(text), delimiter=delim)
        rows = [i for i, r in enumerate((r for r in records if r and not (len(r) == 1 and not r[0].strip())))
                if i and len(r) != len(names)]
    except csv.Error as exc:
        raise ValueError(f"the file is not valid CSV ({str(exc).split(' - ')[0]}); check its quotes: {quote_hint}") from None
    if rows:
        more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
        raise ValueError(f"{len(rows)} row(s) do not have {len(names)} fields, one per column (data row"
                         f"{'s' if len(rows) > 1 else ''} {', '.join(str(i) for i in rows[:5])}{more}); {quote_hint}")


def csv_error():
    import csv

    return csv.Error


def train_on_texts(ds: TextDataset, settings, *, progress=None, cache_states: bool = False):
    """Encode ``ds``, split it and train the clipped and unclipped models, in memory.

    Parameters
    ----------
    ds : TextDataset
    settings : ExploreSettings
        KL weight, seed, epochs, lr, batch size, patience, training clipping, max_length and
        ``split_seed`` (``n_train`` caps the training part; ``n_sentences`` is ignored).
    progress : callable(fraction, message) -> bool or None, optional
        Overall progress (encoding 0-40 %, unclipped 40-70 %, clipped 70-100 %) with a time
        estimate in the message; returning False cancels
        (:class:`engine.nvdp.training.TrainingCancelled`).
    cache_states : bool, default False
        Opt in to the encoder's disk cache for these texts (off: nothing of the upload is written).

    Returns
    -------
    data : ExploreData
    models : dict
        ``{"unclipped": TrainedNVDP, "clipped": TrainedNVDP}`` (not saved).
    """
    from engine.nvdp.encoder import encode_sentences, split_indices
    from engine.nvdp.explorer_models import EtaClock, ExploreData, _fmt_left, train_model
    from engine.nvdp.training import TrainingCancelled

    def stage(lo, hi, prefix):
        if progress is None:
            return None
        clock = EtaClock()

        def cb(fraction, message):
            left = clock.remaining(float(fraction))
            eta = "" if left is None else f", {_fmt_left(left)} left for this step"
            if progress(lo + (hi - lo) * float(fraction), f"{prefix}: {message}{eta}") is False:
                raise TrainingCancelled(message)

        return cb

    states = encode_sentences(ds.texts, max_length=settings.max_length, use_cache=bool(cache_states),
                              progress=stage(0.0, 0.4, "encoding your texts"))
    tr, va, te = split_indices(ds.labels, seed=settings.split_seed)
    if settings.n_train is not None and settings.n_train < len(tr):
        rng = np.random.default_rng(settings.split_seed)
        tr = np.sort(rng.choice(tr, size=settings.n_train, replace=False))
    data = ExploreData(list(ds.texts), ds.labels, states, tr, va, te)
    tr_s, tr_y = data.split("train")
    va_s, va_y = data.split("val")
    models = {}
    for which, (lo, hi) in (("unclipped", (0.4, 0.7)), ("clipped", (0.7, 1.0))):
        models[which] = train_model(settings, which, tr_s, tr_y, va_s, va_y,
                                    progress=stage(lo, hi, f"training the {which} model"))
    return data, models
