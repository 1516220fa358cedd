"""Tests for engine.pmt: second moment, inverse square root, radius, truncation (PMT.md section 2)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from engine import pmt


@pytest.mark.parametrize("d,n,eta,R", [(10, 10**4, 0.05, 11.79), (20, 5 * 10**4, 0.05, 17.61), (50, 10**5, 0.05, 28.46)])
def test_radius_worked_values(d, n, eta, R):
    # research note section 2.1 table (natural log)
    assert pmt.pmt_radius(d, n, eta) == pytest.approx(R, abs=0.005)


def test_radius_formula_and_validation():
    assert pmt.pmt_radius(3, 100, 0.1) == pytest.approx(math.sqrt(3 * (1 + math.log(2000))))
    for bad in [dict(d=0, n=10, eta=0.05), dict(d=2, n=0, eta=0.05), dict(d=2, n=10, eta=1.0), dict(d=2, n=10, eta=0.0)]:
        with pytest.raises(ValueError):
            pmt.pmt_radius(**bad)


def test_second_moment_is_uncentered():
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    # uncentered: (1/2)[[1+9, 2+12],[2+12, 4+16]]; a covariance would be [[1,1],[1,1]]
    np.testing.assert_allclose(pmt.second_moment(X), [[5.0, 7.0], [7.0, 10.0]])


def test_whitening_whitens_and_is_equilibrated_symmetric():
    """W = D^{-1} C^{-1/2}: W^T S W = I, W W^T = S^{-1}, W^{-1} = Sigma_pub_sqrt, D W symmetric."""
    rng = np.random.default_rng(3)
    Xp = rng.normal(size=(300, 4)) @ rng.normal(size=(4, 4)) + 5
    pm = pmt.public_moment(Xp, fit_intercept=True)
    assert pm.d == 5 and not pm.regularized and pm.tau == 0.0
    S, Si = pm.Sigma_pub, pm.Sigma_pub_inv_sqrt
    np.testing.assert_allclose(S, pmt.second_moment(pmt.add_intercept(Xp)), rtol=1e-12)
    DW = pm.col_scale[:, None] * Si
    np.testing.assert_allclose(DW, DW.T, atol=1e-12)
    np.testing.assert_allclose(Si.T @ S @ Si, np.eye(5), atol=1e-8)
    np.testing.assert_allclose(Si @ Si.T @ S, np.eye(5), atol=1e-8)
    np.testing.assert_allclose(pm.Sigma_pub_sqrt @ Si, np.eye(5), atol=1e-10)
    np.testing.assert_allclose(pm.Sigma_pub_sqrt.T @ pm.Sigma_pub_sqrt, S, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(pm.Sigma_pub_inv @ S, np.eye(5), atol=1e-8)
    # the intercept column is last and constant 1
    np.testing.assert_allclose(S[-1, -1], 1.0)
    np.testing.assert_allclose(S[-1, :-1], Xp.mean(axis=0))


def test_singular_public_moment_regularised_or_refused():
    rng = np.random.default_rng(0)
    Xp = rng.normal(size=(3, 6))  # n_pub < d
    pm = pmt.public_moment(Xp, fit_intercept=True)
    S0 = pmt.second_moment(pmt.add_intercept(Xp))
    assert pm.regularized
    assert pm.tau == pytest.approx(1e-6)  # equilibrated units: trace(C) / d = 1
    np.testing.assert_allclose(pm.Sigma_pub, S0 + pm.tau * np.diag(np.diag(S0)))
    assert np.all(np.isfinite(pm.Sigma_pub_inv_sqrt))
    with pytest.raises(ValueError, match="singular"):
        pmt.public_moment(Xp, on_singular="raise")
    # a duplicated column makes it singular even with many rows
    Xd = rng.normal(size=(100, 2))
    assert pmt.public_moment(np.hstack([Xd, Xd[:, :1]]), fit_intercept=False).regularized


def test_public_moment_rejects_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        pmt.public_moment(np.array([[1.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="at least one row"):
        pmt.public_moment(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="on_singular"):
        pmt.public_moment(np.ones((4, 2)), on_singular="ignore")


@settings(max_examples=60, deadline=None)
@given(
    X=arrays(np.float64, st.tuples(st.integers(5, 40), st.integers(1, 5)),
             elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)),
    eta=st.floats(0.001, 0.5),
)
def test_every_row_within_radius_after_truncation(X, eta):
    rng = np.random.default_rng(0)
    Xp = rng.normal(size=(50, X.shape[1]))
    t = pmt.pmt_transform(X, Xp, eta=eta)
    assert t.radius == pytest.approx(pmt.pmt_radius(X.shape[1] + 1, X.shape[0], eta))
    norms = np.linalg.norm(t.X_tilde, axis=1)
    assert np.all(norms <= t.radius * (1 + 1e-12))
    # rows inside the ball are untouched; truncated rows keep their direction
    Z = pmt.add_intercept(X) @ t.Sigma_pub_inv_sqrt
    inside = ~t.truncated
    np.testing.assert_allclose(t.X_tilde[inside], Z[inside])
    if t.truncated.any():
        zt = Z[t.truncated]
        np.testing.assert_allclose(t.X_tilde[t.truncated], zt * (t.radius / np.linalg.norm(zt, axis=1))[:, None],
                                   rtol=1e-9)
    assert t.frac_truncated == pytest.approx(np.mean(np.linalg.norm(Z, axis=1) > t.radius))


def test_truncation_reports_fraction():
    Z = np.array([[10.0, 0.0], [0.0, 0.5], [3.0, 4.0], [0.1, 0.1]])
    Zt, nb, tr = pmt.truncate_rows(Z, 2.0)
    assert tr.tolist() == [True, False, True, False]
    np.testing.assert_allclose(np.linalg.norm(Zt, axis=1), [2.0, 0.5, 2.0, np.hypot(0.1, 0.1)])
    with pytest.raises(ValueError):
        pmt.truncate_rows(Z, 0.0)


def test_transform_without_intercept_and_with_moment():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1000, 3))
    pm = pmt.public_moment(X[:100], fit_intercept=False)
    t = pmt.pmt_transform(X, moment=pm)
    assert t.d == 3 and t.X_tilde.shape == (1000, 3)
    with pytest.raises(ValueError, match="exactly one"):
        pmt.pmt_transform(X)
    with pytest.raises(ValueError, match="columns"):
        pmt.pmt_transform(X, X[:100, :2])


def test_condition_number_of_indefinite_is_inf():
    assert pmt.condition_number(np.diag([3.0, 1.5])) == pytest.approx(2.0)
    assert pmt.condition_number(np.diag([3.0, 0.0])) == math.inf
    ks = pmt.condition_number(np.stack([np.eye(2), np.diag([4.0, 1.0])]))
    np.testing.assert_allclose(ks, [1.0, 4.0])


@pytest.mark.parametrize("name", ["ccpp", "wine-red"])
def test_pmt_conditions_real_data(name):
    from engine.datasets import load_dataset, public_private_split

    X, y = load_dataset(name).to_numpy()
    sp = public_private_split(X, y, n_pub=200, random_state=0)
    t = pmt.pmt_transform(sp.X_priv, sp.X_pub, eta=0.05, fit_intercept=True)
    # unstandardised raw features with the intercept column are badly conditioned ...
    assert t.kappa_raw > 1e6
    # ... and close to isotropic after the public whitening
    assert t.kappa_pmt < 10
    assert t.frac_truncated < 0.01
