"""Streamlit entry point and router: ``streamlit run app.py``.

The frame sets up shared session state (settings survive page switches), shows the settings
summary in the sidebar, and routes to the pages in ``app_pages/`` (registered here with ``st.navigation``; the folder is not named
``pages/``, which would put Streamlit in its legacy multipage mode). Pages are thin: they call the
engine and draw what it returns.
"""

import streamlit as st

from ui.common import class_mode
from ui.common.data_choice import note_url_upload
from ui.common.state import init_state, settings_summary

st.set_page_config(page_title="Privacy-utility explorer", page_icon="🛡️", layout="wide")
init_state()
class_mode.load()  # ?presenter=1 in a link: presenter mode for this session (ui.common.class_mode)
note_url_upload()  # a reload or link naming an upload this session does not hold: the pages say it is gone
st.session_state.pop("_computed_on", None)  # set again by the page that computes (the sidebar names it)

PAGES = [
    st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("app_pages/data.py", title="Data", icon=":material/table:"),
    st.Page("app_pages/pmt.py", title="PMT regression", icon=":material/query_stats:", url_path="pmt"),
    st.Page("app_pages/nvdp.py", title="NVDP embeddings", icon=":material/text_fields:", url_path="nvdp"),
    st.Page("app_pages/learn.py", title="Learn", icon=":material/school:"),
    st.Page("app_pages/about.py", title="About / reproduce", icon=":material/info:", url_path="about"),
]

#: Pages whose settings are not the PMT / data settings of the sidebar summary (they show their own).
OWN_SETTINGS = {"nvdp"}

page = st.navigation(PAGES)
if page.url_path in OWN_SETTINGS:
    page.run()
else:
    summary = st.sidebar.empty()
    with summary.container():  # visible while the page computes ...
        settings_summary()
    try:
        page.run()
    finally:
        with summary.container():  # ... and redrawn after it, with the values the page used (e.g. from a link)
            settings_summary()
