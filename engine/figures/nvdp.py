"""Plotly figures of the NVDP explorer (no Streamlit in here).

Pure functions from engine results (per-pair Renyi-divergence values, accuracies, posterior
parameter arrays, the sentence inspector's tables) to :class:`plotly.graph_objects.Figure`.
Colours: clipped "#0072B2", unclipped "#D55E00" (:data:`engine.figures.pmt.METHOD_COLORS`, Okabe-Ito,
colour-blind safe); clip thresholds are drawn as dashed black rules.

Abbreviations used in titles: RD = Renyi divergence, BDP = Bayesian differential privacy,
NVIB = nonparametric variational information bottleneck.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.figures.pmt import METHOD_COLORS, _layout, _rgba

#: Largest marker count drawn as SVG (``go.Scatter``); more points use WebGL (``go.Scattergl``).
SVG_MAX_POINTS = 5000

__all__ = [
    "NVDP_COLORS",
    "rd_distribution_figure",
    "accuracy_figure",
    "posterior_histograms_figure",
    "inspector_figure",
    "paired_figure",
    "fmt_bound",
]

#: Series colours: the team's NVDP clipped / unclipped colours.
NVDP_COLORS: dict[str, str] = {"clipped": METHOD_COLORS["NVDP clipped"], "unclipped": METHOD_COLORS["NVDP unclipped"]}
_RULE = dict(color="#000000", dash="dash", width=2)


def fmt_bound(x: float, digits: int = 3) -> str:
    """A bound for display: ``inf`` as "infinite", NaN as "n/a", else ``digits`` significant digits.

    >>> fmt_bound(float("inf")), fmt_bound(0.012345), fmt_bound(float("nan")), fmt_bound(1234.5)
    ('infinite', '0.0123', 'n/a', '1.23e+03')
    """
    x = float(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "infinite" if x > 0 else "-infinite"
    return f"{x:.{digits}g}"


def _color(name: str, i: int) -> str:
    return NVDP_COLORS.get(name, METHOD_COLORS.get(name, ["#009E73", "#CC79A7", "#56B4E9"][i % 3]))


def rd_distribution_figure(
    series: Mapping[str, np.ndarray],
    *,
    form: str = "exact",
    bins: int = 40,
    unit: str | None = None,
    notes: Mapping[str, str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Distribution of the per-pair RD bound, one step histogram per series, on a log x axis.

    Parameters
    ----------
    series : mapping name -> ndarray of shape (n_pairs,)
        Per-pair bound values (``RDBoundResult.values``), e.g. ``{"unclipped": ..., "clipped": ...}``.
        Values <= 0 or non-finite cannot sit on a log axis: infinite pairs are counted in the
        legend entry, zero/negative and NaN pairs too.
    form : {"exact", "paper"}, default "exact"
        Only used for the axis title and units.
    bins : int, default 40
        Log-spaced bins shared by all series (>= 2).
    unit : str, optional
        x-axis unit text (default: "nats" for exact, "nats per position" for paper: the authors' dimension-averaged
        normalisation, said in the default title).
    notes : mapping name -> str, optional
        Text appended to a series' legend entry (e.g. the paper protocol's max after its outlier
        filter, which differs from the max over all pairs drawn here).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One filled step line per series (legend: name, pair count, max and mean) and one dashed
        vertical rule per series at its maximum over the finite pairs.

    Raises
    ------
    ValueError
        If ``series`` is empty, ``bins < 2`` or ``form`` is unknown.

    Examples
    --------
    >>> fig = rd_distribution_figure({"clipped": np.array([0.1, 0.2, np.inf]), "unclipped": np.array([1.0, 3.0])})
    >>> [t.name.split(":")[0] for t in fig.data]
    ['clipped', 'unclipped']
    >>> "1 infinite" in fig.data[0].name
    True
    """
    if not series:
        raise ValueError("series is empty: nothing to draw")
    if form not in ("exact", "paper"):
        raise ValueError(f"form must be 'exact' or 'paper', got {form!r}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f"bins must be an int >= 2, got {bins!r}")
    # short units: the axis title must fit a phone's figure width (about 330 px); the subtitle says the rest
    unit = unit or ("nats" if form == "exact" else "nats per position")
    arrays = {k: np.asarray(v, dtype=float).ravel() for k, v in series.items()}
    pos = np.concatenate([a[np.isfinite(a) & (a > 0)] for a in arrays.values()])
    if pos.size:
        lo, hi = float(pos.min()), float(pos.max())
        if hi <= lo * 1.0001:
            lo, hi = lo / 1.5, hi * 1.5
        edges = np.geomspace(lo, hi, int(bins) + 1)
    else:
        edges = np.geomspace(1e-3, 1.0, int(bins) + 1)
    fig = go.Figure()
    for i, (name, a) in enumerate(arrays.items()):
        c = _color(name, i)
        finite = a[np.isfinite(a) & (a > 0)]
        n_inf = int(np.isposinf(a).sum())
        n_other = int(a.size - finite.size - n_inf)
        counts, _ = np.histogram(finite, bins=edges)
        share = counts / max(a.size, 1)
        x = np.repeat(edges, 2)[1:-1]
        y = np.repeat(share, 2)
        mx = float(np.max(a[~np.isnan(a)])) if np.any(~np.isnan(a)) else float("nan")
        mean = float(np.mean(a[~np.isnan(a)])) if np.any(~np.isnan(a)) else float("nan")
        # short lines (a legend entry is not wrapped, and a phone's figure is about 330 px wide)
        label = f"{name}: {a.size} pairs<br>max {fmt_bound(mx)}, mean {fmt_bound(mean)}"
        if notes and name in notes:
            label += f"<br>{notes[name]}"
        if n_inf or n_other:
            label += "<br>" + ", ".join(([f"{n_inf} infinite"] if n_inf else [])
                                        + ([f"{n_other} zero or NaN"] if n_other else [])) + ", not drawn"
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line=dict(color=c, width=2), fill="tozeroy",
                                 fillcolor=_rgba(c, 0.18), name=label,
                                 hovertemplate="bound %{x:.3g}<br>share of pairs in this bin %{y:.1%}<extra>" + name + "</extra>"))
        if finite.size:
            fmax = float(finite.max())
            fig.add_vline(x=fmax, line=dict(color=c, dash="dash", width=1.5),
                          annotation_text=f"max {name}", annotation_position="top left" if i % 2 else "top right",
                          annotation_font_color=c)
    fig.update_xaxes(type="log", title=f"RD bound of a sentence pair ({unit})", exponentformat="power",
                     range=[math.log10(edges[0]) - 0.05, math.log10(edges[-1]) + 0.1])
    fig.update_yaxes(title="share of pairs", tickformat=".0%", rangemode="tozero")
    if title is None:
        # short lines: the title must fit a phone's figure width (about 330 px)
        how = "exact form, in nats" if form == "exact" else "paper form: dimension-averaged"
        title = (f"Renyi-divergence (RD) bound<br><sup>test-sentence pairs; {how}<br>"
                 "further left = harder to tell apart = more private</sup>")
    fig = _layout(fig, title=title, height=440)
    # the title's lines from the figure's top down (centred in the top margin, its last line reached into the plot
    # and met the y-axis title on a phone, where the plot is short)
    fig.update_layout(title=dict(yref="container", y=0.95, yanchor="top"))
    return fig


def accuracy_figure(
    accuracy: Mapping[str, float],
    history: Mapping[str, Sequence[float]] | None = None,
    *,
    chance: float | None = 0.5,
    n_test: int | None = None,
    title: str | None = None,
) -> go.Figure:
    """Test accuracy per model (bars) and validation accuracy per training epoch (lines).

    Parameters
    ----------
    accuracy : mapping name -> float in [0, 1]
        Test accuracy of each model under the chosen clipping.
    history : mapping name -> sequence of float, optional
        Validation accuracy after each epoch (``TrainedNVDP.history``); adds a right panel.
    chance : float or None, default 0.5
        Accuracy of guessing the majority class, drawn as a dotted rule.
    n_test : int, optional
        Number of test sentences (in the hover text and title). With it, each bar gets its 95 %
        Wilson interval as an error bar (:func:`engine.nvdp.headline.accuracy_interval`): on a small
        test set (an upload's 33 texts) the interval is wide and the bars may not differ.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    ValueError
        If ``accuracy`` is empty or a value lies outside [0, 1].

    Examples
    --------
    >>> fig = accuracy_figure({"unclipped": 0.8, "clipped": 0.82}, {"unclipped": [0.7, 0.8], "clipped": [0.75, 0.8]})
    >>> [round(v, 2) for v in fig.data[0].y]
    [0.8, 0.82]
    >>> ci = accuracy_figure({"clipped": 29 / 33}, n_test=33).data[0].error_y
    >>> round(ci.array[0], 3), round(ci.arrayminus[0], 3)
    (0.073, 0.152)
    """
    if not accuracy:
        raise ValueError("accuracy is empty: nothing to draw")
    for k, v in accuracy.items():
        if not (0.0 <= float(v) <= 1.0):
            raise ValueError(f"accuracy[{k!r}] must lie in [0, 1], got {v!r}")
    names = list(accuracy)
    cols = 2 if history else 1
    titles = [f"Test accuracy{f' ({n_test} sentences)' if n_test else ''}"] + (["Validation accuracy while training"] if history else [])
    fig = make_subplots(rows=1, cols=cols, subplot_titles=titles, horizontal_spacing=0.12,
                        column_widths=[0.45, 0.55] if cols == 2 else None)
    err, hover = None, "%{x}: %{y:.1%} of the test sentences classified correctly<extra></extra>"
    if n_test:
        from engine.nvdp.headline import accuracy_interval

        ci = [accuracy_interval(float(accuracy[k]), int(n_test)) for k in names]
        err = dict(type="data", symmetric=False, array=[hi - float(accuracy[k]) for k, (_, hi) in zip(names, ci)],
                   arrayminus=[float(accuracy[k]) - lo for k, (lo, _) in zip(names, ci)], color="#333333", thickness=1.5)
        hover = ("%{x}: %{y:.1%} of " + str(int(n_test)) + " test items classified correctly "
                 "(95 % Wilson interval %{customdata})<extra></extra>")
    fig.add_trace(go.Bar(x=names, y=[float(accuracy[k]) for k in names], marker_color=[_color(k, i) for i, k in enumerate(names)],
                         text=[f"{100 * float(accuracy[k]):.1f}%" for k in names], textposition="outside",
                         showlegend=False, name="test accuracy", error_y=err,
                         customdata=[f"{100 * lo:.1f}-{100 * hi:.1f}%" for lo, hi in ci] if n_test else None,
                         hovertemplate=hover),
                  row=1, col=1)
    if chance is not None:
        fig.add_hline(y=float(chance), line=dict(color="#555555", dash="dot", width=1.5), row=1, col=1,
                      annotation_text="chance", annotation_position="bottom right")
    fig.update_yaxes(title="accuracy", tickformat=".0%", range=[0, 1.08], row=1, col=1)
    if history:
        for i, (k, h) in enumerate(history.items()):
            h = [float(v) for v in h]
            fig.add_trace(go.Scatter(x=list(range(1, len(h) + 1)), y=h, mode="lines+markers", name=k,
                                     line=dict(color=_color(k, i), width=2),
                                     hovertemplate="epoch %{x}: %{y:.1%}<extra>" + k + "</extra>"), row=1, col=2)
        fig.update_xaxes(title="epoch", dtick=1, row=1, col=2)
        fig.update_yaxes(title="validation accuracy", tickformat=".0%", row=1, col=2)
    if title is None:
        title = "Utility: how often the sentiment (positive / negative) is predicted correctly"
    return _layout(fig, title=title, height=420)


def posterior_histograms_figure(
    before: Mapping[str, np.ndarray],
    after: Mapping[str, np.ndarray] | None = None,
    *,
    C_mu: float | None = None,
    sigma_min: float | None = None,
    sigma_max: float | None = None,
    alpha_min: float | None = None,
    alpha_max: float | None = None,
    fractions: Mapping[str, float] | None = None,
    bins: int = 50,
    title: str | None = None,
) -> go.Figure:
    """Histograms of ||mu||, sigma and alpha of the token components, with the clip thresholds drawn.

    Parameters
    ----------
    before : mapping with arrays ``mu_norm``, ``sigma``, ``alpha``
        Unclipped values (``engine.nvdp.diagnostics.posterior_distributions``).
    after : mapping with the same arrays, optional
        The values after clipping (drawn as a second series).
    C_mu, sigma_min, sigma_max, alpha_min, alpha_max : float, optional
        Thresholds to draw (``alpha_min`` = 0 is drawn too; None is not drawn).
    fractions : mapping, optional
        ``frac_mu``, ``frac_sigma``, ``frac_sigma_high``, ``frac_alpha_low``, ``frac_alpha_high``
        (``ClipStats.to_dict()``), shown in the panel titles.
    bins : int, default 50
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        Three panels.

    Raises
    ------
    ValueError
        If an array is missing from ``before``.

    Examples
    --------
    >>> b = {"mu_norm": np.array([1.0, 6.0]), "sigma": np.array([0.2, 1.0]), "alpha": np.array([0.5, 2.0])}
    >>> fig = posterior_histograms_figure(b, C_mu=5.0, sigma_min=0.3, alpha_max=1.0, fractions={"frac_mu": 0.5})
    >>> "50.0%" in fig.layout.annotations[0].text
    True
    """
    for k in ("mu_norm", "sigma", "alpha"):
        if k not in before:
            raise ValueError(f"before is missing the array {k!r} (expected mu_norm, sigma, alpha)")
    f = dict(fractions or {})

    def pct(key):
        return f"{100 * float(f[key]):.1f}%" if key in f else None

    # Each cap on its own short line, and short two-line axis titles: a panel gets a third of the
    # figure's width, which in presenter mode (larger font) is about 200 px.
    t_mu = "||mu|| per token"
    if C_mu is not None:
        t_mu += f"<br><span style='font-size:12px'>C_mu = {C_mu:.3g}</span>" + (
            f"<br><span style='font-size:12px'>{pct('frac_mu')} of tokens shrunk</span>" if pct("frac_mu") else "")
    t_sig = "sigma per dimension"
    parts = []
    if sigma_min is not None:
        parts.append(f"floor {sigma_min:.3g}" + (f": {pct('frac_sigma')} raised" if pct("frac_sigma") else ""))
    if sigma_max is not None:
        parts.append(f"cap {sigma_max:.3g}" + (f": {pct('frac_sigma_high')} lowered" if pct("frac_sigma_high") else ""))
    if parts:
        t_sig += "".join(f"<br><span style='font-size:12px'>{p}</span>" for p in parts)
    t_a = "alpha per token"
    parts = []
    if alpha_min is not None:
        parts.append(f"min {alpha_min:.3g}" + (f": {pct('frac_alpha_low')} raised" if pct("frac_alpha_low") else ""))
    if alpha_max is not None:
        parts.append(f"max {alpha_max:.3g}" + (f": {pct('frac_alpha_high')} lowered" if pct("frac_alpha_high") else ""))
    if parts:
        t_a += "".join(f"<br><span style='font-size:12px'>{p}</span>" for p in parts)
    fig = make_subplots(rows=1, cols=3, subplot_titles=[t_mu, t_sig, t_a], horizontal_spacing=0.07)
    keys = ("mu_norm", "sigma", "alpha")
    units = ("mean length ||mu||<br>(L2 norm, 384 dims)", "std sigma<br>(prior: 1)", "pseudo-count alpha<br>(prior: 1)")
    for col, (k, unit) in enumerate(zip(keys, units), start=1):
        b = np.asarray(before[k], dtype=float)
        b = b[np.isfinite(b)]
        series = [("before clipping", b, NVDP_COLORS["unclipped"])]
        if after is not None and k in after:
            a = np.asarray(after[k], dtype=float)
            series.append(("after clipping", a[np.isfinite(a)], NVDP_COLORS["clipped"]))
        allv = np.concatenate([s[1] for s in series]) if series else b
        lo, hi = (float(allv.min()), float(allv.max())) if allv.size else (0.0, 1.0)
        for th in (C_mu,) if k == "mu_norm" else (sigma_min, sigma_max) if k == "sigma" else (alpha_min, alpha_max):
            if th is not None:
                lo, hi = min(lo, float(th)), max(hi, float(th))
        if hi <= lo:
            hi = lo + 1.0
        size = (hi - lo) / bins
        edges = lo + size * np.arange(bins + 2)
        centres = 0.5 * (edges[:-1] + edges[1:])
        for name, v, c in series:
            # binned here (not by Plotly in the browser): the figure carries 2 x 51 numbers per panel instead of
            # every value, which keeps a slider rerun fast
            counts, _ = np.histogram(np.clip(v, edges[0], edges[-1]), bins=edges)
            pct = 100.0 * counts / max(v.size, 1)
            fig.add_trace(go.Bar(x=centres, y=pct, width=size, name=name, marker_color=c, opacity=0.55,
                                 showlegend=col == 1, legendgroup=name, customdata=np.stack([edges[:-1], edges[1:]], -1),
                                 hovertemplate="%{customdata[0]:.3g} to %{customdata[1]:.3g}<br>%{y:.1f}% of values"
                                 "<extra>" + name + "</extra>"),
                          row=1, col=col)
        fig.update_xaxes(title=unit, range=[lo - size, hi + 2 * size], row=1, col=col)
        fig.update_yaxes(title="% of values" if col == 1 else None, row=1, col=col)
    for col, th, label in ((1, C_mu, "C_mu"), (2, sigma_min, "floor"), (2, sigma_max, "cap"),
                           (3, alpha_min, "alpha_min"), (3, alpha_max, "alpha_max")):
        if th is not None:
            fig.add_vline(x=float(th), line=_RULE, row=1, col=col, annotation_text=label,
                          annotation_position="top right" if label not in ("floor", "alpha_min") else "bottom right")
    fig.update_layout(barmode="overlay")
    if title is None:
        title = ("Posterior parameters of the test sentences' tokens, before and after clipping"
                 "<br><sup>dashed rules = your caps; values beyond them are moved onto them</sup>")
    fig = _layout(fig, title=title, height=470)
    fig.update_layout(margin=dict(t=175))
    return fig


def inspector_figure(tables: Sequence[pd.DataFrame], names: Sequence[str] = ("sentence A", "sentence B"), *,
                     C_mu: float | None = None, alpha_max: float | None = None, title: str | None = None) -> go.Figure:
    """Per-token pseudo-counts alpha and mean lengths ||mu|| of two sentences, before and after clipping.

    Parameters
    ----------
    tables : sequence of 2 DataFrames
        ``PairInspection.components`` (columns token, alpha_before, alpha, mu_norm_before, mu_norm, clipped).
    names : sequence of 2 str
    C_mu, alpha_max : float, optional
        Thresholds drawn as dashed rules.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        2 x 2 panels: rows = sentences, columns = alpha and ||mu||; light bars before, solid after.

    Raises
    ------
    ValueError
        If ``tables`` does not hold two tables with the needed columns.

    Examples
    --------
    >>> t = pd.DataFrame({"token": ["(prior)", "hi"], "alpha_before": [1.0, 2.0], "alpha": [1.0, 1.0],
    ...                   "mu_norm_before": [0.0, 7.0], "mu_norm": [0.0, 5.0], "clipped": ["", "mean, alpha high"]})
    >>> len(inspector_figure([t, t], C_mu=5.0, alpha_max=1.0).data)
    8
    """
    tables = list(tables)
    need = {"token", "alpha_before", "alpha", "mu_norm_before", "mu_norm", "clipped"}
    if len(tables) != 2 or any(not isinstance(t, pd.DataFrame) or need - set(t.columns) for t in tables):
        raise ValueError(f"tables must be two DataFrames with columns {sorted(need)}")
    fig = make_subplots(rows=2, cols=2, vertical_spacing=0.2, horizontal_spacing=0.08,
                        subplot_titles=[f"{names[0]}: pseudo-count alpha per token", f"{names[0]}: mean length ||mu||",
                                        f"{names[1]}: pseudo-count alpha per token", f"{names[1]}: mean length ||mu||"])
    for r, t in enumerate(tables, start=1):
        labels = [f"{i}:{tok}" for i, tok in enumerate(t["token"])]
        for c, (kb, ka) in enumerate((("alpha_before", "alpha"), ("mu_norm_before", "mu_norm")), start=1):
            show = r == 1 and c == 1
            fig.add_trace(go.Bar(x=labels, y=t[kb], name="before clipping", marker_color=_rgba(NVDP_COLORS["unclipped"], 0.45),
                                 showlegend=show, legendgroup="before", customdata=t["clipped"],
                                 hovertemplate="%{x}: %{y:.3g}<br>clipped by: %{customdata}<extra>before</extra>"), row=r, col=c)
            fig.add_trace(go.Bar(x=labels, y=t[ka], name="after clipping", marker_color=NVDP_COLORS["clipped"],
                                 showlegend=show, legendgroup="after", customdata=t["clipped"],
                                 hovertemplate="%{x}: %{y:.3g}<br>clipped by: %{customdata}<extra>after</extra>"), row=r, col=c)
        if alpha_max is not None:
            fig.add_hline(y=float(alpha_max), line=_RULE, row=r, col=1, annotation_text="alpha_max", annotation_position="top left")
        if C_mu is not None:
            fig.add_hline(y=float(C_mu), line=_RULE, row=r, col=2, annotation_text="C_mu", annotation_position="top left")
    fig.update_layout(barmode="group")
    fig.update_xaxes(tickangle=-45, tickfont=dict(size=10))
    if title is None:
        title = "What the bottleneck keeps of each token (component 0 is the prior component)"
    fig = _layout(fig, title=title, height=620)
    fig.update_layout(legend=dict(y=-0.25))
    return fig


_FORM_TITLES = {"paper": "paper protocol", "exact": "exact form (nats)"}
#: Font size of the panels' titles (the ``<sup>`` lines are 70 % of it): two panels side by side on a phone
#: (390 px) leave about 130 px per title, so every line is kept under about 24 characters.
PANEL_TITLE_SIZE = 14


def paired_figure(comparisons: Sequence, *, kind: str = "scatter", label: str = "clipped") -> go.Figure:
    """The headline: clipped vs unclipped RD on the same pairs, one panel per form.

    Parameters
    ----------
    comparisons : sequence of engine.nvdp.headline.PairedComparison
        One per form (``.form`` "paper" or "exact"), from :func:`engine.nvdp.headline.paired_comparison`.
    kind : {"scatter", "diff"}, default "scatter"
        ``"scatter"``: each pair finite on both sides is a point (x unclipped, y clipped) with the
        diagonal y = x, so points below it are pairs that clipping makes harder to tell apart.
        ``"diff"``: the distribution of the per-pair difference clipped - unclipped, with a rule
        at 0 (left of it: clipping lowers the RD).
    label : str, default "clipped"
        Name of the clipped side ("clipped" or "clipped at release").

    Returns
    -------
    plotly.graph_objects.Figure
        One column per comparison; each panel's title counts the pairs where clipping lowers /
        raises the RD and the pairs with no finite bound on each side.

    Raises
    ------
    ValueError
        No comparison, or an unknown ``kind``.
    """
    comparisons = list(comparisons)
    if not comparisons:
        raise ValueError("comparisons is empty: pass one PairedComparison per form")
    if kind not in ("scatter", "diff"):
        raise ValueError(f"kind must be 'scatter' or 'diff'; got {kind!r}")
    titles = []
    for c in comparisons:
        # short lines per panel: on a phone side-by-side panels leave about 130 px for each title (longer lines
        # overlapped the neighbour's and ran off the figure); "infinite: a vs b" is clipped vs unclipped, as the
        # axes are (y clipped, x unclipped)
        titles.append(f"{_FORM_TITLES.get(c.form, c.form)}<br><sup>{c.n_pairs} pairs, with clipping<br>"
                      f"lower on {c.n_lower}, higher on {c.n_higher}<br>"
                      f"infinite: {c.n_inf_clipped} vs {c.n_inf_unclipped}</sup>")
    fig = make_subplots(rows=1, cols=len(comparisons), subplot_titles=titles, horizontal_spacing=0.2)
    fig.update_annotations(font_size=PANEL_TITLE_SIZE)
    color = NVDP_COLORS["clipped"]
    for i, c in enumerate(comparisons, start=1):
        if kind == "scatter":
            x = np.asarray(c.unclipped, dtype=float)
            y = np.asarray(c.clipped, dtype=float)
            log = x.size > 0 and bool(np.all(x > 0) and np.all(y > 0))
            # SVG up to a few thousand points: WebGL is software-rendered in many browsers (headless, projector
            # laptops) and costs a context per figure; beyond SVG_MAX_POINTS WebGL draws faster
            trace = go.Scatter if x.size <= SVG_MAX_POINTS else go.Scattergl
            fig.add_trace(trace(x=x, y=y, mode="markers", marker=dict(color=color, size=5, opacity=0.55),
                                name=f"{c.form}: one point per pair", showlegend=False,
                                hovertemplate="unclipped %{x:.4g}<br>" + label + " %{y:.4g}<extra></extra>"),
                          row=1, col=i)
            if x.size:
                lo = float(min(x.min(), y.min()))
                hi = float(max(x.max(), y.max()))
                fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=_RULE, showlegend=False,
                                         hoverinfo="skip", name="y = x"), row=1, col=i)
            axis = dict(type="log", dtick=1) if log else dict(type="linear", nticks=4)  # decades only: room on a phone
            fig.update_xaxes(title_text="RD unclipped", row=1, col=i, **axis)
            fig.update_yaxes(title_text=f"RD {label}", row=1, col=i, **axis)
        else:
            d = np.asarray(c.diff, dtype=float)
            fig.add_trace(go.Histogram(x=d, nbinsx=40, marker_color=color, opacity=0.8, showlegend=False,
                                       name=f"{c.form}: {label} - unclipped",
                                       hovertemplate="difference %{x}<br>%{y} pairs<extra></extra>"), row=1, col=i)
            fig.add_vline(x=0.0, line=_RULE, row=1, col=i)
            med = "n/a" if not np.isfinite(c.median_diff) else f"{c.median_diff:.3g}"
            fig.update_xaxes(title_text=f"RD {label} - RD unclipped (median {med})", row=1, col=i)
            fig.update_yaxes(title_text="pairs", row=1, col=i)
    _layout(fig, title=None, height=400)
    # no legend here: a vertical one, so that the page's sizing keeps no room for a legend under the plot
    fig.update_layout(margin=dict(t=110, b=60), showlegend=False, legend=dict(orientation="v"))
    return fig


def certified_figure(clip, *, empirical_max: float | None = None, n_components: int = 49, d: int = 384,
                     delta: float = 1e-5, title: str | None = None) -> go.Figure:
    """The certified bound of ``clip`` split into its terms (log scale), next to the empirical worst pair.

    Bars: the mean term (the whole 2 C_mu on one dimension, K - 1 components), the variance terms
    ((K - 1) d G*) and the Dirichlet term (its upper value), in nats, from
    :func:`engine.nvdp.certified.what_it_takes`; a dashed line at the empirical maximum over the
    evaluated pairs (exact form) when given. The title gives the total and the (epsilon, delta).
    An infinite term is drawn as a red bar labelled "unbounded".

    Examples
    --------
    >>> from engine.nvdp.clipping import ClipConfig
    >>> fig = certified_figure(ClipConfig.finite(C_mu=1.0), empirical_max=300.0)
    >>> list(fig.data[0].x)
    ['mean (C_mu)', 'variance (sigma range)', 'Dirichlet (alpha range)']
    """
    from engine.nvdp.certified import certified_bound, certified_epsilon, what_it_takes

    b = certified_bound(clip, n_components=n_components, d=d)
    w = what_it_takes(clip, 8.0, delta=delta, n_components=n_components, d=d)
    e = certified_epsilon(clip, delta=delta, n_components=n_components, d=d)
    names = ["mean (C_mu)", "variance (sigma range)", "Dirichlet (alpha range)"]
    vals = [w["terms"]["mean"], w["terms"]["variance"], w["terms"]["dirichlet"]]
    finite = [v if math.isfinite(v) else None for v in vals]
    top = max([v for v in finite if v] or [1.0])
    fig = go.Figure(go.Bar(x=names, y=[v if v is not None else top * 10 for v in finite],
                           marker_color=["#4c78a8" if v is not None else "#d62728" for v in finite],
                           text=[f"{v:.3g} nats" if v is not None else "unbounded" for v in finite], textposition="outside",
                           hovertemplate="%{x}: %{text}<extra></extra>", showlegend=False))
    if empirical_max is not None and math.isfinite(empirical_max) and empirical_max > 0:
        fig.add_hline(y=float(empirical_max), line=dict(color="#555555", dash="dash", width=1.5),
                      annotation_text=f"worst evaluated pair {empirical_max:.3g}", annotation_position="top left")
    fig.update_yaxes(type="log", title="nats (log scale)")
    if title is None:
        tot = "unbounded" if not math.isfinite(b.total) else f"{b.total:.3g} nats"
        eps = "infinite" if not math.isfinite(e["epsilon"]) else f"{e['epsilon']:.3g} (order {e['order']:.3g})"
        title = f"Certified bound over any two inputs: {tot}; epsilon at delta {delta:g}: {eps}"
    return _layout(fig, title=title, height=380)
