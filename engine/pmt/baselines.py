"""The ridge baselines PMT is compared with: DP-RR, its oracle, DP-GD, and the non-private reference.

- :class:`DPRidge` -- DP-RR (``docs/specs/PMT.md`` section 5): the sufficient-statistics perturbation of
  :class:`engine.pmt.ridge.PMTRidge` on the *raw* (unwhitened) features clipped at radius C.
- :class:`DPRidgeOracle` -- DP-RR with C picked on a grid by looking at the error against the
  non-private fit: **non-private tuning**, the best the baseline could do (warns).
- :class:`DPGDRidge` -- full-batch DP gradient descent with per-example gradient clipping
  (:mod:`engine.pmt._gd`).
- :class:`RidgeReference` -- the non-private ridge on the untruncated private data: the target of
  the error metric.

Objective, intercept, penalty, privacy and bounds as in :mod:`engine.pmt.ridge`.
"""

from __future__ import annotations

import warnings

import numpy as np

from engine import privacy as P
from engine.pmt._base import (
    DEFAULT_EIG_FLOOR,
    METHOD_NAMES,
    _check_lam,
    _check_positive,
    _dp_report_for,
    _LinearBase,
    _mu,
    _nonprivate_report,
    _resolve_bound,
    _store_params,
    _validate_data,
    release_rng,
)
from engine.pmt._backends import fit_glm_out_of_core, fit_out_of_core, is_dask, refuse_dask
from engine.pmt._gd import _DPGDMixin, dp_gd_ridge_path
from engine.pmt._bounds import _kappa_from_eigs, pmt_radius, truncate_rows
from engine.pmt._public_scale import public_scaling
from engine.pmt.ridge import (
    SSPStatistics,
    _ledger_ssp,
    ridge_reference_solve,
    ssp_noise,
    certified_ssp_sensitivities,
    ssp_sensitivities,
    ssp_solve,
    sufficient_statistics,
)

__all__ = ["RidgeReference", "DPRidge", "DPRidgeOracle", "DPGDRidge", "default_clip_grid"]


class RidgeReference(_LinearBase):
    """Non-private ridge on the untruncated private data: the target of the error metric.

    Minimises ``(1/n) ||y - X theta - theta_0||^2 + lam ||theta||^2`` (intercept unpenalised by
    default; see the module docstring). Equals ``sklearn.linear_model.Ridge(alpha=n * lam)`` with the
    same intercept handling.

    Parameters
    ----------
    lam : float, default 1e-3
        ``lam >= 0``.
    fit_intercept : bool, default True
    penalize_intercept : bool, default False

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    theta_ : ndarray of shape (d,)
        Coefficients with the intercept last.
    report_ : FitReport
        ``mu = inf``, ``kappa_raw`` and ``kappa_noisy`` (= the system's own condition number).

    Examples
    --------
    >>> X = np.arange(10.0)[:, None]; y = 2 * X[:, 0] + 1
    >>> m = RidgeReference(lam=0.0).fit(X, y)
    >>> round(float(m.coef_[0]), 6), round(m.intercept_, 6)
    (2.0, 1.0)
    """

    def __init__(self, *, lam=1e-3, fit_intercept=True, penalize_intercept=False):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit on the private data (public arguments are accepted and ignored).

        Raises
        ------
        ValueError
            NaN/inf, shape mismatch, n < d, lam < 0.
        """
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
        lam = _check_lam(self.lam)
        Xp, yv, _, _, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                               need_X_pub=False, need_y_pub=False)
        Xa = self._with_intercept(Xp)
        Pm = self._penalty_mask(d)
        theta = ridge_reference_solve(Xa, yv, lam, Pm)
        self._set_theta(theta, p)
        G = Xa.T @ Xa
        self.report_ = _nonprivate_report(
            METHOD_NAMES["non-private"], n, d, lam, kappa_raw=_kappa_from_eigs(np.linalg.eigvalsh(G)),
            kappa_noisy=_kappa_from_eigs(np.linalg.eigvalsh(G + n * lam * Pm)),
            frac_truncated=0.0, frac_y_clipped=0.0,
        )
        return self


class DPRidge(_LinearBase):
    """DP-RR: sufficient-statistics perturbation on raw features clipped at radius C (private data only).

    Rows (intercept column included) are scaled to L2 norm <= C, responses clipped to ``[-B_y, B_y]``,
    then ``A = X^T X`` and ``b = X^T y`` get the same noise recipe as :class:`PMTRidge` with R replaced
    by C, and ``theta = solve(A_priv + n lam P, b_priv)`` (PMT.md section 5).

    The default ``C = sqrt(d (1 + ln(2n/eta)))`` is the PMT radius formula applied to the raw features.
    It is only sensible for standardised features; on unscaled data (CCPP: pressure ~ 1000 mbar) it
    clips every row heavily. That is the point of the comparison: PMT needs no such tuning. Use
    ``clip_radius`` to set C, or :class:`DPRidgeOracle` for the (non-private) best C.

    Parameters
    ----------
    epsilon, delta, lam, eta, neighbouring, fit_intercept, penalize_intercept, eig_floor, random_state
        As in :class:`PMTRidge` (``random_state``: None = OS entropy; a fixed int is for simulation and
        reproducibility and is mixed with the fit's settings, :func:`engine.pmt._base.release_rng`).
    clip_radius : None, float or "private", default None
        C. None: the public formula above; float: user value; "private": the largest private row norm
        (``PrivacyLeakWarning``).
    response_bound : None, float or "private", default None
        B_y, as in :class:`PMTRidge` (public labels ``y_pub`` by default: the same public information
        PMT gets).
    center : {"public", None}, default "public"
        ``"public"``: the features are centred and scaled by the public mean and standard deviation (of
        ``X_pub``, or read off a public moment) and y centred by the public mean of ``y_pub`` before the clip,
        the bounds and the release; the coefficients are mapped back to the original units
        (:mod:`engine.pmt._public_scale`). The default C (and B_y) are made for standardised rows, so raw and
        publicly standardised inputs then give the same fit. Public statistics only: no privacy cost. None:
        the rows as given (on raw CCPP every row is clipped).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2)); y = X @ [1.0, 2.0] + rng.normal(size=3000)
    >>> m = DPRidge(epsilon=np.inf, lam=0.0, clip_radius=100.0, response_bound=100.0).fit(X, y)
    >>> m.coef_.round(1).tolist()
    [1.0, 2.0]
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, eta=0.05, clip_radius=None, response_bound=None,
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False,
                 eig_floor=DEFAULT_EIG_FLOOR, random_state=None, sampler="numpy", center="public"):
        _store_params(self, locals())

    _method_key = "dp-rr"

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-RR. ``X_pub`` is only used for ``kappa_pub`` in the report; ``y_pub`` for B_y.

        Raises
        ------
        ValueError, TypeError
            Before any noise is drawn (see :meth:`PMTRidge.fit`).
        """
        if is_dask(X, y):  # larger than memory: the same release from blockwise statistics
            return fit_out_of_core(self, X, y, X_pub, y_pub)
        self._check_params()
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=False, need_y_pub=self.response_bound is None)
        sc = public_scaling(Xq, yq, center=getattr(self, "center", None), fit_intercept=self.fit_intercept,
                            penalize_intercept=self.penalize_intercept, p=p)
        if sc is not None:  # public statistics only (engine.pmt._public_scale)
            Xp, yv, Xq = sc.features(Xp), yv - sc.y_center, sc.public(Xq)
            yq = None if yq is None else yq - sc.y_center
        Xa = self._with_intercept(Xp)
        eta = self._privacy_params()[4]
        C = self._clip_radius(Xa, d, n, eta)
        B_y = self._response_bound(yq, yv, n, eta)
        Xc, _, clipped = truncate_rows(Xa, C)
        A, b = sufficient_statistics(Xc, yv, B_y)
        stats = SSPStatistics(A, b, n, n_truncated=int(np.sum(clipped)), n_y_clipped=int(np.sum(np.abs(yv) > B_y)),
                              eigenvalues_raw=np.linalg.eigvalsh(Xa.T @ Xa))
        self._release(stats, C, B_y, p, Xq, penalty=None if sc is None else sc.penalty(self._penalty_mask(d)))
        return _scaled_back(self, sc, p)

    def _check_params(self):
        """Validate every parameter (before any data or noise): ``(eps, delta, nb, lam, eta, eig_floor)``."""
        eps, dlt, nb, lam, eta = self._privacy_params()
        return eps, dlt, nb, lam, eta, _check_positive(self.eig_floor, "eig_floor")

    def _release(self, stats, C, B_y, p, Xq, penalty=None):
        """Release ``A`` and ``b`` of ``stats`` (noise, then the solve) and set the coefficients and report.

        Shared by the in-memory and the Dask path (:mod:`engine.pmt.dask`); noise is drawn only here.
        ``penalty``: the penalty matrix (default the penalty mask; in publicly scaled units
        :meth:`engine.pmt._public_scale.PublicScaling.penalty`).
        """
        eps, dlt, nb, lam, eta, eig_floor = self._check_params()
        n, d = stats.n, stats.A.shape[0]
        mu = _mu(eps, dlt, n, self.sampler)
        sens_A, sens_b = certified_ssp_sensitivities(C, B_y, n, d, nb)
        ledger, s_A, s_b = _ledger_ssp(dlt, mu, sens_A, sens_b, nb)
        Pm = self._penalty_mask(d) if penalty is None else penalty
        rng = release_rng(self)
        W, w = ssp_noise(rng, d)
        theta, fixed, kappa_noisy = ssp_solve(stats.A + s_A * W, stats.b + s_b * w, n * lam * Pm, eig_floor=eig_floor)
        self._set_theta(theta, p)
        n_pub, kpub = self._public_kappa(Xq)
        self.report_ = _dp_report_for(
            self,
            METHOD_NAMES[self._method_key], eps, dlt, mu, nb, n, d, lam, ledger, {"A": sens_A, "b": sens_b},
            {"A": s_A, "b": s_b}, radius=C, B_y=B_y, n_pub=n_pub, kappa_raw=stats.kappa_raw, kappa_pub=kpub,
            kappa_noisy=float(kappa_noisy), frac_truncated=stats.frac_truncated,
            frac_y_clipped=stats.frac_y_clipped, eig_fixes=int(fixed), eig_floor=eig_floor,
        )
        return self


def default_clip_grid(Xa, radius_default: float, size: int = 16) -> np.ndarray:
    """The oracle's grid of C: log-spaced from 0.05 x the median to the largest private row norm, plus
    the public default. Uses private data (the oracle is non-private tuning)."""
    norms = np.linalg.norm(Xa, axis=1)
    hi = float(np.max(norms))
    lo = max(0.05 * float(np.median(norms)), 1e-12)
    return np.unique(np.concatenate([np.geomspace(lo, hi, size), [radius_default]]))


class DPRidgeOracle(DPRidge):
    """DP-RR with the clip radius C picked on a grid by looking at the error: **non-private tuning**.

    For every C on ``clip_grid`` the DP-RR fit is repeated with ``n_trials`` independent noise draws and
    its median L2 distance to the non-private ridge (:class:`RidgeReference`) is computed; the final fit
    uses the best C and a fresh draw. Choosing C this way looks at the private data outside any
    mechanism, so the result is **not** differentially private: it shows the best the baseline could
    do. A :class:`engine.privacy.PrivacyLeakWarning` is always issued.

    Parameters
    ----------
    clip_grid : array-like of float, optional
        Candidate C values (default :func:`default_clip_grid`).
    n_trials : int, default 20
    (others as in :class:`DPRidge`; ``clip_radius`` is ignored; with ``center="public"`` the grid of C is built
    on the publicly scaled rows the fits clip. ``random_state``: a fixed int is for
    simulation and reproducibility; the trials and the final release draw from one stream derived from
    it and the settings.)

    Attributes
    ----------
    clip_radius_ : float
        The chosen C.
    grid_errors_ : ndarray of shape (len(grid),)
        Median L2 error for each C.
    """

    _method_key = "dp-rr-oracle"

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, eta=0.05, clip_grid=None, n_trials=20,
                 response_bound=None, neighbouring="replace-one", fit_intercept=True, penalize_intercept=False,
                 eig_floor=DEFAULT_EIG_FLOOR, random_state=None, sampler="numpy", center="public"):
        super().__init__(epsilon=epsilon, delta=delta, lam=lam, eta=eta, clip_radius=None,
                         response_bound=response_bound, neighbouring=neighbouring, fit_intercept=fit_intercept,
                         penalize_intercept=penalize_intercept, eig_floor=eig_floor, random_state=random_state,
                         center=center)
        self.clip_grid = clip_grid
        self.n_trials = n_trials

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Pick C by non-private tuning, then fit DP-RR with it (warns ``PrivacyLeakWarning``)."""
        refuse_dask("DPRidgeOracle", X, y, why="its grid of C and its trials read the private rows many times")
        eps, dlt, nb, lam, eta = self._privacy_params()
        if not isinstance(self.n_trials, (int, np.integer)) or self.n_trials < 1:
            raise ValueError(f"n_trials must be an integer >= 1, got {self.n_trials!r}")
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=False, need_y_pub=self.response_bound is None)
        sc = public_scaling(Xq, yq, center=self.center, fit_intercept=self.fit_intercept,
                            penalize_intercept=self.penalize_intercept, p=p)
        Xa = self._with_intercept(Xp if sc is None else sc.features(Xp))  # the rows the fits below clip
        grid = (default_clip_grid(Xa, pmt_radius(d, n, eta)) if self.clip_grid is None
                else np.asarray(self.clip_grid, dtype=float).ravel())
        if grid.size < 1 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise ValueError("clip_grid must be a non-empty list of finite values > 0")
        warnings.warn(
            "DPRidgeOracle picks the clip radius by looking at the private error (non-private tuning); "
            "its output is not differentially private",
            P.PrivacyLeakWarning,
            stacklevel=2,
        )
        ref = RidgeReference(lam=lam, fit_intercept=self.fit_intercept,
                             penalize_intercept=self.penalize_intercept).fit(Xp, yv).theta_
        rng = release_rng(self)
        params = self.get_params()
        for k in ("clip_grid", "n_trials"):
            params.pop(k)
        errs = np.empty(grid.size)
        for j, C in enumerate(grid):
            e = []
            for _ in range(int(self.n_trials)):
                m = DPRidge(**{**params, "clip_radius": float(C), "random_state": rng}).fit(Xp, yv, Xq, yq)
                e.append(np.linalg.norm(m.theta_ - ref))
            errs[j] = np.median(e)
        best = float(grid[int(np.argmin(errs))])
        final = DPRidge(**{**params, "clip_radius": best, "random_state": rng}).fit(Xp, yv, Xq, yq)
        self._set_theta(final.theta_, p)
        rep = final.report_
        rep.method = METHOD_NAMES["dp-rr-oracle"]
        rep.extra = {"non_private_tuning": True, "clip_grid": grid.tolist(), "grid_errors": errs.tolist()}
        self.report_ = rep
        self.clip_radius_ = best
        self.grid_errors_ = errs
        return self


class DPGDRidge(_DPGDMixin, _LinearBase):
    """Full-batch DP gradient descent for ridge with per-example gradient clipping (PMT.md section 5).

    theta_0 = 0; T steps of ``theta <- theta - step_size * (mean clipped gradient + N(0, s_t^2 I)
    + 2 lam P theta)``, per-example gradients of ``(y_i - x_i^T theta)^2`` clipped to L2 norm C, each step
    mu_t = mu / sqrt(T), ``s_t = 2C / (n mu_t)`` (replace-one, the only relation offered). Runs on the
    raw (unwhitened) private rows (intercept column included). See :func:`dp_gd_ridge_path`.

    Step size: ``1 / L_pub`` with ``L_pub = 2 lambda_max(X_pub^T X_pub / n_pub) + 2 lam``, the smoothness
    constant of the loss estimated from the public rows (public, so free). Without ``X_pub`` give
    ``step_size``.

    Parameters
    ----------
    epsilon, delta, lam, eta, neighbouring, fit_intercept, penalize_intercept, random_state
        As in :class:`PMTRidge` (``random_state``: None = OS entropy; a fixed int is for simulation and
        reproducibility and is mixed with the fit's settings, :func:`engine.pmt._base.release_rng`).
    n_steps : int, default 100
        T.
    clip_norm : None, float or "private", default None
        C. None: ``2 C_x B_y`` with ``C_x = sqrt(d(1 + ln(2n/eta)))`` (the raw-feature radius DP-RR
        uses) and B_y the public response bound: the gradient norm bound at theta = 0 for rows of norm
        <= C_x. "private": the largest per-example gradient norm at theta = 0 (``PrivacyLeakWarning``).
    step_size : None or float, default None
    response_bound : None, float or "private"
        B_y used only in the default C.
    center : {"public", None}, default "public"
        As in :class:`DPRidge`: features centred and scaled by public statistics, y centred by the public mean
        of ``y_pub``, the step size from the scaled public moment, coefficients mapped back. None: the rows as
        given.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)); y = X @ [1.0, 2.0] + 0.1 * rng.normal(size=2000)
    >>> m = DPGDRidge(epsilon=np.inf, lam=0.0, clip_norm=1e6, step_size=0.25, n_steps=200).fit(X, y)
    >>> m.coef_.round(2).tolist()
    [1.0, 2.0]
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, eta=0.05, n_steps=100, clip_norm=None, step_size=None,
                 response_bound=None, neighbouring="replace-one", fit_intercept=True, penalize_intercept=False,
                 random_state=None, sampler="numpy", center="public"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Run DP-GD for ridge. Raises ``ValueError``/``TypeError`` before any noise is drawn."""
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
        eps, dlt, nb, lam, eta, T = self._dp_gd_params()
        need_y_pub = self.clip_norm is None and self.response_bound is None
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=self.step_size is None, need_y_pub=need_y_pub)
        sc = public_scaling(Xq, yq, center=self.center, fit_intercept=self.fit_intercept,
                            penalize_intercept=self.penalize_intercept, p=p)
        if sc is not None:  # public statistics only (engine.pmt._public_scale)
            Xp, yv, Xq = sc.features(Xp), yv - sc.y_center, sc.public(Xq)
            yq = None if yq is None else yq - sc.y_center
        Xa = self._with_intercept(Xp)
        Pm = self._penalty_mask(d) if sc is None else sc.penalty(self._penalty_mask(d))
        p_max = float(np.max(np.diag(Pm))) if Pm.size else 0.0  # 1 for the plain mask
        step = self._dp_gd_step_size(Xq, lambda lam_max: 1.0 / (2.0 * float(lam_max) + 2.0 * lam * max(p_max, 1.0)))

        def public_C():
            B_y = self._response_bound(yq, yv, n, eta)
            return 2.0 * pmt_radius(d, n, eta) * B_y

        C = _resolve_bound(self.clip_norm, "clip_norm", public=public_C,
                           private=lambda: float(np.max(2 * np.linalg.norm(Xa, axis=1) * np.abs(yv))) or 1.0)
        self._fit_dp_gd(dp_gd_ridge_path, Xa, yv, Xq, n, p, d, eps, dlt, nb, lam, T, step, C, METHOD_NAMES["dp-gd"],
                        penalty=Pm)
        return _scaled_back(self, sc, p)


def _scaled_back(est, sc, p):
    """Map a fit made in publicly scaled units back to the original ones and record the scaling (report only)."""
    est.public_scaling_ = sc
    if sc is None:
        return est
    est._set_theta(sc.to_raw(est.theta_, est.fit_intercept), p)
    extra = est.report_.extra if isinstance(getattr(est.report_, "extra", None), dict) else {}
    extra.update(response_center=sc.y_center, public_standardized=True)
    est.report_.extra = extra
    return est
