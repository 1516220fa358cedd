"""The PMT page's "upload your own CSV" flow: pick the file, its target, features and task, then use it.

Streamlit glue only (the validating reader is :func:`engine.datasets.read_csv_upload`). The file's
bytes live in ``st.session_state[K.upload_raw]`` and the data set read from them in
``st.session_state[K.uploaded_dataset]``; nothing is written to disk or logged.
"""

from __future__ import annotations

import streamlit as st

from engine.datasets import read_csv_columns, read_csv_upload
from ui.pmt.compute import core as C
from ui.common.data_choice import adopt_upload
from ui.common.upload_file import Named  # noqa: F401 - the reader's file type (also for this module's callers)
from ui.common.settings import K

ss = st.session_state


def reset_for_task(task: str) -> None:
    """A new task has its own methods and metrics: start from its defaults."""
    ss[K.methods] = C.default_methods(task)
    ss[K.metric] = C.metrics_for(task)[0]


def _take_file(f) -> None:
    """Hold the uploader's file ``f`` (an ``UploadedFile`` or None) as the one the column choices are for.

    A different file replaces the held one and its target and feature choices (they start again from the
    new file's defaults); an empty uploader (its file removed, or the moment in which a browser replaces
    one file by another: it first sends the removal) holds none, so no column choice or "Use this data"
    is shown for a file the uploader no longer holds.
    """
    if f is None:
        ss.pop(K.upload_raw, None)
        return
    data = f.getvalue()
    if ss.get(K.upload_raw) is None or ss[K.upload_raw][0] != f.name or ss[K.upload_raw][1] != data:
        ss[K.upload_raw] = (f.name, data)
        ss[K.upload_error] = None
        for k in (K.upload_target, K.upload_features):
            ss.pop(k, None)


def _use_upload() -> None:
    """The "Use this data" callback (runs before the script, so it may change widget-bound keys).

    Uses the file the uploader holds at the click, not the one the page last drew its column choices
    for: a click can reach the server in the same rerun as a newly chosen file (before the script has
    read it), and must not use the file that was just replaced.
    """
    _take_file(ss.get(K.upload_file))
    raw = ss.get(K.upload_raw)
    if raw is None:
        ss[K.upload_error] = "Choose a CSV file first."
        return
    name, data = raw
    features = ss.get(K.upload_features) or None
    task = ss.get(K.upload_task, "auto")
    try:
        ds = read_csv_upload(Named(name, data), target=ss.get(K.upload_target), features=features,
                             task=None if task == "auto" else task)
    except (ValueError, TypeError) as exc:
        ss[K.upload_error] = f"The file {name!r} was not loaded: {exc}"
        return
    page_task = next((t for t in C.supported_tasks() if ds.task in C.DATA_TASKS[t]), None)
    if page_task is None:
        ss[K.upload_error] = (
            f"The file {name!r} was read as a {ds.task} task, which this page does not offer yet "
            f"(it offers: {', '.join(C.TASK_LABELS[t] for t in C.supported_tasks())}). "
            "Choose Task = regression above to treat the target as a number. Your previous data stay selected.")
        return
    ss[K.upload_error] = None
    adopt_upload(ds)  # one rule for both upload flows (task, data of every page, n_pub cap)


def upload_expander() -> None:
    """The "Upload your own CSV" expander: file, target and feature columns, task, and "Use this data"."""
    with st.expander("Upload your own CSV", expanded=str(ss.get(K.data)).startswith("upload:")):
        st.caption("Nothing you upload leaves this browser session: it is kept in memory only, never written to "
                   "disk or logged.")
        f = st.file_uploader("CSV file (comma, semicolon or tab separated, header row)", type=["csv", "txt", "tsv"],
                             key=K.upload_file)
        _take_file(f)
        raw = ss.get(K.upload_raw)
        if raw is not None:
            try:
                cols = read_csv_columns(Named(*raw))
            except (ValueError, TypeError) as exc:
                cols = None
                st.error(f"The file {raw[0]!r} cannot be read: {exc}")
            if cols:
                if ss.get(K.upload_target) not in cols:
                    ss[K.upload_target] = cols[-1]
                st.selectbox("Target column (what to predict)", cols, key=K.upload_target)
                others = [c for c in cols if c != ss[K.upload_target]]
                if ss.get(K.upload_features) is None or not set(ss[K.upload_features]) <= set(others):
                    ss[K.upload_features] = others
                st.multiselect("Feature columns", others, key=K.upload_features)
                st.selectbox("Task", ["auto", "regression", "classification"], key=K.upload_task,
                             help="auto: classification only if the target column is written as true/false; a 0/1 "
                             "column is a regression target unless you choose classification (the task is "
                             "never guessed from the private values).")
                st.button("Use this data", on_click=_use_upload, type="primary")
        if ss.get(K.upload_error):
            st.error(ss[K.upload_error])
