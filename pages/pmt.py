"""PMT regression explorer: pick data, move the privacy knob, see the privacy-utility trade-off.

Thin page: it reads widgets, calls the engine (``engine.experiments.run_sweep``, the estimators'
``report_``), caches the results by (data fingerprint, parameters), draws figures from
``engine.figures.pmt`` and explains them. It computes no DP quantity itself.
"""

from __future__ import annotations

import functools
import inspect
import json
import warnings

import numpy as np
import pandas as pd
import streamlit as st

from engine.figures import pmt as plots
from engine.datasets import list_datasets, load_dataset, read_csv_columns, read_csv_upload
from ui.state import (
    CLIP_RADIUS_MAX,
    DEFAULTS,
    DELTA_OPTIONS,
    EPSILON_ADVISORY,
    EPSILON_GRID,
    EPSILON_OPTIONS,
    LAM_OPTIONS,
    N_PUB_GRID,
    ensure_frame,
    fmt_num,
    init_state,
    persist,
    url_load,
    url_sync,
)
from ui import pmt_compute as C
from ui import pmt_export as X
from ui.layout import FIGURE_HEIGHT, RESULTS_ANCHOR, page_style

ensure_frame()
init_state()
ss = st.session_state
#: Settings this page reads from / writes to the URL (a shared link reproduces the view).
URL_KEYS = ("data", "task", "epsilon", "delta", "lam", "n_pub", "seeds", "eta", "clip_radius",
            "methods", "metric", "standardize", "public_source", "split_seed", "synthetic_kappa")
url_problems = url_load(URL_KEYS)

# ---------------------------------------------------------------------------------------------
# presenter mode (bigger text, fewer knobs)
# ---------------------------------------------------------------------------------------------
head_l, head_r = st.columns([5, 1], vertical_alignment="center")
with head_l:
    st.title("PMT regression: privacy vs accuracy")
with head_r:
    st.toggle("Presenter", help="Presenter mode: hides the explanations and the advanced controls, enlarges the "
              "text, the numbers and the figures for a room.", **persist("presenter"))
presenter = bool(ss.get("presenter", False))
page_style(presenter)

for msg in url_problems:
    st.warning(msg, icon=":material/link_off:")

if not presenter:
    with st.expander("What am I looking at? PMT, the baselines and the symbols in plain words"):
        st.markdown(
            "**PMT** (*public-moment-guided truncation*) uses a small **public** sample to whiten the private rows, "
            "cuts off the rare rows beyond a radius **R**, and adds Gaussian noise to the two statistics ridge "
            "regression needs. It is compared with two **private-only baselines**: **DP-RR** (differentially private "
            "ridge regression from noisy sufficient statistics of rows clipped at radius **C**) and **DP-GD** "
            "(differentially private gradient descent with per-row clipping). **epsilon** and **delta** are the "
            "differential-privacy (DP) budget: smaller = more private. **mu** is the same budget in Gaussian DP "
            "(GDP). For logistic regression the private-only baselines are **DP-Newton** (noisy Newton steps on "
            "clipped rows) and DP-GD. **kappa** is a condition number (largest / smallest eigenvalue; 1 is ideal). "
            "**lam** is the ridge penalty; **n_pub** the number of public rows.")

#: st.metric's delta arrow (1.5x+) would suggest a direction for a plain "before" value; hide it.
_NO_ARROW = {"delta_arrow": "off"} if "delta_arrow" in inspect.signature(st.metric).parameters else {}

# ---------------------------------------------------------------------------------------------
# cached engine calls
# ---------------------------------------------------------------------------------------------


@st.cache_data(max_entries=4, show_spinner=False)
def _registry() -> pd.DataFrame:
    return list_datasets()


@st.cache_data(max_entries=16, show_spinner="Loading the data set ...")
def _bundled(name: str, synthetic_kappa: float):
    if name == "synthetic":
        return load_dataset("synthetic", kappa=float(synthetic_kappa))
    return load_dataset(name)


def _sweep_raw(data_key: str, _data: C.PreparedData, spec_json: str) -> pd.DataFrame:
    return C.sweep(_data, json.loads(spec_json))


def _diagnostics_raw(data_key: str, _data: C.PreparedData, spec_json: str) -> dict:
    return C.diagnostics(_data, json.loads(spec_json))


def _fits_raw(data_key: str, _data: C.PreparedData, spec_json: str) -> dict:
    return C.estimator_fits(_data, json.loads(spec_json))


def _ledger_raw(data_key: str, _data: C.PreparedData, spec_json: str, method: str) -> pd.DataFrame:
    """One method's ledger for display: the ridge fits come with the diagnostics, the others' on demand."""
    diag = _diagnostics(data_key, _data, spec_json)
    ledgers = diag["ledgers"] if diag["ledgers"] is not None else _cached(_fits_raw, data_key, _data, spec_json)["ledgers"]
    return C.ledger_display(C.ledger_frame(ledgers[method]))


def _prepare_raw(data_key: str, _ds, _public_ds, standardize: bool, n_pub: int, split_seed: int, task: str) -> C.PreparedData:
    # n_pub / split_seed only matter for a random split; the key still carries them (cheap).
    return C.prepare(_ds, _public_ds, standardize=standardize, n_pub=n_pub, split_seed=split_seed, task=task)


_SHARED = {
    _sweep_raw: st.cache_data(max_entries=256, show_spinner=False)(_sweep_raw),  # progress: see _run_stages
    _diagnostics_raw: st.cache_data(max_entries=64, show_spinner=False)(_diagnostics_raw),
    _fits_raw: st.cache_data(max_entries=64, show_spinner=False)(_fits_raw),
    _ledger_raw: st.cache_data(max_entries=64, show_spinner=False)(_ledger_raw),
    _prepare_raw: st.cache_data(max_entries=32, show_spinner=False)(_prepare_raw),
}
#: Uploaded data (and everything computed from them) must stay in this browser session:
#: ``st.cache_data`` is shared by every session of the server, so upload-derived calls are memoised
#: in ``st.session_state`` instead (bounded; dropped with the session).
_SESSION_CACHE_SIZE = 24


def _uses_upload() -> bool:
    return str(ss.get("data", "")).startswith("upload:") or ss.get("public_source") == "file"


def _cached(raw, *args):
    """Call ``raw`` through the shared cache for bundled data, through a per-session memo for uploads."""
    if not _uses_upload():
        return _SHARED[raw](*args)
    memo = ss.setdefault("_pmt_session_cache", {})
    key = (raw.__name__,) + tuple(a for a in args if a is None or isinstance(a, (str, int, float, bool)))
    if key not in memo:
        if len(memo) >= _SESSION_CACHE_SIZE:
            memo.pop(next(iter(memo)))
        memo[key] = raw(*args)
    return memo[key]


def _sweep(*args) -> pd.DataFrame:
    return _cached(_sweep_raw, *args)


def _diagnostics(*args) -> dict:
    return _cached(_diagnostics_raw, *args)


def _prepare(*args) -> C.PreparedData:
    return _cached(_prepare_raw, *args)


def _fits(*args) -> dict:
    with st.spinner("One noisy fit of each method for the conditioning figure and the privacy ledger ..."):
        return _cached(_fits_raw, *args)


def _ledger(*args) -> pd.DataFrame:
    return _cached(_ledger_raw, *args)


def _diag_with_fits(results: dict) -> dict:
    """The diagnostics plus the estimators' noisy fits (computed on demand for tasks other than ridge)."""
    diag = results["diag"]
    if diag["ledgers"] is not None:
        return diag
    return C.with_fits(diag, _fits(results["key"], results["prep"], results["diag_json"]))


# ---------------------------------------------------------------------------------------------
# upload callbacks (run before the script, so they may change widget-bound keys)
# ---------------------------------------------------------------------------------------------


def _reset_for_task(task: str) -> None:
    """A new task has its own methods and metrics: start from its defaults."""
    ss["methods"] = C.default_methods(task)
    ss["metric"] = C.metrics_for(task)[0]


def _use_upload() -> None:
    raw = ss.get("pmt_upload_raw")
    if raw is None:
        ss["pmt_upload_error"] = "Choose a CSV file first."
        return
    name, data = raw
    features = ss.get("pmt_upload_features") or None
    task = ss.get("pmt_upload_task", "auto")
    try:
        ds = read_csv_upload(_Named(name, data), target=ss.get("pmt_upload_target"), features=features,
                             task=None if task == "auto" else task)
    except (ValueError, TypeError) as exc:
        ss["pmt_upload_error"] = f"The file {name!r} was not loaded: {exc}"
        return
    page_task = next((t for t in C.supported_tasks() if ds.task in C.DATA_TASKS[t]), None)
    if page_task is None:
        ss["pmt_upload_error"] = (
            f"The file {name!r} was read as a {ds.task} task, which this page does not offer yet "
            f"(it offers: {', '.join(C.TASK_LABELS[t] for t in C.supported_tasks())}). "
            "Choose Task = regression above to treat the target as a number. Your previous data stay selected.")
        return
    ss["pmt_upload_error"] = None
    ss["uploaded_dataset"] = ds
    if ss.get("task") != page_task:
        ss["task"] = page_task
        _reset_for_task(page_task)
    ss["dataset_name"] = ss["data"] = ds.name
    # a small file must not silently become half public: default n_pub = min(200, 20 % of the rows)
    ss["n_pub"] = min(int(ss.get("n_pub", 200) or 200), C.default_n_pub(ds.n))


class _Named:
    """A minimal file-like wrapper so the engine's CSV reader keeps the upload's name."""

    def __init__(self, name: str, data: bytes):
        self.name, self._data, self.size = name, data, len(data)

    def read(self, *_):
        return self._data


# ---------------------------------------------------------------------------------------------
# controls (left)
# ---------------------------------------------------------------------------------------------
if "data" in st.query_params and "task" not in st.query_params \
        and not ss.get("_url_task_inferred"):
    # a link that names a data set but no task: take the task from the data set (e.g. ?data=bank)
    ss["_url_task_inferred"] = True
    _reg = _registry().set_index("name")
    _name = st.query_params["data"]
    if _name in _reg.index:
        _task = next((t for t in C.supported_tasks() if _reg.loc[_name, "task"] in C.DATA_TASKS[t]), None)
        if _task and _task != ss.get("task"):
            ss["task"] = _task
            if "methods" not in st.query_params:
                ss["methods"] = C.default_methods(_task)
            if "metric" not in st.query_params:
                ss["metric"] = C.metrics_for(_task)[0]

ctrl, main = st.columns([1.3, 3], gap="large")
main.container(key=RESULTS_ANCHOR).html("<span></span>")  # marks the results column (ui.layout: phones)
problems: list[str] = []

with ctrl:
    st.subheader("Data")
    tasks = C.supported_tasks()
    def _on_task() -> None:
        _reset_for_task(ss["task"])

    if len(tasks) > 1:
        st.radio("Task", tasks, format_func=C.TASK_LABELS.get, horizontal=True, on_change=_on_task,
                 **persist("task"))
    else:
        ss["task"] = tasks[0]
    task = ss.get("task", tasks[0])
    if task not in tasks:
        task = ss["task"] = tasks[0]

    registry = _registry()
    reg = registry.set_index("name")
    kinds = C.DATA_TASKS[task]
    options = [r for r in registry["name"] if reg.loc[r, "task"] in kinds]
    up = ss.get("uploaded_dataset")
    if up is not None and getattr(up, "task", None) in kinds:
        options.append(up.name)
    # "dataset_name" is shared with the Data page; this page's widget ("data", mirrored in the URL)
    # follows it whenever the shared choice fits the task, and writes back on change.
    shared = ss.get("dataset_name")
    if shared in options:
        ss["data"] = shared
    elif ss.get("data") not in options:
        ss["data"] = options[0] if options else None
    if shared not in options and shared is not None:
        if st.query_params.get("data") == shared and shared not in set(registry["name"]):
            st.warning(f"The link's data={shared} names no data set for {C.TASK_LABELS[task].lower()} "
                       f"(choices: {', '.join(options)}); showing {ss['data']} instead.", icon=":material/link_off:")
        else:
            st.caption(f"The data set chosen on the Data page ({shared}) does not fit "
                       f"{C.TASK_LABELS[task].lower()}; showing {ss['data']} instead.")

    def _label(name: str) -> str:
        if up is not None and name == up.name:
            return f"upload: {up.name.removeprefix('upload:')} ({up.n} x {up.d})"
        row = reg.loc[name]
        return f"{name} ({row['rows']} x {row['features']})"

    def _on_data() -> None:
        ss["dataset_name"] = ss["data"]

    st.selectbox("Data set", options, format_func=_label, on_change=_on_data, **persist("data"),
                 help="Bundled real data (UCI, CC BY 4.0) or the file you uploaded here or on the Data page; "
                 "(rows x features). The Data page previews each set and cites its source.")
    if ss.get("data") in options and (shared in options or shared is None):
        ss["dataset_name"] = ss["data"]  # e.g. a shared link (?data=wine-red) chose it
    if ss.get("data") == "synthetic":
        st.select_slider("Synthetic condition number kappa(Sigma)", options=[1.0, 10.0, 100.0, 1e3, 1e4, 1e5],
                         format_func=lambda v: f"{v:g}", **persist("synthetic_kappa"),
                         help="Synthetic Gaussian rows whose covariance has this condition number.")

    with st.expander("Upload your own CSV", expanded=str(ss.get("data")).startswith("upload:")):
        st.caption("Nothing you upload leaves this browser session: it is kept in memory only, never written to "
                   "disk or logged.")
        f = st.file_uploader("CSV file (comma, semicolon or tab separated, header row)", type=["csv", "txt", "tsv"],
                             key="pmt_upload_file")
        if f is not None:
            data = f.getvalue()
            if ss.get("pmt_upload_raw") is None or ss["pmt_upload_raw"][0] != f.name or ss["pmt_upload_raw"][1] != data:
                ss["pmt_upload_raw"] = (f.name, data)
                ss["pmt_upload_error"] = None
                for k in ("pmt_upload_target", "pmt_upload_features"):
                    ss.pop(k, None)
        raw = ss.get("pmt_upload_raw")
        if raw is not None:
            try:
                cols = read_csv_columns(_Named(*raw))
            except (ValueError, TypeError) as exc:
                cols = None
                st.error(f"The file {raw[0]!r} cannot be read: {exc}")
            if cols:
                if ss.get("pmt_upload_target") not in cols:
                    ss["pmt_upload_target"] = cols[-1]
                st.selectbox("Target column (what to predict)", cols, key="pmt_upload_target")
                others = [c for c in cols if c != ss["pmt_upload_target"]]
                if ss.get("pmt_upload_features") is None or not set(ss["pmt_upload_features"]) <= set(others):
                    ss["pmt_upload_features"] = others
                st.multiselect("Feature columns", others, key="pmt_upload_features")
                st.selectbox("Task", ["auto", "regression", "classification"], key="pmt_upload_task",
                             help="auto: classification only if the target column is written as true/false; a 0/1 "
                             "column is a regression target unless you choose classification (the task is "
                             "never guessed from the private values).")
                st.button("Use this data", on_click=_use_upload, type="primary")
        if ss.get("pmt_upload_error"):
            st.error(ss["pmt_upload_error"])

    st.radio("Public sample", ["split", "file"], horizontal=False, **persist("public_source"),
             format_func={"split": "random n_pub rows of the data (simulation)",
                          "file": "a separate public CSV (same columns)"}.get,
             help="PMT needs a small public sample of the same kind of rows. On bundled data it is simulated by "
             "a random split; the rest of the rows are the private data.")
    public_ds = None
    if ss.get("public_source") == "file":
        pf = st.file_uploader("Public CSV (same feature and target columns)", type=["csv", "txt", "tsv"],
                              key="pmt_public_file")
        if pf is not None:
            ss["pmt_public_raw"] = (pf.name, pf.getvalue())
        if ss.get("pmt_public_raw") is None:
            problems.append("Public sample: upload a public CSV, or choose the random split.")
    st.number_input("n_pub: public rows (random split)", step=50, disabled=ss.get("public_source") == "file",
                    **persist("n_pub"), help="How many rows are drawn at random as the public sample; "
                    "the remaining rows are private. Must be at least 1 and less than the number of rows. "
                    "An upload starts at min(200, 20% of its rows); the page warns above that share.")
    if not presenter:  # kept while hidden (persist_state="session")
        st.checkbox("Standardise (public mean, sd)", **persist("standardize"),
                    help="Standardise the features with the public sample's mean and standard deviation. Uses only "
                    "public statistics, so it costs no privacy. The private-only baselines clip raw rows at a radius "
                    "that only makes sense on standardised features.")

    st.subheader("Privacy")
    st.select_slider("epsilon (privacy budget, log scale)", options=list(EPSILON_OPTIONS), format_func=fmt_num,
                     **persist("epsilon"), help="Smaller epsilon = stronger privacy = more noise.")
    eps = float(ss.get("epsilon", DEFAULTS["epsilon"]))
    if eps < EPSILON_ADVISORY[0]:
        st.caption(f":material/info: epsilon < {EPSILON_ADVISORY[0]:g} is very strong privacy: expect large errors "
                   "for every method unless n is large.")
    elif eps > EPSILON_ADVISORY[1]:
        st.caption(f":material/warning: epsilon > {EPSILON_ADVISORY[1]:g} is a weak guarantee (e^epsilon > "
                   f"{np.exp(EPSILON_ADVISORY[1]):.0f}): fine for exploring, rarely acceptable in deployment.")
    if not presenter:
        st.select_slider("delta", options=list(DELTA_OPTIONS), format_func=fmt_num, **persist("delta"),
                         help="The small probability with which the epsilon guarantee may fail; "
                         "keep it well below 1/n.")
        st.caption("Neighbouring data sets: **replace-one** (n is public; one record is swapped). Add/remove "
                   "is not offered: n enters the radius R(d, n), the response bound B_y(n), the averages and the "
                   "noise scale, so it would need a different calibration.")

    st.subheader("Model")
    st.select_slider("lam (ridge penalty)", options=list(LAM_OPTIONS), format_func=fmt_num, **persist("lam"),
                     help="Penalty on the squared coefficient norm (on the 1/n-scaled loss). PMT stays stable "
                     "at lam = 0; the baselines usually need more.")
    method_options = C.methods_for(task)
    if not isinstance(ss.get("methods"), list) or not set(ss["methods"]) <= set(method_options):
        ss["methods"] = C.default_methods(task)  # e.g. a link or an upload switched the task
    st.multiselect("Methods to compare", method_options, **persist("methods"),
                   help="The oracle DP-RR tunes its clip radius by looking at the error: it is NOT private and "
                   "only shows the best the baseline could do.")
    if not presenter:
        with st.expander("Advanced", expanded=False):
            st.number_input("eta (truncation failure probability)", format="%.3f", step=0.01, **persist("eta"),
                            help="Enters R = sqrt(d (1 + ln(2n/eta))); must be in (0, 1).")
            st.number_input("seeds (repetitions of every noisy run)", min_value=1, max_value=200, step=5,
                            **persist("seeds"), help="More seeds = smoother bands, slower.")
            st.number_input("Baseline clip radius C (0 = automatic)", format="%.3g", step=1.0,
                            min_value=0.0, max_value=CLIP_RADIUS_MAX, **persist("clip_radius"),
                            help="Row-norm radius at which DP-RR clips the raw rows. 0: the public formula "
                            "sqrt(d (1 + ln(2n/eta))), the same as PMT's R but on the raw features. "
                            f"Accepted: 0 or 1e-100 to {CLIP_RADIUS_MAX:g} (the noise arithmetic stays exact).")
            st.number_input("Seed of the public/private split", min_value=0, step=1, **persist("split_seed"))

def _run_stages(key: str, prep, stages) -> list:
    """Run the cached computations in order with a progress bar naming each stage.

    The bar appears only when something is not yet computed in this session (cached results return at
    once); Streamlit's Stop button (top right while running) cancels the run, and the settings stay.
    """
    done = ss.setdefault("_pmt_done", set())
    todo = [i for i, (_, _, spec_json) in enumerate(stages) if (key, spec_json) not in done]
    bar = st.progress(0.0, text="Computing ...") if todo else None
    out = []
    for i, (label, fn, spec_json) in enumerate(stages):
        if bar is not None and i in todo:
            bar.progress(todo.index(i) / len(todo),
                         text=f"Computing {todo.index(i) + 1}/{len(todo)}: {label} (Stop, top right, cancels)")
        out.append(fn(key, prep, spec_json))
        done.add((key, spec_json))
    if bar is not None:
        bar.empty()
    return out


def _sweep_args(results: dict, kind: str):
    """(cache key, spec JSON) of the lam or n_pub sweep at the chosen settings; None if not applicable."""
    spec = results["spec"]
    if kind == "lam":
        return results["key"], C.dumps(C.sweep_spec(spec, "lam", LAM_OPTIONS))
    if results["npub_grid"] is None:
        return None
    return results["dkey"], C.dumps(C.sweep_spec(spec, "n_pub", results["npub_grid"]))


def _lazy_sweep(results: dict, kind: str):
    """The lam / n_pub sweep through the page cache (computed the first time its tab is opened)."""
    args = _sweep_args(results, kind)
    if args is None:
        return None
    spec = results["spec"]
    what = (f"{len(LAM_OPTIONS)} values of lam" if kind == "lam" else f"{len(results['npub_grid'])} public sample sizes")
    with st.spinner(f"Computing the {kind} sweep: {what} x {spec['seeds']} seeds x {len(spec['methods'])} methods "
                    "(cached afterwards) ..."):
        return _sweep(args[0], results["prep"], args[1])


def _export_frames(results: dict) -> dict:
    """Every sweep of the view, for the CSV download. Runs on click, in a thread without the Streamlit
    script context, so it calls the engine directly (the sweeps are deterministic: same numbers)."""
    frames = {"epsilon": results["eps"]}
    for kind in ("lam", "n_pub"):
        args = _sweep_args(results, kind)
        frames[kind] = None if args is None else C.sweep(results["prep"], json.loads(args[1]))
    return frames


def _report(results: dict, head: pd.DataFrame, metric: str, ratio_text: str, public_name) -> str:
    """The HTML report (built on click, outside the script run: engine and figure builders only)."""
    spec, diag = {**results["spec"], "metric": metric}, results["diag"]
    if diag["ledgers"] is None:  # tasks other than ridge: the noisy fits, as the page's tabs compute them
        diag = C.with_fits(diag, C.estimator_fits(results["prep"], results["spec"]))
    diag = {**diag, "ledgers": {m: C.ledger_frame(led) for m, led in diag["ledgers"].items()}}
    summ = C.summarize(results["eps"], metric, "epsilon")
    figs = [("Error vs epsilon (median, 50 % and 90 % bands over seeds)",
             plots.error_vs_epsilon_figure(summ, metric=metric, epsilon=spec["epsilon"],
                                           log_y=metric not in ("accuracy", "auc"))),
            ("Conditioning: kappa before and after PMT", plots.conditioning_figure(diag["kappas"], diag["spectra"])),
            ("Truncation: row lengths before and after whitening",
             plots.truncation_figure(diag["raw_norms"], diag["pmt_norms"], radius=diag["radius"],
                                     clip_radius=diag["clip_radius"], frac_truncated=diag["frac_truncated"]))]
    return X.report_html(spec=spec, ds=results["ds"], prep=results["prep"], head=head,
                         metric_label=plots.metric_label(metric), ratio_text=ratio_text, diag=diag, figures=figs,
                         public_name=public_name)


def _ledger_table(frame: pd.DataFrame) -> None:
    st.dataframe(frame, hide_index=True, width="stretch",
                 column_config={
                     "name": st.column_config.TextColumn("release", help="what was released with noise"),
                     "sensitivity": st.column_config.TextColumn(
                         "sensitivity", help="L2 / Frobenius sensitivity: how far one person can move it"),
                     "sigma": st.column_config.TextColumn("sigma", help="Gaussian noise standard deviation"),
                     "mu": st.column_config.TextColumn("mu (GDP)", help="sensitivity / sigma"),
                     "epsilon": st.column_config.TextColumn("epsilon", help="this release alone at the delta "
                                                            "shown; the total row composes all releases"),
                     "delta": st.column_config.TextColumn("delta"),
                 })


@st.fragment
def _results_panel(results: dict, task: str) -> None:
    """Headline metrics, the metric switch and the tabs. A fragment: switching the metric or the ledger's
    method reruns only this panel (everything here is cached or cheap)."""
    ds, spec, diag = results["ds"], results["spec"], results["diag"]
    metric_cols = [m for m in C.metrics_for(task) if m in results["eps"].columns]
    # ---- headline metrics (above the fold at 1440 x 900: heading and metric picker share one row) ----
    metric = ss.get("metric", DEFAULTS["metric"])
    if metric not in metric_cols:
        metric = ss["metric"] = metric_cols[0]
    head = plots.headline_table(results["eps_point"], metric=metric, epsilon=spec["epsilon"])
    label = plots.metric_label(metric)
    unit = plots.METRICS.get(metric, ("", "", True))[1]
    lower_better = plots.METRICS.get(metric, ("", "", True))[2]
    ratio = C.pmt_vs_best(head, lower_better=lower_better)
    if metric in C.REFERENCE_IS_TARGET:  # the non-private fit is the target: its error is 0 by definition
        head = head[head["method"] != "Non-private"]
    h_l, h_r = st.columns([5, 2], vertical_alignment="center")
    h_l.markdown(f"**Median {label[0].lower() + label[1:] if not label[:2].isupper() else label} at epsilon = "
                 f"{spec['epsilon']:g}** ({'lower' if lower_better else 'higher'} is better)"
                 + (f" · :orange[**{len(results['warnings'])} warning{'s' * (len(results['warnings']) > 1)} under "
                    "the figure**]" if results["warnings"] else ""),
                 help=f"Median over {spec['seeds']} noise seeds at your epsilon. Unit: {unit}.")
    h_r.selectbox("Error metric", metric_cols, format_func=plots.metric_label,
                  label_visibility="collapsed", **persist("metric"),
                  help="The error metric of the headline numbers and the figures: "
                  + "; ".join(f"{plots.metric_label(m)}: {plots.METRICS.get(m, ('', ''))[1]}" for m in metric_cols))
    ratio_text = "n/a" if ratio is None else C.fmt_ratio(ratio[0])
    ratio_help = (("PMT's median error divided by that of the best baseline, the public-only fit included "
                   f"({'none selected' if ratio is None else ratio[1]}); below 1 means PMT is better.")
                  if lower_better else "PMT's median divided by the best baseline's; above 1 means PMT is better.")
    row1 = st.columns(max(len(head), 1) + int(presenter))
    for c, (_, row) in zip(row1, head.iterrows()):
        short = row["method"].replace(" (oracle C, non-private tuning)", " oracle")
        if presenter:  # five numbers in one row for a room: the shortest names that stay unambiguous
            short = {"Public-only": "Public", "PMT (paper solver)": "PMT paper"}.get(short, short)
        c.metric(short, f"{row['median']:.3g}",
                 help=f"{plots.METHOD_LONG_NAMES.get(row['method'], row['method'])}. Median {label.lower()} over "
                 f"{row['n_seeds']} seeds at epsilon = {row['epsilon']:g}; the middle half of the seeds lies between "
                 f"{row['q25']:.3g} and {row['q75']:.3g}. Unit: {unit}.")
    if presenter:  # one row for a room: the methods and the ratio
        row1[-1].metric("PMT / best", ratio_text, help="PMT / best baseline: " + ratio_help)
    else:
        r1, r2, r3, r4 = st.columns(4)
        r1.metric("PMT / best baseline", ratio_text, help=ratio_help)
        r2.metric("kappa after PMT", f"{diag['kappa_pmt']:.3g}", delta=f"raw kappa {diag['kappa_raw']:.3g}",
                  delta_color="off", **_NO_ARROW,
                  help="Condition number (largest / smallest eigenvalue) of the private second-moment matrix "
                  "X^T X after the PMT transform, and before it (raw). 1 = perfectly conditioned, like round data.")
        r3.metric("rows truncated", f"{100 * diag['frac_truncated']:.2f}%",
                  help=f"Fraction of private rows longer than R = {diag['radius']:.3g} after whitening; they are "
                  "scaled onto the sphere of radius R.")
        r4.metric("mu (Gaussian DP)", f"{diag['mu']:.3g}",
                  help=f"The total Gaussian-differential-privacy budget that (epsilon = {spec['epsilon']:g}, delta = "
                  f"{spec['delta']:g}) converts to; every method spends exactly this (see the ledger).")

    tab_names = ["Error vs epsilon", "Error vs lam", "Error vs n_pub", "Conditioning", "Truncation",
                 "Privacy ledger", "Export"]
    # on_change="rerun" tracks the open tab, so only its figure is built (and the lam / n_pub sweeps run
    # only when their tab is opened): a slider change then recomputes just what is on screen
    tabs = st.tabs(tab_names, key="pmt_tab", on_change="rerun")
    summ = lambda frame, by: C.summarize(frame, metric, by)  # noqa: E731
    # presenter mode hides the explanations (the audience hears them): a container that ui.layout's CSS hides
    _n_teach = iter(range(100))
    _teach = ((lambda title: st.container(key=f"teach_{next(_n_teach)}")) if presenter  # noqa: E731
              else (lambda title: st.expander(title)))
    cfg = {"toImageButtonOptions": {"format": "png", "scale": 3}, "displaylogo": False}

    def _show(fig, key: str) -> None:
        fig.update_layout(height=FIGURE_HEIGHT[presenter])
        if presenter:  # for a room: larger figure text; the y title shortened to the metric (it must fit the axis)
            fig.update_layout(font=dict(size=15), legend=dict(font=dict(size=15)), margin=dict(b=135))
            if str(fig.layout.yaxis.title.text or "").startswith(label):
                fig.update_yaxes(title_text=label)
        st.plotly_chart(fig, config=cfg, key=key)
    log_y = metric not in ("accuracy", "auc")

    with tabs[0]:
        if tabs[0].open:
            fig = plots.error_vs_epsilon_figure(summ(results["eps"], "epsilon"), metric=metric,
                                                epsilon=spec["epsilon"], log_y=log_y)
            if metric == "accuracy":  # a classifier is only useful above "always predict the majority class"
                label_maj, acc_maj = C.majority_class_accuracy(results["prep"])
                fig.add_hline(y=acc_maj, line=dict(color="#888888", dash="dashdot", width=2),
                              annotation_text=f"majority class ({label_maj}) {acc_maj:.3f}",
                              annotation_position="bottom right")
            _show(fig, "fig_eps")
    # the advisories (e.g. "noise-dominated: the public rows alone are better") right under the main figure,
    # so that the headline numbers and the figure keep the first screen (the heading counts them)
    for w in results["warnings"]:
        st.warning(w, icon=":material/warning:")
    with tabs[0]:
        with _teach("What this shows, and what to try"):
            st.markdown(
                f"Each line is the **median {label.lower()}** over {spec['seeds']} noise draws at each epsilon; "
                "the dark band holds the middle half of the draws (25-75 %), the light band 90 % (5-95 %). "
                "The error is heavy-tailed, so bands say more than averages. The dotted rule marks your epsilon.\n\n"
                "**Why PMT helps:** after whitening with the public second moment the private rows are round, so "
                "the truncation radius R rarely bites and the noisy matrix that ridge inverts is well conditioned "
                "(see *Conditioning*). The baselines clip raw rows and invert a badly conditioned noisy matrix.\n\n"
                "**Try:** lower lam to 0 (PMT stays stable, DP-RR does not); switch to the synthetic data with "
                "kappa = 1e4; untick standardisation and watch the baselines' error jump.")
    with tabs[1]:
        if tabs[1].open:
            try:
                lam_frame = _lazy_sweep(results, "lam")
                fig = plots.error_vs_lam_figure(summ(lam_frame, "lam"), metric=metric, lam=spec["lam"], log_y=log_y,
                                                title=f"{label} vs the ridge penalty lam at epsilon = {spec['epsilon']:g}")
                _show(fig, "fig_lam")
            except (ValueError, TypeError) as exc:
                st.error(f"**Cannot compute the lam sweep.** {exc}", icon=":material/error:")
        with _teach("What this shows, and what to try"):
            st.markdown(
                "Error against the ridge penalty lam at your epsilon (lam = 0 is drawn at the left edge). "
                "A large lam hides noise by shrinking the coefficients towards 0, which is a bias of its own.\n\n"
                "**Why PMT helps:** PMT's noisy matrix is close to n times the identity, so it is invertible "
                "without a penalty; the baselines need lam to keep their noisy matrix invertible.\n\n"
                "**Try:** a smaller epsilon, where the gap widens.")
    with tabs[2]:
        if results["npub_grid"] is None:
            st.info("With a separate public file the public sample size is that file's length, so there is "
                    "nothing to sweep. Choose the random split to see this figure.")
        elif tabs[2].open:
            try:
                npub_frame = _lazy_sweep(results, "n_pub")
                fig = plots.error_vs_n_pub_figure(summ(npub_frame, "n_pub"), metric=metric, n_pub=spec["n_pub"],
                                                  log_y=log_y, title=f"{label} vs the public sample size at "
                                                  f"epsilon = {spec['epsilon']:g}")
                _show(fig, "fig_npub")
            except (ValueError, TypeError) as exc:
                st.error(f"**Cannot compute the n_pub sweep.** {exc}", icon=":material/error:")
        with _teach("What this shows, and what to try"):
            st.markdown(
                "Error against the number of public rows n_pub at your epsilon. Only PMT uses the public rows "
                "for the transform (all methods use them for the response bound).\n\n"
                "**Why PMT helps:** a few hundred public rows estimate the shape of the data (its second moment) "
                "well enough; more public rows help little beyond that.\n\n"
                "**Try:** n_pub = 20 with a data set of many features (wine: 11).")
    with tabs[3]:
        if tabs[3].open:
            cdiag = _diag_with_fits(results)
            _show(plots.conditioning_figure(cdiag["kappas"], cdiag["spectra"],
                                            labels=None if task == "regression" else {"noisy": "noisy Hessian<br>(last step)"}),
                  "fig_cond")
        with _teach("What this shows, and what to try"):
            st.markdown(
                "**kappa** (condition number) = largest / smallest eigenvalue of a second-moment matrix. "
                "Ridge inverts a noisy matrix (logistic regression one per Newton step), so a large kappa turns a "
                "little noise into a large error. "
                "Bars: the raw private X^T X, the public estimate Sigma_pub, the whitened X~^T X~ after PMT, "
                "and the noisy matrix PMT actually solves (one noise draw). Right: the eigenvalues, each "
                "divided by the largest (a flat line at 1 is perfect).\n\n"
                "**Why PMT helps:** whitening with Sigma_pub^(-1/2) makes X~^T X~ close to n times the identity "
                "(kappa near 1) whatever the raw kappa.\n\n"
                "**Try:** the synthetic data with kappa = 1e5; then a tiny n_pub.")
    with tabs[4]:
        if tabs[4].open:
            _show(plots.truncation_figure(diag["raw_norms"], diag["pmt_norms"], radius=diag["radius"],
                                          clip_radius=diag["clip_radius"], frac_truncated=diag["frac_truncated"]),
                  "fig_trunc")
        by = (f"response bound B_y = {diag['B_y']:.4g} ({100 * diag['frac_y_clipped']:.2f}% of responses "
              "clipped); " if np.isfinite(diag["B_y"]) else "")
        st.caption(f"R = {diag['radius']:.4g} (public: depends only on d, n and eta = {spec['eta']:g}); {by}"
                   f"baseline clip radius C = {diag['clip_radius']:.4g}.")
        with _teach("What this shows, and what to try"):
            st.markdown(
                "Left: the lengths of the raw private rows, with the radius C at which the private-only baselines "
                "clip them. "
                "Right: the lengths after whitening, with PMT's radius R = sqrt(d (1 + ln(2n/eta))). "
                "Bounding the row length bounds how much one person can move the released statistics "
                "(the sensitivity), which sets the noise.\n\n"
                "**Why PMT helps:** whitened rows have length about sqrt(d), so almost none reach R; "
                "raw rows have wildly different scales, so any single C either clips many rows (bias) or "
                "is huge (noise).\n\n"
                "**Try:** untick standardisation (raw CCPP pressures are about 1000 mbar).")
    with tabs[5]:
        st.markdown(f"What each method released at epsilon = {spec['epsilon']:g}, delta = {spec['delta']:g} "
                    "(replace-one neighbours), as recorded by the engine's privacy ledger.")
        ledger_methods = C.ledger_methods(spec, diag)
        if not ledger_methods:
            st.info("The engine does not report a ledger for this task yet.")
        which = st.radio("Method", ledger_methods or ["-"], horizontal=True, key="pmt_ledger_method")
        # the ledger is converted (and, for tasks other than ridge, the noisy fits run) only when this tab is open
        if tabs[5].open and not ledger_methods:
            _ledger_table(pd.DataFrame(columns=["name", "sensitivity", "sigma", "mu", "neighbouring", "epsilon",
                                                "delta"]))
        elif tabs[5].open:
            ldiag = _diag_with_fits(results)
            _ledger_table(_ledger(results["key"], results["prep"], results["diag_json"], which))
            if ldiag.get("task") != "regression" and ldiag.get("eig_fixes"):
                st.caption(f"In this fit the noisy Hessian's eigenvalues were floored in {ldiag['eig_fixes']} "
                           "Newton step(s): the documented safeguard that keeps each noisy Newton step defined.")
        with _teach("What this shows"):
            st.markdown(
                "Every Gaussian release costs mu = sensitivity / sigma in Gaussian differential privacy; "
                "releases compose as the square root of the sum of the squared mu's (the *total* row), which "
                "converts back to (epsilon, delta). The total never exceeds your epsilon. The oracle DP-RR "
                "is not listed as private: its clip radius was tuned on the error.")
    with tabs[6]:
        # the CSV (~0.5 MB, every sweep) is built only when the button is clicked (a deferred callable)
        csv = functools.partial(lambda r: X.results_csv(_export_frames(r), data_name=r["ds"].name,
                                                                   target=r["ds"].target_name), results)
        public_name = (ss.get("pmt_public_raw") or (None,))[0] if spec.get("public_source") == "file" else None
        settings = X.settings_json({**spec, "metric": metric}, ds=ds, prep=results["prep"], public_name=public_name)
        report = functools.partial(_report, results, head, metric, ratio_text, public_name)
        st.download_button("Download report (HTML)", report, file_name="pmt_report.html", mime="text/html",
                           key="dl_report", type="primary", icon=":material/summarize:",
                           help="One self-contained HTML file to send after a demo: headline numbers, the figures "
                           "(interactive, no network needed), settings, privacy ledger, data source and licence, "
                           "and the commands that reproduce it.")
        c1, c2 = st.columns(2)
        c1.download_button("Download results (CSV)", csv, file_name="pmt_results.csv", mime="text/csv",
                           key="dl_csv", help="Every fit: one row per method, epsilon, seed, lam and n_pub.")
        c2.download_button("Download settings (JSON)", settings, file_name="pmt_settings.json",
                           mime="application/json", key="dl_json",
                           help="Every setting, the seeds and the package versions.")
        why_not = X.cli_supported(spec)
        if why_not:
            st.info(why_not + " The JSON settings above record everything needed to repeat this view.")
        else:
            cmds = X.cli_commands({**spec, "metric": metric}, ds=ds, public_name=public_name)
            st.markdown("The headline numbers from a terminal (the same numbers, bit for bit):")
            st.code(cmds["headline"], language="bash", wrap_lines=True)
            st.markdown("The error-vs-epsilon figure's grid:")
            st.code(cmds["figure"], language="bash", wrap_lines=True)
            for note in X.cli_notes(spec):
                st.caption(f":material/info: {note}")
        st.caption("Each figure has a camera button (top right, on hover) that saves a PNG at 3x resolution.")
    if not presenter:
        prep = results["prep"]
        st.caption(f"**{ds.name}**: {ds.n} rows, {ds.d} features, target **{ds.target_name}**; "
                   f"{prep.n_pub} public rows ({'random split: a simulation' if prep.public_is_split else 'separate public file'}), "
                   f"{prep.n_priv} private rows; {spec['seeds']} seeds per setting.")
    url_sync(URL_KEYS)  # a fragment rerun does not reach the end of the page


# ---------------------------------------------------------------------------------------------
# compute (cached) and draw (right)
# ---------------------------------------------------------------------------------------------
with main:
    results = None
    try:
        if problems:
            raise ValueError(" ".join(problems))
        name = ss.get("data")
        if name is None:
            raise ValueError(f"No data set for the task {task!r}: upload one.")
        if str(name).startswith("upload:"):
            ds = ss["uploaded_dataset"]
        else:
            ds = _bundled(name, float(ss.get("synthetic_kappa", 1e3)))
        ss["dataset_shape"] = (name, ds.n, ds.d)
        public_ds = None
        if ss.get("public_source") == "file":
            pname, pdata = ss["pmt_public_raw"]
            try:
                public_ds = read_csv_upload(_Named(pname, pdata), target=ds.target_name, features=list(ds.feature_names),
                                            task=ds.task if ds.task != "text-classification" else None)
            except ValueError as exc:
                raise ValueError(f"The public file {pname!r} does not fit the data set: {exc}") from exc
        spec = C.spec_from_state(ss, task=task)
        dkey = C.data_key(ds, public_ds, spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # advisories are shown explicitly below
            prep = _prepare(dkey, ds, public_ds, bool(spec["standardize"]), int(spec["n_pub"]), int(spec["split_seed"]),
                            task)
            key = dkey + prep.key
            n_methods, n_seeds = len(spec["methods"]), int(spec["seeds"])
            stages = [
                (f"error vs epsilon: {len(EPSILON_GRID)} epsilons x {n_seeds} seeds x {n_methods} methods",
                 _sweep, C.dumps(C.sweep_spec(spec, "epsilon", EPSILON_GRID))),
                (f"your epsilon = {spec['epsilon']:g}: {n_seeds} seeds x {n_methods} methods",
                 _sweep, C.dumps(C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))),
                ("one fit of each method for the diagnostics and the privacy ledger", _diagnostics, C.dumps(spec)),
            ]
            out = _run_stages(key, prep, stages)
            eps_grid, eps_point, diag = out
        # the lam and n_pub sweeps are computed when their tab is opened (see _lazy_sweep)
        npub_grid = (sorted({n for n in N_PUB_GRID if n < prep.n_total // 2} | {int(spec["n_pub"])})
                     if prep.public_is_split else None)
        results = dict(ds=ds, prep=prep, spec=spec, key=key, dkey=dkey, npub_grid=npub_grid, diag_json=C.dumps(spec),
                       eps=C.merge_eps(eps_grid, eps_point), eps_point=eps_point, diag=diag,
                       warnings=C.advisories(prep, diag, spec["delta"]))
    except (ValueError, TypeError) as exc:
        st.error(f"**Cannot compute with these settings.** {exc}", icon=":material/error:")
        st.caption("Your other settings and your data are unchanged; fix the setting named above.")

    if results is not None:
        _results_panel(results, task)

url_sync(URL_KEYS)
