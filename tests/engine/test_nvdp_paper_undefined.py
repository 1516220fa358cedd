"""Paper-form pairs that are NaN although both inputs are valid (the warning used to blame the inputs).

At lambda = 2 an input a with alpha_0 = 2 before an input b with alpha'_0 = 4 gives
lambda alpha_0 - (lambda - 1) alpha'_0 = 0: ln Gamma(0) = +inf makes the totals' term -inf and each
component term +inf, so the authors' proxy is -inf + inf = NaN for that pair (their code too).
"""

import math
import warnings

import numpy as np
import pytest
import torch

from engine.nvdp.divergence import pairwise_rd_bound


def _inputs():
    K, D = 4, 3
    g = torch.Generator().manual_seed(1)
    mu = 0.3 * torch.randn(3, K, D, generator=g, dtype=torch.float64)
    mu[:, 0] = 0.0
    sigma = torch.full((3, K, D), 0.8, dtype=torch.float64)
    sigma[:, 0] = 1.0
    alpha = torch.tensor([[1.0, 1.0, 0.0, 0.0],  # a: alpha_0 = 2, two real components
                          [1.0, 1.0, 1.0, 1.0],  # b: alpha_0 = 4
                          [1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)  # c: like a
    mask = alpha > 0
    return mu, sigma, alpha, mask


def test_undefined_pairs_are_counted_as_such_and_dropped():
    mu, sigma, alpha, mask = _inputs()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=2.0, form="paper", batch_size=3,
                                outlier_z=None, dtype=torch.float64)
    # pairs (a, b), (a, c), (b, c): only (a, b) has lambda alpha_0 - (lambda - 1) alpha'_0 = 2*2 - 4 = 0
    assert res.pair_index.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert math.isnan(res.values[0]) and np.isfinite(res.values[1:]).all()
    assert (res.n_nan, res.n_undefined) == (1, 1)
    msgs = [str(w.message) for w in rec if issubclass(w.category, RuntimeWarning)]
    assert any(m.startswith("1 of 3 pairs have no paper-form value") for m in msgs), msgs
    assert not any("input(s) have non-finite" in m for m in msgs), msgs  # the inputs are valid
    # left out of the max and the mean (one batch, no filter): the other two pairs only
    assert res.max == pytest.approx(res.values[1:].max(), rel=0, abs=0)
    assert res.mean == pytest.approx(res.values[1:].mean(), rel=1e-15)
    assert res.to_dict()["n_undefined"] == 1


def test_other_order_is_defined():
    # at lambda = 1.5 the argument is 1.5*2 - 0.5*4 = 1 > 0: every pair is defined
    mu, sigma, alpha, mask = _inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all
        res = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=1.5, form="paper", batch_size=3,
                                outlier_z=None, dtype=torch.float64)
    assert (res.n_nan, res.n_undefined) == (0, 0) and np.isfinite(res.values).all()


def test_numerical_failure_still_blames_the_input():
    mu, sigma, alpha, mask = _inputs()
    sigma[2, 1, 0] = 0.0  # input c fails on a real component
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = pairwise_rd_bound(mu, sigma, alpha, mask, renyi_order=2.0, form="paper", batch_size=3,
                                outlier_z=None, dtype=torch.float64)
    msgs = [str(w.message) for w in rec if issubclass(w.category, RuntimeWarning)]
    # (a, c) and (b, c) fail because of c; (a, b) is the proxy's undefined pair
    assert (res.n_nan, res.n_undefined) == (3, 1)
    assert any(m.startswith("2 of 3 pairs are NaN: 1 input(s)") for m in msgs), msgs
    assert any(m.startswith("1 of 3 pairs have no paper-form value") for m in msgs), msgs
