"""Home: what the tool is for, the two methods in a few sentences each, and one-click starts."""

import streamlit as st

from engine.nvdp.claims import home_clipping_sentence
from ui.common.class_mode import on as presenter_on
from ui.common.presets import html_links


#: The one figure for the first NVDP visit (also in README.md): measured in Chromium on a 2-core machine.
FIRST_NVDP_VISIT = ("the two shipped small models and the shipped encoder states of the 500 evaluation sentences "
                    "load (nothing is encoded) and both models' bounds and accuracy are computed; later visits take "
                    "seconds.")

st.title("Privacy-utility explorer")
st.markdown(
    "Explore how much accuracy differential privacy costs, and how two recent methods lower that cost. "
    "Pick a data set, move the privacy knob **epsilon** (smaller = more private), and watch the estimation "
    "error, the condition numbers and the privacy bounds change against the baselines."
)

left, right = st.columns(2)
with left:
    st.subheader("PMT regression")
    st.markdown(
        "*Public-moment-guided truncation* (Cao, Bi & Zhang 2026). A small **public** sample tells us the "
        "shape of the data (its second-moment matrix). We use it to *whiten* the private rows so they look "
        "round, cut off (truncate) the rare rows that stick out beyond a radius that depends only on the "
        "number of features and rows, and add Gaussian noise to the few statistics the regression needs. "
        "Because the whitened data are well conditioned, the noisy estimate stays stable, even at no or "
        "tiny ridge penalty, where private-only baselines (DP-RR, DP-GD) break down."
    )
    st.page_link("app_pages/pmt.py", label="Explore PMT on real data", icon=":material/query_stats:",
                 help="Opens the PMT regression page on the Combined Cycle Power Plant data, figures already drawn.")
with right:
    st.subheader("Clipped NVDP")
    st.markdown(
        "*Nonparametric variational differential privacy* (El Zein, Kumar & Henderson 2026). A transformer "
        "turns a sentence into token vectors; a variational bottleneck replaces them by a random, weighted "
        "set of noisy vectors, and only a sample of that is shared. How private it is shows in the "
        "**Renyi divergence** between the sample distributions of two sentences. *Clipping* the posterior "
        "means, standard deviations and pseudo-counts limits the parameters behind that divergence. "
        + home_clipping_sentence()
    )
    st.page_link("app_pages/nvdp.py", label="Explore NVDP on real sentences", icon=":material/text_fields:",
                 help="Opens the NVDP page on 3,000 review sentences: clipped vs unclipped models, live clipping sliders.")
    st.caption(f"First visit: {FIRST_NVDP_VISIT} Other model settings, or your own texts, train in a few minutes "
               "with a progress bar and a time estimate.")

st.subheader("Stories for a class or a room")
st.markdown("Each link opens a view that makes one point (and can be shared as it is):\n"
            + html_links(presenter=presenter_on()), unsafe_allow_html=True)

st.subheader("What each page is for")
st.markdown(
    "- **Data**: the bundled data sets with their sources, and your own CSV (a header row; numeric columns, no "
    "missing values; at most 50 MB; comma, semicolon or tab separated, decimal commas accepted in `;`/tab files).\n"
    "- **PMT regression**: move epsilon, the ridge penalty and the public sample size; PMT's error against the "
    "private baselines, conditioning, truncation, the privacy ledger, and a report to download.\n"
    "- **NVDP embeddings**: clip a sentence bottleneck live and watch the privacy bounds and the accuracy.  "
    f"First visit: {FIRST_NVDP_VISIT} Other training settings or "
    "your own texts train new models in a few minutes, with progress, a time estimate and Cancel.\n"
    "- **Learn**: short lessons, one idea and one figure each.\n"
    "- **About / reproduce**: the papers, how the numbers were made, how to cite the data, the command line."
)

st.info(
    "Defaults: the Combined Cycle Power Plant data, epsilon = 1, delta = 1e-5, 200 public rows. "
    "Everything you upload stays in this browser session; nothing is written to disk or logged.",
    icon=":material/info:",
)
