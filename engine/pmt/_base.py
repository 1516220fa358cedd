"""Shared plumbing of the PMT-family estimators: report, validation, parameters, coefficients.

Everything the ridge estimators (:mod:`engine.pmt.ridge`, :mod:`engine.pmt.baselines`) and the GLM
estimators (:mod:`engine.pmt.logistic`, :mod:`engine.pmt.poisson`) do alike lives here once:

- :class:`FitReport`, what a fit released and how (filled by every estimator's ``fit``), and the
  helpers that build it (:func:`_dp_report`, :func:`_nonprivate_report`);
- validation of data and parameters, all of it before any noise is drawn (``_check_*``,
  :func:`_validate_data`, :func:`_validate_privacy`), and :func:`_resolve_bound` for the public /
  user / ``"private"`` bounds;
- :class:`_CoefBase`: keyword-only parameters stored as given (:func:`_store_params`, scikit-learn
  convention), the intercept column (appended last, ``docs/specs/PMT.md`` section 2), the penalty mask,
  the coefficients and the linear predictor.

Conventions (scikit-learn): ``__init__`` only stores, ``fit`` validates everything before any noise
is drawn, randomness only from ``random_state``, learned attributes end in ``_``.
"""

from __future__ import annotations

import functools
import hashlib
import math
import warnings
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from engine import privacy as P
from engine.pmt._bounds import _kappa_from_eigs, add_intercept, pmt_radius
from engine.pmt._moment import ON_SINGULAR, PublicMoment, public_moment
from engine.pmt.public_info import PublicInfo
from engine.pmt._sklearn_api import BaseEstimator, RegressorMixin, check_is_fitted
from engine.pmt._backends import refuse_dask
from engine.pmt._bounds import response_bound as _public_response_bound

#: Display names of the ridge methods used in reports, sweeps and plots (contract: engine.pmt.sweep).
METHOD_NAMES = {
    "pmt": "PMT",
    "pmt-paper": "PMT (paper solver)",
    "pmt-clip": "PMT (clip y)",
    "adassp": "AdaSSP",
    "dp-rr": "DP-RR",
    "dp-rr-oracle": "DP-RR (oracle C, non-private tuning)",
    "dp-gd": "DP-GD",
    "non-private": "Non-private",
}

#: Relative eigenvalue floor of a non-positive-definite noisy SSP system (:func:`engine.pmt.ridge.ssp_solve`).
DEFAULT_EIG_FLOOR = 1e-3
#: Largest accepted |entry| of X or y: beyond it, sums of squares can overflow float64.
MAX_ABS_VALUE = 1e150
#: Accepted range of a user-set bound that enters float32 products (the sweeps' DP-GD gradient clip and the
#: logistic sweep's clip radius): squares and sums over rows stay far below float32's 3.4e38. Float64-only
#: bounds use :data:`engine.privacy.BOUND_RANGE` (1e-100, 1e100).
F32_BOUND_RANGE = (1e-100, 1e15)


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------
class Lazy:
    """A :class:`FitReport` display value computed on first access: ``Lazy(fn)`` with ``fn()`` returning it.

    The private display diagnostics of a fit (condition numbers of the raw and whitened Gram matrices and of
    the noisy system: an eigendecomposition each) are rarely read; passing them as ``Lazy`` makes a fit pay
    for them only when a page or a report asks. The value is the same number either way.
    """

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


class _LazyField:
    """Data descriptor behind a :class:`FitReport` field that may hold a :class:`Lazy` (resolved once, on read)."""

    def __init__(self, default=math.nan):
        self.default = default

    def __set_name__(self, owner, name):
        self.key = "_lazy_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self.default  # the dataclass default
        v = obj.__dict__.get(self.key, self.default)
        if isinstance(v, Lazy):
            v = float(v.fn())
            obj.__dict__[self.key] = v
        return v

    def __set__(self, obj, value):
        obj.__dict__[self.key] = value


def _privacy_tables():
    from engine.privacy.labels import DIAGNOSTIC, DP, PUBLIC

    report = {
        "method": PUBLIC, "epsilon": PUBLIC, "delta": PUBLIC, "mu": PUBLIC, "neighbouring": PUBLIC,
        "n": PUBLIC,  # public under replace-one (the only relation offered)
        "d": PUBLIC, "lam": PUBLIC, "sensitivities": PUBLIC, "noise_scales": PUBLIC, "radius": PUBLIC,
        "B_y": PUBLIC, "n_pub": PUBLIC, "kappa_pub": PUBLIC, "eig_floor": PUBLIC, "sigma_pub_regularized": PUBLIC,
        "tau": PUBLIC, "n_iter": PUBLIC, "releases": PUBLIC,
        "kappa_raw": DIAGNOSTIC, "kappa_pmt": DIAGNOSTIC, "frac_truncated": DIAGNOSTIC, "frac_y_clipped": DIAGNOSTIC,
        "kappa_noisy": DP, "eig_fixes": DP, "converged": DP,
    }
    extra = {
        "step_size": PUBLIC, "mu_per_step": PUBLIC, "mu_per_release": PUBLIC, "tol": PUBLIC, "family": PUBLIC,
        "theta_radius": PUBLIC, "G": PUBLIC, "H": PUBLIC, "response": PUBLIC, "pooled_v": PUBLIC,
        "public_resid_sd": PUBLIC, "sampler": PUBLIC, "opendp_epsilon": PUBLIC, "solver": PUBLIC,
        "public_moment": PUBLIC, "noise_bound": PUBLIC, "clip_grid": PUBLIC,
        "last_step": DP, "min_eig_last": DP,
        "lam_ada": DP,  # AdaSSP's adaptive ridge: from its released lambda_min~ and public numbers
        "non_private_tuning": PUBLIC, "grid_errors": DIAGNOSTIC,
        "response_center": PUBLIC, "public_standardized": PUBLIC, "private_bounds": PUBLIC,
    }
    return report, extra


#: What stays public when a bound was taken from the private rows (``"private"`` options) or a setting was
#: tuned on private errors (the oracle): the user's settings and the budget. Everything else the fit shows
#: (the radius or bound, the noise scales and sensitivities derived from it, the coefficients) is then a
#: non-private diagnostic: the stated guarantee no longer holds.
SETTINGS_FIELDS = frozenset({
    "method", "epsilon", "delta", "mu", "neighbouring", "n", "d", "lam", "n_pub", "kappa_pub",
    "sigma_pub_regularized", "tau", "n_iter", "extra.family", "extra.sampler", "extra.tol", "extra.response",
    "extra.solver", "extra.public_moment", "extra.private_bounds", "extra.non_private_tuning",
    "extra.mu_per_step", "extra.mu_per_release", "extra.theta_radius",
})


#: Privacy label of each :class:`FitReport` field and of the ``extra`` keys the estimators write
#: (:mod:`engine.privacy.labels`).
FIT_REPORT_PRIVACY, EXTRA_PRIVACY = _privacy_tables()


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
        ``"replace-one"`` (the only relation offered: n is public; add/remove is not offered because n
        enters R(d, n), B_y(n), averages and the noise scale).
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
        (inf if not positive definite); nan where not applicable. ``kappa_raw``, ``kappa_pmt`` and
        ``kappa_noisy`` (and ``kappa_pub``) may be given as :class:`Lazy` and are then computed on first access.
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
    kappa_raw: float = _LazyField()
    kappa_pub: float = _LazyField()
    kappa_pmt: float = _LazyField()
    kappa_noisy: float = _LazyField()
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

    def __getstate__(self):
        """Pickling (e.g. ``st.cache_data``) stores the values: every :class:`Lazy` field is resolved first."""
        for name in ("kappa_raw", "kappa_pub", "kappa_pmt", "kappa_noisy"):
            getattr(self, name)
        return dict(self.__dict__)

    @property
    def privacy(self) -> dict:
        """What each reported figure is (:mod:`engine.privacy.labels`): ``{field: "dp" | "public" |
        "non-private diagnostic"}`` for every field of :meth:`to_dict` (``extra`` keys as ``extra.<key>``).

        A non-private fit (``mu = inf``) has no DP figure: what a private fit releases noisily
        (``kappa_noisy``, ``eig_fixes``, ``converged``, ``extra.last_step``, ...) is a diagnostic there."""
        from engine.privacy.labels import DIAGNOSTIC, DP

        # epsilon = inf (noise off) releases nothing private; an oracle that tuned on private errors neither, nor
        # a fit whose bound came from the private rows
        private = (math.isfinite(self.mu) and not self.extra.get("non_private_tuning")
                   and not self.extra.get("private_bounds"))
        out = {}
        for k in [f.name for f in fields(self) if f.name not in ("ledger", "extra")] + ["releases"]:
            out[k] = FIT_REPORT_PRIVACY[k]
        for k in self.extra:
            out[f"extra.{k}"] = EXTRA_PRIVACY.get(k, DIAGNOSTIC)  # an unlisted key: assume the worst
        if not private:
            out = {k: (DIAGNOSTIC if v == DP else v) for k, v in out.items()}
        if self.extra.get("private_bounds") or self.extra.get("non_private_tuning"):
            # a bound from the private rows, or a radius tuned on private errors: only the settings stay public
            out = {k: (v if k in SETTINGS_FIELDS else DIAGNOSTIC) for k, v in out.items()}
        return out

    def to_dict(self) -> dict:
        """A JSON-friendly dict (the ledger becomes its records); ``privacy`` labels every other key."""
        out = {k: v for k, v in asdict(self).items() if k != "ledger"}
        out["releases"] = self.releases
        out["privacy"] = self.privacy
        return out


# --------------------------------------------------------------------------------------------
# shared numerical helpers (used by the estimators and by the sweeps)
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

def _run_groups(fn, runs: int, n_jobs: int | None = None, min_runs: int = 16):
    """Call ``fn(cols)`` on groups of run indices in threads, each with single-threaded BLAS.

    Multi-threaded BLAS on small products slows down badly when other processes share the cores;
    splitting the independent runs over ``n_jobs`` Python threads (numpy releases the GIL) with one
    BLAS thread each is robust. Default: 2 threads when there are at least ``min_runs`` runs.
    """
    from concurrent.futures import ThreadPoolExecutor

    from engine.pmt._blas import blas_limit  # a cached controller: no library scan per call

    if n_jobs is None:
        n_jobs = 2 if runs >= min_runs else 1
    groups = [g for g in np.array_split(np.arange(runs), max(1, min(int(n_jobs), runs))) if g.size]
    with blas_limit(1):
        if len(groups) == 1:
            return [fn(groups[0])]
        with ThreadPoolExecutor(len(groups)) as ex:
            return list(ex.map(fn, groups))
# --------------------------------------------------------------------------------------------
# validation (everything before any noise)
# --------------------------------------------------------------------------------------------
def _check_X(X, name):
    if X is None:
        raise ValueError(f"{name} is required")
    refuse_dask(f"this code path ({name} is a Dask collection)", X)  # never materialised silently
    try:
        A = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric (array-like of floats)") from None
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got shape {A.shape}")
    if A.shape[1] < 1:
        raise ValueError(f"{name} must have at least one column, got shape {A.shape}")
    # max and min (NaN propagates, +-inf reached): no A-sized temporary of isfinite / abs
    hi, lo = (float(A.max()), float(A.min())) if A.size else (0.0, 0.0)
    if not (math.isfinite(hi) and math.isfinite(lo)):
        bad = int(A.size - np.count_nonzero(np.isfinite(A)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s); all entries must be finite")
    if max(hi, -lo) > MAX_ABS_VALUE:
        raise ValueError(f"{name} has entries with |value| > {MAX_ABS_VALUE:g}; their squares would overflow the "
                         "second-moment statistics (rescale the column)")
    return A


def _as_float_vector(y, name, what="numeric"):
    """``y`` as a float array, a single column ``(n, 1)`` flattened; TypeError ``"{name} must be {what}"``."""
    refuse_dask(f"this code path ({name} is a Dask collection)", y)  # never materialised silently
    try:
        v = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be {what}") from None
    return v[:, 0] if v.ndim == 2 and v.shape[1] == 1 else v


def _check_y(y, n, name):
    v = _as_float_vector(y, name)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {v.shape}")
    if v.shape[0] != n:
        raise ValueError(f"{name} has {v.shape[0]} entries but the features have {n} rows; they must match")
    # max and min (NaN propagates, +-inf reached): the same two checks without |v| and isfinite temporaries
    hi, lo = (float(v.max()), float(v.min())) if v.size else (0.0, 0.0)
    if not (math.isfinite(hi) and math.isfinite(lo)):
        raise ValueError(f"{name} contains NaN or infinite values; all entries must be finite")
    if max(hi, -lo) > MAX_ABS_VALUE:
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
    if isinstance(X_pub, PublicMoment):  # a public moment given directly (published, or built elsewhere)
        if X_pub.d != p + int(X_pub.fit_intercept):
            raise ValueError(f"the public moment has {X_pub.d} columns (intercept included: {X_pub.fit_intercept}) but "
                             f"X has {p}; they must match")
        return X_pub
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


def _validate_data(X, y, X_pub, y_pub=None, *, fit_intercept, need_X_pub, need_y_pub=False, label_fn=None):
    """Validate private and public data; return ``(X, y, X_pub, y_pub, n, p, d)`` (d counts the intercept).

    ``label_fn(y, n)`` validates the private responses of a GLM (labels in ``classes``, counts); the
    default is a finite real response (ridge). Raises ``ValueError``/``TypeError`` naming the argument:
    non-numeric, not 2-D / 1-D, NaN/inf, |value| > 1e150, mismatched lengths or columns, n < d,
    n_pub < 1, missing public data when required. A :class:`engine.pmt.public_info.PublicInfo` (estimators that
    do not go through :func:`engine.pmt.public_fit.fit_public`) gives its rows and labels; one without rows
    (published moments) raises ``ValueError`` saying what the estimator reads instead.
    """
    if isinstance(X_pub, PublicInfo):
        X_pub, y_pub = _public_info_rows(X_pub, y_pub)
    Xp = _check_X(X, "X")
    n, p = Xp.shape
    yv = _check_y(y, n, "y") if label_fn is None else label_fn(y, n)
    d = _check_n_ge_d(n, p, fit_intercept)
    if label_fn is None and X_pub is not None and not hasattr(X_pub, "shape") and not isinstance(X_pub, PublicMoment):
        X_pub = np.asarray(X_pub, dtype=float)  # (ridge, as before the GLMs shared this function)
    Xq = _check_X_pub(X_pub, p, need_X_pub)
    yq = None
    if y_pub is not None:
        if isinstance(Xq, PublicMoment):
            raise ValueError("y_pub goes with public rows; a public moment has no labels (pass response_bound)")
        m = Xq.shape[0] if Xq is not None else np.asarray(y_pub).shape[0]
        yq = _check_y(y_pub, m, "y_pub")
    elif need_y_pub:
        raise ValueError("public labels are required here: pass y_pub to fit(), or give response_bound=<float>")
    return Xp, yv, Xq, yq, n, p, d


def _public_info_rows(info, y_pub):
    """``(X_pub, y_pub)`` of a PublicInfo for an estimator that reads public rows (see :func:`_validate_data`)."""
    if info.X_pub is None:
        raise ValueError(
            f"X_pub is a PublicInfo of mode {info.mode!r} ({info.source}): published statistics, no public rows; "
            "this estimator reads public rows only (for its public bounds and scaling), so pass the public rows "
            "as X_pub (and y_pub), or X_pub=None (a regression then needs response_bound=<float>, a stated, public "
            "bound)")
    if y_pub is not None and info.y_pub is not None:
        raise ValueError("y_pub given twice: the PublicInfo already holds public labels; pass one of them")
    return info.X_pub, (info.y_pub if y_pub is None else y_pub)


def _validate_glm_data(X, y, X_pub, *, fit_intercept, need_X_pub, label_fn):
    """:func:`_validate_data` for a GLM (no public labels): ``(X, y, X_pub, n, p, d)``."""
    Xp, yv, Xq, _, n, p, d = _validate_data(X, y, X_pub, fit_intercept=fit_intercept, need_X_pub=need_X_pub,
                                            label_fn=label_fn)
    return Xp, yv, Xq, n, p, d


def _validate_privacy(epsilon, delta, neighbouring):
    """Validate (epsilon in (0, inf], delta in (0, 1), neighbouring); public alias :func:`validate_privacy`."""
    eps = P.validate_epsilon(epsilon, allow_inf=True)
    dlt = P.validate_delta(delta)
    nb = P.validate_neighbouring(neighbouring)
    return eps, dlt, nb


def _resolve_bound(value, name, *, public, private, allow_private=True, stacklevel=4):
    """A bound: None -> the public default; float -> itself, within ``[1e-100, 1e100]``
    (:func:`engine.privacy.check_bound`: squares, sums over rows and noise scales stay finite and exact;
    ``ValueError`` naming the range otherwise, e.g. ``clip_radius=1e155`` or ``1e-170``); "private" ->
    from private data + warning."""
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
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, a documented option, or None; got {value!r}")
    try:
        float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, a documented option, or None; got {value!r}") from None
    return P.check_bound(name, value)


def _mu(eps, dlt, n, sampler="numpy"):
    """The total mu of (eps, dlt); warns (:class:`engine.privacy.DeltaTooLargeWarning`) when ``dlt > 1/n``.

    ``sampler="numpy"``: the exact mu-GDP conversion (:func:`engine.privacy.gdp_mu`). ``"opendp"``: the
    largest mu (zCDP rho = mu^2 / 2) whose epsilon OpenDP's own map certifies at dlt is <= eps
    (:func:`engine.privacy.opendp.opendp_mu`; smaller than the GDP one, e.g. 0.2472 against 0.2681 at
    epsilon 1, delta 1e-5). Called by every private fit after validation and before any noise (n, the
    number of private rows, is public under replace-one). delta >= 1 was refused earlier
    (:func:`engine.privacy.validate_delta`).
    """
    P.check_delta(dlt, int(n))
    if sampler == "opendp":
        from engine.privacy.opendp import opendp_mu

        return opendp_mu(float(eps), float(dlt))
    return P.gdp_mu(eps, dlt)


def _check_sampler(sampler) -> str:
    """``"numpy"`` or ``"opendp"`` (the package importable); a clear error before any noise otherwise."""
    if not isinstance(sampler, str) or sampler not in P.SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(map(repr, P.SAMPLERS))}, got {sampler!r}")
    if sampler == "opendp":
        from engine.privacy.opendp import require_opendp

        require_opendp()
    return sampler


def _canonical(value) -> str:
    """A stable text form of a parameter value for :func:`release_rng` (numbers as floats, arrays by hash)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return repr(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(float(value))
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value)
        return f"ndarray{arr.shape}{arr.dtype.str}:{hashlib.sha256(arr.tobytes()).hexdigest()}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canonical(v) for v in value) + ")"
    return repr(value)


def _spawn_key(cls, values: tuple) -> tuple:
    """Eight 32-bit words of SHA-256 over ``"Class|name=value|..."`` (names sorted, random_state and sampler
    left out: the sampler is not part of a release's identity, so adding it kept every seed's stream)."""
    names = [k for k in _param_names(cls) if k not in ("random_state", "sampler")]
    ident = cls.__name__ + "|" + "|".join(f"{k}={_canonical(v)}" for k, v in zip(names, values))
    digest = hashlib.sha256(ident.encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 32, 4))


@functools.lru_cache(maxsize=4096)
def _spawn_key_cached(cls, typed_values: tuple) -> tuple:
    """:func:`_spawn_key` memoised; ``typed_values`` pairs each value with its type, so that settings equal
    as numbers but written differently (``True`` and ``1``, whose text forms differ) never share an entry."""
    return _spawn_key(cls, tuple(v for _, v in typed_values))


@functools.lru_cache(maxsize=None)
def _param_names(cls) -> tuple:
    """``cls._get_param_names()`` (scikit-learn: the ``__init__`` keywords, sorted), once per class."""
    return tuple(cls._get_param_names())


@functools.lru_cache(maxsize=4096)
def _seed_sequence(seed: int, key: tuple) -> np.random.SeedSequence:
    """``SeedSequence(seed, spawn_key=key)``, memoised: its entropy pool (mixed in ``__init__``, about two
    thirds of a Generator's set-up) is a pure function of the two. A Generator seeded from it starts in
    the same state every time (``generate_state`` does not change the sequence); nothing here spawns
    children from it (which would advance its counter)."""
    return np.random.SeedSequence(seed, spawn_key=key)


def release_rng(estimator) -> np.random.Generator:
    """The noise generator of one release from ``estimator.random_state``.

    - ``None``: ``numpy.random.default_rng()`` (fresh OS entropy).
    - an int ``s >= 0``: ``default_rng(SeedSequence(s, spawn_key=k))`` with ``k`` eight 32-bit words
      of SHA-256 over the release's identity: the class name and every ``get_params()`` value except
      ``random_state`` (numbers compared as floats). Same seed and settings -> the same noise; a change
      in any setting (epsilon, delta, lam, eta, bounds, steps, ...) -> an independent stream. So
      releases at several epsilons with one integer seed no longer share their normal draws (with
      shared draws, four PMTRidge fits at eps 0.5, 1, 2, 4 solved back to the noise-free ``b/A``).
    - a ``numpy.random.Generator``: used as is (the caller owns the stream).

    Raises
    ------
    TypeError
        Anything else (a ``RandomState`` or a bool included).
    ValueError
        A negative int.
    """
    if getattr(estimator, "sampler", "numpy") == "opendp":  # OpenDP's own CSPRNG: random_state is not used
        from engine.privacy.opendp import OpenDPGenerator

        return OpenDPGenerator()
    rs = estimator.random_state
    if isinstance(rs, (int, np.integer)) and not isinstance(rs, bool):
        if rs < 0:
            raise ValueError(f"random_state must be None, an int >= 0 or a numpy.random.Generator, got {rs!r}")
        # = get_params(deep=False) without random_state, the names cached per class (get_params inspects the
        # __init__ signature at every call: half of this function's time on a small fit)
        cls = type(estimator)
        # (the sampler is not part of the identity: "numpy" is the only one that uses the seed)
        values = tuple(getattr(estimator, k) for k in _param_names(cls) if k not in ("random_state", "sampler"))
        try:  # the spawn key is a pure function of (class, settings): memoised when the settings are hashable
            key = _spawn_key_cached(cls, tuple((type(v), v) for v in values))
        except TypeError:  # an array-valued setting (e.g. a clip grid)
            key = _spawn_key(cls, values)
            return np.random.default_rng(np.random.SeedSequence(int(rs), spawn_key=key))
        return np.random.default_rng(_seed_sequence(int(rs), key))
    return P.check_random_state(rs)


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


def _dp_report(method, eps, dlt, mu, nb, n, d, lam, ledger, sensitivities, noise_scales, *, sampler="numpy",
               **fields):
    """The :class:`FitReport` of a private fit: the budget, the ledger and one sensitivity and noise scale
    per release (dicts with the same keys), plus the estimator's own ``fields``. With ``sampler="opendp"``
    ``extra`` gets ``sampler`` and ``opendp_epsilon``: the epsilon OpenDP's map certifies at dlt for the
    ledger's releases (:func:`engine.privacy.opendp.opendp_certified_epsilon`), <= eps."""
    if sampler == "opendp" and math.isfinite(mu):
        from engine.privacy.opendp import opendp_certified_epsilon

        extra = dict(fields.pop("extra", None) or {})
        extra["sampler"] = "opendp"
        extra["opendp_epsilon"] = opendp_certified_epsilon(
            [r.sigma / r.sensitivity for r in ledger.releases], dlt)
        fields["extra"] = extra
        # the ledger's total shows what OpenDP certifies for the releases it drew, not the mu-GDP curve
        ledger.certified_epsilon, ledger.certified_by = extra["opendp_epsilon"], "OpenDP"
    return FitReport(method=method, epsilon=eps, delta=dlt, mu=mu, neighbouring=nb, n=n, d=d, lam=lam, ledger=ledger,
                     sensitivities=sensitivities, noise_scales=noise_scales, **fields)


#: Estimator parameters that may take a bound from the private rows (``"private"``, with a warning).
PRIVATE_BOUND_PARAMS = ("response_bound", "clip_radius", "clip_norm")


def _dp_report_for(estimator, *args, **fields):
    """:func:`_dp_report` with the estimator's ``sampler`` (``"numpy"`` when it has none); a bound taken from
    the private rows (``"private"``) is recorded in ``extra["private_bounds"]`` (the labels then say so)."""
    private = [p for p in PRIVATE_BOUND_PARAMS if isinstance(getattr(estimator, p, None), str)
               and getattr(estimator, p) == "private"]
    if private:
        fields["extra"] = {**(fields.get("extra") or {}), "private_bounds": private}
    return _dp_report(*args, sampler=getattr(estimator, "sampler", "numpy"), **fields)


def _nonprivate_report(method, n, d, lam, **fields):
    """The :class:`FitReport` of a non-private reference fit (``mu = inf``, an empty ledger)."""
    return FitReport(method=method, epsilon=math.inf, delta=math.nan, mu=math.inf, neighbouring="", n=n, d=d,
                     lam=lam, ledger=P.PrivacyLedger(), **fields)


def _store_params(estimator, params: dict) -> None:
    """Store the ``__init__`` arguments unchanged as attributes of the same names (scikit-learn:
    ``__init__`` only stores; ``get_params`` reads them back). Call as ``_store_params(self, locals())``."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class _CoefBase(BaseEstimator):
    """Validation preamble, coefficient handling (intercept column last) and the linear predictor shared
    by the ridge and the GLM estimators."""

    def _privacy_params(self):
        """Validate epsilon, delta, neighbouring, lam, eta (in that order, before any noise)."""
        eps, dlt, nb = _validate_privacy(self.epsilon, self.delta, self.neighbouring)
        _check_sampler(getattr(self, "sampler", "numpy"))
        return eps, dlt, nb, _check_lam(self.lam), _check_eta(self.eta)

    def _with_intercept(self, Xp):
        return add_intercept(Xp) if self.fit_intercept else Xp

    def _penalty_mask(self, d):
        return penalty_mask(d, fit_intercept=self.fit_intercept, penalize_intercept=self.penalize_intercept)

    def _public_kappa(self, Xq):
        """``(n_pub, kappa_pub)`` of the optional public rows (``(0, nan)`` without them); report only."""
        if Xq is None:
            return 0, math.nan
        if isinstance(Xq, PublicMoment):
            return Xq.n_pub, Xq.kappa
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
            mom = Xq if isinstance(Xq, PublicMoment) else public_moment(Xq, fit_intercept=self.fit_intercept)
            return rule(mom.eigenvalues[-1])
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




class _GLMBase(_CoefBase):
    """Coefficient handling (intercept column last) shared by the GLM estimators."""

    def decision_function(self, X):
        """Linear predictor ``X @ coef_ + intercept_`` of ``X`` (n_samples, n_features): shape (n_samples,)."""
        return self._linear_predictor(X)
