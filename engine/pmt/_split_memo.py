"""Per-split quantities of the GLM sweeps, kept between :func:`engine.pmt.sweep.run_sweep` calls.

A dashboard moves one control at a time: every epsilon (or lam) change runs a new sweep on the same
split, and everything that depends only on the split was rebuilt each time: the non-private
reference fit per lam, the PMT transform, DP-Newton's clipped rows and, above all, the row-pair products
of :func:`engine.pmt._newton.pair_products` that each noisy Newton run reuses (bank, n = 36k, d = 42:
130 MB and ~0.1-0.3 s of CPU per method and sweep, more under memory contention). They do not depend on
epsilon, the seeds or the noise, so the sweeps fetch them here.

Keyed by the content of the split (a BLAKE2b digest of the private training rows, their labels and the
public rows, with dtypes and shapes) plus each quantity's own parameters, so an entry is reused only for
the very same arrays: the numbers are those a fresh computation gives, bit for bit. Arrays handed out are
read-only. Bounded: the quantities of the :data:`MEMO_SPLITS` most recently used splits are kept (bank:
about 300 MB, mostly the two pair-product arrays); thread-safe (Streamlit sessions share the process).
Nothing here sees the noise or draws any.

Data that must not outlive a user's session (an uploaded file: the dashboard keeps everything derived
from it in that session only) is swept inside :func:`bypass`: then nothing is kept or reused.

:func:`memo_public` keeps, apart from the splits, what is computed from *public* rows alone (PMTRidge's
public second moment and whitening), keyed by the rows' content in the same way.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from typing import Callable

import numpy as np

__all__ = ["MEMO_PUBLIC", "MEMO_ROWS", "MEMO_SPLITS", "bypass", "bypassed", "clear", "fingerprint", "kept", "memo",
           "memo_public", "memo_rows"]

#: Splits whose quantities are kept (least recently used dropped first).
MEMO_SPLITS = 1

#: Quantities of public rows kept by :func:`memo_public` (least recently used dropped first).
MEMO_PUBLIC = 8

#: Splits themselves (the rows :func:`engine.pmt.sweep.run_sweep` draws and standardises) kept by
#: :func:`memo_rows` (least recently used dropped first): a dashboard sweeps the same split at every epsilon
#: and lam move, and an n_pub sweep has one split per size (bank: about 15 MB each).
MEMO_ROWS = 8

_LOCK = threading.Lock()
_STORE: "OrderedDict[str, dict]" = OrderedDict()
_ROWS: "OrderedDict[tuple, tuple]" = OrderedDict()
_PUBLIC: "OrderedDict[tuple, object]" = OrderedDict()
_LOCAL = threading.local()


@contextlib.contextmanager
def bypass():
    """In this block (this thread only) :func:`memo` builds every quantity afresh and keeps nothing."""
    prev = getattr(_LOCAL, "off", False)
    _LOCAL.off = True
    try:
        yield
    finally:
        _LOCAL.off = prev


def bypassed() -> bool:
    """True inside :func:`bypass` in this thread (a pool that runs work for this thread must pass it on)."""
    return bool(getattr(_LOCAL, "off", False))


def fingerprint(*arrays) -> str:
    """Content digest of arrays (dtype, shape and bytes of each).

    Examples
    --------
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> fingerprint(a) == fingerprint(a.copy()), fingerprint(a) == fingerprint(a.reshape(3, 2))
    (True, False)
    """
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


#: Up to this many bytes, :func:`memo_public` keys rows by their bytes themselves (a dict lookup hashes
#: them about three times faster than BLAKE2b); larger rows by :func:`fingerprint`.
_BYTES_KEY_MAX = 1 << 16


def _content_key(a: np.ndarray):
    """A key equal for equal content (dtype, shape, bytes): the bytes when small, else their digest."""
    a = np.asarray(a)
    if a.nbytes <= _BYTES_KEY_MAX:
        return (a.dtype.str, a.shape, a.tobytes())
    return fingerprint(a)


def _freeze(value):
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, tuple):
        for v in value:
            _freeze(v)
    return value


def kept(split_key: str, key: tuple) -> bool:
    """True when :func:`memo` would return a kept value for ``(split_key, key)`` (False inside :func:`bypass`)."""
    if getattr(_LOCAL, "off", False):
        return False
    with _LOCK:
        entry = _STORE.get(split_key)
        return entry is not None and key in entry


def memo(split_key: str, key: tuple, build: Callable):
    """``build()`` for ``(split_key, key)``, computed once while the split stays among the kept ones.

    ``build`` runs outside the lock (two threads may build the same entry; the first stored wins). Arrays
    in the result (also inside a tuple) are made read-only. Inside :func:`bypass`: ``build()``, not kept.
    """
    if getattr(_LOCAL, "off", False):
        return _freeze(build())
    with _LOCK:
        entry = _STORE.get(split_key)
        if entry is not None:
            _STORE.move_to_end(split_key)
            if key in entry:
                return entry[key]
    value = _freeze(build())
    with _LOCK:
        entry = _STORE.get(split_key)
        if entry is None:
            entry = _STORE[split_key] = {}
            while len(_STORE) > MEMO_SPLITS:
                _STORE.popitem(last=False)
        return entry.setdefault(key, value)


def memo_public(rows: np.ndarray, key: tuple, build: Callable, freeze: Callable | None = None):
    """``build()`` for the public ``rows`` (by content: :func:`fingerprint`) and ``key``, kept for reuse.

    For quantities of public data only (they cost no privacy, and nothing private enters the key or the
    value): a refit with the same public rows (the dashboard moving epsilon, a benchmark, a sweep of fits)
    gets the very object a fresh computation gave, bit for bit. ``freeze(value)`` (optional) makes its arrays
    read-only before it is shared. The :data:`MEMO_PUBLIC` most recently used entries are kept; an exception
    raised by ``build`` is not kept (it is raised again next time). Inside :func:`bypass`: ``build()``, not
    kept.
    """
    if getattr(_LOCAL, "off", False):
        return build()
    full = (_content_key(rows), key)
    with _LOCK:
        value = _PUBLIC.get(full)
        if value is not None:
            _PUBLIC.move_to_end(full)
            return value
    value = build()
    if freeze is not None:
        freeze(value)
    with _LOCK:
        value = _PUBLIC.setdefault(full, value)
        while len(_PUBLIC) > MEMO_PUBLIC:
            _PUBLIC.popitem(last=False)
    return value


def memo_rows(key: tuple, build: Callable) -> tuple:
    """``build()`` (a tuple of arrays: a split's rows) for ``key``, kept for the :data:`MEMO_ROWS` most recently
    used keys; every call gets its own copies (the caller may write to them). The key must name the data by
    content (:func:`fingerprint`) and every setting the split depends on. Inside :func:`bypass`: ``build()``,
    not kept."""
    if getattr(_LOCAL, "off", False):
        return build()
    with _LOCK:
        value = _ROWS.get(key)
        if value is not None:
            _ROWS.move_to_end(key)
    if value is None:
        value = tuple(build())
        with _LOCK:
            value = _ROWS.setdefault(key, value)
            while len(_ROWS) > MEMO_ROWS:
                _ROWS.popitem(last=False)
    return tuple(np.array(a, copy=True) for a in value)


def clear() -> None:
    """Drop every kept quantity."""
    with _LOCK:
        _STORE.clear()
        _PUBLIC.clear()
        _ROWS.clear()
