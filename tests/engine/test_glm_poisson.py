"""Tests for the Poisson GLM extension (PMTPoisson, PoissonReference) in engine.pmt."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import PoissonRegressor

from engine import privacy as P
from engine.pmt import PMTPoisson, PoissonReference, pmt_transform
from engine.pmt._newton import POISSON, glm_statistics, newton_sensitivities
from engine.pmt.poisson import poisson_bounds


def make_counts(n=5000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * [1.0, 2.0, 0.5] + [0.5, -1.0, 2.0]
    theta = np.array([0.3, -0.2, 0.4])
    y = rng.poisson(np.exp(X @ theta - 0.8)).astype(float)
    return X[300:], y[300:], X[:300], y[:300]


DATA = make_counts()


@pytest.mark.parametrize("lam", [0.0, 1e-3])
def test_reference_equals_sklearn_poisson(lam):
    X, y, _, _ = DATA
    ref = PoissonReference(lam=lam).fit(X, y)
    sk = PoissonRegressor(alpha=2 * lam, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ref.coef_, sk.coef_, rtol=1e-5, atol=1e-7)
    assert ref.intercept_ == pytest.approx(sk.intercept_, rel=1e-5)
    np.testing.assert_allclose(ref.predict(X[:5]), sk.predict(X[:5]), rtol=1e-5)


@pytest.mark.parametrize("lam", [0.0, 1e-3])
def test_noise_off_converges_to_reference_when_nothing_is_clipped(lam):
    X, y, Xq, _ = DATA
    y_max = float(y.max()) + 1.0  # a public cap above every count (nothing clipped)
    m = PMTPoisson(epsilon=np.inf, lam=lam, n_steps=40, y_max=y_max, theta_radius=3.0).fit(X, y, X_pub=Xq)
    ref = PoissonReference(lam=lam).fit(X, y)
    r = m.report_
    assert r.frac_truncated == 0.0 and r.frac_y_clipped == 0.0
    assert np.linalg.norm(m.theta_tilde_) < 3.0  # the ball was not active at the optimum
    assert np.max(np.abs(m.theta_ - ref.theta_)) < 1e-4
    assert r.converged


def test_projection_and_clipping_are_active_when_bounds_are_tight():
    X, y, Xq, _ = DATA
    m = PMTPoisson(epsilon=np.inf, lam=0.0, n_steps=20, y_max=1.0, theta_radius=0.2).fit(X, y, X_pub=Xq)
    assert np.linalg.norm(m.theta_tilde_) <= 0.2 + 1e-12
    assert m.report_.frac_y_clipped == pytest.approx(np.mean(y > 1.0))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.floats(1e-3, 1e6), y_new=st.floats(0, 1e6),
       B=st.floats(0.01, 0.5), y_max=st.floats(0.5, 50.0))
def test_statistics_move_by_at_most_the_sensitivity(seed, scale, y_new, B, y_max):
    rng = np.random.default_rng(seed)
    n, p = 300, 3
    X = rng.normal(size=(n, p)) * 2 + 1
    y = np.minimum(rng.poisson(2.0, size=n).astype(float), y_max)
    Xq = rng.normal(size=(50, p)) * 2 + 1
    i = int(rng.integers(n))
    X2, y2 = X.copy(), y.copy()
    X2[i] = scale * rng.normal(size=p)
    y2[i] = min(y_new, y_max)
    t1 = pmt_transform(X, Xq)
    t2 = pmt_transform(X2, moment=t1.moment)
    R = t1.radius
    th = rng.normal(size=p + 1)
    th *= B * rng.random() / np.linalg.norm(th)  # any point of the ball ||theta~|| <= B
    G, H = poisson_bounds(R, B, y_max)
    g1, H1 = glm_statistics(t1.X_tilde, y, th, POISSON)
    g2, H2 = glm_statistics(t2.X_tilde, y2, th, POISSON)
    dg, dH = newton_sensitivities(R, n, G=G, H=H)
    assert np.linalg.norm(g1 - g2) <= dg * (1 + 1e-9)
    assert np.linalg.norm(H1 - H2, "fro") <= dH * (1 + 1e-9)
    assert dg == pytest.approx(2 * R * G / n) and dH == pytest.approx(math.sqrt(2) * R**2 * H / n)


def test_report_and_noise():
    X, y, Xq, _ = DATA
    m = PMTPoisson(epsilon=5.0, lam=1e-3, y_max=10.0, theta_radius=0.3, random_state=0).fit(X, y, X_pub=Xq)
    r = m.report_
    n = len(y)
    G, H = poisson_bounds(r.radius, 0.3, 10.0)
    assert r.extra["G"] == G and r.extra["H"] == H
    mu0 = P.gdp_mu(5.0, 1e-5) / math.sqrt(10)
    f = P.sum_rounding_factor(n, r.d, exp_range=r.radius * 0.3)  # certified rounding factor of the float sums
    assert r.noise_scales["gradient (per step)"] == pytest.approx(2 * r.radius * G / n / mu0 * f)
    assert r.ledger.total_mu == pytest.approx(P.gdp_mu(5.0, 1e-5))
    assert np.linalg.norm(m.theta_tilde_) <= 0.3 + 1e-12
    assert np.all(np.isfinite(m.predict(X[:5])))


@pytest.mark.parametrize("kwargs, yfix, match", [
    ({}, None, "y_max"),
    ({"y_max": -1.0}, None, "y_max"),
    ({"y_max": 5.0, "theta_radius": 0.0}, None, "theta_radius"),
    ({"y_max": 5.0}, -1.0, "negative"),
    ({"y_max": 5.0}, np.nan, "NaN"),
    ({"y_max": 5.0, "theta_radius": 1e4}, None, "too large"),
])
def test_bad_input_raises_before_noise(kwargs, yfix, match, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("noise drawn before validation")

    monkeypatch.setattr(P, "gaussian_noise", boom)
    monkeypatch.setattr(P, "symmetric_gaussian_noise", boom)
    X, y, Xq, _ = DATA
    yy = y.copy()
    if yfix is not None:
        yy[4] = yfix
    with pytest.raises(ValueError, match=match):
        PMTPoisson(**kwargs).fit(X, yy, X_pub=Xq)
