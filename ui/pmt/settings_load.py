"""Load a settings file back into the PMT page: the Export tab's ``pmt_settings.json`` (or one written by hand)
sets every control it names, so the page shows the view it was saved from (the CLI reads the same file:
``python -m engine pmt --settings``, :mod:`engine.cli.pmt_settings`).

:func:`state_from_settings` validates each value with the page's link codec (:data:`ui.common.state.URL_CODEC`, the
same rules as a shared link) and returns the session-state updates and one message per value it could not
take. :func:`uploader` draws the upload (under the controls); the updates are applied at the top of the next
run (:func:`apply_pending`), before the widgets are drawn. A data file is never in a settings file: an
uploaded data set, public file or moments file has to be uploaded again (said so).
"""

from __future__ import annotations

import json

import streamlit as st
from ui.common.settings import K



def state_from_settings(payload) -> tuple[dict, list[str]]:
    """``(session-state updates, problems)`` for a settings payload (``{"settings": {...}}``).

    Raises
    ------
    ValueError
        No ``settings`` object.

    Examples
    --------
    >>> up, problems = state_from_settings({"settings": {"task": "regression", "data": "ccpp", "epsilon": 2}})
    >>> up["epsilon"], up["data"], problems
    (2.0, 'ccpp', [])
    """
    from ui.common.state import URL_CODEC

    s = payload.get("settings") if isinstance(payload, dict) else None
    if not isinstance(s, dict):
        raise ValueError('no "settings" object: is this the Export tab\'s pmt_settings.json?')
    up, problems = {}, []
    if s.get("task") in ("regression", "classification", "count"):
        up[K.task] = s["task"]
    data = s.get("data")
    if data is not None:
        if str(data).startswith("upload:"):
            problems.append(f"The data set was an uploaded file ({str(data)[7:]!r}): upload it again.")
        else:
            up[K.data] = up[K.dataset_name] = str(data)
    for key in K.settings_file_keys:  # the settings file's name is the session key
        if key not in s or s[key] is None:
            continue
        parse, fmt = URL_CODEC[key]
        try:
            up[key] = parse(fmt(s[key]))
        except (ValueError, TypeError, KeyError) as exc:
            problems.append(f"{key} = {s[key]!r} was not taken: {exc}.")
    if s.get("public_source") == "file":
        problems.append("The public sample was a separate file: upload it again under Public sample.")
    for key, what in (("moments", "moments file"), ("public_features", "features-only public file")):
        if s.get(key) is not None:
            problems.append(f"The {what} {s[key].get('name', '')!r} is not in the settings file: upload it again.")
    for key in ("response_center", "response_scale"):
        if s.get(key) is not None:
            up[getattr(K, key)] = float(s[key])
    return up, problems


def apply_pending() -> list[str]:
    """At the top of a run: the updates of a settings file loaded in the previous run; returns its messages."""
    got = st.session_state.pop(K.settings_pending, None)
    if got is None:
        return []
    up, problems = got
    st.session_state.update(up)
    return problems


def uploader() -> None:
    """The settings-file upload: valid values are applied at the next run (a rerun now)."""
    f = st.file_uploader("Load a settings file (pmt_settings.json from the Export tab)", type=["json"],
                         key=K.settings_file,
                         help="Sets every control the file names; the data files are uploaded separately.")
    if f is None or st.session_state.get(K.settings_seen) == (f.name, f.size):
        return
    st.session_state[K.settings_seen] = (f.name, f.size)
    try:
        st.session_state[K.settings_pending] = state_from_settings(json.loads(f.getvalue()))
    except (ValueError, UnicodeDecodeError) as exc:
        st.error(f"**This settings file was not accepted.** {exc}", icon=":material/error:")
        return
    st.rerun()
