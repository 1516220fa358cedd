"""AdaSSP: adaptive sufficient-statistics perturbation, the standard private-only baseline of DP linear regression.

Source: Y.-X. Wang, "Revisiting differentially private linear regression: optimal and adaptive prediction &
estimation in unbounded domain", UAI 2018, Algorithm 2 (AdaSSP). The rows are bounded exactly as
:class:`engine.pmt.DPRidge` bounds them (features publicly standardised by default, rows scaled to norm
``<= C`` with C the public formula or the user's, y clipped at the public ``B_y`` or the user's): the bounds
come from public information or the user, never from the private rows. Three Gaussian releases, each with
``mu / sqrt(3)`` in the same mu-GDP ledger as every other method:

1. ``lambda_min(A)`` of ``A = X^T X``: sensitivity ``C^2`` (replace-one: ``A`` changes by ``x x^T - x' x'^T``,
   whose spectral norm is at most ``C^2``, so by Weyl's inequality ``lambda_min`` moves by at most that);
   released as ``lam_min~ = max(lambda_min + s_l z - s_l Phi^{-1}(1 - eta), 0)``, a lower bound with
   probability ``1 - eta``;
2. ``A`` (sensitivity ``sqrt(2) C^2``) and 3. ``b = X^T y`` (``2 C B_y``), as DP-RR releases them.

The adaptive ridge ``lam_ada = max(0, c - lam_min~)`` with ``c`` the ``1 - eta`` bound on the noise's spectral
norm (:func:`engine.pmt.ridge.noise_spectral_bound`, Wang's ``sqrt(d log(6/delta) log(2d^2/rho)) C^2 / (eps/3)``
in GDP form): ``theta = solve(A_priv + lam_ada I + n lam P, b_priv)``. All public quantities and the budget;
the solve is post-processing.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from engine import privacy as P
from engine.pmt._base import METHOD_NAMES, _dp_report_for, _mu, release_rng
from engine.pmt.baselines import DPRidge
from engine.pmt.ridge import certified_ssp_sensitivities, noise_spectral_bound, ssp_noise
from engine.privacy import observe

__all__ = ["AdaSSPRidge", "adassp_sigmas", "adassp_solve"]


def adassp_sigmas(C: float, B_y: float, n: int, d: int, mu: float, nb: str = "replace-one"):
    """``(sens, sigmas, ledger records' names)``: the three releases' sensitivities and noise scales at total ``mu``."""
    sens_A, sens_b = certified_ssp_sensitivities(C, B_y, n, d, nb)
    sens_l = float(C) ** 2 * P.sum_rounding_factor(n, d * d)
    mu3 = P.split_mu(mu, 3)
    sig = tuple(P.gaussian_sigma(s, mu3) for s in (sens_l, sens_A, sens_b))
    return (sens_l, sens_A, sens_b), sig


def adassp_solve(A, b, lam_min, z, W, w, sig, pen, d, eta):
    """One AdaSSP solve from the exact statistics and standard-normal noise ``z, W, w``; returns
    ``(theta, lam_ada)``."""
    s_l, s_A, s_b = sig
    # the three releases, then only post-processing (read here by the audit: engine.privacy.observe)
    lam_priv, A_priv, b_priv = lam_min + s_l * z, A + s_A * W, b + s_b * w
    observe.emit("adassp-release", lambda_min=lam_priv, A=A_priv, b=b_priv, sigmas=(s_l, s_A, s_b))
    shift = NormalDist().inv_cdf(1.0 - eta) if s_l > 0 else 0.0
    lam_t = max(lam_priv - s_l * shift, 0.0)
    c = float(noise_spectral_bound(s_A, d, eta))
    lam_ada = float(max(0.0, c - lam_t))
    theta = np.linalg.solve(A_priv + lam_ada * np.eye(d) + pen, b_priv)
    return theta, lam_ada


class AdaSSPRidge(DPRidge):
    """AdaSSP (Wang, UAI 2018, Algorithm 2) on rows bounded as :class:`DPRidge` bounds them (module docstring).

    Parameters as :class:`DPRidge`; ``eta`` is also the failure probability of the adaptive ridge.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 2)); y = X @ [1.0, 2.0] + rng.normal(size=20000)
    >>> m = AdaSSPRidge(epsilon=np.inf, lam=0.0).fit(X[200:], y[200:], X[:200], y[:200])
    >>> m.coef_.round(1).tolist(), m.report_.extra["lam_ada"]
    ([1.0, 2.0], 0.0)
    """

    _method_key = "adassp"

    def _release(self, stats, C, B_y, p, Xq, penalty=None):
        eps, dlt, nb, lam, eta, eig_floor = self._check_params()
        n, d = stats.n, stats.A.shape[0]
        mu = _mu(eps, dlt, n, self.sampler)
        sens, sig = adassp_sigmas(C, B_y, n, d, mu, nb)
        ledger = P.PrivacyLedger(delta=dlt)
        for name, se, sg in zip(("lambda_min(A)", "A = X^T X", "b = X^T y"), sens, sig):
            ledger.record(name, sensitivity=se, sigma=sg, neighbouring=nb)
        Pm = self._penalty_mask(d) if penalty is None else penalty
        rng = release_rng(self)
        # a float (an array of draws under the audit's stacked noise: engine.audit.hooks)
        z = np.asarray(P.gaussian_noise((), 1.0, rng))[()] if math.isfinite(mu) else 0.0
        W, w = ssp_noise(rng, d)
        lam_min = float(np.linalg.eigvalsh(stats.A)[0])
        theta, lam_ada = adassp_solve(stats.A, stats.b, lam_min, z, W, w, sig, n * lam * Pm, d, eta)
        self._set_theta(theta, p)
        n_pub, kpub = self._public_kappa(Xq)
        self.report_ = _dp_report_for(
            self,
            METHOD_NAMES["adassp"], eps, dlt, mu, nb, n, d, lam, ledger, dict(zip(("lambda_min", "A", "b"), sens)),
            dict(zip(("lambda_min", "A", "b"), sig)), radius=C, B_y=B_y, n_pub=n_pub, kappa_raw=stats.kappa_raw,
            kappa_pub=kpub, kappa_noisy=math.nan, frac_truncated=stats.frac_truncated,
            frac_y_clipped=stats.frac_y_clipped, eig_fixes=0, eig_floor=eig_floor, extra={"lam_ada": lam_ada},
        )
        return self
