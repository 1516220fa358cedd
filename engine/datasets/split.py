"""The public/private split and standardisation by public statistics only.

:func:`public_private_split` draws a seeded public sample of ``n_pub`` rows (the "simulation" setting
of PMT.md section 2.1, where the public sample comes from the same population), and
:func:`standardize_with_public` centres and scales every feature by the PUBLIC sample's mean and
standard deviation only, so no statistic of the private rows is ever touched without noise.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd

from engine.datasets._base import Split
from engine.privacy import check_random_state

def public_private_split(X, y, *, n_pub: int, random_state) -> Split:
    """Draw a seeded public sample of ``n_pub`` rows; the rest is private.

    This is the "simulation" setting of PMT.md section 2.1: the public sample is a uniformly random
    subset of the same population (in a real deployment it would be a separate, public file).

    Parameters
    ----------
    X : array-like of shape (n, d) (or (n,), e.g. sentences)
    y : array-like of shape (n,)
    n_pub : int
        Public rows, ``1 <= n_pub <= n - 1`` (``n_pub < 1`` or ``n_pub >= n`` raise). When
        ``n_pub <= d`` (and X is 2-D) a :class:`UserWarning` says that the public second moment
        will be singular: ``(1/m) X_pub^T X_pub`` has rank <= m, so it is singular for m < d, and
        for m <= d once PMT appends the intercept column (d + 1 columns) or the features are
        centred with public statistics. Such splits are allowed because PMT.md section 2 step 1
        regularises a singular public moment (``tau * I``); ``n_pub >= d + 1`` avoids that.
    random_state : None, int or numpy.random.Generator
        Source of the permutation; the same int gives the same split.

    Returns
    -------
    Split
        Index arrays sorted ascending, disjoint, covering ``0..n-1``.

    Raises
    ------
    TypeError
        ``n_pub`` not an int; bad ``random_state``.
    ValueError
        ``n_pub < 1`` or ``n_pub >= n``; X and y of different lengths.

    Examples
    --------
    >>> X = np.arange(20.0).reshape(10, 2); y = np.arange(10.0)
    >>> s = public_private_split(X, y, n_pub=3, random_state=0)
    >>> s.X_pub.shape, s.X_priv.shape, sorted(set(s.idx_pub) | set(s.idx_priv)) == list(range(10))
    ((3, 2), (7, 2), True)
    """
    Xa = X.to_numpy() if isinstance(X, (pd.DataFrame, pd.Series)) else np.asarray(X)
    ya = y.to_numpy() if isinstance(y, (pd.DataFrame, pd.Series)) else np.asarray(y)
    if Xa.ndim not in (1, 2):
        raise ValueError(f"X must be 1-D or 2-D, got shape {Xa.shape}")
    if ya.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {ya.shape}")
    n = Xa.shape[0]
    if len(ya) != n:
        raise ValueError(f"X has {n} rows but y has {len(ya)}; they must match")
    if isinstance(n_pub, bool) or not isinstance(n_pub, numbers.Integral):
        raise TypeError(f"n_pub must be an int, got {n_pub!r}")
    n_pub = int(n_pub)
    if n_pub < 1 or n_pub >= n:
        raise ValueError(
            f"n_pub must satisfy 1 <= n_pub <= n - 1 = {n - 1} (some rows must stay private), got n_pub = {n_pub}"
        )
    d = Xa.shape[1] if Xa.ndim == 2 else None
    if d is not None and n_pub <= d:
        warnings.warn(
            f"n_pub = {n_pub} <= d = {d}: the public second-moment matrix is singular and will be regularised; "
            f"n_pub >= d + 1 = {d + 1} gives a nonsingular public moment",
            UserWarning,
            stacklevel=2,
        )
    rng = check_random_state(random_state)
    perm = rng.permutation(n)
    idx_pub = np.sort(perm[:n_pub]).astype(np.int64)
    idx_priv = np.sort(perm[n_pub:]).astype(np.int64)
    return Split(
        X_pub=Xa[idx_pub].copy(),
        y_pub=ya[idx_pub].copy(),
        X_priv=Xa[idx_priv].copy(),
        y_priv=ya[idx_priv].copy(),
        idx_pub=idx_pub,
        idx_priv=idx_priv,
    )


def standardize_with_public(split: Split) -> Split:
    """Centre and scale every feature column by the PUBLIC sample's mean and standard deviation.

    ``X -> (X - mean(X_pub)) / std(X_pub)`` (population std, ``ddof=0``) is applied to both parts;
    the target is left unchanged. The private rows' own statistics are never used, so this step
    spends no privacy budget (and the private mean is in general NOT zero afterwards).

    A column whose public std is 0 (e.g. a rare one-hot indicator absent from a small public
    sample, or ``n_pub = 1``) is only centred (scale 1), and a :class:`UserWarning` names how many
    columns that affected.

    Parameters
    ----------
    split : Split
        From :func:`public_private_split`; X parts must be numeric 2-D arrays.

    Returns
    -------
    Split
        A new split with float64 X parts and ``center``/``scale`` set (both shape (d,)).

    Raises
    ------
    TypeError
        Non-numeric features (e.g. text).

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 9.0], [6.0, 5.0], [1.0, 7.0], [3.0, 2.0]])
    >>> s = public_private_split(X, np.zeros(6), n_pub=3, random_state=0)
    >>> z = standardize_with_public(s)
    >>> np.allclose(z.X_pub.mean(axis=0), 0.0), np.allclose(z.X_pub.std(axis=0), 1.0)
    (True, True)
    """
    if not isinstance(split, Split):
        raise TypeError(f"split must be a Split, got {type(split).__name__}")
    Xp, Xq = np.asarray(split.X_pub), np.asarray(split.X_priv)
    if Xp.ndim != 2 or not np.issubdtype(Xp.dtype, np.number) or not np.issubdtype(Xq.dtype, np.number):
        raise TypeError("standardize_with_public needs numeric 2-D features (text must be embedded first)")
    Xp = Xp.astype(np.float64)
    Xq = Xq.astype(np.float64)
    center = Xp.mean(axis=0)
    std = Xp.std(axis=0)
    zero = ~(std > 0)
    if zero.any():
        warnings.warn(
            f"{int(zero.sum())} feature column(s) are constant in the public sample (public std = 0); "
            "they are centred but not scaled",
            UserWarning,
            stacklevel=2,
        )
    scale = np.where(zero, 1.0, std)
    return Split(
        X_pub=(Xp - center) / scale,
        y_pub=np.asarray(split.y_pub).copy(),
        X_priv=(Xq - center) / scale,
        y_priv=np.asarray(split.y_priv).copy(),
        idx_pub=split.idx_pub.copy(),
        idx_priv=split.idx_priv.copy(),
        center=center,
        scale=scale,
    )
