"""BDP over Renyi orders: tightest order, and computed reasons for an infinite guarantee."""

from __future__ import annotations

import math

import torch

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.layer import Posteriors
from engine.nvdp.order_curve import bdp_order_curve, infinity_reasons
from engine.nvdp.protocol import EvalProtocol


def _posteriors(lengths, sigma_lo=0.8, seed=0):
    g = torch.Generator().manual_seed(seed)
    B, K, D = len(lengths), max(lengths), 4
    mu = 0.3 * torch.randn(B, K, D, generator=g, dtype=torch.float64)
    mu[:, 0] = 0
    sigma = sigma_lo + (1 - sigma_lo) * torch.rand(B, K, D, generator=g, dtype=torch.float64)
    sigma[:, 0] = 1
    alpha = 0.5 + 0.5 * torch.rand(B, K, generator=g, dtype=torch.float64)
    alpha[:, 0] = 1
    mask = torch.arange(K)[None, :] < torch.tensor(lengths)[:, None]
    return Posteriors(mu, sigma, torch.where(mask, alpha, torch.zeros_like(alpha)), mask)


def test_tightest_order_is_the_smallest_finite_epsilon_and_high_orders_say_why():
    post = _posteriors([3] * 8)  # equal lengths: only the std / alpha conditions can bite
    proto = EvalProtocol(n_eval=8, batch_size=4)
    curve = bdp_order_curve(post, ClipConfig(enabled=False), orders=(1.05, 1.1, 1.5, 3.0), protocol=proto)
    eps = curve["eps_guarantee"]
    fin = [(o, e) for o, e in zip(curve["orders"], eps) if math.isfinite(e)]
    assert fin and curve["best_guarantee"] == min(fin, key=lambda t: t[1])
    # at order 3 the accountant uses m = 4: the std ratio must exceed sqrt(3/4) = 0.866 (ours reaches ~0.8)
    smin = float(post.sigma[post.mask].min())
    assert math.isinf(eps[-1]) and smin < math.sqrt(0.75)
    assert any("std ratio" in r and "sigma_max <" in r for r in curve["reasons"][-1])
    # the paper form is finite everywhere here (the authors' accountant maps undefined terms to 0)
    assert all(math.isfinite(e) for e in curve["eps_paper"])


def test_different_lengths_are_named_as_the_cause():
    post = _posteriors([3, 2, 3, 3], sigma_lo=0.95)
    reasons = infinity_reasons(post, ClipConfig(enabled=False), EvalProtocol(n_eval=4, batch_size=4))
    assert any("different lengths" in r for r in reasons)
    same = _posteriors([3, 3, 3, 3], sigma_lo=0.95)
    assert not any("different lengths" in r for r in infinity_reasons(same, ClipConfig(enabled=False),
                                                                      EvalProtocol(n_eval=4, batch_size=4)))
