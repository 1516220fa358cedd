"""DP-PMTRR: differentially private ridge regression with public-moment-guided truncation.

:class:`PMTRidge` (``docs/specs/PMT.md`` section 3; Cao, Bi & Zhang, arXiv:2602.22282): whiten with the public
second moment, truncate at R (:mod:`engine.pmt._transform`), perturb the sufficient statistics
``A = X~^T X~`` and ``b = X~^T y``, solve, map back. The sufficient-statistics perturbation (SSP) core
here is shared with the private-only baseline DP-RR (:class:`engine.pmt.baselines.DPRidge`) and the
ridge sweep (:mod:`engine.pmt.sweep_ridge`).

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

Scale: the whitening is scale-free (:class:`engine.pmt.PublicMoment`): rescaling any feature column,
public and private together, by any factor leaves the whitened rows, R, B_y and the noise unchanged,
so at ``lam = 0`` PMT's predictions (and its coefficients, rescaled back) do not change (to float
rounding; tested for factors in [1e-8, 1e8] in ``tests/engine/test_pmt_trust.py``). At ``lam > 0`` the
penalty ``lam ||theta||^2`` is stated in the units of the columns given, which is the ridge problem the
non-private reference solves too (PMT.md section 3): the released statistics are still invariant, but
the target moves with the scaling, as the non-private ridge's does.

Solvers: ``solver="noise-aware"`` (default) raises the eigenvalues of the released ``A_priv`` to a
``1 - delta`` bound on the noise's spectral norm (:func:`noise_aware_solve`, AdaSSP-type; every number
from public quantities and the budget); ``solver="paper"`` is the paper's solve described next.

Eigenvalue floor of the paper's solver (PMT.md section 3, step 5): if the noisy system matrix ``M = A_priv + penalty`` is
not positive definite (smallest eigenvalue <= 0), its eigenvalues below
``eig_floor * trace(A_priv) / d`` are raised to that value (default ``eig_floor = 1e-3``; for PMT
``trace(A_priv) / d ~ n``, so the floor is about ``1e-3 n`` in whitened units, the research note's
suggestion). Each fix is counted in ``report_.eig_fixes``; nothing is hidden.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from engine import privacy as P
from engine.pmt._base import (
    DEFAULT_EIG_FLOOR,
    Lazy,
    METHOD_NAMES,
    _check_on_singular,
    _check_positive,
    _dp_report_for,
    _gram_kappa,
    _LinearBase,
    _mu,
    _store_params,
    _validate_data,
    penalty_mask,
    release_rng,
)
from engine.pmt import _split_memo
from engine.pmt._backends import fit_out_of_core, is_dask
from engine.pmt._blas import blas_limit
from engine.pmt._lapack import _eigh, _solve_columns  # noqa: F401  (tests import them from here)
from engine.pmt._bounds import _kappa_from_eigs, _response_bound_rows
from engine.pmt._moment import MOMENT_ESTIMATORS, _public_moment_rows, public_moment
from engine.pmt._transform import _transform_rows, pmt_transform
from engine.pmt.public_fit import _as_public_info, _public_info_path, fit_public
from engine.pmt.public_info import PublicInfo
from engine.pmt._ridge_public import _PublicRidgeMixin, _public_center

__all__ = [
    "RESPONSES",
    "PMTRidge",
    "SSPStatistics",
    "ridge_reference_solve",
    "sufficient_statistics",
    "ssp_noise",
    "ssp_solve",
    "ssp_sensitivities",
    "certified_ssp_sensitivities",
    "SOLVERS",
    "noise_spectral_bound",
    "noise_aware_solve",
]

from engine.pmt._ridge_joint import RESPONSES, _JointRidgeMixin, resolve_response  # noqa: E402,F401
#: PMTRidge's ``center`` options: centre y by a public centre (default) or not at all.
CENTERS = ("public", None)


# --------------------------------------------------------------------------------------------
# the sufficient-statistics perturbation (SSP) core (also used by DP-RR and the ridge sweep)
# --------------------------------------------------------------------------------------------
def ridge_reference_solve(Xa, y, lam: float, Pm) -> np.ndarray:
    """Non-private ridge on already-augmented rows: argmin (1/n)||y - Xa theta||^2 + lam theta^T P theta.

    Solved by least squares on the stacked system ``[Xa; sqrt(n lam) P^{1/2}]`` (P diagonal 0/1), which
    stays accurate when ``Xa^T Xa`` is badly conditioned (raw CCPP features: kappa ~ 1e9). The stacked
    system's columns are equilibrated (each divided by its Euclidean norm, the solution divided back) before
    the solve: the same minimiser, but the least-squares rank cut-off then sees the columns' shapes and not
    their units, so a column multiplied by 1e8 changes the fitted values by rounding only (without it, at
    lam = 0 a 1e8-scaled CCPP made the cut-off drop directions: RMSE 5.05 where OLS gives 4.56).

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
    scale = np.sqrt(np.einsum("ij,ij->j", Xs, Xs))
    scale = np.where((scale > 0) & np.isfinite(scale), scale, 1.0)
    theta, *_ = np.linalg.lstsq(Xs / scale, ys, rcond=None)
    return theta / scale


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
    through this one function, so a sweep with seed s reproduces ``random_state=numpy.random.default_rng(s)``
    exactly (an int ``random_state`` is mixed with the fit's settings: :func:`engine.pmt._base.release_rng`).
    """
    W = _symmetric(P.gaussian_noise((d, d), 1.0, rng))
    w = P.gaussian_noise(d, 1.0, rng)
    return W, w


@functools.lru_cache(maxsize=64)
def _upper_mask(d: int) -> np.ndarray:
    """Boolean (d, d) mask of the upper triangle, diagonal included (read-only)."""
    m = np.triu(np.ones((d, d), dtype=bool))
    m.setflags(write=False)
    return m


def _symmetric(z: np.ndarray) -> np.ndarray:
    """:func:`engine.privacy.symmetric_gaussian_noise` of its draws ``z`` (d, d): the same floats.

    That function returns ``triu(z) + triu(z, 1)^T``: each entry is ``z_ij + 0.0`` on and above the diagonal
    and ``0.0 + z_ji`` below it (the ``+ 0.0`` turns a -0.0 into +0.0, nothing else); one select and the
    same ``+ 0.0`` give every bit of it without the two triangle copies;
    ``tests/engine/test_pmt_fit_exact.py`` checks it.
    """
    return np.where(_upper_mask(z.shape[-1]), z, z.T) + 0.0


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
    kappa = _kappa_ascending(w)
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

#: PMTRidge solvers: the default noise-aware solve, or the paper's (eigenvalue floor only when not PD).
SOLVERS = ("noise-aware", "paper")


def noise_spectral_bound(sigma_A, d: int, delta: float):
    """High-probability bound on the spectral norm of the symmetric SSP noise: ``s_A (2 sqrt(d) + 2 sqrt(ln(1/delta)))``.

    The noise ``W`` has iid ``N(0, s_A^2)`` entries on and above the diagonal (:func:`ssp_noise`).
    Its mean spectral norm is at most about ``2 sqrt(d) s_A`` (the semicircle edge; Bandeira & van Handel,
    "Sharp nonasymptotic bounds on the norm of random matrices with independent entries", Ann. Probab.
    44(4), 2016, Thm 1.1, whose lower-order ``sqrt(log d)`` term the diagonal's smaller variance more than
    covers for the d used here; checked in ``tests/engine/test_pmt_trust.py``), and ``||W||`` is a
    ``sqrt(2) s_A``-Lipschitz function of the underlying standard normals (``||W||_2 <= ||W||_F``), so by
    Gaussian concentration ``P(||W|| > E||W|| + t) <= exp(-t^2 / (4 s_A^2))``: with ``t = 2 s_A sqrt(ln(1/delta))``
    the bound fails with probability at most ``delta``. Taking the failure probability equal to the
    privacy ``delta`` follows AdaSSP (Y.-X. Wang, "Revisiting differentially private linear regression",
    UAI 2018, Alg. 2, whose ridge ``sqrt(d log(6/delta) log(2 d^2/delta)) ||X||^2 / eps`` is the same
    quantity with a looser union bound). Inputs: the noise scale (from the sensitivity, public, and the
    budget), d and delta: all public.

    Parameters
    ----------
    sigma_A : float or ndarray
        Noise standard deviation of the released matrix (0 when the noise is off).
    d : int
        Matrix size.
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float or ndarray
        Same shape as ``sigma_A``.

    Examples
    --------
    >>> round(noise_spectral_bound(1.0, 4, 1e-5), 3)
    10.786
    """
    k = 2.0 * math.sqrt(d) + 2.0 * math.sqrt(math.log(1.0 / delta))
    if isinstance(sigma_A, float):  # one release: the same IEEE product in Python floats
        return sigma_A * k
    c = np.asarray(sigma_A, dtype=float) * k
    return float(c) if c.ndim == 0 else c


def noise_aware_solve(A_priv, b_priv, penalty, noise_bound, *, lazy_kappa: bool = False):
    """The default PMT solve: PSD projection of the noisy statistic, then its eigenvalues raised to the noise level.

    ``A_priv = V diag(w) V^T``; the system solved is ``V diag(max(w, c)) V^T + penalty`` with
    ``c = noise_bound`` (:func:`noise_spectral_bound`, a bound on ``||W||`` that holds with
    probability ``1 - delta``). Directions where the released statistic does not exceed what the noise
    alone can produce are treated as carrying no signal: their curvature is set to ``c`` instead of a
    possibly tiny or negative noisy value, which is the PSD projection (negative eigenvalues clipped)
    followed by the AdaSSP-type ridge ``c I`` restricted to those directions (Wang, UAI 2018: ridge of
    the size of the noise's spectral norm; Sheffet, "Differentially private ordinary least squares",
    ICML 2017, makes the same point for the Wishart mechanism). Where the signal dominates
    (``w >= c``, e.g. PMT with n >> noise, where ``A ~ n I``) nothing changes and the solution is the
    paper's; where the noise dominates, ``theta~ = b_priv / c`` shrinks towards zero instead of
    inverting noise. Uses only released values and public numbers: post-processing, no privacy cost.

    Parameters
    ----------
    A_priv : ndarray of shape (..., d, d)
    b_priv : ndarray of shape (..., d)
    penalty : ndarray of shape (d, d) or (..., d, d)
        Positive semi-definite (``n lam`` times a whitened penalty).
    noise_bound : float or ndarray of shape (...)
        ``c >= 0``.
    lazy_kappa : bool, default False
        Return ``kappa`` of one system as a :class:`engine.pmt._base.Lazy` (its eigenvalues computed when a
        report reads it; display only), as :class:`PMTRidge` does.

    Returns
    -------
    theta : ndarray of shape (..., d)
    fixed : ndarray of bool, shape (...)
        Where at least one eigenvalue was raised.
    kappa : ndarray of shape (...)
        Condition number of ``A_priv + penalty`` before the fix (inf when not positive definite).

    Examples
    --------
    >>> th, fixed, k = noise_aware_solve(np.diag([100.0, -3.0]), np.array([100.0, 5.0]), np.zeros((2, 2)), 10.0)
    >>> th.tolist(), bool(fixed)
    ([1.0, 0.5], True)
    """
    A_priv = np.asarray(A_priv, dtype=float)
    c = np.asarray(noise_bound, dtype=float)
    if lazy_kappa:
        theta, fixed, _ = _noise_aware_solve(A_priv, b_priv, penalty, c, kappa=False)
        return theta, fixed, Lazy(lambda: _kappa_from_eigs(np.linalg.eigvalsh(A_priv + penalty)))
    return _noise_aware_solve(A_priv, b_priv, penalty, c)


def _kappa_ascending(w):
    """:func:`engine.pmt._bounds._kappa_from_eigs` of LAPACK's ascending eigenvalues, the same floats.

    ``max|w|`` of an ascending spectrum is ``max(|w_0|, |w_-1|)`` (a max picks one of the values, so the
    float is the same), which for a stack of small systems saves the reduction over the last axis.
    """
    if w.ndim < 2:
        return _kappa_from_eigs(w)
    lo = w[..., 0]
    hi = np.maximum(np.abs(lo), np.abs(w[..., -1]))
    pos = lo > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pos, hi / np.where(pos, lo, 1.0), np.inf)


def _v_diag_vt_stack(V, wf):
    """``np.einsum("...ij,...j,...kj->...ik", V, wf, V)`` of a stack ``V`` (k, d, d), ``wf`` (k, d): the same floats.

    einsum forms each entry as ``0 + (V_i0 wf_0) V_k0 + (V_i1 wf_1) V_k1 + ...`` in that order; the loop below
    does the same products and sums in the same order (the leading ``+ 0.0`` included, so signed zeros match)
    with the stack index innermost (k contiguous), which for small d is about twice as fast as einsum's loops
    of length d. ``tests/engine/test_pmt_sweep_exact.py`` checks the equality bit for bit.
    """
    Vt = np.moveaxis(V, 0, -1).copy()  # (d, d, k)
    Vw = Vt * np.moveaxis(wf, 0, -1)[None]  # V_ij wf_j
    out = Vw[:, None, 0, :] * Vt[None, :, 0, :]  # (i, k', stack)
    out += 0.0
    for j in range(1, V.shape[-1]):
        out += Vw[:, None, j, :] * Vt[None, :, j, :]
    return np.moveaxis(out, -1, 0)


def _fmax(a: float, b: float) -> float:
    """``np.maximum`` of two Python floats (NaN propagates; otherwise the larger)."""
    if a != a or b != b:
        return math.nan
    return a if a >= b else b


def _noise_aware_solve(A_priv, b_priv, penalty, c, kappa=True):
    """:func:`noise_aware_solve` of one system or a stack (``kappa=False``: None for kappa)."""
    w, V = _eigh(A_priv)
    kappa = _kappa_ascending(np.linalg.eigvalsh(A_priv + penalty)) if kappa else None
    # c = 0 (noise off): only the PSD projection, kept 1e-12 max|w| away from zero so a rank-deficient
    # statistic without penalty still solves (the minimum-norm-like answer along that direction).
    # w is ascending (LAPACK), so max|w| is at an end: the same float as np.max(np.abs(w), axis=-1).
    if w.ndim == 1 and np.ndim(c) == 0:  # one system: the same max, abs and product in Python floats
        lo, hi, cf = float(w[0]), float(w[-1]), float(c)
        c_eff = _fmax(cf, 1e-12 * _fmax(abs(lo), abs(hi)))
        wf = np.maximum(w, c_eff)
        fixed = np.bool_(lo < c_eff)  # w ascending: any(w < c_eff) is w[0] < c_eff
    else:
        c_eff = np.maximum(c, 1e-12 * np.maximum(np.abs(w[..., 0]), np.abs(w[..., -1])))
        wf = np.maximum(w, c_eff[..., None])
        fixed = np.any(w < c_eff[..., None], axis=-1)
    M = (_v_diag_vt_stack(V, wf) if V.ndim == 3 else np.einsum("...ij,...j,...kj->...ik", V, wf, V)) + penalty
    M = (M + (M.T if M.ndim == 2 else np.swapaxes(M, -1, -2))) / 2.0
    theta = _solve_columns(M, np.asarray(b_priv, dtype=float)[..., None])[..., 0]
    return theta, fixed, kappa


def certified_ssp_sensitivities(radius: float, B_y: float, n: int, d: int,
                                neighbouring: str = "replace-one") -> tuple[float, float]:
    """:func:`ssp_sensitivities` times the certified rounding factor of a float sum of n rows
    (:func:`engine.privacy.sum_rounding_factor`: terms of length d^2 for A, d for b, summed in float64).
    What every SSP release (estimators, sweeps, Dask) calibrates its noise to."""
    sA, sb = ssp_sensitivities(radius, B_y, neighbouring)
    return sA * P.sum_rounding_factor(n, d * d), sb * P.sum_rounding_factor(n, d)


def ssp_sensitivities(radius: float, B_y: float, neighbouring: str = "replace-one") -> tuple[float, float]:
    """Sensitivities of ``A = sum x x^T`` (Frobenius) and ``b = sum x y`` (L2) for ``||x|| <= R``, ``|y| <= B_y``.

    Replace-one (the only relation offered; PMT.md section 3, step 3): ``sqrt(2) R^2`` and ``2 R B_y``.
    n is public under replace-one; add/remove is not offered because n enters R(d, n), B_y(n), averages
    and the noise scale, so ``neighbouring="add-remove"`` raises ``ValueError``.

    Examples
    --------
    >>> [round(s, 4) for s in ssp_sensitivities(2.0, 3.0)]
    [5.6569, 12.0]
    """
    P.validate_neighbouring(neighbouring)
    return math.sqrt(2.0) * radius**2, 2.0 * radius * B_y


@dataclass(frozen=True)
class SSPStatistics:
    """The sums over the private rows that one SSP release needs (before noise), plus display counts.

    Computed in memory by the estimators' ``fit`` or blockwise by :mod:`engine.pmt.dask`; the release
    (noise and solve) takes only this, so both paths release identically.

    Attributes
    ----------
    A : ndarray of shape (d, d)
        ``Z^T Z`` of the bounded rows (PMT-truncated at R, or clipped at C).
    b : ndarray of shape (d,)
        ``Z^T clip(y, +-B_y)``.
    n : int
        Number of private rows (public under replace-one).
    n_truncated, n_y_clipped : int
        Rows truncated / responses clipped (display only, never fed back into the mechanism).
    eigenvalues_raw : ndarray of shape (d,) or None
        Eigenvalues of the raw ``X^T X`` (intercept column included; display only), or None when not
        computed.
    """

    A: np.ndarray
    b: np.ndarray
    n: int
    n_truncated: int = 0
    n_y_clipped: int = 0
    eigenvalues_raw: np.ndarray | None = None

    @property
    def frac_truncated(self) -> float:
        return self.n_truncated / self.n

    @property
    def frac_y_clipped(self) -> float:
        return self.n_y_clipped / self.n

    @property
    def kappa_raw(self) -> float:
        """kappa(X^T X) of the raw rows (nan when not computed)."""
        return math.nan if self.eigenvalues_raw is None else _kappa_from_eigs(self.eigenvalues_raw)

    @property
    def kappa_A(self) -> float:
        """kappa(A) (for PMT: kappa(X~^T X~) after whitening and truncation)."""
        return _kappa_from_eigs(np.linalg.eigvalsh(self.A))


def _public_moment_memo(Xq, fit_intercept, on_singular, estimator):
    """The public moment of validated public rows, kept by content between fits (public data only, so no
    privacy cost; :func:`engine.pmt._split_memo.memo_public`): a refit on the same public rows reuses the
    object a fresh computation gave (its arrays read-only). This saves about a tenth of a small fit."""
    return _split_memo.memo_public(Xq, ("public_moment", bool(fit_intercept), on_singular, estimator),
                                   lambda: _public_moment_rows(Xq, fit_intercept, on_singular, estimator),
                                   freeze=_freeze_arrays)


def _whitened_penalty(moment, fit_intercept, penalize_intercept) -> np.ndarray:
    """``moment.whiten_quadratic(P)`` of the penalty mask P, kept on the (immutable) moment: a refit with a
    memoised moment (:func:`_public_moment_memo`) reuses it. Public; the same floats (read-only)."""
    cache = moment.__dict__.setdefault("_whitened_penalties", {})  # (a frozen dataclass: not a field)
    key = (bool(fit_intercept), bool(penalize_intercept))
    Q = cache.get(key)
    if Q is None:
        Q = moment.whiten_quadratic(penalty_mask(moment.d, fit_intercept=fit_intercept,
                                                 penalize_intercept=penalize_intercept))
        Q.setflags(write=False)
        Q = cache.setdefault(key, Q)
    return Q


def _freeze_arrays(obj) -> None:
    """Make every array attribute of a (frozen dataclass) object read-only."""
    for v in vars(obj).values():
        if isinstance(v, np.ndarray):
            v.setflags(write=False)


def _ledger_ssp(delta, mu, sens_A, sens_b, nb, names=("A = X^T X", "b = X^T y")):
    """The two-release SSP ledger and the noise scales ``(ledger, s_A, s_b)``: mu split evenly over A and b.

    A new ledger every call (it is the fit's own, and mutable); its records (immutable) and the scales are
    computed once per ``(delta, mu, sensitivities, relation, names)``: a pure function of public numbers
    and the budget."""
    releases, s_A, s_b = _ssp_releases(float(delta), float(mu), float(sens_A), float(sens_b), nb, tuple(names))
    return P.PrivacyLedger(delta=delta, releases=list(releases)), s_A, s_b


@functools.lru_cache(maxsize=1024)
def _ssp_releases(delta, mu, sens_A, sens_b, nb, names):
    ledger = P.PrivacyLedger(delta=delta)
    mu_part = P.split_mu(mu, 2)
    s_A = P.gaussian_sigma(sens_A, mu_part)
    s_b = P.gaussian_sigma(sens_b, mu_part)
    ledger.record(names[0], sensitivity=sens_A, sigma=s_A, neighbouring=nb)
    ledger.record(names[1], sensitivity=sens_b, sigma=s_b, neighbouring=nb)
    return tuple(ledger.releases), s_A, s_b

class PMTRidge(_JointRidgeMixin, _PublicRidgeMixin, _LinearBase):
    """DP-PMTRR: differentially private ridge regression with public-moment-guided truncation.

    Algorithm (PMT.md section 3; Cao, Bi & Zhang, arXiv:2602.22282, "our reading" where marked
    there):

    1. ``Sigma_pub`` from the public rows (intercept column appended), ``X~ = Pi_R(X Sigma_pub^{-1/2})``
       with ``R = sqrt(d (1 + ln(2n/eta)))``.
    2. ``response="clip"``: ``y`` clipped to ``[-B_y, B_y]``, ``B_y = sqrt(mean(y_pub^2)(1 + ln(2n/eta)))``
       (or ``response_bound``). ``A = X~^T X~`` and ``b = X~^T y`` are released with mu/sqrt(2) each:
       symmetric noise with ``sigma_A = Delta_A / mu_A`` (``Delta_A = sqrt(2) R^2``, replace-one) and
       ``sigma_b = Delta_b / mu_b`` (``Delta_b = 2 R B_y``).
    3. ``theta~ = solve(A_priv + n lam Sigma^{-1/2} P Sigma^{-1/2}, b_priv)`` (eigenvalue floor if not
       positive definite), ``theta = Sigma_pub^{-1/2} theta~``.

    ``response="joint"`` (Reading B): ``(x, y)`` is one (d+1)-vector whitened with the public joint
    second moment (needs ``y_pub``) and truncated at ``R = sqrt((d+1)(1 + ln(2n/eta)))``; one symmetric
    release of ``Z~^T Z~`` with all of mu (``Delta = sqrt(2) R^2``), back-transformed to
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
    response : {"auto", "clip", "joint"}, default "auto"
        ``"auto"``: ``"joint"`` when public labels are given and ``response_bound`` is None, else ``"clip"``
        (:func:`resolve_response`; the form used is ``report_.extra["response"]``).
    response_bound : None, float or "private", default None
        B_y. None: from the public labels (needs ``y_pub``); a float: a user bound; "private":
        ``max |y|`` of the private data, with a ``PrivacyLeakWarning``.
    neighbouring : {"replace-one"}, default "replace-one"
        The only relation offered: n is public under replace-one; add/remove is not offered because n
        enters R(d, n), B_y(n), averages and the noise scale (any other value raises ``ValueError``).
    fit_intercept : bool, default True
    penalize_intercept : bool, default False
    on_singular : {"regularize", "raise"}, default "regularize"
        What to do with a singular ``Sigma_pub`` or ``n_pub < d`` (see :func:`engine.pmt.public_moment`).
    eig_floor : float, default 1e-3
        Relative eigenvalue floor for a non-positive-definite noisy system (``solver="paper"`` only).
    solver : {"noise-aware", "paper"}, default "noise-aware"
        ``"paper"``: PMT.md section 3 step 5 as in the paper, ``solve(A_priv + pen, b_priv)`` with the
        eigenvalues floored at ``eig_floor * trace(A_priv) / d`` only when the system is not positive
        definite (:func:`ssp_solve`). It inverts near-zero noisy directions when the noise (spectral size
        about ``2 sqrt(d) s_A``) rivals the signal (about n in whitened units): a few hundred to a few
        thousand private rows, or a small epsilon. ``"noise-aware"`` (default): the eigenvalues of
        ``A_priv`` are raised to ``c = s_A (2 sqrt(d) + 2 sqrt(ln(1/delta)))``, a ``1 - delta`` bound on the
        noise's spectral norm (:func:`noise_spectral_bound`, :func:`noise_aware_solve`; AdaSSP, Wang
        UAI 2018). ``c`` depends on the sensitivity (R, from d, n, eta), the budget (mu, delta) and d only:
        public quantities and the budget, never the private data; the solve is post-processing of the
        released A_priv, b_priv. Identical to the paper's solution when every eigenvalue of ``A_priv``
        exceeds c (signal-dominated).
    public_moment : {"sample", "tyler"}, default "sample"
        The public moment that whitens: the paper's uncentered sample second moment, or Tyler's robust
        shape with a median scale for heavy-tailed features (:func:`engine.pmt.tyler_moment`; needs
        ``n_pub > d``).
    center : {"public", None}, default "public"
        ``"public"``: y is centred by a public centre before the bound (the mean of ``y_pub``, or 0 without
        public labels) and the intercept shifted back; columns the public rows never span are left out with
        an ``UnspannedWarning`` (:func:`engine.pmt.public_fit.fit_public`). Without it, on raw CCPP (power
        about 450 MW, spread 17) the bound was the scale of ``|y|`` (1,685) and the noise on ``b`` 27x larger
        (test RMSE 79 MW against 5.2 standardised). The features need no centring: the intercept block of the
        uncentered moment does it. None: the paper's uncentred release. ``response="joint"`` centres y by the
        mean of ``y_pub`` too (its joint moment then has a centred y column).
    random_state : None, int or numpy.random.Generator, default None
        None (default): fresh OS entropy for every fit, what a release should use. A fixed int is for
        simulation and reproducibility only: the noise stream is derived from the seed *and* the
        release's identity (class and every other parameter: epsilon, delta, lam, ...; see
        :func:`engine.pmt._base.release_rng`), so the same seed with the same settings reproduces a
        fit, while fits differing in any setting (e.g. four epsilons with ``random_state=0``) get
        independent noise that cannot be combined to cancel it. A Generator is used as is (its state
        advances; the caller owns the stream, as the sweeps do for common random numbers).

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

    _public_family = "ridge"
    # the solvers, for the joint form's release (engine.pmt._ridge_joint, which ridge.py imports)
    _ssp_solve = staticmethod(ssp_solve)
    _noise_bound = staticmethod(noise_spectral_bound)

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, eta=0.05, response="auto", response_bound=None,
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False, on_singular="regularize",
                 eig_floor=DEFAULT_EIG_FLOOR, solver="noise-aware", public_moment="sample", center="public",  # noqa: F811 - the parameter, not the re-exported function
                 random_state=None, sampler="numpy"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-PMTRR.

        Parameters
        ----------
        X : array-like of shape (n, p), or a Dask array / DataFrame
            Private features. A Dask collection (with ``y`` one too, or in memory) is fitted out of
            core by :func:`engine.pmt.dask.fit_dask` (``response="clip"``): same release, same result.
        y : array-like of shape (n,), or a Dask array / Series
            Private responses.
        X_pub : array-like of shape (n_pub, p)
            Public features (required; never inferred from X; always in memory).
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
        if self.center not in CENTERS:
            raise ValueError(f"center must be one of {CENTERS}, got {self.center!r}")
        if is_dask(X, y):  # larger than memory: the same release from blockwise statistics, centred as in memory
            return fit_out_of_core(self, X, y, X_pub, y_pub)
        if isinstance(X_pub, PublicInfo) or (self.center == "public" and self._response_for(y_pub) == "clip"
                                              and _public_info_path(X_pub)):
            # public centring of y, columns the public rows never span left out (engine.pmt.public_fit)
            info = _as_public_info(X_pub, y_pub)
            return fit_public(self, X, y, info, response_center=None if self.center == "public" else 0.0, stacklevel=3)
        # every product and d x d factorisation of the fit on one BLAS thread (the blocked transform of large
        # shapes runs its own threads, one BLAS thread each): OpenBLAS's threads on a d = 200 eigh took 0.5 s
        # instead of 3 ms on this shared machine, and the numbers no longer depend on the machine's load
        with blas_limit(1):
            eps, dlt, nb, lam, eta, eig_floor = self._check_params()
            joint = self._response_for(y_pub) == "joint"
            need_y_pub = joint or self.response_bound is None
            Xp, yv, Xq, yq, n, p, d = _validate_data(X, y, X_pub, y_pub, fit_intercept=self.fit_intercept,
                                                     need_X_pub=True, need_y_pub=need_y_pub)
            if joint and self.response_bound is not None:
                raise ValueError("response_bound applies to response='clip' only; response='joint' bounds (x, y) by R")
            if joint:
                return self._fit_joint(Xp, yv, Xq, yq, n, p, d, eps, dlt, nb, _mu(eps, dlt, n, self.sampler), lam, eta, eig_floor,
                                       self._penalty_mask(d))

            # the data were validated once above: the transform's own checks are not repeated
            mom = _public_moment_memo(Xq, self.fit_intercept, self.on_singular, self.public_moment)
            # B_y from the public labels (validated above) unless a user or "private" bound is set
            if self.response_bound is None:
                B_y = _response_bound_rows(yq, n, eta)
            else:
                B_y = self._response_bound(yq, yv, n, eta)
            yc = np.clip(yv, -B_y, B_y)
            # A = X~^T X~ and b = X~^T yc are formed by the transform's pass over the rows (the products
            # sufficient_statistics computes)
            tr = _transform_rows(Xp, mom, eta, y=yc)
            stats = SSPStatistics(tr.gram, tr.xty, n, n_truncated=int(np.count_nonzero(tr.truncated)),
                                  n_y_clipped=int(np.count_nonzero(yc != yv)))
            self.transform_ = tr
            # kappa_raw (private, display only): from the transform's raw Gram when the report is read
            return self._release(stats, tr.moment, tr.radius, B_y, p, params=(eps, dlt, nb, lam, eta, eig_floor),
                                 kappa_raw=Lazy(lambda: _kappa_from_eigs(tr.eigenvalues_raw * n)))

    def _response_for(self, y_pub) -> str:
        """The response handling of a fit with public labels ``y_pub`` (None: none): :func:`resolve_response`."""
        return resolve_response(self.response, has_public_labels=y_pub is not None,
                                response_bound=self.response_bound)

    def _memo_moment(self, Xq):
        """The public moment of public rows ``Xq`` with this estimator's options (memoised by content)."""
        return _public_moment_memo(np.asarray(Xq, dtype=float), self.fit_intercept, self.on_singular,
                                   self.public_moment)

    def _ssp_statistics(self, tr, n, n_y_clipped):
        """:class:`SSPStatistics` of a transform whose ``xty`` holds the bounded responses' product."""
        return SSPStatistics(tr.gram, tr.xty, n, n_truncated=int(np.count_nonzero(tr.truncated)),
                             n_y_clipped=n_y_clipped)

    def _check_params(self):
        """Validate every parameter (before any data or noise): ``(eps, delta, nb, lam, eta, eig_floor)``."""
        eps, dlt, nb, lam, eta = self._privacy_params()
        eig_floor = _check_positive(self.eig_floor, "eig_floor")
        if self.response not in RESPONSES:
            raise ValueError(f"response must be one of {RESPONSES}, got {self.response!r}")
        _check_on_singular(self.on_singular)
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.public_moment not in MOMENT_ESTIMATORS:
            raise ValueError(f"public_moment must be one of {MOMENT_ESTIMATORS}, got {self.public_moment!r}")
        return eps, dlt, nb, lam, eta, eig_floor

    def _release(self, stats, moment, R, B_y, p, params=None, kappa_raw=None):
        """Release ``A`` and ``b`` of ``stats`` (noise, then the solve) and set the coefficients and report.

        The one release of ``response="clip"``, shared by the in-memory and the Dask path
        (:mod:`engine.pmt.dask`): both compute :class:`SSPStatistics` of the transformed and truncated
        private rows, then call this. Noise is drawn here, after all validation, and nowhere else.
        ``params``: what :meth:`_check_params` returned in this ``fit`` (validated again when None);
        ``kappa_raw``: the report's value (a :class:`engine.pmt._base.Lazy`; default ``stats.kappa_raw``).
        """
        eps, dlt, nb, lam, eta, eig_floor = self._check_params() if params is None else params
        n, d = stats.n, stats.A.shape[0]
        mu = _mu(eps, dlt, n, self.sampler)
        sens_A, sens_b = certified_ssp_sensitivities(R, B_y, n, d, nb)
        ledger, s_A, s_b = _ledger_ssp(dlt, mu, sens_A, sens_b, nb, ("A = X~^T X~", "b = X~^T y"))
        rng = release_rng(self)
        W, w = ssp_noise(rng, d)
        S_is = moment.Sigma_pub_inv_sqrt
        pen = n * lam * _whitened_penalty(moment, self.fit_intercept, self.penalize_intercept)
        th_t, fixed, kappa_noisy, c = self._solve(stats.A + s_A * W, stats.b + s_b * w, pen, s_A, d, dlt, eig_floor)
        self._set_theta(S_is @ th_t, p)
        self.report_ = _dp_report_for(
            self,
            METHOD_NAMES["pmt"], eps, dlt, mu, nb, n, d, lam, ledger, {"A": sens_A, "b": sens_b}, {"A": s_A, "b": s_b},
            radius=R, n_pub=moment.n_pub, kappa_raw=Lazy(lambda: stats.kappa_raw) if kappa_raw is None else kappa_raw,
            kappa_pub=Lazy(lambda: moment.kappa), kappa_pmt=Lazy(lambda: stats.kappa_A), frac_truncated=stats.frac_truncated,
            sigma_pub_regularized=moment.regularized, tau=moment.tau, B_y=B_y,
            kappa_noisy=kappa_noisy if isinstance(kappa_noisy, Lazy) else float(kappa_noisy),
            frac_y_clipped=stats.frac_y_clipped,
            eig_fixes=int(fixed), eig_floor=eig_floor,
            extra={"response": "clip", "solver": self.solver, "noise_bound": c, "public_moment": self.public_moment},
        )
        return self

    def _solve(self, A_priv, b_priv, pen, s_A, d, dlt, eig_floor):
        """The chosen solver; returns ``theta, fixed, kappa, c`` (c the noise bound, nan for the paper's)."""
        if self.solver == "paper":
            return (*ssp_solve(A_priv, b_priv, pen, eig_floor=eig_floor), math.nan)
        c = float(noise_spectral_bound(s_A, d, dlt))
        # kappa of the system before the fix: display only, computed when the report is read
        return (*noise_aware_solve(A_priv, b_priv, pen, c, lazy_kappa=True), c)

    def _fit_joint(self, Xp, yv, Xq, yq, n, p, d, eps, dlt, nb, mu, lam, eta, eig_floor, Pm):
        c = self._joint_center(yq)
        yv, yq = yv - c, np.asarray(yq, dtype=float) - c
        Xa = self._with_intercept(Xp)
        J = np.hstack([Xa, yv[:, None]])
        mom = self._joint_moment(Xq, yq)
        tr = pmt_transform(J, moment=mom, eta=eta)
        self.transform_ = tr
        self._release_joint(tr.X_tilde.T @ tr.X_tilde, mom, tr.radius, n, p, d,
                            (eps, dlt, nb, lam, eta, eig_floor), mu, Pm, kappa_raw=_gram_kappa(Xa),
                            kappa_pmt=tr.kappa_pmt, frac_truncated=tr.frac_truncated)
        return self._shift_intercept(c, p)


