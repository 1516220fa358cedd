"""PMT regression explorer: pick data, move the privacy knob, see the privacy-utility trade-off.

Thin page, a table of contents of its sections, each a function in ``ui/``: the header
(:func:`ui.common.layout.page_header`), the controls on the left (:mod:`ui.pmt.controls`, the upload in
:mod:`ui.pmt.upload`), the cached computations (:mod:`ui.pmt.run`, which calls the engine's sweeps
and the estimators' ``report_``), and on the right the headline numbers (:mod:`ui.pmt.headline`)
and the tabs with the export (:mod:`ui.pmt.tabs`). It computes no DP quantity itself.
"""

from __future__ import annotations

import streamlit as st

from ui.pmt import controls as pmt_controls
from ui.pmt import headline as pmt_headline
from ui.pmt import public_mode as pmt_public_mode
from ui.pmt import run as pmt_run
from ui.pmt import tabs as pmt_tabs
from ui.pmt.compute.view import PMTView
from ui.common import verdict
from ui.common.data_choice import show_lost_upload
from ui.common.layout import RESULTS_ANCHOR, intro, page_header, scroll_to_results
from ui.common.settings import K
from ui.common.state import init_state, url_load, url_sync

init_state()
url_problems = url_load(K.url_keys)  # the settings a link carries (a shared link reproduces the view)
from ui.pmt.settings_load import apply_pending, uploader as settings_uploader  # noqa: E402

url_problems += apply_pending()  # a settings file loaded in the previous run (before the widgets are drawn)
#: The plain-words introduction (an expander at the top of the controls; hidden in presenter mode).
PMT_INTRO = (
    "**PMT** (*public-moment-guided truncation*) uses a small **public** sample to whiten the private rows, "
    "cuts off the rare rows beyond a radius **R**, and adds Gaussian noise to the two statistics ridge "
    "regression needs. It is compared with two **private-only baselines**: **DP-RR** (differentially private "
    "ridge regression from noisy sufficient statistics of rows clipped at radius **C**) and **DP-GD** "
    "(differentially private gradient descent with per-row clipping). **epsilon** and **delta** are the "
    "differential-privacy (DP) budget: smaller = more private. **mu** is the same budget in Gaussian DP "
    "(GDP). For logistic regression the private-only baselines are **DP-Newton** (noisy Newton steps on "
    "clipped rows) and DP-GD. **kappa** is a condition number (largest / smallest eigenvalue; 1 is ideal). "
    "**lam** is the ridge penalty; **n_pub** the number of public rows.")

# ---- header: title, presenter mode (bigger text, fewer knobs) ----
presenter = page_header("PMT regression: privacy vs accuracy", url_problems)
from ui.common.story import story_line  # noqa: E402

story_line("pmt")  # a story link: its point in one line, while the view is the story's

# ---- controls (left): data, privacy, model ----
pmt_controls.task_from_link()
ctrl, main = st.columns([1.3, 3], gap="large")
main.container(key=RESULTS_ANCHOR).html("<span></span>")  # marks the results column (ui.common.layout: phones)
problems: list[str] = []
with ctrl:  # the plain-words introduction tops the controls, so the verdict, numbers and figure keep the first screen
    intro("What am I looking at? PMT and the symbols in plain words", PMT_INTRO, presenter)
    task = pmt_controls.data_controls(problems, presenter)
    pmt_public_mode.mode_controls(task, problems)
    pmt_controls.privacy_controls(presenter)
    pmt_controls.model_controls(task, presenter)
    if not presenter:
        settings_uploader()


with main:  # a reload or a link lost the upload: said first where the numbers are (phones: on the first screen)
    show_lost_upload(str(st.session_state.get(K.data) or "").removeprefix("upload:") or None)

# ---- results (right): headline and tabs ----
@st.fragment
def _results_panel(view: PMTView, task: str) -> None:
    """Headline metrics, the metric switch and the tabs. A fragment: switching the metric or the ledger's
    method reruns only this panel (everything here is cached or cheap)."""
    lead = st.empty()  # the verdict in words leads; it needs the metric the headline picks
    headline = pmt_headline.headline(view, task, presenter)  # with the line naming the data computed on
    said = verdict.pmt_verdict(view, headline.metric, headline.head)
    verdict.show(said, lead)
    pmt_tabs.tabs(view, task, headline, presenter, said)  # its warnings are worded against the same verdict
    # the diagnostics row under the figure: the verdict, the method numbers and the figure keep the first screen
    pmt_headline.diagnostics(view, headline, presenter)
    verdict.non_private_badge(presenter)  # every mode keeps the privacy labels (presenter mode included)
    url_sync(K.url_keys)  # a fragment rerun does not reach the end of the page


with main:
    view = pmt_run.compute(task, problems)  # cached; the lam and n_pub sweeps wait for their tab
    if view is not None:
        _results_panel(view, task)
        pmt_public_mode.statement_caption(view)
        scroll_to_results()  # after "Use this data" (the button sits far down the controls)

url_sync(K.url_keys)
