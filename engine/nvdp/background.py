"""Accuracies of new clipping settings computed off the page's critical path (issue 14 item 7).

A slider move on the NVDP page changes the bounds (tens of milliseconds once the per-model terms
are cached) and the accuracy (the model re-run after the bottleneck on every test sentence: real
FLOPs, about 0.2 s of two cores). :class:`AccuracyJobs` runs the accuracy on one background thread
so that the page's rerun ends as soon as the bounds and the figure are drawn; the page polls the
job and reruns when it is done (the accuracy is then memoised in the
:class:`~engine.nvdp.posthoc.LiveEvaluator` and drawn at once).

One job per *slot* (a browser session): a newer request from the same slot cancels the older one
if it has not started and asks a running one to stop before its next batch of sentences
(:class:`~engine.nvdp.posthoc.AccuracyCancelled`, nothing memoised), so dragging a slider never
queues a backlog of accuracies nobody will see. Requests for a key that is already pending or
running are shared, whichever slot made them.

Privacy: this changes when a number is computed, never which one. The values are those of
:meth:`LiveEvaluator.accuracy <engine.nvdp.posthoc.LiveEvaluator.accuracy>` (same seed, same
draws, memoised only when complete). Nothing here imports Streamlit.
"""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import Callable, Hashable

from engine.nvdp.posthoc import AccuracyCancelled

__all__ = ["AccuracyJobs", "JOBS"]


class AccuracyJobs:
    """A single background worker computing accuracies, the latest request per slot.

    Parameters
    ----------
    max_workers : int, default 1
        Worker threads. One: the jobs use torch's intra-op threads (both cores) already, and one
        at a time keeps a cancelled job from competing with the current one.
    """

    def __init__(self, max_workers: int = 1):
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="nvdp-accuracy")
        self._lock = threading.RLock()  # a done callback can run inside submit (a job that finished at once)
        self._jobs: dict[Hashable, tuple[Future, threading.Event]] = {}  # key -> (future, stop)
        self._slots: dict[Hashable, set] = {}  # slot -> keys it is waiting for

    def submit(self, slot: Hashable, key: Hashable, fn: Callable[[threading.Event], object]) -> Future:
        """Run ``fn(stop)`` in the background for ``key`` on behalf of ``slot``; return its future.

        The keys that ``slot`` requested before and that no other slot is waiting for are
        cancelled (not started: dropped; running: their ``stop`` event is set, and ``fn`` is
        expected to raise :class:`~engine.nvdp.posthoc.AccuracyCancelled` at its next check).
        A pending or running job for ``key`` is shared; a finished one is returned as is unless it
        was cancelled, in which case it is submitted again.

        Parameters
        ----------
        slot : hashable
            Who asks (e.g. a browser session's id).
        key : hashable
            What is computed (e.g. model key, clipping and seed); equal keys must mean equal results.
        fn : callable
            ``fn(stop: threading.Event)``, computing and memoising the result.

        Returns
        -------
        concurrent.futures.Future
        """
        with self._lock:
            old = self._slots.get(slot, set()) - {key}
            self._slots[slot] = {key}
            for k in old:
                if not any(k in ks for s, ks in self._slots.items() if s != slot):
                    job = self._jobs.pop(k, None)
                    if job is not None:
                        job[1].set()
                        job[0].cancel()
            job = self._jobs.get(key)
            if job is None or _was_cancelled(job[0]):
                stop = threading.Event()
                job = (self._pool.submit(fn, stop), stop)
                self._jobs[key] = job
                # finished jobs are forgotten (their results live in the evaluator's memo)
                job[0].add_done_callback(lambda f, k=key: self._forget(k, f))
            return job[0]

    def _forget(self, key, fut: Future) -> None:
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job[0] is fut and not _failed(fut):
                self._jobs.pop(key, None)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no job is pending or running (tests, benchmarks); True if none is left."""
        import concurrent.futures as cf

        with self._lock:
            futs = [f for f, _ in self._jobs.values()]
        if not futs:
            return True
        _, not_done = cf.wait(futs, timeout=timeout)
        return not not_done


def _was_cancelled(fut: Future) -> bool:
    """Cancelled before it started, or stopped (AccuracyCancelled) while running."""
    if not fut.done():
        return False
    if fut.cancelled():
        return True
    return isinstance(fut.exception(), AccuracyCancelled)


def _failed(fut: Future) -> bool:
    """Finished with an error other than a cancellation (kept, so that the page can show it)."""
    try:
        exc = fut.exception(timeout=0)
    except CancelledError:
        return False
    return exc is not None and not isinstance(exc, AccuracyCancelled)


#: The process-wide jobs of the dashboard (one worker thread, created on first use).
JOBS = AccuracyJobs()
