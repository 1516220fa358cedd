"""The Learn page through app.py with AppTest: renders, every lesson's sliders re-run cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def learn():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    at.switch_page("pages/learn.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def _text(at: AppTest) -> str:
    return "\n".join(str(x.value) for x in list(at.markdown) + list(at.caption) + list(at.info))


def test_renders_all_lessons_with_plain_words_and_formulas(learn):
    text = _text(learn)
    for needle in ("DP** = differential privacy", "Try this.", "truncation", "Renyi divergence"):
        assert needle in text
    assert len(learn.tabs) == 5
    assert len(learn.expander) == 5  # one "The formulas" per lesson
    assert len(learn.latex) >= 10
    m = _metrics(learn)
    assert m["Equivalent Gaussian mechanism"] == "mu = 0.268"  # gdp_mu(1, 1e-5) = 0.268051
    assert m["Total mu"] == "0.949"  # sqrt(10) * 0.3


def test_lesson1_sliders(learn):
    learn.slider(key="learn_l1_eps").set_value(0.1).run()
    _ok(learn)
    assert _metrics(learn)["Equivalent Gaussian mechanism"] == "mu = 0.033"  # 1 / 30.7496 (golden sigma)
    learn.select_slider(key="learn_l1_delta").set_value(1e-3).run()
    _ok(learn)
    learn.slider(key="learn_l1_eps").set_value(1.0).run()
    learn.select_slider(key="learn_l1_delta").set_value(1e-5).run()
    _ok(learn)


def test_lesson2_sliders(learn):
    learn.slider(key="learn_l2_k").set_value(40).run()
    _ok(learn)
    assert _metrics(learn)["Total mu"] == "1.897"  # sqrt(40) * 0.3
    learn.slider(key="learn_l2_mu").set_value(0.05).run()
    _ok(learn)


def test_lesson3_sliders(learn):
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
