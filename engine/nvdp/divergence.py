"""Renyi divergences: exact closed forms and the pairwise RD bound of NVDP (exact and paper forms).

The Renyi divergence of order ``renyi_order`` = lambda > 1 between densities p and q is

    D_lambda(p || q) = 1 / (lambda - 1) * ln integral p(x)^lambda q(x)^(1 - lambda) dx     (nats).

It is nonnegative, zero iff p = q, nondecreasing in lambda, and +inf when the integral diverges.

Closed forms (``docs/specs/NVDP.md`` section 4; standard results, e.g. Gil, Alajaji & Linder,
"Renyi divergence measures for commonly used univariate continuous distributions", Inf. Sci. 2013):

* Gaussian, per dimension, with ``s2 = lambda s_b^2 + (1 - lambda) s_a^2`` (must be > 0, else +inf)::

      D(N(m_a, s_a^2) || N(m_b, s_b^2)) = lambda (m_a - m_b)^2 / (2 s2)
                                          + ln(s / (s_a^(1 - lambda) s_b^lambda)) / (1 - lambda)

* Gamma(a, 1) vs Gamma(b, 1), with ``c = lambda a - (lambda - 1) b`` (must be > 0, else +inf)::

      D = lnG(c) / (lambda - 1) - lambda / (lambda - 1) lnG(a) + lnG(b)

* Dirichlet, with ``c = lambda a + (1 - lambda) b`` (every c_i must be > 0, else +inf)::

      D = [ln B(c) - lambda ln B(a) - (1 - lambda) ln B(b)] / (lambda - 1),
      ln B(x) = sum_i lnG(x_i) - lnG(sum_i x_i).

The pairwise bound (:func:`pairwise_rd_bound`) adds, for two inputs, the Dirichlet term of the
weights and the Gaussian terms of every component and dimension (El Zein & Henderson,
arXiv:2601.02307, Eq. 7: a sample is an ordered list of weights and one vector per component).

Examples
--------
>>> round(float(renyi_gaussian(0.3, 0.8, -0.5, 1.2, renyi_order=1.1)), 6)
0.366708
>>> round(float(renyi_gaussian(-0.5, 1.2, 0.3, 0.8, renyi_order=1.1)), 6)
0.890763
>>> float(renyi_gaussian(0.0, 1.0, 0.0, 0.2, renyi_order=1.1))  # s2 = 1.1*0.04 - 0.1*1 < 0
inf
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from engine.nvdp.closed_forms import (  # noqa: F401  (re-exported: the public names of this module)
    renyi_dirichlet,
    renyi_dirichlet_torch,
    renyi_gamma,
    renyi_gamma_torch,
    renyi_gaussian,
    renyi_gaussian_torch,
    validate_renyi_order,
)
from engine.nvdp.paper_protocol import outlier_filter
from engine.nvdp.rd_kernel import (_gauss_pair_sums, _log_beta_masked, _nanmean_entries, _pair_rows, _single_intraop_thread, _sum_log_var,
                                   memo_put)

__all__ = [
    "validate_renyi_order",
    "renyi_gaussian",
    "renyi_gamma",
    "renyi_dirichlet",
    "renyi_gaussian_torch",
    "renyi_gamma_torch",
    "renyi_dirichlet_torch",
    "RDBoundResult",
    "pairwise_rd_bound",
    "FORMS",
]

#: The two labelled forms of the pairwise bound (NVDP.md section 4).
FORMS = ("exact", "paper")


# --------------------------------------------------------------------------------------------
# the pairwise RD bound
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RDBoundResult:
    """Pairwise Renyi-divergence bound over pairs of inputs (output of :func:`pairwise_rd_bound`).

    Attributes
    ----------
    max : float
        ``form="exact"``: the true maximum of ``values`` over the evaluated pairs (``inf`` if any
        pair is infinite; NaN pairs are excluded and counted in ``n_nan``; NaN if all are NaN).
        ``form="paper"``: the authors' figure, the maximum over eval batches of the batch maximum
        **after** the |z| > ``outlier_z`` filter; the true maximum is ``max_unfiltered``.
    mean : float
        ``exact``: mean of the non-NaN values (``inf`` if any is infinite). ``paper``: the mean over
        eval batches of the filtered batch means (filtered pairs count as 0, as in the authors' code).
    values : ndarray of float64, shape (n_pairs,)
        The per-pair bound, in nats (before any filter).
    pair_index : ndarray of int64, shape (n_pairs, 2)
        Input indices ``(i, j)`` with ``i < j`` of each pair (the first is "a", the second "b").
    n_pairs : int
    form : str
        ``"exact"`` or ``"paper"``.
    renyi_order : float
    n_inf, n_nan : int
        How many pairs are ``+inf`` / NaN (never dropped silently). ``n_nan`` counts both kinds of
        NaN: numerical failures of an input and the paper form's undefined pairs (``n_undefined``).
    n_undefined : int
        ``paper`` only: pairs whose value is NaN although both inputs are valid, because the
        authors' Dirichlet proxy is ``-inf + inf`` there: the argument ``lambda alpha_0 - (lambda - 1)
        alpha'_0`` (and ``alpha_i t``) sits on a pole of ln Gamma (0 or a negative integer), so the
        totals' term is -inf and a component term +inf. The authors' code gives such a pair NaN too
        (and its batch max and mean then NaN); here such pairs are left out of the batch max and
        mean (the NaN-dropping reductions) and counted. 0 for ``exact``.
    direction : str
        ``"max"``, ``"forward"`` (D(a||b)), ``"backward"`` (D(b||a)) or ``"paper"``.
    max_unfiltered : float
        The true maximum over the evaluated pairs (same rules as ``max`` of the exact form).
    mean_finite : float
        Mean over the finite values only (NaN if none), a display aid next to an infinite mean.
    batch_index : ndarray of int64, shape (n_pairs,)
        Eval-batch id of each pair (all 0 when ``pairs="all"``). Feed it to
        :func:`engine.nvdp.bdp.bdp_epsilon`.
    kept : ndarray of bool, shape (n_pairs,)
        Pairs that survive the paper's outlier filter (all True for ``exact``).
    n_filtered : int
        Pairs zeroed by the outlier filter (0 for ``exact``).
    padding : str
        The treatment of components that are padding on exactly one side (``"prior"``/``"strict"``).
    n_latent : int
        The normaliser of the paper form (latent positions per input); K for ``exact`` (unused).
    """

    max: float
    mean: float
    values: np.ndarray
    pair_index: np.ndarray
    n_pairs: int
    form: str
    renyi_order: float
    n_inf: int
    n_nan: int
    direction: str
    max_unfiltered: float
    mean_finite: float
    batch_index: np.ndarray
    kept: np.ndarray
    n_filtered: int = 0
    padding: str = "prior"
    n_latent: int = 0
    n_undefined: int = 0

    def to_dict(self, *, include_values: bool = False) -> dict:
        """Plain-Python summary (JSON-ready; ``inf`` stays a float ``inf``).

        Parameters
        ----------
        include_values : bool, default False
            Also include ``values``, ``pair_index``, ``batch_index`` and ``kept`` as lists.
        """
        out = {
            "form": self.form,
            "renyi_order": float(self.renyi_order),
            "direction": self.direction,
            "padding": self.padding,
            "n_pairs": int(self.n_pairs),
            "max": float(self.max),
            "mean": float(self.mean),
            "max_unfiltered": float(self.max_unfiltered),
            "mean_finite": float(self.mean_finite),
            "n_inf": int(self.n_inf),
            "n_nan": int(self.n_nan),
            "n_undefined": int(self.n_undefined),
            "n_filtered": int(self.n_filtered),
            "n_latent": int(self.n_latent),
        }
        if include_values:
            out["values"] = self.values.tolist()
            out["pair_index"] = self.pair_index.tolist()
            out["batch_index"] = self.batch_index.tolist()
            out["kept"] = self.kept.tolist()
        return out


def _as_tensor(x, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach()
    try:
        return torch.as_tensor(np.asarray(x))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a torch.Tensor or array-like, got {type(x).__name__}") from None



#: Pairs per chunk of the Dirichlet terms (bounds their (chunk x K) float64 temporaries).
_DIR_CHUNK = 2048


def _one_sided(mask, I, J):
    """Per pair: some position is padding on exactly one side, i.e. the two mask rows differ
    (bool of shape (n_pairs,); compared through the ids of the distinct mask rows)."""
    _, group = torch.unique(mask, dim=0, return_inverse=True)
    return group[I] != group[J]


def _gauss_same_mask_pairs(mu_w, sig_w, lam, mask, I, J, batch_ids, max_chunk_elements, n_workers, logvar_k):
    """Gaussian pair sums of the strict exact form, computed only for pairs with the same mask.

    Under ``padding="strict"`` every pair whose masks differ is +inf whatever its Gaussian terms
    (a component present on one side only), so those pairs are not evaluated (their rows stay 0
    and the caller sets them to +inf). The inputs are permuted so that each mask pattern is
    contiguous, in the original order within a pattern, so the pairs of a pattern (within one eval
    batch) form rows of contiguous j ranges and keep their orientation (a before b); the kernel
    reads the inputs through the permutation (``rowid``: no permuted copy of ``mu``). The kernel's
    global choices (folding, the safe-range check) depend only on per-(k, d) maxima and minima over
    all inputs, which a permutation does not change, so the evaluated pairs get the same per-element
    arithmetic as when every pair is evaluated.
    """
    n_pairs = I.numel()
    g_fwd = torch.zeros(n_pairs, dtype=torch.float64)
    g_bwd = torch.zeros(n_pairs, dtype=torch.float64)
    b_fwd = torch.zeros(n_pairs, dtype=torch.bool)
    b_bwd = torch.zeros(n_pairs, dtype=torch.bool)
    _, group = torch.unique(mask, dim=0, return_inverse=True)
    perm = torch.argsort(group, stable=True)
    inv_perm = torch.argsort(perm)
    B = mask.shape[0]
    # the eval batch of each input (pairs are only within one batch; "all" has a single batch)
    batch_of = torch.zeros(B, dtype=torch.long)
    batch_of[I] = batch_ids
    batch_of[J] = batch_ids
    g_sorted = group[perm]
    b_sorted = batch_of[perm]
    rows = []
    start = 0
    while start < B:
        end = start
        while end < B and g_sorted[end] == g_sorted[start]:
            end += 1
        for p in range(start, end - 1):
            q_end = p + 1
            while q_end < end and b_sorted[q_end] == b_sorted[p]:
                q_end += 1
            if q_end > p + 1:
                rows.append((p, p + 1, q_end, 0))
        start = end
    if not rows:
        return g_fwd, g_bwd, b_fwd, b_bwd, None
    pos = torch.full((B, B), -1, dtype=torch.long)
    pos[I, J] = torch.arange(n_pairs)
    counts = torch.tensor([j1 - j0 for _, j0, j1, _ in rows])
    Ip = perm[torch.repeat_interleave(torch.tensor([r[0] for r in rows]), counts)]
    Jp = perm[torch.cat([torch.arange(j0, j1) for _, j0, j1, _ in rows])]
    where = pos[Ip, Jp]
    if bool((where < 0).any()):  # pragma: no cover - a pair outside the requested pairs (internal error)
        raise RuntimeError("internal error: a same-mask pair outside the requested pairs")
    sub_f, sub_b, bad_f, bad_b, _ = _gauss_pair_sums(
        mu_w, sig_w, lam, rows, max_chunk_elements, n_workers=n_workers, mask=mask[perm], logvar_k=logvar_k[perm],
        rowid=perm)
    del inv_perm
    g_fwd[where] = sub_f
    g_bwd[where] = sub_b
    b_fwd[where] = bad_f
    b_bwd[where] = bad_b
    return g_fwd, g_bwd, b_fwd, b_bwd, None


def _dirichlet_proxy_nan(a, wa, cfac, tfac, lam):
    """The authors' Dirichlet proxy with their arithmetic: ``lgamma`` of a negative argument is
    ``ln|Gamma|`` (torch), NaN component terms are dropped (``nansum``); not normalised by n."""
    lg = torch.lgamma
    tot = torch.where(wa, a, torch.zeros_like(a)).sum(-1)
    f1 = -(1.0 / (lam - 1.0)) * lg(tfac * tot) - lg(cfac * tot) + (lam / (lam - 1.0)) * lg(tot)
    beta = a * cfac[:, None]
    with torch.no_grad():
        f2 = (1.0 / (lam - 1.0)) * lg(a * tfac[:, None]) + lg(beta) - (lam / (lam - 1.0)) * lg(a)
    f2 = torch.where(wa & ~torch.isnan(f2), f2, torch.zeros_like(f2)).sum(-1)
    return f1 + f2


def _gauss_terms(form, padding, nanmean, mu_w, sig_w, lam, mask, I, J, batch_ids, rows, max_chunk_elements,
                 n_workers, logvar_k, D):
    """Gaussian pair sums (forward, backward) of :func:`pairwise_rd_bound`: +inf where undefined,
    the authors' NaN-mean repair of the backward entries for the paper form."""
    with torch.no_grad():
        if form == "exact" and padding == "strict":
            s_fwd, s_bwd, bad_fwd, bad_bwd, entries = _gauss_same_mask_pairs(
                mu_w, sig_w, lam, mask, I, J, batch_ids, max_chunk_elements, n_workers, logvar_k)
        else:
            s_fwd, s_bwd, bad_fwd, bad_bwd, entries = _gauss_pair_sums(
                mu_w, sig_w, lam, rows, max_chunk_elements, n_workers=n_workers,
                mask=mask, logvar_k=logvar_k, want_bad_bwd=nanmean, want_fwd=form == "exact")
    gs_fwd = torch.where(bad_fwd, math.inf, s_fwd)
    if nanmean and entries is not None and entries.numel():
        # many small float64 passes: with torch's intra-op threads each waited on the other thread (on a loaded
        # 2-core machine up to 10x the time of one thread); element-wise ops and per-row sums, the same values
        with _single_intraop_thread():
            fix = _nanmean_entries(entries[:, 0], entries[:, 1], I, J, mu_w, sig_w, mask, lam, D)
        gs_bwd = s_bwd.index_add(0, entries[:, 0], fix)
        gs_bwd = torch.where(torch.isfinite(gs_bwd), gs_bwd, math.inf)
    else:
        gs_bwd = torch.where(bad_bwd, math.inf, s_bwd)
    del s_fwd, s_bwd
    return gs_fwd, gs_bwd


def pairwise_rd_bound(
    mu,
    sigma,
    alpha,
    mask,
    *,
    renyi_order: float = 1.1,
    form: str = "exact",
    pairs: str | None = None,
    batch_size: int = 16,
    outlier_z: float | None = 0.5,
    outlier_ddof: int = 0,
    undefined: str = "nanmean",
    direction: str | None = None,
    padding: str = "prior",
    n_latent: int | None = None,
    alpha_cutoff: float = 1e-4,
    dtype: torch.dtype = torch.float32,
    max_chunk_elements: int = 1 << 18,
    n_workers: int | None = None,
    memo: tuple | None = None,
) -> RDBoundResult:
    """Pairwise Renyi-divergence bound between the NVIB posteriors of pairs of inputs.

    For two inputs a and b the shared object is one sample (pi, z): Dirichlet weights over the
    components and one Gaussian draw per component. Treating the sample as an ordered list
    (El Zein & Henderson, arXiv:2601.02307, Eq. 7; NVDP.md section 4), the Renyi divergence of the
    two sample distributions is bounded by the Dirichlet term plus the sum of the Gaussian terms::

        bound(a || b) = D(Dir(alpha_a) || Dir(alpha_b)) + sum_k sum_d D(N(mu_akd, s_akd^2) || N(mu_bkd, s_bkd^2))

    Parameters
    ----------
    mu, sigma : torch.Tensor or array_like of shape (B, K, D)
        Posterior means and standard deviations (after clipping, if any) of B inputs, K latent
        components (component 0 is the prior component), D dimensions.
    alpha : torch.Tensor or array_like of shape (B, K)
        Pseudo-counts; padding has alpha = 0 (its value is not used: ``mask`` decides).
    mask : torch.Tensor or array_like of bool, shape (B, K)
        True for a real component, including the prior component (``mask[:, 0]`` must be True).
    renyi_order : float, default 1.1
        lambda > 1.
    form : {"exact", "paper"}, default "exact"
        ``"exact"``: the sums above in nats over all components and dimensions.
        ``"paper"``: the authors' protocol (see Notes), comparable with their tables.
    pairs : {"all", "batch"} or None, default None
        ``"all"``: every unordered pair (B(B-1)/2). ``"batch"``: pairs within consecutive eval
        batches of ``batch_size`` inputs (the authors' protocol). None means "all" for ``exact``
        and "batch" for ``paper``. With ``form="paper", pairs="all"`` the outlier filter and the
        max/mean treat all pairs as one batch.
    batch_size : int, default 16
        Eval-batch size for ``pairs="batch"`` (>= 2). The last batch may be smaller.
    outlier_z : float or None, default 0.5
        ``paper`` only: within each batch, pairs whose z-score ``|r - mean(r)| / std(r)`` exceeds
        this are set to 0 before the max and the mean. None disables the filter.
    outlier_ddof : {0, 1}, default 0
        ``paper`` only: degrees of freedom of that std. 0 (population std, torch
        ``std(unbiased=False)``) is the authors'; 1 was this module's choice before the one protocol.
    undefined : {"nanmean", "inf"}, default "nanmean"
        ``paper`` only: what a dimension whose Gaussian term is undefined
        (``lambda s_a^2 + (1 - lambda) s_b^2 < 0``) does. ``"nanmean"`` (the authors'): it is left out
        of the mean over dims (a position with every dim undefined contributes 0), and the
        Dirichlet proxy takes ``lgamma`` of negative arguments as ``ln|Gamma|`` as torch does, with
        NaN components dropped. ``"inf"``: the pair is +inf (the conservative reading). The exact
        form (the guarantee) always reports +inf.
    direction : {"max", "forward", "backward"} or None
        ``exact`` only. Both orders are divergences and DP needs both, so the default
        (None -> "max") reports ``max(D(a||b), D(b||a))`` for the unordered pair {a, b} with
        a = ``pair_index[:, 0]``. ``"forward"``/``"backward"`` give one order. The paper form has a
        fixed orientation (below); passing a direction with it raises.
    padding : {"prior", "strict"}, default "prior"
        Components are aligned **by index** (position k of a with position k of b; an ordered
        list). Positions that are padding on both sides are skipped (two identical empty
        components contribute 0). Where exactly one side is padding:

        * ``"prior"`` (default): the padded side is given that input's prior component
          (``mu[:, 0]``, ``sigma[:, 0]``, ``alpha[:, 0]``), i.e. the bound is that of a
          length-hiding mechanism that pads every latent with prior components to the pair's
          common length. Finite whenever the per-position conditions hold.
        * ``"strict"``: literally alpha = 0 on the padded side. Dir(a) then lives on a face of the
          simplex that Dir(b) gives probability 0, so the divergence is ``+inf`` for every pair of
          different lengths (the number of components is disclosed).
    n_latent : int or None
        ``paper`` only: the normaliser n (latent positions per input). None means K (the padded
        latent length N_l, the authors' n = max_seq_length + 1 when K = max_seq_length + 1).
    alpha_cutoff : float, default 1e-4
        ``paper`` only: pseudo-counts <= this are treated as 0 (the authors' cut-off).
    dtype : torch.float32 or torch.float64, default torch.float32
        Working precision of the Gaussian terms (the O(pairs x K x D) part). Sums over positions,
        the Dirichlet terms and all results are float64. float32 agreed with float64 to a
        relative 2.4e-7 on the benchmark's 32,640 pairs (``bench/bench_rd_pairs.py --float64``);
        use float64 for reference values.
    max_chunk_elements : int, default 2**18
        Pairs are processed in chunks of at most this many (pair, component, dim) elements (at
        least one pair), which bounds the working memory (about 4 buffers of this many elements)
        and keeps it cache-sized; 2**18 was the fastest of 2**16..2**20 in ``bench/bench_rd_pairs.py``.
        Per worker: each of the ``n_workers`` threads has its own buffers. Beyond these, the
        fused kernel (the default) forms no (B, K, D) array: ``mu`` and ``sigma`` are read in place
        when they are C-contiguous in the working precision (otherwise one converted copy each),
        and the per-pair results are O(pairs) float64 (B = 256 x 48 x 384 peaks at
        0.48 GB of process RSS, of which ~0.16 GB is numba and LLVM; ``bench/bench_rd_pairs.py``).
    n_workers : int or None, default None
        Python threads that share the pair chunks (torch releases the GIL inside its kernels).
        None means ``torch.get_num_threads()`` (the caller's CPU budget for torch). While the
        chunks are evaluated, torch's intra-op thread count is set to 1 process-wide and restored
        afterwards (one worker per core instead of small ops split across cores, which did not
        scale). The chunks and the arithmetic per pair do not depend on ``n_workers``: values are
        bit-identical for any number of workers.
    memo : (dict, bytes, ...) or None, default None
        Reuse of the Gaussian pair sums between calls whose ``mu``, ``sigma`` and ``mask`` are the
        same (e.g. a move of alpha only): a dict owned by the caller and a digest of the content of
        ``mu``, ``sigma`` and ``mask`` that the caller vouches for
        (:func:`engine.nvdp.protocol.evaluate_bounds` computes it). The sums are keyed by that
        digest and every option they depend on, so a hit returns the very values a recomputation
        would. Not used when some input has a numerical failure. Further elements of the tuple
        (:func:`engine.nvdp.paper_protocol.paper_bdp`'s key of mu alone) are ignored here.

    Returns
    -------
    RDBoundResult
        ``values`` per pair, ``max``, ``mean``, counts of inf/NaN and (paper) the filter.

    Raises
    ------
    TypeError
        If an input is not a tensor/array or ``mask`` is not boolean.
    ValueError
        If ``renyi_order <= 1``, shapes disagree, B < 2, ``mask[:, 0]`` is not all True, or an
        option is outside its accepted set.

    Notes
    -----
    *Infinite values* are legitimate: a Gaussian term is +inf where
    ``lambda s_b^2 + (1 - lambda) s_a^2 <= 0`` and the Dirichlet term where some
    ``lambda alpha_a + (1 - lambda) alpha_b <= 0`` (unclipped models; clipping prevents the
    former only strictly above the floor, see below). They are kept and counted in ``n_inf``.

    *The clipping floor is a boundary, not a margin.* With sigma_b exactly at the floor
    ``sqrt((lambda - 1)/lambda) * sigma_p`` and sigma_a = sigma_p = 1 (e.g. the prior component
    that stands in for padding, or any component with sigma >= 1), ``s2 = 0`` exactly and
    D(a||b) = +inf (the integrand is flat in the tails). Clamped components sit exactly on the
    floor, so a clipped model can still give infinite exact bounds in that direction; a floor a
    little above the boundary (or an upper clip of sigma at sigma_p, NVDP background A1) avoids it.
    *NaN* is given to every pair that involves an
    input with a non-finite mean/std/pseudo-count, a std <= 0 or a pseudo-count <= 0 on a real
    component (a numerical failure of the model); they are counted in ``n_nan`` and a
    ``RuntimeWarning`` is issued.

    *Paper form* (the authors' released code, read via ``background/nvdp_research.md`` sections
    2.2-2.4; implemented from the formulas). For a pair (a, b) with a before b in the batch:

    * Gaussian part: ``(1/n) sum_k mean_d D(N_b,kd || N_a,kd)``, i.e. the divergence of the
      **second** input from the first (the code's orientation), averaged over dims and divided by
      n = ``n_latent`` (positions padded on both sides contribute 0 but count in n; positions
      padded on one side follow ``padding``).
    * Dirichlet proxy: ``(1/n) D(Dir(alpha_a) || Dir(beta))`` with ``beta = alpha_b,0 alpha_a / alpha_a,0``
      (the second input's total ``alpha_b,0`` spread in the first input's proportions), over the
      components of a with alpha > ``alpha_cutoff``; +inf when
      ``lambda - (lambda - 1) alpha_b,0 / alpha_a,0 <= 0`` (the authors' lgamma of a negative
      number returned a finite value there).
    * Within each eval batch, r = the pair values, ``z = (r - mean r) / std r`` (std with
      ``outlier_ddof``, default 0 as the authors' ``std(unbiased=False)``), computed over the finite values; pairs with ``|z| > outlier_z``
      are set to 0; the batch contributes ``max`` and ``mean`` of the filtered values (infinite
      values are never filtered). ``max`` = max over batches, ``mean`` = mean of batch means.
      "z" here is the z-score of the per-pair RD within its batch, not the latent sample z.

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> mu = torch.randn(4, 3, 5, generator=g, dtype=torch.float64); mu[:, 0] = 0
    >>> sigma = torch.full((4, 3, 5), 0.9, dtype=torch.float64); sigma[:, 0] = 1
    >>> alpha = torch.ones(4, 3, dtype=torch.float64); mask = torch.ones(4, 3, dtype=torch.bool)
    >>> res = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    >>> res.n_pairs, res.n_inf, bool(res.max >= res.mean > 0)
    (6, 0, True)
    """
    lam = validate_renyi_order(renyi_order)
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    if pairs is None:
        pairs = "all" if form == "exact" else "batch"
    if pairs not in ("all", "batch"):
        raise ValueError(f"pairs must be 'all' or 'batch', got {pairs!r}")
    if form == "exact":
        direction = "max" if direction is None else direction
        if direction not in ("max", "forward", "backward"):
            raise ValueError(f"direction must be 'max', 'forward' or 'backward', got {direction!r}")
    else:
        if direction is not None:
            raise ValueError(
                "direction must be None for form='paper' (the paper form has the authors' fixed orientation), "
                f"got {direction!r}"
            )
        direction = "paper"
    if padding not in ("prior", "strict"):
        raise ValueError(f"padding must be 'prior' or 'strict', got {padding!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 2:
        raise ValueError(f"batch_size must be an integer >= 2, got {batch_size!r}")
    if outlier_z is not None:
        oz = float(outlier_z)
        if not oz > 0:
            raise ValueError(f"outlier_z must be > 0 or None (accepted range: 0 < outlier_z <= inf), got {outlier_z!r}")
    if outlier_ddof not in (0, 1):
        raise ValueError(f"outlier_ddof must be 0 (population std, the authors') or 1; got {outlier_ddof!r}")
    if undefined not in ("nanmean", "inf"):
        raise ValueError(f"undefined must be 'nanmean' (the authors') or 'inf'; got {undefined!r}")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
    alpha_cutoff = float(alpha_cutoff)
    if not (alpha_cutoff >= 0 and math.isfinite(alpha_cutoff)):
        raise ValueError(f"alpha_cutoff must be finite and >= 0, got {alpha_cutoff!r}")
    if isinstance(max_chunk_elements, bool) or not isinstance(max_chunk_elements, (int, np.integer)) or max_chunk_elements < 1:
        raise ValueError(f"max_chunk_elements must be an integer >= 1, got {max_chunk_elements!r}")
    if n_workers is None:
        n_workers = torch.get_num_threads()
    elif isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
        raise ValueError(f"n_workers must be a positive integer or None, got {n_workers!r}")

    mu = _as_tensor(mu, "mu")
    sigma = _as_tensor(sigma, "sigma")
    alpha = _as_tensor(alpha, "alpha")
    mask = _as_tensor(mask, "mask")
    if mu.ndim != 3:
        raise ValueError(f"mu must have shape (B, K, D), got {tuple(mu.shape)}")
    B, K, D = mu.shape
    if tuple(sigma.shape) != (B, K, D):
        raise ValueError(f"sigma must have the shape of mu {(B, K, D)}, got {tuple(sigma.shape)}")
    if tuple(alpha.shape) != (B, K):
        raise ValueError(f"alpha must have shape (B, K) = {(B, K)}, got {tuple(alpha.shape)}")
    if tuple(mask.shape) != (B, K):
        raise ValueError(f"mask must have shape (B, K) = {(B, K)}, got {tuple(mask.shape)}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be boolean (True = real component), got dtype {mask.dtype}")
    if B < 2:
        raise ValueError(f"need at least 2 inputs to form a pair, got B = {B}")
    if K < 1 or D < 1:
        raise ValueError(f"K and D must be >= 1, got K = {K}, D = {D}")
    if not bool(mask[:, 0].all()):
        raise ValueError("mask[:, 0] must be True for every input (component 0 is the prior component)")
    if n_latent is None:
        n_latent = K
    elif isinstance(n_latent, bool) or not isinstance(n_latent, (int, np.integer)) or n_latent < 1:
        raise ValueError(f"n_latent must be a positive integer or None, got {n_latent!r}")

    # ---- sanitise: flag inputs with numerical failures, fill padding with the prior component
    m3 = mask.unsqueeze(-1)
    al64 = alpha.to(torch.float64)
    fkey = ("finite_mu_sigma", memo[1]) if memo is not None else None  # content-keyed: same tensors, same answer
    ok_ms = memo[0].get(fkey) if fkey is not None else None
    if ok_ms is None:
        # all finite <=> min and max finite (NaN propagates through both); sigma > 0 <=> min > 0.
        # Reductions, not the (B, K, D) temporaries of isfinite (~2 x the data of RSS)
        mu_lo, mu_hi = torch.aminmax(mu)
        sg_lo, sg_hi = torch.aminmax(sigma)
        ok_ms = bool(torch.isfinite(mu_lo) & torch.isfinite(mu_hi) & (sg_lo > 0) & torch.isfinite(sg_hi))
        if fkey is not None:
            memo_put(memo[0], fkey, ok_ms)
    if ok_ms:
        bad = torch.zeros(B, dtype=torch.bool)  # fast path: nothing to flag in mu / sigma
    else:
        bad = ((~torch.isfinite(mu) | ~torch.isfinite(sigma) | (sigma <= 0)) & m3).flatten(1).any(1)
    bad = bad | ((~torch.isfinite(al64) | (al64 <= 0)) & mask).any(1)
    # mu and sigma in the working precision, as given (no copy when they already are): padding
    # positions are read as the input's prior component (position 0) by the kernel, so no padded
    # (B, K, D) copy, and no lambda v, (1 - lambda) v, 1 / v arrays, are formed (memory)
    mu_w = mu.to(dtype).contiguous()
    sig_w = sigma.to(dtype).contiguous()
    al_f = torch.where(mask, al64, al64[:, :1])
    if bool(bad.any()):  # neutral values; the pairs of these inputs become NaN at the end
        mu_w = torch.where(bad[:, None, None], torch.zeros_like(mu_w), mu_w)
        sig_w = torch.where(bad[:, None, None], torch.ones_like(sig_w), sig_w)
        al_f = torch.where(bad[:, None], torch.ones_like(al_f), al_f)
    # (B, K): sum_d ln v, a function of sigma and the mask alone: the exact form, the paper form and
    # the accountant's order lambda + 1 of one evaluation share it through the content-keyed memo
    vkey = ("logvar", memo[1], str(dtype), (B, K, D)) if memo is not None and not bool(bad.any()) else None
    logvar_k = memo[0].get(vkey) if vkey is not None else None
    if logvar_k is None:
        logvar_k = _sum_log_var(sig_w, mask)
        if vkey is not None:
            memo_put(memo[0], vkey, logvar_k)

    rows = _pair_rows(B, pairs, batch_size)
    if not rows:
        raise ValueError("no pairs to evaluate (every eval batch has a single input)")
    counts = torch.tensor([j1 - j0 for _, j0, j1, _ in rows])
    I = torch.repeat_interleave(torch.tensor([r[0] for r in rows]), counts)
    J = torch.cat([torch.arange(j0, j1) for _, j0, j1, _ in rows])
    batch_ids = torch.repeat_interleave(torch.tensor([r[3] for r in rows]), counts)

    # ---- Gaussian terms, per pair and position (both directions), working precision `dtype`
    # Sums over dims and positions per pair, reduced inside the kernel's tiles (no (pairs x K)
    # arrays); a position whose value is not finite (NaN from ln r < 0, or +inf) failed the
    # variance condition: the pair is +inf, or (paper form, the authors' NaN-mean) that
    # position is recomputed as D x the mean over its defined dims.
    nanmean = form == "paper" and undefined == "nanmean"
    mkey = None
    if memo is not None and not bool(bad.any()):
        memo_dict, digest = memo[0], memo[1]
        mkey = ("gauss", digest, form, padding, pairs, int(batch_size), lam, str(dtype), nanmean,
                int(max_chunk_elements), (B, K, D))
    hit = memo_dict.get(mkey) if mkey is not None else None
    if hit is not None:
        gs_fwd, gs_bwd = hit
    else:
        gs_fwd, gs_bwd = _gauss_terms(form, padding, nanmean, mu_w, sig_w, lam, mask, I, J, batch_ids, rows,
                                      max_chunk_elements, n_workers, logvar_k, D)
        if mkey is not None:
            memo_put(memo_dict, mkey, (gs_fwd, gs_bwd))

    if form == "exact":
        one = torch.ones((), dtype=torch.float64)

        def dir_term(x, y, lb_x, lb_y, n_out):
            c = torch.add(x * lam, y, alpha=1.0 - lam)  # lam x + (1 - lam) y
            ok = (c > 0).all(-1)
            val = (torch.lgamma(c).sum(-1) - torch.lgamma(c.sum(-1) - n_out) - lam * lb_x - (1.0 - lam) * lb_y) / (lam - 1.0)
            return torch.where(ok, val, math.inf)

        # In chunks of pairs (the (pairs x K) float64 arrays of one chunk only). Positions outside
        # the union get concentration 1 on both sides: lnG(1) = 0 and c = 1 > 0, so they drop out
        # of the lnG sums; the totals subtract them again.
        # Strict padding: a pair with a one-sided position is +inf whatever its terms (set below),
        # so its Dirichlet terms are not evaluated. ln Gamma of each input's pseudo-counts is taken
        # once (B x K) and gathered per pair (the same values as per pair).
        one_sided = _one_sided(mask, I, J) if padding == "strict" else None
        dir_f = torch.full((I.numel(),), math.inf, dtype=torch.float64)
        dir_b = torch.full((I.numel(),), math.inf, dtype=torch.float64)
        todo = torch.arange(I.numel()) if one_sided is None else torch.nonzero(~one_sided).flatten()
        lg_al = torch.lgamma(al_f)
        lg_one = torch.lgamma(one)
        step = _DIR_CHUNK
        for c0 in range(0, todo.numel(), step):
            sel = todo[c0 : c0 + step]
            Ic, Jc = I[sel], J[sel]
            union = mask[Ic] | mask[Jc]
            n_out = (K - union.sum(-1)).to(torch.float64)
            a = torch.where(union, al_f[Ic], one)
            b = torch.where(union, al_f[Jc], one)
            lb_a = torch.where(union, lg_al[Ic], lg_one).sum(-1) - torch.lgamma(a.sum(-1) - n_out)
            lb_b = torch.where(union, lg_al[Jc], lg_one).sum(-1) - torch.lgamma(b.sum(-1) - n_out)
            dir_f[sel] = dir_term(a, b, lb_a, lb_b, n_out)
            dir_b[sel] = dir_term(b, a, lb_b, lb_a, n_out)
        fwd = dir_f + gs_fwd
        bwd = dir_b + gs_bwd
        if direction == "max":
            vals = torch.maximum(fwd, bwd)
        elif direction == "forward":
            vals = fwd
        else:
            vals = bwd
        if padding == "strict":
            vals = torch.where(one_sided, torch.full_like(vals, math.inf), vals)
    else:
        # Dirichlet proxy: Dir(alpha_a) || Dir(beta), beta = (alpha_b,0 / alpha_a,0) alpha_a
        keep = mask & (al64 > alpha_cutoff)
        al_c = torch.where(keep, al64, torch.zeros_like(al64))
        if bool(bad.any()):
            al_c = torch.where(bad[:, None], torch.ones_like(al_c), al_c)
            keep = torch.where(bad[:, None], mask, keep)
        tot = al_c.sum(-1)
        a = al_c[I]
        wa = keep[I]
        cfac = tot[J] / tot[I]
        tfac = lam - (lam - 1.0) * cfac
        if undefined == "nanmean":
            dir_p = _dirichlet_proxy_nan(a, wa, cfac, tfac, lam)
        else:
            lb_a = _log_beta_masked(a, wa)
            ok = tfac > 0
            tsafe = torch.where(ok, tfac, torch.ones_like(tfac))
            dir_p = (
                _log_beta_masked(a * tsafe[:, None], wa) - lam * lb_a
                - (1.0 - lam) * _log_beta_masked(a * cfac[:, None], wa)
            ) / (lam - 1.0)
            dir_p = torch.where(ok, dir_p, torch.full_like(dir_p, math.inf))
        gauss = gs_bwd / D  # second || first, mean over dims, summed over positions
        if padding == "strict":
            gauss = torch.where(_one_sided(mask, I, J), torch.full_like(gauss, math.inf), gauss)
        vals = (dir_p + gauss) / n_latent

    vals = vals.clamp_min(0.0)  # a divergence is >= 0; float rounding can dip just below
    vals = torch.where(bad[I] | bad[J], torch.full_like(vals, math.nan), vals)
    values = vals.cpu().numpy().astype(np.float64)
    pair_index = torch.stack([I, J], 1).cpu().numpy().astype(np.int64)
    batch_index = batch_ids.cpu().numpy().astype(np.int64)
    n_nan = int(np.isnan(values).sum())
    n_inf = int(np.isinf(values).sum())
    failed = (bad[I] | bad[J]).cpu().numpy()
    n_failed = int(failed.sum())  # NaN because an input failed numerically
    n_undefined = n_nan - n_failed  # NaN of the paper form's proxy (-inf + inf) between valid inputs
    if n_failed:
        warnings.warn(
            f"{n_failed} of {values.size} pairs are NaN: {int(bad.sum())} input(s) have non-finite or non-positive "
            "posterior parameters on real components",
            RuntimeWarning,
            stacklevel=2,
        )
    if n_undefined:
        warnings.warn(
            f"{n_undefined} of {values.size} pairs have no paper-form value (NaN) although both inputs are valid: "
            f"the authors' Dirichlet proxy is -inf + inf where lambda alpha_0 - (lambda - 1) alpha'_0 is 0 or a "
            f"negative integer (a pole of ln Gamma; lambda = {lam:g}). They are left out of the max and mean "
            "(counted in n_undefined); the authors' code would report NaN for their batch.",
            RuntimeWarning,
            stacklevel=2,
        )
    notnan = values[~np.isnan(values)]
    finite = values[np.isfinite(values)]
    max_unf = float(notnan.max()) if notnan.size else math.nan
    mean_finite = float(finite.mean()) if finite.size else math.nan

    if form == "exact":
        kept = np.ones(values.size, dtype=bool)
        mx = max_unf
        mean = float(notnan.mean()) if notnan.size else math.nan
        n_filtered = 0
    else:
        mx, mean, kept = outlier_filter(values, batch_index, outlier_z=outlier_z, ddof=outlier_ddof)
        n_filtered = int((~kept).sum())

    return RDBoundResult(
        max=mx,
        mean=mean,
        values=values,
        pair_index=pair_index,
        n_pairs=int(values.size),
        form=form,
        renyi_order=lam,
        n_inf=n_inf,
        n_nan=n_nan,
        direction=direction,
        max_unfiltered=max_unf,
        mean_finite=mean_finite,
        batch_index=batch_index,
        kept=kept,
        n_filtered=n_filtered,
        padding=padding,
        n_latent=int(n_latent) if form == "paper" else K,
        n_undefined=n_undefined,
    )


def warm_kernels() -> int:
    """Run :func:`engine.nvdp.divergence.pairwise_rd_bound` on 6 small random inputs per precision and form."""
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
