"""Sweep runners of the public-only comparator (ridge, logistic, Poisson) and of PMT-pooled (ridge).

Registered on import (:mod:`engine.pmt.sweep` imports this module after the task modules):

- ``"public-only"`` ("Public-only", :mod:`engine.pmt.public`) for every task: the non-private fit on the
  split's public rows, repeated at every (epsilon, seed) with ``mu = 0`` (nothing private is released);
  its metrics are against the same private reference fit as every other method;
- ``"pmt-pooled"`` ("PMT-pooled", :class:`engine.pmt.pooled.PMTPooledRidge`) for ``"ridge"``: PMT's
  release (same R, B_y, sensitivities and, for seed s, the same noise as the ``"pmt"`` rows) pooled
  with the public rows by :func:`engine.pmt.pooled.pooled_solve`.
"""

from __future__ import annotations

import numpy as np

from engine.pmt._registry import TASKS, _grid, _mus, _sigmas, register_method
from engine.pmt._transform import pmt_transform
from engine.pmt.pooled import POOLED_NAME, pooled_solve, pooled_weights
from engine.pmt.public import PUBLIC_ONLY_NAME, public_only_theta
from engine.pmt.ridge import certified_ssp_sensitivities, ssp_noise, sufficient_statistics

__all__ = ["public_only_runner", "run_pmt_pooled"]


def _public_labels(ctx, family):
    yq = np.asarray(ctx.y_pub)
    if family == "logistic":
        from engine.pmt.logistic import check_binary_labels

        return check_binary_labels(yq, len(yq), classes=ctx.options.get("classes") or (0, 1), name="y_pub",
                                   require_both=False)
    return np.asarray(yq, dtype=float)


def public_only_runner(family: str):
    """The ``"public-only"`` runner of a task (``family`` in ``"ridge", "logistic", "poisson"``)."""

    def run(ctx, epsilons, seeds):
        L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
        Xa_pub = ctx.moment.prepare(ctx.X_pub)
        yq = _public_labels(ctx, family)
        fits = [public_only_theta(Xa_pub, yq, lam, ctx.Pm, family) for lam in ctx.lams]
        theta = np.stack([f[0] for f in fits])
        ok = np.array([f[1] for f in fits])
        out = dict(li=li, ei=ei, si=si, mu=0.0, theta=theta[li], radius=np.nan, frac_truncated=0.0,
                   kappa_noisy=ctx.kappa_pub, eig_fix=False)
        if family != "ridge":
            out.update(converged=ok[li], eig_fixes=0)
        return out

    run.__name__ = f"_run_public_only_{family}"
    return run


def run_pmt_pooled(ctx, epsilons, seeds):
    """PMT-pooled for every (lam, epsilon, seed) of the ridge task (weights: public quantities only)."""
    from engine.pmt.sweep_ridge import _B_y

    L, E, S, li, ei, si = _grid(ctx, epsilons, seeds)
    mus = _mus(ctx, epsilons)
    tr = pmt_transform(ctx.X, moment=ctx.moment, eta=ctx.eta)
    B_y = _B_y(ctx)
    A, b = sufficient_statistics(tr.X_tilde, ctx.y, B_y)
    sens_A, sens_b = certified_ssp_sensitivities(tr.radius, B_y, ctx.n, ctx.d, ctx.neighbouring)
    S_is = ctx.moment.Sigma_pub_inv_sqrt
    Z_pub = ctx.moment.prepare(ctx.X_pub) @ S_is
    sA, sb = _sigmas(mus, 2, sens_A), _sigmas(mus, 2, sens_b)  # the estimator's rounded path
    noise = [ssp_noise(np.random.default_rng(int(s)), ctx.d) for s in seeds]
    Ws = np.stack([w[0] for w in noise])
    ws = np.stack([w[1] for w in noise])
    theta = np.empty((len(li), ctx.d))
    v_col = np.empty(len(li))
    for l_idx, lam in enumerate(ctx.lams):
        pen_w = lam * ctx.moment.whiten_quadratic(ctx.Pm)
        for e_idx in range(E):
            wts = pooled_weights(Z_pub, ctx.y_pub, pen_w, float(sA[e_idx]), float(sb[e_idx]))
            rows = np.flatnonzero((li == l_idx) & (ei == e_idx))
            M = A[None] + sA[e_idx] * Ws[si[rows]] + ctx.n * pen_w
            bp = b[None] + sb[e_idx] * ws[si[rows]]
            theta[rows] = pooled_solve(M, bp, wts)
            v_col[rows] = wts.v
    return dict(li=li, ei=ei, si=si, mu=mus[ei], theta=theta @ S_is.T, kappa_pmt=tr.kappa_pmt, radius=tr.radius,
                frac_truncated=tr.frac_truncated, B_y=B_y, sigma_A=sA[ei], sigma_b=sb[ei], eig_fix=False)


for _task in ("ridge", "logistic", "poisson"):
    if _task in TASKS:
        register_method(_task, "public-only", PUBLIC_ONLY_NAME, public_only_runner(_task))
register_method("ridge", "pmt-pooled", POOLED_NAME, run_pmt_pooled)
