"""engine.privacy against an independent oracle (Google dp-accounting, test-only) and properties."""

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import privacy as P


# ---- golden values (PMT.md section 1), pinned to the oracle and to the spec's figures -------------
def test_mu_one_gives_epsilon_4_3772_at_delta_1e5():
    eps = P.gdp_epsilon(1.0, 1e-5)
    assert eps == pytest.approx(4.3772, abs=1e-4)
    oracle = dp_accounting.get_epsilon_gaussian(1.0, 1e-5)  # sigma = 1, sensitivity 1 <=> mu = 1
    assert eps == pytest.approx(oracle, abs=1e-6)


@pytest.mark.parametrize("epsilon, expected", [(1.0, 3.7306), (0.1, 30.7496), (8.0, 0.6002)])
def test_analytic_sigma_golden(epsilon, expected):
    sigma = P.analytic_gaussian_sigma(epsilon, 1e-5)
    assert sigma == pytest.approx(expected, abs=1e-4)
    oracle = dp_accounting.get_sigma_gaussian(epsilon, 1e-5)
    assert sigma == pytest.approx(oracle, rel=1e-6)
    assert sigma >= oracle * (1 - 1e-9)  # rounded towards more noise


def test_sigma_scales_with_sensitivity():
    assert P.analytic_gaussian_sigma(1.0, 1e-5, sensitivity=2.5) == pytest.approx(2.5 * 3.7306316, rel=1e-6)


def test_classical_sigma_formula_and_warning():
    s = P.classical_gaussian_sigma(0.5, 1e-5, sensitivity=1.0)
    assert s == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rel=1e-12)
    assert s > P.analytic_gaussian_sigma(0.5, 1e-5)  # classical is looser
    with pytest.warns(UserWarning, match="epsilon < 1"):
        P.classical_gaussian_sigma(2.0, 1e-5)


# ---- round trips and rounding towards more privacy ----------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    eps=st.floats(min_value=1e-3, max_value=50.0),
    log10_delta=st.floats(min_value=-12.0, max_value=-1.0),
)
def test_calibrated_delta_never_exceeds_target(eps, log10_delta):
    delta = 10.0**log10_delta
    mu = P.gdp_mu(eps, delta)
    assert P.gdp_delta(eps, mu) <= delta
    sigma = P.analytic_gaussian_sigma(eps, delta)
    assert P.gdp_delta(eps, 1.0 / sigma) <= delta
    # and the epsilon reported back for that mu never understates the target
    assert P.gdp_epsilon(mu, delta) <= eps * (1 + 1e-9) + 1e-12


@settings(max_examples=100, deadline=None)
@given(mu=st.floats(min_value=0.01, max_value=20.0), log10_delta=st.floats(min_value=-12.0, max_value=-1.0))
def test_epsilon_rounded_up(mu, log10_delta):
    delta = 10.0**log10_delta
    eps = P.gdp_epsilon(mu, delta)
    assert P.gdp_delta(eps, mu) <= delta
    if eps > 0:
        # the epsilon is tight: a slightly smaller epsilon would violate delta
        assert P.gdp_delta(eps * (1 - 1e-6), mu) > delta


def test_grid_matches_oracle():
    for eps in (0.05, 0.5, 1.0, 3.0, 10.0):
        for delta in (1e-3, 1e-5, 1e-9):
            mu = P.gdp_mu(eps, delta)
            assert 1.0 / mu == pytest.approx(dp_accounting.get_sigma_gaussian(eps, delta), rel=1e-6)


def test_gdp_delta_monotone_in_mu_and_epsilon():
    mus = np.linspace(0.1, 5, 40)
    deltas = [P.gdp_delta(1.0, m) for m in mus]
    assert np.all(np.diff(deltas) > 0)
    epss = np.linspace(0.0, 10, 40)
    deltas = [P.gdp_delta(e, 1.0) for e in epss]
    assert np.all(np.diff(deltas) < 0)


def test_large_epsilon_does_not_overflow():
    assert 0.0 <= P.gdp_delta(800.0, 1.0) < 1e-100
    assert math.isfinite(P.gdp_mu(200.0, 1e-5))


# ---- composition and the ledger ------------------------------------------------------------------
def test_composition_and_split():
    assert P.compose_gdp([3.0, 4.0]) == pytest.approx(5.0)
    parts = [P.split_mu(2.0, 10)] * 10
    assert P.compose_gdp(parts) == pytest.approx(2.0, rel=1e-12)
    assert P.compose_gdp([1.0, math.inf]) == math.inf


@settings(max_examples=50, deadline=None)
@given(mu=st.floats(min_value=0.01, max_value=10.0), k=st.integers(min_value=1, max_value=500))
def test_budget_parts_sum_to_at_most_total(mu, k):
    assert P.compose_gdp([P.split_mu(mu, k)] * k) <= mu * (1 + 1e-12)


def test_ledger_totals_match_oracle_composition():
    ledger = P.PrivacyLedger(delta=1e-5)
    ledger.record("A", sensitivity=math.sqrt(2) * 9.0, sigma=math.sqrt(2) * 9.0 / 0.5)
    ledger.record("b", sensitivity=6.0, sigma=6.0 / 0.5)
    assert ledger.releases[0].mu == pytest.approx(0.5)
    assert ledger.total_mu == pytest.approx(math.sqrt(0.5), rel=1e-12)
    # oracle: two Gaussian mechanisms with noise multipliers 2 compose like one with 2/sqrt(2)
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(2.0), 2)
    assert ledger.total_epsilon == pytest.approx(acc.get_epsilon(1e-5), abs=2e-3)
    frame = ledger.to_frame()
    assert list(frame["name"]) == ["A", "b", "total (composed)"]
    assert frame["epsilon"].iloc[-1] == pytest.approx(ledger.total_epsilon)


def test_symmetric_noise_is_symmetric_with_right_scale():
    rng = np.random.default_rng(0)
    W = P.symmetric_gaussian_noise(6, 2.0, rng, size=4000)
    assert W.shape == (4000, 6, 6)
    assert np.array_equal(W, np.swapaxes(W, -1, -2))
    assert W[:, 0, 3].std() == pytest.approx(2.0, rel=0.05)
    assert W[:, 2, 2].std() == pytest.approx(2.0, rel=0.05)
    assert P.symmetric_gaussian_noise(3, 0.0, rng).sum() == 0.0


def test_same_seed_same_noise():
    a = P.gaussian_noise(5, 1.0, P.check_random_state(7))
    b = P.gaussian_noise(5, 1.0, P.check_random_state(7))
    c = P.gaussian_noise(5, 1.0, P.check_random_state(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ---- invalid arguments --------------------------------------------------------------------------
@pytest.mark.parametrize("eps, match", [(0, "epsilon must be > 0"), (-1, "epsilon must be > 0"),
                                        (float("nan"), "epsilon is NaN"), (float("inf"), "epsilon must be finite")])
def test_bad_epsilon(eps, match):
    with pytest.raises(ValueError, match=match):
        P.analytic_gaussian_sigma(eps, 1e-5)


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, float("nan")])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        P.gdp_mu(1.0, delta)


def test_bad_types_and_sensitivity():
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        P.gdp_mu("one", 1e-5)
    with pytest.raises(TypeError):
        P.gdp_mu(True, 1e-5)
    with pytest.raises(ValueError, match="sensitivity"):
        P.gaussian_sigma(0.0, 1.0)
    with pytest.raises(ValueError, match="neighbouring"):
        P.validate_neighbouring("swap")
    with pytest.raises(TypeError, match="random_state"):
        P.check_random_state(np.random.RandomState(0))


def test_extreme_but_valid_parameters():
    # epsilon = 1e-3 and 50, delta = 1e-12: valid, finite answers
    for eps in (1e-3, 50.0):
        for delta in (1e-12, 1e-5):
            sigma = P.analytic_gaussian_sigma(eps, delta)
            assert math.isfinite(sigma) and sigma > 0
    assert P.gdp_mu(math.inf, 1e-5) == math.inf
    assert P.gaussian_sigma(1.0, math.inf) == 0.0
