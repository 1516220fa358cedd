"""The NVDP page's "bring your own text" flow: upload, validate, encode and train in the session.

Streamlit glue only (the engine side is :mod:`engine.nvdp.user_text`). The uploaded texts, their
token states and the two models live in ``st.session_state["nvdp_user"]``; nothing is written to
disk unless the user ticks the cache option.
"""

from __future__ import annotations

import time

import streamlit as st

from engine.markup import md_escape
from engine.nvdp.bundled import estimate_seconds, fmt_seconds_range

ss = st.session_state


def user_data_flow(settings):
    """Upload, validate, encode and train on the user's texts; returns the session's trained pair or stops."""
    from engine.nvdp.user_text import MAX_CHARS, MAX_ROWS, MIN_PER_CLASS, MIN_ROWS, read_text_csv, train_on_texts

    up = st.file_uploader("CSV with a text column and a label column", type=["csv", "tsv", "txt"], key="nvdp_upload",
                          help=f"UTF-8 (or Latin-1), comma / semicolon / tab separated; {MIN_ROWS}-{MAX_ROWS} rows, "
                          f"texts up to {MAX_CHARS} characters, at least {MIN_PER_CLASS} rows per class. A text that contains the "
                          'separator goes in double quotes ("Good, but slow",pos; a quote inside is written twice).')
    user = ss.get("nvdp_user")
    if up is None:
        if user is not None:
            return user
        st.info("Upload a CSV to train the two models on your texts. Column names such as *text* and *label* are "
                "found automatically.", icon=":material/upload_file:")
        st.stop()
    from engine.datasets.upload import read_csv_columns

    try:
        cols = read_csv_columns(up)
        c1, c2 = st.columns(2)
        guess_t = next((c for c in cols if c.lower() in ("text", "sentence", "review", "comment")), cols[0])
        guess_l = next((c for c in cols if c.lower() in ("label", "class", "target", "sentiment")), cols[-1])
        tcol = c1.selectbox("Text column", cols, index=cols.index(guess_t), key="nvdp_upload_text")
        lcol = c2.selectbox("Label column", cols, index=cols.index(guess_l), key="nvdp_upload_label")
        ds = read_text_csv(up, text_column=tcol, label_column=lcol)
    except ValueError as exc:
        kept = f" Still showing your earlier texts ({md_escape(user['name'])})." if user is not None else ""
        st.error(f"**This file cannot be used.** {md_escape(exc, 1000)}{kept}", icon=":material/error:")
        if user is not None:  # a rejected file never replaces the texts already trained on
            return user
        st.stop()
    if user is not None and user["key"] == ds.key() + settings.key():
        return user
    counts = ", ".join(f"{c} {int((ds.labels == i).sum())}" for i, c in enumerate(ds.classes))
    est = estimate_seconds(settings, n_encode=ds.n, n_texts=ds.n)
    st.markdown(f"**{ds.n} texts**, classes: {counts}" + (" (read as Latin-1)" if ds.encoding != "utf-8" else "")
                + f". Encoding and training both models on {est['n_train']} of them: estimated "
                f"{fmt_seconds_range(est['total_min'], est['total'])} on an otherwise idle machine (early stopping "
                f"may end a model after {min(settings.epochs, settings.patience + 1)} of its {settings.epochs} "
                f"epochs; the test accuracy is on {ds.n // 6} texts).")
    keep = st.checkbox("Keep the token states of these texts in the on-disk cache (faster next time)", value=False,
                       key="nvdp_upload_cache")
    st.button("Encode and train", type="primary", key="nvdp_upload_go",
              on_click=lambda: ss.__setitem__("_nvdp_upload_train", True))
    if not ss.pop("_nvdp_upload_train", False):
        st.stop()
    bar = st.progress(0.0, text="starting ...")
    t0 = time.perf_counter()

    def progress(fraction, message):
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=f"{message} ({time.perf_counter() - t0:.0f} s)")
        return True

    try:
        data, models = train_on_texts(ds, settings, progress=progress, cache_states=keep)
    except (ValueError, TypeError) as exc:
        bar.empty()
        st.error(f"**Training failed.** {exc}", icon=":material/error:")
        st.stop()
    bar.empty()  # done: the progress bar and its estimate leave the screen
    st.toast(f"Both models trained in {time.perf_counter() - t0:.0f} s.")
    ss["_nvdp_user_cache"] = {}
    ss["nvdp_user"] = {"key": ds.key() + settings.key(), "data": data, "models": models, "classes": ds.classes,
                       "name": getattr(up, "name", "upload")}
    return ss["nvdp_user"]
