"""The numba kernels of the RD bound's fused pass (:mod:`engine.nvdp._rd_numba` documents them).

They are defined at module level, not inside a function: numba's on-disk cache keys a closure by
its captured cells, and a captured dispatcher pickles differently in every process, so a kernel
calling helpers from its closure was compiled anew by every process (seconds on the first NVDP
view of every server start), each run adding a cache entry. At module level the helpers are
globals, frozen at compile time as before, and the cache in ``__pycache__`` is found again. The
bodies and flags are unchanged, so are the values. Importing this module imports numba.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["pair_sums"]

#: Smallest normal float64: a product below it underflowed (one logarithm per dim instead).
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
