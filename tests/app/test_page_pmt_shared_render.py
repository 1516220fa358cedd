"""Sessions on the same bundled view share what a rerun draws: the styled figure (the same object, built
once), the headline rows and the bands (:mod:`ui.common.figure_cache`); presenter mode is another figure; an
upload's figures and tables are never stored, and every session still draws exactly its own numbers."""

from __future__ import annotations

import json

import numpy as np
from streamlit.testing.v1 import AppTest


from ui.common import figure_cache as FC
from ui.common import layout as L

from conftest import linear_csv, new_app  # the harness: tests/conftest.py

TIMEOUT = 240


def _session(**state) -> AppTest:
    at = new_app("pmt", timeout=TIMEOUT, query={"seeds": "2"}, **state).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _chart(at) -> dict:
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    return json.loads(charts[0].proto.spec)


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_a_second_session_on_the_same_view_reuses_the_first_sessions_figure_and_tables():
    FC.clear()
    a = _session()
    after_a = FC.stats()
    b = _session()
    after_b = FC.stats()
    assert after_b["entries"] == after_a["entries"]  # nothing new stored ...
    assert after_b["misses"] == after_a["misses"] and after_b["hits"] > after_a["hits"]  # ... everything was a hit
    assert _chart(b) == _chart(a) and _metrics(b) == _metrics(a)
    assert _chart(a)["layout"]["height"] > 0  # the page's styling is part of the shared figure

    # presenter mode: a differently styled figure (its own entry), the same numbers
    p = _session(presenter=True)
    assert FC.stats()["entries"] > after_b["entries"]
    fig_p = _chart(p)
    big = L.PRESENTER_FIGURE_PX  # presenter mode: every figure text at least this size
    assert fig_p["layout"]["font"]["size"] == big and _chart(a)["layout"].get("font", {}).get("size") != big
    assert fig_p["data"] == _chart(a)["data"]

    # another epsilon: another headline, and the first sessions' figure is unchanged by it
    before = _chart(a)
    b.select_slider(key="epsilon").set_value(2.0).run()
    assert not b.exception
    assert _metrics(b) != _metrics(a)
    a.run()
    assert _chart(a) == before


def _csv(n: int = 300) -> bytes:
    return linear_csv(n, seed=3)


def test_an_uploads_figure_and_tables_are_never_stored():
    FC.clear()
    at = _session()
    stored = FC.stats()["entries"]
    at.file_uploader(key="pmt_upload_file").set_value(("mine.csv", _csv(), "text/csv")).run()
    labels = [b.label for b in at.button]
    at.button[labels.index("Use this data")].click().run()
    assert not at.exception and at.session_state["data"] == "upload:mine.csv"
    assert at.get("plotly_chart")  # the upload's figure is drawn ...
    at.select_slider(key="epsilon").set_value(2.0).run()
    assert not at.exception
    assert FC.stats()["entries"] == stored  # ... and nothing of it entered the shared cache
