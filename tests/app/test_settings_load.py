"""A settings file loads back: the page's pmt_settings.json sets the page's controls (and the same numbers
come back), and the CLI reads the same file (tests/test_export_one_truth.py runs it per mode and task)."""

from __future__ import annotations

import json

import pytest

from ui.pmt.settings_load import state_from_settings

from conftest import new_app  # the harness: tests/conftest.py


def test_values_are_checked_with_the_link_rules_and_files_are_asked_for():
    up, problems = state_from_settings({"settings": {
        "task": "regression", "data": "upload:my.csv", "epsilon": 2.0, "seeds": 0, "methods": ["PMT", "DP-RR"],
        "public_mode": "moments", "moments": {"name": "m.json", "n_pub": 150}, "response_scale": 1.5}})
    assert up["epsilon"] == 2.0 and up["methods"] == ["PMT", "DP-RR"] and up["public_mode"] == "moments"
    assert up["pmt_response_scale"] == 1.5 and "data" not in up and "seeds" not in up
    assert any("my.csv" in p for p in problems) and any("m.json" in p for p in problems)
    assert any(p.startswith("seeds = 0") for p in problems)
    with pytest.raises(ValueError, match="settings"):
        state_from_settings({"nothing": 1})


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_the_exported_settings_file_restores_the_view():
    from ui.pmt.compute import export as X
    from ui.pmt.compute import core as C

    at = new_app("pmt", timeout=240, seeds=3, epsilon=2.0, lam=0.01, n_pub=300, methods=["PMT", "DP-RR"]).run()
    assert not at.exception and not at.error
    want = _metrics(at)
    spec = C.spec_from_state(at.session_state, task="regression")
    from engine.datasets import load_dataset

    ds = load_dataset("ccpp")
    prep = C.prepare(ds, standardize=spec["standardize"], n_pub=spec["n_pub"], split_seed=spec["split_seed"])
    raw = X.settings_json({**spec, "metric": "rmse"}, ds=ds, prep=prep).encode()

    fresh = new_app("pmt", timeout=240).run()
    assert _metrics(fresh) != want  # the defaults show another view
    fresh.file_uploader(key="pmt_settings_file").set_value(("pmt_settings.json", raw, "application/json")).run()
    fresh.run()
    assert not fresh.exception
    for k in ("seeds", "epsilon", "lam", "n_pub", "methods"):
        assert fresh.session_state[k] == at.session_state[k], k
    assert _metrics(fresh) == want
    assert json.loads(raw)["settings"]["seeds"] == 3
