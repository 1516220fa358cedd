"""Renyi-order moves reuse what does not depend on the order, with the values of a fresh computation.

An order move changes the sigma floor and every order-dependent term; what it leaves alone (the paper
accountant's squared distances and Dirichlet terms, v and ln v of each (input, position) in the
authors' NaN-mean) is reused. Each reuse is checked here against a computation without it, bit for bit,
and against a stale answer (a cache that returned the numbers of another order or C_mu would fail).
"""

import math
import warnings

import numpy as np
import pytest
import torch

import engine.nvdp.divergence as dv
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.divergence import pairwise_rd_bound
from engine.nvdp.layer import Posteriors
from engine.nvdp.paper_protocol import paper_bdp
from engine.nvdp.protocol import EvalProtocol, evaluate_bounds
from engine.nvdp.rd_kernel import MEMO_LIMITS, memo_put


def _reference_nanmean_entries(p_idx, k_idx, I, J, mu_w, sig_w, mask, lam, D):
    """The NaN-mean repair as it was: v and ln v computed per entry (blocks of 4096 entries)."""
    out = torch.empty(p_idx.numel(), dtype=torch.float64)
    for s in range(0, p_idx.numel(), 4096):
        pi, ki = p_idx[s : s + 4096], k_idx[s : s + 4096]
        ia, ib = I[pi], J[pi]
        ka = torch.where(mask[ia, ki], ki, 0)
        kb = torch.where(mask[ib, ki], ki, 0)
        va = torch.reciprocal(torch.reciprocal(sig_w[ia, ka].square()).to(torch.float64))
        vb = torch.reciprocal(torch.reciprocal(sig_w[ib, kb].square()).to(torch.float64))
        d2 = (mu_w[ia, ka].to(torch.float64) - mu_w[ib, kb].to(torch.float64)).square()
        s2 = lam * va + (1.0 - lam) * vb
        ok = s2 > 0
        s2s = torch.where(ok, s2, torch.ones_like(s2))
        term = lam * d2 / (2.0 * s2s) + (0.5 * torch.log(s2s) - 0.5 * lam * torch.log(va)
                                         - 0.5 * (1.0 - lam) * torch.log(vb)) / (1.0 - lam)
        cnt = ok.sum(-1)
        mean = torch.where(ok, term, torch.zeros_like(term)).sum(-1) / cnt.clamp_min(1)
        mean = torch.where(cnt > 0, mean, torch.zeros_like(mean))
        mean = torch.where((s2 == 0).any(-1), torch.full_like(mean, math.inf), mean)
        out[s : s + 4096] = mean * D
    return out


def _post(n=48, K=7, D=24, seed=0, dtype=torch.float32):
    """Posteriors with blurs on both sides of 1 (many undefined paper-form dims at orders >= 1.5) and padding."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, K + 1, (n,), generator=g)
    lengths[: n // 2] = K
    mask = torch.arange(K)[None, :] < lengths[:, None]
    mu = torch.randn(n, K, D, generator=g, dtype=torch.float64) * 2.0
    sigma = 0.1 + 1.6 * torch.rand(n, K, D, generator=g, dtype=torch.float64)
    alpha = 0.05 + 2.0 * torch.rand(n, K, generator=g, dtype=torch.float64)
    mu[:, 0], sigma[:, 0], alpha[:, 0] = 0.0, 1.0, 1.0
    mu[~mask], sigma[~mask], alpha[~mask] = 0.0, 1.0, 0.0
    return Posteriors(mu.to(dtype), sigma.to(dtype), alpha.to(dtype), mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("lam", [1.5, 2.0, 3.0])
def test_nanmean_repair_with_per_cell_v_is_the_per_entry_computation_bit_for_bit(monkeypatch, lam, dtype):
    p = _post(n=64, seed=int(lam * 10), dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        calls = []
        new = dv._nanmean_entries

        def spy(*a):
            calls.append(a[0].numel())
            got = new(*a)
            ref = _reference_nanmean_entries(*a)
            assert torch.equal(got, ref) or bool(((got == ref) | (got.isnan() & ref.isnan())).all())
            return got

        monkeypatch.setattr(dv, "_nanmean_entries", spy)
        res = pairwise_rd_bound(p.mu, p.sigma, p.alpha, p.mask, renyi_order=lam, form="paper", batch_size=16,
                                dtype=dtype)
        monkeypatch.setattr(dv, "_nanmean_entries", _reference_nanmean_entries)
        ref = pairwise_rd_bound(p.mu, p.sigma, p.alpha, p.mask, renyi_order=lam, form="paper", batch_size=16,
                                dtype=dtype)
    assert calls and calls[0] > 600  # the repair ran on many entries (several blocks of 512)
    assert np.array_equal(res.values, ref.values, equal_nan=True)
    assert (res.max, res.mean) == (ref.max, ref.mean)


def test_nanmean_repair_of_no_entries_is_empty():
    p = _post(n=4, K=3, D=2)
    e = torch.zeros(0, dtype=torch.long)
    out = dv._nanmean_entries(e, e, torch.tensor([0]), torch.tensor([1]), p.mu, p.sigma, p.mask, 2.0, 2)
    assert out.shape == (0,) and out.dtype == torch.float64


def _same(a, b):
    for f in ("rd_exact", "rd_paper"):
        ra, rb = getattr(a, f), getattr(b, f)
        assert np.array_equal(ra.values, rb.values, equal_nan=True), f
        assert (ra.n_inf, ra.n_nan, ra.n_pairs) == (rb.n_inf, rb.n_nan, rb.n_pairs), f
        assert ra.max == rb.max or (np.isnan(ra.max) and np.isnan(rb.max)), f
    assert a.bdp.epsilon == b.bdp.epsilon or (np.isnan(a.bdp.epsilon) and np.isnan(b.bdp.epsilon))
    assert a.bdp_paper.epsilon == b.bdp_paper.epsilon
    assert a.bdp_paper["batch_costs"] == b.bdp_paper["batch_costs"]


#: a session of order and C_mu moves, with returns to settings seen before (cache hits) and more
#: settings than a memo kind holds (eviction)
SESSION = [(c, lam) for c in (3.0, 2.0, 3.0, 1.0) for lam in (1.1, 1.5, 2.0, 3.0, 1.05, 1.2, 1.01)]


def test_order_and_mean_moves_through_the_memo_give_the_fresh_values(monkeypatch):
    """The evaluator's memo keys (settings, mu alone) across many order and C_mu moves: every result equals
    a computation without memo; one that handed out another order's or C_mu's numbers would not."""
    import engine.nvdp.rd_kernel as rk

    monkeypatch.setitem(rk.MEMO_LIMITS, "gauss", 6)  # evict during the session
    monkeypatch.setitem(rk.MEMO_LIMITS, "paper_d2", 4)
    raw = _post(n=40, K=6, D=16, seed=9)
    proto = EvalProtocol(n_eval=36, batch_size=8)  # 4 whole eval batches, a short last one left out
    memo, seen = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for c_mu, lam in SESSION:
            clip = ClipConfig(C_mu=c_mu, alpha_min=0.2, alpha_max=1.0, renyi_order=lam)
            post, _ = raw.clip(clip)
            key = repr((("mu", c_mu), ("sigma", (clip.sigma_min, clip.sigma_max)))).encode()
            got = evaluate_bounds(post, lam, proto, memo=memo, memo_key=key, memo_mu_key=repr(("mu", c_mu)).encode())
            fresh = evaluate_bounds(post, lam, proto)
            _same(got, fresh)
            seen.setdefault((c_mu, lam), fresh)
    # the session is sensitive to both settings: a stale value would have been caught above
    assert seen[(3.0, 1.5)].rd_paper.values.tolist() != seen[(3.0, 2.0)].rd_paper.values.tolist()
    assert seen[(3.0, 1.5)].bdp_paper.epsilon != seen[(2.0, 1.5)].bdp_paper.epsilon
    kinds = [k[0] for k in memo]
    assert kinds.count("gauss") <= 6 and kinds.count("paper_d2") <= 4
    # the Dirichlet terms of the accountant (pseudo-counts only) outlived the whole session
    assert kinds.count("paper_dir") == 2 * 4


def test_paper_distances_are_reused_across_an_order_move_and_not_across_a_mean_move():
    raw = _post(n=32, K=5, D=8, seed=4)
    memo = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = {}
        for c_mu, lam in ((3.0, 1.5), (3.0, 2.0), (2.0, 2.0)):
            post, _ = raw.clip(ClipConfig(C_mu=c_mu, alpha_min=0.2, alpha_max=1.0, renyi_order=lam))
            before = {k for k in memo if k[0] == "paper_d2"}
            out[(c_mu, lam)] = paper_bdp(post.mu, post.sigma, post.alpha, post.mask, renyi_order=lam,
                                         memo=(memo, b"mu+sigma %r %r" % (c_mu, lam), b"mu %r" % c_mu))
            added = {k for k in memo if k[0] == "paper_d2"} - before
            assert bool(added) == ((c_mu, lam) != (3.0, 2.0))  # the order move added no distances
            ref = paper_bdp(post.mu, post.sigma, post.alpha, post.mask, renyi_order=lam)
            assert out[(c_mu, lam)]["batch_costs"] == ref["batch_costs"] and out[(c_mu, lam)].epsilon == ref.epsilon
    assert out[(3.0, 2.0)].epsilon != out[(2.0, 2.0)].epsilon != out[(3.0, 1.5)].epsilon


def test_paper_bdp_rejects_a_mu_of_another_shape():
    p = _post(n=8, K=3, D=4)
    with pytest.raises(ValueError, match="mu must have the shape of sigma"):
        paper_bdp(p.mu[:, :2], p.sigma, p.alpha, p.mask, batch_size=4)


def test_memo_put_bounds_each_kind_by_itself():
    memo = {}
    for i in range(MEMO_LIMITS["paper_dir"] + 5):
        memo_put(memo, ("paper_dir", i), i)
    for i in range(70):
        memo_put(memo, ("gauss", i), i)
    memo_put(memo, ("gauss", 69), "again")  # a re-put is the newest, not a second entry
    assert [k[1] for k in memo if k[0] == "gauss"] == list(range(70 - MEMO_LIMITS["gauss"], 69)) + [69]
    assert [k[1] for k in memo if k[0] == "paper_dir"] == list(range(5, MEMO_LIMITS["paper_dir"] + 5))
    assert memo[("gauss", 69)] == "again"


@pytest.fixture(scope="module")
def tiny_live():
    from conftest import tiny_nvdp

    return tiny_nvdp(seed=5, n=37)


def test_live_evaluator_order_moves_give_the_values_of_fresh_posteriors(tiny_live):
    """The page's path: one evaluator, order moves at fixed caps and back, then a C_mu move."""
    from engine.nvdp.posthoc import LiveEvaluator

    model, states, y = tiny_live
    live = LiveEvaluator(model, states, y, batch_size=16)
    proto = EvalProtocol(n_eval=20, batch_size=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for c_mu, lam in ((2.0, 1.1), (2.0, 1.5), (2.0, 3.0), (2.0, 1.1), (1.0, 3.0), (1.0, 1.01)):
            clip = ClipConfig(C_mu=c_mu, alpha_min=0.3, alpha_max=0.9, renyi_order=lam)
            got = live.evaluate(clip, protocol=proto, with_accuracy=False)
            post, _ = live.raw.clip(clip)
            _same(got, evaluate_bounds(post, lam, proto))
    assert any(k[0] == "paper_d2" and b"mukey" in k[1] for k in live._memo)


@pytest.mark.parametrize("n_eval", [36, 40])  # a short last eval batch left out of the paper form, or none
def test_evaluate_bounds_is_the_three_pair_computations_made_separately(n_eval):
    """Within one call the three pair computations share mu and sigma's copy, the finiteness check and
    sum_d ln sigma^2 (a memo private to the call): the results are those of calling each separately."""
    from engine.nvdp.bdp import bdp_from_posteriors

    raw = _post(n=44, K=6, D=16, seed=2)
    proto = EvalProtocol(n_eval=n_eval, batch_size=8)
    lam = 2.0
    post, _ = raw.clip(ClipConfig(C_mu=2.5, alpha_min=0.2, alpha_max=1.0, renyi_order=lam))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        b = evaluate_bounds(post, lam, proto)
        n = min(n_eval, len(post))
        k = max(2, int(post.mask[:n].sum(1).max()))
        m = n - n % 8
        mu, sg, al, mk = post.mu[:n, :k], post.sigma[:n, :k], post.alpha[:n, :k], post.mask[:n, :k]
        ex = pairwise_rd_bound(mu, sg, al, mk, renyi_order=lam, form="exact", padding="strict")
        pa = pairwise_rd_bound(mu[:m], sg[:m], al[:m], mk[:m], renyi_order=lam, form="paper", batch_size=8,
                               n_latent=post.mu.shape[1])
        bdp, _ = bdp_from_posteriors(mu, sg, al, mk, renyi_order=lam, batch_size=8, padding="strict")
        pb = paper_bdp(mu[:m], sg[:m], al[:m], mk[:m], renyi_order=lam, batch_size=8, n_eval=m,
                       n_latent=post.mu.shape[1])
    assert np.array_equal(b.rd_exact.values, ex.values, equal_nan=True) and b.rd_exact.n_inf == ex.n_inf
    assert np.array_equal(b.rd_paper.values, pa.values, equal_nan=True) and b.rd_paper.max == pa.max
    assert b.bdp.epsilon == bdp.epsilon and b.bdp_paper["batch_costs"] == pb["batch_costs"]
    assert np.isfinite(b.rd_paper.values).sum() > 10  # not a comparison of infinities only
