"""Differentially private logistic regression: DP-PMTLR (noisy Newton), its baselines, the reference.

Estimators (conventions of :mod:`engine.pmt._base`; a :class:`engine.pmt.FitReport` in ``report_``):

- :class:`PMTLogistic` -- DP-PMTLR (``docs/specs/PMT.md`` section 4; Cao, Bi & Zhang, arXiv:2602.22282;
  noisy-Newton template of Avella-Medina, Bradshaw & Loh, GDP noisy Newton): whiten and truncate the
  features with the public second moment (:func:`engine.pmt.pmt_transform`), run T noisy Newton steps
  in the whitened space (:func:`engine.pmt._newton.noisy_newton`), map back.
- :class:`DPNewtonLogistic` -- the same noisy Newton on the *raw* rows clipped at radius C: the
  private-only counterpart (PMT.md section 8: it fails at small lam where PMT converges).
- :class:`DPGDLogistic` -- full-batch DP gradient descent with per-example gradient clipping
  (:mod:`engine.pmt._gd`).
- :class:`LogisticReference` -- the non-private fit on the untruncated private data (the target of
  the error metric).

Objective, penalty, the noisy-Newton accounting, the eigenvalue floor and the convergence flag:
:mod:`engine.pmt._newton`. Labels are mapped with the user-given ``classes`` pair (default
``(0, 1)``), never inferred from the private data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from engine.pmt._special import expit  # scipy.special, imported on first use

from engine.pmt._base import (
    _check_lam,
    _check_on_singular,
    _check_positive,
    _check_steps,
    _GLMBase,
    _gram_kappa,
    _nonprivate_report,
    _pmt_report_fields,
    _resolve_bound,
    _store_params,
    _validate_glm_data,
)
from engine.pmt._backends import fit_glm_out_of_core, is_dask, refuse_dask
from engine.pmt._gd import _DPGDMixin, dp_gd_logistic_path, logistic_dp_gd_step_size
from engine.pmt._newton import (
    DEFAULT_CONV_TOL,
    DEFAULT_NEWTON_EIG_FLOOR,
    GLM_METHOD_NAMES,
    LOGISTIC,
    _NoisyNewtonMixin,
    _whitened_public_min_eig,
    certified_newton_sensitivities,
    glm_reference_solve,
)
from engine import privacy as P
from engine.pmt._bounds import pmt_radius, truncate_rows
from engine.pmt._moment import PublicMoment, public_moment
from engine.pmt.public_info import standardizing_moment
from engine.pmt.public_fit import _as_public_info, _public_info_path, fit_public
from engine.pmt._sklearn_api import ClassifierMixin

__all__ = [
    "WHITEN",
    "choose_whitening",
    "check_binary_labels",
    "PMTLogistic",
    "DPNewtonLogistic",
    "DPGDLogistic",
    "LogisticReference",
]


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
    refuse_dask(f"this code path ({name} is a Dask collection)", y)  # never materialised silently
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


def _raw_public_min_eig(Xq, fit_intercept) -> float:
    """Smallest eigenvalue of the raw public second moment (intercept column included; public)."""
    from engine.pmt._moment import PublicMoment, public_moment

    mom = Xq if isinstance(Xq, PublicMoment) else public_moment(Xq, fit_intercept=fit_intercept)
    return float(mom.eigenvalues_unregularized[0])


class _LogisticBase(ClassifierMixin, _GLMBase):
    def _labels(self, y, n):
        """Private labels of a DP fit: mapped with ``classes``, never required to hold both classes.

        Whether the private labels hold both classes is a private fact: a one-class label set (200
        zeros) and its replace-one neighbour (199 zeros and one 1) must both fit, with the same report
        fields, so nothing here branches on it. Noisy Newton and DP-GD need no
        second class (the noise and the penalty keep every step finite).
        """
        return check_binary_labels(y, n, classes=self.classes, require_both=False)

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
        _store_params(self, locals())

    def _labels(self, y, n):
        # the non-private reference may refuse a one-class sample (no finite fit at lam = 0); it releases
        # nothing, so this branch on the labels costs no privacy
        return check_binary_labels(y, n, classes=self.classes, require_both=True)

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit on the private data (public arguments are accepted and ignored).

        Raises
        ------
        ValueError, TypeError
            NaN/inf, bad labels, all labels in one class (the reference only; the private estimators
            fit one-class labels like their neighbours), shape mismatch, n < d, lam < 0.
        """
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
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
        self.report_ = _nonprivate_report(
            GLM_METHOD_NAMES["non-private"], n, d, lam, kappa_raw=_gram_kappa(Xa),
            frac_truncated=0.0, n_iter=it, converged=ok, extra={"family": "logistic"},
        )
        return self


#: PMTLogistic's ``whiten`` options.
WHITEN = ("auto", "full", "standardize")


def choose_whitening(whiten: str, *, d: int, n: int, eta: float, epsilon: float, delta: float, n_steps: int,
                     fit_intercept: bool = True) -> tuple[str, float]:
    """The coordinates PMTLogistic's noisy Newton runs in, and the public noise-dominance ratio behind the choice.

    ``ratio = 2 sqrt(d) sigma_H / (1/4)``: the Hessian noise of one step (``sigma_H = sqrt(2) R^2 / (4 n mu_0)``,
    ``mu_0 = mu / sqrt(2T)``) against the curvature of the fully whitened problem at 0 (``b''(0) I = I / 4``);
    d, n, eta, the budget and T only, so the choice costs no privacy. ``"auto"`` gives ``"full"`` (the paper's
    whitening) when ``ratio < 1/2`` and ``"standardize"`` otherwise (and ``"full"`` without an intercept column).

    Why: when the Hessian noise dominates, the eigenvalue floor (about ``2 sqrt(d) sigma_H``) sets every step, and
    noisy Newton is a small noisy gradient step. Its gradient noise is isotropic in the coordinates of the release.
    In fully whitened coordinates every direction carries unit public variance, so the noise hurts predictions
    equally in all of them, while on collinear features the signal lives in the few high-variance directions
    (breast cancer: public kappa 1.3e5 after standardising, test AUC 0.64 at epsilon 1 against DP-Newton's 0.97).
    Standardised coordinates (centre and scale by the public mean and sd, no decorrelation) keep the rows at the
    same radius R (``E||z||^2 = d``) and put the noise where the public variance says it matters least. With
    conditioning the whitening's gain, and a noise-dominated Hessian nothing to condition, the whitening only
    pays when the ratio is small.
    """
    if whiten not in WHITEN:
        raise ValueError(f"whiten must be one of {WHITEN}, got {whiten!r}")
    mu = P.gdp_mu(epsilon, delta) if math.isfinite(epsilon) else math.inf
    if not math.isfinite(mu):
        ratio = 0.0
    else:
        R = pmt_radius(d, n, eta)
        # the Hessian noise scale the fit will use: the certified sensitivity and the rounded budget split
        s_H = P.gaussian_sigma(certified_newton_sensitivities(R, n, d)[1], P.split_mu(mu, 2 * n_steps))
        ratio = 2.0 * math.sqrt(d) * s_H / 0.25
    if whiten == "auto":
        whiten = "standardize" if ratio >= 0.5 and fit_intercept else "full"
    return whiten, float(ratio)


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
        (negative, positive) labels, given by the user; never inferred from the data. The private labels
        need not hold both classes (a one-class sample fits like its neighbour: nothing branches on it).
    neighbouring : {"replace-one"}, default "replace-one"
        The only relation offered: n is public under replace-one; add/remove is not offered because n
        enters R(d, n), B_y(n), averages and the noise scale (any other value raises ``ValueError``).
    fit_intercept, penalize_intercept : bool
    on_singular : {"regularize", "raise"}
    eig_floor : "auto" or float, default "auto"
        Absolute floor on the noisy whitened Hessian's eigenvalues: ``max(1e-3, 2 sqrt(d) sigma_H)`` or the
        given value (:func:`newton_eig_floor`; module docstring). ``report_.eig_floor`` holds the value used.
    tol : float, default 0.25
        Convergence-flag tolerance (relative last step).
    whiten : {"auto", "full", "standardize"}, default "auto"
        The coordinates of the noisy Newton: ``"full"`` the paper's whitening with the public moment;
        ``"standardize"`` centring and scaling by the public mean and sd only; ``"auto"``: with public labels
        ``y_pub``, the option with the higher cross-fitted public AUC of a simulated release
        (:mod:`engine.pmt.whiten_choice`); without them, full unless the public noise-dominance ratio of the
        Hessian release is >= 1/2 (:func:`choose_whitening`, which says why). Public quantities only.
        ``report_.extra["whiten"]`` holds the choice, ``report_.extra["whiten_rule"]`` how it was made.
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
    coef_, intercept_, theta_, theta_tilde_, eig_floor_ (the floor used),
    report_ (:class:`engine.pmt.FitReport`: noise scales,
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

    _public_family = "logistic"

    def __init__(self, *, epsilon=1.0, delta=1e-5, lam=1e-3, n_steps=5, eta=0.05, classes=(0, 1),
                 neighbouring="replace-one", fit_intercept=True, penalize_intercept=False, on_singular="regularize",
                 eig_floor=DEFAULT_NEWTON_EIG_FLOOR, tol=DEFAULT_CONV_TOL, whiten="auto", random_state=None,
                 sampler="numpy"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit DP-PMTLR.

        Parameters
        ----------
        X : array-like of shape (n, p)
        y : array-like of shape (n,)
            Labels, each one of ``classes``.
        X_pub : array-like of shape (n_pub, p), PublicInfo or PublicMoment
            Public features (required), a :class:`engine.pmt.public_info.PublicInfo` (labelled rows,
            unlabelled rows or a published moment) or a :class:`engine.pmt.PublicMoment`. Rows and a
            ``PublicInfo`` go through :func:`engine.pmt.public_fit.fit_public`: a column the public rows never
            span (zero public variance) is dropped with an ``UnspannedWarning`` and gets coefficient 0.
        y_pub : array-like of shape (n_pub,), optional
            Public labels (each one of ``classes``). Used only by ``whiten="auto"``, which then picks the
            coordinates by simulating the release on the labelled public rows
            (:func:`engine.pmt.whiten_choice.simulate_whitening`; public information only); without them the
            public ratio rule of :func:`choose_whitening` decides. The fit itself uses only the public features.

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            Before any noise: NaN/inf, labels outside ``classes``, n < d, n_pub < 1,
            lam < 0, epsilon <= 0, delta outside (0, 1), n_steps < 1, unknown options.
        """
        if _public_info_path(X_pub):  # rows or published moments: columns never spanned are dropped, with a warning
            info = _as_public_info(X_pub)
            rows, labels = (info.X_pub, info.y_pub) if y_pub is None else (info.X_pub, y_pub)
            # the labelled public rows, read by the inner fit's whiten="auto" (public information only)
            self._whiten_public = None if rows is None or labels is None else (rows, labels)
            try:
                return fit_public(self, X, y, info, stacklevel=3)
            finally:
                del self._whiten_public
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
        eps, dlt, nb, lam, eta, T, eig_floor, tol = self._newton_params()
        _check_on_singular(self.on_singular)
        if self.whiten not in WHITEN:
            raise ValueError(f"whiten must be one of {WHITEN}, got {self.whiten!r}")
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept, need_X_pub=True,
                                                 label_fn=self._labels)
        mom = Xq if isinstance(Xq, PublicMoment) else public_moment(Xq, fit_intercept=self.fit_intercept,
                                                                    on_singular=self.on_singular)
        from engine.pmt.whiten_choice import auto_whitening

        rows, yq = getattr(self, "_whiten_public", None) or (None, None)
        if not isinstance(Xq, PublicMoment) and y_pub is not None:
            rows, yq = Xq, y_pub
        if rows is not None and np.ndim(rows) == 2 and np.shape(rows)[1] > p:
            rows = np.asarray(rows, dtype=float)
            rows = rows[:, np.ptp(rows, axis=0) > 0]  # the columns fit_public dropped (zero public variance)
        if self.whiten == "auto" and yq is not None and np.shape(rows) == (np.shape(yq)[0], p):
            # public labels (never private ones) let "auto" simulate both coordinate systems on the public rows
            yq = check_binary_labels(yq, np.shape(rows)[0], classes=self.classes, name="y_pub", require_both=False)
        else:
            rows = yq = None
        rule = choose_whitening(self.whiten, d=d, n=n, eta=eta, epsilon=eps, delta=dlt, n_steps=T,
                                fit_intercept=self.fit_intercept)
        whiten, ratio, sim = auto_whitening(self.whiten, rule, moment=mom, X_pub=rows, y_pub01=yq,
                                            n=n, epsilon=eps, delta=dlt, eta=eta, lam=lam, n_steps=T,
                                            eig_floor=eig_floor, tol=tol, fit_intercept=self.fit_intercept,
                                            penalize_intercept=self.penalize_intercept)
        if whiten == "standardize":
            mom = standardizing_moment(mom)
        tr, S_is, pen = self._pmt_whiten(Xp, mom, eta, lam, d)
        extra = {"family": "logistic", "whiten": whiten, "whitened_noise_dominance": ratio,
                 "whiten_rule": "ratio" if sim is None else "simulated"}
        if sim is not None:
            extra["whiten_public_auc"] = dict(sim.auc)
        res = self._fit_newton(tr.X_tilde, yv, pen, tr.radius, n, d, nb, dlt, eps, lam, T, eig_floor, tol,
                               **_pmt_report_fields(tr), report_min_eig=True, extra=extra,
                               public_curvature=0.25 * _whitened_public_min_eig(tr.moment))
        self._set_pmt_theta(res, S_is, tr, p)
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
    (others as in :class:`PMTLogistic`; ``random_state``: None = OS entropy, a fixed int is for
    simulation and reproducibility only and is mixed with the fit's settings)

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
                 eig_floor=DEFAULT_NEWTON_EIG_FLOOR, tol=DEFAULT_CONV_TOL, random_state=None, sampler="numpy"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Fit the raw-data noisy Newton. ``X_pub`` only feeds ``kappa_pub`` in the report.

        Raises
        ------
        ValueError, TypeError
            Before any noise (see :meth:`PMTLogistic.fit`).
        """
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
        eps, dlt, nb, lam, eta, T, eig_floor, tol = self._newton_params()
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept, need_X_pub=False,
                                                 label_fn=self._labels)
        Xa = self._with_intercept(Xp)
        C = self._clip_radius(Xa, d, n, eta)
        Xc, _, clipped = truncate_rows(Xa, C)
        n_pub, kpub = self._public_kappa(Xq)
        curv = math.nan if Xq is None else 0.25 * _raw_public_min_eig(Xq, self.fit_intercept)
        res = self._fit_newton(Xc, yv, 2.0 * lam * self._penalty_mask(d), C, n, d, nb, dlt, eps, lam, T, eig_floor, tol,
                               public_curvature=curv,
                               radius=C, n_pub=n_pub, kappa_raw=_gram_kappa(Xa), kappa_pub=kpub,
                               frac_truncated=float(np.mean(clipped)), report_min_eig=True, extra={"family": "logistic"})
        self._set_theta(res.theta[0], p)
        return self


class DPGDLogistic(_DPGDMixin, _LogisticBase):
    """Full-batch DP gradient descent for logistic regression with per-example clipping (PMT.md section 5).

    theta_0 = 0; T steps (default 100) of ``theta <- theta - step_size (mean clipped gradient + N(0, s_t^2 I)
    + 2 lam P theta)`` on the raw rows (intercept included); per-example gradients ``(s_i - y_i) x_i``
    clipped to L2 norm C; each step ``mu_t = mu / sqrt(T)``, ``s_t = 2C / (n mu_t)`` (replace-one, the
    only relation offered). See :func:`dp_gd_logistic_path`.

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
    (others as in :class:`PMTLogistic`; ``random_state``: None = OS entropy, a fixed int is for
    simulation and reproducibility only and is mixed with the fit's settings)

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
                 random_state=None, sampler="numpy"):
        _store_params(self, locals())

    def fit(self, X, y, X_pub=None, y_pub=None):
        """Run DP-GD for logistic regression. Raises ``ValueError``/``TypeError`` before any noise is drawn."""
        if is_dask(X, y):  # larger than memory: one pass over the chunks per step (engine.pmt._dask_glm)
            return fit_glm_out_of_core(self, X, y, X_pub, y_pub)
        eps, dlt, nb, lam, eta, T = self._dp_gd_params()
        Xp, yv, Xq, n, p, d = _validate_glm_data(X, y, X_pub, fit_intercept=self.fit_intercept,
                                                 need_X_pub=self.step_size is None, label_fn=self._labels)
        Xa = self._with_intercept(Xp)
        step = self._dp_gd_step_size(Xq, lambda lam_max: logistic_dp_gd_step_size(lam_max, lam))
        C = _resolve_bound(self.clip_norm, "clip_norm", public=lambda: pmt_radius(d, n, eta),
                           private=lambda: float(np.max(np.linalg.norm(Xa, axis=1))) or 1.0)
        return self._fit_dp_gd(dp_gd_logistic_path, Xa, yv, Xq, n, p, d, eps, dlt, nb, lam, T, step, C,
                               GLM_METHOD_NAMES["dp-gd"], extra={"family": "logistic"}, report_converged=True)


