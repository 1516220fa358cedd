"""Class mode: presenter mode travels with every link, and a story opens in the same tab.

A link with ``presenter=1`` turns presenter mode on for the session it opens (:func:`load`, called by the
router once per session); the pages' URL writers keep ``presenter=1`` in the address while it is on
(:func:`url_extra`), so a copied or reloaded link stays in presenter mode. Stories are written as HTML links
with ``target="_self"`` (Streamlit opens markdown links in a new tab, where presenter mode would be lost),
carrying ``presenter=1`` when it is on (:func:`ui.presets.html_links`).
"""

from __future__ import annotations

import streamlit as st

#: The URL parameter of presenter mode.
PARAM = "presenter"


def load() -> None:
    """Once per session: ``?presenter=1`` (or ``0``) in the address sets presenter mode."""
    ss = st.session_state
    if ss.get("_presenter_url_loaded"):
        return
    ss["_presenter_url_loaded"] = True
    value = st.query_params.get(PARAM)
    if value in ("1", "0"):
        ss["presenter"] = value == "1"


def url_extra() -> dict:
    """What the pages' URL writers add to the address: ``{"presenter": "1"}`` while presenter mode is on."""
    return {PARAM: "1"} if st.session_state.get("presenter") else {}


def on() -> bool:
    """Whether presenter mode is on in this session."""
    return bool(st.session_state.get("presenter", False))
