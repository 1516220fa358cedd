"""Every released float sum moves by at most its calibrated (certified) sensitivity on a neighbouring pair.

The pair: n - 1 rows whose clipped per-example terms all point one way, and one row whose term is +C vs
-C (the review's pair; a float32 accumulation moved the released mean gradient by 1.00098 x 2C/n at
n = 36,000, 1.0045 at 4e5 and 1.018 at 2e6). Sums now run in float64 (products in the working dtype) and
the sensitivities carry the certified rounding factor of :func:`engine.privacy.sum_rounding_factor`;
each test also checks that the pair does reach the sensitivity (so it could fail the other way)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import privacy as P
from engine.pmt._gd import dp_gd_logistic_path, dp_gd_ridge_path, dp_gd_sensitivity
from engine.pmt._newton import (
    LOGISTIC,
    POISSON,
    batched_glm_statistics,
    certified_newton_sensitivities,
    newton_sensitivities,
)

#: a direction and a bound that are not exact in float32 (0.7, 0.6, 0.8 all round)
U = np.array([0.6, 0.8])
C = 0.7
SIZES = [36_000, 400_000, 2_000_000]  # DP-GD at 2e6: 2-3 s here
SIZES_NEWTON = [36_000, 400_000, pytest.param(2_000_000, marks=pytest.mark.slow)]  # 2e6: ~12 s (load 6)


def _released_mean_gradient(path, Xa, y, runs, dtype):
    """One DP-GD step from theta = 0 without noise, step 1: theta_1 = -g (the released mean gradient)."""
    d = Xa.shape[1]
    th, _ = path(Xa, y, clip_norm=C, lam=np.zeros(runs), Pm=np.zeros((d, d)), step_size=np.ones(runs),
                 sigma=np.zeros(runs), noise=np.zeros((1, d, runs)), n_steps=1, dtype=dtype)
    return -th[:, 0]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype, runs", [(np.float32, 1), (np.float32, 64), (np.float64, 1)],
                         ids=["f32-numpy", "f32-kernel", "f64"])
def test_dp_gd_ridge_sum_moves_by_at_most_its_certified_sensitivity(n, dtype, runs):
    Xa = np.tile(U, (n, 1))  # every row's gradient -2 y x clipped to -C u (y large)
    y0 = np.full(n, 1e3)
    y1 = y0.copy()
    y1[-1] = -1e3  # the replaced row: +C u instead of -C u
    g0 = _released_mean_gradient(dp_gd_ridge_path, Xa, y0, runs, dtype)
    g1 = _released_mean_gradient(dp_gd_ridge_path, Xa, y1, runs, dtype)
    move = float(np.linalg.norm(g1 - g0))
    sens = dp_gd_sensitivity(C, n, 2)
    assert move <= sens, (move / (2 * C / n))
    assert move >= 2 * C / n * (1 - 1e-6)  # the pair reaches the sensitivity


@pytest.mark.parametrize("n", SIZES[:2])
def test_dp_gd_logistic_sum_moves_by_at_most_its_certified_sensitivity(n):
    Xa = np.tile(U * 1e3, (n, 1))  # (s - y) x at theta = 0: norm 500, clipped to C
    y0 = np.zeros(n)
    y1 = y0.copy()
    y1[-1] = 1.0  # the replaced row's clipped gradient flips sign
    g0 = _released_mean_gradient(dp_gd_logistic_path, Xa, y0, 1, np.float32)
    g1 = _released_mean_gradient(dp_gd_logistic_path, Xa, y1, 1, np.float32)
    move = float(np.linalg.norm(g1 - g0))
    assert 2 * C / n * (1 - 1e-6) <= move <= dp_gd_sensitivity(C, n, 2)


def _worst_logistic_rows(n, R, eps=1e-3, margin=50.0):
    """n - 1 rows R (u + eps v) with label 0 (all saturated at theta = K v: terms +R(u + eps v)) and the
    replaced row R (u - eps v) with label 1 (term -R(u - eps v)) on D' instead: the gradient moves by
    2R / n / sqrt(1 + eps^2)."""
    z1 = R * np.array([1.0, eps, 0.0]) / math.hypot(1, eps)
    z2 = R * np.array([1.0, -eps, 0.0]) / math.hypot(1, eps)
    Z0 = np.tile(z1, (n, 1))
    Z1 = Z0.copy()
    Z1[-1] = z2
    y0 = np.zeros(n)
    y1 = y0.copy()
    y1[-1] = 1.0
    theta = np.array([0.0, margin * math.hypot(1, eps) / (eps * R), 0.0])
    return (Z0, y0), (Z1, y1), theta


@pytest.mark.parametrize("n", SIZES_NEWTON)
def test_newton_gradient_and_hessian_sums_move_by_at_most_their_certified_sensitivities(n):
    R = 0.7
    (Z0, y0), (Z1, y1), theta = _worst_logistic_rows(n, R)
    th = np.tile(theta, (3, 1))  # three runs: the pair-product (K) path of the sweeps
    g0, _ = batched_glm_statistics(Z0, th, LOGISTIC, y=y0, dtype=np.float32)
    g1, _ = batched_glm_statistics(Z1, th, LOGISTIC, y=y1, dtype=np.float32)
    sens_g, sens_H = certified_newton_sensitivities(R, n, 3)
    move = float(np.linalg.norm(g1[0] - g0[0]))
    assert 2 * R / n * (1 - 1e-5) <= move <= sens_g
    # Hessian at theta = 0: n - 1 rows R e_0, the replaced row R e_0 vs R e_1: (1/4)(e0 e0^T - e1 e1^T) R^2 / n
    Zh0 = np.tile(R * np.array([0.6, 0.8, 0.0]), (n, 1))
    Zh1 = Zh0.copy()
    Zh1[-1] = R * np.array([0.8, -0.6, 0.0])
    _, H0 = batched_glm_statistics(Zh0, np.zeros((3, 3)), LOGISTIC, y=np.zeros(n), dtype=np.float32)
    _, H1 = batched_glm_statistics(Zh1, np.zeros((3, 3)), LOGISTIC, y=np.zeros(n), dtype=np.float32)
    moveH = float(np.linalg.norm(H1[0] - H0[0]))
    assert newton_sensitivities(R, n)[1] * (1 - 1e-5) <= moveH <= sens_H


def test_poisson_gradient_sum_moves_by_at_most_its_certified_sensitivity():
    n, R, B, y_max = 400_000, 0.7, 1e-3, 50.0
    z = R * np.array([0.6, 0.8, 0.0])
    Z0 = np.tile(z, (n, 1))
    Z1 = Z0.copy()
    Z1[-1] = -z
    y = np.full(n, y_max)
    th = np.zeros((3, 3))
    g0, _ = batched_glm_statistics(Z0, th, POISSON, y=y, dtype=np.float32)
    g1, _ = batched_glm_statistics(Z1, th, POISSON, y=y, dtype=np.float32)
    from engine.pmt.poisson import poisson_bounds

    G, H = poisson_bounds(R, B, y_max)
    sens_g, _ = certified_newton_sensitivities(R, n, 3, G=G, H=H, family=POISSON, theta_radius=B)
    move = float(np.linalg.norm(g1[0] - g0[0]))
    assert 2 * (y_max - 1) * R / n * (1 - 1e-6) <= move <= sens_g


def test_rounding_factor_values():
    assert P.sum_rounding_factor(36_000, 10) - 1 == pytest.approx(9.78e-7, rel=1e-2)
    assert P.sum_rounding_factor(2_000_000, 3) - 1 == pytest.approx(4.44e-4, rel=1e-2)
    assert P.sum_rounding_factor(10, 3, exp_range=100.0) > P.sum_rounding_factor(10, 3)
    with pytest.raises(ValueError, match="need 1 <= n"):
        P.sum_rounding_factor(0, 3)


def test_estimators_and_sweeps_use_the_certified_sensitivities_and_one_rounded_sigma():
    from engine.pmt import DPGDRidge, PMTLogistic, PMTRidge
    from engine.pmt._registry import _sigmas
    from engine.pmt.ridge import certified_ssp_sensitivities

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=500)
    Xq = rng.normal(size=(100, 2))
    yq = Xq @ [1.0, -1.0]
    m = DPGDRidge(epsilon=2.0, n_steps=10, random_state=0).fit(X, y, Xq, yq)
    key = "gradient (per step)"
    assert m.report_.sensitivities[key] == dp_gd_sensitivity(m.report_.radius, 500, 3)
    assert m.report_.noise_scales[key] == _sigmas([m.report_.mu], 10, m.report_.sensitivities[key])[0]
    j = PMTRidge(epsilon=2.0, random_state=0).fit(X, y, Xq, yq).report_  # the default, joint form: one release
    assert j.sensitivities["S"] == math.sqrt(2.0) * j.radius**2 * P.sum_rounding_factor(500, 16)
    r = PMTRidge(epsilon=2.0, random_state=0, response="clip").fit(X, y, Xq, yq).report_
    assert (r.sensitivities["A"], r.sensitivities["b"]) == certified_ssp_sensitivities(r.radius, r.B_y, 500, 3)
    assert r.noise_scales["A"] == _sigmas([r.mu], 2, r.sensitivities["A"])[0]
    yl = (X[:, 0] > 0).astype(int)
    lr = PMTLogistic(epsilon=2.0, random_state=0).fit(X, yl, Xq).report_
    sg, sH = certified_newton_sensitivities(lr.radius, 500, 3)
    assert lr.sensitivities["gradient (per step)"] == sg and lr.sensitivities["Hessian (per step)"] == sH
    # the sweep's sigma at 13 epsilons is the estimator's rounded one (not sens / (mu / sqrt(k)) in floats)
    mus = [P.gdp_mu(e, 1e-5) for e in np.linspace(0.3, 8.0, 13)]
    plain = [2 * C / 500 / (mu / math.sqrt(100)) for mu in mus]
    rounded = _sigmas(mus, 100, 2 * C / 500)
    assert all(b >= a for a, b in zip(plain, rounded)) and any(b > a for a, b in zip(plain, rounded))
