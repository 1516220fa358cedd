"""DP-PMT Poisson regression: the GLM extension of DP-PMTLR to counts (log link), and its reference.

:class:`PMTPoisson` (``docs/specs/PMT.md`` section 4, research note section 5) runs the noisy Newton of
:mod:`engine.pmt._newton` with ``b(u) = e^u`` on PMT-whitened rows, with clipped counts and a
projection of theta~ onto a ball (:func:`poisson_bounds`); :class:`PoissonReference` is its
non-private fit.
"""

from __future__ import annotations

import math

import numpy as np

from engine import privacy as P

from engine.pmt._base import (
    _as_float_vector,
    _check_lam,
    _check_on_singular,
    _GLMBase,
    _nonprivate_report,
    _pmt_report_fields,
    _store_params,
    _validate_glm_data,
)
from engine.pmt._backends import fit_glm_out_of_core, is_dask
from engine.pmt._newton import (
    DEFAULT_CONV_TOL,
    DEFAULT_NEWTON_EIG_FLOOR,
    POISSON,
    _NoisyNewtonMixin,
    _whitened_public_min_eig,
    glm_reference_solve,
)
from engine.pmt.public_fit import _as_public_info, _public_info_path, fit_public
from engine.pmt._sklearn_api import RegressorMixin

__all__ = ["PMTPoisson", "PoissonReference", "poisson_bounds"]


def _check_counts(y, n, y_max, name="y"):
    v = _as_float_vector(y, name, "numeric counts")
    if v.ndim != 1 or v.shape[0] != n:
        raise ValueError(f"{name} must be 1-dimensional with {n} entries (one per row of X), got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or infinite values; all counts must be finite")
    if np.any(v < 0):
        raise ValueError(f"{name} contains negative values; Poisson counts must be >= 0")
    return v


# --------------------------------------------------------------------------------------------
# Poisson (GLM extension)
# --------------------------------------------------------------------------------------------
def poisson_bounds(radius: float, theta_radius: float, y_max: float) -> tuple[float, float]:
    """``G = sup |e^u - y|`` and ``H = sup e^u`` over ``|u| <= R B_theta``, ``0 <= y <= y_max``.

    ``G = max(e^{R B_theta}, y_max)`` (both terms are non-negative), ``H = e^{R B_theta}`` (inf when
    it overflows a float).

    Examples
    --------
    >>> [round(v, 4) for v in poisson_bounds(1.0, 1.0, 5.0)]
    [5.0, 2.7183]
    """
    a = float(radius) * float(theta_radius)
    H = math.exp(a) if a < 709.0 else math.inf
    return max(H, float(y_max)), H


class PoissonReference(RegressorMixin, _GLMBase):
    """Non-private Poisson regression (log link) on the private data, same objective as :class:`PMTPoisson`.

    Minimises ``(1/n) sum [e^{u_i} - y_i u_i] + lam theta^T P theta`` (damped Newton). Equals
    ``sklearn.linear_model.PoissonRegressor(alpha=2 lam)`` (intercept unpenalised).

    Parameters
    ----------
    lam : float, default 1e-3
    fit_intercept, penalize_intercept : bool
    """

    def __init__(self, *, lam=1e-3, fit_intercept=True, penalize_intercept=False):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit on the private data (counts >= 0)."""
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
        lam = _check_lam(self.lam)
        Xp, yv, _, n, p, d = _validate_glm_data(X, y, None, fit_intercept=self.fit_intercept, need_X_pub=False,
                                                label_fn=lambda v, n_: _check_counts(v, n_, None))
        Xa = self._with_intercept(Xp)
        Pm = self._penalty_mask(d)
        theta, ok, it = glm_reference_solve(Xa, yv, lam, Pm, POISSON)
        self._set_theta(theta, p)
        self.converged_ = ok
        self.report_ = _nonprivate_report("Non-private", n, d, lam, n_iter=it, converged=ok, extra={"family": "poisson"})
        return self

    def predict(self, X):
        """Predicted mean count ``exp(X @ coef_ + intercept_)``."""
        return np.exp(self.decision_function(X))


class PMTPoisson(_NoisyNewtonMixin, RegressorMixin, _GLMBase):
    """DP-PMT Poisson regression: the GLM extension of DP-PMTLR (PMT.md section 4, research note section 5).

    Canonical Poisson GLM, ``b(u) = e^u``. Unlike the logistic case, ``|b'(u) - y|`` and ``b''(u)`` are
    unbounded, so (our reading, documented):

    * counts are clipped to ``[0, y_max]`` with a **public** ``y_max`` (user-given);
    * after every Newton step theta~ is projected onto the ball ``||theta~|| <= B_theta`` (public,
      user-given, default 1), so ``|x~^T theta~| <= R B_theta`` at every evaluated point (the start
      theta~_0 = 0 is inside);
    * hence ``G = max(e^{R B_theta}, y_max)`` and ``H = e^{R B_theta}`` (:func:`poisson_bounds`), and the
      sensitivities are ``2 R G / n`` and ``sqrt(2) R^2 H / n`` (replace-one, the only relation offered:
      n is public).

    The bounds grow like ``e^{R B_theta}``: with R ~ 10 the noise is large unless ``B_theta`` is small
    (the whitened linear predictor is then confined to ``[-R B_theta, R B_theta]``). This is the price of
    a worst-case sensitivity for an unbounded-mean GLM, shown as is.

    Parameters
    ----------
    y_max : float
        Public clip of the counts (required, > 0).
    theta_radius : float, default 1.0
        B_theta (whitened units).
    n_steps : int, default 5
    (others as in :class:`PMTLogistic`; no ``classes``; ``random_state``: None = OS entropy, a fixed int
    is for simulation and reproducibility only and is mixed with the fit's settings)

    Attributes
    ----------
    coef_, intercept_, theta_, theta_tilde_, report_, transform_
    """

    _key = "pmt"

    _public_family = "poisson"

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, n_steps=5, eta=0.05, y_max=None, theta_radius=1.0,
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False, on_singular="regularize",
                 eig_floor=DEFAULT_NEWTON_EIG_FLOOR, tol=DEFAULT_CONV_TOL, random_state=None, sampler="numpy"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-PMT Poisson regression.

        Raises
        ------
        ValueError, TypeError
            Before any noise: y_max missing or <= 0, theta_radius <= 0, negative/NaN counts, and the
            checks of :meth:`PMTLogistic.fit`.
        """
        if _public_info_path(X_pub):  # rows or published moments: columns never spanned are dropped, with a warning
            return fit_public(self, X, y, _as_public_info(X_pub), stacklevel=3)
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
        eps, dlt, nb, lam, eta, T, eig_floor, tol = self._newton_params()
        if self.y_max is None:
            raise ValueError("y_max (public upper clip of the counts) is required for PMTPoisson; it is never "
                             "taken from the private data")
        y_max = P.check_bound("y_max", self.y_max)
        B = P.check_bound("theta_radius", self.theta_radius)
        _check_on_singular(self.on_singular)
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept, need_X_pub=True,
                                                 label_fn=lambda v, n_: _check_counts(v, n_, y_max))
        yc = np.minimum(yv, y_max)
        tr, S_is, pen = self._pmt_whiten(Xp, Xq, eta, lam, d)
        G, H = poisson_bounds(tr.radius, B, y_max)
        if not (math.isfinite(G) and math.isfinite(H)):
            raise ValueError(f"R * theta_radius = {tr.radius * B:.3g} is too large: e^(R B_theta) overflows; "
                             "choose a smaller theta_radius")
        res = self._fit_newton(tr.X_tilde, yc, pen, tr.radius, n, d, nb, dlt, eps, lam, T, eig_floor, tol, G=G, H=H,
                               family=POISSON, theta_radius=B, **_pmt_report_fields(tr), B_y=y_max,
                               frac_y_clipped=float(np.mean(yv > y_max)),
                               public_curvature=_whitened_public_min_eig(tr.moment),
                               extra={"family": "poisson", "theta_radius": B, "G": G, "H": H})
        self._set_pmt_theta(res, S_is, tr, p)
        return self

    def predict(self, X):
        """Predicted mean count ``exp(X @ coef_ + intercept_)``."""
        return np.exp(self.decision_function(X))
