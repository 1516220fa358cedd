"""The live path's reuse (issue 14 item 7) gives the very values of a fresh computation."""

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
