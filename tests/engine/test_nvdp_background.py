"""Background accuracies of the live sliders (engine/nvdp/background.py).

A newer request from the same session cancels the one it supersedes (pending: dropped; running:
stopped before its next batch, nothing memoised); equal requests share one job; a failed job keeps
its error; a stopped accuracy leaves no trace and the next one has the values of ``evaluate``.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError

import pytest
import torch

from engine.nvdp.background import AccuracyJobs
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.posthoc import AccuracyCancelled, LiveEvaluator
from engine.nvdp.training import evaluate


def _gate_job(started: threading.Event, gate: threading.Event, result, seen_stop: list | None = None):
    def fn(stop):
        started.set()
        while not gate.wait(0.005):
            if stop.is_set():
                if seen_stop is not None:
                    seen_stop.append(True)
                raise AccuracyCancelled("stopped")
        return result

    return fn


def test_a_newer_request_of_the_same_slot_stops_the_running_job_and_drops_the_pending_one():
    jobs = AccuracyJobs()
    s1, g1, seen = threading.Event(), threading.Event(), []
    f1 = jobs.request("session", {"k1": _gate_job(s1, g1, 1, seen)})["k1"]
    assert s1.wait(5)  # k1 is running
    s2, g2 = threading.Event(), threading.Event()
    f2 = jobs.request("other", {"k2": _gate_job(s2, g2, 2)})["k2"]  # another session's job queues behind k1
    f3 = jobs.request("session", {"k3": lambda stop: 3})["k3"]  # supersedes k1 for "session"
    with pytest.raises(AccuracyCancelled):
        f1.result(timeout=5)
    assert seen == [True]  # k1 saw its stop event
    assert s2.wait(5)
    assert not f2.cancelled()  # another session's job is never cancelled by this one
    g2.set()
    assert f2.result(timeout=5) == 2 and f3.result(timeout=5) == 3
    assert jobs.wait(timeout=5)


def test_a_pending_job_is_dropped_before_it_starts():
    jobs = AccuracyJobs()
    s1, g1 = threading.Event(), threading.Event()
    blocker = jobs.request("a", {"block": _gate_job(s1, g1, 0)})["block"]
    assert s1.wait(5)
    ran = []
    f_old = jobs.request("b", {"old": lambda stop: ran.append("old")})["old"]
    f_new = jobs.request("b", {"new": lambda stop: ran.append("new") or "new"})["new"]
    assert f_old.cancelled()
    g1.set()
    assert blocker.result(timeout=5) == 0 and f_new.result(timeout=5) == "new"
    assert ran == ["new"]


def test_equal_requests_share_one_job_and_a_cancelled_one_is_submitted_again():
    jobs = AccuracyJobs()
    s1, g1 = threading.Event(), threading.Event()
    calls = []

    def fn(stop):
        calls.append(1)
        return _gate_job(s1, g1, "v")(stop)

    fa = jobs.request("a", {"k": fn})["k"]
    fb = jobs.request("b", {"k": fn})["k"]
    assert fa is fb
    jobs.request("a", {"other": lambda stop: None})  # "b" still waits for k: not cancelled
    assert not fa.cancelled()
    g1.set()
    assert fa.result(timeout=5) == "v" and len(calls) == 1
    # a job stopped by its session is not reused: the next request for its key runs again
    s2, g2 = threading.Event(), threading.Event()
    f1 = jobs.request("c", {"k2": _gate_job(s2, g2, "x")})["k2"]
    assert s2.wait(5)
    jobs.request("c", {"k3": lambda stop: None})["k3"]
    with pytest.raises((AccuracyCancelled, CancelledError)):
        f1.result(timeout=5)
    g2.set()
    f2 = jobs.request("d", {"k2": lambda stop: "again"})["k2"]
    assert f2 is not f1 and f2.result(timeout=5) == "again"


def test_one_request_keeps_all_its_keys_and_retain_stops_the_others():
    jobs = AccuracyJobs()
    s1, g1, seen = threading.Event(), threading.Event(), []
    futs = jobs.request("s", {"clipped": _gate_job(s1, g1, "c", seen), "unclipped": lambda stop: "u"})
    assert s1.wait(5)
    assert not futs["clipped"].done()  # the second key of the same request did not cancel the first
    jobs.retain("s", {"unclipped"})  # the session moved on: only the clipped job is stopped
    with pytest.raises(AccuracyCancelled):
        futs["clipped"].result(timeout=5)
    assert seen == [True] and futs["unclipped"].result(timeout=5) == "u"


def test_a_failed_job_gives_its_error_to_its_waiter_and_a_later_request_runs_again():
    """A job's error reaches whoever waits on it; the job is then forgotten (no session is served an
    old failure forever: a passing error, e.g. out of memory, clears on the next request), and slots
    left waiting for nothing are dropped (no growth per browser session)."""
    jobs = AccuracyJobs()
    calls = []

    def flaky(stop):
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError("passing")
        return "ok"

    f = jobs.request("a", {"k": flaky})["k"]
    with pytest.raises(MemoryError, match="passing"):
        f.result(timeout=5)
    assert jobs.wait(timeout=5)
    g = jobs.request("b", {"k": flaky})["k"]
    assert g is not f and g.result(timeout=5) == "ok" and len(calls) == 2
    assert jobs.wait(timeout=5)
    time.sleep(0.05)
    assert jobs._slots == {} and jobs._jobs == {}


@pytest.fixture(scope="module")
def tiny_live():
    from conftest import tiny_nvdp

    return tiny_nvdp(seed=7, n=41)


def test_a_stopped_accuracy_memoises_nothing_and_the_next_one_is_that_of_evaluate(tiny_live):
    model, states, y = tiny_live
    live = LiveEvaluator(model, states, y, batch_size=16)  # 3 batches
    clip = ClipConfig(C_mu=2.0, alpha_min=0.2, alpha_max=0.9, renyi_order=1.5)
    stop = threading.Event()
    stop.set()
    with pytest.raises(AccuracyCancelled):
        live.accuracy(clip, 3, stop=stop)
    assert not live.has_accuracy(clip, 3) and not live._noise
    # a stop after the first batch: the partial draws are not kept either
    calls = []
    orig = live.model.classifier.forward

    class StopAfterFirst(threading.Event):
        def is_set(self):
            return len(calls) >= 1

    live.model.classifier.forward = lambda x: calls.append(1) or orig(x)
    try:
        with pytest.raises(AccuracyCancelled):
            live.accuracy(clip, 3, stop=StopAfterFirst())
    finally:
        del live.model.classifier.forward
    assert calls == [1] and not live.has_accuracy(clip, 3) and not live._noise
    jobs = AccuracyJobs()
    acc = jobs.request("s", {"k": lambda stop: live.accuracy(clip, 3, stop=stop)})["k"].result(timeout=60)
    ref = evaluate(model, states, y, clip=clip, seed=3, batch_size=16)
    assert acc == (ref.accuracy, ref.nan_count, ref.inf_count)
    assert live.has_accuracy(clip, 3)


def test_prefetched_bounds_are_those_of_evaluate_and_a_prefetch_can_run_beside_the_page(tiny_live):
    """The page prefetches the unclipped model's bounds at every offered order on another thread; an
    evaluate later finds them cached, with the values of a fresh evaluator, also while a prefetch runs."""
    import warnings

    import numpy as np

    from engine.nvdp.protocol import EvalProtocol

    model, states, y = tiny_live
    proto = EvalProtocol(n_eval=24, batch_size=8)
    orders = (1.01, 1.1, 1.5, 2.0, 3.0)
    clips = [ClipConfig(enabled=False, renyi_order=o) for o in orders]
    live, fresh = LiveEvaluator(model, states, y, batch_size=16), LiveEvaluator(model, states, y, batch_size=16)
    jobs = AccuracyJobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fut = jobs.request("p", {"p": lambda stop: live.prefetch_bounds(clips, proto, stop=stop)})["p"]
        # the page's thread meanwhile evaluates the clipped caps on the same evaluator
        side = live.evaluate(ClipConfig(C_mu=2.0, alpha_min=0.2, alpha_max=0.9, renyi_order=1.5), protocol=proto,
                             with_accuracy=False)
        assert 1 <= fut.result(timeout=120) <= len(clips)
        assert all(live.has_bounds(c, proto) for c in clips)
        assert live.prefetch_bounds(clips, proto) == 0  # nothing left to compute
        for c in clips:
            a = live.evaluate(c, protocol=proto, with_accuracy=False)
            b = fresh.evaluate(c, protocol=proto, with_accuracy=False)
            for f in ("rd_exact", "rd_paper"):
                assert np.array_equal(getattr(a, f).values, getattr(b, f).values, equal_nan=True), (c, f)
            assert a.bdp.epsilon == b.bdp.epsilon or (np.isnan(a.bdp.epsilon) and np.isnan(b.bdp.epsilon))
            assert a.bdp_paper.epsilon == b.bdp_paper.epsilon
        ref = fresh.evaluate(side.clip, protocol=proto, with_accuracy=False)
        assert np.array_equal(side.rd_exact.values, ref.rd_exact.values, equal_nan=True)
    stop = threading.Event()
    stop.set()
    assert LiveEvaluator(model, states, y).prefetch_bounds(clips, proto, stop=stop) == 0  # stopped before the first


def test_cached_results_keep_no_clipped_tensors_and_their_lazy_distributions_match(tiny_live):
    """A page caches up to 128 results: each must not keep its own clipped mu / sigma (about 38 MB each
    at the bundled size) nor its evaluator; the lazily computed "after" distributions are those of the
    clipped posteriors all the same."""
    import numpy as np

    from engine.nvdp.diagnostics import posterior_distributions

    model, states, y = tiny_live
    live = LiveEvaluator(model, states, y, batch_size=16)
    results = [live.evaluate(ClipConfig(C_mu=c, alpha_min=0.2, alpha_max=0.9, renyi_order=1.5), with_accuracy=False)
               for c in (1.0, 2.0, 3.0, 4.0)]
    for r in results:
        maker = r.distributions._makers["after"]
        held = list(maker.args) + list(maker.keywords.values())
        assert not any(h is live for h in held)
        big = [h for h in held if isinstance(h, torch.Tensor) and h.dtype != torch.bool]
        assert big == [], [tuple(t.shape) for t in big]
    for r in results:
        post, _ = live.raw.clip(r.clip)
        ref = posterior_distributions(post, max_values=20000)
        got = r.distributions["after"]
        assert set(got) == set(ref) and all(np.array_equal(got[k], ref[k]) for k in ref)
        assert r.distributions["before"] is results[0].distributions["before"]  # once per evaluator


def test_the_bounds_cache_drops_the_least_recently_used_setting_only(tiny_live, monkeypatch):
    """Past BOUNDS_CACHE_SIZE settings the evaluator forgets the one used longest ago, not all of them (it used to
    drop everything at once, also what a page had just computed ahead)."""
    import warnings

    import engine.nvdp.posthoc as PH
    from engine.nvdp.protocol import EvalProtocol

    monkeypatch.setattr(PH, "BOUNDS_CACHE_SIZE", 3)
    model, states, y = tiny_live
    proto = EvalProtocol(n_eval=24, batch_size=8)
    live = LiveEvaluator(model, states, y, batch_size=16)
    clips = [ClipConfig(C_mu=c, alpha_min=0.2, alpha_max=0.9, renyi_order=1.5) for c in (1.5, 2.0, 2.5, 3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert live.prefetch_bounds(clips[:3], proto) == 3
        live.evaluate(clips[0], protocol=proto, with_accuracy=False)  # used again: now the most recent
        assert live.prefetch_bounds(clips[3:], proto) == 1
    assert [live.has_bounds(c, proto) for c in clips] == [True, False, True, True]
