"""Page chrome shared by the PMT and NVDP pages: the header, a compact top and the presenter-mode sizes.

At 1440 x 900 the headline numbers and the main figure must be visible without scrolling,
in normal and in presenter mode. Streamlit's default top padding (6rem) and 2.75rem titles take
~200 px; :func:`page_style` trims them. Presenter mode enlarges every text (Streamlit sizes text in
rem, so a larger root font enlarges headings, metrics and labels alike).
"""

from __future__ import annotations

import functools
import inspect
import json

import streamlit as st

from ui.common.state import persist

#: Root font size in presenter mode (px; Streamlit's default is 16).
PRESENTER_ROOT_PX = 18
#: ... on a short screen (a 1280 x 720 projector): the verdict and the main figure must start on it.
PRESENTER_SHORT_ROOT_PX = 17

#: Height (px) of the PMT page's main figure: normal mode, presenter mode. The verdict, the headline and the whole
#: figure fit the first screen at 1440 x 900 (tests/browser/test_browser_demo.py); presenter mode's figure is wider (no
#: sidebar) and its text larger, so it is a little lower.
FIGURE_HEIGHT = {False: 330, True: 300}
#: Smallest text (px) of a figure in presenter mode: titles, ticks, legend and annotations (for the back of a room).
PRESENTER_FIGURE_PX = 16
#: The NVDP page's main figure: its verdict and two rows of numbers come first, and the figure must still end
#: on the first screen at 1440 x 900 (tests/browser/test_browser_demo.py).
NVDP_FIGURE_HEIGHT = {False: 310, True: 330}


#: st.metric's delta arrow would suggest a direction for a plain "before" or comparison value: these
#: keyword arguments hide it (empty on Streamlit versions without the option).
NO_ARROW = {"delta_arrow": "off"} if "delta_arrow" in inspect.signature(st.metric).parameters else {}

#: Plotly chart options of every figure: the camera button saves a PNG at 3x resolution, no logo.
PLOTLY_CONFIG = {"toImageButtonOptions": {"format": "png", "scale": 3}, "displaylogo": False}




#: Key of an empty container the pages put at the top of their results column (see :func:`page_style`).
RESULTS_ANCHOR = "results_anchor"


#: Phones (< 640 px): the title starts below Streamlit's 60 px header (it was clipped under it), and a row of
#: headline metrics stays two to a row instead of one per screen line, so the figure comes up sooner.
PHONE_CSS = (" @media (max-width: 640px) {[data-testid='stMainBlockContainer'], .block-container {padding-top: 4.2rem;}"
             " h1 {font-size: 1.6rem !important;}"
             " [data-testid='stHorizontalBlock']:has(> [data-testid='stColumn'] [data-testid='stMetric'])"
             ":not(:has(.st-key-" + RESULTS_ANCHOR + "))"
             " {flex-direction: row !important; flex-wrap: wrap !important; row-gap: 0.4rem;}"
             " [data-testid='stHorizontalBlock']:has(> [data-testid='stColumn'] [data-testid='stMetric'])"
             ":not(:has(.st-key-" + RESULTS_ANCHOR + "))"
             " > [data-testid='stColumn'] {flex: 1 1 calc(50% - 1rem) !important; min-width: calc(50% - 1rem) !important;"
             " width: calc(50% - 1rem) !important;}"
             " [data-testid='stMetricValue'] {font-size: 1.7rem !important;}}")
#: Multiselect chips wrap onto more lines instead of being cut after the first few (every method stays visible).
CHIPS_CSS = (" [data-testid='stMultiSelectTagsContainer'], [data-testid='stMultiSelectTagsContainer'] > [role='group']"
             " {flex-wrap: wrap !important; overflow: visible !important; max-height: none !important;"
             " height: auto !important;} div:has(> [data-testid='stMultiSelectTagsContainer'])"
             " {max-height: none !important; height: auto !important; min-height: 40px;}")


#: The verdict's box (``st.container(key="verdict_<tone>", border=True)``, :func:`ui.common.verdict.show`): a tighter padding,
#: so that the verdict, the headline numbers and the main figure share the first screen.
VERDICT_CSS = " [class*='st-key-verdict_'] {padding: 0.55rem 0.9rem !important;}"
#: The result follows the hand: on a wide screen the verdict's box (its sentence names the winner and its number)
#: sticks under Streamlit's 60 px header while any of the results column is on screen, so a control changed far
#: down the left column still shows the new verdict beside it. On the theme's white (.streamlit/config.toml), so
#: the figure scrolls under it. Phones stack the columns (results first): no stickiness there.
STICKY_CSS = (" @media (min-width: 641px) {[class*='st-key-verdict_'] {position: sticky; top: 60px; z-index: 4;"
              " background-color: #FFFFFF;}}")
#: Presenter mode, for a room: the sidebar is hidden (the page's own controls stay; switching presenter off
#: brings it back), the tabs wrap onto a second line instead of hiding behind a scroll arrow, and a picker's
#: chosen value wraps instead of being cut ("L2 estimation (").
PRESENTER_CSS = (" [data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'] {display: none !important;}"
                 " [data-testid='stTabs'] [role='tablist'] {flex-wrap: wrap !important; overflow: visible !important;"
                 " gap: 0.9rem !important;} [data-testid='stTabs'] button[role='tab'] p {font-size: 0.85rem !important;}"
                 " [data-testid='stMainBlockContainer'], .block-container {padding-top: 1.6rem !important;}"
                 " [data-testid='stTabs'] [role='tablist'] ~ button, [data-testid='stTabs'] button[aria-label*='croll']"
                 " {display: none !important;}"
                 " [data-testid='stSelectbox'] [data-baseweb='select'] *, [data-testid='stSelectbox'] [role='combobox'] *"
                 " {white-space: normal !important; text-overflow: clip !important; overflow: visible !important;}"
                 " [data-testid='stSelectbox'] [data-baseweb='select'] > div, [data-testid='stSelectbox'] [role='combobox']"
                 " {height: auto !important; max-height: none !important;}")


def presenter_fonts(fig, size: int = PRESENTER_FIGURE_PX):
    """``fig`` with every text at least ``size`` px (layout, axis ticks and titles, legend, annotations, title);
    returns ``fig``. For presenter mode."""
    fig.update_layout(font=dict(size=size), legend=dict(font=dict(size=size)))
    fig.update_xaxes(tickfont=dict(size=size), title_font=dict(size=size))
    fig.update_yaxes(tickfont=dict(size=size), title_font=dict(size=size))
    fig.update_annotations(font_size=size)
    title_size = fig.layout.title.font.size
    if title_size is not None and title_size < size:
        fig.update_layout(title_font_size=size)
    return fig


def page_style(presenter: bool) -> None:
    """Inject the compact-top CSS (and the presenter font size).

    On a phone (< 640 px) Streamlit stacks the columns in order, so the controls would come before the
    numbers; the row holding the results column (marked by an empty ``st.container(key=RESULTS_ANCHOR)``)
    is stacked in reverse there: the headline numbers and the figure first, the controls below.
    """
    css = ("@media (max-width: 640px) {[data-testid='stHorizontalBlock']:has(.st-key-" + RESULTS_ANCHOR + ")"
           " {flex-direction: column-reverse;}} "
           "[data-testid='stMainBlockContainer'], .block-container {padding-top: 2.6rem; padding-bottom: 3rem;}"
           " h1 {font-size: 2rem !important; padding: 0.1rem 0 0.3rem 0 !important;}"
           + PHONE_CSS + CHIPS_CSS + VERDICT_CSS + STICKY_CSS)
    if presenter:
        # and hide the explanations, put in st.container(key="teach_...") by the pages
        css += (f" html {{font-size: {PRESENTER_ROOT_PX}px;}} [class*='st-key-teach_'] {{display: none;}}"
                f" @media (max-height: 760px) {{html {{font-size: {PRESENTER_SHORT_ROOT_PX}px;}}}}" + PRESENTER_CSS)
    st.markdown(f"<style>{css}</style>", unsafe_allow_html=True)


#: The Learn page's lesson titles, in order (the class plan's links name them).
LESSON_TITLES = ("epsilon and delta", "Many releases", "The truncation dilemma", "Why conditioning matters",
                 "Renyi divergence and clipping")

#: The presenter-mode page menu (the sidebar is hidden): (page file, label).
PAGE_MENU = (("app_pages/home.py", "Home"), ("app_pages/data.py", "Data"), ("app_pages/pmt.py", "PMT regression"),
             ("app_pages/nvdp.py", "NVDP embeddings"), ("app_pages/learn.py", "Learn (class plan)"),
             ("app_pages/about.py", "About / reproduce"))


def page_header(title: str, url_problems) -> bool:
    """Draw the page title with the presenter switch, apply :func:`page_style`, show the link's problems.

    Parameters
    ----------
    title : str
        The page title.
    url_problems : iterable of str
        Messages about rejected URL parameters, each shown as a warning under the title.

    Returns
    -------
    bool
        Whether presenter mode is on (session key ``presenter``).
    """
    on = bool(st.session_state.get("presenter", False))
    head_l, head_m, head_r = st.columns([4, 1, 1.5] if on else [5, 0.01, 1], vertical_alignment="center")
    with head_l:
        st.title(title)
    with head_r:
        st.toggle("Presenter", help="Presenter mode: hides the explanations and the advanced controls, enlarges the "
                  "text, the numbers and the figures for a room. It travels with links (presenter=1).",
                  **persist("presenter"))
    presenter = bool(st.session_state.get("presenter", False))
    if presenter:  # the sidebar is hidden in presenter mode: the pages stay one click away
        with head_m, st.popover("Pages", icon=":material/menu:"):
            for path, label in PAGE_MENU:
                st.page_link(path, label=label)
            from ui.common.class_mode import plan_html, plan_minutes

            st.markdown(f"**Class plan ({plan_minutes()} minutes)**\n" + plan_html(LESSON_TITLES, presenter=True),
                        unsafe_allow_html=True)
    page_style(presenter)
    for msg in url_problems:
        st.warning(msg, icon=":material/link_off:")
    return presenter


def intro(label: str, text: str, presenter: bool) -> None:
    """A page's plain-words introduction: an expander (drawn where it is called: the top of the controls column,
    so that the results column starts with the verdict); in presenter mode a container that :func:`page_style`
    hides (the audience hears it)."""
    box = st.container(key="teach_intro") if presenter else st.expander(label)
    box.markdown(text)


#: The scroll of :func:`scroll_to_results`. Its names live in a function of their own: the page runs each such
#: script in one global scope, so a top-level ``const`` would be "already declared" from the second upload on.
SCROLL_SCRIPT = ("(() => { const el = document.querySelector('.st-key-" + RESULTS_ANCHOR + "'); "
                 "if (el) { el.scrollIntoView({behavior: 'instant', block: 'start'}); } })();")


def scroll_to_results() -> None:
    """Bring the results column's top (the verdict and the headline) into view, once after a new data choice.

    Runs when ``st.session_state["_scroll_to_results"]`` is set (:func:`ui.common.data_choice.adopt_upload`) and
    clears it. A fixed script (``st.html`` with JavaScript; no user text in it) scrolls the page; without scripts
    nothing happens and the page stays usable.
    """
    if not st.session_state.pop("_scroll_to_results", False):
        return
    st.html(f"<script>{SCROLL_SCRIPT}</script>", unsafe_allow_javascript=True)  # a fixed script, no user text in it


#: Streamlit's browser code that the first screen needs and loads only on first use (file-name prefixes of
#: its chunks in ``streamlit/static/static/js``): the Plotly chart (about 4.7 MB) and the metric.
WARM_CHUNKS = ("PlotlyChart", "Metric")


@functools.lru_cache(maxsize=1)
def _chunk_names() -> tuple[str, ...]:
    """The file names of :data:`WARM_CHUNKS` in this Streamlit's static folder (none found: empty)."""
    import re
    from pathlib import Path

    folder = Path(st.__file__).parent / "static" / "static" / "js"
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return ()
    return tuple(n for n in names if any(re.fullmatch(rf"{c}\.[\w-]+\.js", n) for c in WARM_CHUNKS))


def warm_browser_code() -> None:
    """Have the browser load the code of the Plotly chart and the metric while the server computes.

    Called by the pages that draw a Plotly figure (PMT: as its computation starts; Learn and NVDP: first).
    Streamlit's browser side fetches, compiles and runs the code of a chart or metric only when the first
    one arrives: on a first visit the figure then waited for about 4.7 MB of JavaScript after the numbers
    had been computed (a second or more on a laptop). A fixed script (no user text in it) imports the same
    files, by the URL of Streamlit's own entry script, as soon as the page starts; when the figure arrives its
    code is already loaded (the browser keeps one copy of each module). Nothing is drawn. Sent once per
    session; later runs put an empty placeholder in its place, so that the elements after it keep their
    positions (a shifted slider is a new widget: two of them were on screen during the rerun). A Streamlit
    whose files are named otherwise gets nothing (the page works as before).
    """
    if not _chunk_names():
        return
    if st.session_state.get("_browser_code_warmed"):
        st.empty()  # the script's place on later runs: every element after it keeps its position (and identity)
        return
    st.session_state["_browser_code_warmed"] = True
    files = json.dumps(list(_chunk_names()))
    st.html("<script>(() => { const entry = Array.from(document.querySelectorAll('script[type=module][src]'))"
            ".map(e => e.src).find(u => /\\/static\\/js\\/index\\.[\\w-]+\\.js/.test(u)); if (!entry) return; "
            f"for (const f of {files}) import(new URL(f, entry).href).catch(() => {{}}); }})();</script>",
            unsafe_allow_javascript=True)  # a fixed script: file names from Streamlit's own folder
