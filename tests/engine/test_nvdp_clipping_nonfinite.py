"""clip_posteriors refuses NaN / inf / out-of-range posteriors and projects finite means exactly."""

import math

import pytest
import torch

from engine.nvdp.clipping import ClipConfig, clip_posteriors

CFG = ClipConfig(enabled=True, C_mu=1.0, alpha_max=2.0)


def _inputs():
    mu = torch.tensor([[[0.0, 0.0], [3.0, 4.0], [0.3, 0.4]]])
    sigma = torch.tensor([[[1.0, 1.0], [0.1, 2.0], [0.5, 0.5]]])
    alpha = torch.tensor([[1.0, 5.0, 0.5]])
    mask = torch.tensor([[True, True, True]])
    return mu, sigma, alpha, mask


@pytest.mark.parametrize(
    "which, index, value, match",
    [
        ("mu", (0, 1, 0), math.nan, r"mu has 1 non-finite entries \(1 NaN, 0 inf\)"),
        ("mu", (0, 1, 1), math.inf, r"mu has 1 non-finite entries \(0 NaN, 1 inf\)"),
        ("mu", (0, 2, 0), -math.inf, r"mu has 1 non-finite entries \(0 NaN, 1 inf\)"),
        ("sigma", (0, 1, 0), math.nan, r"sigma has 1 non-finite entries \(1 NaN, 0 inf\)"),
        ("sigma", (0, 2, 1), math.inf, r"sigma has 1 non-finite entries \(0 NaN, 1 inf\)"),
        ("sigma", (0, 2, 1), 0.0, r"sigma has entries <= 0"),
        ("sigma", (0, 2, 1), -1.0, r"sigma has entries <= 0"),
        ("alpha", (0, 1), math.nan, r"alpha has 1 non-finite entries \(1 NaN, 0 inf\)"),
        ("alpha", (0, 1), math.inf, r"alpha has 1 non-finite entries \(0 NaN, 1 inf\)"),
        ("alpha", (0, 2), -0.5, r"alpha has negative entries"),
    ],
)
@pytest.mark.parametrize("enabled", [True, False])
def test_non_finite_or_out_of_range_raises(which, index, value, match, enabled):
    mu, sigma, alpha, mask = _inputs()
    t = {"mu": mu, "sigma": sigma, "alpha": alpha}[which]
    t[index] = value
    cfg = ClipConfig(enabled=enabled, C_mu=1.0, alpha_max=2.0)
    with pytest.raises(ValueError, match=match):
        clip_posteriors(mu, sigma, alpha, mask, cfg)


def test_message_names_the_accepted_range():
    mu, sigma, alpha, mask = _inputs()
    mu[0, 1, 0] = math.nan
    with pytest.raises(ValueError, match=r"accepted: mu finite, 0 < sigma < inf, 0 <= alpha < inf"):
        clip_posteriors(mu, sigma, alpha, mask, CFG)


def test_finite_inputs_clip_with_norm_at_most_C_exactly():
    mu, sigma, alpha, mask = _inputs()
    mu2, s2, a2, st = clip_posteriors(mu, sigma, alpha, mask, CFG)
    norms = torch.linalg.vector_norm(mu2.double(), dim=-1)
    assert torch.all(norms <= 1.0)
    assert mu2[0, 1].tolist() == pytest.approx([0.6, 0.8], rel=1e-6)
    assert torch.equal(mu2[0, 2], mu[0, 2])  # inside the ball: unchanged
    assert st.frac_mu == 0.5 and a2.tolist() == [[1.0, 2.0, 0.5]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_projection_never_leaves_the_ball_in_stored_floats(dtype):
    # many random large means in d = 384: the naive mu * (C/||mu||) lands a few ulps outside for some
    g = torch.Generator().manual_seed(0)
    mu = torch.randn(1, 2001, 384, generator=g, dtype=dtype) * torch.logspace(-1, 3, 2001, dtype=dtype)[None, :, None]
    sigma = torch.ones_like(mu)
    alpha = torch.ones(1, 2001, dtype=dtype)
    mask = torch.ones(1, 2001, dtype=torch.bool)
    C = 5.0
    naive = mu * torch.clamp(C / torch.linalg.vector_norm(mu, dim=-1, keepdim=True), max=1.0)
    n_naive_out = int((torch.linalg.vector_norm(naive.double(), dim=-1) > C).sum())
    mu2, *_ = clip_posteriors(mu, sigma, alpha, mask, ClipConfig(enabled=True, C_mu=C))
    norms = torch.linalg.vector_norm(mu2.double(), dim=-1)
    assert torch.all(norms <= C)
    clipped = torch.linalg.vector_norm(mu.double(), dim=-1) > C
    assert torch.all(norms[clipped] >= C * (1 - 1e-5))  # still (nearly) on the sphere
    if dtype is torch.float32:
        assert n_naive_out > 0  # the case the nudge exists for does occur


def test_gradient_still_flows_through_projection():
    mu = torch.tensor([[[0.0, 0.0], [3.0, 4.0]]], requires_grad=True)
    sigma = torch.ones(1, 2, 2)
    alpha = torch.ones(1, 2)
    mask = torch.ones(1, 2, dtype=torch.bool)
    mu2, *_ = clip_posteriors(mu, sigma, alpha, mask, CFG)
    mu2.sum().backward()
    assert torch.isfinite(mu.grad).all() and mu.grad.abs().sum() > 0
