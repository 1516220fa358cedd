"""BLAS threads chosen per shape for the PMT products (issue 16), through one cached threadpoolctl controller,
and a thread pool for work split into independent pieces (the blocked transform, :mod:`engine.pmt._whiten`).

The transform's ``X W`` and ``Z^T Z`` are memory-bound below about ``d = 64`` and compute-bound above;
on a shared machine a BLAS thread that waits for a busy core makes them slower, not faster. See
:func:`blas_threads` for the rule and ``bench/bench_pmt_fit.py`` for the measurements.
"""

from __future__ import annotations

import functools
import os
import threading

__all__ = ["blas_threads", "blas_limit", "idle_cores"]


def blas_threads(n: int, d: int) -> int:
    """BLAS threads for the ``(n, d) @ (d, d)`` and ``Z^T Z`` products of the transform (issue 16).

    Below ``d = 64`` (or ``n d^2 < 2e7`` flops) the products are memory-bound or too small to split, and
    a second BLAS thread adds wake-up and hand-off cost without more bandwidth: one thread. Above, they
    are compute-bound (``2 n d^2`` flops against ``n d`` loads) and split well *when cores are idle*;
    on a shared machine OpenBLAS threads that must wait for a busy core make the product several times
    slower than one thread (measured by ``bench/bench_pmt_fit.py``: n = 1e5, d = 200 at load 5 on 2
    cores, 1.0-1.7 s with one thread, 1.7-5 s with two). So the count is the number of idle cores,
    ``round(cores - 1-minute load average)``, at least 1. The machine's load is not data: the choice
    cannot depend on the private rows. OpenBLAS's threads do change the last bits of large products
    (measured: ``X W`` and ``Z^T Z`` at n = 1e5, d = 200 differ between one and two threads), so the
    transform runs these shapes by fixed row blocks on its own threads instead
    (:func:`engine.pmt._whiten._whiten_blocks`), whose numbers do not depend on the count.
    """
    if d < 64 or n * d * d < 20_000_000:
        return 1
    return idle_cores()


def idle_cores() -> int:
    """Cores this process can use without waiting: ``round(cores - (load - 1))``, between 1 and ``cores``.

    The 1-minute load average counts this process's own running thread too (a benchmark or a busy
    dashboard keeps it near 1 on its own), so the other runnable tasks are about ``load - 1``. Used for
    work split into independent pieces on this package's thread pool (the blocked transform): a piece
    whose thread waits for a busy core is taken by the other thread, with no barrier to spin at.
    The machine's load is not data: nothing chosen from it can depend on the private rows."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - no load average on this platform
        return cores
    return max(1, min(cores, int(cores - max(0.0, load - 1.0) + 0.5)))


@functools.lru_cache(maxsize=1)
def _executor():
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="engine-blocks")


@functools.lru_cache(maxsize=1)
def _controller():
    """One ``threadpoolctl.ThreadpoolController`` for the process: building one scans every loaded
    shared library (about 12 ms), which ``threadpool_limits(...)`` would otherwise redo at each call."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@functools.lru_cache(maxsize=1)
def _blas_libs() -> tuple:
    return tuple(_controller().select(user_api="blas").lib_controllers)


class blas_limit:
    """A context manager holding the BLAS libraries at ``threads`` threads (None: unchanged).

    Reads and sets the thread count of each BLAS library of the cached controller directly (a few
    microseconds), where ``ThreadpoolController.limit`` spends about 0.1 ms collecting library info:
    too much for a fit that takes a millisecond. Restores the previous counts on exit.
    """

    def __init__(self, threads: int | None):
        self.threads = None if threads is None else max(1, int(threads))
        self._saved = []
        self._nested = False

    def __enter__(self):
        # inside another blas_limit of the same count in this thread: nothing to read or set (the outer
        # one restores the libraries on its exit)
        if self.threads is not None and getattr(_HELD, "threads", None) == self.threads:
            self._nested = True
            return self
        if self.threads is not None:
            self._outer = getattr(_HELD, "threads", None)
            _HELD.threads = self.threads
            for lib in _blas_libs():
                old = lib.get_num_threads()
                if old != self.threads:
                    lib.set_num_threads(self.threads)
                    self._saved.append((lib, old))
        return self

    def __exit__(self, *exc):
        if self._nested:
            return False
        while self._saved:
            lib, old = self._saved.pop()
            lib.set_num_threads(old)
        if self.threads is not None:
            _HELD.threads = self._outer
        return False


#: The thread count the innermost active :class:`blas_limit` of this thread set (None outside any).
_HELD = threading.local()


def _blas_limit(n: int, d: int):
    """A context manager holding BLAS at :func:`blas_threads` ``(n, d)`` threads."""
    return blas_limit(blas_threads(n, d))
