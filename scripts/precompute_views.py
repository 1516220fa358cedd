"""Compute the bundled first views of the PMT page (and their lam and n_pub tabs) into the disk store.

Run once per machine, and after any change of the engine or of the page's computations (the store's key
includes every engine source, so older entries are simply never read again)::

    .venv/bin/python scripts/precompute_views.py                 # into .cache/views (the launcher's default)
    .venv/bin/python scripts/precompute_views.py --no-tabs       # the first views only
    EXPLORER_VIEW_STORE=/some/dir .venv/bin/python scripts/precompute_views.py

Each view is computed exactly as the page computes it (:func:`ui.pmt.run.compute`: the same specs, the same
functions) through :func:`ui.common.view_store.through`, so a page served by ``python -m launcher.serve`` (``run.sh``) reads
its first figure's numbers from disk instead of recomputing them. ``tests/app/test_view_store.py`` checks that the
page asks for exactly these entries and that each stored result equals a fresh computation bit for bit.
Prints the seconds per entry and the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The bundled views: (page task, the session settings that differ from the defaults when the page shows it).
VIEWS = {
    "ridge-ccpp": ("regression", {}),
    "logistic-bank": ("classification", {"data": "bank"}),
}


def view_spec(task: str, state: dict) -> dict:
    """The page's spec of a bundled view in the labelled public mode (what :func:`ui.pmt.run.compute` builds)."""
    from ui.pmt.compute import core as C

    state = {"methods": C.default_methods(task), **state}
    return C.spec_from_state(state, task=task)


def entries(task: str, state: dict, *, tabs: bool = True) -> list[tuple[str, str, str, object]]:
    """``(label, kind, key, spec JSON)`` of every computation of the view, in the page's order, and the data."""
    import json

    from engine.datasets import load_dataset
    from ui.pmt.compute import core as C
    from ui.common.state import EPSILON_GRID, LAM_OPTIONS, N_PUB_GRID

    spec = view_spec(task, state)
    ds = load_dataset(spec["data"])
    dkey = C.data_key(ds, None, spec)
    prep = C.prepare(ds, None, standardize=bool(spec["standardize"]), n_pub=int(spec["n_pub"]),
                     split_seed=int(spec["split_seed"]), task=task)
    key = dkey + prep.key
    out = [("error vs epsilon", "sweep", key, C.dumps(C.sweep_spec(spec, "epsilon", EPSILON_GRID))),
           ("your epsilon", "sweep", key, C.dumps(C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))),
           ("diagnostics", "diagnostics", key, C.dumps(spec))]
    if tabs:
        out.append(("lam tab", "sweep", key, C.dumps(C.sweep_spec(spec, "lam", LAM_OPTIONS))))
        grid = sorted({n for n in N_PUB_GRID if n < prep.n_total // 2} | {int(spec["n_pub"])})
        out += [(f"n_pub tab: {n}", "sweep", dkey, C.dumps(C.sweep_spec(spec, "n_pub", [n])))
                for n in grid if n != int(spec["n_pub"])]
        if task != "regression":
            out.append(("noisy fits (conditioning, ledger)", "fits", key, C.dumps(spec)))
    assert all(json.loads(e[3]) for e in out)
    return [(label, kind, k, sj, prep) for label, kind, k, sj in out]


def compute_entry(kind: str, key: str, spec_json: str, prep):
    """The page's own computation of one entry (:mod:`ui.pmt.run`'s raw functions, without Streamlit's cache)."""
    import json

    from ui.pmt.compute import core as C

    spec = json.loads(spec_json)
    if kind == "sweep":
        return C.sweep(prep, spec)
    if kind == "diagnostics":
        return C.diagnostics(prep, spec)
    if kind == "fits":
        return C.estimator_fits(prep, spec)
    raise ValueError(f"unknown kind {kind!r}")


def precompute(names=tuple(VIEWS), *, tabs: bool = True, log=print) -> list[dict]:
    """Fill the store (``EXPLORER_VIEW_STORE``, default ``.cache/views``) with the views ``names``."""
    from ui.common import view_store

    os.environ.setdefault(view_store.ENV, str(view_store.DEFAULT_DIR))
    rows = []
    for name in names:
        task, state = VIEWS[name]
        for label, kind, key, spec_json, prep in entries(task, state, tabs=tabs):
            before = dict(view_store.STATS)
            t0, c0 = time.perf_counter(), time.process_time()
            view_store.through(kind, key, spec_json, lambda: compute_entry(kind, key, spec_json, prep))
            row = {"view": name, "entry": label, "kind": kind, "wall_s": time.perf_counter() - t0,
                   "cpu_s": time.process_time() - c0, "stored_before": view_store.STATS["hit"] > before["hit"]}
            rows.append(row)
            log(f"{name:14s} {label:36s} {'(already stored)' if row['stored_before'] else '':17s} "
                f"{row['wall_s']:6.2f} s wall, {row['cpu_s']:6.2f} s CPU, load {os.getloadavg()[0]:.1f}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--views", nargs="+", choices=list(VIEWS), default=list(VIEWS))
    ap.add_argument("--no-tabs", action="store_true", dest="no_tabs", help="the first views only")
    args = ap.parse_args(argv)
    from ui.common import view_store

    os.environ.setdefault(view_store.ENV, str(view_store.DEFAULT_DIR))
    print(f"store: {view_store.folder()} (key {view_store.fingerprint()[:12]}...); load {os.getloadavg()}")
    precompute(args.views, tabs=not args.no_tabs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
