"""The PMT page's trust flags for logistic regression: noisy-Newton noise dominance and a diverged reference."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ui.pmt.compute import trust as T

from conftest import new_app  # the harness: tests/conftest.py


def test_newton_dominance_is_the_estimators_ratio_in_whitened_coordinates():
    """The page's public ratio is what PMTLogistic reports when it runs fully whitened (curvature 1/4)."""
    from engine.pmt import PMTLogistic

    rng = np.random.default_rng(0)
    X, Xq = rng.normal(size=(3000, 3)), rng.normal(size=(300, 3))
    y = (rng.random(3000) < 1 / (1 + np.exp(-X @ [1.0, -1.0, 0.5]))).astype(int)
    for eps in (0.5, 8.0):
        est = PMTLogistic(epsilon=eps, delta=1e-5, lam=1e-3, whiten="full", random_state=0).fit(X, y, X_pub=Xq)
        want = est.report_.extra["noise_dominance"]
        assert T.newton_dominance(d=4, n=3000, eta=0.05, epsilon=eps, delta=1e-5) == pytest.approx(want, rel=1e-9)


def test_newton_banner_only_when_dominated():
    spec = {"task": "classification", "methods": ["PMT", "DP-Newton"], "epsilon": 1.0, "delta": 1e-5, "eta": 0.05}
    small = SimpleNamespace(d=3, n_priv=400)
    big = SimpleNamespace(d=3, n_priv=10_000_000)
    text = T.newton_banner(small, spec)
    assert text is not None and "noise-dominated" in text and "n = 400" in text
    ratio = T.newton_dominance(d=4, n=400, eta=0.05, epsilon=1.0, delta=1e-5)
    assert f"{ratio:.3g}x" in text and ratio >= 0.5
    assert T.newton_banner(big, spec) is None
    assert T.newton_banner(small, {**spec, "task": "regression"}) is None
    assert T.newton_banner(small, {**spec, "methods": ["DP-Newton"]}) is None
    assert T.newton_banner(small, {**spec, "epsilon": math.inf}) is None


def test_a_diverged_reference_is_flagged_in_the_frame_and_the_note():
    f = pd.DataFrame({"method": ["PMT", "Non-private", "PMT", "Non-private"], "lam": [0.0, 0.0, 1e-2, 1e-2],
                      "n_pub": 200, "converged": [True, False, True, True], "l2_error": [6000.0, 0.0, 1.0, 0.0]})
    assert T.reference_diverged(f)
    assert "no finite optimum" in T.reference_note(f, "classification")
    assert T.reference_note(f, "regression") is None
    flagged = T.flag_frame(f, "classification")
    assert flagged["reference_diverged"].tolist() == [True, True, False, False]  # per lam
    ok = f.assign(converged=True)
    assert not T.reference_diverged(ok) and T.reference_note(ok, "classification") is None
    modes = pd.DataFrame({"method": ["PMT"], "reference_converged": [False], "lam": [0.0], "n_pub": [200]})
    assert T.reference_diverged(modes) and T.flag_frame(modes, "classification")["reference_diverged"].tolist() == [True]


def test_the_logistic_page_shows_the_newton_banner_and_the_l2_beside_the_auc():
    from pathlib import Path


    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 3))
    y = (rng.random(600) < 1 / (1 + np.exp(-(X @ [1.5, -0.4, 2.0])))).astype(int)
    raw = ("a,b,c,label\n" + "\n".join(f"{r[0]:.5f},{r[1]:.5f},{r[2]:.5f},{t}" for r, t in zip(X, y)) + "\n").encode()
    at = new_app("pmt", timeout=300, seeds=3).run()
    at.file_uploader(key="pmt_upload_file").set_value(("cls.csv", raw, "text/csv")).run()
    at.selectbox(key="pmt_upload_task").set_value("classification").run()
    next(b for b in at.button if b.label == "Use this data").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["task"] == "classification" and at.selectbox(key="metric").value == "auc"
    assert any("noisy Newton is noise-dominated" in w.value for w in at.warning)
    pmt = next(m for m in at.metric if m.label == "PMT")
    assert pmt.proto.delta.startswith("L2 ")
