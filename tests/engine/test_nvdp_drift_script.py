"""scripts/nvdp_drift_trace.py on tiny settings (2 epochs, 100 training sentences, 64 test sentences), its
merge and tolerance check, and the drift figure."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from engine.nvdp import drift as D

# two tiny training runs per schedule (seconds on an idle machine; the shared 2-core box at load 20+ needs longer)
pytestmark = pytest.mark.timeout(1800)

ROOT = Path(__file__).resolve().parents[2]


def _mod():
    spec = importlib.util.spec_from_file_location("nvdp_drift_trace", ROOT / "scripts" / "nvdp_drift_trace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    import torch

    old = torch.get_num_threads()
    tmp = tmp_path_factory.mktemp("drift")
    mod = _mod()
    args = ["--seeds", "0", "--epochs", "2", "--n-train", "100", "--n-test", "64"]  # encodings shared with other runs (disk cache)
    try:
        assert mod.main([*args, "--schedules", "constant", "--out", str(tmp / "a.json"), "--drifted", "--drifted-dir",
                         str(tmp / "drifted")]) == 0
        assert mod.main([*args, "--schedules", "linear_warmup_decay", "--out", str(tmp / "b.json")]) == 0
    finally:
        torch.set_num_threads(old)
    assert mod.main(["--merge", str(tmp / "a.json"), str(tmp / "b.json"), "--out", str(tmp / "t.json")]) == 0
    return mod, tmp, D.load_trace(tmp / "t.json")


def test_trace_structure_and_summary(tiny):
    mod, tmp, t = tiny
    assert t["seeds"] == [0] and list(t["schedules"]) == ["constant", "linear_warmup_decay"]
    for block in t["schedules"].values():
        for run in block["seeds"].values():
            assert [p["epoch"] for p in run["unclipped"]["epochs"]] == [1, 2] == [p["epoch"] for p in run["release"]]
            assert 1 <= run["clipped"]["restored"] <= 2
            for p in run["clipped"]["epochs"]:
                assert 0 <= p["accuracy"] <= 1 and p["rd_max_all_pairs"] >= p["rd_paper_max"] >= 0
    assert mod.summarise(t) == t["summary"] and t["summary"]["constant"]["n_points"] == 2
    # the sentences quote the summary
    lead = D.drift_lead(t)
    s = t["summary"]["linear_warmup_decay"]
    assert f"training with clipping gives a lower worst case at {s['clipped_lower_rd_max_all_pairs']} of 2 seed-epochs" in lead
    # the drifted checkpoint: the last epoch of the constant-rate unclipped run of the first seed
    fig = D.drifted_figures(tmp / "drifted")
    D.verify_drifted(tmp / "drifted")
    last = t["schedules"]["constant"]["seeds"]["0"]
    assert fig["unclipped"]["rd_max_all_pairs"] == pytest.approx(float(last["unclipped"]["epochs"][-1]["rd_max_all_pairs"]))
    with pytest.raises(ValueError, match="appears in two traces"):
        mod.merge([json.loads((tmp / "a.json").read_text())] * 2)


def test_tolerance_compare(tiny):
    mod, _, t = tiny
    assert set(mod.compare(t, t)["shares"].values()) == {1.0}
    moved = json.loads(json.dumps(t))
    for block in moved["schedules"].values():
        for run in block["seeds"].values():
            for p in run["clipped"]["epochs"]:
                p["rd_max_all_pairs"] = float(p["rd_max_all_pairs"]) * 1.3  # beyond 25 %
                p["accuracy"] = float(p["accuracy"]) + 0.015  # within 2 points
    res = mod.compare(t, moved)["shares"]
    assert res["accuracy"] == 1.0 and res["rd_max_all_pairs"] < 1.0 and res["rd_paper_max"] == 1.0


def test_drift_figure(tiny):
    from engine.figures.nvdp_drift import drift_figure

    _, _, t = tiny
    for m in D.METRIC_NAMES:
        fig = drift_figure(t, m)
        names = {tr.name for tr in fig.data if tr.showlegend is not False}
        assert any("trained with clipping" in (n or "") for n in names)
        assert any("restored" in (n or "") for n in names)
    with pytest.raises(ValueError, match="metric"):
        drift_figure(t, "nope")
