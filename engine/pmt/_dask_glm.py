"""The GLMs, DP-GD and the non-private references out of core: one pass over the Dask chunks per step.

:mod:`engine.pmt.dask` releases the ridge statistics from one pass. The iterative estimators need one pass
per step, and each step is still a sum over the rows, which is what Dask does well:

- **noisy Newton** (:class:`~engine.pmt.PMTLogistic`, :class:`~engine.pmt.DPNewtonLogistic`,
  :class:`~engine.pmt.PMTPoisson`): step t releases ``g = (1/n) sum (b'(z_i^T theta) - y_i) z_i`` and
  ``H = (1/n) sum b''(z_i^T theta) z_i z_i^T``. Each block maps to its two partial sums, Dask's tree
  reduction adds them, and the driver adds the noise once (the estimators' own :func:`newton_noise` draw
  from ``random_state``), floors the eigenvalues and steps, exactly as :func:`engine.pmt._newton.noisy_newton`
  does for one run. The first pass also checks every entry and label and computes the step-0 statistics
  (``theta = 0``), so a fit of T steps reads the data T times.
- **DP-GD** (:class:`~engine.pmt.DPGDRidge`, :class:`~engine.pmt.DPGDLogistic`): step t releases the mean
  clipped per-example gradient (:func:`engine.pmt._gd._dp_gd_loop`'s arithmetic per block); one pass per
  step after a checking pass.
- **references** (:class:`~engine.pmt.LogisticReference`, :class:`~engine.pmt.PoissonReference`): the
  damped Newton of :func:`engine.pmt._newton.glm_reference_solve`, each evaluation (objective, gradient,
  Hessian at one point) one pass; :class:`~engine.pmt.RidgeReference`: the normal equations from one pass
  (``Xa^T Xa``, ``Xa^T y``; in memory it is least squares on the rows, equal for a well-conditioned design).

Every row is bounded by the same functions as in memory (whitening with the public moment and
:func:`engine.pmt.truncate_rows` at R; the raw-row clip at C; :func:`engine.pmt._gd._scale_long_rows`), and the
noise is the same draw, so for the same ``random_state`` the coefficients equal the in-memory fit's up to the
order of the floating-point sums (tests: 1e-12 relative).

Bad input (NaN, inf, ``|x| > 1e150``, labels outside ``classes``, negative counts) is found in the first
pass and raised on the driver before any noise is drawn. ``"private"`` bounds and estimators that need the
rows in memory (:class:`~engine.pmt.pooled_logistic.PMTPooledLogistic`, :class:`~engine.pmt.DPRidgeOracle`,
...) raise :class:`engine.pmt._backends.NotOutOfCoreError` instead of reading the collection into memory.

Privacy: the released quantities and their noise are those of the in-memory estimators (same sensitivities,
same ledger); n is the row count of the chunks (public under replace-one) and is known before any pass.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from dataclasses import dataclass

import numpy as np

from engine.pmt._blas import blas_limit
from engine.pmt._backends import NotOutOfCoreError, refuse_dask, register_dask_glm_fit
from engine.pmt._base import (
    MAX_ABS_VALUE,
    _check_lam,
    _check_n_ge_d,
    _check_on_singular,
    _check_positive,
    _check_steps,
    _check_X_pub,
    _check_y,
    _dp_report_for,
    _mu,
    _nonprivate_report,
    _resolve_bound,
    release_rng,
)
from engine.pmt._bounds import _kappa_from_eigs, add_intercept, pmt_radius, truncate_rows
from engine.pmt._dask_files import SLICE_ROWS, _file_problems
from engine.pmt._dask_pass import _chunk_problems, _raise_problems, _reading, private_array
from engine.pmt._gd import _clip_chunk, _dp_gd_ledger, _scale_long_rows, dp_gd_noise, logistic_dp_gd_step_size
from engine.pmt._moment import PublicMoment, public_moment
from engine.pmt._newton import (
    GLM_METHOD_NAMES,
    LOGISTIC,
    POISSON,
    NewtonResult,
    _newton_ledger,
    _project_ball,
    _sigmoid_inplace,
    _whitened_public_min_eig,
    certified_newton_sensitivities,
    newton_eig_floor,
    newton_noise,
    newton_noise_dominance,
)

__all__ = ["NotOutOfCoreError", "fit_glm_dask", "file_source", "GLM_DASK_ESTIMATORS"]


# --------------------------------------------------------------------------------------------
# the rows of one block
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Rows:
    """How one block ``[X | y]`` becomes the rows a statistic sums (picklable: it travels to the workers).

    ``labels``: ``("logistic", c0, c1)``, ``("poisson", y_max or None)`` or ``("real",)``; ``scaling``: a
    public :class:`engine.pmt._public_scale.PublicScaling` applied first; ``whiten``: ``Sigma_pub^{-1/2}``
    (PMT) or None; ``radius``: truncation / clip radius of ``Z`` or None; ``long_rows``: DP-GD's scaling of rows
    longer than 1e15 (``"x"`` logistic, ``"xy"`` ridge) or None.
    """

    p: int
    fit_intercept: bool
    labels: tuple
    whiten: np.ndarray | None = None
    radius: float | None = None
    scaling: object = None
    long_rows: str | None = None


def _labels(y, spec):
    kind = spec.labels[0]
    if kind == "logistic":
        return (y == spec.labels[2]).astype(np.float64)
    if kind == "poisson" and spec.labels[1] is not None:
        return np.minimum(y, spec.labels[1])
    return y


def _rows(B, spec):
    """``(Xa, Z, y)`` of a checked block: raw rows with the intercept (after the public scaling), the bounded rows
    (whitened and truncated, or clipped, or Xa itself) and the model's response (labels in {0, 1}, clipped
    counts, the centred response)."""
    X, y = B[:, :spec.p], B[:, spec.p]
    if spec.scaling is not None:
        X, y = spec.scaling.features(X), y - spec.scaling.y_center
    Xa = add_intercept(X) if spec.fit_intercept else np.ascontiguousarray(X)
    y = _labels(y, spec)
    if spec.long_rows == "x":
        Xa, _ = _scale_long_rows(Xa)
    elif spec.long_rows == "xy":
        Xa, y = _scale_long_rows(Xa, y)
    Z = Xa @ spec.whiten if spec.whiten is not None else Xa
    truncated = None
    if spec.radius is not None:
        Z, _, truncated = truncate_rows(Z, spec.radius)
    return Xa, Z, y, truncated


def _layout(parts):
    out, k = {}, 0
    for name, size in parts:
        out[name] = slice(k, k + size)
        k += size
    return out, k


def _packed(block, *, fn, parts, kw):
    """One block -> one packed row of partial sums (``fn(B, **kw)`` returns a dict of the named parts), summed over
    slices of :data:`SLICE_ROWS` rows (every part is a sum over rows), so a block's temporaries stay small."""
    lay, K = _layout(parts)
    out = np.zeros((1, K))
    B = np.asarray(block, dtype=float)
    for s0 in range(0, max(B.shape[0], 1), SLICE_ROWS):
        for name, v in fn(B[s0:s0 + SLICE_ROWS], **kw).items():
            out[0, lay[name]] += np.ravel(v)
    return out


class _Pass:
    """The private rows as one Dask array and the passes over them (each a map over the blocks and Dask's tree sum)."""

    def __init__(self, data, names, source):
        self.data, self.names, self.source = data, names, source
        self.n = int(data.shape[0])
        self.passes = 0

    def run(self, fn, parts, **kw):
        lay, K = _layout(parts)
        nb = self.data.numblocks[0]
        rows = self.data.map_blocks(_packed, fn=fn, parts=tuple(parts), kw=kw, chunks=((1,) * nb, (K,)), dtype=float,
                                    meta=np.empty((0, 0)))
        # the blocks' products are (rows, d) x (d, d) with d small: memory-bound, one BLAS thread each
        # (engine.pmt._blas.blas_threads; OpenBLAS's own threads made a pass ~10x slower on a busy 2-core machine),
        # while Dask runs the blocks in parallel. Process-wide: the threaded scheduler's workers are this process.
        with _reading(self.source, self.names), blas_limit(1):
            tot = rows.sum(axis=0).compute()  # Dask's tree reduction; the driver holds K numbers
        self.passes += 1
        return {name: tot[s] for name, s in lay.items()}


# --------------------------------------------------------------------------------------------
# the first pass: every entry and label checked, the statistics at theta = 0 and the display numbers
# --------------------------------------------------------------------------------------------
_FAMILIES = {"logistic": LOGISTIC, "poisson": POISSON}


def _first_block(B, *, spec, family, newton):
    family = _FAMILIES[family]  # by name: the module's own object on every worker (identity checks below)
    p = spec.p
    finite = np.isfinite(B)
    out = {"n": B.shape[0], "nonfinite": B.shape[0] - finite.sum(axis=0)}
    with np.errstate(invalid="ignore"):
        out["big"] = (np.abs(np.where(finite, B, 0.0)) > MAX_ABS_VALUE).sum(axis=0)
    if out["nonfinite"].any() or out["big"].any():
        return out  # the driver raises before any noise; no statistics from bad rows
    yr = B[:, p]
    kind = spec.labels[0]
    if kind == "logistic":
        out["bad"] = np.count_nonzero(~((yr == spec.labels[1]) | (yr == spec.labels[2])))
        out["pos"] = np.count_nonzero(yr == spec.labels[2])
    elif kind == "poisson":
        out["bad"] = np.count_nonzero(yr < 0)
        out["yclip"] = 0 if spec.labels[1] is None else np.count_nonzero(yr > spec.labels[1])
    if out.get("bad"):
        return out
    Xa, Z, y, truncated = _rows(B, spec)
    out["G"] = Xa.T @ Xa
    out["xty"] = Xa.T @ y
    if truncated is not None:
        out["trunc"] = np.count_nonzero(truncated)
    if newton:
        u = Z @ np.zeros(Z.shape[1])
        out["ZtZ"] = Z.T @ Z
        out["g0"] = Z.T @ (family.mean(u) - y)
        out["H0"] = (Z * family.var(u)[:, None]).T @ Z
    return out


def _first_pass(ps, spec, d, *, family=LOGISTIC, newton=False):
    """Check every entry (and label) and sum the first statistics; raises before any noise is drawn."""
    p = spec.p
    parts = [("n", 1), ("nonfinite", p + 1), ("big", p + 1), ("bad", 1), ("pos", 1), ("yclip", 1), ("trunc", 1),
             ("G", d * d), ("xty", d)]
    if newton:
        parts += [("ZtZ", d * d), ("g0", d), ("H0", d * d)]
    s = ps.run(_first_block, parts, spec=spec, family=family.name, newton=newton)
    if s["nonfinite"].any() or s["big"].any():
        problems = _file_problems(ps.source, ps.names) if ps.source is not None else []
        _raise_problems(problems or _chunk_problems(ps.data, ps.names))
    count = int(round(s["n"][0]))
    if count != ps.n:
        raise ValueError(f"the pass counted {count} private rows but the chunks say n = {ps.n}; the data changed "
                         "between the count and the pass")
    kind = spec.labels[0]
    if kind == "logistic" and s["bad"][0]:
        c = (spec.labels[1], spec.labels[2])
        raise ValueError(f"y contains labels other than classes={c!r}; every label must be one of the two given "
                         "classes")
    if kind == "poisson" and s["bad"][0]:
        raise ValueError("y contains negative values; Poisson counts must be >= 0")
    out = {k: v.reshape(d, d) if v.size == d * d and k in ("G", "ZtZ", "H0") else v for k, v in s.items()}
    out["n_pos"] = int(round(s["pos"][0]))
    out["n_trunc"] = int(round(s["trunc"][0]))
    out["n_yclip"] = int(round(s["yclip"][0]))
    return out


def _kappa(G, n):
    return _kappa_from_eigs(np.linalg.eigvalsh(G / n))


# --------------------------------------------------------------------------------------------
# noisy Newton: one pass per step, the noise on the driver
# --------------------------------------------------------------------------------------------
def _newton_block(B, *, spec, family, theta):
    family = _FAMILIES[family]
    """Partial sums of one noisy-Newton step at ``theta`` (what :func:`batched_glm_statistics` sums, one run)."""
    _, Z, y, _ = _rows(B, spec)
    U = Z @ theta[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        if family is LOGISTIC:  # one sigmoid for both: W = s (1 - s)
            S = _sigmoid_inplace(U)
            W = S * (1 - S)
            R = np.subtract(S, y[:, None], out=S)
        else:
            R = family.mean(U) - y[:, None]
            W = family.var(U)
    return {"g": Z.T @ R, "H": (Z * W[:, 0:1]).T @ Z}


def _noisy_newton_passes(ps, spec, first, *, family, pen, s_g, s_H, gn, Hn, n_steps, eig_floor, tol,
                         theta_radius=None):
    """:func:`engine.pmt._newton.noisy_newton` for one run, the statistics of step t >= 1 from a pass each."""
    n = ps.n
    d = pen.shape[0]
    sigma_g, sigma_H = np.array([s_g]), np.array([s_H])
    noise_g, noise_H = gn[:, None, :], Hn[:, None]
    runs = 1
    floor = np.broadcast_to(np.asarray(newton_eig_floor(eig_floor, d, sigma_H) if isinstance(eig_floor, str)
                                       else eig_floor, dtype=float), (runs,))[:, None]
    theta = np.zeros((runs, d))
    prev = theta
    fixes = np.zeros(runs, dtype=int)
    finite = np.ones(runs, dtype=bool)
    kappa = np.full(runs, np.nan)
    min_eig = np.full(runs, np.nan)
    for t in range(int(n_steps)):
        if t == 0:
            g1, H1 = first["g0"] / n, first["H0"] / n
            H1 = (H1 + H1.T) / 2
            g = np.broadcast_to(g1, (runs, d)).copy()
            H = np.broadcast_to(H1, (runs, d, d)).copy()
        else:
            s = ps.run(_newton_block, [("g", d), ("H", d * d)], spec=spec, family=family.name, theta=theta[0].copy())
            Hs = s["H"].reshape(d, d)
            g = (s["g"] / n)[None]
            H = (((Hs + Hs.T) / 2) / n)[None]
        g = g + np.einsum("...ij,...j->...i", pen, theta) + sigma_g[:, None] * noise_g[t]
        H = H + pen + sigma_H[:, None, None] * noise_H[t]
        ok = np.all(np.isfinite(H), axis=(1, 2)) & np.all(np.isfinite(g), axis=1)
        finite &= ok
        H = np.where(ok[:, None, None], H, np.eye(d))
        g = np.where(ok[:, None], g, 0.0)
        with blas_limit(1):
            w, V = np.linalg.eigh(H)
        kappa = np.atleast_1d(_kappa_from_eigs(w))
        min_eig = w[:, 0].copy()
        low = w < floor
        fixes += low.any(axis=1)
        w = np.maximum(w, floor)
        step = np.einsum("rij,rj->ri", V, np.einsum("rji,rj->ri", V, g) / w)
        prev = theta
        theta = _project_ball(theta - 1.0 * step, theta_radius)
        finite &= np.all(np.isfinite(theta), axis=1)
    last = np.linalg.norm(theta - prev, axis=1)
    converged = finite & (last <= tol * (1.0 + np.linalg.norm(prev, axis=1)))
    return NewtonResult(theta, fixes, converged, last, kappa, min_eig, int(n_steps))


def _fit_newton(est, ps, spec, first, pen, R, d, nb, dlt, eps, lam, T, eig_floor, tol, *, G=1.0, H=0.25,
                family=LOGISTIC, theta_radius=None, report_min_eig=False, public_curvature=math.nan, extra, **fields):
    """:meth:`engine.pmt._newton._NoisyNewtonMixin._fit_newton` with the steps as passes (same noise, same report)."""
    n = ps.n
    mu = _mu(eps, dlt, n, est.sampler)
    sens_g, sens_H = certified_newton_sensitivities(R, n, d, nb, G=G, H=H, family=family, theta_radius=theta_radius)
    ledger, s_g, s_H, mu0 = _newton_ledger(dlt, mu, T, sens_g, sens_H, nb)
    rng = release_rng(est)
    Hn, gn = newton_noise(rng, T, d)
    est.eig_floor_ = float(newton_eig_floor(eig_floor, d, s_H))
    res = _noisy_newton_passes(ps, spec, first, family=family, pen=pen, s_g=s_g, s_H=s_H, gn=gn, Hn=Hn, n_steps=T,
                               eig_floor=eig_floor, tol=tol, theta_radius=theta_radius)
    g, h = "gradient (per step)", "Hessian (per step)"
    if report_min_eig:
        extra = {"min_eig_last": float(res.min_eig[0]), **extra}
    extra = {**newton_noise_dominance(s_H, d, public_curvature), **extra, "engine": "dask", "passes": ps.passes}
    est.report_ = _dp_report_for(
        est,
        GLM_METHOD_NAMES.get(est._key, est._key), eps, dlt, mu, nb, n, d, lam, ledger, {g: sens_g, h: sens_H},
        {g: s_g, h: s_H}, kappa_noisy=float(res.kappa_noisy[0]), eig_fixes=int(res.eig_fixes[0]),
        eig_floor=est.eig_floor_, n_iter=res.n_steps, converged=bool(res.converged[0]),
        extra={"mu_per_release": mu0, "last_step": float(res.last_step[0]), "tol": tol, **extra}, **fields,
    )
    return res


def _numeric_classes(est):
    from engine.pmt.logistic import _check_classes

    c = _check_classes(est.classes)
    try:
        c0, c1 = float(c[0]), float(c[1])
    except (TypeError, ValueError):
        raise NotOutOfCoreError(f"on Dask the labels must be numeric: classes={c!r} names non-numeric labels; "
                                "map them to numbers (e.g. 0 and 1) in the files") from None
    if isinstance(c[0], bool) or isinstance(c[1], bool) or not (math.isfinite(c0) and math.isfinite(c1)):
        raise ValueError(f"classes must be two finite numbers on Dask, got {c!r}")
    return c0, c1


def _no_private(est, *names):
    for name in names:
        v = getattr(est, name, None)
        if isinstance(v, str) and v == "private":
            raise NotOutOfCoreError(f"{type(est).__name__}({name}='private') cannot run out of core: the bound is read "
                                    "off the private rows outside any mechanism; give None (public default) or a float")


#: The files being fitted (:func:`file_source`): private-input errors then name the file.
_SOURCE = contextvars.ContextVar("dask_glm_source", default=None)


@contextlib.contextmanager
def file_source(source):
    """Within this block, fits on Dask name the file of a bad entry (``source`` from :func:`read_private`)."""
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def _open(X, y, source):
    source = source if source is not None else _SOURCE.get()
    with _reading(source, source["columns"] if source else None):
        data, names = private_array(X, y)  # counts the rows when the chunks are unknown (CSV)
    ps = _Pass(data, names, source)
    p = int(data.shape[1]) - 1
    if p < 1:
        raise ValueError("X must have at least one column")
    return ps, p


def _pmt_moment(est, X_pub, p):
    """The public moment of a PMT GLM fit: X_pub is a PublicMoment (fit_public's) or public rows."""
    Xq = _check_X_pub(X_pub, p, True)
    return Xq if isinstance(Xq, PublicMoment) else public_moment(Xq, fit_intercept=est.fit_intercept,
                                                                 on_singular=est.on_singular)


def _pmt_fields(mom, R, first, n):
    return dict(radius=R, n_pub=mom.n_pub, kappa_raw=_kappa(first["G"], n), kappa_pub=mom.kappa,
                kappa_pmt=_kappa(first["ZtZ"], n), frac_truncated=first["n_trunc"] / n,
                sigma_pub_regularized=mom.regularized, tau=mom.tau)


def _check_moment_intercept(est, mom):
    if mom.fit_intercept != bool(est.fit_intercept):
        raise ValueError(f"the public moment was built with fit_intercept={mom.fit_intercept} but the "
                         f"estimator has fit_intercept={est.fit_intercept}")


def _fit_pmt_logistic(est, X, y, X_pub, y_pub, source):
    from engine.pmt.logistic import WHITEN, choose_whitening
    from engine.pmt.public_info import standardizing_moment

    eps, dlt, nb, lam, eta, T, eig_floor, tol = est._newton_params()
    _check_on_singular(est.on_singular)
    if est.whiten not in WHITEN:
        raise ValueError(f"whiten must be one of {WHITEN}, got {est.whiten!r}")
    c0, c1 = _numeric_classes(est)
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    mom = _pmt_moment(est, X_pub, p)
    whiten, ratio = choose_whitening(est.whiten, d=d, n=n, eta=eta, epsilon=eps, delta=dlt, n_steps=T,
                                     fit_intercept=est.fit_intercept)
    if whiten == "standardize":
        mom = standardizing_moment(mom)
    _check_moment_intercept(est, mom)
    R = pmt_radius(d, n, eta)
    W = mom.Sigma_pub_inv_sqrt
    pen = 2.0 * lam * mom.whiten_quadratic(est._penalty_mask(d))
    spec = _Rows(p, bool(est.fit_intercept), ("logistic", c0, c1), whiten=W, radius=R)
    first = _first_pass(ps, spec, d, family=LOGISTIC, newton=True)
    res = _fit_newton(est, ps, spec, first, pen, R, d, nb, dlt, eps, lam, T, eig_floor, tol,
                      **_pmt_fields(mom, R, first, n), report_min_eig=True,
                      extra={"family": "logistic", "whiten": whiten, "whitened_noise_dominance": ratio},
                      public_curvature=0.25 * _whitened_public_min_eig(mom))
    est.theta_tilde_ = res.theta[0]
    est._set_theta(W @ res.theta[0], p)
    est.transform_ = None  # the transformed rows are never held
    return est


def _fit_pmt_poisson(est, X, y, X_pub, y_pub, source):
    from engine import privacy as P
    from engine.pmt.poisson import poisson_bounds

    eps, dlt, nb, lam, eta, T, eig_floor, tol = est._newton_params()
    if est.y_max is None:
        raise ValueError("y_max (public upper clip of the counts) is required for PMTPoisson; it is never "
                         "taken from the private data")
    y_max = P.check_bound("y_max", est.y_max)
    B = P.check_bound("theta_radius", est.theta_radius)
    _check_on_singular(est.on_singular)
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    mom = _pmt_moment(est, X_pub, p)
    _check_moment_intercept(est, mom)
    R = pmt_radius(d, n, eta)
    G, H = poisson_bounds(R, B, y_max)
    if not (math.isfinite(G) and math.isfinite(H)):
        raise ValueError(f"R * theta_radius = {R * B:.3g} is too large: e^(R B_theta) overflows; "
                         "choose a smaller theta_radius")
    W = mom.Sigma_pub_inv_sqrt
    pen = 2.0 * lam * mom.whiten_quadratic(est._penalty_mask(d))
    spec = _Rows(p, bool(est.fit_intercept), ("poisson", y_max), whiten=W, radius=R)
    first = _first_pass(ps, spec, d, family=POISSON, newton=True)
    res = _fit_newton(est, ps, spec, first, pen, R, d, nb, dlt, eps, lam, T, eig_floor, tol, G=G, H=H,
                      family=POISSON, theta_radius=B, **_pmt_fields(mom, R, first, n), B_y=y_max,
                      frac_y_clipped=first["n_yclip"] / n, public_curvature=_whitened_public_min_eig(mom),
                      extra={"family": "poisson", "theta_radius": B, "G": G, "H": H})
    est.theta_tilde_ = res.theta[0]
    est._set_theta(W @ res.theta[0], p)
    est.transform_ = None
    return est


def _fit_dp_newton(est, X, y, X_pub, y_pub, source):
    from engine.pmt.logistic import _raw_public_min_eig

    eps, dlt, nb, lam, eta, T, eig_floor, tol = est._newton_params()
    _no_private(est, "clip_radius")
    c0, c1 = _numeric_classes(est)
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    Xq = _check_X_pub(X_pub, p, False)
    C = est._clip_radius(None, d, n, eta)
    spec = _Rows(p, bool(est.fit_intercept), ("logistic", c0, c1), radius=C)
    n_pub, kpub = est._public_kappa(Xq)
    curv = math.nan if Xq is None else 0.25 * _raw_public_min_eig(Xq, est.fit_intercept)
    first = _first_pass(ps, spec, d, family=LOGISTIC, newton=True)
    res = _fit_newton(est, ps, spec, first, 2.0 * lam * est._penalty_mask(d), C, d, nb, dlt, eps, lam, T, eig_floor,
                      tol, public_curvature=curv, radius=C, n_pub=n_pub, kappa_raw=_kappa(first["G"], n),
                      kappa_pub=kpub, frac_truncated=first["n_trunc"] / n, report_min_eig=True,
                      extra={"family": "logistic"})
    est._set_theta(res.theta[0], p)
    return est


# --------------------------------------------------------------------------------------------
# DP-GD: one pass per step
# --------------------------------------------------------------------------------------------
def _gd_block(B, *, spec, theta, C, loss):
    """Partial sums of one DP-GD step: ``U^T clip(s, -C, C)`` and the clipped count (:func:`_dp_gd_loop`)."""
    Xa, _, y, _ = _rows(B, spec)
    d = Xa.shape[1]
    rn = np.linalg.norm(Xa, axis=1)
    safe = np.where(rn > 0, rn, 1.0)
    Ut = np.ascontiguousarray((Xa / safe[:, None]).T)
    if loss == "ridge":
        S = np.ascontiguousarray(2.0 * rn[:, None] * np.hstack([Xa, -y[:, None]]))
        th1 = np.ones((d + 1, 1))
        th1[:d] = theta
        r = S @ th1
    else:
        r = _sigmoid_inplace(np.ascontiguousarray(Xa) @ theta)
        r *= rn[:, None]
        r -= (rn * y)[:, None]
    cnt = np.count_nonzero(np.abs(r) > C, axis=0)
    _clip_chunk(r, C)
    return {"grad": Ut @ r, "cnt": cnt}


def _fit_dp_gd(est, ps, spec, first, p, d, eps, dlt, nb, lam, T, step, C, method, Xq, *, loss, extra=None,
               report_converged=False, penalty=None):
    """:meth:`engine.pmt._gd._DPGDMixin._fit_dp_gd` with the steps as passes (same noise, same report)."""
    n = ps.n
    mu = _mu(eps, dlt, n, est.sampler)
    ledger, mu_t, sens, sigma_t = _dp_gd_ledger(dlt, mu, T, C, n, nb, d)
    Pm = est._penalty_mask(d) if penalty is None else penalty
    rng = release_rng(est)
    noise = dp_gd_noise(rng, T, d)[:, :, None]
    sg, lm, st = np.array([sigma_t]), np.array([lam], dtype=float), np.array([step], dtype=float)
    theta = np.zeros((d, 1))
    cnt = 0.0
    for t in range(int(T)):
        s = ps.run(_gd_block, [("grad", d), ("cnt", 1)], spec=spec, theta=theta.copy(), C=float(C), loss=loss)
        grad = s["grad"][:, None]
        cnt = s["cnt"][0]
        g = grad / n + sg * noise[t] + 2.0 * lm * (Pm @ theta)
        theta = theta - st * g
    est._set_theta(theta[:, 0], p)
    key = "gradient (per step)"
    est.report_ = _dp_report_for(
        est,
        method, eps, dlt, mu, nb, n, d, lam, ledger, {key: sens}, {key: sigma_t}, radius=C,
        n_pub=0 if Xq is None else (Xq.n_pub if hasattr(Xq, "n_pub") else Xq.shape[0]),
        kappa_raw=_kappa_from_eigs(np.linalg.eigvalsh(first["G"])), frac_truncated=float(cnt / n), n_iter=T,
        converged=bool(np.all(np.isfinite(theta))) if report_converged else None,
        extra={"step_size": step, "mu_per_step": mu_t, **(extra or {}), "engine": "dask", "passes": ps.passes},
    )
    return est


def _fit_dp_gd_logistic(est, X, y, X_pub, y_pub, source):
    eps, dlt, nb, lam, eta, T = est._dp_gd_params()
    _no_private(est, "clip_norm")
    c0, c1 = _numeric_classes(est)
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    Xq = _check_X_pub(X_pub, p, est.step_size is None)
    step = est._dp_gd_step_size(Xq, lambda lam_max: logistic_dp_gd_step_size(lam_max, lam))
    C = _resolve_bound(est.clip_norm, "clip_norm", public=lambda: pmt_radius(d, n, eta), private=None)
    spec = _Rows(p, bool(est.fit_intercept), ("logistic", c0, c1), long_rows="x")
    first = _first_pass(ps, spec, d)
    return _fit_dp_gd(est, ps, spec, first, p, d, eps, dlt, nb, lam, T, step, C, GLM_METHOD_NAMES["dp-gd"], Xq,
                      loss="logistic", extra={"family": "logistic"}, report_converged=True)


def _fit_dp_gd_ridge(est, X, y, X_pub, y_pub, source):
    from engine.pmt._base import METHOD_NAMES
    from engine.pmt._public_scale import public_scaling
    from engine.pmt.baselines import _scaled_back

    eps, dlt, nb, lam, eta, T = est._dp_gd_params()
    _no_private(est, "clip_norm")
    if est.clip_norm is None:
        _no_private(est, "response_bound")
    need_y_pub = est.clip_norm is None and est.response_bound is None
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    Xq = _check_X_pub(X_pub, p, est.step_size is None)
    yq = None
    if y_pub is not None:
        if isinstance(Xq, PublicMoment):
            raise ValueError("y_pub goes with public rows; a public moment has no labels (pass response_bound)")
        yq = _check_y(y_pub, Xq.shape[0] if Xq is not None else np.shape(y_pub)[0], "y_pub")
    elif need_y_pub:
        raise ValueError("public labels are required here: pass y_pub to fit(), or give response_bound=<float>")
    sc = public_scaling(Xq, yq, center=est.center, fit_intercept=est.fit_intercept,
                        penalize_intercept=est.penalize_intercept, p=p)
    if sc is not None:  # public statistics only (engine.pmt._public_scale)
        Xq = sc.public(Xq)
        yq = None if yq is None else yq - sc.y_center
    Pm = est._penalty_mask(d) if sc is None else sc.penalty(est._penalty_mask(d))
    p_max = float(np.max(np.diag(Pm))) if Pm.size else 0.0
    step = est._dp_gd_step_size(Xq, lambda lam_max: 1.0 / (2.0 * float(lam_max) + 2.0 * lam * max(p_max, 1.0)))
    C = _resolve_bound(est.clip_norm, "clip_norm", public=lambda: 2.0 * pmt_radius(d, n, eta) * est._response_bound(
        yq, None, n, eta), private=None)
    spec = _Rows(p, bool(est.fit_intercept), ("real",), scaling=sc, long_rows="xy")
    first = _first_pass(ps, spec, d)
    _fit_dp_gd(est, ps, spec, first, p, d, eps, dlt, nb, lam, T, step, C, METHOD_NAMES["dp-gd"], Xq, loss="ridge",
               penalty=Pm)
    return _scaled_back(est, sc, p)


# --------------------------------------------------------------------------------------------
# the non-private references
# --------------------------------------------------------------------------------------------
def _reference_block(B, *, spec, family, theta):
    family = _FAMILIES[family]
    Xa, _, y, _ = _rows(B, spec)
    u = Xa @ theta
    with np.errstate(over="ignore", invalid="ignore"):
        return {"f": np.sum(family.b(u) - y * u), "g": Xa.T @ (family.mean(u) - y),
                "H": (Xa * family.var(u)[:, None]).T @ Xa}


def _reference_solve(ps, spec, lam, Pm, family, *, max_iter=100, tol=1e-10):
    """:func:`engine.pmt._newton.glm_reference_solve` with every evaluation (objective, gradient and Hessian at one
    point) one pass. Returns ``(theta, converged, n_iter, evaluate)``."""
    n = ps.n
    d = Pm.shape[0]
    pen = 2.0 * lam * np.asarray(Pm, dtype=float)

    def evaluate(th):
        s = ps.run(_reference_block, [("f", 1), ("g", d), ("H", d * d)], spec=spec, family=family.name, theta=th.copy())
        Hs = s["H"].reshape(d, d) / n
        return float(s["f"][0] / n + lam * th @ Pm @ th), s["g"] / n, (Hs + Hs.T) / 2

    theta = np.zeros(d)
    f, g, H = evaluate(theta)
    for it in range(1, max_iter + 1):
        g = g + pen @ theta
        H = H + pen
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        dec = float(g @ step) / 2
        if dec < tol:
            return theta - step, True, it, evaluate
        a = 1.0
        while a > 1e-10:
            cand = theta - a * step
            fc, gc, Hc = evaluate(cand)
            if np.isfinite(fc) and fc <= f - 0.25 * a * 2 * dec:
                break
            a *= 0.5
        theta, f, g, H = cand, fc, gc, Hc
    return theta, False, max_iter, evaluate


def _fit_logistic_reference(est, X, y, X_pub, y_pub, source):
    lam = _check_lam(est.lam)
    max_iter = _check_steps(est.max_iter, "max_iter")
    tol = _check_positive(est.tol, "tol")
    c0, c1 = _numeric_classes(est)
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    spec = _Rows(p, bool(est.fit_intercept), ("logistic", c0, c1))
    first = _first_pass(ps, spec, d)
    if first["n_pos"] in (0, n):  # the reference refuses a one-class sample, as in memory (it releases nothing)
        raise ValueError(f"y must contain both classes {(est.classes[0], est.classes[1])!r}; a one-class sample has "
                         "no (finite) logistic fit")
    Pm = est._penalty_mask(d)
    theta, ok, it, evaluate = _reference_solve(ps, spec, lam, Pm, LOGISTIC, max_iter=max_iter, tol=tol)
    if lam == 0 and evaluate(theta)[0] < 1e-6:
        ok = False  # (near) perfect separation
    if not ok:
        warnings.warn(f"the non-private logistic fit did not converge in max_iter={max_iter} Newton steps (at lam=0 "
                      "separable data have no finite MLE); use lam > 0", UserWarning, stacklevel=4)
    est._set_theta(theta, p)
    est.converged_ = ok
    est.report_ = _nonprivate_report(GLM_METHOD_NAMES["non-private"], n, d, lam,
                                     kappa_raw=_kappa_from_eigs(np.linalg.eigvalsh(first["G"])), frac_truncated=0.0,
                                     n_iter=it, converged=ok,
                                     extra={"family": "logistic", "engine": "dask", "passes": ps.passes})
    return est


def _fit_poisson_reference(est, X, y, X_pub, y_pub, source):
    lam = _check_lam(est.lam)
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    spec = _Rows(p, bool(est.fit_intercept), ("poisson", None))
    _first_pass(ps, spec, d)
    theta, ok, it, _ = _reference_solve(ps, spec, lam, est._penalty_mask(d), POISSON)
    est._set_theta(theta, p)
    est.converged_ = ok
    est.report_ = _nonprivate_report("Non-private", n, d, lam, n_iter=it, converged=ok,
                                     extra={"family": "poisson", "engine": "dask", "passes": ps.passes})
    return est


def _fit_ridge_reference(est, X, y, X_pub, y_pub, source):
    from engine.pmt._base import METHOD_NAMES

    lam = _check_lam(est.lam)
    ps, p = _open(X, y, source)
    n = ps.n
    d = _check_n_ge_d(n, p, est.fit_intercept)
    spec = _Rows(p, bool(est.fit_intercept), ("real",))
    first = _first_pass(ps, spec, d)
    G = first["G"]
    Pm = est._penalty_mask(d)
    # the normal equations of the stacked least-squares system the in-memory fit solves (equal for a
    # well-conditioned design; the rows themselves are never held)
    theta = np.linalg.lstsq(G + n * lam * Pm, first["xty"], rcond=None)[0]
    est._set_theta(theta, p)
    est.report_ = _nonprivate_report(
        METHOD_NAMES["non-private"], n, d, lam, kappa_raw=_kappa_from_eigs(np.linalg.eigvalsh(G)),
        kappa_noisy=_kappa_from_eigs(np.linalg.eigvalsh(G + n * lam * Pm)), frac_truncated=0.0, frac_y_clipped=0.0,
        extra={"engine": "dask", "passes": ps.passes})
    return est


# --------------------------------------------------------------------------------------------
# dispatch
# --------------------------------------------------------------------------------------------
def _handlers():
    from engine.pmt.baselines import DPGDRidge, RidgeReference
    from engine.pmt.logistic import DPGDLogistic, DPNewtonLogistic, LogisticReference, PMTLogistic
    from engine.pmt.poisson import PMTPoisson, PoissonReference

    return {PMTLogistic: _fit_pmt_logistic, DPNewtonLogistic: _fit_dp_newton, DPGDLogistic: _fit_dp_gd_logistic,
            LogisticReference: _fit_logistic_reference, PMTPoisson: _fit_pmt_poisson,
            PoissonReference: _fit_poisson_reference, DPGDRidge: _fit_dp_gd_ridge, RidgeReference: _fit_ridge_reference}


#: Names of the estimators this module fits on Dask.
GLM_DASK_ESTIMATORS = ("PMTLogistic", "DPNewtonLogistic", "DPGDLogistic", "LogisticReference", "PMTPoisson",
                       "PoissonReference", "DPGDRidge", "RidgeReference")


def fit_glm_dask(estimator, X, y, X_pub=None, y_pub=None, *, source=None):
    """Fit one of :data:`GLM_DASK_ESTIMATORS` on Dask collections (module docstring).

    Parameters
    ----------
    estimator : PMTLogistic, DPNewtonLogistic, DPGDLogistic, LogisticReference, PMTPoisson, PoissonReference,
        DPGDRidge or RidgeReference (exactly these classes: a subclass may change what ``fit`` does)
    X : dask.array.Array of shape (n, p) or dask.dataframe.DataFrame
    y : dask.array.Array, dask.dataframe.Series or in-memory array of length n
    X_pub, y_pub : in-memory public rows (or a PublicMoment), as for the estimator's ``fit``
    source : dict, optional
        File provenance (:func:`engine.pmt.dask.read_private`): errors then name the file.

    Raises
    ------
    NotOutOfCoreError
        Another estimator, or a ``"private"`` bound, or non-numeric ``classes``.
    PrivateInputError, ValueError, TypeError
        Bad input, before any noise is drawn.
    """
    fit = _handlers().get(type(estimator))
    if fit is None:
        refuse_dask(type(estimator).__name__, X, y)
        raise NotOutOfCoreError(f"{type(estimator).__name__} is not fitted on Dask here")
    refuse_dask("the public rows (X_pub, y_pub) are held in memory; they", X_pub, y_pub)
    return fit(estimator, X, y, X_pub, y_pub, source)


register_dask_glm_fit(fit_glm_dask)
