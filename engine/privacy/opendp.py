"""OpenDP as the estimators' noise sampler and accountant (``sampler="opendp"``).

OpenDP's Gaussian measurement (``opendp.measurements.make_gaussian``) samples an exact discrete Gaussian
on a fine lattice with a cryptographically secure generator and rounds to float (Canonne, Kamath &
Steinke 2020); its privacy map gives **rho = 1 / (2 s^2) zCDP** per unit of sensitivity (s the scale in
units of the sensitivity), and OpenDP converts zCDP to (epsilon, delta) with
``make_zCDP_to_approxDP`` (the conversion of Canonne, Kamath & Steinke 2020, Proposition 12 / Bun &
Steinke 2016), which is weaker than the exact Gaussian-DP curve the numpy path uses: for the scale
calibrated to epsilon 1 at delta 1e-5 by mu-GDP (mu = 0.2681), OpenDP certifies epsilon 1.092.

So with ``sampler="opendp"`` the total budget is taken from OpenDP's own map: :func:`opendp_mu` is the
largest total ``mu`` (rho = mu^2 / 2) whose OpenDP-certified epsilon at the user's delta is at most the
user's epsilon (found by OpenDP's ``binary_search_param``); the estimator then splits it over its
releases exactly as it splits a mu-GDP budget (composition of zCDP adds rho, of GDP adds mu^2: the same
sum), and :func:`opendp_certified_epsilon` reads the epsilon OpenDP certifies for the estimator's actual
releases (a composition of one OpenDP Gaussian measurement per release, scale ``sigma / sensitivity``).
The noise is drawn by :class:`OpenDPGenerator` (OpenDP's sampler, its own CSPRNG: a seed does not
reproduce it) and then added in float64 by the estimator's code, which keeps OpenDP's protection of the
sampling but not of the addition (docs/dev/threat_model.md).
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["require_opendp", "opendp_mu", "opendp_certified_epsilon", "OpenDPGenerator", "OPENDP_MARGIN"]

#: Relative share of mu given up so that OpenDP's upward rounding over a composition stays within budget.
OPENDP_MARGIN = 1e-8


def require_opendp():
    """Import ``opendp.prelude`` with the contrib features on; a clear ``ImportError`` if it is missing."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:
        raise ImportError("sampler='opendp' needs the package opendp (pip install 'opendp>=0.12'; it is listed "
                          "in requirements.txt); use sampler='numpy' without it") from exc
    dp.enable_features("contrib")
    return dp


def _approx_dp(dp, meas, delta):
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), float(delta))


@functools.lru_cache(maxsize=256)
def opendp_mu(epsilon: float, delta: float) -> float:
    """The largest total mu (zCDP rho = mu^2 / 2) whose OpenDP-certified epsilon at ``delta`` is <= epsilon.

    Parameters
    ----------
    epsilon : float
        ``0 < epsilon``; ``inf`` gives ``inf`` (noise off).
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float
        ``1 / s`` for the smallest scale s (sensitivity 1) that OpenDP's map certifies at (epsilon, delta).

    Examples
    --------
    >>> round(opendp_mu(1.0, 1e-5), 4)
    0.2472
    >>> opendp_certified_epsilon([10 / opendp_mu(1.0, 1e-5)] * 100, 1e-5) <= 1.0
    True
    """
    if math.isinf(epsilon):
        return math.inf
    dp = require_opendp()

    def make(scale):
        return _approx_dp(dp, dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                                                 scale=scale), delta)

    scale = dp.binary_search_param(make, d_in=1.0, d_out=(float(epsilon), float(delta)), T=float)
    eps_cert, _ = make(scale).map(1.0)
    if eps_cert > epsilon:  # pragma: no cover - binary_search_param returns a scale that passes
        raise RuntimeError(f"OpenDP certified {eps_cert} > {epsilon} at the searched scale")
    # OpenDP rounds every step of a composition up (k releases: a relative excess of order k 2^-52 in rho);
    # giving up OPENDP_MARGIN of mu keeps the composed, certified epsilon <= epsilon for any k < 1e6.
    return (1.0 / scale) * (1.0 - OPENDP_MARGIN)


def opendp_certified_epsilon(scales, delta: float) -> float:
    """The epsilon OpenDP certifies at ``delta`` for Gaussian releases with scales ``sigma_j / Delta_j``.

    Builds one OpenDP Gaussian measurement per release (unit sensitivity, scale ``sigma_j / Delta_j``),
    composes them (``make_composition``: rho adds up), converts zCDP to (epsilon, delta) and applies the
    map at distance 1 (every release moves by at most its sensitivity on a neighbouring pair).

    Parameters
    ----------
    scales : iterable of float
        ``sigma_j / Delta_j`` of each release (> 0).
    delta : float

    Returns
    -------
    float
    """
    dp = require_opendp()
    ms = [dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=float(s))
          for s in scales]
    if not ms:
        return 0.0
    meas = ms[0] if len(ms) == 1 else dp.c.make_composition(ms)
    return float(_approx_dp(dp, meas, delta).map(1.0)[0])


class OpenDPGenerator:
    """A stand-in for ``numpy.random.Generator`` whose ``normal`` draws through OpenDP's Gaussian sampler.

    Only ``normal(loc, scale, size)`` is offered (the estimators draw all their noise through
    :func:`engine.privacy.gaussian_noise`); anything else raises ``AttributeError``. OpenDP uses its own
    cryptographic generator, so two fits never share noise and no seed reproduces it.
    """

    def __init__(self):
        self._dp = require_opendp()

    def normal(self, loc=0.0, scale=1.0, size=None):
        dp = self._dp
        shape = () if size is None else (tuple(size) if np.iterable(size) else (int(size),))
        k = int(np.prod(shape)) if shape else 1
        if scale == 0 or k == 0:
            return np.full(shape, float(loc)) if shape else float(loc)
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                                  scale=float(scale))
        out = np.asarray(meas([0.0] * k), dtype=float) + float(loc)
        return out.reshape(shape) if shape else float(out[0])
