"""The audited mechanisms: worst-case neighbouring pairs per mechanism, their samplers and the registry.

Each sampler returns the **releases** it audits (:class:`Release`): for each, ``trials`` outputs on D
and on D', the claimed mu of that release (its share of the estimator's stated total under the
estimator's documented composition), whether the output is exactly Gaussian with a covariance that does
not depend on the data (then a correct release's pair shows at most that mu), the fixed test direction
(the noise-free movement of the statistic, from a run of the product's code with the noise factor 0)
and the measured ratio of that movement to the stated sensitivity (1 for a worst-case pair). The pairs
are described in :mod:`engine.audit.pairs`. :data:`MECHANISMS` maps a name to its sampler;
:func:`sample_releases` runs one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine import privacy as P
from engine.audit.hooks import (
    BROKEN_FOR,
    _adassp_releases,
    _joint_releases,
    broken_applies,
    broken_key,
    _dpgd_logistic_releases,
    _dpgd_releases,
    _newton_capture,
    _newton_step_releases,
    _patches,
    _skip_clipping_patches,
    _ssp_releases,
    parse_broken,
    upper_triangle,
)
from engine.audit.pairs import EXTREME, axis_row, standard_public_rows

__all__ = ["MECHANISMS", "Release", "sample_releases", "logistic_gradient_worst_pair"]


@dataclass
class Release:
    """One audited release: outputs on D and D' and what a correct mechanism may show on them.

    Attributes
    ----------
    name : str
    out0, out1 : ndarray of shape (trials, k)
    mu_claim : float
        The claimed mu-GDP of this release.
    gaussian : bool
        True: the output is Gaussian with a data-independent covariance, so any fixed projection of a
        correct release separates D and D' by at most ``mu_claim`` (in units of its sd). False (a
        post-processed, non-Gaussian output): the bound is ``sqrt(exp(mu_claim^2) - 1)`` (the chi-square
        divergence of the two Gaussians, which bounds ``|E_1 f - E_0 f| / sd(f)`` for every function f).
    direction : ndarray of shape (k,) or None
        Fixed test direction (the noise-free movement); None: estimated on a pilot share of the runs.
    ratio : float
        Noise-free movement of the statistic over its stated sensitivity (nan: not measured).
    """

    name: str
    out0: np.ndarray
    out1: np.ndarray
    mu_claim: float
    gaussian: bool = True
    direction: np.ndarray | None = None
    ratio: float = math.nan
    info: dict = field(default_factory=dict)


def _rngs(seed, tag, k):
    return [np.random.default_rng(s) for s in np.random.SeedSequence([int(seed), int(tag)]).spawn(k)]


def _regression_base(n, p, n_pub, seed):
    """Base private rows (n - 1) and standardised public rows with their responses."""
    rng = np.random.default_rng([int(seed), 3])
    beta = np.linspace(1.0, -1.0, p)
    X = rng.normal(size=(n - 1, p))
    y = X @ beta + 0.5 * rng.normal(size=n - 1)
    X_pub = standard_public_rows(n_pub, p, seed)
    y_pub = X_pub @ beta + 0.5 * rng.normal(size=n_pub)
    return X, y, X_pub, y_pub


# --------------------------------------------------------------------------------------------
# sufficient-statistics perturbation: DP-PMTRR, DP-RR, PMT-pooled
# --------------------------------------------------------------------------------------------
#: The audit's y beyond every response bound (clipped to +-B_y by a correct mechanism).
FAR_Y = 1e12


def ssp_pairs(n, p, n_pub, seed, radius):
    """The A-pair (rows ``R e_0`` vs ``R e_1``, labels 0) and the b-pair (row ``R e_0``, label ``+-B``).

    Returns ``{"A": ((X0, y0), (X1, y1)), "b": (...)}, X_pub, y_pub`` (raw rows; ``radius`` only scales the
    extreme rows, which any radius truncates)."""
    X, y, X_pub, y_pub = _regression_base(n, p, n_pub, seed)
    e0, e1 = axis_row(p, 0, radius), axis_row(p, 1, radius)
    pairs = {
        "A": ((np.vstack([X, e0]), np.append(y, 0.0)), (np.vstack([X, e1]), np.append(y, 0.0))),
        "b": ((np.vstack([X, e0]), np.append(y, FAR_Y)), (np.vstack([X, e0]), np.append(y, -FAR_Y))),
    }
    return pairs, X_pub, y_pub


def _sample_ssp(kind):
    def sampler(epsilon, delta, trials, seed, broken, n):
        from engine.pmt import DPRidge, PMTPooledRidge, PMTRidge, pmt_radius

        p, n_pub, eta = 2, 200, 0.05
        cls = {"pmt": PMTRidge, "rr": DPRidge, "pooled": PMTPooledRidge}[kind]
        kw = {"response": "clip"} if kind == "pmt" else {}  # A and b: PMT's clip form (the joint form: dp-pmtrr-joint)
        make = lambda: cls(epsilon=epsilon, delta=delta, lam=0.0, eta=eta, **kw)  # noqa: E731
        pairs, X_pub, y_pub = ssp_pairs(n, p, n_pub, seed, pmt_radius(p + 1, n, eta))
        rngs = _rngs(seed, {"pmt": 7, "rr": 5, "pooled": 29}[kind], 4)
        releases, est = [], None
        for k, (name, ((X0, y0), (X1, y1))) in enumerate(pairs.items()):
            o0 = _ssp_releases(make(), X0, y0, X_pub, y_pub, trials, rngs[2 * k], broken)
            o1 = _ssp_releases(make(), X1, y1, X_pub, y_pub, trials, rngs[2 * k + 1], broken)
            f0 = _ssp_releases(make(), X0, y0, X_pub, y_pub, 1, np.random.default_rng(0), broken, factor=0.0)
            f1 = _ssp_releases(make(), X1, y1, X_pub, y_pub, 1, np.random.default_rng(0), broken, factor=0.0)
            est = o0["estimator"]
            mu_j = est.report_.mu / math.sqrt(2.0)  # A and b: mu / sqrt(2) each (PMT.md section 3)
            stat = (lambda o: upper_triangle(o["A"])) if name == "A" else (lambda o: o["b"])
            delta_stat = (stat(f1) - stat(f0))[0]
            sens = est.report_.sensitivities["A" if name == "A" else "b"]
            releases.append(Release(f"{name} (white box: the noisy {name} at the solver)", stat(o0), stat(o1), mu_j,
                                    direction=delta_stat, ratio=float(np.linalg.norm(delta_stat) / sens)))
            if kind == "pooled" and name == "b":
                releases.append(Release("coefficients (black box: the pooled fit, b-pair)", o0["coef"], o1["coef"],
                                        mu_j, gaussian=False))
        return releases, {"mu_claimed": est.report_.mu, "n": n, "d": p + 1,
                          "noise_scales": dict(est.report_.noise_scales)}
    return sampler


# --------------------------------------------------------------------------------------------
# PMTRidge's joint form (its default with public labels): one release of S = Z~^T Z~
# --------------------------------------------------------------------------------------------
def joint_pair(n, p, n_pub, seed, radius):
    """D, D' for the joint form: the row ``x = K e_0, y = 0`` vs ``x = 0, y = K`` (K far beyond the radius).

    The public rows ``[x, 1, y]`` have exactly mean 0 and identity second moment (:func:`standard_public_rows`
    with p + 1 columns, the last one the label), so the joint whitening is the identity and the two rows are
    truncated to ``R e_x0`` and ``R e_y`` (up to the intercept's 1/K share): the upper triangle of ``S`` moves
    by ``R^2 (e_x0 e_x0^T - e_y e_y^T)``, norm ``sqrt(2) R^2``: the full sensitivity.

    Returns ``((X0, y0), (X1, y1)), X_pub, y_pub``."""
    X, y, _, _ = _regression_base(n, p, n_pub, seed)
    J = standard_public_rows(n_pub, p + 1, seed)
    X_pub, y_pub = J[:, :p], J[:, p]
    K = EXTREME * radius
    x0 = axis_row(p, 0, radius)
    return ((np.vstack([X, x0]), np.append(y, 0.0)), (np.vstack([X, np.zeros(p)]), np.append(y, K))), X_pub, y_pub


def _sample_joint(epsilon, delta, trials, seed, broken, n):
    from engine.pmt import PMTRidge, pmt_radius

    p, n_pub, eta = 2, 200, 0.05
    make = lambda: PMTRidge(epsilon=epsilon, delta=delta, lam=0.0, eta=eta)  # noqa: E731 - the default: joint
    ((X0, y0), (X1, y1)), X_pub, y_pub = joint_pair(n, p, n_pub, seed, pmt_radius(p + 2, n, eta))
    plain = make().set_params(random_state=np.random.default_rng(0)).fit(X0, y0, X_pub, y_pub)  # the report
    if plain.report_.extra.get("response") != "joint":  # pragma: no cover - the default changed
        raise RuntimeError("PMTRidge's default with public labels is no longer the joint form: update the audit")
    r0, r1 = _rngs(seed, 31, 2)
    o0 = _joint_releases(make(), X0, y0, X_pub, y_pub, trials, r0, broken)
    o1 = _joint_releases(make(), X1, y1, X_pub, y_pub, trials, r1, broken)
    f0 = _joint_releases(make(), X0, y0, X_pub, y_pub, 1, np.random.default_rng(0), broken, factor=0.0)
    f1 = _joint_releases(make(), X1, y1, X_pub, y_pub, 1, np.random.default_rng(0), broken, factor=0.0)
    delta_stat = (upper_triangle(f1["S"]) - upper_triangle(f0["S"]))[0]
    sens = float(plain.report_.sensitivities["S"])
    rel = Release("S (white box: the noisy joint S~ where _release_joint adds its noise)", upper_triangle(o0["S"]),
                  upper_triangle(o1["S"]), plain.report_.mu, direction=delta_stat,
                  ratio=float(np.linalg.norm(delta_stat) / sens))
    return [rel], {"mu_claimed": plain.report_.mu, "n": n, "d": p + 1, "noise_scales": dict(plain.report_.noise_scales),
                   "response": "joint"}


# --------------------------------------------------------------------------------------------
# AdaSSP: lambda_min(A), A and b, mu / sqrt(3) each
# --------------------------------------------------------------------------------------------
def adassp_pairs(n, p, n_pub, seed, radius):
    """The A-pair (feature 0 identically 0 on the base rows; the row ``C e_0`` vs ``C e_1``, labels 0) and the
    b-pair (the row ``C e_0`` with label ``+-B``), raw rows (``radius`` only scales the extreme rows).

    On the A-pair ``lambda_min(A)`` is ``C^2`` on D (the e_0 direction, below the base rows' eigenvalues) and 0 on
    D' (nothing spans e_0): it moves by its full sensitivity ``C^2``; A moves by ``sqrt(2) C^2`` (as for DP-RR)."""
    X, y, X_pub, y_pub = _regression_base(n, p, n_pub, seed)
    X[:, 0] = 0.0
    e0, e1 = axis_row(p, 0, radius), axis_row(p, 1, radius)
    pairs = {
        "A": ((np.vstack([X, e0]), np.append(y, 0.0)), (np.vstack([X, e1]), np.append(y, 0.0))),
        "b": ((np.vstack([X, e0]), np.append(y, FAR_Y)), (np.vstack([X, e0]), np.append(y, -FAR_Y))),
    }
    return pairs, X_pub, y_pub


def _sample_adassp(epsilon, delta, trials, seed, broken, n):
    from engine.pmt import AdaSSPRidge, pmt_radius

    p, n_pub, eta = 2, 200, 0.05
    make = lambda: AdaSSPRidge(epsilon=epsilon, delta=delta, lam=0.0, eta=eta)  # noqa: E731
    pairs, X_pub, y_pub = adassp_pairs(n, p, n_pub, seed, pmt_radius(p + 1, n, eta))
    plain = make().set_params(random_state=np.random.default_rng(0)).fit(*pairs["A"][0], X_pub, y_pub)
    rep = plain.report_
    mu_j = rep.mu / math.sqrt(3.0)  # three releases of mu / sqrt(3) (docs/ADASSP.md)
    rngs = _rngs(seed, 37, 4)
    stats = {"A": (("lambda_min", lambda o: o["lambda_min"].reshape(-1, 1)), ("A", lambda o: upper_triangle(o["A"]))),
             "b": (("b", lambda o: o["b"]),)}
    releases = []
    for k, (name, ((X0, y0), (X1, y1))) in enumerate(pairs.items()):
        o0 = _adassp_releases(make(), X0, y0, X_pub, y_pub, trials, rngs[2 * k], broken)
        o1 = _adassp_releases(make(), X1, y1, X_pub, y_pub, trials, rngs[2 * k + 1], broken)
        f0 = _adassp_releases(make(), X0, y0, X_pub, y_pub, 1, np.random.default_rng(0), broken, factor=0.0)
        f1 = _adassp_releases(make(), X1, y1, X_pub, y_pub, 1, np.random.default_rng(0), broken, factor=0.0)
        for what, stat in stats[name]:
            delta_stat = (stat(f1) - stat(f0))[0]
            releases.append(Release(f"{what} (white box: where adassp_solve adds its noise; {name}-pair)", stat(o0),
                                    stat(o1), mu_j, direction=delta_stat,
                                    ratio=float(np.linalg.norm(delta_stat) / rep.sensitivities[what])))
    return releases, {"mu_claimed": rep.mu, "n": n, "d": p + 1, "noise_scales": dict(rep.noise_scales)}


# --------------------------------------------------------------------------------------------
# DP-GD (ridge and logistic): the final coefficient 0
# --------------------------------------------------------------------------------------------
#: DP-GD steps used in the audit (fewer than the default 100 to keep it fast; the accounting splits mu
#: over whatever T is used, so the audited claim is the same).
DPGD_AUDIT_STEPS = 20


def _dpgd_pair(n, p, n_pub, seed):
    """D, D' for DP-GD ridge: feature 0 identically 0 on the base rows; the replaced row is x = e_0, y = +-K.

    Its per-example gradient ``2 (x^T theta - y) [x; 1]`` is always clipped to norm C, pointing along
    +-(e_0 + tiny intercept part), and nothing else moves coefficient 0: the final coefficient 0 is
    ``-step * sum_t (+-C'/n + sigma z_t)``, a Gaussian separated by exactly the claimed mu (lam = 0).
    """
    X, y, X_pub, y_pub = _regression_base(n, p, n_pub, seed)
    X[:, 0] = 0.0
    x_c = np.zeros(p)
    x_c[0] = EXTREME
    K = EXTREME**2
    return (np.vstack([X, x_c]), np.append(y, K)), (np.vstack([X, x_c]), np.append(y, -K)), X_pub, y_pub


def _coef0_release(theta0, theta1, f0, f1, est, T, label):
    """The final coefficient 0; ratio = its noise-free movement over ``T step Delta_step`` (the movement if
    every step's averaged gradient moved by its full sensitivity along e_0)."""
    e0 = np.zeros(theta0.shape[1])
    e0[0] = 1.0
    move = float(f1[0, 0] - f0[0, 0])
    full = T * float(est.report_.extra["step_size"]) * float(est.report_.sensitivities["gradient (per step)"])
    return Release(label, theta0, theta1, est.report_.mu, direction=e0 * (np.sign(move) or 1.0),
                   ratio=abs(move) / full)


def _sample_dpgd_ridge(epsilon, delta, trials, seed, broken, n):
    from engine.pmt import DPGDRidge

    p, n_pub = 2, 200
    (X0, y0), (X1, y1), X_pub, y_pub = _dpgd_pair(n, p, n_pub, seed)
    make = lambda: DPGDRidge(epsilon=epsilon, delta=delta, lam=0.0, n_steps=DPGD_AUDIT_STEPS)  # noqa: E731
    r0, r1 = _rngs(seed, 11, 2)
    out0, est = _dpgd_releases(make(), X0, y0, X_pub, y_pub, trials, r0, broken)
    out1, _ = _dpgd_releases(make(), X1, y1, X_pub, y_pub, trials, r1, broken)
    f0, _ = _dpgd_releases(make(), X0, y0, X_pub, y_pub, 2, np.random.default_rng(0), broken, factor=0.0)
    f1, _ = _dpgd_releases(make(), X1, y1, X_pub, y_pub, 2, np.random.default_rng(0), broken, factor=0.0)
    rel = _coef0_release(out0, out1, f0, f1, est, DPGD_AUDIT_STEPS, "final coefficient 0 (black box)")
    return [rel], {"mu_claimed": est.report_.mu, "n": n, "d": p + 1, "noise_scales": dict(est.report_.noise_scales),
                   "n_steps": DPGD_AUDIT_STEPS}


def _sample_dpgd_logistic(epsilon, delta, trials, seed, broken, n):
    """D, D': base rows with feature 0 identically 0; the replaced row is ``x = M e_0`` (M = 40 C) with label
    0 on D and 1 on D'. A small explicit step size keeps its logit near 0, so ``|s - y| ~ 1/2`` and its
    gradient (norm ~ M/2 = 20 C) is clipped to C at every step, with opposite signs on D and D': the
    final coefficient 0 is Gaussian and separated by exactly the claimed mu."""
    from engine.pmt import DPGDLogistic, pmt_radius

    p, n_pub, eta, T = 2, 200, 0.05, DPGD_AUDIT_STEPS
    X, y, X_pub = _logistic_base(n, p, n_pub, seed)
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
    r0, r1 = _rngs(seed, 17, 2)
    out0, est = _dpgd_logistic_releases(make(), X0, y0, X_pub, trials, r0, broken)
    out1, _ = _dpgd_logistic_releases(make(), X1, y1, X_pub, trials, r1, broken)
    f0, _ = _dpgd_logistic_releases(make(), X0, y0, X_pub, 2, np.random.default_rng(0), broken, factor=0.0)
    f1, _ = _dpgd_logistic_releases(make(), X1, y1, X_pub, 2, np.random.default_rng(0), broken, factor=0.0)
    rel = _coef0_release(out0, out1, f0, f1, est, T, "final coefficient 0 (black box)")
    return [rel], {"mu_claimed": est.report_.mu, "n": n, "d": p + 1, "noise_scales": dict(est.report_.noise_scales),
                   "n_steps": T, "step_size": step}


# --------------------------------------------------------------------------------------------
# noisy Newton: DP-PMTLR, DP-Newton, DP-PMT Poisson (one step, white box)
# --------------------------------------------------------------------------------------------
def _logistic_base(n, p, n_pub, seed):
    rng = np.random.default_rng([int(seed), 4])
    X = rng.normal(size=(n - 1, p))
    y = (rng.random(n - 1) < 1.0 / (1.0 + np.exp(-X @ np.linspace(1.0, -1.0, p)))).astype(int)
    y[:2] = (0, 1)  # both classes, whatever the seed
    return X, y, standard_public_rows(n_pub, p, seed)


def _poisson_base(n, p, n_pub, seed):
    rng = np.random.default_rng([int(seed), 6])
    X = rng.normal(size=(n - 1, p))
    y = rng.poisson(np.exp(0.3 * X @ np.linspace(1.0, -1.0, p))).astype(float)
    return X, y, standard_public_rows(n_pub, p, seed)


#: Newton steps of the logistic audits (2: the second iterate is noisy, so the worst-case iterate of the
#: gradient pair is reachable) and of the Poisson audit (1: its worst cases are at theta~ = 0).
LOGISTIC_AUDIT_STEPS = 2
POISSON_AUDIT_STEPS = 1
#: Half-angle of the logistic gradient pair's two rows and their margin at the worst-case iterate.
LOGISTIC_PAIR_EPS = 1e-3
LOGISTIC_PAIR_MARGIN = 50.0
#: PMT Poisson audit bounds: y_max >= e^{R B_theta}, so G = y_max (gradient pair ratio 1 - 1/y_max), and a
#: small B_theta, so H = e^{R B_theta} ~ 1 (Hessian pair ratio e^{-R B_theta}).
POISSON_AUDIT_Y_MAX = 1000.0
POISSON_AUDIT_THETA_RADIUS = 1e-3


def newton_pairs(family, n, p, n_pub, seed, radius, y_max=None):
    """The gradient pair and the Hessian pair of a noisy-Newton audit, with the iterate each is audited at.

    Returns ``{"gradient": ((X0, y0), (X1, y1), theta), "hessian": (...)}, X_pub`` where ``theta`` is the
    whitened iterate (length p + 1, intercept last) of :mod:`engine.audit.pairs`."""
    d = p + 1
    if family == "poisson":
        X, y, X_pub = _poisson_base(n, p, n_pub, seed)
        far = 10.0 * y_max
        g0, g1 = axis_row(p, 0, radius, 1.0), axis_row(p, 0, radius, -1.0)
        grad = ((np.vstack([X, g0]), np.append(y, far)), (np.vstack([X, g1]), np.append(y, far)), np.zeros(d))
    else:
        X, y, X_pub = _logistic_base(n, p, n_pub, seed)
        eps = LOGISTIC_PAIR_EPS
        tilt = np.zeros(p)
        tilt[1] = eps
        z0, z1 = axis_row(p, 0, radius, tilt=tilt), axis_row(p, 0, radius, tilt=-tilt)
        theta = np.zeros(d)
        theta[1] = LOGISTIC_PAIR_MARGIN * math.hypot(1.0, eps) / (eps * radius)
        grad = ((np.vstack([X, z0]), np.append(y, 0)), (np.vstack([X, z1]), np.append(y, 1)), theta)
    h0, h1 = axis_row(p, 0, radius), axis_row(p, 1, radius)
    hess = ((np.vstack([X, h0]), np.append(y, 0)), (np.vstack([X, h1]), np.append(y, 0)), np.zeros(d))
    return {"gradient": grad, "hessian": hess}, X_pub


def _sample_newton(kind):
    def sampler(epsilon, delta, trials, seed, broken, n):
        from engine.pmt import DPNewtonLogistic, PMTLogistic, PMTPoisson, pmt_radius

        p, n_pub, eta = 2, 200, 0.05
        R = pmt_radius(p + 1, n, eta)  # PMT's R and DP-Newton's default C
        if kind == "poisson":
            T, y_max = POISSON_AUDIT_STEPS, POISSON_AUDIT_Y_MAX
            make = lambda: PMTPoisson(epsilon=epsilon, delta=delta, lam=0.0, n_steps=T, y_max=y_max,  # noqa: E731
                                      theta_radius=POISSON_AUDIT_THETA_RADIUS, eta=eta)
        else:
            T, y_max = LOGISTIC_AUDIT_STEPS, None
            cls = PMTLogistic if kind == "pmt" else DPNewtonLogistic
            make = lambda: cls(epsilon=epsilon, delta=delta, lam=0.0, n_steps=T, eta=eta)  # noqa: E731
        pairs, X_pub = newton_pairs("poisson" if kind == "poisson" else "logistic", n, p, n_pub, seed, R, y_max)
        rngs = _rngs(seed, {"pmt": 13, "raw": 19, "poisson": 23}[kind], 4)
        releases, est = [], None
        for k, (what, ((X0, y0), (X1, y1), theta)) in enumerate(pairs.items()):
            with _patches(*_skip_clipping_patches(broken)):  # the rows the product hands to its noisy_newton
                c0 = _newton_capture(make(), X0, y0, X_pub, np.random.default_rng(0))
                c1 = _newton_capture(make(), X1, y1, X_pub, np.random.default_rng(0))
            # the releases: the product's noisy_newton run from the pair's iterate, read where it adds noise
            est = c0["estimator"]
            o0 = _newton_step_releases(c0, theta, what, trials, rngs[2 * k], broken)
            o1 = _newton_step_releases(c1, theta, what, trials, rngs[2 * k + 1], broken)
            f0 = _newton_step_releases(c0, theta, what, 1, np.random.default_rng(0), broken, factor=0.0)
            f1 = _newton_step_releases(c1, theta, what, 1, np.random.default_rng(0), broken, factor=0.0)
            delta_stat = (f1 - f0)[0]
            sens = est.report_.sensitivities[f"{'gradient' if what == 'gradient' else 'Hessian'} (per step)"]
            mu_j = est.report_.mu / math.sqrt(2.0 * T)  # 2T releases of mu / sqrt(2T) (PMT.md section 4)
            where = "theta~ = 0 (the first iterate)" if not np.any(theta) else "the worst-case iterate theta~ = K v"
            releases.append(Release(f"{what} step release at {where} (white box)", o0, o1, mu_j, direction=delta_stat,
                                    ratio=float(np.linalg.norm(delta_stat) / sens)))
        info = {"mu_claimed": est.report_.mu, "n": n, "d": p + 1, "noise_scales": dict(est.report_.noise_scales),
                "n_steps": T}
        if kind == "poisson":
            info.update(y_max=y_max, theta_radius=POISSON_AUDIT_THETA_RADIUS)
        return releases, info
    return sampler


def logistic_gradient_worst_pair(R: float, n: int, *, d: int = 2, eps: float = 1e-9, margin: float = 50.0):
    """A replace-one pair whose averaged logistic gradients differ by exactly ``2R/n``.

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


# --------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Mechanism:
    name: str
    label: str
    released: str
    sampler: object  # (epsilon, delta, trials, seed, broken, n) -> (releases, info)


MECHANISMS: dict[str, _Mechanism] = {
    "dp-pmtrr": _Mechanism("dp-pmtrr", "DP-PMTRR clip form (PMTRidge, response='clip')", "noisy A and b at the solver",
                           _sample_ssp("pmt")),
    "dp-pmtrr-joint": _Mechanism("dp-pmtrr-joint", "DP-PMTRR joint form (PMTRidge, its default with public labels)",
                                 "noisy S = Z~^T Z~, read inside _release_joint", _sample_joint),
    "dp-rr": _Mechanism("dp-rr", "DP-RR (DPRidge)", "noisy A and b at the solver", _sample_ssp("rr")),
    "pmt-pooled": _Mechanism("pmt-pooled", "PMT-pooled (PMTPooledRidge)",
                             "noisy A and b at the combination, and the final coefficients", _sample_ssp("pooled")),
    "adassp": _Mechanism("adassp", "AdaSSP (AdaSSPRidge)", "noisy lambda_min(A), A and b, read inside adassp_solve",
                         _sample_adassp),
    "dp-gd-ridge": _Mechanism("dp-gd-ridge", "DP-GD ridge (DPGDRidge)", "final coefficients", _sample_dpgd_ridge),
    "dp-pmtlr": _Mechanism("dp-pmtlr", "DP-PMTLR (PMTLogistic)", "one noisy Newton step (gradient, Hessian), read inside noisy_newton",
                           _sample_newton("pmt")),
    "dp-newton": _Mechanism("dp-newton", "DP-Newton logistic (DPNewtonLogistic)",
                            "one noisy Newton step (gradient, Hessian), read inside noisy_newton", _sample_newton("raw")),
    "dp-gd-logistic": _Mechanism("dp-gd-logistic", "DP-GD logistic (DPGDLogistic)", "final coefficients",
                                 _sample_dpgd_logistic),
    "dp-pmt-poisson": _Mechanism("dp-pmt-poisson", "DP-PMT Poisson (PMTPoisson)",
                                 "one noisy Newton step (gradient, Hessian), read inside noisy_newton", _sample_newton("poisson")),
}


def sample_releases(mechanism: str, *, epsilon: float, delta: float, trials: int, seed: int = 0,
                    broken: str | None = None, n: int = 100):
    """Run a mechanism's audited releases ``trials`` times on D and on D' (see the module docstring).

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
    broken : None or a broken copy (:func:`engine.audit.hooks.parse_broken`)
    n : int, default 100
        Private rows (the replaced one included), ``>= 10``.

    Returns
    -------
    releases : list of Release
    info : dict
        ``mu_claimed`` (the estimator's own total mu), sizes and noise scales.

    Raises
    ------
    ValueError
        Unknown mechanism or broken copy, a broken copy planted in another mechanism's code,
        trials < 4, n < 10, epsilon / delta out of range.
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    parse_broken(broken)
    if not broken_applies(broken, mechanism):
        key = broken_key(broken)
        raise ValueError(f"broken={broken!r} is planted in the code of {', '.join(BROKEN_FOR[key])} only: "
                         f"not available for mechanism {mechanism!r}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 4:
        raise ValueError(f"trials must be an integer >= 4, got {trials!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 10:
        raise ValueError(f"n must be an integer >= 10, got {n!r}")
    eps = P.validate_epsilon(epsilon)
    dlt = P.validate_delta(delta)
    return MECHANISMS[mechanism].sampler(eps, dlt, int(trials), int(seed), broken, int(n))
