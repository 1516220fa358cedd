"""engine.figures.lessons: the toy computations behind the Learn page, checked against independent values."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest
from scipy import integrate, stats

from engine.figures import lessons
from engine.privacy import gdp_delta, gdp_epsilon, gdp_mu


# ------------------------------------------------------------------------- lesson 1
@pytest.mark.parametrize("alpha,mu", [(0.05, 1.0), (0.2, 0.5), (0.01, 3.0)])
def test_gdp_tradeoff_matches_phi_formula(alpha, mu):
    expected = stats.norm.cdf(stats.norm.ppf(1 - alpha) - mu)
    assert float(lessons.gdp_tradeoff(alpha, mu)) == pytest.approx(expected, rel=1e-12)


def test_gdp_tradeoff_golden_and_extremes():
    # Phi(1.644854 - 1) = Phi(0.644854) = 0.740489
    assert float(lessons.gdp_tradeoff(0.05, 1.0)) == pytest.approx(0.740489, abs=1e-6)
    # the best test equals the likelihood-ratio test between N(0,1) and N(mu,1), by simulation
    rng = np.random.default_rng(0)
    mu, alpha = 1.5, 0.1
    thr = stats.norm.ppf(1 - alpha)
    miss = np.mean(rng.normal(mu, 1.0, 200_000) <= thr)
    assert miss == pytest.approx(float(lessons.gdp_tradeoff(alpha, mu)), abs=0.005)
    with pytest.raises(ValueError, match="alpha"):
        lessons.gdp_tradeoff(1.5, 1.0)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_gdp_curve_lies_above_and_touches_its_eps_delta_lines(epsilon):
    """mu-GDP implies (eps, delta(eps; mu))-DP for every eps: the curve is above each line and touches it."""
    mu = 1.0
    alpha = np.linspace(0, 1, 20001)
    g = lessons.gdp_tradeoff(alpha, mu)
    f = lessons.dp_tradeoff(alpha, epsilon, gdp_delta(epsilon, mu))
    gap = g - f
    assert gap.min() >= -1e-9
    assert gap.min() < 1e-4  # tangent somewhere


def test_dp_tradeoff_values():
    eps, d = 1.0, 0.01
    a = np.array([0.0, 0.1, 0.5])
    exp = np.maximum.reduce([np.zeros(3), 1 - d - math.e * a, (1 - d - a) / math.e])
    np.testing.assert_allclose(lessons.dp_tradeoff(a, eps, d), exp)


def test_privacy_profile_golden():
    assert lessons.privacy_profile(1.0, [4.3772])[0] == pytest.approx(1e-5, rel=1e-3)
    prof = lessons.privacy_profile(0.5, np.linspace(0, 5, 30))
    assert np.all(np.diff(prof) < 0)


# ------------------------------------------------------------------------- lesson 2
def test_composition_total_is_sqrt_k_mu_and_epsilon_matches():
    t = lessons.composition_table(0.3, [1, 4, 9, 10], delta=1e-5)
    np.testing.assert_allclose(t.mu_total, [0.3, 0.6, 0.9, 0.3 * math.sqrt(10)], rtol=1e-12)
    assert t.epsilon_gdp.iloc[3] == pytest.approx(gdp_epsilon(0.3 * math.sqrt(10), 1e-5), rel=1e-9)
    # 4 releases of mu = 0.5 are exactly one release of mu = 1: eps = 4.3772 at delta = 1e-5
    assert lessons.composition_table(0.5, [4], delta=1e-5).epsilon_gdp.iloc[0] == pytest.approx(4.3772, abs=1e-4)
    # basic composition (sum of epsilons at delta/k) is never better, and strictly worse for k > 1
    assert t.epsilon_basic.iloc[0] == pytest.approx(t.epsilon_gdp.iloc[0])
    assert np.all(t.epsilon_basic.iloc[1:] > t.epsilon_gdp.iloc[1:])
    with pytest.raises(ValueError, match="k"):
        lessons.composition_table(0.3, [0])


def test_noise_for_total_composes_back():
    t = lessons.noise_for_total(1.0, 1e-5, [1, 2, 10])
    mu = gdp_mu(1.0, 1e-5)
    np.testing.assert_allclose(t.sigma_per_release, np.sqrt([1, 2, 10]) / mu, rtol=1e-12)
    # k releases at the per-release mu compose back to the total
    assert math.sqrt(10 * t.mu_per_release.iloc[2] ** 2) == pytest.approx(mu, rel=1e-12)
    # eps = 1, delta = 1e-5 with one release: the analytic Gaussian sigma 3.7306 (PMT.md golden value)
    assert t.sigma_per_release.iloc[0] == pytest.approx(3.7306, abs=1e-4)


# ------------------------------------------------------------------------- lesson 3
@pytest.mark.parametrize("C,mean,df", [(0.3, 0.5, 3.0), (1.0, 0.2, 2.5), (4.0, 0.9, 10.0)])
def test_clipped_moments_match_numerical_integration(C, mean, df):
    s = math.sqrt((1 - mean**2) * (df - 2) / df)
    dist = stats.t(df, loc=mean, scale=s)
    q1 = dist.expect(lambda x: np.clip(x, -C, C))
    q2 = dist.expect(lambda x: np.clip(x, -C, C) ** 2)
    m1, m2 = lessons.clipped_mean_moments(C, mean=mean, df=df)
    assert m1 == pytest.approx(q1, abs=1e-7)
    assert m2 == pytest.approx(q2, abs=1e-7)


def test_toy_data_is_whitened():
    # no clipping: E X = mean, E X^2 = 1
    m1, m2 = lessons.clipped_mean_moments(1e7, mean=0.5, df=3.0)
    assert m1 == pytest.approx(0.5, abs=1e-5)
    assert m2 == pytest.approx(1.0, abs=1e-3)


def test_truncation_tradeoff_monotone_and_interior_minimum():
    radii = np.geomspace(0.05, 50, 60)
    t = lessons.truncation_tradeoff(radii, n=1000, epsilon=1.0, delta=1e-5)
    assert t.bias2.is_monotonic_decreasing
    assert t.noise_var.is_monotonic_increasing
    assert np.all(t.bias <= 0)  # clipping pulls a positive mean towards 0
    i = int(t.mse.idxmin())
    assert 0 < i < len(t) - 1  # the dilemma: neither extreme is best
    # the noise part is the Gaussian mechanism for sensitivity 2C/n at mu(1, 1e-5)
    mu = gdp_mu(1.0, 1e-5)
    np.testing.assert_allclose(t.noise_var, (2 * radii / 1000 / mu) ** 2, rtol=1e-12)
    assert t.pmt_radius.iloc[0] == pytest.approx(math.sqrt(1 + math.log(2 * 1000 / 0.05)))
    np.testing.assert_allclose(t.mse, t.bias2 + t.sampling_var + t.noise_var)


def test_truncation_tradeoff_matches_simulation():
    n, C = 500, 0.8
    row = lessons.truncation_tradeoff([C], n=n, epsilon=1.0, delta=1e-5).iloc[0]
    est = lessons.simulate_clipped_mean(C, n=n, epsilon=1.0, delta=1e-5, reps=4000, random_state=3)
    assert est.mean() - 0.5 == pytest.approx(row.bias, abs=4 * math.sqrt(row.variance / 4000))
    assert est.var() == pytest.approx(row.variance, rel=0.08)


def test_truncation_rejects_bad_input():
    with pytest.raises(ValueError, match="df"):
        lessons.truncation_tradeoff([1.0], n=100, epsilon=1.0, delta=1e-5, df=2.0)
    with pytest.raises(ValueError, match="radius"):
        lessons.clipped_mean_moments(0.0)
    with pytest.raises(ValueError, match="epsilon"):
        lessons.truncation_tradeoff([1.0], n=100, epsilon=0.0, delta=1e-5)


# ------------------------------------------------------------------------- lesson 4
def test_whitened_cloud_second_moment_is_identity():
    w = lessons.whitening_demo(n=5000, n_pub=2000, kappa=1000.0, random_state=1)
    M_pub = w.X_pub @ np.linalg.inv(np.linalg.cholesky(w.Sigma_pub)).T  # any whitening of the public rows
    np.testing.assert_allclose(M_pub.T @ M_pub / len(M_pub), np.eye(2), atol=1e-10)
    # private rows whitened with the public moment: second moment ~ I (sampling error of n_pub)
    S = w.X_white.T @ w.X_white / len(w.X_white)
    np.testing.assert_allclose(S, np.eye(2), atol=0.1)
    assert w.kappa_raw > 500 and w.kappa_white < 1.3
    assert w.radius == pytest.approx(math.sqrt(2 * (1 + math.log(2 * 5000 / 0.05))))
    assert np.all(np.linalg.norm(w.X_tilde, axis=1) <= w.radius * (1 + 1e-12))


def test_heavy_tails_get_truncated():
    light = lessons.whitening_demo(df=None, random_state=0)
    heavy = lessons.whitening_demo(df=3.0, random_state=0)
    assert light.truncated.mean() <= 0.05  # eta = 0.05 bounds the chance of any truncation for Gaussian rows
    assert heavy.truncated.sum() > light.truncated.sum()


def test_noisy_inverse_whitening_beats_raw_when_ill_conditioned():
    r = lessons.noisy_inverse_demo(kappa=100.0, n=10_000, epsilon=1.0, draws=400, random_state=0)
    assert np.linalg.norm(r.theta_star) == pytest.approx(1.0)
    assert r.kappa_raw == pytest.approx(100.0, rel=1e-9)
    assert r.kappa_pmt < 1.5
    assert r.median_error("pmt") < 0.5 * r.median_error("raw")
    assert r.not_pd_pmt <= r.not_pd_raw
    # noise stds are sqrt(2) r^2 / (mu / sqrt 2) with r^2 = d (1 + ln(2n/eta)) for whitened rows
    mu_A = gdp_mu(1.0, 1e-5) / math.sqrt(2)
    assert r.sigma_pmt == pytest.approx(math.sqrt(2) * 2 * (1 + math.log(2e4 / 0.05)) / mu_A)
    # with no noise budget pressure (huge epsilon) both land on the truth
    easy = lessons.noisy_inverse_demo(kappa=100.0, n=10**9, epsilon=50.0, draws=50, random_state=0)
    assert easy.median_error("raw") < 1e-3 and easy.median_error("pmt") < 1e-3


def test_noisy_inverse_round_cloud_is_a_tie():
    r = lessons.noisy_inverse_demo(kappa=1.0, draws=400, random_state=0)
    assert r.median_error("pmt") == pytest.approx(r.median_error("raw"), rel=1.2)


# ------------------------------------------------------------------------- lesson 5
def _rd_numerical(ma, sa, mb, sb, lam):
    lp, lq = stats.norm(ma, sa).logpdf, stats.norm(mb, sb).logpdf
    lo, hi = min(ma, mb) - 30 * max(sa, sb), max(ma, mb) + 30 * max(sa, sb)
    val = integrate.quad(lambda x: math.exp(lam * lp(x) + (1 - lam) * lq(x)), lo, hi, points=[ma, mb], limit=400)[0]
    return math.log(val) / (lam - 1)


def test_renyi_curve_uses_closed_form_matching_integration():
    t = lessons.renyi_clipping_curve([0.3], std_a=0.8, mean_b=-0.5, std_b=1.2, C_mu=10.0, renyi_order=1.1)
    assert t.before.iloc[0] == pytest.approx(0.366708, abs=1e-6)  # NVDP.md section 4 check value
    assert t.before.iloc[0] == pytest.approx(_rd_numerical(0.3, 0.8, -0.5, 1.2, 1.1), rel=1e-6)
    # clipping: C_mu = 10 does not touch the means, the floor 0.3015 does not touch the stds
    assert t.after.iloc[0] == pytest.approx(t.before.iloc[0])


def test_clipping_caps_the_divergence_and_makes_it_finite():
    means = np.linspace(-6, 6, 49)
    t = lessons.renyi_clipping_curve(means, std_a=0.5, mean_b=-0.5, std_b=0.2, C_mu=1.0, renyi_order=1.1)
    assert np.all(np.isfinite(t.after))
    out = np.abs(means) > 1.0
    assert np.all(t.after[out] <= t.before[out])
    # beyond C_mu the clipped divergence no longer depends on A's mean
    assert t.after[means >= 1.0].nunique() == 1
    # after clipping: the exact closed form at the clipped parameters, checked by integration
    row = t[means == 6.0].iloc[0]
    assert row.after == pytest.approx(_rd_numerical(1.0, 0.5, -0.5, 0.30151134457776363, 1.1), rel=1e-6)


def test_sigma_floor_turns_infinite_into_finite():
    # lambda s_b^2 - (lambda-1) s_a^2 = 1.1 * 0.04 - 0.1 * 0.64 < 0: infinite before clipping
    t = lessons.renyi_clipping_curve([0.0, 3.0], std_a=0.8, mean_b=-0.5, std_b=0.2, C_mu=1.0, renyi_order=1.1)
    assert np.all(np.isinf(t.before))
    assert np.all(np.isfinite(t.after)) and np.all(t.after >= 0)


def test_clip_gaussian_rules():
    m, s = lessons.clip_gaussian([-3.0, 0.5, 2.0], [0.1, 0.5, 2.0], C_mu=1.0, renyi_order=2.0)
    np.testing.assert_allclose(m, [-1.0, 0.5, 1.0])
    np.testing.assert_allclose(s, [math.sqrt(0.5), math.sqrt(0.5), 2.0])
    with pytest.raises(ValueError, match="renyi_order"):
        lessons.clip_gaussian(0.0, 1.0, C_mu=1.0, renyi_order=1.0)
    with pytest.raises(ValueError, match="C_mu"):
        lessons.clip_gaussian(0.0, 1.0, C_mu=0.0, renyi_order=1.1)


# ------------------------------------------------------------------------- figures
def test_figure_builders_return_labelled_figures():
    figs = [
        lessons.figure_epsilon_delta(1.0, 1e-5),
        lessons.figure_composition(0.3, 10, epsilon_total=1.0, delta=1e-5),
        lessons.figure_truncation(lessons.truncation_tradeoff(np.geomspace(0.1, 10, 15), n=1000, epsilon=1.0,
                                                              delta=1e-5), radius=1.0),
        lessons.figure_whitening(lessons.whitening_demo(n=300)),
        lessons.figure_noisy_inverse(lessons.noisy_inverse_demo(draws=50)),
        lessons.figure_renyi(mean_a=3.0, std_a=0.5, mean_b=-0.5, std_b=0.2, C_mu=1.0, renyi_order=1.1),
        lessons.figure_renyi(mean_a=3.0, std_a=0.8, mean_b=-0.5, std_b=0.2, C_mu=1.0, renyi_order=1.1),
    ]
    for fig in figs:
        assert isinstance(fig, go.Figure)
        assert fig.layout.title.text
        assert len(fig.data) >= 2
        for tr in fig.data:
            assert tr.name or tr.showlegend is False
    # lesson 1: the plotted GDP curve is the formula at mu(1, 1e-5)
    curve = [tr for tr in figs[0].data if tr.name and tr.name.startswith("Gaussian mechanism")][0]
    mu = gdp_mu(1.0, 1e-5)
    np.testing.assert_allclose(curve.y, stats.norm.cdf(stats.norm.ppf(1 - np.asarray(curve.x)) - mu), atol=1e-12)
    # lesson 5 with an infinite unclipped divergence says so instead of drawing it
    assert any("infinite" in (a.text or "") for a in figs[6].layout.annotations)


def test_lesson_one_imports_neither_pandas_nor_the_pmt_engine():
    """The Learn page opens on lesson 1: its figure needs no pandas and no engine.pmt (imported on first use)."""
    import subprocess
    import sys

    code = ("import sys, engine.figures.lessons as L; L.figure_epsilon_delta(1.0, 1e-5); "
            "print(sorted(m for m in ('pandas', 'engine.pmt', 'engine.figures.pmt', 'torch') if m in sys.modules)); "
            "L.whitening_demo; L.figure_renyi; print('engine.pmt' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"
