"""Bayesian-DP accountant (Triastcyn & Faltings 2020): floor, hand computation, monotonicity, errors."""

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import t as student_t

from engine.nvdp.bdp import BDPResult, bdp_epsilon, bdp_from_posteriors
from engine.nvdp.divergence import pairwise_rd_bound

FLOOR = math.log(1e5) / 1.1  # 10.46629...


def test_zero_divergence_gives_the_floor():
    res = bdp_epsilon([np.zeros(120)] * 16, renyi_order=1.1, delta=1e-5)
    assert res.epsilon == pytest.approx(10.466, abs=5e-4)
    assert res.epsilon == pytest.approx(FLOOR, rel=1e-9)
    assert res.privacy_cost == 0.0 and res.n_batches == 16 and res.n_pairs == 1920
    assert isinstance(res, BDPResult)


def test_single_batch_by_hand():
    d = np.array([0.1, 0.4, 0.05, 0.3, 0.0])
    lam, conf, delta = 1.1, 1 - 1e-4, 1e-3
    m = np.exp(lam * d)
    tq = student_t.ppf(conf, len(d) - 1)
    cost = math.log(m.mean() + tq * m.std(ddof=1) / math.sqrt(len(d)))
    eps = (cost - math.log(delta - (1 - conf))) / lam
    res = bdp_epsilon([d], renyi_order=lam, delta=delta, confidence=conf)
    assert res.privacy_cost == pytest.approx(cost, rel=1e-12)
    assert res.epsilon == pytest.approx(eps, rel=1e-12)
    assert res.delta_effective == pytest.approx(delta - (1 - conf))


def test_costs_add_over_batches_and_flat_input_matches():
    rng = np.random.default_rng(0)
    groups = [rng.uniform(0, 0.5, 30) for _ in range(3)]
    conf = 1 - 1e-7
    per = [bdp_epsilon([g], confidence=conf).privacy_cost for g in groups]
    res = bdp_epsilon(groups, confidence=conf)
    np.testing.assert_allclose(res.batch_costs, per, rtol=1e-12)
    assert res.epsilon == pytest.approx((sum(per) - math.log(1e-5 - (1 - conf**3))) / 1.1, rel=1e-12)
    flat = bdp_epsilon(np.concatenate(groups), np.repeat([7, 2, 5], 30), confidence=conf)
    assert flat.privacy_cost == pytest.approx(res.privacy_cost, rel=1e-12)


def test_large_divergences_do_not_overflow():
    res = bdp_epsilon([np.array([1000.0, 1001.0, 999.0])])
    assert math.isfinite(res.epsilon) and res.epsilon > 1000


@settings(max_examples=40, deadline=None)
@given(
    base=st.lists(st.floats(0.0, 3.0), min_size=2, max_size=20),
    bump=st.floats(1e-3, 2.0),
    scale=st.floats(1.01, 3.0),
)
def test_monotone_in_the_divergences(base, bump, scale):
    d = np.array(base)
    lo = bdp_epsilon([d]).epsilon
    assert lo >= FLOOR - 1e-9  # divergences >= 0 never go below the floor
    assert bdp_epsilon([d + bump]).epsilon > lo  # every pair larger by the same amount
    assert bdp_epsilon([d * scale]).epsilon >= lo - 1e-9  # every pair scaled up
    top = d.copy()
    top[np.argmax(d)] += bump  # the worst pair gets worse
    assert bdp_epsilon([top]).epsilon > lo
    assert bdp_epsilon([d, d]).epsilon > lo  # one more batch composes


def test_student_t_bound_is_not_monotone_in_a_single_low_pair():
    # documented property of the mean + t * sd estimator: raising the low pair removes the spread
    assert bdp_epsilon([np.array([0.0, 1.0])]).epsilon > bdp_epsilon([np.array([1.0, 1.0])]).epsilon


def test_infinite_and_nan_divergences_are_not_dropped():
    res = bdp_epsilon([np.array([0.1, np.inf, 0.2])])
    assert res.epsilon == math.inf and res.n_inf == 1
    with pytest.warns(RuntimeWarning, match="NaN"):
        res = bdp_epsilon([np.array([0.1, np.nan, 0.2])])
    assert math.isnan(res.epsilon) and res.n_nan == 1


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"renyi_order": 1.0}, "renyi_order"),
        ({"renyi_order": 0.9}, "renyi_order"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": -1e-5}, "delta"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"confidence": 0.9}, "1 - confidence"),  # 1 - 0.9^2 > delta
    ],
)
def test_invalid_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bdp_epsilon([np.zeros(3), np.zeros(3)], **kwargs)


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="batch_index"):
        bdp_epsilon(np.zeros(5))
    with pytest.raises(ValueError, match="equal length"):
        bdp_epsilon(np.zeros(5), np.zeros(4))
    with pytest.raises(ValueError, match="no pair divergences"):
        bdp_epsilon([np.zeros(3), np.zeros(0)])
    with pytest.raises(ValueError, match="empty"):
        bdp_epsilon([])


def posteriors(B=32, K=4, D=3, seed=0, scale=0.3):
    g = torch.Generator().manual_seed(seed)
    mu = torch.randn(B, K, D, generator=g, dtype=torch.float64) * scale
    sigma = torch.full((B, K, D), 0.9, dtype=torch.float64)
    alpha = torch.ones(B, K, dtype=torch.float64)
    mu[:, 0], sigma[:, 0] = 0.0, 1.0
    return mu, sigma, alpha, torch.ones(B, K, dtype=torch.bool)


def test_from_posteriors_uses_order_lambda_plus_one_within_batches():
    mu, sigma, alpha, mask = posteriors()
    res, rd = bdp_from_posteriors(mu, sigma, alpha, mask, dtype=torch.float64)
    assert rd.renyi_order == pytest.approx(2.1) and res.divergence_order == pytest.approx(2.1)
    assert rd.n_pairs == 2 * 120 and res.n_batches == 2
    again = bdp_epsilon(rd, divergence_order=2.1)
    assert again.epsilon == pytest.approx(res.epsilon, rel=1e-12)
    plug_in, rd11 = bdp_from_posteriors(mu, sigma, alpha, mask, divergence_order=1.1, dtype=torch.float64)
    assert FLOOR < plug_in.epsilon < res.epsilon  # D_1.1 <= D_2.1
    # more spread-out posteriors -> larger epsilon
    wide, _ = bdp_from_posteriors(*posteriors(scale=0.6), dtype=torch.float64)
    assert wide.epsilon > res.epsilon
    json.dumps(res.to_dict())


def test_rd_result_carries_its_batches():
    mu, sigma, alpha, mask = posteriors(B=20)
    rd = pairwise_rd_bound(mu, sigma, alpha, mask, pairs="batch", batch_size=8)
    res = bdp_epsilon(rd)
    assert res.n_batches == 3 and res.n_pairs == 28 + 28 + 6
    with pytest.raises(ValueError, match="batch_index must be None"):
        bdp_epsilon(rd, rd.batch_index)
