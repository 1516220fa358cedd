"""Readers on 50 MB files of hostile shapes: wall time and peak memory of each, one fresh process per file.

The targets: a 50 MB file of any shape is read or refused in under 5 s and under 1 GB; the long-row file
(2,000,000 fields in one 4 MB row) is refused in under 1 s with under 200 MB. Each file is generated in memory in a
child process that then calls the reader once; the child reports the reader's wall time, the outcome and its
peak resident memory (``ru_maxrss``, the whole process: Python, numpy, pandas and the file's bytes included) next to
the same process's peak just before the call, and the call's process CPU seconds (on a loaded machine the wall
time grows with the load; the CPU time is close to an idle machine's wall time). Prints the load average.

    .venv/bin/python bench/bench_hostile_limits.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 2**20

SHAPES = {
    "long row 4 MB (2,000,000 fields)": "b'a,b\\n1,2\\n' + b','.join([b'1'] * 2_000_000) + b'\\n'",
    "one row of 50 MB (25M fields)": "b'a,b\\n' + b'1,' * (25 * MB - 4)",
    "one field of 50 MB": "b'a,b\\n' + b'x' * (50 * MB - 10) + b',1\\n'",
    "unclosed quote, 50 MB": "b'a,b\\n\"' + b'1' * (50 * MB - 10) + b'\\n2,3\\n'",
    "50 MB of digits in one number": "b'a,b\\n1,' + b'9' * (50 * MB - 10) + b'\\n'",
    "random bytes 50 MB": "np.random.default_rng(0).integers(1, 256, 50 * MB).astype(np.uint8).tobytes()",
    "25M one-character lines": "b'a\\n' + b'1\\n' * (25 * MB - 2)",
    "table 50 MB (5 columns)": ("(b'a,b,c,d,y\\n' + b''.join(b','.join(b'%.6f' % v for v in r) + b'\\n' for r in "
                                "np.random.default_rng(0).normal(size=(1_000_000, 5))))[: 50 * MB].rsplit(b'\\n', 1)[0]"),
    "moments: JSON 100k deep": "b'[' * 100_000 + b']' * 100_000",
    "moments: 24 MB JSON string": "b'{\"columns\": [\"' + b'a' * (24 * MB - 40) + b'\"]}'",
}

CHILD = r"""
import json, resource, sys, time
import numpy as np
MB = 2**20
from engine.datasets import read_csv_upload
from engine.pmt.public_info import PublicInfo
raw = eval(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
try:
    if sys.argv[2] == "moments":
        PublicInfo.from_bytes(raw, "m.json")
    else:
        read_csv_upload(raw)
    outcome = "parsed"
except ValueError as exc:
    outcome = "refused: " + str(exc)[:90]
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"bytes": len(raw), "wall": wall, "cpu": cpu, "before_mb": before / 1024, "peak_mb": peak / 1024,
                  "outcome": outcome}))
"""


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} CPUs")
    print(f"{'file':38s} {'size':>8s} {'wall s':>7s} {'CPU s':>6s} {'RSS before':>11s} {'RSS peak':>9s}  outcome")
    for label, expr in SHAPES.items():
        kind = "moments" if label.startswith("moments") else "csv"
        out = subprocess.run([sys.executable, "-c", CHILD, expr, kind], cwd=ROOT, capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=600)
        if out.returncode != 0:
            print(f"{label:38s} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{label:38s} {r['bytes'] / MB:7.1f}M {r['wall']:7.3f} {r['cpu']:6.3f} {r['before_mb']:9.0f}MB {r['peak_mb']:7.0f}MB  "
              f"{r['outcome']}")
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
