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

#: Deliberately broken variants the harness can run (never part of the product). ``sensitivity-F``
#: (any ``0 < F``, e.g. ``sensitivity-0.9``) calibrates every release to ``F`` times its sensitivity,
#: i.e. multiplies every noise draw by F (``sigma = F Delta / mu``: for a Gaussian release the same thing);
#: ``noise-0.2`` is ``sensitivity-0.2`` under its old name; ``combination-leak`` (PMT-pooled only) computes
#: the pooling weights from the private rows instead of the public ones; ``newton-noise-F`` (the noisy-Newton
#: mechanisms) multiplies the gradient noise by F *inside* a copy of the product's ``noisy_newton`` (a planted
#: line, :func:`mutated_copy`: the audit must see it because it reads that function's own release);
#: ``private-response-bound`` (DP-PMTRR, PMT-pooled) silently takes the response bound B_y from the private
#: labels (``max |y|``) where the product takes it from the public ones: a data-dependent parameter, which
#: the release audit cannot see (both neighbours get the same noise-to-sensitivity ratio) and the parameter
#: audit (:mod:`engine.audit.parameters`) catches.
#: ``joint-noise-F`` (PMTRidge's joint form) multiplies the noise of its one release by F inside a copy of the
#: product's ``_release_joint``; ``adassp-noise-F`` (AdaSSP) multiplies the noise of its lambda_min release
#: by F inside a copy of the product's ``adassp_solve`` (planted lines, as ``newton-noise-F``).
BROKEN = ("sensitivity-0.9", "noise-0.2", "skip-clipping", "partial-noise", "combination-leak", "newton-noise-0.9",
          "private-response-bound", "joint-noise-0.9", "adassp-noise-0.9")
#: Broken copies that apply to some mechanisms only.
BROKEN_FOR = {"combination-leak": ("pmt-pooled",), "newton-noise": ("dp-pmtlr", "dp-newton", "dp-pmt-poisson"),
              "private-response-bound": ("dp-pmtrr", "pmt-pooled"), "joint-noise": ("dp-pmtrr-joint",),
              "adassp-noise": ("adassp",)}
#: The broken copies planted as a line in the product's code, with a factor: ``<prefix>F``.
_PLANTED_PREFIXES = ("newton-noise-", "joint-noise-", "adassp-noise-")

#: Factor applied to every noise draw by ``broken="noise-0.2"``.
BROKEN_NOISE_FACTOR = 0.2


def parse_broken(broken):
    """Validate a broken-copy name; returns it (``None`` stays ``None``).

    Accepted: ``None``, ``"skip-clipping"``, ``"partial-noise"``, ``"combination-leak"``,
    ``"private-response-bound"`` and ``"sensitivity-F"`` / ``"noise-F"`` / ``"newton-noise-F"`` /
    ``"joint-noise-F"`` / ``"adassp-noise-F"`` with a finite ``F > 0``. Raises ``ValueError`` otherwise.
    """
    if broken is None or broken in ("skip-clipping", "partial-noise", "combination-leak", "private-response-bound"):
        return broken
    if isinstance(broken, str):
        for prefix in ("sensitivity-", *_PLANTED_PREFIXES, "noise-"):
            if broken.startswith(prefix):
                try:
                    f = float(broken[len(prefix):])
                except ValueError:
                    break
                if math.isfinite(f) and f > 0:
                    return broken
    raise ValueError("broken must be None, 'skip-clipping', 'partial-noise', 'combination-leak', "
                     "'private-response-bound' or 'sensitivity-F' / 'noise-F' / 'newton-noise-F' / 'joint-noise-F' / "
                     "'adassp-noise-F' with F > 0 "
                     f"(e.g. 'sensitivity-0.9'), got {broken!r}")


def _identity_truncate(Z, radius):
    """``truncate_rows`` with the truncation skipped (broken copy): same return contract."""
    Z = np.asarray(Z, dtype=float)
    norms = np.linalg.norm(Z, axis=1)
    return Z.copy(), norms, np.zeros(norms.shape, dtype=bool)


#: The modules of :mod:`engine.pmt` whose estimators look the hooked names up at call time.
_PMT_MODULES = ("_bounds", "_transform", "_base", "_gd", "_newton", "ridge", "baselines", "logistic", "poisson",
                "pooled", "_ridge_public", "public_fit", "adassp")


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


def broken_key(broken):
    """The :data:`BROKEN_FOR` key of a broken copy (``"newton-noise-0.9"`` -> ``"newton-noise"``)."""
    for prefix in _PLANTED_PREFIXES:
        if broken.startswith(prefix):
            return prefix[:-1]
    return broken


def broken_applies(broken, mechanism) -> bool:
    """Whether a broken copy exists for ``mechanism`` (some are planted in one estimator's code only)."""
    if broken is None:
        return True
    return mechanism in BROKEN_FOR.get(broken_key(broken), (mechanism,))


def private_response_bound_patches(broken, y_private):
    """``broken="private-response-bound"``: the response bound from the private labels (``max |y|``)."""
    if broken != "private-response-bound":
        return []
    yv = np.asarray(y_private, dtype=float)
    return [("_response_bound_rows", lambda y_pub, n, eta: float(np.max(np.abs(yv))) or 1.0)]


def _noise_factor(broken) -> float:
    """The factor on every noise draw: F for ``sensitivity-F`` / ``noise-F``, else 1."""
    if isinstance(broken, str) and not broken.startswith(_PLANTED_PREFIXES):
        for prefix in ("sensitivity-", "noise-"):
            if broken.startswith(prefix):
                return float(broken[len(prefix):])
    return 1.0


def _ssp_releases(estimator, X, y, X_pub, y_pub, trials, rng, broken, factor=None):
    """Fit ``estimator`` once with a stacked noise source; return the ``trials`` released (A, b) and, for
    PMT-pooled, the ``trials`` final coefficients.

    ``ssp_noise`` (the estimators' own noise function) is called ``trials`` times; the solver
    (``ssp_solve``, PMTRidge's default ``noise_aware_solve`` or PMT-pooled's ``pooled_solve``) sees the
    stacked noisy statistics, which are recorded; PMT-pooled's combination is then run on every one of
    them (its released coefficients), the others solve the first one so ``fit`` completes. ``factor``
    overrides the broken copy's noise factor (0: the noise-free statistics).

    Returns
    -------
    dict
        ``A`` (trials, d, d), ``b`` (trials, d), ``coef`` (trials, d) or None, ``estimator``.
    """
    real_noise, real_solve, real_na_solve = _real("ssp_noise"), _real("ssp_solve"), _real("noise_aware_solve")
    real_pooled, real_weights = _real("pooled_solve"), _real("pooled_weights")
    f = _noise_factor(broken) if factor is None else float(factor)
    captured = {}

    def stacked_noise(rng_, d):
        draws = [real_noise(rng_, d) for _ in range(trials)]
        W, w = f * np.stack([a for a, _ in draws]), f * np.stack([b for _, b in draws])
        return (_drop_diagonal(W) if broken == "partial-noise" else W), w

    def capturing(real):  # either solver: PMTRidge's noise-aware default, or the paper's / DP-RR's
        def capture_solve(A_priv, b_priv, penalty, *args, **kw):
            captured["A"], captured["b"] = np.asarray(A_priv), np.asarray(b_priv)
            return real(np.asarray(A_priv)[0], np.asarray(b_priv)[0], penalty, *args, **kw)
        return capture_solve

    def capture_pooled(M, b_priv, weights):
        M, b_priv = np.asarray(M), np.asarray(b_priv)
        captured["A"], captured["b"] = M, b_priv  # lam = 0 in the audit: M is A_priv
        captured["coef_tilde"] = np.stack([real_pooled(M[i], b_priv[i], weights) for i in range(M.shape[0])])
        return captured["coef_tilde"][0]

    def recording_transform(real):
        def rec(*args, **kw):
            captured["transform"] = tr = real(*args, **kw)
            return tr
        return rec

    def recording_sens(real):
        def rec(R, B_y, *args, **kw):
            captured["B_y"] = B_y
            return real(R, B_y, *args, **kw)
        return rec

    def leaky_weights(Z_pub, y_pub_, pen_w, s_A, s_b):  # broken="combination-leak": the private rows
        tr = captured["transform"]
        return real_weights(tr.X_tilde, np.clip(np.asarray(y, float), -captured["B_y"], captured["B_y"]), pen_w,
                            s_A, s_b)

    patches = [("ssp_noise", stacked_noise), ("ssp_solve", capturing(real_solve)),
               ("noise_aware_solve", capturing(real_na_solve)), ("pooled_solve", capture_pooled),
               *_skip_clipping_patches(broken), *private_response_bound_patches(broken, y)]
    if broken == "combination-leak":
        patches += [("pmt_transform", recording_transform(_real("pmt_transform"))),
                    ("ssp_sensitivities", recording_sens(_real("ssp_sensitivities"))),
                    ("pooled_weights", leaky_weights)]
    est = estimator.set_params(random_state=rng)
    with _patches(*patches):
        est.fit(X, y, X_pub, y_pub)
    A, b = captured["A"], captured["b"]
    if A.ndim != 3 or A.shape[0] != trials:
        raise RuntimeError(f"expected {trials} stacked releases, got A of shape {A.shape}")
    coef = None
    if "coef_tilde" in captured:
        coef = _public_units(est, captured["coef_tilde"] @ est.transform_.moment.Sigma_pub_inv_sqrt.T)
    return {"A": A, "b": b, "coef": coef, "estimator": est}


def _public_units(est, theta):
    """Coefficients (rows) mapped back through the estimator's public centring (``center="public"``; a fixed,
    public post-processing), as its own ``fit`` maps its one release."""
    sc = getattr(est, "public_scaling_", None)
    return theta if sc is None else sc.to_raw(theta, est.fit_intercept)


def upper_triangle(A):
    """The upper triangles (diagonal included) of a stack of symmetric matrices, as rows."""
    A = np.asarray(A)
    iu = np.triu_indices(A.shape[-1])
    return A[..., iu[0], iu[1]]


def _dpgd_releases(estimator, X, y, X_pub, y_pub, trials, rng, broken, factor=None):
    """Fit DP-GD once with ``trials`` runs as matrix columns; return the final coefficients (d per run).

    ``dp_gd_noise`` (the estimator's own) is called ``trials`` times; ``dp_gd_ridge_path`` runs all of
    them at once (it is built for runs as columns). ``broken="skip-clipping"`` passes ``clip_norm=inf``
    to the path while the estimator's sensitivity still uses the stated C.
    """
    real_noise, real_path = _real("dp_gd_noise"), _real("dp_gd_ridge_path")
    factor = _noise_factor(broken) if factor is None else float(factor)
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
    return _public_units(est, captured["theta"].T.copy()), est


def _newton_capture(estimator, X, y, X_pub, rng):
    """Fit a noisy-Newton estimator once (as is) and return what it handed to ``noisy_newton``.

    Returns a dict with the bounded rows ``Z`` (PMT-truncated or clipped by the product's code; untruncated
    under ``skip-clipping``, applied by the caller's patches), the labels / clipped counts ``y``, the
    ``family`` and the estimator's own noise scales ``sigma_g``, ``sigma_H``, and the ``estimator``.
    """
    real_newton = _real("noisy_newton")
    captured = {}

    def capture(Z, y_, *, family, sigma_g, sigma_H, **kw):
        captured.update(Z=np.array(Z, dtype=float), y=np.array(y_, dtype=float), family=family,
                        sigma_g=float(np.asarray(sigma_g)[0]), sigma_H=float(np.asarray(sigma_H)[0]),
                        eig_floor=kw.get("eig_floor", "auto"))
        return real_newton(Z, y_, family=family, sigma_g=sigma_g, sigma_H=sigma_H, **kw)

    est = estimator.set_params(random_state=rng)
    with _patches(("noisy_newton", capture)):
        est.fit(X, y, X_pub)
    captured["estimator"] = est
    return captured


def _newton_step_releases(cap, theta, what, trials, rng, broken, factor=None):
    """``trials`` releases of one noisy-Newton step at the iterate ``theta``, as the product releases them.

    Runs the product's own :func:`engine.pmt._newton.noisy_newton` (or, for ``broken="newton-noise-F"``, a
    copy of its source with the planted error) for one step from ``theta_init=theta`` with ``trials`` runs:
    the captured bounded rows, the estimator's own ``sigma_g`` / ``sigma_H`` (times the broken copy's
    factor), ``trials`` draws of the product's ``newton_noise``; the noisy gradient and Hessian are read at
    the observation point ``"newton-step"`` (:mod:`engine.privacy.observe`), where the product adds its
    noise: nothing is re-computed here. ``what`` is ``"gradient"`` (rows of g~, shape (trials, d)) or
    ``"hessian"`` (upper triangles of H~).
    """
    from engine.privacy import observe

    f = _noise_factor(broken) if factor is None else float(factor)
    Z = cap["Z"]
    d = Z.shape[1]
    Hn, gn = _real("newton_noise")(rng, trials, d)  # trials independent standard-normal step draws
    if broken == "partial-noise":
        gn[:, 0] = 0.0
        Hn = _drop_diagonal(Hn)
    newton = _newton_function(broken)
    seen = {}

    def observer(*, step, gradient, hessian, **_):
        if step == 0:
            seen["g"], seen["H"] = np.array(gradient), np.array(hessian)

    with observe.observing("newton-step", observer):
        newton(Z, cap["y"], family=cap["family"], pen=np.zeros((d, d)), sigma_g=np.full(trials, f * cap["sigma_g"]),
               sigma_H=np.full(trials, f * cap["sigma_H"]), noise_g=gn[None], noise_H=Hn[None], n_steps=1,
               theta_init=np.asarray(theta, dtype=float), eig_floor=cap.get("eig_floor", "auto"))
    if "g" not in seen:  # pragma: no cover - the product's observation point is gone
        raise RuntimeError("noisy_newton emitted no 'newton-step' observation: the audit cannot see its release")
    return seen["g"] if what == "gradient" else upper_triangle(seen["H"])


def _newton_function(broken):
    """The product's ``noisy_newton``, or for ``newton-noise-F`` a copy of its source whose gradient noise is
    multiplied by F (the planted error of a mis-scaled noise line inside the release code)."""
    real = _real("noisy_newton")
    F = _newton_noise_factor(broken)
    if F is None:
        return real
    return mutated_copy(real, "sigma_g[:, None] * noise_g[t]", f"{F!r} * sigma_g[:, None] * noise_g[t]")


def _newton_noise_factor(broken):
    return _planted_factor(broken, "newton-noise-")


def _planted_factor(broken, prefix):
    """F of a planted broken copy ``<prefix>F`` (None: another or no broken copy)."""
    if isinstance(broken, str) and broken.startswith(prefix):
        return float(broken[len(prefix):])
    return None


def mutated_copy(func, old: str, new: str):
    """A copy of ``func`` compiled from its source with the one occurrence of ``old`` replaced by ``new``, in
    its module's namespace (a mutation of the product's code for a broken copy; the product is untouched).
    ``RuntimeError`` if ``old`` does not occur exactly once (the product's line changed: update the plant)."""
    import inspect
    import sys
    import textwrap

    src = textwrap.dedent(inspect.getsource(func))
    if src.count(old) != 1:
        raise RuntimeError(f"cannot plant the broken copy: {old!r} occurs {src.count(old)} times in "
                           f"{func.__module__}.{func.__qualname__}")
    ns = dict(vars(sys.modules[func.__module__]))
    exec(compile(src.replace(old, new), f"<broken copy of {func.__qualname__}>", "exec"), ns)  # noqa: S102
    return ns[func.__name__]


def _dpgd_logistic_releases(estimator, X, y, X_pub, trials, rng, broken, factor=None):
    """DP-GD (logistic) with ``trials`` runs as matrix columns; the gradient noise is drawn the way the
    estimator draws it (``engine.privacy.gaussian_noise((T, d), 1, rng)``) from the estimator's generator."""
    real_path = _real("dp_gd_logistic_path")
    factor = _noise_factor(broken) if factor is None else float(factor)
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


# --------------------------------------------------------------------------------------------
# releases read at an observation point (engine.privacy.observe): PMTRidge's joint form, AdaSSP
# --------------------------------------------------------------------------------------------
class _ReleaseSeen(BaseException):
    """Raised by the audit's observer to stop a fit once its release is seen (a BaseException, so that no
    ``except Exception`` of the product can swallow it)."""


def _fit_until_release(point, fit):
    """Run ``fit()`` until the product emits ``point``; return the emitted values (the fit stops there).

    ``RuntimeError`` when the fit ends without emitting it (the observation point is gone)."""
    from engine.privacy import observe

    seen = {}

    def observer(**kw):
        seen.update({k: np.array(v, dtype=float) if not isinstance(v, tuple) else v for k, v in kw.items()})
        raise _ReleaseSeen

    try:
        with observe.observing(point, observer):
            fit()
    except _ReleaseSeen:
        return seen
    raise RuntimeError(f"the fit emitted no {point!r} observation: the audit cannot see its release")


def _stacked(real, trials, f, broken):
    """A noise function returning ``trials`` draws of ``real`` (times ``f``) stacked on a first axis."""
    def draw(*args, **kw):
        out = f * np.stack([np.asarray(real(*args, **kw), dtype=float) for _ in range(trials)])
        return _drop_diagonal(out) if broken == "partial-noise" and out.ndim == 3 else out
    return draw


def _joint_releases(estimator, X, y, X_pub, y_pub, trials, rng, broken, factor=None):
    """``trials`` releases of PMTRidge's joint form (``S~``, shape (trials, d+1, d+1)), read where the product's
    ``_release_joint`` adds its noise (observation point ``"pmt-joint-release"``).

    The fit runs once with :func:`engine.privacy.symmetric_gaussian_noise` (the release's noise function)
    returning ``trials`` draws; the observer stops the fit at the release. ``joint-noise-F`` runs a copy of
    ``_release_joint`` with its noise line multiplied by F. Returns ``{"S", "sigma", "sensitivity"}``."""
    from engine import privacy as Pmod
    from engine.pmt import _ridge_joint

    f = _noise_factor(broken) if factor is None else float(factor)
    patches = [mock.patch.object(Pmod, "symmetric_gaussian_noise",
                                 _stacked(Pmod.symmetric_gaussian_noise, trials, f, broken))]
    F = _planted_factor(broken, "joint-noise-")
    if F is not None:
        planted = mutated_copy(_ridge_joint._JointRidgeMixin._release_joint, "S_priv = S + s * W",
                               f"S_priv = S + {F!r} * s * W")
        patches.append(mock.patch.object(_ridge_joint._JointRidgeMixin, "_release_joint", planted))
    est = estimator.set_params(random_state=rng)
    with contextlib.ExitStack() as stack, _patches(*_skip_clipping_patches(broken)):
        for p_ in patches:
            stack.enter_context(p_)
        seen = _fit_until_release("pmt-joint-release", lambda: est.fit(X, y, X_pub, y_pub))
    if seen["S"].shape[0] != trials:  # pragma: no cover
        raise RuntimeError(f"expected {trials} stacked releases, got S of shape {seen['S'].shape}")
    return seen


def _adassp_releases(estimator, X, y, X_pub, y_pub, trials, rng, broken, factor=None):
    """``trials`` releases of AdaSSP (``lambda_min~`` (trials,), ``A~`` (trials, d, d), ``b~`` (trials, d)), read
    where the product's ``adassp_solve`` adds its noise (observation point ``"adassp-release"``).

    The fit runs once with its noise functions (the scalar ``engine.privacy.gaussian_noise((), ...)`` of z and
    ``ssp_noise``) returning ``trials`` draws; the observer stops the fit at the release. ``adassp-noise-F``
    runs a copy of ``adassp_solve`` with the lambda_min noise multiplied by F."""
    from engine import privacy as Pmod
    from engine.pmt import adassp

    f = _noise_factor(broken) if factor is None else float(factor)
    real_gauss, real_ssp = Pmod.gaussian_noise, _real("ssp_noise")

    def gauss(shape, *args, **kw):  # z: the one scalar draw of the fit
        if shape == ():
            return f * np.array([real_gauss((), *args, **kw) for _ in range(trials)], dtype=float)
        return real_gauss(shape, *args, **kw)

    def ssp(rng_, d):
        draws = [real_ssp(rng_, d) for _ in range(trials)]
        W, w = f * np.stack([a for a, _ in draws]), f * np.stack([b for _, b in draws])
        if broken == "partial-noise":
            W, w = _drop_diagonal(W), w.copy()
            w[:, 0] = 0.0
        return W, w

    patches = [mock.patch.object(Pmod, "gaussian_noise", gauss)]
    F = _planted_factor(broken, "adassp-noise-")
    if F is not None:
        patches.append(mock.patch.object(adassp, "adassp_solve", mutated_copy(
            adassp.adassp_solve, "lam_min + s_l * z", f"lam_min + {F!r} * s_l * z")))
    est = estimator.set_params(random_state=rng)
    with contextlib.ExitStack() as stack, _patches(("ssp_noise", ssp), *_skip_clipping_patches(broken)):
        for p_ in patches:
            stack.enter_context(p_)
        seen = _fit_until_release("adassp-release", lambda: est.fit(X, y, X_pub, y_pub))
    return seen
