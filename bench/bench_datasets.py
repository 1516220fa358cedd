"""Benchmark: bundled data loads (cold and cached) and validation of a large CSV upload.

Run: ``.venv/bin/python bench/bench_datasets.py [--mb 45]``. Prints wall-clock figures with the load
average (the machine is shared). Tests never assert times; this script is where they are read.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from engine import datasets as D  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=45.0, help="size of the synthetic upload in MB (default 45)")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    for name in ("wine-red", "wine-white", "ccpp", "bank", "sentiment"):
        t0 = time.perf_counter()
        ds = D.load_dataset(name)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        D.load_dataset(name)
        warm = time.perf_counter() - t0
        print(f"{name:11s} n={ds.n:6d} d={ds.d:3d}  first load {cold * 1e3:8.1f} ms   cached {warm * 1e3:7.1f} ms")
    t0 = time.perf_counter()
    D.make_synthetic_regression(n=20000, d=10, kappa=1e3)
    print(f"synthetic   n= 20000 d= 10  generate   {(time.perf_counter() - t0) * 1e3:8.1f} ms")

    rng = np.random.default_rng(0)
    d = 20
    per_row = len(",".join(["-1.234567890123"] * (d + 1))) + 1
    n = int(args.mb * 2**20 / per_row)
    frame = pd.DataFrame(rng.normal(size=(n, d + 1)), columns=[f"x{j}" for j in range(d)] + ["y"])
    raw = frame.to_csv(index=False, float_format="%.12f").encode()
    t0 = time.perf_counter()
    ds = D.read_csv_upload(io.BytesIO(raw), max_bytes=len(raw))
    dt = time.perf_counter() - t0
    print(f"upload      {len(raw) / 2**20:.1f} MB, n={ds.n} d={ds.d}: validated in {dt:.2f} s "
          f"({len(raw) / 2**20 / dt:.1f} MB/s)")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
