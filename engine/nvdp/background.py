"""Accuracies of new clipping settings computed on a worker thread.

A slider move on the NVDP page changes the bounds (tens of milliseconds once the per-model terms
are cached) and the accuracy (the model re-run after the bottleneck on every test sentence: real
FLOPs, about 0.2 s of two cores). The page draws the bounds and the figure first, then waits for
the accuracy, which :class:`AccuracyJobs` computes on one worker thread: the page's own thread
stays free to notice the user's next move meanwhile and to give way to it at once (a computation
in the page's thread could not be interrupted), and the job the move supersedes is stopped.

Each *slot* (a browser session) waits for one set of keys at a time: a newer request from the
same slot cancels the jobs it no longer wants (not started: dropped; running: stopped before
its next batch of sentences, :class:`~engine.nvdp.posthoc.AccuracyCancelled`, nothing memoised),
so dragging a slider never queues a backlog of accuracies nobody will see. Requests for a key
that is already pending or running are shared, whichever slot made them.

Privacy: this changes when a number is computed, never which one. The values are those of
:meth:`LiveEvaluator.accuracy <engine.nvdp.posthoc.LiveEvaluator.accuracy>` (same seed, same
draws, memoised only when complete). Nothing here imports Streamlit.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Hashable

from engine.nvdp.posthoc import AccuracyCancelled

__all__ = ["AccuracyJobs", "JOBS", "PREFETCH"]


class AccuracyJobs:
    """A background worker computing accuracies (or other memoised work), for the keys each slot asked for last.

    Parameters
    ----------
    max_workers : int, default 1
        Worker threads. One: the jobs use torch's intra-op threads (both cores) already, and one
        at a time keeps a cancelled job from competing with the current one.
    """

    def __init__(self, max_workers: int = 1):
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="nvdp-accuracy")
        self._lock = threading.RLock()  # a done callback can run inside request (a job that finished at once)
        self._jobs: dict[Hashable, tuple[Future, threading.Event]] = {}  # key -> (future, stop)
        self._slots: dict[Hashable, set] = {}  # slot -> keys it is waiting for

    def request(self, slot: Hashable, wanted: dict) -> dict:
        """``slot`` now waits for exactly the keys of ``wanted``; start (or join) their jobs.

        The keys that ``slot`` requested before, that are not wanted now and that no other slot is
        waiting for are cancelled (not started: dropped; running: their ``stop`` event is set, and
        the job is expected to raise :class:`~engine.nvdp.posthoc.AccuracyCancelled` at its next
        check). A pending or running job for a wanted key is shared; a finished one is returned as
        is (until the done callback forgets it) unless it was cancelled, in which case it runs again.

        Parameters
        ----------
        slot : hashable
            Who asks (e.g. a browser session's id).
        wanted : dict
            ``{key: fn}``: what is computed (equal keys must mean equal results) and how,
            ``fn(stop: threading.Event)`` computing and memoising the result.

        Returns
        -------
        dict
            ``{key: concurrent.futures.Future}`` for the keys of ``wanted``.
        """
        with self._lock:
            self._retain(slot, set(wanted))
            out = {}
            for key, fn in wanted.items():
                job = self._jobs.get(key)
                if job is None or _was_cancelled(job[0]):
                    stop = threading.Event()
                    job = (self._pool.submit(fn, stop), stop)
                    self._jobs[key] = job
                    # finished jobs are forgotten (their results live in the evaluator's memo)
                    job[0].add_done_callback(lambda f, k=key: self._forget(k, f))
                out[key] = job[0]
            return out

    def retain(self, slot: Hashable, keys) -> None:
        """Cancel the jobs ``slot`` requested that are not in ``keys`` (and no other slot waits for).

        A page calls this as soon as it knows the settings of a new run, before its other work, so
        that a superseded job stops competing for the cores at once.
        """
        with self._lock:
            self._retain(slot, set(keys))

    def _retain(self, slot, keys: set) -> None:
        old = self._slots.get(slot, set()) - keys
        self._slots[slot] = set(keys)
        for k in old:
            if not any(k in ks for s, ks in self._slots.items() if s != slot):
                job = self._jobs.pop(k, None)
                if job is not None:
                    job[1].set()
                    job[0].cancel()

    def _forget(self, key, fut: Future) -> None:
        """Drop a finished job: its result is memoised by the evaluator, and whoever waits on it holds
        the future (so an error still reaches them); a later request for its key runs it again. The
        key leaves every slot, and a slot left waiting for nothing is dropped (no growth per session)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job[0] is fut:
                self._jobs.pop(key, None)
            for slot in [s for s, ks in self._slots.items() if key in ks]:
                self._slots[slot].discard(key)
                if not self._slots[slot]:
                    del self._slots[slot]

    def running(self, key: Hashable) -> bool:
        """Whether a job for ``key`` is pending or running."""
        with self._lock:
            job = self._jobs.get(key)
            return job is not None and not job[0].done()

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


#: The process-wide jobs of the dashboard (one worker thread, created on first use).
JOBS = AccuracyJobs()

#: Work done ahead of a likely request (e.g. the unclipped model's bounds at every Renyi order the
#: page offers) on its own worker thread, so that it never queues in front of an accuracy.
PREFETCH = AccuracyJobs()
