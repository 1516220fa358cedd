"""The PMT page's headline: the metric picker, the data computed on and the numbers at the chosen epsilon.

Median error per method (:func:`headline`, under the verdict), then, under the tabs (:func:`diagnostics`),
PMT against the best baseline as a ratio, kappa after PMT (raw kappa beside it), the fraction of rows
truncated and mu (docs/specs/DASHBOARD.md, "Layout per page"): the verdict, the method numbers and the main
figure share the first screen at 1440 x 900. Every number comes from the cached sweep and diagnostics
(:mod:`ui.pmt.run`); nothing is computed here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from engine.figures import pmt as plots
from engine.markup import md_escape
from ui.common import figure_cache as FC
from ui.pmt.compute import core as C
from ui.common.layout import NO_ARROW
from ui.pmt.compute.headline import rows
from ui.pmt.compute.view import PMTView
from ui.common.settings import DEFAULTS
from ui.common.settings import K

ss = st.session_state


@dataclass(frozen=True)
class Headline:
    """What the tabs and the export reuse of the headline.

    Attributes
    ----------
    metric : str
        The chosen error metric (a column of the sweep frames).
    label : str
        Its display label (:func:`engine.figures.pmt.metric_label`).
    head : pandas.DataFrame
        One row per method at the chosen epsilon (median and quartiles over seeds).
    ratio_text : str
        PMT's median over the best baseline's, formatted ("n/a" without a baseline).
    ratio_help : str
        What the ratio means (its tooltip).
    """

    metric: str
    label: str
    head: pd.DataFrame
    ratio_text: str
    ratio_help: str = ""


def headline(view: PMTView, task: str, presenter: bool) -> Headline:
    """Draw the headline heading, the metric picker and the metrics row(s); return what the tabs reuse.

    Parameters
    ----------
    view : PMTView
        The view (:func:`ui.pmt.run.compute`).
    task : str
        The page's task (its metrics are offered).
    presenter : bool
        Presenter mode: one row of methods and the ratio, shorter method names.

    Returns
    -------
    Headline
    """
    choice = view.choice
    metric_cols = [m for m in C.metrics_for(task) if m in view.results.eps.columns]
    # ---- headline metrics (above the fold at 1440 x 900: heading and metric picker share one row) ----
    metric = ss.get(K.metric, DEFAULTS[K.metric])
    from_link = ss.pop(K.url_metric_pending, False)
    if metric not in metric_cols:
        if from_link:  # a link's metric of another task: said, not replaced silently
            st.warning(f"The link's metric={md_escape(metric)} does not apply to {C.TASK_LABELS[task].lower()}; "
                       f"showing {metric_cols[0]} instead.", icon=":material/link_off:")
        metric = ss[K.metric] = metric_cols[0]
    head = rows(view, metric)
    label = plots.metric_label(metric)
    unit = plots.METRICS.get(metric, ("", "", True))[1]
    lower_better = plots.METRICS.get(metric, ("", "", True))[2]
    ratio = C.pmt_vs_best(head, lower_better=lower_better)
    if metric in C.REFERENCE_IS_TARGET:  # the non-private fit is the target: its error is 0 by definition
        head = head[head["method"] != "Non-private"]
    h_l, h_r = st.columns([5, 2], vertical_alignment="center")
    from ui.common.verdict import data_line

    better = f"{'lower' if lower_better else 'higher'} is better"
    n_warn = len(view.warnings)
    # presenter mode (larger text): one line each, so that the figure stays on the first screen
    h_l.markdown(f"**Median {label[0].lower() + label[1:] if not label[:2].isupper() else label} at epsilon = "
                 f"{choice.epsilon:g}**" + ("" if presenter else f" ({better})")
                 + (f" · :orange[**{n_warn} warning{'s' * (n_warn > 1)} "
                    f"{'below' if presenter else 'under the figure'}**]" if n_warn else ""),
                 help=f"Median over {choice.seeds} noise seeds at your epsilon ({better}). Unit: {unit}.")
    # the data computed on, named where the numbers are (as the sidebar); presenter: short, beside the picker
    if presenter:
        with h_l:
            data_line(view, short=True)
    else:
        data_line(view)
    h_r.selectbox("Error metric", metric_cols, format_func=plots.metric_label,
                  label_visibility="collapsed", key=K.metric, persist_state="session",
                  help="The error metric of the headline numbers and the figures: "
                  + "; ".join(f"{plots.metric_label(m)}: {plots.METRICS.get(m, ('', ''))[1]}" for m in metric_cols))
    ratio_text = "n/a" if ratio is None else C.fmt_ratio(ratio[0])
    ratio_help = (("PMT's median error divided by that of the best baseline, the public-only fit included "
                   f"({'none selected' if ratio is None else ratio[1]}); below 1 means PMT is better.")
                  if lower_better else "PMT's median divided by the best baseline's; above 1 means PMT is better.")
    from ui.pmt.compute.trust import reference_diverged

    # the coefficient L2 error beside a prediction metric; a diverged logistic reference flagged beside L2 numbers
    l2 = (None if metric in C.REFERENCE_IS_TARGET or "l2_error" not in view.results.eps_point.columns else
          rows(view, "l2_error").set_index("method")["median"])
    ref_bad = task == "classification" and reference_diverged(view.results.eps_point)
    row1 = st.columns(max(len(head), 1) + int(presenter))
    for c, (_, row) in zip(row1, head.iterrows()):
        short = row["method"].replace(" (oracle C, non-private tuning)", " oracle")
        if presenter:  # five numbers in one row for a room: the shortest names that stay unambiguous
            short = {"Public-only": "Public", "PMT (paper solver)": "PMT paper"}.get(short, short)
        beside = {}
        if not presenter and row["method"] != "Non-private":
            if l2 is not None and row["method"] in l2.index:
                beside = {"delta": f"L2 {l2[row['method']]:.3g}" + (" (diverged reference)" if ref_bad else "")}
            elif ref_bad:
                beside = {"delta": "vs a diverged reference"}
        if beside:
            beside.update(delta_color="off", **NO_ARROW)
        c.metric(short, f"{row['median']:.3g}", **beside,
                 help=f"{plots.METHOD_LONG_NAMES.get(row['method'], row['method'])}. Median {label.lower()} over "
                 f"{row['n_seeds']} seeds at epsilon = {row['epsilon']:g}; the middle half of the seeds lies between "
                 f"{row['q25']:.3g} and {row['q75']:.3g}. Unit: {unit}.")
    if presenter:  # one row for a room: the methods and the ratio
        row1[-1].metric("PMT / best", ratio_text, help="PMT / best baseline: " + ratio_help)
    return Headline(metric=metric, label=label, head=head, ratio_text=ratio_text, ratio_help=ratio_help)


def diagnostics(view: PMTView, hl: Headline, presenter: bool) -> None:
    """The second row of numbers (normal mode): PMT / best baseline, kappa after PMT (raw kappa beside it), the
    rows truncated and mu. Drawn under the tabs, so that the verdict, the method numbers and the main figure
    share the first screen at 1440 x 900; presenter mode shows the ratio in the first row instead."""
    if presenter:
        return
    choice, diag = view.choice, view.diag
    r1, r2, r3, r4 = st.columns(4)
    r1.metric("PMT / best baseline", hl.ratio_text, help=hl.ratio_help)
    r2.metric("kappa after PMT", f"{diag.kappa_pmt:.3g}", delta=f"raw kappa {diag.kappa_raw:.3g}",
              delta_color="off", **NO_ARROW,
              help="Condition number (largest / smallest eigenvalue) of the private second-moment matrix "
              "X^T X after the PMT transform, and before it (raw). 1 = perfectly conditioned, like round data.")
    r3.metric("rows truncated", f"{100 * diag.frac_truncated:.2f}%",
              help=f"Fraction of private rows longer than R = {diag.radius:.3g} after whitening; they are "
              "scaled onto the sphere of radius R.")
    r4.metric("mu (Gaussian DP)", f"{diag.mu:.3g}",
              help=f"The total Gaussian-differential-privacy budget that (epsilon = {choice.epsilon:g}, delta = "
              f"{choice.delta:g}) converts to; every method spends exactly this (see the ledger).")
