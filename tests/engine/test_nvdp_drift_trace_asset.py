"""The shipped training-drift trace (assets/nvdp/drift_trace.json): its summary, its agreement with the
shipped models and the drifted checkpoint, and the drift sentences against it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from engine.nvdp import claims as C
from engine.nvdp import drift as D
from engine.nvdp.bundled import seed_summary

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trace():
    return D.load_trace()


def test_planted_false_drift_count_fails(trace):
    facts = C.shipped_facts(trace=trace)
    for sched, name in (("linear_warmup_decay", "With the authors' schedule"), ("constant", "With the constant rate")):
        d = trace["summary"][sched]
        true = f"{name}, training with clipping gives a lower worst case at {d['clipped_lower_rd_max_all_pairs']} of {d['n_points']} seed-epochs."
        false = f"{name}, training with clipping gives a lower worst case at {d['clipped_lower_rd_max_all_pairs'] + 1} of {d['n_points']} seed-epochs."
        assert C.check_text(true, facts) == [] and C.check_text(false, facts), (true, false)
    assert C.check_text(D.drift_lead(trace), facts) == []


def test_trace_summary_is_recomputed_from_its_points(trace):

    spec = importlib.util.spec_from_file_location("nvdp_drift_trace", ROOT / "scripts" / "nvdp_drift_trace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.summarise(trace) == trace["summary"]
    assert set(trace["schedules"]) == {"constant", "linear_warmup_decay"}
    for sched, block in trace["schedules"].items():
        assert sorted(block["seeds"]) == ["0", "1", "2"]
        for run in block["seeds"].values():
            assert len(run["unclipped"]["epochs"]) == len(run["clipped"]["epochs"]) == len(run["release"]) == 10
            vals = [h for h in run["unclipped"]["epochs"]]
            restored, _ = mod.replay_early_stopping([h["val_accuracy"] for h in vals], 3)
            assert restored == run["unclipped"]["restored"]
    # a small shipped file (tens of kB)
    assert (ROOT / "assets" / "nvdp" / "drift_trace.json").stat().st_size < 80_000


def test_constant_schedule_restored_models_are_the_shipped_ones_within_tolerance(trace):
    """The constant-rate trace replays the shipped training: at its restored epochs the figures are within
    make_nvdp_models' --check tolerance of the shipped ones (accuracy 2 points, worst case 25 %). The restored
    epochs themselves may differ on another CPU kind (the trace's machine restores other clipped epochs)."""
    seeds = {r["seed"]: r for r in seed_summary()["per_seed"]}
    for s, run in trace["schedules"]["constant"]["seeds"].items():
        for arm in ("unclipped", "clipped"):
            p = run[arm]["epochs"][run[arm]["restored"] - 1]
            rec = seeds[int(s)][arm]
            assert abs(float(p["rd_max_all_pairs"]) - float(rec["rd_max_all_pairs"])) <= 0.25 * float(rec["rd_max_all_pairs"]), (s, arm)
            assert abs(float(p["accuracy"]) - float(rec["accuracy"])) <= 0.02 + 1e-9, (s, arm)
    # the unclipped runs restore the shipped epochs here
    assert [run["unclipped"]["restored"] for run in trace["schedules"]["constant"]["seeds"].values()] == [
        seeds[s]["unclipped"]["best_epoch"] for s in (0, 1, 2)]


def test_drifted_checkpoint_recorded_figures(trace):
    fig = D.drifted_figures()
    last = trace["schedules"]["constant"]["seeds"]["0"]
    assert fig["unclipped"]["rd_max_all_pairs"] == pytest.approx(float(last["unclipped"]["epochs"][-1]["rd_max_all_pairs"]))
    assert fig["clipped_at_release"]["rd_max_all_pairs"] == pytest.approx(float(last["release"][-1]["rd_max_all_pairs"]))
    D.verify_drifted()
    cfg = json.loads((D.drifted_dir() / "config.json").read_text())
    assert cfg["best_epoch"] == 10 and cfg["clip"]["enabled"] is False


