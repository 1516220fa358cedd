"""Vectorised privacy-utility sweeps: methods x epsilons x seeds (x lam x n_pub) -> a tidy frame.

:func:`run_sweep` returns one row per (method, epsilon, seed, lam, n_pub) with the columns of the
team contract (``method, epsilon, delta, seed, lam, n_pub, mu, l2_error, rel_error, excess_risk,
rmse, kappa_raw, kappa_pub, kappa_pmt, kappa_noisy, radius, frac_truncated``) plus a few extra ones
(``dataset, method_key, n, d, B_y, sigma_A, sigma_b, eig_fix, standardize``). :func:`summarize`
reduces it to medians and quantile bands (the error is heavy-tailed, so means mislead;
PMT.md section 6).

Design (what is computed once, what per seed)
----------------------------------------------
* **Split.** The public sample and a held-out test set are drawn **once** per ``n_pub`` from
  ``split_seed`` (default 0): first ``n_pub`` public rows
  (:func:`engine.datasets.public_private_split`), then a fraction ``test_size`` (default 0.2) of the
  remaining private rows is set aside as the test set *before anything is fitted*; the rest is the
  private training set. Seeds drive **only the mechanism noise**, so the sufficient statistics
  (``A = X~^T X~``, ``b = X~^T y``, the clipped raw statistics, the reference fit, ``X^T X / n`` for
  the excess risk, the test-set moments for the RMSE) are computed once per (data, split) and the
  per-seed cost does not grow with n. ``resample_split=True`` draws a new split for every seed
  instead (split seed = noise seed), which then costs one set of statistics per seed.
* **Noise.** Seed ``s`` gives ``numpy.random.default_rng(s)``, from which each method draws its
  standard-normal noise exactly as the estimator in :mod:`engine.regression` does with
  ``random_state=s`` (:func:`engine.regression.ssp_noise`, :func:`engine.regression.dp_gd_noise`),
  then scales it by each epsilon's sigma. So a sweep row reproduces the corresponding estimator
  (common random numbers across epsilons and lams: curves over epsilon are smooth, and the
  per-epsilon medians are still over independent seeds).
* **Solves.** All (lam, epsilon, seed) systems are solved as one stack of d x d eigenproblems.
* **DP-GD.** All runs are columns of one ``d x runs`` matrix; per step two ``n x d`` by ``d x runs``
  products (float32 by default) and two in-place clips, chunked over rows for the cache
  (:func:`engine.regression.dp_gd_ridge_path`).

Metrics (PMT.md section 6), each against the non-private ridge ``theta_np`` fitted on the
untruncated private training rows with the same lam (coefficient vectors include the intercept,
last): ``l2_error = ||theta - theta_np||``, ``rel_error = l2_error / ||theta_np||``,
``excess_risk = (theta - theta_np)^T (X^T X / n) (theta - theta_np)`` (X the augmented private
training rows), ``rmse`` on the held-out test rows. Condition numbers: ``kappa_raw`` of the raw
``X^T X`` (intercept included; private, shown for display), ``kappa_pub`` of ``Sigma_pub``,
``kappa_pmt`` of ``X~^T X~`` (PMT rows only), ``kappa_noisy`` of the noisy system actually solved
(inf when not positive definite; nan for DP-GD). ``radius`` is R for PMT, C for DP-RR and the
gradient clip for DP-GD; ``frac_truncated`` the fraction of rows (or, for DP-GD, per-example
gradients at the last step) that were truncated.

Non-private rows are repeated at every epsilon and seed of the sweep (``mu = inf``) so that they
draw as a reference line.

Extending: other tasks (e.g. ``"logistic"``) register their methods with :func:`register_method`
and their split/context preparation with :func:`register_task`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from engine import privacy as P
from engine.pmt import _kappa_from_eigs, add_intercept, pmt_radius, pmt_transform, public_moment, truncate_rows
from engine.pmt import response_bound as public_response_bound
from engine.regression import (
    METHOD_NAMES,
    default_clip_grid,
    dp_gd_noise,
    dp_gd_ridge_path,
    penalty_mask,
    ridge_reference_solve,
    ssp_noise,
    ssp_sensitivities,
    ssp_solve,
    sufficient_statistics,
)

__all__ = [
    "CONTRACT_COLUMNS",
    "SUMMARY_COLUMNS",
    "MethodSpec",
    "METHODS",
    "TASKS",
    "register_method",
    "register_task",
    "resolve_methods",
    "SweepContext",
    "prepare_ridge_context",
    "sweep_split",
    "run_sweep",
    "summarize",
]

#: Columns every sweep frame has (team contract).
CONTRACT_COLUMNS = (
    "method", "epsilon", "delta", "seed", "lam", "n_pub", "mu", "l2_error", "rel_error", "excess_risk",
    "rmse", "kappa_raw", "kappa_pub", "kappa_pmt", "kappa_noisy", "radius", "frac_truncated",
)
#: Columns of :func:`summarize`.
SUMMARY_COLUMNS = ("method", "epsilon", "lam", "n_pub", "metric", "median", "q05", "q25", "q75", "q95", "n_seeds")


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
    """Register a sweep method for a task (used by this module and by later tasks such as logistic)."""
    spec = MethodSpec(key, name, task, runner)
    METHODS[(task, key)] = spec
    return spec


def register_task(task: str, prepare: Callable) -> None:
    """Register a task's context builder (see :func:`prepare_ridge_context`)."""
    TASKS[task] = prepare


def resolve_methods(task: str, methods) -> list[MethodSpec]:
    """Map method keys or display names to registered specs (ValueError lists the accepted ones).

    Examples
    --------
    >>> [m.key for m in resolve_methods("ridge", ["PMT", "dp-gd"])]
    ['pmt', 'dp-gd']
    """
    avail = {k: s for (t, k), s in METHODS.items() if t == task}
    if not avail:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    by_name = {s.name.lower(): s for s in avail.values()}
    out = []
    for m in [methods] if isinstance(methods, str) else list(methods):
        key = str(m).strip().lower()
        spec = avail.get(key) or by_name.get(key)
        if spec is None:
            raise ValueError(f"unknown method {m!r} for task {task!r}; accepted: {', '.join(avail)}")
        if spec not in out:
            out.append(spec)
    if not out:
        raise ValueError("methods must name at least one method")
    return out


# --------------------------------------------------------------------------------------------
# context: everything computed once per (data, split)
# --------------------------------------------------------------------------------------------
@dataclass
class SweepContext:
    """Per-split quantities shared by all methods and seeds (ridge task).

    Attributes hold the private training rows (``X``, ``y``; ``Xa`` with the intercept column), the
    public rows, the test rows, the reference fits per lam, ``G = Xa^T Xa / n``, test-set moments,
    and the options in force.
    """

    X: np.ndarray
    y: np.ndarray
    X_pub: np.ndarray
    y_pub: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    lams: np.ndarray
    delta: float
    eta: float
    neighbouring: str
    fit_intercept: bool
    penalize_intercept: bool
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        self.Xa = add_intercept(self.X) if self.fit_intercept else self.X
        self.n, self.d = self.Xa.shape
        self.n_pub = self.X_pub.shape[0]
        self.Pm = penalty_mask(self.d, fit_intercept=self.fit_intercept, penalize_intercept=self.penalize_intercept)
        self.G = self.Xa.T @ self.Xa / self.n
        self.kappa_raw = _kappa_from_eigs(np.linalg.eigvalsh(self.G))
        self.moment = public_moment(self.X_pub, fit_intercept=self.fit_intercept, on_singular="regularize")
        self.kappa_pub = self.moment.kappa
        self.theta_ref = np.stack([ridge_reference_solve(self.Xa, self.y, lam, self.Pm) for lam in self.lams])
        Xt = add_intercept(self.X_test) if self.fit_intercept else self.X_test
        self.test_G = Xt.T @ Xt / max(len(self.y_test), 1)
        self.test_b = Xt.T @ self.y_test / max(len(self.y_test), 1)
        self.test_yy = float(np.mean(self.y_test**2)) if len(self.y_test) else math.nan

    def metrics(self, theta: np.ndarray, lam_idx: np.ndarray) -> dict:
        """L2 / relative error, excess risk and held-out RMSE for runs ``theta`` of shape (k, d)."""
        ref = self.theta_ref[lam_idx]
        diff = theta - ref
        l2 = np.linalg.norm(diff, axis=1)
        ref_norm = np.linalg.norm(ref, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(ref_norm > 0, l2 / ref_norm, np.nan)
        excess = np.einsum("ki,ij,kj->k", diff, self.G, diff)
        mse = self.test_yy - 2 * theta @ self.test_b + np.einsum("ki,ij,kj->k", theta, self.test_G, theta)
        rmse = np.sqrt(np.maximum(mse, 0.0))
        return {"l2_error": l2, "rel_error": rel, "excess_risk": excess, "rmse": rmse}


def prepare_ridge_context(X, y, X_pub, y_pub, X_test, y_test, *, lams, delta, eta, neighbouring,
                          fit_intercept=True, penalize_intercept=False, **options) -> SweepContext:
    """Build the ridge :class:`SweepContext` for one split."""
    return SweepContext(np.asarray(X, float), np.asarray(y, float), np.asarray(X_pub, float),
                        np.asarray(y_pub, float), np.asarray(X_test, float), np.asarray(y_test, float),
                        np.asarray(lams, float), delta, eta, neighbouring, fit_intercept, penalize_intercept,
                        options)


register_task("ridge", prepare_ridge_context)


# --------------------------------------------------------------------------------------------
# runners (vectorised over lam x epsilon x seed)
# --------------------------------------------------------------------------------------------
def _grid(ctx, epsilons, seeds):
    L, E, S = len(ctx.lams), len(epsilons), len(seeds)
    li, ei, si = np.meshgrid(np.arange(L), np.arange(E), np.arange(S), indexing="ij")
    return L, E, S, li.ravel(), ei.ravel(), si.ravel()


def _mus(ctx, epsilons):
    return np.array([P.gdp_mu(e, ctx.delta) for e in epsilons])


def _ssp_noise_stack(ctx, seeds):
    Ws, ws = zip(*(ssp_noise(np.random.default_rng(int(s)), ctx.d) for s in seeds))
    return np.stack(Ws), np.stack(ws)


def _B_y(ctx):
    user = ctx.options.get("response_bound")
    return float(user) if user is not None else public_response_bound(ctx.y_pub, ctx.n, ctx.eta)


def _ssp_runs(ctx, A, b, sens_A, sens_b, pens, epsilons, seeds, noise):
    """theta for every (lam, eps, seed) of one noisy sufficient-statistics release."""
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    mu_part = mus / math.sqrt(2.0)
    with np.errstate(divide="ignore"):
        sA = np.where(np.isinf(mu_part), 0.0, sens_A / mu_part)
        sb = np.where(np.isinf(mu_part), 0.0, sens_b / mu_part)
    Ws, ws = noise
    A_priv = A[None] + sA[ei, None, None] * Ws[si]
    b_priv = b[None] + sb[ei, None] * ws[si]
    theta, fixed, kappa = ssp_solve(A_priv, b_priv, pens[li], eig_floor=ctx.options.get("eig_floor", 1e-3))
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta, eig_fix=fixed, kappa_noisy=kappa,
                sigma_A=sA[ei], sigma_b=sb[ei])


def _run_pmt(ctx, epsilons, seeds):
    tr = pmt_transform(ctx.X, moment=ctx.moment, eta=ctx.eta)
    B_y = _B_y(ctx)
    A, b = sufficient_statistics(tr.X_tilde, ctx.y, B_y)
    sens_A, sens_b = ssp_sensitivities(tr.radius, B_y, ctx.neighbouring)
    S_is = ctx.moment.Sigma_pub_inv_sqrt
    pen_w = S_is @ ctx.Pm @ S_is
    pens = np.stack([ctx.n * lam * pen_w for lam in ctx.lams])
    out = _ssp_runs(ctx, A, b, sens_A, sens_b, pens, epsilons, seeds, _ssp_noise_stack(ctx, seeds))
    out["theta"] = out["theta"] @ S_is  # S_is symmetric: rows theta~ -> Sigma^{-1/2} theta~
    out.update(kappa_pmt=tr.kappa_pmt, radius=tr.radius, frac_truncated=tr.frac_truncated, B_y=B_y)
    return out


def _raw_clip_radius(ctx):
    C = ctx.options.get("clip_radius")
    return float(C) if C is not None else pmt_radius(ctx.d, ctx.n, ctx.eta)


def _run_dprr(ctx, epsilons, seeds, C=None, noise=None):
    C = _raw_clip_radius(ctx) if C is None else C
    B_y = _B_y(ctx)
    Xc, _, clipped = truncate_rows(ctx.Xa, C)
    A, b = sufficient_statistics(Xc, ctx.y, B_y)
    sens_A, sens_b = ssp_sensitivities(C, B_y, ctx.neighbouring)
    pens = np.stack([ctx.n * lam * ctx.Pm for lam in ctx.lams])
    noise = _ssp_noise_stack(ctx, seeds) if noise is None else noise
    out = _ssp_runs(ctx, A, b, sens_A, sens_b, pens, epsilons, seeds, noise)
    out.update(radius=C, frac_truncated=float(np.mean(clipped)), B_y=B_y)
    return out


def _run_dprr_oracle(ctx, epsilons, seeds):
    """Non-private tuning: per (lam, epsilon) the C on the grid with the smallest median L2 error."""
    warnings.warn("dp-rr-oracle picks the clip radius by looking at the private error (non-private tuning); "
                  "its rows are not differentially private", P.PrivacyLeakWarning, stacklevel=2)
    grid = ctx.options.get("oracle_grid")
    grid = default_clip_grid(ctx.Xa, _raw_clip_radius(ctx)) if grid is None else np.asarray(grid, float)
    noise = _ssp_noise_stack(ctx, seeds)
    per_C = [_run_dprr(ctx, epsilons, seeds, C=float(C), noise=noise) for C in grid]
    L, E, S = len(ctx.lams), len(epsilons), len(seeds)
    errs = np.stack([np.linalg.norm(r["theta"] - ctx.theta_ref[r["li"]], axis=1).reshape(L, E, S) for r in per_C])
    best = np.argmin(np.median(errs, axis=3), axis=0)  # (L, E)
    out = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in per_C[0].items()}
    pick = best[out["li"], out["ei"]]
    for k in ("theta", "eig_fix", "kappa_noisy", "sigma_A", "sigma_b"):
        stacked = np.stack([r[k] for r in per_C])
        out[k] = stacked[pick, np.arange(len(pick))]
    out["radius"] = grid[pick]
    out["frac_truncated"] = np.array([per_C[j]["frac_truncated"] for j in pick])
    return out


def _run_dpgd(ctx, epsilons, seeds):
    T = int(ctx.options.get("dp_gd_steps", 100))
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    C = ctx.options.get("clip_norm")
    B_y = _B_y(ctx)
    C = float(C) if C is not None else 2.0 * pmt_radius(ctx.d, ctx.n, ctx.eta) * B_y
    mu_t = mus / math.sqrt(T)
    sens = (2.0 if ctx.neighbouring == "replace-one" else 1.0) * C / ctx.n
    with np.errstate(divide="ignore"):
        sig = np.where(np.isinf(mu_t), 0.0, sens / mu_t)
    lam = ctx.lams[li]
    step = 1.0 / (2.0 * float(ctx.moment.eigenvalues[-1]) + 2.0 * lam)
    base = np.stack([dp_gd_noise(np.random.default_rng(int(s)), T, ctx.d) for s in seeds], axis=2)  # (T, d, S)
    noise = base[:, :, si]
    dtype = ctx.options.get("dtype", np.float32)
    theta, frac = dp_gd_ridge_path(ctx.Xa, ctx.y, clip_norm=C, lam=lam, Pm=ctx.Pm, step_size=step,
                                   sigma=sig[ei], noise=noise, n_steps=T, dtype=dtype)
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta.T, radius=C, frac_truncated=frac,
                sigma_A=np.nan, sigma_b=sig[ei], B_y=B_y)


def _run_nonprivate(ctx, epsilons, seeds):
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    kappas = np.array([_kappa_from_eigs(np.linalg.eigvalsh(ctx.G * ctx.n + ctx.n * lam * ctx.Pm)) for lam in ctx.lams])
    return dict(li=li, ei=ei, si=si, mu=np.inf, theta=ctx.theta_ref[li], kappa_noisy=kappas[li],
                radius=np.nan, frac_truncated=0.0)


register_method("ridge", "pmt", METHOD_NAMES["pmt"], _run_pmt)
register_method("ridge", "dp-rr", METHOD_NAMES["dp-rr"], _run_dprr)
register_method("ridge", "dp-rr-oracle", METHOD_NAMES["dp-rr-oracle"], _run_dprr_oracle)
register_method("ridge", "dp-gd", METHOD_NAMES["dp-gd"], _run_dpgd)
register_method("ridge", "non-private", METHOD_NAMES["non-private"], _run_nonprivate)

DEFAULT_METHODS = ("pmt", "dp-rr", "dp-gd", "non-private")


# --------------------------------------------------------------------------------------------
# the sweep
# --------------------------------------------------------------------------------------------
def _load(data, dataset_kwargs):
    if isinstance(data, str):
        from engine.datasets import load_dataset

        ds = load_dataset(data, **(dataset_kwargs or {}))
        X, y = ds.to_numpy()
        return X, y, ds.name
    if hasattr(data, "to_numpy") and hasattr(data, "task"):
        X, y = data.to_numpy()
        return X, y, getattr(data, "name", "data")
    if isinstance(data, (tuple, list)) and len(data) == 2:
        return np.asarray(data[0], dtype=float), np.asarray(data[1], dtype=float), "arrays"
    raise TypeError("data must be a registry name, a Dataset, or a tuple (X, y)")


def _seeds(seeds):
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1 (a count) or a list of ints, got {seeds!r}")
        return list(range(int(seeds)))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds must not be empty")
    if len(set(out)) != len(out):
        raise ValueError("seeds must be distinct")
    return out


def sweep_split(X, y, *, n_pub=None, split_seed=0, test_size=0.2, standardize=False, center_y=None,
                public_data=None):
    """The split a sweep uses: public rows, private training rows, held-out private test rows.

    ``n_pub`` public rows are drawn with :func:`engine.datasets.public_private_split`
    (``random_state=split_seed``); with ``standardize`` the features are centred/scaled by the public
    mean/std (:func:`engine.datasets.standardize_with_public`); with ``center_y`` (default: the value
    of ``standardize``) the public mean of y is subtracted from every response; then a fraction
    ``test_size`` of the private rows (a permutation seeded by ``[split_seed, 1]``) is held out
    before anything is fitted.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    n_pub : int
        Ignored when ``public_data`` is given.
    split_seed : int, default 0
    test_size : float, default 0.2
    standardize : bool, default False
    center_y : bool, optional
    public_data : tuple (X_pub, y_pub), optional
        A separate public sample; then every row of (X, y) is private (minus the test rows).

    Returns
    -------
    tuple of ndarray
        ``(X_pub, y_pub, X_train, y_train, X_test, y_test)``.

    Examples
    --------
    >>> X = np.arange(40.0).reshape(20, 2); y = np.arange(20.0)
    >>> [a.shape[0] for a in sweep_split(X, y, n_pub=5, test_size=0.2)]
    [5, 5, 12, 12, 3, 3]
    """
    center_y = standardize if center_y is None else bool(center_y)
    pub = None if public_data is None else _check_public(public_data, np.asarray(X).shape[1])
    return _split(np.asarray(X, float), np.asarray(y, float), n_pub, split_seed, float(test_size), standardize,
                  center_y, pub)


def _check_public(public_data, p):
    try:
        Xq, yq = public_data
    except (TypeError, ValueError):
        raise TypeError("public_data must be a tuple (X_pub, y_pub)") from None
    Xq, yq = np.asarray(Xq, dtype=float), np.asarray(yq, dtype=float).ravel()
    if Xq.ndim != 2 or Xq.shape[0] < 1:
        raise ValueError(f"public_data X_pub must be 2-D with at least one row (n_pub >= 1), got shape {Xq.shape}")
    if Xq.shape[1] != p:
        raise ValueError(f"public_data X_pub has {Xq.shape[1]} columns but X has {p}; they must match")
    if len(yq) != Xq.shape[0]:
        raise ValueError(f"public_data y_pub has {len(yq)} entries but X_pub has {Xq.shape[0]} rows")
    if not (np.all(np.isfinite(Xq)) and np.all(np.isfinite(yq))):
        raise ValueError("public_data contains NaN or infinite values")
    return Xq, yq


def _split(X, y, n_pub, seed, test_size, standardize, center_y=False, public=None):
    from engine.datasets import Split, public_private_split, standardize_with_public

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n_pub <= d: reported as kappa_pub / regularised
        if public is None:
            sp = public_private_split(X, y, n_pub=int(n_pub), random_state=seed)
        else:  # a separate public sample: every row of (X, y) is private
            Xq, yq = public
            sp = Split(X_pub=Xq, y_pub=yq, X_priv=X, y_priv=y, idx_pub=np.arange(len(yq)), idx_priv=np.arange(len(y)))
        if standardize:
            sp = standardize_with_public(sp)
    Xq, yq, Xp, yp = sp.X_priv, sp.y_priv, sp.X_pub, sp.y_pub
    if center_y:  # public statistic only: the public mean of y
        shift = float(np.mean(yp))
        yq, yp = yq - shift, yp - shift
    n_priv = len(yq)
    n_test = int(round(test_size * n_priv))
    perm = np.random.default_rng([int(seed), 1]).permutation(n_priv)
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return Xp, yp, Xq[train], yq[train], Xq[test], yq[test]


def run_sweep(
    data,
    *,
    methods: Sequence[str] = DEFAULT_METHODS,
    epsilons: Sequence[float] = (0.5, 1.0, 2.0, 5.0),
    seeds=50,
    lams: Sequence[float] = (1e-3,),
    n_pubs: Sequence[int] = (200,),
    delta: float = 1e-5,
    eta: float = 0.05,
    standardize: bool = False,
    center_y: bool | None = None,
    task: str = "ridge",
    test_size: float = 0.2,
    split_seed: int = 0,
    resample_split: bool = False,
    neighbouring: str = "replace-one",
    fit_intercept: bool = True,
    penalize_intercept: bool = False,
    dp_gd_steps: int = 100,
    clip_radius: float | None = None,
    clip_norm: float | None = None,
    response_bound: float | None = None,
    oracle_grid=None,
    dtype=np.float32,
    dataset_kwargs: dict | None = None,
    public_data=None,
    task_options: dict | None = None,
) -> pd.DataFrame:
    """Sweep methods x epsilons x seeds x lams x n_pubs and return a tidy frame (one row per run).

    Parameters
    ----------
    data : str, Dataset or tuple (X, y)
        A registry name (:func:`engine.datasets.load_dataset`, with ``dataset_kwargs``), a Dataset, or
        arrays X of shape (n, p) and y of shape (n,).
    methods : sequence of str
        Keys or display names: ``"pmt"``, ``"dp-rr"``, ``"dp-rr-oracle"`` (non-private tuning),
        ``"dp-gd"``, ``"non-private"``.
        (Other tasks: their registered methods; the default is all of them.)
    epsilons : sequence of float
        Each ``0 < epsilon <= inf`` (inf: noise off).
    seeds : int or sequence of int
        A count (seeds 0..k-1) or explicit seeds; they drive the noise (see the module docstring).
    lams : sequence of float
        Ridge penalties, each >= 0.
    n_pubs : sequence of int
        Public sample sizes, each ``1 <= n_pub < n``.
    delta : float, default 1e-5
    eta : float, default 0.05
    standardize : bool, default False
        Centre/scale features by the public mean/std (:func:`engine.datasets.standardize_with_public`);
        the response is left in its units. PMT itself is invariant to this (an affine map of x is a
        linear map of (x, 1)); the baselines are not.
    center_y : bool, optional
        Subtract the **public** mean of y from all responses (public information, no budget). Default:
        the value of ``standardize``. It shrinks the public response bound B_y from the scale of |y|
        to the scale of its spread (CCPP: mean 454 MW, sd 17 MW), which cuts the noise on
        ``b = X^T y`` for every method alike; the intercept absorbs the shift, and all coefficients
        (and errors) are reported for the centred response.
    task : {"ridge", "logistic"}, default "ridge"
        ``"logistic"``: DP-PMTLR and its baselines (:mod:`engine.experiments_logistic`; methods
        ``"pmt"``, ``"dp-newton"``, ``"dp-gd"``, ``"non-private"``; labels in {0, 1}; adds the columns
        ``accuracy, auc, log_loss, converged, eig_fixes, ...``). ``center_y`` defaults to False there.
    test_size : float, default 0.2
        Fraction of the private rows held out (before fitting) for the RMSE; ``0 <= test_size < 1``.
    split_seed : int, default 0
        Seed of the public/test split (fixed across noise seeds unless ``resample_split``).
    resample_split : bool, default False
        Draw a new split per seed (split seed = noise seed).
    neighbouring : {"replace-one", "add-remove"}
    fit_intercept, penalize_intercept : bool
    dp_gd_steps : int, default 100
    clip_radius, clip_norm, response_bound : float, optional
        Override the public defaults of DP-RR's C, DP-GD's gradient clip and B_y.
    oracle_grid : array-like, optional
        Grid of C for the oracle (default :func:`engine.regression.default_clip_grid`).
    dtype : numpy dtype, default float32
        dtype of DP-GD's n-sized products (theta and all statistics stay float64).
    dataset_kwargs : dict, optional
    task_options : dict, optional
        Task-specific options passed to the task's context builder (logistic: ``newton_steps``,
        ``eig_floor``, ``tol``, ``classes``, ``newton_dtype``; see :mod:`engine.experiments_logistic`).
    public_data : tuple (X_pub, y_pub), optional
        A separate public sample (e.g. an uploaded public file). Then every row of ``data`` is private
        (minus the held-out test rows), ``n_pubs`` is ignored and ``resample_split`` only reshuffles the
        test rows.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CONTRACT_COLUMNS` plus ``dataset, method_key, n, d, standardize, B_y, sigma_A,
        sigma_b, eig_fix``.

    Raises
    ------
    ValueError, TypeError
        Bad parameters, before any noise is drawn.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 3)); y = X @ [1.0, 2.0, 3.0] + rng.normal(size=3000)
    >>> f = run_sweep((X, y), methods=["pmt", "non-private"], epsilons=[1.0, 4.0], seeds=3)
    >>> len(f), sorted(f["method"].unique())
    (12, ['Non-private', 'PMT'])
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    if methods is DEFAULT_METHODS and task != "ridge":  # the default list names ridge methods
        methods = [k for (t, k) in METHODS if t == task]
    specs = resolve_methods(task, methods)
    eps_list = [P.validate_epsilon(e, allow_inf=True) for e in np.atleast_1d(epsilons)]
    if not eps_list:
        raise ValueError("epsilons must not be empty")
    delta = P.validate_delta(delta)
    neighbouring = P.validate_neighbouring(neighbouring)
    eta = float(eta)
    if not (0 < eta < 1):
        raise ValueError(f"eta must lie strictly between 0 and 1, got {eta!r}")
    lam_list = [float(v) for v in np.atleast_1d(lams)]
    for v in lam_list:
        if not (v >= 0 and math.isfinite(v)):
            raise ValueError(f"lam must be finite and >= 0 (accepted range: 0 <= lam < inf), got {v!r}")
    if not lam_list:
        raise ValueError("lams must not be empty")
    seed_list = _seeds(seeds)
    if not (0 <= float(test_size) < 1):
        raise ValueError(f"test_size must satisfy 0 <= test_size < 1, got {test_size!r}")
    if isinstance(dp_gd_steps, bool) or not isinstance(dp_gd_steps, (int, np.integer)) or dp_gd_steps < 1:
        raise ValueError(f"dp_gd_steps must be an integer >= 1, got {dp_gd_steps!r}")
    for name, v in (("clip_radius", clip_radius), ("clip_norm", clip_norm), ("response_bound", response_bound)):
        if v is not None and not (float(v) > 0 and math.isfinite(float(v))):
            raise ValueError(f"{name} must be finite and > 0 (or None for the public default), got {v!r}")
    X, y, name = _load(data, dataset_kwargs)
    if X.ndim != 2 or not np.all(np.isfinite(X)) or not np.all(np.isfinite(y)):
        raise ValueError("X must be a finite 2-D numeric array and y finite (no NaN or inf)")
    if len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)}; they must match")
    if max(float(np.max(np.abs(X))), float(np.max(np.abs(y)))) > 1e150:
        raise ValueError("X or y has entries with |value| > 1e150; their squares would overflow (rescale them)")
    public = None if public_data is None else _check_public(public_data, X.shape[1])
    pub_list = [int(m) for m in np.atleast_1d(n_pubs)] if public is None else [len(public[1])]
    for m in pub_list if public is None else []:
        if m < 1 or m >= len(y):
            raise ValueError(f"n_pub must satisfy 1 <= n_pub <= n - 1 = {len(y) - 1}, got {m}")
    d = X.shape[1] + int(fit_intercept)
    options = dict(dp_gd_steps=int(dp_gd_steps), clip_radius=clip_radius, clip_norm=clip_norm,
                   response_bound=response_bound, oracle_grid=oracle_grid, dtype=dtype, **(task_options or {}))
    if center_y is None and task != "ridge":
        center_y = False  # labels of a classification task are never shifted
    prepare = TASKS[task]
    frames = []
    split_plan = [(s, [s]) for s in seed_list] if resample_split else [(split_seed, seed_list)]
    for n_pub in pub_list:
        for sseed, run_seeds in split_plan:
            X_pub, y_pub, X_tr, y_tr, X_te, y_te = _split(X, y, n_pub, sseed, float(test_size), standardize,
                                                          standardize if center_y is None else bool(center_y),
                                                          public)
            if len(y_tr) < d:
                raise ValueError(f"n < d: {len(y_tr)} private training rows for d={d} columns")
            ctx = prepare(X_tr, y_tr, X_pub, y_pub, X_te, y_te, lams=lam_list, delta=delta, eta=eta, neighbouring=neighbouring,
                          fit_intercept=fit_intercept, penalize_intercept=penalize_intercept, **options)
            for spec in specs:
                out = spec.runner(ctx, eps_list, run_seeds)
                frames.append(_to_frame(ctx, spec, out, eps_list, run_seeds, name, standardize))
    frame = pd.concat(frames, ignore_index=True)
    return frame


def _to_frame(ctx, spec, out, epsilons, seeds, name, standardize):
    li, ei, si = out["li"], out["ei"], out["si"]
    k = len(li)
    cols = {
        "dataset": name,
        "method": spec.name,
        "method_key": spec.key,
        "epsilon": np.asarray(epsilons, float)[ei],
        "delta": ctx.delta,
        "seed": np.asarray(seeds, int)[si],
        "lam": ctx.lams[li],
        "n_pub": ctx.n_pub,
        "n": ctx.n,
        "d": ctx.d,
        "standardize": bool(standardize),
        "mu": np.broadcast_to(out["mu"], (k,)),
    }
    cols.update(ctx.metrics(out["theta"], li))
    cols.update(kappa_raw=ctx.kappa_raw, kappa_pub=ctx.kappa_pub)
    extra = tuple(getattr(ctx, "extra_columns", ()))  # task-specific per-run columns (logistic: converged, ...)
    for c in ("kappa_pmt", "kappa_noisy", "radius", "frac_truncated", "B_y", "sigma_A", "sigma_b", "eig_fix") + extra:
        v = out.get(c, np.nan)
        cols[c] = np.broadcast_to(np.asarray(v), (k,)) if np.ndim(v) else v
    f = pd.DataFrame(cols, index=np.arange(k))
    f["eig_fix"] = f["eig_fix"].astype(float).fillna(0.0).astype(bool)
    return f


def summarize(frame: pd.DataFrame, metric: str = "l2_error") -> pd.DataFrame:
    """Median and quantile bands of a metric per (method, epsilon, lam, n_pub).

    Parameters
    ----------
    frame : DataFrame
        From :func:`run_sweep`.
    metric : str, default "l2_error"
        Any numeric column (``l2_error``, ``rel_error``, ``excess_risk``, ``rmse``, ...).

    Returns
    -------
    DataFrame
        Columns :data:`SUMMARY_COLUMNS` (preceded by ``dataset`` when the frame holds several data
        sets); methods in sweep order, epsilons ascending.

    Raises
    ------
    ValueError
        If the metric column is missing.

    Examples
    --------
    >>> f = pd.DataFrame({"method": "PMT", "epsilon": 1.0, "lam": 0.0, "n_pub": 200,
    ...                   "seed": range(5), "l2_error": [1.0, 2.0, 3.0, 4.0, 100.0]})
    >>> summarize(f)[["median", "q25", "q75", "n_seeds"]].values.tolist()
    [[3.0, 2.0, 4.0, 5.0]]
    """
    if metric not in frame.columns:
        raise ValueError(f"metric {metric!r} is not a column of the frame; columns: {list(frame.columns)}")
    multi = "dataset" in frame.columns and frame["dataset"].nunique() > 1
    keys = (["dataset"] if multi else []) + ["method", "epsilon", "lam", "n_pub"]
    order = {m: i for i, m in enumerate(pd.unique(frame["method"]))}
    g = frame.groupby(keys, sort=False)[metric]
    q = g.quantile([0.05, 0.25, 0.5, 0.75, 0.95]).unstack()
    out = pd.DataFrame({
        "median": q[0.5], "q05": q[0.05], "q25": q[0.25], "q75": q[0.75], "q95": q[0.95],
        "n_seeds": g.size(),
    }).reset_index()
    out.insert(len(keys), "metric", metric)
    out = out.sort_values(keys, key=lambda s: s.map(order) if s.name == "method" else s, kind="stable")
    return out.reset_index(drop=True)[(["dataset"] if multi else []) + list(SUMMARY_COLUMNS)]


# Other tasks register themselves on import (kept last: they import this module).
import engine.experiments_logistic  # noqa: E402,F401  (task "logistic": engine.glm)
