"""Renyi closed forms against numerical integration; the pairwise RD bound against a brute-force loop."""

import json
import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import gammaln

from engine.nvdp.divergence import (
    pairwise_rd_bound,
    renyi_dirichlet,
    renyi_dirichlet_torch,
    renyi_gamma,
    renyi_gamma_torch,
    renyi_gaussian,
    renyi_gaussian_torch,
    validate_renyi_order,
)


# ------------------------------------------------------------------ numerical references
def quad_renyi_1d(logp, logq, lam, lo, hi, points=None):
    """D_lam(p||q) = ln(int p^lam q^(1-lam)) / (lam - 1), integrated in log space around the peak."""
    f = lambda x: lam * logp(x) + (1 - lam) * logq(x)  # noqa: E731
    grid = np.linspace(lo if np.isfinite(lo) else -50, hi if np.isfinite(hi) else 50, 2001)
    shift = np.max(f(grid[1:-1]))
    val, _ = integrate.quad(lambda x: np.exp(f(x) - shift), lo, hi, points=points, limit=400, epsabs=0, epsrel=1e-12)
    return (np.log(val) + shift) / (lam - 1)


def norm_logpdf(m, s):
    return lambda x: -0.5 * ((x - m) / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi)


def gamma_logpdf(a):
    return lambda x: (a - 1) * np.log(x) - x - gammaln(a)


def beta_logpdf(a, b):
    return lambda x: (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - (gammaln(a) + gammaln(b) - gammaln(a + b))


def quad_gauss(ma, sa, mb, sb, lam):
    return quad_renyi_1d(norm_logpdf(ma, sa), norm_logpdf(mb, sb), lam, -np.inf, np.inf, None)


def quad_gamma(a, b, lam):
    lp, lq = gamma_logpdf(a), gamma_logpdf(b)
    g = lambda x: np.exp(lam * lp(x) + (1 - lam) * lq(x))  # noqa: E731
    val = sum(integrate.quad(g, lo, hi, limit=400, epsabs=0, epsrel=1e-12)[0] for lo, hi in [(0, 1), (1, 20), (20, np.inf)])
    return np.log(val) / (lam - 1)


# ------------------------------------------------------------------ Gaussian
def test_gaussian_spec_check_values():
    # NVDP.md section 4: lambda = 1.1, a = (0.3, 0.8), b = (-0.5, 1.2)
    assert renyi_gaussian(0.3, 0.8, -0.5, 1.2, renyi_order=1.1) == pytest.approx(0.366708, abs=1e-6)
    assert renyi_gaussian(-0.5, 1.2, 0.3, 0.8, renyi_order=1.1) == pytest.approx(0.890763, abs=1e-6)
    assert quad_gauss(0.3, 0.8, -0.5, 1.2, 1.1) == pytest.approx(0.366708, abs=1e-6)
    assert quad_gauss(-0.5, 1.2, 0.3, 0.8, 1.1) == pytest.approx(0.890763, abs=1e-6)


@pytest.mark.parametrize(
    "ma,sa,mb,sb,lam",
    [(0.3, 0.8, -0.5, 1.2, 1.1), (1.0, 1.0, 0.0, 1.0, 2.0), (0.0, 1.5, 0.5, 1.0, 1.5), (-2.0, 0.31, 1.0, 1.0, 1.1),
     (0.1, 3.0, 0.0, 1.0, 1.1), (0.0, 0.5, 0.0, 0.5, 3.0)],
)
def test_gaussian_matches_quadrature(ma, sa, mb, sb, lam):
    exact = float(renyi_gaussian(ma, sa, mb, sb, renyi_order=lam))
    assert exact == pytest.approx(quad_gauss(ma, sa, mb, sb, lam), abs=1e-6)
    t = torch.tensor
    got = float(renyi_gaussian_torch(t(ma, dtype=torch.float64), t(sa, dtype=torch.float64), t(mb, dtype=torch.float64),
                                     t(sb, dtype=torch.float64), renyi_order=lam))
    assert got == pytest.approx(exact, abs=1e-12)


def test_gaussian_infinite_where_variance_condition_fails():
    # s2 = lam sb^2 + (1 - lam) sa^2 <= 0  <=>  sb <= sqrt((lam-1)/lam) sa = 0.30151 sa at lam 1.1
    assert renyi_gaussian(0.0, 1.0, 0.0, 0.30, renyi_order=1.1) == np.inf
    assert np.isfinite(renyi_gaussian(0.0, 1.0, 0.0, 0.302, renyi_order=1.1))
    out = renyi_gaussian_torch(torch.zeros(3), torch.ones(3), torch.zeros(3), torch.tensor([0.2, 0.3015, 0.5]))
    assert out[0] == math.inf and out[1] == math.inf and math.isfinite(out[2])


# ------------------------------------------------------------------ Gamma
@pytest.mark.parametrize("a,b,lam", [(1.5, 0.7, 1.1), (0.5, 0.8, 1.1), (3.0, 1.0, 2.0), (0.3, 2.0, 1.1), (2.0, 2.0, 1.5)])
def test_gamma_matches_quadrature(a, b, lam):
    exact = float(renyi_gamma(a, b, renyi_order=lam))
    assert exact == pytest.approx(quad_gamma(a, b, lam), abs=1e-6)
    got = float(renyi_gamma_torch(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64), renyi_order=lam))
    assert got == pytest.approx(exact, abs=1e-12)


def test_gamma_infinite_condition():
    # lam a - (lam - 1) b <= 0 <=> b >= 11 a at lam 1.1
    assert renyi_gamma(0.1, 1.1, renyi_order=1.1) == np.inf
    assert np.isfinite(renyi_gamma(0.1, 1.09, renyi_order=1.1))
    assert float(renyi_gamma_torch(torch.tensor(0.1), torch.tensor(1.2))) == math.inf


# ------------------------------------------------------------------ Dirichlet
@pytest.mark.parametrize("a,b,lam", [((1.0, 2.0), (2.0, 1.0), 1.1), ((0.7, 3.0), (1.5, 0.9), 1.1), ((2.0, 5.0), (3.0, 4.0), 2.0)])
def test_dirichlet_k2_matches_beta_quadrature(a, b, lam):
    ref = quad_renyi_1d(beta_logpdf(*a), beta_logpdf(*b), lam, 0.0, 1.0, points=[0.5])
    assert float(renyi_dirichlet(a, b, renyi_order=lam)) == pytest.approx(ref, abs=1e-6)


def test_dirichlet_k3_matches_2d_quadrature():
    a, b, lam = np.array([1.5, 2.0, 3.0]), np.array([2.5, 1.2, 2.0]), 1.1
    # integrand p^lam q^(1-lam) = exp(-lam lnB(a) - (1-lam) lnB(b)) * prod v_i^(c_i - 1), c = lam a + (1-lam) b
    c = lam * a + (1 - lam) * b
    lnb = lambda x: gammaln(x).sum() - gammaln(x.sum())  # noqa: E731
    const = np.exp(-lam * lnb(a) - (1 - lam) * lnb(b))

    def f(y, x):
        z = 1.0 - x - y
        return x ** (c[0] - 1) * y ** (c[1] - 1) * z ** (c[2] - 1) if z > 0 else 0.0

    val, _ = integrate.dblquad(f, 0, 1, 0, lambda x: 1 - x, epsabs=1e-13, epsrel=1e-11)
    val *= const
    ref = np.log(val) / (lam - 1)
    assert float(renyi_dirichlet(a, b, renyi_order=lam)) == pytest.approx(ref, abs=1e-6)


def test_dirichlet_infinite_and_torch_batch():
    assert renyi_dirichlet([0.1, 1.0], [1.2, 1.0], renyi_order=1.1) == np.inf
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.2, 4, (5, 6)), rng.uniform(0.2, 4, (5, 6))
    np.testing.assert_allclose(renyi_dirichlet_torch(torch.tensor(a), torch.tensor(b)).numpy(), renyi_dirichlet(a, b), atol=1e-12)


def test_dirichlet_equals_gamma_sum_minus_total():
    # D(Dir(a)||Dir(b)) = sum_i D(Gamma(a_i)||Gamma(b_i)) - D(Gamma(sum a)||Gamma(sum b))
    a, b = np.array([0.5, 1.3, 2.0, 0.9]), np.array([0.6, 1.0, 2.5, 0.7])
    expect = renyi_gamma(a, b).sum() - renyi_gamma(a.sum(), b.sum())
    assert float(renyi_dirichlet(a, b)) == pytest.approx(float(expect), abs=1e-10)


# ------------------------------------------------------------------ properties
lams = st.floats(1.01, 5.0)


def nondecreasing(d_lo, d_hi, tol=1e-9):
    return d_hi == math.inf or d_hi >= d_lo - tol * max(1.0, d_lo)
pos = st.floats(0.2, 5.0)
means = st.floats(-5.0, 5.0)


@settings(max_examples=60, deadline=None)
@given(ma=means, sa=pos, mb=means, sb=pos, l1=lams, l2=lams)
def test_gaussian_properties(ma, sa, mb, sb, l1, l2):
    lo, hi = min(l1, l2), max(l1, l2)
    d_lo = float(renyi_gaussian(ma, sa, mb, sb, renyi_order=lo))
    d_hi = float(renyi_gaussian(ma, sa, mb, sb, renyi_order=hi))
    assert d_lo >= 0 and d_hi >= 0
    assert nondecreasing(d_lo, d_hi)  # Renyi divergence is nondecreasing in its order
    assert float(renyi_gaussian(ma, sa, ma, sa, renyi_order=l1)) == pytest.approx(0.0, abs=1e-12)
    if abs(ma - mb) > 1e-3 or abs(sa - sb) > 1e-3:
        assert d_lo > 1e-12


@settings(max_examples=60, deadline=None)
@given(a=pos, b=pos, l1=lams, l2=lams)
def test_gamma_properties(a, b, l1, l2):
    lo, hi = min(l1, l2), max(l1, l2)
    d_lo, d_hi = float(renyi_gamma(a, b, renyi_order=lo)), float(renyi_gamma(a, b, renyi_order=hi))
    assert d_lo >= 0 and nondecreasing(d_lo, d_hi)
    assert float(renyi_gamma(a, a, renyi_order=l1)) == pytest.approx(0.0, abs=1e-12)
    if abs(a - b) > 1e-3:
        assert d_lo > 1e-12


@settings(max_examples=40, deadline=None)
@given(a=st.lists(pos, min_size=2, max_size=5), data=st.data(), l1=lams, l2=lams)
def test_dirichlet_properties(a, data, l1, l2):
    b = data.draw(st.lists(pos, min_size=len(a), max_size=len(a)))
    lo, hi = min(l1, l2), max(l1, l2)
    d_lo, d_hi = float(renyi_dirichlet(a, b, renyi_order=lo)), float(renyi_dirichlet(a, b, renyi_order=hi))
    assert d_lo >= 0 and nondecreasing(d_lo, d_hi, 1e-8)
    assert float(renyi_dirichlet(a, a, renyi_order=l1)) == pytest.approx(0.0, abs=1e-12)
    if max(abs(x - y) for x, y in zip(a, b)) > 1e-2:
        assert d_lo > 1e-12


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("bad", [1, 1.0, 0.5, -2, float("nan"), float("inf")])
def test_renyi_order_must_exceed_one(bad):
    with pytest.raises(ValueError, match="renyi_order"):
        validate_renyi_order(bad)
    with pytest.raises(ValueError, match="renyi_order"):
        renyi_gaussian(0, 1, 0, 1, renyi_order=bad)


def test_bad_closed_form_arguments():
    with pytest.raises(TypeError, match="renyi_order"):
        validate_renyi_order("1.1")
    with pytest.raises(TypeError, match="renyi_order"):
        validate_renyi_order(True)
    with pytest.raises(ValueError, match="sigma_b"):
        renyi_gaussian(0, 1, 0, 0.0)
    with pytest.raises(ValueError, match="a must be > 0"):
        renyi_gamma(-1.0, 1.0)
    with pytest.raises(ValueError, match="K >= 2"):
        renyi_dirichlet([1.0], [2.0])


# ------------------------------------------------------------------ pairwise bound
def make_posteriors(B=7, K=6, D=5, seed=0, lengths=None, sigma_lo=0.4):
    g = torch.Generator().manual_seed(seed)
    if lengths is None:
        lengths = torch.randint(1, K, (B,), generator=g)
    lengths = torch.as_tensor(lengths)
    mask = torch.arange(K)[None, :] <= lengths[:, None]
    mu = torch.randn(B, K, D, generator=g, dtype=torch.float64)
    sigma = sigma_lo + (1 - sigma_lo) * torch.rand(B, K, D, generator=g, dtype=torch.float64)
    alpha = torch.exp(torch.randn(B, K, generator=g, dtype=torch.float64) * 0.5)
    mu[:, 0], sigma[:, 0], alpha[:, 0] = 0.0, 1.0, 1.0
    alpha = torch.where(mask, alpha, torch.zeros_like(alpha))
    # padding garbage that must never be read
    mu = torch.where(mask[..., None], mu, torch.full_like(mu, 1e6))
    sigma = torch.where(mask[..., None], sigma, torch.full_like(sigma, 1e-9))
    return mu, sigma, alpha, mask


def brute_pair(mu, sigma, alpha, mask, i, j, lam):
    """(forward, backward) exact bound by a loop, padding on one side -> that input's prior component."""
    u = (mask[i] | mask[j]).numpy()

    def filled(x, m):
        x, m = x.numpy(), m.numpy()
        return np.where(m[:, None] if x.ndim == 2 else m, x, x[0])

    ma, mb = filled(mu[i], mask[i])[u], filled(mu[j], mask[j])[u]
    sa, sb = filled(sigma[i], mask[i])[u], filled(sigma[j], mask[j])[u]
    aa, ab = filled(alpha[i], mask[i])[u], filled(alpha[j], mask[j])[u]
    g_f = renyi_gaussian(ma, sa, mb, sb, renyi_order=lam).sum()
    g_b = renyi_gaussian(mb, sb, ma, sa, renyi_order=lam).sum()
    if u.sum() >= 2:
        d_f, d_b = renyi_dirichlet(aa, ab, renyi_order=lam), renyi_dirichlet(ab, aa, renyi_order=lam)
    else:
        d_f = d_b = 0.0
    return float(g_f + d_f), float(g_b + d_b)


@pytest.mark.parametrize("lam", [1.1, 2.0])
def test_exact_form_matches_brute_force(lam):
    mu, sigma, alpha, mask = make_posteriors()
    B = mu.shape[0]
    res = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=lam, dtype=torch.float64)
    n_inf = 0
    fwd = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=lam, dtype=torch.float64, direction="forward")
    bwd = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=lam, dtype=torch.float64, direction="backward")
    assert res.n_pairs == B * (B - 1) // 2 == len(res.values)
    assert sorted(map(tuple, res.pair_index.tolist())) == [(i, j) for i in range(B) for j in range(i + 1, B)]
    for k, (i, j) in enumerate(res.pair_index):
        f, b = brute_pair(mu, sigma, alpha, mask, i, j, lam)
        assert fwd.values[k] == pytest.approx(f, rel=1e-10, abs=1e-10)
        assert bwd.values[k] == pytest.approx(b, rel=1e-10, abs=1e-10)
        assert res.values[k] == pytest.approx(max(f, b), rel=1e-10, abs=1e-10)
        n_inf += max(f, b) == math.inf
    assert res.max == res.values.max() and res.mean == pytest.approx(res.values.mean())
    assert res.n_inf == n_inf and res.n_nan == 0 and res.form == "exact"
    if lam == 1.1:  # sigma >= 0.4 > 0.3015: every term finite at this order
        assert n_inf == 0
    # float32 working precision agrees to ~1e-5 relative
    r32 = pairwise_rd_bound(mu.float(), sigma.float(), alpha.float(), mask, renyi_order=lam)
    np.testing.assert_allclose(r32.values, res.values, rtol=2e-5, atol=1e-5)


def test_chunking_does_not_change_values():
    mu, sigma, alpha, mask = make_posteriors(B=9)
    a = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    b = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64, max_chunk_elements=1)
    np.testing.assert_allclose(a.values, b.values, rtol=1e-13)


def test_identical_inputs_give_zero_and_padding_both_sides_is_free():
    mu, sigma, alpha, mask = make_posteriors(B=2, lengths=[3, 3])
    mu[1], sigma[1], alpha[1] = mu[0], sigma[0], alpha[0]
    res = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    assert res.values[0] == pytest.approx(0.0, abs=1e-12)


def test_odd_dimension_count_and_single_component():
    mu, sigma, alpha, mask = make_posteriors(B=4, K=3, D=7, lengths=[0, 2, 1, 2])
    res = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    for k, (i, j) in enumerate(res.pair_index):
        assert res.values[k] == pytest.approx(max(brute_pair(mu, sigma, alpha, mask, i, j, 1.1)), rel=1e-10, abs=1e-12)


def test_infinite_values_are_counted_not_dropped():
    mu, sigma, alpha, mask = make_posteriors(B=5, lengths=[3, 3, 3, 3, 3])
    sigma[2, 1, 0] = 0.05  # unclipped: sigma far below 0.3015 * the neighbour's 1.0
    res = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    involved = (res.pair_index == 2).any(1)
    assert np.all(np.isinf(res.values[involved])) and np.all(np.isfinite(res.values[~involved]))
    assert res.n_inf == int(involved.sum()) == 4
    assert res.max == math.inf and res.mean == math.inf
    assert res.mean_finite == pytest.approx(res.values[~involved].mean())
    r32 = pairwise_rd_bound(mu.float(), sigma.float(), alpha.float(), mask)
    assert r32.n_inf == 4
    # Dirichlet condition: alpha_b > 11 alpha_a on a shared component -> inf
    mu, sigma, alpha, mask = make_posteriors(B=2, lengths=[3, 3])
    alpha[0, 2], alpha[1, 2] = 0.01, 1.0
    assert pairwise_rd_bound(mu, sigma, alpha, mask, direction="forward", dtype=torch.float64).n_inf == 1


def test_nan_inputs_are_counted_with_a_warning():
    mu, sigma, alpha, mask = make_posteriors(B=4, lengths=[2, 2, 2, 2])
    mu[1, 1, 0] = float("nan")
    with pytest.warns(RuntimeWarning, match="NaN"):
        res = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    involved = (res.pair_index == 1).any(1)
    assert res.n_nan == 3 and np.all(np.isnan(res.values[involved]))
    assert np.isfinite(res.max) and res.max == np.nanmax(res.values)


def test_strict_padding_is_infinite_for_different_lengths():
    mu, sigma, alpha, mask = make_posteriors(B=3, lengths=[2, 2, 4])
    res = pairwise_rd_bound(mu, sigma, alpha, mask, padding="strict", dtype=torch.float64)
    same = (res.pair_index == [0, 1]).all(1)
    assert np.isfinite(res.values[same]).all() and np.isinf(res.values[~same]).all()


def test_batch_pairs_and_counts():
    mu, sigma, alpha, mask = make_posteriors(B=11)
    res = pairwise_rd_bound(mu, sigma, alpha, mask, pairs="batch", batch_size=4, dtype=torch.float64)
    # batches {0..3}, {4..7}, {8..10}: 6 + 6 + 3 pairs
    assert res.n_pairs == 15
    assert (res.pair_index // 4 == res.batch_index[:, None]).all()
    full = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    lookup = {tuple(p): v for p, v in zip(full.pair_index.tolist(), full.values)}
    for p, v in zip(res.pair_index.tolist(), res.values):
        assert v == pytest.approx(lookup[tuple(p)], rel=1e-12)


def paper_reference(mu, sigma, alpha, mask, i, j, lam, n, cutoff=1e-4):
    """The authors' F1 + F2 + F3 (nvdp_research.md 2.2-2.3), written out term by term."""
    D = mu.shape[-1]
    a = torch.where(mask[i] & (alpha[i] > cutoff), alpha[i], 0.0).numpy()
    bt = torch.where(mask[j] & (alpha[j] > cutoff), alpha[j], 0.0).numpy()
    a0, b0 = a.sum(), bt.sum()
    nz = a > 0
    beta = b0 * a[nz] / a0
    F1 = (-(1 / (lam - 1)) * gammaln(lam * a0 - (lam - 1) * b0) - gammaln(b0) + lam / (lam - 1) * gammaln(a0)) / n
    F2 = np.sum((1 / (lam - 1)) * gammaln(lam * a[nz] - (lam - 1) * beta) + gammaln(beta) - lam / (lam - 1) * gammaln(a[nz])) / n
    u = (mask[i] | mask[j]).numpy()

    def filled(x, m):
        x, m = x.numpy(), m.numpy()
        return np.where(m[:, None], x, x[0])

    g = renyi_gaussian(filled(mu[j], mask[j])[u], filled(sigma[j], mask[j])[u], filled(mu[i], mask[i])[u],
                       filled(sigma[i], mask[i])[u], renyi_order=lam)
    F3 = g.sum() / D / n
    return F1 + F2 + F3


def test_paper_form_matches_term_by_term_reference():
    mu, sigma, alpha, mask = make_posteriors(B=6, K=6, D=4)
    alpha[2, 1] = 5e-5  # below the authors' 1e-4 cut-off
    res = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", batch_size=3, outlier_z=None, dtype=torch.float64)
    assert res.n_pairs == 6 and res.n_latent == 6 and res.direction == "paper"
    for k, (i, j) in enumerate(res.pair_index):
        assert res.values[k] == pytest.approx(paper_reference(mu, sigma, alpha, mask, i, j, 1.1, 6), rel=1e-9, abs=1e-12)
    res2 = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", batch_size=3, outlier_z=None, n_latent=129,
                             dtype=torch.float64)
    np.testing.assert_allclose(res2.values, res.values * 6 / 129, rtol=1e-12)


@pytest.mark.parametrize("ddof", [0, 1])
def test_paper_outlier_filter_by_hand(ddof):
    mu, sigma, alpha, mask = make_posteriors(B=16, K=5, D=3, seed=3)
    res = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", dtype=torch.float64, outlier_ddof=ddof)
    nofilt = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", outlier_z=None, dtype=torch.float64)
    r = res.values
    z = np.abs(r - r.mean()) / r.std(ddof=ddof)  # the authors: population std (ddof 0), the default
    kept = z <= 0.5
    assert res.n_pairs == 120 and np.array_equal(res.kept, kept) and res.n_filtered == int((~kept).sum()) > 0
    assert res.max == pytest.approx(r[kept].max()) and res.mean == pytest.approx(np.where(kept, r, 0).mean())
    assert res.max_unfiltered == r.max() >= res.max
    assert nofilt.max == r.max() and nofilt.n_filtered == 0


def test_paper_max_and_mean_over_batches():
    mu, sigma, alpha, mask = make_posteriors(B=8, K=4, D=3, seed=5)
    res = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", batch_size=4, outlier_z=None, dtype=torch.float64)
    per = [res.values[res.batch_index == b] for b in (0, 1)]
    assert res.max == max(p.max() for p in per)
    assert res.mean == pytest.approx(np.mean([p.mean() for p in per]))


def test_result_to_dict_is_json():
    mu, sigma, alpha, mask = make_posteriors(B=3)
    d = pairwise_rd_bound(mu, sigma, alpha, mask).to_dict(include_values=True)
    back = json.loads(json.dumps(d))
    assert back["n_pairs"] == 3 and len(back["values"]) == 3 and back["form"] == "exact"


def test_accepts_numpy_inputs():
    mu, sigma, alpha, mask = make_posteriors(B=3)
    a = pairwise_rd_bound(mu.numpy(), sigma.numpy(), alpha.numpy(), mask.numpy(), dtype=torch.float64)
    b = pairwise_rd_bound(mu, sigma, alpha, mask, dtype=torch.float64)
    np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"renyi_order": 1.0}, ValueError, "renyi_order"),
        ({"renyi_order": 0.5}, ValueError, "renyi_order"),
        ({"form": "approx"}, ValueError, "form"),
        ({"pairs": "some"}, ValueError, "pairs"),
        ({"direction": "up"}, ValueError, "direction"),
        ({"form": "paper", "direction": "max"}, ValueError, "direction"),
        ({"padding": "zero"}, ValueError, "padding"),
        ({"batch_size": 1}, ValueError, "batch_size"),
        ({"outlier_z": 0}, ValueError, "outlier_z"),
        ({"dtype": torch.float16}, ValueError, "dtype"),
        ({"n_latent": 0}, ValueError, "n_latent"),
    ],
)
def test_option_validation(kwargs, exc, match):
    mu, sigma, alpha, mask = make_posteriors(B=3)
    with pytest.raises(exc, match=match):
        pairwise_rd_bound(mu, sigma, alpha, mask, **kwargs)


def test_shape_validation():
    mu, sigma, alpha, mask = make_posteriors(B=3, K=4, D=2)
    with pytest.raises(ValueError, match="mu must have shape"):
        pairwise_rd_bound(mu[0], sigma, alpha, mask)
    with pytest.raises(ValueError, match="sigma must have the shape"):
        pairwise_rd_bound(mu, sigma[:, :3], alpha, mask)
    with pytest.raises(ValueError, match="alpha must have shape"):
        pairwise_rd_bound(mu, sigma, alpha[:, :3], mask)
    with pytest.raises(ValueError, match="mask must have shape"):
        pairwise_rd_bound(mu, sigma, alpha, mask[:2])
    with pytest.raises(TypeError, match="mask must be boolean"):
        pairwise_rd_bound(mu, sigma, alpha, mask.int())
    with pytest.raises(ValueError, match="at least 2 inputs"):
        pairwise_rd_bound(mu[:1], sigma[:1], alpha[:1], mask[:1])
    bad = mask.clone()
    bad[1, 0] = False
    with pytest.raises(ValueError, match="prior component"):
        pairwise_rd_bound(mu, sigma, alpha, bad)


def test_sigma_exactly_at_the_clipping_floor_is_the_boundary():
    # floor sqrt((lam-1)/lam) * sigma_p with sigma_p = 1: D(N(0,1) || N(0, floor^2)) is +inf,
    # D(N(0, floor^2) || N(0, 1)) is finite; slightly above the floor both are finite
    lam = 1.1
    floor = math.sqrt((lam - 1) / lam)
    assert renyi_gaussian(0.0, 1.0, 0.0, floor, renyi_order=lam) == np.inf
    assert np.isfinite(renyi_gaussian(0.0, floor, 0.0, 1.0, renyi_order=lam))
    assert np.isfinite(renyi_gaussian(0.0, 1.0, 0.0, floor * 1.001, renyi_order=lam))
    mu = torch.zeros(2, 2, 3, dtype=torch.float64)
    sigma = torch.ones(2, 2, 3, dtype=torch.float64)
    sigma[1, 1] = floor
    alpha = torch.ones(2, 2, dtype=torch.float64)
    mask = torch.ones(2, 2, dtype=torch.bool)
    res = {d: pairwise_rd_bound(mu, sigma, alpha, mask, direction=d, dtype=torch.float64).values[0]
           for d in ("forward", "backward", "max")}
    assert res["forward"] == math.inf and math.isfinite(res["backward"]) and res["max"] == math.inf


# halvings of the dim axis: 4 (D = 32, products of 16 dims where no underflow is possible, else 3),
# 3 (8, 24) and 1 (6)
@pytest.mark.parametrize("D", [32, 8, 24, 6])
def test_folded_logarithms_match_brute_force(D):
    mu, sigma, alpha, mask = make_posteriors(B=5, K=4, D=D, seed=3, sigma_lo=0.35)
    unclipped = sigma.clone()
    # some pairs infinite: the clamped path with underflow checks; s2 < 0 in dims 0 and D/2, which
    # the first halving multiplies (a positive product unless s2 is clamped at 0 first)
    unclipped[2, 1, 0] = unclipped[2, 1, D // 2] = 0.05
    for lam, sg in ((1.1, sigma), (2.0, sigma), (1.1, unclipped)):
        res = pairwise_rd_bound(mu, sg, alpha, mask, renyi_order=lam, dtype=torch.float64)
        for k, (i, j) in enumerate(res.pair_index):
            ref = max(brute_pair(mu, sg, alpha, mask, i, j, lam))
            assert res.values[k] == pytest.approx(ref, rel=1e-10, abs=1e-10)
        if sg is unclipped:
            assert 0 < res.n_inf < res.n_pairs
        r32 = pairwise_rd_bound(mu.float(), sg.float(), alpha.float(), mask, renyi_order=lam)
        np.testing.assert_allclose(r32.values, res.values, rtol=2e-5, atol=1e-5)


def test_underflowing_log_products_fall_back_to_one_log_per_dim():
    # r = lambda + (1 - lambda) v_a / v_b ~ 1e-6 in each of 8 dims: the float32 product of 8
    # (~1e-48) underflows to 0 (ln 0 = -inf would read as +inf); the result must stay finite
    lam = 1.1
    x = (lam - 1e-6) / (lam - 1)  # v_a / v_b giving r = 1e-6
    sigma = torch.ones(2, 1, 8, dtype=torch.float64)
    sigma[1] = 1.0 / math.sqrt(x)
    sigma = sigma.float().double()  # the float32 inputs, exactly, for the float64 reference
    r = lam + (1 - lam) * sigma[0, 0, 0] ** 2 / sigma[1, 0, 0] ** 2
    assert 1e-7 < r < 1e-5 and float(r.float() ** 8) == 0.0
    mu = torch.zeros(2, 1, 8, dtype=torch.float64)
    alpha = torch.ones(2, 1, dtype=torch.float64)
    mask = torch.ones(2, 1, dtype=torch.bool)
    ref = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=lam, direction="forward", dtype=torch.float64)
    assert ref.values[0] == pytest.approx(8 * math.log(r) / (2 * (1 - lam)) + 8 * math.log(sigma[1, 0, 0] / sigma[0, 0, 0]))
    r32 = pairwise_rd_bound(mu.float(), sigma.float(), alpha.float(), mask, renyi_order=lam, direction="forward")
    assert r32.n_inf == 0
    # float32 cancellation in s2 = lambda v_b + (1 - lambda) v_a (~1e-7 relative to ~1e-7) limits this
    assert r32.values[0] == pytest.approx(ref.values[0], rel=2e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_values_are_bit_identical_for_any_number_of_workers(dtype):
    mu, sigma, alpha, mask = make_posteriors(B=23, K=5, D=8, seed=4)
    mu, sigma, alpha = mu.to(dtype), sigma.to(dtype), alpha.to(dtype)
    before = torch.get_num_threads()
    kw = dict(dtype=dtype, max_chunk_elements=3 * 5 * 8)  # 3 pairs per tile: many tasks to share
    one = pairwise_rd_bound(mu, sigma, alpha, mask, n_workers=1, **kw)
    assert one.n_pairs == 23 * 22 // 2 and np.all(np.isfinite(one.values)) and one.max > 0
    for nw in (2, 3):
        many = pairwise_rd_bound(mu, sigma, alpha, mask, n_workers=nw, **kw)
        assert np.array_equal(many.values, one.values)
        assert np.array_equal(many.pair_index, one.pair_index)
    paper1 = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", n_workers=1, **kw)
    paper2 = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", n_workers=2, **kw)
    assert np.array_equal(paper1.values, paper2.values)
    assert torch.get_num_threads() == before  # the intra-op thread count is restored


def test_worker_count_validation():
    mu, sigma, alpha, mask = make_posteriors(B=3)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_workers must be a positive integer"):
            pairwise_rd_bound(mu, sigma, alpha, mask, n_workers=bad)
    with pytest.raises(ValueError, match="max_chunk_elements must be an integer >= 1"):
        pairwise_rd_bound(mu, sigma, alpha, mask, max_chunk_elements=0)
