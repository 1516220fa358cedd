"""Class mode: presenter mode travels with every link, and a story opens in the same tab.

A link with ``presenter=1`` turns presenter mode on for the session it opens (:func:`load`, called by the
router once per session); the pages' URL writers keep ``presenter=1`` in the address while it is on
(:func:`url_extra`), so a copied or reloaded link stays in presenter mode. Stories are written as HTML links
with ``target="_self"`` (Streamlit opens markdown links in a new tab, where presenter mode would be lost),
carrying ``presenter=1`` when it is on (:func:`ui.common.presets.html_links`).
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
    """What the pages' URL writers add to the address: ``{"presenter": "1"}`` while presenter mode is on, and
    the story a link opened while its view is unchanged (:func:`story_line`)."""
    out = {PARAM: "1"} if st.session_state.get("presenter") else {}
    if st.session_state.get("_story"):
        out["story"] = str(st.session_state["_story"])
    return out


def on() -> bool:
    """Whether presenter mode is on in this session."""
    return bool(st.session_state.get("presenter", False))


#: A 50-minute class: (minutes, "lesson" or "story", lesson number or story key), in order.
CLASS_PLAN = (
    (7, "lesson", 1), (4, "story", "epsilon_cost"), (6, "lesson", 2), (6, "lesson", 3), (6, "lesson", 4),
    (3, "story", "conditioning"), (3, "story", "public_enough"), (3, "story", "pmt_beats_baselines"),
    (3, "story", "pmt_beats_public"), (2, "story", "pmt_beats_public_logistic"),
    (5, "lesson", 5), (2, "story", "clipping_rules"),
)


def plan_html(lesson_titles, *, presenter: bool = False) -> str:
    """The class plan as a markdown list of HTML links (same tab; ``presenter=1`` when on): start minute,
    length, then the lesson (``learn?lesson=N``) or the story (its link, and its point)."""
    import html
    from urllib.parse import urlencode

    from ui.common.presets import PRESETS

    stories = {p.key: p for p in PRESETS}
    extra = {"presenter": "1"} if presenter else {}
    out, start = [], 0
    for minutes, kind, what in CLASS_PLAN:
        if kind == "lesson":
            url, title, point = "learn?" + urlencode({"lesson": what, **extra}), lesson_titles[what - 1], ""
        else:
            p = stories[what]
            url, title, point = p.page + "?" + urlencode({**p.params, "story": p.key, **extra}), p.title, p.point
        out.append(f"- {start:02d}-{start + minutes:02d} min: <a href=\"/{html.escape(url)}\" target=\"_self\">"
                   f"{'Lesson ' if kind == 'lesson' else 'Story: '}{html.escape(title)}</a>"
                   + (f" ({html.escape(point)})" if point else ""))
        start += minutes
    return "\n".join(out)


def plan_minutes() -> int:
    """The class plan's length in minutes."""
    return sum(m for m, _, _ in CLASS_PLAN)


def lesson_from_link(n_lessons: int) -> int | None:
    """Once per session, the lesson a ``learn?lesson=N`` link names (1-based), if valid."""
    ss = st.session_state
    if ss.get("_lesson_url_loaded"):
        return None
    ss["_lesson_url_loaded"] = True
    text = st.query_params.get("lesson")
    try:
        n = int(text)
    except (TypeError, ValueError):
        return None
    return n if 1 <= n <= n_lessons else None
