"""Public centring (and, for the raw-row baselines, scaling) of the private rows: the ``center="public"`` step.

PMT whitens with the uncentered public moment, which centres the features through its intercept block and
is invariant to a rescaled column, so :class:`engine.pmt.PMTRidge` only centres y. The private-only
baselines are not: DP-RR clips the raw rows at ``C = sqrt(d (1 + ln(2n/eta)))`` and DP-GD clips per-example
gradients at ``2 C B_y``, radii made for standardised rows. On raw CCPP (pressure about 1,013 mbar, power
about 450 MW) every row was clipped and the bound on y was the scale of ``|y|``: DP-RR's and DP-GD's test
RMSE there were several times their standardised values. With ``center="public"`` (the default of
:class:`engine.pmt.DPRidge`, :class:`engine.pmt.DPGDRidge`; y only for :class:`engine.pmt.PMTPooledRidge`):

* ``x -> (x - m) / s`` with ``m``, ``s`` the **public** column mean and standard deviation (``ddof = 0``, as
  :func:`engine.datasets.standardize_with_public`; ``s = 1`` where the public variance is 0): from the
  public rows, or read off a :class:`engine.pmt.PublicMoment`'s intercept block (needs the intercept
  column);
* ``y -> y - c`` with ``c`` the public mean of ``y_pub`` (0 without public labels or when they are all
  equal);
* the fit runs in those units with the penalty that keeps the objective the original one
  (``lam ||coef||^2`` on the original coefficients: ``lam sum_j beta_j^2 / s_j^2``, :meth:`PublicScaling.penalty`),
  so with the noise off it is the non-private ridge the error is measured against; the coefficients are mapped
  back: ``coef = beta / s``, ``intercept = beta_0 + c - sum(beta m / s)``.

Only an unpenalised intercept undoes a shift exactly, so with ``fit_intercept=False`` or
``penalize_intercept=True`` nothing is centred (features are still scaled). Every statistic is public: no
privacy cost, and nothing computed from the private rows picks a parameter. ``center=None`` is the former
behaviour (the rows as given).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.pmt._moment import PublicMoment

__all__ = ["CENTERS", "PublicScaling", "public_scaling"]

#: The baselines' ``center`` options.
CENTERS = ("public", None)


@dataclass(frozen=True)
class PublicScaling:
    """The public affine map of the features and the public centre of y (module docstring).

    Attributes
    ----------
    mean, scale : ndarray of shape (p,)
        Feature centre and scale (``0`` and ``1`` where not applied).
    y_center : float
    """

    mean: np.ndarray
    scale: np.ndarray
    y_center: float

    def features(self, X):
        """``(X - mean) / scale`` (a new float64 array)."""
        return (np.asarray(X, dtype=float) - self.mean) / self.scale

    def public(self, Xq):
        """The public information in the scaled units: rows ``(Xq - mean) / scale`` or the moment ``T S T^T``."""
        if Xq is None:
            return None
        if isinstance(Xq, PublicMoment):
            from engine.pmt.public_info import moment_from_matrix

            S = Xq.factors[3]
            p = self.mean.shape[0]
            T = np.zeros((p + 1, p + 1))
            T[:p, :p] = np.diag(1.0 / self.scale)
            T[:p, p] = -self.mean / self.scale
            T[p, p] = 1.0
            return moment_from_matrix(T @ S @ T.T, Xq.n_pub, fit_intercept=True, estimator=Xq.estimator)
        return self.features(Xq)

    def penalty(self, Pm):
        """The penalty matrix in the scaled units: ``D^{-1} Pm D^{-1}``, ``D = diag(scale, 1)`` (the same objective)."""
        Pm = np.asarray(Pm, dtype=float)
        p = self.mean.shape[0]
        inv = np.ones(Pm.shape[0])
        inv[:p] = 1.0 / self.scale
        return Pm * np.outer(inv, inv)

    def to_raw(self, theta, fit_intercept: bool):
        """Coefficients (intercept last when ``fit_intercept``) in the original units; shape ``(..., d)``."""
        theta = np.asarray(theta, dtype=float)
        p = self.mean.shape[0]
        out = theta.copy()
        out[..., :p] = theta[..., :p] / self.scale
        if fit_intercept:
            out[..., p] = theta[..., p] + self.y_center - out[..., :p] @ self.mean
        return out


def public_scaling(Xq, yq, *, center, fit_intercept: bool, penalize_intercept: bool, p: int) -> PublicScaling | None:
    """The :class:`PublicScaling` of ``center="public"``, or None (``center=None``, or nothing public to use).

    Parameters
    ----------
    Xq : ndarray of shape (n_pub, p), PublicMoment or None
        Public rows or moment (validated by the caller). None: the features are left as given.
    yq : ndarray of shape (n_pub,) or None
        Public responses (their mean is the centre of y).
    center : {"public", None}
    fit_intercept, penalize_intercept : bool
    p : int
        Number of feature columns.

    Raises
    ------
    ValueError
        ``center`` not in :data:`CENTERS`.
    """
    if center not in CENTERS:
        raise ValueError(f"center must be one of {CENTERS}, got {center!r}")
    if center is None:
        return None
    shift = fit_intercept and not penalize_intercept
    mean, scale = np.zeros(p), np.ones(p)
    if isinstance(Xq, PublicMoment):
        if Xq.fit_intercept and Xq.d == p + 1:
            S = Xq.factors[3]
            m = S[-1, :-1]
            sd = np.sqrt(np.clip(np.diag(S)[:-1] - m**2, 0.0, None))
            mean, scale = (m if shift else mean), np.where(sd > 0, sd, 1.0)
    elif Xq is not None:
        A = np.asarray(Xq, dtype=float)
        sd = A.std(axis=0)
        mean, scale = (A.mean(axis=0) if shift else mean), np.where(sd > 0, sd, 1.0)
    c = 0.0
    if shift and yq is not None:
        y = np.asarray(yq, dtype=float).ravel()
        if y.size and np.all(np.isfinite(y)) and not np.all(y == y[0]):
            c = float(np.mean(y))
    if not np.any(mean) and np.all(scale == 1.0) and c == 0.0:
        return None
    return PublicScaling(np.asarray(mean, dtype=float), np.asarray(scale, dtype=float), c)
