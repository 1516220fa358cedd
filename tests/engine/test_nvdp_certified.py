"""The certified bound (sup over any two clipped inputs) against brute force, and the length-hiding mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from engine.nvdp.certified import certified_bound, certified_epsilon, gaussian_sup, rdp_to_dp, what_it_takes
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.closed_forms import renyi_dirichlet, renyi_gaussian


def _pair_bound(x, K, d, clip, lam):
    """Exact per-pair bound D(a||b) of two clipped parameter sets packed in x (unconstrained -> clipped box)."""
    n = K - 1
    x = np.asarray(x, dtype=float)
    i = 0

    def take(m):
        nonlocal i
        out = x[i:i + m]
        i += m
        return out

    lo, hi = clip.sigma_min, clip.sigma_max
    sq = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    out = []
    for _ in range(2):
        mu = take(n * d).reshape(n, d)
        norm = np.linalg.norm(mu, axis=1, keepdims=True)
        mu = mu * np.minimum(1.0, clip.C_mu / np.maximum(norm, 1e-12))
        sig = lo + (hi - lo) * sq(take(n * d)).reshape(n, d)
        al = clip.alpha_min + (clip.alpha_max - clip.alpha_min) * sq(take(n))
        out.append((mu, sig, al))
    (ma, sa, aa), (mb, sb, ab) = out
    a0 = min(max(1.0, clip.alpha_min), clip.alpha_max)
    g = renyi_gaussian(ma, sa, mb, sb, renyi_order=lam).sum()
    dr = renyi_dirichlet(np.r_[a0, aa], np.r_[a0, ab], renyi_order=lam)
    return float(g + dr)


@pytest.mark.parametrize("K,d,lam", [(3, 2, 1.1), (4, 3, 1.5), (2, 4, 2.0)])
def test_certified_bound_is_above_brute_force_and_attained(K, d, lam):
    clip = ClipConfig(enabled=True, C_mu=1.5, alpha_min=0.8 * (lam - 1) / lam * 2.0 + 0.3, alpha_max=2.0,
                      renyi_order=lam, sigma_max=0.9)
    cb = certified_bound(clip, n_components=K, d=d)
    assert math.isfinite(cb.total) and cb.total_attained <= cb.total
    rng = np.random.default_rng(0)
    m = 2 * ((K - 1) * (2 * d + 1))
    best = -np.inf
    for _ in range(400):  # random clipped pairs
        best = max(best, _pair_bound(rng.normal(0, 3, m), K, d, clip, lam))
    for start in range(6):  # local maximisation from random starts
        r = minimize(lambda x: -_pair_bound(x, K, d, clip, lam), rng.normal(0, 3, m), method="L-BFGS-B",
                     options={"maxiter": 300})
        best = max(best, -r.fun)
    assert best <= cb.total + 1e-7
    # the Gaussian part is exact: the search gets within 0.5 % of sup minus the Dirichlet slack
    assert best >= 0.995 * cb.gaussian
    # the attained figure is a real pair's bound: the corner configuration reproduces it
    assert cb.total_attained <= best + 1e-6 * abs(best) or cb.total_attained - best < 0.01 * cb.total


def test_gaussian_sup_closed_form_against_grid():
    lam, C, f, c, d = 1.3, 0.7, 0.4, 0.95, 5
    per, H, G = gaussian_sup(C, f, c, lam, d)
    s = np.linspace(f, c, 801)
    sa, sb = np.meshgrid(s, s, indexing="ij")
    gvar = renyi_gaussian(0.0, sa, 0.0, sb, renyi_order=lam)
    gmean = renyi_gaussian(C, sa, -C, sb, renyi_order=lam)
    assert G == pytest.approx(gvar.max(), rel=1e-6)
    assert H == pytest.approx(gmean.max(), rel=1e-4)
    assert gmean.max() <= H * (1 + 1e-12) and gvar.max() <= G * (1 + 1e-12)
    assert per == pytest.approx(H + (d - 1) * G)


def test_infinite_cases_say_why():
    authors = certified_bound(ClipConfig(enabled=True))  # alpha_min 0, no cap
    assert math.isinf(authors.total)
    assert "Gaussian term is unbounded" in authors.reason and "Gamma term is unbounded" in authors.reason
    assert math.isinf(certified_bound(ClipConfig(enabled=False)).total)
    # an order above the clipping's: the floor no longer keeps s^2 > 0
    assert math.isinf(certified_bound(ClipConfig.finite(), renyi_order=1.5).total)


def test_bound_moves_with_parameters_and_conversion():
    a = certified_bound(ClipConfig.finite(C_mu=5.0))
    b = certified_bound(ClipConfig.finite(C_mu=2.0))
    assert b.total < a.total
    # the mean-carrying dimension: 2 lambda C^2 / s^2 scales with C^2 (minus the same variance part)
    assert (a.gaussian_mean_dim - a.gaussian_var_dim) / (b.gaussian_mean_dim - b.gaussian_var_dim) > 5.0
    assert rdp_to_dp(1.0, 2.0, 1e-5) == pytest.approx(1.0 + math.log(1e5))
    e = certified_epsilon(ClipConfig.finite())
    assert math.isfinite(e["epsilon"]) and 1 < e["order"] <= 1.1
    w = what_it_takes(ClipConfig.finite(), 8.0)
    assert w["order_min"] == pytest.approx(1 + math.log(1e5) / 8)
    assert 0 < w["C_mu"] < 0.1 and w["sigma_floor"] < w["sigma_cap"] < 1.0 and w["alpha_ratio"] < 1.0
    # at those limits the bound is within the budget (each alone, the others at their best values)
    lam = w["order"]
    cm = certified_bound(ClipConfig(enabled=True, C_mu=w["C_mu"], alpha_min=1.0, alpha_max=1.0, renyi_order=lam,
                                    sigma_max=w["sigma_floor"] * (1 + 1e-9)), renyi_order=lam)
    assert cm.total <= w["budget_nats"] * 1.001


def test_length_hiding_makes_exact_bound_finite_across_lengths():
    from engine.nvdp.divergence import pairwise_rd_bound
    from engine.nvdp.encoder import TokenStates
    from engine.nvdp.layer import NVDPClassifier, NVIBConfig, sample_latents

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    L, d = 6, 8
    lengths = torch.tensor([2, 3, 6, 4])
    mask = torch.arange(L)[None, :] < lengths[:, None]
    states = TokenStates(torch.randn(4, L, d, generator=g), mask)
    clip = ClipConfig.finite(C_mu=1.0)
    out = {}
    for hide in (None, L + 1):
        torch.manual_seed(0)
        model = NVDPClassifier(NVIBConfig(d=d, n_heads=2, ffn_dim=8, n_components=hide), clip).eval()
        raw = model.posteriors(states.states, states.mask)
        post, _ = raw.clip(clip)
        r = pairwise_rd_bound(post.mu, post.sigma, post.alpha, post.mask, renyi_order=1.1, form="exact",
                              padding="strict")
        out[hide] = (post, r)
    _, strict = out[None]
    assert np.isinf(strict.values).sum() == 6  # every pair of different lengths
    hidden, r = out[L + 1]
    assert hidden.mu.shape[1] == L + 1 and bool(hidden.mask.all())
    assert np.isfinite(r.values).all()
    # the released sample has L + 1 non-zero weights for every input, whatever its length
    z, pi = sample_latents(hidden)
    assert bool((pi > 0).all())
    # and the per-pair values lie below the certified bound for these settings
    cb = certified_bound(clip, n_components=L + 1, d=d)
    assert r.values.max() <= cb.total
    # a model config round-trips the option; the authors' layer keeps its old config dict
    assert NVIBConfig(**NVIBConfig(d=8, n_heads=2, n_components=7).to_dict()).n_components == 7
    assert "n_components" not in NVIBConfig().to_dict()


def test_inspector_bound_uses_the_mechanisms_padding(monkeypatch):
    """Two sentences of different lengths: infinite under the authors' layer (weight 0 on padding),
    finite under the length-hiding layer, and below the certified bound."""
    from engine.nvdp.layer import NVDPClassifier, NVIBConfig
    from engine.nvdp.pair_inspector import inspect_pair

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    clip = ClipConfig.finite()
    a, b = "Great phone, I love it.", "Awful."
    torch.manual_seed(0)
    strict = inspect_pair(NVDPClassifier(NVIBConfig(), clip).eval(), a, b, clip)
    assert math.isinf(strict.rd_exact) and not strict.length_hiding
    torch.manual_seed(0)
    hiding = inspect_pair(NVDPClassifier(NVIBConfig(n_components=49), clip).eval(), a, b, clip)
    assert hiding.length_hiding and math.isfinite(hiding.rd_exact) and hiding.rd_exact > 0
    assert hiding.rd_exact <= certified_bound(clip, n_components=49).total
    assert len(hiding.components[1]) == 49 and hiding.components[1]["token"].iloc[-1] == "(length padding: prior)"


def test_certified_figure_shows_the_terms_and_unbounded_ones():
    from engine.figures.nvdp import accuracy_figure, certified_figure

    fig = certified_figure(ClipConfig.finite(C_mu=1.0), empirical_max=300.0)
    b = certified_bound(ClipConfig.finite(C_mu=1.0))
    bars = fig.data[0]
    assert sum(bars.y) == pytest.approx(b.total, rel=1e-9)
    assert "epsilon" in fig.layout.title.text
    auth = certified_figure(ClipConfig(enabled=True))
    assert list(auth.data[0].text) == ["unbounded"] * 3 and "unbounded" in auth.layout.title.text
    # the accuracy bars carry the Wilson interval of the test size
    acc = accuracy_figure({"a": 0.5}, n_test=4).data[0].error_y
    assert acc.array[0] == pytest.approx(0.35, abs=0.01) and acc.arrayminus[0] == pytest.approx(0.35, abs=0.01)
