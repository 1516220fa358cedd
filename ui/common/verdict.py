"""The verdict sentence at the top of the PMT and NVDP results: computed by the engine, coloured here.

:func:`pmt_verdict` gathers the headline numbers of the PMT view (the medians over seeds at the chosen
epsilon, the public condition numbers, the rows PMT would need, the accuracy against the majority class)
and calls :func:`engine.figures.verdict.pmt_verdict`; :func:`show` draws the sentence in its tone's colour
in a container keyed ``verdict`` (the browser tests find it there).
"""

from __future__ import annotations

import streamlit as st

from engine.figures import pmt as plots
from engine.figures.verdict import NON_PRIVATE_NOTE, VERDICT_NOTE, Verdict
from engine.figures.verdict import pmt_verdict as _pmt_verdict
from ui.pmt.compute import core as C
from ui.pmt.compute.view import PMTView

#: Tone -> Streamlit markdown colour (and the report's CSS class).
COLOURS = {"good": "green", "bad": "red", "neutral": "blue"}
ICONS = {"good": ":material/check_circle:", "bad": ":material/error:", "neutral": ":material/info:"}


def pmt_verdict(view: PMTView, metric: str, head) -> Verdict:
    """The verdict of a PMT view (see :func:`engine.figures.verdict.pmt_verdict`).

    Parameters
    ----------
    view : PMTView
        The view (:func:`ui.pmt.run.compute`).
    metric : str
        The headline metric.
    head : DataFrame
        The headline rows at the chosen epsilon (:class:`ui.pmt.headline.Headline` ``head``, :func:`ui.pmt.compute.headline.rows`).
    """
    spec, diag, prep = view.spec, view.diag.values, view.prep
    lower_better = plots.METRICS.get(metric, ("", "", True))[2]
    accuracy = majority = None
    if view.choice.task == "classification" and "accuracy" in view.results.eps_point.columns:
        from ui.pmt.compute.headline import rows

        acc = rows(view, "accuracy")
        accuracy = dict(zip(acc["method"], acc["median"].astype(float)))
        majority = C.majority_class_accuracy(prep)[1]
    ref = C.no_data_reference(prep, spec, metric)
    return _pmt_verdict(head, metric_label=plots.metric_label(metric), lower_better=lower_better,
                        epsilon=view.choice.epsilon, n_priv=prep.n_priv, n_pub=prep.n_pub,
                        kappa_raw=diag.get("kappa_raw"), kappa_pmt=diag.get("kappa_pmt"),
                        n_needed=C.n_needed(prep, diag), accuracy=accuracy, majority_accuracy=majority,
                        reference=None if ref is None else ref[0],
                        reference_label="a constant prediction" if ref is None else ref[1],
                        r2_reference=ref[0] ** 2 if ref is not None and metric == "rmse" else None)


def markdown(v: Verdict) -> str:
    """The sentence as coloured Streamlit markdown (brackets escaped so they cannot end the colour)."""
    text = v.text.replace("[", "(").replace("]", ")").replace("$", "\\$")
    return f":{COLOURS[v.tone]}[**{text}**]"


def show(v: Verdict, slot=None, n: int = 0) -> None:
    """Draw the verdict (into ``slot`` if given): a bordered container keyed ``verdict_<tone>`` (``_<n>`` added
    for a redraw into the same slot within one run, since keys are unique per run)."""
    target = slot if slot is not None else st
    with target.container(key=f"verdict_{v.tone}" + (f"_{n}" if n else ""), border=True):
        st.markdown(markdown(v))
        # its privacy label, in every mode (presenter mode included): the verdict is a non-private diagnostic
        st.caption(verdict_label(v), help=VERDICT_NOTE)


def verdict_label(v: Verdict) -> str:
    """The caption under the verdict sentence: its privacy label and why."""
    return f":gray-badge[{v.privacy}] this sentence compares errors on held-out private rows, without noise"


def non_private_badge(presenter: bool = False) -> None:
    """The "non-private diagnostic" label under the PMT headline (a grey badge and the note); shorter in presenter
    mode, never hidden."""
    what = ("verdict, kappas, rows truncated and every error" if not presenter else "verdict and every error")
    st.caption(f":gray-badge[non-private diagnostic] {what}: from the private rows without noise, never released",
               help=NON_PRIVATE_NOTE + " " + VERDICT_NOTE)


def data_line(view: PMTView, short: bool = False) -> None:
    """One line under the verdict naming the data the numbers are computed on (the sidebar names the same);
    ``short`` for presenter mode (its larger text), where the sidebar is hidden."""
    ds, prep = view.ds, view.prep
    if short:
        st.caption(f":material/table: **{ds.name}**: {ds.n:,} rows, {prep.n_pub:,} public rows, {prep.n_priv:,} private")
        return
    st.caption(f":material/table: Computed on **{ds.name}**: {ds.n:,} rows, {prep.n_pub:,} public "
               f"({'random split' if prep.public_is_split else 'separate public file'}), {prep.n_priv:,} private "
               "training rows.")
