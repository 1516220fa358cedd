"""Worst-case neighbouring pairs: replace-one data sets whose released statistic moves by the full sensitivity.

Every pair is built on **standardised public rows** (exact mean 0 and identity second moment,
:func:`standard_public_rows`), so PMT's whitening is the identity on the feature axes and a raw row
``K e_j`` (K far beyond every radius) is truncated to ``R e_j`` (up to the intercept's ``1/K`` share). The
rows that differ are then placed on coordinate axes, which is where the released statistics move most:

* SSP ``A = Z^T Z`` (upper triangle, iid noise): rows ``R e_0`` vs ``R e_1`` (labels 0) change the upper
  triangle by ``R^2 (e_0 e_0^T - e_1 e_1^T)``, norm ``sqrt(2) R^2``: the full ``Delta_A``; b does not move.
* SSP ``b = Z^T y``: the row ``R e_0`` with label ``+B`` vs ``-B``: b moves by ``2 R B``: the full
  ``Delta_b``; A does not move.
* Newton Hessian (logistic, at theta~ = 0, the first iterate): rows ``R e_0`` vs ``R e_1`` with the same
  label: ``b''(0) = 1/4 = H``, so the averaged Hessian moves by ``sqrt(2) R^2 H / n``: the full ``Delta_H``.
* Newton gradient (logistic): the pair of :func:`engine.audit.mechanisms.logistic_gradient_worst_pair`
  (two nearly parallel rows with opposite labels) evaluated at the iterate ``theta~ = K v`` it needs,
  where the gradients differ by ``2 R / n / sqrt(1 + eps^2)`` = the full ``Delta_g`` to ~1e-7.
* Poisson gradient (at theta~ = 0): rows ``R e_0`` vs ``-R e_0`` with the count clipped to ``y_max`` on
  both: ``(1 - y_max)(z - (-z)) / n``, norm ``2 (y_max - 1) R / n`` against ``Delta_g = 2 R G / n`` with
  ``G = y_max`` (``y_max >= e^{R B_theta}``): ratio ``1 - 1/y_max``.
* Poisson Hessian (at theta~ = 0): rows ``R e_0`` vs ``R e_1``: ``sqrt(2) R^2 / n`` against
  ``Delta_H = sqrt(2) R^2 e^{R B_theta} / n``: ratio ``e^{-R B_theta}`` (0.995 for the audit's
  ``B_theta = 1e-3``).
* DP-GD: feature 0 identically 0 on the base rows and the replaced row ``M e_0`` whose gradient is
  clipped at every step with opposite signs: the final coefficient 0 moves by ``T step 2C/n``, the full
  sensitivity of every step.

Each sampler measures the movement of the noise-free statistic over the sensitivity (``ratio``) from the
product's own code (a run with the noise factor 0), so the claim "reaches the sensitivity" is checked on
every audit, not assumed.
"""

from __future__ import annotations

import numpy as np

__all__ = ["standard_public_rows", "axis_row", "EXTREME"]

#: Size of the extreme rows relative to the clip radius (a correct mechanism truncates them by ~1e6).
EXTREME = 1e6


def standard_public_rows(m: int, p: int, seed: int) -> np.ndarray:
    """``m`` public rows with exact mean 0 and ``X^T X / m = I`` (so PMT's public moment is the identity).

    Raises ``ValueError`` for ``m <= p + 1``.
    """
    if m <= p + 1:
        raise ValueError(f"need more public rows than p + 1 = {p + 1}, got {m}")
    rng = np.random.default_rng([int(seed), 101])
    X = rng.normal(size=(m, p))
    X -= X.mean(axis=0)
    # orthonormal columns orthogonal to the ones vector, scaled to unit second moment
    Q, _ = np.linalg.qr(np.column_stack([np.ones(m), X]))
    return Q[:, 1:] * np.sqrt(m)


def axis_row(p: int, j: int, radius: float, sign: float = 1.0, tilt=None) -> np.ndarray:
    """Raw row ``EXTREME * radius * sign * (e_j + tilt)`` (length p): truncated to ``radius`` along it."""
    v = np.zeros(p)
    v[j] = sign
    if tilt is not None:
        v = v + np.asarray(tilt, dtype=float)
    return EXTREME * radius * v
