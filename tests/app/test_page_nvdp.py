"""AppTest flows of the NVDP explorer page (app_pages/nvdp.py) inside the app.py frame.

A tiny model pair (60 sentences, 1 epoch; ``NVDP_PAGE_N_SENTENCES`` / ``NVDP_PAGE_EPOCHS``) is
trained once per module into a temporary ``NVDP_CACHE_DIR``, so the page loads it instead of
training. Plotly charts are opaque to AppTest: the tests assert on metrics, errors, session state,
the URL and the export's CLI command; the figures are tested in tests/engine/test_figures_nvdp.py.
"""

from __future__ import annotations

import os
import shlex

import pytest
import torch
from streamlit.testing.v1 import AppTest


from engine.nvdp import explore as X
from engine.nvdp.clipping import ClipConfig

from conftest import new_app  # the harness: tests/conftest.py

PAGE = "app_pages/nvdp.py"
TIMEOUT = 240
ENV = {"NVDP_PAGE_N_SENTENCES": "60", "NVDP_PAGE_EPOCHS": "1"}


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory):
    old = {k: os.environ.get(k) for k in (*ENV, "NVDP_CACHE_DIR")}
    path = tmp_path_factory.mktemp("nvdp_page_cache")
    os.environ.update(ENV, NVDP_CACHE_DIR=str(path))
    torch.set_num_threads(min(2, torch.get_num_threads()))
    try:
        settings = X.ExploreSettings.from_env()
        data, models = X.load_or_train(settings)
        yield settings, data, models
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _app(**state) -> AppTest:
    return new_app("nvdp", timeout=TIMEOUT, **state)


def _metrics(at) -> dict:
    return {m.label: (m.value, m.delta) for m in at.metric}


def _no_exceptions(at):
    assert not at.exception, [e.message for e in at.exception]


def test_page_shows_headline_metrics_from_the_cached_models(tiny_cache):
    settings, data, models = tiny_cache
    at = _app().run()
    _no_exceptions(at)
    assert at.title[0].value.startswith("NVDP embeddings")
    m = _metrics(at)
    states, y = data.split("test")
    clipped = X.posthoc_evaluate(models["clipped"], states, y, settings.train_clip, seed=0)
    unclipped = X.posthoc_evaluate(models["unclipped"], states, y, ClipConfig(enabled=False), seed=0)
    assert m["Accuracy"] == (f"{100 * clipped.accuracy:.1f}%", f"unclipped {100 * unclipped.accuracy:.1f}%")
    # the worst case over all evaluated pairs, and the authors' filtered max beside it, labelled
    assert m["RD worst case"][0] == f"{clipped.rd_paper.max_unfiltered:.3g}"
    assert m["RD worst case"][1] == f"unclipped {unclipped.rd_paper.max_unfiltered:.3g}"
    assert m["RD filtered max"][0] == f"{clipped.rd_paper.max:.3g}"
    assert clipped.rd_paper.max_unfiltered >= clipped.rd_paper.max
    assert m["BDP epsilon"][0] == f"{clipped.bdp_paper.epsilon:.3g}"
    # guarantee form, padding "strict": sentences of different lengths have no finite bound
    assert clipped.rd_exact.n_inf > 0 and m["RD max (exact)"][0] == "infinite"
    verdict = " ".join(md.value for md in at.markdown if "Same pairs" in md.value)
    assert f"{clipped.rd_exact.n_inf} pairs have no finite bound with clipping" in verdict
    assert ("**holds here**" in verdict) == (clipped.rd_paper.max_unfiltered < unclipped.rd_paper.max_unfiltered
                                            and clipped.rd_paper.mean < unclipped.rd_paper.mean
                                            and clipped.accuracy >= unclipped.accuracy - 0.01)
    assert "makes the exact bound finite" not in " ".join(md.value for md in at.markdown)
    # the lead sentence above the numbers: here no finite guarantee, and why (computed from the pairs)
    lead = [md.value for md in at.markdown if md.value.startswith(":red[**No finite guarantee here, because")]
    assert lead and f"{clipped.rd_exact.n_inf} of {clipped.rd_exact.n_pairs} sentence pairs" in lead[0]
    assert "BDP guarantee (est.)" in m
    # every abbreviation is spelled out on the page
    intro = " ".join(md.value for md in at.markdown)
    for term in ("nonparametric variational differential privacy", "Renyi divergence", "Bayesian differential privacy",
                 "nonparametric variational information bottleneck"):
        assert term in intro
    assert [t.label for t in at.tabs] == ["Privacy bound", "Utility", "Training drift", "Posterior parameters", "Sentence inspector", "Export"]
    # no training happened: no progress bar, the models were loaded
    assert not any("Training two small models" in md.value for md in at.markdown)


def test_moving_C_mu_updates_the_clipped_figures_only(tiny_cache):
    at = _app().run()
    before = _metrics(at)
    lo = at.slider(key="nvdp_C_mu").min
    at.slider(key="nvdp_C_mu").set_value(lo).run()
    _no_exceptions(at)
    after = _metrics(at)
    assert after["RD mean"][0] != before["RD mean"][0]
    assert after["RD mean"][1] == before["RD mean"][1]  # unclipped stays
    assert after["Accuracy"][1] == before["Accuracy"][1]
    assert at.query_params["C_mu"] in (f"{lo:g}", [f"{lo:g}"])


def test_alpha_min_above_alpha_max_is_explained_and_settings_are_kept(tiny_cache):
    at = _app().run()
    at.slider(key="nvdp_C_mu").set_value(3.0).run()
    at.slider(key="nvdp_alpha_max").set_value(0.5).run()
    at.slider(key="nvdp_alpha_min").set_value(0.8).run()
    _no_exceptions(at)
    assert len(at.error) == 1
    msg = at.error[0].value
    assert "alpha_min (0.8) is larger than alpha_max (0.5)" in msg
    assert not at.metric  # nothing computed from an invalid combination
    assert at.session_state["nvdp_C_mu"] == 3.0 and at.session_state["nvdp_alpha_max"] == 0.5
    at.slider(key="nvdp_alpha_max").set_value(1.0).run()
    assert not at.error and at.metric


def test_shared_link_sets_the_sliders_and_bad_values_are_reported(tiny_cache):
    at = new_app("nvdp", timeout=TIMEOUT, query={"C_mu": "2.5", "renyi_order": "1.5", "alpha_max": "99"}).run()
    _no_exceptions(at)
    assert at.session_state["nvdp_C_mu"] == 2.5 and at.session_state["nvdp_renyi_order"] == 1.5
    assert at.session_state["nvdp_alpha_max"] == 1.0
    assert any("alpha_max=99 was ignored" in w.value for w in at.warning)
    assert "sigma >= 0.5774" in " ".join(c.value for c in at.caption)  # floor at lambda 1.5


def test_sentence_inspector_identical_and_empty_sentences(tiny_cache):
    at = _app(nvdp_tab="Sentence inspector", nvdp_sent_a="Great food.", nvdp_sent_b="Great food.").run()
    _no_exceptions(at)
    assert "RD bound between A and B (exact)" not in _metrics(at)  # the encoder loads only on request
    at.button(key="nvdp_inspect_go").click().run()
    _no_exceptions(at)
    m = _metrics(at)
    assert float(m["RD bound between A and B (exact)"][0]) == pytest.approx(0.0, abs=1e-6)
    at.text_input(key="nvdp_sent_b").set_value("   ").run()
    assert any("sentence_b is empty" in e.value for e in at.error)
    assert at.metric  # the rest of the page still shows


def test_export_command_matches_the_models(tiny_cache):
    settings, *_ = tiny_cache
    at = _app().run()
    assert not at.code  # only the open tab (Privacy bound) is built
    at = _app(nvdp_tab="Export").run()
    codes = [c.value for c in at.code]
    train = codes[0].splitlines()
    assert train[0] == X.cli_command(settings, model_dir="artifacts/nvdp/clipped")
    assert "--no-clip" in train[1]
    ev = shlex.split(codes[1])
    assert ev[ev.index("--C-mu") + 1] == "5" and ev[ev.index("--alpha-min") + 1] == f"{X.DEFAULT_TRAIN_CLIP.alpha_min:g}"
    assert any("subset of 60 sentences" in c.value for c in at.caption)


def test_cancelled_training_waits_for_the_user(tiny_cache):
    at = _app(nvdp_seed=5, nvdp_cancelled=True).run()
    _no_exceptions(at)
    assert any("Training was cancelled" in i.value for i in at.info)
    assert at.button(key="nvdp_train_now") is not None
    assert not at.metric


def test_retrain_with_these_trains_a_clipped_model_with_progress(tiny_cache):
    settings, data, _ = tiny_cache
    at = _app().run()
    at.slider(key="nvdp_C_mu").set_value(2.0).run()
    at.button(key="nvdp_retrain").click().run()  # trains (tiny), then reruns and loads
    _no_exceptions(at)
    assert at.session_state["nvdp_train_clip"]["C_mu"] == 2.0
    assert any("Clipped model trained with C_mu = 2," in c.value for c in at.caption)
    new = X.ExploreSettings.from_env(train_clip=ClipConfig.from_dict(at.session_state["nvdp_train_clip"]))
    assert X.cached_models_exist(new)
    # the unclipped model was reused, not retrained
    assert X.models_dir(new, data.states.key, "unclipped") == X.models_dir(settings, data.states.key, "unclipped")


def test_bdp_over_renyi_orders_reports_the_tightest_order_and_why_infinite(tiny_cache):
    at = _app().run()
    at.toggle(key="nvdp_order_curve").set_value(True).run()
    _no_exceptions(at)
    caps = " ".join(c.value for c in at.caption)
    assert "Tightest order, guarantee:" in caps and "Tightest order, paper protocol: lambda =" in caps
    # 10 test sentences of different lengths in one batch: the guarantee is infinite and the page says why
    assert "different lengths" in caps


def test_a_slider_move_shows_the_accuracy_of_the_new_caps_and_builds_only_the_open_tab(tiny_cache):
    """The bounds are drawn first, the accuracy last in the same run (computed on the
    worker thread of engine.nvdp.background), never one of other caps."""
    settings, data, models = tiny_cache
    at = _app().run()
    states, y = data.split("test")
    for c_mu in (2.0, 3.0):
        at.slider(key="nvdp_C_mu").set_value(c_mu).run()
        _no_exceptions(at)
        clip = ClipConfig(**{**settings.train_clip.to_dict(), "C_mu": c_mu})
        fresh = X.posthoc_evaluate(models["clipped"], states, y, clip, seed=0)
        m = _metrics(at)
        assert m["Accuracy"][0] == f"{100 * fresh.accuracy:.1f}%"
        assert m["RD mean"][0] == f"{fresh.rd_paper.mean:.3g}"
        timing = at.session_state["_nvdp_timing"]
        assert timing["answer"] <= timing["done"]
    assert not any("computing" in v for v, _ in _metrics(at).values())
    verdict = " ".join(md.value for md in at.markdown if "Same pairs" in md.value)
    assert f"Accuracy {100 * fresh.accuracy:.1f}%" in verdict
    # the Utility tab, when opened, shows the same accuracy; the Privacy bound tab's table is then not built
    at.session_state["nvdp_tab"] = "Utility"
    at.run()
    _no_exceptions(at)
    assert not at.dataframe and _metrics(at)["Accuracy"][0] == f"{100 * fresh.accuracy:.1f}%"


def test_a_new_run_stops_the_accuracy_job_of_settings_its_session_has_left(tiny_cache):
    """Dragging a slider never waits for accuracies of positions already left: as soon
    as a run knows its settings, its session's jobs for other settings are stopped (ui/nvdp/live.py)."""
    import threading

    from engine.nvdp.background import JOBS
    from engine.nvdp.posthoc import AccuracyCancelled

    at = _app().run()
    slot = at.session_state["_nvdp_slot"]
    started, stopped = threading.Event(), threading.Event()

    def held(stop):  # an accuracy of a position this session has just left, still running
        started.set()
        while not stop.wait(0.01):
            pass
        stopped.set()
        raise AccuracyCancelled("stopped")

    old = ("model", "clipped", '{"C_mu": 9.9}', 0)
    fut = JOBS.request(slot, {old: held})[old]
    assert started.wait(30)
    at.slider(key="nvdp_C_mu").set_value(2.6).run()
    _no_exceptions(at)
    assert stopped.wait(30) and isinstance(fut.exception(timeout=30), AccuracyCancelled)
    assert "%" in _metrics(at)["Accuracy"][0]  # the new position's accuracy was computed after it


def test_after_the_first_view_the_unclipped_bounds_of_every_order_are_prefetched(tiny_cache, monkeypatch):
    """An order move then computes the clipped model's bounds only."""
    import engine.nvdp.posthoc as PH
    from engine.nvdp.background import PREFETCH

    import threading

    calls = []
    orig = PH.evaluate_bounds

    def counted(post, lam, *a, **k):  # the page's own computations (the prefetch worker's are not the move's)
        if not threading.current_thread().name.startswith("nvdp-accuracy"):
            calls.append(lam)
        return orig(post, lam, *a, **k)

    monkeypatch.setattr(PH, "evaluate_bounds", counted)
    at = _app(nvdp_C_mu=4.4).run()  # caps of its own: nothing of them cached by other tests
    assert PREFETCH.wait(timeout=120)
    calls.clear()
    at.select_slider(key="nvdp_renyi_order").set_value(3.0).run()
    _no_exceptions(at)
    assert calls == [3.0]  # the clipped model's bounds; the unclipped ones at 3.0 were prefetched
    assert _metrics(at)["RD worst case"][1].startswith("unclipped")


def test_after_a_move_the_clipped_bounds_one_key_press_away_are_prefetched(tiny_cache, monkeypatch):
    """From the session's second run on, the page computes the clipped model's bounds at the slider positions one
    arrow-key press away (ui.nvdp.controls.neighbour_clips) on the prefetch worker: the next press finds them."""
    import threading

    import engine.nvdp.posthoc as PH
    from engine.nvdp.background import PREFETCH

    page, ahead = [], []  # the orders of the bounds computed by the page's thread / by the prefetch worker
    orig = PH.evaluate_bounds

    def counted(post, lam, *a, **k):
        (ahead if threading.current_thread().name.startswith("nvdp-accuracy") else page).append(lam)
        return orig(post, lam, *a, **k)

    monkeypatch.setattr(PH, "evaluate_bounds", counted)
    at = _app(nvdp_C_mu=4.6).run()  # caps of their own: nothing of them cached by other tests
    assert PREFETCH.wait(timeout=120)
    page.clear(), ahead.clear()
    at.select_slider(key="nvdp_renyi_order").set_value(1.2).run()  # the first move: computed here
    _no_exceptions(at)
    assert page == [1.2]
    assert PREFETCH.wait(timeout=120)
    # its neighbours, the moved slider's first: order 1.5 (1.1 is the first view's, cached), then at order 1.2 the caps
    # one step away: C_mu 4.5 and 4.7, alpha_min 0.01 (not -0.01), alpha_max 0.95 and 1.05
    assert ahead == [1.5] + [1.2] * 5
    page.clear()
    at.select_slider(key="nvdp_renyi_order").set_value(1.5).run()  # one key press: nothing left to compute
    _no_exceptions(at)
    assert page == []
    assert PREFETCH.wait(timeout=120)
    at.slider(key="nvdp_C_mu").set_value(4.7).run()  # the C_mu slider's next step from 4.6 (its step is 0.1)
    _no_exceptions(at)
    assert page == []


def test_the_neighbouring_clippings_are_one_step_away_valid_and_the_moved_slider_first():
    from engine.nvdp.clipping import ClipConfig
    from ui.nvdp.controls import neighbour_clips

    c = ClipConfig(enabled=True, C_mu=2.9, alpha_min=0.3, alpha_max=0.3, renyi_order=3.0, sigma_max=0.99)
    got = [(n.C_mu, n.alpha_min, n.alpha_max, n.renyi_order) for n in neighbour_clips(c, (1.0, 2.95), "alpha_max")]
    # C_mu 3.0 is beyond the slider's range; alpha_min 0.31 above alpha_max and alpha_max 0.25 below alpha_min are
    # positions the page refuses; 3.0 is the last order; the sigma cap is kept
    assert got == [(2.9, 0.3, 0.35, 3.0), (2.8, 0.3, 0.3, 3.0), (2.9, 0.29, 0.3, 3.0), (2.9, 0.3, 0.3, 2.0)]
    assert all(n.sigma_max == 0.99 and n.enabled for n in neighbour_clips(c, (1.0, 5.0)))
    # a value the slider sends after 0.1 + 0.2 (not 0.30000000000000004): the key of the press's own computation
    assert neighbour_clips(ClipConfig(enabled=True, C_mu=0.2), (0.1, 1.0), "C_mu")[1].C_mu == 0.3
