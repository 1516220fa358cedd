"""The pairwise Gaussian kernel of the RD bound: tiles of pairs, worker threads, folded logarithms.

Private plumbing of :func:`engine.nvdp.divergence.pairwise_rd_bound` (the O(pairs x K x D) part):
which pairs are evaluated (:func:`_pair_rows`), the thread pool that shares tiles of pairs, and the
per-(pair, component) sums over dims of the Gaussian Renyi terms in both directions
(:func:`_gauss_pair_sums`). Values are bit-identical for any number of workers.
"""

from __future__ import annotations

import contextlib
import math
import threading

import torch

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


def _gauss_pair_sums(mu, inv_var, oml_var, lam_var, lam, rows, max_chunk_elements, n_workers=1):
    """Per pair and position, sum over dims of the Gaussian terms in both directions.

    Returns two float64 tensors of shape (n_pairs, K): forward D(a||b) and backward D(b||a),
    *without* the separable ``0.5 * (ln v_b - ln v_a)`` part (added by the caller).
    A non-finite entry means that the variance condition failed at that position.

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
    """
    n_inputs, K, D = mu.shape
    dt = mu.dtype
    half_lam = 0.5 * lam
    c = 0.5 / (1.0 - lam)
    tiny = torch.finfo(dt).tiny
    n_pairs = sum(j1 - j0 for _, j0, j1, _ in rows)
    m_max = max(1, min(int(max_chunk_elements) // (K * D), max(j1 - j0 for _, j0, j1, _ in rows)))
    # Global lower bound of r over all pairs, per (k, d): r >= lambda - (lambda - 1) max v / min v.
    # Where it exceeds 1e-3 everywhere (e.g. any clipped model with a floor above the boundary),
    # no s2 can be <= 0 and no product of 8 can underflow (>= 1e-24), so the clamp and the
    # underflow check of every tile are skipped (they would change nothing). Where it exceeds
    # 10**(-30/16) (products of 16 >= 1e-30), 4 halvings are used instead of 3.
    # (max v / min v = max (1/v) / min (1/v), from (K, D) reductions: no (B, K, D) temporary)
    r_lo = lam - (lam - 1.0) * (inv_var.amax(0).to(torch.float64) / inv_var.amin(0).to(torch.float64))
    r_lo_min = float(r_lo.min())
    safe = r_lo_min > 1e-3
    folds = _n_folds(D, lam, dt, max_halvings=4 if r_lo_min > 10.0 ** (-30.0 / 16.0) else 3)
    # 1 / (v_d v_{d+D/2}): the normaliser of the first halving, per input (pair-independent)
    inv2 = inv_var[..., : folds[0]] * inv_var[..., folds[0] :] if folds else None
    # per pair and position, in the working precision: T = sum_d d^2 / s2, L = sum_d ln r
    t_f = torch.empty((n_pairs, K), dtype=dt)
    l_f = torch.empty((n_pairs, K), dtype=dt)
    t_b = torch.empty((n_pairs, K), dtype=dt)
    l_b = torch.empty((n_pairs, K), dtype=dt)

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
    side = (mu, oml_var, inv_var, lam_var, inv2 if folds else inv_var)
    a_views = [tuple(x[i] for x in side) for i in range(n_inputs)]
    b_views = {}
    for _, s, e, _ in tiles:
        if (s, e) not in b_views:
            b_views[(s, e)] = tuple(x[s:e] for x in side)

    def worker(next_task):
        d2_buf = torch.empty((m_max, K, D), dtype=dt)
        s2_buf = torch.empty((m_max, K, D), dtype=dt)
        t_buf = torch.empty((m_max, K, D), dtype=dt)
        f_bufs = [torch.empty((m_max, K, h), dtype=dt) for h in folds]
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
            for i, s, e, pos in task:
                ma, ova, iva, lva, ia2 = a_views[i]
                mb, ovb, ivb, lvb, ib2 = b_views[(s, e)]
                d2, s2, t, halvings = views_for(e - s)
                torch.sub(mb, ma, out=d2)
                d2.square_()
                # forward a || b
                torch.add(lvb, ova, out=s2)  # s2_ab = lambda v_b + (1 - lambda) v_a
                torch.div(d2, s2, out=t)  # d^2 / s2_ab
                torch.sum(t, -1, out=t_f[pos : pos + e - s])
                sum_log_r(s2, halvings, ivb, ib2, t, l_f[pos : pos + e - s])
                # backward b || a
                torch.add(lva, ovb, out=s2)
                torch.div(d2, s2, out=t)
                torch.sum(t, -1, out=t_b[pos : pos + e - s])
                sum_log_r(s2, halvings, iva, ia2, t, l_b[pos : pos + e - s])

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

            threads = [threading.Thread(target=run, name=f"rd-pairs-{w}", daemon=True) for w in range(n_workers)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            if errors:
                raise errors[0]
    out_f = t_f.to(torch.float64).mul_(half_lam).add_(l_f, alpha=c)  # float64 arithmetic
    del t_f, l_f
    out_b = t_b.to(torch.float64).mul_(half_lam).add_(l_b, alpha=c)
    return out_f, out_b


def _log_beta_masked(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """ln B over the positions where w (bool) is True; x elsewhere is ignored."""
    xs = torch.where(w, x, torch.ones_like(x))
    return torch.where(w, torch.lgamma(xs), torch.zeros_like(xs)).sum(-1) - torch.lgamma((xs * w).sum(-1))
