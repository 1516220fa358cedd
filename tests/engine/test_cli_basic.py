"""``python -m engine privacy`` and ``datasets``: output, --json, errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_privacy_json(capsys):
    assert main(["privacy", "--epsilon", "1", "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sigma_analytic"] == pytest.approx(3.7306, abs=1e-4)
    assert out["mu"] == pytest.approx(1 / 3.7306316, rel=1e-5)
    assert out["achieved_epsilon"] <= 1.0 + 1e-9
    assert out["achieved_delta"] <= 1e-5


def test_privacy_text_with_sensitivity(capsys):
    assert main(["privacy", "--epsilon", "0.5", "--delta", "1e-6", "--sensitivity", "2"]) == 0
    text = capsys.readouterr().out
    assert "sigma (analytic)" in text and "sigma (classical" in text


@pytest.mark.parametrize("args, fragment", [(["--epsilon", "0", "--delta", "1e-5"], "epsilon must be > 0"),
                                            (["--epsilon", "1", "--delta", "1"], "delta must lie strictly between 0 and 1")])
def test_privacy_bad_arguments(capsys, args, fragment):
    assert main(["privacy", *args]) == 2
    assert fragment in capsys.readouterr().err


def test_module_entry_point_runs():
    res = subprocess.run([sys.executable, "-m", "engine", "privacy", "--epsilon", "8", "--delta", "1e-5", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["sigma_analytic"] == pytest.approx(0.6002, abs=1e-4)


def test_datasets_json(capsys):
    assert main(["datasets", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in rows}
    assert {"wine-red", "wine-white", "ccpp", "bank", "sentiment", "synthetic"} <= names
