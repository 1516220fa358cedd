"""Tests for the ``python -m engine pmt`` subcommand."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from engine.cli import build_parser, main


def test_table_output(capsys):
    rc = main(["pmt", "--dataset", "wine-red", "--epsilon", "1", "4", "--seeds", "3", "--methods", "pmt", "dp-rr"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "kappa(X^T X) raw" in out and "after PMT" in out
    lines = [ln for ln in out.splitlines() if ln.strip().startswith(("PMT", "DP-RR"))]
    assert len(lines) == 4  # 2 methods x 2 epsilons


def test_json_and_out(tmp_path, capsys):
    out_csv = tmp_path / "r.csv"
    rc = main(["pmt", "--dataset", "synthetic", "--n-rows", "3000", "--d", "4", "--kappa", "100", "--epsilon", "2",
               "--seeds", "4", "--lam", "0", "1e-2", "--json", "--out", str(out_csv)])
    assert rc == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["settings"]["dataset"] == "synthetic" and payload["settings"]["d"] == 5
    summ = pd.DataFrame(payload["summary"])
    assert set(summ["method"]) == {"PMT", "DP-RR", "DP-GD", "AdaSSP", "Public-only", "Non-private"}
    assert sorted(summ["lam"].unique()) == [0.0, 0.01]
    assert (summ["n_seeds"] == 4).all()
    frame = pd.read_csv(out_csv)
    assert len(frame) == 6 * 1 * 4 * 2
    # the JSON summary is the summary of the written frame
    from engine.pmt.sweep import summarize

    # default metric: the held-out RMSE (ridge), the L2 median beside it
    assert payload["settings"]["metric"] == "rmse"
    pmt_med = summarize(frame, "rmse").query("method == 'PMT' and lam == 0")["median"].iloc[0]
    assert summ.query("method == 'PMT' and lam == 0")["l2_median"].iloc[0] == pytest.approx(
        summarize(frame).query("method == 'PMT' and lam == 0")["median"].iloc[0])
    assert summ.query("method == 'PMT' and lam == 0")["median"].iloc[0] == pytest.approx(pmt_med)


@pytest.mark.parametrize("argv,msg", [
    (["--epsilon", "0"], "epsilon"),
    (["--delta", "2"], "delta"),
    (["--lam", "-1"], "lam"),
    (["--n-pub", "0"], "n_pub"),
    (["--seeds", "0"], "seeds"),
    (["--methods", "foo"], "unknown method"),
    (["--kappa", "10"], "synthetic only"),
])
def test_bad_arguments_exit_2(argv, msg, capsys):
    rc = main(["pmt", "--dataset", "wine-red", "--seeds", "2", *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert msg in err and "Traceback" not in err


def test_task_option_and_help():
    parser = build_parser()
    args = parser.parse_args(["pmt", "--task", "ridge"])
    assert args.task == "ridge" and args.seeds == 50 and args.n_pub == [200]
    with pytest.raises(SystemExit):
        parser.parse_args(["pmt", "--task", "quantum"])


def test_module_entry_point():
    r = subprocess.run([sys.executable, "-m", "engine", "pmt", "--dataset", "wine-red", "--epsilon", "2",
                        "--seeds", "2", "--methods", "pmt", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["summary"][0]["method"] == "PMT"
