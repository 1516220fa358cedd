"""ui.figure_cache: shared figures of bundled views are built once, handed out as independent copies, bounded
in number and age; figures of uploads are never stored."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from ui import figure_cache as FC

CALLS = []


def build(frame: pd.DataFrame, *, title: str = "t") -> go.Figure:
    CALLS.append(title)
    return go.Figure(go.Scatter(x=frame["x"], y=frame["y"], name="line"), layout={"title": {"text": title}})


@pytest.fixture(autouse=True)
def _empty():
    FC.clear()
    CALLS.clear()
    yield
    FC.clear()


def _frame(shift=0.0):
    return pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": np.array([0.5, 0.25, 0.125]) + shift})


def test_same_arguments_build_once_and_give_independent_copies():
    a = FC.figure(build, _frame(), title="eps")
    b = FC.figure(build, _frame(), title="eps")
    assert CALLS == ["eps"] and FC.stats()["hits"] == 1
    assert a is not b and a.to_dict() == b.to_dict() == build(_frame(), title="eps").to_dict()
    a.update_layout(height=999)  # one session restyles its copy ...
    assert FC.figure(build, _frame(), title="eps").layout.height is None  # ... nobody else sees it


def test_different_data_or_options_are_different_figures():
    FC.figure(build, _frame(), title="eps")
    FC.figure(build, _frame(1e-12), title="eps")  # a tiny change in the data
    FC.figure(build, _frame(), title="lam")
    assert CALLS == ["eps", "eps", "lam"] and FC.stats()["entries"] == 3


def test_upload_figures_are_never_stored():
    FC.figure(build, _frame(), title="upload", shared=False)
    FC.figure(build, _frame(), title="upload", shared=False)
    assert CALLS == ["upload", "upload"] and FC.stats()["entries"] == 0


def test_bounded_in_number_and_age(monkeypatch):
    monkeypatch.setattr(FC, "MAX_ENTRIES", 3)
    for k in range(5):
        FC.figure(build, _frame(k), title="n")
    assert FC.stats()["entries"] == 3
    FC.figure(build, _frame(0), title="n")  # the oldest was dropped: built again
    assert len(CALLS) == 6
    monkeypatch.setattr(FC, "TTL_S", 0.0)  # every entry built before now is too old
    import time

    time.sleep(0.01)
    FC.figure(build, _frame(4), title="n")
    assert len(CALLS) == 7 and FC.stats()["entries"] == 1
