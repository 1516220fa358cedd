"""The PMT planner: which method pays off, and from how many private rows, from public information only.

Answers "with my data, my epsilon and my public sample, which method should I use, and how many private
rows would PMT need to beat the public rows alone?" before any private row is touched. Every input is
public (the public rows or statements, d, n_pub, eta, delta, lam) or the budget, so a plan costs no privacy.
Ridge regression, held-out RMSE (the metric a user reads) against the number of private rows n.

Model (first-order; whitened units, where the public moment whitens the features to ``E[x~ x~^T] = I``, so
the excess prediction risk of a coefficient error ``delta~`` is ``||delta~||^2``):

* ``s``: the residual standard deviation of the public fit; ``t = ||theta~||``: the norm of the public fit's
  whitened coefficients (``t^2`` is the mean square of its fitted values around the public centre of y);
  ``y_rms``: the public RMS of ``y - centre`` (the response bound's scale).
* PMT (:class:`engine.pmt.PMTRidge`, noise-aware solve, PMT.md section 3): ``R = sqrt(d (1 + ln(2n/eta)))``,
  ``B_y = y_rms sqrt(1 + ln(2n/eta))``, ``s_A = sqrt(2) R^2 / (mu / sqrt 2)``, ``s_b = 2 R B_y / (mu / sqrt 2)``;
  the noisy ``A ~ n I`` has its eigenvalues raised to ``c = s_A (2 sqrt d + 2 sqrt(ln 1/delta))`` and the
  penalty adds ``n lam``, so each of the d directions is solved with denominator ``D = max(n, c) + n lam``:
  ``E||delta~||^2 = d (s_b^2 + s_A^2 t^2) / D^2 + t^2 (1 - n / D)^2 + d s^2 / n``
  (noise, shrinkage bias, sampling). Predicted RMSE ``sqrt(s^2 + E||delta~||^2)``.
* Public-only (labelled mode): OLS on m rows, ``sqrt(s^2 (1 + d / (m - d - 1)))``; non-private on the n
  private rows: ``sqrt(s^2 (1 + d / n))``.
* PMT-pooled (:class:`engine.pmt.pooled.PMTPooledRidge`, labelled mode): per direction the precision-weighted
  combination of PMT's error variance ``(s_b^2 + s_A^2 t^2) / D^2 + s^2 / n`` (plus its shrinkage bias)
  and the public fit's ``s^2 / (m - d - 1)``.
* DP-RR (private-only SSP on the standardised raw rows clipped at ``C = R``): the same noise, but the
  released ``A ~ n Sigma`` has the eigenvalues ``n lambda_j`` of the public standardised moment, so a
  direction with small ``lambda_j`` (collinear columns) is amplified:
  ``sum_j lambda_j [ (s_b^2 + s_A^2 t_raw^2) / D_j^2 + b_j^2 (1 - n lambda_j / D_j)^2 ] + d s^2 / n`` with
  ``D_j = max(n lambda_j, c) + n lam`` and ``b_j`` the public fit's coefficient in that eigen-direction. This
  is optimistic where the noise dominates (DP-RR's floor-only solve inverts noise there; its median error is
  then larger): the curve is a lower bound in that range, and says so.

``crossover_n``: the smallest n on the grid from which PMT's predicted RMSE stays below the public-only fit's
(None without public labels, or when PMT never wins on the grid). ``crossover_private_n``: the smallest n
from which PMT beats DP-RR. ``scripts/pmt_planner_check.py`` checks the prediction against simulation on
the bundled sets (``docs/pmt_planner_check.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine import privacy as P

__all__ = ["PlanInputs", "Plan", "plan_inputs_from_public", "plan", "DEFAULT_N_GRID", "PLAN_METHODS"]

#: The n grid of a plan: 1e2 .. 1e8, 25 points per decade.
DEFAULT_N_GRID = np.unique(np.round(np.logspace(2, 8, 151)).astype(np.int64))
#: Methods a plan predicts (display names).
PLAN_METHODS = ("PMT", "PMT-pooled", "Public-only", "DP-RR", "Non-private")


@dataclass(frozen=True)
class PlanInputs:
    """The public quantities a plan uses (see the module docstring).

    Attributes
    ----------
    d : int
        Columns, intercept included.
    n_pub : int
    resid_sd : float
        ``s``.
    theta_norm : float
        ``t = ||theta~||`` (whitened public fit).
    y_rms : float
        Public RMS of ``y - centre`` (B_y's scale).
    eig_std : ndarray of shape (d,)
        Eigenvalues of the public second moment of the standardised features with the intercept column.
    coef_eig : ndarray of shape (d,)
        The public fit's coefficients (standardised features) in that eigenbasis.
    labelled : bool
        Whether public labels exist (public-only and PMT-pooled are predicted only then).
    """

    d: int
    n_pub: int
    resid_sd: float
    theta_norm: float
    y_rms: float
    eig_std: np.ndarray = field(repr=False)
    coef_eig: np.ndarray = field(repr=False)
    labelled: bool = True


@dataclass
class Plan:
    """Predicted held-out RMSE per method over ``n`` and the crossover points.

    Attributes
    ----------
    n : ndarray of int
    curves : dict of str -> ndarray
        Predicted RMSE per method (display names of :data:`PLAN_METHODS`, those that apply).
    crossover_n : int or None
        PMT below public-only from here on (None: no public labels, or never on the grid).
    crossover_private_n : int or None
        PMT below DP-RR from here on.
    n_user : int or None
    epsilon, delta, mu, lam, eta : float
    inputs : PlanInputs
    """

    n: np.ndarray
    curves: dict
    crossover_n: int | None
    crossover_private_n: int | None
    n_user: int | None
    epsilon: float
    delta: float
    mu: float
    lam: float
    eta: float
    inputs: PlanInputs

    def at(self, n: int) -> dict:
        """Predicted RMSE of each method at ``n`` (interpolated on log n)."""
        x = np.log(self.n.astype(float))
        return {k: float(np.interp(math.log(n), x, v)) for k, v in self.curves.items()}

    def conclusion(self) -> str:
        """One line for the headline: which method the prediction favours at the user's n, and the crossover."""
        parts = []
        if self.n_user is not None:
            at = self.at(self.n_user)
            at.pop("Non-private", None)
            best = min(at, key=at.get)
            parts.append(f"at your n = {self.n_user:,} the planner predicts {best} is best (RMSE {at[best]:.3g})")
        if self.inputs.labelled:
            parts.append(f"PMT would need about {self.crossover_n:,} private rows to beat the public rows alone"
                         if self.crossover_n is not None else "PMT does not beat the public rows alone below n = 1e8")
        elif self.crossover_private_n is not None:
            parts.append(f"PMT beats DP-RR from about {self.crossover_private_n:,} private rows")
        return "; ".join(parts) + f" (epsilon {self.epsilon:g}, n_pub {self.inputs.n_pub}, lam {self.lam:g})."

    def to_dict(self) -> dict:
        """JSON form: the grid, the curves, the crossovers and the conclusion."""
        return {"n": self.n.tolist(), "curves": {k: v.tolist() for k, v in self.curves.items()},
                "crossover_n": self.crossover_n, "crossover_private_n": self.crossover_private_n,
                "n_user": self.n_user, "epsilon": self.epsilon, "delta": self.delta, "mu": self.mu,
                "lam": self.lam, "eta": self.eta, "d": self.inputs.d, "n_pub": self.inputs.n_pub,
                "resid_sd": self.inputs.resid_sd, "theta_norm": self.inputs.theta_norm, "y_rms": self.inputs.y_rms,
                "conclusion": self.conclusion()}


def plan_inputs_from_public(X_pub, y_pub=None, *, response_center=None, response_scale=None,
                            r2: float | None = None) -> PlanInputs:
    """The plan's inputs from public rows (labelled, or unlabelled with stated response statistics).

    Parameters
    ----------
    X_pub : array-like of shape (m, p)
        Public features (standardised here by their own mean and standard deviation, as PMT's public
        standardisation does).
    y_pub : array-like of shape (m,), optional
        Public responses. Without them give ``response_scale`` (a stated RMS of ``y - centre``) and ``r2`` (a
        stated or assumed share of that variance the features explain); the direction of the coefficients is
        then taken as unknown (spread evenly over the eigen-directions).
    response_center : float, optional
        Ignored with ``y_pub`` (its mean is used).

    Raises
    ------
    ValueError
        ``m <= d``, non-finite input, or neither ``y_pub`` nor (``response_scale``, ``r2``).
    """
    Xq = np.asarray(X_pub, dtype=float)
    if Xq.ndim != 2 or not np.all(np.isfinite(Xq)):
        raise ValueError("X_pub must be a finite 2-D array")
    m, p = Xq.shape
    d = p + 1
    if m <= d + 1:
        raise ValueError(f"the planner needs n_pub > d + 1 = {d + 1} public rows, got {m}")
    mu_x, sd = Xq.mean(axis=0), Xq.std(axis=0)
    Z = np.column_stack([(Xq - mu_x) / np.where(sd > 0, sd, 1.0), np.ones(m)])
    S = Z.T @ Z / m
    lam_j, V = np.linalg.eigh((S + S.T) / 2)
    lam_j = np.maximum(lam_j, 1e-12 * lam_j[-1])
    if y_pub is not None:
        yq = np.asarray(y_pub, dtype=float).ravel()
        yc = yq - yq.mean()
        beta, *_ = np.linalg.lstsq(Z, yc, rcond=None)
        fit = Z @ beta
        s = math.sqrt(float(np.sum((yc - fit) ** 2)) / (m - d))
        t = math.sqrt(float(np.mean(fit**2)))
        y_rms = math.sqrt(float(np.mean(yc**2)))
        coef = V.T @ beta
        labelled = True
    else:
        if response_scale is None or r2 is None:
            raise ValueError("without public labels the planner needs a stated response_scale (RMS of y - centre) "
                             "and r2 (the share of it the features explain)")
        if not (0.0 <= float(r2) < 1.0):
            raise ValueError(f"r2 must lie in [0, 1), got {r2!r}")
        y_rms = float(response_scale)
        t = y_rms * math.sqrt(float(r2))
        s = y_rms * math.sqrt(1.0 - float(r2))
        coef = t / np.sqrt(d * lam_j)  # even spread of the signal over the eigen-directions
        labelled = False
    return PlanInputs(d, m, s, t, y_rms, lam_j, coef, labelled)


def _noise(d, n, eta, mu, y_rms, delta):
    L = 1.0 + np.log(2.0 * n / eta)
    R2 = d * L
    part = mu / math.sqrt(2.0)
    s_A = math.sqrt(2.0) * R2 / part
    s_b = 2.0 * np.sqrt(R2) * y_rms * np.sqrt(L) / part
    c = s_A * (2.0 * math.sqrt(d) + 2.0 * math.sqrt(math.log(1.0 / delta)))
    return s_A, s_b, c


def plan(inputs: PlanInputs, *, epsilon: float, delta: float = 1e-5, lam: float = 1e-3, eta: float = 0.05,
         n_grid=None, n_user: int | None = None) -> Plan:
    """Predicted held-out RMSE of each method over ``n`` (module docstring).

    Parameters
    ----------
    inputs : PlanInputs
    epsilon : float
        ``> 0``.
    delta, lam, eta : float
    n_grid : array-like of int, optional
        Default :data:`DEFAULT_N_GRID` (1e2..1e8).
    n_user : int, optional
        The user's number of private rows (marked; used by :meth:`Plan.conclusion`).

    Returns
    -------
    Plan

    Examples
    --------
    >>> inp = PlanInputs(5, 200, 4.5, 16.0, 16.6, np.array([0.05, 0.3, 1.0, 1.0, 1.6]), np.zeros(5))
    >>> p = plan(inp, epsilon=1.0)
    >>> p.crossover_n is not None and 1e3 < p.crossover_n < 1e7
    True
    """
    eps = P.validate_epsilon(epsilon)
    dlt = P.validate_delta(delta)
    if not (lam >= 0 and math.isfinite(lam)):
        raise ValueError(f"lam must be finite and >= 0, got {lam!r}")
    mu = P.gdp_mu(eps, dlt)
    n = np.asarray(DEFAULT_N_GRID if n_grid is None else n_grid, dtype=np.int64)
    nf = n.astype(float)
    d, m, s, t = inputs.d, inputs.n_pub, inputs.resid_sd, inputs.theta_norm
    s_A, s_b, c = _noise(d, nf, eta, mu, inputs.y_rms, dlt)
    v = s_b**2 + s_A**2 * t**2
    D = np.maximum(nf, c) + nf * lam
    pmt_var = v / D**2 + s**2 / nf  # per direction
    pmt_bias = t**2 * (1.0 - nf / D) ** 2
    curves = {"PMT": np.sqrt(s**2 + d * pmt_var + pmt_bias)}
    if inputs.labelled:
        pub_var = s**2 / max(m - d - 1, 1)
        curves["Public-only"] = np.full_like(nf, math.sqrt(s**2 + d * pub_var))
        pooled_var = 1.0 / (1.0 / (pmt_var + pmt_bias / d) + 1.0 / pub_var)
        curves["PMT-pooled"] = np.sqrt(s**2 + d * pooled_var)
    lj, bj = inputs.eig_std, inputs.coef_eig
    t_raw2 = float(np.sum(bj**2))
    v_raw = s_b**2 + s_A**2 * t_raw2
    # DP-RR solves without raising eigenvalues (PMT.md section 3, step 5: the floor only when the noisy matrix is
    # not positive definite). To first order the noise shifts the eigenvalue n lambda_j by N(0, s_A^2) (v^T W v for
    # a unit v), so the matrix is indefinite with probability about 1 - prod_j Phi((n lambda_j - push) / s_A). The median
    # error follows the likelier case: positive definite -> each direction solved with its perturbed eigenvalue,
    # typically max(n lambda_j, s_A / 2) (+ n lam); indefinite -> about half of the k directions with
    # n lambda_j < 2 s_A are raised to the floor 1e-3 trace(A_priv) / d ~ 1e-3 n mean(lambda) and inverted
    # (their eigenvectors random mixes of those directions: weight their mean lambda).
    # log Phi without SciPy (engine.privacy._ndtr, within a few ulp of scipy.stats.norm.logcdf): importing
    # scipy.stats for it cost about 0.5 s of the PMT page's first load. p_pd only picks a branch (>= 0.5).
    from engine.privacy._ndtr import log_ndtr

    nl = nf[:, None] * lj[None, :]
    # second order, the other eigenvalues push the smallest down by about s_A^2 (d - 1) / (n mean(lambda))
    push = s_A**2 * (d - 1) / (nf * float(np.mean(lj)))
    p_pd = np.exp(np.sum(log_ndtr((nl - push[:, None]) / s_A[:, None]), axis=1))
    Dj = np.maximum(nl, s_A[:, None] / 2.0) + nf[:, None] * lam
    pd_err = np.sum(lj * (v_raw[:, None] / Dj**2 + bj**2 * (1.0 - nl / Dj) ** 2), axis=1)
    unstable = nl < 2.0 * s_A[:, None]
    k_u = np.sum(unstable, axis=1)
    floor = 1e-3 * nf * float(np.mean(lj))
    mean_l = np.array([float(np.mean(lj[u])) if u.any() else float(np.mean(lj)) for u in unstable])
    ind_err = np.maximum(k_u / 2.0, 1.0) * mean_l * v_raw / floor**2
    rr = np.where(p_pd >= 0.5, pd_err, np.maximum(ind_err, pd_err))
    curves["DP-RR"] = np.sqrt(s**2 + rr + d * s**2 / nf)
    curves["Non-private"] = np.sqrt(s**2 * (1.0 + d / nf))

    def crossover(a, b):
        wins = curves[a] < curves[b]
        if not wins[-1]:
            return None
        last_loss = np.flatnonzero(~wins)
        return int(n[0] if last_loss.size == 0 else n[min(last_loss[-1] + 1, len(n) - 1)])

    cross = crossover("PMT", "Public-only") if inputs.labelled else None
    return Plan(n, curves, cross, crossover("PMT", "DP-RR"), None if n_user is None else int(n_user), eps, dlt, mu,
                float(lam), float(eta), inputs)
