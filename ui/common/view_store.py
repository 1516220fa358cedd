"""Results of the bundled views kept on disk between server processes, never stale, never from an upload.

A bundled view (a bundled data set with the page's settings) is a deterministic function of its settings, the
engine's code and the machine's arithmetic: the logistic-on-bank first view is 80 noisy-Newton and DP-GD runs
per method (seconds of CPU) whose numbers are the same every time. :func:`through` returns a computation's
result from the store when the very same computation was stored before, and computes (and stores) it otherwise.

The key of a result is the SHA-256 of its kind, the data's fingerprint, the canonical JSON of its settings and
:func:`fingerprint`: every byte of the engine's Python sources (``engine/**/*.py``) and of the page code that
turns settings into a computation (``ui/pmt/compute/core.py``, ``ui/pmt/compute/modes.py``), the Python, NumPy and
BLAS versions, NumPy's enabled CPU features and the CPU count. Any change of code or machine is a new key, so a
stored result is one a fresh computation reproduces bit for bit (``tests/app/test_view_store.py`` recomputes and
compares); an old entry is never read again (delete the folder to reclaim it).

Off unless ``EXPLORER_VIEW_STORE`` names a folder. The launcher (:mod:`launcher.serve`) sets it to ``.cache/views``
of the checkout; ``scripts/precompute_views.py`` fills it for the bundled first views and their tabs (run once
per machine and after any change of the engine, like ``scripts/warm_dpgd_kernels.py``).

Privacy: only the shared (bundled-data) cache of the PMT page goes through here (:mod:`ui.pmt.run`); uploads
and everything computed from them are never stored (they stay in their browser session), and
:func:`through` never stores or reads a spec that names an upload. The bundled data sets are public files shipped with the app.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The environment variable naming the folder (unset or empty: off).
ENV = "EXPLORER_VIEW_STORE"
#: The launcher's default folder.
DEFAULT_DIR = ROOT / ".cache" / "views"
#: Page modules whose code decides what a spec computes (with every engine source).
PAGE_SOURCES = ("ui/pmt/compute/core.py", "ui/pmt/compute/modes.py", "ui/pmt/compute/catalogue.py",
                "ui/pmt/compute/view.py", "ui/common/settings.py")

#: Hits and misses of this process (for tests and the benchmark's notes).
STATS = {"hit": 0, "miss": 0}


def folder() -> Path | None:
    """The store's folder, or None when it is off."""
    value = os.environ.get(ENV, "").strip()
    return Path(value) if value and value.lower() not in ("0", "off", "none") else None


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """SHA-256 of the code and the machine a stored result depends on (module docstring)."""
    import numpy as np

    h = hashlib.sha256()
    files = sorted(ROOT.glob("engine/**/*.py")) + [ROOT / p for p in PAGE_SOURCES]
    if not any(f.is_file() for f in files):  # a wrong ROOT would key every result to no code at all
        raise RuntimeError(f"view store: no engine sources under {ROOT}")
    for f in files:
        if f.is_file():
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # pragma: no cover - older numpy
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    # numpy's own BLAS (from its build configuration; not threadpoolctl's list of loaded libraries, which depends on
    # what else was imported first, e.g. SciPy's second OpenBLAS, and gave a server another key than the script)
    try:
        blas = json.dumps(np.__config__.CONFIG["Build Dependencies"]["blas"], sort_keys=True, default=str)
    except (AttributeError, KeyError, TypeError):  # pragma: no cover - older numpy
        blas = np.__version__
    h.update(json.dumps({"python": sys.version, "numpy": np.__version__, "machine": platform.machine(),
                         "cpu_features": sorted(k for k, v in feats.items() if v), "blas": blas,
                         "cpus": os.cpu_count()}, sort_keys=True).encode())
    return h.hexdigest()


def _is_upload(spec_json: str) -> bool:
    """The view's own answer (:attr:`ui.pmt.compute.view.Choice.is_upload`); not a spec: never stored."""
    from ui.pmt.compute.view import Choice

    return Choice.from_json(spec_json).is_upload


def path_for(kind: str, data_key: str, spec_json: str) -> Path | None:
    """Where ``kind``'s result for these settings is stored (None when the store is off)."""
    base = folder()
    if base is None:
        return None
    key = hashlib.sha256("\0".join((kind, data_key, spec_json, fingerprint())).encode()).hexdigest()
    return base / f"{kind}-{key}.pkl"


def load(kind: str, data_key: str, spec_json: str):
    """The stored result, or None (store off, nothing stored, an unreadable file)."""
    p = path_for(kind, data_key, spec_json)
    if p is None or not p.is_file():
        return None
    try:
        with p.open("rb") as fh:
            return pickle.load(fh)
    except Exception:  # noqa: BLE001 - a truncated or foreign file is a miss, never an error on the page
        return None


def save(kind: str, data_key: str, spec_json: str, value) -> Path | None:
    """Store ``value`` (atomically: a half-written file is never read). Returns the path, or None when off."""
    p = path_for(kind, data_key, spec_json)
    if p is None:
        return None
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=".pkl")
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def through(kind: str, data_key: str, spec_json: str, compute):
    """``compute()``'s result for a bundled view, from the store when stored before (then stored). A spec that names
    an uploaded file (or anything not a bundled view's spec) is computed and never stored or read."""
    if folder() is None or _is_upload(spec_json):
        return compute()
    got = load(kind, data_key, spec_json)
    if got is not None:
        STATS["hit"] += 1
        return got
    STATS["miss"] += 1
    value = compute()
    try:
        save(kind, data_key, spec_json, value)
    except OSError:  # a read-only or full disk: the page still shows the result
        pass
    return value
