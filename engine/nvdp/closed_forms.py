"""Renyi divergences in closed form: Gaussian, Gamma and Dirichlet (numpy float64 and batched torch).

The Renyi divergence of order ``renyi_order`` = lambda > 1 between densities p and q is

    D_lambda(p || q) = 1 / (lambda - 1) * ln integral p(x)^lambda q(x)^(1 - lambda) dx     (nats).

It is nonnegative, zero iff p = q, nondecreasing in lambda, and +inf when the integral diverges.
The formulas are listed in :mod:`engine.nvdp.divergence` (NVDP.md section 4; Gil, Alajaji & Linder,
Inf. Sci. 2013). This module holds the elementwise closed forms and the order validation; the
pairwise bound over NVIB posteriors is :func:`engine.nvdp.divergence.pairwise_rd_bound`.

Examples
--------
>>> round(float(renyi_gaussian(0.3, 0.8, -0.5, 1.2, renyi_order=1.1)), 6)
0.366708
>>> float(renyi_gaussian(0.0, 1.0, 0.0, 0.2, renyi_order=1.1))  # s2 = 1.1*0.04 - 0.1*1 < 0
inf
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = [
    "validate_renyi_order",
    "renyi_gaussian",
    "renyi_gamma",
    "renyi_dirichlet",
    "renyi_gaussian_torch",
    "renyi_gamma_torch",
    "renyi_dirichlet_torch",
]


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------
def validate_renyi_order(renyi_order) -> float:
    """Check a Renyi order lambda and return it as a float.

    Parameters
    ----------
    renyi_order : float
        Order lambda of the Renyi divergence. Accepted range: ``1 < renyi_order < inf``
        (order 1 is the KL divergence, which these closed forms do not cover).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``renyi_order`` is not a real number.
    ValueError
        If it is NaN, infinite or <= 1.

    Examples
    --------
    >>> validate_renyi_order(1.1)
    1.1
    >>> validate_renyi_order(1)
    Traceback (most recent call last):
    ...
    ValueError: renyi_order must be > 1 (accepted range: 1 < renyi_order < inf), got 1.0
    """
    if isinstance(renyi_order, bool):
        raise TypeError(f"renyi_order must be a real number, got the boolean {renyi_order!r}")
    if isinstance(renyi_order, (str, bytes)):
        raise TypeError(f"renyi_order must be a real number, got the string {renyi_order!r}")
    try:
        lam = float(renyi_order)
    except (TypeError, ValueError):
        raise TypeError(
            f"renyi_order must be a real number, got {renyi_order!r} of type {type(renyi_order).__name__}"
        ) from None
    if math.isnan(lam) or math.isinf(lam) or lam <= 1.0:
        raise ValueError(f"renyi_order must be > 1 (accepted range: 1 < renyi_order < inf), got {lam!r}")
    return lam


def _positive_array(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite values")
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0 (accepted range: 0 < {name} < inf), got min {arr.min()!r}")
    return arr


def _finite_array(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite values")
    return arr


# --------------------------------------------------------------------------------------------
# closed forms, numpy float64
# --------------------------------------------------------------------------------------------
def renyi_gaussian(mu_a, sigma_a, mu_b, sigma_b, *, renyi_order: float = 1.1) -> np.ndarray:
    """Renyi divergence D_lambda(N(mu_a, sigma_a^2) || N(mu_b, sigma_b^2)), elementwise, in nats.

    Parameters
    ----------
    mu_a, sigma_a, mu_b, sigma_b : array_like
        Means and standard deviations (``sigma > 0``), broadcast against each other. Each element
        is one univariate Gaussian (one dimension of a diagonal Gaussian; sum over dimensions for
        the diagonal case).
    renyi_order : float, default 1.1
        lambda > 1.

    Returns
    -------
    ndarray of float64, the broadcast shape
        Tiny negative rounding results are clamped to 0.
        ``+inf`` wherever ``s2 = lambda sigma_b^2 + (1 - lambda) sigma_a^2 <= 0`` (the integral
        diverges: sigma_a too large relative to sigma_b; at lambda = 1.1 this is
        ``sigma_b <= 0.30151 sigma_a``).

    Raises
    ------
    ValueError
        If ``renyi_order <= 1``, a mean is not finite, or a standard deviation is not finite and > 0.

    Notes
    -----
    Computed as ``lambda dm^2 / (2 s2) + ln(r) / (2 (1 - lambda)) + ln(sigma_b / sigma_a)`` with
    ``r = s2 / sigma_b^2 = lambda + (1 - lambda) sigma_a^2 / sigma_b^2``, which is the formula of
    NVDP.md section 4 rearranged to avoid cancelling large logarithms. Source: NVDP.md section 4;
    Gil et al. (2013), Table 2.

    Examples
    --------
    >>> round(float(renyi_gaussian(0.3, 0.8, -0.5, 1.2)), 6)
    0.366708
    >>> float(renyi_gaussian(1.0, 2.0, 1.0, 2.0))
    0.0
    """
    lam = validate_renyi_order(renyi_order)
    ma = _finite_array(mu_a, "mu_a")
    mb = _finite_array(mu_b, "mu_b")
    sa = _positive_array(sigma_a, "sigma_a")
    sb = _positive_array(sigma_b, "sigma_b")
    va, vb = sa * sa, sb * sb
    r = lam + (1.0 - lam) * (va / vb)
    s2 = r * vb
    with np.errstate(divide="ignore", invalid="ignore"):
        out = lam * (ma - mb) ** 2 / (2.0 * s2) + 0.5 * np.log(r) / (1.0 - lam) + (np.log(sb) - np.log(sa))
    out = np.where(r > 0, np.maximum(out, 0.0), np.inf)  # D >= 0: clamp rounding below 0
    return np.asarray(out, dtype=np.float64)


def renyi_gamma(a, b, *, renyi_order: float = 1.1) -> np.ndarray:
    """Renyi divergence D_lambda(Gamma(a, 1) || Gamma(b, 1)), elementwise, in nats.

    Parameters
    ----------
    a, b : array_like
        Shape parameters (pseudo-counts), ``> 0``, broadcast against each other.
    renyi_order : float, default 1.1

    Returns
    -------
    ndarray of float64
        ``lnG(c)/(lambda-1) - lambda/(lambda-1) lnG(a) + lnG(b)`` with ``c = lambda a - (lambda-1) b``;
        ``+inf`` wherever ``c <= 0`` (b more than lambda/(lambda-1) = 11 times a at lambda = 1.1).

    Raises
    ------
    ValueError
        If ``renyi_order <= 1`` or a shape is not finite and > 0.

    Notes
    -----
    Source: NVDP.md section 4 (the per-component Gamma term; Gil et al. 2013).

    Examples
    --------
    >>> float(renyi_gamma(2.0, 2.0))
    0.0
    >>> float(renyi_gamma(0.1, 1.2))  # 1.1*0.1 - 0.1*1.2 < 0
    inf
    """
    lam = validate_renyi_order(renyi_order)
    a = _positive_array(a, "a")
    b = _positive_array(b, "b")
    c = lam * a - (lam - 1.0) * b
    with np.errstate(invalid="ignore"):
        out = gammaln(np.where(c > 0, c, 1.0)) / (lam - 1.0) - lam / (lam - 1.0) * gammaln(a) + gammaln(b)
    return np.asarray(np.where(c > 0, np.maximum(out, 0.0), np.inf), dtype=np.float64)


def _log_beta(x: np.ndarray) -> np.ndarray:
    return gammaln(x).sum(axis=-1) - gammaln(x.sum(axis=-1))


def renyi_dirichlet(a, b, *, renyi_order: float = 1.1) -> np.ndarray:
    """Renyi divergence D_lambda(Dir(a) || Dir(b)) over the last axis, in nats.

    Parameters
    ----------
    a, b : array_like of shape (..., K)
        Concentration vectors (``> 0``), K >= 2, broadcast against each other.
    renyi_order : float, default 1.1

    Returns
    -------
    ndarray of float64 of shape (...)
        ``[ln B(c) - lambda ln B(a) - (1 - lambda) ln B(b)] / (lambda - 1)`` with
        ``c = lambda a + (1 - lambda) b``; ``+inf`` where any ``c_i <= 0``.

    Raises
    ------
    ValueError
        If ``renyi_order <= 1``, a concentration is not finite and > 0, or K < 2.

    Notes
    -----
    Source: NVDP.md section 4. For K = 2 this is the Beta-distribution divergence.

    Examples
    --------
    >>> float(renyi_dirichlet([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
    0.0
    >>> round(float(renyi_dirichlet([1.0, 2.0], [2.0, 1.0])), 6)  # Beta(1, 2) vs Beta(2, 1)
    1.11814
    """
    lam = validate_renyi_order(renyi_order)
    a = _positive_array(a, "a")
    b = _positive_array(b, "b")
    a, b = np.broadcast_arrays(a, b)
    if a.ndim == 0 or a.shape[-1] < 2:
        raise ValueError(f"a and b must have K >= 2 components on the last axis, got shape {a.shape}")
    c = lam * a + (1.0 - lam) * b
    ok = np.all(c > 0, axis=-1)
    out = (_log_beta(np.where(c > 0, c, 1.0)) - lam * _log_beta(a) - (1.0 - lam) * _log_beta(b)) / (lam - 1.0)
    return np.asarray(np.where(ok, np.maximum(out, 0.0), np.inf), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# closed forms, torch (batched, no validation of values: non-finite inputs propagate as NaN)
# --------------------------------------------------------------------------------------------
def renyi_gaussian_torch(mu_a, sigma_a, mu_b, sigma_b, *, renyi_order: float = 1.1) -> torch.Tensor:
    """Batched torch version of :func:`renyi_gaussian` (elementwise, broadcasting, nats).

    Parameters
    ----------
    mu_a, sigma_a, mu_b, sigma_b : torch.Tensor
        Broadcastable tensors; ``sigma > 0``. Use float64 for exactness.
    renyi_order : float, default 1.1

    Returns
    -------
    torch.Tensor
        ``+inf`` where ``lambda sigma_b^2 + (1 - lambda) sigma_a^2 <= 0``. Values are not
        validated: NaN inputs give NaN, a zero sigma gives inf or NaN.

    Raises
    ------
    ValueError
        If ``renyi_order <= 1``.

    Examples
    --------
    >>> import torch
    >>> t = torch.tensor
    >>> round(float(renyi_gaussian_torch(t(0.3), t(0.8), t(-0.5), t(1.2))), 6)
    0.366708
    """
    import torch  # imported here: the numpy forms above (the Learn page's) need no torch

    lam = validate_renyi_order(renyi_order)
    va, vb = sigma_a * sigma_a, sigma_b * sigma_b
    r = lam + (1.0 - lam) * (va / vb)
    s2 = r * vb
    out = lam * (mu_a - mu_b) ** 2 / (2.0 * s2) + 0.5 * torch.log(r) / (1.0 - lam) + (torch.log(sigma_b) - torch.log(sigma_a))
    return torch.where(r > 0, out.clamp_min(0.0), torch.full_like(out, math.inf))


def renyi_gamma_torch(a, b, *, renyi_order: float = 1.1) -> torch.Tensor:
    """Batched torch version of :func:`renyi_gamma` (uses ``torch.lgamma``).

    Returns ``+inf`` where ``lambda a - (lambda - 1) b <= 0``. Raises ``ValueError`` if
    ``renyi_order <= 1``.

    Examples
    --------
    >>> import torch
    >>> round(float(renyi_gamma_torch(torch.tensor(1.5), torch.tensor(0.7))), 6)
    0.440071
    """
    import torch  # imported here: the numpy forms above (the Learn page's) need no torch

    lam = validate_renyi_order(renyi_order)
    c = lam * a - (lam - 1.0) * b
    ok = c > 0
    out = torch.lgamma(torch.where(ok, c, torch.ones_like(c))) / (lam - 1.0) - lam / (lam - 1.0) * torch.lgamma(a) + torch.lgamma(b)
    return torch.where(ok, out.clamp_min(0.0), torch.full_like(out, math.inf))


def renyi_dirichlet_torch(a, b, *, renyi_order: float = 1.1) -> torch.Tensor:
    """Batched torch version of :func:`renyi_dirichlet` over the last dimension.

    Returns ``+inf`` where any ``lambda a_i + (1 - lambda) b_i <= 0``. Raises ``ValueError`` if
    ``renyi_order <= 1``.

    Examples
    --------
    >>> import torch
    >>> a = torch.tensor([[1.0, 2.0], [3.0, 3.0]], dtype=torch.float64)
    >>> b = torch.tensor([[2.0, 1.0], [3.0, 3.0]], dtype=torch.float64)
    >>> [round(v, 6) for v in renyi_dirichlet_torch(a, b).tolist()]
    [1.11814, 0.0]
    """
    import torch  # imported here: the numpy forms above (the Learn page's) need no torch

    lam = validate_renyi_order(renyi_order)
    a, b = torch.broadcast_tensors(a, b)
    c = lam * a + (1.0 - lam) * b
    ok = (c > 0).all(dim=-1)
    cs = torch.where(c > 0, c, torch.ones_like(c))

    def log_beta(x):
        return torch.lgamma(x).sum(-1) - torch.lgamma(x.sum(-1))

    out = (log_beta(cs) - lam * log_beta(a) - (1.0 - lam) * log_beta(b)) / (lam - 1.0)
    return torch.where(ok, out.clamp_min(0.0), torch.full_like(out, math.inf))
