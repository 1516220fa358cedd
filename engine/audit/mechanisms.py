"""The audited mechanisms: neighbouring data sets D, D' per mechanism, their samplers and the registry.

For each mechanism the replaced rows are extreme points far outside every clip radius, placed where they
move the released statistic the most, and ``pair_mu_ratio`` says how much of the claimed mu the pair can
show if the mechanism is exactly as calibrated (see :mod:`engine.audit`). :data:`MECHANISMS` maps a name
to its sampler; :func:`sample_releases` runs one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from engine import privacy as P
from engine.pmt import DPGDLogistic, DPNewtonLogistic, PMTLogistic, PMTPoisson
from engine.audit.hooks import (
    BROKEN,
    _dpgd_logistic_releases,
    _dpgd_releases,
    _newton_releases,
    _ssp_releases,
)

__all__ = ["MECHANISMS", "sample_releases", "logistic_gradient_worst_pair"]


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
        v = S_half.T @ u  # raw row W^{-T} u = [x_direction; ~0] (W the whitening, x~ = W^T x)
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
    step, whatever theta~: the pair is ``mu / (2 sqrt 2)`` GDP, so this audit stays well below the claim.
    That is a property of *this* pair, not of the mechanism: the stated gradient sensitivity ``2R/n`` is
    attained (:func:`logistic_gradient_worst_pair`: two nearly parallel rows with opposite labels, at a
    large ``||theta~||`` nearly orthogonal to them, have coefficients ``b'(u) - y`` of +1 and -1), so the
    accounting is tight, not conservative. ``orthogonal=True`` puts the rows of D and D' on two orthogonal
    axes (the Hessian terms then differ by the full sensitivity at theta~ = 0), which a test on the final iterate sees less
    well (kept for experiments)."""
    from engine.pmt import pmt_radius, public_moment

    X, y, X_pub = _base_logistic_data(n, p, n_pub, seed)
    mom = public_moment(X_pub, fit_intercept=True)
    Q, _ = np.linalg.qr(mom.Sigma_pub_inv_sqrt.T @ np.vstack([np.eye(p), np.zeros((1, p))]))
    R = pmt_radius(p + 1, n, 0.05)
    rows = [PMTLR_CANARY_SCALE * R * (mom.Sigma_pub_sqrt.T @ Q[:, j])[:p] for j in ((0, 1) if orthogonal else (0, 0))]
    return (np.vstack([X, rows[0]]), np.append(y, 0)), (np.vstack([X, rows[1]]), np.append(y, 1)), X_pub


def logistic_gradient_worst_pair(R: float, n: int, *, d: int = 2, eps: float = 1e-9, margin: float = 50.0):
    """A replace-one pair whose averaged logistic gradients differ by exactly ``2R/n`` (issue 12).

    Rows ``z1 = R (u + eps v) / ||.||`` with label 0 and ``z2 = R (u - eps v) / ||.||`` with label 1 (u, v
    orthonormal, nearly parallel rows), evaluated at ``theta~ = K v`` with ``K eps R / sqrt(1 + eps^2) =
    margin``: ``sigmoid(z1 . theta~) - 0 = 1`` and ``sigmoid(z2 . theta~) - 1 = -1`` to float precision
    (``margin = 50``: ``e^{-50} ~ 2e-22``), so the gradient terms are ``z1`` and ``-z2`` and the averaged
    gradients of D (row z1) and D' (row z2) differ by ``(z1 + z2) / n = 2R u / (n sqrt(1 + eps^2))``:
    ``2R/n`` in float64 for ``eps = 1e-9``. Such a ``theta~`` is reachable by noisy Newton (the iterate is
    noisy, hence anywhere), which is why the replace-one sensitivity must be ``2R/n`` and not less.

    Parameters
    ----------
    R : float
        Row radius (PMT's R, or DP-Newton's C).
    n : int
        Private rows (the averaging).
    d : int, default 2
        Dimension (>= 2).
    eps : float, default 1e-9
        Half-angle between the two rows (radians, approximately).
    margin : float, default 50.0
        ``|z . theta~|`` of each row.

    Returns
    -------
    (z1, y1), (z2, y2), theta, diff : tuple
        The two rows and labels, the evaluation point and ``||g(D) - g(D')||`` for that replaced row.

    Examples
    --------
    >>> *_, diff = logistic_gradient_worst_pair(3.0, 100)
    >>> diff == 2 * 3.0 / 100
    True
    """
    from scipy.special import expit

    if d < 2:
        raise ValueError(f"d must be >= 2 (two directions are needed), got {d}")
    u, v = np.eye(d)[0], np.eye(d)[1]
    z1 = R * (u + eps * v) / math.hypot(1.0, eps)
    z2 = R * (u - eps * v) / math.hypot(1.0, eps)
    theta = (margin * math.hypot(1.0, eps) / (eps * R)) * v
    g1 = (expit(z1 @ theta) - 0.0) * z1 / n
    g2 = (expit(z2 @ theta) - 1.0) * z2 / n
    return (z1, 0), (z2, 1), theta, float(np.linalg.norm(g1 - g2))


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
        p, n_pub = 2, 200
        pair = _pmtlr_pair if kind == "pmt" else _newton_raw_pair
        (X0, y0), (X1, y1), X_pub = pair(n, p, n_pub, seed)
        cls = PMTLogistic if kind == "pmt" else DPNewtonLogistic
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


#: B_theta of the DP-PMT Poisson audit (whitened units). With R ~ 5.3 (n = 100, d = 3) the predictor bound
#: R B_theta ~ 2.6 keeps e^{R B_theta} ~ 14 moderate, and y_max is set to that value, so G = y_max = H.
POISSON_AUDIT_THETA_RADIUS = 1.0


def _base_poisson_data(n, p, n_pub, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n - 1, p))
    y = rng.poisson(np.exp(0.3 * X @ np.linspace(1.0, -1.0, p))).astype(float)
    return X, y, rng.normal(size=(n_pub, p))


def _pmt_poisson_pair(n, p, n_pub, seed, theta_radius=POISSON_AUDIT_THETA_RADIUS):
    """D, D' for DP-PMT Poisson and the public ``y_max``.

    The same extreme row (along the first whitened axis, ``PMTLR_CANARY_SCALE * R`` before truncation, so a
    correct mechanism truncates it to norm R) with count 0 on D and ``10 y_max`` on D' (clipped to
    ``y_max``). ``y_max = e^{R B_theta}``, so ``G = max(e^{R B_theta}, y_max) = y_max``. The row's gradient
    terms ``(e^u - y) x~`` differ by exactly ``y_max x~ / n`` (norm ``y_max R / n = G R / n``, half of the
    stated ``2 R G / n``) at every step, whatever theta~ (u is the same on both sides), and its Hessian terms
    ``e^u x~ x~^T`` are identical: over T steps (each a gradient and a Hessian release at ``mu / sqrt(2T)``)
    the pair is ``sqrt(T) mu / (2 sqrt(2T)) = mu / (2 sqrt 2)`` GDP, exactly as the DP-PMTLR pair.
    With one row and counts in ``[0, y_max]`` a larger gradient gap needs ``e^u`` on both ends of the range
    at once (impossible at one theta~ for parallel rows), so this pair is the natural analogue of the
    logistic one, not a proof that ``2 R G / n`` is attained."""
    from engine.pmt import pmt_radius, public_moment

    X, y, X_pub = _base_poisson_data(n, p, n_pub, seed)
    mom = public_moment(X_pub, fit_intercept=True)
    Q, _ = np.linalg.qr(mom.Sigma_pub_inv_sqrt.T @ np.vstack([np.eye(p), np.zeros((1, p))]))
    R = pmt_radius(p + 1, n, 0.05)
    y_max = math.exp(R * theta_radius)
    row = PMTLR_CANARY_SCALE * R * (mom.Sigma_pub_sqrt.T @ Q[:, 0])[:p]
    return ((np.vstack([X, row]), np.append(y, 0.0)), (np.vstack([X, row]), np.append(y, 10.0 * y_max)), X_pub,
            y_max)


def _sample_pmt_poisson(epsilon, delta, trials, seed, broken, n):
    p, n_pub, B = 2, 200, POISSON_AUDIT_THETA_RADIUS
    (X0, y0), (X1, y1), X_pub, y_max = _pmt_poisson_pair(n, p, n_pub, seed)
    make = lambda: PMTPoisson(epsilon=epsilon, delta=delta, lam=0.0, n_steps=PMTLR_AUDIT_STEPS,  # noqa: E731
                              y_max=y_max, theta_radius=B)
    ss = np.random.SeedSequence([int(seed), 23])
    r0, r1 = (np.random.default_rng(s) for s in ss.spawn(2))
    out0, est = _newton_releases(make(), X0, y0, X_pub, trials, r0, broken)
    out1, _ = _newton_releases(make(), X1, y1, X_pub, trials, r1, broken)
    return out0, out1, {"mu_claimed": est.report_.mu, "pair_mu_ratio": 1.0 / (2.0 * math.sqrt(2.0)), "n": n,
                        "d": p + 1, "noise_scales": dict(est.report_.noise_scales), "n_steps": PMTLR_AUDIT_STEPS,
                        "y_max": y_max, "theta_radius": B}


def _sample_dpgd_logistic(epsilon, delta, trials, seed, broken, n):
    """D, D': base rows with feature 0 identically 0; the replaced row is ``x = M e_0`` (M = 40 C) with label
    0 on D and 1 on D'. A small explicit step size keeps its logit near 0, so ``|s - y| ~ 1/2`` and its
    gradient (norm ~ M/2 = 20 C) is clipped to C at every step, with opposite signs on D and D': the
    final coefficient 0 is Gaussian and separated by exactly the claimed mu."""
    from engine.pmt import pmt_radius

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
    make = lambda: DPGDLogistic(epsilon=epsilon, delta=delta, lam=0.0, n_steps=T, step_size=step, eta=eta)  # noqa: E731
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
        from engine.pmt import DPRidge, PMTRidge

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
    from engine.pmt import DPGDRidge

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
    "dp-pmtlr": _Mechanism("dp-pmtlr", "DP-PMTLR (PMTLogistic)", "final whitened coefficients", _sample_newton("pmt")),
    "dp-newton": _Mechanism("dp-newton", "DP-Newton logistic (DPNewtonLogistic)", "final coefficients",
                            _sample_newton("raw")),
    "dp-gd-logistic": _Mechanism("dp-gd-logistic", "DP-GD logistic (DPGDLogistic)", "final coefficients",
                                 _sample_dpgd_logistic),
    "dp-pmt-poisson": _Mechanism("dp-pmt-poisson", "DP-PMT Poisson (PMTPoisson)", "final whitened coefficients",
                                 _sample_pmt_poisson),
}


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
