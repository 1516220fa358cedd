"""The pairwise Gaussian kernel of the RD bound: tiles of pairs, worker threads, folded logarithms.

Private plumbing of :func:`engine.nvdp.divergence.pairwise_rd_bound` (the O(pairs x K x D) part):
which pairs are evaluated (:func:`_pair_rows`), the thread pool that shares tiles of pairs, and the
per-(pair, component) sums over dims of the Gaussian Renyi terms in both directions
(:func:`_gauss_pair_sums`; fused and compiled by numba in :mod:`engine.nvdp._rd_numba` where
available). Values are bit-identical for any number of workers.
"""

from __future__ import annotations

import contextlib
import math
import threading

import numpy as np
import torch

from engine.nvdp import _rd_numba

#: Most entries of one kind (a memo key's first element) that :func:`memo_put` keeps in a caller's memo.
MEMO_LIMITS = {"gauss": 64, "finite_mu_sigma": 64, "logvar": 8, "paper_d2": 64, "paper_dir": 128, "paper_sigma_r": 128}


def memo_put(memo: dict, key: tuple, value) -> None:
    """``memo[key] = value``, then drop the oldest entries of the same kind (``key[0]``) beyond its limit.

    The memo of :func:`engine.nvdp.protocol.evaluate_bounds` holds entries of several kinds: pair
    terms that change with every C_mu or order move (the Gaussian sums) and terms that outlive many
    moves (the paper accountant's Dirichlet terms, which depend on the pseudo-counts alone). Bounding
    each kind by itself (:data:`MEMO_LIMITS`, 64 for a kind not named there) keeps the long-lived
    ones when the short-lived ones come and go (clearing the whole memo when it filled up threw
    them away every few moves). The values never depend on what is kept.
    """
    memo.pop(key, None)
    memo[key] = value
    kind = key[0]
    same = [k for k in memo if isinstance(k, tuple) and k and k[0] == kind]
    for k in same[: max(0, len(same) - MEMO_LIMITS.get(kind, 64))]:
        del memo[k]


#: Entries per block of :func:`_nanmean_entries` (its (block x D) float64 work buffers stay in cache).
_NANMEAN_CHUNK = 512


def _nanmean_entries(p_idx, k_idx, I, J, mu_w, sig_w, mask, lam, D):
    """The authors' NaN-mean over dims for D(b || a) at the given (pair, position) entries.

    At these entries some dim has ``s2 = lambda v_a + (1 - lambda) v_b < 0``, so the sum over dims
    is not finite. Each is recomputed in float64 as D times the mean over the dims with s2 > 0
    (0 when none; +inf if some s2 == 0), so that dividing by D later gives the authors' ``nanmean``.
    ``mu_w`` and ``sig_w`` (B, K, D, C-contiguous) are in the working precision, padding read as
    position 0 (``mask``); v = 1 / (1 / sigma^2) with the working precision's square and reciprocal,
    then float64. Returns a float64 tensor with one value per entry (private to
    :func:`engine.nvdp.divergence.pairwise_rd_bound`).

    Per dim: ``lam d2 / (2 s2) + (0.5 ln s2 - (lam/2) ln v_a - ((1-lam)/2) ln v_b) / (1 - lam)``.
    What belongs to an (input, position) cell and not to a pair (v, ln v, their scalar multiples,
    mu in float64) is computed once per cell that the entries read (many entries share a cell) and
    gathered per entry; the per-entry arithmetic (each operation of the formula in this order, the
    sum over dims of a contiguous row) runs on blocks of :data:`_NANMEAN_CHUNK` entries in reused
    buffers. The values are those of computing everything per entry (``tests/engine/test_nvdp_order_reuse.py``).
    """
    out = torch.empty(p_idx.numel(), dtype=torch.float64)
    if p_idx.numel() == 0:
        return out
    K = mask.shape[1]
    ia, ib = I[p_idx], J[p_idx]
    ka = torch.where(mask[ia, k_idx], k_idx, 0)  # padding: the input's prior component
    kb = torch.where(mask[ib, k_idx], k_idx, 0)
    fa, fb = ia * K + ka, ib * K + kb
    cells, inv = torch.unique(torch.cat([fa, fb]), return_inverse=True)
    ra, rb = inv[: fa.numel()], inv[fa.numel():]
    v = torch.reciprocal(torch.reciprocal(sig_w.reshape(-1, D)[cells].square()).to(torch.float64))
    lv = torch.log(v)
    lam_v, oml_v = lam * v, (1.0 - lam) * v  # s2 = lam v_a + (1 - lam) v_b
    h_a, h_b = (0.5 * lam) * lv, (0.5 * (1.0 - lam)) * lv  # (lam/2) ln v_a, ((1-lam)/2) ln v_b
    mu64 = mu_w.reshape(-1, D)[cells].to(torch.float64)
    one, zero = torch.ones((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)
    n = min(_NANMEAN_CHUNK, p_idx.numel())
    s2_b, d2_b, t_b, u_b = (torch.empty((n, D), dtype=torch.float64) for _ in range(4))
    ok_b, z_b = torch.empty((n, D), dtype=torch.bool), torch.empty((n, D), dtype=torch.bool)
    for s in range(0, p_idx.numel(), _NANMEAN_CHUNK):
        a, b = ra[s : s + _NANMEAN_CHUNK], rb[s : s + _NANMEAN_CHUNK]
        m = a.numel()
        s2, d2, t, u, ok, z = s2_b[:m], d2_b[:m], t_b[:m], u_b[:m], ok_b[:m], z_b[:m]
        torch.index_select(lam_v, 0, a, out=s2)
        s2.add_(torch.index_select(oml_v, 0, b, out=t))  # s2
        torch.index_select(mu64, 0, a, out=d2)
        d2.sub_(torch.index_select(mu64, 0, b, out=t)).square_()  # d2 = (mu_a - mu_b)^2
        torch.gt(s2, 0, out=ok)
        torch.eq(s2, 0, out=z)
        torch.where(ok, s2, one, out=t)  # s2, 1 where undefined
        d2.mul_(lam).div_(torch.mul(t, 2.0, out=u))  # lam d2 / (2 s2)
        t.log_().mul_(0.5).sub_(torch.index_select(h_a, 0, a, out=u))
        t.sub_(torch.index_select(h_b, 0, b, out=u)).div_(1.0 - lam)
        term = d2.add_(t)
        cnt = ok.sum(-1)
        mean = torch.where(ok, term, zero).sum(-1) / cnt.clamp_min(1)
        mean = torch.where(cnt > 0, mean, zero)
        out[s : s + m] = torch.where(z.any(-1), math.inf, mean) * D
    return out


def _pair_rows(n_inputs: int, pairs: str, batch_size: int):
    """Rows of pairs: (i, j0, j1, batch) meaning pairs (i, j) for j0 <= j < j1, all in one batch."""
    rows = []
    if pairs == "all":
        for i in range(n_inputs - 1):
            rows.append((i, i + 1, n_inputs, 0))
    else:
        for b, start in enumerate(range(0, n_inputs, batch_size)):
            stop = min(start + batch_size, n_inputs)
            for i in range(start, stop - 1):
                rows.append((i, i + 1, stop, b))
    return rows


# Process-wide torch intra-op thread count while pair kernels run on worker threads: set to 1 on
# the first entry, restored on the last exit (a counter, so overlapping calls from several threads
# of one process, e.g. Streamlit sessions, restore the caller's value, not 1).
_THREADS_LOCK = threading.Lock()
_THREADS_STATE = {"depth": 0, "saved": None}


@contextlib.contextmanager
def _single_intraop_thread():
    with _THREADS_LOCK:
        if _THREADS_STATE["depth"] == 0:
            _THREADS_STATE["saved"] = torch.get_num_threads()
            if _THREADS_STATE["saved"] != 1:
                torch.set_num_threads(1)
        _THREADS_STATE["depth"] += 1
    try:
        yield
    finally:
        with _THREADS_LOCK:
            _THREADS_STATE["depth"] -= 1
            if _THREADS_STATE["depth"] == 0 and _THREADS_STATE["saved"] != 1:
                torch.set_num_threads(_THREADS_STATE["saved"])


def _n_folds(D: int, lam: float, dt: torch.dtype, max_halvings: int = 3) -> list[int]:
    """Widths of the successive halvings of the dim axis for the product-of-r logarithm.

    Up to ``max_halvings`` halvings (products of 2**max_halvings dims), fewer if D is not
    divisible, and fewer when lambda^(2^n) (the largest possible product, r < lambda) would come
    within 2**8 of overflow.
    """
    log2_max = math.log2(torch.finfo(dt).max) - 8.0
    folds, w = [], D
    while len(folds) < max_halvings and w % 2 == 0 and (2 ** (len(folds) + 1)) * math.log2(max(lam, 1.0)) < log2_max:
        w //= 2
        folds.append(w)
    return folds


def _working_side(mu, sig, mask, lam):
    """The (B, K, D) arrays of the torch op chain: ``mu``, ``1 / v``, ``(1 - lambda) v`` and
    ``lambda v`` with ``v = sigma^2``, padding positions filled with the input's prior component
    (position 0), each in the working precision (four full-size arrays; the fused kernel forms
    none of them)."""
    m3 = mask.unsqueeze(-1)
    mu_w = torch.where(m3, mu, mu[:, :1])
    var_w = torch.where(m3, sig, sig[:, :1]).square_()
    inv_w = torch.reciprocal(var_w)
    lam_w = var_w * lam  # lambda v
    oml_w = var_w.mul_(1.0 - lam)  # (1 - lambda) v
    return mu_w, inv_w, oml_w, lam_w


def _sum_log_var(sig, mask, chunk_elements=1 << 18):
    """(B, K) float64: ``sum_d ln sigma^2`` per input and position, padding positions given the
    input's prior component's value; computed in blocks of inputs (no (B, K, D) temporary), with
    the same working-precision ``square`` and ``log`` per element and float64 sum per row as the
    full-size computation."""
    B, K, D = sig.shape
    out = torch.empty((B, K), dtype=torch.float64)
    step = max(1, chunk_elements // (K * D))
    for b0 in range(0, B, step):
        v = sig[b0 : b0 + step].square()
        out[b0 : b0 + step] = v.log_().sum(-1, dtype=torch.float64)
    return torch.where(mask, out, out[:, :1])


def _gauss_pair_sums(mu, sig, lam, rows, max_chunk_elements, n_workers=1, *, mask, logvar_k, rowid=None,
                     want_bad_bwd=False, want_fwd=True):
    """Per pair, the Gaussian terms summed over dims *and positions*, in both directions (float64).

    ``mu`` and ``sig`` (shape (B', K, D), working precision, C-contiguous) are the posterior means
    and standard deviations as given: positions that are padding (``mask`` False) are read as the
    input's prior component (position 0). ``rowid`` (long, shape (B,)) maps the inputs named by
    ``rows``, ``mask`` and ``logvar_k`` (all in that order, shape (B, K)) to rows of ``mu`` and
    ``sig``; None is the identity (B' = B). ``logvar_k`` is ``sum_d ln v`` per input and position
    (:func:`_sum_log_var`).

    For each pair (a, b) and position k, the sum over dims is
    ``(lambda/2) T + L / (2 (1 - lambda)) + 0.5 (ln v_b - ln v_a)`` (forward D(a||b); the backward
    D(b||a) swaps a and b), computed in float64 from the working-precision sums T and L of the
    tile; positions that are padding on both sides (``mask``) are skipped. The reduction over the
    positions happens inside each tile, so no (pairs x K) array is ever formed: the tile's
    (m x K) float64 values are summed at once.

    Returns
    -------
    fwd, bwd : float64 tensors of shape (n_pairs,)
        Sums over the compared positions whose per-position value is finite.
    bad_fwd, bad_bwd : bool tensors of shape (n_pairs,)
        True where some compared position is not finite (the variance condition failed there;
        the caller reports +inf or, for the paper form, repairs the backward entries).
    bad_bwd_entries : (pair, position) long tensor of shape (n_bad, 2), or None
        With ``want_bad_bwd``: every non-finite backward entry (for the authors' NaN-mean).

    ``want_fwd=False`` skips the forward direction (the paper form reads only the backward one):
    ``fwd`` is then 0 and ``bad_fwd`` False; the backward values are the same.

    Per element, with x = v_a / v_b: r_ab = lambda + (1 - lambda) x = s2_ab / v_b and
    D_ab = (lambda/2) (m_a - m_b)^2 / s2_ab + ln(r_ab) / (2 (1 - lambda)) + (ln v_b - ln v_a) / 2.

    Speed: pairs are taken in tiles (input i against a contiguous block of up to ``m_max`` inputs
    j), so the a side broadcasts and the b side is a view, and the j blocks stay in cache. The
    logarithms, the dominant cost, are taken of products of up to 8 dims, or 16 where a global
    lower bound of r (below) rules out underflow (ln r1 + ln r2 = ln(r1 r2)): the first halving multiplies s2 of dims d and d + D/2 and then by
    the precomputed ``1/(v_b,d v_b,d+D/2)`` (so r itself is never formed at full size), further
    halvings multiply those products. s2 is clamped at 0 first so that two negative factors
    cannot make a positive product (any s2 <= 0 gives ln 0 = -inf, reported as +inf by the
    caller). r < lambda bounds the products from above (:func:`_n_folds`); a tile whose products
    come below the smallest normal number (underflow, or a legitimate 0) is recomputed with one
    logarithm per dim, so folding never changes a finite result into an infinite one. Where
    ``r >= lambda - (lambda - 1) max_inputs v / min_inputs v > 1e-3`` for every (k, d), the clamp
    and this check are provably no-ops and are skipped (products of 8 >= 1e-24); above
    ``10**(-30/16)`` products of 16 (>= 1e-30) are used. The number of halvings is decided once
    per call from all inputs, so a subset of the inputs may round differently (float32: ~1e-7
    relative).

    Tiles are independent and each writes its own rows of the outputs, so ``n_workers`` Python
    threads (torch releases the GIL inside its kernels) take tasks of consecutive tiles from a
    shared queue, each with its own work buffers (about 4 x ``max_chunk_elements`` elements);
    torch's intra-op threads are set to 1 meanwhile. The tiles and the arithmetic per tile do not
    depend on ``n_workers``: the values are bit-identical for any number of workers.

    Where numba is available (the default; ``NVDP_RD_NUMBA=0`` in the environment selects the torch
    op chain described above), the per-(pair, position) sums T and L come instead from one fused,
    compiled pass over the dims (:mod:`engine.nvdp._rd_numba`): the same working-precision
    s2, d^2 / s2 and r per element, float64 sums, logarithms of float64 products of up to D dims (a
    group that underflows is recomputed with one logarithm per dim), positions that are padding on
    both sides skipped. Per pair it agrees with the torch chain to ~5e-16 relative in float64
    (float32: ~6e-8, the torch chain's own float32 rounding), with the same non-finite positions;
    it is ~3x faster and forms no (pairs x K x D) tile. Each (pair, position) is summed by one
    thread in a fixed order, so it too is bit-identical for any ``n_workers``.

    Memory: the fused kernel reads ``mu`` and ``sig`` in place (padding positions as
    position 0, through ``rowid`` for a permutation) and derives ``lambda v``, ``(1 - lambda) v``
    and ``1 / v`` per task and position, for the task's inputs only (``(span, 3, D)`` per worker),
    with the very working-precision roundings of the torch ops that formed them before (values
    bit-identical): no (B, K, D) working array is formed. The torch op chain still forms four
    (:func:`_working_side`).
    """
    n_inputs, K = mask.shape
    D = mu.shape[2]
    dt = mu.dtype
    half_lam = 0.5 * lam
    c = 0.5 / (1.0 - lam)
    tiny = torch.finfo(dt).tiny
    n_pairs = sum(j1 - j0 for _, j0, j1, _ in rows)
    m_max = max(1, min(int(max_chunk_elements) // (K * D), max(j1 - j0 for _, j0, j1, _ in rows)))
    kern = _rd_numba.get_kernel()  # the fused kernel, or None: the torch op chain
    if kern is None:
        if rowid is not None:
            mu, sig = mu[rowid], sig[rowid]
        mu, inv_var, oml_var, lam_var = _working_side(mu, sig, mask, lam)
        del sig
    # Global lower bound of r over all pairs, per (k, d): r >= lambda - (lambda - 1) max v / min v.
    # Where it exceeds 1e-3 everywhere (e.g. any clipped model with a floor above the boundary),
    # no s2 can be <= 0 and no product of 8 can underflow (>= 1e-24), so the clamp and the
    # underflow check of every tile are skipped (they would change nothing). Where it exceeds
    # 10**(-30/16) (products of 16 >= 1e-30), 4 halvings are used instead of 3.
    # (max v / min v = max (1/v) / min (1/v), from (K, D) reductions: no (B, K, D) temporary)
    # (the torch op chain only)
    if kern is None:
        r_lo = lam - (lam - 1.0) * (inv_var.amax(0).to(torch.float64) / inv_var.amin(0).to(torch.float64))
        r_lo_min = float(r_lo.min())
        safe = r_lo_min > 1e-3
        folds = _n_folds(D, lam, dt, max_halvings=4 if r_lo_min > 10.0 ** (-30.0 / 16.0) else 3)
        # 1 / (v_d v_{d+D/2}): the normaliser of the first halving, per input (pair-independent)
        inv2 = inv_var[..., : folds[0]] * inv_var[..., folds[0] :] if folds else None
    # per pair, reduced over positions inside each tile (float64)
    s_f = torch.empty(n_pairs, dtype=torch.float64) if want_fwd else torch.zeros(n_pairs, dtype=torch.float64)
    s_b = torch.empty(n_pairs, dtype=torch.float64)
    bad_f = torch.zeros(n_pairs, dtype=torch.bool)
    bad_b = torch.zeros(n_pairs, dtype=torch.bool)
    bad_entries = []  # (pair, position) of non-finite backward entries, per tile (list.append is thread-safe)

    # Tiles: the j axis is cut into blocks of m_max inputs and, block by block, every row i is
    # compared with the block, so the block's data stays in cache while the rows stream past
    # (row by row, all of j > i would be re-read from memory for every i).
    offsets, pos = [], 0
    for _, j0, j1, _ in rows:
        offsets.append(pos)
        pos += j1 - j0
    tiles = []
    for blk in range(0, n_inputs, m_max):
        blk_end = blk + m_max
        for (i, j0, j1, _), off in zip(rows, offsets):
            s, e = max(j0, blk), min(j1, blk_end)
            if s < e:
                tiles.append((i, s, e, off + (s - j0)))
    per_task = 16
    tasks = [tiles[k : k + per_task] for k in range(0, len(tiles), per_task)]
    n_workers = max(1, min(int(n_workers), len(tasks)))

    # Views are made once, not per tile (at ~1 us each they were a visible share of the time):
    # the a side per input, the b side per distinct j range, the work buffers per tile height m.
    a_views, b_views = [], {}
    if kern is None:
        side = (mu, oml_var, inv_var, lam_var, inv2 if inv2 is not None else inv_var, mask, logvar_k)
        a_views = [tuple(x[i] for x in side) for i in range(n_inputs)]
        for _, s, e, _ in tiles:
            if (s, e) not in b_views:
                b_views[(s, e)] = tuple(x[s:e] for x in side)

    if kern is not None:
        # products of `group` r in float64: lambda^group and r_lo^group stay within float64's range
        # (a group that underflows anyway is recomputed with one logarithm per dim)
        group = D
        while group > 8 and group * math.log2(max(lam, 1.0)) > 960.0:
            group = (group + 1) // 2
        arrs = (mu.detach().contiguous().numpy(), sig.detach().contiguous().numpy(), mask.contiguous().numpy(),
                (torch.arange(n_inputs) if rowid is None else rowid).to(torch.long).contiguous().numpy())
        wt = arrs[0].dtype.type  # the working precision's scalars, as torch casts a Python scalar
        consts = (wt(lam), wt(1.0 - lam), wt(1.0))
        zero_np = wt(0)
        # inputs j of a task: the b sides derived once per task and position (at most this many)
        span_max = max(max(tl[2] for tl in task) - min(tl[1] for tl in task) for task in tasks)

        def worker(next_task):  # the fused kernel: one pass over the dims per (pair, position)
            rows_max = per_task * m_max
            side_a = np.empty((3, D), dtype=arrs[0].dtype)
            side_b = np.empty((span_max, 3, D), dtype=arrs[0].dtype)
            tk_bufs = [torch.empty((rows_max, K), dtype=torch.float64) for _ in range(4)]
            sep_b = torch.empty((rows_max, K), dtype=torch.float64)
            u_b = torch.empty((rows_max, K), dtype=torch.bool)
            g_b = torch.empty((rows_max, K), dtype=torch.float64)
            red_b = torch.empty(rows_max, dtype=torch.float64)
            np_bufs = [b.numpy() for b in tk_bufs]
            while True:
                task = next_task()
                if task is None:
                    return
                ti = np.array([tl[0] for tl in task], dtype=np.int64)
                ts = np.array([tl[1] for tl in task], dtype=np.int64)
                te = np.array([tl[2] for tl in task], dtype=np.int64)
                r0s = np.zeros(len(task), dtype=np.int64)
                np.cumsum((te - ts)[:-1], out=r0s[1:])
                kern(*arrs, *consts, ti, ts, te, r0s, int(ts.min()), group, zero_np, *np_bufs, side_a, side_b)
                r0 = 0
                where = []
                for i, s, e, pos in task:
                    m = e - s
                    torch.sub(logvar_k[s:e], logvar_k[i], out=sep_b[r0 : r0 + m])
                    torch.logical_or(mask[s:e], mask[i], out=u_b[r0 : r0 + m])
                    where.extend(range(pos, pos + m))
                    r0 += m
                idx = torch.tensor(where, dtype=torch.long)
                sep = sep_b[:r0].mul_(0.5)
                u = u_b[:r0]
                tkf, lkf, tkb, lkb = (b[:r0] for b in tk_bufs)
                if want_fwd:
                    _reduce_positions(tkf, lkf, sep, 1.0, u, s_f, bad_f, idx, False, half_lam, c, g_b, red_b,
                                      bad_entries)
                _reduce_positions(tkb, lkb, sep, -1.0, u, s_b, bad_b, idx, want_bad_bwd, half_lam, c, g_b, red_b,
                                  bad_entries)

    def worker_torch(next_task):
        d2_buf = torch.empty((m_max, K, D), dtype=dt)
        s2_buf = torch.empty((m_max, K, D), dtype=dt)
        t_buf = torch.empty((m_max, K, D), dtype=dt)
        f_bufs = [torch.empty((m_max, K, h), dtype=dt) for h in folds]
        # per-task (rows x K) sums in the working precision (tiles stacked), and their float64
        # combination, reduced over K once per task (fewer small ops than once per tile)
        rows_max = per_task * m_max
        tkf_buf = torch.empty((rows_max, K), dtype=dt)
        lkf_buf = torch.empty((rows_max, K), dtype=dt)
        tkb_buf = torch.empty((rows_max, K), dtype=dt)
        lkb_buf = torch.empty((rows_max, K), dtype=dt)
        g_buf = torch.empty((rows_max, K), dtype=torch.float64)
        sep_buf = torch.empty((rows_max, K), dtype=torch.float64)
        u_buf = torch.empty((rows_max, K), dtype=torch.bool)
        red_buf = torch.empty(rows_max, dtype=torch.float64)

        def reduce_positions(tk, lk, sep, sign, u, out, bad, where, record):
            """:func:`_reduce_positions` with this call's constants and buffers."""
            _reduce_positions(tk, lk, sep, sign, u, out, bad, where, record, half_lam, c, g_buf, red_buf,
                              bad_entries)

        views = {}

        def views_for(m):
            """(d2, s2, t, halvings) for a tile of m pairs; halvings: (lo, hi, dst) per level."""
            if m not in views:
                s2 = s2_buf[:m]
                halvings, src = [], s2
                for h, fb in zip(folds, f_bufs):
                    dst = fb[:m]
                    halvings.append((src[..., :h], src[..., h:], dst))
                    src = dst
                views[m] = (d2_buf[:m], s2, t_buf[:m], halvings)
            return views[m]

        def sum_log_r(s2, halvings, inv_full, inv_half, scratch, out):
            """out = sum_d ln(s2 / v), s2 clamped at 0 in place; scratch is free full-size memory."""
            if not safe:
                s2.clamp_min_(0.0)
            if halvings:
                lo, hi, p = halvings[0]
                torch.mul(lo, hi, out=p)
                p.mul_(inv_half)
                for lo, hi, p in halvings[1:]:
                    torch.mul(lo, hi, out=p)
                if safe or float(p.min()) >= tiny:
                    torch.sum(p.log_(), -1, out=out)
                    return
            r = torch.mul(s2, inv_full, out=scratch)  # no folding, or a product came below tiny
            torch.sum(r.log_(), -1, out=out)

        while True:
            task = next_task()
            if task is None:
                return
            r0 = 0
            where = []
            for i, s, e, pos in task:
                ma, ova, iva, lva, ia2, mka, lka = a_views[i]
                mb, ovb, ivb, lvb, ib2, mkb, lkb = b_views[(s, e)]
                m = e - s
                d2, s2, t, halvings = views_for(m)
                torch.sub(lkb, lka, out=sep_buf[r0 : r0 + m])  # sum_d (ln v_b - ln v_a)
                torch.logical_or(mkb, mka, out=u_buf[r0 : r0 + m])  # positions compared
                torch.sub(mb, ma, out=d2)
                d2.square_()
                if want_fwd:  # forward a || b
                    torch.add(lvb, ova, out=s2)  # s2_ab = lambda v_b + (1 - lambda) v_a
                    torch.div(d2, s2, out=t)  # d^2 / s2_ab
                    torch.sum(t, -1, out=tkf_buf[r0 : r0 + m])
                    sum_log_r(s2, halvings, ivb, ib2, t, lkf_buf[r0 : r0 + m])
                # backward b || a
                torch.add(lva, ovb, out=s2)
                torch.div(d2, s2, out=t)
                torch.sum(t, -1, out=tkb_buf[r0 : r0 + m])
                sum_log_r(s2, halvings, iva, ia2, t, lkb_buf[r0 : r0 + m])
                where.extend(range(pos, pos + m))
                r0 += m
            idx = torch.tensor(where, dtype=torch.long)
            sep = sep_buf[:r0].mul_(0.5)  # 0.5 * sum_d (ln v_b - ln v_a)
            u = u_buf[:r0]
            if want_fwd:
                reduce_positions(tkf_buf[:r0], lkf_buf[:r0], sep, 1.0, u, s_f, bad_f, idx, False)
            reduce_positions(tkb_buf[:r0], lkb_buf[:r0], sep, -1.0, u, s_b, bad_b, idx, want_bad_bwd)

    if kern is None:
        worker = worker_torch
    it = iter(tasks)
    lock = threading.Lock()

    def next_task():
        with lock:
            return next(it, None)

    with _single_intraop_thread():
        if n_workers == 1:
            worker(next_task)
        else:
            errors = []

            def run():
                try:
                    worker(next_task)
                except BaseException as exc:  # re-raised in the caller's thread below
                    errors.append(exc)

            # the caller's thread is worker 0 (one thread, and its malloc arena, fewer)
            threads = [threading.Thread(target=run, name=f"rd-pairs-{w}", daemon=True) for w in range(1, n_workers)]
            for th in threads:
                th.start()
            run()
            for th in threads:
                th.join()
            if errors:
                raise errors[0]
    entries = None
    if want_bad_bwd:
        entries = torch.cat(bad_entries) if bad_entries else torch.zeros((0, 2), dtype=torch.long)
    return s_f, s_b, bad_f, bad_b, entries


def _reduce_positions(tk, lk, sep, sign, u, out, bad, where, record, half_lam, c, g_buf, red_buf, bad_entries):
    """out[where] = sum over compared positions u of the finite float64 per-position values
    ``half_lam T + c L + sign sep``; bad[where] marks pairs with a non-finite compared position
    (recorded as (pair, position) in ``bad_entries`` when ``record``)."""
    zero64 = torch.zeros((), dtype=torch.float64)
    n = tk.shape[0]
    g = g_buf[:n]
    g.copy_(tk)
    g.mul_(half_lam).add_(lk, alpha=c)
    g.add_(sep, alpha=sign)
    ok = torch.isfinite(g)
    red = red_buf[:n]
    if bool(ok.all()):
        torch.sum(torch.where(u, g, zero64), -1, out=red)
        out[where] = red
        return
    bad_pos = u & ~ok
    torch.sum(torch.where(u & ok, g, zero64), -1, out=red)
    out[where] = red
    bad[where] = bad_pos.any(-1)
    if record:
        r, k = torch.nonzero(bad_pos, as_tuple=True)
        bad_entries.append(torch.stack([where[r], k], 1))


def _log_beta_masked(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """ln B over the positions where w (bool) is True; x elsewhere is ignored."""
    xs = torch.where(w, x, torch.ones_like(x))
    return torch.where(w, torch.lgamma(xs), torch.zeros_like(xs)).sum(-1) - torch.lgamma((xs * w).sum(-1))
