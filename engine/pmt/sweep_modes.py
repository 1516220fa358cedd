"""PMT and its comparators in each kind of public information (labelled rows, unlabelled rows, published moments).

:func:`run_modes` fits the estimators themselves (:mod:`engine.pmt.ridge`, :mod:`engine.pmt.logistic`,
:mod:`engine.pmt.baselines`, :mod:`engine.pmt.pooled`, :mod:`engine.pmt.public`) once per (method, epsilon,
seed) with ``random_state=numpy.random.default_rng(seed)``, given a :class:`engine.pmt.public_info.PublicInfo`,
and scores each on held-out private rows. What each mode offers (:data:`MODE_METHODS`):

- ``"labelled"``: every method; the public-only fit and PMT-pooled use the public labels;
- ``"unlabelled"`` and ``"moments"``: PMT and the private-only baselines (DP-RR, DP-GD; DP-Newton, DP-GD
  for logistic). The public-only fit and PMT-pooled are not offered: both need public labels.

Centring and bounds (public statistics only): ridge responses are centred by a public centre ``c`` (the
public mean of ``y_pub``, or the centre the user states) for **every** method, and the response bound
is ``B_y = s sqrt(1 + ln(2n/eta))`` with ``s`` the public root-mean-square of ``y - c`` (from the public
labels, or a scale the user states) unless the user gives ``response_bound`` itself. With
``standardize=True`` the features are centred and scaled by the public mean and standard deviation of
the information (rows or the moment's mean and covariance): :meth:`PublicInfo.standardized`.

Metrics (held-out rows, the prediction a user reads, beside the coefficient error):

- ridge: ``rmse`` and ``r2`` (``1 - SSE / SST`` around the test mean) on the test rows, and
  ``l2_error`` to the non-private ridge on the (centred) private training rows;
- logistic: ``auc`` (ROC AUC), ``accuracy``, ``log_loss``, ``l2_error`` to the non-private logistic fit;
  ``reference_converged`` is False when that fit has no finite optimum (separable data at lam = 0):
  its L2 errors then measure the distance to a diverging iterate and are flagged, never silently shown.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from engine.pmt.public_info import PUBLIC_MODES, PublicInfo, check_mode

__all__ = ["MODE_METHODS", "LABELLED_ONLY", "NOT_OFFERED_REASON", "DEFAULT_MODE_METHODS", "run_modes",
           "standardize_public", "simulate_public_info", "check_methods", "public_response_statement"]

#: Methods that need public labels (offered in mode "labelled" only).
LABELLED_ONLY = ("public-only", "pmt-pooled")
#: Why they are not offered without public labels (one line, shown by the CLI and the page).
NOT_OFFERED_REASON = ("public-only and PMT-pooled are not offered: both fit the public labels, and {what} carry none")
#: Methods per task and mode.
MODE_METHODS = {
    "ridge": {"labelled": ("pmt", "pmt-pooled", "dp-rr", "dp-gd", "public-only", "non-private"),
              "unlabelled": ("pmt", "dp-rr", "dp-gd", "non-private"),
              "moments": ("pmt", "dp-rr", "dp-gd", "non-private")},
    "logistic": {"labelled": ("pmt", "pmt-pooled", "dp-newton", "dp-gd", "public-only", "non-private"),
                 "unlabelled": ("pmt", "dp-newton", "dp-gd", "non-private"),
                 "moments": ("pmt", "dp-newton", "dp-gd", "non-private")},
}
DEFAULT_MODE_METHODS = MODE_METHODS
#: Display names.
NAMES = {"pmt": "PMT", "pmt-pooled": "PMT-pooled", "dp-rr": "DP-RR", "dp-gd": "DP-GD", "dp-newton": "DP-Newton",
         "public-only": "Public-only", "non-private": "Non-private"}


def check_methods(task: str, mode: str, methods) -> list[str]:
    """The methods to run (default: all offered); ``ValueError`` for one not offered in ``mode`` (the reason in one line)."""
    check_mode(mode)
    if task not in MODE_METHODS:
        raise ValueError(f"task must be one of {tuple(MODE_METHODS)}, got {task!r}")
    offered = MODE_METHODS[task][mode]
    if methods is None:
        return list(offered)
    out = [str(m) for m in methods]
    bad = [m for m in out if m not in offered]
    if bad:
        if any(m in LABELLED_ONLY for m in bad) and mode != "labelled":
            what = "unlabelled public rows" if mode == "unlabelled" else "published moments"
            raise ValueError(NOT_OFFERED_REASON.format(what=what) + f" (asked for {bad})")
        raise ValueError(f"task {task!r} in mode {mode!r} offers {list(offered)}; not {bad}")
    return out


def standardize_public(info: PublicInfo):
    """Public mean and standard deviation of the columns (denominator n_pub; 1 where the variance is 0)."""
    m = info.mean
    v = np.clip(np.diag(info.covariance), 0.0, None)
    s = np.sqrt(v)
    return m, np.where(s > 0, s, 1.0)


def _standardized_info(info: PublicInfo, m, s) -> PublicInfo:
    """``info`` for the features ``(x - m) / s`` (rows transformed, or the moment: ``T S T^T``)."""
    p = info.p
    T = np.zeros((p + 1, p + 1))
    T[:p, :p] = np.diag(1.0 / s)
    T[:p, p] = -m / s
    T[p, p] = 1.0
    S = T @ info.second_moment @ T.T
    Xq = None if info.X_pub is None else (info.X_pub - m) / s
    from dataclasses import replace

    return replace(info, second_moment=(S + S.T) / 2.0, X_pub=Xq)


def simulate_public_info(X_pub, y_pub, mode: str, columns=None) -> PublicInfo:
    """The public information of a simulation: rows with labels, rows without, or their published moments.

    ``"moments"`` goes through the file format (:meth:`PublicInfo.to_dict`, then :meth:`PublicInfo.from_moments`
    with the covariance recomputed from it), so the published path is what is measured.
    """
    check_mode(mode)
    if mode == "labelled":
        return PublicInfo.from_rows(X_pub, y_pub, columns=columns)
    rows = PublicInfo.from_rows(X_pub, columns=columns)
    if mode == "unlabelled":
        return rows
    d = rows.to_dict()
    return PublicInfo.from_moments(columns=d["columns"], n_pub=d["n_pub"], mean=d["mean"],
                                   second_moment=d["second_moment"], source="published moments (simulated)")


def public_response_statement(y_pub) -> tuple[float, float]:
    """``(centre, scale)``: the public mean of y and the RMS of ``y - centre``, as a data provider could publish."""
    y = np.asarray(y_pub, dtype=float)
    c = float(np.mean(y))
    return c, float(np.sqrt(np.mean((y - c) ** 2)))


def _ridge_methods(methods, base, B_y, lam, steps, clip_radius=None):
    from engine.pmt import DPGDRidge, DPRidge, PMTRidge
    from engine.pmt.pooled import PMTPooledRidge

    make = {"pmt": lambda: PMTRidge(**base, lam=lam, response_bound=B_y),
            "pmt-pooled": lambda: PMTPooledRidge(**base, lam=lam),
            "dp-rr": lambda: DPRidge(**base, lam=lam, response_bound=B_y, clip_radius=clip_radius),
            "dp-gd": lambda: DPGDRidge(**base, lam=lam, response_bound=B_y, n_steps=steps)}
    return {m: make[m] for m in methods if m in make}


def _logistic_methods(methods, base, lam, steps, newton_steps, clip_radius=None):
    from engine.pmt import DPGDLogistic, DPNewtonLogistic, PMTLogistic

    from engine.pmt.pooled_logistic import PMTPooledLogistic

    make = {"pmt": lambda: PMTLogistic(**base, lam=lam, n_steps=newton_steps),
            "pmt-pooled": lambda: PMTPooledLogistic(**base, lam=lam, n_steps=newton_steps),
            "dp-newton": lambda: DPNewtonLogistic(**base, lam=lam, n_steps=newton_steps, clip_radius=clip_radius),
            "dp-gd": lambda: DPGDLogistic(**base, lam=lam, n_steps=steps)}
    return {m: make[m] for m in methods if m in make}


def _auc(scores, y):
    from engine.pmt.sweep_logistic import roc_auc_columns

    return float(roc_auc_columns(np.asarray(scores, dtype=float)[:, None], np.asarray(y))[0])


def run_modes(X, y, X_test, y_test, info: PublicInfo, *, task: str = "ridge", methods=None, epsilons=(1.0,),
              seeds=10, lam: float = 1e-3, delta: float = 1e-5, eta: float = 0.05, standardize: bool = False,
              response_center=None, response_scale=None, response_bound=None, dp_gd_steps: int = 100,
              newton_steps: int = 5, unspanned: str = "drop", clip_radius=None):
    """Fit every method on private ``(X, y)`` with public information ``info``; score on ``(X_test, y_test)``.

    Parameters
    ----------
    X, X_test : ndarray of shape (n, p), (n_test, p)
        Private training and held-out rows, columns in ``info.columns`` order.
    y, y_test : ndarray
        Responses (ridge) or 0/1 labels (logistic).
    info : PublicInfo
    task : {"ridge", "logistic"}
    methods : list of str, optional
        Default: all offered in ``info.mode`` (:data:`MODE_METHODS`); one not offered raises ``ValueError``.
    epsilons : sequence of float
    seeds : int or sequence of int
    lam, delta, eta : float
    standardize : bool
        Centre and scale the features by the public mean and standard deviation of ``info``.
    response_center, response_scale, response_bound : float, optional
        Ridge: a stated public centre of y, a stated RMS of ``y - centre``, or the bound ``B_y`` itself.
        Without public labels a scale or a bound is required (never taken from the private rows).
    dp_gd_steps, newton_steps : int
    unspanned : {"drop", "regularize"}
        PMT's treatment of columns the public information never spans (:func:`engine.pmt.public_fit.fit_public`).
    clip_radius : float, optional
        The private-only baselines' row radius C (DP-RR; DP-Newton for logistic), a user value in the units of
        the rows they clip (publicly standardised for DP-RR); None: the public formula ``sqrt(d (1 + ln(2n/eta)))``.

    Returns
    -------
    pandas.DataFrame
        One row per (method, epsilon, seed): ``method, method_key, epsilon, seed, mode, l2_error`` and
        ``rmse, r2`` (ridge) or ``auc, accuracy, log_loss, reference_converged`` (logistic), ``converged``,
        ``noise_dominance`` (noisy Newton), ``dropped_columns``, ``B_y``, ``response_center``.

    Raises
    ------
    ValueError
        Before any noise: methods not offered, a ridge without public labels and without a stated
        scale or bound, shapes that do not match ``info``.
    """
    import pandas as pd

    from engine.pmt import LogisticReference, RidgeReference
    from engine.pmt.public_fit import fit_public

    methods = check_methods(task, info.mode, methods)
    X, X_test = np.asarray(X, dtype=float), np.asarray(X_test, dtype=float)
    y, y_test = np.asarray(y, dtype=float), np.asarray(y_test, dtype=float)
    if X.shape[1] != info.p or X_test.shape[1] != info.p:
        raise ValueError(f"the private rows have {X.shape[1]} columns but the public information has {info.p}")
    seeds = list(range(int(seeds))) if isinstance(seeds, (int, np.integer)) else [int(s) for s in seeds]
    if standardize:
        m, s = standardize_public(info)
        X, X_test, info = (X - m) / s, (X_test - m) / s, _standardized_info(info, m, s)
    n = X.shape[0]
    c, B_y = 0.0, math.nan
    if task == "ridge":
        if response_center is not None:
            c = float(response_center)
        elif info.y_pub is not None:
            c = float(np.mean(info.y_pub))
        if response_bound is not None:
            B_y = float(response_bound)
        else:
            if response_scale is None:
                if info.y_pub is None:
                    raise ValueError("without public labels give a stated response scale (RMS of y - centre) or bound "
                                     "(--response-scale / --response-bound); it is never taken from the private rows")
                response_scale = float(np.sqrt(np.mean((info.y_pub - c) ** 2)))
            B_y = float(response_scale) * math.sqrt(1.0 + math.log(2.0 * n / eta))
        y, y_test = y - c, y_test - c
    yq = None if info.y_pub is None else (info.y_pub - c if task == "ridge" else info.y_pub)
    Xq = info.X_pub if info.X_pub is not None else info.public_moment()
    base = {"delta": delta, "eta": eta}
    if task == "ridge":
        ref = RidgeReference(lam=lam).fit(X, y)
        ref_ok = True
        makers = _ridge_methods(methods, base, B_y, lam, dp_gd_steps, clip_radius)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            # the private training labels may hold one class (a private fact: the run must not fail for one
            # neighbour only); the non-private reference then fits them as they are (diagnostic only)
            ref = _AnyLabelsReference(lam=lam).fit(X, y)
        ref_ok = bool(ref.converged_)
        makers = _logistic_methods(methods, base, lam, dp_gd_steps, newton_steps, clip_radius)
    rows = []

    def score(key, est, eps, seed):
        theta = est.theta_
        r = {"method": NAMES[key], "method_key": key, "epsilon": float(eps), "seed": int(seed), "mode": info.mode,
             "l2_error": float(np.linalg.norm(theta - ref.theta_)), "B_y": B_y, "response_center": c,
             "n": n, "n_pub": info.n_pub, "lam": lam}
        u = X_test @ est.coef_ + est.intercept_
        if task == "ridge":
            sse = float(np.sum((y_test - u) ** 2))
            r["rmse"] = math.sqrt(sse / len(y_test))
            r["r2"] = 1.0 - sse / float(np.sum((y_test - y_test.mean()) ** 2))
        else:
            r["auc"] = _auc(u, y_test)
            r["accuracy"] = float(np.mean((u > 0) == (y_test > 0.5)))
            r["log_loss"] = float(np.mean(np.logaddexp(0, u) - y_test * u))
            r["reference_converged"] = ref_ok
        rep = getattr(est, "report_", None)
        extra = getattr(rep, "extra", {}) or {}
        r["converged"] = getattr(rep, "converged", None)
        r["noise_dominance"] = extra.get("noise_dominance", math.nan)
        r["dropped_columns"] = ",".join(extra.get("dropped_columns", []))
        return r

    for key in methods:
        if key == "non-private":
            for eps in epsilons:
                rows += [score(key, ref, eps, s) for s in seeds]
            continue
        if key == "public-only":
            from engine.pmt.public import PublicOnlyLogistic, PublicOnlyRidge

            cls = PublicOnlyRidge if task == "ridge" else PublicOnlyLogistic
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                est = cls(lam=lam).fit(X, None, info.X_pub, yq)
            for eps in epsilons:
                rows += [score(key, est, eps, s) for s in seeds]
            continue
        for eps in epsilons:
            for s in seeds:
                est = makers[key]()
                est.set_params(epsilon=eps, random_state=np.random.default_rng(s))
                if key == "pmt":
                    fit_public(est, X, y, _with_labels(info, yq), unspanned=unspanned,
                               response_center=0.0 if task == "ridge" else None)
                elif key == "pmt-pooled":
                    est.fit(X, y, info.X_pub, yq)
                else:
                    est.fit(X, y, Xq, yq if key != "dp-newton" else None)
                rows.append(score(key, est, eps, s))
    return pd.DataFrame(rows)


def _with_labels(info: PublicInfo, yq):
    """``info`` with its labels replaced by ``yq`` (the centred public responses), mode unchanged."""
    from dataclasses import replace

    return info if yq is None else replace(info, y_pub=np.asarray(yq, dtype=float))


def summarize_modes(frame, metric: str):
    """Median, q25, q75 of ``metric`` per (mode, method, epsilon), with the L2 median beside it."""
    keys = ["mode", "method", "epsilon"]
    order = {m: i for i, m in enumerate(frame["method"].unique())}
    g = frame.groupby(keys, sort=False)
    out = g.agg(median=(metric, "median"), q25=(metric, lambda v: v.quantile(0.25)),
                q75=(metric, lambda v: v.quantile(0.75)), l2_median=("l2_error", "median"),
                seeds=("seed", "size")).reset_index()
    if "reference_converged" in frame:
        out["reference_converged"] = g["reference_converged"].all().values
    out["metric"] = metric
    return out.sort_values(keys, key=lambda s: s.map(order) if s.name == "method" else s, kind="stable").reset_index(drop=True)


__all__ += ["summarize_modes", "NAMES", "PUBLIC_MODES"]



def _AnyLabelsReference(*, lam):
    """The non-private logistic reference of a sweep, fitted on private training labels of one class too (a
    one-class sample has no finite optimum at lam = 0: not converged, flagged, a diagnostic only)."""
    from engine.pmt.logistic import LogisticReference, check_binary_labels

    class AnyLabels(LogisticReference):
        def _labels(self, y, n):
            return check_binary_labels(y, n, classes=self.classes, require_both=False)

    return AnyLabels(lam=lam)
#: Public names of the helpers the dashboard's view of the modes reuses (one fit per method at the view's epsilon).
standardized_info = _standardized_info
ridge_methods = _ridge_methods
logistic_methods = _logistic_methods
with_labels = _with_labels
__all__ += ["standardized_info", "ridge_methods", "logistic_methods", "with_labels"]
