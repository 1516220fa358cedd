"""Synthetic Gaussian data with an exact condition number and a known ground truth.

The population covariance is ``Sigma = Q diag(geomspace(1, 1/kappa, d)) Q^T`` with a seeded
Haar-random rotation ``Q``, so its condition number is exactly ``kappa``; the ground truth
(``theta_star``, ``Sigma``) is returned in :attr:`Dataset.extras` so errors against the truth can be
measured. This is the ill-conditioned design PMT (docs/specs/PMT.md) is meant for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.datasets._base import Dataset, _check_float, _check_int
from engine.privacy import check_random_state

def _synthetic_design(n, d, kappa, theta_norm, random_state):
    """Validate and draw (X, theta*, Sigma, eigenvalues, rng) for the synthetic generators."""
    n = _check_int(n, "n", 2)
    d = _check_int(d, "d", 1)
    kappa = _check_float(kappa, "kappa", minimum=1.0)
    theta_norm = _check_float(theta_norm, "theta_norm", minimum=0.0)
    if d == 1 and kappa != 1.0:
        raise ValueError(f"with d = 1 the covariance is a scalar, so kappa must be 1, got {kappa:g}")
    rng = check_random_state(random_state)
    eig = np.geomspace(1.0, 1.0 / kappa, d)
    # Haar-random rotation: QR of a Gaussian matrix with the signs of R's diagonal folded into Q.
    G = rng.standard_normal((d, d))
    Q, R = np.linalg.qr(G)
    Q = Q * np.sign(np.diag(R))
    Sigma = (Q * eig) @ Q.T
    Sigma = (Sigma + Sigma.T) / 2.0
    X = (rng.standard_normal((n, d)) * np.sqrt(eig)) @ Q.T
    direction = rng.standard_normal(d)
    theta = theta_norm * direction / np.linalg.norm(direction)
    return n, d, kappa, theta_norm, X, theta, Sigma, eig, rng


def make_synthetic_regression(
    *, n: int = 20000, d: int = 10, kappa: float = 1e3, noise_std: float = 1.0, theta_norm: float = 1.0,
    random_state=0,
) -> Dataset:
    """Gaussian linear-regression data whose population covariance has condition number ``kappa``.

    Rows ``x_i ~ N(0, Sigma)`` with ``Sigma = Q diag(geomspace(1, 1/kappa, d)) Q^T`` (``Q`` a seeded
    Haar-random rotation, so ``kappa(Sigma) = kappa`` exactly, up to float rounding), and
    ``y_i = x_i^T theta* + noise_std * N(0, 1)`` with ``||theta*||_2 = theta_norm`` (uniformly random
    direction). This is the ill-conditioned design PMT (PMT.md) is meant for.

    Parameters
    ----------
    n : int, default 20000
        Rows (>= 2).
    d : int, default 10
        Features (>= 1; with d = 1, kappa must be 1).
    kappa : float, default 1e3
        Condition number of Sigma (>= 1, finite).
    noise_std : float, default 1.0
        Standard deviation of the additive Gaussian noise (>= 0).
    theta_norm : float, default 1.0
        L2 norm of the true coefficient vector (>= 0).
    random_state : None, int or numpy.random.Generator, default 0

    Returns
    -------
    Dataset
        ``task="regression"``, features ``x0..x{d-1}``, target ``y``; ``extras`` holds
        ``theta_star`` (d,), ``Sigma`` (d, d), ``eigenvalues`` (d,), ``kappa``, ``noise_std``.

    Raises
    ------
    TypeError, ValueError
        For parameters outside the ranges above.

    Examples
    --------
    >>> ds = make_synthetic_regression(n=500, d=4, kappa=100.0, random_state=1)
    >>> ds.X.shape, round(float(np.linalg.cond(ds.extras["Sigma"])), 6)
    ((500, 4), 100.0)
    """
    noise_std = _check_float(noise_std, "noise_std", minimum=0.0)
    n, d, kappa, theta_norm, X, theta, Sigma, eig, rng = _synthetic_design(n, d, kappa, theta_norm, random_state)
    y = X @ theta + noise_std * rng.standard_normal(n)
    return _synthetic_dataset(
        "synthetic", X, y, "regression",
        f"Synthetic Gaussian linear regression: n={n}, d={d}, kappa(Sigma)={kappa:g}, "
        f"noise_std={noise_std:g}, ||theta*||={theta_norm:g}.",
        {"theta_star": theta, "Sigma": Sigma, "eigenvalues": eig, "kappa": kappa,
         "noise_std": noise_std, "theta_norm": theta_norm, "random_state": random_state},
    )


def _synthetic_dataset(name, X, y, task, description, extras):
    """Wrap synthetic arrays as a :class:`Dataset` (columns ``x0..x{d-1}``, target ``y``, no citation)."""
    names = tuple(f"x{j}" for j in range(X.shape[1]))
    return Dataset(
        name=name,
        X=pd.DataFrame(X, columns=list(names)),
        y=pd.Series(y, name="y"),
        task=task,
        feature_names=names,
        target_name="y",
        citation="",
        doi=None,
        description=description,
        extras=extras,
    )


def make_synthetic_logistic(
    *, n: int = 20000, d: int = 10, kappa: float = 100.0, theta_norm: float = 3.0, random_state=0,
) -> Dataset:
    """Gaussian logistic-regression data whose population covariance has condition number ``kappa``.

    Rows ``x_i ~ N(0, Sigma)`` as in :func:`make_synthetic_regression`; labels
    ``y_i ~ Bernoulli(sigmoid(x_i^T theta*))`` in {0, 1} with ``||theta*||_2 = theta_norm``.

    Parameters
    ----------
    n : int, default 20000
    d : int, default 10
    kappa : float, default 100.0
    theta_norm : float, default 3.0
    random_state : None, int or numpy.random.Generator, default 0

    Returns
    -------
    Dataset
        ``task="classification"``, ``y`` int64 in {0, 1}; ``extras`` as for regression (no ``noise_std``).

    Raises
    ------
    TypeError, ValueError
        For parameters outside the ranges of :func:`make_synthetic_regression`.

    Examples
    --------
    >>> ds = make_synthetic_logistic(n=400, d=3, kappa=10.0, random_state=2)
    >>> ds.task, sorted(ds.y.unique().tolist())
    ('classification', [0, 1])
    """
    n, d, kappa, theta_norm, X, theta, Sigma, eig, rng = _synthetic_design(n, d, kappa, theta_norm, random_state)
    p = 1.0 / (1.0 + np.exp(-(X @ theta)))
    y = (rng.random(n) < p).astype(np.int64)
    return _synthetic_dataset(
        "synthetic-logistic", X, y, "classification",
        f"Synthetic Gaussian logistic regression: n={n}, d={d}, kappa(Sigma)={kappa:g}, "
        f"||theta*||={theta_norm:g}.",
        {"theta_star": theta, "Sigma": Sigma, "eigenvalues": eig, "kappa": kappa,
         "theta_norm": theta_norm, "random_state": random_state},
    )


# --------------------------------------------------------------------------------------------------
