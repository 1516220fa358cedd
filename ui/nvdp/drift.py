"""The NVDP page's "Training drift" tab: the shipped per-epoch trace, and clipping at release on a drifted model.

The trace (``assets/nvdp/drift_trace.json``, ``scripts/nvdp_drift_trace.py``) shows the worst case, the
authors' filtered max, the mean and the accuracy after every epoch, for both learning-rate schedules,
seeds 0-2 as bands, the restored epochs marked. Its lead and closing note are computed from the trace
(:mod:`engine.nvdp.drift`). Below, the shipped drifted checkpoint (constant rate, unclipped, seed 0, last
epoch) is evaluated live on the page's test sentences, without clipping and clipped at release with the
sliders' caps.
"""

from __future__ import annotations

import json

import streamlit as st

from engine.figures import nvdp as P
from engine.figures.nvdp_drift import drift_figure
from engine.nvdp import drift as D
from engine.nvdp.clipping import ClipConfig
from ui.common.layout import NO_ARROW, PLOTLY_CONFIG
from ui.nvdp.state import PROTOCOL

ss = st.session_state


@st.cache_data(show_spinner=False)
def _trace() -> dict:
    return D.load_trace()


@st.cache_resource(max_entries=1, show_spinner=False)
def _drifted_evaluator(key: str, _data):
    from engine.nvdp.bundled import load_model
    from engine.nvdp.posthoc import LiveEvaluator

    D.verify_drifted()  # checksummed like the shipped pair
    states, y = _data.split("test")
    return LiveEvaluator(load_model(D.drifted_dir()), states, y)


@st.cache_resource(max_entries=16, show_spinner=False)
def _drifted_result(key: str, clip_json: str, _data):
    return _drifted_evaluator(key, _data).evaluate(ClipConfig.from_dict(json.loads(clip_json)), protocol=PROTOCOL)


def _same_test_sentences(m) -> bool:
    """The drifted checkpoint was trained on the default split of the bundled sentences: evaluate it only there."""
    s = m.settings
    return m.user is None and s.n_sentences is None and s.split_seed == 0 and s.max_length == 48


def drift_tab(v, sized) -> None:
    """Draw the tab (``v``: the page's :class:`ui.nvdp.headline.View`; ``sized``: the page's figure sizing)."""
    try:
        trace = _trace()
    except FileNotFoundError as exc:
        st.error(str(exc), icon=":material/error:")
        return
    st.markdown(D.drift_lead(trace))
    metric = st.radio("Figure", list(D.METRIC_NAMES), horizontal=True, key="nvdp_drift_metric",
                      format_func=D.METRIC_NAMES.get)
    st.plotly_chart(sized(v, drift_figure(trace, metric)), config=PLOTLY_CONFIG, key="nvdp_fig_drift")
    st.markdown(D.drift_note(trace))
    st.caption(f"Each point: the model after that epoch, evaluated on {trace['settings']['n_test']} test sentences "
               "under the page's protocol (worst case = RD max over every evaluated pair). 'Clipped at release' is the "
               "unclipped model with the training clipping (C_mu 5, alpha in [0, 1], lambda 1.1) applied to its "
               "output only. Made by scripts/nvdp_drift_trace.py; training on another CPU moves late-epoch values by "
               "up to several times, so the counts are this machine's.")
    _drifted_section(v)


def _drifted_section(v) -> None:
    st.subheader("Clipping at release on a drifted model")
    try:
        fig = D.drifted_figures()
    except FileNotFoundError:
        st.caption("The drifted checkpoint is not shipped in this copy (scripts/nvdp_drift_trace.py --drifted).")
        return
    st.markdown(D.release_sentence(fig) + " The page's shipped unclipped model is an early-stopped one; this "
                "checkpoint is what the same training gives when it runs to the end at a constant rate.")
    if not _same_test_sentences(v.m):
        st.caption("Live evaluation needs the bundled sentences and their default split; the figures above are the "
                   "recorded ones.")
        return
    on = st.toggle("Clip this checkpoint at release with the sliders' caps", key="nvdp_drift_release",
                   help="Applies the caps on the left (C_mu, alpha range, Renyi order's blur floor) to the drifted "
                   "model's posteriors before the shared draw; the model itself is unchanged.")
    clip = v.clip if (on and v.clip.enabled) else ClipConfig(enabled=False)
    key = "drifted"
    try:
        with st.spinner("Evaluating the drifted checkpoint ..."):
            r0 = _drifted_result(key, json.dumps(ClipConfig(enabled=False).to_dict(), sort_keys=True), v.m.data)
            r = _drifted_result(key, json.dumps(clip.to_dict(), sort_keys=True), v.m.data)
    except (ValueError, FileNotFoundError) as exc:
        st.error(f"**Cannot evaluate the drifted checkpoint.** {exc}", icon=":material/error:")
        return
    c1, c2, c3 = st.columns(3)
    c1.metric("Worst case (RD max, all pairs)", P.fmt_bound(r.rd_paper.max_unfiltered),
              delta=f"unclipped {P.fmt_bound(r0.rd_paper.max_unfiltered)}", delta_color="off", **NO_ARROW)
    c2.metric("Authors' filtered max", P.fmt_bound(r.rd_paper.max),
              delta=f"unclipped {P.fmt_bound(r0.rd_paper.max)}", delta_color="off", **NO_ARROW)
    c3.metric("Accuracy", f"{100 * r.accuracy:.1f} %", delta=f"unclipped {100 * r0.accuracy:.1f} %",
              delta_color="off", **NO_ARROW)
    if on:
        w0, w = r0.rd_paper.max_unfiltered, r.rd_paper.max_unfiltered
        ratio = w0 / w if w > 0 else float("inf")
        st.caption(f"With these caps the worst case is {ratio:.3g} times {'lower' if ratio >= 1 else 'higher'} "
                   f"({P.fmt_bound(w0)} -> {P.fmt_bound(w)}) and the accuracy moves by "
                   f"{100 * (r.accuracy - r0.accuracy):+.1f} points.")
