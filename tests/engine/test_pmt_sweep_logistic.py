"""Tests for the logistic task of engine.pmt.sweep.run_sweep (engine.pmt.sweep_logistic)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

from engine import privacy as P
from engine.datasets import make_synthetic_logistic
from engine.pmt.sweep import CONTRACT_COLUMNS, run_sweep, summarize
from engine.pmt.sweep_logistic import prepare_logistic_context, roc_auc_columns
from engine.pmt import DPGDLogistic, DPNewtonLogistic, LogisticReference, PMTLogistic


@pytest.fixture(scope="module")
def synthetic():
    """The acceptance data: n = 20000, d = 10, kappa(Sigma) = 100, ||theta*|| = 3."""
    return make_synthetic_logistic(n=20000, d=10, kappa=100.0, theta_norm=3.0, random_state=0)


def test_acceptance_pmt_beats_private_only_baselines_at_eps1_lam0(synthetic):
    """PMT.md section 8: epsilon = 1, lam = 0, 50 seeds; PMT's median L2 error is the lowest."""
    f = run_sweep(synthetic, task="logistic", methods=["pmt", "dp-newton", "dp-gd"], epsilons=[1.0], seeds=50,
                  lams=[0.0], n_pubs=[200], test_size=0.0)
    med = f.groupby("method")["l2_error"].median()
    assert (f.groupby("method").size() == 50).all()
    assert med["PMT"] < med["DP-Newton"]
    assert med["PMT"] < med["DP-GD"]
    assert med["PMT"] < 0.7 * min(med["DP-Newton"], med["DP-GD"])  # by a clear margin, not a coin flip
    # the spread too (PMT.md section 8): PMT's IQR is not wider than DP-GD's
    q = f.groupby("method")["l2_error"].quantile([0.25, 0.75]).unstack()
    assert (q.loc["PMT", 0.75] - q.loc["PMT", 0.25]) < 2 * (q.loc["DP-GD", 0.75] - q.loc["DP-GD", 0.25])


def _small_split(seed=0, n=6000, d=4):
    ds = make_synthetic_logistic(n=n, d=d, kappa=20.0, theta_norm=2.0, random_state=seed)
    X, y = ds.to_numpy()
    X = X * np.geomspace(1, 10, d) + 1.0
    return X[300:4800], y[300:4800], X[:300], y[:300], X[4800:], y[4800:]


@pytest.mark.parametrize("method, cls", [("pmt", PMTLogistic), ("dp-newton", DPNewtonLogistic),
                                         ("dp-gd", DPGDLogistic)])
def test_sweep_rows_reproduce_the_estimators(method, cls):
    """Seed s in the sweep draws the same noise as random_state=default_rng(s) (float64 products)."""
    from engine.pmt.sweep import METHODS

    X, y, Xq, yq, Xt, yt = _small_split()
    ctx = prepare_logistic_context(X, y, Xq, yq, Xt, yt, lams=[1e-3], delta=1e-5, eta=0.05,
                                   neighbouring="replace-one", newton_dtype=np.float64, dtype=np.float64)
    out = METHODS[("logistic", method)].runner(ctx, [0.7, 3.0], [4, 9])
    for k in range(len(out["li"])):
        eps = [0.7, 3.0][out["ei"][k]]
        seed = [4, 9][out["si"][k]]
        m = cls(epsilon=eps, lam=1e-3, random_state=np.random.default_rng(seed)).fit(X, y, X_pub=Xq)
        np.testing.assert_allclose(out["theta"][k], m.theta_, rtol=1e-6, atol=1e-8)
        if method != "dp-gd":
            assert out["converged"][k] == m.report_.converged
            assert out["eig_fixes"][k] == m.report_.eig_fixes
            assert out["eig_floor"][k] == pytest.approx(m.report_.eig_floor)


def test_frame_columns_and_metrics_match_sklearn():
    X, y, Xq, yq, Xt, yt = _small_split(seed=1)
    Xall = np.vstack([Xq, X, Xt])
    yall = np.concatenate([yq, y, yt])
    f = run_sweep((Xall, yall), task="logistic", epsilons=[1.0, np.inf], seeds=3, lams=[1e-3], n_pubs=[300],
                  test_size=0.25)
    for c in CONTRACT_COLUMNS + ("accuracy", "auc", "log_loss", "converged", "eig_fixes", "n_steps"):
        assert c in f.columns, c
    assert set(f["method"]) == {"PMT", "DP-Newton", "DP-GD", "Non-private", "Public-only"}
    assert len(f) == 5 * 2 * 3
    assert f["converged"].dtype == bool
    # recompute one run's held-out metrics with sklearn from the estimator with the same seed
    ctx = prepare_logistic_context(X, y, Xq, yq, Xt, yt, lams=[1e-3], delta=1e-5, eta=0.05,
                                   neighbouring="replace-one")
    m = PMTLogistic(epsilon=1.0, lam=1e-3, random_state=2).fit(X, y, X_pub=Xq)
    met = ctx.metrics(m.theta_[None], np.array([0]))
    p = m.predict_proba(Xt)[:, 1]
    assert met["auc"][0] == pytest.approx(roc_auc_score(yt, p), abs=1e-12)
    assert met["accuracy"][0] == pytest.approx(accuracy_score(yt, m.predict(Xt)))
    assert met["log_loss"][0] == pytest.approx(log_loss(yt, p), rel=1e-9)
    ref = LogisticReference(lam=1e-3).fit(X, y)
    assert met["l2_error"][0] == pytest.approx(np.linalg.norm(m.theta_ - ref.theta_), rel=1e-6)
    assert met["excess_risk"][0] > 0
    # the non-private rows: zero error, the reference's test metrics
    npv = f[f["method"] == "Non-private"]
    assert np.allclose(npv["l2_error"], 0.0) and npv["mu"].eq(np.inf).all() and npv["converged"].all()
    s = summarize(f, "auc")
    assert set(s["metric"]) == {"auc"} and (s["n_seeds"] == 3).all()


def test_noise_off_sweep_pmt_reaches_the_reference_when_nothing_is_truncated():
    X, y, Xq, yq, Xt, yt = _small_split(seed=2)
    f = run_sweep((np.vstack([Xq, X]), np.concatenate([yq, y])), task="logistic", methods=["pmt"],
                  epsilons=[np.inf], seeds=1, lams=[0.0, 1e-2], n_pubs=[300], test_size=0.0,
                  task_options={"newton_steps": 30, "newton_dtype": np.float64})
    assert (f["frac_truncated"] == 0).all()
    assert f["l2_error"].max() < 1e-4
    assert f["converged"].all()


def test_roc_auc_columns_matches_sklearn_with_ties():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.3).astype(int)
    S = np.round(rng.normal(size=(300, 4)) + y[:, None], 1)  # many ties
    S[:, 3] = 0.0  # all tied
    got = roc_auc_columns(S, y)
    for r in range(4):
        assert got[r] == pytest.approx(roc_auc_score(y, S[:, r]), abs=1e-12)
    assert got[3] == 0.5


def test_roc_auc_columns_equals_the_rank_sum_of_scipy_rankdata_bit_for_bit():
    """The integer rank count gives the very float of ``rankdata``'s average ranks (ties, +-inf, NaN)."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(5)
    for trial in range(12):
        n, k = int(rng.integers(2, 3000)), int(rng.integers(1, 9))
        S = rng.normal(size=(n, k))
        if trial % 2:
            S = np.round(S, 1)  # many ties
        S[0, 0], S[-1, -1] = np.inf, -np.inf
        if trial % 3 == 0:
            S[n // 2, k - 1] = np.nan
        y = (rng.random(n) < 0.2 + 0.05 * trial).astype(int)
        y[0], y[-1] = 1, 0
        n1, n0 = int(y.sum()), int((1 - y).sum())
        want = (rankdata(S, axis=0)[y == 1].sum(axis=0) - n1 * (n1 + 1) / 2) / (n1 * n0)
        np.testing.assert_array_equal(roc_auc_columns(S, y), want)
        assert np.isnan(roc_auc_columns(S, y)[k - 1]) == (trial % 3 == 0)


def test_bad_labels_in_a_sweep_raise_before_noise(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("noise drawn before validation")

    monkeypatch.setattr(P, "gaussian_noise", boom)
    monkeypatch.setattr(P, "symmetric_gaussian_noise", boom)
    X, y, Xq, yq, _, _ = _small_split(seed=3)
    yy = np.concatenate([yq, y]).astype(float)
    yy[400] = 2.0
    with pytest.raises(ValueError, match="labels other than classes"):
        run_sweep((np.vstack([Xq, X]), yy), task="logistic", epsilons=[1.0], seeds=2, n_pubs=[300])
    with pytest.raises(ValueError, match="newton_steps"):
        run_sweep((np.vstack([Xq, X]), np.concatenate([yq, y])), task="logistic", epsilons=[1.0], seeds=2,
                  n_pubs=[300], task_options={"newton_steps": -1})
    with pytest.raises(ValueError, match="unknown method"):
        run_sweep((np.vstack([Xq, X]), np.concatenate([yq, y])), task="logistic", methods=["dp-rr"], seeds=2)


def test_classification_sweep_never_centres_labels():
    X, y, Xq, yq, _, _ = _small_split(seed=4)
    f = run_sweep((np.vstack([Xq, X]), np.concatenate([yq, y])), task="logistic", methods=["non-private"],
                  epsilons=[1.0], seeds=1, n_pubs=[300], standardize=True, test_size=0.2)
    assert f["auc"].iloc[0] > 0.6 and f["converged"].iloc[0]


def test_bank_sweep_runs_with_public_standardisation():
    f = run_sweep("bank", task="logistic", epsilons=[2.0], seeds=2, lams=[1e-4], standardize=True)
    assert f["d"].iloc[0] == 42  # 41 features (one-hot with drop_first, duration dropped) + intercept
    npv = f[f["method"] == "Non-private"].iloc[0]
    assert 0.88 < npv["accuracy"] < 0.92 and 0.7 < npv["auc"] < 0.85
    pmt = f[f["method"] == "PMT"]
    assert pmt["kappa_pmt"].iloc[0] < pmt["kappa_raw"].iloc[0]
    assert isinstance(pd.unique(f["method"]).tolist(), list)


# ------------------------------------------------------------------ CLI: python -m engine pmt --task logistic
def test_cli_task_logistic_table_and_json(capsys, tmp_path):
    import json

    from engine.cli import main

    rc = main(["pmt", "--task", "logistic", "--dataset", "synthetic", "--n-rows", "4000", "--d", "4", "--kappa",
               "10", "--epsilon", "2", "--seeds", "3", "--lam", "1e-3", "--newton-steps", "4"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "task logistic" in out and "convergence failures" in out
    rows = [ln for ln in out.splitlines() if ln.strip().startswith(("PMT", "DP-Newton", "DP-GD", "Non-private"))]
    assert len(rows) == 8  # 4 methods x (error table + classification table)
    out_csv = tmp_path / "r.csv"
    rc = main(["pmt", "--task", "logistic", "--dataset", "synthetic", "--n-rows", "4000", "--d", "4", "--epsilon",
               "1", "5", "--seeds", "2", "--methods", "pmt", "dp-newton", "--metric", "auc", "--json", "--out",
               str(out_csv)])
    assert rc == 0
    payload = json.loads(capsys.readouterr().out)
    summ = pd.DataFrame(payload["summary"])
    assert set(summ["method"]) == {"PMT", "DP-Newton"} and set(summ["metric"]) == {"auc"}
    cls = pd.DataFrame(payload["classification"])
    assert {"accuracy", "auc", "log_loss", "failures"} <= set(cls.columns)
    frame = pd.read_csv(out_csv)
    assert len(frame) == 2 * 2 * 2 and frame["n_steps"].eq(5).all()
    assert int(cls["failures"].sum()) == int((~frame["converged"]).sum())


def test_cli_rejects_newton_steps_for_ridge(capsys):
    from engine.cli import main

    assert main(["pmt", "--dataset", "wine-red", "--epsilon", "1", "--seeds", "2", "--newton-steps", "3"]) == 2
    assert "newton-steps" in capsys.readouterr().err


def test_convergence_flag_separates_diverging_runs(synthetic):
    """Fixed 1e-3 floor at epsilon = 1: noisy Newton diverges and is flagged; the default floor settles."""
    f_fixed = run_sweep(synthetic, task="logistic", methods=["pmt"], epsilons=[1.0], seeds=12, lams=[0.0],
                        test_size=0.0, task_options={"eig_floor": 1e-3})
    f_auto = run_sweep(synthetic, task="logistic", methods=["pmt"], epsilons=[1.0], seeds=12, lams=[0.0],
                       test_size=0.0)
    assert f_fixed["l2_error"].median() > 20 * f_auto["l2_error"].median()
    assert (~f_fixed["converged"]).sum() >= 10
    assert f_auto["converged"].all()
    assert (f_fixed["eig_floor"] == 1e-3).all() and (f_auto["eig_floor"] > 1e-3).all()


def test_methods_side_by_side_give_the_numbers_of_one_after_the_other(monkeypatch):
    """run_sweep runs the logistic methods two at a time (engine.pmt.sweep._run_methods): the same frame."""
    import engine.pmt.sweep_logistic as SL

    X, y, Xq, yq, Xt, yt = _small_split(seed=4)
    data = (np.vstack([Xq, X, Xt]), np.concatenate([yq, y, yt]))
    kw = dict(task="logistic", epsilons=[0.5, 2.0], seeds=20, lams=[1e-3, 0.1], n_pubs=[300], test_size=0.2)
    assert SL.LogisticSweepContext.concurrent_methods
    side = run_sweep(data, **kw)
    monkeypatch.setattr(SL.LogisticSweepContext, "concurrent_methods", False)
    pd.testing.assert_frame_equal(side, run_sweep(data, **kw))
