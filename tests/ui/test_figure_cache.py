"""ui.common.figure_cache: shared figures of bundled views are built once, handed out as independent copies, bounded
in number and age; figures of uploads are never stored."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from ui.common import figure_cache as FC

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


def test_copy_false_hands_every_caller_the_same_finished_figure():
    a = FC.figure(build, _frame(), title="page", copy=False)
    b = FC.figure(build, _frame(), title="page", copy=False)
    assert a is b and CALLS == ["page"]
    assert a.to_dict() == build(_frame(), title="page").to_dict()
    c = FC.figure(build, _frame(), title="page")  # a copy is another entry: never the shared object
    assert c is not a and c.to_dict() == a.to_dict()
    assert FC.figure(build, _frame(), title="up", shared=False, copy=False) is not FC.figure(
        build, _frame(), title="up", shared=False, copy=False)  # an upload's: built every time


def _table(frame, scale=1.0):
    CALLS.append("table")
    return frame * scale


def test_values_are_computed_once_per_arguments_or_named_key_and_never_for_uploads():
    f = _frame()
    a = FC.value(_table, f, scale=2.0)
    assert FC.value(_table, _frame(), scale=2.0) is a and CALLS == ["table"]  # equal data: a hit, the same frame
    FC.value(_table, f, scale=3.0)
    FC.value(_table, _frame(1e-12), scale=2.0)
    assert CALLS == ["table"] * 3
    # a named key stands for the arguments (they are not hashed): the same key is a hit whatever is passed
    k = FC.value(_table, f, key=("results-1", "eps"))
    assert FC.value(_table, _frame(5.0), key=("results-1", "eps")) is k and len(CALLS) == 4
    assert FC.value(_table, f, key=("results-2", "eps")) is not k and len(CALLS) == 5
    FC.value(_table, f, shared=False)
    FC.value(_table, f, shared=False)
    assert len(CALLS) == 7


@pytest.mark.parametrize("change", [
    lambda f: f.assign(m=["a", "b", "c "]),  # a string one character longer
    lambda f: f.assign(m=["a", "b", 3]),  # a number where a string was
    lambda f: f.astype({"x": "float32"}),  # another dtype, equal values
    lambda f: f.rename(columns={"x": "z"}),
    lambda f: f.set_axis([0, 1, 3]),  # another index
    lambda f: f[["m", "x", "y"]],  # the columns in another order
    lambda f: f.assign(y=[0.5, 0.25, 0.125000001]),
])
def test_the_key_of_a_frame_changes_with_anything_that_makes_it_another_frame(change):
    base = _frame().assign(m=["a", "b", "c"])[["x", "y", "m"]]
    assert FC.key_of(_table, (base,), {}) == FC.key_of(_table, (base.copy(),), {})
    assert FC.key_of(_table, (change(base),), {}) != FC.key_of(_table, (base,), {})


def test_a_shared_figure_hands_streamlit_one_dict_made_when_it_was_stored():
    from plotly.tools import return_figure_from_figure_or_data

    fig = FC.figure(build, _frame(), title="frozen", copy=False)
    want = build(_frame(), title="frozen").to_dict()
    assert fig.to_dict() == want and fig.to_dict() is fig.to_dict()  # made once, the same dict each time
    assert isinstance(fig, go.Figure) and fig.layout.title.text == "frozen"
    assert return_figure_from_figure_or_data(fig, validate_figure=True) == want  # what st.plotly_chart sends
