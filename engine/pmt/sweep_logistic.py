"""The ``"logistic"`` task of :func:`engine.pmt.sweep.run_sweep`: DP-PMTLR and its baselines, vectorised.

Registered on import (:mod:`engine.pmt.sweep` imports this module), so
``run_sweep("bank", task="logistic", standardize=True, ...)`` works like the ridge sweep: the split and
every per-split quantity are computed once, seeds drive only the mechanism noise, and all
(lam, epsilon, seed) runs of a method are advanced together.

Methods (keys, display names): ``"pmt"`` ("PMT", :class:`engine.pmt.PMTLogistic`), ``"dp-newton"``
("DP-Newton", :class:`engine.pmt.DPNewtonLogistic`), ``"dp-gd"`` ("DP-GD",
:class:`engine.pmt.DPGDLogistic`), ``"non-private"`` ("Non-private", :class:`engine.pmt.LogisticReference`).
Seed ``s`` draws its noise from ``numpy.random.default_rng(s)`` exactly as the estimator with
``random_state=numpy.random.default_rng(s)`` (:func:`engine.pmt._newton.newton_noise`,
:func:`engine.pmt._gd.dp_gd_noise`; common random numbers inside a simulation; an int ``random_state`` is
mixed with the fit's settings instead, :func:`engine.pmt._base.release_rng`), so a
sweep row reproduces the estimator (up to the float32 products: ``dtype=np.float64`` gives the
estimator's numbers to rounding).

Vectorisation: the noisy Newton runs of a method are rows of one ``runs x d`` matrix; per step one
``n x d`` by ``d x runs`` product for the linear predictors, one for the gradients, and one for the
Hessians (the row-pair products ``n x d(d+1)/2`` are built once per method and reused at every step:
:func:`engine.pmt._newton.weighted_grams`); the step-0 statistics (theta = 0) are shared. DP-GD runs are
columns of one matrix (:func:`engine.pmt._gd.dp_gd_logistic_path`). What depends only on the split (the
reference fits, the PMT transform, the clipped rows and their pair products) is kept between sweeps on
the same split (:mod:`engine.pmt._split_memo`), so a dashboard that moves epsilon or lam recomputes only
the noisy runs.

Metrics (columns added to the ridge contract; PMT.md section 6), each run against the non-private
logistic fit ``theta_np`` on the untruncated private training rows with the same lam (coefficients
include the intercept, last):

* ``l2_error = ||theta - theta_np||`` (inf for a non-finite theta), ``rel_error``;
* ``excess_risk``: the penalised training objective at theta minus at theta_np (>= 0 up to rounding);
* on the held-out test rows: ``accuracy`` (threshold 0 on the linear predictor), ``auc`` (ROC AUC, the
  Mann-Whitney statistic with average ranks for ties, equal to ``sklearn.metrics.roc_auc_score``),
  ``log_loss`` (mean negative log-likelihood, natural log), ``rmse`` = root Brier score
  ``sqrt(mean((p - y)^2))``;
* ``converged`` (the flag of :mod:`engine.pmt._newton`; DP-GD: finite iterate), ``eig_fixes`` (steps where the
  eigenvalue floor fired; ``eig_fix`` is ``eig_fixes > 0``), ``n_steps``, ``eig_floor``, ``last_step``;
* ``sigma_g``, ``sigma_H``: per-release noise of the gradient and the Hessian (also in the contract's
  ``sigma_b`` and ``sigma_A`` columns); ``radius`` is R (PMT) or C (DP-Newton, DP-GD clip).

Options (``run_sweep(..., task_options={...})``): ``newton_steps`` (T, default 5), ``eig_floor``
("auto" or a float), ``tol`` (convergence tolerance, 0.1), ``classes`` (the label pair, default (0, 1):
labels are mapped with it, never inferred), ``newton_dtype`` (float32). ``dp_gd_steps`` (default 100),
``clip_radius`` (DP-Newton's C) and ``clip_norm`` (DP-GD's C) come from ``run_sweep``'s own arguments.
"""

from __future__ import annotations

import functools

import numpy as np
from engine.pmt._special import expit  # scipy.special, imported on first use
from engine.pmt._blas import blas_limit as threadpool_limits  # cached controller: no new threadpool scan per call

from engine.pmt import _split_memo
from engine.pmt._base import penalty_mask
from engine.pmt._gd import dp_gd_logistic_path, dp_gd_noise, dp_gd_sensitivity, logistic_dp_gd_step_size
from engine.pmt._newton import (
    DEFAULT_CONV_TOL,
    pair_products,
    DEFAULT_NEWTON_EIG_FLOOR,
    GLM_METHOD_NAMES,
    LOGISTIC,
    glm_reference_solve,
    newton_eig_floor,
    newton_noise_stack,
    certified_newton_sensitivities,
    noisy_newton,
)
from engine.pmt._registry import _grid, _mus, _sigmas, register_method, register_task
from engine.pmt._bounds import _kappa_from_eigs, add_intercept, pmt_radius, truncate_rows
from engine.pmt._moment import public_moment
from engine.pmt._transform import pmt_transform
from engine.pmt.logistic import choose_whitening
from engine.pmt.public_info import standardizing_moment
from engine.pmt.logistic import check_binary_labels

__all__ = ["LOGISTIC_METHODS", "LogisticSweepContext", "prepare_logistic_context", "roc_auc_columns"]


def _single_blas(fn):
    """Run ``fn`` with single-threaded BLAS: the products here are many and mid-sized, and multi-threaded
    BLAS slows down badly when other processes share the two cores; the hot loops use their own
    threads over groups of runs (:func:`engine.pmt._newton.noisy_newton`, :func:`engine.pmt._gd.dp_gd_logistic_path`)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(1):
            return fn(*args, **kwargs)

    return wrapper


#: Default methods of the logistic task.
LOGISTIC_METHODS = ("pmt", "dp-newton", "dp-gd", "non-private")

#: Up to this many runs, a method's noisy Newton runs in one group (one thread) instead of two: the Hessians are
#: one product ``W^T K`` of the weights (runs x n) by the split's pair products (n x d(d+1)/2, bank: 260 MB in
#: float64), whose cost is reading K; one product of 20 rows reads it once per step, two of 10 rows read it
#: twice and use the BLAS kernel less well (bank, 20 seeds: 0.25 s instead of 0.36 s of CPU per method). The
#: sweep runs two methods side by side (:func:`engine.pmt.sweep._run_methods`), so the second core is busy with
#: DP-GD meanwhile. Larger batches (the epsilon grid, the lam sweep) keep two groups. The float64 sums are the
#: same sums in another BLAS blocking: the Hessians agree to float64 rounding with the two-group ones.
NEWTON_ONE_GROUP_MAX_RUNS = 40

#: Per-run columns the logistic runners add to the sweep frame.
EXTRA_COLUMNS = ("converged", "eig_fixes", "n_steps", "eig_floor", "last_step", "sigma_g", "sigma_H", "whiten_full")


from engine.pmt.auc import roc_auc_columns  # noqa: E402,F401 - the exact rank count lives in a leaf



def _glm_design(ctx, family, *, fit_intercept: bool, penalize_intercept: bool) -> None:
    """Set the design shared by the GLM sweep contexts (logistic here, Poisson in
    :mod:`engine.pmt.sweep_poisson`): ``Xa``, ``n``, ``d``, ``n_pub``, the penalty mask ``Pm``,
    ``kappa_raw`` (display only), the public ``moment`` and ``kappa_pub``, the non-private reference
    fits per lam (``theta_ref``, ``ref_converged``) and the held-out design ``Xt``.

    ``split_key`` (a digest of the private rows, their labels and the public rows) keys what the sweeps
    keep per split between calls (:mod:`engine.pmt._split_memo`): ``kappa_raw``, the reference fits, and
    in the runners the PMT transform, the clipped rows and their pair products."""
    ctx.split_key = _split_memo.fingerprint(ctx.X, ctx.y, ctx.X_pub)
    ctx.Xa = add_intercept(ctx.X) if fit_intercept else ctx.X
    ctx.n, ctx.d = ctx.Xa.shape
    ctx.n_pub = ctx.X_pub.shape[0]
    ctx.Pm = penalty_mask(ctx.d, fit_intercept=fit_intercept, penalize_intercept=penalize_intercept)
    ctx.kappa_raw = _split_memo.memo(ctx.split_key, ("kappa_raw", fit_intercept),
                                     lambda: _kappa_from_eigs(np.linalg.eigvalsh(ctx.Xa.T @ ctx.Xa / ctx.n)))
    ctx.moment = public_moment(ctx.X_pub, fit_intercept=fit_intercept, on_singular="regularize")
    ctx.kappa_pub = ctx.moment.kappa
    refs = _reference_fits(ctx, family, fit_intercept, penalize_intercept)
    ctx.theta_ref = np.stack([r[0] for r in refs])
    ctx.ref_converged = np.array([r[1] for r in refs])
    ctx.Xt = add_intercept(ctx.X_test) if fit_intercept else ctx.X_test

def _reference_fits(ctx, family, fit_intercept: bool, penalize_intercept: bool) -> list:
    """The non-private reference fit per lam (:func:`glm_reference_solve`), kept for the split; the fits not yet
    kept run two at a time (a lam sweep's eight fits are independent; each is the same call as alone, with BLAS at
    one thread, so every fit is the one computed alone, bit for bit). An upload's :func:`_split_memo.bypass`
    holds in the pool's threads."""
    def one(lam):
        return _split_memo.memo(ctx.split_key, ("ref", family.name, float(lam), fit_intercept, penalize_intercept),
                                functools.partial(glm_reference_solve, ctx.Xa, ctx.y, lam, ctx.Pm, family))

    lams = [float(v) for v in ctx.lams]
    if len(lams) < 2 or all(_split_memo.kept(ctx.split_key, ("ref", family.name, v, fit_intercept,
                                                             penalize_intercept)) for v in lams):
        return [one(v) for v in lams]
    import contextlib
    from concurrent.futures import ThreadPoolExecutor

    off = _split_memo.bypassed()

    def in_pool(lam):
        with _split_memo.bypass() if off else contextlib.nullcontext():
            return one(lam)

    with threadpool_limits(1), ThreadPoolExecutor(2, thread_name_prefix="sweep-ref") as ex:
        return list(ex.map(in_pool, lams))


class LogisticSweepContext:
    """Per-split quantities shared by all logistic methods and seeds.

    Attributes: the private training rows (``X``, ``y`` in {0, 1}, ``Xa`` with the intercept column),
    public and test rows, ``lams``, the reference fits ``theta_ref`` (one per lam) and whether each
    converged, ``kappa_raw`` (``X^T X`` of the training rows; private, display only), the public moment
    and ``kappa_pub``, the options in force (``T``, ``eig_floor``, ``tol``, ``newton_dtype``).
    """

    extra_columns = EXTRA_COLUMNS
    #: the methods run side by side (:func:`engine.pmt.sweep._run_methods`), the costliest first: DP-GD's
    #: 100 steps, then the two noisy Newtons
    concurrent_methods = True
    method_cost = {"dp-gd": 3, "pmt": 2, "dp-newton": 2}

    @_single_blas
    def __init__(self, X, y, X_pub, y_pub, X_test, y_test, *, lams, delta, eta, neighbouring, fit_intercept=True,
                 penalize_intercept=False, **options):
        classes = options.get("classes") or (0, 1)
        self.X = np.asarray(X, dtype=float)
        # the private training labels need not hold both classes (a private fact: a one-class sample and its
        # neighbour with one label flipped must run alike); the non-private reference then has no finite fit at
        # lam = 0 and is flagged not converged, a diagnostic only
        self.y = check_binary_labels(y, self.X.shape[0], classes=classes, require_both=False)
        self.X_pub = np.asarray(X_pub, dtype=float)
        self.y_pub = np.asarray(y_pub)
        self.X_test = np.asarray(X_test, dtype=float)
        self.y_test = (check_binary_labels(y_test, self.X_test.shape[0], classes=classes, require_both=False)
                       if len(y_test) else np.zeros(0))
        self.lams = np.asarray(lams, dtype=float)
        self.delta, self.eta, self.neighbouring = delta, eta, neighbouring
        self.fit_intercept, self.penalize_intercept = fit_intercept, penalize_intercept
        self.options = options
        self.T = int(options.get("newton_steps") or 5)
        if self.T < 1:
            raise ValueError(f"newton_steps must be an integer >= 1, got {self.T}")
        self.eig_floor = options.get("eig_floor") or DEFAULT_NEWTON_EIG_FLOOR
        newton_eig_floor(self.eig_floor, 1, 0.0)  # validates
        self.tol = float(options.get("tol") or DEFAULT_CONV_TOL)
        self.newton_dtype = options.get("newton_dtype", np.float32)
        _glm_design(self, LOGISTIC, fit_intercept=fit_intercept, penalize_intercept=penalize_intercept)
        self.obj_ref = np.array([self._objective(self.theta_ref[i:i + 1], np.array([i]))[0]
                                 for i in range(len(self.lams))])
        # (near) perfect separation at lam = 0: no finite MLE (as engine.pmt.LogisticReference)
        self.ref_converged &= ~((self.lams == 0) & (self.obj_ref < 1e-6))

    def _objective(self, theta, lam_idx):
        U = self.Xa @ theta.T
        data = np.mean(np.logaddexp(0, U) - self.y[:, None] * U, axis=0)
        return data + self.lams[lam_idx] * np.einsum("ki,ij,kj->k", theta, self.Pm, theta)

    def metrics(self, theta: np.ndarray, lam_idx: np.ndarray) -> dict:
        """Errors against the reference and held-out classification metrics for runs ``theta`` (k, d).

        Identical (theta, lam) runs (the non-private rows) are evaluated once.
        """
        theta = np.asarray(theta, dtype=float)
        lam_idx = np.asarray(lam_idx)
        key = np.column_stack([theta, lam_idx])
        uniq, inv = np.unique(key, axis=0, return_inverse=True)
        if len(uniq) < len(key):
            out = self._metrics(uniq[:, :-1], uniq[:, -1].astype(int))
            return {k: (v[inv.ravel()] if np.ndim(v) else v) for k, v in out.items()}
        return self._metrics(theta, lam_idx)

    @_single_blas
    def _metrics(self, theta, lam_idx):
        theta = np.asarray(theta, dtype=float)
        ok = np.all(np.isfinite(theta), axis=1)
        th = np.where(ok[:, None], theta, 0.0)
        ref = self.theta_ref[lam_idx]
        l2 = np.where(ok, np.linalg.norm(th - ref, axis=1), np.inf)
        ref_norm = np.linalg.norm(ref, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(ref_norm > 0, l2 / ref_norm, np.nan)
        excess = np.where(ok, self._objective(th, lam_idx) - self.obj_ref[lam_idx], np.nan)
        out = {"l2_error": l2, "rel_error": rel, "excess_risk": excess}
        if len(self.y_test):
            U = self.Xt @ th.T
            yt = self.y_test[:, None]
            acc = np.mean((U > 0) == (yt == 1), axis=0)
            ll = np.mean(np.logaddexp(0, U) - yt * U, axis=0)
            rmse = np.sqrt(np.mean((expit(U) - yt) ** 2, axis=0))
            auc = roc_auc_columns(U, self.y_test)
            nan = np.where(ok, 1.0, np.nan)
            out.update(accuracy=acc * nan, auc=auc * nan, log_loss=ll * nan, rmse=rmse * nan)
        else:
            out.update(accuracy=np.nan, auc=np.nan, log_loss=np.nan, rmse=np.nan)
        return out


def prepare_logistic_context(X, y, X_pub, y_pub, X_test, y_test, **kwargs) -> LogisticSweepContext:
    """Build the :class:`LogisticSweepContext` for one split (``register_task`` builder)."""
    return LogisticSweepContext(X, y, X_pub, y_pub, X_test, y_test, **kwargs)


# --------------------------------------------------------------------------------------------
# runners
# --------------------------------------------------------------------------------------------
def _pair_products(ctx, Z, tag: tuple, runs: int):
    """:func:`engine.pmt._newton.pair_products` of Z in the Newton dtype, kept for the split (``tag`` names Z
    among the split's row sets); None where :func:`noisy_newton` would not use it (<= 2 runs or 1 step)."""
    if runs <= 2 or ctx.T <= 1:
        return None
    # products in the Newton dtype, kept in float64: the Hessian sums over rows run in float64
    # (engine.privacy.sum_rounding_factor), so noisy_newton needs no per-call conversion
    dt = np.dtype(ctx.newton_dtype)
    return _split_memo.memo(ctx.split_key, ("K",) + tag + (dt.str, "f8"),
                            lambda: pair_products(np.asarray(Z, dtype=float), dtype=dt, out_dtype=np.float64))


def _newton_runs(ctx, Z, R, pen_w, epsilons, seeds, tag: tuple):
    """Noisy Newton for every (lam, epsilon, seed) on bounded rows Z (radius R); theta in Z's space.
    ``tag`` names Z among the split's row sets (its pair products are kept for the split)."""
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    T = ctx.T
    sens_g, sens_H = certified_newton_sensitivities(R, ctx.n, Z.shape[1], ctx.neighbouring)
    sg, sH = _sigmas(mus, 2 * T, sens_g), _sigmas(mus, 2 * T, sens_H)  # the estimator's rounded path
    Hn, gn = newton_noise_stack(seeds, T, ctx.d)
    pens = np.stack([2.0 * lam * pen_w for lam in ctx.lams])[li]
    floor = newton_eig_floor(ctx.eig_floor, ctx.d, sH[ei])
    res = noisy_newton(Z, ctx.y, family=LOGISTIC, pen=pens, sigma_g=sg[ei], sigma_H=sH[ei], noise_g=gn[:, si],
                       noise_H=Hn[:, si], n_steps=T, eig_floor=floor, tol=ctx.tol, dtype=ctx.newton_dtype,
                       K=_pair_products(ctx, Z, tag, len(li)), n_jobs=1 if len(li) <= NEWTON_ONE_GROUP_MAX_RUNS else None)
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=res.theta, eig_fix=res.eig_fixes > 0,
                eig_fixes=res.eig_fixes, converged=res.converged, kappa_noisy=res.kappa_noisy, n_steps=T,
                eig_floor=floor, last_step=res.last_step, sigma_g=sg[ei], sigma_H=sH[ei], sigma_A=sH[ei],
                sigma_b=sg[ei])


def _frozen_transform(ctx, moment=None):
    """:func:`pmt_transform` of the private rows with the public moment, its whitened rows read-only."""
    tr = pmt_transform(ctx.X, moment=ctx.moment if moment is None else moment, eta=ctx.eta)
    tr.X_tilde.setflags(write=False)
    return tr


def _pmt_runs(ctx, epsilons, seeds, whiten):
    """PMT's noisy Newton at ``epsilons`` in the coordinates ``whiten`` ("full" or "standardize")."""
    mom = ctx.moment if whiten == "full" else standardizing_moment(ctx.moment)
    tag = ("pmt", float(ctx.eta), ctx.fit_intercept) + (() if whiten == "full" else ("standardize",))
    tr = _split_memo.memo(ctx.split_key, tag, lambda: _frozen_transform(ctx, mom))
    S_is = mom.Sigma_pub_inv_sqrt
    out = _newton_runs(ctx, tr.X_tilde, tr.radius, mom.whiten_quadratic(ctx.Pm), epsilons, seeds, tag)
    out["theta"] = out["theta"] @ S_is.T  # rows theta~ -> W theta~ (W the whitening, not symmetric in general)
    out.update(kappa_pmt=tr.kappa_pmt, radius=tr.radius, frac_truncated=tr.frac_truncated,
               whiten_full=1.0 if whiten == "full" else 0.0)  # PMT's coordinates (public): 1 full, 0 standardised
    return out


def _public_labels01(ctx):
    """The public labels in {0, 1} when the context has labelled public rows, else None."""
    yq = getattr(ctx, "y_pub", None)
    if yq is None:
        return None
    yq = np.asarray(yq)
    if yq.ndim != 1 or yq.shape[0] != ctx.X_pub.shape[0]:
        return None
    try:
        return check_binary_labels(yq, len(yq), classes=ctx.options.get("classes") or (0, 1), name="y_pub",
                                   require_both=False)
    except (TypeError, ValueError):
        return None


def pmt_whitening(ctx, epsilon: float, *, lam: float):
    """``(choice, ratio, simulated)`` of PMT's coordinates at ``epsilon`` (as :class:`engine.pmt.PMTLogistic` with
    the context's public rows and labels: :func:`engine.pmt.whiten_choice.auto_whitening`)."""
    from engine.pmt.whiten_choice import auto_whitening

    whiten = ctx.options.get("whiten", "auto")
    rule = choose_whitening(whiten, d=ctx.d, n=ctx.n, eta=ctx.eta, epsilon=epsilon, delta=ctx.delta, n_steps=ctx.T,
                            fit_intercept=ctx.fit_intercept)
    return auto_whitening(whiten, rule, moment=ctx.moment, X_pub=ctx.X_pub,
                          y_pub01=_public_labels01(ctx), n=ctx.n, epsilon=epsilon, delta=ctx.delta, eta=ctx.eta,
                          lam=lam, n_steps=ctx.T, eig_floor=ctx.eig_floor, tol=ctx.tol,
                          fit_intercept=ctx.fit_intercept, penalize_intercept=ctx.penalize_intercept)


@_single_blas
def _run_pmt(ctx, epsilons, seeds):
    """PMT per epsilon in the coordinates :func:`pmt_whitening` picks (as PMTLogistic with the public labels)."""
    # one choice per epsilon for every lam of the grid: simulated at the first lam (the page and the CLI's
    # default run one lam, where this is PMTLogistic's own choice)
    choice = [pmt_whitening(ctx, float(e), lam=float(ctx.lams[0]))[0] for e in epsilons]
    if len(set(choice)) == 1:
        return _pmt_runs(ctx, epsilons, seeds, choice[0])
    # epsilons in both coordinate systems: run each group, then put the runs back in the grid's order
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    runs = len(li)
    pos = {(int(a), int(b), int(c)): r for r, (a, b, c) in enumerate(zip(li, ei, si))}
    merged = {}
    for w in sorted(set(choice)):
        idx = [i for i, c in enumerate(choice) if c == w]
        out = _pmt_runs(ctx, [epsilons[i] for i in idx], seeds, w)
        k = len(out["li"])
        target = np.array([pos[(int(a), idx[int(b)], int(c))] for a, b, c in zip(out["li"], out["ei"], out["si"])])
        for key, v in out.items():
            if key in ("li", "ei", "si"):
                continue
            arr = np.asarray(v)
            if arr.ndim >= 1 and arr.shape[0] == k:
                if key not in merged:
                    merged[key] = np.empty((runs,) + arr.shape[1:], dtype=arr.dtype)
                merged[key][target] = arr
            else:
                if key not in merged:
                    merged[key] = np.empty(runs, dtype=np.result_type(arr, float))
                merged[key][target] = arr
    merged.update(li=li, ei=ei, si=si)
    return merged


@_single_blas
def _run_dp_newton(ctx, epsilons, seeds):
    C = ctx.options.get("clip_radius")
    C = float(C) if C is not None else pmt_radius(ctx.d, ctx.n, ctx.eta)
    tag = ("clip", C, ctx.fit_intercept)
    Xc, _, clipped = _split_memo.memo(ctx.split_key, tag, lambda: truncate_rows(ctx.Xa, C))
    out = _newton_runs(ctx, Xc, C, ctx.Pm, epsilons, seeds, tag)
    out.update(radius=C, frac_truncated=float(np.mean(clipped)))
    return out


@_single_blas
def _run_dp_gd(ctx, epsilons, seeds):
    T = int(ctx.options.get("dp_gd_steps") or 100)
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    C = ctx.options.get("clip_norm")
    C = float(C) if C is not None else pmt_radius(ctx.d, ctx.n, ctx.eta)
    sens = dp_gd_sensitivity(C, ctx.n, ctx.d)  # replace-one, the certified rounding factor included
    sig = _sigmas(mus, T, sens)  # the estimator's rounded path
    lam = ctx.lams[li]
    step = np.array([logistic_dp_gd_step_size(ctx.moment.eigenvalues[-1], v) for v in lam])
    base = np.stack([dp_gd_noise(np.random.default_rng(int(s)), T, ctx.d) for s in seeds], axis=2)  # (T, d, S)
    dtype = ctx.options.get("dtype", np.float32)
    theta, frac = dp_gd_logistic_path(ctx.Xa, ctx.y, clip_norm=C, lam=lam, Pm=ctx.Pm, step_size=step,
                                      sigma=sig[ei], noise=base[:, :, si], n_steps=T, dtype=dtype)
    ok = np.all(np.isfinite(theta), axis=0)
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta.T, radius=C, frac_truncated=frac, sigma_A=np.nan,
                sigma_b=sig[ei], sigma_g=sig[ei], sigma_H=np.nan, converged=ok, eig_fixes=0, n_steps=T,
                eig_fix=False)


@_single_blas
def _run_nonprivate(ctx, epsilons, seeds):
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    return dict(li=li, ei=ei, si=si, mu=np.inf, theta=ctx.theta_ref[li], radius=np.nan, frac_truncated=0.0,
                converged=ctx.ref_converged[li], eig_fixes=0, eig_fix=False)


register_task("logistic", prepare_logistic_context)
register_method("logistic", "pmt", GLM_METHOD_NAMES["pmt"], _run_pmt)
register_method("logistic", "dp-newton", GLM_METHOD_NAMES["dp-newton"], _run_dp_newton)
register_method("logistic", "dp-gd", GLM_METHOD_NAMES["dp-gd"], _run_dp_gd)
register_method("logistic", "non-private", GLM_METHOD_NAMES["non-private"], _run_nonprivate)


#: Public name of PMT's seeded logistic runs in one coordinate system (scripts/check_whiten_auto.py compares them).
pmt_runs = _pmt_runs
__all__ += ["pmt_runs"]
