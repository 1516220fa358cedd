"""The live path's reuse gives the very values of a fresh computation."""

import warnings

import numpy as np
import pytest
import torch

from engine.nvdp import explore as X
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.protocol import EvalProtocol, evaluate_bounds


def _post(n=40, K=6, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, K + 1, (n,), generator=g)
    lengths[: n // 2] = K  # many same-length pairs, so the strict exact form has finite pairs
    mask = torch.arange(K)[None, :] < lengths[:, None]
    mu = torch.randn(n, K, D, generator=g) * 2.0
    sigma = 0.2 + torch.rand(n, K, D, generator=g)
    alpha = 0.05 + 2.0 * torch.rand(n, K, generator=g)
    mu[:, 0], sigma[:, 0], alpha[:, 0] = 0.0, 1.0, 1.0
    mu[~mask], sigma[~mask], alpha[~mask] = 0.0, 1.0, 0.0
    return X.raw_posteriors.__globals__["Posteriors"](mu, sigma, alpha, mask)


def _same(a, b):
    for f in ("rd_exact", "rd_paper"):
        ra, rb = getattr(a, f), getattr(b, f)
        assert np.array_equal(ra.values, rb.values, equal_nan=True), f
        assert (ra.max, ra.n_inf, ra.n_nan) == (rb.max, rb.n_inf, rb.n_nan) or np.isnan(ra.max) and np.isnan(rb.max)
    assert a.bdp.epsilon == b.bdp.epsilon and a.bdp_paper.epsilon == b.bdp_paper.epsilon


@pytest.mark.parametrize("lam", [1.1, 2.0])
def test_memo_gives_the_values_of_a_fresh_computation(lam):
    raw = _post()
    proto = EvalProtocol(n_eval=32, batch_size=8)
    memo = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # an alpha move after a C_mu move: the Gaussian sums come from the memo on the second call
        for clip in (ClipConfig(C_mu=3.0, alpha_min=0.1, alpha_max=1.0, renyi_order=lam),
                     ClipConfig(C_mu=3.0, alpha_min=0.3, alpha_max=0.9, renyi_order=lam),
                     ClipConfig(C_mu=2.0, alpha_min=0.3, alpha_max=0.9, renyi_order=lam)):
            post, _ = raw.clip(clip)
            n_before = len(memo)
            with_memo = evaluate_bounds(post, lam, proto, memo=memo)
            fresh = evaluate_bounds(post, lam, proto)
            _same(with_memo, fresh)
            assert len(memo) >= n_before
    assert any(k[0] == "gauss" for k in memo)  # the memo was used
    # a hit: same mu / sigma content, other alpha -> the Gaussian entries are not recomputed
    keys = {k for k in memo if k[0] == "gauss"}
    post, _ = raw.clip(ClipConfig(C_mu=2.0, alpha_min=0.5, alpha_max=0.9, renyi_order=lam))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same(evaluate_bounds(post, lam, proto, memo=memo), evaluate_bounds(post, lam, proto))
    assert {k for k in memo if k[0] == "gauss"} == keys


# ---- the live path's other reuses: clipping parts, draws, the accuracy after the bounds ----------------------------

from engine.nvdp.clipping import RepeatedClipper, clip_posteriors  # noqa: E402
from engine.nvdp.layer import sample_latents  # noqa: E402
from engine.nvdp.posthoc import LiveEvaluator, sample_latents_with  # noqa: E402
from engine.nvdp.training import evaluate  # noqa: E402

#: a slider session: every rule moved, back and forth, off and on again
MOVES = [dict(C_mu=3.0, alpha_min=0.1, alpha_max=1.0, renyi_order=1.1, sigma_max=0.99),
         dict(C_mu=2.0, alpha_min=0.1, alpha_max=1.0, renyi_order=1.1, sigma_max=0.99),
         dict(C_mu=2.0, alpha_min=0.3, alpha_max=1.0, renyi_order=1.1, sigma_max=0.99),
         dict(C_mu=2.0, alpha_min=0.3, alpha_max=0.8, renyi_order=2.0, sigma_max=0.99),
         dict(C_mu=2.0, alpha_min=0.3, alpha_max=0.8, renyi_order=2.0, sigma_max=None),
         dict(enabled=False),
         dict(C_mu=3.0, alpha_min=0.1, alpha_max=1.0, renyi_order=1.1, sigma_max=0.99),
         dict(C_mu=0.05, alpha_min=0.0, alpha_max=5.0, renyi_order=3.0, sigma_max=None)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_repeated_clipper_gives_clip_posteriors_bit_for_bit(dtype):
    raw = _post(n=30, K=7, D=16, seed=3)
    raw = type(raw)(raw.mu.to(dtype) * 3.0, raw.sigma.to(dtype), raw.alpha.to(dtype), raw.mask)
    rc = RepeatedClipper(raw.mu, raw.sigma, raw.alpha, raw.mask)
    for kw in MOVES:
        cfg = ClipConfig(**kw)
        got = rc(cfg)
        ref = clip_posteriors(raw.mu, raw.sigma, raw.alpha, raw.mask, cfg)
        for a, b in zip(got[:3], ref[:3]):
            assert a.dtype == b.dtype and torch.equal(a, b), kw
        assert got[3] == ref[3], kw
        if cfg.enabled:  # the stored floats lie in the ball, as clip_posteriors promises
            assert bool((torch.linalg.vector_norm(got[0].double(), dim=-1) <= cfg.C_mu).all())
    assert not rc(ClipConfig(C_mu=0.05)).__getitem__(0).requires_grad


def test_repeated_clipper_refuses_bad_inputs_on_every_call():
    raw = _post(n=6, K=4, D=3)
    mu = raw.mu.clone()
    mu[2, 1, 0] = float("nan")
    rc = RepeatedClipper(mu, raw.sigma, raw.alpha, raw.mask)
    for _ in range(2):  # not validated once and then trusted: nothing is ever clipped
        with pytest.raises(ValueError, match="mu has 1 non-finite entries"):
            rc(ClipConfig())
    with pytest.raises(TypeError, match="ClipConfig"):
        RepeatedClipper(raw.mu, raw.sigma, raw.alpha, raw.mask)({"C_mu": 1.0})
    with pytest.raises(ValueError, match="shape mismatch"):
        RepeatedClipper(raw.mu, raw.sigma[:, :2], raw.alpha, raw.mask)


def test_private_generator_draws_are_those_of_sample_latents_and_leave_the_global_stream_alone():
    raw = _post(n=12, K=5, D=6, seed=4)
    torch.manual_seed(11)
    z_ref, pi_ref = sample_latents(raw)
    torch.manual_seed(99)
    before = torch.random.get_rng_state()
    z, pi, eps = sample_latents_with(raw, torch.Generator().manual_seed(11), return_eps=True)
    assert torch.equal(z, z_ref) and torch.equal(pi, pi_ref)
    assert torch.equal(z, raw.mu + raw.sigma * eps)
    assert torch.equal(torch.random.get_rng_state(), before)


@pytest.fixture(scope="module")
def tiny_live():
    from conftest import tiny_nvdp

    return tiny_nvdp(seed=5, n=37)


def test_live_accuracy_after_the_bounds_is_that_of_a_fresh_evaluation(tiny_live):
    """Every move of a slider session: bounds first (no accuracy), then the accuracy, equal to ``evaluate``."""
    model, states, y = tiny_live
    live = LiveEvaluator(model, states, y, batch_size=16)  # 3 batches: the draws of later batches depend on earlier alphas
    proto = EvalProtocol(n_eval=20, batch_size=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        seen = set()
        for kw in MOVES:
            cfg = ClipConfig(**kw)
            quick = live.evaluate(cfg, protocol=proto, seed=3, with_accuracy=False)
            assert quick.accuracy is None and quick.nan_count == -1
            assert live.has_accuracy(cfg, 3) == (str(kw) in seen)  # memoised only once computed
            seen.add(str(kw))
            full = live.complete(quick)
            ref = evaluate(model, states, y, clip=cfg, seed=3, batch_size=16)
            assert (full.accuracy, full.nan_count, full.inf_count) == (ref.accuracy, ref.nan_count, ref.inf_count), kw
            assert live.has_accuracy(cfg, 3) and live.complete(full) is full
            # the bounds with the settings-keyed memo are those of the fresh posteriors
            post, _ = live.raw.clip(cfg)
            _same(full, evaluate_bounds(post, cfg.renyi_order, proto))
    assert {k[0] for k in live._noise} <= {("alpha", (0.1, 1.0)), ("alpha", (0.0, 5.0)), ("alpha", None), ("alpha", (0.3, 0.8)),
                                            ("alpha", (0.3, 1.0))}


def test_order_curve_from_the_live_caches_is_the_fresh_curve_and_ignores_the_slider_order(tiny_live):
    from engine.nvdp.order_curve import bdp_order_curve

    model, states, y = tiny_live
    live = LiveEvaluator(model, states, y, batch_size=16)
    proto = EvalProtocol(n_eval=20, batch_size=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for lam in (1.1, 2.0):
            clip = ClipConfig(C_mu=2.0, alpha_min=0.4, alpha_max=0.9, renyi_order=lam, sigma_max=0.99)
            fresh = bdp_order_curve(live.raw, clip, orders=(1.05, 1.5, 3.0), protocol=proto)
            cached = bdp_order_curve(live.raw, clip, orders=(1.05, 1.5, 3.0), protocol=proto, live=live)
            assert fresh == cached
        # the page's evaluation at a curve order is then a cache hit with the same values
        at = ClipConfig(C_mu=2.0, alpha_min=0.4, alpha_max=0.9, renyi_order=1.5, sigma_max=0.99)
        assert live.bounds(at, proto).rd_exact is live.evaluate(at, protocol=proto, with_accuracy=False).rd_exact
        assert live.evaluate(at, protocol=proto, with_accuracy=False).bdp.epsilon == fresh["eps_guarantee"][1] or \
            np.isnan(fresh["eps_guarantee"][1])


def test_repeated_clipper_shared_by_threads_gives_the_same_values():
    """The page shares one evaluator (and clipper) between sessions: concurrent moves must not mix caches."""
    from concurrent.futures import ThreadPoolExecutor

    raw = _post(n=40, K=6, D=32, seed=7)
    rc = RepeatedClipper(raw.mu * 3.0, raw.sigma, raw.alpha, raw.mask, keep=1)
    cfgs = [ClipConfig(**kw) for kw in MOVES]
    refs = [clip_posteriors(raw.mu * 3.0, raw.sigma, raw.alpha, raw.mask, c) for c in cfgs]

    def run(i):
        for j in range(40):
            k = (i + j) % len(cfgs)
            got = rc(cfgs[k])
            if not (all(torch.equal(a, b) for a, b in zip(got[:3], refs[k][:3])) and got[3] == refs[k][3]):
                return False
        return True

    with ThreadPoolExecutor(4) as ex:
        assert all(ex.map(run, range(4)))


def test_paper_accountant_reuses_its_dirichlet_terms_across_mean_and_order_moves_with_the_same_values():
    """The Dirichlet terms of the authors' accountant depend on the pseudo-counts alone: one memo shared
    across C_mu and order moves gives bit-identical batch costs, and a move that keeps alpha adds no entry."""
    raw = _post(n=48, K=6, D=8, seed=3)
    proto = EvalProtocol(n_eval=48, batch_size=16)
    memo = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i, (c_mu, lam) in enumerate([(3.0, 1.1), (2.0, 1.1), (2.0, 2.0), (1.0, 3.0), (3.0, 1.5)]):
            clip = ClipConfig(C_mu=c_mu, alpha_min=0.3, alpha_max=0.9, renyi_order=lam)
            post, _ = raw.clip(clip)
            dir_entries = {k: dict(v) for k, v in memo.items() if k[0] == "paper_dir"}
            got = evaluate_bounds(post, lam, proto, memo=memo).bdp_paper
            ref = evaluate_bounds(post, lam, proto).bdp_paper
            assert got["batch_costs"] == ref["batch_costs"] and got.epsilon == ref.epsilon, (c_mu, lam)
            after = {k for k, v in memo.items() if k[0] == "paper_dir"}
            if i:  # alpha unchanged: the same batches' entries, only new orders k added to them
                assert after == set(dir_entries)
    # each batch keeps one column per moment k = 0..int(lambda + 1) over the orders used (k = 1 has no
    # Dirichlet term: 1/(k-1))
    cols = [set(v) for k, v in memo.items() if k[0] == "paper_dir"]
    assert cols and all(c == {0.0, 2.0, 3.0, 4.0} for c in cols)


def test_paper_accountant_reuses_its_batch_mean_blur_across_mean_moves_with_the_same_values(tiny_live):
    """sigma_R of each batch depends on sigma and the kept components alone: a C_mu move reuses it (no new
    entry), an order move (the sigma floor) computes new ones, and every batch cost is that of a fresh call."""
    model, states, y = tiny_live
    live = LiveEvaluator(model, states, y, batch_size=16)
    proto = EvalProtocol(n_eval=20, batch_size=5)

    def entries():
        return {k for k in live._memo if k[0] == "paper_sigma_r"}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        seen = []
        for c_mu, lam in [(3.0, 1.1), (2.0, 1.1), (1.0, 1.1), (1.0, 2.0)]:
            clip = ClipConfig(C_mu=c_mu, alpha_min=0.3, alpha_max=0.9, renyi_order=lam)
            got = live.bounds(clip, proto).bdp_paper
            post, _ = live.raw.clip(clip)
            ref = evaluate_bounds(post, lam, proto).bdp_paper
            assert got["batch_costs"] == ref["batch_costs"] and got.epsilon == ref.epsilon, (c_mu, lam)
            seen.append(entries())
    assert seen[0] and seen[1] == seen[0] and seen[2] == seen[0]  # C_mu moves: the same entries, none added
    assert seen[3] > seen[0]  # an order move moves the sigma floor: new entries
