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
    from engine.pmt._gd_kernel import kernel_dir

    t0 = time.perf_counter()
    rows = warm_dpgd()
    print(f"[warm] {len(rows)} DP-GD kernels ready in {kernel_dir()} ({time.perf_counter() - t0:.0f} s)")
    t0 = time.perf_counter()
    n = warm_rd()
    print(f"[warm] {n} Renyi-bound kernel calls compiled or loaded ({time.perf_counter() - t0:.0f} s)")
    return 0


def warm_dpgd(ds=None, dtypes=("float32", "float64")) -> list[tuple[int, str, float]]:
    """Compile (or load from :func:`engine.pmt._gd_kernel.kernel_dir`) the fused DP-GD ridge kernels for
    ``d`` in ``ds`` (default 1 .. :data:`engine.pmt._gd_kernel.MAX_KERNEL_D`) and the given dtypes, by
    running :func:`engine.pmt._gd.dp_gd_ridge_path` on a small random problem with enough runs to take the
    fused path (the exact argument types a sweep uses). Returns ``(d, dtype, seconds)`` per kernel.
    """
    import numpy as np

    from engine.pmt._gd import dp_gd_ridge_path
    from engine.pmt._gd_kernel import MAX_KERNEL_D

    out = []
    rng = np.random.default_rng(0)
    for d in (range(1, MAX_KERNEL_D + 1) if ds is None else ds):
        for dt in dtypes:
            n, runs, T = 40, 64, 2
            t0 = time.perf_counter()
            dp_gd_ridge_path(rng.standard_normal((n, d)), rng.standard_normal(n), clip_norm=1.0, lam=0.1,
                             Pm=np.eye(d), step_size=0.1, sigma=np.full(runs, 0.1),
                             noise=rng.standard_normal((T, d, runs)), n_steps=T, dtype=np.dtype(dt), n_jobs=2)
            out.append((d, str(dt), time.perf_counter() - t0))
    return out


def warm_rd() -> int:
    """Run :func:`engine.nvdp.divergence.pairwise_rd_bound` on 6 small random inputs per precision and form."""
    import torch

    from engine.nvdp.divergence import pairwise_rd_bound

    g = torch.Generator().manual_seed(0)
    B, K, D = 6, 5, 8
    calls = 0
    for dtype in (torch.float32, torch.float64):
        lengths = torch.tensor([1, 2, 3, 4, 4, 2])
        mask = torch.arange(K)[None, :] <= lengths[:, None]
        mu = torch.randn(B, K, D, generator=g, dtype=dtype)
        sigma = 0.5 + 0.5 * torch.rand(B, K, D, generator=g, dtype=dtype)
        alpha = torch.where(mask, torch.full((B, K), 0.5, dtype=dtype), torch.zeros(B, K, dtype=dtype))
        mu[:, 0], sigma[:, 0], alpha[:, 0] = 0.0, 1.0, 1.0
        for form in ("exact", "paper"):
            pairwise_rd_bound(mu, sigma, alpha, mask, form=form, dtype=dtype)
            calls += 1
    return calls


if __name__ == "__main__":
    raise SystemExit(main())
