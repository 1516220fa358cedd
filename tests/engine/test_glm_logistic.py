"""Tests for DP-PMTLR and the logistic baselines in engine.pmt (PMT.md sections 4 and 5)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from engine import privacy as P
from engine.pmt import DPGDLogistic, DPNewtonLogistic, LogisticReference, PMTLogistic, add_intercept, pmt_radius, pmt_transform
from engine.pmt._newton import (
    LOGISTIC,
    glm_statistics,
    newton_eig_floor,
    newton_noise,
    newton_sensitivities,
    noisy_newton,
    weighted_grams,
)
from engine.pmt.logistic import check_binary_labels


def make_data(n=6000, d=4, seed=0, shift=2.0, theta_norm=1.5):
    """Correlated, shifted, unequally scaled features (so PMT has work to do), logistic labels."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = rng.normal(size=(n, d)) * np.geomspace(3, 0.3, d) @ Q.T + shift
    theta = rng.normal(size=d)
    theta *= theta_norm / np.linalg.norm(theta)
    y = (rng.random(n) < expit((X - shift) @ theta + 0.3)).astype(int)
    return X[300:], y[300:], X[:300], y[:300]


DATA = make_data()
ALL_CLASSES = [PMTLogistic, DPNewtonLogistic, DPGDLogistic, LogisticReference]


# ------------------------------------------------------------------ reference
@pytest.mark.parametrize("lam", [0.0, 1e-4, 1e-2])
def test_reference_equals_sklearn(lam):
    X, y, _, _ = DATA
    n = len(y)
    ref = LogisticReference(lam=lam).fit(X, y)
    assert ref.converged_
    C = np.inf if lam == 0 else 1.0 / (2 * n * lam)
    sk = LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ref.coef_, sk.coef_[0], rtol=1e-5, atol=1e-6)
    assert ref.intercept_ == pytest.approx(sk.intercept_[0], rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(ref.predict_proba(X[:7]), sk.predict_proba(X[:7]), atol=1e-6)
    if lam > 0:  # penalised intercept == sklearn without intercept on [X, 1]
        ref2 = LogisticReference(lam=lam, penalize_intercept=True).fit(X, y)
        sk2 = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(add_intercept(X), y)
        np.testing.assert_allclose(ref2.theta_, sk2.coef_[0], rtol=1e-5, atol=1e-6)


def test_reference_statistics_are_the_gradient_of_the_objective():
    X, y, _, _ = DATA
    Xa = add_intercept(X)
    th = np.array([0.1, -0.2, 0.3, 0.0, 0.5])
    g, H = glm_statistics(Xa, y.astype(float), th)

    def f(t):
        u = Xa @ t
        return np.mean(np.logaddexp(0, u) - y * u)

    e = 1e-6
    num = np.array([(f(th + e * np.eye(5)[j]) - f(th - e * np.eye(5)[j])) / (2 * e) for j in range(5)])
    np.testing.assert_allclose(g, num, atol=1e-7)
    np.testing.assert_allclose(H, H.T)
    assert np.linalg.eigvalsh(H)[0] > 0


# ------------------------------------------------------------------ noise off
@pytest.mark.parametrize("lam", [0.0, 1e-3])
@pytest.mark.parametrize("penalize_intercept", [False, True])
def test_noise_off_pmt_reproduces_reference(lam, penalize_intercept):
    X, y, Xq, _ = DATA
    m = PMTLogistic(epsilon=np.inf, lam=lam, n_steps=30, penalize_intercept=penalize_intercept).fit(X, y, X_pub=Xq)
    ref = LogisticReference(lam=lam, penalize_intercept=penalize_intercept).fit(X, y)
    assert m.report_.frac_truncated == 0.0  # truncation inactive: the premise of the check
    assert np.max(np.abs(m.theta_ - ref.theta_)) < 1e-4
    np.testing.assert_allclose(m.theta_, ref.theta_, atol=1e-8)
    assert m.report_.converged and m.report_.n_iter == 30 and m.report_.mu == math.inf
    assert m.report_.eig_fixes == 0 and m.report_.eig_floor == 1e-3


def test_noise_off_dp_newton_and_dp_gd_reproduce_reference_without_clipping():
    X, y, Xq, _ = DATA
    ref = LogisticReference(lam=1e-3).fit(X, y)
    nw = DPNewtonLogistic(epsilon=np.inf, lam=1e-3, n_steps=30, clip_radius=1e6).fit(X, y)
    assert nw.report_.frac_truncated == 0.0
    np.testing.assert_allclose(nw.theta_, ref.theta_, atol=1e-8)
    # DP-GD is first order: it converges slowly on raw, shifted features; on centred ones it gets close
    Xc, Xqc = X - 2.0, Xq - 2.0
    ref_c = LogisticReference(lam=1e-3).fit(Xc, y)
    gd = DPGDLogistic(epsilon=np.inf, lam=1e-3, n_steps=3000, clip_norm=1e6).fit(Xc, y, X_pub=Xqc)
    assert np.linalg.norm(gd.theta_ - ref_c.theta_) < 1e-3


def test_truncation_changes_the_target_when_active():
    """With extreme private rows the truncated fit differs from the reference (and says so)."""
    X, y, Xq, _ = DATA
    X2 = X.copy()
    X2[:50] *= 1e3
    m = PMTLogistic(epsilon=np.inf, lam=0.0, n_steps=30).fit(X2, y, X_pub=Xq)
    assert m.report_.frac_truncated == pytest.approx(50 / len(y), abs=1e-3)
    ref = LogisticReference(lam=0.0).fit(X2, y)
    assert np.linalg.norm(m.theta_ - ref.theta_) > 1e-3


# ------------------------------------------------------------------ sensitivity
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), scale=st.floats(1e-3, 1e8), label=st.integers(0, 1),
       th_scale=st.floats(0.0, 20.0))
def test_released_statistics_move_by_at_most_their_sensitivity(seed, scale, label, th_scale):
    """Replace one private row by an extreme one: the PMT statistics move by <= Delta_g, Delta_H."""
    rng = np.random.default_rng(seed)
    n, p = 400, 3
    X = rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) + rng.normal(size=p)
    y = (rng.random(n) < 0.4).astype(float)
    Xq = rng.normal(size=(60, p)) @ rng.normal(size=(p, p))
    i = int(rng.integers(n))
    X2, y2 = X.copy(), y.copy()
    X2[i] = scale * rng.normal(size=p)
    y2[i] = label
    t1 = pmt_transform(X, Xq)
    t2 = pmt_transform(X2, moment=t1.moment)
    R = t1.radius
    assert t2.radius == R  # public: d, n, eta only
    th = th_scale * rng.normal(size=p + 1)
    g1, H1 = glm_statistics(t1.X_tilde, y, th)
    g2, H2 = glm_statistics(t2.X_tilde, y2, th)
    dg, dH = newton_sensitivities(R, n, "replace-one")
    assert np.linalg.norm(g1 - g2) <= dg * (1 + 1e-9)
    assert np.linalg.norm(H1 - H2, "fro") <= dH * (1 + 1e-9)
    assert dg == pytest.approx(2 * R / n) and dH == pytest.approx(math.sqrt(2) * R**2 / (4 * n))


def test_sensitivity_is_attained_up_to_constants():
    """The bound is not loose by more than a small factor: a worst-case pair comes close."""
    n, R = 100, 3.0
    Z = np.zeros((n, 2))
    Z[0] = [R, 0.0]
    Z2 = Z.copy()
    Z2[0] = [-R, 0.0]
    y, y2 = np.zeros(n), np.zeros(n)
    th = np.zeros(2)
    g1, _ = glm_statistics(Z, y, th)
    g2, _ = glm_statistics(Z2, y2, th)
    dg, dH = newton_sensitivities(R, n)
    assert np.linalg.norm(g1 - g2) >= 0.5 * dg  # |s - y| = 1/2 at theta = 0
    Z3 = Z.copy()
    Z3[0] = [0.0, R]
    _, H1 = glm_statistics(Z, y, th)
    _, H3 = glm_statistics(Z3, y, th)
    assert np.linalg.norm(H1 - H3, "fro") == pytest.approx(dH)  # b'' = 1/4 at u = 0: the sup is attained


def test_replace_one_sensitivities_and_add_remove_refused():
    g, H = newton_sensitivities(2.0, 10)
    assert g == pytest.approx(0.4) and H == pytest.approx(math.sqrt(2) * 0.1)
    with pytest.raises(ValueError, match="add/remove is not offered"):
        newton_sensitivities(2.0, 10, "add-remove")
    X, y, Xq, _ = DATA
    m = PMTLogistic(epsilon=1.0, random_state=0).fit(X, y, X_pub=Xq)
    assert m.report_.sensitivities["gradient (per step)"] == pytest.approx(2 * m.report_.radius / len(y))
    assert m.report_.neighbouring == "replace-one"


# ------------------------------------------------------------------ report and accounting
def test_report_ledger_and_noise_scales():
    X, y, Xq, _ = DATA
    T = 4
    m = PMTLogistic(epsilon=2.0, delta=1e-5, lam=1e-3, n_steps=T, random_state=3).fit(X, y, X_pub=Xq)
    r = m.report_
    n, d = len(y), X.shape[1] + 1
    mu = P.gdp_mu(2.0, 1e-5)
    assert r.mu == pytest.approx(mu)
    assert len(r.ledger.releases) == 2 * T
    assert r.ledger.total_mu == pytest.approx(mu, rel=1e-12)
    mu0 = mu / math.sqrt(2 * T)
    R = pmt_radius(d, n, 0.05)
    assert r.radius == pytest.approx(R)
    # the sensitivities carry the certified rounding factor of the float sums (engine.privacy)
    assert r.noise_scales["gradient (per step)"] == pytest.approx(2 * R / n / mu0 * P.sum_rounding_factor(n, d))
    assert r.noise_scales["Hessian (per step)"] == pytest.approx(
        math.sqrt(2) * R**2 / (4 * n) / mu0 * P.sum_rounding_factor(n, d * d))
    assert r.eig_floor == pytest.approx(max(1e-3, 2 * math.sqrt(d) * r.noise_scales["Hessian (per step)"]))
    assert r.n_iter == T and isinstance(r.converged, bool) and 0 <= r.eig_fixes <= T
    assert r.kappa_pmt < 5 < r.kappa_raw
    rec = r.to_dict()
    assert rec["releases"][-1]["mu"] == pytest.approx(mu)


def test_same_seed_same_output_and_clone():
    X, y, Xq, _ = DATA
    a = PMTLogistic(epsilon=1.0, random_state=7).fit(X, y, X_pub=Xq)
    b = clone(a).fit(X, y, X_pub=Xq)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    c = PMTLogistic(epsilon=1.0, random_state=8).fit(X, y, X_pub=Xq)
    assert not np.array_equal(a.theta_, c.theta_)


def test_estimator_equals_batched_newton_with_its_noise():
    """The estimator is noisy_newton on the transformed rows with newton_noise(default_rng(seed))."""
    X, y, Xq, _ = DATA
    T, seed = 5, 11
    m = PMTLogistic(epsilon=1.0, lam=1e-3, n_steps=T, random_state=np.random.default_rng(seed)).fit(X, y, X_pub=Xq)
    tr = m.transform_
    S = tr.moment.Sigma_pub_inv_sqrt
    Pm = np.diag([1.0] * X.shape[1] + [0.0])
    Hn, gn = newton_noise(np.random.default_rng(seed), T, tr.d)
    sg = m.report_.noise_scales["gradient (per step)"]
    sH = m.report_.noise_scales["Hessian (per step)"]
    # three runs (exercises the pair-product path): identical noise -> identical results
    res = noisy_newton(tr.X_tilde, y.astype(float), pen=2e-3 * S.T @ Pm @ S, sigma_g=np.full(3, sg),
                       sigma_H=np.full(3, sH), noise_g=np.repeat(gn[:, None], 3, 1),
                       noise_H=np.repeat(Hn[:, None], 3, 1), n_steps=T)
    for r in range(3):
        np.testing.assert_allclose(S @ res.theta[r], m.theta_, rtol=1e-7, atol=1e-9)
    assert res.eig_fixes[0] == m.report_.eig_fixes


def test_weighted_grams_matches_direct():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(500, 6))
    W = rng.random((500, 5))
    G = weighted_grams(Z, W)
    for r in range(5):
        np.testing.assert_allclose(G[r], (Z * W[:, [r]]).T @ Z, rtol=1e-12)
    G32 = weighted_grams(Z, W, dtype=np.float32)
    np.testing.assert_allclose(G32, G, rtol=1e-4)


def test_pair_products_exact_across_row_blocks():
    """The blocked build gives every row's upper-triangle products exactly (rows straddle block edges)."""
    from engine.pmt._newton import PAIR_BLOCK_ROWS, pair_products

    rng = np.random.default_rng(1)
    n = 2 * PAIR_BLOCK_ROWS + 37
    Z = rng.normal(size=(n, 7))
    iu, ju = np.triu_indices(7)
    for dtype in (np.float64, np.float32):
        K = pair_products(Z, dtype=dtype)
        Zd = Z.astype(dtype)
        assert K.shape == (n, 28) and K.dtype == dtype
        np.testing.assert_array_equal(K, Zd[:, iu] * Zd[:, ju])


def test_eig_floor_rule():
    assert newton_eig_floor("auto", 9, 0.0) == 1e-3
    assert newton_eig_floor("auto", 9, 0.1) == pytest.approx(0.6)
    np.testing.assert_allclose(newton_eig_floor(0.05, 9, np.array([0.0, 1.0])), [0.05, 0.05])
    with pytest.raises(ValueError, match="eig_floor"):
        newton_eig_floor("big", 3, 0.1)
    X, y, Xq, _ = DATA
    m = PMTLogistic(epsilon=1.0, eig_floor=0.02, random_state=0).fit(X, y, X_pub=Xq)
    assert m.report_.eig_floor == 0.02


# ------------------------------------------------------------------ labels and bad input (before noise)
@pytest.fixture
def no_noise(monkeypatch):
    """Any noise draw fails loudly: errors must come first."""

    def boom(*a, **k):
        raise AssertionError("noise was drawn before validation")

    monkeypatch.setattr(P, "gaussian_noise", boom)
    monkeypatch.setattr(P, "symmetric_gaussian_noise", boom)


def test_one_class_error_wording_does_not_depend_on_the_data(no_noise):
    """The non-private reference may refuse a one-class sample (the private estimators fit it:
    tests/ui/test_privacy_hardening.py); its message is the same whatever the data."""
    X, y, Xq, _ = DATA
    messages = set()
    for yy, XX in ((np.zeros(len(y)), X), (np.ones(len(y)), X), (np.ones(100), X[:100])):
        with pytest.raises(ValueError) as e:
            LogisticReference().fit(XX, yy, X_pub=Xq)
        messages.add(str(e.value))
    assert len(messages) == 1
    assert "both classes" in messages.pop()


@pytest.mark.parametrize("cls", ALL_CLASSES)
@pytest.mark.parametrize("bad, match", [
    (np.nan, "NaN"), (2, "labels other than classes"), (-1, "labels other than classes"),
    (0.5, "labels other than classes"), (np.inf, "NaN or infinite"),
])
def test_bad_labels_raise_before_noise(cls, bad, match, no_noise):
    X, y, Xq, _ = DATA
    yy = y.astype(float).copy()
    yy[17] = bad
    with pytest.raises(ValueError, match=match):
        cls().fit(X, yy, X_pub=Xq)


def test_user_given_classes():
    X, y, Xq, _ = DATA
    ys = np.where(y == 1, "yes", "no")
    # one explicit stream for both (an int seed is mixed with the settings, classes included)
    a = PMTLogistic(epsilon=1.0, random_state=np.random.default_rng(0), classes=("no", "yes")).fit(X, ys, X_pub=Xq)
    b = PMTLogistic(epsilon=1.0, random_state=np.random.default_rng(0)).fit(X, y, X_pub=Xq)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    assert set(a.predict(X[:50])) <= {"no", "yes"}
    # swapping the pair flips the sign of the fit (noise off): the user decides which class is positive
    c = PMTLogistic(epsilon=np.inf, n_steps=20, classes=("yes", "no")).fit(X, ys, X_pub=Xq)
    d_ = PMTLogistic(epsilon=np.inf, n_steps=20, classes=("no", "yes")).fit(X, ys, X_pub=Xq)
    np.testing.assert_allclose(c.theta_, -d_.theta_, atol=1e-8)
    # labels {1, 2} are not {0, 1}: never inferred
    with pytest.raises(ValueError, match="labels other than classes"):
        PMTLogistic().fit(X, y + 1, X_pub=Xq)
    assert PMTLogistic(classes=(1, 2), epsilon=np.inf).fit(X, y + 1, X_pub=Xq).score(X, y + 1) > 0.5
    with pytest.raises(ValueError, match="pair"):
        PMTLogistic(classes=(0, 1, 2)).fit(X, y, X_pub=Xq)
    with pytest.raises(ValueError, match="different"):
        PMTLogistic(classes=(1, 1)).fit(X, y, X_pub=Xq)


def test_check_binary_labels_direct():
    np.testing.assert_array_equal(check_binary_labels([0, 1, 1.0]), [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        check_binary_labels(np.array([0, 1, np.nan], dtype=object))
    with pytest.raises(ValueError, match="entries"):
        check_binary_labels([0, 1], 3)


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"), ({"delta": 1.0}, "delta"),
    ({"lam": -1e-3}, "lam"), ({"n_steps": 0}, "n_steps"), ({"eta": 1.5}, "eta"),
    ({"neighbouring": "swap"}, "neighbouring"), ({"eig_floor": -1.0}, "eig_floor"), ({"tol": 0.0}, "tol"),
])
def test_bad_parameters_raise_before_noise(kwargs, match, no_noise):
    X, y, Xq, _ = DATA
    with pytest.raises(ValueError, match=match):
        PMTLogistic(**kwargs).fit(X, y, X_pub=Xq)


def test_bad_data_raise_before_noise(no_noise):
    X, y, Xq, _ = DATA
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains"):
        PMTLogistic().fit(Xn, y, X_pub=Xq)
    with pytest.raises(ValueError, match="X_pub"):
        PMTLogistic().fit(X, y)
    with pytest.raises(ValueError, match="n_pub"):
        PMTLogistic().fit(X, y, X_pub=Xq[:0])
    with pytest.raises(ValueError, match="n < d"):
        PMTLogistic().fit(X[:3], y[:3], X_pub=Xq)
    with pytest.raises(ValueError, match="must match"):
        PMTLogistic().fit(X, y[:-1], X_pub=Xq)
    with pytest.raises(ValueError, match="X_pub"):
        DPGDLogistic().fit(X, y)  # step size needs the public rows unless given


# ------------------------------------------------------------------ behaviour
def test_pmt_converges_where_raw_newton_struggles_small_lam():
    """Badly scaled raw features, lam = 0: PMT converges and its error is far below DP-Newton's."""
    X, y, Xq, _ = make_data(n=20000, d=5, seed=1, shift=0.0)
    X = X * np.array([1.0, 10.0, 0.1, 3.0, 0.3])
    Xq = Xq * np.array([1.0, 10.0, 0.1, 3.0, 0.3])
    ref = LogisticReference(lam=0.0).fit(X, y).theta_
    e_pmt, e_nw, conv = [], [], []
    for s in range(8):
        m = PMTLogistic(epsilon=5.0, lam=0.0, random_state=s).fit(X, y, X_pub=Xq)
        e_pmt.append(np.linalg.norm(m.theta_ - ref))
        conv.append(m.report_.converged)
        nw = DPNewtonLogistic(epsilon=5.0, lam=0.0, random_state=s).fit(X, y, X_pub=Xq)
        e_nw.append(np.linalg.norm(nw.theta_ - ref))
    assert all(conv)
    assert np.median(e_pmt) < 0.5 * np.median(e_nw)


def test_dp_gd_report():
    X, y, Xq, _ = DATA
    m = DPGDLogistic(epsilon=1.0, random_state=0).fit(X, y, X_pub=Xq)
    r = m.report_
    n, d = len(y), X.shape[1] + 1
    C = pmt_radius(d, n, 0.05)
    assert r.radius == pytest.approx(C) and r.n_iter == 100 and len(r.ledger.releases) == 100
    mu_t = P.gdp_mu(1.0, 1e-5) / 10
    assert r.noise_scales["gradient (per step)"] == pytest.approx(2 * C / n / mu_t)
    assert 0.0 <= r.frac_truncated <= 1.0
    assert m.predict_proba(X[:4]).shape == (4, 2)


def test_reference_warns_on_separable_data_at_lam0():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)  # perfectly separable: no finite MLE
    with pytest.warns(UserWarning, match="did not converge"):
        m = LogisticReference(lam=0.0, max_iter=30).fit(X, y)
    assert not m.converged_ and m.report_.converged is False
    m2 = LogisticReference(lam=1e-2).fit(X, y)  # a penalty gives a finite fit
    assert m2.converged_


@pytest.mark.parametrize("cls, arg", [(DPNewtonLogistic, "clip_radius"), (DPGDLogistic, "clip_norm")])
def test_private_bounds_warn(cls, arg):
    X, y, Xq, _ = DATA
    with pytest.warns(P.PrivacyLeakWarning, match=arg):
        m = cls(epsilon=1.0, random_state=0, **{arg: "private"}).fit(X, y, X_pub=Xq)
    assert m.report_.radius == pytest.approx(np.max(np.linalg.norm(add_intercept(X), axis=1)))
    with pytest.raises(ValueError, match=arg):
        cls(**{arg: "huge"}).fit(X, y, X_pub=Xq)
