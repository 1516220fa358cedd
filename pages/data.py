"""Data: the bundled data sets, a preview of the active one, and a validated CSV upload.

Session state (shared with the other pages):
- ``dataset_name``: the active data set, a registry name (``"ccpp"`` ...) or ``"upload:<file>"``.
- ``uploaded_dataset``: the last successfully validated upload (an ``engine.datasets.Dataset``),
  kept in memory for this browser session only. A failed upload never overwrites either key.
- ``dataset_shape``: ``(name, rows, features)`` of the active set, for the sidebar summary.
- ``synthetic_kappa``: the condition number of the synthetic data set.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import datasets as D
from engine.figures.pmt import feature_scale_figure

SYNTHETIC_KAPPAS = (1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6)
TASK_CHOICES = ("auto-detect", "regression", "classification", "text-classification")
LICENCE = "[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/)"


# ------------------------------------------------------------------------------------------------
# Cached engine calls (bundled data only: uploads never enter the cross-session cache)
# ------------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False)
def registry_table() -> pd.DataFrame:
    table = D.list_datasets()
    table["source"] = [
        f"https://doi.org/{s.removeprefix('doi:')}" if s.startswith("doi:") else "" for s in table["source"]
    ]
    return table


@st.cache_data(show_spinner="Loading the data set ...")
def bundled(name: str, kappa: float | None = None) -> D.Dataset:
    if name == "synthetic":
        return D.load_dataset("synthetic", kappa=float(kappa if kappa is not None else 1e3))
    return D.load_dataset(name)


@st.cache_data(show_spinner=False)
def bundled_summary(name: str, kappa: float | None = None):
    ds = bundled(name, kappa)
    return column_table(ds), summary_table(ds)


@st.cache_data(show_spinner=False)
def bundled_scale_figure(name: str, kappa: float | None = None):
    return feature_scale_figure(bundled(name, kappa).X)


def column_table(ds: D.Dataset) -> pd.DataFrame:
    frame = ds.X.assign(**{ds.target_name: ds.y.to_numpy()})
    role = {c: "feature" for c in ds.feature_names} | {ds.target_name: "target"}
    return pd.DataFrame(
        {
            "column": [str(c) for c in frame.columns],
            "role": [role.get(c, "metadata") for c in frame.columns],
            "dtype": [str(t) for t in frame.dtypes],
            "missing": frame.isna().sum().to_numpy(),
            "distinct values": frame.nunique().to_numpy(),
        }
    )


def summary_table(ds: D.Dataset) -> pd.DataFrame:
    frame = ds.X.assign(**{ds.target_name: ds.y.to_numpy()})
    num = frame.select_dtypes(include="number")
    if num.shape[1] == 0:
        return frame.describe().T
    return num.describe().T


def upload_views(ds: D.Dataset):
    """Column table, summary and figure of an upload, memoised in THIS session only (not st.cache_data,
    which is shared between sessions: uploaded data must stay in the uploader's session)."""
    memo = st.session_state.get("_upload_views")
    if memo is None or memo[0] is not ds:
        fig = feature_scale_figure(ds.X) if ds.task != "text-classification" else None
        memo = (ds, column_table(ds), summary_table(ds), fig)
        st.session_state["_upload_views"] = memo
    return memo[1:]


# ------------------------------------------------------------------------------------------------
# Page
# ------------------------------------------------------------------------------------------------
ss = st.session_state
ss.setdefault("dataset_name", "ccpp")
ss.setdefault("uploaded_dataset", None)
ss.setdefault("synthetic_kappa", 1e3)

st.title("Data")
st.markdown(
    "Pick the data set the PMT and NVDP pages work on, or upload your own CSV. Every bundled set is a "
    f"UCI Machine Learning Repository release, licensed {LICENCE}; cite the DOI when you use it."
)

st.subheader("Bundled data sets")
st.dataframe(
    registry_table(),
    hide_index=True,
    width="stretch",
    column_config={
        "name": st.column_config.TextColumn("name", help="Short name used by the engine and the CLI"),
        "rows": st.column_config.NumberColumn("rows", help="Number of samples n"),
        "features": st.column_config.NumberColumn("features", help="Number of features d (after one-hot encoding)"),
        "task": st.column_config.TextColumn("task"),
        "target": st.column_config.TextColumn("target", help="Column the models predict"),
        "source": st.column_config.LinkColumn("source (DOI)", display_text=r"https://doi\.org/(.*)",
                                              help="Digital Object Identifier of the data set; cite it"),
    },
)

choose_col, upload_col = st.columns([1, 1], gap="large")

# --- upload (processed first, so a new valid upload can become the active choice below) ----------
with upload_col:
    st.subheader("Upload a CSV")
    st.caption(
        ":material/lock: Uploaded data stays in this browser session (in memory) and is never written to "
        "disk, logged or shared with other sessions. Comma, semicolon or tab separated; a header line; at "
        "most 50 MB."
    )
    # The uploader's key carries a generation number so "Forget" can also empty the widget.
    up = st.file_uploader("CSV file", type=["csv", "tsv", "txt"], key=f"data_upload_{ss.get('_upload_gen', 0)}",
                          help="A header line with column names, then one row per sample. "
                          "Numbers only in feature columns; no missing values.")
    if up is not None:
        try:
            columns = D.read_csv_columns(up)
        except ValueError as exc:
            columns = None
            st.error(f"**{up.name}** cannot be used: {exc}", icon=":material/error:")
        except Exception as exc:  # never a traceback in the browser
            columns = None
            st.error(f"**{up.name}** could not be read ({type(exc).__name__}): {exc}", icon=":material/error:")
        if columns:
            fid = up.file_id
            target = st.selectbox("Target column", columns, index=len(columns) - 1, key=f"up_target_{fid}",
                                  help="The column to predict. Default: the last column.")
            options = [c for c in columns if c != target]
            features = st.multiselect("Feature columns", options, default=options, key=f"up_features_{fid}_{target}",
                                      help="Columns used as inputs. Default: all but the target.")
            task = st.selectbox("Task", TASK_CHOICES, key=f"up_task_{fid}",
                                help="auto-detect: classification only if the target column is written as true/false; "
                                "a 0/1 column is a regression target unless you choose classification "
                                "(the task is never guessed from the private values).")
            memo_key = (fid, target, tuple(features), task)
            memo = ss.get("_upload_memo")
            fresh = memo is None or memo[0] != memo_key
            if fresh:
                try:
                    result = D.read_csv_upload(up, target=target, features=features,
                                               task=None if task == "auto-detect" else task)
                except ValueError as exc:
                    result = f"{exc}"
                except Exception as exc:  # never a traceback in the browser
                    result = f"could not be read ({type(exc).__name__}): {exc}"
                ss["_upload_memo"] = (memo_key, result)
                if isinstance(result, D.Dataset):
                    # only a valid upload replaces the previous upload and becomes the active data set
                    ss["uploaded_dataset"] = result
                    ss["dataset_name"] = result.name
                    ss["data_active_choice"] = result.name
            result = ss["_upload_memo"][1]
            if isinstance(result, str):
                st.error(f"**{up.name}** cannot be used: {result}", icon=":material/error:")
                st.caption(f"The active data set is still **{ss['dataset_name']}**.")
            else:
                st.success(f"**{up.name}** is valid: {result.n} rows, {result.d} features, task {result.task}.",
                           icon=":material/check_circle:")
    if ss.get("uploaded_dataset") is not None:
        if st.button("Forget the uploaded data", key="forget_upload",
                     help="Remove the uploaded data from this session"):
            if str(ss["dataset_name"]).startswith("upload:"):
                ss["dataset_name"] = "ccpp"
                ss["data_active_choice"] = "ccpp"
            ss["uploaded_dataset"] = None
            ss.pop("_upload_memo", None)
            ss.pop("_upload_views", None)
            ss["_upload_gen"] = ss.get("_upload_gen", 0) + 1
            st.rerun()

# --- active data set --------------------------------------------------------------------------------
uploaded: D.Dataset | None = ss.get("uploaded_dataset")
names = list(registry_table()["name"])
options = names + ([uploaded.name] if uploaded is not None else [])
if ss["dataset_name"] not in options:
    ss["dataset_name"] = "ccpp"
if ss.get("data_active_choice") not in options:
    ss["data_active_choice"] = ss["dataset_name"]


def _on_choice() -> None:
    ss["dataset_name"] = ss["data_active_choice"]


with choose_col:
    st.subheader("Active data set")
    st.selectbox(
        "Data set used by the other pages",
        options,
        key="data_active_choice",
        on_change=_on_choice,
        format_func=lambda n: f"{n} (your upload)" if n.startswith("upload:") else n,
        help="The PMT and NVDP pages read this choice. Uploads appear here once they pass validation.",
    )
    ss["dataset_name"] = ss["data_active_choice"]
    if ss["dataset_name"] == "synthetic":
        st.select_slider(
            "Condition number kappa of the synthetic covariance",
            options=SYNTHETIC_KAPPAS,
            key="synthetic_kappa",
            format_func=lambda k: f"{k:g}",
            help="kappa = largest / smallest eigenvalue of Sigma. Large kappa = ill-conditioned features, "
            "where private regression without PMT struggles.",
        )

name = ss["dataset_name"]
kappa = float(ss["synthetic_kappa"]) if name == "synthetic" else None
try:
    ds = uploaded if name.startswith("upload:") else bundled(name, kappa)
except (ValueError, TypeError) as exc:
    st.error(f"Cannot load **{name}**: {exc}", icon=":material/error:")
    st.stop()
ss["dataset_shape"] = (name, ds.n, ds.d)

st.divider()
st.subheader(f"Preview: {ds.name}")
st.markdown(ds.description)
if ds.doi:
    st.caption(f"Source: {ds.citation} Licence: {LICENCE}.")
m1, m2, m3, m4 = st.columns(4)
m1.metric("rows (n)", f"{ds.n:,}", help="Number of samples")
m2.metric("features (d)", ds.d, help="Number of input columns (after one-hot encoding for bank)")
m3.metric("task", ds.task)
m4.metric("target", ds.target_name, help="The column the models predict")
st.markdown(f"**Shape:** {ds.n} rows x {ds.d} features (plus the target `{ds.target_name}`)")

if ds.task == "text-classification":
    counts = pd.crosstab(ds.X["source"], ds.y) if "source" in ds.X else ds.y.value_counts().to_frame()
    st.markdown("**Label counts** (1 = positive, 0 = negative)")
    st.dataframe(counts, width="content")
    st.info("These sentences are embedded by a transformer on the NVDP page; they have no numeric feature "
            "scales to show here.", icon=":material/info:")
else:
    fig = bundled_scale_figure(name, kappa) if not name.startswith("upload:") else upload_views(ds)[2]
    st.plotly_chart(fig, width="stretch", config={"toImageButtonOptions": {"format": "png", "scale": 3}})
    st.caption("Features on very different scales make the second-moment matrix ill-conditioned; PMT whitens "
               "them with a public sample, and standardising with public-sample statistics also helps.")

if name.startswith("upload:"):
    types, summary = upload_views(ds)[:2]
else:
    types, summary = bundled_summary(name, kappa)
tab_types, tab_summary, tab_rows = st.tabs(["Column types", "Summary statistics", "First rows"])
with tab_types:
    st.dataframe(types, hide_index=True, width="stretch")
with tab_summary:
    st.dataframe(summary, width="stretch")
with tab_rows:
    st.dataframe(ds.X.head(50).assign(**{ds.target_name: ds.y.head(50).to_numpy()}), width="stretch")
