"""The public-only comparator: the non-private fit on the public rows alone (no privacy cost).

Every PMT user holds ``n_pub`` public rows. A fit on those rows alone spends no privacy budget, so a
private estimate that loses to it is not worth its budget (``docs/specs/PMT.md`` section 3, step 6). This
module holds

- the estimators :class:`PublicOnlyRidge`, :class:`PublicOnlyLogistic`, :class:`PublicOnlyPoisson`:
  the objectives of :class:`engine.pmt.RidgeReference`, :class:`engine.pmt.LogisticReference` and
  :class:`engine.pmt.PoissonReference`, fitted on ``(X_pub, y_pub)``. The private ``(X, y)`` are
  accepted for the common ``fit(X, y, X_pub, y_pub)`` signature; only the column count of ``X`` is
  checked against ``X_pub``, nothing else of the private data is read;
- :func:`public_only_theta`: the same fits on already-augmented rows (the sweeps use it);
- :func:`noise_dominance`: whether PMT's released second moment is dominated by its noise, and how many
  private rows the budget would need for PMT to beat the public sample, from public quantities only.

The sweeps register the method ``"public-only"`` (display name "Public-only") for the tasks
``"ridge"``, ``"logistic"`` and ``"poisson"``: its rows carry ``mu = 0`` (nothing is released) and the
same coefficients at every epsilon and seed, so they draw as a flat line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine import privacy as P
from engine.pmt._newton import LOGISTIC, POISSON, glm_reference_solve
from engine.pmt._bounds import pmt_radius
from engine.pmt.baselines import RidgeReference
from engine.pmt.logistic import LogisticReference
from engine.pmt.poisson import PoissonReference
from engine.pmt.ridge import ridge_reference_solve

__all__ = [
    "PUBLIC_ONLY_NAME",
    "PublicOnlyRidge",
    "PublicOnlyLogistic",
    "PublicOnlyPoisson",
    "public_only_theta",
    "NoiseDominance",
    "noise_dominance",
]

#: Display name of the public-only method (sweeps, figures, tables).
PUBLIC_ONLY_NAME = "Public-only"


def public_only_theta(Xa_pub, y_pub, lam: float, Pm, family: str = "ridge") -> tuple[np.ndarray, bool]:
    """The non-private fit on the public rows: ``argmin (1/m) sum loss(y_i, x_i^T theta) + lam theta^T P theta``.

    Parameters
    ----------
    Xa_pub : ndarray of shape (m, d)
        Public rows, intercept column already appended when there is one.
    y_pub : ndarray of shape (m,)
        Responses (ridge), labels in {0, 1} (logistic) or counts >= 0 (Poisson).
    lam : float
        ``lam >= 0``.
    Pm : ndarray of shape (d, d)
        Penalty mask (:func:`engine.pmt._base.penalty_mask`).
    family : {"ridge", "logistic", "poisson"}

    Returns
    -------
    theta : ndarray of shape (d,)
    converged : bool
        Always True for ridge (closed form); the damped Newton's flag otherwise (False also for a
        separable logistic sample at lam = 0, which has no finite MLE).

    Examples
    --------
    >>> Xa = np.column_stack([np.arange(5.0), np.ones(5)]); y = 2 * np.arange(5.0) + 1
    >>> th, ok = public_only_theta(Xa, y, 0.0, np.diag([1.0, 0.0]))
    >>> th.round(6).tolist(), ok
    ([2.0, 1.0], True)
    """
    Xa_pub = np.asarray(Xa_pub, dtype=float)
    y_pub = np.asarray(y_pub, dtype=float)
    if family == "ridge":
        return ridge_reference_solve(Xa_pub, y_pub, float(lam), Pm), True
    fam = {"logistic": LOGISTIC, "poisson": POISSON}.get(family)
    if fam is None:
        raise ValueError(f"family must be one of ('ridge', 'logistic', 'poisson'), got {family!r}")
    theta, ok, _ = glm_reference_solve(Xa_pub, y_pub, float(lam), Pm, fam)
    if family == "logistic" and lam == 0:  # perfect separation: no finite MLE (as LogisticReference)
        u = Xa_pub @ theta
        ok = ok and float(np.mean(np.logaddexp(0, u) - y_pub * u)) >= 1e-6
    return theta, bool(ok)


def _check_private_columns(X, X_pub):
    if X_pub is None:
        raise ValueError("X_pub (the public rows) is required: a public-only fit uses nothing else")
    Xq = np.asarray(X_pub)
    if X is not None:
        p = np.shape(X)[1] if np.ndim(X) == 2 else None
        if Xq.ndim == 2 and p is not None and p != Xq.shape[1]:
            raise ValueError(f"X_pub has {Xq.shape[1]} columns but X has {p}; they must match")


class _PublicOnlyMixin:
    """``fit(X, y, X_pub, y_pub)`` = the parent's non-private fit on ``(X_pub, y_pub)``; report says so."""

    def fit(self, X=None, y=None, X_pub=None, y_pub=None):
        """Fit on the public rows only (no privacy cost).

        Parameters
        ----------
        X : array-like of shape (n, p), optional
            Private features: only their column count is checked against ``X_pub``.
        y : ignored
        X_pub : array-like of shape (n_pub, p)
            Public features (required).
        y_pub : array-like of shape (n_pub,)
            Public responses / labels / counts (required).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``X_pub`` or ``y_pub`` missing, column mismatch, and the parent's checks on the public rows
            (NaN/inf, n_pub < d, lam < 0, bad labels or counts).
        """
        _check_private_columns(X, X_pub)
        if y_pub is None:
            raise ValueError("y_pub (the public responses) is required for a public-only fit")
        super().fit(X_pub, y_pub)
        r = self.report_
        r.method = PUBLIC_ONLY_NAME
        r.mu = 0.0  # nothing private is released
        r.epsilon = 0.0
        r.n_pub = r.n
        self.n_pub_ = r.n
        return self


class PublicOnlyRidge(_PublicOnlyMixin, RidgeReference):
    """Ridge on the public rows alone: ``RidgeReference`` fitted on ``(X_pub, y_pub)``; no privacy cost.

    Equals ``sklearn.linear_model.Ridge(alpha=n_pub * lam)`` on the public rows (intercept unpenalised).

    Parameters
    ----------
    lam : float, default 1e-3
    fit_intercept, penalize_intercept : bool

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = X @ [1.0, -1.0] + 5 + 0.01 * rng.normal(size=300)
    >>> m = PublicOnlyRidge(lam=0.0).fit(X[100:], y[100:], X_pub=X[:100], y_pub=y[:100])
    >>> m.coef_.round(2).tolist(), round(m.intercept_, 2), m.report_.mu
    ([1.0, -1.0], 5.0, 0.0)
    """


class PublicOnlyLogistic(_PublicOnlyMixin, LogisticReference):
    """Logistic regression on the public rows alone (``LogisticReference`` on ``(X_pub, y_pub)``)."""


class PublicOnlyPoisson(_PublicOnlyMixin, PoissonReference):
    """Poisson regression (log link) on the public rows alone (``PoissonReference`` on ``(X_pub, y_pub)``)."""


# --------------------------------------------------------------------------------------------
# noise dominance (the page's banner)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NoiseDominance:
    """Whether PMT's released ``A = X~^T X~`` is noise-dominated, from public quantities only.

    Attributes
    ----------
    noise_scale : float
        ``2 sqrt(d) sigma_A``: the spectral size of the symmetric Gaussian noise on ``A`` (the largest
        eigenvalue of a d x d Wigner matrix with entry sd sigma_A is about ``2 sqrt(d) sigma_A``).
    signal : float
        ``n``: the eigenvalues of ``A`` in whitened units (``X~^T X~ ~ n I``).
    dominated : bool
        ``noise_scale >= signal / 2``: some eigenvalue of the noisy ``A`` can be halved or worse.
    n_needed : int
        Private rows for which PMT's error (about ``sqrt(d v) / n``, ``v = sigma_b^2 + sigma_A^2 ||theta~||^2``)
        falls below the public fit's (about ``s sqrt(d / m)``), and the noise is no longer dominant:
        ``max(sqrt(v m) / s, 4 sqrt(d) sigma_A)`` with sigma_A and sigma_b recomputed at that n (R and
        B_y grow like sqrt(log n)); see :func:`noise_dominance`.
    """

    noise_scale: float
    signal: float
    dominated: bool
    n_needed: int


def _sigmas(d, n, eta, mu, B_y, neighbouring="replace-one"):
    P.validate_neighbouring(neighbouring)  # replace-one only (n is public)
    R = pmt_radius(d, n, eta)
    part = mu / math.sqrt(2.0)
    return math.sqrt(2.0) * R**2 / part, 2.0 * R * B_y / part


def noise_dominance(*, n: int, d: int, mu: float, eta: float, n_pub: int, resid_sd: float,
                    theta_norm: float, y_rms: float, neighbouring: str = "replace-one") -> NoiseDominance:
    """Is PMT's private release noise-dominated, and how many private rows would this budget need?

    Every input is public (n is public under replace-one) or the budget. With
    ``sigma_A = sqrt(2) R^2 / (mu / sqrt 2)``, ``sigma_b = 2 R B_y / (mu / sqrt 2)`` (PMT.md section 3),
    ``R = sqrt(d (1 + ln(2n/eta)))`` and ``B_y = y_rms sqrt(1 + ln(2n/eta))``:

    * noise: ``2 sqrt(d) sigma_A`` (Wigner semicircle edge); signal: ``n`` (whitened ``X~^T X~ ~ n I``);
      dominated when the noise reaches half the signal;
    * PMT's error in whitened units is about ``sqrt(d v) / n`` with ``v = sigma_b^2 + sigma_A^2
      ||theta~||^2`` (first-order expansion of ``(A + s_A W)^{-1} (b + s_b w)``); the public fit's about
      ``s sqrt(d / m)`` (OLS with residual sd s on m whitened rows). PMT wins when
      ``n > sqrt(v m) / s`` and the noise is no longer dominant (``n > 4 sqrt(d) sigma_A``). Since
      sigma_A and sigma_b grow with n (through R and B_y), ``n_needed`` is the smallest n on a
      doubling-then-bisection search where both hold.

    Parameters
    ----------
    n, d, n_pub : int
        Private rows, columns (intercept included), public rows.
    mu : float
        The release's GDP budget (> 0).
    eta : float
    resid_sd : float
        Residual standard deviation of the public fit (public).
    theta_norm : float
        Norm of the public fit's whitened coefficients ``||theta~_pub||`` (public).
    y_rms : float
        ``sqrt(mean(y_pub^2))`` (public), as in :func:`engine.pmt.response_bound`.
    neighbouring : {"replace-one"}
        The only relation offered (add/remove is not: n enters R(d, n), B_y(n) and the noise scale).

    Returns
    -------
    NoiseDominance

    Examples
    --------
    >>> nd = noise_dominance(n=500, d=5, mu=1.0, eta=0.05, n_pub=100, resid_sd=1.0, theta_norm=1.0, y_rms=1.0)
    >>> nd.dominated, nd.n_needed > 500
    (True, True)
    """
    if not (mu > 0):
        raise ValueError(f"mu must be > 0, got {mu!r}")

    def wins(k):
        sA, sb = _sigmas(d, k, eta, mu, y_rms * math.sqrt(1.0 + math.log(2.0 * k / eta)), neighbouring)
        v = sb**2 + sA**2 * theta_norm**2
        return k >= math.sqrt(v * n_pub) / max(resid_sd, 1e-300) and k >= 4.0 * math.sqrt(d) * sA

    sA, _ = _sigmas(d, n, eta, mu, y_rms * math.sqrt(1.0 + math.log(2.0 * n / eta)), neighbouring)
    noise = 2.0 * math.sqrt(d) * sA
    hi = max(int(n), 2)
    while not wins(hi) and hi < 10**15:
        hi *= 2
    lo = hi // 2 if hi > max(int(n), 2) else 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if wins(mid) else (mid, hi)
    return NoiseDominance(noise_scale=noise, signal=float(n), dominated=bool(noise >= n / 2.0), n_needed=int(hi))
