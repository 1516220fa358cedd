"""Benchmark: wall time of ``python -m engine`` for the light subcommands (target: ``--help`` <= 0.5 s).

Run: ``.venv/bin/python bench/bench_cli_startup.py [--repeats 7] [--root DIR]``. Each command runs in a fresh
interpreter ``repeats`` times; the median and the minimum wall-clock seconds are printed with the load
average (the machine is shared), beside the floor set by what the command must import (the bare
interpreter, ``engine.privacy`` = numpy only since its log Phi is math.erfc-based, ``engine.datasets`` = that
+ pandas; ``datasets`` no longer needs it: its listing is read from ``engine/datasets/manifest.json``
with the standard library). ``--root`` times another checkout instead (e.g. an older commit unpacked with
``git archive``), for a before/after comparison. Tests never assert times (tests/engine/test_cli_startup.py checks which modules are imported).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 0.5

COMMANDS = [
    ("python -m engine --help", ["-m", "engine", "--help"]),
    ("python -m engine privacy --epsilon 1 --delta 1e-5", ["-m", "engine", "privacy", "--epsilon", "1", "--delta", "1e-5"]),
    ("python -m engine datasets", ["-m", "engine", "datasets"]),
]
FLOORS = [
    ("floor: python -c pass", ["-c", "pass"]),
    ("floor: import engine.privacy", ["-c", "import engine.privacy"]),
    ("floor: import engine.datasets", ["-c", "import engine.datasets"]),
]


def _time(argv: list[str], repeats: int, root: Path) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, *argv], cwd=root, capture_output=True, text=True)
        out.append(time.perf_counter() - t0)
        if res.returncode != 0:
            raise RuntimeError(f"{argv} failed: {res.stderr[-500:]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=7, help="fresh processes per command (default 7)")
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout to time (default: this one)")
    args = ap.parse_args()
    print(f"checkout: {args.root.resolve()}")
    print(f"load average at start: {os.getloadavg()}")
    print(f"{'command':56s} {'median s':>9s} {'min s':>7s}  goal {GOAL_S} s")
    for label, argv in COMMANDS + FLOORS:
        ts = _time(argv, args.repeats, args.root)
        med = statistics.median(ts)
        verdict = "" if label.startswith("floor") else ("  met" if med <= GOAL_S else "  ABOVE")
        print(f"{label:56s} {med:9.3f} {min(ts):7.3f}{verdict}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
