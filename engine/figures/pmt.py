"""Pure functions that turn engine results into Plotly figures (no Streamlit in here).

Every figure the dashboard draws is built here, so the same picture can be produced from the CLI,
a notebook or a test. Inputs are the tidy frames of :mod:`engine.pmt.sweep` (``run_sweep`` /
``summarize``) or plain arrays; outputs are :class:`plotly.graph_objects.Figure` objects.

Colours follow the Okabe-Ito palette (colour-blind safe, legible in grey-scale print): one colour per
method everywhere (:data:`METHOD_COLORS`), dashed lines for references and non-private tuning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.figures import template_kw
from engine.figures._colors import METHOD_COLORS  # one colour per method, everywhere (defined there, without pandas)

#: Line dash per method (references and non-privately tuned variants are dashed).
METHOD_DASH: dict[str, str] = {
    "DP-RR (oracle C, non-private tuning)": "dash",
    "Non-private": "dash",
}

#: Okabe-Ito colours for anything not listed in :data:`METHOD_COLORS` (cycled in this order).
_FALLBACK_COLORS = ["#999999", "#882255", "#44AA99", "#332288"]

#: Long names of the methods, spelled out once per figure/legend.
METHOD_LONG_NAMES: dict[str, str] = {
    "PMT": "PMT: public-moment-guided truncation (DP-PMTRR for ridge, DP-PMTLR for logistic regression)",
    "DP-RR": "DP-RR: private ridge on clipped raw rows (sufficient statistics)",
    "DP-RR (oracle C, non-private tuning)": "DP-RR oracle: clip radius C tuned on the error (not private)",
    "DP-GD": "DP-GD: noisy gradient descent with per-row clipping",
    "DP-Newton": "DP-Newton: noisy Newton steps on clipped raw rows (logistic baseline)",
    "Public-only": "Public-only: the non-private fit on the public rows alone (no privacy cost)",
    "PMT-pooled": "PMT-pooled: PMT's release combined with the public rows by precision (GLS), same budget",
    "Non-private": "Non-private ridge (the reference)",
}

#: metric column -> (axis title, hover unit/meaning, lower_is_better)
METRICS: dict[str, tuple[str, str, bool]] = {
    "l2_error": ("L2 estimation error", "||theta_hat - theta_nonprivate||_2, in coefficient units", True),
    "rel_error": ("Relative error", "||theta_hat - theta_np||_2 / ||theta_np||_2 (no unit)", True),
    "excess_risk": ("Excess empirical risk", "(theta_hat - theta_np)^T (X^T X / n) (theta_hat - theta_np), target units squared", True),
    "rmse": ("Held-out RMSE", "root mean squared prediction error on held-out rows, in target units", True),
    "accuracy": ("Held-out accuracy", "fraction of held-out rows classified correctly", False),
    "auc": ("Held-out AUC", "area under the ROC curve on held-out rows", False),
    "log_loss": ("Held-out log loss", "mean negative log-likelihood on held-out rows, nats", True),
    "deviance": ("Held-out Poisson deviance", "mean Poisson deviance of the predicted counts on held-out rows", True),
}

_PARAM_LABELS = {
    "epsilon": "epsilon (smaller = more private)",
    "lam": "ridge penalty lam",
    "n_pub": "public sample size n_pub (rows)",
}

_REFERENCE = "Non-private"


def method_color(method: str, index: int = 0) -> str:
    """The colour of ``method`` (:data:`METHOD_COLORS`, else an Okabe-Ito fallback by ``index``).

    Examples
    --------
    >>> method_color("PMT")
    '#0072B2'
    >>> method_color("something new", 1)
    '#882255'
    """
    return METHOD_COLORS.get(method, _FALLBACK_COLORS[index % len(_FALLBACK_COLORS)])


def metric_label(metric: str) -> str:
    """Axis title for a metric column (falls back to the column name)."""
    return METRICS.get(metric, (metric, "", True))[0]


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _ordered_methods(methods: Sequence[str]) -> list[str]:
    order = list(METHOD_COLORS)
    return sorted(dict.fromkeys(methods), key=lambda m: (order.index(m) if m in order else len(order), m))


def _layout(fig: go.Figure, *, title: str, height: int = 460) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=16)),
        **template_kw(),
        height=height,
        margin=dict(l=70, r=20, t=60, b=120),
        # the legend sits at the bottom of the figure (not relative to the plot area), so that it never
        # covers the x-axis title, whatever the height or the width (phones wrap it onto more rows)
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0.0, xanchor="left", x=0.0,
                    font=dict(size=12)),
        hoverlabel=dict(namelength=-1),
        font=dict(size=13),
    )
    # axis titles and tick labels push the margins out instead of being clipped (narrow screens, big fonts)
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def _check_summary(summary: pd.DataFrame, x: str) -> pd.DataFrame:
    if not isinstance(summary, pd.DataFrame):
        raise TypeError(f"summary must be a pandas DataFrame from engine.pmt.sweep.summarize, got {type(summary).__name__}")
    need = {"method", x, "median", "q05", "q25", "q75", "q95"}
    missing = sorted(need - set(summary.columns))
    if missing:
        raise ValueError(f"summary is missing column(s) {missing}; expected the output of engine.pmt.sweep.summarize")
    return summary


def sweep_figure(
    summary: pd.DataFrame,
    *,
    x: str = "epsilon",
    metric: str | None = None,
    chosen: float | None = None,
    log_x: bool = True,
    log_y: bool = True,
    title: str | None = None,
    bands: Sequence[str] = ("q25-q75", "q05-q95"),
) -> go.Figure:
    """Median error per method against a swept parameter, with quantile bands.

    Parameters
    ----------
    summary : DataFrame
        Output of :func:`engine.pmt.sweep.summarize`: columns ``method``, ``x``, ``median``,
        ``q05``, ``q25``, ``q75``, ``q95`` (and optionally ``metric``, ``n_seeds``), one row per
        (method, x). Rows of ``"Non-private"`` are drawn as a black dashed reference (a horizontal
        line when its value does not depend on ``x`` or ``x`` is not finite).
    x : {"epsilon", "lam", "n_pub"}
        The swept column on the horizontal axis.
    metric : str, optional
        Metric column name (``"l2_error"``, ``"rmse"``, ...); taken from ``summary["metric"]`` if absent.
    chosen : float, optional
        Draws a vertical rule at this value (e.g. the chosen epsilon).
    log_x, log_y : bool
        Log axes. A value ``x = 0`` (e.g. ``lam = 0``) is drawn one decade left of the smallest
        positive value, with the tick labelled ``0``. Non-positive medians/bands are dropped from a
        log y axis (they cannot be drawn there); a note says so.
    title : str, optional
    bands : sequence of {"q25-q75", "q05-q95"}
        Which quantile bands to shade (over seeds; the error is heavy-tailed, so medians and bands,
        never means).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``summary`` is not a frame with the columns above.

    Examples
    --------
    >>> s = pd.DataFrame({"method": ["PMT", "PMT"], "epsilon": [0.5, 1.0], "median": [2.0, 1.0],
    ...                   "q05": [1.0, 0.5], "q25": [1.5, 0.8], "q75": [2.5, 1.2], "q95": [3.0, 1.5]})
    >>> fig = sweep_figure(s, x="epsilon", metric="l2_error", chosen=1.0)
    >>> [t.name for t in fig.data if t.showlegend is not False]
    ['PMT', 'shaded: 25-75% (dark), 5-95% (light) of seeds']
    """
    summary = _check_summary(summary, x)
    if metric is None:
        metric = str(summary["metric"].iloc[0]) if "metric" in summary.columns and len(summary) else "value"
    label, unit, lower_better = METRICS.get(metric, (metric, "", True))
    df = summary.copy()
    df[x] = pd.to_numeric(df[x], errors="coerce")
    fig = go.Figure()
    notes: list[str] = []

    # map x=0 onto the log axis
    xpos = df[x].to_numpy(dtype=float)
    finite_pos = xpos[np.isfinite(xpos) & (xpos > 0)]
    zero_at = None
    if log_x and np.any(xpos == 0) and finite_pos.size:
        zero_at = float(finite_pos.min()) / 10.0
    df["_x"] = np.where(df[x] == 0, zero_at if zero_at is not None else np.nan, df[x]) if log_x else df[x]

    ref = df[df["method"] == _REFERENCE]
    methods = _ordered_methods([m for m in df["method"] if m != _REFERENCE])
    band_alpha = {"q25-q75": 0.30, "q05-q95": 0.12}
    band_cols = {"q25-q75": ("q25", "q75"), "q05-q95": ("q05", "q95")}
    xfmt = ":.3g"
    for i, method in enumerate(methods):
        part = df[df["method"] == method].dropna(subset=["_x"]).sort_values("_x")
        if log_y:
            bad = part["median"] <= 0
            if bad.any():
                notes.append(f"{method}: {int(bad.sum())} point(s) <= 0 not drawn on the log axis")
            part = part[~bad]
        if part.empty:
            continue
        color = method_color(method, i)
        dash = METHOD_DASH.get(method, "solid")
        for band in reversed(list(bands)):  # wide band first, underneath
            lo, hi = band_cols[band]
            lo_v = part[lo].clip(lower=part["median"].min() * 1e-3) if log_y else part[lo]
            fig.add_trace(go.Scatter(x=part["_x"], y=part[hi], mode="lines", line=dict(width=0), legendgroup=method,
                                     showlegend=False, hoverinfo="skip", name=f"{method} {band} upper"))
            fig.add_trace(go.Scatter(x=part["_x"], y=lo_v, mode="lines", line=dict(width=0), fill="tonexty",
                                     fillcolor=_rgba(color, band_alpha.get(band, 0.2)), legendgroup=method,
                                     showlegend=False, hoverinfo="skip", name=f"{method} {band}"))
        custom = np.column_stack([part["q25"], part["q75"], part["q05"], part["q95"], part[x]])
        fig.add_trace(
            go.Scatter(
                x=part["_x"], y=part["median"], mode="lines+markers", name=method, legendgroup=method,
                line=dict(color=color, width=3 if method == "PMT" else 2, dash=dash), marker=dict(size=6),
                customdata=custom,
                hovertemplate=(f"<b>{method}</b><br>{x} = %{{customdata[4]{xfmt}}}<br>median {label} = %{{y:.4g}}"
                               "<br>25-75%: %{customdata[0]:.3g} to %{customdata[1]:.3g}"
                               "<br>5-95%: %{customdata[2]:.3g} to %{customdata[3]:.3g}"
                               f"<br><i>{unit}</i><extra></extra>"),
            )
        )
    if methods and bands:  # explain the shading in the legend itself (screenshots travel without captions)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="shaded: 25-75% (dark), 5-95% (light) of seeds",
                                 marker=dict(symbol="square", size=12, color="rgba(120,120,120,0.35)"),
                                 hoverinfo="skip", showlegend=True))
    if not ref.empty:
        ref_vals = ref["median"].to_numpy(dtype=float)
        ref_x = ref["_x"].to_numpy(dtype=float)
        const = np.allclose(ref_vals, ref_vals[0], rtol=1e-9, atol=0) or not np.isfinite(ref_x).any()
        if log_y and np.all(ref_vals <= 0):
            notes.append("Non-private = 0 (the target), not drawn on a log axis")
        elif const:
            v = float(ref_vals[0])
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="Non-private (reference)",
                                     line=dict(color=METHOD_COLORS[_REFERENCE], dash="dash", width=2)))
            fig.add_hline(y=v, line=dict(color=METHOD_COLORS[_REFERENCE], dash="dash", width=2))
            # annotations on a log axis take log10 coordinates (add_hline's own annotation does not)
            fig.add_annotation(x=1.0, xref="paper", xanchor="right", y=math.log10(v) if log_y else v, yref="y",
                               yanchor="bottom", text=f"non-private {v:.3g}", showarrow=False)
        else:
            part = ref.dropna(subset=["_x"]).sort_values("_x")
            fig.add_trace(go.Scatter(x=part["_x"], y=part["median"], mode="lines", name="Non-private (reference)",
                                     line=dict(color=METHOD_COLORS[_REFERENCE], dash="dash", width=2),
                                     hovertemplate=f"non-private {label} = %{{y:.4g}}<extra></extra>"))
    if chosen is not None and math.isfinite(float(chosen)):
        cx = float(chosen)
        if log_x and cx == 0 and zero_at is not None:
            cx = zero_at
        if not (log_x and cx <= 0):
            fig.add_vline(x=cx, line=dict(color="#555555", dash="dot", width=1.5))
            # annotations on a log axis take log10 coordinates (add_vline's own annotation does not, which
            # stretched the axis to 1e200 for n_pub = 200)
            fig.add_annotation(x=math.log10(cx) if log_x else cx, xref="x", y=1.0, yref="paper", yanchor="bottom",
                               xanchor="left", text=f" chosen {x} = {float(chosen):g}", showarrow=False,
                               font=dict(size=12, color="#333333"))
    xaxis = dict(title=_PARAM_LABELS.get(x, x) + (" (log scale)" if log_x else ""),
                 type="log" if log_x else "linear", showgrid=True)
    vals = sorted(set(df["_x"].dropna()))
    if log_x and 0 < len(vals) <= 16:
        xaxis.update(tickvals=vals, ticktext=["0" if v == zero_at else f"{v:g}" for v in vals])
    fig.update_xaxes(**xaxis)
    better = "lower is better" if lower_better else "higher is better"
    # two lines: one line did not fit the plot's height on a phone (390 px wide)
    fig.update_yaxes(title=f"{label}<br>({better})", type="log" if log_y else "linear")  # log ticks speak for themselves
    if log_y:
        fig.update_yaxes(dtick=1, minor=dict(showgrid=True, gridcolor="#F2F2F2"))
        lows = df.loc[df["method"] != _REFERENCE, "q05"].to_numpy(dtype=float)
        lows = lows[np.isfinite(lows) & (lows > 0)]
        if lows.size and lows.min() < 0.01:  # avoid SI prefixes such as "100µ" for small errors
            fig.update_yaxes(exponentformat="power")
    if title is None:
        title = f"Median {label[0].lower() + label[1:] if not label[:2].isupper() else label} vs {x}"  # short for phones
    if notes:
        title += "<br><span style='font-size:12px'>" + "; ".join(notes) + "</span>"
    fig = _layout(fig, title=title)
    if notes:  # room for the second title line above the rule's label
        fig.update_layout(margin=dict(t=95))
    return fig


def error_vs_epsilon_figure(summary: pd.DataFrame, *, metric: str | None = None, epsilon: float | None = None,
                            log_y: bool = True, title: str | None = None) -> go.Figure:
    """Error against epsilon (log axes) with the chosen epsilon marked; see :func:`sweep_figure`."""
    return sweep_figure(summary, x="epsilon", metric=metric, chosen=epsilon, log_x=True, log_y=log_y, title=title)


def error_vs_lam_figure(summary: pd.DataFrame, *, metric: str | None = None, lam: float | None = None,
                        log_y: bool = True, title: str | None = None) -> go.Figure:
    """Error against the ridge penalty lam at a fixed epsilon; ``lam = 0`` gets its own tick."""
    return sweep_figure(summary, x="lam", metric=metric, chosen=lam, log_x=True, log_y=log_y, title=title)


def error_vs_n_pub_figure(summary: pd.DataFrame, *, metric: str | None = None, n_pub: int | None = None,
                          log_y: bool = True, title: str | None = None) -> go.Figure:
    """Error against the public sample size n_pub at a fixed epsilon."""
    return sweep_figure(summary, x="n_pub", metric=metric, chosen=n_pub, log_x=True, log_y=log_y, title=title)


#: Display names of the second-moment matrices in the conditioning figure.
CONDITIONING_LABELS: dict[str, str] = {
    "raw": "raw X^T X (private rows)",
    "public": "public estimate Sigma_pub",
    "pmt": "after PMT: X~^T X~",
    "noisy": "noisy released A_priv",
}
#: Two-line axis labels of the bars (no overlap at any width).
_COND_SHORT: dict[str, str] = {
    "raw": "raw private<br>X^T X",
    "public": "public<br>Sigma_pub",
    "pmt": "after PMT<br>X~^T X~",
    "noisy": "noisy<br>A_priv",
}
_COND_COLORS = {"raw": "#E69F00", "public": "#56B4E9", "pmt": "#0072B2", "noisy": "#CC79A7"}


def conditioning_figure(kappas: Mapping[str, float], spectra: Mapping[str, np.ndarray] | None = None,
                        *, title: str | None = None, labels: Mapping[str, str] | None = None) -> go.Figure:
    """Condition numbers as bars (log axis) and, optionally, the normalised eigenvalue spectra.

    Parameters
    ----------
    kappas : mapping str -> float
        Condition numbers (largest / smallest eigenvalue, >= 1, or inf when singular/indefinite),
        keyed by ``"raw"``, ``"public"``, ``"pmt"``, ``"noisy"`` (other keys are drawn with their
        own name). NaN entries are skipped.
    spectra : mapping str -> ndarray of shape (d,), optional
        Eigenvalues of the same matrices; each is sorted descending and divided by its largest
        eigenvalue, so the curves compare shapes (a flat line at 1 = perfectly conditioned).
        Non-positive eigenvalues (possible for the noisy matrix) are listed in the title and not drawn.
    labels : mapping str -> str, optional
        Bar labels replacing the defaults (e.g. ``{"noisy": "noisy<br>Hessian"}`` for logistic regression).
        An infinite kappa (a noisy matrix that is not positive definite) is drawn as a hatched bar reaching
        above the others, labelled ``inf``, and named in the title.

    Returns
    -------
    plotly.graph_objects.Figure

    Examples
    --------
    >>> fig = conditioning_figure({"raw": 1e3, "pmt": 1.2}, {"raw": np.array([1.0, 1e-3])})
    >>> list(fig.data[0].customdata)
    ['raw X^T X (private rows)', 'after PMT: X~^T X~']
    """
    if not isinstance(kappas, Mapping):
        raise TypeError(f"kappas must be a mapping name -> condition number, got {type(kappas).__name__}")
    keys = [k for k, v in kappas.items() if v is not None and not (isinstance(v, float) and math.isnan(v))]
    short = {**_COND_SHORT, **(labels or {})}
    cols = 2 if spectra else 1
    # short subplot and axis titles: long ones ran into each other (the second y title sits in the gap under
    # the first subplot title) and past the plot height at the page's 390 px
    fig = make_subplots(rows=1, cols=cols, horizontal_spacing=0.16,
                        subplot_titles=("kappa = largest / smallest eigenvalue", "Eigenvalues / largest")[:cols])
    vals = [float(kappas[k]) for k in keys]
    finite_vals = [v for v in vals if math.isfinite(v) and v > 0]
    top = max(finite_vals) if finite_vals else 10.0
    # an infinite kappa (a noisy matrix that is not positive definite) is drawn as a hatched bar to the top
    shown = [v if math.isfinite(v) else top * 3.0 for v in vals]
    fig.add_trace(go.Bar(
        x=[short.get(k, k) for k in keys], y=shown,
        customdata=[short.get(k, k).replace("<br>", " ") if labels and k in labels else CONDITIONING_LABELS.get(k, k)
                    for k in keys],
        marker_color=[_COND_COLORS.get(k, "#999999") for k in keys],
        marker_pattern_shape=["" if math.isfinite(v) else "/" for v in vals],
        text=[f"{v:.3g}" if math.isfinite(v) else "inf" for v in vals], textposition="outside",
        hovertemplate="%{customdata}<br>kappa = %{text} (1 = perfectly conditioned)<extra></extra>", showlegend=False,
    ), row=1, col=1)
    fig.update_yaxes(type="log", title="kappa (log; 1 = ideal)", dtick=1, row=1, col=1)
    if shown:
        fig.update_yaxes(range=[0.0, max(1.0, math.log10(max(shown)) * 1.2 + 0.3)], row=1, col=1)
    notes = [f"{short.get(k, k).replace('<br>', ' ')}: not positive definite (kappa = inf), hatched"
             for k, v in zip(keys, vals) if not math.isfinite(v)]
    if spectra:
        for k, ev in spectra.items():
            ev = np.sort(np.asarray(ev, dtype=float).ravel())[::-1]
            if ev.size == 0 or ev[0] <= 0:
                notes.append(f"{CONDITIONING_LABELS.get(k, k)}: no positive eigenvalue")
                continue
            neg = int(np.sum(ev <= 0))
            if neg:
                notes.append(f"{CONDITIONING_LABELS.get(k, k)}: {neg} eigenvalue(s) <= 0 not drawn")
            rel = ev[ev > 0] / ev[0]
            fig.add_trace(go.Scatter(
                x=np.arange(1, rel.size + 1), y=rel, mode="lines+markers", name=CONDITIONING_LABELS.get(k, k),
                line=dict(color=_COND_COLORS.get(k, "#999999"), width=3 if k == "pmt" else 2),
                hovertemplate="eigenvalue #%{x}: %{y:.3g} x the largest<extra>" + CONDITIONING_LABELS.get(k, k) + "</extra>",
            ), row=1, col=2)
        fig.update_yaxes(type="log", title="relative eigenvalue (log)", dtick=1, exponentformat="power",
                         row=1, col=2)
        fig.update_xaxes(title="eigenvalue index (largest first)", dtick=1 if max((len(np.ravel(v)) for v in spectra.values()), default=0) <= 20 else None, row=1, col=2)
    fig.update_xaxes(tickangle=0, row=1, col=1)
    if title is None:
        title = "Conditioning of the second-moment matrices"
    if notes:
        title += "<br><span style='font-size:12px'>" + "; ".join(notes) + "</span>"
    fig = _layout(fig, title=title, height=480)
    fig.update_layout(margin=dict(t=115 if notes else 80))
    return fig


def _binned_bars(values: np.ndarray, bins: int, *, color: str, name: str, symbol: str, extra: str) -> go.Bar:
    """A histogram binned here (``bins`` equal-width bins over [min, max], ``numpy.histogram``), drawn as bars.

    The figure then carries ``bins`` counts instead of every row's value (thousands of rows made
    the figure JSON, the page's rerun and the HTML report hundreds of kB larger).
    """
    counts, edges = np.histogram(values, bins=bins)
    return go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges), marker_color=color, opacity=0.85,
                  marker_line_width=0, name=name, showlegend=False, customdata=np.column_stack([edges[:-1], edges[1:]]),
                  hovertemplate=f"{symbol} %{{customdata[0]:.3g}} to %{{customdata[1]:.3g}}<br>%{{y}} rows"
                                f"<extra>{extra}</extra>")


def truncation_figure(raw_norms: np.ndarray | None, pmt_norms: np.ndarray, *, radius: float,
                      clip_radius: float | None = None, frac_truncated: float | None = None,
                      frac_clipped: float | None = None, bins: int = 60, title: str | None = None) -> go.Figure:
    """Row-norm histograms before and after the PMT transform, with the radii drawn.

    Parameters
    ----------
    raw_norms : ndarray of shape (n,) or None
        L2 norms of the raw private rows (the space the DP-RR / DP-GD baselines clip in). Drawn on
        the left with the baseline clip radius ``clip_radius`` when given; ``None`` omits the panel.
    pmt_norms : ndarray of shape (n,)
        L2 norms of the whitened rows ``Sigma_pub^{-1/2} x_i`` *before* truncation.
    radius : float
        The PMT truncation radius R = sqrt(d (1 + ln(2n/eta))) (docs/specs/PMT.md section 2); rows beyond it are
        scaled onto the sphere of radius R.
    clip_radius : float, optional
        The baseline's raw-space clip radius C.
    frac_truncated, frac_clipped : float, optional
        Fractions of rows beyond R / C as reported by the engine (shown in the panel titles); when
        absent they are counted from the norms given.
    bins : int, default 60
        Equal-width bins over each panel's [min, max] (counted here with ``numpy.histogram``; the
        figure holds the counts, not the rows).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    ValueError
        If ``radius`` is not a positive finite number or ``pmt_norms`` is empty.

    Examples
    --------
    >>> fig = truncation_figure(np.array([1.0, 50.0]), np.array([1.0, 2.0, 9.0]), radius=5.0)
    >>> "1 of 3" in fig.layout.annotations[1].text
    True
    """
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a positive finite number, got {radius!r}")
    pmt_norms = np.asarray(pmt_norms, dtype=float).ravel()
    if pmt_norms.size == 0:
        raise ValueError("pmt_norms is empty: nothing to draw")
    n_trunc = int(np.sum(pmt_norms > radius))
    if frac_truncated is None:
        frac_truncated = n_trunc / pmt_norms.size
    panels = []
    if raw_norms is not None:
        raw_norms = np.asarray(raw_norms, dtype=float).ravel()
        if clip_radius is not None:
            n_clip = int(np.sum(raw_norms > clip_radius))
            if frac_clipped is None:
                frac_clipped = n_clip / raw_norms.size
            panels.append(f"Before: raw row norms ||x_i||<br><span style='font-size:12px'>baseline clip radius C = "
                          f"{clip_radius:.3g}: {n_clip} of {raw_norms.size} rows clipped ({100 * frac_clipped:.2f}%)</span>")
        else:
            panels.append("Before: raw row norms ||x_i||")
    panels.append(f"After the PMT transform: ||Sigma_pub^(-1/2) x_i||<br><span style='font-size:12px'>R = {radius:.3g}: "
                  f"{n_trunc} of {pmt_norms.size} rows truncated ({100 * frac_truncated:.2f}%)</span>")
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=panels, horizontal_spacing=0.1)
    col = 1
    if raw_norms is not None:
        fig.add_trace(_binned_bars(raw_norms, bins, color=METHOD_COLORS["DP-RR"], name="raw rows", symbol="||x||",
                                   extra="raw (feature units)"), row=1, col=1)
        if clip_radius is not None:
            fig.add_vline(x=float(clip_radius), line=dict(color="#D55E00", dash="dash", width=2), row=1, col=1,
                          annotation_text="C", annotation_position="top right")
        fig.update_xaxes(title="row norm (feature units)", row=1, col=1)
        fig.update_yaxes(title="rows", row=1, col=1)
        col = 2
    fig.add_trace(_binned_bars(pmt_norms, bins, color=METHOD_COLORS["PMT"], name="whitened rows", symbol="||x~||",
                               extra="whitened (no unit)"), row=1, col=col)
    fig.add_vline(x=radius, line=dict(color="#D55E00", dash="dash", width=2), row=1, col=col,
                  annotation_text="R", annotation_position="top right")
    fig.update_xaxes(title="whitened row norm (no unit; about sqrt(d) for typical rows)", row=1, col=col)
    fig.update_yaxes(title="rows", row=1, col=col)
    fig.update_annotations(font_size=14)
    fig = _layout(fig, title=title or "Truncation: how many rows stick out, before and after whitening", height=480)
    fig.update_layout(margin=dict(t=110))
    return fig


def headline_table(frame: pd.DataFrame, *, metric: str, epsilon: float) -> pd.DataFrame:
    """Median (and 25-75 % range) of ``metric`` per method at ``epsilon`` from a tidy sweep frame.

    Parameters
    ----------
    frame : DataFrame
        Tidy output of :func:`engine.pmt.sweep.run_sweep` (one row per method, epsilon, seed, ...).
    metric : str
        Metric column.
    epsilon : float
        The epsilon to read off; the nearest swept value is used (relative distance on the log scale).

    Returns
    -------
    DataFrame with columns ``method, epsilon, median, q25, q75, n_seeds`` (methods in legend order).

    Examples
    --------
    >>> f = pd.DataFrame({"method": ["PMT"] * 3, "epsilon": [1.0] * 3, "l2_error": [1.0, 2.0, 9.0]})
    >>> headline_table(f, metric="l2_error", epsilon=0.9)["median"].tolist()
    [2.0]
    """
    if metric not in frame.columns:
        raise ValueError(f"metric {metric!r} is not a column of the sweep frame; available: {sorted(frame.columns)}")
    eps_vals = np.unique(frame["epsilon"].to_numpy(dtype=float))
    finite = eps_vals[np.isfinite(eps_vals) & (eps_vals > 0)]
    if finite.size == 0:
        raise ValueError("the sweep frame has no finite positive epsilon")
    near = float(finite[np.argmin(np.abs(np.log(finite) - math.log(float(epsilon))))])
    sel = frame[(frame["epsilon"] == near) | ((frame["method"] == _REFERENCE) & ~np.isfinite(frame["epsilon"].astype(float)))]
    rows = []
    for method in _ordered_methods(sel["method"].unique()):
        v = sel.loc[sel["method"] == method, metric].astype(float).dropna()
        if v.empty:
            continue
        rows.append({"method": method, "epsilon": near, "median": float(v.median()), "q25": float(v.quantile(0.25)),
                     "q75": float(v.quantile(0.75)), "n_seeds": int(v.size)})
    return pd.DataFrame(rows, columns=["method", "epsilon", "median", "q25", "q75", "n_seeds"])


# --------------------------------------------------------------------------------------------------
# Data page (appended by the datasets engineer)
# --------------------------------------------------------------------------------------------------
def feature_scale_figure(df: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Dot chart of each numeric feature's standard deviation, on a log axis.

    Shows at a glance how differently scaled the features are (which drives the condition number
    that PMT is designed to tame). Features are sorted from the largest to the smallest scale; the
    hover text gives the mean, minimum and maximum as well. Dots, not bars: a bar on a log axis has
    no meaningful baseline. The axis spans at least two decades so small spreads are not magnified. Columns with zero spread cannot be
    drawn on a log axis and are listed in a note instead. Non-numeric columns are ignored.

    Parameters
    ----------
    df : pandas.DataFrame of shape (n_samples, n_columns)
        Features (booleans count as 0/1).
    title : str, optional
        Default: "Feature scales: standard deviation per feature (log axis)" plus the
        largest/smallest ratio.

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Scatter`` trace (markers; x = standard deviation, y = feature name), x axis of type "log".

    Raises
    ------
    ValueError
        If ``df`` has no numeric column or no rows.

    Examples
    --------
    >>> fig = feature_scale_figure(pd.DataFrame({"a": [0.0, 2.0], "b": [0.0, 200.0]}))
    >>> list(fig.data[0].y), [round(float(v), 6) for v in fig.data[0].x], fig.layout.xaxis.type
    (['b', 'a'], [100.0, 1.0], 'log')
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    num = df.select_dtypes(include=["number", "bool"]).astype(float)
    if num.shape[1] == 0 or num.shape[0] == 0:
        raise ValueError(f"df needs at least one numeric column and one row, got shape {df.shape} "
                         f"with {num.shape[1]} numeric columns")
    std = num.std(axis=0, ddof=0)
    order = std.sort_values(ascending=False).index
    positive = [c for c in order if std[c] > 0 and np.isfinite(std[c])]
    flat = [str(c) for c in order if not (std[c] > 0)]
    names = [str(c) for c in positive]
    stats = np.column_stack([num[positive].mean().to_numpy(), num[positive].min().to_numpy(),
                             num[positive].max().to_numpy()]) if positive else np.zeros((0, 3))
    fig = go.Figure(
        go.Scatter(
            x=std[positive].to_numpy(),
            y=names,
            mode="markers",
            marker=dict(color="#0072B2", size=11, line=dict(color="#FFFFFF", width=1)),
            customdata=stats,
            hovertemplate="<b>%{y}</b><br>standard deviation %{x:.4g}<br>mean %{customdata[0]:.4g}"
            "<br>min %{customdata[1]:.4g}, max %{customdata[2]:.4g}<extra></extra>",
            name="standard deviation",
        )
    )
    if title is None:
        title = "Feature scales: standard deviation per feature (log axis)"
        if len(positive) >= 2:
            title += f"; largest / smallest = {std[positive].max() / std[positive].min():.3g}"
    _layout(fig, title=title, height=max(300, 120 + 22 * len(names)))
    fig.update_layout(showlegend=False, margin=dict(l=10, r=20, t=60, b=60))
    fig.update_xaxes(type="log", title_text="standard deviation (units of each feature, log scale)",
                     showgrid=True, gridcolor="#DDDDDD")
    if positive:
        lo, hi = np.log10(float(std[positive].min())), np.log10(float(std[positive].max()))
        mid, half = (lo + hi) / 2, max((hi - lo) / 2 + 0.3, 1.0)
        fig.update_xaxes(range=[mid - half, mid + half])
    fig.update_yaxes(showgrid=True, gridcolor="#EEEEEE")
    fig.update_yaxes(autorange="reversed", automargin=True, title_text=None)
    if flat:
        fig.add_annotation(text=f"zero spread, not drawn: {', '.join(flat[:8])}{' ...' if len(flat) > 8 else ''}",
                           xref="paper", yref="paper", x=0, y=-0.12, showarrow=False, xanchor="left",
                           font=dict(size=12, color="#555555"))
    return fig
