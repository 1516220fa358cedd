"""The methods' colours (Okabe-Ito, colour-blind safe), shared by every figure module.

A module of its own, without pandas or plotly, so that a figure module that needs only the colours (the
Learn page's lesson styles, :mod:`engine.figures._lesson_style`) does not import
:mod:`engine.figures.pmt` and pandas with it. :data:`engine.figures.pmt.METHOD_COLORS` is this dict.
"""

from __future__ import annotations

__all__ = ["METHOD_COLORS"]

#: One colour per method, everywhere (Okabe-Ito; colour-blind safe).
METHOD_COLORS: dict[str, str] = {
    "PMT": "#0072B2",
    "DP-RR": "#E69F00",
    "DP-RR (oracle C, non-private tuning)": "#F0E442",
    "DP-GD": "#009E73",
    "DP-Newton": "#CC79A7",
    "Public-only": "#56B4E9",
    "PMT-pooled": "#D55E00",
    "Non-private": "#000000",
    # NVDP
    "NVDP clipped": "#0072B2",
    "NVDP unclipped": "#D55E00",
    "clipped": "#0072B2",
    "unclipped": "#D55E00",
}
