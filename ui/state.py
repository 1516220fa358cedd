"""Session-state defaults shared by every page, so settings survive page switches.

Pages read and write ``st.session_state[key]`` for the keys below; :func:`init_state` fills in the
defaults once per browser session (never overwriting what the user set). Nothing here is shared
between sessions.
"""

from __future__ import annotations

import streamlit as st

#: The working default the app opens with (DASHBOARD.md, "The first minute").
DEFAULTS: dict = {
    "dataset_name": "ccpp",
    "epsilon": 1.0,
    "delta": 1e-5,
    "n_pub": 200,
    "seeds": 20,
}


def init_state() -> None:
    """Fill in missing session-state keys with :data:`DEFAULTS` (idempotent)."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value


def settings_summary() -> None:
    """A compact, always-visible summary of the active settings (sidebar)."""
    ss = st.session_state
    name = ss.get("dataset_name", DEFAULTS["dataset_name"])
    up = ss.get("uploaded_dataset")
    if name.startswith("upload") and up is not None:
        name = f"{up.name} ({up.n} rows x {up.d} features)"
    with st.sidebar:
        st.caption("Active settings")
        st.markdown(
            f"**Data:** {name}  \n"
            f"**epsilon** = {ss.get('epsilon', DEFAULTS['epsilon']):g}, "
            f"**delta** = {ss.get('delta', DEFAULTS['delta']):g}  \n"
            f"**n_pub** = {ss.get('n_pub', DEFAULTS['n_pub'])} public rows, "
            f"**seeds** = {ss.get('seeds', DEFAULTS['seeds'])}",
            help="epsilon, delta: the (epsilon, delta)-differential-privacy target. "
            "n_pub: size of the public sample. seeds: repetitions of each noisy run.",
        )
