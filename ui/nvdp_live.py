"""Live sliders of the NVDP page: the accuracy of new caps off the rerun's critical path (issue 14 item 7).

A slider move reruns the page; the bounds and the open tab's figure are drawn at once (they are
cheap once the per-model terms are cached). The accuracy (the model re-run after the bottleneck
on every test sentence) is handed to :data:`engine.nvdp.background.JOBS`; the run ends, its metric
reads "computing ...", and :func:`poll_then_rerun` reruns the page when the job is done, which then
draws the memoised accuracy and the verdict. A newer move from the same browser session cancels
the job it supersedes (:class:`engine.nvdp.background.AccuracyJobs`), so dragging a slider never
waits for accuracies of positions it has left. Where a view needs the accuracy in the same run
(the first view of a session, the Utility and Export tabs), :func:`with_accuracy` waits for the
job (or computes it) instead.
"""

from __future__ import annotations

import json
import uuid
from concurrent.futures import CancelledError, Future

import streamlit as st

from engine.nvdp.background import JOBS
from engine.nvdp.posthoc import AccuracyCancelled, LiveEvaluator, PosthocResult

#: How often a page waiting for an accuracy checks its job (seconds).
POLL_SECONDS = 0.15


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
    """This browser session's slot in the background jobs (a newer request replaces its older one)."""
    return st.session_state.setdefault("_nvdp_slot", uuid.uuid4().hex)


def accuracy_job(live: LiveEvaluator, key: str, which: str, res: PosthocResult) -> Future:
    """The background job computing ``res``'s accuracy on ``live`` (shared by equal requests).

    The clipped posteriors are taken here, in the script's thread (memoised by the evaluator's
    clipper for the bounds already), so the job only runs the model after the bottleneck.
    """
    post = live.clip(res.clip)[0]
    job_key = (key, which, json.dumps(res.clip.to_dict(), sort_keys=True, default=float), int(res.seed))
    return JOBS.submit(_slot(), job_key,
                       lambda stop: live.accuracy(res.clip, res.seed, clipped=post, stop=stop))


def with_accuracy(live: LiveEvaluator, key: str, which: str, res: PosthocResult, *, now: bool = True) -> PosthocResult:
    """``res`` with its accuracy: memoised, else (``now``) waited for or computed here; else ``res`` as is.

    A job cancelled by a newer request is recomputed in this thread; any other error of the job
    is raised here, as a computation in this thread would have raised it.
    """
    if res.accuracy is not None or live.has_accuracy(res.clip, res.seed):
        return live.complete(res)
    if not now:
        return res
    try:
        accuracy_job(live, key, which, res).result()
    except (CancelledError, AccuracyCancelled):
        pass
    return live.complete(res)


def start(jobs: list[tuple[LiveEvaluator, str, str, PosthocResult]]) -> list[Future]:
    """Start (or join) the background jobs of the results whose accuracy is missing."""
    return [accuracy_job(live, key, which, res) for live, key, which, res in jobs if res.accuracy is None]


def poll_then_rerun(futures: list[Future]) -> None:
    """Rerun the page as soon as every job in ``futures`` has finished (a fragment polling every
    :data:`POLL_SECONDS`; it draws nothing). The rerun then finds the accuracies memoised, or, for a
    job that failed, computes again in its own thread and shows the error there.
    """

    def _poll():
        if all(f.done() for f in futures):
            st.rerun()

    st.fragment(run_every=POLL_SECONDS)(_poll)()
