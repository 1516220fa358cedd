"""The settings' values and defaults (no Streamlit): the slider options, the sweep grids, :data:`DEFAULTS`.

:mod:`ui.common.state` puts them into session state and the URL; the compute rooms
(``ui/pmt/compute/``) read them from here so that they never import Streamlit.
"""

from __future__ import annotations

#: Log-spaced epsilon values offered by the epsilon slider (0.05 .. 20, about 3 per decade).
EPSILON_OPTIONS: tuple[float, ...] = (0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0)

#: Coarse epsilon grid of the error-vs-epsilon sweep (the chosen epsilon is always added).
EPSILON_GRID: tuple[float, ...] = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)

#: Ridge penalties offered by the lam slider (0 = no penalty).
LAM_OPTIONS: tuple[float, ...] = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)

#: delta values offered (the usual choices; 1e-5 is the default).
DELTA_OPTIONS: tuple[float, ...] = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3)
#: Largest baseline clip radius the page accepts: engine.pmt._base.F32_BOUND_RANGE (the radius enters the
#: logistic sweep's float32 products); 0 means automatic, values in (0, 1e-100) are refused by the engine.
CLIP_RADIUS_MAX = 1e15

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
    "clip_radius": 0.0,
    "methods": ["PMT", "DP-RR", "DP-GD", "AdaSSP", "Public-only", "Non-private"],
    "response": "auto",  # PMT ridge's response handling (engine.pmt.ridge.resolve_response)
    "metric": "rmse",  # held-out test RMSE (ridge); the logistic task's default is the AUC (ui.pmt.compute.core)
    "standardize": True,
    "public_source": "split",
    "split_seed": 0,
    "presenter": False,
}
