"""Tests for engine.pmt.sweep: the vectorised sweep and its summary (contract columns)."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from engine import privacy as P
from engine.datasets import make_synthetic_regression
from engine.pmt.sweep import CONTRACT_COLUMNS, SUMMARY_COLUMNS, resolve_methods, run_sweep, summarize, sweep_split
from engine.pmt import DPGDRidge, DPRidge, PMTRidge, RidgeReference


def small_data(n=3000, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.geomspace(1, 20, p) + 5
    y = X @ rng.normal(size=p) + 3 + rng.normal(size=n)
    return X, y


DATA = small_data()
EPS = [0.5, 2.0]


def test_contract_columns_and_shape():
    f = run_sweep(DATA, methods=["pmt", "dp-rr", "dp-gd", "non-private"], epsilons=EPS, seeds=4,
                  lams=[0.0, 1e-2], n_pubs=[50, 100], dp_gd_steps=20)
    assert set(CONTRACT_COLUMNS) <= set(f.columns)
    assert len(f) == 4 * 2 * 4 * 2 * 2
    assert not f.duplicated(["method", "epsilon", "seed", "lam", "n_pub"]).any()
    assert set(f["method"]) == {"PMT", "DP-RR", "DP-GD", "Non-private"}
    mu = P.gdp_mu(0.5, 1e-5)
    assert np.allclose(f.loc[(f.method == "PMT") & (f.epsilon == 0.5), "mu"], mu)
    assert np.all(np.isinf(f.loc[f.method == "Non-private", "mu"]))
    assert np.all(f.loc[f.method == "Non-private", "l2_error"] == 0)
    # kappa_pmt only for PMT rows; radius is R for PMT
    assert f.loc[f.method == "PMT", "kappa_pmt"].notna().all()
    assert f.loc[f.method == "DP-RR", "kappa_pmt"].isna().all()
    assert f.loc[f.method == "DP-GD", "kappa_noisy"].isna().all()
    s = summarize(f)
    assert list(s.columns) == list(SUMMARY_COLUMNS)
    assert len(s) == 4 * 2 * 2 * 2 and (s["n_seeds"] == 4).all()


def _fit_on_sweep_split(cls, seed, eps, **kw):
    Xp, yp, Xtr, ytr, Xte, yte = sweep_split(*DATA, n_pub=100, split_seed=0, test_size=0.2)
    m = cls(epsilon=eps, lam=1e-2, random_state=np.random.default_rng(seed), **kw).fit(Xtr, ytr, Xp, yp)
    ref = RidgeReference(lam=1e-2).fit(Xtr, ytr)
    return m, ref, (Xte, yte)


@pytest.mark.parametrize("key,cls,kw,rtol", [
    ("pmt", PMTRidge, {}, 1e-9),
    ("dp-rr", DPRidge, {}, 1e-9),
    ("dp-gd", DPGDRidge, {"n_steps": 30}, 1e-8),
])
def test_sweep_reproduces_estimators(key, cls, kw, rtol):
    # every estimator centres (the baselines also scale) with public statistics by default, as the sweep does
    f = run_sweep(DATA, methods=[key], epsilons=EPS, seeds=[3, 11], lams=[1e-2], n_pubs=[100],
                  dp_gd_steps=30, dtype=np.float64, center_y=None if key == "pmt" else False)
    for seed in (3, 11):
        for eps in EPS:
            m, ref, (Xte, yte) = _fit_on_sweep_split(cls, seed, eps, **kw)
            row = f[(f.seed == seed) & (f.epsilon == eps)].iloc[0]
            err = np.linalg.norm(m.theta_ - ref.theta_)
            assert row["l2_error"] == pytest.approx(err, rel=rtol)
            assert row["rmse"] == pytest.approx(np.sqrt(np.mean((yte - m.predict(Xte)) ** 2)), rel=1e-6)
            assert row["radius"] == pytest.approx(m.report_.radius)
            assert row["frac_truncated"] == pytest.approx(m.report_.frac_truncated)
            if key != "dp-gd":
                assert row["kappa_noisy"] == pytest.approx(m.report_.kappa_noisy, rel=1e-6)
                assert row["eig_fix"] == bool(m.report_.eig_fixes)


def test_dpgd_float32_close_to_float64():
    kw = dict(methods=["dp-gd"], epsilons=EPS, seeds=5, dp_gd_steps=30)
    a = run_sweep(DATA, dtype=np.float32, **kw)["l2_error"].to_numpy()
    b = run_sweep(DATA, dtype=np.float64, **kw)["l2_error"].to_numpy()
    np.testing.assert_allclose(a, b, rtol=1e-3)


def test_excess_risk_and_relative_error():
    f = run_sweep(DATA, methods=["pmt"], epsilons=[1.0], seeds=[0], lams=[0.0], n_pubs=[100], center_y=False)
    m, ref, _ = _fit_on_sweep_split(PMTRidge, 0, 1.0)
    Xp, yp, Xtr, ytr, *_ = sweep_split(*DATA, n_pub=100)
    m = PMTRidge(epsilon=1.0, lam=0.0, random_state=np.random.default_rng(0), center=None).fit(Xtr, ytr, Xp, yp)
    ref = RidgeReference(lam=0.0).fit(Xtr, ytr)
    Xa = np.hstack([Xtr, np.ones((len(ytr), 1))])
    diff = m.theta_ - ref.theta_
    row = f.iloc[0]
    assert row["excess_risk"] == pytest.approx(np.mean((Xa @ diff) ** 2), rel=1e-8)
    assert row["rel_error"] == pytest.approx(np.linalg.norm(diff) / np.linalg.norm(ref.theta_), rel=1e-8)


def test_noise_off_sweep_matches_reference():
    f = run_sweep(DATA, methods=["pmt", "dp-rr"], epsilons=[np.inf], seeds=2, response_bound=1e6, clip_radius=1e6)
    assert f["frac_truncated"].max() == 0.0
    Xp, yp, Xtr, ytr, *_ = sweep_split(*DATA, n_pub=200)
    ref_norm = np.linalg.norm(RidgeReference(lam=1e-3).fit(Xtr, ytr).theta_)
    assert f["l2_error"].max() <= 1e-6 * ref_norm
    assert f["rel_error"].max() <= 1e-6


def test_same_seed_identical_different_seed_differs():
    kw = dict(methods=["pmt", "dp-rr", "dp-gd"], epsilons=EPS, dp_gd_steps=20)
    a = run_sweep(DATA, seeds=[1, 2], **kw)
    b = run_sweep(DATA, seeds=[1, 2], **kw)
    pd.testing.assert_frame_equal(a, b)
    c = run_sweep(DATA, seeds=[5, 6], **kw)
    assert not np.allclose(a["l2_error"].to_numpy(), c["l2_error"].to_numpy())


def test_oracle_no_worse_than_default_and_labelled():
    f = run_sweep(DATA, methods=["dp-rr", "dp-rr-oracle"], epsilons=EPS, seeds=10)
    s = summarize(f).set_index(["method", "epsilon"])["median"]
    for e in EPS:
        assert s[("DP-RR (oracle C, non-private tuning)", e)] <= s[("DP-RR", e)] + 1e-12


def test_resample_split_changes_public_sample():
    f = run_sweep(DATA, methods=["pmt"], epsilons=[1.0], seeds=3, resample_split=True)
    assert f["kappa_pub"].nunique() == 3
    g = run_sweep(DATA, methods=["pmt"], epsilons=[1.0], seeds=3)
    assert g["kappa_pub"].nunique() == 1


def test_standardize_centres_response_with_public_mean():
    X, y = DATA
    Xp, yp, Xtr, ytr, Xte, yte = sweep_split(X, y, n_pub=100, standardize=True)
    assert np.allclose(Xp.mean(0), 0) and np.allclose(Xp.std(0), 1)
    Xp2, yp2, Xtr2, ytr2, _, yte2 = sweep_split(X, y, n_pub=100, standardize=True, center_y=False)
    shift = yp2.mean()  # the PUBLIC mean of y
    np.testing.assert_allclose(yp, yp2 - shift)
    np.testing.assert_allclose(ytr, ytr2 - shift)
    np.testing.assert_allclose(yte, yte2 - shift)
    assert abs(ytr.mean()) > 1e-6  # the private mean is not used


def test_synthetic_acceptance_pmt_beats_baselines():
    # n=20000, d=10, kappa(Sigma)=1e3, epsilon=1, delta=1e-5, 50 seeds
    ds = make_synthetic_regression(n=20000, d=10, kappa=1e3, random_state=0)
    f = run_sweep(ds, methods=["pmt", "dp-rr", "dp-gd"], epsilons=[1.0], seeds=50, delta=1e-5)
    med = f.groupby("method")["l2_error"].median()
    assert med["PMT"] < med["DP-RR"]
    assert med["PMT"] < med["DP-GD"]
    assert f.loc[f.method == "PMT", "kappa_pmt"].iloc[0] < 5 < 500 < f["kappa_raw"].iloc[0]


@pytest.mark.parametrize("kw,match", [
    ({"epsilons": [0.0]}, "epsilon"),
    ({"epsilons": [float("nan")]}, "epsilon"),
    ({"delta": 1.0}, "delta"),
    ({"lams": [-1.0]}, "lam"),
    ({"n_pubs": [0]}, "n_pub"),
    ({"methods": ["magic"]}, "unknown method"),
    ({"task": "gamma"}, "task"),
    ({"seeds": 0}, "seeds"),
    ({"test_size": 1.0}, "test_size"),
    ({"dp_gd_steps": 0}, "dp_gd_steps"),
])
def test_bad_parameters(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        run_sweep(DATA, **{"seeds": 2, **kw})


def test_resolve_methods_by_display_name():
    assert [m.key for m in resolve_methods("ridge", ["DP-RR (oracle C, non-private tuning)", "Non-private"])] == [
        "dp-rr-oracle", "non-private"]


def test_summarize_quantiles_and_order():
    f = pd.DataFrame({"method": ["B"] * 5 + ["A"] * 5, "epsilon": 1.0, "lam": 0.0, "n_pub": 200,
                      "seed": list(range(5)) * 2, "rmse": [1, 2, 3, 4, 5, 10, 20, 30, 40, 50]})
    s = summarize(f, "rmse")
    assert s["method"].tolist() == ["B", "A"]
    assert s.iloc[0][["median", "q25", "q75", "q05", "q95"]].tolist() == pytest.approx([3, 2, 4, 1.2, 4.8])
    with pytest.raises(ValueError, match="metric"):
        summarize(f, "auc")


def test_separate_public_sample():
    X, y = DATA
    rng = np.random.default_rng(9)
    Xq = rng.normal(size=(150, X.shape[1])) * np.geomspace(1, 20, X.shape[1]) + 5
    yq = rng.normal(size=150)
    f = run_sweep((X, y), methods=["pmt"], epsilons=[1.0], seeds=[4], public_data=(Xq, yq), test_size=0.2)
    assert (f["n_pub"] == 150).all() and (f["n"] == len(y) - round(0.2 * len(y))).all()
    Xp, yp, Xtr, ytr, *_ = sweep_split(X, y, public_data=(Xq, yq))
    m = PMTRidge(epsilon=1.0, random_state=np.random.default_rng(4)).fit(Xtr, ytr, Xp, yp)
    ref = RidgeReference().fit(Xtr, ytr)
    assert f["l2_error"].iloc[0] == pytest.approx(np.linalg.norm(m.theta_ - ref.theta_), rel=1e-9)
    with pytest.raises(ValueError, match="columns"):
        run_sweep((X, y), methods=["pmt"], epsilons=[1.0], seeds=1, public_data=(Xq[:, :2], yq))


def test_summarize_keeps_data_sets_apart():
    a = pd.DataFrame({"dataset": "a", "method": "PMT", "epsilon": 1.0, "lam": 0.0, "n_pub": 200,
                      "seed": range(3), "l2_error": [1.0, 2.0, 3.0]})
    b = a.assign(dataset="b", l2_error=[10.0, 20.0, 30.0])
    s = summarize(pd.concat([a, b]))
    assert list(s.columns) == ["dataset", *SUMMARY_COLUMNS]
    assert s.set_index("dataset")["median"].to_dict() == {"a": 2.0, "b": 20.0}
    assert list(summarize(a).columns) == list(SUMMARY_COLUMNS)
