"""Hostile CSV files, generated: through the validating loader and through ``python -m engine pmt --data``.

Every outcome must be a parsed frame that holds only finite numbers, or one ``ValueError`` whose message is
a single line in the loader's own words (never a raw ``csv.Error`` or pandas tokenizer text); a path,
the raw bytes and a Streamlit ``UploadedFile`` of the same file give the same outcome; the command line
prints one ``error: ...`` line and exits non-zero for a bad file (never a traceback), or prints a
summary whose numbers are all finite.

Profiles: the default (CI) run is fixed-seed (``derandomize=True``) and short (``LOADER_EXAMPLES`` and
``CLI_EXAMPLES`` generated files per kind, fewer of the slow 10,000-column kind: 305 + 102 files, about a
minute on a quiet machine); ``./test.sh -m slow`` adds a long randomised run.
``pytest -s`` prints the count of outcomes per kind of file.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.datasets import MAX_UPLOAD_BYTES, read_csv_upload

ROOT = Path(__file__).resolve().parents[2]

#: Generated files per kind in the fixed-seed CI profile (loader; command line); the 10,000-column kind
#: (about 1 s per file) gets fewer: 20 x 15 + 5 = 305 files through the loader, 20 x 5 + 2 through the CLI.
LOADER_EXAMPLES, CLI_EXAMPLES = 15, 5
FEWER = {"wide": (5, 2)}

#: Fragments of third-party parser messages that must never reach a user.
RAW_FRAGMENTS = ("field larger than field limit", "new-line character seen", "Error tokenizing", "C error",
                 "line contains NUL", "Traceback", "EOF inside string", "could not convert", "NULL byte")

#: Cells a spreadsheet or a hostile user may put where a number belongs.
SPECIAL_CELLS = ("1e308", "-1e308", "-0.0", "0.0", "5e-324", "2.2250738585072014e-308", "1e-400", "1e400",
                 "nan", "NaN", "inf", "-inf", "Infinity", "\u221e", "-\u221e", "1e150", "-1e151", "", " ",
                 "NA", "null", "0x1F", "1_000", "1,5", "=1+1", "=HYPERLINK(\"http://x\")", "+1", "@SUM(A1)",
                 "true", "false", "\u00e9t\u00e9", "\ufeff1", "1\u00a0000", "\t-3\t")

FORMULAS = ("=1+1", "=cmd|' /C calc'!A0", "+2+3", "-2+3", "@SUM(A1:A2)", "=HYPERLINK(\"http://example.com\")")

KINDS = ("table", "specials", "random_bytes", "utf16_bom", "utf16_no_bom", "utf32_bom", "latin1",
         "nul", "formula", "one_column", "quoted_newline", "long_line", "long_header", "duplicate_header",
         "ragged", "unclosed_quote", "lone_cr", "blank", "semicolon_decimal_comma", "over_cap", "wide")

SETTINGS = dict(deadline=timedelta(seconds=30), database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example, HealthCheck.filter_too_much])

OUTCOMES: collections.Counter = collections.Counter()
#: First messages seen per (kind, outcome), printed with ``pytest -s`` (a reader checks they name the problem).
MESSAGES: dict = collections.defaultdict(list)


@st.composite
def numeric_table(draw, max_rows=60, max_cols=5):
    """(header, rows) of a table of numbers (mostly valid; the mutations below make it hostile)."""
    d = draw(st.integers(1, max_cols))
    n = draw(st.one_of(st.integers(16, max_rows), st.integers(2, 5)))
    names = [f"x{i}" for i in range(d)] + ["y"]
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([1.0, 1e-300, 1e-10, 1e6, 1e140]))
    vals = np.random.default_rng(seed).normal(size=(n, d + 1)) * scale
    rows = [[repr(float(v)) for v in r] for r in vals]
    return names, rows


def _join(names, rows, sep=","):
    return sep.join(names) + "\n" + "".join(sep.join(r) + "\n" for r in rows)


@st.composite
def hostile_file(draw, kind):
    """(kind, raw bytes, max_bytes) of one hostile file of the given kind (one of :data:`KINDS`)."""
    names, rows = draw(numeric_table())
    cap = MAX_UPLOAD_BYTES
    pick = st.integers(0, len(rows) - 1)
    col = draw(st.integers(0, len(names) - 1))
    if kind == "table":
        raw = _join(names, rows).encode()
    elif kind == "specials":
        for _ in range(draw(st.integers(1, 4))):
            rows[draw(pick)][draw(st.integers(0, len(names) - 1))] = draw(st.sampled_from(SPECIAL_CELLS))
        raw = _join(names, [[f'"{c}"' if "," in c else c for c in r] for r in rows]).encode()
    elif kind == "random_bytes":
        how = draw(st.sampled_from(["hypothesis", "uniform", "csv_alphabet"]))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        size = draw(st.integers(0, 20_000))
        if how == "hypothesis":
            raw = draw(st.binary(min_size=0, max_size=4000))
        elif how == "uniform":
            raw = rng.integers(0, 256, size).astype(np.uint8).tobytes()
        else:  # bytes a CSV parser treats specially, in random order
            alphabet = np.frombuffer(b'0123456789.,;\t\n\r"e-+ \x00\xff\xfe\xef\xbb\xbfabc', dtype=np.uint8)
            raw = rng.choice(alphabet, size).tobytes()
    elif kind in ("utf16_bom", "utf16_no_bom", "utf32_bom"):
        text = _join(["t\u00e9mp\u00e9rature"] + names[1:], rows)
        raw = {"utf16_bom": lambda: text.encode("utf-16"), "utf16_no_bom": lambda: text.encode("utf-16-le"),
               "utf32_bom": lambda: text.encode("utf-32")}[kind]()
        if draw(st.booleans()):
            raw = raw[: draw(st.integers(2, len(raw)))]  # cut mid-character
    elif kind == "latin1":
        raw = _join(["caf\u00e9", "na\u00efve", *names[2:]] if len(names) > 2 else ["caf\u00e9", "y"], rows).encode("latin-1")
    elif kind == "nul":
        text = _join(names, rows).encode()
        at = draw(st.integers(0, len(text)))
        raw = text[:at] + b"\x00" * draw(st.integers(1, 3)) + text[at:]
    elif kind == "formula":
        rows[draw(pick)][col] = draw(st.sampled_from(FORMULAS))
        raw = _join(names, [[f'"{c}"' if "," in c or '"' in c else c for c in r] for r in rows]).encode()
    elif kind == "one_column":
        raw = _join(["y"], [[r[0]] for r in rows]).encode()
    elif kind == "quoted_newline":
        where = draw(st.sampled_from(["header", "cell"]))
        if where == "header":
            names[col] = f'"{names[col]}\nmore"'
        else:
            rows[draw(pick)][col] = f'"{rows[0][col]}\n{rows[1][col]}"'
        raw = _join(names, rows).encode()
    elif kind in ("long_line", "long_header"):
        size = draw(st.sampled_from([131_071, 131_072, 131_073, 200_000, 1_000_000]))
        quoted = draw(st.booleans())
        field = "9" * size if kind == "long_line" else "h" * size
        field = f'"{field}"' if quoted else field
        if kind == "long_header":
            names[col] = field
        else:
            rows[draw(pick)][col] = field
        raw = _join(names, rows).encode()
    elif kind == "duplicate_header":
        other = draw(st.integers(0, len(names) - 1))
        names[other] = names[col] if other != col else names[col]
        if other == col:
            names.append(names[col])
            rows = [r + [r[0]] for r in rows]
        if draw(st.booleans()):
            names[other] = " " + names[other] + " "  # the same name after stripping
        raw = _join(names, rows).encode()
    elif kind == "ragged":
        r = draw(pick)
        rows[r] = rows[r] + ["1"] * draw(st.integers(1, 3)) if draw(st.booleans()) else rows[r][:-1]
        raw = _join(names, rows).encode()
    elif kind == "unclosed_quote":
        r = draw(pick)
        rows[r][col] = '"' + rows[r][col]
        raw = _join(names, rows).encode()
    elif kind == "lone_cr":
        text = _join(names, rows)
        at = draw(st.integers(0, len(text)))
        raw = (text[:at] + "\r" + text[at:]).encode()
    elif kind == "blank":
        raw = draw(st.sampled_from([b"", b"\n\n", b"   \n \t\n", b"\xef\xbb\xbf", b"\xff\xfe", b"\r\r\r"]))
    elif kind == "semicolon_decimal_comma":
        raw = _join(names, [[c.replace(".", ",") for c in r] for r in rows], sep=";").encode()
    elif kind == "over_cap":
        raw = _join(names, rows).encode()
        cap = len(raw) - draw(st.integers(1, min(len(raw) - 1, 100)))
    elif kind == "wide":
        d = draw(st.sampled_from([9_999, 10_000]))
        n = draw(st.integers(2, 6))
        wide_rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        raw = _join([f"c{i}" for i in range(d)], [[f"{v:.3g}" for v in wide_rng.normal(size=d)] for _ in range(n)]).encode()
    else:  # pragma: no cover - every kind is handled above
        raise AssertionError(kind)
    return kind, raw, cap


#: Kinds whose rejection must name their problem (the message holds one of these fragments).
EXPECTED = {
    "nul": ("NUL",), "utf16_no_bom": ("NUL",), "over_cap": ("upload limit",), "one_column": ("single column",),
    "duplicate_header": ("appears more than once",), "unclosed_quote": ("never closed", "not numeric"),
    "blank": ("empty",), "wide": ("too few rows",),
}


def _uploaded(raw: bytes, name: str):
    from streamlit.proto.Common_pb2 import FileURLs
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    return UploadedFile(UploadedFileRec("f1", name, "text/csv", raw), FileURLs())


def outcome(source, cap: int):
    """("ok", arrays and names) or ("error", message) of one load; anything else propagates (a test failure)."""
    try:
        ds = read_csv_upload(source, max_bytes=cap)
    except ValueError as exc:
        return ("error", str(exc))
    X = ds.X.to_numpy()
    y = ds.y.to_numpy()
    return ("ok", ds.task, ds.feature_names, ds.target_name, X.tobytes(), X.shape, y.tobytes())


def check_message(kind: str, msg: str) -> None:
    assert msg and "\n" not in msg and len(msg) < 1200, msg[:2000]
    assert not any(f in msg for f in RAW_FRAGMENTS), msg
    if kind in EXPECTED:
        assert any(f in msg for f in EXPECTED[kind]), (kind, msg[:400])


def check_frame(raw: bytes, cap: int) -> None:
    ds = read_csv_upload(raw, max_bytes=cap)
    X, y = ds.to_numpy()
    assert X.dtype == np.float64 and np.isfinite(X).all() and np.isfinite(y).all()
    assert np.abs(X).max() <= 1e150 and np.abs(y).max() <= 1e150
    assert ds.n > ds.d >= 1 and len(set(ds.feature_names)) == ds.d and ds.target_name not in ds.feature_names


def _check_loader(tmp_path_factory, case):
    kind, raw, cap = case
    path = tmp_path_factory.mktemp("f") / "hostile.csv"
    path.write_bytes(raw)
    t0 = time.perf_counter()
    results = [outcome(path, cap), outcome(raw, cap), outcome(_uploaded(raw, "hostile.csv"), cap)]
    assert time.perf_counter() - t0 < 3 * 30
    assert results[0] == results[1] == results[2], (kind, [r[:2] for r in results])
    OUTCOMES[(kind, results[0][0])] += 1
    if results[0][0] == "error" and len(MESSAGES[kind]) < 4 and results[0][1][:50] not in str(MESSAGES[kind]):
        MESSAGES[kind].append(results[0][1][:150])
    if results[0][0] == "error":
        check_message(kind, results[0][1])
    else:
        check_frame(raw, cap)


@pytest.mark.parametrize("kind", KINDS)
def test_loader_on_hostile_files(tmp_path_factory, kind):
    @settings(max_examples=FEWER.get(kind, (LOADER_EXAMPLES,))[0], derandomize=True, **SETTINGS)
    @given(case=hostile_file(kind))
    def run(case):
        _check_loader(tmp_path_factory, case)

    run()


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_loader_on_hostile_files_long(tmp_path_factory, kind):
    @settings(max_examples=200, derandomize=False, **SETTINGS)
    @given(case=hostile_file(kind))
    def run(case):
        _check_loader(tmp_path_factory, case)

    run()


# ---------------------------------------------------------------------------------------------------
# The command line, in process (python -m engine pmt --data FILE)
# ---------------------------------------------------------------------------------------------------
CLI_ARGS = ["--seeds", "2", "--epsilon", "1", "--n-pub", "8", "--json"]


def run_cli(argv):
    """(exit status, stdout, stderr) of ``engine.cli.main(argv)`` in this process."""
    from engine.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's own errors (a usage line and an error line)
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def _check_cli(tmp_path_factory, case, task):
    kind, raw, cap = case
    if kind == "over_cap":  # the command line has the fixed 50 MB cap: test_cli_on_a_file_over_the_cap
        return
    path = tmp_path_factory.mktemp("c") / "hostile.csv"
    path.write_bytes(raw)
    frame_out = path.with_name("results.csv")
    rc, out, err = run_cli(["pmt", "--data", str(path), "--task", task, *CLI_ARGS, "--out", str(frame_out)])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if rc == 0:
        summary = json.loads(out)["summary"]
        assert summary and all(np.isfinite(float(r[k])) for r in summary for k in ("median", "q25", "q75")), out
        import pandas as pd

        frame = pd.read_csv(frame_out)
        metrics = [c for c in ("l2_error", "rel_error", "excess_risk", "rmse", "accuracy", "auc") if c in frame]
        bad = {c for c in metrics if frame[c].notna().any() and not np.isfinite(frame[c].to_numpy(float)).all()}
        # a NaN or inf in the results is never silent: a warning line names its columns
        assert not bad or any("not finite" in ln and all(c in ln for c in bad) for ln in lines), (kind, bad, err)
        assert all(ln.startswith("warning: ") for ln in lines), err  # one line per warning, no raw numpy text
        OUTCOMES[("cli:" + kind, "ok")] += 1
        return
    assert rc not in (None, 0) and len(lines) == 1 and lines[0].startswith("error: "), (kind, rc, err[-3000:])
    check_message("cli", lines[0])
    loader = outcome(path, MAX_UPLOAD_BYTES)
    if loader[0] == "error" and task == "ridge":  # the loader's own message, naming the file
        assert lines[0] == f"error: --data {path}: {loader[1]}", (lines[0], loader[1])
    OUTCOMES[("cli:" + kind, "error")] += 1


@pytest.mark.parametrize("kind", KINDS)
def test_cli_on_hostile_files(tmp_path_factory, kind):
    @settings(max_examples=FEWER.get(kind, (0, CLI_EXAMPLES))[1], derandomize=True, **SETTINGS)
    @given(case=hostile_file(kind), task=st.sampled_from(["ridge", "ridge", "logistic"]))
    def run(case, task):
        _check_cli(tmp_path_factory, case, task)

    run()


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_cli_on_hostile_files_long(tmp_path_factory, kind):
    @settings(max_examples=60, derandomize=False, **SETTINGS)
    @given(case=hostile_file(kind), task=st.sampled_from(["ridge", "logistic"]))
    def run(case, task):
        _check_cli(tmp_path_factory, case, task)

    run()


# ---------------------------------------------------------------------------------------------------
# Real processes: the worst cases, with time and memory measured
# ---------------------------------------------------------------------------------------------------
#: ``python -m engine ARGV`` that writes its own peak RSS (KiB: ``VmHWM`` of /proc/self/status, which starts
#: afresh at exec) to the file in $PEAK_FILE at exit. ``RUSAGE_CHILDREN`` would report the largest child of the
#: whole test session, and ``ru_maxrss`` survives fork and exec (it starts at the parent's RSS).
_RUN_ENGINE = ("import atexit, os, re, runpy, sys\n"
               "def _peak():\n"
               "    text = open('/proc/self/status').read()\n"
               "    open(os.environ['PEAK_FILE'], 'w').write(re.search(r'VmHWM:\\s*(\\d+)', text).group(1))\n"
               "atexit.register(_peak)\n"
               "sys.argv = ['engine', *sys.argv[1:]]\n"
               "runpy.run_module('engine', run_name='__main__', alter_sys=True)\n")


def _subprocess(argv, timeout=60, peak_file=None):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "engine", *argv]
    if peak_file is not None:
        env["PEAK_FILE"] = str(peak_file)
        cmd = [sys.executable, "-c", _RUN_ENGINE, *argv]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    return proc, time.perf_counter() - t0


def _worst_files(tmp: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    files = {
        "random_bytes": rng.integers(1, 256, 20_000).astype(np.uint8).tobytes(),
        "long_header": b"h" * 300_000 + b",y\n1,2\n3,4\n5,1\n",
        "unclosed_quote_40MB": b'a,y\n"' + b"1" * (40 * 2**20) + b"\n2,3\n",
        "wide_10000": (",".join(f"c{i}" for i in range(10_000)) + "\n"
                       + "\n".join(",".join(f"{v:.4f}" for v in rng.normal(size=10_000)) for _ in range(200))
                       + "\n").encode(),
        "utf16_bom": ("a,b,y\n" + "".join(f"{x:.4f},{z:.4f},{x + z:.4f}\n" for x, z in rng.normal(size=(300, 2)))
                      ).encode("utf-16"),
    }
    out = {}
    for name, raw in files.items():
        p = tmp / f"{name}.csv"
        p.write_bytes(raw)
        out[name] = p
    over = tmp / "over_cap.csv"
    with open(over, "wb") as fh:  # a sparse file one byte over the cap (read from its size, never parsed)
        fh.truncate(MAX_UPLOAD_BYTES + 1)
    out["over_cap"] = over
    return out


@pytest.mark.parametrize("name, expect", [
    ("random_bytes", "error: --data"), ("unclosed_quote_40MB", "never closed"),
    pytest.param("wide_10000", "too few rows", marks=pytest.mark.slow),  # in process in CI (below)
])
def test_cli_subprocess_on_the_worst_files(tmp_path, name, expect):
    """A real ``python -m engine pmt --data FILE``: one error line, within 30 s and 2 GB (the process's peak)."""
    path = _worst_files(tmp_path)[name]
    peak_file = tmp_path / "peak_kib"
    proc, wall = _subprocess(["pmt", "--data", str(path), "--seeds", "2", "--epsilon", "1", "--n-pub", "20"],
                             peak_file=peak_file)
    peak_kib = int(peak_file.read_text())
    assert wall < 30, wall
    assert 0 < peak_kib < 2 * 2**20, peak_kib  # KiB: 2 GiB, this process's own peak
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert expect in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name, expect", [
    ("long_header", "longer than 131,072 characters"), ("over_cap", "upload limit of 50.0 MB"), ("utf16_bom", None),
    ("wide_10000", "too few rows"),
])
def test_cli_in_process_on_the_worst_files(tmp_path, name, expect):
    """The same in this process (fast): one error line within 30 s, or a summary for the UTF-16 file."""
    path = _worst_files(tmp_path)[name]
    t0 = time.perf_counter()
    rc, out, err = run_cli(["pmt", "--data", str(path), "--seeds", "2", "--epsilon", "1", "--n-pub", "20"])
    assert time.perf_counter() - t0 < 30
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if expect is None:
        assert rc == 0 and "PMT" in out and not lines, err
    else:
        assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], err


def test_cli_on_a_file_over_the_cap(tmp_path):
    """In process: the cap's message, the same as the loader's for a path, bytes and an upload of that size."""
    path = _worst_files(tmp_path)["over_cap"]
    rc, out, err = run_cli(["pmt", "--data", str(path), *CLI_ARGS])
    assert rc == 2 and err.count("\n") == 1
    msg = err.strip().split(": ", 2)[-1]
    assert msg == "the file is 50.0 MB, larger than the upload limit of 50.0 MB"
    raw = b"\0" * (MAX_UPLOAD_BYTES + 1)
    assert outcome(raw, MAX_UPLOAD_BYTES) == outcome(_uploaded(raw, "x.csv"), MAX_UPLOAD_BYTES) == ("error", msg)


def test_cli_unexpected_failure_is_one_line(monkeypatch, tmp_path):
    """A failure the command line does not foresee still ends in one line and status 1, not a traceback."""
    import engine.cli.pmt as cli_pmt

    def boom(args):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(cli_pmt, "_cmd_pmt", boom)
    rc, out, err = run_cli(["pmt", "--dataset", "ccpp"])
    assert rc == 1 and err.count("\n") == 1 and "ZeroDivisionError: float division by zero" in err
    assert "Traceback" not in err


@pytest.fixture(scope="module", autouse=True)
def _print_outcomes():
    yield
    if OUTCOMES:
        kinds = sorted({k for k, _ in OUTCOMES})
        print("\noutcomes per kind of file (parsed / error):")
        for k in kinds:
            print(f"  {k:30s} {OUTCOMES[(k, 'ok')]:4d} / {OUTCOMES[(k, 'error')]:4d}")
        print(f"  total: {sum(OUTCOMES.values())} files")
        for k, msgs in sorted(MESSAGES.items()):
            print(f"  {k}: " + " | ".join(msgs))
