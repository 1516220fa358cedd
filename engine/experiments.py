"""Moved to :mod:`engine.pmt.sweep` (with ``engine.pmt._registry`` and ``engine.pmt.sweep_ridge``);
this alias stays for one release.

``from engine.experiments import run_sweep`` etc. keep working; new code imports from
:mod:`engine.pmt.sweep`.
"""

from engine.pmt._registry import (  # noqa: F401
    CONTRACT_COLUMNS,
    METHODS,
    SUMMARY_COLUMNS,
    TASKS,
    MethodSpec,
    _grid,
    _mus,
    register_method,
    register_task,
)
from engine.pmt.sweep import _check_public, _load, _seeds, _split, resolve_methods, run_sweep, summarize, sweep_split  # noqa: F401
from engine.pmt.sweep_ridge import DEFAULT_METHODS, SweepContext, prepare_ridge_context  # noqa: F401

__all__ = [
    "CONTRACT_COLUMNS", "SUMMARY_COLUMNS", "MethodSpec", "METHODS", "TASKS", "register_method", "register_task",
    "resolve_methods", "SweepContext", "prepare_ridge_context", "sweep_split", "run_sweep", "summarize",
]

