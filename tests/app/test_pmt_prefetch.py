"""The PMT page computes the neighbouring epsilons of a bundled view ahead of the key press
(:mod:`ui.pmt.prefetch`): the next move either way is a cache hit, with the numbers a fresh computation
gives; an upload is never prefetched."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest


from ui.pmt.compute import core as C
from ui.pmt import prefetch as P

from conftest import linear_csv, new_app  # the harness: tests/conftest.py


def test_neighbours_are_the_slider_values_next_to_epsilon():
    assert P.neighbour_epsilons(1.0) == [0.7, 1.5]
    assert P.neighbour_epsilons(0.05) == [0.07] and P.neighbour_epsilons(20.0) == [15.0]
    assert P.neighbour_epsilons(0.8) == []  # not a slider value (e.g. from a hand-edited link): nothing


@pytest.fixture
def counted(monkeypatch):
    """Which thread called the engine's sweep and diagnostics (the page's cached functions call these)."""
    calls = []
    for name in ("sweep", "diagnostics"):
        real = getattr(C, name)

        def wrap(data, spec, _real=real, _name=name):
            calls.append((threading.current_thread().name.split("-")[0], _name, spec.get("epsilon")))
            return _real(data, spec)

        monkeypatch.setattr(C, name, wrap)
    P.forget()
    return calls


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _page(seeds: int, epsilon: float | None = None) -> AppTest:
    query = {"seeds": str(seeds)} if epsilon is None else {"seeds": str(seeds), "epsilon": str(epsilon)}
    at = new_app("pmt", timeout=240, query=query).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_the_next_epsilon_either_way_is_computed_ahead_and_equals_a_fresh_computation(counted):
    import streamlit as st

    st.cache_data.clear()  # earlier tests may have computed this view's neighbours already
    at = _page(seeds=3)
    assert P.wait_idle(120)
    ahead = [c for c in counted if c[0] == "pmt"]
    assert {(kind, eps) for _, kind, eps in ahead} >= {("diagnostics", 0.7), ("diagnostics", 1.5)}
    assert len([c for c in ahead if c[1] == "sweep"]) == 2  # the two point sweeps
    counted.clear()
    at.select_slider(key="epsilon").set_value(1.5).run()
    assert not at.exception
    assert not [c for c in counted if c[0] != "pmt"], counted  # the page itself computed nothing: all hits
    moved = _metrics(at)
    fresh = _page(seeds=3, epsilon=1.5)  # the same view opened directly: the same numbers, bit for bit
    # (PMT's default joint form is at the non-private RMSE on CCPP at both epsilons, 4.48: the baselines move)
    assert _metrics(fresh) == moved and moved != _metrics(_page(seeds=3))


def _csv(n: int = 300) -> bytes:
    return linear_csv(n, seed=5)


def test_an_upload_is_never_prefetched(counted):
    at = _page(seeds=2)
    assert P.wait_idle(120)
    at.file_uploader(key="pmt_upload_file").set_value(("mine.csv", _csv(), "text/csv")).run()
    labels = [b.label for b in at.button]
    at.button[labels.index("Use this data")].click().run()
    assert not at.exception and at.session_state["data"] == "upload:mine.csv"
    counted.clear()
    at.select_slider(key="epsilon").set_value(2.0).run()
    assert P.wait_idle(120)
    assert counted and not [c for c in counted if c[0] == "pmt"], counted  # computed by the page only
