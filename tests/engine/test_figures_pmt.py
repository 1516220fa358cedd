"""Figure builders of engine.figures.pmt, tested directly on small hand-made frames (test fixtures only)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from engine.figures import pmt as plots


def _summary(x="epsilon", values=(0.1, 1.0, 10.0), methods=("PMT", "DP-RR", "DP-GD"), ref=0.0):
    rows = []
    for k, m in enumerate(methods):
        for v in values:
            med = (k + 1) / (v if x == "epsilon" else 1.0) + (0.1 if x != "epsilon" else 0.0)
            rows.append({"method": m, x: v, "metric": "l2_error", "median": med, "q05": med / 4, "q25": med / 2,
                         "q75": med * 2, "q95": med * 4, "n_seeds": 20})
    for v in values:
        rows.append({"method": "Non-private", x: v, "metric": "l2_error", "median": ref, "q05": ref, "q25": ref,
                     "q75": ref, "q95": ref, "n_seeds": 1})
    return pd.DataFrame(rows)


def _legend_traces(fig):
    return [t for t in fig.data if t.showlegend is not False and not (t.name or "").startswith("shaded:")]


def test_method_colours_follow_the_contract():
    assert plots.METHOD_COLORS["PMT"] == "#0072B2"
    assert plots.METHOD_COLORS["DP-RR"] == "#E69F00"
    assert plots.METHOD_COLORS["DP-RR (oracle C, non-private tuning)"] == "#F0E442"
    assert plots.METHOD_COLORS["DP-GD"] == "#009E73"
    assert plots.METHOD_COLORS["Non-private"] == "#000000"
    assert plots.METHOD_COLORS["unclipped"] == "#D55E00"
    # one colour per private method in the PMT comparison
    pmt_methods = ["PMT", "DP-RR", "DP-RR (oracle C, non-private tuning)", "DP-GD", "Non-private"]
    assert len({plots.METHOD_COLORS[m] for m in pmt_methods}) == len(pmt_methods)


def test_error_vs_epsilon_lines_bands_rule_and_axes():
    s = _summary()
    fig = plots.error_vs_epsilon_figure(s, metric="l2_error", epsilon=1.0)
    assert isinstance(fig, go.Figure)
    legend = _legend_traces(fig)
    assert [t.name for t in legend] == ["PMT", "DP-RR", "DP-GD"]  # non-private is 0 -> not on a log axis
    for t in legend:
        assert t.line.color == plots.METHOD_COLORS[t.name]
        assert "median" in t.hovertemplate and "coefficient units" in t.hovertemplate
    pmt = next(t for t in legend if t.name == "PMT")
    assert list(pmt.y) == pytest.approx([10.0, 1.0, 0.1])
    # two bands (upper+lower trace each) per method, filled in the method's colour
    fills = [t for t in fig.data if t.fill == "tonexty" and t.legendgroup == "PMT"]
    assert len(fills) == 2
    assert all(t.fillcolor.startswith("rgba(0,114,178,") for t in fills)
    band_vals = {tuple(np.round(t.y, 6)) for t in fills}
    assert (2.5, 0.25, 0.025) in band_vals and (5.0, 0.5, 0.05) in band_vals  # q05 and q25 of PMT
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    rules = [sh for sh in fig.layout.shapes if sh.type == "line" and sh.x0 == sh.x1]
    assert len(rules) == 1 and rules[0].x0 == 1.0
    assert "Non-private = 0" in fig.layout.title.text
    assert any((t.name or "").startswith("shaded: 25-75%") for t in fig.data)  # the legend explains the bands


def test_non_private_reference_drawn_when_positive():
    s = _summary(ref=0.5)
    s = s.assign(metric="rmse")
    fig = plots.error_vs_epsilon_figure(s, metric="rmse", epsilon=0.1)
    names = [t.name for t in _legend_traces(fig)]
    assert "Non-private (reference)" in names
    hlines = [sh for sh in fig.layout.shapes if sh.y0 == sh.y1 == 0.5]
    assert hlines, "constant non-private reference should be a horizontal line"
    assert "RMSE" in fig.layout.yaxis.title.text and "target units" in _legend_traces(fig)[0].hovertemplate


def test_lam_zero_gets_its_own_tick_on_log_axis():
    s = _summary(x="lam", values=(0.0, 1e-4, 1e-2))
    fig = plots.error_vs_lam_figure(s, metric="l2_error", lam=0.0)
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.ticktext) == ["0", "0.0001", "0.01"]
    pmt = next(t for t in _legend_traces(fig) if t.name == "PMT")
    assert pmt.x[0] == pytest.approx(1e-5)  # one decade left of the smallest positive lam
    rules = [sh for sh in fig.layout.shapes if sh.type == "line" and sh.x0 == sh.x1]
    assert rules and rules[0].x0 == pytest.approx(1e-5)


def test_non_positive_medians_are_reported_not_silently_dropped():
    s = _summary()
    s.loc[(s["method"] == "DP-GD") & (s["epsilon"] == 0.1), "median"] = 0.0
    fig = plots.error_vs_epsilon_figure(s, metric="l2_error")
    dpgd = next(t for t in _legend_traces(fig) if t.name == "DP-GD")
    assert len(dpgd.x) == 2
    assert "DP-GD: 1 point(s) <= 0" in fig.layout.title.text


def test_accuracy_metric_says_higher_is_better_and_linear_axis():
    s = _summary().assign(metric="accuracy")
    fig = plots.error_vs_epsilon_figure(s, metric="accuracy", log_y=False)
    assert "higher is better" in fig.layout.yaxis.title.text
    assert fig.layout.yaxis.type == "linear"


def test_sweep_figure_rejects_bad_input():
    with pytest.raises(ValueError, match="missing column"):
        plots.sweep_figure(pd.DataFrame({"method": ["PMT"], "epsilon": [1.0]}))
    with pytest.raises(TypeError, match="DataFrame"):
        plots.sweep_figure([1, 2, 3])


def test_conditioning_figure_bars_and_spectra():
    kappas = {"raw": 1.5e4, "public": 1.2e4, "pmt": 1.3, "noisy": float("inf")}
    spectra = {"raw": np.array([1e-4, 1.0, 0.5]), "pmt": np.array([1.0, 0.9, 0.8]), "noisy": np.array([2.0, -0.1, 1.0])}
    fig = plots.conditioning_figure(kappas, spectra)
    bars = fig.data[0]
    assert isinstance(bars, go.Bar)
    assert list(bars.text) == ["1.5e+04", "1.2e+04", "1.3", "inf"]
    assert "noisy A_priv: not positive definite" in fig.layout.title.text
    assert bars.y[3] > 1.5e4 and bars.marker.pattern.shape[3] == "/"  # hatched, drawn to the top
    assert fig.layout.yaxis.type == "log"
    raw = next(t for t in fig.data if t.name == plots.CONDITIONING_LABELS["raw"] and isinstance(t, go.Scatter))
    assert list(raw.y) == pytest.approx([1.0, 0.5, 1e-4])  # sorted descending, normalised by the largest
    noisy = next(t for t in fig.data if t.name == plots.CONDITIONING_LABELS["noisy"] and isinstance(t, go.Scatter))
    assert list(noisy.y) == pytest.approx([1.0, 0.5])
    assert "1 eigenvalue(s) <= 0" in fig.layout.title.text


def test_truncation_figure_counts_rows_and_draws_radii():
    rng = np.random.default_rng(0)
    pmt = np.abs(rng.normal(2.0, 0.5, size=1000))
    pmt[:7] = 50.0
    raw = np.abs(rng.normal(10.0, 5.0, size=1000))
    fig = plots.truncation_figure(raw, pmt, radius=6.0, clip_radius=8.0)
    titles = [a.text for a in fig.layout.annotations]
    assert any("7 of 1000 rows truncated (0.70%)" in t for t in titles)
    n_clip = int(np.sum(raw > 8.0))
    assert any(f"{n_clip} of 1000 rows clipped" in t for t in titles)
    xs = sorted(sh.x0 for sh in fig.layout.shapes if sh.x0 == sh.x1)
    assert xs == [6.0, 8.0]
    # binned here: 60 bars per panel whose counts add up to the rows, the outliers in the last bar
    bars = [t for t in fig.data if isinstance(t, go.Bar)]
    assert [len(b.y) for b in bars] == [60, 60] and [int(sum(b.y)) for b in bars] == [1000, 1000]
    assert bars[1].y[-1] == 7 and bars[1].customdata[-1][1] == 50.0
    with pytest.raises(ValueError, match="radius"):
        plots.truncation_figure(raw, pmt, radius=-1.0)
    with pytest.raises(ValueError, match="empty"):
        plots.truncation_figure(None, np.array([]), radius=1.0)


def test_headline_table_reads_the_nearest_epsilon():
    frame = pd.DataFrame({
        "method": ["PMT"] * 4 + ["DP-RR"] * 4,
        "epsilon": [0.5, 0.5, 2.0, 2.0] * 2,
        "seed": [0, 1, 0, 1] * 2,
        "l2_error": [1.0, 3.0, 0.1, 0.3, 10.0, 30.0, 1.0, 5.0],
    })
    t = plots.headline_table(frame, metric="l2_error", epsilon=1.8)
    assert t["method"].tolist() == ["PMT", "DP-RR"]
    assert t["epsilon"].tolist() == [2.0, 2.0]
    assert t["median"].tolist() == pytest.approx([0.2, 3.0])
    with pytest.raises(ValueError, match="not a column"):
        plots.headline_table(frame, metric="auc", epsilon=1.0)


def test_rule_annotations_use_log_coordinates_on_log_axes():
    # plotly annotations on a log axis are placed at 10**x: the label of the rule at n_pub = 200 must sit
    # at log10(200), not at 200 (which stretched the axis to 1e200 in the browser)
    s = _summary(x="n_pub", values=(20, 200, 2000))
    fig = plots.error_vs_n_pub_figure(s, metric="l2_error", n_pub=200)
    ann = [a for a in fig.layout.annotations if "chosen n_pub" in a.text]
    assert len(ann) == 1 and ann[0].x == pytest.approx(np.log10(200))
    s = _summary(ref=50.0).assign(metric="rmse")
    fig = plots.error_vs_epsilon_figure(s, metric="rmse", epsilon=1.0)
    ref = [a for a in fig.layout.annotations if "non-private" in a.text]
    assert len(ref) == 1 and ref[0].y == pytest.approx(np.log10(50.0))


def test_figures_use_the_plotly_white_template_whatever_the_default():
    """engine.figures makes "plotly_white" the default (no per-figure template copy); a figure built after
    something reset the default still gets it explicitly, and both give the same layout."""
    import plotly.graph_objects as go
    import plotly.io as pio

    from engine.figures.pmt import _layout

    white = pio.templates["plotly_white"]
    fast = _layout(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), title="t")
    old = pio.templates.default
    try:
        pio.templates.default = "plotly"
        slow = _layout(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), title="t")
    finally:
        pio.templates.default = old
    assert fast.layout.template == white and slow.layout.template == white
    assert fast.to_plotly_json() == slow.to_plotly_json()
