"""Differentially private logistic regression and GLMs: DP-PMTLR (noisy Newton), baselines, reference.

Estimators (same conventions as :mod:`engine.regression`: keyword-only ``__init__`` that only stores,
``fit`` validates everything before any noise is drawn, randomness only from ``random_state``,
learned attributes end in ``_``, a :class:`engine.regression.FitReport` in ``report_``):

- :class:`PMTLogistic` -- DP-PMTLR (``shared/docs/PMT.md`` section 4; Cao, Bi & Zhang,
  arXiv:2602.22282; noisy-Newton template of Avella-Medina, Bradshaw & Loh, GDP noisy Newton):
  whiten and truncate the features with the public second moment (:mod:`engine.pmt`), run T noisy
  Newton steps in the whitened space, map back.
- :class:`DPNewtonLogistic` -- the same noisy Newton on the *raw* rows clipped at radius C: the
  private-only counterpart (PMT.md section 8: it fails at small lam where PMT converges).
- :class:`DPGDLogistic` -- full-batch DP gradient descent with per-example gradient clipping.
- :class:`LogisticReference` -- the non-private fit on the untruncated private data (the target of
  the error metric).
- :class:`PMTPoisson` -- the GLM extension for counts (Poisson, log link) with clipped responses and
  a projection of theta~ onto a ball; :class:`PoissonReference` its non-private fit.

Objective (original space; labels y in {0, 1} after mapping ``classes``)::

    (1/n) sum_i [ b(x_i^T theta) - y_i x_i^T theta ] + lam * theta^T P theta

with ``b(u) = log(1 + e^u)`` (logistic) or ``b(u) = e^u`` (Poisson). ``P`` is the ridge penalty mask
of :func:`engine.regression.penalty_mask` (intercept column last, unpenalised by default, as in
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
  terms differ by at most sqrt(2) times the larger norm); add/remove: ``R G / n`` and ``R^2 H / n``;
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
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits
from sklearn.base import ClassifierMixin, RegressorMixin

from engine import privacy as P
from engine.pmt import (
    _kappa_from_eigs,
    pmt_radius,
    pmt_transform,
    truncate_rows,
)
from engine.regression import (
    FitReport,
    _check_lam,
    _check_n_ge_d,
    _check_on_singular,
    _check_positive,
    _check_steps,
    _check_X,
    _check_X_pub,
    _CoefBase,
    _dp_gd_collect,
    _dp_gd_ledger,
    _dp_gd_setup,
    _gram_kappa,
    _mu,
    _pmt_report_fields,
    _resolve_bound,
    _run_groups,
)

__all__ = [
    "LOGISTIC",
    "POISSON",
    "GLMFamily",
    "GLM_METHOD_NAMES",
    "DEFAULT_NEWTON_EIG_FLOOR",
    "MIN_NEWTON_EIG_FLOOR",
    "newton_eig_floor",
    "DEFAULT_CONV_TOL",
    "check_binary_labels",
    "glm_statistics",
    "newton_sensitivities",
    "newton_noise",
    "newton_noise_stack",
    "weighted_grams",
    "pair_products",
    "noisy_newton",
    "NewtonResult",
    "glm_reference_solve",
    "dp_gd_logistic_path",
    "logistic_dp_gd_step_size",
    "PMTLogistic",
    "DPNewtonLogistic",
    "DPGDLogistic",
    "LogisticReference",
    "PMTPoisson",
    "PoissonReference",
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
# labels
# --------------------------------------------------------------------------------------------
def _check_classes(classes):
    try:
        c = tuple(classes)
    except TypeError:
        raise TypeError(f"classes must be a pair (negative, positive), got {classes!r}") from None
    if len(c) != 2:
        raise ValueError(f"classes must be a pair (negative, positive) of two labels, got {classes!r}")
    if c[0] == c[1]:
        raise ValueError(f"classes must name two different labels, got {classes!r}")
    return c


def check_binary_labels(y, n: int | None = None, *, classes=(0, 1), name: str = "y",
                        require_both: bool = True) -> np.ndarray:
    """Map user labels to {0, 1} with the user-given ``classes = (negative, positive)`` pair.

    The classes are never inferred from the data. Raised errors never quote private values.

    Parameters
    ----------
    y : array-like of shape (n,)
    n : int, optional
        Expected length (rows of X).
    classes : pair, default (0, 1)
        ``classes[0]`` maps to 0, ``classes[1]`` to 1.
    name : str, default "y"
    require_both : bool, default True
        Raise when every label is in one class (needed for fitting; not for scoring a test set).

    Returns
    -------
    ndarray of float64 in {0, 1}, shape (n,)

    Raises
    ------
    ValueError
        Wrong shape or length; NaN/inf; a label outside ``classes``; all labels in one class (the
        message is the same whatever the data).

    Examples
    --------
    >>> check_binary_labels(["no", "yes", "yes"], classes=("no", "yes")).tolist()
    [0.0, 1.0, 1.0]
    >>> check_binary_labels([0, 1, 2])
    Traceback (most recent call last):
    ...
    ValueError: y contains labels other than classes=(0, 1); every label must be one of the two given classes
    """
    c = _check_classes(classes)
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but the features have {n} rows; they must match")
    if arr.shape[0] < 1:
        raise ValueError(f"{name} is empty")
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; labels must be one of classes={c!r}")
    if arr.dtype.kind == "O":
        bad_nan = np.array([isinstance(v, float) and not math.isfinite(v) for v in arr])
        if bad_nan.any():
            raise ValueError(f"{name} contains NaN or infinite values; labels must be one of classes={c!r}")
    neg = arr == c[0]
    pos = arr == c[1]
    if not np.all(neg | pos):
        raise ValueError(
            f"{name} contains labels other than classes={c!r}; every label must be one of the two given classes"
        )
    if require_both and (pos.all() or neg.all()):
        raise ValueError(
            f"{name} must contain both classes {c!r}; a one-class sample has no (finite) logistic fit"
        )
    return pos.astype(np.float64)


def _check_counts(y, n, y_max, name="y"):
    try:
        v = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric counts") from None
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1 or v.shape[0] != n:
        raise ValueError(f"{name} must be 1-dimensional with {n} entries (one per row of X), got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or infinite values; all counts must be finite")
    if np.any(v < 0):
        raise ValueError(f"{name} contains negative values; Poisson counts must be >= 0")
    return v


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

    Replace-one: ``2 R G / n`` and ``sqrt(2) R^2 H / n``; add/remove: ``R G / n`` and ``R^2 H / n``
    (PMT.md section 4; logistic: G = 1, H = 1/4).

    Examples
    --------
    >>> [round(s, 6) for s in newton_sensitivities(2.0, 100)]
    [0.04, 0.014142]
    >>> newton_sensitivities(2.0, 100, "add-remove")
    (0.02, 0.01)
    """
    nb = P.validate_neighbouring(neighbouring)
    if nb == "replace-one":
        return 2.0 * radius * G / n, math.sqrt(2.0) * radius**2 * H / n
    return radius * G / n, radius**2 * H / n


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
    ``random_state=s`` exactly.
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
def pair_products(Z, *, dtype=np.float64) -> np.ndarray:
    """Row-wise upper-triangle products ``z_ij z_ik`` (j <= k, row-major), shape (n, d(d+1)/2).

    Built with d contiguous broadcast products (much faster than fancy indexing). Memory
    ``n d(d+1)/2`` entries of ``dtype`` (bank, n = 36k, d = 42, float32: 130 MB).

    Examples
    --------
    >>> pair_products(np.array([[1.0, 2.0]])).tolist()
    [[1.0, 2.0, 4.0]]
    """
    Z = np.asarray(Z).astype(dtype, copy=False)
    n, d = Z.shape
    K = np.empty((n, d * (d + 1) // 2), dtype=dtype)
    o = 0
    for i in range(d):
        np.multiply(Z[:, i:i + 1], Z[:, i:], out=K[:, o:o + d - i])
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
    if runs <= 2 and K is None:
        out = np.stack([(Zd * Wd[:, r:r + 1]).T @ Zd for r in range(runs)]).astype(float)
        return (out + np.swapaxes(out, 1, 2)) / 2
    if K is None:
        K = pair_products(Zd, dtype=dtype)
    acc = (Wd.T @ K).astype(float)  # (runs, p)
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
) -> NewtonResult:
    """T noisy Newton steps for many runs at once (PMT.md section 4; module docstring).

    Per step, for all runs: ``U = Z Theta^T`` (n x runs), gradients ``Z^T (b'(U) - y) / n`` (one GEMM)
    and Hessians ``sum_i b''(U_ir) z_i z_i^T / n`` (:func:`weighted_grams`, one GEMM); add the penalty
    (``pen theta`` and ``pen``), the noise ``sigma_g[r] noise_g[t, r]`` and ``sigma_H[r] noise_H[t, r]``,
    floor the eigenvalues at ``eig_floor``, and step ``theta <- theta - step_size H~^{-1} g~`` (then
    project onto ``||theta|| <= theta_radius`` if given). At step 0 every run starts at theta = 0, so
    the statistics are computed once.

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
    K = pair_products(Z, dtype=dtype) if runs > 2 and n_steps > 1 else None
    floor = np.broadcast_to(np.asarray(newton_eig_floor(eig_floor, d, sigma_H) if isinstance(eig_floor, str)
                                       else eig_floor, dtype=float), (runs,))[:, None]
    Zd = Z.astype(dtype, copy=False)
    yd = y.astype(dtype)[:, None]
    theta = np.zeros((runs, d))
    prev = theta
    fixes = np.zeros(runs, dtype=int)
    finite = np.ones(runs, dtype=bool)
    kappa = np.full(runs, np.nan)
    min_eig = np.full(runs, np.nan)
    for t in range(int(n_steps)):
        if t == 0:
            g1, H1 = glm_statistics(Z, y, np.zeros(d), family)
            g = np.broadcast_to(g1, (runs, d)).copy()
            H = np.broadcast_to(H1, (runs, d, d)).copy()
        else:
            def stats(cols, theta=theta):
                U = Zd @ theta[cols].T.astype(dtype)
                with np.errstate(over="ignore", invalid="ignore"):
                    if family is LOGISTIC:  # one sigmoid for both: W = s (1 - s)
                        S = _sigmoid_inplace(U)
                        W = S * (1 - S)
                        R = np.subtract(S, yd, out=S)
                    else:
                        R = family.mean(U) - yd
                        W = family.var(U)
                return cols, (Zd.T @ R).T.astype(float) / n, weighted_grams(Zd, W, dtype=dtype, K=K) / n

            g = np.empty((runs, d))
            H = np.empty((runs, d, d))
            for cols, gc, Hc in _run_groups(stats, runs, n_jobs):
                g[cols], H[cols] = gc, Hc
        g = g + np.einsum("...ij,...j->...i", pen, theta) + sigma_g[:, None] * noise_g[t]
        H = H + pen + sigma_H[:, None, None] * noise_H[t]
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


# --------------------------------------------------------------------------------------------
# DP-GD for logistic regression (runs are matrix columns)
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
    ``|s_i - y_i| ||x_i||``). The penalty gradient is data-independent and not clipped.

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
    Xa, n, d, sigma, runs, lam, step, C, rn, Ut = _dp_gd_setup(Xa, sigma, lam, step_size, clip_norm, dtype)
    # clipped gradient = u_i clip(||x_i|| (s_i - y_i), -C, C) with u_i = x_i / ||x_i||
    X = np.ascontiguousarray(Xa, dtype=dtype)
    rnd = rn.astype(dtype)[:, None]
    ryd = (rn * np.asarray(y, dtype=float)).astype(dtype)[:, None]

    def run(cols):
        k = cols.size
        cr = chunk_rows or max(32, int(65536 // k))
        theta = np.zeros((d, k))
        grad = np.empty((d, k), dtype=dtype)
        frac = np.zeros(k)
        nz, sg, lm, st = noise[:, :, cols], sigma[cols], lam[cols], step[cols]
        for t in range(int(n_steps)):
            th = theta.astype(dtype)
            grad.fill(0)
            last = t == n_steps - 1
            for s0 in range(0, n, cr):
                r = _sigmoid_inplace(X[s0:s0 + cr] @ th)
                r *= rnd[s0:s0 + cr]
                r -= ryd[s0:s0 + cr]
                if last:
                    frac += np.count_nonzero(np.abs(r) > C, axis=0)
                np.clip(r, -C, C, out=r)
                grad += Ut[:, s0:s0 + cr] @ r
            g = grad.astype(float) / n + sg * nz[t] + 2.0 * lm * (Pm @ theta)
            theta = theta - st * g
        return cols, theta, frac / n

    return _dp_gd_collect(run, d, runs, n_jobs)


# --------------------------------------------------------------------------------------------
# estimators
# --------------------------------------------------------------------------------------------
def _validate_glm_data(X, y, X_pub, *, fit_intercept, need_X_pub, label_fn):
    Xp = _check_X(X, "X")
    n, p = Xp.shape
    yv = label_fn(y, n)
    d = _check_n_ge_d(n, p, fit_intercept)
    return Xp, yv, _check_X_pub(X_pub, p, need_X_pub), n, p, d


def _newton_ledger(dlt, mu, T, sens_g, sens_H, nb):
    mu0 = P.split_mu(mu, 2 * T)
    s_g = P.gaussian_sigma(sens_g, mu0)
    s_H = P.gaussian_sigma(sens_H, mu0)
    ledger = P.PrivacyLedger(delta=dlt)
    for t in range(T):
        ledger.record(f"Hessian step {t + 1}", sensitivity=sens_H, sigma=s_H, neighbouring=nb)
        ledger.record(f"gradient step {t + 1}", sensitivity=sens_g, sigma=s_g, neighbouring=nb)
    return ledger, s_g, s_H, mu0


class _GLMBase(_CoefBase):
    """Coefficient handling (intercept column last) shared by the GLM estimators."""

    def decision_function(self, X):
        """Linear predictor ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._linear_predictor(X)


class _LogisticBase(ClassifierMixin, _GLMBase):
    def _labels(self, y, n):
        return check_binary_labels(y, n, classes=self.classes)

    @property
    def classes_(self):
        """The user-given ``classes`` pair as an array (negative first)."""
        c = _check_classes(self.classes)
        return np.asarray(c, dtype=object if any(isinstance(v, str) for v in c) else None)

    def predict_proba(self, X):
        """Probabilities of (negative, positive) class, shape (n_samples, 2)."""
        p = expit(self.decision_function(X))
        return np.column_stack([1 - p, p])

    def predict(self, X):
        """The predicted label from ``classes`` (positive when the linear predictor is > 0)."""
        c = self.classes_
        return np.where(self.decision_function(X) > 0, c[1], c[0])

    def score(self, X, y, sample_weight=None):
        """Accuracy on ``(X, y)`` (labels mapped with ``classes``)."""
        yv = check_binary_labels(y, None, classes=self.classes, require_both=False)
        pred = (self.decision_function(X) > 0).astype(float)
        return float(np.mean(pred == yv))


class LogisticReference(_LogisticBase):
    """Non-private logistic regression on the untruncated private data: the target of the error metric.

    Minimises ``(1/n) sum [log(1 + e^{u_i}) - y_i u_i] + lam theta^T P theta`` by damped Newton
    (:func:`glm_reference_solve`). At lam = 0 a mean loss below 1e-6 (perfect separation: no finite
    MLE) or the iteration limit sets ``converged_ = False`` and warns. With the intercept unpenalised (default) this is
    ``sklearn.linear_model.LogisticRegression(C=1 / (2 n lam))`` (``penalty=None`` at lam = 0).

    Parameters
    ----------
    lam : float, default 1e-3
    classes : pair, default (0, 1)
    fit_intercept, penalize_intercept : bool
    max_iter : int, default 100
    tol : float, default 1e-10

    Attributes
    ----------
    coef_, intercept_, theta_, report_ (``converged``, ``n_iter``), converged_

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 2)); y = (rng.random(4000) < expit(X @ [1.0, -1.0] + 0.5)).astype(int)
    >>> m = LogisticReference(lam=0.0).fit(X, y)
    >>> m.coef_.round(1).tolist(), round(m.intercept_, 1)
    ([1.0, -0.9], 0.5)
    """

    def __init__(self, *, lam=1e-3, classes=(0, 1), fit_intercept=True, penalize_intercept=False, max_iter=100,
                 tol=1e-10):
        self.lam = lam
        self.classes = classes
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit on the private data (public arguments are accepted and ignored).

        Raises
        ------
        ValueError, TypeError
            NaN/inf, bad labels, shape mismatch, n < d, lam < 0.
        """
        lam = _check_lam(self.lam)
        max_iter = _check_steps(self.max_iter, "max_iter")
        tol = _check_positive(self.tol, "tol")
        Xp, yv, _, n, p, d = _validate_glm_data(X, y, None, fit_intercept=self.fit_intercept, need_X_pub=False,
                                                label_fn=self._labels)
        Xa = self._with_intercept(Xp)
        Pm = self._penalty_mask(d)
        theta, ok, it = glm_reference_solve(Xa, yv, lam, Pm, LOGISTIC, max_iter=max_iter, tol=tol)
        u = Xa @ theta
        if lam == 0 and float(np.mean(np.logaddexp(0, u) - yv * u)) < 1e-6:
            ok = False  # (near) perfect separation: the decrement vanishes while ||theta|| -> inf
        if not ok:
            warnings.warn(
                f"the non-private logistic fit did not converge in max_iter={max_iter} Newton steps (at lam=0 "
                "separable data have no finite MLE); use lam > 0",
                UserWarning,
                stacklevel=2,
            )
        self._set_theta(theta, p)
        self.converged_ = ok
        self.report_ = FitReport(
            method=GLM_METHOD_NAMES["non-private"], epsilon=math.inf, delta=math.nan, mu=math.inf, neighbouring="",
            n=n, d=d, lam=lam, ledger=P.PrivacyLedger(), kappa_raw=_gram_kappa(Xa),
            frac_truncated=0.0, n_iter=it, converged=ok, extra={"family": "logistic"},
        )
        return self


class _NoisyNewtonMixin:
    def _newton_params(self):
        eps, dlt, nb, lam, eta = self._privacy_params()
        T = _check_steps(self.n_steps)
        newton_eig_floor(self.eig_floor, 1, 0.0)  # validates "auto" or a float > 0
        eig_floor = self.eig_floor
        tol = _check_positive(self.tol, "tol")
        return eps, dlt, nb, lam, eta, T, eig_floor, tol

    def _run_newton(self, Z, yv, pen, R, n, d, nb, dlt, eps, T, eig_floor, tol, *, G=1.0, H=0.25,
                    family=LOGISTIC, theta_radius=None):
        mu = _mu(eps, dlt)
        sens_g, sens_H = newton_sensitivities(R, n, nb, G=G, H=H)
        ledger, s_g, s_H, mu0 = _newton_ledger(dlt, mu, T, sens_g, sens_H, nb)
        rng = P.check_random_state(self.random_state)
        Hn, gn = newton_noise(rng, T, d)
        self.eig_floor_ = float(newton_eig_floor(eig_floor, d, s_H))
        res = noisy_newton(Z, yv, family=family, pen=pen, sigma_g=np.array([s_g]), sigma_H=np.array([s_H]),
                           noise_g=gn[:, None, :], noise_H=Hn[:, None], n_steps=T, eig_floor=eig_floor, tol=tol,
                           theta_radius=theta_radius)
        return mu, ledger, sens_g, sens_H, s_g, s_H, mu0, res

    def _report(self, key, eps, dlt, mu, nb, n, d, lam, ledger, sens_g, sens_H, s_g, s_H, mu0, res, tol, *, extra,
                **kw):
        return FitReport(
            method=GLM_METHOD_NAMES.get(key, key), epsilon=eps, delta=dlt, mu=mu, neighbouring=nb, n=n, d=d, lam=lam,
            ledger=ledger, sensitivities={"gradient (per step)": sens_g, "Hessian (per step)": sens_H},
            noise_scales={"gradient (per step)": s_g, "Hessian (per step)": s_H},
            kappa_noisy=float(res.kappa_noisy[0]), eig_fixes=int(res.eig_fixes[0]), eig_floor=self.eig_floor_,
            n_iter=res.n_steps, converged=bool(res.converged[0]),
            extra={"mu_per_release": mu0, "last_step": float(res.last_step[0]), "tol": tol, **extra},
            **kw,
        )

    def _pmt_whiten(self, Xp, Xq, eta, lam, d):
        """PMT transform of the private rows and the whitened penalty ``2 lam S^{-1/2} P S^{-1/2}``."""
        tr = pmt_transform(Xp, Xq, eta=eta, fit_intercept=self.fit_intercept, on_singular=self.on_singular)
        S_is = tr.moment.Sigma_pub_inv_sqrt
        return tr, S_is, 2.0 * lam * (S_is @ self._penalty_mask(d) @ S_is)

    def _set_pmt_theta(self, res, S_is, tr, p):
        """Store the whitened solution, its back-transform ``S^{-1/2} theta~`` and the transform."""
        self.theta_tilde_ = res.theta[0]
        self._set_theta(S_is @ res.theta[0], p)
        self.transform_ = tr


class PMTLogistic(_NoisyNewtonMixin, _LogisticBase):
    """DP-PMTLR: differentially private logistic regression by noisy Newton on PMT-whitened rows.

    Algorithm (PMT.md section 4; research note section 4.2; module docstring for the details):

    1. ``Sigma_pub`` from the public rows (intercept column appended last),
       ``X~ = Pi_R(X Sigma_pub^{-1/2})``, ``R = sqrt(d (1 + ln(2n/eta)))`` (:func:`engine.pmt.pmt_transform`).
    2. theta~_0 = 0; T noisy Newton steps (step size 1), each releasing the averaged gradient
       (``Delta_g = 2R/n``) and Hessian (``Delta_H = sqrt(2) R^2 / (4n)``) with ``mu / sqrt(2T)`` each;
       the whitened penalty ``2 lam Sigma^{-1/2} P Sigma^{-1/2}`` is added noise-free; noisy Hessian
       eigenvalues below ``eig_floor`` are raised to it.
    3. ``theta = Sigma_pub^{-1/2} theta~_T``.

    Parameters
    ----------
    epsilon : float, default 1.0
        ``0 < epsilon <= inf`` (inf: noise off; for checks only).
    delta : float, default 1e-5
    lam : float, default 1e-3
        Penalty on the (1/n)-scaled loss, ``lam >= 0``.
    n_steps : int, default 5
        T (2T releases).
    eta : float, default 0.05
    classes : pair, default (0, 1)
        (negative, positive) labels, given by the user; never inferred from the data.
    neighbouring : {"replace-one", "add-remove"}
    fit_intercept, penalize_intercept : bool
    on_singular : {"regularize", "raise"}
    eig_floor : "auto" or float, default "auto"
        Absolute floor on the noisy whitened Hessian's eigenvalues: ``max(1e-3, 2 sqrt(d) sigma_H)`` or the
        given value (:func:`newton_eig_floor`; module docstring). ``report_.eig_floor`` holds the value used.
    tol : float, default 0.25
        Convergence-flag tolerance (relative last step).
    random_state : None, int or Generator

    Attributes
    ----------
    coef_, intercept_, theta_, theta_tilde_, eig_floor_ (the floor used),
    report_ (:class:`engine.regression.FitReport`: noise scales,
    sensitivities, R, kappas, fraction truncated, ledger, ``n_iter``, ``eig_fixes``, ``converged``),
    transform_

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 2)) * [1.0, 10.0]; y = (rng.random(5000) < expit(X @ [1.0, -0.1])).astype(int)
    >>> m = PMTLogistic(epsilon=np.inf, lam=0.0, n_steps=20).fit(X[200:], y[200:], X_pub=X[:200])
    >>> ref = LogisticReference(lam=0.0).fit(X[200:], y[200:])
    >>> bool(np.allclose(m.theta_, ref.theta_, atol=1e-6)), m.report_.converged
    (True, True)
    """

    _key = "pmt"

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, n_steps=5, eta=0.05, classes=(0, 1),
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False, on_singular="regularize",
                 eig_floor=DEFAULT_NEWTON_EIG_FLOOR, tol=DEFAULT_CONV_TOL, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.n_steps = n_steps
        self.eta = eta
        self.classes = classes
        self.neighbouring = neighbouring
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.on_singular = on_singular
        self.eig_floor = eig_floor
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-PMTLR.

        Parameters
        ----------
        X : array-like of shape (n, p)
        y : array-like of shape (n,)
            Labels, each one of ``classes``.
        X_pub : array-like of shape (n_pub, p)
            Public features (required).
        y_pub : ignored
            Accepted for a common signature; PMT uses only the public features.

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            Before any noise: NaN/inf, labels outside ``classes`` or one class only, n < d, n_pub < 1,
            lam < 0, epsilon <= 0, delta outside (0, 1), n_steps < 1, unknown options.
        """
        eps, dlt, nb, lam, eta, T, eig_floor, tol = self._newton_params()
        _check_on_singular(self.on_singular)
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept, need_X_pub=True,
                                                 label_fn=self._labels)
        tr, S_is, pen = self._pmt_whiten(Xp, Xq, eta, lam, d)
        mu, ledger, sg, sH, s_g, s_H, mu0, res = self._run_newton(tr.X_tilde, yv, pen, tr.radius, n, d, nb, dlt, eps,
                                                                  T, eig_floor, tol)
        self._set_pmt_theta(res, S_is, tr, p)
        self.report_ = self._report(
            self._key, eps, dlt, mu, nb, n, d, lam, ledger, sg, sH, s_g, s_H, mu0, res, tol, **_pmt_report_fields(tr),
            extra={"min_eig_last": float(res.min_eig[0]), "family": "logistic"},
        )
        return self


class DPNewtonLogistic(_NoisyNewtonMixin, _LogisticBase):
    """The same noisy Newton on the raw rows clipped at radius C (private data only; PMT.md sections 5, 8).

    Rows (intercept column included) are scaled to L2 norm <= C; sensitivities and noise as in
    :class:`PMTLogistic` with R replaced by C; the penalty is ``2 lam P`` (raw space); the eigenvalue
    floor is the same absolute ``eig_floor`` (raw units). Default ``C = sqrt(d (1 + ln(2n/eta)))``, the
    PMT radius formula on the raw features (sensible only for standardised features; that is the
    comparison PMT.md section 5 asks for). The paper's claim: this fails at small lam where PMT
    converges.

    Parameters
    ----------
    clip_radius : None, float or "private", default None
        C. None: the public formula; float: user value; "private": the largest private row norm
        (``PrivacyLeakWarning``).
    (others as in :class:`PMTLogistic`)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2)); y = (rng.random(3000) < expit(X @ [1.0, -1.0])).astype(int)
    >>> m = DPNewtonLogistic(epsilon=np.inf, lam=0.0, n_steps=20, clip_radius=100.0).fit(X, y)
    >>> bool(np.allclose(m.theta_, LogisticReference(lam=0.0).fit(X, y).theta_, atol=1e-6))
    True
    """

    _key = "dp-newton"

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, n_steps=5, eta=0.05, clip_radius=None, classes=(0, 1),
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False,
                 eig_floor=DEFAULT_NEWTON_EIG_FLOOR, tol=DEFAULT_CONV_TOL, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.n_steps = n_steps
        self.eta = eta
        self.clip_radius = clip_radius
        self.classes = classes
        self.neighbouring = neighbouring
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.eig_floor = eig_floor
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit the raw-data noisy Newton. ``X_pub`` only feeds ``kappa_pub`` in the report.

        Raises
        ------
        ValueError, TypeError
            Before any noise (see :meth:`PMTLogistic.fit`).
        """
        eps, dlt, nb, lam, eta, T, eig_floor, tol = self._newton_params()
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept, need_X_pub=False,
                                                 label_fn=self._labels)
        Xa = self._with_intercept(Xp)
        C = self._clip_radius(Xa, d, n, eta)
        Xc, _, clipped = truncate_rows(Xa, C)
        mu, ledger, sg, sH, s_g, s_H, mu0, res = self._run_newton(Xc, yv, 2.0 * lam * self._penalty_mask(d), C, n, d, nb, dlt, eps, T,
                                                                  eig_floor, tol)
        self._set_theta(res.theta[0], p)
        n_pub, kpub = self._public_kappa(Xq)
        self.report_ = self._report(
            self._key, eps, dlt, mu, nb, n, d, lam, ledger, sg, sH, s_g, s_H, mu0, res, tol,
            radius=C, n_pub=n_pub, kappa_raw=_gram_kappa(Xa), kappa_pub=kpub, frac_truncated=float(np.mean(clipped)),
            extra={"min_eig_last": float(res.min_eig[0]), "family": "logistic"},
        )
        return self


class DPGDLogistic(_LogisticBase):
    """Full-batch DP gradient descent for logistic regression with per-example clipping (PMT.md section 5).

    theta_0 = 0; T steps (default 100) of ``theta <- theta - step_size (mean clipped gradient + N(0, s_t^2 I)
    + 2 lam P theta)`` on the raw rows (intercept included); per-example gradients ``(s_i - y_i) x_i``
    clipped to L2 norm C; each step ``mu_t = mu / sqrt(T)``, ``s_t = 2C / (n mu_t)`` (replace-one;
    ``C / (n mu_t)`` add/remove). See :func:`dp_gd_logistic_path`.

    Step size: ``1 / (lambda_max(X_pub^T X_pub / n_pub) / 4 + 2 lam)`` (the inverse smoothness constant
    of the objective, estimated from the public rows with the intercept column: public, so free).
    Without ``X_pub`` give ``step_size``.

    Parameters
    ----------
    n_steps : int, default 100
    clip_norm : None, float or "private", default None
        C. None: ``sqrt(d (1 + ln(2n/eta)))`` (the raw-row radius DP-Newton uses; since
        ``|s - y| <= 1`` it bounds the gradient of rows of that norm). "private": the largest private row
        norm (``PrivacyLeakWarning``).
    step_size : None or float
    (others as in :class:`PMTLogistic`)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2)); y = (rng.random(3000) < expit(X @ [1.0, -1.0])).astype(int)
    >>> m = DPGDLogistic(epsilon=np.inf, lam=0.0, clip_norm=1e6, n_steps=300).fit(X, y, X_pub=X[:200])
    >>> bool(np.allclose(m.theta_, LogisticReference(lam=0.0).fit(X, y).theta_, atol=1e-3))
    True
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, n_steps=100, eta=0.05, clip_norm=None, step_size=None,
                 classes=(0, 1), neighbouring="replace-one", fit_intercept=True, penalize_intercept=False,
                 random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.n_steps = n_steps
        self.eta = eta
        self.clip_norm = clip_norm
        self.step_size = step_size
        self.classes = classes
        self.neighbouring = neighbouring
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.random_state = random_state

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Run DP-GD.

        Raises
        ------
        ValueError, TypeError
            Before any noise is drawn.
        """
        eps, dlt, nb, lam, eta = self._privacy_params()
        T = _check_steps(self.n_steps)
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=self.step_size is None, label_fn=self._labels)
        Xa = self._with_intercept(Xp)
        step = self._dp_gd_step_size(Xq, lambda lam_max: logistic_dp_gd_step_size(lam_max, lam))
        C = _resolve_bound(self.clip_norm, "clip_norm", public=lambda: pmt_radius(d, n, eta),
                           private=lambda: float(np.max(np.linalg.norm(Xa, axis=1))) or 1.0)
        mu = _mu(eps, dlt)
        ledger, mu_t, sens, sigma_t = _dp_gd_ledger(dlt, mu, T, C, n, nb)
        Pm = self._penalty_mask(d)
        rng = P.check_random_state(self.random_state)
        noise = P.gaussian_noise((T, d), 1.0, rng)[:, :, None]
        theta, frac = dp_gd_logistic_path(Xa, yv, clip_norm=C, lam=lam, Pm=Pm, step_size=step,
                                          sigma=np.array([sigma_t]), noise=noise, n_steps=T)
        self._set_theta(theta[:, 0], p)
        self.report_ = FitReport(
            method=GLM_METHOD_NAMES["dp-gd"], epsilon=eps, delta=dlt, mu=mu, neighbouring=nb, n=n, d=d, lam=lam,
            ledger=ledger, sensitivities={"gradient (per step)": sens}, noise_scales={"gradient (per step)": sigma_t},
            radius=C, n_pub=0 if Xq is None else Xq.shape[0],
            kappa_raw=_gram_kappa(Xa), frac_truncated=float(frac[0]), n_iter=T,
            converged=bool(np.all(np.isfinite(theta))),
            extra={"step_size": step, "mu_per_step": mu_t, "family": "logistic"},
        )
        return self


# --------------------------------------------------------------------------------------------
# Poisson (GLM extension)
# --------------------------------------------------------------------------------------------
def poisson_bounds(radius: float, theta_radius: float, y_max: float) -> tuple[float, float]:
    """``G = sup |e^u - y|`` and ``H = sup e^u`` over ``|u| <= R B_theta``, ``0 <= y <= y_max``.

    ``G = max(e^{R B_theta}, y_max)`` (both terms are non-negative), ``H = e^{R B_theta}`` (inf when
    it overflows a float).

    Examples
    --------
    >>> [round(v, 4) for v in poisson_bounds(1.0, 1.0, 5.0)]
    [5.0, 2.7183]
    """
    a = float(radius) * float(theta_radius)
    H = math.exp(a) if a < 709.0 else math.inf
    return max(H, float(y_max)), H


class PoissonReference(RegressorMixin, _GLMBase):
    """Non-private Poisson regression (log link) on the private data, same objective as :class:`PMTPoisson`.

    Minimises ``(1/n) sum [e^{u_i} - y_i u_i] + lam theta^T P theta`` (damped Newton). Equals
    ``sklearn.linear_model.PoissonRegressor(alpha=2 lam)`` (intercept unpenalised).

    Parameters
    ----------
    lam : float, default 1e-3
    fit_intercept, penalize_intercept : bool
    """

    def __init__(self, *, lam=1e-3, fit_intercept=True, penalize_intercept=False):
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit on the private data (counts >= 0)."""
        lam = _check_lam(self.lam)
        Xp, yv, _, n, p, d = _validate_glm_data(X, y, None, fit_intercept=self.fit_intercept, need_X_pub=False,
                                                label_fn=lambda v, n_: _check_counts(v, n_, None))
        Xa = self._with_intercept(Xp)
        Pm = self._penalty_mask(d)
        theta, ok, it = glm_reference_solve(Xa, yv, lam, Pm, POISSON)
        self._set_theta(theta, p)
        self.converged_ = ok
        self.report_ = FitReport(method="Non-private", epsilon=math.inf, delta=math.nan, mu=math.inf,
                                 neighbouring="", n=n, d=d, lam=lam, ledger=P.PrivacyLedger(), n_iter=it,
                                 converged=ok, extra={"family": "poisson"})
        return self

    def predict(self, X):
        """Predicted mean count ``exp(X @ coef_ + intercept_)``."""
        return np.exp(self.decision_function(X))


class PMTPoisson(_NoisyNewtonMixin, RegressorMixin, _GLMBase):
    """DP-PMT Poisson regression: the GLM extension of DP-PMTLR (PMT.md section 4, research note section 5).

    Canonical Poisson GLM, ``b(u) = e^u``. Unlike the logistic case, ``|b'(u) - y|`` and ``b''(u)`` are
    unbounded, so (our reading, documented):

    * counts are clipped to ``[0, y_max]`` with a **public** ``y_max`` (user-given);
    * after every Newton step theta~ is projected onto the ball ``||theta~|| <= B_theta`` (public,
      user-given, default 1), so ``|x~^T theta~| <= R B_theta`` at every evaluated point (the start
      theta~_0 = 0 is inside);
    * hence ``G = max(e^{R B_theta}, y_max)`` and ``H = e^{R B_theta}`` (:func:`poisson_bounds`), and the
      sensitivities are ``2 R G / n`` and ``sqrt(2) R^2 H / n`` (replace-one; halved-style ``R G / n``,
      ``R^2 H / n`` add/remove).

    The bounds grow like ``e^{R B_theta}``: with R ~ 10 the noise is large unless ``B_theta`` is small
    (the whitened linear predictor is then confined to ``[-R B_theta, R B_theta]``). This is the price of
    a worst-case sensitivity for an unbounded-mean GLM, shown as is.

    Parameters
    ----------
    y_max : float
        Public clip of the counts (required, > 0).
    theta_radius : float, default 1.0
        B_theta (whitened units).
    n_steps : int, default 5
    (others as in :class:`PMTLogistic`; no ``classes``)

    Attributes
    ----------
    coef_, intercept_, theta_, theta_tilde_, report_, transform_
    """

    _key = "pmt"

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, n_steps=5, eta=0.05, y_max=None, theta_radius=1.0,
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False, on_singular="regularize",
                 eig_floor=DEFAULT_NEWTON_EIG_FLOOR, tol=DEFAULT_CONV_TOL, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.n_steps = n_steps
        self.eta = eta
        self.y_max = y_max
        self.theta_radius = theta_radius
        self.neighbouring = neighbouring
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.on_singular = on_singular
        self.eig_floor = eig_floor
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-PMT Poisson regression.

        Raises
        ------
        ValueError, TypeError
            Before any noise: y_max missing or <= 0, theta_radius <= 0, negative/NaN counts, and the
            checks of :meth:`PMTLogistic.fit`.
        """
        eps, dlt, nb, lam, eta, T, eig_floor, tol = self._newton_params()
        if self.y_max is None:
            raise ValueError("y_max (public upper clip of the counts) is required for PMTPoisson; it is never "
                             "taken from the private data")
        y_max = _check_positive(self.y_max, "y_max")
        B = _check_positive(self.theta_radius, "theta_radius")
        _check_on_singular(self.on_singular)
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept, need_X_pub=True,
                                                 label_fn=lambda v, n_: _check_counts(v, n_, y_max))
        yc = np.minimum(yv, y_max)
        tr, S_is, pen = self._pmt_whiten(Xp, Xq, eta, lam, d)
        G, H = poisson_bounds(tr.radius, B, y_max)
        if not (math.isfinite(G) and math.isfinite(H)):
            raise ValueError(f"R * theta_radius = {tr.radius * B:.3g} is too large: e^(R B_theta) overflows; "
                             "choose a smaller theta_radius")
        mu, ledger, sg, sH, s_g, s_H, mu0, res = self._run_newton(tr.X_tilde, yc, pen, tr.radius, n, d, nb, dlt, eps,
                                                                  T, eig_floor, tol, G=G, H=H, family=POISSON,
                                                                  theta_radius=B)
        self._set_pmt_theta(res, S_is, tr, p)
        self.report_ = self._report(
            self._key, eps, dlt, mu, nb, n, d, lam, ledger, sg, sH, s_g, s_H, mu0, res, tol, **_pmt_report_fields(tr),
            B_y=y_max, frac_y_clipped=float(np.mean(yv > y_max)),
            extra={"family": "poisson", "theta_radius": B, "G": G, "H": H},
        )
        return self

    def predict(self, X):
        """Predicted mean count ``exp(X @ coef_ + intercept_)``."""
        return np.exp(self.decision_function(X))
