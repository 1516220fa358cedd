"""``python -m engine``: each subcommand imports only what it uses.

``--help``, ``privacy`` and ``datasets`` must never import torch, scikit-learn or transformers. Each
check runs the real entry point (``runpy`` of ``engine.__main__``, as ``python -m engine`` does) in a
fresh interpreter and reads ``sys.modules`` at exit. (``python -X importtime`` would miss modules loaded
through ``importlib.import_module``, which the CLI uses for its subcommands.) Timings live in
bench/bench_cli_startup.py.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sklearn", "transformers")

_RUN = (
    "import atexit, json, runpy, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['engine'] + json.loads(sys.argv[1])\n"
    "runpy.run_module('engine', run_name='__main__', alter_sys=True)\n"
)


def _imported(*argv: str) -> tuple[set[str], subprocess.CompletedProcess]:
    res = subprocess.run([sys.executable, "-c", _RUN, json.dumps(list(argv))], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("MODULES ")][-1]
    return set(json.loads(line[len("MODULES "):])), res


def _top_level(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


@pytest.mark.parametrize("argv, own", [
    (["--help"], "engine.cli"),
    (["privacy", "--epsilon", "1", "--delta", "1e-5", "--json"], "engine.privacy"),
    (["datasets", "--json"], "engine.cli.datasets"),  # the listing comes from the manifest: no engine.datasets
])
def test_light_subcommands_never_import_torch_or_sklearn(argv, own):
    names, res = _imported(*argv)
    assert res.returncode == 0, res.stderr[-2000:]
    assert own in names  # the importtime listing is read correctly (not vacuously empty)
    assert not _top_level(names) & set(HEAVY), sorted(_top_level(names) & set(HEAVY))


def test_help_imports_no_numeric_library():
    names, res = _imported("--help")
    assert res.returncode == 0 and "privacy" in res.stdout
    assert not _top_level(names) & {"numpy", "scipy", "pandas", *HEAVY}
    # only the stub of each subcommand: no engine module beyond the CLI package itself
    assert {n for n in names if n.startswith("engine")} <= {"engine", "engine.__main__", "engine.cli",
                                                            "engine.cli.datasets", "engine.cli.privacy",
                                                            "engine.cli.pmt", "engine.cli.pmt_moments",
                                                            "engine.cli.pmt_plan", "engine.cli.audit", "engine.cli.nvdp"}


def test_privacy_output_from_the_light_path():
    names, res = _imported("privacy", "--epsilon", "1", "--delta", "1e-5", "--json")
    out = json.loads(res.stdout)
    assert out["sigma_analytic"] == pytest.approx(3.7306, abs=1e-4)
    assert "engine.audit" not in names and "engine.cli.audit" in names  # audit's stub only


def test_audit_still_registers_its_choices_when_it_runs():
    # The lazy registration must not lose the audit options: an unknown mechanism is refused by argparse.
    names, res = _imported("audit", "--mechanism", "nope", "--epsilon", "1")
    assert res.returncode == 2 and "invalid choice: 'nope'" in res.stderr and "dp-pmtrr" in res.stderr
    assert "engine.audit" in names


@pytest.mark.parametrize("argv, stats, special", [
    (["pmt", "--dataset", "ccpp", "--epsilon", "1", "--seeds", "1", "--methods", "pmt", "dp-rr", "--standardize",
      "--json"], False, False),
    # the logistic sweep's ROC AUC counts ranks itself (engine.pmt.sweep_logistic.roc_auc_columns): no scipy.stats
    (["pmt", "--task", "logistic", "--dataset", "synthetic", "--n-rows", "3000", "--d", "3", "--epsilon", "1",
      "--seeds", "1", "--methods", "pmt", "non-private", "--json"], False, True),
])
def test_pmt_sweep_never_imports_sklearn_or_torch(argv, stats, special):
    # the estimators follow scikit-learn's conventions without importing it (engine.pmt._sklearn_api):
    # importing it would cost about 1 s of start-up that a sweep never uses
    names, res = _imported(*argv)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    assert out  # the sweep ran and printed its summary
    assert "engine.pmt.ridge" in names and "engine.pmt._sklearn_api" in names
    assert not _top_level(names) & set(HEAVY), sorted(_top_level(names) & set(HEAVY))
    assert ("scipy.stats" in names) is stats
    # a ridge sweep never evaluates the logistic sigmoid (engine.pmt._special imports it on first use); a
    # logistic sweep does
    assert ("scipy.special" in names) is special
    assert "engine.pmt.sweep_logistic" in names
