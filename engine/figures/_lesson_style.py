"""Shared look and argument checks of the Learn page's lessons (:mod:`engine.figures.lessons`).

The colours (Okabe-Ito, colour-blind safe, matched to :data:`engine.figures.pmt.METHOD_COLORS`), the
figure layout and two small validators used by every lesson module. No Streamlit.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from engine.figures import template_kw
from engine.figures._colors import METHOD_COLORS

#: Okabe-Ito colours of the lessons (colour-blind safe); "whitened"/"clipped" share the PMT blue
#: and "raw"/"unclipped" the NVDP-unclipped vermillion of :data:`engine.figures.pmt.METHOD_COLORS`.
COLORS: dict[str, str] = {
    "main": METHOD_COLORS["PMT"],
    "whitened": METHOD_COLORS["PMT"],
    "clipped": METHOD_COLORS["clipped"],
    "raw": METHOD_COLORS["unclipped"],
    "unclipped": METHOD_COLORS["unclipped"],
    "second": "#E69F00",
    "third": "#009E73",
    "reference": "#000000",
    "muted": "#999999",
}


def _layout(fig: go.Figure, *, title: str, height: int = 400) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=15)),
        **template_kw(),
        height=height,
        margin=dict(l=60, r=20, t=70, b=130),
        legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0.0, font=dict(size=12)),
        hoverlabel=dict(namelength=-1),
        font=dict(size=13),
    )
    return fig


def _two_line_panels(fig: go.Figure) -> go.Figure:
    """Room at the top for the title and three-line panel titles (short lines: a phone's half width): the title at the figure's top edge, the panels
    below (their titles overlapped the title on a phone and at presenter mode's 16 px). Returns ``fig``."""
    fig.update_layout(margin=dict(t=150), title=dict(yref="container", y=0.985, yanchor="top"))
    return fig


def _int_at_least(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return int(value)


def _positive(value, name: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v
