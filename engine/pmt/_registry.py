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

__all__ = ["CONTRACT_COLUMNS", "SUMMARY_COLUMNS", "SWEEP_COLUMN_PRIVACY", "MethodSpec", "METHODS", "TASKS",
           "register_method", "register_task", "sweep_column_privacy"]

#: Columns every sweep frame has (team contract).
CONTRACT_COLUMNS = (
    "method", "epsilon", "delta", "seed", "lam", "n_pub", "mu", "l2_error", "rel_error", "excess_risk",
    "rmse", "kappa_raw", "kappa_pub", "kappa_pmt", "kappa_noisy", "radius", "frac_truncated",
)
#: Columns of :func:`summarize` (``privacy``: what the summarised metric is, :func:`sweep_column_privacy`).
SUMMARY_COLUMNS = ("method", "epsilon", "lam", "n_pub", "metric", "median", "q05", "q25", "q75", "q95", "n_seeds",
                   "privacy")


def _column_tables():
    from engine.privacy.labels import DIAGNOSTIC, DP, PUBLIC

    public = ("dataset", "method", "method_key", "epsilon", "delta", "seed", "lam", "n_pub", "n", "d", "standardize",
              "mu", "kappa_pub", "radius", "B_y", "sigma_A", "sigma_b", "sigma_g", "sigma_H", "n_steps", "eig_floor",
              "y_max", "theta_radius", "whiten_full")
    diagnostic = ("l2_error", "rel_error", "excess_risk", "rmse", "accuracy", "auc", "log_loss", "deviance",
                  "kappa_raw", "kappa_pmt", "frac_truncated", "frac_y_clipped")
    dp = ("kappa_noisy", "eig_fix", "eig_fixes", "converged", "last_step")
    return {**{c: PUBLIC for c in public}, **{c: DIAGNOSTIC for c in diagnostic}, **{c: DP for c in dp}}


#: Privacy label of each sweep column for a private method (:mod:`engine.privacy.labels`): errors and
#: accuracies are measured against the non-private fit or on held-out private rows (diagnostics), the
#: noisy condition number, eigenvalue fixes and convergence flags are post-processing of the release.
SWEEP_COLUMN_PRIVACY = _column_tables()

#: Methods without a DP release: the non-private reference, the oracle (tuned on private errors) and the
#: public-only fit (whose release-side columns come from public rows only).
_NON_PRIVATE_METHODS = ("non-private", "dp-rr-oracle")


def sweep_column_privacy(column: str, method_key: str | None = None) -> str:
    """Privacy label of a sweep frame's column for a method (``"dp"``, ``"public"`` or
    ``"non-private diagnostic"``; an unknown column is a diagnostic: assume the worst).

    For the non-private reference and the DP-RR oracle nothing is DP (``"dp"`` becomes a diagnostic, and
    the oracle's ``radius`` too: it was picked on private errors); for public-only the release-side
    columns are public.

    Examples
    --------
    >>> sweep_column_privacy("kappa_pmt"), sweep_column_privacy("kappa_noisy", "pmt")
    ('non-private diagnostic', 'dp')
    >>> sweep_column_privacy("kappa_noisy", "non-private")
    'non-private diagnostic'
    """
    from engine.privacy.labels import DIAGNOSTIC, DP, PUBLIC

    label = SWEEP_COLUMN_PRIVACY.get(column, DIAGNOSTIC)
    if method_key in _NON_PRIVATE_METHODS and (label == DP or (method_key == "dp-rr-oracle" and column == "radius")):
        return DIAGNOSTIC
    if method_key == "public-only" and label == DP:
        return PUBLIC
    return label


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
