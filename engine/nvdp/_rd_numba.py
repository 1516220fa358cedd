"""Fused per-(pair, position) Gaussian Renyi sums of the RD bound, compiled by numba.

Private to :mod:`engine.nvdp.rd_kernel`. One pass over the dims per (pair, position) computes,
for both directions, ``T = sum_d (m_b - m_a)^2 / s2`` and ``L = sum_d ln r`` with
``s2_ab = lambda v_b + (1 - lambda) v_a`` and ``r_ab = s2_ab / v_b`` (the backward direction swaps
a and b), instead of a chain of separate elementwise torch ops over (pairs x K x D) tiles, which
read and wrote the tile from memory about eleven times.

The kernel reads the posterior means and standard deviations as given (padding positions read as
the input's position 0, inputs through a row map) and derives ``lambda v``, ``(1 - lambda) v`` and
``1 / v`` (v = sigma^2) once per task and position for the task's inputs, into small per-worker
buffers, rounded as torch's ``square``, scalar ``mul`` and ``reciprocal`` round them: no (B, K, D)
working array is formed (memory). Arithmetic per element is the working precision's
(s2, d^2, d^2 / s2 and r as torch computed them from those values); the sums over dims are
float64. The logarithm is taken of float64 products of ``group`` consecutive r (ln r1 + ln r2 =
ln(r1 r2)); ``group`` is chosen by the caller so that lambda^group cannot overflow, and a group
whose product is below the smallest normal float64 (underflow, or a legitimate 0 from s2 <= 0) is
recomputed with one logarithm per dim, so a finite result is never turned into an infinite one.
s2 <= 0 (the variance condition fails) gives r = 0 and L = -inf; NaN propagates: either way the
caller sees a non-finite position, as before. Positions that are padding on both sides are not
computed (the caller skips them). Each (pair, position) is computed by one thread in a fixed
order, so values do not depend on how pairs are shared between threads. The summation order is
reassociated by the compiler (vectorised), deterministically.

numba compiles the kernel on first use per working precision (a few seconds, cached on disk in
``__pycache__`` next to this file); :func:`get_kernel` returns None when numba is missing or
compilation fails, and the caller then uses the torch path.
"""

from __future__ import annotations

import functools
import os


@functools.lru_cache(maxsize=1)
def get_kernel():
    """The compiled kernel, or None (numba missing, or ``NVDP_RD_NUMBA=0`` in the environment)."""
    if os.environ.get("NVDP_RD_NUMBA", "1") == "0":
        return None
    try:
        from engine.nvdp._rd_numba_kernels import pair_sums
    except ImportError:  # pragma: no cover - numba is in requirements.txt
        return None
    return pair_sums
