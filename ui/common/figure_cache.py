"""A bounded cache of built Plotly figures shared by every session, for views of bundled data only.

Building a figure (Plotly validates every property as it is set) costs about 0.1 s of CPU on the PMT
page, as much as the rest of a cached rerun; a room of people on the default view asks for the same
figures over and over. :func:`figure` keeps the figure's plain dict (``Figure.to_dict()``) under a key
made of the builder's name and a digest of its arguments, and hands every caller a **new** Figure built
from that dict (about 0.04 s: Plotly validates it again), which the caller may then restyle without
touching anyone else's; with ``copy=False`` it keeps the finished Figure itself and hands every caller
that same object, to be drawn and never changed (the page's charts: no copy at all). :func:`value` does
the same for the small tables a rerun derives from cached results (the headline rows, the bands).

Figures of uploaded data never enter it (``shared=False`` builds them directly): they are made from
the uploader's rows and stay in that session. The cache holds at most :data:`MAX_ENTRIES` figures for
at most :data:`TTL_S` seconds each (least recently used dropped first), so its memory is bounded
(a few MB) whatever the traffic.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections import OrderedDict

import numpy as np
import pandas as pd

#: Most figures and tables kept (least recently used dropped first).
MAX_ENTRIES = 160
#: Seconds a figure is kept after it was built.
TTL_S = 3600.0

_LOCK = threading.Lock()
_CACHE: OrderedDict[str, tuple[float, object]] = OrderedDict()
_STATS = {"hits": 0, "misses": 0}


def _feed(h, value) -> None:
    """Feed ``value`` into the hash ``h`` (frames, arrays, scalars, strings, containers; else its repr)."""
    if isinstance(value, pd.DataFrame):
        h.update(b"F%d" % value.shape[1])
        _feed(h, value.index)
        for name in value.columns:
            h.update(repr(name).encode())
            _feed(h, value[name])
    elif isinstance(value, (pd.Series, pd.Index)):
        h.update((b"S" if isinstance(value, pd.Series) else b"I") + repr(value.name).encode())
        if isinstance(value, pd.Series):
            _feed(h, value.index)
        if isinstance(value, pd.RangeIndex):
            h.update(repr((value.start, value.stop, value.step)).encode())
        elif value.dtype.kind in "biufcmM":  # numbers and times: their bytes
            _feed(h, value.to_numpy())
        else:  # strings, objects, categories: each value's type and repr, one per line
            h.update(str(value.dtype).encode() + b"%d" % len(value))
            h.update("\n".join(f"{type(v).__name__}:{v!r}" for v in value.tolist()).encode())
    elif isinstance(value, np.ndarray):
        h.update(b"A" + str(value.dtype).encode() + str(value.shape).encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, dict):
        h.update(b"D")
        for k in sorted(value, key=str):
            h.update(str(k).encode())
            _feed(h, value[k])
    elif isinstance(value, (list, tuple)):
        h.update(b"L%d" % len(value))
        for v in value:
            _feed(h, v)
    elif callable(value) and hasattr(value, "__qualname__"):  # a function argument (a builder): by its name
        h.update(b"C" + f"{value.__module__}.{value.__qualname__}".encode())
    else:
        h.update(b"V" + repr(value).encode())


def key_of(builder, args, kwargs) -> str:
    """The cache key of ``builder(*args, **kwargs)``: its qualified name and a SHA-256 of the arguments."""
    h = hashlib.sha256(f"{builder.__module__}.{builder.__qualname__}".encode())
    _feed(h, list(args))
    _feed(h, dict(kwargs))
    return h.hexdigest()


def _lookup(key: str, now: float):
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and now - hit[0] <= TTL_S:
            _CACHE.move_to_end(key)
            _STATS["hits"] += 1
            return hit
    return None


def _store(key: str, now: float, value) -> None:
    with _LOCK:
        _STATS["misses"] += 1
        _CACHE[key] = (now, value)
        _CACHE.move_to_end(key)
        while len(_CACHE) > MAX_ENTRIES:
            _CACHE.popitem(last=False)
        for k in [k for k, (t, _) in _CACHE.items() if now - t > TTL_S]:
            del _CACHE[k]


def figure(builder, *args, shared: bool = True, copy: bool = True, **kwargs):
    """``builder(*args, **kwargs)`` (a Plotly figure), from the shared cache when ``shared``.

    Parameters
    ----------
    builder : callable returning plotly.graph_objects.Figure
        A pure function of its arguments (the engine's figure builders are).
    shared : bool, default True
        False for anything computed from uploaded data: built directly, never stored.
    copy : bool, default True
        True: every caller gets a new Figure (built from the stored dict, which Plotly validates again:
        about 0.04 s for the PMT page's main figure), which it may restyle. False: every caller gets the
        **same** stored Figure object, to hand to ``st.plotly_chart`` (which only reads it) and never to
        change; the styling belongs in ``builder`` (so it is part of the key). Its ``to_dict()`` returns
        one dict made when it was stored (:func:`_frozen`), to be read only.

    Returns
    -------
    plotly.graph_objects.Figure
        A new figure object for this caller (``copy``), or the shared one (never to be modified).
    """
    import plotly.graph_objects as go

    if not shared:
        return builder(*args, **kwargs)
    key = ("copy:" if copy else "same:") + key_of(builder, args, kwargs)
    now = time.monotonic()
    hit = _lookup(key, now)
    if hit is not None:
        return go.Figure(hit[1]) if copy else hit[1]
    fig = builder(*args, **kwargs)
    if copy:
        _store(key, now, fig.to_dict())
        return go.Figure(fig.to_dict())
    fig = _frozen(fig)
    _store(key, now, fig)
    return fig


def _frozen(fig):
    """``fig`` itself (freshly built, nobody else holds it), now a figure whose ``to_dict()`` returns one dict
    made here (the same object at every call).

    ``st.plotly_chart`` turns a Figure into its dict (``Figure.to_dict``: a deep copy and every array
    converted again, about 20 ms for the PMT page's main figure) on every rerun; a shared, never-changed
    figure has the same dict every time, so it is made once. Whoever calls ``to_dict()`` on it must only
    read the result (Streamlit serialises it to JSON)."""
    frozen = fig.to_dict()
    fig.__class__ = _frozen_class()
    fig._frozen_dict = frozen
    return fig


@functools.lru_cache(maxsize=1)
def _frozen_class():
    import plotly.graph_objects as go

    class FrozenFigure(go.Figure):
        """A Figure of :func:`figure` with ``copy=False``: ``to_dict()`` is the dict made when it was stored."""

        def to_dict(self):
            return self._frozen_dict

    return FrozenFigure


def value(fn, *args, shared: bool = True, key: tuple | None = None, **kwargs):
    """``fn(*args, **kwargs)`` (a table or number of a bundled view), from the shared cache when ``shared``.

    The same bounded store as the figures (:data:`MAX_ENTRIES`, :data:`TTL_S`). Every caller gets the **same**
    stored object: it must only be read (pandas operations that return a new frame are fine; assigning
    into it is not).

    Parameters
    ----------
    fn : callable
        A pure function of its arguments.
    shared : bool, default True
        False for anything computed from uploaded data: computed directly, never stored.
    key : tuple of str, optional
        Names the arguments instead of a digest of them (hashing a large frame costs milliseconds): e.g. the
        cache key of the results a frame was computed from. Two calls with the same ``key`` must mean the
        same arguments.
    """
    if not shared:
        return fn(*args, **kwargs)
    key = "value:" + (key_of(fn, args, kwargs) if key is None else key_of(fn, list(key), {}))
    now = time.monotonic()
    hit = _lookup(key, now)
    if hit is not None:
        return hit[1]
    out = fn(*args, **kwargs)
    _store(key, now, out)
    return out


def stats() -> dict:
    """``{"entries", "hits", "misses"}`` of the shared cache (for benchmarks)."""
    with _LOCK:
        return {"entries": len(_CACHE), **_STATS}


def clear() -> None:
    """Empty the shared cache (tests)."""
    with _LOCK:
        _CACHE.clear()
        _STATS.update(hits=0, misses=0)
