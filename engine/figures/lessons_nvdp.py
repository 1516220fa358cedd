"""Learn-page lesson 5: what a Renyi-divergence bound says, and what NVDP's clipping does to it.

5. **What a Renyi-divergence bound says** -- :func:`clip_gaussian`, :func:`renyi_clipping_curve`,
   :func:`figure_renyi` (docs/specs/NVDP.md sections 3-4; the closed form is
   :func:`engine.nvdp.divergence.renyi_gaussian`, imported on first use so that this module does not
   load torch).

Pure, fast; the page imports these through :mod:`engine.figures.lessons`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.figures._lesson_style import COLORS, _layout, _positive, _two_line_panels

__all__ = [
    "clip_gaussian",
    "renyi_clipping_curve",
    "figure_renyi",
]


# ============================================================================================
# Lesson 5: Renyi divergence and clipping
# ============================================================================================
def _renyi_gaussian(m_a, s_a, m_b, s_b, renyi_order):
    # the numpy float64 closed form (engine.nvdp.divergence re-exports it; importing that loads torch)
    from engine.nvdp.closed_forms import renyi_gaussian

    return renyi_gaussian(m_a, s_a, m_b, s_b, renyi_order=renyi_order)


def clip_gaussian(mean, std, *, C_mu: float, renyi_order: float, sigma_ref: float = 1.0):
    """The NVDP clipping rules for one 1-D Gaussian posterior: project the mean, floor the std.

    ``mean <- clip(mean, -C_mu, C_mu)`` (the L2-ball projection in one dimension) and
    ``std <- max(std, sqrt((lambda - 1)/lambda) sigma_ref)`` (docs/specs/NVDP.md section 3; El Zein, Kumar &
    Henderson 2026).

    Parameters
    ----------
    mean, std : array_like
    C_mu : float
        Mean radius, ``> 0``.
    renyi_order : float
        lambda > 1.
    sigma_ref : float, default 1.0
        The prior's std.

    Returns
    -------
    (mean, std) : tuple of ndarray

    Examples
    --------
    >>> m, s = clip_gaussian(3.0, 0.1, C_mu=1.0, renyi_order=1.1)
    >>> float(m), round(float(s), 5)
    (1.0, 0.30151)
    """
    C = _positive(C_mu, "C_mu")
    lam = float(renyi_order)
    if not (lam > 1 and math.isfinite(lam)):
        raise ValueError(f"renyi_order must be a finite number > 1 (accepted range: 1 < renyi_order < inf), got {renyi_order!r}")
    floor = math.sqrt((lam - 1.0) / lam) * _positive(sigma_ref, "sigma_ref")
    return np.clip(np.asarray(mean, dtype=float), -C, C), np.maximum(np.asarray(std, dtype=float), floor)


def renyi_clipping_curve(means_a, *, std_a: float, mean_b: float, std_b: float, C_mu: float,
                         renyi_order: float) -> pd.DataFrame:
    """D_lambda(A || B) between two 1-D Gaussian posteriors as A's mean moves, before and after clipping.

    Parameters
    ----------
    means_a : array_like
        Means of sentence A's posterior.
    std_a : float
        Std of A (> 0).
    mean_b, std_b : float
        Sentence B's posterior.
    C_mu, renyi_order : float
        Clipping settings (see :func:`clip_gaussian`).

    Returns
    -------
    pandas.DataFrame
        Columns ``mean_a``, ``before``, ``after`` (nats; ``inf`` where
        ``lambda s_B^2 - (lambda - 1) s_A^2 <= 0``).

    Notes
    -----
    Clipping bounds the *worst case*: after it every mean lies in [-C_mu, C_mu] and every std above
    the floor, so for ``s_A < sigma_ref`` the divergence is finite and bounded. It does not lower
    every pair: raising a small std of A to the floor shrinks ``s^2 = lambda s_B^2 - (lambda - 1) s_A^2``
    and can raise D slightly when both means are inside the ball.

    Examples
    --------
    >>> t = renyi_clipping_curve([-4.0, 4.0], std_a=0.5, mean_b=-0.5, std_b=0.2, C_mu=1.0, renyi_order=1.1)
    >>> bool((t.after <= t.before).all())
    True
    """
    m = np.asarray(means_a, dtype=float)
    before = _renyi_gaussian(m, std_a, mean_b, std_b, renyi_order)
    ma, sa = clip_gaussian(m, std_a, C_mu=C_mu, renyi_order=renyi_order)
    mb, sb = clip_gaussian(mean_b, std_b, C_mu=C_mu, renyi_order=renyi_order)
    after = _renyi_gaussian(ma, sa, mb, sb, renyi_order)
    return pd.DataFrame({"mean_a": m, "before": np.broadcast_to(before, m.shape),
                         "after": np.broadcast_to(after, m.shape)})


def figure_renyi(*, mean_a: float, std_a: float, mean_b: float, std_b: float, C_mu: float, renyi_order: float,
                 span: float = 6.0) -> go.Figure:
    """Lesson 5 figure: the two posteriors before/after clipping, and D_lambda(A || B) vs A's mean.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    from scipy import stats  # imported here: scipy.stats costs ~0.5 s, and only this lesson's figure uses it

    lam = float(renyi_order)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("Two sentences'<br>posteriors<br>(one dimension)",  # short lines: a phone's half width
                                        "Renyi divergence<br>D(A || B) as<br>A's mean moves"))
    ma2, sa2 = (float(v) for v in clip_gaussian(mean_a, std_a, C_mu=C_mu, renyi_order=lam))
    mb2, sb2 = (float(v) for v in clip_gaussian(mean_b, std_b, C_mu=C_mu, renyi_order=lam))
    x = np.linspace(-span - 1, span + 1, 600)
    fig.add_vrect(x0=-C_mu, x1=C_mu, fillcolor=COLORS["clipped"], opacity=0.15, line_width=0, layer="below",
                  exclude_empty_subplots=False, row=1, col=1)
    for (m, s, m2, s2, name, col) in ((mean_a, std_a, ma2, sa2, "A", COLORS["unclipped"]),
                                      (mean_b, std_b, mb2, sb2, "B", COLORS["reference"])):
        fig.add_trace(go.Scatter(x=x, y=stats.norm.pdf(x, m, s), name=f"sentence {name}, unclipped",
                                 line=dict(color=col, dash="dot"), hoverinfo="skip"), 1, 1)
        fig.add_trace(go.Scatter(x=x, y=stats.norm.pdf(x, m2, s2), name=f"sentence {name}, clipped",
                                 line=dict(color=col, width=3), hoverinfo="skip"), 1, 1)
    curve = renyi_clipping_curve(np.linspace(-span, span, 241), std_a=std_a, mean_b=mean_b, std_b=std_b,
                                 C_mu=C_mu, renyi_order=lam)
    finite_before = bool(np.isfinite(curve.before).all())
    hov = "mean of A %{x:.2f}<br>D = %{y:.3g} nats<extra>%{fullData.name}</extra>"
    if finite_before:
        fig.add_trace(go.Scatter(x=curve.mean_a, y=curve.before, name="divergence without clipping",
                                 line=dict(color=COLORS["unclipped"], width=3), hovertemplate=hov), 1, 2)
    fig.add_trace(go.Scatter(x=curve.mean_a, y=curve.after, name="divergence with clipping",
                             line=dict(color=COLORS["clipped"], width=3), hovertemplate=hov), 1, 2)
    now = renyi_clipping_curve([mean_a], std_a=std_a, mean_b=mean_b, std_b=std_b, C_mu=C_mu, renyi_order=lam)
    if finite_before:
        fig.add_trace(go.Scatter(x=[mean_a], y=[float(now.before.iloc[0])], mode="markers", showlegend=False,
                                 marker=dict(color=COLORS["unclipped"], size=11, symbol="diamond"), hovertemplate=hov,
                                 name="without clipping"), 1, 2)
    fig.add_trace(go.Scatter(x=[mean_a], y=[float(now.after.iloc[0])], mode="markers", showlegend=False,
                             marker=dict(color=COLORS["clipped"], size=11, symbol="diamond"), hovertemplate=hov,
                             name="with clipping"), 1, 2)
    if not finite_before:
        fig.add_annotation(x=0.5, y=0.98, xref="x2 domain", yref="y2 domain", showarrow=False, yanchor="top",
                           text="without clipping: infinite for every mean<br>(lambda s_B² - (lambda-1) s_A² <= 0)",
                           font=dict(color=COLORS["unclipped"], size=13), bgcolor="rgba(255,255,255,0.85)")
    finite = np.concatenate([curve.before[np.isfinite(curve.before)], curve.after[np.isfinite(curve.after)]])
    lo = math.log10(max(finite.min(), 1e-4)) - 0.3
    hi = math.log10(max(finite.max(), 1e-3)) + (1.0 if not finite_before else 0.3)  # room for the note
    fig.update_yaxes(type="log", title_text="D(A || B), nats (log scale)", exponentformat="power",
                     dtick=1 if hi - lo > 2.5 else "D2", range=[lo, hi], row=1, col=2)
    fig.update_yaxes(title_text="density", row=1, col=1)
    fig.update_xaxes(title_text="embedding value<br>(shaded: |mean| <= C_mu)", row=1, col=1)
    fig.update_xaxes(title_text="mean of sentence A", row=1, col=2)
    return _two_line_panels(_layout(fig, title=f"Renyi order lambda = {lam:g}, C_mu = {float(C_mu):g}, std floor = "
                              f"{math.sqrt((lam - 1) / lam):.3f}", height=500))
