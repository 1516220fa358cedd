"""The ``"poisson"`` task of :func:`engine.pmt.sweep.run_sweep`: DP-PMT Poisson regression and its baselines.

Registered on import (:mod:`engine.pmt.sweep` imports this module). Counts ``y >= 0``, log link. Methods
(keys, display names):

- ``"pmt"`` ("PMT", :class:`engine.pmt.PMTPoisson`): noisy Newton on PMT-whitened rows (radius R),
  counts clipped at ``y_max``, theta~ projected onto ``||theta~|| <= B_theta`` after each step, so
  ``G = max(e^{R B_theta}, y_max)`` and ``H = e^{R B_theta}`` (:func:`engine.pmt.poisson.poisson_bounds`);
- ``"dp-newton"`` ("DP-Newton"): the same noisy Newton on the *raw* rows clipped at
  ``C = sqrt(d (1 + ln(2n/eta)))`` (private data only; there is no DP-GD for Poisson in the engine, so
  the private-only baseline is this noisy Newton, as DP-Newton is for logistic);
- ``"public-only"`` ("Public-only", :mod:`engine.pmt.sweep_public`); ``"non-private"`` (the target).

Public defaults (every bound is public, never read from the private counts):

- ``y_max``: the largest **public** count (option ``y_max`` overrides);
- ``B_theta``: ``theta_margin`` (default 1.25) times the norm of the public Poisson fit in the
  method's own coordinates (whitened for PMT, raw for DP-Newton), at least 1e-3 (options
  ``theta_radius`` overrides both).

Seeds drive only the mechanism noise (:func:`engine.pmt._newton.newton_noise_stack`, as the
logistic task). Metrics against the non-private Poisson fit ``theta_np`` on the untruncated private
training rows with the same lam: ``l2_error``, ``rel_error``, ``excess_risk`` (penalised mean
Poisson objective at theta minus at theta_np), and on the held-out rows ``rmse`` (of the predicted
mean count ``exp(x^T theta)``) and ``deviance`` (mean Poisson deviance). Other columns as the logistic
task (``converged``, ``eig_fixes``, ``sigma_g``, ``sigma_H``, ...).
"""

from __future__ import annotations

import math

import numpy as np

from engine.pmt._newton import (
    DEFAULT_CONV_TOL,
    DEFAULT_NEWTON_EIG_FLOOR,
    POISSON,
    glm_reference_solve,
    newton_eig_floor,
    newton_noise_stack,
    certified_newton_sensitivities,
    noisy_newton,
)
from engine.pmt._registry import _grid, _mus, _sigmas, register_method, register_task
from engine.pmt._bounds import pmt_radius, truncate_rows
from engine.pmt._transform import pmt_transform
from engine.pmt.poisson import _check_counts, poisson_bounds
from engine.pmt.sweep_logistic import _glm_design, _single_blas

__all__ = ["POISSON_METHODS", "PoissonSweepContext", "prepare_poisson_context"]

#: Default methods of the Poisson task.
POISSON_METHODS = ("pmt", "dp-newton", "public-only", "non-private")
#: Per-run columns the Poisson runners add to the sweep frame.
EXTRA_COLUMNS = ("converged", "eig_fixes", "n_steps", "eig_floor", "last_step", "sigma_g", "sigma_H",
                 "theta_radius", "y_max")


def _poisson_objective(Xa, y, theta, lams, Pm):
    U = np.clip(Xa @ theta.T, -700, 700)
    return np.mean(np.exp(U) - y[:, None] * U, axis=0) + lams * np.einsum("ki,ij,kj->k", theta, Pm, theta)


class PoissonSweepContext:
    """Per-split quantities shared by all Poisson methods and seeds (see the module docstring)."""

    extra_columns = EXTRA_COLUMNS

    @_single_blas
    def __init__(self, X, y, X_pub, y_pub, X_test, y_test, *, lams, delta, eta, neighbouring, fit_intercept=True,
                 penalize_intercept=False, **options):
        self.X = np.asarray(X, dtype=float)
        self.y = _check_counts(y, self.X.shape[0], None)
        self.X_pub = np.asarray(X_pub, dtype=float)
        self.y_pub = _check_counts(y_pub, self.X_pub.shape[0], None, name="y_pub")
        self.X_test = np.asarray(X_test, dtype=float)
        self.y_test = np.asarray(y_test, dtype=float)
        self.lams = np.asarray(lams, dtype=float)
        self.delta, self.eta, self.neighbouring = delta, eta, neighbouring
        self.fit_intercept = fit_intercept
        self.options = options
        self.T = int(options.get("newton_steps") or 5)
        if self.T < 1:
            raise ValueError(f"newton_steps must be an integer >= 1, got {self.T}")
        self.eig_floor = options.get("eig_floor") or DEFAULT_NEWTON_EIG_FLOOR
        newton_eig_floor(self.eig_floor, 1, 0.0)
        self.tol = float(options.get("tol") or DEFAULT_CONV_TOL)
        self.newton_dtype = options.get("newton_dtype", np.float64)
        y_max = options.get("y_max")
        self.y_max = float(y_max) if y_max is not None else max(float(np.max(self.y_pub)), 1.0)  # public
        if not (self.y_max > 0 and math.isfinite(self.y_max)):
            raise ValueError(f"y_max must be finite and > 0, got {y_max!r}")
        self.theta_margin = float(options.get("theta_margin") or 1.25)
        _glm_design(self, POISSON, fit_intercept=fit_intercept, penalize_intercept=penalize_intercept)
        self.Xa_pub = self.moment.prepare(self.X_pub)
        lam0 = float(self.lams[0])
        self.theta_pub_raw = glm_reference_solve(self.Xa_pub, self.y_pub, lam0, self.Pm, POISSON)[0]
        self.obj_ref = np.array([_poisson_objective(self.Xa, self.y, self.theta_ref[i:i + 1], self.lams[i], self.Pm)[0]
                                 for i in range(len(self.lams))])

    def theta_radius(self, coords: str) -> float:
        """Public B_theta for ``coords`` in ("whitened", "raw") (option ``theta_radius`` overrides)."""
        user = self.options.get("theta_radius")
        if user is not None:
            return float(user)
        th = self.theta_pub_raw
        if coords == "whitened":
            th = self.moment.Sigma_pub_sqrt @ th
        return max(self.theta_margin * float(np.linalg.norm(th)), 1e-3)

    def metrics(self, theta: np.ndarray, lam_idx: np.ndarray) -> dict:
        """Errors against the reference and held-out count metrics for runs ``theta`` of shape (k, d)."""
        theta = np.asarray(theta, dtype=float)
        ok = np.all(np.isfinite(theta), axis=1)
        th = np.where(ok[:, None], theta, 0.0)
        ref = self.theta_ref[lam_idx]
        l2 = np.where(ok, np.linalg.norm(th - ref, axis=1), np.inf)
        ref_norm = np.linalg.norm(ref, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(ref_norm > 0, l2 / ref_norm, np.nan)
        excess = np.where(ok, _poisson_objective(self.Xa, self.y, th, self.lams[lam_idx], self.Pm)
                          - self.obj_ref[lam_idx], np.nan)
        out = {"l2_error": l2, "rel_error": rel, "excess_risk": excess}
        if len(self.y_test):
            U = np.clip(self.Xt @ th.T, -700, 700)
            mu_hat = np.exp(U)
            yt = self.y_test[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                term = np.where(yt > 0, yt * np.log(yt / mu_hat), 0.0)
            dev = np.mean(2.0 * (term - (yt - mu_hat)), axis=0)
            rmse = np.sqrt(np.mean((mu_hat - yt) ** 2, axis=0))
            nan = np.where(ok, 1.0, np.nan)
            out.update(rmse=rmse * nan, deviance=dev * nan)
        else:
            out.update(rmse=np.nan, deviance=np.nan)
        return out


def prepare_poisson_context(X, y, X_pub, y_pub, X_test, y_test, **kwargs) -> PoissonSweepContext:
    """Build the :class:`PoissonSweepContext` for one split (``register_task`` builder)."""
    return PoissonSweepContext(X, y, X_pub, y_pub, X_test, y_test, **kwargs)


def _newton_runs(ctx, Z, R, B, pen_w, epsilons, seeds):
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    G, H = poisson_bounds(R, B, ctx.y_max)
    if not (math.isfinite(G) and math.isfinite(H)):
        raise ValueError(f"R * theta_radius = {R * B:.3g} is too large: e^(R B_theta) overflows; pass a smaller "
                         "task_options['theta_radius']")
    sens_g, sens_H = certified_newton_sensitivities(R, ctx.n, Z.shape[1], ctx.neighbouring, G=G, H=H,
                                                    family=POISSON, theta_radius=B)
    sg, sH = _sigmas(mus, 2 * ctx.T, sens_g), _sigmas(mus, 2 * ctx.T, sens_H)  # the estimator's rounded path
    Hn, gn = newton_noise_stack(seeds, ctx.T, ctx.d)
    pens = np.stack([2.0 * lam * pen_w for lam in ctx.lams])[li]
    floor = newton_eig_floor(ctx.eig_floor, ctx.d, sH[ei])
    yc = np.minimum(ctx.y, ctx.y_max)
    res = noisy_newton(Z, yc, family=POISSON, pen=pens, sigma_g=sg[ei], sigma_H=sH[ei], noise_g=gn[:, si],
                       noise_H=Hn[:, si], n_steps=ctx.T, eig_floor=floor, theta_radius=B, tol=ctx.tol,
                       dtype=ctx.newton_dtype)
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=res.theta, eig_fix=res.eig_fixes > 0,
                eig_fixes=res.eig_fixes, converged=res.converged, kappa_noisy=res.kappa_noisy, n_steps=ctx.T,
                eig_floor=floor, last_step=res.last_step, sigma_g=sg[ei], sigma_H=sH[ei], sigma_A=sH[ei],
                sigma_b=sg[ei], theta_radius=B, y_max=ctx.y_max, B_y=ctx.y_max)


@_single_blas
def _run_pmt(ctx, epsilons, seeds):
    tr = pmt_transform(ctx.X, moment=ctx.moment, eta=ctx.eta)
    S_is = ctx.moment.Sigma_pub_inv_sqrt
    out = _newton_runs(ctx, tr.X_tilde, tr.radius, ctx.theta_radius("whitened"), ctx.moment.whiten_quadratic(ctx.Pm), epsilons,
                       seeds)
    out["theta"] = out["theta"] @ S_is.T  # theta = W theta~ per run (rows)
    out.update(kappa_pmt=tr.kappa_pmt, radius=tr.radius, frac_truncated=tr.frac_truncated)
    return out


@_single_blas
def _run_dp_newton(ctx, epsilons, seeds):
    C = ctx.options.get("clip_radius")
    C = float(C) if C is not None else pmt_radius(ctx.d, ctx.n, ctx.eta)
    Xc, _, clipped = truncate_rows(ctx.Xa, C)
    out = _newton_runs(ctx, Xc, C, ctx.theta_radius("raw"), ctx.Pm, epsilons, seeds)
    out.update(radius=C, frac_truncated=float(np.mean(clipped)))
    return out


def _run_nonprivate(ctx, epsilons, seeds):
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    return dict(li=li, ei=ei, si=si, mu=np.inf, theta=ctx.theta_ref[li], radius=np.nan, frac_truncated=0.0,
                converged=ctx.ref_converged[li], eig_fixes=0, eig_fix=False)


register_task("poisson", prepare_poisson_context)
register_method("poisson", "pmt", "PMT", _run_pmt)
register_method("poisson", "dp-newton", "DP-Newton", _run_dp_newton)
register_method("poisson", "non-private", "Non-private", _run_nonprivate)
