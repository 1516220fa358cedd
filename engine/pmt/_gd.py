"""Full-batch DP gradient descent with per-example gradient clipping: the DP-GD baselines' machinery.

One clipped-gradient loop (:func:`_dp_gd_loop`) serves both losses; what differs is the per-example
residual, i.e. the gradient: squared loss for ridge (:func:`dp_gd_ridge_path`), logistic loss for
logistic regression (:func:`dp_gd_logistic_path`). Many runs at once: runs are the columns of one
``d x runs`` matrix, rows are processed in cache-sized chunks, and groups of runs go to threads with
single-threaded BLAS. :class:`_DPGDMixin` is the estimators' shared fit (ledger, noise, report).
Accounting (``docs/specs/PMT.md`` section 5): T equal Gaussian releases of the mean clipped gradient, each with
``mu_t = mu / sqrt(T)`` and sensitivity ``2C / n`` (replace-one, the only relation offered: n is public).
"""

from __future__ import annotations

import numpy as np

from engine import privacy as P
from engine.pmt._base import _check_steps, _dp_report_for, _gram_kappa, _mu, _run_groups, release_rng
from engine.pmt._newton import _sigmoid_inplace

#: Rows longer than this (ridge: the joint row ``(x_i, y_i)``; logistic: ``x_i``) are scaled onto this
#: norm, in float64, before anything is cast to the working dtype.
MAX_GD_ROW_NORM = 1e15

#: Residual elements per chunk and thread (float32: 256 KB, within one core's L2). 512 rows x 250 runs was
#: within the load noise of ``bench/bench_dpgd.py`` and changes float32 rounding, so the chunking (and
#: every sweep value) stays as before.
_CHUNK_ELEMS = 65536


def _scale_long_rows(Xa, y=None, K: float = MAX_GD_ROW_NORM):
    """Scale every row longer than ``K`` onto norm ``K`` in float64: ``(x_i, y_i) <- f_i (x_i, y_i)``,
    ``f_i = min(1, K / ||(x_i, y_i)||)`` (``y`` joins the norm when given).

    Why: the validated domain is ``|entry| <= 1e150`` (:data:`engine.pmt._base.MAX_ABS_VALUE`), but the
    DP-GD products run in float32 in the sweeps (max 3.4e38): a private entry of 1e20 made
    ``2 ||x_i|| x_i`` overflow to inf, every run NaN, and NaN-vs-finite told the neighbours apart. With
    rows of norm <= 1e15 every product stays below ~1e31 times ``||theta||`` in any dtype, float64's
    ``1e150`` edge included.

    Privacy: ``f_i`` depends on row i alone, and each example's gradient is still clipped to norm C
    afterwards, so the sensitivity ``2C/n`` is unchanged. Effect on the fit: for ridge the signed
    residual becomes ``f_i^2 s_i`` (same sign), so the clipped gradient differs from the unscaled one
    only when ``|f_i^2 s_i| < C``, i.e. for a row longer than 1e15 fitted almost exactly; for logistic
    the sigmoid argument shrinks by ``f_i`` (the gradient direction ``x_i / ||x_i||`` is unchanged).
    Rows of norm <= 1e15 are untouched, bit for bit.
    """
    Xa = np.asarray(Xa, dtype=float)
    Z = Xa if y is None else np.column_stack([Xa, y])
    nrm = np.linalg.norm(Z, axis=1)
    if not np.any(nrm > K):
        return Xa, y
    f = np.where(nrm > K, K / np.where(nrm > 0, nrm, 1.0), 1.0)
    return Xa * f[:, None], (None if y is None else np.asarray(y, dtype=float) * f)


def _dp_gd_setup(Xa, sigma, lam, step_size, clip_norm, dtype):
    """Shared set-up of the batched DP-GD paths: per-run lam/step, row norms, unit rows ``U^T`` (dtype)."""
    Xa = np.asarray(Xa, dtype=float)
    n, d = Xa.shape
    sigma = np.asarray(sigma, dtype=float)
    runs = sigma.shape[0]
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (runs,))
    step = np.broadcast_to(np.asarray(step_size, dtype=float), (runs,))
    rn = np.linalg.norm(Xa, axis=1)
    safe = np.where(rn > 0, rn, 1.0)
    Ut = np.ascontiguousarray((Xa / safe[:, None]).T, dtype=dtype)
    return Xa, n, d, sigma, runs, lam, step, float(clip_norm), rn, Ut


#: Fewest runs in a thread group for which the fused kernel (:mod:`engine.pmt._gd_kernel`) replaces the numpy
#: chunk loop. Below, the kernel's vector loop over runs is too short to beat BLAS (equal at 32 runs, 1.4x
#: faster from 48 on, ``bench/bench_dpgd.py``), and single fits (one run, where BLAS takes gemv paths of
#: another rounding order) keep their values bit for bit.
_FUSED_MIN_RUNS = 32


def _clip_chunk(r, C):
    """Clip a chunk of signed gradient norms in place at ``[-C, C]`` (the per-example clip, ``||g_i|| = |s_i|``).

    The numpy path's clip (the fused kernel applies the same rule, ``min(max(s, -C), C)``): ``np.clip``'s
    ufunc, called directly to skip its Python-level argument handling (about 10 % of the loop); NaN stays NaN."""
    return _np_clip(r, -C, C, out=r)


_np_clip = np._core.umath.clip if hasattr(np, "_core") else np.core.umath.clip  # the ufunc under np.clip


def _dp_gd_loop(residuals, *, n, d, runs, C, lam, step, sigma, Pm, noise, n_steps, Ut, dtype, chunk_rows, n_jobs,
                fused=None):
    """T clipped gradient steps for every run (column), over thread groups (2 threads from 64 runs on).

    Per step: ``g = (1/n) U^T clip(s, -C, C) + sigma z_t + 2 lam P theta``, ``theta <- theta - step g``,
    with ``u_i = x_i / ||x_i||`` (``Ut``) and ``s_i`` the signed norm of example i's gradient.
    ``residuals(k)`` gives, for a group of k runs, ``(prepare, chunk)``: ``prepare(theta)`` the dtype
    operand of a step from the float64 iterate (d, k), ``chunk(th, s0, s1, out)`` returns
    the ``s_i`` of rows s0:s1 written into ``out`` (a preallocated (s1 - s0, k) dtype buffer, clipped in place
    here). ``fused``, when given, is used for groups of at least :data:`_FUSED_MIN_RUNS` runs instead of the
    chunk loop: ``fused(th, cr, grad, part, cnt)`` writes ``U^T clip(s, -C, C)`` (same chunks, same
    arithmetic) into ``grad`` and, unless ``cnt`` is None, adds the clipped count per run to ``cnt``
    (:mod:`engine.pmt._gd_kernel`).
    Returns ``theta`` (d, runs) and the fraction of per-example gradients clipped at the last step (runs,).
    """
    Cd = np.asarray(C, dtype=dtype)[()]  # the clip bound in the working dtype (as np.clip casts a Python float)
    # U^T in float64 for the numpy chunk path (float32 values are exact in float64, so are their products
    # with the float32 residuals); the fused kernel reads the working-dtype rows and accumulates in float64
    Ut64 = Ut if Ut.dtype == np.float64 else (Ut.astype(np.float64) if fused is None else None)

    def run(cols):
        k = cols.size
        cr = min(n, chunk_rows or max(32, int(_CHUNK_ELEMS // k)))
        prepare, chunk = residuals(k)
        theta = np.zeros((d, k))
        # every sum over rows is accumulated in float64 (products in dtype: exact in float64 for float32):
        # a float32 sum of n clipped gradients moved by up to 1.018 x 2C/n at n = 2e6; the certified bound
        # of engine.privacy.sum_rounding_factor needs float64 accumulation
        grad = np.empty((d, k))
        part = np.empty((d, k))  # U^T s of one chunk (BLAS writes here, then one in-place add)
        use_fused = fused is not None and k >= _FUSED_MIN_RUNS
        rbuf = None if use_fused else np.empty((cr, k), dtype=dtype)  # the chunk's residuals, reused
        U64 = Ut64 if Ut64 is not None or use_fused else Ut.astype(np.float64)
        r64 = None if use_fused or U64 is Ut else np.empty((cr, k))
        frac = np.zeros(k)
        cnt = np.zeros(k, dtype=np.int32)
        nz, sg, lm, st = noise[:, :, cols], sigma[cols], lam[cols], step[cols]
        for t in range(int(n_steps)):
            th = prepare(theta)
            last = t == n_steps - 1
            if use_fused:
                fused(th, cr, grad, part, cnt if last else None)  # counts at the last step only
                if last:
                    frac += cnt
            else:
                for s0 in range(0, n, cr):
                    s1 = min(n, s0 + cr)
                    r = chunk(th, s0, s1, rbuf[:s1 - s0])
                    if last:
                        frac += np.count_nonzero(np.abs(r) > Cd, axis=0)
                    _clip_chunk(r, Cd)  # fused per-example clip: ||g_i|| = |s_i| (no (n, d, runs) array)
                    if r64 is not None:  # float32 residuals: the products and sums in float64
                        r64[:s1 - s0] = r
                        r = r64[:s1 - s0]
                    if s0 == 0:
                        np.matmul(U64[:, s0:s1], r, out=grad)
                    else:
                        np.matmul(U64[:, s0:s1], r, out=part)
                        grad += part
            g = grad / n + sg * nz[t] + 2.0 * lm * (Pm @ theta)
            theta = theta - st * g
        return cols, theta, frac / n

    theta = np.zeros((d, runs))
    frac = np.zeros(runs)
    for cols, th, fr in _run_groups(run, runs, n_jobs, min_runs=64):
        theta[:, cols] = th
        frac[cols] = fr
    return theta, frac


def dp_gd_ridge_path(
    Xa,
    y,
    *,
    clip_norm: float,
    lam,
    Pm,
    step_size,
    sigma,
    noise,
    n_steps: int,
    dtype=np.float64,
    chunk_rows: int | None = None,
    n_jobs: int | None = None,
):
    """Full-batch DP gradient descent for ridge, for many runs at once (runs are matrix columns).

    Per step t and run r (theta_0 = 0)::

        g_i   = 2 (x_i^T theta - y_i) x_i                      # per-example gradient of the squared loss
        g     = (1/n) sum_i g_i min(1, C / ||g_i||)  +  sigma * z_t  +  2 lam P theta
        theta = theta - step_size * g

    Implementation: ``||g_i|| = 2 |r_i| ||x_i||`` with ``r_i = x_i^T theta - y_i``, so with
    ``u_i = x_i / ||x_i||`` and ``s_i = 2 ||x_i|| r_i`` the clipped gradient is ``u_i clip(s_i, -C, C)``.
    ``s`` for all runs is one product of the precomputed ``n x (d+1)`` matrix ``2||x_i|| [x_i, -y_i]``
    with ``[theta; 1]``; then one in-place scalar clip and one product ``U^T s``. Rows are processed
    in cache-sized chunks; runs are split over ``n_jobs`` threads with single-threaded BLAS (runs are
    independent). The penalty gradient is data-independent and not clipped. Rows ``(x_i, y_i)`` longer
    than :data:`MAX_GD_ROW_NORM` (1e15) are first scaled onto that norm in float64
    (:func:`_scale_long_rows`), so no product overflows in float32.

    Parameters
    ----------
    Xa : ndarray of shape (n, d)
        Raw rows (intercept column included if any).
    y : ndarray of shape (n,)
    clip_norm : float
        C > 0, per-example gradient clip (L2).
    lam : float or ndarray of shape (runs,)
    Pm : ndarray of shape (d, d)
        Penalty matrix.
    step_size : float or ndarray of shape (runs,)
    sigma : ndarray of shape (runs,)
        Noise standard deviation on the mean gradient per step (``2C / (n mu_t)`` replace-one).
    noise : ndarray of shape (n_steps, d, runs)
        Standard normal draws.
    n_steps : int
    dtype : numpy dtype, default float64
        dtype of the n-sized products (float32 halves memory traffic; theta, the noise and the
        update stay float64).
    chunk_rows : int, optional
        Rows per chunk (default: about 256 KB of residuals per thread).
    n_jobs : int, optional
        Threads (default: 2 when there are at least 64 runs, else 1).

    Returns
    -------
    theta : ndarray of shape (d, runs)
    frac_clipped : ndarray of shape (runs,)
        Fraction of per-example gradients clipped at the last step (display only).
    """
    Xa, y = _scale_long_rows(Xa, np.asarray(y, dtype=float))  # before any cast (MAX_GD_ROW_NORM)
    Xa, n, d, sigma, runs, lam, step, C, rn, Ut = _dp_gd_setup(Xa, sigma, lam, step_size, clip_norm, dtype)
    S = np.ascontiguousarray(2.0 * rn[:, None] * np.hstack([Xa, -np.asarray(y, dtype=float)[:, None]]), dtype=dtype)

    def residuals(k):  # s_i = 2 ||x_i|| (x_i^T theta - y_i) = rows of S times [theta; 1]
        th1 = np.ones((d + 1, k), dtype=dtype)

        def prepare(theta):
            th1[:d] = theta
            return th1

        return prepare, lambda th, s0, s1, out: np.matmul(S[s0:s1], th, out=out)

    return _dp_gd_loop(residuals, n=n, d=d, runs=runs, C=C, lam=lam, step=step, sigma=sigma, Pm=Pm, noise=noise,
                       n_steps=n_steps, Ut=Ut, dtype=dtype, chunk_rows=chunk_rows, n_jobs=n_jobs,
                       fused=_ridge_fused(S, Ut, C, dtype, runs, n_jobs))


def _ridge_fused(S, Ut, C, dtype, runs, n_jobs):
    """The fused ridge step ``fused(th, cr, grad, part, cnt)`` of :func:`_dp_gd_loop`, or None (numpy path).

    None when no group reaches :data:`_FUSED_MIN_RUNS` runs, for dtypes other than float32 / float64, or when
    :func:`engine.pmt._gd_kernel.ridge_kernel` has no kernel (numba missing, d above its limit)."""
    groups = max(1, min(int(n_jobs if n_jobs is not None else (2 if runs >= 64 else 1)), runs))
    if runs // groups < _FUSED_MIN_RUNS or np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        return None
    from engine.pmt._gd_kernel import ridge_kernel

    kern = ridge_kernel(S.shape[1], Ut.shape[0])
    if kern is None:
        return None
    U = np.ascontiguousarray(Ut.T)  # rows u_i (the kernel streams rows)
    Cd = np.asarray(C, dtype=dtype)[()]

    def fused(th, cr, grad, part, cnt):
        kern(S, U, th, Cd, cr, grad, part, cnt)

    return fused


def dp_gd_noise(rng: np.random.Generator, n_steps: int, d: int) -> np.ndarray:
    """Standard-normal gradient noise for one DP-GD run: shape (n_steps, d), drawn in one call.

    The estimators and the sweeps draw through this one function, so a sweep with seed s reproduces
    ``random_state=numpy.random.default_rng(s)`` exactly (an int ``random_state`` is mixed with the
    fit's settings instead: :func:`engine.pmt._base.release_rng`).
    """
    return P.gaussian_noise((n_steps, d), 1.0, rng)


def dp_gd_sensitivity(C: float, n: int, d: int) -> float:
    """The averaged clipped gradient's certified replace-one sensitivity: ``2C/n`` times the rounding factor
    of :func:`engine.privacy.sum_rounding_factor` (terms of length d in float32 or float64, summed in
    float64). Every DP-GD (estimators and sweeps) calibrates its noise to this value."""
    return 2.0 * C / n * P.sum_rounding_factor(n, d)


def _dp_gd_ledger(dlt, mu, T, C, n, nb, d=None):
    """Ledger of T equal DP-GD gradient releases: ``mu_t = mu / sqrt(T)``, ``Delta`` =
    :func:`dp_gd_sensitivity` (replace-one, the only relation offered; ``2C/n`` if ``d`` is None, for old
    callers), ``sigma_t = Delta / mu_t``. Returns ``(ledger, mu_t, sens, sigma_t)``."""
    mu_t = P.split_mu(mu, T)
    sens = 2.0 * C / n if d is None else dp_gd_sensitivity(C, n, d)
    sigma_t = P.gaussian_sigma(sens, mu_t)
    ledger = P.PrivacyLedger(delta=dlt)
    ledger.record_steps([f"gradient step {t + 1}" for t in range(T)], sensitivity=sens, sigma=sigma_t, neighbouring=nb)
    return ledger, mu_t, sens, sigma_t


class _DPGDMixin:
    """The DP-GD estimators' shared fit: parameters, then (after validation) ledger, noise, the path, report."""

    def _dp_gd_params(self):
        """Validate epsilon, delta, neighbouring, lam, eta and n_steps (before any noise)."""
        eps, dlt, nb, lam, eta = self._privacy_params()
        return eps, dlt, nb, lam, eta, _check_steps(self.n_steps)

    def _fit_dp_gd(self, path, Xa, yv, Xq, n, p, d, eps, dlt, nb, lam, T, step, C, method, *, extra=None,
                   report_converged=False, penalty=None):
        """Run ``path`` (:func:`dp_gd_ridge_path` or :func:`dp_gd_logistic_path`) once with the estimator's
        noise (:func:`dp_gd_noise` from ``random_state``) and store ``theta_`` and ``report_``."""
        mu = _mu(eps, dlt, n, self.sampler)
        ledger, mu_t, sens, sigma_t = _dp_gd_ledger(dlt, mu, T, C, n, nb, d)
        Pm = self._penalty_mask(d) if penalty is None else penalty
        rng = release_rng(self)
        noise = dp_gd_noise(rng, T, d)[:, :, None]
        theta, frac = path(Xa, yv, clip_norm=C, lam=lam, Pm=Pm, step_size=step, sigma=np.array([sigma_t]), noise=noise,
                           n_steps=T)
        self._set_theta(theta[:, 0], p)
        key = "gradient (per step)"
        self.report_ = _dp_report_for(
            self,
            method, eps, dlt, mu, nb, n, d, lam, ledger, {key: sens}, {key: sigma_t}, radius=C,
            n_pub=0 if Xq is None else (Xq.n_pub if hasattr(Xq, 'n_pub') else Xq.shape[0]), kappa_raw=_gram_kappa(Xa), frac_truncated=float(frac[0]), n_iter=T,
            converged=bool(np.all(np.isfinite(theta))) if report_converged else None,
            extra={"step_size": step, "mu_per_step": mu_t, **(extra or {})},
        )
        return self
# --------------------------------------------------------------------------------------------
# logistic loss
# --------------------------------------------------------------------------------------------
def logistic_dp_gd_step_size(lambda_max: float, lam: float) -> float:
    """``1 / (lambda_max / 4 + 2 lam)``: the inverse smoothness constant of the logistic objective.

    ``lambda_max`` is the largest eigenvalue of the (public) second moment of the rows.

    Examples
    --------
    >>> logistic_dp_gd_step_size(4.0, 0.0)
    1.0
    """
    return 1.0 / (float(lambda_max) / 4.0 + 2.0 * float(lam))


def dp_gd_logistic_path(Xa, y, *, clip_norm: float, lam, Pm, step_size, sigma, noise, n_steps: int,
                        dtype=np.float64, chunk_rows: int | None = None, n_jobs: int | None = None):
    """Full-batch DP gradient descent for penalised logistic regression, many runs at once.

    Per step t and run r (theta_0 = 0)::

        c_i   = clip(sigmoid(x_i^T theta) - y_i, -C / ||x_i||, C / ||x_i||)   # per-example clip at C
        g     = (1/n) sum_i c_i x_i + sigma * z_t + 2 lam P theta
        theta = theta - step_size * g

    ``c_i x_i`` is the per-example gradient ``(s_i - y_i) x_i`` clipped to L2 norm C (its norm is
    ``|s_i - y_i| ||x_i||``). The penalty gradient is data-independent and not clipped. Rows longer than
    :data:`MAX_GD_ROW_NORM` (1e15) are first scaled onto that norm in float64 (:func:`_scale_long_rows`).

    Parameters
    ----------
    Xa : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    clip_norm : float
    lam : float or ndarray of shape (runs,)
    Pm : ndarray of shape (d, d)
    step_size : float or ndarray of shape (runs,)
    sigma : ndarray of shape (runs,)
        Noise standard deviation on the mean gradient per step.
    noise : ndarray of shape (n_steps, d, runs)
    n_steps : int
    dtype : numpy dtype, default float64
    chunk_rows : int, optional
        Rows per chunk (default: about 256 KB of residuals per thread).
    n_jobs : int, optional
        Threads over groups of runs with single-threaded BLAS (default 2 from 64 runs on).

    Returns
    -------
    theta : ndarray of shape (d, runs)
    frac_clipped : ndarray of shape (runs,)
        Fraction of per-example gradients clipped at the last step (display only).
    """
    Xa, _ = _scale_long_rows(Xa)  # before any cast (MAX_GD_ROW_NORM)
    Xa, n, d, sigma, runs, lam, step, C, rn, Ut = _dp_gd_setup(Xa, sigma, lam, step_size, clip_norm, dtype)
    # clipped gradient = u_i clip(||x_i|| (s_i - y_i), -C, C) with u_i = x_i / ||x_i||
    X = np.ascontiguousarray(Xa, dtype=dtype)
    rnd = rn.astype(dtype)[:, None]
    ryd = (rn * np.asarray(y, dtype=float)).astype(dtype)[:, None]

    def residuals(k):  # s_i = ||x_i|| (sigmoid(x_i^T theta) - y_i)
        def chunk(th, s0, s1, out):
            r = _sigmoid_inplace(np.matmul(X[s0:s1], th, out=out))
            r *= rnd[s0:s1]
            r -= ryd[s0:s1]
            return r

        return (lambda theta: theta.astype(dtype)), chunk

    return _dp_gd_loop(residuals, n=n, d=d, runs=runs, C=C, lam=lam, step=step, sigma=sigma, Pm=Pm, noise=noise,
                       n_steps=n_steps, Ut=Ut, dtype=dtype, chunk_rows=chunk_rows, n_jobs=n_jobs)


def warm_kernels(ds=None, dtypes=("float32", "float64")) -> list[tuple[int, str, float]]:
    """Compile (or load from :func:`engine.pmt._gd_kernel.kernel_dir`) the fused DP-GD ridge kernels for
    ``d`` in ``ds`` (default 1 .. :data:`engine.pmt._gd_kernel.MAX_KERNEL_D`) and the given dtypes, by
    running :func:`engine.pmt._gd.dp_gd_ridge_path` on a small random problem with enough runs to take the
    fused path (the exact argument types a sweep uses). Returns ``(d, dtype, seconds)`` per kernel.
    """
    import time

    from engine.pmt._gd_kernel import MAX_KERNEL_D

    out = []
    rng = np.random.default_rng(0)
    for d in (range(1, MAX_KERNEL_D + 1) if ds is None else ds):
        for dt in dtypes:
            n, runs, T = 40, 64, 2
            t0 = time.perf_counter()
            dp_gd_ridge_path(rng.standard_normal((n, d)), rng.standard_normal(n), clip_norm=1.0, lam=0.1,
                             Pm=np.eye(d), step_size=0.1, sigma=np.full(runs, 0.1),
                             noise=rng.standard_normal((T, d, runs)), n_steps=T, dtype=np.dtype(dt), n_jobs=2)
            out.append((d, str(dt), time.perf_counter() - t0))
    return out
