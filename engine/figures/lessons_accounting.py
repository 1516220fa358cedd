"""Learn-page lessons 1 and 2: what (epsilon, delta) and mu-GDP composition mean.

1. **epsilon and delta** -- :func:`gdp_tradeoff`, :func:`dp_tradeoff`, :func:`privacy_profile`,
   :func:`figure_epsilon_delta`. A mu-GDP mechanism (Dong, Roth & Su 2022) as a hypothesis test: the
   attacker's smallest miss rate at each false-alarm rate, and the delta it implies at each epsilon.
2. **mu-GDP composition** -- :func:`composition_table`, :func:`noise_for_total`,
   :func:`figure_composition` (Dong, Roth & Su 2022, Corollary 3.3).

Computed with the engine's real accounting (:mod:`engine.privacy`); pure, seeded and fast. The page
imports these through :mod:`engine.figures.lessons` (examples there).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy.special import ndtr, ndtri

from engine.figures._lesson_style import COLORS, _int_at_least, _layout, _two_line_panels
from engine.privacy import (
    compose_gdp,
    gaussian_sigma,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    split_mu,
    validate_delta,
    validate_epsilon,
    validate_mu,
)

__all__ = [
    "gdp_tradeoff",
    "dp_tradeoff",
    "privacy_profile",
    "figure_epsilon_delta",
    "composition_table",
    "noise_for_total",
    "figure_composition",
]


# ============================================================================================
# Lesson 1: epsilon and delta
# ============================================================================================
def gdp_tradeoff(alpha, mu: float) -> np.ndarray:
    """The mu-GDP trade-off curve ``beta = Phi(Phi^{-1}(1 - alpha) - mu)``.

    An attacker tests "your row is in" against "it is not" from the mechanism's output. For a
    mu-GDP mechanism, any test with false-alarm rate (type I error) ``alpha`` misses (type II
    error) at least ``beta``. ``mu = 0`` is perfect privacy (``beta = 1 - alpha``).

    Parameters
    ----------
    alpha : array_like
        Type I error rates in [0, 1].
    mu : float
        GDP parameter, ``0 <= mu < inf``.

    Returns
    -------
    ndarray, shape of ``alpha``
        Smallest achievable type II error.

    Source: Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 84(1), 2022, Definition 2.5.

    Examples
    --------
    >>> gdp_tradeoff([0.0, 0.5, 1.0], 0.0).tolist()
    [1.0, 0.5, 0.0]
    """
    a = np.asarray(alpha, dtype=float)
    if np.any((a < 0) | (a > 1)) or np.any(np.isnan(a)):
        raise ValueError("alpha (type I error) must lie in [0, 1]")
    m = float(mu)
    if not (math.isfinite(m) and m >= 0):
        raise ValueError(f"mu must be finite and >= 0 (accepted range: 0 <= mu < inf), got {mu!r}")
    return ndtr(ndtri(1.0 - a) - m)


def dp_tradeoff(alpha, epsilon: float, delta: float) -> np.ndarray:
    """The (epsilon, delta)-DP trade-off curve.

    ``f(alpha) = max(0, 1 - delta - e^epsilon alpha, e^-epsilon (1 - delta - alpha))``: an
    (epsilon, delta)-DP mechanism guarantees at least this type II error at type I error alpha.

    Parameters
    ----------
    alpha : array_like
        Type I error rates in [0, 1].
    epsilon : float
        ``0 < epsilon < inf``.
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    ndarray

    Source: Dong, Roth & Su (2022), Proposition 2.5 (after Wasserman & Zhou 2010; Kairouz, Oh &
    Viswanath 2015).

    Examples
    --------
    >>> dp_tradeoff([0.0, 1.0], 1.0, 0.01).round(3).tolist()
    [0.99, 0.0]
    """
    eps = validate_epsilon(epsilon)
    dlt = validate_delta(delta)
    a = np.asarray(alpha, dtype=float)
    if np.any((a < 0) | (a > 1)) or np.any(np.isnan(a)):
        raise ValueError("alpha (type I error) must lie in [0, 1]")
    return np.maximum.reduce([np.zeros_like(a), 1 - dlt - math.exp(eps) * a, math.exp(-eps) * (1 - dlt - a)])


def privacy_profile(mu: float, epsilons) -> np.ndarray:
    """delta(epsilon) of a mu-GDP mechanism at each epsilon (:func:`engine.privacy.gdp_delta`).

    Examples
    --------
    >>> privacy_profile(1.0, [4.3772]).round(7).tolist()
    [1e-05]
    """
    m = validate_mu(mu)
    return np.array([gdp_delta(float(e), m) for e in np.asarray(epsilons, dtype=float).ravel()])


def figure_epsilon_delta(epsilon: float, delta: float, *, n_points: int = 201) -> go.Figure:
    """Lesson 1 figure: the attacker's trade-off curve and the privacy profile, for (epsilon, delta).

    Left: type II vs type I error of the best test against the Gaussian mechanism calibrated to
    (epsilon, delta) (mu = :func:`engine.privacy.gdp_mu`), the (epsilon, delta) lines it touches,
    and the "no privacy" and "perfect privacy" extremes. Right: delta(epsilon) of that mechanism on
    a log axis with the chosen point marked.

    Parameters
    ----------
    epsilon : float
        ``0 < epsilon < inf``.
    delta : float
        ``0 < delta < 1``.
    n_points : int, default 201
        Grid size of each curve.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    eps = validate_epsilon(epsilon)
    dlt = validate_delta(delta)
    mu = gdp_mu(eps, dlt)
    alpha = np.linspace(0.0, 1.0, n_points)
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.2,  # room for the right panel's tick labels and title on a phone
        # two short lines each: side by side on a phone (390 px) a title has about 150 px
        subplot_titles=("What an attacker<br>can do", "The price list:<br>delta at each epsilon"),
    )
    fig.update_annotations(font_size=14)
    fig.add_trace(go.Scatter(x=alpha, y=1 - alpha, name="perfect privacy (output ignores you)",
                             line=dict(color=COLORS["muted"], dash="dot"), hoverinfo="skip"), 1, 1)
    fig.add_trace(go.Scatter(x=alpha, y=dp_tradeoff(alpha, eps, dlt), name=f"(epsilon={eps:g}, delta={dlt:g}) guarantee",
                             line=dict(color=COLORS["second"], dash="dash"),
                             hovertemplate="false alarms %{x:.3f}<br>misses at least %{y:.3f}<extra></extra>"), 1, 1)
    fig.add_trace(go.Scatter(x=alpha, y=gdp_tradeoff(alpha, mu), name=f"Gaussian mechanism, mu = {mu:.3f}",
                             line=dict(color=COLORS["main"], width=3),
                             hovertemplate="false alarms %{x:.3f}<br>misses at least %{y:.3f}<extra></extra>"), 1, 1)
    eps_grid = np.linspace(0.0, max(3.0 * eps, 2.0), n_points)
    prof = privacy_profile(mu, eps_grid)
    fig.add_trace(go.Scatter(x=eps_grid, y=np.maximum(prof, 1e-300), name="delta(epsilon) of this mechanism",
                             line=dict(color=COLORS["main"], width=3), showlegend=False,
                             hovertemplate="epsilon %{x:.2f}<br>delta %{y:.2e}<extra></extra>"), 1, 2)
    fig.add_trace(go.Scatter(x=[eps], y=[dlt], mode="markers", name="your (epsilon, delta)",
                             marker=dict(color=COLORS["second"], size=12, symbol="diamond"),
                             hovertemplate="epsilon %{x:.2f}<br>delta %{y:.2e}<extra></extra>"), 1, 2)
    fig.update_xaxes(title_text="false-alarm rate (type I error)", range=[0, 1], row=1, col=1)
    fig.update_yaxes(title_text="miss rate (type II error)", range=[0, 1], row=1, col=1)
    fig.update_xaxes(title_text="epsilon (nats)", row=1, col=2)
    fig.update_yaxes(title_text="delta (log scale)", type="log", range=[math.log10(max(dlt, 1e-12)) - 4, 0],
                     dtick=2, exponentformat="power", row=1, col=2)
    fig = _layout(fig, title=f"epsilon = {eps:g}, delta = {dlt:g}<br><sup>= a Gaussian mechanism with mu = {mu:.3f}</sup>",
                  height=450)
    # the title's two lines at the top, above the panels' two-line titles (centred in the margin, they overlapped
    # them on a phone)
    fig.update_layout(margin=dict(t=115), title=dict(yref="container", y=0.97, yanchor="top"))
    return fig


# ============================================================================================
# Lesson 2: mu-GDP composition
# ============================================================================================
def composition_table(mu_per_release: float, ks, *, delta: float = 1e-5) -> pd.DataFrame:
    """Total privacy of k releases, each mu-GDP, as k grows.

    Parameters
    ----------
    mu_per_release : float
        mu of each release, ``> 0``.
    ks : iterable of int
        Numbers of releases, each ``>= 1``.
    delta : float, default 1e-5
        The delta at which totals are reported as epsilon.

    Returns
    -------
    pandas.DataFrame
        Columns ``k``, ``mu_total`` (= sqrt(k) mu, :func:`engine.privacy.compose_gdp`),
        ``epsilon_gdp`` (that total at ``delta``, :func:`engine.privacy.gdp_epsilon`) and
        ``epsilon_basic``: the "add up the epsilons" rule (basic composition, Dwork & Roth 2014,
        Theorem 3.16) with each release reported at delta/k so the totals share ``delta``, i.e.
        ``k * gdp_epsilon(mu, delta / k)``.

    Examples
    --------
    >>> t = composition_table(1.0, [1, 4], delta=1e-5)
    >>> t["mu_total"].tolist(), round(float(t["epsilon_gdp"].iloc[0]), 4)
    ([1.0, 2.0], 4.3772)
    """
    mu = validate_mu(mu_per_release)
    dlt = validate_delta(delta)
    rows = []
    for k in ks:
        k = _int_at_least(k, "k (number of releases)", 1)
        total = compose_gdp([mu] * k)
        rows.append({"k": k, "mu_total": total, "epsilon_gdp": gdp_epsilon(total, dlt),
                     "epsilon_basic": k * gdp_epsilon(mu, dlt / k)})
    import pandas as pd  # on first use: lesson 1 (the first figure of the Learn page) needs no pandas

    return pd.DataFrame(rows, columns=["k", "mu_total", "epsilon_gdp", "epsilon_basic"])


def noise_for_total(epsilon: float, delta: float, ks, *, sensitivity: float = 1.0) -> pd.DataFrame:
    """Per-release noise needed so that k releases together are (epsilon, delta)-DP.

    The total budget becomes ``mu = gdp_mu(epsilon, delta)``, split evenly as ``mu / sqrt(k)``
    (:func:`engine.privacy.split_mu`); each release then needs
    ``sigma = sensitivity * sqrt(k) / mu`` (:func:`engine.privacy.gaussian_sigma`).

    Returns
    -------
    pandas.DataFrame
        Columns ``k``, ``mu_per_release``, ``sigma_per_release`` (units of the statistic).

    Examples
    --------
    >>> t = noise_for_total(1.0, 1e-5, [1, 4])
    >>> round(float(t.sigma_per_release.iloc[1] / t.sigma_per_release.iloc[0]), 6)
    2.0
    """
    mu = gdp_mu(validate_epsilon(epsilon), validate_delta(delta))
    rows = []
    for k in ks:
        k = _int_at_least(k, "k (number of releases)", 1)
        m = split_mu(mu, k)
        rows.append({"k": k, "mu_per_release": m, "sigma_per_release": gaussian_sigma(sensitivity, m)})
    import pandas as pd  # on first use

    return pd.DataFrame(rows, columns=["k", "mu_per_release", "sigma_per_release"])


def figure_composition(mu_per_release: float, k: int, *, epsilon_total: float = 1.0, delta: float = 1e-5,
                       k_max: int = 40) -> go.Figure:
    """Lesson 2 figure: total epsilon vs number of releases, and the noise each release needs.

    Left: total epsilon of 1..k_max releases at ``mu_per_release`` (GDP composition vs adding up
    epsilons), the chosen k marked. Right: noise scale per release (sensitivity 1) needed for a fixed
    total (``epsilon_total``, ``delta``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    k = _int_at_least(k, "k (number of releases)", 1)
    k_max = max(_int_at_least(k_max, "k_max", 1), k)
    ks = list(range(1, k_max + 1))
    comp = composition_table(mu_per_release, ks, delta=delta)
    noise = noise_for_total(epsilon_total, delta, ks)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=(f"Spending:<br>each release<br>mu = {float(mu_per_release):g}",  # short lines: a phone's half width
                                        f"Budgeting: noise<br>per release for a<br>total epsilon = {float(epsilon_total):g}"))
    fig.add_trace(go.Scatter(x=comp.k, y=comp.epsilon_basic, name="adding up each release's epsilon (basic rule)",
                             line=dict(color=COLORS["second"], dash="dash"),
                             hovertemplate="%{x} releases<br>total epsilon %{y:.2f}<extra>basic rule</extra>"), 1, 1)
    fig.add_trace(go.Scatter(x=comp.k, y=comp.epsilon_gdp, name="mu-GDP composition: mu_total = sqrt(k) mu",
                             line=dict(color=COLORS["main"], width=3),
                             hovertemplate="%{x} releases<br>total epsilon %{y:.2f}<extra>mu-GDP</extra>"), 1, 1)
    row = comp[comp.k == k].iloc[0]
    fig.add_trace(go.Scatter(x=[k], y=[row.epsilon_gdp], mode="markers", name=f"k = {k} releases",
                             marker=dict(color=COLORS["main"], size=12, symbol="diamond"),
                             hovertemplate="%{x} releases<br>total epsilon %{y:.2f}<extra></extra>"), 1, 1)
    fig.add_trace(go.Scatter(x=noise.k, y=noise.sigma_per_release, name="noise std per release (sensitivity 1)",
                             line=dict(color=COLORS["third"], width=3),
                             hovertemplate="%{x} releases<br>sigma %{y:.2f} per release<extra></extra>"), 1, 2)
    nrow = noise[noise.k == k].iloc[0]
    fig.add_trace(go.Scatter(x=[k], y=[nrow.sigma_per_release], mode="markers", showlegend=False,
                             marker=dict(color=COLORS["third"], size=12, symbol="diamond"),
                             hovertemplate="%{x} releases<br>sigma %{y:.2f}<extra></extra>"), 1, 2)
    fig.update_xaxes(title_text="number of releases k", row=1, col=1)
    fig.update_xaxes(title_text="number of releases k", row=1, col=2)
    fig.update_yaxes(title_text=f"total epsilon (at delta = {float(delta):g})", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="noise std sigma per release", rangemode="tozero", row=1, col=2)
    return _two_line_panels(_layout(fig, title=f"{k} releases: total mu = {row.mu_total:.3f}, total epsilon = "
                                    f"{row.epsilon_gdp:.2f}", height=480))
