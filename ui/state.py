"""Session-state defaults shared by every page, so settings survive page switches.

Pages read and write ``st.session_state[key]`` for the keys below; :func:`init_state` fills in the
defaults once per browser session (never overwriting what the user set). Nothing here is shared
between sessions.

Widgets that edit a shared setting use the setting's name as their ``key`` together with
:func:`persist` (Streamlit >= 1.67: ``persist_state="session"`` keeps the value when the page is not
rendered, e.g. after a page switch; ``bind="query-params"`` mirrors it in the URL so a shared link
reproduces the view). A widget bound this way must not also pass ``value=``: its value comes from
session state, which :func:`init_state` pre-fills.
"""

from __future__ import annotations

import math

import streamlit as st

#: Log-spaced epsilon values offered by the epsilon slider (0.05 .. 20, about 3 per decade).
EPSILON_OPTIONS: tuple[float, ...] = (0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0)

#: Coarse epsilon grid of the error-vs-epsilon sweep (the chosen epsilon is always added).
EPSILON_GRID: tuple[float, ...] = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)

#: Ridge penalties offered by the lam slider (0 = no penalty).
LAM_OPTIONS: tuple[float, ...] = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)

#: delta values offered (the usual choices; 1e-5 is the default).
DELTA_OPTIONS: tuple[float, ...] = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3)

#: Public sample sizes of the error-vs-n_pub sweep (those < the private n are kept).
N_PUB_GRID: tuple[int, ...] = (20, 50, 100, 200, 500, 1000, 2000)

#: Epsilon below / above which the page shows an advisory note.
EPSILON_ADVISORY = (0.2, 5.0)

#: The working default the app opens with (DASHBOARD.md, "The first minute").
DEFAULTS: dict = {
    "dataset_name": "ccpp",
    "task": "regression",
    "epsilon": 1.0,
    "delta": 1e-5,
    "n_pub": 200,
    "seeds": 20,
    "lam": 1e-4,
    "eta": 0.05,
    "neighbouring": "replace-one",
    "clip_radius": 0.0,
    "methods": ["PMT", "DP-RR", "DP-GD", "Non-private"],
    "metric": "l2_error",
    "standardize": True,
    "public_source": "split",
    "split_seed": 0,
    "presenter": False,
}


def init_state() -> None:
    """Fill in missing session-state keys with :data:`DEFAULTS` (idempotent; lists are copied)."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = list(value) if isinstance(value, list) else value


def persist(key: str, *, url: bool = True) -> dict:
    """Keyword arguments that bind a widget to the shared setting ``key``.

    Parameters
    ----------
    key : str
        Session-state key (one of :data:`DEFAULTS` or a page's own key).
    url : bool, default True
        Also mirror the value in the URL query string (``?epsilon=0.5``).

    Returns
    -------
    dict
        ``key=..., persist_state="session"`` (and ``bind="query-params"``), to splat into a widget call.
    """
    kw = {"key": key, "persist_state": "session"}
    if url:
        kw["bind"] = "query-params"
    return kw


def fmt_num(x) -> str:
    """Compact number for the settings summary (``1e-05``, ``0.5``, ``inf``)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    return "inf" if math.isinf(x) else f"{x:g}"


def settings_summary() -> None:
    """A compact summary of the active settings, drawn into the current container (the frame puts it
    in the sidebar, so it is visible on every page and in every screenshot)."""
    ss = st.session_state
    name = str(ss.get("dataset_name", DEFAULTS["dataset_name"]))
    up = ss.get("uploaded_dataset")
    if name.startswith("upload") and up is not None:
        name = f"{up.name} ({up.n} rows x {up.d} features)"
    else:
        shape = ss.get("dataset_shape")
        if shape and shape[0] == name:
            name = f"{name} ({shape[1]} rows x {shape[2]} features)"
    with st.container():
        st.caption("Active settings")
        st.markdown(
            f"**Data:** {name}  \n"
            f"**epsilon** = {fmt_num(ss.get('epsilon', DEFAULTS['epsilon']))}, "
            f"**delta** = {fmt_num(ss.get('delta', DEFAULTS['delta']))}  \n"
            f"**n_pub** = {ss.get('n_pub', DEFAULTS['n_pub'])} public rows, "
            f"**seeds** = {ss.get('seeds', DEFAULTS['seeds'])}  \n"
            f"**lam** = {fmt_num(ss.get('lam', DEFAULTS['lam']))}, "
            f"**{ss.get('neighbouring', DEFAULTS['neighbouring'])}** neighbours",
            help="epsilon, delta: the (epsilon, delta)-differential-privacy target (smaller = more private). "
            "n_pub: size of the public sample. seeds: repetitions of each noisy run. lam: ridge penalty. "
            "replace-one / add-remove: which neighbouring data sets the guarantee compares.",
        )


def ensure_frame() -> None:
    """Make sure this page runs inside the ``app.py`` frame (call it first in every page).

    Streamlit decides once per server process whether the app uses the legacy ``pages/``
    directory: while no script has called ``st.navigation`` yet, a folder named ``pages`` next to
    the entry script switches the runner to the legacy mode. If the very first request to a fresh
    server is a deep link (``/pmt?epsilon=0.5``, a shared link), the page script then runs on its
    own, without the frame (no wide layout, no settings summary, file-name navigation) for every
    later session too. This guard detects that mode, switches it off and reruns, so the frame's
    ``st.navigation`` takes over and resolves the same page from the URL.

    It reads and sets ``streamlit.runtime.pages_manager.PagesManager.uses_pages_directory`` (not a
    public API; checked on Streamlit 1.67); if that attribute is missing it does nothing.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - layout of a future Streamlit
        return
    if getattr(PagesManager, "uses_pages_directory", None):
        PagesManager.uses_pages_directory = False
        st.rerun()
