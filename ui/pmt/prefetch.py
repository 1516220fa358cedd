"""The neighbouring epsilons of a bundled view, computed ahead of the next key press on a background thread.

A view's own epsilon needs two computations the error-vs-epsilon grid does not hold: the sweep at that
epsilon (every seed and method, for the headline) and one fit of each method (the diagnostics and the
ledger). The first person to move the epsilon slider to a value pays them (about 0.1-0.3 s of CPU on the
default ccpp view, seconds for logistic regression on bank), and a room moving in step waits for them
together: at 16 people on one 2-core server these moves were the slow 5 % (2-4 s on the server).

After a view of **bundled** data is drawn, :func:`neighbours` asks one background worker to compute the
two values next to the chosen epsilon on the slider (:data:`ui.common.settings.EPSILON_OPTIONS`) through the page's
shared cache (``st.cache_data`` in :mod:`ui.pmt.run`, handed over by the page: this module imports nothing
of the page), so the next press either way is a cache hit, for
this person and everyone else on the view. The worker holds at most one pending request per view (a newer
view replaces an older one that has not started), runs one computation at a time, and gives way to the
page: it computes exactly what a key press would, through the same cached functions, so a number is
never different, only earlier. Uploads are never prefetched (their results stay in their own session).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from ui.common.settings import EPSILON_OPTIONS

_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None
#: The one waiting request (a newer view replaces it before it starts).
_WAITING: dict = {}
#: Requests started or done, so that a view is prefetched once per process (bounded).
_SEEN: dict = {}
MAX_SEEN = 512
_IDLE = threading.Event()
_IDLE.set()


def neighbour_epsilons(epsilon: float) -> list[float]:
    """The slider's values next to ``epsilon`` (one below, one above; fewer at the ends, none off the slider).

    Examples
    --------
    >>> neighbour_epsilons(1.0), neighbour_epsilons(0.05), neighbour_epsilons(0.8)
    ([0.7, 1.5], [0.07], [])
    """
    opts = list(EPSILON_OPTIONS)
    if float(epsilon) not in opts:
        return []
    i = opts.index(float(epsilon))
    return [opts[j] for j in (i - 1, i + 1) if 0 <= j < len(opts)]


def neighbours(view, *, cached: dict) -> None:
    """Ask the worker for the sweeps and fits at the neighbouring epsilons of ``view``.

    Parameters
    ----------
    view : ui.pmt.compute.view.PMTView
        The view (:func:`ui.pmt.run.compute`): its choice, its cache key and its prepared split. Derived from an
        upload (:attr:`~ui.pmt.compute.view.PMTView.is_upload`): nothing is done.
    cached : dict
        ``{"sweep": f, "diagnostics": g}``: the page's shared cached functions, each called as
        ``f(key, prep, spec_json)`` (:data:`ui.pmt.run.PREFETCHED`).
    """
    if view.is_upload:
        return
    from ui.pmt.compute import core as C

    spec, key = view.spec, view.key
    jobs = []
    for eps in neighbour_epsilons(view.choice.epsilon):
        at = {**spec, "epsilon": eps}
        jobs += [("sweep", C.dumps(C.sweep_spec(at, "epsilon", [eps]))), ("diagnostics", C.dumps(at))]
    jobs = [(key, kind, spec_json) for kind, spec_json in jobs]
    with _LOCK:
        jobs = [j for j in jobs if j not in _SEEN]
        if not jobs:
            return
        _WAITING.clear()
        _WAITING["request"] = (jobs, view.prep, cached)
        _IDLE.clear()
        global _POOL
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pmt-prefetch")
        _POOL.submit(_work)


def _work() -> None:
    with _LOCK:
        request = _WAITING.pop("request", None)
        if request is not None:
            for job in request[0]:
                _SEEN[job] = True
            while len(_SEEN) > MAX_SEEN:
                _SEEN.pop(next(iter(_SEEN)))
    try:
        if request is not None:
            jobs, prep, cached = request
            for key, kind, spec_json in jobs:
                try:
                    cached[kind](key, prep, spec_json)  # the page's own cached function: a hit for the next press
                except (ValueError, TypeError):  # the page shows such an error itself, when it gets there
                    pass
    finally:
        with _LOCK:
            if "request" not in _WAITING:
                _IDLE.set()


def wait_idle(timeout: float | None = None) -> bool:
    """Block until the worker has nothing left to do (tests, benchmarks); True if it is idle."""
    return _IDLE.wait(timeout)


def forget() -> None:
    """Forget which views were prefetched (tests)."""
    with _LOCK:
        _SEEN.clear()
