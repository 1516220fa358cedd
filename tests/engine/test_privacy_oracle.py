"""engine.privacy conversions and splits against an arbitrary-precision oracle (mpmath, test-only).

Every conversion and split rounds towards more privacy, in exact arithmetic, over
epsilon in [1e-8, 50] and delta in [1e-300, 0.1]; also check_delta, check_bound and the sampler.
"""

import math
import warnings
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import privacy as P
from engine.privacy import gdp as G

EPS_GRID = np.logspace(-8, math.log10(50.0), 19)
DELTA_GRID = np.logspace(-300, -1, 9)
GRID = [(float(e), float(d)) for e in EPS_GRID for d in DELTA_GRID]  # 171 points


def exact_delta(eps, mu):
    """delta(eps; mu) of the float arguments, at 80 significant digits (mu may be an mpf)."""
    with mp.workdps(80):
        e, m = mp.mpf(eps), mp.mpf(mu)
        a, b = -e / m + m / 2, -e / m - m / 2
        return mp.ncdf(a) - mp.exp(e) * mp.ncdf(b)


def test_grid_has_171_points():
    assert len(GRID) == 171 and GRID[0] == (1e-8, 1e-300)


@pytest.mark.parametrize("eps, delta", GRID)
def test_gdp_mu_never_exceeds_delta_target_exactly(eps, delta):
    mu = P.gdp_mu(eps, delta)
    ex = exact_delta(eps, mu)
    assert ex <= delta  # rounded towards more privacy, in exact arithmetic
    assert ex >= delta * (1 - 1e-7)  # and not wastefully: within 1e-7 of the target
    # the epsilon reported back never exceeds the request (was 1.0000000563e-06 at (1e-6, 1e-300))
    e2 = P.gdp_epsilon(mu, delta)
    assert e2 <= eps
    assert exact_delta(e2, mu) <= delta
    # the mechanism's own mu (sensitivity / sigma, exact rational) also meets the target
    for s in (1.0, 0.3, 7.0):
        sigma = P.analytic_gaussian_sigma(eps, delta, s)
        with mp.workdps(80):
            mu_exact = mp.mpf(s) / mp.mpf(sigma)
        assert exact_delta(eps, mu_exact) <= delta
        assert P.gdp_epsilon(P.gaussian_mu(s, sigma), delta) <= eps


def test_cli_case_epsilon_1e6_delta_1e300():
    eps, delta = 1e-6, 1e-300
    sigma = P.analytic_gaussian_sigma(eps, delta, 1.0)
    achieved = P.gdp_epsilon(P.gaussian_mu(1.0, sigma), delta)
    assert achieved <= 1e-6
    assert achieved == pytest.approx(1e-6, rel=1e-8)
    assert P.gdp_delta(eps, P.gaussian_mu(1.0, sigma)) <= delta


def test_old_worst_point_was_an_overshoot_now_conservative():
    # the old naive difference Phi(a) - e^eps Phi(b) overshot by +0.74 % here
    eps, delta = 1e-8, 1e-300
    mu = P.gdp_mu(eps, delta)
    assert float(exact_delta(eps, mu) / delta) == pytest.approx(1.0, abs=1e-7)
    assert exact_delta(eps, mu) <= delta
    assert mu == pytest.approx(2.7510465696848e-10, rel=1e-9)


@pytest.mark.parametrize("eps, delta", GRID[::7])
def test_gdp_delta_central_accuracy(eps, delta):
    for mu in (P.gdp_mu(eps, delta), P.gdp_mu(eps, delta) * 1.5, 0.5, 3.0):
        ex = exact_delta(eps, mu)
        got = P.gdp_delta(eps, mu)
        if ex > 1e-300:
            assert abs(got / float(ex) - 1) < 1e-9


@settings(max_examples=300, deadline=None)
@given(log_eps=st.floats(-8, math.log10(50.0)), log_mu=st.floats(-10, 1.5))
def test_log_delta_upper_bound_is_an_upper_bound(log_eps, log_mu):
    eps, mu = 10.0**log_eps, 10.0**log_mu
    central, upper = G._log_delta_bounds(eps, mu)
    ex = exact_delta(eps, mu)
    if ex <= 0 or ex < mp.mpf("1e-320"):
        return
    lex = float(mp.log(ex))
    assert upper >= lex
    assert upper - lex < 1e-6  # and a tight one


@settings(max_examples=150, deadline=None)
@given(log_eps=st.floats(-8, math.log10(50.0)), log_delta=st.floats(-300, -1))
def test_calibration_conservative_hypothesis(log_eps, log_delta):
    eps, delta = 10.0**log_eps, 10.0**log_delta
    mu = P.gdp_mu(eps, delta)
    assert exact_delta(eps, mu) <= delta
    assert P.gdp_epsilon(mu, delta) <= eps


@settings(max_examples=100, deadline=None)
@given(log_mu=st.floats(-6, 1.5), log_delta=st.floats(-300, -1))
def test_gdp_epsilon_rounded_up_and_tight(log_mu, log_delta):
    mu, delta = 10.0**log_mu, 10.0**log_delta
    eps = P.gdp_epsilon(mu, delta)
    assert exact_delta(eps, mu) <= delta
    if eps > 0:
        assert exact_delta(eps * (1 - 1e-6), mu) > delta


# ---- splits and composition ---------------------------------------------------------------------
def test_split_epsilon_8_into_3():
    part = P.split_epsilon(8.0, 3)
    assert 3 * Fraction(part) <= 8 and part == pytest.approx(8 / 3, rel=1e-15)
    assert part + part + part <= 8.0


@pytest.mark.parametrize("k", [2, 3, 6, 7, 10, 49, 500])
@pytest.mark.parametrize("mu", [8.0, 1.0, 0.1, 2.0 / 3.0, 0.2680505437597302])
def test_split_mu_composes_to_at_most_total(mu, k):
    part = P.split_mu(mu, k)
    assert k * Fraction(part) ** 2 <= Fraction(mu) ** 2
    assert P.compose_gdp([part] * k) <= mu
    assert math.nextafter(part, math.inf) * math.sqrt(k) >= mu * (1 - 1e-15)  # largest such float


@settings(max_examples=200, deadline=None)
@given(mu=st.floats(1e-6, 50.0), k=st.integers(1, 1000))
def test_split_mu_hypothesis(mu, k):
    part = P.split_mu(mu, k)
    assert k * Fraction(part) ** 2 <= Fraction(mu) ** 2
    assert P.compose_gdp([part] * k) <= mu


def test_compose_gdp_is_rounded_up_exactly():
    for mus in ([0.6, 0.8], [0.1] * 7, [1.0, 1e-9], [3.0, 4.0]):
        total = P.compose_gdp(mus)
        s = sum(Fraction(m) ** 2 for m in mus)
        assert Fraction(total) ** 2 >= s
        assert Fraction(math.nextafter(total, 0.0)) ** 2 < s
    assert P.compose_gdp([3.0, 4.0]) == 5.0


@pytest.mark.parametrize("epsilon", [8.0, 1.0, 0.3, 50.0])
@pytest.mark.parametrize("T", [1, 3, 7])
def test_newton_style_ledger_total_never_exceeds_budget(epsilon, T):
    # PMTLogistic / DPNewton: mu0 = mu / sqrt(2T), 2T releases at sigma = sens / mu0 (issue: 8.000000000000002)
    delta = 1e-5
    mu = P.gdp_mu(epsilon, delta)
    mu0 = P.split_mu(mu, 2 * T)
    ledger = P.PrivacyLedger(delta=delta)
    for sens in (math.sqrt(2) * 3.7, 0.7):
        sigma = P.gaussian_sigma(sens, mu0)
        for _ in range(T):
            ledger.record("x", sensitivity=sens, sigma=sigma)
    assert ledger.total_mu <= mu
    assert ledger.total_epsilon <= epsilon


@settings(max_examples=100, deadline=None)
@given(sens=st.floats(1e-6, 1e6), mu=st.floats(1e-6, 50.0))
def test_sigma_and_mu_rounded_conservatively(sens, mu):
    sigma = P.gaussian_sigma(sens, mu)
    assert Fraction(sigma) >= Fraction(sens) / Fraction(mu)
    m2 = P.gaussian_mu(sens, sigma)
    assert Fraction(m2) >= Fraction(sens) / Fraction(sigma)
    assert m2 <= mu


# ---- item 5: delta ------------------------------------------------------------------------------
@pytest.mark.parametrize("delta", [1.0, 1.5, 0.0, -1e-9, float("nan"), float("inf")])
def test_check_delta_refuses_out_of_range(delta):
    with pytest.raises(ValueError, match=r"0 < delta < 1"):
        P.check_delta(delta, n=80)


def test_check_delta_warns_above_one_over_n():
    with pytest.warns(P.DeltaTooLargeWarning, match=r"exceeds 1/n = 1/80"):
        assert P.check_delta(0.9, n=80) == 0.9
    with pytest.warns(P.DeltaTooLargeWarning):
        P.check_delta(0.0126, n=80)  # just above 1/80 = 0.0125
    with pytest.warns(P.DeltaTooLargeWarning):
        P.check_delta(0.0125, n=80)  # the float 0.0125 is 1/80 + 7e-19: above 1/n in exact arithmetic
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert P.check_delta(0.015625, n=64) == 0.015625  # exactly 1/n (a float): no warning
        assert P.check_delta(1e-5, n=80) == 1e-5
        assert P.check_delta(0.9) == 0.9  # n unknown: range check only
    with pytest.raises(ValueError, match="n"):
        P.check_delta(1e-5, n=0)
    with pytest.raises(TypeError, match="n"):
        P.check_delta(1e-5, n=2.5)


# ---- item 6: bounds -----------------------------------------------------------------------------
@pytest.mark.parametrize("value", [1e155, 1e200, 1e-170, 0.0, -1.0, float("inf"), 1e101])
def test_check_bound_refuses_outside_range(value):
    with pytest.raises(ValueError, match=r"clip_radius must lie in \[1e-100, 1e\+100\]"):
        P.check_bound("clip_radius", value)


def test_check_bound_accepts_range_and_arithmetic_is_finite_there():
    for v in (1e-100, 1.0, 1e100):
        r = P.check_bound("clip_radius", v)
        # the estimators' worst arithmetic at the ends: sqrt(2) R^2 over 1e8 rows divided by mu 1e-10
        s = math.sqrt(2) * r * r * 1e8 / 1e-10
        assert math.isfinite(s) and s > 0
        assert P.gaussian_sigma(math.sqrt(2) * r * r, 50.0) > 0  # no underflow to sigma = 0
    with pytest.raises(TypeError):
        P.check_bound("clip_radius", True)
    with pytest.raises(ValueError, match="nan|NaN"):
        P.check_bound("clip_radius", float("nan"))
    assert P.check_bound("x", 1e20, lo=1e-15, hi=1e30) == 1e20


# ---- item 11: samplers --------------------------------------------------------------------------
def test_numpy_sampler_default_and_unknown_sampler():
    a = P.gaussian_noise(5, 1.0, np.random.default_rng(3))
    b = P.gaussian_noise(5, 1.0, np.random.default_rng(3), sampler="numpy")
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="sampler"):
        P.gaussian_noise(5, 1.0, np.random.default_rng(3), sampler="torch")


def test_opendp_sampler_scale_and_release():
    pytest.importorskip("opendp")
    z = P.gaussian_noise((40, 50), 2.0, None, sampler="opendp")
    assert z.shape == (40, 50) and np.isfinite(z).all()
    assert z.std() == pytest.approx(2.0, rel=0.08) and abs(z.mean()) < 0.2
    v = np.array([[1.0, -3.0], [1e6, 0.5]])
    out = P.add_gaussian_noise(v, 1e-3, None, sampler="opendp")
    assert out.shape == v.shape and np.allclose(out, v, atol=0.02) and not np.array_equal(out, v)
    with pytest.raises(ValueError, match="non-finite"):
        P.add_gaussian_noise(np.array([1.0, np.nan]), 1.0, None, sampler="opendp")
    assert np.array_equal(P.gaussian_noise(3, 0.0, None, sampler="opendp"), np.zeros(3))
