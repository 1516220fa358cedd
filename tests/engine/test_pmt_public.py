"""Public-only, PMT-pooled, the noise-dominance banner and the Poisson sweep."""

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, PoissonRegressor, Ridge

from engine.pmt import PMTPooledRidge, PMTRidge, PublicOnlyLogistic, PublicOnlyPoisson, PublicOnlyRidge
from engine.pmt.pooled import pooled_solve, pooled_weights
from engine.pmt.public import noise_dominance
from engine.pmt.sweep import run_sweep, summarize


def _small(n=5200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(10.0, 1.0, size=(n, 2))
    return X, X[:, 0] - X[:, 1] + 5.0 + rng.normal(size=n)


def test_public_only_ridge_equals_sklearn_on_public_rows():
    X, y = _small()
    lam = 1e-2
    m = PublicOnlyRidge(lam=lam).fit(X[200:], y[200:], X_pub=X[:200], y_pub=y[:200])
    sk = Ridge(alpha=200 * lam).fit(X[:200], y[:200])
    np.testing.assert_allclose(m.coef_, sk.coef_, rtol=1e-8, atol=1e-10)
    assert m.intercept_ == pytest.approx(sk.intercept_, rel=1e-9)
    assert m.report_.mu == 0.0 and m.report_.method == "Public-only" and m.n_pub_ == 200
    # the private rows are not read: changing them changes nothing
    y2 = y.copy(); y2[200:] += 1e3
    m2 = PublicOnlyRidge(lam=lam).fit(X[200:] * 7, y2[200:], X_pub=X[:200], y_pub=y[:200])
    np.testing.assert_array_equal(m.theta_, m2.theta_)


def test_public_only_glms_equal_sklearn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    yl = (rng.random(400) < 1 / (1 + np.exp(-(X @ [1.0, -1.0, 0.5] + 0.3)))).astype(int)
    lam = 1e-2
    m = PublicOnlyLogistic(lam=lam).fit(X[300:], yl[300:], X_pub=X[:300], y_pub=yl[:300])
    sk = LogisticRegression(C=1 / (2 * 300 * lam), tol=1e-12, max_iter=1000).fit(X[:300], yl[:300])
    np.testing.assert_allclose(m.coef_, sk.coef_[0], atol=1e-5)
    yp = rng.poisson(np.exp(0.3 * X[:, 0] + 0.5))
    mp = PublicOnlyPoisson(lam=lam).fit(X[300:], yp[300:], X_pub=X[:300], y_pub=yp[:300])
    skp = PoissonRegressor(alpha=2 * lam, tol=1e-12, max_iter=1000).fit(X[:300], yp[:300])
    np.testing.assert_allclose(mp.coef_, skp.coef_, atol=1e-5)
    assert mp.intercept_ == pytest.approx(skp.intercept_, abs=1e-5)


def test_public_only_needs_public_rows():
    X, y = _small(500)
    with pytest.raises(ValueError, match="X_pub"):
        PublicOnlyRidge().fit(X, y)
    with pytest.raises(ValueError, match="y_pub"):
        PublicOnlyRidge().fit(X, y, X_pub=X[:50])
    with pytest.raises(ValueError, match="columns"):
        PublicOnlyRidge().fit(X[:, :1], y, X_pub=X[:50], y_pub=y[:50])


def test_pooled_weights_from_public_quantities_only():
    X, y = _small()
    base = PMTPooledRidge(epsilon=1.0, lam=0.0, random_state=3).fit(X[200:], y[200:], X_pub=X[:200], y_pub=y[:200])
    X2, y2 = X.copy(), y.copy()
    X2[4000] = [25.0, -3.0]; y2[4000] = 80.0  # replace one private row
    other = PMTPooledRidge(epsilon=1.0, lam=0.0, random_state=3).fit(X2[200:], y2[200:], X_pub=X[:200], y_pub=y[:200])
    w1, w2 = base.weights_, other.weights_
    assert w1.v == w2.v
    np.testing.assert_array_equal(w1.precision_pub, w2.precision_pub)
    np.testing.assert_array_equal(w1.theta_pub, w2.theta_pub)
    assert not np.array_equal(base.theta_, other.theta_)  # the private release does change the estimate
    # v = s_b^2 + s_A^2 ||theta~_pub||^2 with PMT's own noise scales
    pm = PMTRidge(epsilon=1.0, lam=0.0, random_state=3, response="clip").fit(
        X[200:], y[200:], X_pub=X[:200], y_pub=y[:200])  # pooled pools the clip release; both centre y publicly
    sA, sb = pm.report_.noise_scales["A"], pm.report_.noise_scales["b"]
    assert w1.v == pytest.approx(sb**2 + sA**2 * float(w1.theta_pub @ w1.theta_pub), rel=1e-12)


def test_pooled_weights_hand_case():
    # orthonormal-ish design, OLS residuals +-0.2 / 0: hand-computed HC1 sandwich
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, 2.0, 1.2, 2.2, 0.8, 1.8])
    w = pooled_weights(Z, y, np.zeros((2, 2)), sigma_A=3.0, sigma_b=4.0)
    np.testing.assert_allclose(w.theta_pub, [1.0, 2.0])
    # Z^T Z = 3 I; meat = diag(0.08, 0.08); V = 6/4 * meat / 9 = diag(1/75); precision 75
    np.testing.assert_allclose(w.precision_pub, 75.0 * np.eye(2), rtol=1e-10)
    assert w.v == pytest.approx(16 + 9 * 5)
    assert w.resid_sd == pytest.approx(math.sqrt(0.16 / 4))
    # solve: M = I, b = (3, 3): ((1/61) I + 75 I)^{-1} ((3/61) + 75 theta_pub)
    th = pooled_solve(np.eye(2), np.array([3.0, 3.0]), w)
    np.testing.assert_allclose(th, (np.array([3.0, 3.0]) / 61 + 75 * np.array([1.0, 2.0])) / (1 / 61 + 75))


def test_pooled_goal_small_input():
    X, y = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = run_sweep((X, y), methods=["pmt-clip", "public-only", "pmt-pooled"], epsilons=[0.1, 1.0, 10.0],
                      seeds=30, lams=[1e-4], standardize=True)
    s = summarize(f).pivot(index="epsilon", columns="method", values="median")
    best = np.minimum(s["PMT (clip y)"], s["Public-only"])  # pooled pools the clip form's release
    assert (s["PMT-pooled"] <= 1.1 * best).all()
    assert (s["PMT-pooled"] < best).any()
    # the sweep's pooled row for seed s reproduces the estimator with random_state=s
    row = f[(f["method"] == "PMT-pooled") & (f["epsilon"] == 1.0) & (f["seed"] == 4)]
    assert len(row) == 1 and np.isfinite(row["l2_error"].iloc[0])


def test_noise_dominance_hand_computed():
    d, eta, mu, m, s, tn, yr = 3, 0.05, 1.0, 100, 2.0, 1.5, 4.0

    def sig(k):
        L = 1 + math.log(2 * k / eta)
        R2 = d * L
        part = mu / math.sqrt(2)
        return math.sqrt(2) * R2 / part, 2 * math.sqrt(R2) * yr * math.sqrt(L) / part

    def wins(k):
        sA, sb = sig(k)
        return k >= math.sqrt((sb**2 + sA**2 * tn**2) * m) / s and k >= 4 * math.sqrt(d) * sA

    nd = noise_dominance(n=1000, d=d, mu=mu, eta=eta, n_pub=m, resid_sd=s, theta_norm=tn, y_rms=yr)
    sA1000, _ = sig(1000)
    assert nd.noise_scale == pytest.approx(2 * math.sqrt(3) * sA1000)
    assert nd.dominated == (2 * math.sqrt(3) * sA1000 >= 500)
    assert wins(nd.n_needed) and not wins(nd.n_needed - 1)
    # at n = 1000: R^2 = 3 (1 + ln 40000) = 34.79; sigma_A = sqrt2 * 34.79 * sqrt2 = 69.58; noise 2 sqrt3 69.58 = 241
    assert nd.noise_scale == pytest.approx(241.0, rel=2e-3) and not nd.dominated
    # at k = 1277: ln(2k/eta) = 10.841, R^2 = 35.52, sigma_A = 71.05, sigma_b = 232.0,
    # v = 232.0^2 + 71.05^2 * 1.5^2 = 65182, sqrt(v * 100) / 2 = 1276.5 <= 1277 (the variance term binds)
    assert nd.n_needed == 1277


def test_poisson_sweep_rows_finite():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = rng.poisson(np.exp(X @ [0.3, -0.2, 0.1] + 0.5)).astype(float)
    f = run_sweep((X, y), task="poisson", epsilons=[1.0, 10.0], seeds=3, lams=[1e-3])
    assert set(f["method"]) == {"PMT", "DP-Newton", "Public-only", "Non-private"}
    assert len(f) == 4 * 2 * 3
    for col in ("l2_error", "rmse", "deviance", "excess_risk"):
        assert np.all(np.isfinite(f[col])), col
    pub = f[f["method"] == "Public-only"]
    assert pub["mu"].eq(0).all() and pub["l2_error"].nunique() == 1
    np_rows = f[f["method"] == "Non-private"]
    assert np.allclose(np_rows["l2_error"], 0) and (f.loc[f["method"] == "PMT", "l2_error"] > 0).all()


def test_poisson_sweep_bank_campaign():
    f = run_sweep("bank-campaign", task="poisson", epsilons=[1.0], seeds=2, lams=[1e-4], standardize=True)
    pub = f[f["method"] == "Public-only"]["l2_error"].median()
    assert 0 < pub < f[f["method"] == "PMT"]["l2_error"].median()  # honest: worst-case Poisson bounds lose here
    assert (f["y_max"].dropna() > 1).all()


def test_public_only_in_default_ridge_and_logistic_sweeps():
    X, y = _small(1500)
    f = run_sweep((X, y), epsilons=[1.0], seeds=2)
    assert "Public-only" in set(f["method"])
    rng = np.random.default_rng(2)
    Xl = rng.normal(size=(1500, 2)); yl = (Xl[:, 0] + rng.normal(size=1500) > 0).astype(int)
    fl = run_sweep((Xl, yl), task="logistic", epsilons=[1.0], seeds=2, dp_gd_steps=5)
    pub = fl[fl["method"] == "Public-only"]
    assert len(pub) == 2 and np.isfinite(pub["accuracy"]).all() and pub["accuracy"].iloc[0] > 0.6
