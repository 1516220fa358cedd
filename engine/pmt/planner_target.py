"""Accuracy first: "state the error you can accept; here are the epsilon and the n each method needs".

From a plan (ridge: :func:`engine.pmt.planner.plan`, RMSE; logistic: :func:`engine.pmt.planner_logistic.plan_logistic`,
log-loss; lower is better for both) and a target value:

* ``n_needed``: at the plan's epsilon, the smallest n on the plan's grid from which the method's predicted error
  stays at or below the target (0 for public-only when it already meets it: it needs no private rows; None: not on
  the grid, up to 1e8);
* ``epsilon_needed``: at the user's n, the smallest epsilon of :data:`TARGET_EPSILONS` at which the predicted error
  is at or below the target (each epsilon planned at that one n; None: not even at the largest; public-only and the
  non-private fit spend no budget, so theirs is None and ``budget_free`` says so).

Public information only, like the plans it reads. The sentences are built from these numbers.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["TARGET_EPSILONS", "accuracy_first", "plan_from_public"]

#: The epsilons an accuracy-first answer tries at the user's n.
TARGET_EPSILONS = (0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 10.0)
#: Methods that spend no privacy budget.
BUDGET_FREE = ("Public-only", "Non-private")


def _n_needed(n, curve, target):
    ok = np.asarray(curve) <= target
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(n[0] if bad.size == 0 else n[min(bad[-1] + 1, len(n) - 1)])


def accuracy_first(plan, make_plan_at, target: float, *, epsilons=TARGET_EPSILONS, metric: str = "rmse") -> dict:
    """The accuracy-first answer (module docstring).

    Parameters
    ----------
    plan : Plan or LogisticPlan
        The plan at the user's epsilon (its ``n_user`` is the n at which epsilons are tried).
    make_plan_at : callable ``(epsilon, n_grid) -> plan``
        Builds the same kind of plan at another epsilon on the grid ``n_grid`` (one n).
    target : float
        The error the user accepts (RMSE or log-loss), > 0.
    """
    target = float(target)
    if not (target > 0 and math.isfinite(target)):
        raise ValueError(f"the target must be a finite number > 0, got {target!r}")
    n_user = plan.n_user
    eps_curves = {}
    if n_user is not None:
        for e in sorted(epsilons):
            eps_curves[float(e)] = make_plan_at(float(e), np.array([int(n_user)])).at(int(n_user))
    out = {}
    for k, curve in plan.curves.items():
        free = k in BUDGET_FREE
        nn = _n_needed(plan.n, curve, target)
        if k == "Public-only":
            nn = 0 if float(curve[0]) <= target else None
        e_need = None
        if not free and n_user is not None:
            e_need = next((e for e, at in eps_curves.items() if at[k] <= target), None)
        out[k] = {"n_needed": nn, "epsilon_needed": e_need, "budget_free": free,
                  "at_your_n": None if n_user is None else plan.at(int(n_user))[k]}
    lines = []
    for k, v in out.items():
        if k == "Public-only":
            lines.append(f"Public-only: {'meets' if v['n_needed'] == 0 else 'does not meet'} {metric} {target:g} "
                         f"(predicted {float(plan.curves[k][0]):.4g}; no private rows, no budget)")
            continue
        s = (f"{k}: at epsilon {plan.epsilon:g} needs n >= {v['n_needed']:,}" if v["n_needed"] is not None
             else f"{k}: at epsilon {plan.epsilon:g} does not reach {metric} {target:g} below n = {int(plan.n[-1]):.0e}")
        if not v["budget_free"] and n_user is not None:
            s += (f"; at your n = {n_user:,} needs epsilon >= {v['epsilon_needed']:g}" if v["epsilon_needed"] is not None
                  else f"; at your n = {n_user:,} not even at epsilon {max(epsilons):g}")
        lines.append(s)
    return {"target": target, "metric": metric, "epsilon": plan.epsilon, "n_user": n_user,
            "epsilons_tried": [float(e) for e in sorted(epsilons)], "methods": out, "lines": lines}


def plan_from_public(Xq, yq, *, task: str = "ridge", epsilon: float, delta: float = 1e-5, lam: float = 1e-3,
                     eta: float = 0.05, n_user: int | None = None, response: str | None = None,
                     target: float | None = None):
    """``(plan, accuracy-first answer or None)`` from labelled public rows: what ``pmt-plan`` prints and the PMT
    page's Planner tab shows (one function, so the two give the same numbers).

    ``task`` "ridge" (RMSE; ``response`` as :func:`engine.pmt.planner.plan`'s) or "logistic" (log-loss; ``yq`` in
    {0, 1}); ``target``: the accepted RMSE or log-loss.
    """
    if task == "logistic":
        if response not in (None, "auto"):
            raise ValueError("response applies to the ridge planner only")
        from engine.pmt.planner_logistic import plan_logistic

        def make(eps, grid=None):
            return plan_logistic(Xq, yq, epsilon=eps, delta=delta, lam=lam, eta=eta, n_grid=grid, n_user=n_user)
        metric = "log-loss"
    elif task == "ridge":
        from engine.pmt.planner import plan, plan_inputs_from_public

        inputs = plan_inputs_from_public(Xq, yq)
        resp = None if response == "auto" else response

        def make(eps, grid=None):
            return plan(inputs, epsilon=eps, delta=delta, lam=lam, eta=eta, n_grid=grid, n_user=n_user, response=resp)
        metric = "RMSE"
    else:
        raise ValueError(f"task must be 'ridge' or 'logistic', got {task!r}")
    p = make(epsilon)
    answer = None if target is None else accuracy_first(p, lambda e, g: make(e, np.asarray(g)), target, metric=metric)
    return p, answer
