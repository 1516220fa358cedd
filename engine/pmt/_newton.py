"""Noisy Newton for canonical GLMs (DP-PMTLR's engine), the GLM families and the non-private solver.

Used by :mod:`engine.pmt.logistic` (DP-PMTLR, DP-Newton, the reference), :mod:`engine.pmt.poisson`
(the GLM extension) and :mod:`engine.pmt.sweep_logistic`; source ``docs/specs/PMT.md`` section 4 (Cao, Bi &
Zhang, arXiv:2602.22282; noisy-Newton template of Avella-Medina, Bradshaw & Loh, GDP noisy Newton).
:class:`_NoisyNewtonMixin` is the estimators' shared fit: accounting, noise, the iteration, the report.

Objective (original space; labels y in {0, 1} after mapping ``classes``)::

Objective (original space; labels y in {0, 1} after mapping ``classes``)::

    (1/n) sum_i [ b(x_i^T theta) - y_i x_i^T theta ] + lam * theta^T P theta

with ``b(u) = log(1 + e^u)`` (logistic) or ``b(u) = e^u`` (Poisson). ``P`` is the ridge penalty mask
of :func:`engine.pmt._base.penalty_mask` (intercept column last, unpenalised by default, as in
sklearn's ``LogisticRegression(C=1 / (2 n lam))``). In PMT's whitened space (theta~ =
Sigma_pub^{1/2} theta) the penalty is ``lam theta~^T Sigma_pub^{-1/2} P Sigma_pub^{-1/2} theta~``
(= ``lam theta~^T Sigma_pub^{-1} theta~`` of PMT.md section 4 when the intercept is penalised), so
noise-free PMT with nothing truncated is exactly the reference fit.

Noisy Newton (PMT.md section 4; :func:`noisy_newton`): theta~_0 = 0, step size 1, T steps (default 5).
Each step releases the averaged gradient and the averaged Hessian of the data term, each with
``mu_0 = mu / sqrt(2T)`` (2T Gaussian releases compose to mu-GDP):

* gradient term ``(b'(u_i) - y_i) x~_i`` has norm <= R G, Hessian term ``b''(u_i) x~_i x~_i^T`` has
  Frobenius norm <= R^2 H (logistic: G = 1, H = 1/4);
* replace-one sensitivities ``Delta_g = 2 R G / n`` and ``Delta_H = sqrt(2) R^2 H / n`` (two PSD rank-one
  terms differ by at most sqrt(2) times the larger norm); n is public under replace-one (add/remove
  is not offered: n enters R(d, n), the averages and the noise scale);
* ``g~ = g + N(0, (Delta_g / mu_0)^2 I)``; ``H~ = H + E`` with E symmetric, iid N(0, (Delta_H / mu_0)^2)
  on and above the diagonal (:func:`engine.privacy.symmetric_gaussian_noise`);
* the penalty's gradient and Hessian are data-independent and added without noise;
* **eigenvalue floor**: the eigenvalues of the noisy Hessian below a floor c are raised to c; every
  step where that happens counts in ``report_.eig_fixes``. c is absolute, in the units of the averaged
  Hessian (whitened units for PMT, where the noise-free Hessian has eigenvalues of order b'' <= 1/4;
  raw units for DP-Newton). Default ``eig_floor="auto"``: ``c = max(1e-3, 2 sqrt(d) sigma_H)``
  (:func:`newton_eig_floor`), i.e. the research note's 1e-3 or, when larger, the typical spectral norm
  of the symmetric Hessian noise (``~ 2 sqrt(d) sigma_H`` for a Wigner matrix): eigenvalues below the
  noise level carry no information, and raising them to it caps how much H~^{-1} can amplify the
  gradient noise. It depends only on d, n, R and mu (public), so it costs no privacy. A float gives a
  fixed floor. Measured on the synthetic acceptance data (n = 20000, d = 10, kappa = 100,
  ||theta*|| = 3, epsilon = 1, lam = 0, T = 5): the fixed 1e-3 floor lets PMT diverge (median L2
  error ~1e3: the floor fires at almost every step and 1/1e-3 multiplies the noise), the automatic
  floor gives ~1; at epsilon ~ 4.4 (mu = 1) both give ~0.3;
* ``theta~ <- theta~ - H~^{-1} g~``; for Poisson theta~ is then projected onto ``||theta~|| <= B_theta``.

**Convergence flag** (``report_.converged``, sweep column ``converged``): a run has converged when
every iterate is finite and the last Newton step is small,
``||theta~_T - theta~_{T-1}|| <= tol * (1 + ||theta~_{T-1}||)`` (default ``tol = 0.25``; measured in the
space the iteration runs in). A non-finite iterate or a last step above the tolerance is a failure.
With noise the last step never reaches 0: the flag separates runs that settled near a point from
runs that are still moving (or diverging), it does not certify the optimum (a run can settle near 0,
far from the fit, and count as converged: read it with the L2 error). Calibration (synthetic
acceptance data, 20 seeds, epsilon 0.5 / 1 / 5, lam = 0): with the automatic eigenvalue floor every
PMT and DP-Newton run settles (0 failures at tol 0.25; 10-16 of 20 "fail" at tol 0.1 although their
errors are the usual ones), while with the fixed 1e-3 floor the diverging runs (L2 error ~1e2-1e3)
fail 19-20 of 20 at tol 0.25.

Privacy: mu-GDP (:mod:`engine.privacy`), ``epsilon=np.inf`` means noise off (for convergence checks
only). Every bound is public (d, n, eta, the public rows, user numbers). Labels are mapped with the
user-given ``classes`` pair (default ``(0, 1)``), never inferred from the private data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from engine.pmt._special import expit  # scipy.special, imported on first use
from engine.pmt._blas import blas_limit as threadpool_limits  # cached controller: no new threadpool scan per call

from engine import privacy as P
from engine.privacy import observe as _observe
from engine.pmt._base import _check_positive, _check_steps, _dp_report_for, _mu, _run_groups, release_rng
from engine.pmt._bounds import _kappa_from_eigs
from engine.pmt._moment import PublicMoment
from engine.pmt._transform import pmt_transform

__all__ = [
    "LOGISTIC",
    "POISSON",
    "GLMFamily",
    "GLM_METHOD_NAMES",
    "DEFAULT_NEWTON_EIG_FLOOR",
    "MIN_NEWTON_EIG_FLOOR",
    "DEFAULT_CONV_TOL",
    "newton_eig_floor",
    "glm_statistics",
    "newton_sensitivities",
    "certified_newton_sensitivities",
    "batched_glm_statistics",
    "newton_noise",
    "newton_noise_stack",
    "weighted_grams",
    "pair_products",
    "noisy_newton",
    "newton_noise_dominance",
    "NewtonResult",
    "glm_reference_solve",
]

#: Display names for the logistic sweeps (PMT, DP-GD, Non-private as in ridge; DP-Newton new).
GLM_METHOD_NAMES = {
    "pmt": "PMT",
    "dp-newton": "DP-Newton",
    "dp-gd": "DP-GD",
    "non-private": "Non-private",
}

#: Default eigenvalue floor rule of the noisy averaged Hessian (see :func:`newton_eig_floor`).
DEFAULT_NEWTON_EIG_FLOOR = "auto"
#: The smallest floor ``"auto"`` uses (the research note's 1e-3, whitened units).
MIN_NEWTON_EIG_FLOOR = 1e-3
#: Relative last-step tolerance of the convergence flag.
DEFAULT_CONV_TOL = 0.25


# --------------------------------------------------------------------------------------------
# families
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GLMFamily:
    """A canonical GLM: log-partition ``b``, mean ``b'`` and variance ``b''`` (vectorised).

    ``G`` and ``H`` bound ``|b'(u) - y|`` and ``b''(u)`` over the bounded region (see
    :func:`newton_sensitivities`).
    """

    name: str
    b: callable
    mean: callable
    var: callable


def _logistic_var(u):
    s = expit(u)
    return s * (1 - s)


def _poisson_exp(u):
    with np.errstate(over="ignore"):
        return np.exp(u)


def _sigmoid_inplace(r):
    """``r <- 1 / (1 + e^{-r})`` in place as ``(1 + tanh(r / 2)) / 2``: no overflow, and numpy's SIMD tanh
    is ~6x faster than ``scipy.special.expit`` on float32 (absolute error ~1 ulp of 1)."""
    r *= 0.5
    np.tanh(r, out=r)
    r *= 0.5
    r += 0.5
    return r


LOGISTIC = GLMFamily("logistic", lambda u: np.logaddexp(0, u), expit, _logistic_var)
POISSON = GLMFamily("poisson", _poisson_exp, _poisson_exp, _poisson_exp)

# --------------------------------------------------------------------------------------------
# the released statistics and their sensitivities
# --------------------------------------------------------------------------------------------
def glm_statistics(Z, y, theta, family: GLMFamily = LOGISTIC) -> tuple[np.ndarray, np.ndarray]:
    """The two statistics one noisy-Newton step releases (data term only, before noise).

    ``g = (1/n) sum (b'(z_i^T theta) - y_i) z_i`` and ``H = (1/n) sum b''(z_i^T theta) z_i z_i^T``.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Bounded rows (PMT-truncated at R or clipped at C).
    y : ndarray of shape (n,)
        Labels in {0, 1} (logistic) or clipped counts (Poisson).
    theta : ndarray of shape (d,)
    family : GLMFamily, default LOGISTIC

    Returns
    -------
    g : ndarray of shape (d,)
    H : ndarray of shape (d, d)

    Examples
    --------
    >>> g, H = glm_statistics(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 0.0]), np.zeros(2))
    >>> g.tolist(), H.tolist()
    ([-0.25, 0.5], [[0.125, 0.0], [0.0, 0.5]])
    """
    Z = np.asarray(Z, dtype=float)
    u = Z @ np.asarray(theta, dtype=float)
    n = Z.shape[0]
    g = Z.T @ (family.mean(u) - y) / n
    H = (Z * family.var(u)[:, None]).T @ Z / n
    return g, (H + H.T) / 2


def newton_sensitivities(radius: float, n: int, neighbouring: str = "replace-one", *, G: float = 1.0,
                         H: float = 0.25) -> tuple[float, float]:
    """Sensitivities of the averaged gradient (L2) and Hessian (Frobenius) for rows of norm <= R.

    Replace-one (the only relation offered): ``2 R G / n`` and ``sqrt(2) R^2 H / n`` (PMT.md section 4;
    logistic: G = 1, H = 1/4). n is public under replace-one; add/remove is not offered because n enters
    R(d, n), the averages and the noise scale, so ``neighbouring="add-remove"`` raises ``ValueError``.

    Examples
    --------
    >>> [round(s, 6) for s in newton_sensitivities(2.0, 100)]
    [0.04, 0.014142]
    """
    P.validate_neighbouring(neighbouring)
    return 2.0 * radius * G / n, math.sqrt(2.0) * radius**2 * H / n


def certified_newton_sensitivities(radius: float, n: int, d: int, neighbouring: str = "replace-one", *,
                                   G: float = 1.0, H: float = 0.25, family=None, theta_radius=None):
    """:func:`newton_sensitivities` times the certified rounding factor of a float average of n rows
    (:func:`engine.privacy.sum_rounding_factor`: per-row terms in float32 or float64, sums in float64;
    terms of length d for the gradient, d^2 for the Hessian; for Poisson the exponential's argument
    range ``R B_theta`` enters). What every noisy Newton (estimator and sweep) calibrates its noise to."""
    sg, sH = newton_sensitivities(radius, n, neighbouring, G=G, H=H)
    er = float(radius) * float(theta_radius) if family is POISSON and theta_radius is not None else 0.0
    return (sg * P.sum_rounding_factor(n, d, exp_range=er), sH * P.sum_rounding_factor(n, d * d, exp_range=er))


def newton_eig_floor(eig_floor, d: int, sigma_H):
    """The eigenvalue floor in force: ``"auto"`` -> ``max(1e-3, 2 sqrt(d) sigma_H)``, a float -> itself.

    Parameters
    ----------
    eig_floor : "auto" or float > 0
    d : int
    sigma_H : float or ndarray
        Hessian noise standard deviation per release (0 when noise is off).

    Returns
    -------
    float or ndarray (the shape of ``sigma_H``)

    Raises
    ------
    ValueError, TypeError
        For anything else than "auto" or a finite float > 0.

    Examples
    --------
    >>> newton_eig_floor("auto", 4, 0.0), newton_eig_floor("auto", 4, 0.05), newton_eig_floor(0.5, 4, 0.05)
    (0.001, 0.2, 0.5)
    """
    if isinstance(eig_floor, str):
        if eig_floor != "auto":
            raise ValueError(f"eig_floor must be 'auto' or a float > 0, got {eig_floor!r}")
        out = np.maximum(MIN_NEWTON_EIG_FLOOR, 2.0 * math.sqrt(d) * np.asarray(sigma_H, dtype=float))
        return float(out) if out.ndim == 0 else out
    v = _check_positive(eig_floor, "eig_floor")
    return v if np.ndim(sigma_H) == 0 else np.full(np.shape(sigma_H), v)


def newton_noise(rng: np.random.Generator, n_steps: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal noise for one noisy-Newton run: Hessian stack (T, d, d) symmetric, then gradients (T, d).

    The estimators and the sweeps draw through this one function, so a sweep with seed s reproduces
    ``random_state=numpy.random.default_rng(s)`` exactly (an int ``random_state`` is mixed with the
    fit's settings instead: :func:`engine.pmt._base.release_rng`).
    """
    Hn = P.symmetric_gaussian_noise(d, 1.0, rng, size=int(n_steps))
    gn = P.gaussian_noise((int(n_steps), d), 1.0, rng)
    return Hn, gn


def newton_noise_stack(seeds, n_steps: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`newton_noise` for seeds ``s`` (``default_rng(s)``): (T, S, d, d) and (T, S, d)."""
    Hs, gs = zip(*(newton_noise(np.random.default_rng(int(s)), n_steps, d) for s in seeds))
    return np.stack(Hs, axis=1), np.stack(gs, axis=1)


# --------------------------------------------------------------------------------------------
# batched Newton machinery
# --------------------------------------------------------------------------------------------
#: Rows per block of :func:`pair_products` (a block of bank's 903 products in float32 is ~1.8 MB).
PAIR_BLOCK_ROWS = 512


def pair_products(Z, *, dtype=np.float64, out_dtype=None) -> np.ndarray:
    """Row-wise upper-triangle products ``z_ij z_ik`` (j <= k, row-major), shape (n, d(d+1)/2).

    Built with d contiguous broadcast products per block of :data:`PAIR_BLOCK_ROWS` rows (much faster
    than fancy indexing; the blocks keep the writes in cache: 2.5x less CPU than whole columns on bank).
    Each entry is one product, so the result does not depend on the blocking. Memory ``n d(d+1)/2``
    entries of ``out_dtype`` (bank, n = 36k, d = 42, float32: 130 MB).

    ``dtype`` is the dtype the products are computed (rounded) in; ``out_dtype`` (default ``dtype``) the
    dtype of the array returned. ``pair_products(Z, dtype=np.float32, out_dtype=np.float64)`` equals
    ``pair_products(Z, dtype=np.float32).astype(np.float64)`` bit for bit (each float32 product is written
    into the float64 array as it is rounded), without the float32 array and the second pass.

    Examples
    --------
    >>> pair_products(np.array([[1.0, 2.0]])).tolist()
    [[1.0, 2.0, 4.0]]
    """
    Z = np.asarray(Z).astype(dtype, copy=False)
    n, d = Z.shape
    K = np.empty((n, d * (d + 1) // 2), dtype=dtype if out_dtype is None else out_dtype)
    for s0 in range(0, n, PAIR_BLOCK_ROWS):
        Zb, Kb = Z[s0:s0 + PAIR_BLOCK_ROWS], K[s0:s0 + PAIR_BLOCK_ROWS]
        o = 0
        for i in range(d):
            # computed in ``dtype`` (the ufunc's loop), then stored in K's dtype
            np.multiply(Zb[:, i:i + 1], Zb[:, i:], out=Kb[:, o:o + d - i], dtype=dtype)
            o += d - i
    return K


def weighted_grams(Z, W, *, dtype=np.float64, K=None) -> np.ndarray:
    """``sum_i W[i, r] z_i z_i^T`` for every run r.

    With more than two runs: one matrix product of the pair products (:func:`pair_products`, n x
    d(d+1)/2, pass ``K`` to reuse it across Newton steps) by the weights (n x runs): half the flops of
    per-run ``Z^T diag(w_r) Z`` and one large GEMM. With one or two runs: ``(Z w_r)^T Z`` per run.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
    W : ndarray of shape (n, runs)
    dtype : numpy dtype, default float64
        dtype of the products (float32 is ~2x faster; results are float64).
    K : ndarray of shape (n, d(d+1)/2), optional
        Precomputed :func:`pair_products` of Z.

    Returns
    -------
    ndarray of shape (runs, d, d), symmetric.

    Examples
    --------
    >>> Z = np.array([[1.0, 2.0], [3.0, 0.0]]); W = np.array([[1.0, 0.0, 1.0], [1.0, 2.0, 0.0]])
    >>> weighted_grams(Z, W)[1].tolist()
    [[18.0, 0.0], [0.0, 0.0]]
    >>> bool(np.allclose(weighted_grams(Z, W[:, :1])[0], weighted_grams(Z, W)[0]))
    True
    """
    Z = np.asarray(Z)
    n, d = Z.shape
    runs = W.shape[1]
    Zd = Z.astype(dtype, copy=False)
    Wd = W.astype(dtype, copy=False)
    # the products in ``dtype``, every sum over rows in float64 (engine.privacy.sum_rounding_factor)
    if runs <= 2 and K is None:
        Z64 = Zd.astype(np.float64, copy=False)
        out = np.stack([(Zd * Wd[:, r:r + 1]).astype(np.float64).T @ Z64 for r in range(runs)])
        return (out + np.swapaxes(out, 1, 2)) / 2
    if K is None:
        K = pair_products(Zd, dtype=dtype)
    acc = Wd.T.astype(np.float64) @ K.astype(np.float64, copy=False)  # (runs, p), accumulated in float64
    iu, ju = np.triu_indices(d)
    out = np.empty((runs, d, d))
    out[:, iu, ju] = acc
    out[:, ju, iu] = acc
    return out


@dataclass
class NewtonResult:
    """Output of :func:`noisy_newton` for ``runs`` parallel runs.

    Attributes
    ----------
    theta : ndarray of shape (runs, d)
        Final iterate (in the space the iteration ran in).
    eig_fixes : ndarray of int, shape (runs,)
        Steps at which the eigenvalue floor raised at least one eigenvalue.
    converged : ndarray of bool, shape (runs,)
        See the module docstring.
    last_step : ndarray of shape (runs,)
        ``||theta_T - theta_{T-1}||``.
    kappa_noisy : ndarray of shape (runs,)
        Condition number of the last noisy Hessian before the floor (inf if not positive definite).
    min_eig : ndarray of shape (runs,)
        Smallest eigenvalue of the last noisy Hessian before the floor.
    n_steps : int
    """

    theta: np.ndarray
    eig_fixes: np.ndarray
    converged: np.ndarray
    last_step: np.ndarray
    kappa_noisy: np.ndarray
    min_eig: np.ndarray
    n_steps: int


def _project_ball(theta, radius):
    if radius is None or not math.isfinite(radius):
        return theta
    nrm = np.linalg.norm(theta, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(nrm > radius, radius / nrm, 1.0)
    return theta * scale


def batched_glm_statistics(Z, theta, family: GLMFamily = LOGISTIC, *, y, dtype=np.float64, K=None, Zd=None,
                           yd=None) -> tuple[np.ndarray, np.ndarray]:
    """The averaged gradients and Hessians of one noisy-Newton step for a stack of iterates (data term only).

    Per-row terms in ``dtype`` (``U = Z theta^T``, the sigmoid / exponential, the weights), **every sum
    over rows in float64** (the gradient ``Z^T R`` with Z in float64, the Hessians by
    :func:`weighted_grams`), so the released averages carry the certified rounding bound of
    :func:`engine.privacy.sum_rounding_factor` (:func:`certified_newton_sensitivities`). What
    :func:`noisy_newton` computes from its second step on.

    Parameters
    ----------
    Z : ndarray of shape (n, d), float64
    theta : ndarray of shape (runs, d)
    family : GLMFamily
    y : ndarray of shape (n,)
    dtype : numpy dtype, default float64
    K, Zd, yd : optional precomputed ``pair_products`` (float64), ``Z`` and ``y[:, None]`` in dtype.

    Returns
    -------
    g : ndarray of shape (runs, d)
    H : ndarray of shape (runs, d, d)
    """
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[0]
    Zd = Z.astype(dtype, copy=False) if Zd is None else Zd
    yd = np.asarray(y, dtype=float).astype(dtype)[:, None] if yd is None else yd
    U = Zd @ np.asarray(theta, dtype=float).T.astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if family is LOGISTIC:  # one sigmoid for both: W = s (1 - s)
            S = _sigmoid_inplace(U)
            W = S * (1 - S)
            R = np.subtract(S, yd, out=S)
        else:
            R = family.mean(U) - yd
            W = family.var(U)
    g = (Z.T @ R.astype(np.float64, copy=False)).T / n
    return g, weighted_grams(Zd, W, dtype=dtype, K=K) / n


def noisy_newton(
    Z,
    y,
    *,
    family: GLMFamily = LOGISTIC,
    pen,
    sigma_g,
    sigma_H,
    noise_g,
    noise_H,
    n_steps: int,
    eig_floor=DEFAULT_NEWTON_EIG_FLOOR,
    step_size: float = 1.0,
    theta_radius: float | None = None,
    tol: float = DEFAULT_CONV_TOL,
    dtype=np.float64,
    n_jobs: int | None = None,
    K: np.ndarray | None = None,
    theta_init: np.ndarray | None = None,
) -> NewtonResult:
    """T noisy Newton steps for many runs at once (PMT.md section 4; module docstring).

    Per step, for all runs: ``U = Z Theta^T`` (n x runs), gradients ``Z^T (b'(U) - y) / n`` (one GEMM)
    and Hessians ``sum_i b''(U_ir) z_i z_i^T / n`` (:func:`weighted_grams`, one GEMM); add the penalty
    (``pen theta`` and ``pen``), the noise ``sigma_g[r] noise_g[t, r]`` and ``sigma_H[r] noise_H[t, r]``,
    floor the eigenvalues at ``eig_floor``, and step ``theta <- theta - step_size H~^{-1} g~`` (then
    project onto ``||theta|| <= theta_radius`` if given). At step 0 every run starts at theta = 0 (or
    ``theta_init``), so the statistics are computed once.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Bounded rows.
    y : ndarray of shape (n,)
    family : GLMFamily
    pen : ndarray of shape (d, d) or (runs, d, d)
        Hessian of the penalty (``2 lam P`` or its whitened version).
    sigma_g, sigma_H : ndarray of shape (runs,)
        Noise standard deviations per release (0: noise off).
    noise_g : ndarray of shape (n_steps, runs, d)
    noise_H : ndarray of shape (n_steps, runs, d, d), symmetric.
    n_steps : int
    eig_floor : "auto", float or ndarray of shape (runs,), default "auto"
        Absolute eigenvalue floor (see :func:`newton_eig_floor`; "auto" uses ``sigma_H``).
    step_size : float, default 1.0
    theta_radius : float, optional
        Projection radius (Poisson's B_theta).
    tol : float, default 0.25
        Convergence tolerance (module docstring).
    dtype : numpy dtype, default float64
        dtype of the n-sized products (with more than two runs the pair products of Z, n x d(d+1)/2,
        are built once in this dtype and reused at every step).
    n_jobs : int, optional
        Threads over groups of runs, each with single-threaded BLAS (default 2 from 16 runs on).
    K : ndarray of shape (n, d(d+1)/2), optional
        ``pair_products(Z, dtype=dtype)`` (or in float64: the Hessian sums run in float64 either way, so a
        float64 K saves converting it at every call) computed beforehand (e.g. kept for the split by the sweeps:
        :mod:`engine.pmt._split_memo`); used only where it would be built here (more than two runs and
        more than one step), so the result is the same bit for bit. ``ValueError`` if its shape or
        dtype does not match.
    theta_init : ndarray of shape (d,), optional
        The first iterate of every run (default 0). The audit starts at the iterate where a pair is
        worst; the estimators start at 0.

    Every step's noisy gradient and Hessian are handed to :func:`engine.privacy.observe.emit`
    (``"newton-step"``) right after the noise is added: a no-op in the product, the audit's view.

    Returns
    -------
    NewtonResult
    """
    Z = np.asarray(Z, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = Z.shape
    sigma_g = np.asarray(sigma_g, dtype=float)
    sigma_H = np.asarray(sigma_H, dtype=float)
    runs = sigma_g.shape[0]
    pen = np.asarray(pen, dtype=float)
    if runs > 2 and n_steps > 1:
        if K is None:
            K = pair_products(Z, dtype=dtype)
        elif K.shape != (n, d * (d + 1) // 2) or K.dtype not in (np.dtype(dtype), np.dtype(np.float64)):
            raise ValueError(f"K must be pair_products(Z) of shape {(n, d * (d + 1) // 2)} and dtype "
                             f"{np.dtype(dtype)} or float64, got {K.shape} {K.dtype}")
    else:
        K = None
    floor = np.broadcast_to(np.asarray(newton_eig_floor(eig_floor, d, sigma_H) if isinstance(eig_floor, str)
                                       else eig_floor, dtype=float), (runs,))[:, None]
    Zd = Z.astype(dtype, copy=False)
    yd = y.astype(dtype)[:, None]
    if K is not None and K.dtype != np.float64:  # the Hessians' sums over rows run in float64
        K = K.astype(np.float64)
    theta0 = np.zeros(d) if theta_init is None else np.asarray(theta_init, dtype=float).reshape(d)
    theta = np.broadcast_to(theta0, (runs, d)).copy()
    prev = theta
    fixes = np.zeros(runs, dtype=int)
    finite = np.ones(runs, dtype=bool)
    kappa = np.full(runs, np.nan)
    min_eig = np.full(runs, np.nan)
    for t in range(int(n_steps)):
        if t == 0:
            g1, H1 = glm_statistics(Z, y, theta0, family)
            g = np.broadcast_to(g1, (runs, d)).copy()
            H = np.broadcast_to(H1, (runs, d, d)).copy()
        else:
            def stats(cols, theta=theta):
                return (cols, *batched_glm_statistics(Z, theta[cols], family, dtype=dtype, K=K, Zd=Zd, yd=yd,
                                                      y=y))

            g = np.empty((runs, d))
            H = np.empty((runs, d, d))
            for cols, gc, Hc in _run_groups(stats, runs, n_jobs):
                g[cols], H[cols] = gc, Hc
        g = g + np.einsum("...ij,...j->...i", pen, theta) + sigma_g[:, None] * noise_g[t]
        H = H + pen + sigma_H[:, None, None] * noise_H[t]
        _observe.emit("newton-step", step=t, gradient=g, hessian=H, sigma_g=sigma_g, sigma_H=sigma_H, theta=theta)
        ok = np.all(np.isfinite(H), axis=(1, 2)) & np.all(np.isfinite(g), axis=1)
        finite &= ok
        H = np.where(ok[:, None, None], H, np.eye(d))
        g = np.where(ok[:, None], g, 0.0)
        with threadpool_limits(1):  # many tiny eigenproblems: threads only add overhead
            w, V = np.linalg.eigh(H)
        kappa = _kappa_from_eigs(w)
        kappa = np.atleast_1d(kappa)
        min_eig = w[:, 0].copy()
        low = w < floor
        fixes += low.any(axis=1)
        w = np.maximum(w, floor)
        step = np.einsum("rij,rj->ri", V, np.einsum("rji,rj->ri", V, g) / w)
        prev = theta
        theta = _project_ball(theta - step_size * step, theta_radius)
        finite &= np.all(np.isfinite(theta), axis=1)
    last = np.linalg.norm(theta - prev, axis=1)
    converged = finite & (last <= tol * (1.0 + np.linalg.norm(prev, axis=1)))
    return NewtonResult(theta, fixes, converged, last, kappa, min_eig, int(n_steps))


def glm_reference_solve(Xa, y, lam: float, Pm, family: GLMFamily = LOGISTIC, *, max_iter: int = 100,
                        tol: float = 1e-10) -> tuple[np.ndarray, bool, int]:
    """Non-private penalised GLM fit by damped Newton (backtracking on the objective), float64.

    Minimises ``(1/n) sum [b(x_i^T theta) - y_i x_i^T theta] + lam theta^T P theta``.

    Parameters
    ----------
    Xa : ndarray of shape (n, d)
        Rows (intercept column included).
    y : ndarray of shape (n,)
    lam : float
    Pm : ndarray of shape (d, d)
    family : GLMFamily
    max_iter : int, default 100
    tol : float, default 1e-10
        Stop when the Newton decrement ``g^T H^{-1} g / 2`` is below ``tol`` (after one last full step).

    Returns
    -------
    theta : ndarray of shape (d,)
    converged : bool
        False when the iteration limit was hit (e.g. separable data at lam = 0: no finite MLE).
    n_iter : int

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); Xa = np.hstack([X, np.ones((4, 1))])
    >>> th, ok, _ = glm_reference_solve(Xa, np.array([0.0, 1.0, 0.0, 1.0]), 0.0, np.eye(2))
    >>> ok, th.round(4).tolist()
    (True, [0.9082, -1.3623])
    """
    Xa = np.asarray(Xa, dtype=float)
    n, d = Xa.shape
    pen = 2.0 * lam * np.asarray(Pm, dtype=float)

    def obj(th):
        u = Xa @ th
        return float(np.mean(family.b(u) - y * u) + lam * th @ Pm @ th)

    theta = np.zeros(d)
    f = obj(theta)
    for it in range(1, max_iter + 1):
        g, H = glm_statistics(Xa, y, theta, family)
        g = g + pen @ theta
        H = H + pen
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        dec = float(g @ step) / 2
        if dec < tol:  # quadratic convergence: one last full step reaches machine precision
            return theta - step, True, it
        a = 1.0
        while a > 1e-10:
            cand = theta - a * step
            fc = obj(cand)
            if np.isfinite(fc) and fc <= f - 0.25 * a * 2 * dec:
                break
            a *= 0.5
        theta, f = cand, fc
    return theta, False, max_iter


def newton_noise_dominance(sigma_H: float, d: int, public_curvature: float) -> dict:
    """How much the Hessian noise of one noisy-Newton step outweighs the curvature, from public quantities only.

    ``noise = 2 sqrt(d) sigma_H`` is the typical spectral norm of the symmetric Hessian noise (Wigner
    semicircle edge, as for the ridge banner: :func:`engine.pmt.public.noise_dominance`);
    ``public_curvature`` is the smallest eigenvalue of the averaged Hessian at ``theta = 0`` computed from
    the public second moment: ``b''(0) = 1/4`` (logistic) or 1 (Poisson) times the smallest eigenvalue
    of the whitened public moment (1 for PMT, whose public moment whitens to I) or of the raw public
    moment (DP-Newton). ``ratio = noise / public_curvature``; the release is **noise-dominated** when
    ``ratio >= 1/2`` (some eigenvalue of the noisy Hessian can be halved or worse, and the eigenvalue
    floor then sets the step: the run is a small noisy gradient step, not Newton). At the optimum the
    curvature is smaller than at 0 (``b''`` shrinks where the fit is confident), so this understates the
    dominance. It uses d, sigma_H (from R, n and the budget) and the public moment: no privacy cost.

    Returns
    -------
    dict
        ``{"hessian_noise": noise, "public_curvature": c, "noise_dominance": ratio, "noise_dominated": bool}``
        (ratio nan and dominated False when the curvature is unknown, e.g. no public rows).

    Examples
    --------
    >>> newton_noise_dominance(0.1, 4, 0.25)["noise_dominance"]
    1.6
    """
    noise = 2.0 * math.sqrt(d) * float(sigma_H)
    c = float(public_curvature)
    ratio = noise / c if c > 0 and math.isfinite(c) else math.nan
    return {"hessian_noise": noise, "public_curvature": c, "noise_dominance": ratio,
            "noise_dominated": bool(ratio >= 0.5) if math.isfinite(ratio) else False}


def _whitened_public_min_eig(moment) -> float:
    """Smallest eigenvalue of ``W^T Sigma_pub W`` (1 unless the moment was regularised; public)."""
    if not moment.regularized and not moment.estimator.endswith("+standardize"):
        return 1.0
    return float(np.linalg.eigvalsh(moment.whiten_quadratic(moment.factors[3]))[0])


def _newton_ledger(dlt, mu, T, sens_g, sens_H, nb):
    """Ledger of T noisy Newton steps, each a Hessian and a gradient release with ``mu_0 = mu / sqrt(2T)``.
    Returns ``(ledger, sigma_g, sigma_H, mu_0)``."""
    mu0 = P.split_mu(mu, 2 * T)
    s_g = P.gaussian_sigma(sens_g, mu0)
    s_H = P.gaussian_sigma(sens_H, mu0)
    ledger = P.PrivacyLedger(delta=dlt)
    for t in range(T):
        ledger.record(f"Hessian step {t + 1}", sensitivity=sens_H, sigma=s_H, neighbouring=nb)
        ledger.record(f"gradient step {t + 1}", sensitivity=sens_g, sigma=s_g, neighbouring=nb)
    return ledger, s_g, s_H, mu0


class _NoisyNewtonMixin:
    """The noisy-Newton estimators' shared fit: parameters, accounting, noise, the iteration, the report."""

    def _newton_params(self):
        eps, dlt, nb, lam, eta = self._privacy_params()
        T = _check_steps(self.n_steps)
        newton_eig_floor(self.eig_floor, 1, 0.0)  # validates "auto" or a float > 0
        eig_floor = self.eig_floor
        tol = _check_positive(self.tol, "tol")
        return eps, dlt, nb, lam, eta, T, eig_floor, tol

    def _fit_newton(self, Z, yv, pen, R, n, d, nb, dlt, eps, lam, T, eig_floor, tol, *, G=1.0, H=0.25,
                    family=LOGISTIC, theta_radius=None, report_min_eig=False, public_curvature=math.nan, extra,
                    **fields):
        """T noisy Newton steps on the bounded rows ``Z`` (norm <= R) with the estimator's noise
        (:func:`newton_noise` from ``random_state``); sets ``eig_floor_`` and ``report_`` (method from the
        class's ``_key``; ``report_min_eig``: the last noisy Hessian's smallest eigenvalue in ``extra``) and
        returns the :class:`NewtonResult` (theta in Z's space)."""
        mu = _mu(eps, dlt, n, self.sampler)
        sens_g, sens_H = certified_newton_sensitivities(R, n, d, nb, G=G, H=H, family=family,
                                                        theta_radius=theta_radius)
        ledger, s_g, s_H, mu0 = _newton_ledger(dlt, mu, T, sens_g, sens_H, nb)
        rng = release_rng(self)
        Hn, gn = newton_noise(rng, T, d)
        self.eig_floor_ = float(newton_eig_floor(eig_floor, d, s_H))
        res = noisy_newton(Z, yv, family=family, pen=pen, sigma_g=np.array([s_g]), sigma_H=np.array([s_H]),
                           noise_g=gn[:, None, :], noise_H=Hn[:, None], n_steps=T, eig_floor=eig_floor, tol=tol,
                           theta_radius=theta_radius)
        g, h = "gradient (per step)", "Hessian (per step)"
        if report_min_eig:
            extra = {"min_eig_last": float(res.min_eig[0]), **extra}
        extra = {**newton_noise_dominance(s_H, d, public_curvature), **extra}
        self.report_ = _dp_report_for(
            self,
            GLM_METHOD_NAMES.get(self._key, self._key), eps, dlt, mu, nb, n, d, lam, ledger, {g: sens_g, h: sens_H},
            {g: s_g, h: s_H}, kappa_noisy=float(res.kappa_noisy[0]), eig_fixes=int(res.eig_fixes[0]),
            eig_floor=self.eig_floor_, n_iter=res.n_steps, converged=bool(res.converged[0]),
            extra={"mu_per_release": mu0, "last_step": float(res.last_step[0]), "tol": tol, **extra}, **fields,
        )
        return res

    def _pmt_whiten(self, Xp, Xq, eta, lam, d):
        """PMT transform of the private rows and the whitened penalty ``2 lam W^T P W`` (W the whitening)."""
        if isinstance(Xq, PublicMoment):  # a public moment given directly (e.g. published): no public rows
            if Xq.fit_intercept != bool(self.fit_intercept):
                raise ValueError(f"the public moment was built with fit_intercept={Xq.fit_intercept} but the "
                                 f"estimator has fit_intercept={self.fit_intercept}")
            tr = pmt_transform(Xp, moment=Xq, eta=eta)
        else:
            tr = pmt_transform(Xp, Xq, eta=eta, fit_intercept=self.fit_intercept, on_singular=self.on_singular)
        S_is = tr.moment.Sigma_pub_inv_sqrt
        return tr, S_is, 2.0 * lam * tr.moment.whiten_quadratic(self._penalty_mask(d))

    def _set_pmt_theta(self, res, S_is, tr, p):
        """Store the whitened solution, its back-transform ``S^{-1/2} theta~`` and the transform."""
        self.theta_tilde_ = res.theta[0]
        self._set_theta(S_is @ res.theta[0], p)
        self.transform_ = tr
