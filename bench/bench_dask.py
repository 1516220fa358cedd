"""Benchmark: PMT ridge (or, with ``--task logistic``, PMT logistic regression) out of core on Dask against the
in-memory path.

Run: ``.venv/bin/python bench/bench_dask.py [--rows 5e7] [--mem-rows 1e7] [--dir /work/tmp]``;
``.venv/bin/python bench/bench_dask.py --task logistic --rows 1e7 --mem-rows 1e6`` for DP-PMTLR (5 noisy Newton
steps: 5 passes over the files, :mod:`engine.pmt._dask_glm`), whose labels are ``y ~ Bernoulli(expit((X theta + 2) / 4))``.

1. Writes a synthetic Parquet data set (``--rows`` rows, d = 20 correlated features with scales 1e-2..1e2,
   y = X theta + noise; float64; files of ``--rows-per-file`` rows) and 1000 public rows.
2. Fits :class:`engine.pmt.PMTRidge` on ``dask.dataframe.read_parquet(glob)`` in a fresh process
   (Dask's local threaded scheduler): rows/s and the process's peak RSS, at ``--mem-rows`` rows and at
   ``--rows`` rows (peak RSS should not grow with n).
3. The in-memory path at ``--mem-rows`` rows in a fresh process: the same rows read into numpy, then
   ``PMTRidge.fit``; fit time and peak RSS; the ratio of the per-row times and the coefficient gap.
   Every row also gives the process's CPU time (user + system) of the fit: on a shared, loaded machine the wall
   times grow with the load, the CPU times much less.
4. The same Dask fit on ``distributed.LocalCluster(n_workers=2, threads_per_worker=1)``: rows/s and the
   workers' peak RSS.
Deletes the data set at the end (``--keep`` keeps it). Prints the load average: the machine is shared.
Tests never assert times; this script is where they are read.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

D = 20
N_PUB = 1000
SEED = 0


TASK = "ridge"


def _design(rng, n, mix, theta):
    X = (rng.standard_normal((n, D)) @ mix) + 1.0
    y = X @ theta + 2.0 + rng.standard_normal(n)
    if TASK == "logistic":  # labels from the same linear predictor, probabilities kept away from 0 and 1
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(y - rng.standard_normal(n)) / 4.0))).astype(float)
    return X, y


def _problem():
    rng = np.random.default_rng(SEED)
    scales = np.logspace(-2, 2, D)
    mix = (np.eye(D) + 0.3 * rng.standard_normal((D, D)) / np.sqrt(D)) * scales
    theta = rng.standard_normal(D) / scales
    return mix, theta


def generate(outdir: Path, rows: int, per_file: int) -> float:
    import pandas as pd

    mix, theta = _problem()
    outdir.mkdir(parents=True, exist_ok=True)
    cols = [f"x{j:02d}" for j in range(D)]
    t0 = time.perf_counter()
    Xq, yq = _design(np.random.default_rng(10**6), N_PUB, mix, theta)
    pd.DataFrame(Xq, columns=cols).assign(y=yq).to_parquet(outdir.parent / f"{outdir.name}_public.parquet")
    for i, start in enumerate(range(0, rows, per_file)):
        m = min(per_file, rows - start)
        X, y = _design(np.random.default_rng(SEED + 1 + i), m, mix, theta)
        pd.DataFrame(X, columns=cols).assign(y=y).to_parquet(outdir / f"part{i:05d}.parquet", index=False)
    return time.perf_counter() - t0


def _public(outdir: Path):
    import pandas as pd

    f = pd.read_parquet(outdir.parent / f"{outdir.name}_public.parquet")
    return f.drop(columns="y").to_numpy(), f["y"].to_numpy()


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child(mode: str, outdir: Path, nfiles: int, workers: int) -> dict:
    """One measurement in this (fresh) process; returns a JSON-able dict."""
    from engine.pmt import PMTLogistic, PMTRidge

    def make():
        return PMTRidge(random_state=1) if TASK == "ridge" else PMTLogistic(random_state=1)

    def fit(est, X, y, Xq, yq):
        return est.fit(X, y, Xq, yq) if TASK == "ridge" else est.fit(X, y, Xq)

    files = sorted(glob.glob(str(outdir / "part*.parquet")))[:nfiles]
    Xq, yq = _public(outdir)
    out = {"mode": mode, "files": len(files)}
    if mode == "memory":
        import pandas as pd

        t0 = time.perf_counter()
        frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
        X, y = frame.drop(columns="y").to_numpy(), frame["y"].to_numpy()
        del frame
        out["read_s"] = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        m = fit(make(), X, y, Xq, yq)
        out["fit_s"], out["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        out["n"] = int(len(y))
    else:
        import dask.dataframe as dd

        from engine.pmt.dask import fit_dask, scheduler_context

        cluster = None
        sched = None
        if mode == "cluster":
            from distributed import LocalCluster

            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   memory_limit="3GiB")
            sched = cluster.scheduler_address
        with scheduler_context(sched) as client:
            t0, c0 = time.perf_counter(), time.process_time()
            ddf = dd.read_parquet(files)
            cols = [c for c in ddf.columns if c != "y"]
            m = fit_dask(make(), ddf[cols], ddf["y"], Xq, yq) if TASK == "ridge" else fit(make(), ddf[cols], ddf["y"],
                                                                                          Xq, yq)
            out["fit_s"], out["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
            if client is not None:
                import resource

                rss = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
                out["worker_peak_rss_mb"] = sorted(rss.values())
        if cluster is not None:
            cluster.close()
        out["n"] = int(m.report_.n)
    out["theta"] = m.theta_.tolist()
    out["peak_rss_mb"] = _peak_rss_mb()
    out["frac_truncated"] = m.report_.frac_truncated
    out["passes"] = (m.report_.extra or {}).get("passes", 1)
    return out


def _run_child(mode, outdir, nfiles, workers=2):
    cmd = [sys.executable, __file__, "--child", mode, "--dir", str(outdir), "--nfiles", str(nfiles),
           "--workers", str(workers), "--task", TASK]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{mode} run failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _line(r):
    extra = f", workers' peak RSS {[round(v) for v in r['worker_peak_rss_mb']]} MB" if "worker_peak_rss_mb" in r else ""
    return (f"{TASK} {r['mode']:7s} n={r['n']:>11,d}: {r['fit_s']:7.1f} s (CPU {r['cpu_s']:6.1f} s of this process), "
            f"{r['n'] / r['fit_s'] / 1e6:6.2f} M rows/s, {r['passes']} pass(es), peak RSS {r['peak_rss_mb']:7.0f} MB{extra}, "
            f"load {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=float, default=5e7, help="rows of the big data set (default 5e7, ~8 GB)")
    ap.add_argument("--mem-rows", type=float, default=1e7, dest="mem_rows",
                    help="rows for the in-memory comparison (default 1e7; a multiple of --rows-per-file)")
    ap.add_argument("--rows-per-file", type=int, default=500_000, dest="per_file")
    ap.add_argument("--dir", default="/work/tmp/bench_dask", help="where to write the data set")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the data set")
    ap.add_argument("--task", choices=["ridge", "logistic"], default="ridge",
                    help="ridge: PMTRidge (one pass); logistic: PMTLogistic (5 noisy Newton steps, 5 passes)")
    ap.add_argument("--no-cluster", action="store_true", dest="no_cluster", help="skip the LocalCluster row")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--nfiles", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    global TASK
    TASK = args.task
    outdir = Path(args.dir)
    if args.child:
        print(json.dumps(child(args.child, outdir, args.nfiles, args.workers)))
        return
    import dask

    rows, mem_rows = int(args.rows), int(min(args.mem_rows, args.rows))
    print(f"dask {dask.__version__}, {os.cpu_count()} CPUs, load average at start: {os.getloadavg()}")
    print(f"disk free at {outdir.parent}: {shutil.disk_usage(outdir.parent if outdir.parent.exists() else '/').free / 2**30:.0f} GiB")
    try:
        dt = generate(outdir, rows, args.per_file)
        size = sum(f.stat().st_size for f in outdir.glob("*.parquet"))
        print(f"generated {rows:,d} rows x {D} features + y in {len(list(outdir.glob('*.parquet')))} Parquet files, "
              f"{size / 2**30:.2f} GiB, in {dt:.0f} s")
        k_mem = -(-mem_rows // args.per_file)
        k_all = -(-rows // args.per_file)
        mem = _run_child("memory", outdir, k_mem)
        print(_line(mem) + f" (+ {mem['read_s']:.1f} s reading into numpy)")
        small = _run_child("dask", outdir, k_mem)
        print(_line(small))
        gap = np.linalg.norm(np.subtract(small["theta"], mem["theta"])) / np.linalg.norm(mem["theta"])
        ratio = (small["fit_s"] / small["n"]) / (mem["fit_s"] / mem["n"])
        ratio_read = (small["fit_s"] / small["n"]) / ((mem["fit_s"] + mem["read_s"]) / mem["n"])
        print(f"  per-row time Dask (reading Parquet included) / in memory (data already in numpy): {ratio:.2f}x; "
              f"/ in memory including its read: {ratio_read:.2f}x; relative coefficient gap {gap:.1e}")
        if k_all > k_mem:
            big = _run_child("dask", outdir, k_all)
            print(_line(big))
        if args.no_cluster:
            return
        clu = _run_child("cluster", outdir, k_mem, args.workers)
        print(_line(clu) + f" (LocalCluster n_workers={args.workers}, threads_per_worker=1, processes)")
        gap = np.linalg.norm(np.subtract(clu["theta"], small["theta"])) / np.linalg.norm(small["theta"])
        print(f"  cluster vs threaded: relative coefficient gap {gap:.1e}")
    finally:
        if not args.keep:
            shutil.rmtree(outdir, ignore_errors=True)
            pub = outdir.parent / f"{outdir.name}_public.parquet"
            if pub.exists():
                pub.unlink()
            print("data set deleted")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
