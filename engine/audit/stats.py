"""The audit's statistics: Clopper-Pearson bounds, the epsilon lower bound, the distinguishing test.

Kairouz, Oh & Viswanath (2015): for neighbouring D, D' and any test, (epsilon, delta)-DP forces
``FPR + exp(epsilon) FNR >= 1 - delta`` (and symmetrically), so one-sided Clopper-Pearson upper bounds on
a test's error rates bound epsilon from below (Jagielski, Ullman & Oprea, NeurIPS 2020; Nasr et al.,
IEEE S&P 2021). Mechanism-free: the outputs may come from anything (see :mod:`engine.audit`, whose
examples use these).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import beta, norm

from engine import privacy as P

__all__ = ["clopper_pearson_upper", "epsilon_lower_bound", "ideal_epsilon_lower_bound", "distinguishing_test",
           "separation_interval", "separation_power"]


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper confidence bound on a binomial rate.

    Parameters
    ----------
    k : int
        Observed count, ``0 <= k <= n``.
    n : int
        Number of trials, ``n >= 1``.
    alpha : float
        ``P(rate > bound) <= alpha``, ``0 < alpha < 1``.

    Returns
    -------
    float
        ``Beta.ppf(1 - alpha; k + 1, n - k)`` (1 when k = n).

    Examples
    --------
    >>> round(clopper_pearson_upper(5, 10, 0.05), 4)
    0.7776
    """
    k, n = int(k), int(n)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if k == n:
        return 1.0
    return float(beta.ppf(1.0 - alpha, k + 1, n - k))


def _eps_from_rates(fpr_ub, fnr_ub, delta):
    """max(ln((1-delta-FNR)/FPR), ln((1-delta-FPR)/FNR), 0), vectorised; 0 where undefined."""
    fpr_ub, fnr_ub = np.asarray(fpr_ub, float), np.asarray(fnr_ub, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where((1 - delta - fnr_ub > 0) & (fpr_ub > 0), np.log((1 - delta - fnr_ub) / fpr_ub), 0.0)
        b = np.where((1 - delta - fpr_ub > 0) & (fnr_ub > 0), np.log((1 - delta - fpr_ub) / fnr_ub), 0.0)
    return np.maximum(np.maximum(a, b), 0.0)


def epsilon_lower_bound(fp: int, n_neg: int, fn: int, n_pos: int, delta: float, confidence: float = 0.95):
    """Clopper-Pearson lower bound on epsilon from a test's false positives and false negatives.

    Parameters
    ----------
    fp : int
        Runs on D the test called D' (out of ``n_neg``).
    n_neg : int
    fn : int
        Runs on D' the test called D (out of ``n_pos``).
    n_pos : int
    delta : float
        ``0 < delta < 1``.
    confidence : float, default 0.95
        Joint confidence of the two one-sided bounds (each at ``1 - (1 - confidence)/2``).

    Returns
    -------
    epsilon_lb : float
        ``max(ln((1-delta-FNR_ub)/FPR_ub), ln((1-delta-FPR_ub)/FNR_ub), 0)``, in nats.
    fpr_ub, fnr_ub : float

    Source: Jagielski et al. (NeurIPS 2020), Algorithm 2; Nasr et al. (IEEE S&P 2021), Section 4.

    Examples
    --------
    >>> epsilon_lower_bound(500, 1000, 500, 1000, 1e-5)[0]
    0.0
    """
    dlt = P.validate_delta(delta)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    alpha = (1.0 - confidence) / 2.0
    fpr_ub = clopper_pearson_upper(fp, n_neg, alpha)
    fnr_ub = clopper_pearson_upper(fn, n_pos, alpha)
    return float(_eps_from_rates(fpr_ub, fnr_ub, dlt)), fpr_ub, fnr_ub


def _cp_upper_vec(k, n, alpha):
    k = np.asarray(k)
    out = np.ones(k.shape, dtype=float)
    m = k < n
    out[m] = beta.ppf(1.0 - alpha, k[m] + 1, n - k[m])
    return out


def ideal_epsilon_lower_bound(mu: float, delta: float, n_test: int, confidence: float = 0.95) -> float:
    """The bound a perfect test would certify for an exactly tight mu-GDP mechanism, with n_test runs.

    Outputs N(0, 1) on D and N(mu, 1) on D', a threshold t: ``FPR = Phi(-t)``, ``FNR = Phi(t - mu)``,
    the expected counts ``round(n_test * rate)`` go through :func:`epsilon_lower_bound`, maximised over
    t. With infinitely many runs this tends to ``gdp_epsilon(mu, delta)`` (the claim); the gap at finite
    ``n_test`` is the price of the sample size, not of the mechanism.

    Parameters
    ----------
    mu : float
        ``mu > 0`` (GDP).
    delta : float
    n_test : int
        Test runs per data set.
    confidence : float, default 0.95

    Returns
    -------
    float
        epsilon, in nats.

    Examples
    --------
    >>> a = ideal_epsilon_lower_bound(1.0, 1e-5, 1_000)
    >>> b = ideal_epsilon_lower_bound(1.0, 1e-5, 100_000)
    >>> 0 < a < b < P.gdp_epsilon(1.0, 1e-5)
    True
    """
    m = P.validate_mu(mu)
    dlt = P.validate_delta(delta)
    return _best_standard_threshold(m, dlt, int(n_test), confidence)[1]


def _best_standard_threshold(mu: float, delta: float, n_test: int, confidence: float) -> tuple[float, float]:
    """Threshold t (in units of N(0,1) vs N(mu,1)) maximising the expected Clopper-Pearson bound."""
    alpha = (1.0 - confidence) / 2.0
    t = np.linspace(-2.0, mu + 10.0, 4001)
    fp = np.rint(n_test * norm.sf(t)).astype(int)
    fn = np.rint(n_test * norm.cdf(t - mu)).astype(int)
    vals = _eps_from_rates(_cp_upper_vec(fp, n_test, alpha), _cp_upper_vec(fn, n_test, alpha), delta)
    i = int(np.argmax(vals))
    return float(t[i]), float(vals[i])


def _gaussian_threshold(s0, s1, n_test, delta, confidence):
    """The threshold for the test half, from a Gaussian fit of the train-half scores.

    Scores on D ~ N(m0, sd^2) and on D' ~ N(m1, sd^2) (m1 >= m0 by construction of the score); the
    threshold maximises the bound expected for ``n_test`` counted runs. Fitting two numbers instead of
    picking the best observed score keeps the choice from chasing the noise in the far tail.
    """
    m0, m1 = float(np.mean(s0)), float(np.mean(s1))
    sd = math.sqrt(0.5 * (float(np.var(s0)) + float(np.var(s1))))
    if not sd > 0 or not math.isfinite(sd):
        return 0.5 * (m0 + m1)
    mu = (m1 - m0) / sd
    if not mu > 0:
        return m1 + 10 * sd  # no separation: a threshold nothing crosses (gives the bound 0)
    t_std, _ = _best_standard_threshold(min(mu, 40.0), delta, n_test, confidence)
    return m0 + sd * t_std


def distinguishing_test(out0, out1, delta: float, confidence: float = 0.95) -> dict:
    """Fit a linear test on one half of the runs, count its errors on the other half, bound epsilon.

    Score ``s = x . w`` with ``w = (mean_1 - mean_0) / var`` per coordinate (train half; the
    likelihood-ratio direction for independent Gaussian coordinates). The threshold (and which side of
    it says "D'") comes from a Gaussian fit of the train-half scores: the threshold that maximises the
    expected bound for the test half's size. The reported counts and bound come from the test half only,
    so neither choice biases them.

    Parameters
    ----------
    out0, out1 : ndarray of shape (trials, k)
        Released outputs on D and D' (one row per run).
    delta : float
    confidence : float, default 0.95

    Returns
    -------
    dict
        ``epsilon_lb, fpr, fnr, fpr_ub, fnr_ub, fp, fn, n_test, n_train, threshold, mu_hat``.
    """
    X0 = np.asarray(out0, dtype=float).reshape(len(out0), -1)
    X1 = np.asarray(out1, dtype=float).reshape(len(out1), -1)
    if X0.shape != X1.shape or X0.shape[0] < 4:
        raise ValueError(f"out0 and out1 must have the same shape with >= 4 runs, got {X0.shape}, {X1.shape}")
    h = X0.shape[0] // 2
    # Robust per-coordinate standardisation on the train half (median / MAD: linear, so Gaussian outputs
    # keep their shape), then values are capped at +-1e6 scale units and NaN set to 0 so that a broken
    # mechanism whose output overflows still gets a finite score. Any fixed function of the output is a
    # valid test, so this costs no validity.
    both = np.vstack([X0[:h], X1[:h]])
    with np.errstate(invalid="ignore", over="ignore"):
        centre = np.nanmedian(np.where(np.isfinite(both), both, np.nan), axis=0)
        centre = np.where(np.isfinite(centre), centre, 0.0)
        mad = 1.4826 * np.nanmedian(np.abs(np.where(np.isfinite(both), both, np.nan) - centre), axis=0)
        mad = np.where(np.isfinite(mad) & (mad > 0), mad, 1.0)

        def z(A):
            Z = (A - centre) / mad
            return np.clip(np.nan_to_num(Z, nan=0.0, posinf=1e6, neginf=-1e6), -1e6, 1e6)

        Z0, Z1 = z(X0), z(X1)
    tr0, te0, tr1, te1 = Z0[:h], Z0[h:], Z1[:h], Z1[h:]
    diff = tr1.mean(0) - tr0.mean(0)
    var = 0.5 * (tr0.var(0) + tr1.var(0))
    w = diff / np.maximum(var, 1e-12)  # a coordinate without noise that differs gets a huge weight
    s0, s1 = tr0 @ w, tr1 @ w
    t = _gaussian_threshold(s0, s1, X0.shape[0] - h, float(delta), confidence)
    q0, q1 = te0 @ w, te1 @ w
    n_te = q0.size
    fp_te = int(np.count_nonzero(q0 > t))
    fn_te = int(np.count_nonzero(q1 <= t))
    eps_lb, fpr_ub, fnr_ub = epsilon_lower_bound(fp_te, n_te, fn_te, n_te, delta, confidence)
    sd = math.sqrt(0.5 * (float(np.var(q0)) + float(np.var(q1))))
    mu_hat = float((np.mean(q1) - np.mean(q0)) / sd) if sd > 0 else math.inf
    return {
        "epsilon_lb": eps_lb, "fp": fp_te, "fn": fn_te, "n_test": n_te, "n_train": h,
        "fpr": fp_te / n_te, "fnr": fn_te / n_te, "fpr_ub": fpr_ub, "fnr_ub": fnr_ub,
        "threshold": t, "mu_hat": abs(mu_hat),
    }


def separation_interval(s0, s1, alpha: float) -> tuple[float, float, float]:
    """Estimate the standardised separation of two samples with one-sided confidence bounds.

    ``mu_hat = (mean(s1) - mean(s0)) / sd_pooled`` (``sd_pooled^2`` the mean of the two sample variances).
    For Gaussian scores N(a, v) and N(a + mu sqrt(v), v) with m0, m1 runs, ``mu_hat`` is asymptotically
    normal with variance ``1/m0 + 1/m1 + mu^2 / (2 (m0 + m1))`` (the large-sample variance of the
    standardised mean difference, Hedges & Olkin, *Statistical Methods for Meta-Analysis*, 1985, eq. 5.14);
    the bounds are ``mu_hat -+ z_{1-alpha} sqrt(that)``, each holding with probability ``>= 1 - alpha``
    (asymptotically; checked by simulation in the tests). Non-Gaussian scores (a black-box output) get
    the same interval by the central limit theorem.

    Parameters
    ----------
    s0, s1 : array-like of shape (m0,), (m1,)
        Scores on D and on D' (``m0, m1 >= 2``).
    alpha : float
        One-sided level of each bound, ``0 < alpha < 1``.

    Returns
    -------
    mu_hat, lower, upper : float
        inf / -inf when the pooled sd is 0 and the means differ (a noise-free coordinate), 0 when both agree.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> mu_hat, lo, hi = separation_interval(rng.normal(size=20000), rng.normal(0.5, 1, size=20000), 1e-3)
    >>> bool(lo < 0.5 < hi), round(hi - lo, 3)
    (True, 0.063)
    """
    s0, s1 = np.asarray(s0, dtype=float).ravel(), np.asarray(s1, dtype=float).ravel()
    m0, m1 = s0.size, s1.size
    if m0 < 2 or m1 < 2:
        raise ValueError(f"need >= 2 scores on each side, got {m0} and {m1}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    diff = float(np.mean(s1) - np.mean(s0))
    sd = math.sqrt(0.5 * (float(np.var(s0, ddof=1)) + float(np.var(s1, ddof=1))))
    if not math.isfinite(diff) or not math.isfinite(sd):
        return math.inf, math.inf, math.inf  # an overflowing output: nothing is left of the noise
    if sd == 0.0:
        v = math.copysign(math.inf, diff) if diff != 0 else 0.0
        return v, v, v
    mu_hat = diff / sd
    se = math.sqrt(1.0 / m0 + 1.0 / m1 + mu_hat**2 / (2.0 * (m0 + m1)))
    z = float(norm.isf(alpha))
    return mu_hat, mu_hat - z * se, mu_hat + z * se


def separation_power(mu_true: float, bound: float, m: int, alpha: float) -> float:
    """Probability that :func:`separation_interval`'s lower bound (m runs per side) exceeds ``bound``
    when the true standardised separation is ``mu_true`` (normal approximation).

    Examples
    --------
    >>> round(separation_power(1.0, 1.0, 20000, 1e-3), 4)
    0.001
    """
    se = math.sqrt(2.0 / m + mu_true**2 / (4.0 * m))
    z = float(norm.isf(alpha))
    return float(norm.sf((bound + z * se - mu_true) / se))
