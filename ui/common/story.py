"""A story link's point in one line on the page it opens, while the view is still the story's.

Apart from :mod:`ui.common.class_mode` because it reads both pages' URL codecs (which import class mode).
"""

from __future__ import annotations

import streamlit as st


def _story_holds(preset) -> bool:
    """Whether the page still shows the story's view: every setting of its link has the link's value."""
    ss = st.session_state
    if preset.page == "nvdp":
        from ui.nvdp.state import URL as NVDP_URL

        return all(ss.get(NVDP_URL[k][0]) == NVDP_URL[k][1](v) for k, v in preset.params.items())
    from ui.common.state import URL_CODEC

    def value(k):
        return ss.get(k) if k != "data" else ss.get("data", ss.get("dataset_name"))

    return all(value(k) == URL_CODEC[k][0](v) for k, v in preset.params.items())


def story_line(page: str) -> None:
    """The story a link opened (``story=<key>``), its point in one line at the top of the page it opens, while the
    view is still the story's (a changed setting removes it: the point was checked for the link's view only)."""
    from ui.common.presets import PRESETS

    ss = st.session_state
    key = st.query_params.get("story")
    if key is not None and not ss.get("_story_url_loaded"):
        ss["_story_url_loaded"] = True
        ss["_story"] = key
    preset = next((p for p in PRESETS if p.key == ss.get("_story") and p.page == page), None)
    if preset is None:
        return
    if not _story_holds(preset):
        ss.pop("_story", None)
        return
    st.info(f"**{preset.title}.** {preset.point}", icon=":material/auto_stories:")
