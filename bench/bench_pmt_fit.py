"""Benchmark: one PMTRidge fit (issue 16) against the machine's limit and against diffprivlib.

Run: ``.venv/bin/python bench/bench_pmt_fit.py [--repeats 5] [--n 100000] [--d 200] [--root DIR]``
(``--root`` times another checkout's engine, e.g. an older commit unpacked with ``git archive``, for a
before/after comparison; run both back to back and compare the ratios, the machine is shared).

Rows printed (with the load average: the machine is shared, so wall and CPU seconds are both shown
and the ratios are measured side by side in this one run):

1. ``PMTRidge.fit`` at n = 1e5, d = 200 (Gaussian features, public n_pub = 2000): median wall and
   process CPU seconds, beside the limit "X^T X once", the ``n d^2`` floating-point operations of one
   Gram product at the single-thread GFLOP/s measured here (numpy's ``X.T @ X``, one BLAS thread).
   Goal: <= 0.3 s.
2. Per-fit time on CCPP (9,568 rows, 4 features; 200 public rows): ``PMTRidge`` against diffprivlib's
   ``LinearRegression`` (epsilon = 1, bounds given so it does no private bound search), median over
   ``--fits`` fits each. Goal: ratio <= 0.1.

Timings are never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]


def _clock(fn, repeats):
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def gram_gflops(n=100_000, d=200, repeats=3) -> float:
    """Single-thread GFLOP/s of ``X.T @ X`` (counted as n d^2 flops: the symmetric product)."""
    X = np.random.default_rng(1).normal(size=(n, d))
    with threadpool_limits(1):
        X.T @ X
        w, _ = _clock(lambda: X.T @ X, repeats)
    return n * d * d / w / 1e9


def big_fit(n, d, repeats):
    from engine.pmt import PMTRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + rng.normal(size=n)
    Xq = rng.normal(size=(2000, d))
    yq = Xq @ rng.normal(size=d)
    m = PMTRidge(epsilon=1.0, random_state=0)
    m.fit(X, y, X_pub=Xq, y_pub=yq)  # warm-up
    return _clock(lambda: m.fit(X, y, X_pub=Xq, y_pub=yq), repeats)


def ccpp_per_fit(fits):
    from engine.datasets import load_dataset
    from engine.pmt import PMTRidge

    ds = load_dataset("ccpp")
    X, y = ds.X.to_numpy(float), ds.y.to_numpy(float)
    Xq, yq, Xp, yp = X[:200], y[:200], X[200:], y[200:]
    m = PMTRidge(epsilon=1.0, random_state=0)
    m.fit(Xp, yp, X_pub=Xq, y_pub=yq)
    t_pmt = _clock(lambda: m.fit(Xp, yp, X_pub=Xq, y_pub=yq), fits)
    try:
        import sklearn.tree._tree as _tree

        # diffprivlib 0.6.6 imports two dtype aliases that scikit-learn >= 1.7 dropped (used by its random
        # forest only, not by LinearRegression): restore them before the import, bench-only
        _tree.DOUBLE = getattr(_tree, "DOUBLE", np.float64)
        _tree.DTYPE = getattr(_tree, "DTYPE", np.float32)
        from diffprivlib.models import LinearRegression
    except ImportError:
        return t_pmt, None
    lo, hi = Xq.min(axis=0), Xq.max(axis=0)
    dl = LinearRegression(epsilon=1.0, bounds_X=(lo, hi), bounds_y=(yq.min(), yq.max()), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dl.fit(Xp, yp)
        t_dl = _clock(lambda: dl.fit(Xp, yp), fits)
    return t_pmt, t_dl


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--fits", type=int, default=200)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=200)
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout whose engine is timed (default: this one)")
    args = ap.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    print(f"checkout: {args.root.resolve()}")
    print(f"load average at start: {os.getloadavg()}  (cores: {os.cpu_count()})")
    gf = gram_gflops(args.n, args.d)
    limit = args.n * (args.d + 1) ** 2 / gf / 1e9
    wall, cpu = big_fit(args.n, args.d, args.repeats)
    print(f"single-thread Gram GFLOP/s: {gf:.1f}")
    print(f"PMTRidge.fit n={args.n:.0e} d={args.d}: wall {wall:.3f} s, CPU {cpu:.3f} s; limit (X^T X once, "
          f"{args.n * (args.d + 1) ** 2 / 1e9:.1f} GFLOP at {gf:.1f} GFLOP/s) {limit:.3f} s; ratio {wall / limit:.2f}x; "
          f"goal <= 0.3 s: {'met' if wall <= 0.3 else 'ABOVE'}")
    (pw, pc), dl = ccpp_per_fit(args.fits)
    if dl is None:
        print(f"CCPP per fit: PMTRidge {pw * 1e3:.3f} ms (CPU {pc * 1e3:.3f} ms); diffprivlib not installed")
    else:
        print(f"CCPP per fit: PMTRidge {pw * 1e3:.3f} ms (CPU {pc * 1e3:.3f} ms), diffprivlib LinearRegression "
              f"{dl[0] * 1e3:.3f} ms (CPU {dl[1] * 1e3:.3f} ms); ratio {pw / dl[0]:.3f} (CPU {pc / dl[1]:.3f}); "
              f"goal <= 0.1: {'met' if pw / dl[0] <= 0.1 else 'ABOVE'}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
