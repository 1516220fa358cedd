"""Empirical differential-privacy audit: a statistical lower bound on the epsilon a mechanism spends.

A proof says a mechanism is (epsilon, delta)-DP; an audit looks for evidence that it is *not*. For
two neighbouring data sets D and D' and any test that guesses "was it D or D'?" from the released
output, (epsilon, delta)-DP forces the test's error rates to satisfy (Kairouz, Oh & Viswanath 2015)::

    FPR + exp(epsilon) FNR >= 1 - delta   and   FNR + exp(epsilon) FPR >= 1 - delta

so observed error rates give a lower bound on epsilon. With one-sided Clopper-Pearson upper bounds
``FPR_ub``, ``FNR_ub`` on the true rates (each at confidence ``1 - alpha/2``, so both hold jointly
with probability at least ``confidence = 1 - alpha``; Bonferroni)::

    epsilon_lb = max( ln((1 - delta - FNR_ub) / FPR_ub), ln((1 - delta - FPR_ub) / FNR_ub), 0 )

is, with probability >= ``confidence``, below the true epsilon of the mechanism on this pair (Jagielski,
Ullman & Oprea, "Auditing Differentially Private Machine Learning", NeurIPS 2020; Nasr, Song,
Thakurta, Papernot & Carlini, "Adversary Instantiation: Lower Bounds for Differentially Private
Machine Learning", IEEE S&P 2021). A correct mechanism's ``epsilon_lb`` therefore stays below its
claimed epsilon (except with probability <= 1 - confidence); a bound above the claim is evidence of a
bug.

The harness (:func:`audit`)
---------------------------
1. **Neighbouring data sets.** ``D = base + {r}`` and ``D' = base + {r'}`` (replace-one, the relation
   the mechanisms claim by default): the replaced rows are extreme points far outside every clip radius,
   placed where they move the released statistic the most (see the per-mechanism functions).
2. **Many runs on both.** The real estimators of :mod:`engine.regression` (and :mod:`engine.glm`) are
   fitted on D and D'. Fast path: everything a fit computes before its noise is deterministic, so each
   fit is run *once* while its noise source (``ssp_noise`` / ``dp_gd_noise`` / the Newton noise) is
   made to return a stack of ``trials`` independent draws, each produced by the estimator's own noise
   function called ``trials`` times; the released statistic then comes out as a stack of ``trials``
   independent releases of exactly the mechanism. Transform, truncation, clipping, sensitivity and noise
   scale are the product's code, so a bug in any of them is caught. The hooks are applied with
   :func:`unittest.mock.patch.object` for the duration of one fit (not thread-safe: audit in one thread).
   What is observed: for sufficient-statistics perturbation (DP-PMTRR, DP-RR) the released noisy
   ``(A, b)`` (captured at the solver: white box); for DP-GD (ridge, logistic) and the noisy Newton of
   DP-PMTLR the final coefficients only (black box; the pairs are built so that they still show all, or
   a known fraction, of the pair's distinguishability).
3. **Distinguishing test.** Half of the runs (train) fix a linear score: the difference of the mean
   outputs divided by the per-coordinate variance (the likelihood-ratio test for Gaussians with
   independent coordinates, estimated), and the threshold: the one that maximises the expected bound
   under a Gaussian fit of the train-half scores. The other half (test) gives the counted false
   positives and false negatives.
4. **Bound.** Clopper-Pearson as above; also ``mu_hat``, the standardised separation of the test
   scores (a point estimate of the pair's mu-GDP), and the **ideal** bound: what a perfect test of an
   exactly tight mu-GDP mechanism (N(0,1) vs N(mu,1), mu the claimed total) would give with the same
   number of test runs and the same confidence. It shows how much of the gap to the claim is due to the
   finite number of trials.

Broken copies (teeth): ``broken="noise-0.2"`` multiplies every noise draw by 0.2 (a mis-scaled
Gaussian); ``broken="skip-clipping"`` replaces row truncation / gradient clipping by the identity while
the sensitivity is still computed from the stated radius (the "clip, then release the unclipped data"
bug, smartnoise-sdk #622); ``broken="partial-noise"`` adds no noise to some entries (the diagonal of the
symmetric noise of A or of the Newton Hessian, and coordinate 0 of the gradients: the diffprivlib #105
bug class). These live here, never in the product's estimators.

Examples
--------
>>> round(clopper_pearson_upper(0, 100, 0.05), 4)
0.0295
>>> eps_lb, fpr_ub, fnr_ub = epsilon_lower_bound(fp=10, n_neg=1000, fn=500, n_pos=1000, delta=1e-5)
>>> round(eps_lb, 3)
3.242
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import asdict, dataclass, field
from unittest import mock

import numpy as np
from scipy.optimize import minimize
from scipy.stats import beta, norm

from engine import privacy as P

__all__ = [
    "MECHANISMS",
    "BROKEN",
    "AuditResult",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "ideal_epsilon_lower_bound",
    "distinguishing_test",
    "sample_releases",
    "audit",
]

#: Deliberately broken variants the harness can run (never part of the product).
BROKEN = ("noise-0.2", "skip-clipping", "partial-noise")

#: Factor applied to every noise draw by ``broken="noise-0.2"``.
BROKEN_NOISE_FACTOR = 0.2


# --------------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# hooks on the real estimators
# --------------------------------------------------------------------------------------------
def _identity_truncate(Z, radius):
    """``truncate_rows`` with the truncation skipped (broken copy): same return contract."""
    Z = np.asarray(Z, dtype=float)
    norms = np.linalg.norm(Z, axis=1)
    return Z.copy(), norms, np.zeros(norms.shape, dtype=bool)


@contextlib.contextmanager
def _patches(*triples):
    with contextlib.ExitStack() as stack:
        for module, name, value in triples:
            stack.enter_context(mock.patch.object(module, name, value))
        yield


def _skip_clipping_patches(broken):
    import engine.pmt as pmt_mod
    import engine.regression as R

    if broken != "skip-clipping":
        return []
    out = [(pmt_mod, "truncate_rows", _identity_truncate), (R, "truncate_rows", _identity_truncate)]
    G = _glm_module()
    if G is not None and hasattr(G, "truncate_rows"):
        out.append((G, "truncate_rows", _identity_truncate))
    return out


def _drop_diagonal(M):
    """``broken="partial-noise"``: zero the noise on the diagonal of a stack of symmetric noise matrices."""
    M = M.copy()
    i = np.arange(M.shape[-1])
    M[..., i, i] = 0.0
    return M


def _noise_factor(broken) -> float:
    return BROKEN_NOISE_FACTOR if broken == "noise-0.2" else 1.0


def _ssp_releases(estimator, X, y, X_pub, y_pub, trials, rng, broken):
    """Fit ``estimator`` once with a stacked noise source; return the ``trials`` released (A, b) as rows.

    ``ssp_noise`` (the estimators' own noise function) is called ``trials`` times; ``ssp_solve`` sees
    the stacked noisy statistics, which are recorded, and solves the first one so ``fit`` completes.
    """
    import engine.regression as R

    real_noise, real_solve, real_na_solve = R.ssp_noise, R.ssp_solve, R.ridge.noise_aware_solve
    factor = _noise_factor(broken)
    captured = {}

    def stacked_noise(rng_, d):
        draws = [real_noise(rng_, d) for _ in range(trials)]
        W, w = factor * np.stack([a for a, _ in draws]), factor * np.stack([b for _, b in draws])
        return (_drop_diagonal(W) if broken == "partial-noise" else W), w

    def capturing(real):  # either solver (PMTRidge's noise-aware default or the paper's / DP-RR's)
        def capture_solve(A_priv, b_priv, penalty, *args, **kw):
            captured["A"], captured["b"] = np.asarray(A_priv), np.asarray(b_priv)
            return real(np.asarray(A_priv)[0], np.asarray(b_priv)[0], penalty, *args, **kw)
        return capture_solve

    est = estimator.set_params(random_state=rng)
    with _patches((R, "ssp_noise", stacked_noise), (R, "ssp_solve", capturing(real_solve)),
                  (R.ridge, "noise_aware_solve", capturing(real_na_solve)), *_skip_clipping_patches(broken)):
        est.fit(X, y, X_pub, y_pub)
    A, b = captured["A"], captured["b"]
    if A.ndim != 3 or A.shape[0] != trials:
        raise RuntimeError(f"expected {trials} stacked releases, got A of shape {A.shape}")
    d = A.shape[-1]
    iu = np.triu_indices(d)
    return np.hstack([A[:, iu[0], iu[1]], b]), est


def _dpgd_releases(estimator, X, y, X_pub, y_pub, trials, rng, broken):
    """Fit DP-GD once with ``trials`` runs as matrix columns; return the final coefficients (d per run).

    ``dp_gd_noise`` (the estimator's own) is called ``trials`` times; ``dp_gd_ridge_path`` runs all of
    them at once (it is built for runs as columns). ``broken="skip-clipping"`` passes ``clip_norm=inf``
    to the path while the estimator's sensitivity still uses the stated C.
    """
    import engine.regression as R

    real_noise, real_path = R.dp_gd_noise, R.dp_gd_ridge_path
    factor = _noise_factor(broken)
    captured = {}

    def record_noise(rng_, T, d):
        captured["rng"] = rng_
        return real_noise(rng_, T, d)

    def stacked_path(Xa, y_, *, noise, sigma, clip_norm, **kw):
        T, d = noise.shape[0], noise.shape[1]
        more = [real_noise(captured["rng"], T, d)[:, :, None] for _ in range(trials - 1)]
        full = factor * np.concatenate([noise] + more, axis=2)
        if broken == "partial-noise":
            full[:, 0, :] = 0.0  # no noise on coefficient 0's gradient
        C = math.inf if broken == "skip-clipping" else clip_norm
        theta, frac = real_path(Xa, y_, noise=full, sigma=np.full(trials, float(sigma[0])), clip_norm=C, **kw)
        captured["theta"] = theta
        return theta[:, :1], frac[:1]

    est = estimator.set_params(random_state=rng)
    with _patches((R, "dp_gd_noise", record_noise), (R, "dp_gd_ridge_path", stacked_path)):
        est.fit(X, y, X_pub, y_pub)
    return captured["theta"].T.copy(), est


def _glm_module():
    """engine.glm (the logistic estimators), or None while it is not available."""
    try:
        import engine.glm as G
    except ImportError:  # pragma: no cover - before the logistic estimators land
        return None
    return G


def _newton_releases(estimator, X, y, X_pub, trials, rng, broken):
    """Fit a noisy-Newton estimator once with ``trials`` runs; return the final whitened iterates.

    ``newton_noise`` (the estimator's own) is drawn ``trials`` times from the estimator's generator and
    ``noisy_newton`` (built for many runs) iterates all of them; the estimator keeps run 0.
    """
    import dataclasses

    G = _glm_module()
    real_noise, real_newton = G.newton_noise, G.noisy_newton
    factor = _noise_factor(broken)
    captured = {}

    def stacked_newton(Z, y_, *, sigma_g, sigma_H, noise_g, noise_H, n_steps, **kw):
        more = [real_noise(rng, n_steps, Z.shape[1]) for _ in range(trials - 1)]
        ng = factor * np.concatenate([noise_g] + [g[:, None, :] for _, g in more], axis=1)
        nH = factor * np.concatenate([noise_H] + [H[:, None] for H, _ in more], axis=1)
        if broken == "partial-noise":
            ng[:, :, 0] = 0.0
            nH = _drop_diagonal(nH)
        res = real_newton(Z, y_, sigma_g=np.full(trials, float(sigma_g[0])), sigma_H=np.full(trials, float(sigma_H[0])),
                          noise_g=ng, noise_H=nH, n_steps=n_steps, **kw)
        captured["theta"] = res.theta
        return dataclasses.replace(res, **{f.name: getattr(res, f.name)[:1] for f in dataclasses.fields(res)
                                           if isinstance(getattr(res, f.name), np.ndarray)})

    est = estimator.set_params(random_state=rng)
    with _patches((G, "noisy_newton", stacked_newton), *_skip_clipping_patches(broken)):
        est.fit(X, y, X_pub)
    return np.asarray(captured["theta"]), est


def _dpgd_logistic_releases(estimator, X, y, X_pub, trials, rng, broken):
    """DP-GD (logistic) with ``trials`` runs as matrix columns; the gradient noise is drawn the way the
    estimator draws it (``engine.privacy.gaussian_noise((T, d), 1, rng)``) from the estimator's generator."""
    G = _glm_module()
    real_path = G.dp_gd_logistic_path
    factor = _noise_factor(broken)
    captured = {}

    def stacked_path(Xa, y_, *, noise, sigma, clip_norm, **kw):
        T, d = noise.shape[0], noise.shape[1]
        more = [P.gaussian_noise((T, d), 1.0, rng)[:, :, None] for _ in range(trials - 1)]
        full = factor * np.concatenate([noise] + more, axis=2)
        if broken == "partial-noise":
            full[:, 0, :] = 0.0
        C = math.inf if broken == "skip-clipping" else clip_norm
        theta, frac = real_path(Xa, y_, noise=full, sigma=np.full(trials, float(sigma[0])), clip_norm=C, **kw)
        captured["theta"] = theta
        return theta[:, :1], frac[:1]

    est = estimator.set_params(random_state=rng)
    with _patches((G, "dp_gd_logistic_path", stacked_path)):
        est.fit(X, y, X_pub)
    return captured["theta"].T.copy(), est


# --------------------------------------------------------------------------------------------
# neighbouring data sets
# --------------------------------------------------------------------------------------------
def _upper_tri_norm(M) -> float:
    iu = np.triu_indices(M.shape[0])
    return float(np.linalg.norm(M[iu]))


def _ssp_canary_directions(Q, seed=0):
    """Unit vectors u1, u2 in span(Q) maximising the SSP release's distinguishability.

    With ``z = R u1, y = +B`` on D and ``z' = R u2, y' = -B`` on D', the noisy upper triangle of A (mu/sqrt2,
    sensitivity sqrt2 R^2) and b (mu/sqrt2, sensitivity 2 R B) separate the pair by
    ``mu_pair^2 = (mu^2/2) (ut(u1 u1^T - u2 u2^T)^2 / 2 + ||u1 + u2||^2 / 4)``. A and b cannot both reach
    their sensitivity with one pair (A wants u1 orthogonal to u2, b wants u1 = u2), so the best pair
    reaches about 0.88 mu (coordinate-aligned u's, cos(u1, u2) ~ 0.17); the replace-one accounting is
    that much conservative for SSP. Returns (u1, u2, ratio mu_pair / mu).
    """
    p = Q.shape[1]

    def unpack(v):
        a, b = Q @ v[:p], Q @ v[p:]
        return a / np.linalg.norm(a), b / np.linalg.norm(b)

    def neg(v):
        u1, u2 = unpack(v)
        return -(_upper_tri_norm(np.outer(u1, u1) - np.outer(u2, u2)) ** 2 / 2 + np.sum((u1 + u2) ** 2) / 4)

    rng = np.random.default_rng(seed)
    starts = [np.concatenate([np.eye(p)[0], np.eye(p)[min(1, p - 1)] + 0.2 * np.eye(p)[0]])]
    starts += [rng.normal(size=2 * p) for _ in range(8)]
    best = min((minimize(neg, s, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
                for s in starts), key=lambda r: r.fun)
    u1, u2 = unpack(best.x)
    return u1, u2, math.sqrt(-best.fun / 2.0)


def _base_regression_data(n, p, n_pub, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n - 1, p))
    y = X @ np.linspace(1.0, -1.0, p) + 0.5 * rng.normal(size=n - 1)
    X_pub = rng.normal(size=(n_pub, p))
    y_pub = X_pub @ np.linspace(1.0, -1.0, p) + 0.5 * rng.normal(size=n_pub)
    return X, y, X_pub, y_pub


#: Size of the extreme rows relative to the clip radius (they are clipped / truncated by a factor ~1e6).
EXTREME = 1e6


def _ssp_pair(kind, n, p, n_pub, eta, seed):
    """D, D' for DP-PMTRR (``kind="pmt"``) or DP-RR (``"rr"``), and the pair's attainable mu / mu."""
    from engine.pmt import pmt_radius, public_moment, response_bound

    X, y, X_pub, y_pub = _base_regression_data(n, p, n_pub, seed)
    d = p + 1
    if kind == "pmt":
        mom = public_moment(X_pub, fit_intercept=True)
        S_half, S_inv_half = mom.Sigma_pub_sqrt, mom.Sigma_pub_inv_sqrt
    else:
        S_half = S_inv_half = np.eye(d)
    # whitened directions reachable by raw rows [x; 0] (the intercept coordinate fixed at 0 in the limit)
    Q, _ = np.linalg.qr(S_inv_half.T @ np.vstack([np.eye(p), np.zeros((1, p))]))
    u1, u2, ratio = _ssp_canary_directions(Q)
    R = pmt_radius(d, n, eta)
    B = response_bound(y_pub, n, eta)
    rows = []
    for u in (u1, u2):
        v = S_half.T @ u  # raw row W^{-T} u = [x_direction; ~0]
        rows.append(EXTREME * R * v[:p])
    X0 = np.vstack([X, rows[0]])
    X1 = np.vstack([X, rows[1]])
    y0 = np.append(y, EXTREME * B)
    y1 = np.append(y, -EXTREME * B)
    return (X0, y0), (X1, y1), X_pub, y_pub, ratio


def _dpgd_pair(n, p, n_pub, seed):
    """D, D' for DP-GD: the base rows have feature 0 identically 0; the replaced row is x = e_0, y = +-K.

    Its per-example gradient ``2 (x^T theta - y) [x; 1]`` is always clipped to norm C, pointing along
    +-(e_0 + tiny intercept part), and nothing else moves coefficient 0: the final coefficient 0 is
    ``-step * sum_t (+-C'/n + sigma z_t)``, a Gaussian separated by exactly the claimed mu (lam = 0).
    """
    X, y, X_pub, y_pub = _base_regression_data(n, p, n_pub, seed)
    X[:, 0] = 0.0
    x_c = np.zeros(p)
    x_c[0] = EXTREME
    K = EXTREME**2
    return (np.vstack([X, x_c]), np.append(y, K)), (np.vstack([X, x_c]), np.append(y, -K)), X_pub, y_pub, 1.0


def _base_logistic_data(n, p, n_pub, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n - 1, p))
    y = (rng.random(n - 1) < 1.0 / (1.0 + np.exp(-X @ np.linspace(1.0, -1.0, p)))).astype(int)
    y[:2] = (0, 1)  # both classes, whatever the seed
    return X, y, rng.normal(size=(n_pub, p))


#: Whitened norm of the DP-PMTLR canary rows, in units of R (truncated to R by a correct mechanism).
PMTLR_CANARY_SCALE = 10.0


def _pmtlr_pair(n, p, n_pub, seed, orthogonal=False):
    """D, D' for DP-PMTLR: the same extreme row (along the first whitened axis, ``PMTLR_CANARY_SCALE * R``
    before truncation) with label 0 on D and 1 on D'.

    Its Hessian terms are identical and its gradient terms differ by exactly ``x~ / n`` (norm R/n) at every
    step, whatever theta~: the pair is ``mu / (2 sqrt 2)`` GDP. No replace-one pair reaches the stated
    gradient sensitivity ``2R/n`` for the logistic loss (the coefficients ``b'(u) - y`` of two rows cannot
    be +1 and -1 on the same direction), so the accounting is conservative and the audit of DP-PMTLR stays
    well below the claim. ``orthogonal=True`` puts the rows of D and D' on two orthogonal axes (the Hessian
    terms then differ by the full sensitivity at theta~ = 0), which a test on the final iterate sees less
    well (kept for experiments)."""
    from engine.pmt import pmt_radius, public_moment

    X, y, X_pub = _base_logistic_data(n, p, n_pub, seed)
    mom = public_moment(X_pub, fit_intercept=True)
    Q, _ = np.linalg.qr(mom.Sigma_pub_inv_sqrt.T @ np.vstack([np.eye(p), np.zeros((1, p))]))
    R = pmt_radius(p + 1, n, 0.05)
    rows = [PMTLR_CANARY_SCALE * R * (mom.Sigma_pub_sqrt.T @ Q[:, j])[:p] for j in ((0, 1) if orthogonal else (0, 0))]
    return (np.vstack([X, rows[0]]), np.append(y, 0)), (np.vstack([X, rows[1]]), np.append(y, 1)), X_pub


def _newton_raw_pair(n, p, n_pub, seed):
    """D, D' for DP-Newton (raw rows clipped at C): the same extreme row ``10 C e_0`` with label 0 on D and 1
    on D'; clipped to norm ~C, its gradient terms differ by exactly ``x_clipped / n`` at every step, so the
    pair is ``mu / (2 sqrt 2)`` GDP as for DP-PMTLR."""
    from engine.pmt import pmt_radius

    X, y, X_pub = _base_logistic_data(n, p, n_pub, seed)
    C = pmt_radius(p + 1, n, 0.05)
    x_c = np.zeros(p)
    x_c[0] = PMTLR_CANARY_SCALE * C
    return (np.vstack([X, x_c]), np.append(y, 0)), (np.vstack([X, x_c]), np.append(y, 1)), X_pub


def _sample_newton(kind):
    def sampler(epsilon, delta, trials, seed, broken, n):
        G = _glm_module()
        p, n_pub = 2, 200
        pair = _pmtlr_pair if kind == "pmt" else _newton_raw_pair
        (X0, y0), (X1, y1), X_pub = pair(n, p, n_pub, seed)
        cls = G.PMTLogistic if kind == "pmt" else G.DPNewtonLogistic
        make = lambda: cls(epsilon=epsilon, delta=delta, lam=0.0, n_steps=PMTLR_AUDIT_STEPS)  # noqa: E731
        ss = np.random.SeedSequence([int(seed), 13 if kind == "pmt" else 19])
        r0, r1 = (np.random.default_rng(s) for s in ss.spawn(2))
        out0, est = _newton_releases(make(), X0, y0, X_pub, trials, r0, broken)
        out1, _ = _newton_releases(make(), X1, y1, X_pub, trials, r1, broken)
        # Same row, labels 0 / 1: the gradient terms differ by exactly x~/n (norm R/n) at EVERY step, the
        # Hessian terms not at all, so over T steps the pair is sqrt(T) mu_0 / 2 = mu / (2 sqrt 2) GDP, exactly.
        return out0, out1, {"mu_claimed": est.report_.mu, "pair_mu_ratio": 1.0 / (2.0 * math.sqrt(2.0)), "n": n,
                            "d": p + 1, "noise_scales": dict(est.report_.noise_scales), "n_steps": PMTLR_AUDIT_STEPS}
    return sampler


#: Newton steps in the DP-PMTLR audit (the estimator's default T = 5).
PMTLR_AUDIT_STEPS = 5


def _sample_dpgd_logistic(epsilon, delta, trials, seed, broken, n):
    """D, D': base rows with feature 0 identically 0; the replaced row is ``x = M e_0`` (M = 40 C) with label
    0 on D and 1 on D'. A small explicit step size keeps its logit near 0, so ``|s - y| ~ 1/2`` and its
    gradient (norm ~ M/2 = 20 C) is clipped to C at every step, with opposite signs on D and D': the
    final coefficient 0 is Gaussian and separated by exactly the claimed mu."""
    from engine.pmt import pmt_radius

    G = _glm_module()
    p, n_pub, eta, T = 2, 200, 0.05, DPGD_AUDIT_STEPS
    X, y, X_pub = _base_logistic_data(n, p, n_pub, seed)
    X[:, 0] = 0.0
    C = pmt_radius(p + 1, n, eta)  # the estimator's default clip norm (public)
    M = 40.0 * C
    x_c = np.zeros(p)
    x_c[0] = M
    mu = P.gdp_mu(epsilon, delta)
    step = 0.05 * n * mu / (2.0 * M * C * T)  # logit spread M * step * 2 C T / (n mu) = 0.05
    X0, y0 = np.vstack([X, x_c]), np.append(y, 0)
    X1, y1 = np.vstack([X, x_c]), np.append(y, 1)
    make = lambda: G.DPGDLogistic(epsilon=epsilon, delta=delta, lam=0.0, n_steps=T, step_size=step, eta=eta)  # noqa: E731
    ss = np.random.SeedSequence([int(seed), 17])
    r0, r1 = (np.random.default_rng(s) for s in ss.spawn(2))
    out0, est = _dpgd_logistic_releases(make(), X0, y0, X_pub, trials, r0, broken)
    out1, _ = _dpgd_logistic_releases(make(), X1, y1, X_pub, trials, r1, broken)
    return out0, out1, {"mu_claimed": est.report_.mu, "pair_mu_ratio": 1.0, "n": n, "d": p + 1,
                        "noise_scales": dict(est.report_.noise_scales), "n_steps": T, "step_size": step}


# --------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Mechanism:
    name: str
    label: str
    released: str
    sampler: object  # (epsilon, delta, trials, seed, broken, n) -> (out0, out1, info)


def _sample_ssp(kind):
    def sampler(epsilon, delta, trials, seed, broken, n):
        from engine.regression import DPRidge, PMTRidge

        p, n_pub, eta = 2, 200, 0.05
        (X0, y0), (X1, y1), X_pub, y_pub, ratio = _ssp_pair(kind, n, p, n_pub, eta, seed)
        make = (lambda: PMTRidge(epsilon=epsilon, delta=delta, lam=0.0, eta=eta)) if kind == "pmt" else (
            lambda: DPRidge(epsilon=epsilon, delta=delta, lam=0.0, eta=eta))
        ss = np.random.SeedSequence([int(seed), 7])
        r0, r1 = (np.random.default_rng(s) for s in ss.spawn(2))
        out0, est = _ssp_releases(make(), X0, y0, X_pub, y_pub, trials, r0, broken)
        out1, _ = _ssp_releases(make(), X1, y1, X_pub, y_pub, trials, r1, broken)
        return out0, out1, {"mu_claimed": est.report_.mu, "pair_mu_ratio": ratio, "n": n, "d": p + 1,
                            "noise_scales": dict(est.report_.noise_scales)}
    return sampler


def _sample_dpgd_ridge(epsilon, delta, trials, seed, broken, n):
    from engine.regression import DPGDRidge

    p, n_pub = 2, 200
    (X0, y0), (X1, y1), X_pub, y_pub, ratio = _dpgd_pair(n, p, n_pub, seed)
    make = lambda: DPGDRidge(epsilon=epsilon, delta=delta, lam=0.0, n_steps=DPGD_AUDIT_STEPS)  # noqa: E731
    ss = np.random.SeedSequence([int(seed), 11])
    r0, r1 = (np.random.default_rng(s) for s in ss.spawn(2))
    out0, est = _dpgd_releases(make(), X0, y0, X_pub, y_pub, trials, r0, broken)
    out1, _ = _dpgd_releases(make(), X1, y1, X_pub, y_pub, trials, r1, broken)
    return out0, out1, {"mu_claimed": est.report_.mu, "pair_mu_ratio": ratio, "n": n, "d": p + 1,
                        "noise_scales": dict(est.report_.noise_scales), "n_steps": DPGD_AUDIT_STEPS}


#: DP-GD steps used in the audit (fewer than the default 100 to keep it fast; the accounting splits mu
#: over whatever T is used, so the audited claim is the same).
DPGD_AUDIT_STEPS = 20

MECHANISMS: dict[str, _Mechanism] = {
    "dp-pmtrr": _Mechanism("dp-pmtrr", "DP-PMTRR (PMTRidge)", "noisy (A, b) at the solver", _sample_ssp("pmt")),
    "dp-rr": _Mechanism("dp-rr", "DP-RR (DPRidge)", "noisy (A, b) at the solver", _sample_ssp("rr")),
    "dp-gd-ridge": _Mechanism("dp-gd-ridge", "DP-GD ridge (DPGDRidge)", "final coefficients", _sample_dpgd_ridge),
}
if _glm_module() is not None and hasattr(_glm_module(), "PMTLogistic"):
    MECHANISMS["dp-pmtlr"] = _Mechanism("dp-pmtlr", "DP-PMTLR (PMTLogistic)", "final whitened coefficients",
                                        _sample_newton("pmt"))
    MECHANISMS["dp-newton"] = _Mechanism("dp-newton", "DP-Newton logistic (DPNewtonLogistic)",
                                         "final coefficients", _sample_newton("raw"))
    MECHANISMS["dp-gd-logistic"] = _Mechanism("dp-gd-logistic", "DP-GD logistic (DPGDLogistic)",
                                              "final coefficients", _sample_dpgd_logistic)


def sample_releases(mechanism: str, *, epsilon: float, delta: float, trials: int, seed: int = 0,
                    broken: str | None = None, n: int = 100):
    """Run a mechanism ``trials`` times on D and on D' (see the module docstring).

    Parameters
    ----------
    mechanism : str
        A key of :data:`MECHANISMS`.
    epsilon, delta : float
        The claimed (epsilon, delta) the estimator is configured with.
    trials : int
        Runs per data set, ``>= 4``.
    seed : int, default 0
        Seeds the data, the pair and the noise.
    broken : None or one of :data:`BROKEN`
    n : int, default 100
        Private rows (the replaced one included).

    Returns
    -------
    out0, out1 : ndarray of shape (trials, k)
    info : dict
        ``mu_claimed`` (the estimator's own total mu), ``pair_mu_ratio`` (the best mu this pair can show
        over the claimed mu, by design), sizes and noise scales.
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    if broken is not None and broken not in BROKEN:
        raise ValueError(f"broken must be None or one of {', '.join(BROKEN)}, got {broken!r}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 4:
        raise ValueError(f"trials must be an integer >= 4, got {trials!r}")
    eps = P.validate_epsilon(epsilon)
    dlt = P.validate_delta(delta)
    return MECHANISMS[mechanism].sampler(eps, dlt, int(trials), int(seed), broken, int(n))


@dataclass
class AuditResult:
    """One audit: the claim, the certified lower bound and what it rests on.

    Attributes
    ----------
    mechanism, label : str
    broken : str or None
    epsilon, delta : float
        The claim.
    mu_claimed : float
        The estimator's own total mu-GDP.
    trials : int
        Runs per data set (half train, half test).
    epsilon_lb : float
        Clopper-Pearson lower bound on epsilon at ``confidence`` (nats).
    ideal_epsilon_lb : float
        What a perfect test would certify for an exactly tight ``mu_claimed`` mechanism with the same
        number of test runs (:func:`ideal_epsilon_lower_bound`).
    ideal_pair_epsilon_lb : float
        The same for ``pair_mu_ratio * mu_claimed``: the best this pair and these trials can show for a
        correct mechanism.
    mu_hat : float
        Standardised separation of the test scores (point estimate of the pair's mu).
    pair_mu_ratio : float
        The largest mu / mu_claimed this pair can show if the mechanism is exactly as calibrated.
    fp, fn, n_test : int
    fpr_ub, fnr_ub : float
    confidence : float
    violation : bool
        ``epsilon_lb > epsilon``: evidence that the mechanism does not meet its claim.
    seconds : float
    """

    mechanism: str
    label: str
    broken: str | None
    epsilon: float
    delta: float
    mu_claimed: float
    trials: int
    epsilon_lb: float
    ideal_epsilon_lb: float
    ideal_pair_epsilon_lb: float
    mu_hat: float
    pair_mu_ratio: float
    fp: int
    fn: int
    n_test: int
    fpr_ub: float
    fnr_ub: float
    confidence: float
    violation: bool
    seed: int
    released: str
    seconds: float
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def audit(mechanism: str, *, epsilon: float, delta: float = 1e-5, trials: int = 20_000, seed: int = 0,
          broken: str | None = None, confidence: float = 0.95, n: int = 100) -> AuditResult:
    """Audit a mechanism: neighbouring data sets, many runs, a distinguishing test, a bound on epsilon.

    Parameters
    ----------
    mechanism : str
        ``"dp-pmtrr"``, ``"dp-rr"``, ``"dp-gd-ridge"`` (and ``"dp-pmtlr"``, ``"dp-newton"``, ``"dp-gd-logistic"`` when
        :mod:`engine.glm` provides them): see :data:`MECHANISMS`.
    epsilon : float
        Claimed epsilon, ``0 < epsilon < inf``.
    delta : float, default 1e-5
        ``0 < delta < 1``.
    trials : int, default 20000
        Runs per data set (half fix the test, half are counted).
    seed : int, default 0
    broken : None, "noise-0.2", "skip-clipping" or "partial-noise"
        Audit a deliberately broken copy instead (see the module docstring).
    confidence : float, default 0.95
    n : int, default 100
        Private rows.

    Returns
    -------
    AuditResult

    Raises
    ------
    ValueError
        Unknown mechanism or broken variant, trials < 4, epsilon/delta out of range.

    Examples
    --------
    >>> r = audit("dp-rr", epsilon=2.0, trials=2000, seed=1)
    >>> r.violation, 0 <= r.epsilon_lb < 2.0
    (False, True)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    t0 = time.perf_counter()
    out0, out1, info = sample_releases(mechanism, epsilon=epsilon, delta=delta, trials=trials, seed=seed,
                                       broken=broken, n=n)
    test = distinguishing_test(out0, out1, delta, confidence)
    mu_c = float(info["mu_claimed"])
    ideal = ideal_epsilon_lower_bound(mu_c, delta, test["n_test"], confidence)
    ratio = float(info["pair_mu_ratio"])  # nan: not known in closed form for this pair
    ideal_pair = (ideal_epsilon_lower_bound(mu_c * ratio, delta, test["n_test"], confidence)
                  if math.isfinite(ratio) else math.nan)
    m = MECHANISMS[mechanism]
    return AuditResult(
        mechanism=mechanism, label=m.label, broken=broken, epsilon=float(epsilon), delta=float(delta),
        mu_claimed=mu_c, trials=int(trials), epsilon_lb=test["epsilon_lb"], ideal_epsilon_lb=ideal,
        ideal_pair_epsilon_lb=ideal_pair,
        mu_hat=test["mu_hat"], pair_mu_ratio=float(info["pair_mu_ratio"]), fp=test["fp"], fn=test["fn"],
        n_test=test["n_test"], fpr_ub=test["fpr_ub"], fnr_ub=test["fnr_ub"], confidence=confidence,
        violation=bool(test["epsilon_lb"] > float(epsilon)), seed=int(seed), released=m.released,
        seconds=time.perf_counter() - t0,
        extra={k: v for k, v in info.items() if k not in ("mu_claimed", "pair_mu_ratio")},
    )
