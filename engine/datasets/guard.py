"""Checks on an upload's raw bytes and decoded text, before any parser sees it (no Streamlit here).

Every reader of a user's file (:func:`engine.datasets.read_csv_upload`, the NVDP text reader, the moments
reader) calls these first, so that a hostile shape is refused with one sentence naming the limit, in time
linear in the file and with bounded memory (the file is scanned in chunks of :data:`CHUNK` bytes with
numpy; no regular expression that can backtrack):

- :func:`check_raw_limits`: fields per row (:data:`MAX_FIELDS_PER_ROW`), characters per field
  (:data:`MAX_FIELD_CHARS`), digits in a row (:data:`MAX_DIGITS`: a 400-digit integer would overflow
  float64), and, for JSON, nesting depth (:data:`MAX_JSON_DEPTH`);
- :func:`check_encoding`: encoding damage: a doubled byte-order mark, the Unicode replacement character
  (U+FFFD: an earlier conversion already lost characters), a file that mixes UTF-8 and another encoding
  (one Latin-1 byte in a UTF-8 file would otherwise turn every ``é`` into ``Ã©``);
- :func:`check_names`: mis-decoded UTF-8 in column names (``tempÃ©rature``);
- :func:`looks_like_json`: a JSON document uploaded where a CSV belongs.

Thousands separators and Excel's ``sep=`` line are handled by the CSV reader
(:mod:`engine.datasets.upload`), which knows the file's separator and decimal mark.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["MAX_FIELDS_PER_ROW", "MAX_FIELD_CHARS", "MAX_DIGITS", "MAX_JSON_DEPTH", "CHUNK", "MAX_MESSAGE_CHARS",
           "check_raw_limits", "check_encoding", "check_names", "looks_like_json", "bounded", "line_of"]

#: Most separators (',', ';' or tab, counted together) on one line, plus one: the widest accepted row. A
#: 10,000-column file is accepted; a 4 MB row of 2,000,000 fields is refused before pandas sees it.
MAX_FIELDS_PER_ROW = 20_000
#: Longest run of characters without a separator, quote or line break (Python's ``csv.field_size_limit()``).
MAX_FIELD_CHARS = 131_072
#: Most decimal digits in a row: float64 holds about 17 significant digits and the loader accepts
#: |value| <= 1e150 (151 digits before the point); 160 digits in a row is no number the loader would keep.
MAX_DIGITS = 160
#: Deepest accepted nesting of JSON brackets (a moments file needs 2).
MAX_JSON_DEPTH = 16
#: Bytes scanned at a time (bounded memory: about 10 bytes of numpy arrays per byte of the chunk).
CHUNK = 4 * 2**20
#: Longest message a reader raises (a long list of names is cut, the count kept).
MAX_MESSAGE_CHARS = 600

_SEPARATORS = b",;\t"
_FIELD_ENDS = b",;\t\n\r\""


def _table(chars: bytes) -> np.ndarray:
    t = np.zeros(256, dtype=bool)
    t[np.frombuffer(chars, dtype=np.uint8)] = True
    return t


_SEP_T, _END_T, _NL_T = _table(_SEPARATORS), _table(_FIELD_ENDS), _table(b"\n\r")
_DIGIT_T = _table(b"0123456789")
_JSON_END_T = _table(b",:[]{}\"\n\r\t ")


def line_of(raw: bytes, pos: int) -> int:
    """1-based line number of byte ``pos`` (counts LF, and CR not followed by LF)."""
    head = raw[:pos]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def _longest_run(raw: bytes, stop: np.ndarray) -> tuple[int, int]:
    """(length, start) of the longest run of bytes whose ``stop`` entry is False; chunked, linear."""
    best, best_at, last = 0, 0, -1
    n = len(raw)
    for start in range(0, n, CHUNK):
        a = np.frombuffer(raw, dtype=np.uint8, count=min(CHUNK, n - start), offset=start)
        pos = np.flatnonzero(stop[a])
        if pos.size == 0:
            continue
        pos += start
        gaps = np.diff(pos, prepend=last) - 1
        k = int(np.argmax(gaps))
        if gaps[k] > best:
            best, best_at = int(gaps[k]), int(pos[k] - gaps[k])
        last = int(pos[-1])
    if n - 1 - last > best:
        best, best_at = n - 1 - last, last + 1
    return best, best_at


def _longest_digit_run(raw: bytes) -> tuple[int, int]:
    return _longest_run(raw, ~_DIGIT_T)


def _most_separators(raw: bytes) -> tuple[int, int]:
    """(count, line) of the line with the most separator bytes (quotes ignored: an upper bound)."""
    best, best_line, carry, line, n = 0, 1, 0, 1, len(raw)
    for start in range(0, n, CHUNK):
        a = np.frombuffer(raw, dtype=np.uint8, count=min(CHUNK, n - start), offset=start)
        is_nl = _NL_T[a]
        seps = np.cumsum(_SEP_T[a], dtype=np.int64)
        nl = np.flatnonzero(is_nl)
        if nl.size:
            at_nl = seps[nl]
            counts = np.diff(at_nl, prepend=0)
            counts[0] += carry
            k = int(np.argmax(counts))
            if counts[k] > best:
                best, best_line = int(counts[k]), line + k
            carry = int(seps[-1] - at_nl[-1])
            line += int(nl.size)
        else:
            carry += int(seps[-1]) if seps.size else 0
        if carry > best:
            best, best_line = carry, line
    return best, best_line


def _json_depth(raw: bytes) -> int:
    """The deepest bracket nesting of ``raw`` (brackets inside strings counted too: an upper bound)."""
    depth, best, n = 0, 0, len(raw)
    for start in range(0, n, CHUNK):
        a = np.frombuffer(raw, dtype=np.uint8, count=min(CHUNK, n - start), offset=start)
        step = (a == 0x5B).astype(np.int32) + (a == 0x7B) - (a == 0x5D) - (a == 0x7D)
        if not step.any():
            continue
        c = np.cumsum(step) + depth
        best = max(best, int(c.max()))
        depth = int(c[-1])
    return best


def check_raw_limits(raw: bytes, *, what: str = "the file", json: bool = False, digits: bool = True,
                     max_fields: int = MAX_FIELDS_PER_ROW, max_field_chars: int = MAX_FIELD_CHARS,
                     max_digits: int = MAX_DIGITS, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse a file whose shape no reader should parse; one ``ValueError`` naming the limit and where.

    Parameters
    ----------
    raw : bytes
        The file as uploaded (UTF-16/32 files are checked after decoding to UTF-8 by the caller).
    what : str
        How the message names the file (e.g. ``"the file 'a.csv'"``).
    json : bool
        JSON rules: nesting depth instead of fields per row, and a token ends at JSON punctuation.
    digits : bool
        Check the longest run of digits (numbers); off for free text.

    Examples
    --------
    >>> check_raw_limits(b"a,b\\n1,2\\n")
    >>> check_raw_limits(b"a" + b",1" * 30_000)
    Traceback (most recent call last):
    ...
    ValueError: the file has 30,001 fields on line 1; at most 20,000 fields per row are accepted
    """
    if json:
        depth = _json_depth(raw)
        if depth > max_depth:
            raise ValueError(f"{what} nests brackets {depth:,} deep; at most {max_depth} levels are accepted "
                             "(a moments file needs 2)")
        run, at = _longest_run(raw, _JSON_END_T)
        if run > max_field_chars:
            raise ValueError(f"{what} has a value or name of {run:,} characters (line {line_of(raw, at)}); at most "
                             f"{max_field_chars:,} characters per value are accepted")
    else:
        longest_line, _ = _longest_run(raw, _NL_T)
        if longest_line + 1 > max_fields:  # a row of k fields is at least k - 1 bytes long: else nothing to count
            seps, line = _most_separators(raw)
            if seps + 1 > max_fields:
                raise ValueError(f"{what} has {seps + 1:,} fields on line {line}; at most {max_fields:,} fields per "
                                 "row are accepted")
        run, at = _longest_run(raw, _END_T)
        if run > max_field_chars:
            quote = (" (it follows a quote '\"': if that quote is never closed, close it or remove it)"
                     if at > 0 and raw[at - 1:at] == b'"' else "")
            raise ValueError(f"{what} has a field longer than {max_field_chars:,} characters ({run:,} characters, line "
                             f"{line_of(raw, at)}){quote}; column names and values must be shorter")
    if digits and run > max_digits:  # a run of digits lies inside one field (or JSON value): else none is too long
        run, at = _longest_digit_run(raw)
        if run > max_digits:
            raise ValueError(f"{what} has a number with {run:,} digits in a row (line {line_of(raw, at)}); at most "
                             f"{max_digits} digits are accepted (float64 keeps about 17; write large or small "
                             "numbers with an exponent, like 1.5e40)")


#: A valid UTF-8 multi-byte sequence (two to four bytes).
_UTF8_MULTI = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
#: UTF-8 read as Latin-1 / Windows-1252: a lead byte's character followed by a continuation byte's.
_MOJIBAKE = re.compile("[\u00c2-\u00df][\u0080-\u00bf\u2018-\u203a\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u02c6"
                       "\u02dc\u20ac\u2122]|\u00e2\u20ac[\u0080-\u00bf\u2018-\u203a\u2122\u0153\u009d]")


def _repair(s: str) -> str | None:
    """``s`` re-decoded as UTF-8 if it is UTF-8 that was read as Latin-1 / cp1252, else None."""
    for enc in ("latin-1", "cp1252"):
        try:
            fixed = s.encode(enc).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        if fixed != s:
            return fixed
    return None


def check_encoding(raw: bytes, text: str, encoding: str, *, what: str = "the file") -> None:
    """Refuse a decoded text that shows encoding damage; one ``ValueError`` naming it and where.

    Parameters
    ----------
    raw : bytes
        The file as uploaded.
    text : str
        Its text as the reader decoded it (byte-order mark removed).
    encoding : str
        What the reader decoded it as: ``"utf-8"``, ``"latin-1"`` (the fallback), ``"utf-16"``, ``"utf-32"``.

    Examples
    --------
    >>> check_encoding(b"caf\\xc3\\xa9,\\xe9\\n", "caf\\u00c3\\u00a9,\\u00e9\\n", "latin-1")
    Traceback (most recent call last):
    ...
    ValueError: the file mixes two text encodings: it holds UTF-8 characters (like 'é') and bytes that are not valid UTF-8 (the first at byte 6, line 1, 0xe9); re-save the whole file as UTF-8 (CSV UTF-8 in a spreadsheet)
    """
    if text.startswith("\ufeff"):
        raise ValueError(f"{what} starts with two byte-order marks (an editor added one twice; the first column's "
                         "name would begin with an invisible U+FEFF): re-save the file as UTF-8")
    if "\ufffd" in text:
        at = text.index("\ufffd")
        line = text.count("\n", 0, at) + 1
        raise ValueError(f"{what} contains the Unicode replacement character '\ufffd' (U+FFFD, line {line}): an "
                         "earlier conversion already lost characters here; export the file again from its source")
    if "\ufeff" in text:
        line = text.count("\n", 0, text.index("\ufeff")) + 1
        raise ValueError(f"{what} contains a byte-order mark (U+FEFF) inside the text (line {line}): two files were "
                         "joined, or an editor added one; remove it, or re-save the file as UTF-8")
    if encoding == "latin-1":
        m = _UTF8_MULTI.search(raw)
        if m is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = exc.start
                sample = m.group(0).decode("utf-8")
                raise ValueError(
                    f"{what} mixes two text encodings: it holds UTF-8 characters (like {sample!r}) and bytes that are "
                    f"not valid UTF-8 (the first at byte {bad}, line {line_of(raw, bad)}, 0x{raw[bad]:02x}); re-save "
                    "the whole file as UTF-8 (CSV UTF-8 in a spreadsheet)") from None


def _plausible(s: str) -> bool:
    """Every non-ASCII character of ``s`` is a Latin letter or sign, or common punctuation (a real repair)."""
    return all(c < "\u0080" or "\u00a0" <= c <= "\u017f" or "\u2010" <= c <= "\u2027" or c == "\u20ac" for c in s)


def check_names(names, *, what: str = "the file") -> None:
    """Refuse column names in mis-decoded UTF-8 (``tempÃ©rature``: mojibake) or with invisible marks.

    Only a name that re-decodes to plausible Latin text counts (``'«ÉTÉ»'`` is left alone).

    Examples
    --------
    >>> check_names(["temp\u00c3\u00a9rature", "y"])
    Traceback (most recent call last):
    ...
    ValueError: the file has a column name in mis-decoded UTF-8 (mojibake): 'tempÃ©rature' reads 'température' when decoded as UTF-8; the file was once read in another encoding: open the original and re-save it as UTF-8
    """
    for name in names:
        name = str(name)
        if "\ufeff" in name or "\u200b" in name:
            raise ValueError(f"{what} has a column name with an invisible mark (U+FEFF or U+200B) in it: "
                             f"{name[:60]!r}; remove it, or re-save the file as UTF-8")
        if _MOJIBAKE.search(name) is None:
            continue
        fixed = _repair(name)
        if fixed is not None and _plausible(fixed):
            raise ValueError(
                f"{what} has a column name in mis-decoded UTF-8 (mojibake): {name[:60]!r} reads {fixed[:60]!r} when "
                "decoded as UTF-8; the file was once read in another encoding: open the original and re-save it "
                "as UTF-8")


def looks_like_json(text: str) -> bool:
    """True when ``text`` starts as a JSON object or array does (``{"``, ``[{``, ``[[``, ``["``, ``[1``).

    >>> looks_like_json('{"columns": []}'), looks_like_json("[[1, 2]]"), looks_like_json("{x},y")
    (True, True, False)
    """
    head = text.lstrip()[:64]
    return bool(re.match(r"\{\s*(?:\"|\}|$)|\[\s*(?:[\[{\"]|-?\d|\]|true|false|null|$)", head))


def bounded(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` cut to ``limit`` characters, saying how long it was (a message box never holds megabytes)."""
    message = str(message)
    if len(message) <= limit:
        return message
    return message[: limit - 40].rstrip() + f" ... (message cut: {len(message):,} characters)"
