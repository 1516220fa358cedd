"""NVIB layer, sampling and clipping (engine.nvdp.layer, engine.nvdp.clipping): fast tests on tiny random states."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import digamma, gammaln

from engine.nvdp.clipping import ClipConfig, clip_posteriors, finite_alpha_min, sigma_floor
from engine.nvdp.layer import (
    LOG_ALPHA_MIN,
    NVDPClassifier,
    NVIBConfig,
    Posteriors,
    kl_dirichlet,
    kl_gaussian,
    sample_latents,
)

SMALL = NVIBConfig(d=16, n_heads=2, ffn_dim=32)


def _batch(B=5, n=7, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(B, n, d, generator=g) * 2.0
    lengths = torch.tensor([n, 1, 3, n - 2, 2][:B])
    mask = torch.arange(n)[None, :] < lengths[:, None]
    return h, mask


# ----------------------------------------------------------------------------- ClipConfig validation


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"C_mu": 0.0}, "C_mu"),
        ({"C_mu": -1.0}, "C_mu"),
        ({"C_mu": float("nan")}, "C_mu"),
        ({"alpha_min": 2.0, "alpha_max": 1.0}, "alpha_min"),
        ({"alpha_min": -0.1}, "alpha_min"),
        ({"alpha_max": 0.0}, "alpha_max"),
        ({"renyi_order": 1.0}, "renyi_order"),
        ({"renyi_order": 0.5}, "renyi_order"),
    ],
)
def test_clipconfig_rejects_invalid(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ClipConfig(enabled=True, **kwargs)


def test_clipconfig_type_errors_and_roundtrip():
    with pytest.raises(TypeError, match="enabled"):
        ClipConfig(enabled=1)
    with pytest.raises(TypeError, match="C_mu"):
        ClipConfig(C_mu="3")
    cfg = ClipConfig(enabled=True, C_mu=4, alpha_min=0.1, alpha_max=2, renyi_order=1.5)
    assert ClipConfig.from_dict(cfg.to_dict()) == cfg
    assert cfg.sigma_min == pytest.approx(math.sqrt(0.5 / 1.5))


def test_sigma_floor_and_finite_alpha_min_values():
    assert sigma_floor(1.1) == pytest.approx(0.30151134457776363, abs=1e-12)
    assert finite_alpha_min(1.0, 1.1, margin=0.0) == pytest.approx(1 / 11)
    assert finite_alpha_min(2.0, 1.1) == pytest.approx(2 / 11 * 1.01)
    fin = ClipConfig.finite(C_mu=3.0, alpha_max=2.0)
    assert fin.sigma_max == 0.99 and fin.alpha_min > (0.1 / 1.1) * 2.0
    with pytest.raises(ValueError, match="sigma_max"):
        ClipConfig(sigma_max=0.2)
    with pytest.raises(ValueError, match="renyi_order"):
        sigma_floor(1.0)


# ----------------------------------------------------------------------------- clipping invariants


@settings(max_examples=40, deadline=None)
@given(
    C_mu=st.floats(0.05, 20.0),
    alpha_max=st.floats(0.05, 5.0),
    alpha_frac=st.floats(0.0, 1.0),
    lam=st.floats(1.01, 4.0),
    scale=st.floats(0.01, 30.0),
    seed=st.integers(0, 10_000),
)
def test_clip_invariants(C_mu, alpha_max, alpha_frac, lam, scale, seed):
    g = torch.Generator().manual_seed(seed)
    B, k, d = 3, 6, 8
    mu = torch.randn(B, k, d, generator=g) * scale
    sigma = torch.exp(torch.randn(B, k, d, generator=g) * 2)
    alpha = torch.exp(torch.randn(B, k, generator=g) * 3)
    mask = torch.ones(B, k, dtype=torch.bool)
    mask[1, 4:] = False
    alpha = torch.where(mask, alpha, torch.zeros_like(alpha))
    cfg = ClipConfig(enabled=True, C_mu=C_mu, alpha_min=alpha_frac * alpha_max, alpha_max=alpha_max, renyi_order=lam)
    mu2, s2, a2, stats = clip_posteriors(mu, sigma, alpha, mask, cfg)
    norms = torch.linalg.vector_norm(mu2, dim=-1)
    assert bool((norms <= C_mu * (1 + 1e-5)).all())
    assert bool((s2 >= math.sqrt((lam - 1) / lam) * (1 - 1e-6)).all())
    real_a = a2[mask]
    assert bool((real_a >= cfg.alpha_min - 1e-7).all()) and bool((real_a <= alpha_max + 1e-7).all())
    assert bool((a2[~mask] == 0).all()), "padding keeps alpha = 0"
    # Inside the bounds nothing moves; the projection keeps the direction.
    inside = torch.linalg.vector_norm(mu, dim=-1) <= C_mu
    assert torch.equal(mu2[inside], mu[inside])
    cos = torch.nn.functional.cosine_similarity(mu2[~inside], mu[~inside], dim=-1)
    assert bool((cos > 1 - 1e-5).all())
    big = sigma >= cfg.sigma_min
    assert torch.equal(s2[big], sigma[big])
    # The fraction counts real non-prior components only.
    real = mask.clone()
    real[:, 0] = False
    expect = float((torch.linalg.vector_norm(mu, dim=-1) > C_mu)[real].float().mean())
    assert stats.frac_mu == pytest.approx(expect)
    assert stats.n_components == int(real.sum())


def test_clip_disabled_is_identity_but_reports_what_it_would_clip():
    mu = torch.tensor([[[0.0, 0.0], [30.0, 40.0], [0.1, 0.0]]])
    sigma = torch.tensor([[[1.0, 1.0], [0.01, 1.0], [1.0, 1.0]]])
    alpha = torch.tensor([[1.0, 10.0, 0.5]])
    mask = torch.ones(1, 3, dtype=torch.bool)
    out = clip_posteriors(mu, sigma, alpha, mask, ClipConfig(enabled=False, C_mu=1.0, alpha_max=2.0))
    assert out[0] is mu and out[1] is sigma and out[2] is alpha
    st_ = out[3]
    assert st_.frac_mu == 0.5 and st_.frac_alpha_high == 0.5 and st_.frac_sigma == 0.25


def test_prior_component_is_clipped_but_not_counted():
    # alpha_max < 1 clamps the prior's alpha = 1 (faithful to the authors' code) without counting it.
    mu = torch.zeros(2, 3, 4)
    sigma = torch.ones(2, 3, 4)
    alpha = torch.tensor([[1.0, 0.2, 0.3], [1.0, 0.1, 0.0]])
    mask = torch.tensor([[True, True, True], [True, True, False]])
    _, _, a2, stats = clip_posteriors(mu, sigma, alpha, mask, ClipConfig(enabled=True, alpha_max=0.5))
    assert a2[:, 0].tolist() == [0.5, 0.5]
    assert stats.frac_alpha_high == 0.0 and stats.n_components == 3
    # alpha_min > 0 must not resurrect padding.
    _, _, a3, st3 = clip_posteriors(mu, sigma, alpha, mask, ClipConfig(enabled=True, alpha_min=0.25, alpha_max=0.5))
    assert float(a3[1, 2]) == 0.0 and float(a3[1, 1]) == 0.25
    assert st3.frac_alpha_low == pytest.approx(2 / 3)


def test_clip_rejects_bad_arguments():
    mu = torch.zeros(1, 2, 3)
    with pytest.raises(TypeError, match="ClipConfig"):
        clip_posteriors(mu, mu + 1, torch.ones(1, 2), torch.ones(1, 2, dtype=torch.bool), {"C_mu": 1})
    with pytest.raises(ValueError, match="shape"):
        clip_posteriors(mu, mu + 1, torch.ones(1, 3), torch.ones(1, 3, dtype=torch.bool), ClipConfig())


# ----------------------------------------------------------------------------- layer and sampling


def test_prior_component_and_padding_in_posteriors():
    torch.manual_seed(0)
    model = NVDPClassifier(SMALL)
    h, mask = _batch()
    post = model.posteriors(h, mask)
    assert post.mu.shape == (5, 8, 16) and post.alpha.shape == (5, 8)
    assert torch.equal(post.mu[:, 0], torch.zeros(5, 16))
    assert torch.equal(post.sigma[:, 0], torch.ones(5, 16))
    assert torch.equal(post.alpha[:, 0], torch.ones(5))
    assert bool(post.mask[:, 0].all())
    assert torch.equal(post.mask[:, 1:], mask)
    assert bool((post.alpha[~post.mask] == 0).all())
    assert bool((post.alpha[post.mask] > 0).all())
    # alpha = exp(w1.h + w2.(h*h) + b) exactly (no clamp active here)
    nv = model.nvib
    log_a = (nv.alpha_lin(h) + nv.alpha_quad(h * h)).squeeze(-1)
    assert torch.allclose(post.alpha[:, 1:][mask], torch.exp(log_a)[mask], rtol=1e-5)


@pytest.mark.parametrize("clip", [ClipConfig(enabled=False), ClipConfig(enabled=True, C_mu=0.5, alpha_max=0.8)])
def test_samples_are_valid_dirichlet_weights(clip):
    torch.manual_seed(1)
    model = NVDPClassifier(SMALL, clip)
    h, mask = _batch()
    for training in (True, False):  # sampling happens at train AND eval
        model.train(training)
        out = model(h, mask)
        pi, z, post = out["pi"], out["z"], out["post"]
        assert bool((pi >= 0).all())
        assert torch.allclose(pi.sum(-1), torch.ones(5), atol=1e-5)
        assert bool((pi[~post.mask] == 0).all()), "pi must be exactly 0 on padding"
        assert bool((pi[:, 0] > 0).all()), "the prior component is always present"
        assert z.shape == post.mu.shape and bool(torch.isfinite(z).all())
        assert not torch.equal(z, post.mu), "z is a sample, not the mean"
    # two forward passes draw different samples
    assert not torch.equal(model(h, mask)["pi"], model(h, mask)["pi"])


def test_sampling_is_reparameterised_and_matches_moments():
    # z = mu + sigma * eps and pi ~ Dir(alpha): check means against the closed forms.
    torch.manual_seed(2)
    n = 20000
    alpha = torch.tensor([[1.0, 2.0, 0.5, 0.0]]).expand(n, 4)
    mask = torch.tensor([[True, True, True, False]]).expand(n, 4)
    mu = torch.full((n, 4, 1), 3.0)
    sigma = torch.full((n, 4, 1), 0.5)
    z, pi = sample_latents(Posteriors(mu, sigma, alpha, mask))
    assert float(z.mean()) == pytest.approx(3.0, abs=0.02) and float(z.std()) == pytest.approx(0.5, abs=0.02)
    assert pi.mean(0)[:3].tolist() == pytest.approx([1 / 3.5, 2 / 3.5, 0.5 / 3.5], abs=0.01)
    assert float(pi[:, 3].abs().max()) == 0.0


def test_tiny_alpha_stays_finite():
    torch.manual_seed(3)
    model = NVDPClassifier(SMALL)
    with torch.no_grad():
        model.nvib.alpha_lin.bias.fill_(-500.0)  # log alpha clamped at LOG_ALPHA_MIN
    h, mask = _batch()
    out = model(h, mask)
    assert float(out["raw"].alpha.detach()[:, 1:][mask].min()) == pytest.approx(math.exp(LOG_ALPHA_MIN), rel=1e-4)
    for key in ("logits", "pi", "z"):
        assert bool(torch.isfinite(out[key]).all()), key
    assert torch.allclose(out["pi"].sum(-1), torch.ones(5), atol=1e-5)


def test_gradient_reaches_mean_projection_input_when_clipping():
    torch.manual_seed(4)
    clip = ClipConfig(enabled=True, C_mu=0.05, alpha_max=0.5)  # every token mean is projected
    model = NVDPClassifier(SMALL, clip)
    with torch.no_grad():
        model.nvib.alpha_lin.bias.fill_(5.0)  # every token alpha > alpha_max: all clamped
    h, mask = _batch()
    h.requires_grad_(True)
    out = model(h, mask)
    assert out["clip_stats"].frac_mu == 1.0
    loss = torch.nn.functional.cross_entropy(out["logits"], torch.tensor([0, 1, 0, 1, 1]))
    loss = loss + kl_gaussian(out["post"]).mean()
    loss.backward()
    w = model.nvib.mu_proj.weight.grad
    assert w is not None and float(w.abs().sum()) > 0
    assert h.grad is not None and float(h.grad[mask].abs().sum()) > 0
    # plain autograd through the clamp: alphas clamped at alpha_max pass no gradient to the alpha weights
    assert out["clip_stats"].frac_alpha_high == 1.0
    assert model.nvib.alpha_lin.weight.grad is None or float(model.nvib.alpha_lin.weight.grad.abs().sum()) == 0.0


def test_denoising_attention_ignores_padding_and_has_no_residual():
    torch.manual_seed(5)
    model = NVDPClassifier(SMALL).eval()
    h, mask = _batch(B=2)
    post = model.posteriors(h, mask)
    z, pi = sample_latents(post)
    a1 = model.attn(h, z, pi)
    z2 = z.clone()
    z2[~post.mask] = 1e3  # junk on padding latents must not matter (pi = 0 there)
    a2 = model.attn(h, z2, pi)
    assert torch.allclose(a1, a2, atol=1e-6)
    # no residual: output depends on z; replacing all latents by the same vector gives identical rows per query
    z3 = torch.zeros_like(z)
    a3 = model.attn(h, z3, pi)
    assert torch.allclose(a3[:, 0], a3[:, 1], atol=1e-5), "clean states must not bypass the bottleneck"


# ----------------------------------------------------------------------------- KL regularisers


def test_kl_gaussian_zero_at_prior_and_value():
    mask = torch.tensor([[True, True, False]])
    alpha = torch.tensor([[1.0, 3.0, 0.0]])
    post = Posteriors(torch.zeros(1, 3, 2), torch.ones(1, 3, 2), alpha, mask)
    assert float(kl_gaussian(post)) == 0.0
    mu = torch.zeros(1, 3, 2)
    mu[0, 1] = torch.tensor([1.0, 3.0])
    sig = torch.ones(1, 3, 2)
    sig[0, 1] = torch.tensor([2.0, 0.5])
    post = Posteriors(mu, sig, alpha, mask)
    per = 0.5 * np.mean([4 + 1 - 1 - math.log(4), 0.25 + 9 - 1 - math.log(0.25)])
    assert float(kl_gaussian(post)) == pytest.approx(0.75 * per, rel=1e-6)


@pytest.mark.parametrize("total, k", [(0.3, 4), (1.0, 3), (7.5, 10), (50.0, 2)])
def test_kl_dirichlet_matches_general_formula(total, k):
    # independent: general KL(Dir(a) || Dir(b)) with a = total/k, b = 1/k, divided by k
    a = np.full(k, total / k)
    b = np.full(k, 1.0 / k)
    kl = (gammaln(a.sum()) - gammaln(a).sum() - gammaln(b.sum()) + gammaln(b).sum()
          + ((a - b) * (digamma(a) - digamma(a.sum()))).sum())
    alpha = torch.zeros(1, k + 2, dtype=torch.float64)
    alpha[0, :k] = torch.from_numpy(a)
    mask = torch.zeros(1, k + 2, dtype=torch.bool)
    mask[0, :k] = True
    post = Posteriors(torch.zeros(1, k + 2, 1), torch.ones(1, k + 2, 1), alpha, mask)
    assert float(kl_dirichlet(post)) == pytest.approx(kl / k, rel=1e-9, abs=1e-12)


def test_nvib_config_validation():
    with pytest.raises(ValueError, match="divisible"):
        NVIBConfig(d=10, n_heads=3)
    with pytest.raises(ValueError, match="n_classes"):
        NVIBConfig(n_classes=1)
    model = NVDPClassifier(SMALL)
    with pytest.raises(ValueError, match="token states"):
        model(torch.zeros(2, 3, 8), torch.ones(2, 3, dtype=torch.bool))
