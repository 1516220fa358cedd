"""Whether the PMT page's logistic numbers can be trusted: the noisy Newton's noise dominance and a diverged reference.

- :func:`newton_banner`: PMT logistic's noisy Newton is **noise-dominated** when the Hessian noise of one
  step, ``2 sqrt(d) sigma_H``, is at least half the curvature of the whitened problem at 0 (``1/4``):
  :func:`engine.pmt.logistic.choose_whitening`'s public ratio (d, n, eta, the budget and the number of
  steps T only; no privacy cost). Then the eigenvalue floor sets every step and "converged" means little.
  Shown like the ridge noise banner, above the figures.
- :func:`reference_diverged`: the non-private logistic reference has no finite optimum (separable data at
  lam 0): the sweep's ``converged`` of the Non-private rows (labelled view) or ``reference_converged``
  (views without public labels) is False. Every L2 error then measures the distance to a diverging
  iterate; :func:`reference_note` says so next to those numbers and :func:`flag_frame` adds the
  ``reference_diverged`` column to the exported CSV.
"""

from __future__ import annotations

import math

import pandas as pd

#: PMT logistic's noisy Newton steps on the page (the sweep's and the estimators' default T).
NEWTON_STEPS = 5


def newton_dominance(*, d: int, n: int, eta: float, epsilon: float, delta: float, n_steps: int = NEWTON_STEPS) -> float:
    """The public noise-dominance ratio of PMT logistic's Hessian release (d counts the intercept column).

    Examples
    --------
    >>> r = newton_dominance(d=5, n=1000, eta=0.05, epsilon=1.0, delta=1e-5)
    >>> r > newton_dominance(d=5, n=100000, eta=0.05, epsilon=1.0, delta=1e-5)
    True
    """
    from engine.pmt.logistic import choose_whitening

    return choose_whitening("auto", d=int(d), n=int(n), eta=float(eta), epsilon=float(epsilon), delta=float(delta),
                            n_steps=int(n_steps))[1]


def newton_banner(prep, spec: dict) -> str | None:
    """The "noise-dominated" banner for PMT logistic at the chosen settings, or None (other tasks, ratio < 1/2)."""
    if spec.get("task") != "classification" or "PMT" not in spec.get("methods", []):
        return None
    eps = float(spec["epsilon"])
    if not math.isfinite(eps):
        return None
    d = int(prep.d) + 1
    ratio = newton_dominance(d=d, n=int(prep.n_priv), eta=float(spec["eta"]), epsilon=eps, delta=float(spec["delta"]))
    if not ratio >= 0.5:
        return None
    return (f"PMT's noisy Newton is noise-dominated at this epsilon: the noise on each step's released Hessian "
            f"(spectral size 2 sqrt(d) sigma_H) is {ratio:.3g}x the curvature of the whitened problem (1/4; "
            f"noise-dominated from 1/2 on), with n = {prep.n_priv} private rows, d = {d} and {NEWTON_STEPS} steps. "
            "The eigenvalue floor then sets every step: the fit is a small noisy gradient step, and 'converged' "
            "says little. Computed from public quantities only.")


def reference_diverged(frame: pd.DataFrame) -> bool:
    """True when the sweep's non-private logistic reference has no finite optimum in some run."""
    if "reference_converged" in frame.columns:
        col = frame["reference_converged"]
        return bool((col == False).any())  # noqa: E712 (a column of bools, maybe with None)
    if "converged" in frame.columns and "method" in frame.columns:
        ref = frame.loc[frame["method"] == "Non-private", "converged"]
        return bool((ref == False).any())  # noqa: E712
    return False


def reference_note(frame: pd.DataFrame, task: str) -> str | None:
    """The warning shown next to the L2 numbers when the reference diverged, or None."""
    if task != "classification" or not reference_diverged(frame):
        return None
    return ("The non-private logistic fit has no finite optimum here (separable data at this lam): the L2 errors "
            "measure the distance to a diverging iterate, not to a reference. Read the AUC, or set lam > 0 for a "
            "penalised reference.")


def flag_frame(frame: pd.DataFrame, task: str) -> pd.DataFrame:
    """``frame`` with a ``reference_diverged`` column (logistic) for the export; other tasks unchanged."""
    if task != "classification" or frame is None:
        return frame
    keys = [k for k in ("lam", "n_pub") if k in frame.columns]
    out = frame.copy()
    if "reference_converged" in out.columns:
        out["reference_diverged"] = ~out["reference_converged"].astype(bool)
    elif "converged" in out.columns and keys:
        ref = out[out["method"] == "Non-private"].groupby(keys)["converged"].apply(lambda c: not bool(c.all()))
        out["reference_diverged"] = [bool(ref.get(tuple(r) if len(keys) > 1 else r[0], False))
                                     for r in out[keys].itertuples(index=False)]
    return out


def whitening_note(frame: pd.DataFrame, task: str) -> str | None:
    """Where PMT logistic ran in publicly standardised coordinates (and equals DP-Newton), from the frame's own
    columns (:func:`engine.pmt.run_notes.whitening_note`); None otherwise."""
    if task != "classification" or frame is None:
        return None
    from engine.pmt.run_notes import whitening_note as note

    return note(frame)
