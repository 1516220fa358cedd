"""The ``"ridge"`` task of :func:`engine.pmt.sweep.run_sweep`: DP-PMTRR and its baselines, vectorised.

Registered on import (:mod:`engine.pmt.sweep` imports this module). Methods (keys, display names):
``"pmt"`` (:class:`engine.pmt.PMTRidge`, default noise-aware solver), ``"pmt-paper"`` (the same release
solved as in the paper, ``solver="paper"``), ``"dp-rr"`` (:class:`engine.pmt.DPRidge`), ``"dp-rr-oracle"``
(non-private tuning, :class:`engine.pmt.DPRidgeOracle`), ``"dp-gd"`` (:class:`engine.pmt.DPGDRidge`),
``"non-private"`` (:class:`engine.pmt.RidgeReference`).

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
  standard-normal noise exactly as the estimator in :mod:`engine.pmt.ridge` / :mod:`engine.pmt.baselines` does with
  ``random_state=numpy.random.default_rng(s)`` (:func:`engine.pmt.ridge.ssp_noise`, :func:`engine.pmt._gd.dp_gd_noise`),
  then scales it by each epsilon's sigma. So a sweep row reproduces the corresponding estimator
  (common random numbers across epsilons and lams: curves over epsilon are smooth, and the
  per-epsilon medians are still over independent seeds).
* **Solves.** All (lam, epsilon, seed) systems are solved as one stack of d x d eigenproblems.
* **DP-GD.** All runs are columns of one ``d x runs`` matrix; per step two ``n x d`` by ``d x runs``
  products (float32 by default) and one per-example clip, chunked over rows for the cache; for d <= 8
  and enough runs the three are one fused numba pass (:mod:`engine.pmt._gd_kernel`)
  (:func:`engine.pmt._gd.dp_gd_ridge_path`).

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
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from engine import privacy as P
from engine.pmt._base import METHOD_NAMES, penalty_mask
from engine.pmt._blas import blas_limit, blas_threads
from engine.pmt._gd import dp_gd_noise, dp_gd_ridge_path, dp_gd_sensitivity
from engine.pmt._rng import default_rngs
from engine.pmt._registry import _grid, _mus, _sigmas, register_method, register_task
from engine.pmt._bounds import _kappa_from_eigs, add_intercept, pmt_radius, truncate_rows
from engine.pmt._moment import public_moment
from engine.pmt._public_scale import public_scaling
from engine.pmt._transform import pmt_transform
from engine.pmt._bounds import response_bound as public_response_bound
from engine.pmt.baselines import default_clip_grid
from engine.pmt.ridge import (
    resolve_response,
    noise_aware_solve,
    noise_spectral_bound,
    ridge_reference_solve,
    ssp_noise,
    certified_ssp_sensitivities,
    ssp_solve,
    sufficient_statistics,
)

__all__ = ["DEFAULT_METHODS", "SweepContext", "prepare_ridge_context"]


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
        self.moment = public_moment(self.X_pub, fit_intercept=self.fit_intercept, on_singular="regularize",
                                    estimator=self.options.get("public_moment", "sample"))
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
def _ssp_noise_stack(ctx, seeds):
    """Standard-normal SSP noise of every seed, ``(S, d, d)`` and ``(S, d)``, drawn once per context.

    Seed ``s`` draws from ``default_rng(s)`` exactly what :func:`engine.pmt.ridge.ssp_noise` draws (the
    d x d block, then the d-vector; the symmetric matrix is the upper triangle mirrored), so PMT, DP-RR
    and the oracle, which all use that stream, share one draw (memoised on the context by the seeds):
    the same numbers as drawing it per method, without the repeated work. The generators come
    from :func:`engine.pmt._rng.default_rngs` (the ``default_rng(s)`` generators, seed hashing vectorised),
    and each seed's ``d^2 + d`` draws are one ``standard_normal`` call: ``rng.normal(0, 1, size)`` is
    ``0.0 + 1.0 * standard_normal`` of the same stream, element by element, and ``x + 0.0`` is that float
    (``1.0 * x`` is ``x``), so the ``+= 0.0`` below gives the same bits, signed zeros included.
    """
    key = tuple(int(s) for s in seeds)
    cache = ctx.__dict__.setdefault("_ssp_noise_cache", {})
    if key not in cache:
        d = ctx.d
        buf = np.empty((len(key), d * d + d))
        for i, rng in enumerate(default_rngs(key)):
            rng.standard_normal(out=buf[i])  # = P.gaussian_noise((d, d), 1.0, rng), then P.gaussian_noise(d, ...)
        buf += 0.0
        Z = buf[:, :d * d].reshape(len(key), d, d)
        w = np.ascontiguousarray(buf[:, d * d:])
        # = np.triu(Z) + np.swapaxes(np.triu(Z, 1), -1, -2) (P.symmetric_gaussian_noise, per matrix): the upper
        # triangle mirrored; that sum adds 0.0 to every entry, which only turns -0.0 into +0.0, and Z has no -0.0
        # after the += 0.0 above, so copying the upper triangle into the lower gives the same floats
        W = Z
        lo_i, lo_j = np.tril_indices(d, -1)
        W[:, lo_i, lo_j] = W[:, lo_j, lo_i]
        W.flags.writeable = False
        w.flags.writeable = False
        cache[key] = (W, w)
    return cache[key]


def _B_y(ctx, y_pub=None):
    user = ctx.options.get("response_bound")
    return float(user) if user is not None else public_response_bound(ctx.y_pub if y_pub is None else y_pub, ctx.n,
                                                                      ctx.eta)


def _ssp_runs(ctx, A, b, sens_A, sens_b, pens, epsilons, seeds, noise, solver="paper"):
    """theta for every (lam, eps, seed) of one noisy sufficient-statistics release.

    ``solver="paper"``: :func:`engine.pmt.ridge.ssp_solve`; ``"noise-aware"``:
    :func:`engine.pmt.ridge.noise_aware_solve` with the noise bound of each epsilon's sigma_A.
    """
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    sA, sb = _sigmas(mus, 2, sens_A), _sigmas(mus, 2, sens_b)  # the estimators' rounded path
    Ws, ws = noise
    # = A[None] + sA[ei, None, None] * Ws[si] (runs ordered lam, epsilon, seed): the same sums, broadcast over
    # (epsilon, seed) without gathering copies of the noise, and repeated over lam only when L > 1
    d = ctx.d
    A_priv = A + sA[:, None, None, None] * Ws[None]  # (E, S, d, d)
    b_priv = b + sb[:, None, None] * ws[None]  # (E, S, d)
    if L > 1:
        A_priv = np.broadcast_to(A_priv, (L,) + A_priv.shape)
        b_priv = np.broadcast_to(b_priv, (L,) + b_priv.shape)
    A_priv, b_priv = A_priv.reshape(-1, d, d), b_priv.reshape(-1, d)
    pen_runs = pens[li] if L > 1 else pens[0]  # one lam: the (d, d) penalty broadcasts over the runs
    if solver == "paper":
        theta, fixed, kappa = ssp_solve(A_priv, b_priv, pen_runs, eig_floor=ctx.options.get("eig_floor", 1e-3))
    else:
        theta, fixed, kappa = noise_aware_solve(A_priv, b_priv, pen_runs, noise_spectral_bound(sA[ei], ctx.d, ctx.delta))
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta, eig_fix=fixed, kappa_noisy=kappa,
                sigma_A=sA[ei], sigma_b=sb[ei])


def _run_pmt(ctx, epsilons, seeds, solver="noise-aware"):
    """PMT with the estimator's response handling (option ``response``, default ``"auto"``: the joint form when
    no response bound is stated, :func:`engine.pmt.ridge.resolve_response`)."""
    form = resolve_response(ctx.options.get("response", "auto"), has_public_labels=True,
                            response_bound=ctx.options.get("response_bound"))
    if form == "joint":
        return _run_pmt_joint(ctx, epsilons, seeds, solver=solver)
    return _run_pmt_clip(ctx, epsilons, seeds, solver=solver)


def _run_pmt_joint(ctx, epsilons, seeds, solver="noise-aware"):
    """``PMTRidge(response="joint")`` for every (lam, epsilon, seed): one release of ``S = Z~^T Z~`` of the rows
    ``[x, 1, y]`` whitened with the public joint moment. Seed ``s`` draws its symmetric (d+1)-noise from
    ``default_rng(s)`` as the estimator does with ``random_state=default_rng(s)``."""
    L, E, S_, li, ei, si = _grid(ctx, epsilons, seeds)
    d, n = ctx.d, ctx.n
    # y as the sweep gives it (run_sweep centres it by the public mean, center_y): the estimator with
    # center=None on these rows, or with center="public" on the uncentred ones (the same rows up to rounding)
    J = np.hstack([ctx.Xa, ctx.y[:, None]])
    Jq = np.hstack([add_intercept(ctx.X_pub) if ctx.fit_intercept else ctx.X_pub, ctx.y_pub[:, None]])
    mom = public_moment(Jq, fit_intercept=False, on_singular="regularize",
                        estimator=ctx.options.get("public_moment", "sample"))
    tr = pmt_transform(J, moment=mom, eta=ctx.eta)
    R = tr.radius
    Sm = tr.X_tilde.T @ tr.X_tilde
    sens = math.sqrt(2.0) * R**2 * P.sum_rounding_factor(n, (d + 1) ** 2)
    mus = _mus(ctx, epsilons)
    sig = np.array([P.gaussian_sigma(sens, float(m)) for m in mus])
    Ws = np.stack([P.symmetric_gaussian_noise(d + 1, 1.0, np.random.default_rng(int(s_))) for s_ in seeds])
    S_priv = Sm + sig[ei, None, None] * Ws[si]  # (runs, d+1, d+1), runs ordered lam, epsilon, seed
    pens = np.stack([n * lam * ctx.Pm for lam in ctx.lams])[li]
    Sh = mom.Sigma_pub_sqrt
    if solver == "paper":
        Q = Sh.T @ S_priv @ Sh
        So = (Q + np.swapaxes(Q, -1, -2)) / 2.0
        theta, fixed, kappa = ssp_solve(So[:, :d, :d], So[:, :d, d], pens, eig_floor=ctx.options.get("eig_floor", 1e-3))
    else:
        c = np.array([float(noise_spectral_bound(x, d + 1, ctx.delta)) for x in sig])[ei]
        w_, V_ = np.linalg.eigh(S_priv)
        fixed = np.any(w_ < c[:, None], axis=1)
        Q0 = Sh.T @ S_priv @ Sh
        kappa = np.array([_kappa_from_eigs(np.linalg.eigvalsh((q + q.T)[:d, :d] / 2.0 + pn)) for q, pn in zip(Q0, pens)])
        M = (V_ * np.maximum(w_, c[:, None])[:, None, :]) @ np.swapaxes(V_, -1, -2)
        Q = Sh.T @ M @ Sh
        So = (Q + np.swapaxes(Q, -1, -2)) / 2.0
        theta = np.linalg.solve(So[:, :d, :d] + pens, So[:, :d, d][..., None])[..., 0]
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta, eig_fix=fixed, kappa_noisy=kappa,
                sigma_A=sig[ei], sigma_b=np.nan, kappa_pmt=tr.kappa_pmt, radius=R, frac_truncated=tr.frac_truncated,
                B_y=np.nan)


def _run_pmt_clip(ctx, epsilons, seeds, solver="noise-aware"):
    """PMT's clip form (``response="clip"``): y clipped at the public bound B_y, A and b released."""
    tr = pmt_transform(ctx.X, moment=ctx.moment, eta=ctx.eta)
    B_y = _B_y(ctx)
    A, b = tr.gram, tr.X_tilde.T @ np.clip(ctx.y, -B_y, B_y)  # A = X~^T X~ formed once by the transform
    sens_A, sens_b = certified_ssp_sensitivities(tr.radius, B_y, ctx.n, ctx.d, ctx.neighbouring)
    S_is = ctx.moment.Sigma_pub_inv_sqrt
    pen_w = ctx.moment.whiten_quadratic(ctx.Pm)
    pens = np.stack([ctx.n * lam * pen_w for lam in ctx.lams])
    out = _ssp_runs(ctx, A, b, sens_A, sens_b, pens, epsilons, seeds, _ssp_noise_stack(ctx, seeds), solver=solver)
    out["theta"] = out["theta"] @ S_is.T  # rows theta~ -> W theta~ (W the whitening, not symmetric in general)
    out.update(kappa_pmt=tr.kappa_pmt, radius=tr.radius, frac_truncated=tr.frac_truncated, B_y=B_y)
    return out


def _raw_clip_radius(ctx):
    C = ctx.options.get("clip_radius")
    return float(C) if C is not None else pmt_radius(ctx.d, ctx.n, ctx.eta)


def _truncate_rows(Z, radius):
    """``truncate_rows(Z, radius)[0::2]`` (the truncated rows and which rows were scaled), the same floats.

    For ``d <= 7`` columns, ``np.linalg.norm(Z, axis=1)`` sums the squares of a row left to right
    (numpy's pairwise sum is a plain loop below 8 terms), which the column loop below does with the rows
    innermost, about 4x faster on a few thousand rows; the scale of a truncated row is the same
    ``radius / norm``. ``tests/engine/test_pmt_sweep_exact.py`` checks the equality bit for bit; other shapes and
    radii go through :func:`engine.pmt._bounds.truncate_rows` (which also rejects a bad radius).
    """
    r = float(radius)
    if Z.ndim != 2 or not 1 <= Z.shape[1] <= 7 or not (r > 0 and math.isfinite(r)):
        Zt, _, truncated = truncate_rows(Z, radius)
        return Zt, truncated
    sq = Z * Z
    acc = sq[:, 0].copy()
    for j in range(1, Z.shape[1]):
        acc += sq[:, j]
    norms = np.sqrt(acc)
    truncated = norms > r
    scale = np.ones_like(norms)
    np.divide(r, norms, out=scale, where=truncated)
    return Z * scale[:, None], truncated


def _baseline_rows(ctx, as_given=False):
    """``(scaling, Xa, y, y_pub)``: the rows DP-RR and DP-GD fit, publicly standardised as their estimators do
    (``center="public"``, :mod:`engine.pmt._public_scale`; option ``baseline_center``), or as given."""
    center = None if as_given else ctx.options.get("baseline_center", "public")
    cache = ctx.__dict__.setdefault("_baseline_rows_cache", {})
    if center not in cache:
        sc = public_scaling(ctx.X_pub, ctx.y_pub, center=center, fit_intercept=ctx.fit_intercept,
                            penalize_intercept=ctx.penalize_intercept, p=ctx.X.shape[1])
        if sc is None:
            cache[center] = (None, ctx.Xa, ctx.y, ctx.y_pub, ctx.X_pub)
        else:
            Xs = sc.features(ctx.X)
            cache[center] = (sc, add_intercept(Xs) if ctx.fit_intercept else Xs, ctx.y - sc.y_center,
                             ctx.y_pub - sc.y_center, sc.features(ctx.X_pub))
    return cache[center]


def _theta_back(sc, ctx, out):
    if sc is not None:
        out["theta"] = sc.to_raw(out["theta"], ctx.fit_intercept)
    return out


def _run_dprr(ctx, epsilons, seeds, C=None, noise=None, as_given=False):
    sc, Xa, y, y_pub, _ = _baseline_rows(ctx, as_given)
    C = _raw_clip_radius(ctx) if C is None else C
    B_y = _B_y(ctx, y_pub)
    Xc, clipped = _truncate_rows(Xa, C)
    A, b = sufficient_statistics(Xc, y, B_y)
    sens_A, sens_b = certified_ssp_sensitivities(C, B_y, ctx.n, ctx.d, ctx.neighbouring)
    Pm = ctx.Pm if sc is None else sc.penalty(ctx.Pm)
    pens = np.stack([ctx.n * lam * Pm for lam in ctx.lams])
    noise = _ssp_noise_stack(ctx, seeds) if noise is None else noise
    out = _ssp_runs(ctx, A, b, sens_A, sens_b, pens, epsilons, seeds, noise)
    out.update(radius=C, frac_truncated=float(np.mean(clipped)), B_y=B_y)
    return _theta_back(sc, ctx, out)


def _run_adassp(ctx, epsilons, seeds):
    """:class:`engine.pmt.adassp.AdaSSPRidge` for every (lam, epsilon, seed), on DP-RR's bounded rows: seed ``s``
    draws ``z`` then the SSP noise from ``default_rng(s)``, as the estimator does."""
    from engine.pmt.adassp import adassp_sigmas, adassp_solve

    sc, Xa, y, y_pub, _ = _baseline_rows(ctx)
    C = _raw_clip_radius(ctx)
    B_y = _B_y(ctx, y_pub)
    Xc, clipped = _truncate_rows(Xa, C)
    A, b = sufficient_statistics(Xc, y, B_y)
    lam_min = float(np.linalg.eigvalsh(A)[0])
    L, E, S_, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    sigs = [adassp_sigmas(C, B_y, ctx.n, ctx.d, float(m), ctx.neighbouring)[1] for m in mus]
    draws = []
    for s_ in seeds:
        rng = np.random.default_rng(int(s_))
        z = float(P.gaussian_noise((), 1.0, rng))
        draws.append((z, *ssp_noise(rng, ctx.d)))
    Pm = ctx.Pm if sc is None else sc.penalty(ctx.Pm)
    theta = np.empty((len(li), ctx.d))
    lam_ada = np.empty(len(li))
    for k, (l_, e_, s_) in enumerate(zip(li, ei, si)):
        z, W, w = draws[s_]
        sg = sigs[e_] if math.isfinite(mus[e_]) else (0.0, 0.0, 0.0)
        theta[k], lam_ada[k] = adassp_solve(A, b, lam_min, z, W, w, sg, ctx.n * ctx.lams[l_] * Pm, ctx.d, ctx.eta)
    out = dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta, eig_fix=lam_ada > 0, kappa_noisy=np.nan,
               sigma_A=np.array([sigs[e][1] for e in ei]), sigma_b=np.array([sigs[e][2] for e in ei]),
               radius=C, frac_truncated=float(np.mean(clipped)), B_y=B_y)
    return _theta_back(sc, ctx, out)


def _run_dprr_oracle(ctx, epsilons, seeds):
    """Non-private tuning: per (lam, epsilon) the C on the grid with the smallest median L2 error."""
    warnings.warn("dp-rr-oracle picks the clip radius by looking at the private error (non-private tuning); "
                  "its rows are not differentially private", P.PrivacyLeakWarning, stacklevel=2)
    grid = ctx.options.get("oracle_grid")
    grid = default_clip_grid(_baseline_rows(ctx)[1], _raw_clip_radius(ctx)) if grid is None else np.asarray(grid, float)
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
    sc, Xa, y, y_pub, X_pub = _baseline_rows(ctx)
    C = ctx.options.get("clip_norm")
    B_y = _B_y(ctx, y_pub)
    C = float(C) if C is not None else 2.0 * pmt_radius(ctx.d, ctx.n, ctx.eta) * B_y
    sens = dp_gd_sensitivity(C, ctx.n, ctx.d)  # replace-one, the certified rounding factor included
    sig = _sigmas(mus, T, sens)  # the estimator's rounded path
    lam = ctx.lams[li]
    mom = ctx.moment if sc is None else public_moment(X_pub, fit_intercept=ctx.fit_intercept)
    Pm = ctx.Pm if sc is None else sc.penalty(ctx.Pm)
    p_max = float(np.max(np.diag(Pm))) if Pm.size else 0.0
    step = 1.0 / (2.0 * float(mom.eigenvalues[-1]) + 2.0 * lam * max(p_max, 1.0))
    base = np.stack([dp_gd_noise(np.random.default_rng(int(s)), T, ctx.d) for s in seeds], axis=2)  # (T, d, S)
    noise = base[:, :, si]
    dtype = ctx.options.get("dtype", np.float32)
    theta, frac = dp_gd_ridge_path(Xa, y, clip_norm=C, lam=lam, Pm=Pm, step_size=step,
                                   sigma=sig[ei], noise=noise, n_steps=T, dtype=dtype)
    return _theta_back(sc, ctx, dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta.T, radius=C, frac_truncated=frac,
                                     sigma_A=np.nan, sigma_b=sig[ei], B_y=B_y))


def _run_nonprivate(ctx, epsilons, seeds):
    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    kappas = np.array([_kappa_from_eigs(np.linalg.eigvalsh(ctx.G * ctx.n + ctx.n * lam * ctx.Pm)) for lam in ctx.lams])
    return dict(li=li, ei=ei, si=si, mu=np.inf, theta=ctx.theta_ref[li], kappa_noisy=kappas[li],
                radius=np.nan, frac_truncated=0.0)


def _run_pmt_paper(ctx, epsilons, seeds):
    return _run_pmt(ctx, epsilons, seeds, solver="paper")


def _run_pmt_clip_default(ctx, epsilons, seeds):
    return _run_pmt_clip(ctx, epsilons, seeds)


def _blas_for_shape(runner):
    """``runner`` with the BLAS libraries held at :func:`engine.pmt._blas.blas_threads` threads for the
    split's shape (threads chosen by shape only). A sweep's per-run work is d x d statistics,
    noise stacks and (n, d) products at small d, where a second OpenBLAS thread only adds hand-offs:
    measured on CCPP (d = 5), the three runners without DP-GD took 4.4-4.8 ms per 500 runs with one
    thread and 4.8 or 7.5-9 ms (bimodal across processes) with two (``bench/bench_pmt_sweep.py``).
    The count depends on (n, d) only (1 below the compute-bound shapes, else BLAS's own setting), never on
    the rows' values or the machine's load."""

    @functools.wraps(runner)
    def run(ctx, *args, **kwargs):
        with blas_limit(blas_threads(ctx.n, ctx.d)):
            return runner(ctx, *args, **kwargs)

    return run


register_method("ridge", "pmt", METHOD_NAMES["pmt"], _blas_for_shape(_run_pmt))
register_method("ridge", "pmt-paper", METHOD_NAMES["pmt-paper"], _blas_for_shape(_run_pmt_paper))
register_method("ridge", "pmt-clip", METHOD_NAMES["pmt-clip"], _blas_for_shape(_run_pmt_clip_default))
register_method("ridge", "dp-rr", METHOD_NAMES["dp-rr"], _blas_for_shape(_run_dprr))
register_method("ridge", "dp-rr-oracle", METHOD_NAMES["dp-rr-oracle"], _blas_for_shape(_run_dprr_oracle))
register_method("ridge", "dp-gd", METHOD_NAMES["dp-gd"], _blas_for_shape(_run_dpgd))
register_method("ridge", "adassp", METHOD_NAMES["adassp"], _blas_for_shape(_run_adassp))
register_method("ridge", "non-private", METHOD_NAMES["non-private"], _blas_for_shape(_run_nonprivate))

DEFAULT_METHODS = ("pmt", "dp-rr", "dp-gd", "adassp", "non-private")
