"""The sweep registry: which tasks and methods :func:`engine.pmt.sweep.run_sweep` knows, and the frame contract.

A task (``"ridge"``, ``"logistic"``) registers its context builder with :func:`register_task`; each
of its methods registers a vectorised runner with :func:`register_method`. The task modules
(:mod:`engine.pmt.sweep_ridge`, :mod:`engine.pmt.sweep_logistic`) import this module and register
themselves on import; :mod:`engine.pmt.sweep` imports them. Nothing here imports a task, so nothing
imports in a circle. Extending: a new task module registers here and is imported by
:mod:`engine.pmt.sweep`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine import privacy as P

__all__ = ["CONTRACT_COLUMNS", "SUMMARY_COLUMNS", "MethodSpec", "METHODS", "TASKS", "register_method", "register_task"]

#: Columns every sweep frame has (team contract).
CONTRACT_COLUMNS = (
    "method", "epsilon", "delta", "seed", "lam", "n_pub", "mu", "l2_error", "rel_error", "excess_risk",
    "rmse", "kappa_raw", "kappa_pub", "kappa_pmt", "kappa_noisy", "radius", "frac_truncated",
)
#: Columns of :func:`summarize`.
SUMMARY_COLUMNS = ("method", "epsilon", "lam", "n_pub", "metric", "median", "q05", "q25", "q75", "q95", "n_seeds")


@dataclass(frozen=True)
class MethodSpec:
    """A sweepable method: key, display name, task and a vectorised runner.

    ``runner(ctx, epsilons, seeds, lams) -> dict`` returns equal-length arrays (one entry per run)
    holding at least ``epsilon, seed, lam, mu, theta`` (theta of shape (runs, d)) and any of the
    diagnostic columns; :func:`run_sweep` adds the metrics and the context columns.
    """

    key: str
    name: str
    task: str
    runner: Callable


#: Registered methods, keyed by (task, key).
METHODS: dict[tuple[str, str], MethodSpec] = {}
#: Registered tasks: task -> context builder ``(X, y, X_pub, y_pub, X_test, y_test, **options) -> ctx``.
TASKS: dict[str, Callable] = {}


def register_method(task: str, key: str, name: str, runner: Callable) -> MethodSpec:
    """Register a sweep method for a task (each task module registers its own)."""
    spec = MethodSpec(key, name, task, runner)
    METHODS[(task, key)] = spec
    return spec


def register_task(task: str, prepare: Callable) -> None:
    """Register a task's context builder (see :func:`prepare_ridge_context`)."""
    TASKS[task] = prepare


# --------------------------------------------------------------------------------------------
# helpers every runner uses
# --------------------------------------------------------------------------------------------
def _grid(ctx, epsilons, seeds):
    """Flat (lam, epsilon, seed) index arrays of every run, lam slowest: ``(L, E, S, li, ei, si)``."""
    L, E, S = len(ctx.lams), len(epsilons), len(seeds)
    # = np.meshgrid(arange(L), arange(E), arange(S), indexing="ij"), raveled; repeat/tile skip its broadcasting
    li = np.repeat(np.arange(L), E * S)
    ei = np.tile(np.repeat(np.arange(E), S), L)
    si = np.tile(np.arange(S), L * E)
    return L, E, S, li, ei, si


def _sigmas(mus, k: int, sens: float) -> np.ndarray:
    """Noise scale of each of k equal releases of sensitivity ``sens`` per total mu: the estimators' own
    rounded path, ``gaussian_sigma(sens, split_mu(mu, k))`` (0 where mu is inf), so a sweep row's sigma is
    the estimator's bit for bit."""
    return np.array([P.gaussian_sigma(sens, P.split_mu(float(m), int(k))) for m in mus])


def _mus(ctx, epsilons):
    """mu-GDP of each epsilon at the context's delta."""
    return np.array([P.gdp_mu(e, ctx.delta) for e in epsilons])
