"""The Learn page through app.py with AppTest: renders, every lesson's sliders re-run cleanly.

Only the open lesson is built (``st.tabs(..., on_change="rerun")``): a test opens its lesson first.
"""

from __future__ import annotations


import pytest
from streamlit.testing.v1 import AppTest

from conftest import new_app  # the harness: tests/conftest.py


@pytest.fixture(scope="module")
def learn():
    at = new_app().run()
    at.switch_page("app_pages/learn.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


LESSONS = ("1 · epsilon and delta", "2 · Many releases", "3 · The truncation dilemma",
           "4 · Why conditioning matters", "5 · Renyi divergence and clipping")


def _open(at: AppTest, lesson: int) -> AppTest:
    at.session_state["learn_tab"] = LESSONS[lesson - 1]
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def _text(at: AppTest) -> str:
    return "\n".join(str(x.value) for x in list(at.markdown) + list(at.caption) + list(at.info))


def test_renders_all_lessons_with_plain_words_and_formulas(learn):
    assert len(learn.tabs) == 5 and [t.label for t in learn.tabs] == list(LESSONS)
    text, metrics, latex = "", {}, 0
    for lesson in range(1, 6):
        _open(learn, lesson)
        # the class plan, then the open lesson's "The formulas"; the other lessons are not built
        assert [e.label.split(":")[0] for e in learn.expander] == ["Class plan", "The formulas"]
        text += _text(learn)
        metrics.update(_metrics(learn))
        latex += len(learn.latex)
    for needle in ("DP** = differential privacy", "Try this.", "truncation", "Renyi divergence"):
        assert needle in text
    assert latex >= 10
    assert metrics["Equivalent Gaussian mechanism"] == "mu = 0.268"  # gdp_mu(1, 1e-5) = 0.268051
    assert metrics["Total mu"] == "0.949"  # sqrt(10) * 0.3


def test_first_view_builds_only_the_first_lesson(learn):
    _open(learn, 1)
    labels = set(_metrics(learn))
    assert "Equivalent Gaussian mechanism" in labels and "Total mu" not in labels


def test_lesson2_uses_lesson1_epsilon_while_lesson1_is_closed(learn):
    _open(learn, 1)
    learn.slider(key="learn_l1_eps").set_value(2.0).run()
    _open(learn, 2)
    assert "learn_l1_eps" not in [w.key for w in learn.slider]
    assert any("epsilon = 2 (from lesson 1)" in c.value for c in learn.caption)
    _open(learn, 1)
    assert learn.slider(key="learn_l1_eps").value == 2.0  # kept while closed
    learn.slider(key="learn_l1_eps").set_value(1.0).run()


def test_lesson1_sliders(learn):
    _open(learn, 1)
    learn.slider(key="learn_l1_eps").set_value(0.1).run()
    _ok(learn)
    assert _metrics(learn)["Equivalent Gaussian mechanism"] == "mu = 0.033"  # 1 / 30.7496 (golden sigma)
    learn.select_slider(key="learn_l1_delta").set_value(1e-3).run()
    _ok(learn)
    learn.slider(key="learn_l1_eps").set_value(1.0).run()
    learn.select_slider(key="learn_l1_delta").set_value(1e-5).run()
    _ok(learn)


def test_lesson2_sliders(learn):
    _open(learn, 2)
    learn.slider(key="learn_l2_k").set_value(40).run()
    _ok(learn)
    assert _metrics(learn)["Total mu"] == "1.897"  # sqrt(40) * 0.3
    learn.slider(key="learn_l2_mu").set_value(0.05).run()
    _ok(learn)


def test_lesson3_sliders(learn):
    _open(learn, 3)
    for key, value in (("learn_l3_n", 100_000), ("learn_l3_eps", 0.1), ("learn_l3_df", 2.5)):
        if key == "learn_l3_eps":
            learn.slider(key=key).set_value(value).run()
        else:
            learn.select_slider(key=key).set_value(value).run()
        _ok(learn)
    ss = learn.select_slider(key="learn_l3_C")
    ss.set_value(ss.options[-1] if isinstance(ss.options[-1], float) else float(ss.options[-1])).run()
    _ok(learn)
    labels = _metrics(learn)
    assert any(label.startswith("Error at the PMT radius R = ") for label in labels)


def test_lesson4_sliders(learn):
    _open(learn, 4)
    learn.select_slider(key="learn_l4_kappa").set_value(10_000.0).run()
    _ok(learn)
    learn.select_slider(key="learn_l4_npub").set_value(10).run()
    _ok(learn)
    learn.toggle(key="learn_l4_heavy").set_value(True).run()
    _ok(learn)
    learn.slider(key="learn_l4_eps").set_value(5.0).run()
    learn.select_slider(key="learn_l4_n").set_value(1000).run()
    _ok(learn)


def test_lesson5_sliders_and_infinite_case(learn):
    _open(learn, 5)
    learn.slider(key="learn_l5_sa").set_value(0.8).run()
    _ok(learn)
    m = _metrics(learn)
    assert m["D(A || B) without clipping"] == "infinite"
    assert m["D(A || B) with clipping"].endswith("nats")
    for key, value in (("learn_l5_ma", -6.0), ("learn_l5_C", 5.0)):
        learn.slider(key=key).set_value(value).run()
        _ok(learn)
    learn.select_slider(key="learn_l5_lam").set_value(8.0).run()
    _ok(learn)
