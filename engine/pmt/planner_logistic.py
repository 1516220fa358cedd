"""The logistic planner: held-out log-loss of PMT, DP-Newton, public-only and the non-private fit against n.

Public information only (the labelled public rows, d, eta, lam, T and the budget), so a plan costs no privacy.
Log-loss (mean negative log-likelihood on held-out rows) is the metric: its excess over the best linear model
has a first-order law in the number of rows a fit sees, which AUC has not.

Model:

* The non-private logistic fit's cross-fitted public log-loss at two sizes (folds stratified by label, each
  scored by the fit on the others: ``k = m/2`` rows with 2 folds, ``k = 4m/5`` with :data:`FOLDS`; each the mean
  over :data:`CV_REPEATS` fold splits, since one split's loss carries the noise of which rows share a fold: on
  flights-late the single seed-0 split read 0.297 at k = 160 and 0.286 at k = 100, a slope of the wrong sign, where
  the mean over 20 splits reads 0.283 and 0.302), read as
  ``L(k) = L_inf + a / k``: a fit on ``k`` rows exceeds the best linear model's loss ``L_inf`` by ``a / k``
  (first order ``a = d/2``, half the chi-square's mean; measured from the two sizes because that order fails
  where k is a few times d, as on bank).
* Public-only (m rows): that law at ``k = m``, ``L_cv + a (1/m - 1/k5)``: the cross-fitted loss is the one
  measurement that holds where m is a few times d.
* The floor ``L_inf`` and the non-private fit on n rows, ``L_inf + a_T / n``, from Takeuchi's correction at the
  public fit (:func:`_floor`): the in-sample loss sits ``tr(H^-1 J) / (2m)`` below the best linear model's and a
  fit on n rows exceeds it by ``a_T / n``, ``a_T = tr(H^-1 J) / 2`` (H the penalised Hessian, J the gradients'
  outer product). ``L_inf`` is capped by the public intercept-only loss (the base-rate entropy, which a linear
  model reaches) and by ``L_cv``. (An earlier form took ``L_inf`` as the intercept of the two-size law; where
  m is a few times d that law is not yet 1/k and its intercept is no floor: on bank, d = 42, it put the best
  linear model at log-loss 0.58, above the base rate's 0.35, and every curve built on it 2x above the simulated
  medians.)
* PMT at n: the release simulated on all the public rows (:func:`engine.pmt.whiten_choice.crossfit_release` with
  ``thetas=True``: the radius, certified sensitivities, budget split and eigenvalue floor of n private rows, fixed
  noise draws), in the coordinates ``whiten="auto"`` picks there (the higher cross-fitted simulated AUC, as
  :class:`engine.pmt.PMTLogistic` with public labels). What the noise, the truncation, the floor and the T steps
  move the fit by, ``Delta = theta_sim - theta_pub`` (``theta_pub`` the public maximum-likelihood fit), costs
  ``E(Delta) = L_pub(theta_pub + Delta) - L_pub(theta_pub)`` on the public rows (both in-sample, so the public
  fit's own optimism cancels; the median over draws), added to the non-private curve:
  ``L_inf + a_T / n + E``. (An earlier form, the cross-fitted simulated loss minus ``L_cv``, read the noise as
  regularisation of a 160-row fit and predicted flights-late's crossover 3-10x too early.) DP-Newton on publicly
  standardised rows (its coordinates are PMT's "standardize" option, the same radius): the same with the
  standardised simulation.

``crossover_n``: the smallest n on the grid from which PMT's predicted log-loss stays below public-only's by more
than :data:`engine.pmt.planner.CROSSOVER_MARGIN` (None: "no crossover"). Checked against simulation on
``flights-late`` and ``bank`` by ``scripts/check_planner.py`` (``docs/pmt_planner_check.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine import privacy as P

__all__ = ["LogisticPlan", "plan_logistic", "LOGISTIC_N_GRID", "FOLDS", "CV_REPEATS"]

#: The n nodes of a logistic plan: 1e2 .. 1e8, 3 per decade (each is a simulated release; interpolated on log n).
LOGISTIC_N_GRID = np.unique(np.round(np.logspace(2, 8, 19)).astype(np.int64))
#: Cross-fitting folds (as :data:`engine.pmt.whiten_choice.WHITEN_FOLDS`).
FOLDS = 5
#: Fold splits the cross-fitted public losses are averaged over (seeds 0 .. CV_REPEATS - 1): one split's loss moves
#: with which rows share a fold (flights-late: standard deviation 0.008 over splits, a third of the margin a
#: crossover turns on; bank: 0.09), and the mean over splits removes that part of the noise. Public rows only.
CV_REPEATS = 20


@dataclass
class LogisticPlan:
    """Predicted held-out log-loss per method over ``n`` (module docstring)."""

    n: np.ndarray
    curves: dict
    crossover_n: int | None
    n_user: int | None
    epsilon: float
    delta: float
    lam: float
    eta: float
    d: int
    n_pub: int
    whiten: list = field(default_factory=list)
    metric: str = "log_loss"

    def at(self, n: int) -> dict:
        """Predicted log-loss of each method at ``n`` (interpolated on log n)."""
        x = np.log(self.n.astype(float))
        return {k: float(np.interp(math.log(n), x, v)) for k, v in self.curves.items()}

    def conclusion(self) -> str:
        """One line: the best method at the user's n and the crossover (or "no crossover")."""
        parts = []
        if self.n_user is not None:
            at = self.at(self.n_user)
            at.pop("Non-private", None)
            best = min(at, key=at.get)
            parts.append(f"at your n = {self.n_user:,} the planner predicts {best} is best (log-loss {at[best]:.4g})")
        if self.crossover_n is not None:
            parts.append(f"PMT would need about {self.crossover_n:,} private rows to beat the public rows alone")
        else:
            parts.append(f"no crossover: PMT does not beat the public rows alone below n = {int(self.n[-1]):.0e}")
        return "; ".join(parts) + f" (epsilon {self.epsilon:g}, n_pub {self.n_pub}, lam {self.lam:g})."

    def to_dict(self) -> dict:
        return {"task": "logistic", "metric": self.metric, "n": self.n.tolist(),
                "curves": {k: v.tolist() for k, v in self.curves.items()}, "crossover_n": self.crossover_n,
                "n_user": self.n_user, "epsilon": self.epsilon, "delta": self.delta, "lam": self.lam, "eta": self.eta,
                "d": self.d, "n_pub": self.n_pub, "pmt_whiten": list(self.whiten), "conclusion": self.conclusion()}


def _split_folds(y, folds: int, seed: int) -> np.ndarray:
    """Fold of each public row: stratified by label, each class dealt round-robin in a seed-``seed`` order."""
    order = np.random.default_rng(seed).permutation(len(y))
    fold = np.empty(len(y), dtype=np.int64)
    for cls in (0.0, 1.0):
        rows = order[y[order] == cls]
        fold[rows] = np.arange(rows.size) % folds
    return fold


def _log_loss_columns(U, y):
    return np.mean(np.logaddexp(0.0, U) - y[:, None] * U, axis=0)


def _floor(Xa, y, th, L_train, lam, Pm, L_cv):
    """``(L_inf, a)``: the best linear model's log-loss and the first-order excess ``a / n`` of a fit on n rows.

    Takeuchi's correction: at the public fit ``theta_pub`` (Hessian ``H = X^T W X / m + 2 lam P``, gradient outer
    product ``J``), a maximum-likelihood fit's in-sample loss sits ``tr(H^-1 J) / (2 m)`` below the population
    optimum's, and a fit on n rows exceeds it by ``tr(H^-1 J) / (2 n)``; so ``L_inf = L_train + tr / (2 m)`` and
    ``a = tr / 2`` (``d / 2`` for a well-specified model). ``L_inf`` is capped by the public intercept-only loss
    (the base-rate entropy: a linear model with the intercept alone reaches it) and by the cross-fitted loss (a
    fit on fewer rows cannot beat the best linear model)."""
    m = Xa.shape[0]
    u = Xa @ th
    p = 1.0 / (1.0 + np.exp(-u))
    H = (Xa * (p * (1.0 - p))[:, None]).T @ Xa / m + 2.0 * lam * Pm
    G = Xa * (p - y)[:, None]
    tr = float(np.trace(np.linalg.lstsq(H, G.T @ G / m, rcond=None)[0]))
    pb = float(np.clip(y.mean(), 1e-12, 1 - 1e-12))
    entropy = -(pb * math.log(pb) + (1.0 - pb) * math.log(1.0 - pb))
    return max(0.0, min(L_train + tr / (2.0 * m), entropy, L_cv)), tr / 2.0


def plan_logistic(X_pub, y_pub01, *, epsilon: float, delta: float = 1e-5, lam: float = 1e-3, eta: float = 0.05,
                  n_steps: int = 5, n_grid=None, n_user: int | None = None) -> LogisticPlan:
    """Predicted held-out log-loss of PMT, DP-Newton, public-only and non-private over ``n`` (module docstring).

    Raises
    ------
    ValueError
        Non-finite rows, labels outside {0, 1} or one class only, fewer than ``2 FOLDS`` rows, bad budget.
    """
    from engine.pmt._base import penalty_mask
    from engine.pmt._bounds import add_intercept
    from engine.pmt._moment import public_moment
    from engine.pmt.planner import CROSSOVER_MARGIN
    from engine.pmt.public import public_only_theta
    from engine.pmt.whiten_choice import crossfit_release, roc_auc_columns

    eps = P.validate_epsilon(epsilon)
    dlt = P.validate_delta(delta)
    if not (lam >= 0 and math.isfinite(lam)):
        raise ValueError(f"lam must be finite and >= 0, got {lam!r}")
    Xq = np.asarray(X_pub, dtype=float)
    y = np.asarray(y_pub01, dtype=float).ravel()
    if Xq.ndim != 2 or not np.all(np.isfinite(Xq)) or Xq.shape[0] != y.shape[0]:
        raise ValueError("X_pub must be a finite 2-D array with one label per row")
    if not np.all((y == 0) | (y == 1)) or y.min() == y.max():
        raise ValueError("the logistic planner needs public labels in {0, 1} with both classes present")
    m = Xq.shape[0]
    if m < 2 * FOLDS:
        raise ValueError(f"the logistic planner needs at least {2 * FOLDS} public rows, got {m}")
    Xa = add_intercept(Xq)
    d = Xa.shape[1]
    mom = public_moment(Xq, fit_intercept=True)
    Pm = penalty_mask(d, fit_intercept=True, penalize_intercept=False)
    def cv_loss(folds):
        losses = []
        for seed in range(CV_REPEATS):  # repeated cross-fitting: the mean over fold splits
            fold = _split_folds(y, folds, seed)
            U = np.empty(m)
            for k in range(folds):
                tr, te = fold != k, fold == k
                th, _ = public_only_theta(Xa[tr], y[tr], lam, Pm, family="logistic")
                U[te] = Xa[te] @ th
            losses.append(float(_log_loss_columns(U[:, None], y)[0]))
        return float(np.mean(losses)), m * (1.0 - 1.0 / folds)

    # L(k) = L_inf + a / k from two cross-fitted sizes (k = m/2 and 4m/5): the first-order a = d/2 fails where
    # k is a few times d (bank: d = 42, 160 rows)
    L_cv, k5 = cv_loss(FOLDS)
    L_2, k2 = cv_loss(2)
    slope = max((L_2 - L_cv) / (1.0 / k2 - 1.0 / k5), 0.0) if L_2 > L_cv else d / 2.0
    n = np.asarray(LOGISTIC_N_GRID if n_grid is None else n_grid, dtype=np.int64)
    nf = n.astype(float)
    th_pub, _ = public_only_theta(Xa, y, lam, Pm, family="logistic")
    L_pub = float(_log_loss_columns((Xa @ th_pub)[:, None], y)[0])
    L_inf, a_n = _floor(Xa, y, th_pub, L_pub, lam, Pm, L_cv)
    sims = {"full": [], "standardize": []}
    aucs = {"full": [], "standardize": []}
    for nn in n:
        for coords in sims:
            kw = dict(coords=coords, n=int(nn), epsilon=eps, delta=dlt, eta=eta, lam=lam, n_steps=n_steps)
            S = crossfit_release(mom, Xa, y, **kw)
            a = roc_auc_columns(S, y)
            aucs[coords].append(float(np.nanmean(np.where(np.isfinite(a), a, 0.5))))
            th = crossfit_release(mom, Xa, y, thetas=True, **kw)
            ok = np.all(np.isfinite(th), axis=1)
            loss = _log_loss_columns(Xa @ th[ok].T, y) - L_pub if ok.any() else np.array([math.inf])
            sims[coords].append(max(0.0, float(np.median(loss))))
    choice = ["standardize" if s > f else "full" for f, s in zip(aucs["full"], aucs["standardize"])]
    base = L_inf + a_n / nf
    pmt_sim = np.array([sims[c][i] for i, c in enumerate(choice)])
    curves = {
        "PMT": base + pmt_sim,
        "DP-Newton": base + np.asarray(sims["standardize"]),
        "Public-only": np.full_like(nf, L_cv + slope * (1.0 / m - 1.0 / k5)),
        "Non-private": base,
    }
    wins = curves["PMT"] < curves["Public-only"] * (1.0 - CROSSOVER_MARGIN)
    cross = None
    if wins[-1]:
        last = np.flatnonzero(~wins)
        cross = int(n[0] if last.size == 0 else n[min(last[-1] + 1, len(n) - 1)])
    return LogisticPlan(n, curves, cross, None if n_user is None else int(n_user), eps, dlt, float(lam), float(eta),
                        d, m, choice)
