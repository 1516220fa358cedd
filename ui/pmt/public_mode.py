"""The PMT page's choice of public information: labelled rows (default), unlabelled rows, or published moments.

:func:`mode_controls` draws the selector (left column, under the data), the one line saying why
public-only and PMT-pooled are missing without public labels, the stated response centre and scale
(ridge: public statements, never the private rows) and the moments file upload, validated with the
engine's reader (:meth:`engine.pmt.public_info.PublicInfo.from_bytes`, in memory). A rejected file shows the engine's
reason and keeps the last accepted file (and every other setting). In the unlabelled mode a features-only
public CSV can be uploaded instead of dropping the labels of the public sample (validated against the data
set's feature columns: :func:`ui.pmt.compute.modes.read_public_features`); every row of the data set is
then private. :func:`spec_fields` adds the choice to the page's spec (the uploaded covariates as their
moments: PMT needs only the second moment); the runs themselves are :mod:`ui.pmt.compute.modes`.
"""

from __future__ import annotations

import streamlit as st

from engine.datasets.guard import bounded
from engine.pmt.public_info import MODE_LABELS, PUBLIC_MODES
from ui.pmt.compute import modes as M
from ui.common.settings import K

ss = st.session_state



def current_mode(task: str) -> str:
    """The chosen kind of public information; "labelled" for a task the mode path does not run (counts)."""
    mode = ss.get(K.public_mode, "labelled")
    return mode if task in M.MODE_TASKS and mode in PUBLIC_MODES else "labelled"


def features_in_use() -> bool:
    """Whether the unlabelled view runs on an uploaded features-only public file (an upload: per-session cache)."""
    return (ss.get(K.public_mode) == "unlabelled" and ss.get(K.rows_source) == "file"
            and ss.get(K.public_features_raw) is not None)


def _features_upload(problems: list[str]) -> None:
    """The unlabelled mode's source: the public sample above with its labels dropped, or a features-only CSV."""
    ss.setdefault(K.rows_source, "split")
    st.radio("Public rows from", ["split", "file"], horizontal=True, key=K.rows_source, persist_state="session",
             format_func={"split": "the public sample above (labels dropped)",
                          "file": "a features-only public CSV"}.get)
    if ss.get(K.rows_source) != "file":
        return
    f = st.file_uploader("Public features CSV (the data set's feature columns; no target needed)",
                         type=["csv", "txt", "tsv"], key=K.public_features_file)
    if f is not None and (ss.get(K.public_features_raw) or (None, None))[:2] != (f.name, f.getvalue()):
        cols = _feature_names()
        try:
            if cols is not None:  # else checked against the data set when the page computes (spec_fields)
                M.read_public_features(f.name, f.getvalue(), cols)
            ss[K.public_features_raw] = (f.name, f.getvalue())
        except ValueError as exc:
            kept = ss.get(K.public_features_raw)
            st.error(f"**This public file was not accepted.** {exc}" + (f" Still using {kept[0]!r}." if kept else ""),
                     icon=":material/error:")
    if ss.get(K.public_features_raw) is None:
        problems.append("Unlabelled public rows: upload a features-only public CSV, or use the public sample above.")


def _feature_names():
    """The feature names of the data set the page last computed on (None before its first run)."""
    got = ss.get(K.feature_names)
    return None if got is None or tuple(ss.get(K.dataset_shape) or ())[:1] != (ss.get(K.data),) else list(got)


def mode_controls(task: str, problems: list[str]) -> str:
    """Draw the public-information section; return the mode in effect. Appends to ``problems`` (no moments file)."""
    if task not in M.MODE_TASKS:
        st.caption("Public information: labelled public rows (the other kinds run ridge and logistic regression).")
        return "labelled"
    ss.setdefault(K.public_mode, "labelled")
    st.radio("Public information", list(PUBLIC_MODES), format_func=MODE_LABELS.get, key=K.public_mode, persist_state="session",
             help="What you have in public: rows with labels, rows without labels (covariates only), or only "
             "published moments (the second-moment matrix or covariance plus mean, with the n_pub it came from). "
             "PMT needs only the second moment.")
    mode = current_mode(task)
    if mode == "labelled":
        return mode
    st.caption(":material/info: " + M.not_offered_line(mode))
    if mode == "unlabelled":
        _features_upload(problems)
    if mode == "moments":
        ss.setdefault(K.moments_source, "split")
        st.radio("Moments from", ["split", "file"], horizontal=True, key=K.moments_source, persist_state="session",
                 format_func={"split": "the public sample above (its moments only)",
                              "file": "a published moments file"}.get)
        if ss.get(K.moments_source) == "file":
            f = st.file_uploader("Moments file (JSON or CSV, as written by python -m engine pmt-moments)",
                                 type=["json", "csv", "txt"], key=K.moments_file)
            if f is not None and (ss.get(K.moments_raw) or (None, None))[:2] != (f.name, f.getvalue()):
                try:  # validated completely (and against the data set's columns once known) before it is kept
                    M.read_moments(f.name, f.getvalue(), _feature_names())
                    ss[K.moments_raw] = (f.name, f.getvalue())
                except ValueError as exc:
                    kept = ss.get(K.moments_raw)
                    st.error(f"**This moments file was not accepted.** {exc}"
                             + (f" Still using {kept[0]!r}." if kept else ""), icon=":material/error:")
            if ss.get(K.moments_raw) is None:
                problems.append("Published moments: upload a moments file, or take the moments of the public sample.")
    if task == "regression":
        st.number_input("Stated centre of y (optional)", value=None, format="%.6g",
                        key=K.response_center,
                        help="A published fact about the target's typical value, e.g. its mean in a public report. Left "
                        "empty: the public rows' mean of the target in a simulation, 0 with a public file.")
        st.number_input("Stated spread of y around that centre (needed with a public file)", value=None,
                        min_value=0.0, format="%.6g", key=K.response_scale,
                        help="How far the target typically is from its centre (the root mean square of y - centre), as "
                        "published. It caps each private target value (B_y = spread x sqrt(1 + ln(2n/eta))) for PMT, "
                        "DP-RR and DP-GD. Never taken from the private rows; required with a moments or "
                        "features-only public file. Left empty in a simulation: the public rows' spread.")
        scale = ss.get(K.response_scale)
        if scale is not None and not scale > 0:
            problems.append(f"Stated response scale: must be > 0, got {scale:g}.")
    return mode


def spec_fields(task: str, feature_names) -> dict:
    """What the mode adds to the page's spec ({} for labelled rows, so that view's cache keys stay as they were).

    Raises
    ------
    ValueError
        The moments file does not fit the data set (missing or extra columns, named), in page terms.
    """
    mode = current_mode(task)
    if mode == "labelled":
        return {}
    out = {"public_mode": mode, "response_center": None, "response_scale": None, "moments": None}
    if task == "regression":
        c, s = ss.get(K.response_center), ss.get(K.response_scale)
        out["response_center"] = None if c is None else float(c)
        out["response_scale"] = None if s is None else float(s)
    if mode == "unlabelled" and ss.get(K.rows_source) == "file" and ss.get(K.public_features_raw) is not None:
        name, data = ss[K.public_features_raw]
        try:
            info = M.read_public_features(name, data, feature_names)
        except ValueError as exc:
            raise ValueError(bounded(f"The public features file {name!r} does not fit the data set: {exc}")) from None
        out["public_features"] = {**info.to_dict(), "rows": info.X_pub.tolist(), "name": name}
    if mode == "moments" and ss.get(K.moments_source) == "file" and ss.get(K.moments_raw) is not None:
        name, data = ss[K.moments_raw]
        try:
            out["moments"] = {**M.moments_spec(M.read_moments(name, data), feature_names), "name": name}
        except ValueError as exc:
            raise ValueError(bounded(f"The moments file {name!r} does not fit the data set: {exc}")) from None
    return out


def restrict_methods(spec: dict) -> dict:
    """The spec with only the methods offered in its mode (ValueError when none is left)."""
    mode = spec.get("public_mode", "labelled")
    if mode == "labelled":
        return spec
    methods = M.offered_methods(spec["task"], mode, spec["methods"])
    if not methods:
        raise ValueError(M.not_offered_line(mode) + " Select PMT, a private-only baseline or the non-private fit.")
    return {**spec, "methods": methods}


def statement_caption(view) -> None:
    """Under the results: where the ridge response centre and scale came from (mode views only)."""
    diag = view.diag
    if diag.public_mode != "labelled" and diag.response_statement:
        st.caption(f":material/info: Response bound B_y from {diag.response_statement}; never from the private "
                   "rows.")
