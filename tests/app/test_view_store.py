"""The disk store of bundled views (ui.common.view_store): a stored result equals a fresh computation bit for bit, the
page asks for exactly what scripts/precompute_views.py stores, uploads are never stored, any code change is a
new key."""

from __future__ import annotations

import importlib.util
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ui.common import view_store

from conftest import new_app  # the harness: tests/conftest.py


ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("precompute_views", ROOT / "scripts" / "precompute_views.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv(view_store.ENV, str(tmp_path / "views"))
    monkeypatch.setitem(view_store.STATS, "hit", 0)
    monkeypatch.setitem(view_store.STATS, "miss", 0)
    return tmp_path / "views"


def _diffs(x, y, path="") -> list[str]:
    """Where two results differ: every frame, array and number compared exactly (NaN equal to NaN)."""
    if type(x) is not type(y):
        return [f"{path}: type {type(x).__name__} != {type(y).__name__}"]
    if isinstance(x, pd.DataFrame):
        try:
            pd.testing.assert_frame_equal(x, y, check_exact=True)
        except AssertionError as exc:
            return [f"{path}: {str(exc)[:200]}"]
        return []
    if isinstance(x, np.ndarray):
        return [] if x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc") else [f"{path}: array"]
    if isinstance(x, dict):
        if list(x) != list(y):
            return [f"{path}: keys {list(x)} != {list(y)}"]
        return [d for k in x for d in _diffs(x[k], y[k], f"{path}/{k}")]
    if isinstance(x, (list, tuple)):
        if len(x) != len(y):
            return [f"{path}: length"]
        return [d for i, (u, v) in enumerate(zip(x, y)) for d in _diffs(u, v, f"{path}[{i}]")]
    if hasattr(x, "__dict__") and not isinstance(x, type):
        return _diffs(vars(x), vars(y), f"{path}.{type(x).__name__}")
    if isinstance(x, float):
        return [] if (x == y or (x != x and y != y)) else [f"{path}: {x!r} != {y!r}"]
    try:
        same = bool(x == y)
    except (TypeError, ValueError):
        same = pickle.dumps(x) == pickle.dumps(y)
    return [] if same else [f"{path}: {x!r} != {y!r}"]


def _equal(a, b):
    diffs = _diffs(a, b)
    assert not diffs, diffs[:10]


def test_diffs_finds_a_changed_last_bit():
    a = {"f": pd.DataFrame({"x": [0.1, 0.2]}), "v": np.array([1.0, np.nan]), "s": 0.3}
    b = {"f": pd.DataFrame({"x": [0.1, np.nextafter(0.2, 1)]}), "v": np.array([1.0, np.nan]), "s": 0.3}
    assert _diffs(a, a) == [] and len(_diffs(a, b)) == 1
    assert _diffs({"s": 0.3}, {"s": np.nextafter(0.3, 1)}) and _diffs({"v": a["v"]}, {"v": a["v"][::-1]})


def test_through_stores_once_and_reads_back(store):
    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"x": [1.0, 2.0]})

    spec = json.dumps({"data": "bank", "seeds": 2})
    first = view_store.through("sweep", "k", spec, compute)
    second = view_store.through("sweep", "k", spec, compute)
    assert len(calls) == 1 and view_store.STATS == {"hit": 1, "miss": 1}
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    # another kind, data key or spec is another entry
    assert len({view_store.path_for("sweep", "k", spec), view_store.path_for("fits", "k", spec),
                view_store.path_for("sweep", "k2", spec), view_store.path_for("sweep", "k", spec + " ")}) == 4
    # a damaged file is a miss (recomputed and rewritten), never an error
    view_store.path_for("sweep", "k", spec).write_bytes(b"not a pickle")
    view_store.through("sweep", "k", spec, compute)
    assert len(calls) == 2


def test_off_without_the_variable_and_uploads_never_stored(monkeypatch, tmp_path):
    monkeypatch.delenv(view_store.ENV, raising=False)
    assert view_store.folder() is None and view_store.path_for("sweep", "k", "{}") is None
    n = []
    for _ in range(2):
        view_store.through("sweep", "k", json.dumps({"data": "bank"}), lambda: n.append(1))
    assert len(n) == 2
    monkeypatch.setenv(view_store.ENV, str(tmp_path))
    for spec in ({"data": "upload:mine.csv"}, {"data": "bank", "public_source": "file"},
                 {"data": "bank", "moments": {"x": 1}}):
        n.clear()
        for _ in range(2):
            assert view_store.through("sweep", "k", json.dumps(spec), lambda: n.append(1) or 7) == 7
        assert len(n) == 2  # computed every time: never stored, never read
    assert not any(tmp_path.iterdir())
    view_store.through("sweep", "k", json.dumps({"data": "bank"}), lambda: 7)
    assert len(list(tmp_path.iterdir())) == 1  # not vacuous: a bundled spec is stored in the same folder


def test_the_key_covers_every_engine_source(monkeypatch, tmp_path):
    """A changed engine file is a new fingerprint (so a stored result is never read by other code)."""
    before = view_store.fingerprint()
    fake = tmp_path / "repo"
    (fake / "engine" / "pmt").mkdir(parents=True)
    (fake / "ui").mkdir()
    for rel in ["engine/pmt/ridge.py", *view_store.PAGE_SOURCES]:
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_bytes((ROOT / rel).read_bytes())
    monkeypatch.setattr(view_store, "ROOT", fake)
    view_store.fingerprint.cache_clear()
    try:
        a = view_store.fingerprint()
        (fake / "engine" / "pmt" / "ridge.py").write_bytes((ROOT / "engine/pmt/ridge.py").read_bytes() + b"\n# x\n")
        view_store.fingerprint.cache_clear()
        assert view_store.fingerprint() != a
    finally:
        view_store.fingerprint.cache_clear()
        monkeypatch.setattr(view_store, "ROOT", ROOT)
    assert view_store.fingerprint() == before


def _check_view(store, task, state):
    """Precompute the first view, then: every entry equals a fresh computation bit for bit."""
    mod = _script()
    entries = mod.entries(task, state, tabs=False)
    for _, kind, key, spec_json, prep in entries:
        view_store.through(kind, key, spec_json, lambda: mod.compute_entry(kind, key, spec_json, prep))
    assert view_store.STATS["miss"] == len(entries) and len(list(store.glob("*.pkl"))) == len(entries)
    for _, kind, key, spec_json, prep in entries:
        stored = view_store.load(kind, key, spec_json)
        assert stored is not None
        _equal(stored, mod.compute_entry(kind, key, spec_json, prep))  # a fresh computation, bit for bit
    return entries


def test_small_logistic_bank_view_is_bit_identical_and_the_page_reads_it(store):
    entries = _check_view(store, "classification", {"data": "bank", "seeds": 2})
    assert {e[1] for e in entries} == {"sweep", "diagnostics"}
    # the page asks for exactly these entries: a fresh server process reads its first view from the store
    import streamlit as st

    st.cache_data.clear()
    view_store.STATS.update(hit=0, miss=0)
    at = new_app("pmt", timeout=600, query={"data": "bank", "seeds": "2"}).run()
    assert not at.exception and not at.error
    assert at.session_state["task"] == "classification"
    assert view_store.STATS["hit"] >= len(entries), view_store.STATS  # the three first-view stages, from disk


def test_a_key_press_on_a_bundled_view_reads_the_store_and_equals_a_fresh_computation(store, monkeypatch):
    """The slider positions scripts/precompute_views.py stores (keys=True) are what one epsilon / lam press asks for:
    bit for bit a fresh computation, and the page's press reads every one of them from disk (nothing computed)."""
    from streamlit.testing.v1 import AppTest

    from ui.pmt import prefetch

    mod = _script()
    state = {"data": "bank", "seeds": 2}
    first = mod.entries("classification", state, tabs=False)
    keyed = mod.entries("classification", state, tabs=False, keys=True, epsilons=[1.0, 1.5], lams=[1e-4, 1e-3])
    extra = keyed[len(first):]
    # the view's own epsilon and lam add nothing; each other position: its stages (epsilon 2, lam 3)
    assert [e[1] for e in extra] == ["sweep", "diagnostics", "sweep", "sweep", "diagnostics"], [e[0] for e in extra]
    assert "1.5" in extra[0][0] and json.loads(extra[0][3])["values"] == [1.5]
    assert json.loads(extra[2][3])["lam"] == 1e-3 and len(json.loads(extra[2][3])["values"]) > 1
    for _, kind, key, spec_json, prep in keyed:
        view_store.through(kind, key, spec_json, lambda: mod.compute_entry(kind, key, spec_json, prep))
    for _, kind, key, spec_json, prep in extra:
        _equal(view_store.load(kind, key, spec_json), mod.compute_entry(kind, key, spec_json, prep))

    # only the page's own requests are counted (ui.pmt.run holds the function by name)
    from ui.pmt import run

    monkeypatch.setattr(prefetch, "neighbours", lambda *a, **k: None)
    monkeypatch.setattr(run, "neighbours", lambda *a, **k: None)
    import streamlit as st

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["data"] = "bank"
    at.query_params["seeds"] = "2"
    at.switch_page("app_pages/pmt.py").run()
    assert not at.exception and not at.error
    view_store.STATS.update(hit=0, miss=0)
    at.select_slider(key="epsilon").set_value(1.5).run()
    assert not at.exception and view_store.STATS == {"hit": 2, "miss": 0}, view_store.STATS
    at.select_slider(key="epsilon").set_value(1.0).run()  # back: the page's own cache, no disk
    at.select_slider(key="lam").set_value(1e-3).run()
    assert not at.exception and view_store.STATS == {"hit": 5, "miss": 0}, view_store.STATS
    at.select_slider(key="epsilon").set_value(2.0).run()  # a position not stored: computed (and stored)
    assert view_store.STATS["miss"] == 2


@pytest.mark.slow
def test_logistic_bank_first_view_is_bit_identical(store):
    _check_view(store, "classification", {"data": "bank"})


def test_the_key_does_not_depend_on_what_was_imported_first():
    """The launcher imports SciPy (its own OpenBLAS) before any page; scripts/precompute_views.py does not: both must
    compute the same key (a key from the list of loaded BLAS libraries made the server miss every stored view)."""
    import subprocess
    import sys

    code = "from ui.common import view_store as v; print(v.fingerprint())"
    outs = [subprocess.run([sys.executable, "-c", pre + code], cwd=ROOT, capture_output=True, text=True, timeout=300)
            for pre in ("", "import scipy.linalg, scipy.special; import numba; ")]
    assert all(o.returncode == 0 for o in outs), [o.stderr[-500:] for o in outs]
    assert outs[0].stdout.strip() == outs[1].stdout.strip() != ""


def test_if_missing_computes_only_without_this_codes_stamp(store, monkeypatch):
    """run.sh's ``precompute_views.py --if-missing``: nothing when the stamp of this code's fingerprint is there, the
    whole precompute otherwise; a partial precompute (--no-keys, one view) writes no stamp."""
    mod = _script()
    calls = []
    monkeypatch.setattr(mod, "entries", lambda task, state, **kw: calls.append((task, kw)) or [])
    assert mod.main(["--if-missing"]) == 0 and len(calls) == len(mod.VIEWS)
    assert all(kw["tabs"] and kw["keys"] for _, kw in calls)
    stamp = mod.stamp_path()
    assert stamp.name.startswith(".complete-") and view_store.fingerprint()[:24] in stamp.name and stamp.is_file()
    calls.clear()
    assert mod.main(["--if-missing"]) == 0 and calls == []  # stamped: nothing computed
    stamp.unlink()
    mod.main(["--no-keys"])
    assert len(calls) == len(mod.VIEWS) and not stamp.is_file()  # a partial fill is not "every view stored"
