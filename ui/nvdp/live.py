"""Live sliders of the NVDP page: the accuracy of new caps, without blocking the next move.

A slider move reruns the page. Its bounds are computed first; then the accuracy (the model re-run
after the bottleneck on every test sentence: real FLOPs) starts on the worker thread of
:data:`engine.nvdp.background.JOBS` (:func:`start`) while the page draws the bounds and the open
tab's figure (sent to the browser as they are drawn). At the end the page's thread waits for it
in short steps and touches a placeholder between them (:func:`complete_all`): each touch is a point
where Streamlit stops this run if the user has moved a slider again, so the next move never waits
for an accuracy of a position already left, and that job is stopped when the next run knows its
own settings (:func:`retain`). Every number is that of a computation in the page's thread (same
seed, same draws; memoised only when complete).
"""

from __future__ import annotations

import uuid
from concurrent.futures import CancelledError, wait

import streamlit as st

from engine.nvdp.background import JOBS, PREFETCH
from engine.nvdp.posthoc import AccuracyCancelled, LiveEvaluator, PosthocResult

#: How long the page waits for an accuracy between two chances to give way to a newer move (s).
STEP_SECONDS = 0.05


def user_store() -> dict:
    """Session-only results for uploaded texts (never in the process-wide caches, never on disk)."""
    return st.session_state.setdefault("_nvdp_user_cache", {})


def user_live(key: str, which: str, models, data) -> LiveEvaluator:
    """The evaluator of an uploaded data set's model, kept in this session only."""
    store = user_store()
    if ("live", key, which) not in store:
        states, y = data.split("test")
        store[("live", key, which)] = LiveEvaluator(models[which], states, y)
    return store[("live", key, which)]


def _slot() -> str:
    """This browser session's slot in the jobs (a newer request replaces its older one)."""
    return st.session_state.setdefault("_nvdp_slot", uuid.uuid4().hex)


def job_key(live: LiveEvaluator, key: str, which: str, clip, seed: int) -> tuple:
    """What an accuracy job computes: on which evaluator (two sessions' uploads of the same file have
    their own), the model, and what the accuracy depends on (:meth:`LiveEvaluator.accuracy_key`: the
    clipping, whose order a disabled one ignores, and the seed). A job holds its evaluator, so the
    id is not reused while the job is known."""
    return id(live), key, which, live.accuracy_key(clip, seed)


def retain(keys) -> None:
    """Stop this session's jobs for settings it has left (call as soon as a run knows its own)."""
    JOBS.retain(_slot(), set(keys))


def with_accuracy(live: LiveEvaluator, key: str, which: str, res: PosthocResult, *, now: bool = True) -> PosthocResult:
    """``res`` with its accuracy: memoised, else (``now``) computed; else ``res`` as is."""
    return complete_all([(live, key, which, res)])[0] if now else (
        live.complete(res) if res.accuracy is not None or live.has_accuracy(res.clip, res.seed) else res)


def _wanted(items) -> dict:
    wanted = {}
    for live, key, which, res in items:
        if res.accuracy is None and not live.has_accuracy(res.clip, res.seed):
            post = live.clip(res.clip)[0]  # memoised by the evaluator's clipper for the bounds already
            wanted[job_key(live, key, which, res.clip, res.seed)] = (lambda stop, live=live, res=res, post=post:
                                                               live.accuracy(res.clip, res.seed, clipped=post, stop=stop))
    return wanted


def start(items: list[tuple[LiveEvaluator, str, str, PosthocResult]]) -> None:
    """Start the accuracy jobs of ``items`` now (the worker computes while this thread draws)."""
    wanted = _wanted(items)
    if wanted:
        JOBS.request(_slot(), wanted)


def complete_all(items: list[tuple[LiveEvaluator, str, str, PosthocResult]]) -> list[PosthocResult]:
    """Each ``res`` with its accuracy, computed on the worker thread while this thread gives way to a newer move.

    ``items`` are ``(evaluator, model key, which, res)``. Memoised accuracies are used at once; the
    others are requested together (:meth:`engine.nvdp.background.AccuracyJobs.request`). While
    waiting, a placeholder is touched every :data:`STEP_SECONDS`: Streamlit raises its rerun
    exception there when the user has moved on. A job stopped for another session is recomputed
    in this thread; any other error of a job is raised here, as a computation here would raise it.
    """
    wanted = _wanted(items)
    if wanted:
        futures = list(JOBS.request(_slot(), wanted).values())
        beat = st.empty()
        while wait(futures, timeout=STEP_SECONDS).not_done:
            beat.empty()  # a yield point: a newer move stops this run here
        for f in futures:
            try:
                f.result()
            except (CancelledError, AccuracyCancelled):
                pass  # stopped on behalf of another session: computed below, in this thread
    return [live.complete(res) for live, key, which, res in items]


def prefetch_bounds(live: LiveEvaluator, key: str, clips, protocol) -> None:
    """Compute the bounds of ``clips`` on ``live`` ahead of need, on the prefetch worker (once per model).

    The page asks this for the unclipped model at every Renyi order it offers (they do not depend on
    the caps): an order move then computes the clipped model's bounds only.
    """
    clips = list(clips)
    job = ("prefetch", key)
    if PREFETCH.running(job) or all(live.has_bounds(c, protocol) for c in clips):
        return
    PREFETCH.request(job, {job: lambda stop: live.prefetch_bounds(clips, protocol, stop=stop)})


def _neighbour_slot() -> tuple:
    return ("neighbours", _slot())


def neighbour_key(live: LiveEvaluator, key: str, clip, protocol) -> tuple:
    """The prefetch job of one neighbouring clipping's bounds (:func:`prefetch_neighbours`)."""
    import json

    return "neighbour", id(live), key, json.dumps(clip.to_dict(), sort_keys=True, default=float), repr(protocol)


def prefetch_neighbours(live: LiveEvaluator, key: str, clips, protocol) -> None:
    """Compute the bounds of ``clips`` (the slider positions one key press away, :func:`ui.nvdp.controls.neighbour_clips`)
    on ``live`` ahead of need, on the prefetch worker, one job each, in the order given.

    This session's earlier neighbours that are not among ``clips`` are cancelled. The values are those the page's own
    :meth:`~engine.nvdp.posthoc.LiveEvaluator.evaluate` computes (the same call, memoised by the evaluator).
    """
    wanted = {neighbour_key(live, key, c, protocol): (lambda stop, c=c: live.prefetch_bounds([c], protocol, stop=stop))
              for c in clips if not live.has_bounds(c, protocol)}
    PREFETCH.request(_neighbour_slot(), wanted)


def keep_neighbour(live: LiveEvaluator, key: str, clip, protocol) -> None:
    """At the start of a run: stop this session's neighbour prefetch except the one for ``clip`` (the run's own
    setting, if it is being computed ahead), so that it does not compete with the run for the cores."""
    PREFETCH.retain(_neighbour_slot(), {neighbour_key(live, key, clip, protocol)})
