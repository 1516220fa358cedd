"""The fourth reliability round's hostile files, generated with a fixed seed by :mod:`tests.hostile_round4`.

330 CSVs (33 kinds) through the validating loader and through the command line (``python -m engine
pmt-moments``, in process), 160 moments files (32 kinds) through the in-memory moments reader and through
``python -m engine pmt --public-moments``, 40 NVDP texts (8 kinds) through the NVDP text reader. Every file
gives either exactly the values it holds (never a silently changed number) or one ``ValueError`` whose
message is one line in our words, names the problem (and the accepted range where there is one: the
fragments the generator expects) and never carries a raw library message or a traceback.

``pytest -s`` prints the count of outcomes per kind and the first message of each kind.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_round4 as gen  # noqa: E402

from engine.datasets import read_csv_upload  # noqa: E402

#: Third-party messages that must never reach a user.
RAW_FRAGMENTS = ("Traceback", "Error tokenizing", "C error", "codec can't decode", "Expecting value",
                 "Eigenvalues did not converge", "could not convert", "object of type", "unhashable",
                 "maximum recursion", "field larger than field limit", "OverflowError", "int too large",
                 "float() argument", "NoneType' object", "not subscriptable", "has no len")
#: Longest accepted message (a message box never holds megabytes).
MAX_MESSAGE = 1000

OUTCOMES: collections.Counter = collections.Counter()
FIRST: dict = {}

CSV_CASES = gen.csv_cases()
MOMENTS_CASES = gen.moments_cases()
NVDP_CASES = gen.nvdp_cases()


def _clear(kind: str, msg: str, fragments) -> None:
    """One line, our words, bounded, naming the problem (every expected fragment)."""
    assert "\n" not in msg, (kind, msg)
    assert len(msg) <= MAX_MESSAGE, (kind, len(msg))
    assert not any(f in msg for f in RAW_FRAGMENTS), (kind, msg)
    for f in fragments:
        assert f in msg, (kind, f, msg)


def _note(reader: str, kind: str, outcome: str, msg: str = "") -> None:
    OUTCOMES[(reader, kind, outcome)] += 1
    FIRST.setdefault((reader, kind), msg[:240])


def test_the_generated_set_is_large_and_fixed():
    assert len(CSV_CASES) + len(MOMENTS_CASES) + len(NVDP_CASES) >= 500
    assert len(CSV_CASES) >= 300 and len(MOMENTS_CASES) >= 150 and len(NVDP_CASES) >= 40
    again = gen.csv_cases()
    assert all(a[2] == b[2] for a, b in zip(CSV_CASES, again))  # fixed seed: the same bytes every run
    kinds = collections.Counter(expect[0] for *_, expect in CSV_CASES)
    assert kinds["values"] >= 80 and kinds["error"] >= 200


@pytest.mark.parametrize("kind", gen.CSV_KINDS)
def test_csv_loader(kind):
    """Through the loader: the values in the file, or one clear error."""
    for k, name, raw, expect in CSV_CASES:
        if k != kind:
            continue
        try:
            ds = read_csv_upload(raw)
        except ValueError as exc:
            assert expect[0] == "error", (name, str(exc))  # a file of intended values is read, not refused
            _clear(name, str(exc), expect[1])
            _note("loader", kind, "clear error", str(exc))
            continue
        assert expect[0] == "values", (name, "accepted a file that must be refused")
        _, features, X, y = expect
        assert list(ds.feature_names) == list(features), name
        np.testing.assert_array_equal(ds.X.to_numpy(dtype=float), X, err_msg=name)  # exactly the file's numbers
        np.testing.assert_array_equal(np.asarray(ds.y, dtype=float), y, err_msg=name)
        _note("loader", kind, "parsed correctly")


def _cli(argv) -> tuple[int, str, str]:
    from engine.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("kind", gen.CSV_KINDS)
def test_csv_command_line(kind, tmp_path):
    """Through ``python -m engine pmt-moments FILE`` (in process): the written mean and n_pub are the file's, or
    exit status 2 and one ``error:`` line with the loader's message."""
    for k, name, raw, expect in CSV_CASES[:: 2]:  # every other file: 165 runs
        if k != kind:
            continue
        path, out = tmp_path / name, tmp_path / (name + ".json")
        path.write_bytes(raw)
        rc, stdout, stderr = _cli(["pmt-moments", str(path), "--out", str(out)])
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        if expect[0] == "error":
            assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: "), (name, rc, stderr)
            _clear(name, lines[0], expect[1])
            _note("cli", kind, "clear error", lines[0])
            continue
        assert rc == 0 and not lines, (name, rc, stderr)
        _, features, X, y = expect
        got = json.loads(out.read_text())
        full = np.column_stack([X, y])  # pmt-moments exports every column (no --target)
        assert got["n_pub"] == len(y) and got["columns"] == [*features, "y"], name
        np.testing.assert_allclose(got["mean"], full.mean(axis=0), rtol=1e-12, atol=1e-12 * np.abs(full).max())
        _note("cli", kind, "parsed correctly")


@pytest.mark.parametrize("kind", gen.MOMENTS_KINDS)
def test_moments_reader(kind):
    """In memory (the page's reader): the file's numbers, or one bounded message naming the file."""
    from engine.pmt.public_info import PublicInfo

    for k, name, raw, expect in MOMENTS_CASES:
        if k != kind:
            continue
        try:
            info = PublicInfo.from_bytes(raw, name)
        except ValueError as exc:
            msg = str(exc)
            assert expect[0] == "error", (name, msg)
            assert msg.startswith(f"moments file {name}: "), msg  # names the file
            assert len(msg) <= 600, len(msg)
            _clear(name, msg, expect[1])
            _note("moments", kind, "clear error", msg)
            continue
        assert expect[0] == "values", (name, "accepted a file that must be refused")
        d = expect[1]
        assert list(info.columns) == d["columns"] and info.n_pub == d["n_pub"], name
        np.testing.assert_array_equal(info.mean, np.asarray(d["mean"]))
        np.testing.assert_allclose(info.second_moment[:-1, :-1], np.asarray(d["second_moment"]), rtol=1e-15)
        _note("moments", kind, "parsed correctly")


def test_moments_reader_writes_nothing_to_disk(monkeypatch):
    """The page's reader never opens a file (the README: uploads never touch the disk)."""
    import builtins
    import tempfile

    from ui.pmt.compute.modes import read_moments

    def refuse(*a, **k):
        raise AssertionError("a file was opened")

    k, name, raw, expect = next(c for c in MOMENTS_CASES if c[0] == "good_json")
    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    info = read_moments(name, raw, expect[1]["columns"][::-1])
    assert info.n_pub == expect[1]["n_pub"]
    with pytest.raises(ValueError, match="does not fit the data set.*missing from the public information"):
        read_moments(name, raw, ["other"] * 1 + [f"z{i}" for i in range(5000)])
    try:
        read_moments(name, raw, [f"z{i}" for i in range(5000)])
    except ValueError as exc:
        assert len(str(exc)) <= 600  # 5,000 missing names: one bounded message


def test_moments_command_line(tmp_path):
    """``python -m engine pmt --public-moments FILE`` (in process): exit 2 and one ``error:`` line for every refused
    kind (one file per kind)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    data = tmp_path / "private.csv"
    data.write_text("c0,c1,y\n" + "".join(f"{a:.6f},{b:.6f},{a + b:.6f}\n" for a, b in X))
    seen = set()
    for k, name, raw, expect in MOMENTS_CASES:
        if expect[0] != "error" or k in seen:
            continue
        seen.add(k)
        path = tmp_path / name
        path.write_bytes(raw)
        rc, _, stderr = _cli(["pmt", "--data", str(data), "--public-moments", str(path), "--response-bound", "5",
                              "--seeds", "1", "--epsilon", "1"])
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: "), (name, rc, stderr)
        _clear(name, lines[0], expect[1])
        _note("moments cli", k, "clear error", lines[0])
    assert len(seen) >= 25


@pytest.mark.parametrize("kind", gen.NVDP_KINDS)
def test_nvdp_text_reader(kind):
    """The NVDP text reader: every text as written (a comma inside a quoted text kept), or one clear error;
    never a text cut at an unquoted comma."""
    from engine.nvdp.user_text import read_text_csv

    for k, name, raw, expect in NVDP_CASES:
        if k != kind:
            continue
        try:
            ds = read_text_csv(raw)
        except ValueError as exc:
            assert expect[0] == "error", (name, str(exc))
            _clear(name, str(exc), expect[1])
            _note("nvdp", kind, "clear error", str(exc))
            continue
        assert expect[0] == "values", (name, "accepted a file that must be refused")
        _, texts, labels = expect
        assert ds.texts == texts, name
        assert [ds.classes[c] for c in ds.labels] == labels, name
        _note("nvdp", kind, "parsed correctly")


def test_the_long_row_is_refused_fast_and_small():
    """2,000,000 fields in one 4 MB row: refused in under 1 s with under 200 MB (Python's allocations)."""
    raw = b"a,b\n1,2\n" + b",".join([b"1"] * 2_000_000) + b"\n"
    assert len(raw) >= 4_000_000
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="2,000,000 fields on line 3; at most 20,000 fields per row"):
        read_csv_upload(raw)
    wall = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert wall < 1.0 and peak < 200 * 2**20, (wall, peak)


def test_print_outcomes():
    """With ``pytest -s``: outcomes per reader and kind, and the first message of each kind."""
    for (reader, kind, outcome), count in sorted(OUTCOMES.items()):
        print(f"{reader:12s} {kind:40s} {outcome:16s} {count:4d}  {FIRST.get((reader, kind), '')[:160]}")


def test_cli_exit_status_tells_the_truth_on_a_one_class_test_split(tmp_path):
    """A logistic run whose test rows hold one class has no ROC AUC: exit 2 and one line saying so (never ``nan``
    with exit 0); a split with both classes prints finite numbers."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = np.zeros(80, dtype=int)
    y[rng.choice(80, 3, replace=False)] = 1
    path = tmp_path / "rare.csv"
    path.write_text("a,b,y\n" + "".join(f"{a:.4f},{b:.4f},{t}\n" for (a, b), t in zip(X, y)))
    codes = []
    for split_seed in range(4):
        rc, stdout, stderr = _cli(["pmt", "--data", str(path), "--task", "logistic", "--seeds", "2", "--epsilon",
                                   "1", "--n-pub", "20", "--split-seed", str(split_seed)])
        codes.append(rc)
        if rc == 2:
            assert stderr.strip().count("\n") == 0 and "the metric auc is undefined" in stderr, stderr
            assert "both classes" in stderr
        else:
            assert rc == 0 and "nan" not in stdout.lower(), (split_seed, stdout)
    assert 2 in codes and 0 in codes, codes


def test_cli_n_pub_one_says_why():
    rc, _, stderr = _cli(["pmt", "--dataset", "ccpp", "--n-pub", "1", "--seeds", "1", "--epsilon", "1"])
    assert rc == 2 and "n_pub = 1" in stderr and "use n_pub >= 2" in stderr and "all zero" not in stderr, stderr
