"""Compute the bundled first views of the PMT page (their lam and n_pub tabs, every slider key) into the disk store.

Run once per machine, and after any change of the engine or of the page's computations (the store's key
includes every engine source, so older entries are simply never read again)::

    .venv/bin/python scripts/precompute_views.py                 # into .cache/views (the launcher's default)
    .venv/bin/python scripts/precompute_views.py --no-tabs       # the first views and the keys only
    .venv/bin/python scripts/precompute_views.py --no-keys       # without the other slider positions
    .venv/bin/python scripts/precompute_views.py --if-missing    # nothing when this code's views are stored (run.sh)
    EXPLORER_VIEW_STORE=/some/dir .venv/bin/python scripts/precompute_views.py

Each view is computed exactly as the page computes it (:func:`ui.pmt.run.compute`: the same specs, the same
functions) through :func:`ui.common.view_store.through`, so a page served by ``python -m launcher.serve`` (``run.sh``) reads
its first figure's numbers from disk instead of recomputing them. The keys (``keys=True``): what one press of the
epsilon or the lam slider on a bundled view asks for, at every position of that slider with the other settings at
the view's own (the epsilon slider: the chosen epsilon's sweep and the diagnostics; the lam slider: the
error-vs-epsilon grid, the chosen epsilon's sweep and the diagnostics at that lam), so a key press on a bundled view
reads its numbers from disk (logistic on bank: about 1.6 s of CPU per epsilon otherwise). ``tests/app/test_view_store.py`` checks that the
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


def entries(task: str, state: dict, *, tabs: bool = True, keys: bool = False,
            epsilons=None, lams=None) -> list[tuple[str, str, str, object]]:
    """``(label, kind, key, spec JSON, prepared data)`` of every computation of the view, in the page's order.

    ``keys``: also every position of the epsilon slider (``epsilons``, default
    :data:`ui.common.settings.EPSILON_OPTIONS`) and of the lam slider (``lams``, default
    :data:`ui.common.settings.LAM_OPTIONS`) with the other settings at the view's (see the module docstring)."""
    import json

    from engine.datasets import load_dataset
    from ui.pmt.compute import core as C
    from ui.common.settings import EPSILON_GRID, EPSILON_OPTIONS, LAM_OPTIONS, N_PUB_GRID

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
    if keys:  # one press of a slider: the stages the page runs at the new position (ui.pmt.run.compute)
        for eps in (EPSILON_OPTIONS if epsilons is None else epsilons):
            at = {**spec, "epsilon": float(eps)}
            if at != spec:
                out += [(f"epsilon key: {eps:g}", "sweep", key, C.dumps(C.sweep_spec(at, "epsilon", [at["epsilon"]]))),
                        (f"epsilon key: {eps:g} diagnostics", "diagnostics", key, C.dumps(at))]
        for lam in (LAM_OPTIONS if lams is None else lams):
            at = {**spec, "lam": float(lam)}
            if at != spec:
                out += [(f"lam key: {lam:g} error vs epsilon", "sweep", key, C.dumps(C.sweep_spec(at, "epsilon", EPSILON_GRID))),
                        (f"lam key: {lam:g}", "sweep", key, C.dumps(C.sweep_spec(at, "epsilon", [at["epsilon"]]))),
                        (f"lam key: {lam:g} diagnostics", "diagnostics", key, C.dumps(at))]
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


def stamp_path() -> Path:
    """The file that says every view of :data:`VIEWS` (tabs and keys included) is stored for this code and machine."""
    from ui.common import view_store

    return view_store.folder() / f".complete-{view_store.fingerprint()[:24]}"


def precompute(names=tuple(VIEWS), *, tabs: bool = True, keys: bool = True, log=print) -> list[dict]:
    """Fill the store (``EXPLORER_VIEW_STORE``, default ``.cache/views``) with the views ``names``."""
    from ui.common import view_store

    os.environ.setdefault(view_store.ENV, str(view_store.DEFAULT_DIR))
    rows = []
    for name in names:
        task, state = VIEWS[name]
        for label, kind, key, spec_json, prep in entries(task, state, tabs=tabs, keys=keys):
            before = dict(view_store.STATS)
            t0, c0 = time.perf_counter(), time.process_time()
            view_store.through(kind, key, spec_json, lambda: compute_entry(kind, key, spec_json, prep))
            row = {"view": name, "entry": label, "kind": kind, "wall_s": time.perf_counter() - t0,
                   "cpu_s": time.process_time() - c0, "stored_before": view_store.STATS["hit"] > before["hit"]}
            rows.append(row)
            log(f"{name:14s} {label:36s} {'(already stored)' if row['stored_before'] else '':17s} "
                f"{row['wall_s']:6.2f} s wall, {row['cpu_s']:6.2f} s CPU, load {os.getloadavg()[0]:.1f}")
    if tuple(names) == tuple(VIEWS) and tabs and keys:
        stamp = stamp_path()
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(time.strftime("%Y-%m-%d %H:%M:%S UTC\n", time.gmtime()))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--views", nargs="+", choices=list(VIEWS), default=list(VIEWS))
    ap.add_argument("--no-tabs", action="store_true", dest="no_tabs", help="without the lam and n_pub tabs")
    ap.add_argument("--no-keys", action="store_true", dest="no_keys",
                    help="without the other positions of the epsilon and lam sliders")
    ap.add_argument("--if-missing", action="store_true", dest="if_missing",
                    help="do nothing when every view of this code and machine is stored already (run.sh)")
    args = ap.parse_args(argv)
    from ui.common import view_store

    os.environ.setdefault(view_store.ENV, str(view_store.DEFAULT_DIR))
    if view_store.folder() is None:
        print(f"{view_store.ENV} is off: nothing to fill")
        return 0
    if args.if_missing and stamp_path().is_file():
        return 0
    if args.if_missing:
        print("[precompute_views] the bundled views are not stored for this code and machine yet: computing them once "
              f"(a few minutes; {view_store.ENV}=off skips)", flush=True)
    print(f"store: {view_store.folder()} (key {view_store.fingerprint()[:12]}...); load {os.getloadavg()}", flush=True)
    t0 = time.perf_counter()
    rows = precompute(args.views, tabs=not args.no_tabs, keys=not args.no_keys)
    print(f"{len(rows)} entries ({sum(not r['stored_before'] for r in rows)} computed) in "
          f"{time.perf_counter() - t0:.0f} s; load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
