"""PMT-pooled: the public rows' exact statistics and PMT's noisy private ones, combined by their precision.

Beyond the paper. PMT releases ``A_priv = X~^T X~ + s_A W`` and ``b_priv = X~^T y + s_b w``
in the whitened space of ``Sigma_pub``; the public rows, whitened with the same matrix, give exact
statistics ``Z_pub^T Z_pub`` (equal to ``m I`` when the moment is not regularised) and ``Z_pub^T y_pub``.
Both estimate the same whitened coefficients, so they can be pooled. :func:`pooled_solve` is a
generalised-least-squares (GLS) combination whose weights use **public quantities and the budget only**
(:func:`pooled_weights`); it is post-processing of PMT's release, so it costs exactly PMT's budget.

Derivation (whitened units; theta~ the target, the non-private ridge on the private rows)
------------------------------------------------------------------------------------------
1. *Private equations.* With ``M = A_priv + n lam S^{-1/2} P S^{-1/2}``,
   ``b_priv - M theta~ = (b - (A + n lam .) theta~) + s_b w - s_A W theta~ = s_b w - s_A W theta~``,
   since the first bracket vanishes at the target. ``W`` is symmetric with iid N(0, 1) entries on and
   above the diagonal, so ``Cov(W theta~) = ||theta~||^2 I + theta~ theta~^T - diag(theta~^2)``, which we
   replace by its isotropic part: the equation error ``e`` has covariance about ``v I`` with
   ``v = s_b^2 + s_A^2 ||theta~||^2``. ``theta~`` is unknown; we plug in the public fit's norm (public).
   This is the errors-in-variables view of a noisy design (Fuller, *Measurement Error Models*, Wiley
   1987, ch. 1) with ``M`` treated as the observed design.
2. *Public prior.* The public ridge in whitened coordinates, ``theta~_pub``, has the heteroscedasticity-
   consistent (HC1) sandwich covariance ``V_pub = m/(m-d) (Z^T Z + m lam .)^{-1} Z^T diag(r^2) Z
   (Z^T Z + m lam .)^{-1}`` (White, Econometrica 48, 1980; MacKinnon & White 1985) from its public
   residuals r. It also absorbs the sampling difference between the public and private fits only
   partly (the private fit's own sampling error is O(1/n), smaller than the public O(1/m)).
3. *GLS / posterior mean.* Stacking ``M theta~ = b_priv - e`` (weight ``1/v``) with
   ``theta~ = theta~_pub + f`` (``Cov f = V_pub``) and minimising the weighted squared residuals gives
   ``theta~ = (M^T M / v + V_pub^{-1})^{-1} (M^T b_priv / v + V_pub^{-1} theta~_pub)``
   (Aitken's GLS; equivalently the Gaussian posterior mean with prior ``N(theta~_pub, V_pub)``,
   Theil & Goldberger, "On pure and mixed statistical estimation in economics", IER 2, 1961).
   ``M^T M`` is positive semi-definite whatever the noise, so the system is always positive definite:
   where noise dominates (small ``n`` or ``epsilon``) the eigen-directions of ``M`` near zero get little
   weight and the estimate falls back to the public fit; where the private statistics are precise it
   approaches ``M^{-1} b_priv``, PMT's own estimate. No eigenvalue floor is needed.
4. Back-transform ``theta = Sigma_pub^{-1/2} theta~``.

What is ignored (and why it is acceptable): the clip of y at B_y and the truncation at R bias PMT's
statistics slightly (rarely active by construction, PMT.md section 2); ``M^T M`` overstates ``A^T A`` by
about ``d s_A^2`` (that shrinks the private part towards zero, i.e. towards the public fit, only in the
noise-dominated regime); the isotropic replacement of ``Cov(W theta~)`` is off by at most a factor 2 in
the direction of ``theta~``. Each is measured, not assumed: ``scripts/pmt_pooled_check.py`` ->
``docs/pmt_pooled_check.md``.

Privacy: ``theta~_pub``, ``V_pub`` and ``v`` are functions of the public rows, n (public under
replace-one), R, B_y and the budget; the private data enter only through ``A_priv`` and ``b_priv``,
PMT's Gaussian release. So two neighbouring data sets see the same weights, and the output is
post-processing of a (mu)-GDP release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.pmt._public_scale import public_scaling
from engine.pmt._base import (
    _check_on_singular,
    _dp_report_for,
    _LinearBase,
    _mu,
    _store_params,
    _validate_data,
    release_rng,
)
from engine.pmt._transform import pmt_transform
from engine.pmt._backends import fit_out_of_core, is_dask
from engine.pmt.ridge import SSPStatistics, _ledger_ssp, certified_ssp_sensitivities, ssp_noise

__all__ = ["POOLED_NAME", "PooledWeights", "pooled_weights", "pooled_solve", "PMTPooledRidge"]

#: Display name of the pooled estimator (sweeps, figures, tables).
POOLED_NAME = "PMT-pooled"


@dataclass(frozen=True)
class PooledWeights:
    """The public half of the GLS combination (every field public or from the budget).

    Attributes
    ----------
    theta_pub : ndarray of shape (d,)
        Public ridge fit in whitened coordinates.
    precision_pub : ndarray of shape (d, d)
        ``V_pub^{-1}``: inverse HC1 sandwich covariance of ``theta_pub`` (zeros when ``m <= d``: the
        residuals then carry no variance information and the public fit gets no weight).
    v : float
        Variance of each private normal equation, ``s_b^2 + s_A^2 ||theta_pub||^2``.
    resid_sd : float
        ``sqrt(RSS / (m - d))`` of the public fit (nan when ``m <= d``).
    """

    theta_pub: np.ndarray
    precision_pub: np.ndarray
    v: float
    resid_sd: float


def pooled_weights(Z_pub, y_pub, pen_w, sigma_A: float, sigma_b: float) -> PooledWeights:
    """Public fit, its precision, and the private equations' variance (module docstring, steps 1-2).

    Parameters
    ----------
    Z_pub : ndarray of shape (m, d)
        Public rows whitened with ``Sigma_pub^{-1/2}`` (intercept column included). Not truncated: they
        are public and need no bound.
    y_pub : ndarray of shape (m,)
        Public responses (the same centring as the private ones).
    pen_w : ndarray of shape (d, d)
        Whitened penalty per row, ``lam S^{-1/2} P S^{-1/2}`` (multiplied by m here, by n in the
        private system).
    sigma_A, sigma_b : float
        PMT's noise scales (from R, B_y and the budget).

    Returns
    -------
    PooledWeights

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    >>> w = pooled_weights(Z, np.array([1.0, 2.0, 1.2, 2.2, 0.8, 1.8]), np.zeros((2, 2)), 3.0, 4.0)
    >>> w.theta_pub.round(6).tolist(), round(w.v, 4)
    ([1.0, 2.0], 61.0)
    """
    Z = np.asarray(Z_pub, dtype=float)
    yq = np.asarray(y_pub, dtype=float)
    m, d = Z.shape
    G = Z.T @ Z + m * np.asarray(pen_w, dtype=float)
    theta = np.linalg.lstsq(G, Z.T @ yq, rcond=None)[0]
    r = yq - Z @ theta
    if m > d:
        Ginv = np.linalg.pinv(G)
        meat = (Z * (r**2)[:, None]).T @ Z
        V = m / (m - d) * Ginv @ meat @ Ginv
        V = (V + V.T) / 2
        w, U = np.linalg.eigh(V)
        floor = max(float(np.max(w)), 1e-300) * 1e-12  # keep the inverse finite when a residual pattern is exact
        prec = (U / np.maximum(w, floor)) @ U.T
        resid_sd = math.sqrt(float(r @ r) / (m - d))
    else:
        prec = np.zeros((d, d))
        resid_sd = math.nan
    v = float(sigma_b) ** 2 + float(sigma_A) ** 2 * float(theta @ theta)
    return PooledWeights(theta_pub=theta, precision_pub=prec, v=v, resid_sd=resid_sd)


def pooled_solve(M, b_priv, weights: PooledWeights) -> np.ndarray:
    """GLS combination ``(M^T M / v + V_pub^{-1})^{-1} (M^T b_priv / v + V_pub^{-1} theta_pub)`` (step 3).

    Parameters
    ----------
    M : ndarray of shape (..., d, d)
        Noisy penalised private system ``A_priv + n lam S^{-1/2} P S^{-1/2}`` (symmetric), one or a stack.
    b_priv : ndarray of shape (..., d)
    weights : PooledWeights
        From :func:`pooled_weights` (public).

    Returns
    -------
    ndarray of shape (..., d)
        Pooled whitened coefficients. With ``v = 0`` (no noise) and ``M`` invertible this is
        ``M^{-1} b_priv``; with ``M = 0`` it is ``theta_pub``.

    Examples
    --------
    >>> w = PooledWeights(np.array([1.0, 1.0]), np.eye(2), 1.0, 1.0)
    >>> pooled_solve(np.eye(2), np.array([3.0, 3.0]), w).tolist()
    [2.0, 2.0]
    """
    M = np.asarray(M, dtype=float)
    b = np.asarray(b_priv, dtype=float)
    Pp = weights.precision_pub
    if weights.v == 0:
        return np.linalg.solve(M, b[..., None])[..., 0]
    MtM = np.einsum("...ki,...kj->...ij", M, M) / weights.v
    rhs = np.einsum("...ki,...k->...i", M, b) / weights.v + Pp @ weights.theta_pub
    lhs = MtM + Pp
    try:
        return np.linalg.solve(lhs, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:  # only when M is singular and there is no public precision (m <= d)
        return np.einsum("...ij,...j->...i", np.linalg.pinv(lhs), rhs)


class PMTPooledRidge(_LinearBase):
    """PMT-pooled ridge: PMT's release combined with the public rows by precision (GLS), no extra budget.

    Releases exactly what :class:`engine.pmt.PMTRidge` with ``response="clip"`` releases (same R, B_y,
    sensitivities, noise draw for the same Generator ``random_state``), then post-processes with
    :func:`pooled_solve`; derivation and sources in :mod:`engine.pmt.pooled`.

    Parameters
    ----------
    epsilon : float, default 1.0
    delta : float, default 1e-5
    lam : float, default 1e-3
    eta : float, default 0.05
    response_bound : None or float, default None
        B_y; None: from the public labels.
    neighbouring : {"replace-one"}, default "replace-one"
        The only relation offered: n is public under replace-one; add/remove is not offered because n
        enters R(d, n), B_y(n), averages and the noise scale (any other value raises ``ValueError``).
    fit_intercept, penalize_intercept : bool
    on_singular : {"regularize", "raise"}, default "regularize"
    random_state : None, int or numpy.random.Generator, default None
        None: fresh OS entropy (what a release should use). A fixed int is for simulation and
        reproducibility only and is mixed with the fit's identity (class and settings,
        :func:`engine.pmt._base.release_rng`); a Generator is used as is.
    center : {"public", None}, default "public"
        ``"public"``: y (and ``y_pub``) centred by the public mean of ``y_pub`` before the bound and the release,
        the intercept shifted back (as :class:`engine.pmt.PMTRidge`; the whitening needs no feature centring).
        Public statistics only. None: y as given (its bound then grows with ``|y|``).

    Attributes
    ----------
    coef_, intercept_, theta_, report_, transform_, weights_ (:class:`PooledWeights`)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(10, 1, size=(5200, 2)); y = X[:, 0] - X[:, 1] + 5 + rng.normal(size=5200)
    >>> m = PMTPooledRidge(epsilon=1.0, lam=0.0, random_state=0).fit(X[200:], y[200:], X_pub=X[:200], y_pub=y[:200])
    >>> bool(np.abs(m.coef_ - [1.0, -1.0]).max() < 0.1)
    True
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, eta=0.05, response_bound=None,
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False, on_singular="regularize",
                 random_state=None, sampler="numpy", center="public"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit PMT-pooled ridge.

        Parameters
        ----------
        X : array-like of shape (n, p)
        y : array-like of shape (n,)
        X_pub : array-like of shape (n_pub, p)
        y_pub : array-like of shape (n_pub,)
            Both public arguments are required (the pooled estimate needs the public fit).

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            Before any noise is drawn: as :meth:`engine.pmt.PMTRidge.fit`, plus a missing ``y_pub``.
        """
        if is_dask(X, y):  # larger than memory: the same release from blockwise statistics
            return fit_out_of_core(self, X, y, X_pub, y_pub)
        eps, dlt, nb, lam, eta = self._privacy_params()
        _check_on_singular(self.on_singular)
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=True, need_y_pub=True)
        sc = public_scaling(None, yq, center=self.center, fit_intercept=self.fit_intercept,
                            penalize_intercept=self.penalize_intercept, p=p)
        if sc is not None:  # the public centre of y (engine.pmt._public_scale)
            yv, yq = yv - sc.y_center, yq - sc.y_center
        tr = pmt_transform(Xp, Xq, eta=eta, fit_intercept=self.fit_intercept, on_singular=self.on_singular)
        B_y = self._response_bound(yq, yv, n, eta)
        A, b = tr.gram, tr.X_tilde.T @ np.clip(yv, -B_y, B_y)  # A = X~^T X~ formed once by the transform
        stats = SSPStatistics(A, b, n, n_truncated=int(np.sum(tr.truncated)),
                              n_y_clipped=int(np.sum(np.abs(yv) > B_y)), eigenvalues_raw=tr.eigenvalues_raw * n)
        self.transform_ = tr
        self._release(stats, tr.moment, tr.radius, B_y, p, Xq, yq)
        self.public_scaling_ = sc
        if sc is not None:
            self._set_theta(sc.to_raw(self.theta_, self.fit_intercept), p)
            self.report_.extra["response_center"] = sc.y_center
        return self

    def _release(self, stats, moment, R, B_y, p, Xq, yq):
        """Release ``A`` and ``b`` of ``stats`` (noise), pool with the public rows, set coefficients and report.

        Shared by the in-memory and the Dask path (:mod:`engine.pmt.dask`); noise is drawn only here.
        """
        eps, dlt, nb, lam, eta = self._privacy_params()
        n, d = stats.n, stats.A.shape[0]
        mu = _mu(eps, dlt, n, self.sampler)
        Pm = self._penalty_mask(d)
        sens_A, sens_b = certified_ssp_sensitivities(R, B_y, n, d, nb)
        ledger, s_A, s_b = _ledger_ssp(dlt, mu, sens_A, sens_b, nb, ("A = X~^T X~", "b = X~^T y"))
        S_is = moment.Sigma_pub_inv_sqrt
        pen_w = lam * moment.whiten_quadratic(Pm)
        weights = pooled_weights(moment.prepare(Xq) @ S_is, yq, pen_w, s_A, s_b)  # public only
        rng = release_rng(self)
        W, w = ssp_noise(rng, d)
        th_t = pooled_solve(stats.A + s_A * W + n * pen_w, stats.b + s_b * w, weights)
        self._set_theta(S_is @ th_t, p)
        self.weights_ = weights
        self.report_ = _dp_report_for(
            self,
            POOLED_NAME, eps, dlt, mu, nb, n, d, lam, ledger, {"A": sens_A, "b": sens_b}, {"A": s_A, "b": s_b},
            radius=R, n_pub=moment.n_pub, kappa_raw=stats.kappa_raw, kappa_pub=moment.kappa,
            kappa_pmt=stats.kappa_A, frac_truncated=stats.frac_truncated, sigma_pub_regularized=moment.regularized,
            tau=moment.tau, B_y=B_y, frac_y_clipped=stats.frac_y_clipped,
            extra={"response": "clip", "pooled_v": weights.v, "public_resid_sd": weights.resid_sd},
        )
        return self
