"""Privacy hardening, the PMT / estimator side: one test per kind of fault, with small
inputs, asserting the value a fix must give.

Kinds covered here: 1 add/remove neighbours (removed: replace-one only), 2 one-class private labels,
3 the float32 DP-GD path and large private values, 4 one integer seed reused across releases,
5/6 delta and user-set bounds at the estimators, sweep and CLI, and the audit's logistic-gradient pair.
"""

from __future__ import annotations

import inspect
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from engine import privacy as P
from engine.pmt import (
    DPGDLogistic,
    DPGDRidge,
    DPNewtonLogistic,
    DPRidge,
    DPRidgeOracle,
    PMTLogistic,
    PMTPoisson,
    PMTRidge,
)

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = [PMTRidge, DPRidge, DPRidgeOracle, DPGDRidge, PMTLogistic, DPNewtonLogistic, DPGDLogistic, PMTPoisson]


@pytest.fixture
def no_noise(monkeypatch):
    """Any noise draw fails loudly: errors must come first."""

    def boom(*a, **k):
        raise AssertionError("noise was drawn before validation")

    monkeypatch.setattr(P, "gaussian_noise", boom)
    monkeypatch.setattr(P, "symmetric_gaussian_noise", boom)


def _ridge_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=n)
    Xq = rng.normal(size=(50, 2))
    yq = Xq @ [1.0, -1.0] + rng.normal(size=50)
    return X, y, Xq, yq


# ------------------------------------------------------------------------------------------------
# kind 1: add/remove neighbours were calibrated as if n were public -> the option is removed
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", PRIVATE, ids=lambda c: c.__name__)
def test_add_remove_is_refused_by_every_private_estimator_before_noise(cls, no_noise):
    X, y, Xq, yq = _ridge_data()
    if cls in (PMTLogistic, DPNewtonLogistic, DPGDLogistic):
        y = (y > 0).astype(int)
    extra = {"y_max": 5.0} if cls is PMTPoisson else {}
    if cls is PMTPoisson:
        y = np.clip(np.round(np.abs(y)), 0, 5)
    est = cls(epsilon=1.0, neighbouring="add-remove", **extra)
    with pytest.raises(ValueError, match=r"must be 'replace-one'.*add/remove is not offered because n enters "
                                         r"R\(d, n\), B_y\(n\), averages and the noise scale"):
        est.fit(X, y, Xq, yq)
    assert not hasattr(est, "coef_")
    assert "replace-one" in inspect.signature(cls).parameters["neighbouring"].default


def test_issue_dpgd_small_input_add_remove_raises_and_replace_one_sensitivity_is_attained():
    """The issue's input: D = 50 rows (e1, 100). Under add/remove the released gradient moved 0.0784
    against a stated 0.04; the option now raises. Under replace-one (swap one row for (e1, -100)) the
    noise-free released gradient moves by exactly the stated sensitivity 2C/n = 0.08, never more."""
    X = np.zeros((50, 2))
    X[:, 0] = 1.0
    y = np.full(50, 100.0)
    kw = dict(clip_norm=2.0, step_size=1.0, n_steps=1, lam=0.0, fit_intercept=False)
    with pytest.raises(ValueError, match="add/remove is not offered"):
        DPGDRidge(epsilon=1.0, neighbouring="add-remove", **kw).fit(X, y)
    m = DPGDRidge(epsilon=1.0, random_state=0, **kw).fit(X, y)
    assert m.report_.sensitivities["gradient (per step)"] == pytest.approx(0.08, rel=1e-5)  # 2C/n x the rounding factor
    assert m.report_.neighbouring == "replace-one"
    # noise off: theta_1 = -g, so the released gradient is -theta_1
    g1 = -DPGDRidge(epsilon=math.inf, **kw).fit(X, y).theta_
    y2 = y.copy()
    y2[0] = -100.0
    g2 = -DPGDRidge(epsilon=math.inf, **kw).fit(X, y2).theta_
    assert np.linalg.norm(g1 - g2) == pytest.approx(0.08, rel=1e-12)


def test_add_remove_is_gone_from_sweep_cli_and_page(capsys):
    from engine.cli import main as cli_main
    from engine.pmt.sweep import run_sweep

    X, y, _, _ = _ridge_data(400)
    with pytest.raises(ValueError, match="add/remove is not offered"):
        run_sweep((X, y), methods=["pmt"], epsilons=[1.0], seeds=1, n_pubs=[50], neighbouring="add-remove")
    with pytest.raises(SystemExit) as e:
        cli_main(["pmt", "--dataset", "synthetic", "--neighbouring", "add-remove", "--seeds", "1"])
    assert e.value.code == 2
    assert "--neighbouring" in capsys.readouterr().err
    for rel in ("app_pages/pmt.py", "ui/common/state.py", "ui/pmt/compute/core.py", "ui/pmt/controls.py", "ui/pmt/run.py",
                "engine/cli/pmt.py"):
        path = ROOT / rel
        if path.exists():
            src = path.read_text()
            assert "add-remove" not in src and "sensitivities halve" not in src, rel
    assert P.NEIGHBOURING == ("replace-one",)


# ------------------------------------------------------------------------------------------------
# kind 2: a one-class private label set must fit like its replace-one neighbour
# ------------------------------------------------------------------------------------------------
def _label_pair():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    Xq = rng.normal(size=(40, 2))
    y_one = np.zeros(200, dtype=int)  # 200 zeros
    y_two = y_one.copy()
    y_two[0] = 1  # 199 zeros and one 1
    return X, Xq, y_one, y_two


#: Report fields computed from the features, the public data and the settings only: with the same X
#: they must be equal for the two label sets (a difference would tell the neighbours apart).
LABEL_FREE_FIELDS = ("method", "epsilon", "delta", "mu", "neighbouring", "n", "d", "lam", "sensitivities",
                     "noise_scales", "radius", "B_y", "n_pub", "kappa_raw", "kappa_pub", "kappa_pmt", "eig_floor",
                     "sigma_pub_regularized", "tau", "n_iter")


@pytest.mark.parametrize("cls", [PMTLogistic, DPNewtonLogistic, DPGDLogistic], ids=lambda c: c.__name__)
def test_one_class_private_labels_fit_like_their_neighbour(cls):
    X, Xq, y_one, y_two = _label_pair()
    kw = {"n_steps": 20} if cls is DPGDLogistic else {}
    a = cls(epsilon=1.0, random_state=5, **kw).fit(X, y_one, X_pub=Xq)
    b = cls(epsilon=1.0, random_state=5, **kw).fit(X, y_two, X_pub=Xq)
    for m in (a, b):
        assert m.coef_.shape == (2,) and np.all(np.isfinite(m.theta_))
    ra, rb = a.report_.to_dict(), b.report_.to_dict()
    assert set(ra) == set(rb) and set(ra["extra"]) == set(rb["extra"])
    # (DP-GD's frac_truncated counts clipped per-example *gradients*, which involve the labels: a
    # private, display-only figure like kappa_raw; row truncation of PMT / DP-Newton is label-free)
    for k in LABEL_FREE_FIELDS + (("frac_truncated",) if cls is not DPGDLogistic else ()):
        assert repr(ra[k]) == repr(rb[k]), k
    # nothing in the report counts the labels
    assert not any("class" in k or "label" in k or "pos" in k for k in list(ra) + list(ra["extra"]))


def test_one_class_labels_may_still_be_refused_by_the_nonprivate_reference():
    from engine.pmt import LogisticReference

    X, Xq, y_one, _ = _label_pair()
    with pytest.raises(ValueError, match="both classes"):
        LogisticReference().fit(X, y_one)


# ------------------------------------------------------------------------------------------------
# kind 3: one large private value (inside the validated domain |x| <= 1e150) must not become NaN in
# the float32 DP-GD path of the sweep (NaN vs finite would identify the neighbour)
# ------------------------------------------------------------------------------------------------
def _sweep_pair(big):
    from engine.pmt.sweep import sweep_split

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=300)
    Xq = rng.normal(size=(60, 2))
    pub = (Xq, Xq @ [1.0, -1.0])
    for i in range(300):  # the first row that lands in the private training set
        X2 = X.copy()
        X2[i, 0] = big
        if np.any(sweep_split(X2, y, public_data=pub)[2] == big):
            return X, X2, y, pub
    raise AssertionError("no training row")  # pragma: no cover


@pytest.mark.parametrize("task", ["ridge", "logistic"])
@pytest.mark.parametrize("big", [1e20, 1e150])
def test_float32_dpgd_sweep_keeps_a_large_private_value_finite(task, big):
    from engine.pmt.sweep import run_sweep

    X, X2, y, pub = _sweep_pair(big)
    if task == "logistic":
        y = (y > 0).astype(float)
        pub = (pub[0], (pub[1] > 0).astype(float))
    kw = dict(methods=["dp-gd"], epsilons=[0.5, 2.0], seeds=3, public_data=pub, dp_gd_steps=20, task=task,
              dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f1 = run_sweep((X, y), **kw)
        f2 = run_sweep((X2, y), **kw)
    assert f1.shape == f2.shape and list(f1.columns) == list(f2.columns)
    theta_cols = [c for c in ("l2_error", "rmse", "accuracy") if c in f2.columns]
    for f in (f1, f2):
        assert np.all(np.isfinite(f[theta_cols].to_numpy(float))), f[theta_cols]
    # the stated noise is the same for both (it never depends on the private values)
    np.testing.assert_array_equal(f1["sigma_b"].to_numpy(), f2["sigma_b"].to_numpy())


def test_dpgd_long_rows_are_scaled_in_float64_and_short_rows_untouched():
    from engine.pmt._gd import MAX_GD_ROW_NORM, _scale_long_rows

    Xa = np.array([[3.0, 4.0], [1e150, 0.0], [0.0, 1e20]])
    y = np.array([1.0, 1e150, -1.0])
    Xs, ys = _scale_long_rows(Xa, y)
    assert Xs[0].tolist() == [3.0, 4.0] and ys[0] == 1.0  # bit for bit
    joint = np.linalg.norm(np.column_stack([Xs, ys]), axis=1)
    assert joint[1:] == pytest.approx([MAX_GD_ROW_NORM] * 2, rel=1e-12)
    assert ys[1] / Xs[1, 0] == pytest.approx(1.0) and ys[2] < 0 < Xs[2, 1]  # direction and sign kept
    # the estimator (float64) on the 1e150 edge of the domain: finite, same shape as its neighbour
    Xr, yr, _, _ = _ridge_data(200)
    X2 = Xr.copy()
    X2[0] = [1e150, -1e150]
    a = DPGDRidge(epsilon=1.0, n_steps=20, step_size=0.1, clip_norm=10.0, random_state=0).fit(Xr, yr)
    b = DPGDRidge(epsilon=1.0, n_steps=20, step_size=0.1, clip_norm=10.0, random_state=0).fit(X2, yr)
    assert np.all(np.isfinite(b.theta_)) and a.theta_.shape == b.theta_.shape


# ------------------------------------------------------------------------------------------------
# kind 4: one integer seed reused across releases gave back the noise-free answer
# ------------------------------------------------------------------------------------------------
EPS4 = (0.5, 1.0, 2.0, 4.0)


def _one_d():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(2000, 1))
    y = 1.8 * X[:, 0] + rng.normal(size=2000)
    Xq = rng.normal(size=(100, 1))
    return X, y, Xq, 1.8 * Xq[:, 0]


def _attack(states):
    """Solve the four releases theta~_k (A + sA_k W) = b + sb_k w for (A, W, b, w) as if the draws (W, w)
    were shared (the null vector of a 4 x 4 system) and return (the attack's b/A, the true b/A)."""
    from engine.pmt.ridge import sufficient_statistics

    X, y, Xq, yq = _one_d()
    rows = []
    for eps, rs in zip(EPS4, states):
        m = PMTRidge(epsilon=eps, lam=0.0, fit_intercept=False, response="clip",  # the (A, b) releases
                     random_state=rs).fit(X, y, Xq, yq)
        assert m.report_.eig_fixes == 0
        th = m.theta_[0] / m.transform_.moment.Sigma_pub_inv_sqrt[0, 0]  # theta~ (whitened)
        rows.append([th, th * m.report_.noise_scales["A"], -1.0, -m.report_.noise_scales["b"]])
    A, b = sufficient_statistics(m.transform_.X_tilde, y, m.report_.B_y)
    v = np.linalg.svd(np.array(rows))[2][-1]
    return v[2] / v[0], b[0] / A[0, 0]


def test_shared_draws_would_solve_back_to_the_noise_free_answer():
    """The issue's attack, replayed with explicitly shared streams (what random_state=0 used to do)."""
    est, truth = _attack([np.random.default_rng(0) for _ in EPS4])
    assert est == pytest.approx(truth, rel=1e-9)


def test_int_seed_releases_get_independent_noise(monkeypatch):
    import engine.pmt.ridge as ridge_mod

    est, truth = _attack([0] * 4)  # four fits, random_state=0, eps 0.5, 1, 2, 4
    assert abs(est / truth - 1) > 1e-3  # no longer the noise-free b/A
    drawn = []
    orig = ridge_mod.ssp_noise

    def spy(rng, d):
        W, w = orig(rng, d)
        drawn.append(np.concatenate([W.ravel(), w]))
        return W, w

    monkeypatch.setattr(ridge_mod, "ssp_noise", spy)
    X, y, Xq, yq = _one_d()
    thetas = [PMTRidge(epsilon=e, lam=0.0, fit_intercept=False, response="clip", random_state=0).fit(X, y, Xq, yq).theta_
              for e in EPS4]  # the clip form draws (W, w) through ssp_noise
    D = np.array(drawn)  # (4 releases, 2 standard-normal draws)
    assert D.shape == (4, 2)
    for i in range(4):
        for j in range(i + 1, 4):  # pairwise not proportional (2 x 2 determinant far from 0)
            assert abs(np.linalg.det(D[[i, j]])) > 1e-6 * np.linalg.norm(D[i]) * np.linalg.norm(D[j])
    # same seed + same settings: reproducible, bit for bit
    again = PMTRidge(epsilon=2.0, lam=0.0, fit_intercept=False, response="clip", random_state=0).fit(X, y, Xq, yq).theta_
    np.testing.assert_array_equal(again, thetas[2])
    assert not np.array_equal(PMTRidge(epsilon=2.0, lam=0.0, fit_intercept=False, response="clip", random_state=1)
                              .fit(X, y, Xq, yq).theta_, thetas[2])
    # the default is OS entropy: two default fits differ
    a, b = (PMTRidge(epsilon=2.0, fit_intercept=False).fit(X, y, Xq, yq).theta_ for _ in range(2))
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("cls", PRIVATE, ids=lambda c: c.__name__)
def test_every_private_estimator_defaults_to_os_entropy_and_mixes_its_settings(cls):
    from engine.pmt._base import release_rng

    assert inspect.signature(cls).parameters["random_state"].default is None
    a = release_rng(cls(epsilon=1.0, random_state=7)).standard_normal(4)
    b = release_rng(cls(epsilon=1.0, random_state=7)).standard_normal(4)
    c = release_rng(cls(epsilon=2.0, random_state=7)).standard_normal(4)
    d = release_rng(cls(epsilon=1.0, delta=1e-6, random_state=7)).standard_normal(4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(a, d)
    assert not np.array_equal(a, np.random.default_rng(7).standard_normal(4))
    doc = inspect.getdoc(cls)
    assert "simulation" in doc and "reproducib" in doc, cls.__name__
    with pytest.raises(ValueError, match="random_state"):
        release_rng(cls(random_state=-1))


# ------------------------------------------------------------------------------------------------
# kinds 5 and 6 at the estimators, the sweep, the CLI and the page: delta > 1/n warns, delta >= 1 is
# refused, every user-set bound is validated to a range where the arithmetic is exact, before noise
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [1e155, 1e-170, math.inf])
@pytest.mark.parametrize("cls, param", [(DPRidge, "clip_radius"), (DPRidge, "response_bound"),
                                        (DPGDRidge, "clip_norm"), (PMTRidge, "response_bound"),
                                        (DPNewtonLogistic, "clip_radius"), (DPGDLogistic, "clip_norm")])
def test_user_bounds_outside_the_exact_range_are_refused_before_noise(cls, param, value, no_noise):
    X, y, Xq, yq = _ridge_data(100)
    if cls in (DPNewtonLogistic, DPGDLogistic):
        y = (y > 0).astype(int)
    est = cls(epsilon=1.0, **{param: value})
    with pytest.raises(ValueError, match=rf"{param} must lie in \[1e-100, 1e\+100\]"):
        est.fit(X, y, Xq, yq)
    assert not hasattr(est, "coef_")


def test_poisson_bounds_are_range_checked(no_noise):
    X, _, Xq, _ = _ridge_data(100)
    for kw, name in (({"y_max": 1e200}, "y_max"), ({"y_max": 5.0, "theta_radius": 1e-170}, "theta_radius")):
        with pytest.raises(ValueError, match=rf"{name} must lie in"):
            PMTPoisson(epsilon=1.0, **kw).fit(X, np.ones(100), Xq)


def test_issue_dprr_clip_radius_1e155_was_an_overflow():
    X, y, Xq, yq = _ridge_data(100)
    with pytest.raises(ValueError, match=r"clip_radius must lie in \[1e-100, 1e\+100\].*got 1e\+155"):
        DPRidge(clip_radius=1e155).fit(X, y, Xq, yq)
    m = DPRidge(epsilon=1.0, clip_radius=1e100, random_state=0).fit(X, y, Xq, yq)  # the edge still works
    assert np.all(np.isfinite(m.theta_)) and m.report_.noise_scales["A"] > 1e199


@pytest.mark.parametrize("kw, match", [
    (dict(clip_radius=1e200), r"clip_radius must lie in \[1e-100, 1e\+100\]"),
    (dict(methods=["dp-rr"], clip_radius=1e-170), r"clip_radius must lie in \[1e-100, 1e\+100\]"),
    (dict(methods=["dp-gd"], clip_norm=1e20), r"clip_norm must lie in \[1e-100, 1e\+15\]"),
    (dict(methods=["dp-gd"], clip_norm=1e20, dtype=np.float64), None),
    (dict(response_bound=1e-300), r"response_bound must lie in"),
    (dict(delta=1.0), r"delta must lie strictly between 0 and 1"),
])
def test_sweep_refuses_bad_bounds_before_any_noise(kw, match, monkeypatch):
    from engine.pmt.sweep import run_sweep

    X, y, _, _ = _ridge_data(400)
    kw = {"methods": ["pmt", "dp-rr"], "epsilons": [1.0], "seeds": 1, "n_pubs": [50], "dp_gd_steps": 5, **kw}
    if match is None:  # float64 DP-GD takes the float64 range
        assert np.isfinite(run_sweep((X, y), **kw)["l2_error"]).all()
        return
    import engine.pmt.ridge as ridge_mod

    monkeypatch.setattr(ridge_mod, "ssp_noise", lambda *a: (_ for _ in ()).throw(AssertionError("noise drawn")))
    with pytest.raises(ValueError, match=match):
        run_sweep((X, y), **kw)


def test_delta_above_one_over_n_warns_everywhere_and_delta_one_is_refused(capsys):
    X, y, Xq, yq = _ridge_data(80)
    with pytest.warns(P.DeltaTooLargeWarning, match=r"1/n = 1/80"):
        PMTRidge(epsilon=1.0, delta=0.9, random_state=0).fit(X, y, Xq, yq)
    with pytest.warns(P.DeltaTooLargeWarning):
        DPGDLogistic(epsilon=1.0, delta=0.1, n_steps=3, random_state=0).fit(X, (y > 0).astype(int), Xq)
    with warnings.catch_warnings():
        warnings.simplefilter("error", P.DeltaTooLargeWarning)
        PMTRidge(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y, Xq, yq)  # 1e-5 < 1/80: silent
    for bad in (1.0, 1.5):
        with pytest.raises(ValueError, match="delta must lie strictly between 0 and 1"):
            PMTRidge(epsilon=1.0, delta=bad).fit(X, y, Xq, yq)
    # the sweep warns too (n = the private training rows)
    from engine.pmt.sweep import run_sweep

    with pytest.warns(P.DeltaTooLargeWarning):
        run_sweep((X, y), methods=["pmt"], epsilons=[1.0], seeds=1, n_pubs=[20], delta=0.5)


def test_cli_pmt_delta_warning_and_refusal(capsys):
    from engine.cli import main as cli_main

    base = ["pmt", "--dataset", "synthetic", "--n-rows", "400", "--d", "2", "--seeds", "1", "--epsilon", "1",
            "--methods", "pmt", "--n-pub", "50"]
    assert cli_main(base + ["--delta", "0.5"]) == 0
    err = capsys.readouterr().err
    assert "warning: delta = 0.5 exceeds 1/n" in err and "Traceback" not in err
    assert cli_main(base + ["--delta", "0.999"]) == 0
    assert "warning: delta = 0.999 exceeds 1/n" in capsys.readouterr().err
    assert cli_main(base + ["--delta", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: delta must lie strictly between 0 and 1") and err.count("\n") == 1


def test_page_clip_radius_input_is_bounded_and_delta_advisory():
    from types import SimpleNamespace

    from ui.pmt.compute import core as C
    from ui.common.state import CLIP_RADIUS_MAX, URL_CODEC

    from engine.pmt._base import F32_BOUND_RANGE

    assert CLIP_RADIUS_MAX == F32_BOUND_RANGE[1]
    src = (ROOT / "ui" / "pmt" / "controls.py").read_text()  # the PMT page's controls
    assert "min_value=0.0, max_value=CLIP_RADIUS_MAX, key=K.clip_radius" in src
    with pytest.raises(ValueError):
        URL_CODEC["clip_radius"][0]("1e200")
    data = SimpleNamespace(n_pub=50, d=2, standardize=True, y_train=np.zeros(80), public_is_split=False, n_total=130)
    msgs = C.advisories(data, {}, 1e-3)
    assert not any("exceeds 1/n" in m for m in msgs)
    msgs = C.advisories(data, {}, 0.02)
    assert any("delta = 0.02 exceeds 1/n = 1/80" in m for m in msgs)


# ------------------------------------------------------------------------------------------------
# the audit: the logistic gradient's stated sensitivity 2R/n is attained; the one-class label pair
# produces no distinguishable error
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("R, n", [(3.0, 100), (7.25, 2000), (1.0, 1)])
def test_logistic_gradient_worst_pair_reaches_2R_over_n_exactly(R, n):
    from engine.audit import logistic_gradient_worst_pair
    from engine.pmt._newton import glm_statistics, newton_sensitivities

    (z1, y1), (z2, y2), theta, diff = logistic_gradient_worst_pair(R, n)
    assert np.linalg.norm(z1) == pytest.approx(R, rel=1e-15) and np.linalg.norm(z2) == pytest.approx(R, rel=1e-15)
    assert (y1, y2) == (0, 1) and float(z1 @ z2) / R**2 > 1 - 1e-12  # nearly parallel, opposite labels
    assert diff == 2 * R / n == newton_sensitivities(R, n)[0]
    # the engine's own averaged gradient (glm_statistics) on full neighbouring data sets agrees
    rng = np.random.default_rng(0)
    base = rng.normal(size=(n - 1, 2)) * 0.1
    yb = (rng.random(n - 1) < 0.5).astype(float)
    g0, _ = glm_statistics(np.vstack([base, z1]), np.append(yb, y1), theta)
    g1, _ = glm_statistics(np.vstack([base, z2]), np.append(yb, y2), theta)
    assert np.linalg.norm(g0 - g1) == pytest.approx(2 * R / n, rel=1e-12)


def test_audit_docstring_no_longer_claims_the_logistic_bound_is_unreachable():
    import engine.audit.mechanisms as M

    doc = inspect.getdoc(M.newton_pairs) + inspect.getdoc(__import__("engine.audit.pairs").audit.pairs)
    assert "No replace-one pair reaches" not in doc and "the full ``Delta_g``" in doc
    script = (ROOT / "scripts" / "audit_table.py").read_text()
    assert "cannot differ by the stated sensitivity 2R/n" not in script


@pytest.mark.parametrize("cls", [PMTLogistic, DPNewtonLogistic, DPGDLogistic], ids=lambda c: c.__name__)
def test_one_class_label_pair_has_no_distinguishable_error(cls):
    """Audit of kind 2: over many seeds, D (200 zeros) and D' (199 zeros, one 1) give the same outcome
    class every time (a finite fit, never an error): the error channel separates them with probability 0."""
    X, Xq, y_one, y_two = _label_pair()
    kw = {"n_steps": 5} if cls is DPGDLogistic else {}
    outcomes = {0: set(), 1: set()}
    for seed in range(20):
        for k, yy in enumerate((y_one, y_two)):
            try:
                m = cls(epsilon=1.0, random_state=np.random.default_rng(seed), **kw).fit(X, yy, X_pub=Xq)
                outcomes[k].add("finite" if np.all(np.isfinite(m.theta_)) else "non-finite")
            except Exception as exc:  # noqa: BLE001 - any error class would be a distinguishing event
                outcomes[k].add(type(exc).__name__)
    assert outcomes[0] == outcomes[1] == {"finite"}
