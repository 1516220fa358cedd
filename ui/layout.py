"""Page chrome shared by the PMT and NVDP pages: a compact top and the presenter-mode sizes.

Issue 15: at 1440 x 900 the headline numbers and the main figure must be visible without scrolling,
in normal and in presenter mode. Streamlit's default top padding (6rem) and 2.75rem titles take
~200 px; :func:`page_style` trims them. Presenter mode enlarges every text (Streamlit sizes text in
rem, so a larger root font enlarges headings, metrics and labels alike).
"""

from __future__ import annotations

import streamlit as st

#: Root font size in presenter mode (px; Streamlit's default is 16).
PRESENTER_ROOT_PX = 20

#: Height (px) of a page's main figure: normal mode, presenter mode (fits 900 px with the headline).
FIGURE_HEIGHT = {False: 390, True: 450}


#: Key of an empty container the pages put at the top of their results column (see :func:`page_style`).
RESULTS_ANCHOR = "results_anchor"


def page_style(presenter: bool) -> None:
    """Inject the compact-top CSS (and the presenter font size).

    On a phone (< 640 px) Streamlit stacks the columns in order, so the controls would come before the
    numbers; the row holding the results column (marked by an empty ``st.container(key=RESULTS_ANCHOR)``)
    is stacked in reverse there: the headline numbers and the figure first, the controls below.
    """
    css = ("@media (max-width: 640px) {[data-testid='stHorizontalBlock']:has(.st-key-" + RESULTS_ANCHOR + ")"
           " {flex-direction: column-reverse;}} "
           "[data-testid='stMainBlockContainer'], .block-container {padding-top: 2.6rem; padding-bottom: 3rem;}"
           " h1 {font-size: 2rem !important; padding: 0.1rem 0 0.3rem 0 !important;}")
    if presenter:
        # and hide the explanations, put in st.container(key="teach_...") by the pages
        css += f" html {{font-size: {PRESENTER_ROOT_PX}px;}} [class*='st-key-teach_'] {{display: none;}}"
    st.markdown(f"<style>{css}</style>", unsafe_allow_html=True)
