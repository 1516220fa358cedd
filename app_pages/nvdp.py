"""NVDP explorer: clipped vs unclipped NVDP sentence embeddings on real sentences.

Thin page, a table of contents of its sections, each a function in ``ui/``: the settings and the link
(:mod:`ui.nvdp.state`), the header (:func:`ui.common.layout.page_header`), the controls on the left
(:mod:`ui.nvdp.controls`), the two models (:mod:`ui.nvdp.models`: shipped, cached on disk, trained
here with progress and Cancel, or trained on uploaded texts), and on the right the headline numbers
(:mod:`ui.nvdp.headline`) and the tabs with the export (:mod:`ui.nvdp.tabs`). The engine calls are
cached in :mod:`ui.nvdp.cache` (``engine.nvdp.explore``: models trained once and cached on disk;
post-hoc clipping of the trained posteriors; the sentence inspector); the figures come from
``engine.figures.nvdp``. It computes no privacy quantity itself.

Live sliders. A move of C_mu, alpha_min, alpha_max or the Renyi order first computes the headline's
bounds (RD and BDP, both forms, both models); the accuracy of the new caps (the model re-run after the
bottleneck) then starts on a worker thread while the page draws the bounds and the figure of the open
tab, its metric reading "computing ..." (never an accuracy of other caps); the run ends when it is
drawn, and gives way at once to a newer move, stopping the superseded job (ui/nvdp/live.py). Only the
open tab is built (``st.tabs(..., on_change="rerun")``); Utility and Export wait for the accuracy.
Every number is that of ``python -m engine nvdp evaluate`` (tests/engine/test_nvdp_explore.py). Timings:
``bench/bench_nvdp_page.py``.

Small settings for tests and demos come from the environment (``NVDP_PAGE_N_SENTENCES``,
``NVDP_PAGE_EPOCHS``, ``NVDP_PAGE_N_TRAIN``; the model cache lives in ``NVDP_CACHE_DIR``), see
:meth:`engine.nvdp.explore.ExploreSettings.from_env`.
"""

from __future__ import annotations

import streamlit as st

from ui.nvdp import controls as nvdp_controls
from ui.nvdp import headline as nvdp_headline
from ui.nvdp import state as nvdp_state
from ui.nvdp import tabs as nvdp_tabs
from ui.common.layout import RESULTS_ANCHOR, intro, page_header, warm_browser_code
from ui.nvdp.models import load_models
from ui.nvdp.parts import INTRO
from ui.common.state import init_state

init_state()
warm_browser_code()  # the browser loads the chart code while the models load and the bounds are computed
url_problems = nvdp_state.load()  # the page's defaults, and a shared link's settings (once per session)

# ---- header ----
presenter = page_header("NVDP embeddings: private sentence vectors", url_problems)
from ui.common.story import story_line  # noqa: E402

story_line("nvdp")  # a story link: its point in one line, while the view is the story's
ctrl, main = st.columns([1, 3], gap="large")
main.container(key=RESULTS_ANCHOR).html("<span></span>")  # marks the results column (ui.common.layout: phones)
with ctrl:  # the plain-words introduction tops the controls, so the verdict, numbers and figure keep the first screen
    intro("What am I looking at? NVDP, RD, BDP and clipping in plain words", INTRO, presenter)

# ---- model choice (left) and training / loading (right); stops until both models exist ----
with ctrl:
    nvdp_controls.model_controls(presenter)
m = load_models(ctrl, main, presenter)

# ---- clipping sliders (left) ----
with ctrl:
    which, lam = nvdp_controls.clipping_controls(m, presenter)
clip, problems = nvdp_controls.clip_from_sliders(lam)
nvdp_controls.sidebar_summary(m.settings, lam)

# ---- post-hoc evaluation (cached) and drawing (right): bounds now, the accuracy on the worker ----
with main:
    nvdp_controls.stop_if_invalid(problems)
    view = nvdp_headline.evaluate(m, which, clip, lam, presenter)
    nvdp_headline.headline(view)
    nvdp_tabs.tabs(view)
    nvdp_headline.details(view)

nvdp_state.url_sync()  # settings that differ from the defaults (a shared link reproduces the view)
# The accuracy of the new caps, last (see "Live sliders" above): the bounds and the figure are on screen already.
nvdp_headline.finish(view)
