"""Learn-page lessons 3 and 4: the truncation dilemma and why conditioning matters (PMT).

3. **The truncation dilemma** -- :func:`clipped_mean_moments`, :func:`truncation_tradeoff`,
   :func:`simulate_clipped_mean`, :func:`figure_truncation`: a clipped, noised mean of heavy-tailed
   whitened data; bias falls and noise rises as the clipping radius C grows; the PMT radius
   R = sqrt(d (1 + ln(2n/eta))) (docs/specs/PMT.md section 2) is marked.
4. **Why conditioning matters** -- :func:`elongated_cloud`, :func:`whitening_demo`,
   :func:`noisy_inverse_demo`, :func:`figure_whitening`, :func:`figure_noisy_inverse`
   (engine.pmt's transform; docs/specs/PMT.md sections 2-3).

Computed with the engine's real code (:mod:`engine.pmt`, :mod:`engine.privacy`); pure, seeded and
fast. The page imports these through :mod:`engine.figures.lessons`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy.special import gammaln

from engine.figures._lesson_style import COLORS, _int_at_least, _layout, _positive, _two_line_panels
from engine.pmt import pmt_radius, pmt_transform, public_moment
from engine.privacy import (
    check_random_state,
    gaussian_sigma,
    gdp_mu,
    split_mu,
    symmetric_gaussian_noise,
    validate_delta,
    validate_epsilon,
)

__all__ = [
    "clipped_mean_moments",
    "truncation_tradeoff",
    "simulate_clipped_mean",
    "figure_truncation",
    "elongated_cloud",
    "WhiteningDemo",
    "whitening_demo",
    "NoisyInverseDemo",
    "noisy_inverse_demo",
    "figure_whitening",
    "figure_noisy_inverse",
]


# ============================================================================================
# Lesson 3: the truncation dilemma
# ============================================================================================
def _toy_scale(mean: float, df: float) -> float:
    """Scale s of X = mean + s T (T ~ Student t, df) that makes E[X^2] = 1 (whitened data)."""
    if not (0 <= mean < 1):
        raise ValueError(f"mean must satisfy 0 <= mean < 1 so that E[X^2] = 1 is possible, got {mean!r}")
    if not df > 2:
        raise ValueError(f"df (tail heaviness) must be > 2 so the variance is finite, got {df!r}")
    return math.sqrt((1.0 - mean**2) * (df - 2.0) / df)


def clipped_mean_moments(radius: float, *, mean: float = 0.5, df: float = 3.0) -> tuple[float, float]:
    """First two moments of ``clip(X, -radius, radius)`` for the lesson's toy data.

    The toy data are ``X = mean + s T`` with ``T`` Student-t with ``df`` degrees of freedom and
    ``s`` chosen so that ``E[X^2] = 1``: one whitened feature (PMT divides by the public second
    moment), heavy-tailed and off-centre so that clipping is biased.

    Parameters
    ----------
    radius : float
        Clipping radius C > 0.
    mean : float, default 0.5
        ``0 <= mean < 1``.
    df : float, default 3.0
        Degrees of freedom, ``> 2`` (smaller = heavier tails).

    Returns
    -------
    (m1, m2) : tuple of float
        ``E[clip(X)]`` and ``E[clip(X)^2]``.

    Notes
    -----
    Closed forms (T standard Student t, density f, nu = df): over the window [a, b],
    ``int t f = [(nu + a^2) f(a) - (nu + b^2) f(b)] / (nu - 1)`` and, with ``k = sqrt((nu-2)/nu)``,
    ``int t^2 f = nu (c_nu / c_{nu-2}) [F_{nu-2}(k b) - F_{nu-2}(k a)] / k - nu [F_nu(b) - F_nu(a)]``,
    ``c_nu`` the normalising constant of f (from ``t^2 = nu (1 + t^2/nu) - nu``). The tests check
    them against numerical integration and simulation.

    Examples
    --------
    >>> m1, m2 = clipped_mean_moments(1e6, mean=0.5, df=5.0)
    >>> round(m1, 4), round(m2, 3)
    (0.5, 1.0)
    """
    from scipy import stats  # imported here: scipy.stats costs ~0.5 s of the Learn page's first load

    C = _positive(radius, "radius")
    s = _toy_scale(mean, df)
    nu = float(df)
    a, b = (-C - mean) / s, (C - mean) / s  # the clip window in standard t units
    t = stats.t(nu)
    p_lo, p_hi = float(t.cdf(a)), float(t.sf(b))
    p_in = 1.0 - p_lo - p_hi
    # partial moments of T over [a, b] (closed forms, see Notes)
    e1 = ((nu + a * a) * t.pdf(a) - (nu + b * b) * t.pdf(b)) / (nu - 1.0)
    k = math.sqrt((nu - 2.0) / nu)
    log_ratio = (gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * math.log(nu)) - (
        gammaln((nu - 1) / 2) - gammaln((nu - 2) / 2) - 0.5 * math.log(nu - 2))
    t2 = stats.t(nu - 2.0)
    e2 = nu * math.exp(log_ratio) * float(t2.cdf(b * k) - t2.cdf(a * k)) / k - nu * p_in
    in1 = mean * p_in + s * e1
    in2 = mean * mean * p_in + 2.0 * mean * s * e1 + s * s * e2
    return float(in1 + C * (p_hi - p_lo)), float(in2 + C * C * (p_hi + p_lo))


def truncation_tradeoff(radii, *, n: int, epsilon: float, delta: float, mean: float = 0.5, df: float = 3.0,
                        eta: float = 0.05) -> pd.DataFrame:
    """Bias, variance and mean squared error of the private clipped mean, as the radius C moves.

    The estimator: ``mean(clip(x_i, -C, C)) + N(0, sigma^2)`` with ``sigma = (2C/n) / mu``, the
    Gaussian mechanism for the replace-one sensitivity ``2C/n`` (:func:`engine.privacy.gaussian_sigma`)
    at ``mu = gdp_mu(epsilon, delta)``.

    Parameters
    ----------
    radii : array_like of float
        Clipping radii C > 0.
    n : int
        Private sample size, ``>= 2``.
    epsilon, delta : float
        Privacy target.
    mean, df : float
        Toy data (see :func:`clipped_mean_moments`).
    eta : float, default 0.05
        Only for the ``pmt_radius`` column: ``R = sqrt(1 + ln(2n/eta))`` (d = 1,
        :func:`engine.pmt.pmt_radius`).

    Returns
    -------
    pandas.DataFrame
        Columns ``radius``, ``bias`` (E[estimate] - true mean), ``bias2``, ``sampling_var``
        (Var(clip(X))/n), ``noise_var`` (sigma^2), ``variance`` (their sum), ``mse``
        (bias2 + variance), and the constant ``pmt_radius``.

    Notes
    -----
    As documented and tested: ``bias2`` is non-increasing in C (for mean >= 0 and symmetric T,
    ``dE[clip X]/dC = P(X > C) - P(X < -C) >= 0`` and ``E[clip X] <= mean``), ``noise_var`` grows as
    C^2, so the MSE has an interior minimum.

    Examples
    --------
    >>> t = truncation_tradeoff([0.5, 2.0, 8.0], n=1000, epsilon=1.0, delta=1e-5)
    >>> bool(t.bias2.is_monotonic_decreasing and t.noise_var.is_monotonic_increasing)
    True
    """
    n = _int_at_least(n, "n", 2)
    mu = gdp_mu(validate_epsilon(epsilon), validate_delta(delta))
    R = pmt_radius(1, n, eta)
    rows = []
    for C in np.asarray(radii, dtype=float).ravel():
        m1, m2 = clipped_mean_moments(C, mean=mean, df=df)
        bias = m1 - mean
        samp = max(m2 - m1 * m1, 0.0) / n
        noise = gaussian_sigma(2.0 * C / n, mu) ** 2
        rows.append({"radius": float(C), "bias": bias, "bias2": bias * bias, "sampling_var": samp,
                     "noise_var": noise, "variance": samp + noise, "mse": bias * bias + samp + noise,
                     "pmt_radius": R})
    return pd.DataFrame(rows)


def simulate_clipped_mean(radius: float, *, n: int, epsilon: float, delta: float, reps: int = 200,
                          mean: float = 0.5, df: float = 3.0, random_state=0) -> np.ndarray:
    """Run the private clipped mean of :func:`truncation_tradeoff` ``reps`` times on fresh toy data.

    Used to check the exact curves by simulation (and for anyone who wants to see real runs).

    Returns
    -------
    ndarray of shape (reps,)
        The private estimates.
    """
    C = _positive(radius, "radius")
    n = _int_at_least(n, "n", 2)
    reps = _int_at_least(reps, "reps", 1)
    mu = gdp_mu(validate_epsilon(epsilon), validate_delta(delta))
    rng = check_random_state(random_state)
    s = _toy_scale(mean, df)
    X = mean + s * rng.standard_t(df, size=(reps, n))
    est = np.clip(X, -C, C).mean(axis=1)
    return est + rng.normal(0.0, gaussian_sigma(2.0 * C / n, mu), size=reps)


def figure_truncation(frame: pd.DataFrame, *, radius: float | None = None) -> go.Figure:
    """Lesson 3 figure: bias^2, variance (sampling + privacy noise) and MSE vs the clipping radius C.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`truncation_tradeoff`.
    radius : float, optional
        A radius to mark (the user's choice).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    f = frame.sort_values("radius")
    fig = go.Figure()
    hov = "C = %{x:.2f}<br>%{y:.2e}<extra>%{fullData.name}</extra>"
    fig.add_trace(go.Scatter(x=f.radius, y=f.bias2, name="bias² (clipping pulls the mean in)",
                             line=dict(color=COLORS["second"], width=2), hovertemplate=hov))
    fig.add_trace(go.Scatter(x=f.radius, y=f.noise_var, name="privacy-noise variance (grows like C²)",
                             line=dict(color=COLORS["third"], width=2), hovertemplate=hov))
    fig.add_trace(go.Scatter(x=f.radius, y=f.sampling_var, name="sampling variance",
                             line=dict(color=COLORS["muted"], width=1.5, dash="dot"), hovertemplate=hov))
    fig.add_trace(go.Scatter(x=f.radius, y=f.mse, name="mean squared error = bias² + variances",
                             line=dict(color=COLORS["reference"], width=3), hovertemplate=hov))
    best = f.loc[f.mse.idxmin()]
    ymin = float(np.nanmin(f[["bias2", "noise_var", "sampling_var", "mse"]].to_numpy()[f[["bias2", "noise_var", "sampling_var", "mse"]].to_numpy() > 0]))
    ymax = float(f.mse.max())
    R = float(f.pmt_radius.iloc[0])
    fig.add_vline(x=R, line=dict(color=COLORS["main"], width=2, dash="dash"))
    fig.add_annotation(x=math.log10(R), y=1.0, yref="paper", text=f"PMT radius R = {R:.2f}", showarrow=False,
                       xanchor="left", yanchor="bottom", font=dict(color=COLORS["main"]), xshift=4)
    fig.add_trace(go.Scatter(x=[best.radius], y=[best.mse], mode="markers", name=f"best C = {best.radius:.2f} (needs the answer: not private)",
                             marker=dict(color=COLORS["reference"], size=10, symbol="star"), hovertemplate=hov))
    if radius is not None:
        fig.add_vline(x=float(radius), line=dict(color=COLORS["raw"], width=2))
        fig.add_annotation(x=math.log10(float(radius)), y=0.0, yref="paper", text=f"your C = {float(radius):.2f}",
                           showarrow=False, xanchor="left", yanchor="bottom", font=dict(color=COLORS["raw"]), xshift=4)
    fig.update_xaxes(title_text="clipping radius C (in units of the whitened feature; log scale)", type="log",
                     tickvals=[0.03, 0.1, 0.3, 1, 3, 10, 30, 100], ticktext=["0.03", "0.1", "0.3", "1", "3", "10", "30", "100"])
    fig.update_yaxes(title_text="squared error (log scale)", type="log", dtick=1, exponentformat="power",
                     range=[math.log10(max(ymin, ymax * 1e-8)) - 0.2, math.log10(ymax) + 0.3])
    return _layout(fig, title="Clip too hard: biased. Clip too loosely: noisy.", height=440)


# ============================================================================================
# Lesson 4: why conditioning matters
# ============================================================================================
def _rotation(angle_deg: float) -> np.ndarray:
    t = math.radians(float(angle_deg))
    return np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])


def elongated_cloud(n: int, *, kappa: float, angle_deg: float = 30.0, df: float | None = None,
                    random_state=0) -> np.ndarray:
    """2-D points with second moment ``Sigma = Q diag(1, 1/kappa) Q^T`` (Q a rotation).

    Gaussian ``N(0, Sigma)`` by default; with ``df`` the coordinates along the axes are Student t
    with ``df`` degrees of freedom scaled to unit variance (heavy tails, same second moment).

    Parameters
    ----------
    n : int
        Number of points, ``>= 1``.
    kappa : float
        Condition number of Sigma, ``>= 1``.
    angle_deg : float, default 30
        Direction of the long axis, degrees.
    df : float, optional
        Degrees of freedom (> 2) for heavy-tailed points; None = Gaussian.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of shape (n, 2)

    Examples
    --------
    >>> X = elongated_cloud(20000, kappa=100.0, angle_deg=0.0, random_state=1)
    >>> M = X.T @ X / len(X)
    >>> bool(abs(M[0, 0] - 1) < 0.05 and abs(M[1, 1] - 0.01) < 0.001 and abs(M[0, 1]) < 0.01)
    True
    """
    n = _int_at_least(n, "n", 1)
    if not (float(kappa) >= 1 and math.isfinite(float(kappa))):
        raise ValueError(f"kappa must be a finite number >= 1, got {kappa!r}")
    rng = check_random_state(random_state)
    Q = _rotation(angle_deg)
    if df is None:
        Z = rng.standard_normal((n, 2))
    else:
        if not float(df) > 2:
            raise ValueError(f"df must be > 2 (finite variance) or None, got {df!r}")
        Z = rng.standard_t(float(df), size=(n, 2)) * math.sqrt((float(df) - 2.0) / float(df))
    return Z * np.array([1.0, 1.0 / math.sqrt(float(kappa))]) @ Q.T


@dataclass(frozen=True)
class WhiteningDemo:
    """Result of :func:`whitening_demo`.

    Attributes
    ----------
    X : ndarray of shape (n, 2)
        Raw private points.
    X_pub : ndarray of shape (n_pub, 2)
        Public points.
    X_white : ndarray of shape (n, 2)
        ``Sigma_pub^{-1/2} x_i`` before truncation.
    X_tilde : ndarray of shape (n, 2)
        After truncation at ``radius``.
    radius : float
        PMT radius R = sqrt(2 (1 + ln(2n/eta))).
    truncated : ndarray of bool, shape (n,)
    Sigma_pub : ndarray of shape (2, 2)
    kappa_raw, kappa_white : float
        Condition numbers of ``X^T X / n`` and ``X_white^T X_white / n``.
    """

    X: np.ndarray
    X_pub: np.ndarray
    X_white: np.ndarray
    X_tilde: np.ndarray
    radius: float
    truncated: np.ndarray
    Sigma_pub: np.ndarray
    kappa_raw: float
    kappa_white: float


def whitening_demo(*, n: int = 2000, n_pub: int = 200, kappa: float = 100.0, angle_deg: float = 30.0,
                   df: float | None = None, eta: float = 0.05, random_state=0) -> WhiteningDemo:
    """Whiten an elongated 2-D cloud with a public sample's second moment (engine.pmt's transform).

    Public and private points come from the same :func:`elongated_cloud` (``df`` for heavy
    tails); the transform is
    :func:`engine.pmt.pmt_transform` with ``fit_intercept=False`` (d = 2).

    Examples
    --------
    >>> w = whitening_demo(n=500, n_pub=100, kappa=50.0)
    >>> w.kappa_raw > 20, w.kappa_white < 2, round(w.radius, 3)
    (True, True, 4.67)
    """
    n_pub = _int_at_least(n_pub, "n_pub", 2)
    rng = check_random_state(random_state)
    X_pub = elongated_cloud(n_pub, kappa=kappa, angle_deg=angle_deg, df=df, random_state=rng)
    X = elongated_cloud(n, kappa=kappa, angle_deg=angle_deg, df=df, random_state=rng)
    t = pmt_transform(X, X_pub, eta=eta, fit_intercept=False)
    white = X @ t.Sigma_pub_inv_sqrt
    ev_white = np.linalg.eigvalsh(white.T @ white / white.shape[0])
    return WhiteningDemo(X, X_pub, white, t.X_tilde, float(t.radius), t.truncated, t.Sigma_pub,
                         float(t.kappa_raw), float(ev_white[-1] / ev_white[0]))


@dataclass(frozen=True)
class NoisyInverseDemo:
    """Result of :func:`noisy_inverse_demo` (solutions of noisy linear systems, many draws).

    Attributes
    ----------
    theta_star : ndarray of shape (2,)
        The true coefficients.
    theta_raw : ndarray of shape (draws, 2)
        ``(A + W) theta = b`` solved in raw coordinates, W noise for the raw radius.
    theta_pmt : ndarray of shape (draws, 2)
        Solved in whitened coordinates and mapped back with ``Sigma_pub^{-1/2}``.
    radius_raw, radius : float
        Row-norm bounds behind the noise: ``sqrt(trace(Sigma_pub) (1 + ln(2n/eta)))`` for raw rows,
        ``R = sqrt(d (1 + ln(2n/eta)))`` for whitened rows.
    sigma_raw, sigma_pmt : float
        Noise std of each free entry of W.
    kappa_raw, kappa_pmt : float
        Condition numbers of the two noise-free matrices.
    not_pd_raw, not_pd_pmt : float
        Fraction of draws whose noisy matrix is not positive definite.
    """

    theta_star: np.ndarray
    theta_raw: np.ndarray
    theta_pmt: np.ndarray
    radius_raw: float
    radius: float
    sigma_raw: float
    sigma_pmt: float
    kappa_raw: float
    kappa_pmt: float
    not_pd_raw: float
    not_pd_pmt: float

    def median_error(self, which: str) -> float:
        """Median ``||theta - theta_star||_2`` over draws for ``which`` in {"raw", "pmt"}."""
        th = {"raw": self.theta_raw, "pmt": self.theta_pmt}[which]
        return float(np.median(np.linalg.norm(th - self.theta_star, axis=1)))


def noisy_inverse_demo(*, n: int = 10_000, n_pub: int = 200, kappa: float = 100.0, epsilon: float = 1.0,
                       delta: float = 1e-5, draws: int = 400, angle_deg: float = 30.0, eta: float = 0.05,
                       random_state=0) -> NoisyInverseDemo:
    """Solve ``(A + W) theta = b`` for many noise draws W, raw vs whitened (docs/specs/PMT.md section 3, steps 2-4).

    Toy set-up (our choice, to isolate the effect of conditioning): the population matrix
    ``A = n Sigma`` and ``b = A theta*`` of the :func:`elongated_cloud` distribution
    (``||theta*|| = 1``, along the diagonal between the two axes); only A is noised. W is symmetric
    Gaussian (:func:`engine.privacy.symmetric_gaussian_noise`) with std ``sqrt(2) r^2 / mu_A``, the
    replace-one sensitivity of ``X^T X`` for rows of norm <= r, at ``mu_A = mu / sqrt(2)`` (the
    half of the budget PMT gives to A).

    - raw: ``r = sqrt(trace(Sigma_pub) (1 + ln(2n/eta)))``, the PMT radius rule applied to raw rows
      (so it covers the long axis); solve ``(n Sigma + W) theta = b``.
    - whitened (PMT): ``r = R = sqrt(2 (1 + ln(2n/eta)))``; solve
      ``(n S Sigma S + W) theta~ = S b`` with ``S = Sigma_pub^{-1/2}``, then ``theta = S theta~``.

    Returns
    -------
    NoisyInverseDemo

    Examples
    --------
    >>> r = noisy_inverse_demo(kappa=100.0, draws=200)
    >>> r.median_error("pmt") < r.median_error("raw")
    True
    """
    n = _int_at_least(n, "n", 2)
    draws = _int_at_least(draws, "draws", 1)
    mu = gdp_mu(validate_epsilon(epsilon), validate_delta(delta))
    mu_A = split_mu(mu, 2)
    rng = check_random_state(random_state)
    Q = _rotation(angle_deg)
    Sigma = Q @ np.diag([1.0, 1.0 / float(kappa)]) @ Q.T
    theta_star = Q @ np.array([1.0, 1.0]) / math.sqrt(2.0)
    pm = public_moment(elongated_cloud(n_pub, kappa=kappa, angle_deg=angle_deg, random_state=rng), fit_intercept=False)
    S = pm.Sigma_pub_inv_sqrt
    log_term = 1.0 + math.log(2.0 * n / eta)
    r_raw = math.sqrt(float(np.trace(pm.Sigma_pub)) * log_term)
    R = pmt_radius(2, n, eta)
    A_raw = n * Sigma
    b_raw = A_raw @ theta_star
    A_pmt = S.T @ A_raw @ S  # S = W, the whitening (x~ = W^T x)
    b_pmt = S.T @ b_raw
    s_raw = gaussian_sigma(math.sqrt(2.0) * r_raw**2, mu_A)
    s_pmt = gaussian_sigma(math.sqrt(2.0) * R**2, mu_A)
    M_raw = A_raw + symmetric_gaussian_noise(2, s_raw, rng, size=draws)
    M_pmt = A_pmt + symmetric_gaussian_noise(2, s_pmt, rng, size=draws)
    th_raw = np.linalg.solve(M_raw, np.broadcast_to(b_raw, (draws, 2))[..., None])[..., 0]
    th_pmt = np.linalg.solve(M_pmt, np.broadcast_to(b_pmt, (draws, 2))[..., None])[..., 0] @ S.T
    not_pd = lambda M: float(np.mean(np.linalg.eigvalsh(M)[:, 0] <= 0))  # noqa: E731
    ev_raw, ev_pmt = np.linalg.eigvalsh(A_raw), np.linalg.eigvalsh(A_pmt)
    return NoisyInverseDemo(theta_star, th_raw, th_pmt, r_raw, R, s_raw, s_pmt, float(ev_raw[-1] / ev_raw[0]),
                            float(ev_pmt[-1] / ev_pmt[0]), not_pd(M_raw), not_pd(M_pmt))


def _circle(radius: float, k: int = 181):
    t = np.linspace(0, 2 * math.pi, k)
    return radius * np.cos(t), radius * np.sin(t)


def figure_whitening(demo: WhiteningDemo, *, max_points: int = 1500) -> go.Figure:
    """Lesson 4 figure (a): the raw cloud and its whitened version with the truncation circle.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    k = min(max_points, demo.X.shape[0])
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=(f"Raw private rows<br>(condition<br>number {demo.kappa_raw:.0f})",  # short lines: a phone's half width
                                        f"Whitened with<br>the public moment<br>({demo.kappa_white:.2f})"))
    fig.add_trace(go.Scatter(x=demo.X[:k, 0], y=demo.X[:k, 1], mode="markers", name="private rows",
                             marker=dict(color=COLORS["raw"], size=4, opacity=0.5), hoverinfo="skip"), 1, 1)
    fig.add_trace(go.Scatter(x=demo.X_pub[:, 0], y=demo.X_pub[:, 1], mode="markers", name="public rows",
                             marker=dict(color=COLORS["reference"], size=4, symbol="x", opacity=0.6),
                             hoverinfo="skip"), 1, 1)
    keep = ~demo.truncated[:k]
    fig.add_trace(go.Scatter(x=demo.X_white[:k][keep, 0], y=demo.X_white[:k][keep, 1], mode="markers",
                             name="whitened rows", marker=dict(color=COLORS["whitened"], size=4, opacity=0.5),
                             hoverinfo="skip"), 1, 2)
    cut = demo.truncated[:k]
    if cut.any():
        # each cut row: a faint segment from where it was to where truncation put it (on the circle)
        seg_x, seg_y = [], []
        for (x0, y0), (x1, y1) in zip(demo.X_white[:k][cut], demo.X_tilde[:k][cut]):
            seg_x += [x0, x1, None]
            seg_y += [y0, y1, None]
        fig.add_trace(go.Scatter(x=seg_x, y=seg_y, mode="lines", showlegend=False, hoverinfo="skip",
                                 line=dict(color=COLORS["second"], width=1)), 1, 2)
        fig.add_trace(go.Scatter(x=demo.X_white[:k][cut, 0], y=demo.X_white[:k][cut, 1], mode="markers",
                                 name="rows beyond R (before truncation)",
                                 marker=dict(color=COLORS["second"], size=7, symbol="circle-open"),
                                 hoverinfo="skip"), 1, 2)
        fig.add_trace(go.Scatter(x=demo.X_tilde[:k][cut, 0], y=demo.X_tilde[:k][cut, 1], mode="markers",
                                 name=f"... scaled back onto the circle ({int(demo.truncated.sum())} rows)",
                                 marker=dict(color=COLORS["second"], size=8, symbol="diamond"),
                                 hoverinfo="skip"), 1, 2)
    cx, cy = _circle(demo.radius)
    fig.add_trace(go.Scatter(x=cx, y=cy, mode="lines", name=f"truncation circle R = {demo.radius:.2f}",
                             line=dict(color=COLORS["reference"], dash="dash"), hoverinfo="skip"), 1, 2)
    lim_raw = float(np.quantile(np.abs(demo.X), 0.999)) * 1.1
    lim_w = 1.6 * demo.radius  # a few far-out rows before truncation may fall off the view
    fig.update_xaxes(range=[-lim_raw, lim_raw], title_text="feature 1", row=1, col=1)
    fig.update_yaxes(range=[-lim_raw, lim_raw], scaleanchor="x", scaleratio=1, title_text="feature 2", row=1, col=1)
    fig.update_xaxes(range=[-lim_w, lim_w], title_text="whitened feature 1", row=1, col=2)
    fig.update_yaxes(range=[-lim_w, lim_w], scaleanchor="x2", scaleratio=1, title_text="whitened feature 2", row=1, col=2)
    return _two_line_panels(_layout(fig, title="Whitening makes the cloud round, so one circle fits every direction",
                                    height=470))


def figure_noisy_inverse(demo: NoisyInverseDemo, *, zoom: float | None = None) -> go.Figure:
    """Lesson 4 figure (b): where the noisy solutions land around theta*, raw (left) vs whitened (right).

    Both panels share the same axes so the spreads compare directly.

    Parameters
    ----------
    demo : NoisyInverseDemo
    zoom : float, optional
        Half-width of the view in units of ``||theta*|| = 1``. Default: the 90 % quantile of the raw
        errors, kept within [0.5, 5]; draws outside are counted in the legend.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    ts = demo.theta_star
    err_raw = np.linalg.norm(demo.theta_raw - ts, axis=1)
    if zoom is None:
        zoom = float(np.clip(np.quantile(err_raw, 0.9), 0.5, 5.0))
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1, shared_yaxes=True,
                        subplot_titles=(f"Raw rows:<br>condition<br>number {demo.kappa_raw:,.0f}",  # short lines: a phone's half width
                                        f"Whitened rows<br>(PMT): condition<br>number {demo.kappa_pmt:.2f}"))
    for col, (key, th, name) in enumerate((("raw", demo.theta_raw, "noise added to the raw matrix"),
                                           ("whitened", demo.theta_pmt, "noise added after whitening (PMT)")),
                                          start=1):
        err = np.linalg.norm(th - ts, axis=1)
        out = int(np.sum(np.any(np.abs(th - ts) > zoom, axis=1)))
        label = f"{name}: median error {np.median(err):.2f}"
        if out:
            label += f" ({out} draws off the chart)"
        fig.add_trace(go.Scatter(x=th[:, 0], y=th[:, 1], mode="markers", name=label,
                                 marker=dict(color=COLORS[key], size=5, opacity=0.5),
                                 hovertemplate="theta = (%{x:.2f}, %{y:.2f})<extra></extra>"), 1, col)
        fig.add_trace(go.Scatter(x=[ts[0]], y=[ts[1]], mode="markers", name="true theta", showlegend=col == 1,
                                 marker=dict(color="rgba(0,0,0,0)", size=14, symbol="star",
                                             line=dict(color=COLORS["reference"], width=2)),
                                 hovertemplate="true theta = (%{x:.2f}, %{y:.2f})<extra></extra>"), 1, col)
        fig.update_xaxes(range=[ts[0] - zoom, ts[0] + zoom], title_text="coefficient theta 1", row=1, col=col)
    fig.update_yaxes(range=[ts[1] - zoom, ts[1] + zoom], title_text="coefficient theta 2", row=1, col=1)
    return _two_line_panels(_layout(fig, title=f"{demo.theta_raw.shape[0]} private solutions of (A + W) theta = b, "
                                    "same privacy budget", height=480))
