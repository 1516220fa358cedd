#!/usr/bin/env python
"""Compile the numba kernels once per machine (numba's on-disk cache), so first uses are fast.

The fused DP-GD kernels (:mod:`engine.pmt._gd_kernel`, d = 1..8, float32 and float64) and the pairwise
Renyi-bound kernel of the NVDP page (:mod:`engine.nvdp._rd_numba`, float32 and float64, exact and paper
forms). Run by ``scripts/bootstrap.sh``; safe to re-run (loads from the cache in milliseconds per kernel).
Without numba it does nothing (both then use their numpy / torch paths). Usage:
``.venv/bin/python scripts/warm_dpgd_kernels.py``.
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
    from engine.nvdp.divergence import warm_kernels as warm_rd
    from engine.pmt.kernels import kernel_dir
    from engine.pmt.kernels import warm_kernels as warm_dpgd

    t0 = time.perf_counter()
    rows = warm_dpgd()
    print(f"[warm] {len(rows)} DP-GD kernels ready in {kernel_dir()} ({time.perf_counter() - t0:.0f} s)")
    t0 = time.perf_counter()
    n = warm_rd()
    print(f"[warm] {n} Renyi-bound kernel calls compiled or loaded ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
