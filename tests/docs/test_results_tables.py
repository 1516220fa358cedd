"""The committed results tables under docs/ against their generators in scripts/.

What this checks, and what it does not:

- **Stamps** (every table): one line right under the title, ``Stamp: generated at commit `<hash>`, <date>.``
  (``scripts/stamp.py``). Where the git history is at hand (not a shallow clone or a tarball), the commit exists,
  its date is not after the stamp's date, and a table stamped afterwards (not rerun) names a commit that changed
  the table's rows.
- **Generators stamp what they write**: each generator's source passes its text through ``with_stamp`` (a look at
  the source, not a run) and the table names its generator; the stamp helpers themselves are checked on a small
  text. ``docs/nvdp_results.md`` is assembled by hand from several scripts' output and stamped as a whole.
- **Reruns** (deterministic generators): the generator is run into a temporary file and its output must equal
  the committed table line for line, apart from the stamp line and the run-time line (with the arguments the
  table records, e.g. the seeds of ``check_whiten_auto``). ``pmt_pooled_check``,
  ``pmt_poisson_results`` and ``pmt_flights_results`` (seconds) run always; the others (``pmt_solver_check``,
  ``pmt_modes_table``, ``pmt_ridge_results``, ``pmt_logistic_results``, ``check_planner``, ``check_whiten_auto``:
  half a minute to many minutes each) only with ``-m slow``. A table that trails the code
  fails here; rerun its generator. The comparison is exact on the printed digits: the generators are seeded
  (two reruns of the logistic table agreed to the byte here), but a machine whose floating-point libraries round
  differently in a printed digit would also fail here (the message shows the first differing lines).
- **Rendering on recorded inputs**: the drift table of ``docs/nvdp_results.md`` is
  ``scripts/nvdp_drift_trace.markdown`` of the committed trace ``assets/nvdp/drift_trace.json``.
- **Not rerun**: ``docs/performance/current.md`` (timings of this machine), ``docs/audit.md`` (minutes, dated),
  ``docs/pmt_before_after.md`` (needs the old checkout) and the training-based sections of ``docs/nvdp_results.md``:
  for these only the stamp is checked, so their numbers can trail the code until someone reruns them.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.stamp import AFTERWARDS, STAMP_RE, parse_stamp, strip_stamp, with_stamp  # noqa: E402

#: Committed table -> the script that writes it.
TABLES = {
    "docs/pmt_ridge_results.md": "scripts/pmt_ridge_results.py",
    "docs/pmt_logistic_results.md": "scripts/pmt_logistic_results.py",
    "docs/pmt_poisson_results.md": "scripts/pmt_poisson_results.py",
    "docs/pmt_flights_results.md": "scripts/pmt_flights_results.py",
    "docs/pmt_modes_table.md": "scripts/pmt_modes_table.py",
    "docs/pmt_solver_check.md": "scripts/pmt_solver_check.py",
    "docs/pmt_pooled_check.md": "scripts/pmt_pooled_check.py",
    "docs/pmt_planner_check.md": "scripts/check_planner.py",
    "docs/pmt_whiten_auto_check.md": "scripts/check_whiten_auto.py",
    "docs/pmt_before_after.md": "scripts/pmt_before_after.py",
    "docs/performance/current.md": "scripts/performance_table.py",
    "docs/audit.md": "scripts/audit_table.py",
    "docs/nvdp_results.md": "scripts/nvdp_drift_trace.py",  # one section; the others are pasted runs
}
#: Deterministic generators rerun by the tests (the rest: marked slow).
FAST = {"scripts/pmt_pooled_check.py", "scripts/pmt_poisson_results.py", "scripts/pmt_flights_results.py"}
RERUN = ["scripts/pmt_pooled_check.py", "scripts/pmt_poisson_results.py", "scripts/pmt_solver_check.py",
         "scripts/pmt_modes_table.py", "scripts/pmt_flights_results.py", "scripts/pmt_ridge_results.py",
         "scripts/pmt_logistic_results.py", "scripts/check_planner.py", "scripts/check_whiten_auto.py"]
#: Arguments a committed table was made with, read back from the table (default: the generator's defaults).
ARGS = {"scripts/check_whiten_auto.py": lambda text: ["--seeds", re.search(r"\((\d+) noise seeds per cell", text)[1]]}
#: Lines that differ from run to run: the run time (and the load average beside it).
VOLATILE = re.compile(r"^(Runtime|Run time)\b.*$", re.M)


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _history() -> bool:
    """Whether the full git history is here (a checkout, not a shallow clone or a tarball)."""
    return _git("rev-parse", "--is-shallow-repository") == "false"


def _comparable(text: str) -> str:
    return VOLATILE.sub("<run time>", strip_stamp(text)).rstrip("\n")


@pytest.mark.parametrize("table", sorted(TABLES))
def test_each_table_carries_one_stamp_under_its_title(table):
    text = (ROOT / table).read_text()
    assert len(STAMP_RE.findall(text)) == 1, f"{table}: one stamp line expected (scripts/stamp.py)"
    lines = text.split("\n")
    assert lines[0].startswith("# ") and lines[1] == "" and STAMP_RE.match(lines[2]), (
        f"{table}: the stamp belongs right under the title: {lines[:3]}")
    stamp = parse_stamp(text)
    assert stamp["commit"] != "unknown", f"{table}: stamped outside a git checkout"
    dt.date.fromisoformat(stamp["date"])
    if not _history():
        return
    found = _git("log", "-1", "--format=%cs", stamp["commit"])
    assert found, f"{table}: the stamp's commit {stamp['commit']} is not in this repository"
    assert found <= stamp["date"], f"{table}: commit dated {found}, stamp {stamp['date']}"
    if stamp["note"] == AFTERWARDS.strip() and table != "docs/performance/current.md":  # split off performance.md
        touched = _git("log", "--follow", "--format=%H", "--", table) or ""
        full = _git("rev-parse", stamp["commit"])
        assert full in touched.split(), f"{table}: stamped afterwards with {stamp['commit']}, which never wrote it"


@pytest.mark.parametrize("table", sorted(t for t in TABLES if t != "docs/nvdp_results.md"))  # assembled by hand
def test_each_generator_stamps_what_it_writes(table):
    src = (ROOT / TABLES[table]).read_text()
    assert "with_stamp(" in src, f"{TABLES[table]} writes {table} without its stamp"
    assert Path(TABLES[table]).name in (ROOT / table).read_text(), f"{table} does not name its generator"


def test_stamp_round_trip_and_placement():
    text = "# Title\n\nBody line.\n\n| a |\n|---|\n| 1 |\n"
    line = "Stamp: generated at commit `0123456789ab`, 2026-12-06."
    stamped = with_stamp(text, line)
    assert stamped.split("\n")[:4] == ["# Title", "", line, ""]
    assert strip_stamp(stamped) == text and parse_stamp(stamped)["commit"] == "0123456789ab"
    again = with_stamp(stamped, line.replace("0123456789ab", "fedcba987654"))  # a rerun replaces the stamp
    assert len(STAMP_RE.findall(again)) == 1 and parse_stamp(again)["commit"] == "fedcba987654"
    assert parse_stamp("# Title\n\nno stamp\n") is None


def _table_of(script: str) -> str:
    return next(t for t, s in TABLES.items() if s == script)


@pytest.mark.parametrize("script", [pytest.param(s, marks=() if s in FAST else pytest.mark.slow) for s in RERUN])
def test_a_rerun_reproduces_the_committed_table(script, tmp_path):
    table = _table_of(script)
    out = tmp_path / Path(table).name
    want = (ROOT / table).read_text()
    args = ARGS[script](want) if script in ARGS else []
    run = subprocess.run([sys.executable, str(ROOT / script), *args, "--out", str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=3600, env={**__import__("os").environ, "PYTHONHASHSEED": "0",
                                                       "HF_HUB_OFFLINE": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    got = out.read_text()
    assert parse_stamp(got) is not None, f"{script} wrote no stamp"
    got_lines, want_lines = _comparable(got).split("\n"), _comparable(want).split("\n")
    diff = [(i + 1, w, g) for i, (w, g) in enumerate(zip(want_lines, got_lines)) if w != g]
    assert not diff and len(got_lines) == len(want_lines), (
        f"{table} trails {script} (rerun it): first differing lines (line, committed, rerun): {diff[:3]}; "
        f"{len(want_lines)} committed lines, {len(got_lines)} rerun")


def test_the_nvdp_drift_table_is_the_committed_trace_rendered():
    spec = importlib.util.spec_from_file_location("nvdp_drift_trace", ROOT / "scripts" / "nvdp_drift_trace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    trace = json.loads((ROOT / "assets" / "nvdp" / "drift_trace.json").read_text())
    rendered = mod.markdown(trace)
    doc = (ROOT / "docs" / "nvdp_results.md").read_text()
    assert rendered.count("\n| ") >= 3  # a header, a rule and rows: not an empty rendering
    assert rendered in doc, "docs/nvdp_results.md's drift table is not scripts/nvdp_drift_trace.py's rendering " \
                            "of assets/nvdp/drift_trace.json (paste `nvdp_drift_trace.py --markdown`)"
