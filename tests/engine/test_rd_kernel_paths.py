"""The fused numba RD kernel (engine.nvdp._rd_numba) against the torch op chain it replaces."""

import math

import numpy as np
import pytest
import torch

from engine.nvdp import _rd_numba, rd_kernel
from engine.nvdp.divergence import pairwise_rd_bound
from test_nvdp_divergence import make_posteriors  # tests/ is on sys.path (rootdir conftest)

pytestmark = pytest.mark.skipif(_rd_numba.get_kernel() is None, reason="numba is not available")


def both(monkeypatch, *args, **kw):
    """(fused kernel result, torch chain result) of pairwise_rd_bound(*args, **kw)."""
    fused = pairwise_rd_bound(*args, **kw)
    with monkeypatch.context() as m:
        m.setattr(rd_kernel._rd_numba, "get_kernel", lambda: None)
        chain = pairwise_rd_bound(*args, **kw)
    return fused, chain


def unclipped_posteriors(D=16, dtype=torch.float64, sigma_lo=0.3):
    mu, sigma, alpha, mask = make_posteriors(B=9, K=5, D=D, seed=7, sigma_lo=sigma_lo)
    sigma = sigma.clone()
    sigma[2, 0, 3] = 0.03  # s2 = lambda v_a + (1 - lambda) v_b < 0 against the others: +inf pairs
    return mu.to(dtype), sigma.to(dtype), alpha.to(dtype), mask


# (lambda, lowest sigma): the variance condition v_a / v_b < lambda / (lambda - 1) holds for most
# pairs; lambda = 2000: lambda^96 would overflow float64, so products of 48 dims are used (and
# equal weights keep the Dirichlet term finite)
@pytest.mark.parametrize("lam, sigma_lo", [(1.1, 0.3), (2.0, 0.75), (2000.0, 0.99999)])
@pytest.mark.parametrize("form", ["exact", "paper"])
@pytest.mark.filterwarnings("ignore:.*no paper-form value:RuntimeWarning")  # the paper form at lambda = 2000
def test_float64_agrees_with_the_torch_chain(monkeypatch, lam, sigma_lo, form):
    mu, sigma, alpha, mask = unclipped_posteriors(D=96, sigma_lo=sigma_lo)
    if lam > 100:
        alpha = mask.to(alpha.dtype)
    fused, chain = both(monkeypatch, mu, sigma, alpha, mask, renyi_order=lam, form=form, dtype=torch.float64)
    assert np.array_equal(np.isinf(fused.values), np.isinf(chain.values))
    assert np.array_equal(np.isnan(fused.values), np.isnan(chain.values))
    fin = np.isfinite(chain.values)
    assert fin.sum() > 5 and (~fin).sum() > 0 if form == "exact" else fin.sum() > 5
    np.testing.assert_allclose(fused.values[fin], chain.values[fin], rtol=1e-12, atol=0)


@pytest.mark.parametrize("padding", ["prior", "strict"])
def test_float32_agrees_with_the_torch_chain(monkeypatch, padding):
    mu, sigma, alpha, mask = unclipped_posteriors(D=40, dtype=torch.float32)
    fused, chain = both(monkeypatch, mu, sigma, alpha, mask, padding=padding, form="exact")
    assert np.array_equal(np.isinf(fused.values), np.isinf(chain.values))
    assert fused.n_inf == chain.n_inf and fused.n_nan == chain.n_nan
    fin = np.isfinite(chain.values)
    np.testing.assert_allclose(fused.values[fin], chain.values[fin], rtol=2e-5, atol=1e-5)


def test_float64_products_that_underflow_fall_back_to_one_log_per_dim():
    # r ~ 1e-6 in each of 64 dims: the float64 product of the group (~1e-384) underflows to 0
    # (ln 0 = -inf would read as +inf); the result must stay finite and exact
    lam, D = 1.1, 64
    x = (lam - 1e-6) / (lam - 1)  # v_a / v_b giving r = 1e-6
    sigma = torch.ones(2, 1, D, dtype=torch.float64)
    sigma[1] = 1.0 / math.sqrt(x)
    r = lam + (1 - lam) * sigma[0, 0, 0] ** 2 / sigma[1, 0, 0] ** 2
    assert float(r) ** D == 0.0
    mu = torch.zeros(2, 1, D, dtype=torch.float64)
    alpha = torch.ones(2, 1, dtype=torch.float64)
    mask = torch.ones(2, 1, dtype=torch.bool)
    res = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=lam, direction="forward", dtype=torch.float64)
    want = D * math.log(r) / (2 * (1 - lam)) + D * math.log(sigma[1, 0, 0] / sigma[0, 0, 0])
    assert res.n_inf == 0 and res.values[0] == pytest.approx(want, rel=1e-9)


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("NVDP_RD_NUMBA", "0")
    _rd_numba.get_kernel.cache_clear()
    try:
        assert _rd_numba.get_kernel() is None
    finally:
        monkeypatch.delenv("NVDP_RD_NUMBA")
        _rd_numba.get_kernel.cache_clear()
    assert _rd_numba.get_kernel() is not None
