"""Hooks on the real estimators: each fit is run once with its noise source returning ``trials`` draws.

Everything a fit computes before its noise is deterministic, so the product's estimator is fitted once
while its own noise function (``ssp_noise`` / ``dp_gd_noise`` / the Newton noise / the logistic DP-GD
draws) is called ``trials`` times and the solver or path sees the stack; the released statistic comes
out as ``trials`` independent releases of exactly the mechanism (see :mod:`engine.audit`). The
deliberately broken copies (:data:`BROKEN`) are applied here, never in the product's estimators. The
patches use :func:`unittest.mock.patch.object` for the duration of one fit (not thread-safe).
"""

from __future__ import annotations

import contextlib
import math
from unittest import mock

import numpy as np

from engine import privacy as P

#: Deliberately broken variants the harness can run (never part of the product).
BROKEN = ("noise-0.2", "skip-clipping", "partial-noise")

#: Factor applied to every noise draw by ``broken="noise-0.2"``.
BROKEN_NOISE_FACTOR = 0.2


def _identity_truncate(Z, radius):
    """``truncate_rows`` with the truncation skipped (broken copy): same return contract."""
    Z = np.asarray(Z, dtype=float)
    norms = np.linalg.norm(Z, axis=1)
    return Z.copy(), norms, np.zeros(norms.shape, dtype=bool)


#: The modules of :mod:`engine.pmt` whose estimators look the hooked names up at call time.
_PMT_MODULES = ("_bounds", "_transform", "_base", "_gd", "_newton", "ridge", "baselines", "logistic", "poisson")


def _holders(name):
    """Every :mod:`engine.pmt` module that holds ``name`` as a global (where a fit looks it up)."""
    import importlib

    mods = [importlib.import_module(f"engine.pmt.{m}") for m in _PMT_MODULES]
    found = [m for m in mods if name in vars(m)]
    if not found:  # pragma: no cover - a rename in engine.pmt must update the audit
        raise RuntimeError(f"the audit hooks {name!r}, which no engine.pmt module defines any more")
    return found


def _real(name):
    """The product's own ``name`` (from the module that defines it)."""
    for m in _holders(name):
        obj = vars(m)[name]
        if getattr(obj, "__module__", None) == m.__name__:
            return obj
    return vars(_holders(name)[0])[name]


@contextlib.contextmanager
def _patches(*pairs):
    """Replace each ``(name, value)`` in every :mod:`engine.pmt` module holding ``name``, for one fit."""
    with contextlib.ExitStack() as stack:
        for name, value in pairs:
            for module in _holders(name):
                stack.enter_context(mock.patch.object(module, name, value))
        yield


def _identity_truncate_inplace(Z, radius):
    """``truncate_rows_inplace`` with the truncation skipped (broken copy): same return contract."""
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    return norms, np.zeros(norms.shape, dtype=bool)


def _skip_clipping_patches(broken):
    if broken != "skip-clipping":
        return []
    return [("truncate_rows", _identity_truncate), ("truncate_rows_inplace", _identity_truncate_inplace)]


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

    ``ssp_noise`` (the estimators' own noise function) is called ``trials`` times; the solver
    (``ssp_solve`` or PMTRidge's default ``noise_aware_solve``) sees
    the stacked noisy statistics, which are recorded, and solves the first one so ``fit`` completes.
    """
    real_noise, real_solve, real_na_solve = _real("ssp_noise"), _real("ssp_solve"), _real("noise_aware_solve")
    factor = _noise_factor(broken)
    captured = {}

    def stacked_noise(rng_, d):
        draws = [real_noise(rng_, d) for _ in range(trials)]
        W, w = factor * np.stack([a for a, _ in draws]), factor * np.stack([b for _, b in draws])
        return (_drop_diagonal(W) if broken == "partial-noise" else W), w

    def capturing(real):  # either solver: PMTRidge's noise-aware default, or the paper's / DP-RR's
        def capture_solve(A_priv, b_priv, penalty, *args, **kw):
            captured["A"], captured["b"] = np.asarray(A_priv), np.asarray(b_priv)
            return real(np.asarray(A_priv)[0], np.asarray(b_priv)[0], penalty, *args, **kw)
        return capture_solve

    est = estimator.set_params(random_state=rng)
    with _patches(("ssp_noise", stacked_noise), ("ssp_solve", capturing(real_solve)),
                  ("noise_aware_solve", capturing(real_na_solve)), *_skip_clipping_patches(broken)):
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
    real_noise, real_path = _real("dp_gd_noise"), _real("dp_gd_ridge_path")
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
    with _patches(("dp_gd_noise", record_noise), ("dp_gd_ridge_path", stacked_path)):
        est.fit(X, y, X_pub, y_pub)
    return captured["theta"].T.copy(), est


def _newton_releases(estimator, X, y, X_pub, trials, rng, broken):
    """Fit a noisy-Newton estimator once with ``trials`` runs; return the final whitened iterates.

    ``newton_noise`` (the estimator's own) is drawn ``trials`` times from the estimator's generator and
    ``noisy_newton`` (built for many runs) iterates all of them; the estimator keeps run 0.
    """
    import dataclasses

    real_noise, real_newton = _real("newton_noise"), _real("noisy_newton")
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
    with _patches(("noisy_newton", stacked_newton), *_skip_clipping_patches(broken)):
        est.fit(X, y, X_pub)
    return np.asarray(captured["theta"]), est


def _dpgd_logistic_releases(estimator, X, y, X_pub, trials, rng, broken):
    """DP-GD (logistic) with ``trials`` runs as matrix columns; the gradient noise is drawn the way the
    estimator draws it (``engine.privacy.gaussian_noise((T, d), 1, rng)``) from the estimator's generator."""
    real_path = _real("dp_gd_logistic_path")
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
    with _patches(("dp_gd_logistic_path", stacked_path)):
        est.fit(X, y, X_pub)
    return captured["theta"].T.copy(), est
