"""The PMT page's controls (the left column): data, privacy and model.

Each widget edits a shared setting under its own session key (``key=K.<name>``, :class:`ui.common.settings.PMTKeys`)
with ``persist_state="session"`` (Streamlit keeps the value when the page is not drawn), so settings survive page
switches and travel in the URL. :func:`data_controls` also keeps this page's data set
(``data``) in step with the Data page's choice (``dataset_name``) and adds a problem when the
public sample is missing.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from engine.markup import md_escape, md_name
from ui.pmt.compute import core as C
from ui.common.loaders import registry
from ui.pmt.upload import reset_for_task, upload_expander
from ui.common.settings import K
from ui.common.state import (
    CLIP_RADIUS_MAX,
    DEFAULTS,
    DELTA_OPTIONS,
    EPSILON_ADVISORY,
    EPSILON_OPTIONS,
    LAM_OPTIONS,
    fmt_num,
)

ss = st.session_state


def task_from_link() -> None:
    """A link that names a data set but no task (e.g. ``?data=bank``): take the task from the data set (once)."""
    if K.data in st.query_params and K.task not in st.query_params \
            and not ss.get(K.url_task_inferred):
        ss[K.url_task_inferred] = True
        _reg = registry().set_index("name")
        _name = st.query_params[K.data]
        if _name in _reg.index:
            _task = next((t for t in C.supported_tasks() if _reg.loc[_name, "task"] in C.DATA_TASKS[t]), None)
            if _task and _task != ss.get(K.task):
                ss[K.task] = _task
                if K.methods not in st.query_params:
                    ss[K.methods] = C.default_methods(_task)
                if K.metric not in st.query_params:
                    ss[K.metric] = C.metrics_for(_task)[0]


#: Fewest private rows a link's n_pub must leave: max(LINK_MIN_PRIVATE, 4 (d + 1)).
LINK_MIN_PRIVATE = 50


def _link_n_pub(reg, up) -> None:
    """A link's n_pub that leaves too few private rows of the chosen data set is ignored with a note (once)."""
    if not ss.pop(K.url_n_pub_pending, False):
        return
    name = ss.get(K.data)
    if up is not None and name == up.name:
        n, d = int(up.n), int(up.d)
    elif name in reg.index:
        n, d = int(reg.loc[name, "rows"]), int(reg.loc[name, "features"])
    else:
        return
    most = n - max(LINK_MIN_PRIVATE, 4 * (d + 1))
    n_pub = ss.get(K.n_pub)
    if isinstance(n_pub, int) and n_pub > most:
        ss[K.n_pub] = C.default_n_pub(n)
        st.warning(f"The link's n_pub={n_pub} was ignored: {md_name(name)} has {n} rows, and a link's n_pub may be "
                   f"at most {most} (leaving max({LINK_MIN_PRIVATE}, 4 (d + 1)) = {n - most} private rows); using "
                   f"{ss[K.n_pub]}.", icon=":material/link_off:")


def data_controls(problems: list[str], presenter: bool) -> str:
    """The Data section: task, data set, upload, public sample, n_pub and standardisation.

    Parameters
    ----------
    problems : list of str
        Appended to when the settings cannot be computed (a separate public sample without its file).
    presenter : bool
        Presenter mode hides the standardisation switch (its value is kept).

    Returns
    -------
    str
        The page's task.
    """
    st.subheader("Data")
    tasks = C.supported_tasks()
    def _on_task() -> None:
        reset_for_task(ss[K.task])

    if len(tasks) > 1:
        st.radio("Task", tasks, format_func=C.TASK_LABELS.get, horizontal=True, on_change=_on_task,
                 key=K.task, persist_state="session")
    else:
        ss[K.task] = tasks[0]
    task = ss.get(K.task, tasks[0])
    if task not in tasks:
        task = ss[K.task] = tasks[0]

    reg_frame = registry()
    reg = reg_frame.set_index("name")
    kinds = C.DATA_TASKS[task]
    options = [r for r in reg_frame["name"] if reg.loc[r, "task"] in kinds]
    up = ss.get(K.uploaded_dataset)
    if up is not None and getattr(up, "task", None) in kinds:
        options.append(up.name)
    # "dataset_name" is shared with the Data page; this page's widget ("data", mirrored in the URL)
    # follows it whenever the shared choice fits the task, and writes back on change.
    shared = ss.get(K.dataset_name)
    if shared in options:
        ss[K.data] = shared
    elif ss.get(K.data) not in options:
        ss[K.data] = options[0] if options else None
    if shared not in options and shared is not None:
        if st.query_params.get(K.data) == shared and shared not in set(reg_frame["name"]):
            st.warning(f"The link's data={md_escape(shared)} names no data set for {C.TASK_LABELS[task].lower()} "
                       f"(choices: {', '.join(md_name(o) for o in options)}); showing {md_name(ss[K.data])} instead.",
                       icon=":material/link_off:")
        else:
            st.caption(f"The data set chosen on the Data page ({shared}) does not fit "
                       f"{C.TASK_LABELS[task].lower()}; showing {ss[K.data]} instead.")

    def _label(name: str) -> str:
        if up is not None and name == up.name:
            return f"upload: {up.name.removeprefix('upload:')} ({up.n} x {up.d})"
        row = reg.loc[name]
        return f"{name} ({row['rows']} x {row['features']})"

    def _on_data() -> None:
        ss[K.dataset_name] = ss[K.data]

    st.selectbox("Data set", options, format_func=_label, on_change=_on_data, key=K.data, persist_state="session",
                 help="Bundled real data (UCI, CC BY 4.0) or the file you uploaded here or on the Data page; "
                 "(rows x features). The Data page previews each set and cites its source.")
    if ss.get(K.data) in options and (shared in options or shared is None):
        ss[K.dataset_name] = ss[K.data]  # e.g. a shared link (?data=wine-red) chose it
    if ss.get(K.data) == "synthetic":
        st.select_slider("Synthetic condition number kappa(Sigma)", options=[1.0, 10.0, 100.0, 1e3, 1e4, 1e5],
                         format_func=lambda v: f"{v:g}", key=K.synthetic_kappa, persist_state="session",
                         help="Synthetic Gaussian rows whose covariance has this condition number.")

    _link_n_pub(reg, up)
    upload_expander()

    st.radio("Public sample", ["split", "file"], horizontal=False, key=K.public_source, persist_state="session",
             format_func={"split": "random n_pub rows of the data (simulation)",
                          "file": "a separate public CSV (same columns)"}.get,
             help="PMT needs a small public sample of the same kind of rows. On bundled data it is simulated by "
             "a random split; the rest of the rows are the private data.")
    if ss.get(K.public_source) == "file":
        pf = st.file_uploader("Public CSV (same feature and target columns)", type=["csv", "txt", "tsv"],
                              key=K.public_file)
        if pf is not None:
            ss[K.public_raw] = (pf.name, pf.getvalue())
        if ss.get(K.public_raw) is None:
            problems.append("Public sample: upload a public CSV, or choose the random split.")
    st.number_input("n_pub: public rows (random split)", step=50, disabled=ss.get(K.public_source) == "file",
                    key=K.n_pub, persist_state="session", help="How many rows are drawn at random as the public sample; "
                    "the remaining rows are private. Must be at least 1 and less than the number of rows. "
                    "An upload starts at min(200, 20% of its rows); the page warns above that share.")
    if not presenter:  # kept while hidden (persist_state="session")
        st.checkbox("Standardise (public mean, sd)", key=K.standardize, persist_state="session",
                    help="Standardise the features with the public sample's mean and standard deviation. Uses only "
                    "public statistics, so it costs no privacy. Unticked, the ridge baselines still standardise "
                    "their rows with public statistics before clipping, and every method centres y by its public mean.")
    return task


def privacy_controls(presenter: bool) -> None:
    """The Privacy section: epsilon (with an advisory at either end), delta and the neighbouring relation."""
    st.subheader("Privacy")
    st.select_slider("epsilon (privacy budget, log scale)", options=list(EPSILON_OPTIONS), format_func=fmt_num,
                     key=K.epsilon, persist_state="session", help="Smaller epsilon = stronger privacy = more noise.")
    eps = float(ss.get(K.epsilon, DEFAULTS[K.epsilon]))
    if eps < EPSILON_ADVISORY[0]:
        st.caption(f":material/info: epsilon < {EPSILON_ADVISORY[0]:g} is very strong privacy: expect large errors "
                   "for every method unless n is large.")
    elif eps > EPSILON_ADVISORY[1]:
        st.caption(f":material/warning: epsilon > {EPSILON_ADVISORY[1]:g} is a weak guarantee (e^epsilon > "
                   f"{np.exp(EPSILON_ADVISORY[1]):.0f}): fine for exploring, rarely acceptable in deployment.")
    if not presenter:
        st.select_slider("delta", options=list(DELTA_OPTIONS), format_func=fmt_num, key=K.delta, persist_state="session",
                         help="The small probability with which the epsilon guarantee may fail; "
                         "keep it well below 1/n.")
    # the unit of privacy and the neighbouring relation: in every mode (presenter mode keeps the privacy labels)
    from engine import privacy as P
    from engine.privacy.labels import unit_of_privacy

    delta = float(ss.get(K.delta, DEFAULTS[K.delta]))
    mu = P.gdp_mu(eps, delta) if np.isfinite(eps) else None
    st.caption(":material/person: " + unit_of_privacy(mu))
    st.caption("Neighbouring data sets: **replace-one** (n is public; one record is swapped)."
               + ("" if presenter else " Add/remove is not offered: n enters the radius R(d, n), the response bound "
                  "B_y(n), the averages and the noise scale, so it would need a different calibration."))


def model_controls(task: str, presenter: bool) -> None:
    """The Model section: lam, the methods to compare and (outside presenter mode) the advanced settings."""
    st.subheader("Model")
    st.select_slider("lam (ridge penalty)", options=list(LAM_OPTIONS), format_func=fmt_num, key=K.lam, persist_state="session",
                     help="Penalty on the squared coefficient norm (on the 1/n-scaled loss). PMT stays stable "
                     "at lam = 0; the baselines usually need more.")
    method_options = C.methods_for(task)
    if not isinstance(ss.get(K.methods), list) or not set(ss[K.methods]) <= set(method_options):
        ss[K.methods] = C.default_methods(task)  # e.g. a link or an upload switched the task
    st.multiselect("Methods to compare", method_options, key=K.methods, persist_state="session",
                   help="The oracle DP-RR tunes its clip radius by looking at the error: it is NOT private and "
                   "only shows the best the baseline could do.")
    if not presenter:
        with st.expander("Advanced", expanded=False):
            st.number_input("eta (truncation failure probability)", format="%.3f", step=0.01, key=K.eta, persist_state="session",
                            help="Enters R = sqrt(d (1 + ln(2n/eta))); must be in (0, 1).")
            st.number_input("seeds (repetitions of every noisy run)", min_value=1, max_value=200, step=5,
                            key=K.seeds, persist_state="session", help="More seeds = smoother bands, slower.")
            st.number_input("Baseline clip radius C (0 = automatic)", format="%.3g", step=1.0,
                            min_value=0.0, max_value=CLIP_RADIUS_MAX, key=K.clip_radius, persist_state="session",
                            help="Row-norm radius at which DP-RR clips the rows, after centring and scaling them "
                            "by the public mean and standard deviation. 0: the public formula "
                            "sqrt(d (1 + ln(2n/eta))), the same as PMT's R but on those rows. "
                            f"Accepted: 0 or 1e-100 to {CLIP_RADIUS_MAX:g} (the noise arithmetic stays exact).")
            st.number_input("Seed of the public/private split", min_value=0, step=1, key=K.split_seed, persist_state="session")
            if task == "regression":
                st.selectbox("PMT response handling", ("auto", "joint", "clip"), key=K.response, persist_state="session",
                             help="auto (default): the joint form when the public rows carry labels: (x, y) "
                             "whitened together and truncated at one radius, no bound on y of its own, unbiased "
                             "on heavy-tailed targets. clip: y clipped at the public bound B_y (the paper's "
                             "Reading A; biased when the long-tail rows carry the slope). Without public labels "
                             "auto is clip with your stated bound.")
