"""The PMT page's Planner tab: the plan of the view (ridge or logistic) and the accuracy-first answer.

Both come from :func:`engine.pmt.planner_target.plan_from_public`, the function ``pmt-plan`` prints (so the page
and ``pmt-plan --json`` give the same numbers for the same public rows and settings). Public information only: the
view's labelled public rows, d, eta, lam and the budget; no privacy cost. Bundled views share one result across
sessions (:func:`ui.common.figure_cache.value`); an upload's is computed for this run only.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["planner_settings", "plan_and_answer"]


def planner_settings(data, diag: dict) -> dict | None:
    """The planner's inputs for this view, or None when it cannot plan (noise off, no public labels, too few rows)."""
    task = {"regression": "ridge", "classification": "logistic"}.get(diag.get("task", "regression"))
    if task is None or not math.isfinite(float(diag.get("epsilon", math.inf))):
        return None
    if diag.get("public_mode", "labelled") != "labelled":
        return None
    Xq = np.asarray(data.X_pub, dtype=float)
    if Xq.shape[0] <= Xq.shape[1] + 2:
        return None
    if task == "logistic":
        # the prepared labels may be centred by their public mean (the page's standardisation): two values, the
        # larger the positive class
        yv = np.asarray(data.y_pub, dtype=float).ravel()
        vals = np.unique(yv)
        if vals.size != 2:
            return None
        yq = (yv == vals[1]).astype(float)
    else:
        yq = np.asarray(data.y_pub, dtype=float)
    out = dict(Xq=Xq, yq=yq, task=task, epsilon=float(diag["epsilon"]), delta=float(diag["delta"]),
               lam=float(diag["lam"]), eta=float(diag.get("eta", 0.05) or 0.05), n_user=int(data.n_priv))
    if task == "ridge":  # the response form the run used, as the page's noise banner (ui.pmt.compute.core.plan_for)
        from ui.pmt.compute.core import plan_response

        out["response"] = plan_response(diag)
    return out


def _compute(Xq, yq, **settings):
    from engine.pmt.planner_target import plan_from_public

    return plan_from_public(Xq, yq, **settings)


def plan_and_answer(data, diag: dict, target: float | None = None):
    """``(plan, answer)`` for this view and an accepted error ``target`` (None: no answer), or None."""
    s = planner_settings(data, diag)
    if s is None:
        return None
    from ui.common import figure_cache as FC

    Xq, yq = s.pop("Xq"), s.pop("yq")
    return FC.value(_compute, Xq, yq, target=None if target is None else float(target),
                    shared=bool(diag.get("shared_cache", False)), **s)
