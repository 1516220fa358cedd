#!/usr/bin/env python
"""Compile the fused DP-GD kernels once per machine (numba's on-disk cache), so the first sweep is fast.

Run by ``scripts/bootstrap.sh``; safe to re-run (loads from the cache in ~15 ms per kernel). Without numba
it does nothing (the DP-GD loop then uses its numpy path). Usage: ``.venv/bin/python scripts/warm_dpgd_kernels.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    try:
        import numba  # noqa: F401
    except ImportError:
        print("[warm] numba not installed: DP-GD uses its numpy path")
        return 0
    from engine.pmt._gd_kernel import kernel_dir, warm

    t0 = time.perf_counter()
    rows = warm()
    print(f"[warm] {len(rows)} DP-GD kernels ready in {kernel_dir()} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
