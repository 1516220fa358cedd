"""The authors' protocol, behaviour by behaviour, on small hand-made inputs.

1. the outlier filter's z-scores use the population std (ddof 0);
2. a dimension whose Gaussian term is undefined is dropped by a NaN-mean over dims (paper form),
   while the exact form (the guarantee) reports +inf;
3. the accountant subsamples with q = B / N_eval.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import t as student_t

from engine.nvdp.divergence import pairwise_rd_bound
from engine.nvdp.paper_protocol import outlier_filter, paper_bdp


def test_outlier_filter_population_std_vs_sample_std():
    # one 4-sentence batch = 6 pairs; the pair at 1.7 has |z| = 0.547 with the population std
    # (1.0046) and 0.4998 with the sample std (1.1005): the authors drop it, ddof 1 keeps it.
    r = np.array([0.9, 1.7, 2.0, 2.2, 2.5, 4.2])
    mx0, mean0, kept0 = outlier_filter(r, np.zeros(6, int), outlier_z=0.5, ddof=0)
    mx1, mean1, kept1 = outlier_filter(r, np.zeros(6, int), outlier_z=0.5, ddof=1)
    assert kept0.tolist() == [False, False, True, True, True, False]
    assert kept1.tolist() == [False, True, True, True, True, False]
    assert mean0 == pytest.approx((2.0 + 2.2 + 2.5) / 6, abs=1e-12)  # 1.1167: filtered pairs count as 0
    assert mean1 == pytest.approx((1.7 + 2.0 + 2.2 + 2.5) / 6, abs=1e-12)  # 1.4
    assert mx0 == mx1 == 2.5
    with pytest.raises(ValueError, match="ddof"):
        outlier_filter(r, np.zeros(6, int), ddof=2)


def test_paper_form_default_is_population_std():
    g = torch.Generator().manual_seed(3)
    mu = torch.randn(4, 3, 2, generator=g, dtype=torch.float64)
    mu[:, 0] = 0
    sigma = torch.full((4, 3, 2), 0.9, dtype=torch.float64)
    sigma[:, 0] = 1
    alpha = torch.ones(4, 3, dtype=torch.float64)
    mask = torch.ones(4, 3, dtype=torch.bool)
    res = pairwise_rd_bound(mu, sigma, alpha, mask, form="paper", dtype=torch.float64)
    mx, mean, kept = outlier_filter(res.values, res.batch_index, ddof=0)
    assert res.mean == mean and res.max == mx and np.array_equal(res.kept, kept)


def _two_inputs():
    # component 1, dim 0: sigma_a = 0.2, sigma_b = 1 -> for D(b || a) (the paper orientation)
    # s2 = 1.1 * 0.04 - 0.1 * 1 = -0.056 < 0: undefined. Dim 1: equal stds 1, means 0.3 vs -0.5.
    mu = torch.zeros(2, 2, 2, dtype=torch.float64)
    mu[0, 1] = torch.tensor([0.0, 0.3], dtype=torch.float64)
    mu[1, 1] = torch.tensor([0.0, -0.5], dtype=torch.float64)
    sigma = torch.ones(2, 2, 2, dtype=torch.float64)
    sigma[0, 1, 0] = 0.2
    alpha = torch.ones(2, 2, dtype=torch.float64)
    mask = torch.ones(2, 2, dtype=torch.bool)
    return mu, sigma, alpha, mask


def test_undefined_dimension_is_dropped_by_nanmean_in_the_paper_form_only():
    mu, sigma, alpha, mask = _two_inputs()
    kw = dict(form="paper", batch_size=2, outlier_z=None, dtype=torch.float64)
    nan = pairwise_rd_bound(mu, sigma, alpha, mask, **kw)  # default: the authors' nanmean
    # equal alphas: Dirichlet proxy 0; position 0 identical: 0; position 1: mean over the one defined
    # dim of lambda d^2 / 2 (equal unit stds) = 1.1 * 0.64 / 2 = 0.352; divided by n = K = 2.
    assert nan.values[0] == pytest.approx(1.1 * 0.8**2 / 2 / 2, abs=1e-12)
    conservative = pairwise_rd_bound(mu, sigma, alpha, mask, undefined="inf", **kw)
    assert math.isinf(conservative.values[0])
    exact = pairwise_rd_bound(mu, sigma, alpha, mask, form="exact", dtype=torch.float64)
    assert math.isinf(exact.values[0]) and exact.n_inf == 1  # the guarantee form stays +inf


def test_dirichlet_proxy_matches_the_closed_form_when_defined():
    g = torch.Generator().manual_seed(5)
    mu = torch.randn(3, 4, 3, generator=g, dtype=torch.float64)
    mu[:, 0] = 0
    sigma = 0.5 + torch.rand(3, 4, 3, generator=g, dtype=torch.float64) * 0.4
    sigma[:, 0] = 1
    alpha = 0.2 + torch.rand(3, 4, generator=g, dtype=torch.float64)
    mask = torch.ones(3, 4, dtype=torch.bool)
    kw = dict(form="paper", outlier_z=None, dtype=torch.float64)
    a = pairwise_rd_bound(mu, sigma, alpha, mask, undefined="nanmean", **kw)
    b = pairwise_rd_bound(mu, sigma, alpha, mask, undefined="inf", **kw)
    assert np.allclose(a.values, b.values, rtol=0, atol=1e-12)  # identical wherever everything is defined


def _accountant_inputs():
    # 3 inputs that differ only in the mean of component 1, dim 0 (0, 1, 3); unit stds, equal alphas.
    mu = torch.zeros(3, 2, 2, dtype=torch.float64)
    mu[:, 1, 0] = torch.tensor([0.0, 1.0, 3.0])
    sigma = torch.ones(3, 2, 2, dtype=torch.float64)
    alpha = torch.ones(3, 2, dtype=torch.float64)
    mask = torch.ones(3, 2, dtype=torch.bool)
    return mu, sigma, alpha, mask


def _expected_epsilon(q, delta=1e-5, lam=1.1, conf=1 - 1e-16):
    # scaled terms: s(0) = s(1) = 0, s(2) = mean_pos mean_d (dmu)^2 = dmu^2 / 4 (sigma_L = sigma_R = 1,
    # Dirichlet proxy 0); moment order int(1.1 + 1) = 2: E[e^s] = (1-q)^2 + 2q(1-q) + q^2 e^{s(2)}.
    d2 = np.array([1.0, 9.0, 4.0]) / 4.0
    mgf = 1.0 + q**2 * np.expm1(d2)
    p = mgf.size
    est = mgf.mean() + student_t.ppf(conf, p - 1) * mgf.std(ddof=0) / math.sqrt(p - 1)
    return (math.log(est) - math.log(delta - (1.0 - conf))) / lam


@pytest.mark.parametrize("n_eval, q", [(3, 1.0), (48, 16 / 48), (480, 16 / 480)])
def test_accountant_subsamples_with_q_batch_over_n_eval(n_eval, q):
    res = paper_bdp(*_accountant_inputs(), batch_size=16, n_eval=n_eval)
    assert res["q"] == pytest.approx(q)
    assert res.epsilon == pytest.approx(_expected_epsilon(q), rel=1e-9)


def test_accountant_without_subsampling_is_larger():
    sub = paper_bdp(*_accountant_inputs(), n_eval=48)
    full = paper_bdp(*_accountant_inputs(), n_eval=48, subsample=False)
    assert full["q"] == 1.0 and full.epsilon == pytest.approx(_expected_epsilon(1.0), rel=1e-9)
    assert sub.epsilon < full.epsilon
    # zero divergence: the floor ln(1/delta)/lambda = 10.466
    mu, sigma, alpha, mask = _accountant_inputs()
    assert paper_bdp(torch.zeros_like(mu), sigma, alpha, mask).epsilon == pytest.approx(math.log(1e5) / 1.1, abs=1e-6)
