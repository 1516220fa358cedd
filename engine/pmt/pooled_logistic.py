"""PMT-pooled logistic: PMT's noisy Newton with the public rows' exact gradient and Hessian pooled in at every step.

The logistic counterpart of :class:`engine.pmt.pooled.PMTPooledRidge` (labelled public rows only). PMT's noisy
Newton (:class:`engine.pmt.PMTLogistic`, ``docs/specs/PMT.md`` section 4) releases at each step the averaged gradient
``g~ = g + N(0, s_g^2 I)`` and Hessian ``H~ = H + s_H E`` of the whitened, truncated private rows. The m public
rows, whitened with the same matrix, give the same two quantities exactly, ``g_pub`` and ``H_pub``, at no
privacy cost. Both estimate the population gradient and Hessian at the current iterate; with per-coordinate
variances

* private: ``s_g^2 + 1/(4n)`` (noise plus sampling: ``(b'(u) - y)^2 <= 1/4``... bounded by 1/4 per whitened
  coordinate since ``E[x~ x~^T] = I``), Hessian entries ``s_H^2 + 1/(16 n)``;
* public: ``1/(4m)`` and ``1/(16m)``,

the step uses their precision-weighted means ``g = w_g g~ + (1 - w_g) g_pub`` and ``H = w_H H~ + (1 - w_H) H_pub``,
where ``H_pub`` is the public rows' curvature bound ``Z_pub^T Z_pub / (4m)`` (Boehning's bound ``b'' <= 1/4``:
a small public sample is often separable, and its Hessian at the iterate then vanishes),
with ``w = (1/v_priv) / (1/v_priv + 1/v_pub)`` (inverse-variance weighting; Cochran 1954). The weights depend on
n, m, R, the budget and T only (public), and the public statistics on public rows, so the result is
post-processing of PMT's release: exactly PMT's budget. The eigenvalue floor is PMT's floor scaled by ``w_H``
(the noise left in H), at least 1e-3. Where the noise dominates (small n or epsilon) the weights go to the public
side and the iteration is the public rows' Newton fit; where the private statistics are precise it is PMT.
What is ignored: any difference between the public and the private populations (then the public side biases
the fit; the public-only fit has the same bias).
"""

from __future__ import annotations

import warnings

import numpy as np
from engine.pmt._special import expit  # scipy.special, imported on first use

from engine.pmt._base import _check_on_singular, _dp_report_for, _mu, _store_params, _validate_glm_data, release_rng
from engine.pmt._backends import refuse_dask
from engine.pmt._newton import (
    DEFAULT_CONV_TOL,
    DEFAULT_NEWTON_EIG_FLOOR,
    MIN_NEWTON_EIG_FLOOR,
    _NoisyNewtonMixin,
    _newton_ledger,
    newton_eig_floor,
    newton_noise,
    certified_newton_sensitivities,
)
from engine.pmt._moment import public_moment
from engine.pmt._transform import pmt_transform
from engine.pmt.logistic import _LogisticBase, check_binary_labels
from engine.pmt.public_info import PublicInfo, UnspannedWarning, unspanned_message

__all__ = ["POOLED_LOGISTIC_NAME", "PMTPooledLogistic", "pooled_newton_weights"]

#: Display name.
POOLED_LOGISTIC_NAME = "PMT-pooled"


def pooled_newton_weights(n: int, m: int, s_g: float, s_H: float) -> tuple[float, float]:
    """``(w_g, w_H)``: the private side's inverse-variance weights for the gradient and the Hessian (module docstring).

    Examples
    --------
    >>> [round(w, 4) for w in pooled_newton_weights(10**6, 200, 0.0, 0.0)]
    [0.9998, 0.9998]
    """
    vg_priv, vg_pub = s_g**2 + 0.25 / n, 0.25 / m
    vh_priv, vh_pub = s_H**2 + 1.0 / (16.0 * n), 1.0 / (16.0 * m)
    return (1 / vg_priv) / (1 / vg_priv + 1 / vg_pub), (1 / vh_priv) / (1 / vh_priv + 1 / vh_pub)


class PMTPooledLogistic(_NoisyNewtonMixin, _LogisticBase):
    """PMT logistic with the labelled public rows pooled into every Newton step (module docstring).

    Parameters are those of :class:`engine.pmt.PMTLogistic` (full whitening: the pooled Hessian carries the
    public curvature, so the iteration is a Newton iteration in every regime). ``fit`` needs ``X_pub`` and
    ``y_pub`` (public labels).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2)); y = (rng.random(3000) < expit(X @ [1.0, -1.0])).astype(int)
    >>> m = PMTPooledLogistic(epsilon=1.0, random_state=0).fit(X[200:], y[200:], X[:200], y[:200])
    >>> bool(np.all(np.sign(m.coef_) == [1, -1])), m.report_.method
    (True, 'PMT-pooled')
    """

    _key = "pmt-pooled"

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, n_steps=5, eta=0.05, classes=(0, 1),
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False, on_singular="regularize",
                 eig_floor=DEFAULT_NEWTON_EIG_FLOOR, tol=DEFAULT_CONV_TOL, random_state=None, sampler="numpy"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit on private ``(X, y)`` pooled with the labelled public rows ``(X_pub, y_pub)`` (both required).

        Raises
        ------
        ValueError, TypeError
            Before any noise: missing public labels, and the checks of :meth:`engine.pmt.PMTLogistic.fit`.
        """
        refuse_dask("PMTPooledLogistic", X, y, why="it is not implemented on Dask (use PMTLogistic)")
        eps, dlt, nb, lam, eta, T, eig_floor, tol = self._newton_params()
        _check_on_singular(self.on_singular)
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept, need_X_pub=True,
                                                 label_fn=self._labels)
        if y_pub is None:
            raise ValueError("PMT-pooled needs the public labels y_pub (labelled public rows)")
        yq = check_binary_labels(y_pub, Xq.shape[0], classes=self.classes, name="y_pub", require_both=False)
        # columns the public rows never span are left out, as PMT does (engine.pmt.public_fit), with the warning
        info = PublicInfo.from_rows(Xq)
        drop = info.unspanned() if info.n_pub > info.p + 1 else []
        drop = [] if len(drop) == p else drop
        if drop:
            warnings.warn(unspanned_message([info.columns[j] for j in drop]), UnspannedWarning, stacklevel=2)
        keep = [j for j in range(p) if j not in drop]
        Xp, Xq, p_all, p = Xp[:, keep], Xq[:, keep], p, len(keep)
        d = p + int(self.fit_intercept)
        mom = public_moment(Xq, fit_intercept=self.fit_intercept, on_singular=self.on_singular)
        tr = pmt_transform(Xp, moment=mom, eta=eta)
        W = mom.Sigma_pub_inv_sqrt
        Zq = self._with_intercept(Xq) @ W
        Z = tr.X_tilde
        m = Zq.shape[0]
        pen = 2.0 * lam * mom.whiten_quadratic(self._penalty_mask(d))
        mu = _mu(eps, dlt, n, self.sampler)
        sens_g, sens_H = certified_newton_sensitivities(tr.radius, n, d, nb)
        ledger, s_g, s_H, mu0 = _newton_ledger(dlt, mu, T, sens_g, sens_H, nb)
        Hn, gn = newton_noise(release_rng(self), T, d)
        w_g, w_H = pooled_newton_weights(n, m, s_g, s_H)
        floor = max(MIN_NEWTON_EIG_FLOOR, w_H * float(newton_eig_floor(eig_floor, d, s_H)))
        # the public curvature: Boehning's bound b'' <= 1/4, Zq^T Zq / (4m) (Boehning & Lindsay, "Monotonicity of
        # quadratic-approximation algorithms", Ann. Inst. Stat. Math. 40, 1988): a public sample of 200 rows in
        # d = 42 is often separable, and its Hessian at the iterate then vanishes; the bound never does
        Hq_bound = 0.25 * (Zq.T @ Zq) / m
        theta = np.zeros(d)
        fixes, prev, finite = 0, theta, True
        for t in range(T):
            s, sq = expit(Z @ theta), expit(Zq @ theta)
            g = w_g * (Z.T @ (s - yv) / n + s_g * gn[t]) + (1 - w_g) * (Zq.T @ (sq - yq) / m) + pen @ theta
            Hp = (Z * (s * (1 - s))[:, None]).T @ Z / n + s_H * Hn[t]
            Hq = Hq_bound
            H = w_H * Hp + (1 - w_H) * Hq + pen
            H = (H + H.T) / 2
            wv, V = np.linalg.eigh(H)
            fixes += int(np.any(wv < floor))
            step = V @ ((V.T @ g) / np.maximum(wv, floor))
            prev, theta = theta, theta - step
            finite = finite and bool(np.all(np.isfinite(theta)))
        last = float(np.linalg.norm(theta - prev))
        self.theta_tilde_ = theta
        th = W @ theta
        full = np.zeros(p_all + int(self.fit_intercept))
        full[keep] = th[:p]
        if self.fit_intercept:
            full[-1] = th[-1]
        self._set_theta(full, p_all)
        self.transform_ = tr
        self.eig_floor_ = floor
        g_, h_ = "gradient (per step)", "Hessian (per step)"
        self.report_ = _dp_report_for(
            self, POOLED_LOGISTIC_NAME, eps, dlt, mu, nb, n, d, lam, ledger, {g_: sens_g, h_: sens_H}, {g_: s_g, h_: s_H},
            radius=tr.radius, n_pub=m, kappa_pub=mom.kappa, frac_truncated=tr.frac_truncated,
            sigma_pub_regularized=mom.regularized, tau=mom.tau, eig_fixes=fixes, eig_floor=floor, n_iter=T,
            converged=finite and last <= tol * (1.0 + float(np.linalg.norm(prev))),
            extra={"family": "logistic", "dropped_columns": [info.columns[j] for j in drop], "w_gradient": w_g, "w_hessian": w_H, "mu_per_release": mu0,
                   "last_step": last},
        )
        return self
