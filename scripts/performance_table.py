"""Generate ``docs/performance/current.md``: fit time and peak RSS vs n and d, with fitted log-log slopes.

Each point runs in a fresh Python process (``--point EST N D``): it draws a Gaussian design (``y`` linear
plus noise for the ridge estimators, Bernoulli labels for the logistic one) and 2,000 public rows, then
fits once and prints the fit's wall and CPU seconds, the process's peak RSS after drawing the data and at
the end (``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the data are part of any real run, so the peak
includes them). Points per estimator:

- vs n at d = 20: n = 1e4, 1e5, 1e6, 1e7;
- vs d at n = 1e5: d = 10, 50, 100, 200, 400.

A point is skipped (and the doc says so) when the point before it on the same curve, scaled by the
curve's slope so far (at least linear in n, quadratic in d), predicts more than ``--max-point`` seconds.
RD bound time vs sentences comes from ``bench/bench_rd_pairs.py --one B`` (a fresh process per size,
48 x 384 posteriors, exact form, one repeat). The load average is printed into the doc: the machine is
shared, so wall and CPU seconds are both given.

Usage::

    .venv/bin/python scripts/performance_table.py [--out docs/performance/current.md] [--max-point 60]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from scripts.stamp import with_stamp  # noqa: E402
N_GRID = [10_000, 100_000, 1_000_000, 10_000_000]
D_GRID = [10, 50, 100, 200, 400]
ESTIMATORS = ["PMTRidge", "DPGDRidge", "PMTLogistic"]
RD_SIZES = [64, 128, 256, 512, 1024]



def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def one_point(est: str, n: int, d: int) -> dict:
    """In this (fresh) process: draw the data, fit ``est`` once, return the figures."""
    sys.path.insert(0, str(ROOT))
    import engine.pmt as pmt

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    Xq = rng.standard_normal((2000, d))
    beta = rng.standard_normal(d) / math.sqrt(d)
    if est == "PMTLogistic":
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ beta)))).astype(float)
        yq = (rng.random(2000) < 1.0 / (1.0 + np.exp(-(Xq @ beta)))).astype(float)
    else:
        y = X @ beta + rng.standard_normal(n)
        yq = Xq @ beta + rng.standard_normal(2000)
    rss_data = _rss_mib()
    model = getattr(pmt, est)(epsilon=1.0, delta=1e-8, random_state=0)
    w0, c0 = time.perf_counter(), time.process_time()
    model.fit(X, y, X_pub=Xq, y_pub=yq)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return dict(est=est, n=n, d=d, wall=wall, cpu=cpu, rss_data=rss_data, rss_peak=_rss_mib(),
                load=os.getloadavg()[0])


def run_point(est, n, d, timeout):
    cmd = [sys.executable, __file__, "--point", est, str(n), str(d)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True).stdout
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.strip().splitlines()[-1])


def slope(xs, ys):
    """Least-squares slope of log(y) on log(x) (NaN under two points)."""
    if len(xs) < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def curve(est, key, grid, fixed, max_point, log):
    """Points of one curve, skipping those the previous point predicts above ``max_point`` seconds."""
    rows, skipped = [], []
    floor = 1.0 if key == "n" else 2.0
    for v in grid:
        n, d = (v, fixed) if key == "n" else (fixed, v)
        if rows:
            prev = rows[-1]
            s = max(floor, slope([r[key] for r in rows], [r["wall"] for r in rows]) if len(rows) > 1 else floor)
            pred = prev["wall"] * (v / prev[key]) ** s
            if pred > max_point:
                skipped.append((v, pred))
                log(f"  {est} {key}={v}: skipped (predicted {pred:.0f} s > {max_point:.0f} s)")
                continue
        r = run_point(est, n, d, timeout=3 * max_point)
        if r is None:
            skipped.append((v, float("inf")))
            log(f"  {est} {key}={v}: timed out after {3 * max_point:.0f} s")
            continue
        log(f"  {est} n={n} d={d}: wall {r['wall']:.3f} s CPU {r['cpu']:.3f} s peak RSS {r['rss_peak']:.0f} MiB "
            f"(data {r['rss_data']:.0f} MiB) load {r['load']:.2f}")
        rows.append(r)
    return rows, skipped


def rd_points(log, max_point):
    rows = []
    for b in RD_SIZES:
        if len(rows) >= 1 and rows[-1]["wall"] * 4 > max_point:  # pairs grow as B^2
            log(f"  RD B={b}: skipped (predicted {rows[-1]['wall'] * 4:.0f} s)")
            rows.append(dict(B=b, skipped=True, pred=rows[-1]["wall"] * 4))
            break
        cmd = [sys.executable, str(ROOT / "bench" / "bench_rd_pairs.py"), "--one", str(b), "--repeat", "1"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=6 * max_point, check=True).stdout
        m = re.search(r"(\d+) pairs.*?wall ([\d.]+) s \(cpu ([\d.]+) s\) = ([\d.]+) us/pair; peak RSS ([\d.]+) GiB", out)
        r = dict(B=b, pairs=int(m[1]), wall=float(m[2]), cpu=float(m[3]), us=float(m[4]), rss=float(m[5]) * 1024)
        log(f"  RD B={b}: {r['pairs']} pairs, wall {r['wall']:.3f} s CPU {r['cpu']:.3f} s, {r['us']:.2f} us/pair, "
            f"peak RSS {r['rss']:.0f} MiB")
        rows.append(r)
    return rows


def _table(rows, key, skipped):
    lines = [f"| {key} | wall (s) | CPU (s) | peak RSS (MiB) | of which data (MiB) | load (1 min) |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r[key]:,} | {r['wall']:.3f} | {r['cpu']:.3f} | {r['rss_peak']:.0f} | {r['rss_data']:.0f} |"
                     f" {r['load']:.2f} |")
    for v, pred in skipped:
        why = "timed out" if math.isinf(pred) else f"skipped: predicted {pred:.0f} s"
        lines.append(f"| {v:,} | {why} | | | | |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--point", nargs=3, metavar=("EST", "N", "D"), help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "docs" / "performance" / "current.md"))
    ap.add_argument("--max-point", type=float, default=60.0, help="skip points predicted above this (seconds)")
    ap.add_argument("--max-rd", type=float, default=120.0,
                    help="skip an RD size predicted above this (seconds; 1024 sentences take about a minute)")
    ap.add_argument("--no-rd", action="store_true", help="leave out the RD bound (it imports torch)")
    args = ap.parse_args(argv)
    if args.point:
        est, n, d = args.point
        print(json.dumps(one_point(est, int(n), int(d))))
        return

    log = lambda s: print(s, flush=True)  # noqa: E731
    t_start = time.perf_counter()
    load0 = os.getloadavg()
    log(f"load average at start: {load0}")
    res = {}
    for est in ESTIMATORS:
        res[est, "n"] = curve(est, "n", N_GRID, 20, args.max_point, log)
        res[est, "d"] = curve(est, "d", D_GRID, 100_000, args.max_point, log)
    rd = [] if args.no_rd else rd_points(log, args.max_rd)
    load1 = os.getloadavg()
    total = time.perf_counter() - t_start

    md = ["# Performance: how fit time and memory scale", "",
          f"Generated by `scripts/performance_table.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
          f" in {total:.0f} s; {os.cpu_count()} cores, load average (1, 5, 15 min) "
          f"{tuple(round(x, 2) for x in load0)} at the start, {tuple(round(x, 2) for x in load1)} at the end.",
          "The machine is shared: with a load average above the core count a process gets a fraction of a core,",
          "so **CPU seconds are the steadier figure**; wall seconds are what you waited.", "",
          "Each point is a fresh Python process: Gaussian design `X` (n x d, float64), 2,000 public rows, "
          "`epsilon = 1`, `delta = 1e-8` (below 1/n at every n), default settings (`DPGDRidge`: T = 100 gradient steps; "
          "`PMTLogistic`: 5 noisy Newton steps), one `fit` timed. Peak RSS is the process's maximum resident "
          "set (`getrusage`), data included; the data alone (X, y and the public rows, plus the interpreter "
          "and imports) is the next column. Slopes are least-squares fits of log(wall) on log(n) or log(d): "
          "time ~ n^slope. Small points are dominated by fixed costs (imports are excluded, validation and "
          "accounting are not), so the slope over the largest points is the one to extrapolate with. The "
          "'of which data' column is the peak while drawing the data (the Gaussian draws make a temporary or two), "
          "so peak minus it is what the fit adds.", "",
          f"To keep the whole run under about 8 minutes a point is skipped when the previous point on its curve, "
          f"scaled by the curve's slope so far (at least 1 in n, 2 in d), predicts more than {args.max_point:.0f} s "
          f"of wall time (RD sizes: {args.max_rd:.0f} s). Wall time on this shared machine runs 2-4x the CPU time, "
          "so a skipped point's CPU time is about its predicted wall time divided by the wall/CPU ratio of the "
          "point before it. The skipped points are listed in the tables.", ""]
    for est in ESTIMATORS:
        md.append(f"## {est}")
        md.append("")
        for key, fixed in (("n", "d = 20"), ("d", "n = 100,000")):
            rows, skipped = res[est, key]
            s_all = slope([r[key] for r in rows], [r["wall"] for r in rows])
            s_cpu = slope([r[key] for r in rows], [r["cpu"] for r in rows])
            s_top = slope([r[key] for r in rows[-2:]], [r["wall"] for r in rows[-2:]])
            s_rss = slope([r[key] for r in rows], [max(r["rss_peak"] - r["rss_data"], 1.0) for r in rows])
            md.append(f"Time vs {key} at {fixed}: log-log slope {s_all:.2f} (wall, all points), {s_cpu:.2f} (CPU), "
                      f"{s_top:.2f} (wall, last two points); memory above the data: slope {s_rss:.2f}.")
            md.append("")
            md += _table(rows, key, skipped)
            md.append("")
    if rd:
        done = [r for r in rd if not r.get("skipped")]
        md += ["## RD bound (NVDP): time vs sentences", "",
               "`bench/bench_rd_pairs.py --one B --repeat 1` (fresh process per size): B sentences x 48 posterior "
               "components x 384 dims, exact form over all B (B - 1) / 2 pairs, float32, default workers.", "",
               f"Log-log slope of wall vs B: {slope([r['B'] for r in done], [r['wall'] for r in done]):.2f} "
               f"(pairs grow as B^2; vs pairs: {slope([r['pairs'] for r in done], [r['wall'] for r in done]):.2f}).",
               "", "| sentences | pairs | wall (s) | CPU (s) | us/pair | peak RSS (MiB) |",
               "|---:|---:|---:|---:|---:|---:|"]
        for r in rd:
            if r.get("skipped"):
                md.append(f"| {r['B']:,} | skipped: predicted {r['pred']:.0f} s wall | | | | |")
            else:
                md.append(f"| {r['B']:,} | {r['pairs']:,} | {r['wall']:.3f} | {r['cpu']:.3f} | {r['us']:.2f} |"
                          f" {r['rss']:.0f} |")
        md.append("")
    md += ["## Predicting your run", "",
           "time(n, d) ~ time(n0, d0) (n / n0)^a (d / d0)^b with a, b the slopes above at the nearest measured point;",
           "multiply by (load average / cores) when the machine is busier than it was here.", ""]
    out = Path(args.out)
    # the hand-written rounds (the browser, a room, the soak) live apart, in docs/performance/notebook.md
    out.write_text(with_stamp("\n".join(md) + "\n"))
    log(f"wrote {args.out} in {total:.0f} s")


if __name__ == "__main__":
    main()
