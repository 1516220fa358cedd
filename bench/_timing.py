"""Shared timing loop of the benchmark scripts (they put this folder on ``sys.path`` when run)."""

from __future__ import annotations

import time


def wall_and_cpu(fn, calls: int) -> tuple[list[float], list[float]]:
    """Wall and process-CPU seconds (all threads) of each of ``calls`` calls of ``fn()``."""
    wall, cpu = [], []
    for _ in range(calls):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return wall, cpu
