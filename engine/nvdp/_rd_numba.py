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
        import numba
        import numpy as np
    except ImportError:  # pragma: no cover - numba is in requirements.txt
        return None

    tiny64 = float(np.finfo(np.float64).tiny)

    @numba.njit(nogil=True, cache=True, boundscheck=False)
    def derive(s, lam_w, oml_w, one, out):  # pragma: no cover - compiled
        """out[0], out[1], out[2] = lambda v, (1 - lambda) v, 1 / v with v = s^2 (one input's dims at
        one position), each rounded to the working precision exactly as torch's elementwise
        ``square``, ``mul`` by a scalar and ``reciprocal`` round them (no fast-math flags here, so
        nothing is reassociated)."""
        for d in range(s.shape[0]):
            v = s[d] * s[d]
            out[0, d] = v * lam_w
            out[1, d] = v * oml_w
            out[2, d] = one / v

    @numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy", fastmath={"reassoc", "nsz"})
    def group_sums(mb, ma, lb, oa, la, ob, ia, ib, zero):  # pragma: no cover - compiled
        """Over one group of dims (1-D slices of input a and b): sums of d^2 / s2 and products of r
        (float64), forward (a || b) and backward (b || a)."""
        tf = 0.0
        tb = 0.0
        pf = 1.0
        pb = 1.0
        for d in range(mb.shape[0]):
            df = mb[d] - ma[d]
            d2 = df * df
            s2f = lb[d] + oa[d]  # forward a || b: lambda v_b + (1 - lambda) v_a
            s2b = la[d] + ob[d]  # backward b || a
            tf += np.float64(d2 / s2f)
            tb += np.float64(d2 / s2b)
            pf *= np.float64(max(s2f, zero) * ib[d])  # s2 clamped at 0: r = 0, ln r = -inf
            pb *= np.float64(max(s2b, zero) * ia[d])
        return tf, tb, pf, pb

    @numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy", fastmath={"reassoc", "nsz"})
    def sum_log_r(s2a, s2b, inv, zero):  # pragma: no cover - compiled
        """sum_d ln(max(s2a + s2b, 0) inv): one logarithm per dim (a group whose product underflowed)."""
        out = 0.0
        for d in range(inv.shape[0]):
            out += np.log(np.float64(max(s2a[d] + s2b[d], zero) * inv[d]))
        return out

    @numba.njit(nogil=True, cache=True, boundscheck=False, error_model="numpy", fastmath={"reassoc", "nsz"})
    def pair_sums(mu, sg, mask, rowid, lam_w, oml_w, one, ti, ts, te, r0s, jmin, group, zero, tkf, lkf, tkb, lkb,
                  side_a, side_b):  # pragma: no cover - compiled
        K = mu.shape[1]
        D = mu.shape[2]
        jmax = jmin
        for t in range(te.shape[0]):
            jmax = max(jmax, te[t])
        for k in range(K):  # position outermost: this position's rows of the task stay in cache
            # the b sides of this task at position k, once (each is compared with up to 16 inputs a)
            for j in range(jmin, jmax):
                p = rowid[j]
                derive(sg[p, k if mask[j, k] else 0], lam_w, oml_w, one, side_b[j - jmin])
            for t in range(ti.shape[0]):
                i = ti[t]
                pa = rowid[i]
                ka = k if mask[i, k] else 0  # padding: the input's prior component (position 0)
                derive(sg[pa, ka], lam_w, oml_w, one, side_a)
                for j in range(ts[t], te[t]):
                    row = r0s[t] + j - ts[t]
                    if not (mask[i, k] or mask[j, k]):  # padding on both sides: not compared
                        tkf[row, k] = 0.0
                        lkf[row, k] = 0.0
                        tkb[row, k] = 0.0
                        lkb[row, k] = 0.0
                        continue
                    pb = rowid[j]
                    kb = k if mask[j, k] else 0
                    sb = side_b[j - jmin]
                    tf = 0.0
                    tb = 0.0
                    sf = 0.0
                    s_b = 0.0
                    for g0 in range(0, D, group):
                        g1 = min(g0 + group, D)
                        ma = mu[pa, ka, g0:g1]
                        mb = mu[pb, kb, g0:g1]
                        la = side_a[0, g0:g1]
                        oa = side_a[1, g0:g1]
                        ia = side_a[2, g0:g1]
                        lb = sb[0, g0:g1]
                        ob = sb[1, g0:g1]
                        ib = sb[2, g0:g1]
                        x = group_sums(mb, ma, lb, oa, la, ob, ia, ib, zero)
                        tf += x[0]
                        tb += x[1]
                        if x[2] >= tiny64:
                            sf += np.log(x[2])
                        else:  # underflow, 0 or NaN: one logarithm per dim
                            sf += sum_log_r(lb, oa, ib, zero)
                        if x[3] >= tiny64:
                            s_b += np.log(x[3])
                        else:
                            s_b += sum_log_r(la, ob, ia, zero)
                    tkf[row, k] = tf
                    lkf[row, k] = sf
                    tkb[row, k] = tb
                    lkb[row, k] = s_b

    return pair_sums
