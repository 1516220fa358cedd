"""Tests for the ridge estimators in engine.pmt (PMT.md sections 3 and 5)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.linear_model import Ridge

from engine import privacy as P
from engine.pmt import (
    DPGDRidge,
    DPRidge,
    DPRidgeOracle,
    PMTRidge,
    RidgeReference,
    add_intercept,
    pmt_radius,
    pmt_transform,
    public_moment,
    truncate_rows,
)
from engine.pmt._base import penalty_mask
from engine.pmt._gd import dp_gd_ridge_path
from engine.pmt.ridge import ssp_sensitivities, ssp_solve, sufficient_statistics


def make_data(n=4000, d=4, seed=0, shift=3.0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = rng.normal(size=(n, d)) * np.geomspace(1, 0.1, d) @ Q.T + shift
    theta = rng.normal(size=d)
    y = X @ theta + 2.0 + 0.5 * rng.normal(size=n)
    return X[200:], y[200:], X[:200], y[:200]


DATA = make_data()


# ------------------------------------------------------------------ reference
@pytest.mark.parametrize("lam", [0.0, 1e-3, 0.1])
def test_reference_equals_sklearn_ridge(lam):
    X, y, _, _ = DATA
    n = len(y)
    ref = RidgeReference(lam=lam).fit(X, y)
    sk = Ridge(alpha=n * lam, fit_intercept=True, solver="svd").fit(X, y)
    np.testing.assert_allclose(ref.coef_, sk.coef_, rtol=1e-8, atol=1e-10)
    assert ref.intercept_ == pytest.approx(sk.intercept_, rel=1e-8)
    # penalised intercept == sklearn without intercept on [X, 1]
    ref2 = RidgeReference(lam=lam, penalize_intercept=True).fit(X, y)
    sk2 = Ridge(alpha=n * lam, fit_intercept=False, solver="svd").fit(add_intercept(X), y)
    np.testing.assert_allclose(ref2.theta_, sk2.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ref.predict(X[:5]), sk.predict(X[:5]), rtol=1e-9)


# ------------------------------------------------------------------ noise off
@pytest.mark.parametrize("lam", [0.0, 1e-3])
@pytest.mark.parametrize("penalize_intercept", [False, True])
def test_noise_off_pmt_reproduces_reference(lam, penalize_intercept):
    X, y, Xp, yp = DATA
    ref = RidgeReference(lam=lam, penalize_intercept=penalize_intercept).fit(X, y)
    m = PMTRidge(epsilon=np.inf, lam=lam, penalize_intercept=penalize_intercept, response_bound=1e6)
    m.fit(X, y, X_pub=Xp, y_pub=yp)
    assert m.report_.frac_truncated == 0.0 and m.report_.frac_y_clipped == 0.0
    assert m.report_.mu == math.inf and m.report_.noise_scales == {"A": 0.0, "b": 0.0}
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=1e-6)


def test_noise_off_joint_reproduces_reference():
    X, y, Xp, yp = DATA
    ref = RidgeReference(lam=1e-3).fit(X, y)
    m = PMTRidge(epsilon=np.inf, lam=1e-3, response="joint").fit(X, y, Xp, yp)
    assert m.report_.frac_truncated == 0.0
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=1e-6)


def test_noise_off_dprr_and_dpgd_converge():
    X, y, Xp, yp = DATA
    ref = RidgeReference(lam=1e-3).fit(X, y)
    m = DPRidge(epsilon=np.inf, lam=1e-3, clip_radius=1e6, response_bound=1e6).fit(X, y)
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=1e-6)
    # DP-GD on a standardised, well-conditioned problem converges with enough steps
    Z = (X - Xp.mean(0)) / Xp.std(0)
    Zp = (Xp - Xp.mean(0)) / Xp.std(0)
    Zw = Z @ np.linalg.inv(np.linalg.cholesky(np.cov(Zp.T))).T
    ref = RidgeReference(lam=1e-3).fit(Zw, y)
    g = DPGDRidge(epsilon=np.inf, lam=1e-3, clip_norm=1e9, n_steps=3000, step_size=0.2).fit(Zw, y)
    np.testing.assert_allclose(g.theta_, ref.theta_, rtol=1e-3, atol=1e-3)


# ------------------------------------------------------------------ sensitivity
def _extreme_row(rng, p, scale):
    v = rng.normal(size=p)
    return v / np.linalg.norm(v) * scale


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.floats(1e-3, 1e8), yv=st.floats(-1e9, 1e9),
       idx=st.integers(0, 299))
def test_pmt_statistics_move_by_at_most_sensitivity(seed, scale, yv, idx):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 3)) * [1, 10, 100]
    y = X @ [1.0, 0.1, 0.01] + rng.normal(size=300)
    mom = public_moment(rng.normal(size=(50, 3)) * [1, 10, 100])
    eta, B_y, n = 0.05, 5.0, 300
    R = pmt_radius(4, n, eta)
    t = pmt_transform(X, moment=mom, eta=eta)
    A, b = sufficient_statistics(t.X_tilde, y, B_y)
    x_new = _extreme_row(rng, 3, scale)
    X2, y2 = X.copy(), y.copy()  # replace-one (the only relation offered)
    X2[idx], y2[idx] = x_new, yv
    Z2, _, _ = truncate_rows(add_intercept(X2) @ mom.Sigma_pub_inv_sqrt, R)
    A2, b2 = sufficient_statistics(Z2, y2, B_y)
    sA, sb = ssp_sensitivities(R, B_y)
    assert np.linalg.norm(A - A2, "fro") <= sA * (1 + 1e-9)
    assert np.linalg.norm(b - b2) <= sb * (1 + 1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.floats(1e-3, 1e8), yv=st.floats(-1e9, 1e9),
       C=st.floats(0.1, 100.0), idx=st.integers(0, 99))
def test_dprr_and_dpgd_statistics_move_by_at_most_sensitivity(seed, scale, yv, C, idx):
    rng = np.random.default_rng(seed)
    X = add_intercept(rng.normal(size=(100, 2)) * 50)
    y = rng.normal(size=100) * 100
    X2, y2 = X.copy(), y.copy()
    X2[idx] = np.append(_extreme_row(rng, 2, scale), 1.0)
    y2[idx] = yv
    B_y = 7.0
    A, b = sufficient_statistics(truncate_rows(X, C)[0], y, B_y)
    A2, b2 = sufficient_statistics(truncate_rows(X2, C)[0], y2, B_y)
    sA, sb = ssp_sensitivities(C, B_y, "replace-one")
    assert np.linalg.norm(A - A2, "fro") <= sA * (1 + 1e-9)
    assert np.linalg.norm(b - b2) <= sb * (1 + 1e-9)
    # DP-GD: one step from a random theta with zero noise; the mean clipped gradient moves <= 2C/n
    theta0 = rng.normal(size=3)
    kw = dict(clip_norm=C, lam=0.0, Pm=np.eye(3), step_size=1.0, sigma=np.zeros(1),
              noise=np.zeros((1, 3, 1)), n_steps=1)
    # start from theta0 by shifting y: residual x^T theta0 - y == x^T 0 - (y - x^T theta0)
    g1, _ = dp_gd_ridge_path(X, y - X @ theta0, **kw)
    g2, _ = dp_gd_ridge_path(X2, y2 - X2 @ theta0, **kw)
    assert np.linalg.norm(g1 - g2) <= 2 * C / 100 * (1 + 1e-9)


def test_sensitivity_formulas():
    assert ssp_sensitivities(3.0, 2.0) == (pytest.approx(math.sqrt(2) * 9), 12.0)
    with pytest.raises(ValueError, match="add/remove is not offered"):
        ssp_sensitivities(3.0, 2.0, "add-remove")


# ------------------------------------------------------------------ reports and accounting
def test_report_ledger_and_noise_scales():
    X, y, Xp, yp = DATA
    m = PMTRidge(epsilon=1.0, delta=1e-5, random_state=0, response="clip").fit(X, y, Xp, yp)
    r = m.report_
    mu = P.gdp_mu(1.0, 1e-5)
    assert r.mu == mu and r.ledger.total_mu == pytest.approx(mu, rel=1e-12)
    assert r.ledger.total_epsilon == pytest.approx(1.0, rel=1e-6)
    R = pmt_radius(X.shape[1] + 1, len(y), 0.05)
    assert r.radius == pytest.approx(R)
    fA, fb = P.sum_rounding_factor(r.n, r.d * r.d), P.sum_rounding_factor(r.n, r.d)  # certified rounding
    assert r.noise_scales["A"] == pytest.approx(math.sqrt(2) * R**2 / (mu / math.sqrt(2)) * fA)
    assert r.noise_scales["b"] == pytest.approx(2 * R * r.B_y / (mu / math.sqrt(2)) * fb)
    rel = r.releases
    assert [x["mu"] for x in rel[:2]] == pytest.approx([mu / math.sqrt(2)] * 2)
    assert rel[-1]["name"] == "total (composed)"
    assert r.kappa_pmt < 3 < r.kappa_raw
    assert r.to_dict()["method"] == "PMT"
    assert r.neighbouring == "replace-one"


def test_dpgd_budget_composes():
    X, y, Xp, yp = DATA
    g = DPGDRidge(epsilon=2.0, n_steps=50, random_state=1).fit(X, y, Xp, yp)
    assert len(g.report_.ledger.releases) == 50
    assert g.report_.ledger.total_mu == pytest.approx(P.gdp_mu(2.0, 1e-5), rel=1e-9)
    assert g.report_.noise_scales["gradient (per step)"] == pytest.approx(
        2 * g.report_.radius / len(y) / (P.gdp_mu(2.0, 1e-5) / math.sqrt(50)))


# ------------------------------------------------------------------ randomness
@pytest.mark.parametrize("cls", [PMTRidge, DPRidge, DPGDRidge])
def test_same_seed_same_output_different_seed_differs(cls):
    X, y, Xp, yp = DATA
    a = cls(epsilon=1.0, random_state=7).fit(X, y, Xp, yp).theta_
    b = cls(epsilon=1.0, random_state=7).fit(X, y, Xp, yp).theta_
    c = cls(epsilon=1.0, random_state=8).fit(X, y, Xp, yp).theta_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_sklearn_conventions():
    m = PMTRidge(lam=0.5, epsilon=2.0)
    c = clone(m)
    assert c.get_params()["lam"] == 0.5 and c.get_params()["epsilon"] == 2.0
    assert not hasattr(c, "coef_")
    with pytest.raises(TypeError):
        PMTRidge(1.0)  # keyword-only
    X, y, Xp, yp = DATA
    m = PMTRidge(epsilon=5.0, random_state=0).fit(X, y, Xp, yp)
    assert m.predict(X).shape == (len(y),)
    assert -1 <= m.score(X, y) <= 1


# ------------------------------------------------------------------ bad input, before any noise
BAD = [
    ({"epsilon": 0.0}, {}, "epsilon"),
    ({"epsilon": -1.0}, {}, "epsilon"),
    ({"epsilon": float("nan")}, {}, "epsilon"),
    ({"delta": 0.0}, {}, "delta"),
    ({"delta": 1.0}, {}, "delta"),
    ({"lam": -1e-3}, {}, "lam"),
    ({"eta": 1.5}, {}, "eta"),
    ({"neighbouring": "swap"}, {}, "neighbouring"),
    ({}, {"X_nan": True}, "NaN"),
    ({}, {"y_inf": True}, "NaN or infinite"),
    ({}, {"n_pub0": True}, "n_pub"),
    ({}, {"no_pub": True}, "X_pub"),
    ({}, {"n_lt_d": True}, "n < d"),
    ({}, {"mismatch": True}, "must match"),
]


@pytest.mark.parametrize("cls", [PMTRidge, DPRidge, DPGDRidge])
@pytest.mark.parametrize("params,data,match", BAD)
def test_bad_input_raises_before_noise(cls, params, data, match):
    X, y, Xp, yp = (a.copy() for a in DATA)
    if data.get("X_nan"):
        X[3, 1] = np.nan
    if data.get("y_inf"):
        y[5] = np.inf
    if data.get("n_pub0"):
        Xp, yp = Xp[:0], yp[:0]
    if data.get("no_pub"):
        if cls is DPRidge:
            pytest.skip("DP-RR is private-only; public rows are optional")
        Xp = None
    if data.get("n_lt_d"):
        X, y = X[:3], y[:3]
    if data.get("mismatch"):
        y = y[:-1]
    rng = np.random.default_rng(123)
    state = rng.bit_generator.state
    with pytest.raises((ValueError, TypeError), match=match):
        cls(**params, random_state=rng).fit(X, y, Xp, yp)
    assert rng.bit_generator.state == state, "random numbers were drawn before validation failed"


def test_unknown_response_and_bound():
    X, y, Xp, yp = DATA
    with pytest.raises(ValueError, match="response"):
        PMTRidge(response="square").fit(X, y, Xp, yp)
    with pytest.raises(ValueError, match="response_bound"):
        PMTRidge(response_bound=-1.0).fit(X, y, Xp, yp)
    with pytest.raises(ValueError, match="response_bound"):
        PMTRidge(response_bound="auto").fit(X, y, Xp, yp)
    with pytest.raises(ValueError, match="y_pub"):
        PMTRidge().fit(X, y, Xp)  # B_y needs public labels or a user bound


# ------------------------------------------------------------------ privacy-leak warnings
def test_private_bounds_warn():
    X, y, Xp, yp = DATA
    with pytest.warns(P.PrivacyLeakWarning):
        PMTRidge(response_bound="private", random_state=0).fit(X, y, Xp)
    with pytest.warns(P.PrivacyLeakWarning):
        DPRidge(clip_radius="private", random_state=0).fit(X, y, Xp, yp)
    with pytest.warns(P.PrivacyLeakWarning):
        DPGDRidge(clip_norm="private", random_state=0, n_steps=5).fit(X, y, Xp, yp)
    with warnings.catch_warnings():
        warnings.simplefilter("error", P.PrivacyLeakWarning)
        PMTRidge(random_state=0).fit(X, y, Xp, yp)  # public defaults: no warning
        DPRidge(random_state=0).fit(X, y, Xp, yp)
        DPGDRidge(random_state=0, n_steps=5).fit(X, y, Xp, yp)


def test_oracle_is_labelled_and_no_worse_than_default():
    X, y, Xp, yp = DATA
    with pytest.warns(P.PrivacyLeakWarning, match="non-private tuning"):
        o = DPRidgeOracle(epsilon=1.0, n_trials=5, random_state=0).fit(X, y, Xp, yp)
    assert o.report_.method == "DP-RR (oracle C, non-private tuning)"
    assert o.report_.extra["non_private_tuning"] is True
    grid = np.array(o.report_.extra["clip_grid"])
    assert o.clip_radius_ in grid
    assert o.grid_errors_[list(grid).index(o.clip_radius_)] == o.grid_errors_.min()
    default = pmt_radius(X.shape[1] + 1, len(y), 0.05)
    assert o.grid_errors_.min() <= o.grid_errors_[np.argmin(np.abs(grid - default))]


# ------------------------------------------------------------------ eigenvalue floor
def test_eigenvalue_floor_counts_and_stays_finite():
    A = np.array([[1.0, 0.0], [0.0, -0.5]])
    th, fixed, kappa = ssp_solve(A, np.array([1.0, 1.0]), np.zeros((2, 2)), eig_floor=0.1)
    assert bool(fixed) and kappa == math.inf
    np.testing.assert_allclose(th, [1.0, 40.0])  # -0.5 floored to 0.1 * trace(A)/d = 0.025
    # tiny epsilon on a small sample: the noisy system is often indefinite; the fix is counted
    X, y, Xp, yp = make_data(n=260, d=4, seed=2)
    fixes = sum(PMTRidge(epsilon=0.01, lam=0.0, random_state=s).fit(X, y, Xp, yp).report_.eig_fixes
                for s in range(20))
    assert fixes > 0
    m = PMTRidge(epsilon=0.01, lam=0.0, random_state=0).fit(X, y, Xp, yp)
    assert np.all(np.isfinite(m.theta_))


def test_singular_public_moment_is_reported():
    X, y, Xp, yp = DATA
    m = PMTRidge(epsilon=1.0, random_state=0).fit(X, y, Xp[:3], yp[:3])
    assert m.report_.sigma_pub_regularized and m.report_.tau > 0
    with pytest.raises(ValueError, match="singular"):
        PMTRidge(on_singular="raise").fit(X, y, Xp[:3], yp[:3])


def test_penalty_mask():
    np.testing.assert_array_equal(penalty_mask(3, fit_intercept=False, penalize_intercept=False), np.eye(3))


# ------------------------------------------------------------------ awkward but valid data
def test_dataframe_input_and_predict():
    import pandas as pd

    X, y, Xp, yp = DATA
    cols = [f"f{j}" for j in range(X.shape[1])]
    m1 = PMTRidge(epsilon=2.0, random_state=3).fit(pd.DataFrame(X, columns=cols), pd.Series(y),
                                                   pd.DataFrame(Xp, columns=cols), pd.Series(yp))
    m2 = PMTRidge(epsilon=2.0, random_state=3).fit(X, y, Xp, yp)
    np.testing.assert_array_equal(m1.coef_, m2.coef_)
    np.testing.assert_allclose(m2.predict(X[:3]), X[:3] @ m2.coef_ + m2.intercept_)
    with pytest.raises(ValueError, match="columns"):
        m2.predict(X[:3, :2])


@pytest.mark.parametrize("n_pub", [1, 3, 4, 5, 6])  # d = 4 features + intercept: 1, d-1, d, d+1
def test_small_public_samples_are_regularised(n_pub):
    X, y, Xp, yp = DATA
    m = PMTRidge(epsilon=1.0, random_state=0, response="clip").fit(X, y, Xp[:n_pub], yp[:n_pub])
    assert m.report_.sigma_pub_regularized == (n_pub < 5)
    assert np.all(np.isfinite(m.theta_))
    # the default (joint) form whitens (x, 1, y): d + 1 = 6 columns, singular below 6 public rows
    m = PMTRidge(epsilon=1.0, random_state=0).fit(X, y, Xp[:n_pub], yp[:n_pub])
    assert m.report_.extra["response"] == "joint" and m.report_.sigma_pub_regularized == (n_pub < 6)
    assert np.all(np.isfinite(m.theta_))


def test_duplicate_and_constant_columns():
    X, y, Xp, yp = DATA
    Xd, Xpd = np.hstack([X, X[:, :1]]), np.hstack([Xp, Xp[:, :1]])
    m = PMTRidge(epsilon=1.0, random_state=0).fit(Xd, y, Xpd, yp)
    assert m.report_.sigma_pub_regularized and np.all(np.isfinite(m.theta_))
    ref = RidgeReference(lam=0.0).fit(np.hstack([X, np.ones((len(y), 1))]), y)  # constant column + intercept
    assert np.all(np.isfinite(ref.theta_))


def test_huge_values_rejected_before_noise():
    X, y, Xp, yp = (a.copy() for a in DATA)
    X[0, 0] = 1e308
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="overflow"):
        PMTRidge(random_state=rng).fit(X, y, Xp, yp)
    assert rng.bit_generator.state == state
