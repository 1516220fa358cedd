"""Bounding bias and noise, estimated from the public rows only (no privacy cost).

PipelineDP's utility analysis splits a DP aggregate's error into the bias of contribution bounding and the
variance of the noise. :func:`error_split` does the same for PMT ridge (the joint and the clip form) and the
private-only SSP baselines, **from public information only**: the public rows stand in for the private ones.
They are repeated cyclically to the private size ``n`` (public: n is public under replace-one), so every bound
(PMT's R, B_y, DP-RR's C) is the one a release on ``n`` rows uses and the statistics have the private scale;
each method is then fitted on these rows

* with the noise off (``epsilon = inf``): the **bias** is the prediction RMSE between this bounded fit and the
  unbounded least-squares fit of the public rows (``sqrt(mean((x^T (theta_bounded - theta_ols))^2))``);
* with the noise on (``seeds`` draws at the chosen epsilon): the **noise** is the RMS over draws of the
  prediction difference to the noise-off fit.

Both are in the units of y, measured on the public rows. They describe the private rows only as far as the
public rows resemble them: a heavy tail the public sample does not contain is not in the bias estimate (the
table says so: ``source``). Nothing here reads a private row.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

__all__ = ["error_split", "ERROR_SPLIT_METHODS", "ERROR_SPLIT_SOURCE"]

#: Methods :func:`error_split` covers (keys -> display names).
ERROR_SPLIT_METHODS = {"pmt": "PMT", "pmt-clip": "PMT (clip y)", "dp-rr": "DP-RR", "adassp": "AdaSSP"}
#: The provenance written into every row.
ERROR_SPLIT_SOURCE = "estimated from the public rows (repeated to the private n), no privacy cost"


def _estimator(key, **kw):
    from engine.pmt import DPRidge, PMTRidge
    from engine.pmt.adassp import AdaSSPRidge

    if key == "pmt":
        return PMTRidge(**kw)
    if key == "pmt-clip":
        return PMTRidge(response="clip", **kw)
    if key == "dp-rr":
        return DPRidge(**kw)
    if key == "adassp":
        return AdaSSPRidge(**kw)
    raise ValueError(f"method must be one of {sorted(ERROR_SPLIT_METHODS)}, got {key!r}")


def error_split(X_pub, y_pub, n: int, *, epsilon: float, delta: float = 1e-5, lam: float = 1e-3, eta: float = 0.05,
                seeds: int = 5, methods=tuple(ERROR_SPLIT_METHODS)) -> pd.DataFrame:
    """Bounding bias and noise of each method at ``epsilon``, estimated from the public rows (module docstring).

    Parameters
    ----------
    X_pub : array-like of shape (n_pub, p)
    y_pub : array-like of shape (n_pub,)
        Public rows and labels (needed: the bias is measured against their least-squares fit).
    n : int
        The private row count the bounds are computed for (public under replace-one), ``n >= n_pub``.
    epsilon : float
        ``0 < epsilon < inf``.
    delta, lam, eta : float
    seeds : int
        Noise draws per method (seeds 0..seeds-1).
    methods : sequence of str
        Keys of :data:`ERROR_SPLIT_METHODS`.

    Returns
    -------
    DataFrame
        One row per method: ``method, bias_rmse, noise_rmse, total_rmse`` (``sqrt(bias^2 + noise^2)``),
        ``frac_truncated, frac_y_clipped`` (of the repeated public rows), ``source``.

    Raises
    ------
    ValueError
        Before any fit: bad shapes, non-finite entries, ``n < n_pub``, ``epsilon`` not finite and positive,
        ``seeds < 1``, an unknown method.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = X @ [1.0, -1.0] + rng.standard_t(2, size=200)
    >>> t = error_split(X, y, 20000, epsilon=1.0, seeds=3)
    >>> t["method"].tolist()
    ['PMT', 'PMT (clip y)', 'DP-RR', 'AdaSSP']
    >>> bool((t["bias_rmse"] >= 0).all() and (t["noise_rmse"] > 0).all())
    True
    """
    Xq = np.asarray(X_pub, dtype=float)
    yq = np.asarray(y_pub, dtype=float).ravel()
    if Xq.ndim != 2 or Xq.shape[0] != yq.size or yq.size < 2:
        raise ValueError("X_pub must be 2-D with one label per row in y_pub (at least 2 public rows)")
    if not (np.all(np.isfinite(Xq)) and np.all(np.isfinite(yq))):
        raise ValueError("the public rows must be finite (no NaN or inf)")
    n = int(n)
    if n < yq.size:
        raise ValueError(f"n (the private row count) must be >= n_pub = {yq.size}, got {n}")
    eps = float(epsilon)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if int(seeds) < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds!r}")
    for m in methods:
        if m not in ERROR_SPLIT_METHODS:
            raise ValueError(f"method must be one of {sorted(ERROR_SPLIT_METHODS)}, got {m!r}")
    idx = np.arange(n) % yq.size  # the public rows repeated cyclically to n rows
    Xn, yn = Xq[idx], yq[idx]
    Xa = np.column_stack([Xq, np.ones(yq.size)])
    theta_ols = np.linalg.lstsq(Xa, yq, rcond=None)[0]

    def pred_rms(diff):
        return float(np.sqrt(np.mean((Xa @ diff) ** 2)))

    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # delta > 1/n and the like: the fits here are simulations
        for key in methods:
            off = _estimator(key, epsilon=math.inf, delta=delta, lam=lam, eta=eta).fit(Xn, yn, Xq, yq)
            bias = pred_rms(off.theta_ - theta_ols)
            noise = [pred_rms(_estimator(key, epsilon=eps, delta=delta, lam=lam, eta=eta,
                                         random_state=np.random.default_rng(s)).fit(Xn, yn, Xq, yq).theta_ - off.theta_)
                     for s in range(int(seeds))]
            noise_rms = float(np.sqrt(np.mean(np.square(noise))))
            rep = off.report_
            rows.append({"method": ERROR_SPLIT_METHODS[key], "bias_rmse": bias, "noise_rmse": noise_rms,
                         "total_rmse": math.hypot(bias, noise_rms), "frac_truncated": float(rep.frac_truncated),
                         "frac_y_clipped": float(rep.frac_y_clipped), "source": ERROR_SPLIT_SOURCE})
    return pd.DataFrame(rows)
