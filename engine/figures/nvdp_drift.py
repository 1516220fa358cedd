"""The NVDP training-drift figure: one metric per epoch for both schedules, seeds as a band.

Drawn from the shipped trace (:mod:`engine.nvdp.drift`). Each view (unclipped, unclipped clipped at
release, trained with clipping) is a band from the lowest to the highest seed with the median as a
line; the epochs early stopping restores are marked on the two trained arms (one marker per seed).
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.figures.nvdp import NVDP_COLORS
from engine.figures.pmt import _layout, _rgba
from engine.nvdp.drift import METRIC_NAMES, SCHEDULE_NAMES, VIEW_NAMES, bands, restored

__all__ = ["drift_figure", "VIEW_COLORS"]

VIEW_COLORS = {"unclipped": NVDP_COLORS["unclipped"], "clipped": NVDP_COLORS["clipped"], "release": "#009E73"}


def drift_figure(trace: dict, metric: str = "rd_max_all_pairs", *, views=("unclipped", "release", "clipped")) -> go.Figure:
    """Per-epoch ``metric`` for each schedule of ``trace`` (one panel each), seeds as bands.

    Raises
    ------
    ValueError
        Unknown metric or view.
    """
    if metric not in METRIC_NAMES:
        raise ValueError(f"metric must be one of {sorted(METRIC_NAMES)}; got {metric!r}")
    bad = [v for v in views if v not in VIEW_NAMES]
    if bad:
        raise ValueError(f"unknown view(s) {bad}; expected some of {sorted(VIEW_NAMES)}")
    scheds = list(trace["schedules"])
    fig = make_subplots(rows=1, cols=len(scheds), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[SCHEDULE_NAMES.get(s, s) for s in scheds])
    scale = 100.0 if metric == "accuracy" else 1.0
    n_seeds = len(trace.get("seeds", []))
    for c, sched in enumerate(scheds, start=1):
        for view in views:
            b = bands(trace, sched, view, metric)
            x = b["epochs"]
            col = VIEW_COLORS[view]
            lo = [scale * v for v in b["lo"]]
            hi = [scale * v for v in b["hi"]]
            fig.add_trace(go.Scatter(x=x + x[::-1], y=hi + lo[::-1], fill="toself", fillcolor=_rgba(col, 0.18),
                                     line=dict(width=0), hoverinfo="skip", showlegend=False, legendgroup=view), row=1, col=c)
            fig.add_trace(go.Scatter(x=x, y=[scale * v for v in b["median"]], mode="lines+markers",
                                     name=f"{VIEW_NAMES[view]} (median, band: {n_seeds} seeds)", line=dict(color=col, width=2),
                                     legendgroup=view, showlegend=c == 1,
                                     hovertemplate=f"{VIEW_NAMES[view]}<br>epoch %{{x}}<br>median %{{y:.4g}}<extra></extra>"),
                          row=1, col=c)
            if view in ("unclipped", "clipped"):
                rs = restored(trace, sched, view)
                xs = [rs[s] for s in rs]
                ys = [scale * b["per_seed"][s][rs[s] - 1] for s in rs]
                fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", marker=dict(symbol="star", size=13, color=col,
                                                                                 line=dict(color="#000000", width=1)),
                                         name="epoch restored by early stopping (per seed)", legendgroup="restored",
                                         showlegend=c == 1 and view == "unclipped",
                                         text=[f"seed {s}" for s in rs],
                                         hovertemplate=f"{VIEW_NAMES[view]}: restored epoch %{{x}} (%{{text}})<br>"
                                                       "%{y:.4g}<extra></extra>"), row=1, col=c)
        fig.update_xaxes(title_text="epoch", dtick=1, row=1, col=c)
    ylab = METRIC_NAMES[metric] + (" (%)" if metric == "accuracy" else "")
    fig.update_yaxes(title_text=ylab, row=1, col=1)
    all_vals = [v for s in scheds for view in views for v in bands(trace, s, view, metric)["hi"]]
    if metric != "accuracy" and all(math.isfinite(v) and v > 0 for v in all_vals):
        lo_all = min(v for s in scheds for view in views for v in bands(trace, s, view, metric)["lo"])
        if max(all_vals) / max(lo_all, 1e-300) > 8:
            fig.update_yaxes(type="log")
    return _layout(fig, title=f"Training drift: {METRIC_NAMES[metric]} after each epoch", height=480)
