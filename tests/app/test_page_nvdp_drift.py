"""AppTest: the NVDP page's Training drift tab and the learning-rate schedule control.

The tiny model pair of tests/app/test_page_nvdp.py (60 sentences, 1 epoch) is trained once into a temporary
cache; the tab draws the shipped trace (assets/nvdp/drift_trace.json) whatever the live models are, and
evaluates the drifted checkpoint live only on the bundled sentences' default split (not here).
"""

from __future__ import annotations

import os

import pytest
import torch
from streamlit.testing.v1 import AppTest


from engine.nvdp import drift as D
from engine.nvdp import explore as X

from conftest import new_app  # the harness: tests/conftest.py

ENV = {"NVDP_PAGE_N_SENTENCES": "60", "NVDP_PAGE_EPOCHS": "1"}


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory):
    old = {k: os.environ.get(k) for k in (*ENV, "NVDP_CACHE_DIR")}
    path = tmp_path_factory.mktemp("nvdp_drift_cache")
    os.environ.update(ENV, NVDP_CACHE_DIR=str(path))
    torch.set_num_threads(min(2, torch.get_num_threads()))
    try:
        X.load_or_train(X.ExploreSettings.from_env())
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _app(**state) -> AppTest:
    return new_app("nvdp", timeout=240, **state)


def test_training_drift_tab_draws_the_shipped_trace(tiny_cache):
    at = _app(nvdp_tab="Training drift").run()
    assert not at.exception, [e.message for e in at.exception]
    text = " ".join(md.value for md in at.markdown)
    trace = D.load_trace()
    assert D.drift_lead(trace) in text and D.drift_note(trace).split("\n\n")[0] in text
    assert D.release_sentence(D.drifted_figures()) in text
    # the tiny models are not the bundled sentences' split: the recorded figures only, no live switch
    assert not any(t.label.startswith("Clip this checkpoint") for t in at.toggle)
    assert any("Live evaluation needs the bundled sentences" in c.value for c in at.caption)
    at.radio(key="nvdp_drift_metric").set_value("accuracy").run()
    assert not at.exception


def test_schedule_control_and_link(tiny_cache):
    at = _app().run()
    assert not at.exception
    assert at.radio(key="nvdp_lr_schedule").value == "constant"
    bad = new_app("nvdp", timeout=240, query={"lr": "cosine"}).run()
    assert any("lr=cosine was ignored" in w.value for w in bad.warning)
    assert bad.session_state["nvdp_lr_schedule"] == "constant"
