"""Differentially private ridge regression: DP-PMTRR, its private-only baselines and the reference.

Estimators (scikit-learn conventions: keyword-only ``__init__`` that only stores, ``fit`` validates
everything before any noise is drawn, randomness only from ``random_state``, learned attributes end
in ``_``):

- :class:`PMTRidge` -- DP-PMTRR (``shared/docs/PMT.md`` section 3; Cao, Bi & Zhang,
  arXiv:2602.22282): whiten with the public second moment, truncate at R, perturb the sufficient
  statistics ``A = X~^T X~`` and ``b = X~^T y``, solve, map back.
- :class:`DPRidge` -- DP-RR (PMT.md section 5): the same sufficient-statistics perturbation on the
  *raw* (unwhitened) features clipped at radius C.
- :class:`DPRidgeOracle` -- DP-RR with C picked on a grid by looking at the error against the
  non-private fit: **non-private tuning**, the best the baseline could do (warns).
- :class:`DPGDRidge` -- full-batch DP gradient descent with per-example gradient clipping.
- :class:`RidgeReference` -- the non-private ridge on the untruncated private data: the target of
  the error metric.

Common objective (original space, PMT.md section 3)::

    (1/n) sum_i (y_i - x_i^T theta - theta_0)^2 + lam * theta^T theta

Intercept: with ``fit_intercept=True`` a constant-1 column is appended **last** (PMT.md section 2).
By default the intercept is **not** penalised (``penalize_intercept=False``), which is what
``sklearn.linear_model.Ridge(alpha=n * lam, fit_intercept=True)`` solves; with
``penalize_intercept=True`` the constant column is penalised like any other (equal to
``Ridge(alpha=n * lam, fit_intercept=False)`` on ``[X, 1]``). Internally the penalty is
``lam * theta^T P theta`` with ``P = diag(1, ..., 1, 0)`` or ``I``; in PMT's whitened space it becomes
``lam * theta~^T Sigma_pub^{-1/2} P Sigma_pub^{-1/2} theta~`` (penalty A1 of the research note, so
noise-free PMT with nothing truncated reproduces the reference exactly).

Privacy: mu-GDP throughout (:mod:`engine.privacy`). ``epsilon`` and ``delta`` are converted to mu
with :func:`engine.privacy.gdp_mu` (rounded towards more privacy). ``epsilon=np.inf`` means **noise
off** (mu = inf): used to check convergence to the non-private fit, never a private release.

Bounds: every radius and bound is public by default (d, n, eta and the public rows/labels, or a
number the user gives). Passing ``"private"`` for a bound takes it from the private data and warns
with :class:`engine.privacy.PrivacyLeakWarning`: the guarantee then no longer holds.

Eigenvalue floor (PMT.md section 3, step 5): if the noisy system matrix ``M = A_priv + penalty`` is
not positive definite (smallest eigenvalue <= 0), its eigenvalues below
``eig_floor * trace(A_priv) / d`` are raised to that value (default ``eig_floor = 1e-3``; for PMT
``trace(A_priv) / d ~ n``, so the floor is about ``1e-3 n`` in whitened units, the research note's
suggestion). Each fix is counted in ``report_.eig_fixes``; nothing is hidden.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from engine import privacy as P
from engine.pmt import (
    ON_SINGULAR,
    PublicMoment,
    _kappa_from_eigs,
    add_intercept,
    pmt_radius,
    pmt_transform,
    public_moment,
    response_bound as _public_response_bound,
    truncate_rows,
)

__all__ = [
    "FitReport",
    "PMTRidge",
    "DPRidge",
    "DPRidgeOracle",
    "DPGDRidge",
    "RidgeReference",
    "penalty_mask",
    "ridge_reference_solve",
    "ssp_noise",
    "ssp_sensitivities",
    "sufficient_statistics",
    "dp_gd_noise",
    "default_clip_grid",
    "ssp_solve",
    "dp_gd_ridge_path",
    "RESPONSES",
    "validate_fit_data",
    "validate_privacy",
    "LinearEstimatorBase",
    "METHOD_NAMES",
]

#: How PMTRidge bounds the response: clip y at B_y (Reading A) or transform (x, y) jointly (Reading B).
RESPONSES = ("clip", "joint")

#: Display names used in reports, sweeps and plots (contract: engine.experiments).
METHOD_NAMES = {
    "pmt": "PMT",
    "dp-rr": "DP-RR",
    "dp-rr-oracle": "DP-RR (oracle C, non-private tuning)",
    "dp-gd": "DP-GD",
    "non-private": "Non-private",
}

DEFAULT_EIG_FLOOR = 1e-3
#: Largest accepted |entry| of X or y: beyond it, sums of squares can overflow float64.
MAX_ABS_VALUE = 1e150


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------
@dataclass
class FitReport:
    """What a fit released and how: noise scales, sensitivities, bounds, conditioning, budget.

    Attributes
    ----------
    method : str
        Display name (see :data:`METHOD_NAMES`).
    epsilon, delta, mu : float
        Target (epsilon, delta) and the total mu-GDP (inf when noise is off).
    neighbouring : str
        ``"replace-one"`` or ``"add-remove"``.
    ledger : engine.privacy.PrivacyLedger
        One record per Gaussian release (name, sensitivity, sigma, mu); ``releases`` holds
        ``ledger.to_records()`` (mu and epsilon per release plus the composed total).
    sensitivities, noise_scales : dict
        Per release: L2 / Frobenius sensitivity, noise standard deviation.
    radius : float
        R (PMT, whitened units) or C (DP-RR row radius / DP-GD gradient clip).
    B_y : float
        Response bound (nan when y is not clipped).
    kappa_raw, kappa_pub, kappa_pmt, kappa_noisy : float
        Condition numbers of the raw ``X^T X`` (intercept included; private, display only), of
        ``Sigma_pub``, of ``X~^T X~`` after PMT, and of the noisy system matrix actually solved
        (inf if not positive definite); nan where not applicable.
    frac_truncated, frac_y_clipped : float
        Fraction of rows truncated / clipped, of responses clipped (display only).
    eig_fixes : int
        How many times the eigenvalue floor fired.
    """

    method: str
    epsilon: float
    delta: float
    mu: float
    neighbouring: str
    n: int
    d: int
    lam: float
    ledger: P.PrivacyLedger
    sensitivities: dict = field(default_factory=dict)
    noise_scales: dict = field(default_factory=dict)
    radius: float = math.nan
    B_y: float = math.nan
    n_pub: int = 0
    kappa_raw: float = math.nan
    kappa_pub: float = math.nan
    kappa_pmt: float = math.nan
    kappa_noisy: float = math.nan
    frac_truncated: float = math.nan
    frac_y_clipped: float = math.nan
    eig_fixes: int = 0
    eig_floor: float = DEFAULT_EIG_FLOOR
    sigma_pub_regularized: bool = False
    tau: float = 0.0
    n_iter: int | None = None
    converged: bool | None = None
    extra: dict = field(default_factory=dict)

    @property
    def releases(self) -> list[dict]:
        """Per-release mu and epsilon at ``delta`` plus the composed total (from the ledger)."""
        return self.ledger.to_records()

    def to_dict(self) -> dict:
        """A JSON-friendly dict (the ledger becomes its records)."""
        out = {k: v for k, v in asdict(self).items() if k != "ledger"}
        out["releases"] = self.releases
        return out


# --------------------------------------------------------------------------------------------
# shared numerical core (used by the estimators and by engine.experiments)
# --------------------------------------------------------------------------------------------
def penalty_mask(d: int, *, fit_intercept: bool, penalize_intercept: bool) -> np.ndarray:
    """The ridge penalty matrix ``P`` in ``lam * theta^T P theta`` (intercept column last).

    Examples
    --------
    >>> penalty_mask(3, fit_intercept=True, penalize_intercept=False).diagonal().tolist()
    [1.0, 1.0, 0.0]
    """
    Pm = np.eye(d)
    if fit_intercept and not penalize_intercept:
        Pm[-1, -1] = 0.0
    return Pm


def ridge_reference_solve(Xa, y, lam: float, Pm) -> np.ndarray:
    """Non-private ridge on already-augmented rows: argmin (1/n)||y - Xa theta||^2 + lam theta^T P theta.

    Solved by least squares on the stacked system ``[Xa; sqrt(n lam) P^{1/2}]`` (P diagonal 0/1), which
    stays accurate when ``Xa^T Xa`` is badly conditioned (raw CCPP features: kappa ~ 1e9).

    Parameters
    ----------
    Xa : ndarray of shape (n, d)
    y : ndarray of shape (n,)
    lam : float
        ``lam >= 0``.
    Pm : ndarray of shape (d, d), diagonal with 0/1 entries.

    Returns
    -------
    ndarray of shape (d,)
    """
    n, d = Xa.shape
    if lam > 0:
        rows = np.sqrt(n * lam) * Pm[np.diag(Pm) > 0]
        Xs = np.vstack([Xa, rows])
        ys = np.concatenate([y, np.zeros(rows.shape[0])])
    else:
        Xs, ys = Xa, y
    theta, *_ = np.linalg.lstsq(Xs, ys, rcond=None)
    return theta


def sufficient_statistics(Z, y, B_y: float):
    """The statistics DP-PMTRR / DP-RR release (before noise): ``A = Z^T Z`` and ``b = Z^T clip(y, +-B_y)``.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Rows already bounded (PMT-truncated at R, or clipped at C).
    y : ndarray of shape (n,)
    B_y : float
        Response bound; y is clipped to ``[-B_y, B_y]``.

    Returns
    -------
    A : ndarray of shape (d, d)
    b : ndarray of shape (d,)

    Examples
    --------
    >>> A, b = sufficient_statistics(np.array([[1.0, 2.0]]), np.array([5.0]), 3.0)
    >>> A.tolist(), b.tolist()
    ([[1.0, 2.0], [2.0, 4.0]], [3.0, 6.0])
    """
    Z = np.asarray(Z, dtype=float)
    yc = np.clip(np.asarray(y, dtype=float), -B_y, B_y)
    return Z.T @ Z, Z.T @ yc


def ssp_noise(rng: np.random.Generator, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal noise for one sufficient-statistics release: (symmetric d x d, vector d).

    The symmetric matrix has iid N(0, 1) on and above the diagonal
    (:func:`engine.privacy.symmetric_gaussian_noise`), drawn first; then the vector. Scaling by
    ``sigma_A`` and ``sigma_b`` gives the Gaussian mechanism. The estimators and the sweeps draw
    through this one function, so a sweep with seed s reproduces ``random_state=s`` exactly.
    """
    W = P.symmetric_gaussian_noise(d, 1.0, rng)
    w = P.gaussian_noise(d, 1.0, rng)
    return W, w


def ssp_solve(A_priv, b_priv, penalty, *, eig_floor: float = DEFAULT_EIG_FLOOR):
    """Solve ``(A_priv + penalty) theta = b_priv`` for one system or a stack, with the eigenvalue floor.

    Parameters
    ----------
    A_priv : ndarray of shape (..., d, d)
        Noisy (symmetric) second-moment statistics.
    b_priv : ndarray of shape (..., d)
    penalty : ndarray of shape (d, d) or (..., d, d)
        ``n lam P`` (or its whitened version).
    eig_floor : float, default 1e-3
        When the system is not positive definite, its eigenvalues below ``eig_floor * trace(A_priv) / d``
        (the mean eigenvalue of the noisy statistic: about ``eig_floor * n`` in PMT's whitened units;
        ``max|eig|`` of the system if that trace is not positive) are raised to it (PMT.md section 3,
        step 5). Post-processing of released values: no privacy cost.

    Returns
    -------
    theta : ndarray of shape (..., d)
    fixed : ndarray of bool, shape (...)
        Where the floor fired.
    kappa : ndarray of shape (...)
        Condition number of the system before the floor (inf when not positive definite).

    Examples
    --------
    >>> th, fixed, k = ssp_solve(np.diag([2.0, 4.0]), np.array([2.0, 4.0]), np.zeros((2, 2)))
    >>> th.tolist(), bool(fixed), float(k)
    ([1.0, 1.0], False, 2.0)
    """
    A_priv = np.asarray(A_priv, dtype=float)
    M = A_priv + penalty
    w, V = np.linalg.eigh(M)
    kappa = _kappa_from_eigs(w)
    fixed = w[..., 0] <= 0
    if np.any(fixed):
        d = A_priv.shape[-1]
        scale = np.trace(A_priv, axis1=-2, axis2=-1) / d  # mean eigenvalue of the noisy statistic (~ n for PMT)
        scale = np.where(scale > 0, scale, np.max(np.abs(w), axis=-1))
        floor = (eig_floor * scale)[..., None]
        w = np.where(fixed[..., None], np.maximum(w, floor), w)
    Vtb = np.einsum("...ji,...j->...i", V, np.asarray(b_priv, dtype=float))
    theta = np.einsum("...ij,...j->...i", V, Vtb / w)
    return theta, fixed, kappa


def _run_groups(fn, runs: int, n_jobs: int | None = None, min_runs: int = 16):
    """Call ``fn(cols)`` on groups of run indices in threads, each with single-threaded BLAS.

    Multi-threaded BLAS on small products slows down badly when other processes share the cores;
    splitting the independent runs over ``n_jobs`` Python threads (numpy releases the GIL) with one
    BLAS thread each is robust. Default: 2 threads when there are at least ``min_runs`` runs.
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    if n_jobs is None:
        n_jobs = 2 if runs >= min_runs else 1
    groups = [g for g in np.array_split(np.arange(runs), max(1, min(int(n_jobs), runs))) if g.size]
    with threadpool_limits(1):
        if len(groups) == 1:
            return [fn(groups[0])]
        with ThreadPoolExecutor(len(groups)) as ex:
            return list(ex.map(fn, groups))


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


def _dp_gd_collect(run, d, runs, n_jobs):
    """Run ``run(cols) -> (cols, theta (d, k), frac (k,))`` over thread groups (2 threads from 64 runs on)."""
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
    independent). The penalty gradient is data-independent and not clipped.

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
    Xa, n, d, sigma, runs, lam, step, C, rn, Ut = _dp_gd_setup(Xa, sigma, lam, step_size, clip_norm, dtype)
    S = np.ascontiguousarray(2.0 * rn[:, None] * np.hstack([Xa, -np.asarray(y, dtype=float)[:, None]]), dtype=dtype)

    def run(cols):
        k = cols.size
        cr = chunk_rows or max(32, int(65536 // k))
        theta = np.zeros((d, k))
        th1 = np.ones((d + 1, k), dtype=dtype)
        grad = np.empty((d, k), dtype=dtype)
        frac = np.zeros(k)
        nz, sg, lm, st = noise[:, :, cols], sigma[cols], lam[cols], step[cols]
        for t in range(n_steps):
            th1[:d] = theta
            grad.fill(0)
            last = t == n_steps - 1
            for s0 in range(0, n, cr):
                r = S[s0:s0 + cr] @ th1
                if last:
                    frac += np.count_nonzero(np.abs(r) > C, axis=0)
                np.clip(r, -C, C, out=r)
                grad += Ut[:, s0:s0 + cr] @ r
            g = grad.astype(float) / n + sg * nz[t] + 2.0 * lm * (Pm @ theta)
            theta = theta - st * g
        return cols, theta, frac / n

    return _dp_gd_collect(run, d, runs, n_jobs)


# --------------------------------------------------------------------------------------------
# validation (everything before any noise)
# --------------------------------------------------------------------------------------------
def _check_X(X, name):
    if X is None:
        raise ValueError(f"{name} is required")
    try:
        A = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric (array-like of floats)") from None
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got shape {A.shape}")
    if A.shape[1] < 1:
        raise ValueError(f"{name} must have at least one column, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        bad = int(A.size - np.count_nonzero(np.isfinite(A)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s); all entries must be finite")
    if A.size and float(np.max(np.abs(A))) > MAX_ABS_VALUE:
        raise ValueError(f"{name} has entries with |value| > {MAX_ABS_VALUE:g}; their squares would overflow the "
                         "second-moment statistics (rescale the column)")
    return A


def _check_y(y, n, name):
    try:
        v = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric") from None
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {v.shape}")
    if v.shape[0] != n:
        raise ValueError(f"{name} has {v.shape[0]} entries but the features have {n} rows; they must match")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or infinite values; all entries must be finite")
    if v.size and float(np.max(np.abs(v))) > MAX_ABS_VALUE:
        raise ValueError(f"{name} has entries with |value| > {MAX_ABS_VALUE:g}; rescale the response")
    return v


def _check_lam(lam):
    if isinstance(lam, bool):
        raise TypeError("lam must be a real number")
    try:
        v = float(lam)
    except (TypeError, ValueError):
        raise TypeError(f"lam must be a real number, got {lam!r}") from None
    if not (v >= 0 and math.isfinite(v)):
        raise ValueError(f"lam must be finite and >= 0 (accepted range: 0 <= lam < inf), got {lam!r}")
    return v


def _check_eta(eta):
    v = float(eta)
    if not (0.0 < v < 1.0):
        raise ValueError(f"eta must lie strictly between 0 and 1 (accepted range: 0 < eta < 1), got {eta!r}")
    return v


def _check_positive(value, name):
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a real number")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, a documented option, or None; got {value!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be finite and > 0 (accepted range: 0 < {name} < inf), got {value!r}")
    return v


def _check_n_ge_d(n, p, fit_intercept):
    """``d = p (+1 intercept)``; raises ValueError when the private rows are fewer than d."""
    d = p + int(bool(fit_intercept))
    if n < d:
        raise ValueError(
            f"n < d: the private data have n={n} rows but d={d} columns"
            f"{' (intercept included)' if fit_intercept else ''}; need n >= d"
        )
    return d


def _check_X_pub(X_pub, p, need_X_pub):
    """The optional public rows: None (allowed unless ``need_X_pub``) or >= 1 finite rows with p columns."""
    if X_pub is None:
        if need_X_pub:
            raise ValueError(
                "public data are required: pass X_pub (n_pub >= 1 public rows) to fit(); they are never inferred "
                "from X"
            )
        return None
    if np.ndim(X_pub) == 2 and np.shape(X_pub)[0] < 1:
        raise ValueError("X_pub has 0 rows: n_pub must be >= 1")
    Xq = _check_X(X_pub, "X_pub")
    if Xq.shape[1] != p:
        raise ValueError(f"X_pub has {Xq.shape[1]} columns but X has {p}; they must match")
    return Xq


def _validate_data(X, y, X_pub, y_pub, *, fit_intercept, need_X_pub, need_y_pub):
    """Validate private and public data; return ``(X, y, X_pub, y_pub, n, p, d)`` (d counts the intercept).

    Raises ``ValueError``/``TypeError`` naming the argument: non-numeric, not 2-D / 1-D, NaN/inf,
    |value| > 1e150, mismatched lengths or columns, n < d, n_pub < 1, missing public data when required.
    Public alias: :func:`validate_fit_data` (for other estimators, e.g. logistic/GLM).
    """
    Xp = _check_X(X, "X")
    n, p = Xp.shape
    yv = _check_y(y, n, "y")
    d = _check_n_ge_d(n, p, fit_intercept)
    if X_pub is not None and not hasattr(X_pub, "shape"):
        X_pub = np.asarray(X_pub, dtype=float)
    Xq = _check_X_pub(X_pub, p, need_X_pub)
    yq = None
    if y_pub is not None:
        m = Xq.shape[0] if Xq is not None else np.asarray(y_pub).shape[0]
        yq = _check_y(y_pub, m, "y_pub")
    elif need_y_pub:
        raise ValueError("public labels are required here: pass y_pub to fit(), or give response_bound=<float>")
    return Xp, yv, Xq, yq, n, p, d


def _validate_privacy(epsilon, delta, neighbouring):
    """Validate (epsilon in (0, inf], delta in (0, 1), neighbouring); public alias :func:`validate_privacy`."""
    eps = P.validate_epsilon(epsilon, allow_inf=True)
    dlt = P.validate_delta(delta)
    nb = P.validate_neighbouring(neighbouring)
    return eps, dlt, nb


def _resolve_bound(value, name, *, public, private, allow_private=True, stacklevel=4):
    """A bound: None -> the public default; float -> itself; "private" -> from private data + warning."""
    if value is None:
        return public()
    if isinstance(value, str):
        if value == "private" and allow_private:
            warnings.warn(
                f"{name} is taken from the private data; this bound is not protected by noise and the "
                "stated privacy guarantee no longer holds",
                P.PrivacyLeakWarning,
                stacklevel=stacklevel,
            )
            return private()
        raise ValueError(f"{name} must be None (public default), a float > 0 or 'private', got {value!r}")
    return _check_positive(value, name)


def _mu(eps, dlt):
    return P.gdp_mu(eps, dlt)


def _nb_factor(nb):
    """Sensitivity factor: replace-one changes one row into another (x 2 for vectors, sqrt 2 matrices)."""
    return nb == "replace-one"


def ssp_sensitivities(radius: float, B_y: float, neighbouring: str = "replace-one") -> tuple[float, float]:
    """Sensitivities of ``A = sum x x^T`` (Frobenius) and ``b = sum x y`` (L2) for ``||x|| <= R``, ``|y| <= B_y``.

    Replace-one: ``sqrt(2) R^2`` and ``2 R B_y``; add/remove: ``R^2`` and ``R B_y`` (PMT.md section 3,
    step 3).

    Examples
    --------
    >>> [round(s, 4) for s in ssp_sensitivities(2.0, 3.0)]
    [5.6569, 12.0]
    >>> ssp_sensitivities(2.0, 3.0, "add-remove")
    (4.0, 6.0)
    """
    nb = P.validate_neighbouring(neighbouring)
    if nb == "replace-one":
        return math.sqrt(2.0) * radius**2, 2.0 * radius * B_y
    return radius**2, radius * B_y


def _ledger_ssp(delta, mu, sens_A, sens_b, nb, names=("A = X^T X", "b = X^T y")):
    ledger = P.PrivacyLedger(delta=delta)
    mu_part = P.split_mu(mu, 2)
    s_A = P.gaussian_sigma(sens_A, mu_part)
    s_b = P.gaussian_sigma(sens_b, mu_part)
    ledger.record(names[0], sensitivity=sens_A, sigma=s_A, neighbouring=nb)
    ledger.record(names[1], sensitivity=sens_b, sigma=s_b, neighbouring=nb)
    return ledger, s_A, s_b


def _dp_gd_ledger(dlt, mu, T, C, n, nb):
    """Ledger of T equal DP-GD gradient releases: ``mu_t = mu / sqrt(T)``, ``Delta = 2C/n`` (replace-one)
    or ``C/n`` (add/remove), ``sigma_t = Delta / mu_t``. Returns ``(ledger, mu_t, sens, sigma_t)``."""
    mu_t = P.split_mu(mu, T)
    sens = (2.0 if nb == "replace-one" else 1.0) * C / n
    sigma_t = P.gaussian_sigma(sens, mu_t)
    ledger = P.PrivacyLedger(delta=dlt)
    for t in range(T):
        ledger.record(f"gradient step {t + 1}", sensitivity=sens, sigma=sigma_t, neighbouring=nb)
    return ledger, mu_t, sens, sigma_t


def _check_steps(T, name="n_steps"):
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {T!r}")
    return int(T)


def _check_on_singular(on_singular):
    if on_singular not in ON_SINGULAR:
        raise ValueError(f"on_singular must be one of {ON_SINGULAR}, got {on_singular!r}")
    return on_singular


def _pmt_report_fields(tr):
    """The :class:`FitReport` fields a PMT transform fills (radius, n_pub, the kappas, truncation, tau)."""
    mom = tr.moment
    return dict(radius=tr.radius, n_pub=mom.n_pub, kappa_raw=tr.kappa_raw, kappa_pub=tr.kappa_pub,
                kappa_pmt=tr.kappa_pmt, frac_truncated=tr.frac_truncated, sigma_pub_regularized=mom.regularized,
                tau=mom.tau)


def _gram_kappa(Xa):
    """Condition number of ``Xa^T Xa`` (``kappa_raw`` in the reports)."""
    return _kappa_from_eigs(np.linalg.eigvalsh(Xa.T @ Xa))


class _CoefBase(BaseEstimator):
    """Validation preamble, coefficient handling (intercept column last) and the linear predictor shared
    by the ridge estimators here and the GLM estimators in :mod:`engine.glm`."""

    def _privacy_params(self):
        """Validate epsilon, delta, neighbouring, lam, eta (in that order, before any noise)."""
        eps, dlt, nb = _validate_privacy(self.epsilon, self.delta, self.neighbouring)
        return eps, dlt, nb, _check_lam(self.lam), _check_eta(self.eta)

    def _with_intercept(self, Xp):
        return add_intercept(Xp) if self.fit_intercept else Xp

    def _penalty_mask(self, d):
        return penalty_mask(d, fit_intercept=self.fit_intercept, penalize_intercept=self.penalize_intercept)

    def _public_kappa(self, Xq):
        """``(n_pub, kappa_pub)`` of the optional public rows (``(0, nan)`` without them); report only."""
        if Xq is None:
            return 0, math.nan
        return Xq.shape[0], public_moment(Xq, fit_intercept=self.fit_intercept).kappa

    def _response_bound(self, yq, yv, n, eta):
        """B_y from ``response_bound`` (None: the public labels; "private": ``max |y|`` with a warning)."""
        return _resolve_bound(self.response_bound, "response_bound",
                              public=lambda: _public_response_bound(yq, n, eta),
                              private=lambda: float(np.max(np.abs(yv))) or 1.0, stacklevel=5)

    def _clip_radius(self, Xa, d, n, eta):
        """Row clip C from ``clip_radius`` (None: the PMT radius formula on raw rows; "private": the
        largest private row norm, with a warning)."""
        return _resolve_bound(self.clip_radius, "clip_radius", public=lambda: pmt_radius(d, n, eta),
                              private=lambda: float(np.max(np.linalg.norm(Xa, axis=1))), stacklevel=5)

    def _dp_gd_step_size(self, Xq, rule):
        """``step_size`` if given, else ``rule(lambda_max)`` of the public second moment (public, so free)."""
        if self.step_size is None:
            return rule(public_moment(Xq, fit_intercept=self.fit_intercept).eigenvalues[-1])
        return _check_positive(self.step_size, "step_size")

    def _set_theta(self, theta, p):
        theta = np.asarray(theta, dtype=float)
        self.theta_ = theta
        self.coef_ = theta[:p].copy()
        self.intercept_ = float(theta[p]) if self.fit_intercept else 0.0
        self.n_features_in_ = p

    def _linear_predictor(self, X):
        check_is_fitted(self, "coef_")
        A = _check_X(X, "X")
        if A.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {A.shape[1]} columns but the model was fitted with {self.n_features_in_}")
        return A @ self.coef_ + self.intercept_


class _LinearBase(RegressorMixin, _CoefBase):
    """Shared prediction and coefficient handling (intercept column last)."""

    def predict(self, X):
        """Predict ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._linear_predictor(X)


# --------------------------------------------------------------------------------------------
# estimators
# --------------------------------------------------------------------------------------------
class RidgeReference(_LinearBase):
    """Non-private ridge on the untruncated private data: the target of the error metric.

    Minimises ``(1/n) ||y - X theta - theta_0||^2 + lam ||theta||^2`` (intercept unpenalised by
    default; see the module docstring). Equals ``sklearn.linear_model.Ridge(alpha=n * lam)`` with the
    same intercept handling.

    Parameters
    ----------
    lam : float, default 1e-3
        ``lam >= 0``.
    fit_intercept : bool, default True
    penalize_intercept : bool, default False

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    theta_ : ndarray of shape (d,)
        Coefficients with the intercept last.
    report_ : FitReport
        ``mu = inf``, ``kappa_raw`` and ``kappa_noisy`` (= the system's own condition number).

    Examples
    --------
    >>> X = np.arange(10.0)[:, None]; y = 2 * X[:, 0] + 1
    >>> m = RidgeReference(lam=0.0).fit(X, y)
    >>> round(float(m.coef_[0]), 6), round(m.intercept_, 6)
    (2.0, 1.0)
    """

    def __init__(self, *, lam=1e-3, fit_intercept=True, penalize_intercept=False):
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit on the private data (public arguments are accepted and ignored).

        Raises
        ------
        ValueError
            NaN/inf, shape mismatch, n < d, lam < 0.
        """
        lam = _check_lam(self.lam)
        Xp, yv, _, _, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                               need_X_pub=False, need_y_pub=False)
        Xa = self._with_intercept(Xp)
        Pm = self._penalty_mask(d)
        theta = ridge_reference_solve(Xa, yv, lam, Pm)
        self._set_theta(theta, p)
        G = Xa.T @ Xa
        self.report_ = FitReport(
            method=METHOD_NAMES["non-private"], epsilon=math.inf, delta=math.nan, mu=math.inf,
            neighbouring="", n=n, d=d, lam=lam, ledger=P.PrivacyLedger(),
            kappa_raw=_kappa_from_eigs(np.linalg.eigvalsh(G)),
            kappa_noisy=_kappa_from_eigs(np.linalg.eigvalsh(G + n * lam * Pm)),
            frac_truncated=0.0, frac_y_clipped=0.0,
        )
        return self


class PMTRidge(_LinearBase):
    """DP-PMTRR: differentially private ridge regression with public-moment-guided truncation.

    Algorithm (PMT.md section 3; Cao, Bi & Zhang, arXiv:2602.22282, "our reading" where marked
    there):

    1. ``Sigma_pub`` from the public rows (intercept column appended), ``X~ = Pi_R(X Sigma_pub^{-1/2})``
       with ``R = sqrt(d (1 + ln(2n/eta)))``.
    2. ``response="clip"``: ``y`` clipped to ``[-B_y, B_y]``, ``B_y = sqrt(mean(y_pub^2)(1 + ln(2n/eta)))``
       (or ``response_bound``). ``A = X~^T X~`` and ``b = X~^T y`` are released with mu/sqrt(2) each:
       symmetric noise with ``sigma_A = Delta_A / mu_A`` (``Delta_A = sqrt(2) R^2`` replace-one, ``R^2``
       add/remove) and ``sigma_b = Delta_b / mu_b`` (``2 R B_y`` / ``R B_y``).
    3. ``theta~ = solve(A_priv + n lam Sigma^{-1/2} P Sigma^{-1/2}, b_priv)`` (eigenvalue floor if not
       positive definite), ``theta = Sigma_pub^{-1/2} theta~``.

    ``response="joint"`` (Reading B): ``(x, y)`` is one (d+1)-vector whitened with the public joint
    second moment (needs ``y_pub``) and truncated at ``R = sqrt((d+1)(1 + ln(2n/eta)))``; one symmetric
    release of ``Z~^T Z~`` with all of mu (``Delta = sqrt(2) R^2`` / ``R^2``), back-transformed to
    ``S = Sigma^{1/2} S_priv Sigma^{1/2}`` and solved from its blocks:
    ``theta = solve(S_xx + n lam P, S_xy)``.

    Parameters
    ----------
    epsilon : float, default 1.0
        ``0 < epsilon <= inf`` (inf: noise off, non-private; for convergence checks only).
    delta : float, default 1e-5
        ``0 < delta < 1``.
    lam : float, default 1e-3
        Ridge penalty on the (1/n)-scaled loss, ``lam >= 0``.
    eta : float, default 0.05
        Truncation failure probability in R, ``0 < eta < 1``.
    response : {"clip", "joint"}, default "clip"
    response_bound : None, float or "private", default None
        B_y. None: from the public labels (needs ``y_pub``); a float: a user bound; "private":
        ``max |y|`` of the private data, with a ``PrivacyLeakWarning``.
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
    fit_intercept : bool, default True
    penalize_intercept : bool, default False
    on_singular : {"regularize", "raise"}, default "regularize"
        What to do with a singular ``Sigma_pub`` or ``n_pub < d`` (see :func:`engine.pmt.public_moment`).
    eig_floor : float, default 1e-3
        Relative eigenvalue floor for a non-positive-definite noisy system.
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    coef_, intercept_, theta_, report_ (:class:`FitReport`), transform_ (:class:`engine.pmt.PMTTransform`)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)); y = X @ [1.0, -2.0, 0.5] + 3 + rng.normal(size=5000)
    >>> m = PMTRidge(epsilon=np.inf, lam=0.0).fit(X[200:], y[200:], X_pub=X[:200], y_pub=y[:200])
    >>> m.report_.mu, m.coef_.round(1).tolist()
    (inf, [1.0, -2.0, 0.5])
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        lam=1e-3,
        eta=0.05,
        response="clip",
        response_bound=None,
        neighbouring="replace-one",
        fit_intercept=True,
        penalize_intercept=False,
        on_singular="regularize",
        eig_floor=DEFAULT_EIG_FLOOR,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.eta = eta
        self.response = response
        self.response_bound = response_bound
        self.neighbouring = neighbouring
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.on_singular = on_singular
        self.eig_floor = eig_floor
        self.random_state = random_state

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-PMTRR.

        Parameters
        ----------
        X : array-like of shape (n, p)
            Private features.
        y : array-like of shape (n,)
            Private responses.
        X_pub : array-like of shape (n_pub, p)
            Public features (required; never inferred from X).
        y_pub : array-like of shape (n_pub,), optional
            Public responses (for B_y, or the joint moment when ``response="joint"``).

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            Before any noise is drawn: NaN/inf, shape mismatch, n < d, n_pub < 1, lam < 0,
            epsilon <= 0 or NaN, delta outside (0, 1), unknown options.
        """
        eps, dlt, nb, lam, eta = self._privacy_params()
        eig_floor = _check_positive(self.eig_floor, "eig_floor")
        if self.response not in RESPONSES:
            raise ValueError(f"response must be one of {RESPONSES}, got {self.response!r}")
        _check_on_singular(self.on_singular)
        joint = self.response == "joint"
        need_y_pub = joint or self.response_bound is None
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=True, need_y_pub=need_y_pub)
        if joint and self.response_bound is not None:
            raise ValueError("response_bound applies to response='clip' only; response='joint' bounds (x, y) by R")
        mu = _mu(eps, dlt)
        Pm = self._penalty_mask(d)
        if joint:
            return self._fit_joint(Xp, yv, Xq, yq, n, p, d, eps, dlt, nb, mu, lam, eta, eig_floor, Pm)

        tr = pmt_transform(Xp, Xq, eta=eta, fit_intercept=self.fit_intercept, on_singular=self.on_singular)
        R = tr.radius
        B_y = self._response_bound(yq, yv, n, eta)
        A, b = sufficient_statistics(tr.X_tilde, yv, B_y)
        sens_A, sens_b = ssp_sensitivities(R, B_y, nb)
        ledger, s_A, s_b = _ledger_ssp(dlt, mu, sens_A, sens_b, nb, ("A = X~^T X~", "b = X~^T y"))
        rng = P.check_random_state(self.random_state)
        W, w = ssp_noise(rng, d)
        S_is = tr.moment.Sigma_pub_inv_sqrt
        pen = n * lam * (S_is @ Pm @ S_is)
        th_t, fixed, kappa_noisy = ssp_solve(A + s_A * W, b + s_b * w, pen, eig_floor=eig_floor)
        self._set_theta(S_is @ th_t, p)
        self.transform_ = tr
        self.report_ = FitReport(
            method=METHOD_NAMES["pmt"], epsilon=eps, delta=dlt, mu=mu, neighbouring=nb, n=n, d=d, lam=lam,
            ledger=ledger, sensitivities={"A": sens_A, "b": sens_b}, noise_scales={"A": s_A, "b": s_b},
            **_pmt_report_fields(tr), B_y=B_y, kappa_noisy=float(kappa_noisy),
            frac_y_clipped=float(np.mean(np.abs(yv) > B_y)), eig_fixes=int(fixed), eig_floor=eig_floor,
            extra={"response": "clip"},
        )
        return self

    def _fit_joint(self, Xp, yv, Xq, yq, n, p, d, eps, dlt, nb, mu, lam, eta, eig_floor, Pm):
        Xa = self._with_intercept(Xp)
        Xqa = self._with_intercept(Xq)
        J = np.hstack([Xa, yv[:, None]])
        Jq = np.hstack([Xqa, yq[:, None]])
        mom = public_moment(Jq, fit_intercept=False, on_singular=self.on_singular)
        tr = pmt_transform(J, moment=mom, eta=eta)
        R = tr.radius
        Z = tr.X_tilde
        S = Z.T @ Z
        sens = math.sqrt(2.0) * R**2 if nb == "replace-one" else R**2
        ledger = P.PrivacyLedger(delta=dlt)
        s = P.gaussian_sigma(sens, mu)
        ledger.record("S = Z~^T Z~ (joint x, y)", sensitivity=sens, sigma=s, neighbouring=nb)
        rng = P.check_random_state(self.random_state)
        W = P.symmetric_gaussian_noise(d + 1, 1.0, rng)
        S_priv = S + s * W
        Sh = mom.Sigma_pub_sqrt
        S_orig = Sh @ S_priv @ Sh
        S_orig = (S_orig + S_orig.T) / 2
        theta, fixed, kappa_noisy = ssp_solve(S_orig[:d, :d], S_orig[:d, d], n * lam * Pm, eig_floor=eig_floor)
        self._set_theta(theta, p)
        self.transform_ = tr
        kraw = _gram_kappa(Xa)
        self.report_ = FitReport(
            method=METHOD_NAMES["pmt"], epsilon=eps, delta=dlt, mu=mu, neighbouring=nb, n=n, d=d, lam=lam,
            ledger=ledger, sensitivities={"S": sens}, noise_scales={"S": s}, radius=R, B_y=math.nan,
            n_pub=mom.n_pub, kappa_raw=kraw, kappa_pub=mom.kappa, kappa_pmt=tr.kappa_pmt,
            kappa_noisy=float(kappa_noisy), frac_truncated=tr.frac_truncated, frac_y_clipped=math.nan,
            eig_fixes=int(fixed), eig_floor=eig_floor, sigma_pub_regularized=mom.regularized, tau=mom.tau,
            extra={"response": "joint"},
        )
        return self


class DPRidge(_LinearBase):
    """DP-RR: sufficient-statistics perturbation on raw features clipped at radius C (private data only).

    Rows (intercept column included) are scaled to L2 norm <= C, responses clipped to ``[-B_y, B_y]``,
    then ``A = X^T X`` and ``b = X^T y`` get the same noise recipe as :class:`PMTRidge` with R replaced
    by C, and ``theta = solve(A_priv + n lam P, b_priv)`` (PMT.md section 5).

    The default ``C = sqrt(d (1 + ln(2n/eta)))`` is the PMT radius formula applied to the raw features.
    It is only sensible for standardised features; on unscaled data (CCPP: pressure ~ 1000 mbar) it
    clips every row heavily. That is the point of the comparison: PMT needs no such tuning. Use
    ``clip_radius`` to set C, or :class:`DPRidgeOracle` for the (non-private) best C.

    Parameters
    ----------
    epsilon, delta, lam, eta, neighbouring, fit_intercept, penalize_intercept, eig_floor, random_state
        As in :class:`PMTRidge`.
    clip_radius : None, float or "private", default None
        C. None: the public formula above; float: user value; "private": the largest private row norm
        (``PrivacyLeakWarning``).
    response_bound : None, float or "private", default None
        B_y, as in :class:`PMTRidge` (public labels ``y_pub`` by default: the same public information
        PMT gets).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2)); y = X @ [1.0, 2.0] + rng.normal(size=3000)
    >>> m = DPRidge(epsilon=np.inf, lam=0.0, clip_radius=100.0, response_bound=100.0).fit(X, y)
    >>> m.coef_.round(1).tolist()
    [1.0, 2.0]
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        lam=1e-3,
        eta=0.05,
        clip_radius=None,
        response_bound=None,
        neighbouring="replace-one",
        fit_intercept=True,
        penalize_intercept=False,
        eig_floor=DEFAULT_EIG_FLOOR,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.eta = eta
        self.clip_radius = clip_radius
        self.response_bound = response_bound
        self.neighbouring = neighbouring
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept
        self.eig_floor = eig_floor
        self.random_state = random_state

    _method_key = "dp-rr"

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-RR. ``X_pub`` is only used for ``kappa_pub`` in the report; ``y_pub`` for B_y.

        Raises
        ------
        ValueError, TypeError
            Before any noise is drawn (see :meth:`PMTRidge.fit`).
        """
        eps, dlt, nb, lam, eta = self._privacy_params()
        eig_floor = _check_positive(self.eig_floor, "eig_floor")
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=False, need_y_pub=self.response_bound is None)
        Xa = self._with_intercept(Xp)
        C = self._clip_radius(Xa, d, n, eta)
        B_y = self._response_bound(yq, yv, n, eta)
        mu = _mu(eps, dlt)
        Xc, _, clipped = truncate_rows(Xa, C)
        A, b = sufficient_statistics(Xc, yv, B_y)
        sens_A, sens_b = ssp_sensitivities(C, B_y, nb)
        ledger, s_A, s_b = _ledger_ssp(dlt, mu, sens_A, sens_b, nb)
        Pm = self._penalty_mask(d)
        rng = P.check_random_state(self.random_state)
        W, w = ssp_noise(rng, d)
        theta, fixed, kappa_noisy = ssp_solve(A + s_A * W, b + s_b * w, n * lam * Pm, eig_floor=eig_floor)
        self._set_theta(theta, p)
        n_pub, kpub = self._public_kappa(Xq)
        self.report_ = FitReport(
            method=METHOD_NAMES[self._method_key], epsilon=eps, delta=dlt, mu=mu, neighbouring=nb, n=n, d=d,
            lam=lam, ledger=ledger, sensitivities={"A": sens_A, "b": sens_b}, noise_scales={"A": s_A, "b": s_b},
            radius=C, B_y=B_y, n_pub=n_pub, kappa_raw=_gram_kappa(Xa), kappa_pub=kpub,
            kappa_noisy=float(kappa_noisy), frac_truncated=float(np.mean(clipped)),
            frac_y_clipped=float(np.mean(np.abs(yv) > B_y)), eig_fixes=int(fixed), eig_floor=eig_floor,
        )
        return self


def default_clip_grid(Xa, radius_default: float, size: int = 16) -> np.ndarray:
    """The oracle's grid of C: log-spaced from 0.05 x the median to the largest private row norm, plus
    the public default. Uses private data (the oracle is non-private tuning)."""
    norms = np.linalg.norm(Xa, axis=1)
    hi = float(np.max(norms))
    lo = max(0.05 * float(np.median(norms)), 1e-12)
    return np.unique(np.concatenate([np.geomspace(lo, hi, size), [radius_default]]))


class DPRidgeOracle(DPRidge):
    """DP-RR with the clip radius C picked on a grid by looking at the error: **non-private tuning**.

    For every C on ``clip_grid`` the DP-RR fit is repeated with ``n_trials`` independent noise draws and
    its median L2 distance to the non-private ridge (:class:`RidgeReference`) is computed; the final fit
    uses the best C and a fresh draw. Choosing C this way looks at the private data outside any
    mechanism, so the result is **not** differentially private: it shows the best the baseline could
    do. A :class:`engine.privacy.PrivacyLeakWarning` is always issued.

    Parameters
    ----------
    clip_grid : array-like of float, optional
        Candidate C values (default :func:`default_clip_grid`).
    n_trials : int, default 20
    (others as in :class:`DPRidge`; ``clip_radius`` is ignored.)

    Attributes
    ----------
    clip_radius_ : float
        The chosen C.
    grid_errors_ : ndarray of shape (len(grid),)
        Median L2 error for each C.
    """

    _method_key = "dp-rr-oracle"

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        lam=1e-3,
        eta=0.05,
        clip_grid=None,
        n_trials=20,
        response_bound=None,
        neighbouring="replace-one",
        fit_intercept=True,
        penalize_intercept=False,
        eig_floor=DEFAULT_EIG_FLOOR,
        random_state=None,
    ):
        super().__init__(epsilon=epsilon, delta=delta, lam=lam, eta=eta, clip_radius=None,
                         response_bound=response_bound, neighbouring=neighbouring, fit_intercept=fit_intercept,
                         penalize_intercept=penalize_intercept, eig_floor=eig_floor, random_state=random_state)
        self.clip_grid = clip_grid
        self.n_trials = n_trials

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Pick C by non-private tuning, then fit DP-RR with it (warns ``PrivacyLeakWarning``)."""
        eps, dlt, nb, lam, eta = self._privacy_params()
        if not isinstance(self.n_trials, (int, np.integer)) or self.n_trials < 1:
            raise ValueError(f"n_trials must be an integer >= 1, got {self.n_trials!r}")
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=False, need_y_pub=self.response_bound is None)
        Xa = self._with_intercept(Xp)
        grid = (default_clip_grid(Xa, pmt_radius(d, n, eta)) if self.clip_grid is None
                else np.asarray(self.clip_grid, dtype=float).ravel())
        if grid.size < 1 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise ValueError("clip_grid must be a non-empty list of finite values > 0")
        warnings.warn(
            "DPRidgeOracle picks the clip radius by looking at the private error (non-private tuning); "
            "its output is not differentially private",
            P.PrivacyLeakWarning,
            stacklevel=2,
        )
        ref = RidgeReference(lam=lam, fit_intercept=self.fit_intercept,
                             penalize_intercept=self.penalize_intercept).fit(Xp, yv).theta_
        rng = P.check_random_state(self.random_state)
        params = self.get_params()
        for k in ("clip_grid", "n_trials"):
            params.pop(k)
        errs = np.empty(grid.size)
        for j, C in enumerate(grid):
            e = []
            for _ in range(int(self.n_trials)):
                m = DPRidge(**{**params, "clip_radius": float(C), "random_state": rng}).fit(Xp, yv, Xq, yq)
                e.append(np.linalg.norm(m.theta_ - ref))
            errs[j] = np.median(e)
        best = float(grid[int(np.argmin(errs))])
        final = DPRidge(**{**params, "clip_radius": best, "random_state": rng}).fit(Xp, yv, Xq, yq)
        self._set_theta(final.theta_, p)
        rep = final.report_
        rep.method = METHOD_NAMES["dp-rr-oracle"]
        rep.extra = {"non_private_tuning": True, "clip_grid": grid.tolist(), "grid_errors": errs.tolist()}
        self.report_ = rep
        self.clip_radius_ = best
        self.grid_errors_ = errs
        return self


class DPGDRidge(_LinearBase):
    """Full-batch DP gradient descent for ridge with per-example gradient clipping (PMT.md section 5).

    theta_0 = 0; T steps of ``theta <- theta - step_size * (mean clipped gradient + N(0, s_t^2 I)
    + 2 lam P theta)``, per-example gradients of ``(y_i - x_i^T theta)^2`` clipped to L2 norm C, each step
    mu_t = mu / sqrt(T), ``s_t = 2C / (n mu_t)`` (replace-one; ``C / (n mu_t)`` add/remove). Runs on the
    raw (unwhitened) private rows (intercept column included). See :func:`dp_gd_ridge_path`.

    Step size: ``1 / L_pub`` with ``L_pub = 2 lambda_max(X_pub^T X_pub / n_pub) + 2 lam``, the smoothness
    constant of the loss estimated from the public rows (public, so free). Without ``X_pub`` give
    ``step_size``.

    Parameters
    ----------
    epsilon, delta, lam, eta, neighbouring, fit_intercept, penalize_intercept, random_state
        As in :class:`PMTRidge`.
    n_steps : int, default 100
        T.
    clip_norm : None, float or "private", default None
        C. None: ``2 C_x B_y`` with ``C_x = sqrt(d(1 + ln(2n/eta)))`` (the raw-feature radius DP-RR
        uses) and B_y the public response bound: the gradient norm bound at theta = 0 for rows of norm
        <= C_x. "private": the largest per-example gradient norm at theta = 0 (``PrivacyLeakWarning``).
    step_size : None or float, default None
    response_bound : None, float or "private"
        B_y used only in the default C.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)); y = X @ [1.0, 2.0] + 0.1 * rng.normal(size=2000)
    >>> m = DPGDRidge(epsilon=np.inf, lam=0.0, clip_norm=1e6, step_size=0.25, n_steps=200).fit(X, y)
    >>> m.coef_.round(2).tolist()
    [1.0, 2.0]
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        lam=1e-3,
        eta=0.05,
        n_steps=100,
        clip_norm=None,
        step_size=None,
        response_bound=None,
        neighbouring="replace-one",
        fit_intercept=True,
        penalize_intercept=False,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.lam = lam
        self.eta = eta
        self.n_steps = n_steps
        self.clip_norm = clip_norm
        self.step_size = step_size
        self.response_bound = response_bound
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
        need_y_pub = self.clip_norm is None and self.response_bound is None
        Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=self.step_size is None, need_y_pub=need_y_pub)
        Xa = self._with_intercept(Xp)
        step = self._dp_gd_step_size(Xq, lambda lam_max: 1.0 / (2.0 * float(lam_max) + 2.0 * lam))

        def public_C():
            B_y = self._response_bound(yq, yv, n, eta)
            return 2.0 * pmt_radius(d, n, eta) * B_y

        C = _resolve_bound(self.clip_norm, "clip_norm", public=public_C,
                           private=lambda: float(np.max(2 * np.linalg.norm(Xa, axis=1) * np.abs(yv))) or 1.0)
        mu = _mu(eps, dlt)
        ledger, mu_t, sens, sigma_t = _dp_gd_ledger(dlt, mu, T, C, n, nb)
        Pm = self._penalty_mask(d)
        rng = P.check_random_state(self.random_state)
        noise = dp_gd_noise(rng, T, d)[:, :, None]
        theta, frac = dp_gd_ridge_path(Xa, yv, clip_norm=C, lam=lam, Pm=Pm, step_size=step,
                                       sigma=np.array([sigma_t]), noise=noise, n_steps=T)
        self._set_theta(theta[:, 0], p)
        self.report_ = FitReport(
            method=METHOD_NAMES["dp-gd"], epsilon=eps, delta=dlt, mu=mu, neighbouring=nb, n=n, d=d, lam=lam,
            ledger=ledger, sensitivities={"gradient (per step)": sens}, noise_scales={"gradient (per step)": sigma_t},
            radius=C, n_pub=0 if Xq is None else Xq.shape[0],
            kappa_raw=_gram_kappa(Xa),
            frac_truncated=float(frac[0]), n_iter=T, extra={"step_size": step, "mu_per_step": mu_t},
        )
        return self


#: Public aliases of the shared validators (used by the logistic/GLM estimators too).
validate_fit_data = _validate_data
validate_privacy = _validate_privacy
LinearEstimatorBase = _LinearBase


def dp_gd_noise(rng: np.random.Generator, n_steps: int, d: int) -> np.ndarray:
    """Standard-normal gradient noise for one DP-GD run: shape (n_steps, d), drawn in one call."""
    return P.gaussian_noise((n_steps, d), 1.0, rng)
