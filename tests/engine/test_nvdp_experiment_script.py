"""scripts/nvdp_experiment.py: the tables and the computed verdict of docs/nvdp_results.md, on hand-made rows."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("nvdp_experiment", ROOT / "scripts" / "nvdp_experiment.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(script, kl, seed, arm, eval_clip="own", **kw):
    r = {f: 0 for f in script.FIELDS}
    r.update(kl_weight=kl, seed=seed, arm=arm, eval_clip=eval_clip, accuracy=0.9, rd_paper_max=0.2,
             rd_paper_mean=0.02, bdp_paper=10.5, bdp_paper_q=0.125, rd_exact_max=math.inf, rd_exact_n_inf=7000,
             rd_exact_n_pairs=8128, rd_exact_mean_finite=300.0, bdp_guarantee=math.inf)
    r.update(kw)
    r.setdefault("rd_paper_max_unfiltered", r["rd_paper_max"])
    if "rd_paper_max_unfiltered" not in kw:
        r["rd_paper_max_unfiltered"] = r["rd_paper_max"]
    return r


def _write(path: Path, script, rows) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=script.FIELDS)
        w.writeheader()
        w.writerows(rows)


def test_fmt_mean_sd_and_infinite_counts(script):
    assert script._fmt([1.0, 3.0]) == "2 ± 1.4"  # sample sd over seeds: sqrt(2)
    assert script._fmt([math.inf, 1.0, 2.0]) == "inf (1/3)"
    assert script._fmt([math.inf, math.inf]) == "inf"
    assert script._fmt([0.123456]) == "0.1235"


def test_paired_table_differences_and_verdict(tmp_path, script):
    rows = []
    # KL 0.01: clipped RD max lower at seeds 0 and 1, higher at seed 2; BDP lower at every seed
    for seed, (rc, ru) in enumerate([(0.10, 0.20), (0.15, 0.25), (0.30, 0.20)]):
        rows.append(_row(script, 0.01, seed, "clipped", rd_paper_max=rc, bdp_paper=10.50, accuracy=0.88))
        rows.append(_row(script, 0.01, seed, "unclipped", rd_paper_max=ru, bdp_paper=10.60, accuracy=0.90))
    # KL 1: clipped higher everywhere
    for seed in range(3):
        rows.append(_row(script, 1.0, seed, "clipped", rd_paper_max=0.5, bdp_paper=10.6))
        rows.append(_row(script, 1.0, seed, "unclipped", rd_paper_max=0.4, bdp_paper=10.5))
    # rows of the other evaluation clipping must not enter the paired table
    rows.append(_row(script, 1.0, 0, "clipped", eval_clip="finite", rd_paper_max=0.01, bdp_paper=1.0))
    _write(tmp_path / "runs.csv", script, rows)
    md = script.table(SimpleNamespace(out=str(tmp_path)))
    lines = {ln.split("|")[1].strip(): ln for ln in md.splitlines() if ln.startswith("| 0.01 | 3 |") or ln.startswith("| 1 | 3 |")}
    kl01 = lines["0.01"]
    # mean difference (0.1 - 0.2 + 0.15 - 0.25 + 0.3 - 0.2) / 3 = -0.0333
    assert "-0.0333 (2/3 lower)" in kl01
    assert "-0.1 (3/3 lower)" in kl01  # BDP
    assert "-2.00 (0/3 higher)" in kl01  # accuracy in points
    assert "with clipping: worst case mixed (lower in 2/3), filtered max mixed (lower in 2/3)" in kl01
    assert "with clipping: worst case higher (3/3), filtered max higher (3/3)" in lines["1"]
    # per-arm table: 3 seeds of the finite evaluation are not mixed into "own"
    own_kl1 = [ln for ln in md.split("#### Same models")[0].splitlines() if ln.startswith("| 1 | clipped |")]
    assert own_kl1 and "| 3 |" in own_kl1[0] and "0.5 ± 0" in own_kl1[0]


def test_resume_refused_under_another_protocol(tmp_path, script):
    from engine.nvdp.protocol import DEFAULT_PROTOCOL, EvalProtocol

    script._check_protocol(tmp_path, DEFAULT_PROTOCOL, {"epochs": 10})
    script._check_protocol(tmp_path, DEFAULT_PROTOCOL, {"epochs": 10})  # same protocol: resume allowed
    with pytest.raises(SystemExit, match="another protocol"):
        script._check_protocol(tmp_path, EvalProtocol(n_eval=64), {"epochs": 10})
    with pytest.raises(SystemExit, match="training settings"):
        script._check_protocol(tmp_path, DEFAULT_PROTOCOL, {"epochs": 5})
