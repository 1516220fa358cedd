"""The NVDP authors' evaluation protocol: their outlier filter and their subsampled Bayesian accountant.

Implemented from the formulas (``docs/background/nvdp_research.md`` sections 2.4 and 2.5,
NVDP.md section 4), not from the authors' GPL code, and pinned against its documented behaviour:

* :func:`outlier_filter` -- within each eval batch, z-scores of the per-pair RD with the
  **population** standard deviation (ddof 0, torch ``std(unbiased=False)``); pairs with
  ``|z| > outlier_z`` are set to 0 before the batch max and mean; the reported max is the max of
  the batch maxima and the mean the mean of the batch means.
* :func:`paper_bdp` -- the Triastcyn & Faltings accountant as the authors call it: scalar
  standard deviations (sigma_L = the prior's, 1; sigma_R = the batch mean of the posterior
  standard deviations), *scaled* Renyi terms at the integer orders k = 0, 1, 2 with non-finite
  terms mapped to 0, the binomial subsampling mixture with q = B / N_eval, the larger of the two
  directions per pair, a Student-t upper bound per batch (population std / sqrt(P - 1)), costs
  added over batches, ``epsilon = (cost - ln(delta - (1 - conf^B))) / lambda``.

Neither is a guarantee. They exist so that our numbers can be put next to the papers' tables.

Examples
--------
>>> mx, mean, kept = outlier_filter(np.array([1.0, 1.0, 1.0, 1.0, 1.0, 4.0]), np.zeros(6, int), outlier_z=0.5)
>>> float(mx), round(float(mean), 4), kept.tolist()
(1.0, 0.8333, [True, True, True, True, True, False])
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import torch
from scipy.special import logsumexp

from engine.nvdp.closed_forms import validate_renyi_order
from engine.privacy import validate_delta

__all__ = ["outlier_filter", "paper_bdp", "PaperBDPResult"]


def outlier_filter(values: np.ndarray, batch_index: np.ndarray, *, outlier_z: float | None = 0.5, ddof: int = 0):
    """The authors' "worst case": batch-wise z-score filter, then max of batch maxima and mean of batch means.

    Parameters
    ----------
    values : ndarray of float64, shape (n_pairs,)
        Per-pair RD (may hold +inf and NaN).
    batch_index : ndarray of int, shape (n_pairs,)
        Eval batch of each pair.
    outlier_z : float or None, default 0.5
        Threshold on ``|r - mean r| / std r`` within a batch; None disables the filter.
    ddof : {0, 1}, default 0
        Degrees of freedom of the std: 0 is the authors' (population std); 1 the sample std.

    Returns
    -------
    max, mean : float
        NaN when no batch has a non-NaN value.
    kept : ndarray of bool, shape (n_pairs,)
        Pairs that survive the filter (filtered pairs count as 0 in the batch max and mean).

    Notes
    -----
    Mean and std are taken over the finite values of the batch; infinite values are never
    filtered and NaN values are left out of the batch max and mean.
    """
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (population std, the authors') or 1; got {ddof!r}")
    values = np.asarray(values, dtype=np.float64)
    batch_index = np.asarray(batch_index)
    kept = np.ones(values.size, dtype=bool)
    batch_max, batch_mean = [], []
    for bid in np.unique(batch_index):
        sel = np.flatnonzero(batch_index == bid)
        r = values[sel]
        fin = np.isfinite(r)
        if outlier_z is not None and fin.sum() >= 2:
            rf = r[fin]
            sd = rf.std(ddof=ddof)
            if sd > 0:
                z = np.abs(r - rf.mean()) / sd
                drop = fin & (z > float(outlier_z))
                kept[sel[drop]] = False
        rk = np.where(kept[sel], r, 0.0)
        rk = rk[~np.isnan(rk)]
        if rk.size:
            batch_max.append(rk.max())
            batch_mean.append(rk.mean())
    mx = float(np.max(batch_max)) if batch_max else math.nan
    mean = float(np.mean(batch_mean)) if batch_mean else math.nan
    return mx, mean, kept


class PaperBDPResult(dict):
    """Result of :func:`paper_bdp` (a dict: ``epsilon``, ``privacy_cost``, ``batch_costs``, ``q``,
    ``n_batches``, ``n_pairs``, ``renyi_order``, ``delta``, ``confidence``, ``moment_order``)."""

    @property
    def epsilon(self) -> float:
        return self["epsilon"]


def _pair_d2(mu_l, mu_r, n_latent: int) -> np.ndarray:
    """mean over dims, summed over positions, of (mu_r - mu_l)^2, divided by n_latent (symmetric in l, r)."""
    return ((mu_r - mu_l) ** 2).mean(-1).sum(-1) / n_latent


def _scaled_terms(k: np.ndarray, mu_l, s_l: float, al_l, mu_r, s_r: float, al_r, n_latent: int,
                  d2: np.ndarray | None = None, lg_al_l: np.ndarray | None = None,
                  dir_memo: dict | None = None) -> np.ndarray:
    """Scaled Renyi terms s(k) of the authors' accountant for pairs (left, right), shape (n_pairs, len(k)).

    Gaussian (scalar stds): ``k (k-1)/2 * mean_pos mean_d (mu_r - mu_l)^2 / t_k^2 - ln(t_k / (s_l^(1-k) s_r^k))``
    with ``t_k^2 = (1 - k) s_l^2 + k s_r^2``; Dirichlet: the proportional proxy at order k, unscaled,
    between the left input's pseudo-counts and the right input's total; every NaN / inf term is 0.
    ``lg_al_l`` may pass ln|Gamma(al_l)| taken before (the same values, e.g. gathered per pair).
    ``dir_memo`` (a dict owned by the caller for these very ``al_l``, ``al_r`` and ``n_latent``)
    keeps the two Dirichlet terms of each order k, which depend on the pseudo-counts alone: a move
    of the means or the order reuses them (the same arrays, added in the same order: the same values).
    """
    out = np.zeros((al_l.shape[0], k.size))
    if d2 is None:  # (n,): mean over dims, mean over positions (the same in both orientations)
        d2 = _pair_d2(mu_l, mu_r, n_latent)
    # Dirichlet proxy (the authors' argument order): the "q" side is the left input, whose
    # proportions are kept; the right input enters through its total only.
    a_q = al_l
    tot_q = al_l.sum(-1)
    tot_p = al_r.sum(-1)
    lg = lambda x: torch.lgamma(torch.as_tensor(x, dtype=torch.float64)).numpy()  # noqa: E731 (log|Gamma|)
    beta = tot_p[:, None] * a_q / tot_q[:, None]
    lg_cache = {} if lg_al_l is None else {"a_q": lg_al_l}  # k-independent (pairs x K) ln|Gamma|, once

    def lg_shared(name):
        if name not in lg_cache:
            lg_cache[name] = lg(a_q if name == "a_q" else beta)
        return lg_cache[name]

    with np.errstate(all="ignore"):
        for j, kk in enumerate(k):
            t2 = (1.0 - kk) * s_l**2 + kk * s_r**2
            g1 = kk * (kk - 1.0) / 2.0 * d2 / t2 if t2 > 0 else np.zeros_like(d2)
            g1 = np.nan_to_num(g1, nan=0.0)
            if t2 > 0 and kk != 1.0:
                g2 = -math.log(math.sqrt(t2) / (s_l ** (1.0 - kk) * s_r**kk))
            else:
                g2 = 0.0  # (k-1)/(1-k) is 0/0 at k = 1, and sqrt of a negative is NaN: both map to 0
            gauss = g1 + g2
            if kk == 1.0:
                out[:, j] = gauss  # every Dirichlet term has 1/(k-1) = inf: NaN, mapped to 0
                continue
            terms = None if dir_memo is None else dir_memo.get(float(kk))
            if terms is None:
                f1 = (-(1.0 / (kk - 1.0)) * lg(kk * tot_q - (kk - 1.0) * tot_p) - lg(tot_p)
                      + (kk / (kk - 1.0)) * lg(tot_q))
                f1 = np.where(np.isfinite(f1), f1, 0.0) / n_latent
                arg = kk * a_q - (kk - 1.0) * beta
                # at k = 0 the argument is beta itself (0 * a_q + beta): reuse its ln|Gamma| when bitwise equal
                lg_arg = lg_shared("beta") if kk == 0.0 and np.array_equal(arg, beta) else lg(arg)
                f2 = (1.0 / (kk - 1.0)) * lg_arg + lg_shared("beta") - (kk / (kk - 1.0)) * lg_shared("a_q")
                f2 = np.nansum(f2, -1) / n_latent
                f2 = np.where(np.isfinite(f2), f2, 0.0)
                terms = (f1, f2)
                if dir_memo is not None:
                    dir_memo[float(kk)] = terms
            f1, f2 = terms
            out[:, j] = gauss + f1 + f2
    return out


def _batch_cost(logmgf: np.ndarray, confidence: float) -> float:
    """Log of the one-sided Student-t upper bound on mean(exp(logmgf)), population std / sqrt(P - 1)."""
    p = logmgf.size
    if p < 3:
        raise ValueError(f"the authors' accountant needs at least 3 pairs per batch; got {p}")
    mx = logmgf.max()
    log_mean = -math.log(p) + logsumexp(logmgf)
    if np.std(logmgf) < np.finfo(np.float64).eps:
        return float(log_mean)
    e2 = np.exp(2 * logmgf - 2 * mx)
    e2 = np.where(np.isclose(e2, 1.0, atol=1e-8), 1.0, e2)
    var_sum = np.sum(e2 - np.exp(2 * log_mean - 2 * mx))
    log_std = 0.5 * (2 * mx - math.log(p) + math.log(var_sum)) if var_sum > 0 else -math.inf
    from scipy.stats import t as student_t  # here, not at import: scipy.stats costs ~47 MiB of RSS

    log_pen = math.log(student_t.ppf(confidence, p - 1)) + log_std - 0.5 * math.log(p - 1)
    return float(logsumexp([log_mean, log_pen]))


def paper_bdp(mu, sigma, alpha, mask, *, renyi_order: float = 1.1, delta: float = 1e-5, batch_size: int = 16,
              n_eval: int | None = None, subsample: bool = True, n_latent: int | None = None,
              confidence: float = 1.0 - 1e-16, alpha_cutoff: float = 1e-4, memo: tuple | None = None) -> PaperBDPResult:
    """BDP epsilon as the NVDP authors compute it (their subsampled accountant), from posteriors.

    Parameters
    ----------
    mu, sigma : array_like of shape (B, K, D)
        Posterior means and stds (after clipping) of the evaluation inputs, in evaluation order.
    alpha, mask : array_like of shape (B, K)
        Pseudo-counts and the real-component mask (component 0 = prior).
    renyi_order : float, default 1.1
        lambda; the moment order is ``int(lambda + 1)`` (2 at 1.1), as in the authors' code.
    delta : float, default 1e-5
    batch_size : int, default 16
        Eval batch size B; pairs are taken within consecutive batches.
    n_eval : int, optional
        N_eval, the number of evaluation inputs of the split (default: B = ``len(mu)``).
    subsample : bool, default True
        Use the authors' subsampling ratio ``q = batch_size / n_eval``; False uses q = 1.
    n_latent : int, optional
        Latent positions per input (default K); posteriors are padded with alpha 0 to it.
    confidence, alpha_cutoff : float
        Per-batch confidence (1 - 1e-16) and the pseudo-count cut-off (1e-4), the authors' values.
    memo : (dict, bytes), (dict, bytes, bytes), (dict, bytes, bytes, bytes) or None
        Reuse of the squared distances between calls with the same ``mu`` and ``mask``: a dict
        owned by the caller and a digest of the content of ``mu``, ``sigma`` and ``mask`` that the
        caller vouches for (:func:`engine.nvdp.protocol.evaluate_bounds`), optionally followed by
        the caller's key for the content of ``mu`` and ``mask`` alone (the squared distances do not
        depend on ``sigma``, so an order move, which moves the sigma floor, then reuses them); keyed
        with the kept components, so a hit gives the values a recomputation would. The Dirichlet
        terms of each batch and order are kept there too, keyed by a SHA-256 digest of the batch's
        kept pseudo-counts (they depend on nothing else): a C_mu or order move reuses them. Each
        kind of entry is bounded by itself (:func:`engine.nvdp.rd_kernel.memo_put`). A fourth element, the
        caller's key for the content of ``sigma`` alone, keeps each batch's sigma_R (keyed with the kept
        components): a C_mu move reuses it.

    Returns
    -------
    PaperBDPResult

    Raises
    ------
    ValueError
        Bad shapes, a batch with fewer than 3 pairs, lambda <= 1, delta outside (0, 1).

    Notes
    -----
    Padding and components with alpha <= ``alpha_cutoff`` get alpha = 0, mu = 0 and log-variance 0
    (sigma = 1) before the batch-mean sigma_R is taken over all positions and dims, as the authors do.
    Deviations from their code: float64 instead of float32; their special branches for a batch whose
    pseudo-counts are all exactly 1 are not reproduced. Source: nvdp_research.md section 2.5
    (Triastcyn & Faltings 2020, with the NVDP authors' scaled Renyi functions).
    """
    from engine.nvdp.rd_kernel import memo_put  # (here: this module is imported without the kernel's)

    lam = validate_renyi_order(renyi_order)
    delta = validate_delta(delta)
    mu_in, sigma_in = mu, sigma
    mu = None  # float64 and masked below, only if some batch's squared distances are not in the memo
    sg = None  # likewise, only if some batch's sigma_R is not in the memo
    alpha = torch.as_tensor(alpha).to(torch.float64).numpy()
    mask = torch.as_tensor(mask).numpy().astype(bool)
    B, K, D = tuple(np.shape(sigma_in))
    if tuple(np.shape(mu_in)) != (B, K, D):
        raise ValueError(f"mu must have the shape of sigma {(B, K, D)}; got {tuple(np.shape(mu_in))}")
    n_latent = K if n_latent is None else int(n_latent)
    if n_latent < K:
        raise ValueError(f"n_latent must be >= K = {K}; got {n_latent}")
    n_eval = B if n_eval is None else int(n_eval)
    if n_eval < B:
        raise ValueError(f"n_eval must be >= the number of inputs {B}; got {n_eval}")
    q = min(1.0, batch_size / n_eval) if subsample else 1.0
    keep = mask & (alpha > alpha_cutoff)
    al = np.where(keep, alpha, 0.0)
    sigma_key = memo[3] if memo is not None and len(memo) > 3 else None
    lg_al = torch.lgamma(torch.as_tensor(al, dtype=torch.float64)).numpy()  # ln|Gamma| per input, gathered per pair
    moment = int(lam + 1.0)
    k = np.arange(moment + 1, dtype=np.float64)
    from scipy.stats import binom  # here, not at import (~47 MiB of RSS)

    log_coef = binom.logpmf(k, n=moment, p=q)
    costs = []
    n_pairs = 0
    for start in range(0, B, batch_size):
        stop = min(start + batch_size, B)
        if stop - start < 2:
            continue
        # sigma_R: mean std over the batch, every position of the padded latent and every dim
        pad = (n_latent - K) * D * (stop - start)
        rkey = (("paper_sigma_r", sigma_key, keep[start:stop].tobytes(), start, stop, n_latent, (B, K, D))
                if sigma_key is not None else None)
        s_r = memo[0].get(rkey) if rkey is not None else None
        if s_r is None:
            if sg is None:
                sg = np.where(keep[..., None], torch.as_tensor(sigma_in).to(torch.float64).numpy(), 1.0)
            s_r = float((sg[start:stop].sum() + pad) / ((stop - start) * n_latent * D))
            if rkey is not None:
                memo_put(memo[0], rkey, s_r)
        s_l = 1.0
        I, J = np.triu_indices(stop - start, 1)
        I, J = I + start, J + start
        # (a - b)^2 == (b - a)^2 exactly, so the squared distances are computed once for both orientations
        dkey = None
        if memo is not None:
            mu_key = memo[2] if len(memo) > 2 and memo[2] is not None else memo[1]
            dkey = ("paper_d2", mu_key, keep[start:stop].tobytes(), start, stop, n_latent, (B, K, D))
        d2 = memo[0].get(dkey) if dkey is not None else None
        if d2 is None:
            if mu is None:
                mu = np.where(keep[..., None], torch.as_tensor(mu_in).to(torch.float64).numpy(), 0.0)
            d2 = np.concatenate([_pair_d2(mu[i], mu[i + 1 : stop], n_latent) for i in range(start, stop - 1)])
            if dkey is not None:
                memo_put(memo[0], dkey, d2)
        # the Dirichlet terms depend on this batch's kept pseudo-counts alone (a few kB: hashed here)
        dm_lr = dm_rl = None
        if memo is not None:
            akey = hashlib.sha256(al[start:stop].tobytes()).digest()
            dm = []
            for side in ("lr", "rl"):
                pkey = ("paper_dir", akey, side, stop - start, n_latent)
                if pkey not in memo[0]:
                    memo_put(memo[0], pkey, {})
                dm.append(memo[0][pkey])
            dm_lr, dm_rl = dm
        s_lr = _scaled_terms(k, None, s_l, al[I], None, s_r, al[J], n_latent, d2=d2, lg_al_l=lg_al[I], dir_memo=dm_lr)
        s_rl = _scaled_terms(k, None, s_r, al[J], None, s_l, al[I], n_latent, d2=d2, lg_al_l=lg_al[J], dir_memo=dm_rl)
        c_l = logsumexp(log_coef + s_lr, axis=1)
        c_r = logsumexp(log_coef + s_rl, axis=1)
        costs.append(_batch_cost(np.maximum(c_l, c_r), confidence))
        n_pairs += I.size
    if not costs:
        raise ValueError("no eval batch has 2 or more inputs")
    cost = float(np.sum(costs))
    logconf = len(costs) * math.log(confidence)
    eps = (cost - math.log(delta - (1.0 - math.exp(logconf)))) / lam
    return PaperBDPResult(epsilon=float(eps), privacy_cost=cost, batch_costs=[float(c) for c in costs], q=float(q),
                          n_batches=len(costs), n_pairs=int(n_pairs), renyi_order=lam, delta=delta,
                          confidence=float(confidence), moment_order=moment)
