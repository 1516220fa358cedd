"""One truth about the data: the one place where an upload or a Data-page choice becomes the active data.

Both uploads (the Data page's and the PMT page's "Use this data") call :func:`adopt_upload`, so they
follow one rule: the PMT task follows the file's task (its methods and metric reset with it), the file
becomes the data set of every page, and the public sample is at most :func:`ui.pmt.compute.core.default_n_pub`
rows (min(200, 20 % of the rows): a small file never becomes a third public). A bundled set chosen on
the Data page switches the PMT task to the set's own (:func:`adopt_choice`).

An upload lives in the browser session only, so a reload loses it: the URL carries the file's *name*
(``upload=<file>``, never its rows), and :func:`lost_upload` then says which file is gone.
:func:`computed_on` records the data set the page actually computed on, for the sidebar.
"""

from __future__ import annotations

import streamlit as st

from engine.markup import md_escape, md_name

ss = st.session_state

#: URL parameter that names an upload (its file name only), so a reload can say the upload is gone.
UPLOAD_PARAM = "upload"


def page_task_for(ds_task: str) -> str | None:
    """The PMT page's task for a data set's task (``regression`` -> ridge regression ...), or None."""
    from ui.pmt.compute import core as C

    return next((t for t in C.supported_tasks() if ds_task in C.DATA_TASKS[t]), None)


def _set_task(task: str | None) -> None:
    """Switch the PMT task; a new task starts from its own default methods and metric."""
    if task is not None and ss.get("task") != task:
        from ui.pmt.compute import core as C

        ss["task"] = task
        ss["methods"] = C.default_methods(task)
        ss["metric"] = C.metrics_for(task)[0]


def adopt_upload(ds) -> None:
    """Make a validated upload the active data of every page (both upload flows call this).

    Sets ``uploaded_dataset``, ``dataset_name`` and the PMT page's ``data`` to it, switches the PMT task
    to the file's (methods and metric reset), and caps ``n_pub`` at :func:`ui.pmt.compute.core.default_n_pub`
    of its rows. Clears a "your upload was lost" notice. Must run before the widgets bound to these keys
    are drawn (a callback, or a page that does not draw them).
    """
    from ui.pmt.compute import core as C

    ss["uploaded_dataset"] = ds
    ss["dataset_name"] = ss["data"] = ds.name
    _set_task(page_task_for(ds.task))
    ss["n_pub"] = min(int(ss.get("n_pub", 200) or 200), C.default_n_pub(ds.n))
    ss.pop("_lost_upload", None)
    ss["_scroll_to_results"] = True


def adopt_choice(name: str, ds_task: str | None) -> None:
    """A data set chosen on the Data page: the active data of every page, the PMT task following its task."""
    ss["dataset_name"] = name
    if ds_task is not None and page_task_for(ds_task) is not None:
        ss["data"] = name
        _set_task(page_task_for(ds_task))


def note_url_upload() -> None:
    """Once per session: a link or reload naming an upload this session does not hold -> remember it's lost."""
    if ss.get("_upload_param_seen"):
        return
    ss["_upload_param_seen"] = True
    name = st.query_params.get(UPLOAD_PARAM)
    up = ss.get("uploaded_dataset")
    if name and (up is None or up.name != f"upload:{name}"):
        ss["_lost_upload"] = str(name)


def lost_upload() -> str | None:
    """The file name of an upload a reload (or a shared link) lost, or None."""
    return ss.get("_lost_upload")


def show_lost_upload(shown_instead: str | None) -> None:
    """A visible warning that the upload is gone, what is shown instead, and the way back."""
    name = lost_upload()
    if not name:
        return
    st.warning(f"Your uploaded file **{md_escape(name)}** is not here any more: uploads live only in the browser session's "
               "memory and are never stored, and a reload or a shared link starts a new session. "
               + (f"Showing **{md_name(shown_instead)}** instead. " if shown_instead else "")
               + "Upload the file again (in the controls under *Upload your own CSV*, or on the Data page) to go back to it.",
               icon=":material/cloud_off:")
    st.page_link("app_pages/data.py", label="Upload it again on the Data page", icon=":material/upload_file:")


def computed_on(name: str, n: int, d: int) -> None:
    """Record the data set the page just computed on (the sidebar names it; see :func:`ui.common.state.settings_summary`)."""
    ss["_computed_on"] = (str(name), int(n), int(d))
