"""Benchmark: what a move of the NVDP page's Renyi order recomputes, server-side, before and after a change.

A Renyi-order move on the page computes the bounds of the shipped clipped model at the new order
(``LiveEvaluator.evaluate(..., with_accuracy=False)``: clipping with the order's sigma floor, the RD
worst case, the authors' paper form with its NaN-mean repair, both BDP accountants); the unclipped
model's bounds at every order are prefetched. This times that call for both shipped models at each
order the page offers (each order once per evaluator: the first, uncached computation), in a fresh
process per code version, wall and CPU seconds (all threads), with the load average.

``--ref COMMIT`` also runs the same measurement on that commit's code (a temporary ``git worktree``),
alternating the two ``--rounds`` times, so "before" and "after" see the same machine load.

Run: ``.venv/bin/python bench/bench_nvdp_order.py [--ref HEAD~1] [--rounds 2]``.

Figures (2026-12-06, 2 shared cores; before = 6a12970, after = the NaN-mean repair with one intra-op
thread; the evaluator's clipping as before): at load 11-15 the repair alone took 9.5-12.5 s wall / 1.9-2.7 s CPU with torch's 2 intra-op
threads vs 0.94-1.18 s wall / 0.12-0.14 s CPU with one (same values); at load 4 the clipped model's order
moves are about the same before and after (median 0.11-1.13 s vs 0.16-0.80 s wall over two runs: the
load, not the code, sets them). The before code gave one 1-ulp different order-1.01 mean in one run and
not in four direct runs: that last bit is not deterministic run to run in either version.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDERS = (1.2, 1.5, 2.0, 3.0, 1.05, 1.01)

_CHILD = r"""
import dataclasses, json, os, sys, time, warnings
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
warnings.simplefilter("ignore")
from engine.nvdp import explore as X
from engine.nvdp.protocol import DEFAULT_PROTOCOL
s = X.ExploreSettings()
data, models = X.load_or_train(s, use_bundled=True)
states, y = data.split("test")
out = {}
for which in ("clipped", "unclipped"):
    live = X.LiveEvaluator(models[which], states, y)
    clip = s.train_clip if which == "clipped" else dataclasses.replace(s.train_clip, enabled=False)
    live.evaluate(clip, protocol=DEFAULT_PROTOCOL, with_accuracy=False)  # the page's first view, order 1.1
    for o in json.loads(sys.argv[2]):
        c = dataclasses.replace(clip, renyi_order=o)
        t, ct = time.perf_counter(), time.process_time()
        r = live.evaluate(c, protocol=DEFAULT_PROTOCOL, with_accuracy=False)
        out[f"{which} {o:g}"] = {"wall": time.perf_counter() - t, "cpu": time.process_time() - ct,
                                 "values": [r.rd_paper.max_unfiltered, r.rd_paper.max, r.rd_paper.mean, r.rd_exact.mean_finite,
                                            r.bdp_paper.epsilon, r.bdp.epsilon], "load": os.getloadavg()[0]}
print("RESULT " + json.dumps(out))
"""


def measure(root: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-c", _CHILD, str(root), json.dumps(ORDERS)], capture_output=True, text=True,
                       env=env, cwd=str(root))
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if p.returncode or not line:
        raise RuntimeError(f"measurement in {root} failed:\n{p.stderr[-2000:]}")
    return json.loads(line[0][7:])


def _summary(name: str, runs: list) -> None:
    for which in ("clipped", "unclipped"):
        keys = [k for k in runs[0] if k.startswith(which)]
        wall = [r[k]["wall"] for r in runs for k in keys]
        cpu = [r[k]["cpu"] for r in runs for k in keys]
        print(f"  {name:>6} {which:>9}: wall median {statistics.median(wall):.3f} s, max {max(wall):.3f} s; CPU median "
              f"{statistics.median(cpu):.3f} s, max {max(cpu):.3f} s ({len(wall)} moves)")
    print(f"  {name:>6} per order (clipped, wall / CPU s, last round): "
          + ", ".join(f"{k.split()[1]}: {v['wall']:.2f}/{v['cpu']:.2f}" for k, v in runs[-1].items() if k.startswith("clipped")))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default=None, help="also measure this commit's code (before/after, alternating)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    print("load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    roots = {"after": ROOT}
    tmp = None
    if args.ref:
        tmp = tempfile.mkdtemp(prefix="bench_nvdp_order_")
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", tmp, args.ref], check=True, capture_output=True)
        roots = {"before": Path(tmp), "after": ROOT}
    runs: dict = {k: [] for k in roots}
    try:
        for i in range(args.rounds):
            for name, root in roots.items():
                runs[name].append(measure(root))
                print(f"round {i + 1} {name}: load average %.2f" % os.getloadavg()[0], flush=True)
    finally:
        if tmp:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tmp], capture_output=True)
    for name, r in runs.items():
        _summary(name, r)
    if "before" in runs:
        def same(a, b):  # NaN (e.g. a mean over no finite pair) equals NaN
            return all(x == y or (x != x and y != y) for x, y in zip(a, b)) and len(a) == len(b)

        diff = [k for k in runs["after"][0] if not same(runs["before"][0][k]["values"], runs["after"][0][k]["values"])]
        print(f"values identical before and after: {not diff}")
        for k in diff:
            print(f"  {k}: before {runs['before'][0][k]['values']}, after {runs['after'][0][k]['values']}")
    print("load average %.2f %.2f %.2f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
