"""A bounded cache of built Plotly figures shared by every session, for views of bundled data only.

Building a figure (Plotly validates every property as it is set) costs about 0.1 s of CPU on the PMT
page, as much as the rest of a cached rerun; a room of people on the default view asks for the same
figures over and over. :func:`figure` keeps the figure's plain dict (``Figure.to_dict()``) under a key
made of the builder's name and a digest of its arguments, and hands every caller a **new** Figure built
from that dict (about 0.015 s), which the page may then restyle without touching anyone else's.

Figures of uploaded data never enter it (``shared=False`` builds them directly): they are made from
the uploader's rows and stay in that session. The cache holds at most :data:`MAX_ENTRIES` figures for
at most :data:`TTL_S` seconds each (least recently used dropped first), so its memory is bounded
(a few MB) whatever the traffic.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict

import numpy as np
import pandas as pd

#: Most figures kept (least recently used dropped first).
MAX_ENTRIES = 96
#: Seconds a figure is kept after it was built.
TTL_S = 3600.0

_LOCK = threading.Lock()
_CACHE: OrderedDict[str, tuple[float, dict]] = OrderedDict()
_STATS = {"hits": 0, "misses": 0}


def _feed(h, value) -> None:
    """Feed ``value`` into the hash ``h`` (frames, arrays, scalars, strings, containers; else its repr)."""
    if isinstance(value, pd.DataFrame):
        h.update(b"F" + ",".join(map(str, value.columns)).encode())
        h.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
    elif isinstance(value, pd.Series):
        h.update(b"S" + str(value.name).encode())
        h.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
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
    else:
        h.update(b"V" + repr(value).encode())


def key_of(builder, args, kwargs) -> str:
    """The cache key of ``builder(*args, **kwargs)``: its qualified name and a SHA-256 of the arguments."""
    h = hashlib.sha256(f"{builder.__module__}.{builder.__qualname__}".encode())
    _feed(h, list(args))
    _feed(h, dict(kwargs))
    return h.hexdigest()


def figure(builder, *args, shared: bool = True, **kwargs):
    """``builder(*args, **kwargs)`` (a Plotly figure), from the shared cache when ``shared``.

    Parameters
    ----------
    builder : callable returning plotly.graph_objects.Figure
        A pure function of its arguments (the engine's figure builders are).
    shared : bool, default True
        False for anything computed from uploaded data: built directly, never stored.

    Returns
    -------
    plotly.graph_objects.Figure
        A new figure object for this caller (never one another session holds).
    """
    import plotly.graph_objects as go

    if not shared:
        return builder(*args, **kwargs)
    key = key_of(builder, args, kwargs)
    now = time.monotonic()
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and now - hit[0] <= TTL_S:
            _CACHE.move_to_end(key)
            _STATS["hits"] += 1
            spec = hit[1]
        else:
            spec = None
    if spec is not None:
        return go.Figure(spec)
    fig = builder(*args, **kwargs)
    spec = fig.to_dict()
    with _LOCK:
        _STATS["misses"] += 1
        _CACHE[key] = (now, spec)
        _CACHE.move_to_end(key)
        while len(_CACHE) > MAX_ENTRIES:
            _CACHE.popitem(last=False)
        for k in [k for k, (t, _) in _CACHE.items() if now - t > TTL_S]:
            del _CACHE[k]
    return go.Figure(spec)


def stats() -> dict:
    """``{"entries", "hits", "misses"}`` of the shared cache (for benchmarks)."""
    with _LOCK:
        return {"entries": len(_CACHE), **_STATS}


def clear() -> None:
    """Empty the shared cache (tests)."""
    with _LOCK:
        _CACHE.clear()
        _STATS.update(hits=0, misses=0)
