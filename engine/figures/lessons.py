"""Toy computations and their figures for the dashboard's Learn page (five short lessons).

Each lesson is one idea, computed with the engine's real code where it exists and drawn as one
small Plotly figure. Everything here is pure (no Streamlit), seeded and fast (well under 0.2 s per
figure), so the page can recompute on every slider move. This module gathers the lessons, which live
by topic in :mod:`engine.figures.lessons_accounting` (1, 2), :mod:`engine.figures.lessons_pmt` (3, 4)
and :mod:`engine.figures.lessons_nvdp` (5).

1. **epsilon and delta** -- :func:`gdp_tradeoff`, :func:`dp_tradeoff`, :func:`privacy_profile`,
   :func:`figure_epsilon_delta`. A mu-GDP mechanism (Dong, Roth & Su 2022) as a hypothesis test: the
   attacker's smallest miss rate at each false-alarm rate, and the delta it implies at each epsilon.
2. **mu-GDP composition** -- :func:`composition_table`, :func:`noise_for_total`,
   :func:`figure_composition` (Dong, Roth & Su 2022, Corollary 3.3).
3. **The truncation dilemma** -- :func:`clipped_mean_moments`, :func:`truncation_tradeoff`,
   :func:`simulate_clipped_mean`, :func:`figure_truncation`: a clipped, noised mean of heavy-tailed
   whitened data; bias falls and noise rises as the clipping radius C grows; the PMT radius
   R = sqrt(d (1 + ln(2n/eta))) (docs/specs/PMT.md section 2) is marked.
4. **Why conditioning matters** -- :func:`elongated_cloud`, :func:`whitening_demo`,
   :func:`noisy_inverse_demo`, :func:`figure_whitening`, :func:`figure_noisy_inverse`
   (engine.pmt's transform; docs/specs/PMT.md sections 2-3).
5. **What a Renyi-divergence bound says** -- :func:`clip_gaussian`, :func:`renyi_clipping_curve`,
   :func:`figure_renyi` (docs/specs/NVDP.md sections 3-4; the closed form is
   :func:`engine.nvdp.divergence.renyi_gaussian`).

Examples
--------
>>> round(float(gdp_tradeoff(0.05, 1.0)), 4)
0.7405
>>> composition_table(0.5, [1, 4], delta=1e-5)["mu_total"].tolist()
[0.5, 1.0]
"""

from __future__ import annotations

from engine.figures._lesson_style import COLORS
from engine.figures.lessons_accounting import (
    composition_table,
    dp_tradeoff,
    figure_composition,
    figure_epsilon_delta,
    gdp_tradeoff,
    noise_for_total,
    privacy_profile,
)

#: Lessons 3-5 are imported on first use (PEP 562 ``__getattr__``): the Learn page opens on lesson 1, which
#: needs neither pandas nor :mod:`engine.pmt` (their import was most of the page's first-load CPU time).
_LAZY = {
    "engine.figures.lessons_nvdp": ("clip_gaussian", "figure_renyi", "renyi_clipping_curve"),
    "engine.figures.lessons_pmt": ("NoisyInverseDemo", "WhiteningDemo", "clipped_mean_moments", "elongated_cloud",
                                   "figure_noisy_inverse", "figure_truncation", "figure_whitening",
                                   "noisy_inverse_demo", "simulate_clipped_mean", "truncation_tradeoff",
                                   "whitening_demo"),
}
_WHERE = {name: mod for mod, names in _LAZY.items() for name in names}


def __getattr__(name: str):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "COLORS",
    "gdp_tradeoff",
    "dp_tradeoff",
    "privacy_profile",
    "figure_epsilon_delta",
    "composition_table",
    "noise_for_total",
    "figure_composition",
    "clipped_mean_moments",
    "truncation_tradeoff",
    "simulate_clipped_mean",
    "figure_truncation",
    "elongated_cloud",
    "WhiteningDemo",
    "whitening_demo",
    "NoisyInverseDemo",
    "noisy_inverse_demo",
    "figure_whitening",
    "figure_noisy_inverse",
    "clip_gaussian",
    "renyi_clipping_curve",
    "figure_renyi",
]
