"""BLAS threads chosen by shape for the PMT products, through one cached threadpoolctl controller, and a
thread pool for work split into independent pieces (the blocked transform, :mod:`engine.pmt._whiten`).

The rule is fixed and depends only on the shape of the product and ``os.cpu_count()``, never on what
else the machine is doing, so the same call takes the same path on every run (see :func:`blas_threads`
and :func:`pool_threads`; measurements in ``bench/bench_pmt_fit.py``).
"""

from __future__ import annotations

import functools
import os
import threading

__all__ = ["blas_threads", "blas_limit", "pool_threads"]

#: Smallest ``d`` and ``n d^2`` at which the transform's ``(n, d) @ (d, d)`` and ``Z^T Z`` are compute-bound.
COMPUTE_BOUND_D = 64
COMPUTE_BOUND_FLOPS = 20_000_000


def blas_threads(n: int, d: int) -> int | None:
    """BLAS threads for the ``(n, d) @ (d, d)`` and ``Z^T Z`` products of the transform: 1, or None.

    Below ``d = 64`` or ``n d^2 = 2e7`` the products are memory-bound or too small to split, and a second
    BLAS thread adds wake-up and hand-off cost without more bandwidth (measured by
    ``bench/bench_pmt_fit.py``; a d = 200 ``eigh`` took 0.5 s with OpenBLAS's threads instead of 3 ms with
    one on a busy 2-core machine): **1**. Above, None: BLAS is left at its own setting (its default, the
    number of cores, or whatever the user set with ``OPENBLAS_NUM_THREADS`` or threadpoolctl). A function
    of the shape only: nothing here reads the data or the machine's load.

    Parameters
    ----------
    n, d : int
        Rows and columns of the product's tall operand.

    Returns
    -------
    int or None
        1, or None for "leave BLAS as it is" (the argument :class:`blas_limit` takes for that).

    Notes
    -----
    OpenBLAS's threads change the last bits of large products (measured: ``X W`` and ``Z^T Z`` at n = 1e5,
    d = 200 differ between one and two threads), so the transform runs these shapes by fixed row blocks
    on its own threads (:func:`engine.pmt._whiten._whiten_blocks`), whose numbers do not depend on the
    count.
    """
    if d < COMPUTE_BOUND_D or n * d * d < COMPUTE_BOUND_FLOPS:
        return 1
    return None


def pool_threads() -> int:
    """Threads of this package's pool for work split into independent pieces: ``os.cpu_count()`` (>= 1).

    Used by the blocked transform, whose blocks and order of summation are fixed, so its numbers are the
    same for any count; on a busy machine a piece whose thread waits for a core is taken by another
    thread, with no barrier to spin at.
    """
    return os.cpu_count() or 1


@functools.lru_cache(maxsize=1)
def _executor():
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=pool_threads(), thread_name_prefix="engine-blocks")


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
