"""The planner's figure: predicted held-out RMSE of each method against the number of private rows (log axis).

Pure Plotly (no Streamlit): :func:`figure_plan` of a :class:`engine.pmt.planner.Plan`, the crossover n and
the user's n marked.
"""

from __future__ import annotations

import plotly.graph_objects as go

from engine.figures import template_kw

__all__ = ["figure_plan", "PLAN_COLOURS"]

PLAN_COLOURS = {"PMT": "#1f77b4", "PMT-pooled": "#17becf", "Public-only": "#7f7f7f", "DP-RR": "#d62728",
                "DP-GD": "#ff7f0e", "DP-Newton": "#d62728", "Non-private": "#2ca02c"}


def figure_plan(p, *, height: int = 420) -> go.Figure:
    """Lines of predicted RMSE per method over n (log x and y), a dotted line at ``crossover_n`` and the user's n.

    Parameters
    ----------
    p : engine.pmt.planner.Plan or engine.pmt.planner_logistic.LogisticPlan
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        One trace per method (named as in ``p.curves``), a vertical line at the crossover (when there is one)
        and a marker trace "your n" (when ``p.n_user`` is set).
    """
    fig = go.Figure()
    for name, ys in p.curves.items():
        fig.add_trace(go.Scatter(x=p.n, y=ys, mode="lines", name=name,
                                 line={"color": PLAN_COLOURS.get(name), "dash": "dot" if name == "Non-private" else None}))
    if p.crossover_n is not None:
        fig.add_vline(x=p.crossover_n, line_dash="dot", line_color="#444",
                      annotation_text=f"PMT beats public-only from n ~ {p.crossover_n:,}", annotation_position="top")
    if p.n_user is not None:
        at = p.at(p.n_user)
        fig.add_trace(go.Scatter(x=[p.n_user] * len(at), y=list(at.values()), mode="markers", name="your n",
                                 marker={"symbol": "x", "size": 9, "color": "black"},
                                 hovertext=[f"{k}: {v:.3g}" for k, v in at.items()]))
    metric = "log-loss" if getattr(p, "metric", "rmse") == "log_loss" else "RMSE"
    n_pub = p.n_pub if hasattr(p, "n_pub") else p.inputs.n_pub
    fig.update_layout(height=height, xaxis_title="private rows n (log scale)", yaxis_title=f"predicted test {metric}",
                      title=f"Planner: which method pays off (epsilon {p.epsilon:g}, n_pub {n_pub})",
                      legend={"orientation": "h", "y": -0.2}, **template_kw())
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig
