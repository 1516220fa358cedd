"""What the PMT page computes, without Streamlit: data preparation, sweep specs, exports.

The page (``app_pages/pmt.py``) wraps these in ``st.cache_data``; everything DP is done by the engine
(:func:`engine.pmt.sweep.run_sweep`, the estimators' ``report_`` and their privacy ledgers). This
module only assembles arguments, reshapes results and formats exports, so it can be tested
without a browser.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.figures.report import fmt_ratio  # noqa: F401  (the page formats "PMT / best baseline" with it)
from ui.pmt.compute.advice import (  # noqa: F401 - re-exported: the advice moved to its own room
    PAGE_TERMS, advisories, crossover_note, in_page_terms, n_needed, noise_banner, page_warnings, plan_for,
    plan_response,
)


# The view's choice (and the one "derived from an upload?" answer) is a leaf of its own; re-exported here.
from ui.pmt.compute.view import UPLOAD_KINDS, Choice, dumps  # noqa: E402,F401

# The task and method catalogue is a leaf of its own (the modes module reads it too); re-exported here.
from ui.pmt.compute.catalogue import (  # noqa: E402,F401
    DATA_TASKS,
    DEFAULT_METHODS,
    DEFAULT_PUBLIC_SHARE,
    ENGINE_TASKS,
    METHODS,
    METRICS_BY_TASK,
    PRIVATE_BASELINES,
    TASK_LABELS,
    TEST_SIZE,
)


def default_n_pub(n_rows: int, cap: int = 200) -> int:
    """Default public sample size for a data set of ``n_rows`` rows: ``min(cap, 20 % of the rows)``, >= 1.

    Examples
    --------
    >>> default_n_pub(500), default_n_pub(9568), default_n_pub(3)
    (100, 200, 1)
    """
    return max(1, min(int(cap), int(DEFAULT_PUBLIC_SHARE * int(n_rows))))


def majority_class_accuracy(prep: PreparedData) -> tuple[int, float]:
    """(the public sample's majority label, its accuracy on the held-out test rows).

    The label is chosen from the **public** rows (no privacy cost, no branch on private data); its
    accuracy is measured on the same held-out rows as every method's accuracy (an evaluation, like
    theirs). Drawn on accuracy plots: a method is only useful above this line.

    Examples
    --------
    >>> p = PreparedData(*[np.zeros((1, 1))] * 2, np.zeros((3, 1)), np.array([1.0, 1.0, 0.0]), np.zeros((1, 1)),
    ...                  np.zeros(1), np.zeros((4, 1)), np.array([1.0, 1.0, 1.0, 0.0]), True, False, None, 8, 1, 3, 1, "")
    >>> majority_class_accuracy(p)
    (1, 0.75)
    """
    label = int(np.mean(prep.y_pub) >= 0.5)
    return label, float(np.mean(prep.y_test == label))


def no_data_reference(prep: PreparedData, spec: dict, metric: str) -> tuple[float, str] | None:
    """The headline metric of a prediction that uses no private data, and its name; None where none applies.

    RMSE: predicting the public mean of y (or, without public labels, the centre the user stated, else 0) for
    every test row; AUC: 0.5 (a constant score); log-loss: the public base rate's. Public information only,
    evaluated on the same held-out rows as every method (an evaluation, like theirs).

    Examples
    --------
    >>> p = PreparedData(*[np.zeros((1, 1))] * 2, np.zeros((2, 1)), np.array([1.0, 3.0]), np.zeros((1, 1)),
    ...                  np.zeros(1), np.zeros((2, 1)), np.array([0.0, 4.0]), True, False, None, 4, 1, 2, 1, "")
    >>> no_data_reference(p, {"task": "regression"}, "rmse")
    (2.0, 'predicting the public mean')
    """
    y_test = np.asarray(prep.y_test, dtype=float)
    if y_test.size == 0:
        return None
    y_pub = None if prep.y_pub is None else np.asarray(prep.y_pub, dtype=float)
    has_labels = y_pub is not None and y_pub.size > 0 and spec.get("public_mode", "labelled") == "labelled"
    if metric == "rmse" and spec.get("task") == "regression":
        if has_labels:
            c, label = float(np.mean(y_pub)), "predicting the public mean"
        else:
            c = float(spec.get("response_center") or 0.0)
            label = "predicting the stated centre" if spec.get("response_center") is not None else "predicting 0"
        return float(np.sqrt(np.mean((y_test - c) ** 2))), label
    if metric == "auc":
        return 0.5, "a constant score"
    if metric == "log_loss" and has_labels:
        p = float(np.clip(np.mean(y_pub), 1e-6, 1 - 1e-6))
        return float(-np.mean(y_test * np.log(p) + (1 - y_test) * np.log(1 - p))), "the public base rate"
    return None


def methods_for(task: str) -> list[str]:
    """Display names of the methods the engine registers for a page task (registration order)."""
    from engine.pmt import sweep as E

    engine_task = ENGINE_TASKS[task]
    names = [s.name for (t, _k), s in E.METHODS.items() if t == engine_task]
    return names or (list(METHODS) if task == "regression" else [])


def default_methods(task: str) -> list[str]:
    """The default selection for a page task, restricted to what the engine offers."""
    avail = methods_for(task)
    return [m for m in DEFAULT_METHODS.get(task, avail) if m in avail] or avail

#: Spec keys copied from session state, with their types.
SPEC_KEYS = {
    "data": str, "epsilon": float, "delta": float, "lam": float, "n_pub": int, "eta": float, "seeds": int,
    "clip_radius": float, "methods": list, "standardize": bool, "public_source": str,
    "split_seed": int, "synthetic_kappa": float, "response": str,
}


#: Metrics measured against the non-private fit (whose own value is 0 by definition).
REFERENCE_IS_TARGET = ("l2_error", "rel_error", "excess_risk")


def ledger_display(frame: pd.DataFrame) -> pd.DataFrame:
    """The engine's ledger frame with numbers as compact strings ("" where a value does not apply).

    Examples
    --------
    >>> f = pd.DataFrame({"name": ["A", "total (composed)"], "sensitivity": [2.0, float("nan")],
    ...                   "sigma": [4.0, float("nan")], "mu": [0.5, 0.5], "neighbouring": ["replace-one"] * 2,
    ...                   "epsilon": [2.1, 2.1], "delta": [1e-5, 1e-5]})
    >>> ledger_display(f)["sensitivity"].tolist()
    ['2', '']
    """
    out = frame.copy()
    for c in ("sensitivity", "sigma", "mu", "epsilon", "delta"):
        if c in out.columns:
            out[c] = [("" if (v is None or (isinstance(v, float) and math.isnan(v))) else
                       ("inf" if isinstance(v, float) and math.isinf(v) else f"{float(v):.4g}")) for v in out[c]]
    return out


def supported_tasks() -> list[str]:
    """Page tasks the engine supports: the tasks registered in :mod:`engine.pmt.sweep` (ridge at least)."""
    from engine.pmt import sweep

    sup = tuple(sweep.TASKS)
    out = [t for t, e in ENGINE_TASKS.items() if e in sup or t in sup]
    return out or ["regression"]


def metrics_for(task: str) -> list[str]:
    """Metric columns offered for a page task."""
    return list(METRICS_BY_TASK.get(task, METRICS_BY_TASK["regression"]))


def _coerce(value, typ):
    if typ is list:
        return list(value)
    if typ is int:
        if isinstance(value, bool):
            raise TypeError(f"expected an integer, got {value!r}")
        f = float(value)
        if not math.isfinite(f) or f != int(f):
            raise ValueError(f"expected a whole number, got {value!r}")
        return int(f)
    if typ is float:
        return float(value)
    if typ is bool:
        return bool(value)
    return str(value)


def spec_from_state(state, *, task: str) -> dict:
    """The page's settings as a plain, JSON-serialisable dict (the cache key and the export).

    Raises
    ------
    ValueError
        No method selected; ``seeds`` or ``n_pub`` not whole numbers.
    """
    from ui.common.settings import DEFAULTS

    spec = {"task": task}
    for key, typ in SPEC_KEYS.items():
        default = DEFAULTS.get(key, {"synthetic_kappa": 1e3, "data": DEFAULTS["dataset_name"]}.get(key))
        value = state.get(key, default)
        try:
            spec[key] = _coerce(value, typ)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{key} = {value!r} is not valid: {exc}") from None
    spec["methods"] = [m for m in methods_for(task) if m in spec["methods"]]
    if not spec["methods"]:
        raise ValueError("methods: select at least one method to compare")
    return spec


@dataclass(frozen=True, eq=False)
class PreparedData:
    """The data a sweep runs on, and the split the diagnostics use.

    Attributes
    ----------
    X, y : ndarray
        All rows of the chosen data set, unstandardised (random-split mode: ``run_sweep`` draws the
        public sample and the test rows itself from ``split_seed``).
    X_pub, y_pub : ndarray
        The public rows actually used at the chosen ``n_pub`` (standardised if asked).
    X_train, y_train, X_test, y_test : ndarray
        Private training rows and held-out test rows, exactly as ``run_sweep`` forms them
        (:data:`TEST_SIZE` of the private rows held out with ``default_rng([split_seed, 1])``).
    public_is_split : bool
        True for a random split (a simulation), False for a separate public file.
    standardize : bool
    public_raw : tuple (X_pub, y_pub) or None
        The separate public file as given (unstandardised), for ``run_sweep(public_data=...)``.
    n_total, d, n_pub, n_priv : int
        Rows of the data set, features, public rows, private training rows.
    key : str
        Fingerprint of the prepared arrays (part of the cache key).
    """

    X: np.ndarray
    y: np.ndarray
    X_pub: np.ndarray
    y_pub: np.ndarray
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    public_is_split: bool
    standardize: bool
    public_raw: tuple | None
    n_total: int
    d: int
    n_pub: int
    n_priv: int
    key: str


def data_key(ds, public_ds, spec: dict) -> str:
    """Cache key of the data: the data set's fingerprint (+ the public file's)."""
    fp = ds.fingerprint()
    if public_ds is not None:
        fp += "+" + public_ds.fingerprint()
    return fp


def prepare(ds, public_ds=None, *, standardize: bool, n_pub: int, split_seed: int, task: str = "regression") -> PreparedData:
    """Arrays for the sweeps, and the split the diagnostics use (the very rows the sweep uses).

    The split comes from :func:`engine.pmt.sweep.sweep_split` (random split of ``n_pub`` public rows
    with ``split_seed``, or the separate public file; public-only standardisation of the features and
    centring of y for regression only, as ``run_sweep`` does; :data:`TEST_SIZE` of the private rows held
    out).

    Raises
    ------
    ValueError, TypeError
        From the engine: ``n_pub`` outside ``1..n-1``, non-numeric data, mismatched columns.
    """
    from engine.pmt.sweep import sweep_split

    X, y = ds.to_numpy()
    public = None if public_ds is None else public_ds.to_numpy()
    if public is None and (isinstance(n_pub, bool) or int(n_pub) != n_pub):
        raise TypeError(f"n_pub must be a whole number, got {n_pub!r}")
    Xq, yq, Xp, yp, Xt, yt = sweep_split(X, y, n_pub=None if public is not None else int(n_pub),
                                         split_seed=int(split_seed), test_size=TEST_SIZE,
                                         standardize=bool(standardize), public_data=public,
                                         center_y=bool(standardize) and task == "regression")
    h = hashlib.sha256()
    for arr in (Xq, yq, Xp, yp):
        h.update(np.ascontiguousarray(arr).tobytes())
    return PreparedData(
        X=X, y=y, X_pub=Xq, y_pub=yq, X_train=Xp, y_train=yp, X_test=Xt, y_test=yt,
        public_is_split=public is None, standardize=bool(standardize), public_raw=public, n_total=int(len(y)), d=int(X.shape[1]),
        n_pub=int(len(yq)), n_priv=int(len(yp)), key=h.hexdigest()[:12],
    )


#: Which spec key each sweep kind varies (dropped from that sweep's cache key).
SWEEP_VARIES = {"epsilon": "epsilon", "lam": "lam", "n_pub": "n_pub"}


def sweep_spec(spec: dict, kind: str, values) -> dict:
    """The spec of one sweep: ``kind`` in {"epsilon", "lam", "n_pub"} over ``values``.

    The swept setting is removed from the spec, so the cache key of e.g. the epsilon grid does not
    change when the chosen epsilon moves (moving the slider re-runs only what depends on it).
    """
    out = {k: v for k, v in spec.items() if k != SWEEP_VARIES[kind]}
    out["sweep"] = kind
    out["values"] = [float(v) if kind != "n_pub" else int(v) for v in values]
    return out


def _sweep_kwargs(spec: dict) -> dict:
    kind = spec["sweep"]
    vals = spec["values"]
    return dict(
        task=ENGINE_TASKS[spec["task"]], methods=list(spec["methods"]), seeds=int(spec["seeds"]),
        epsilons=vals if kind == "epsilon" else [spec["epsilon"]],
        lams=vals if kind == "lam" else [spec["lam"]],
        delta=spec["delta"], eta=spec["eta"],
        clip_radius=(spec["clip_radius"] if spec["clip_radius"] != 0 else None), test_size=TEST_SIZE,
        task_options={"response": spec.get("response", "auto")} if spec["task"] == "regression" else None,
    )


def upload_kinds(spec: dict) -> list[str]:
    """Which uploads (:data:`UPLOAD_KINDS`) the view's ``spec`` is derived from: :attr:`Choice.upload_kinds
    <ui.pmt.compute.view.Choice.upload_kinds>`, the one encoding every "is this an upload?" decision reads.

    Examples
    --------
    >>> upload_kinds({"data": "upload:x.csv"}), upload_kinds({"data": "bank", "public_features": {"n_pub": 3}})
    (['data'], ['features-only public file'])
    """
    return list(Choice(spec).upload_kinds)


def uses_upload(spec: dict) -> bool:
    """True when the view is derived from an uploaded file of any kind: :attr:`Choice.is_upload
    <ui.pmt.compute.view.Choice.is_upload>` of ``spec``.

    Examples
    --------
    >>> uses_upload({"data": "upload:x.csv", "public_source": "split"}), uses_upload({"data": "bank"})
    (True, False)
    """
    return Choice(spec).is_upload


def sweep(data: PreparedData, spec: dict) -> pd.DataFrame:
    """Run one sweep with BLAS limited to one thread (see :func:`_sweep`).

    Bundled data: the engine keeps the split's own quantities between sweeps
    (:mod:`engine.pmt.memo`), so moving epsilon or lam recomputes only the noisy runs. Uploads
    (:func:`uses_upload`) are swept without it: nothing derived from them outlives the session's own memo.
    """
    import contextlib

    from threadpoolctl import threadpool_limits

    from engine.pmt import memo as split_memo

    # Multi-threaded BLAS on the n x d by d x runs products of DP-GD is up to 40x slower on a busy
    # 2-core machine (thread oversubscription); one thread per session is also fairer to other users.
    keep = contextlib.nullcontext() if not Choice(spec).is_upload else split_memo.bypass()
    with threadpool_limits(limits=1, user_api="blas"), keep:
        return _sweep(data, spec)


def _sweep(data: PreparedData, spec: dict) -> pd.DataFrame:
    from engine.pmt import sweep as E

    if spec.get("public_mode", "labelled") != "labelled":  # no public labels: the engine's mode path
        from ui.pmt.compute.modes import mode_sweep

        return mode_sweep(data, spec)

    kw = _sweep_kwargs(spec)
    kind = spec["sweep"]
    if data.public_is_split:
        n_pubs = spec["values"] if kind == "n_pub" else [spec["n_pub"]]
        frame = E.run_sweep((data.X, data.y), n_pubs=[int(v) for v in n_pubs], standardize=data.standardize,
                            split_seed=int(spec["split_seed"]), **kw)
    else:
        if kind == "n_pub":
            raise ValueError("n_pub cannot be swept with a separate public file (its size is the file's length)")
        public = data.public_raw
        frame = E.run_sweep((data.X, data.y), public_data=public, standardize=data.standardize,
                            split_seed=int(spec["split_seed"]), **kw)
    frame = frame.copy()
    frame["sweep"] = kind
    return frame


def merge_eps(grid: pd.DataFrame, point: pd.DataFrame) -> pd.DataFrame:
    """The coarse epsilon sweep plus the chosen-epsilon point (duplicates dropped)."""
    out = pd.concat([grid, point[~point["epsilon"].isin(grid["epsilon"].unique())]], ignore_index=True)
    return out


def summarize(frame: pd.DataFrame, metric: str, by: str) -> pd.DataFrame:
    """Median and quantile bands per (method, ``by``) via :func:`engine.pmt.sweep.summarize`."""
    from engine.pmt.sweep import summarize as _summarize

    return _summarize(frame, metric=metric)


def pmt_vs_best(head: pd.DataFrame, *, lower_better: bool = True):
    """(PMT median / best baseline median, baseline name), or None.

    Baselines: the private-only methods and the public-only fit (:data:`PRIVATE_BASELINES`). The oracle
    DP-RR (non-private tuning) and the non-private reference are excluded.

    Examples
    --------
    >>> h = pd.DataFrame({"method": ["PMT", "DP-RR", "DP-GD", "Non-private"], "median": [1.0, 4.0, 8.0, 0.0]})
    >>> pmt_vs_best(h)
    (0.25, 'DP-RR')
    >>> pmt_vs_best(pd.concat([h, pd.DataFrame({"method": ["Public-only"], "median": [0.5]})]))
    (2.0, 'Public-only')
    """
    if head.empty or "PMT" not in set(head["method"]):
        return None
    base = head[head["method"].isin(PRIVATE_BASELINES)]
    if base.empty:
        return None
    best = base.loc[base["median"].idxmin() if lower_better else base["median"].idxmax()]
    pmt = float(head.loc[head["method"] == "PMT", "median"].iloc[0])
    if float(best["median"]) == 0:
        return None
    return (pmt / float(best["median"]), str(best["method"]))


def diagnostics(data: PreparedData, spec: dict) -> dict:
    """Diagnostic fits at the chosen settings (BLAS limited to one thread; see :func:`_diagnostics`)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        if spec.get("public_mode", "labelled") != "labelled":
            from ui.pmt.compute.modes import mode_diagnostics

            return mode_diagnostics(data, spec)
        return _diagnostics(data, spec)


def _diagnostics(data: PreparedData, spec: dict) -> dict:
    """What the headline, the advisories and the Truncation tab need at the chosen settings.

    Returns
    -------
    dict
        ``kappa_raw, kappa_pmt, kappas`` (raw / public / pmt / noisy), ``spectra`` (eigenvalues of the
        raw, public and whitened second moments), ``radius`` (R), ``frac_truncated``, ``B_y``,
        ``frac_y_clipped``, ``mu``, ``clip_radius`` (C of DP-RR), ``raw_norms`` (raw row norms, intercept
        column included, as DP-RR clips them), ``pmt_norms`` (whitened norms before truncation),
        ``ledgers`` (method -> the engine's :class:`engine.privacy.PrivacyLedger`; see :func:`ledger_frame`)
        and ``eig_fixes``. Everything comes from the engine (the estimators' ``report_`` /
        ``transform_``, :func:`engine.pmt.pmt_transform`, :func:`engine.privacy.gdp_mu`); the row norms
        are for display only.

    Notes
    -----
    For the ridge task the PMT, DP-RR and DP-GD estimators of :mod:`engine.pmt` are fitted (a few
    milliseconds; the noise-dominance advisory needs PMT's eig_fixes). For the other tasks only the
    transform is computed here (:func:`engine.pmt.pmt_transform`): the one noisy fit of each private
    method, whose ledger and last noisy Hessian only the Conditioning and Privacy ledger tabs show, is
    :func:`estimator_fits` (on bank it costs more than the sweep at the chosen epsilon, so the page runs
    it when one of those tabs is open). Until then ``kappa_noisy`` is NaN and ``ledgers`` is None.
    """
    from engine import privacy as P
    from engine.pmt import DPGDRidge, DPRidge, PMTRidge, add_intercept, pmt_radius, pmt_transform

    common = dict(epsilon=spec["epsilon"], delta=spec["delta"], lam=spec["lam"], eta=spec["eta"],
                  random_state=0)
    Xp, yp, Xq, yq = data.X_train, data.y_train, data.X_pub, data.y_pub
    clip = spec.get("clip_radius") or None
    out = {"task": spec["task"], "eta": spec["eta"], "epsilon": spec["epsilon"], "delta": spec["delta"],
           "lam": spec["lam"], "neighbouring": "replace-one", "raw_norms": _baseline_norms(Xp, Xq, yq), "ledgers": {}, "eig_fixes": 0,
           "B_y": math.nan, "frac_y_clipped": math.nan}
    if spec["task"] == "regression":
        pmt = PMTRidge(**common, response=spec.get("response", "auto")).fit(Xp, yp, X_pub=Xq, y_pub=yq)
        rep = pmt.report_
        # the conditioning views show the features' transform (the joint form's rows also hold y)
        tr = pmt.transform_ if rep.extra.get("response") == "clip" else pmt_transform(Xp, Xq, eta=spec["eta"])
        out["ledgers"]["PMT"] = rep.ledger
        rr = DPRidge(**common, clip_radius=clip).fit(Xp, yp, X_pub=Xq, y_pub=yq)
        if "DP-RR" in spec["methods"]:
            out["ledgers"]["DP-RR"] = rr.report_.ledger
        if "DP-GD" in spec["methods"]:
            gd = DPGDRidge(**common).fit(Xp, yp, X_pub=Xq, y_pub=yq)
            out["ledgers"]["DP-GD"] = gd.report_.ledger
        if "AdaSSP" in spec["methods"]:
            from engine.pmt.adassp import AdaSSPRidge

            out["ledgers"]["AdaSSP"] = AdaSSPRidge(**common, clip_radius=clip).fit(Xp, yp, X_pub=Xq, y_pub=yq).report_.ledger
        out.update(kappa_noisy=rep.kappa_noisy, B_y=rep.B_y, frac_y_clipped=rep.frac_y_clipped, mu=rep.mu,
                   eig_fixes=rep.eig_fixes, clip_radius=rr.report_.radius, response=rep.extra.get("response"),
                   joint_radius=rep.radius if rep.extra.get("response") == "joint" else math.nan,
                   joint_frac_truncated=rep.frac_truncated if rep.extra.get("response") == "joint" else math.nan)
    else:
        tr = pmt_transform(Xp, Xq, eta=spec["eta"])
        out.update(kappa_noisy=math.nan, mu=P.gdp_mu(spec["epsilon"], spec["delta"]), ledgers=None,
                   clip_radius=float(clip) if clip else pmt_radius(tr.d, tr.n, spec["eta"]))
    out.update(
        kappa_raw=tr.kappa_raw, kappa_pmt=tr.kappa_pmt, radius=tr.radius, frac_truncated=tr.frac_truncated,
        kappas={"raw": tr.kappa_raw, "public": tr.kappa_pub, "pmt": tr.kappa_pmt, "noisy": out["kappa_noisy"]},
        spectra={"raw": tr.eigenvalues_raw, "public": tr.eigenvalues_public, "pmt": tr.eigenvalues_pmt},
        pmt_norms=tr.norms_before,
    )
    return out


def _baseline_norms(Xp, Xq, yq):
    """Row norms (intercept included) of the rows the private-only baselines clip: standardised with public
    statistics (``center="public"``, :mod:`engine.pmt._public_scale`)."""
    from engine.pmt import add_intercept
    from engine.pmt.scaling import public_scaling

    sc = public_scaling(np.asarray(Xq, dtype=float), yq, center="public", fit_intercept=True, penalize_intercept=False,
                        p=np.shape(Xp)[1])
    return np.linalg.norm(add_intercept(Xp if sc is None else sc.features(Xp)), axis=1)


def estimator_fits(data: PreparedData, spec: dict) -> dict:
    """The noisy fit of each selected private method (noise seed 0) for a task other than ridge.

    BLAS limited to one thread. One estimator per method named in :data:`DIAGNOSTIC_ESTIMATORS`
    (logistic: PMT, DP-Newton, DP-GD) at the chosen settings, as :func:`diagnostics` fits them for ridge.

    Returns
    -------
    dict
        ``ledgers`` (method -> :class:`engine.privacy.PrivacyLedger`), ``kappa_noisy`` and ``eig_fixes``
        (PMT's last noisy Hessian and its eigenvalue floors; NaN and 0 without PMT). Merge it into the
        diagnostics with :func:`with_fits`. For ridge (whose fits :func:`diagnostics` already made):
        ``{}``.
    """
    from threadpoolctl import threadpool_limits

    if spec.get("public_mode", "labelled") != "labelled":
        from ui.pmt.compute.modes import mode_fits

        return mode_fits(data, spec)
    if spec["task"] == "regression":
        return {}
    import importlib

    common = dict(epsilon=spec["epsilon"], delta=spec["delta"], lam=spec["lam"], eta=spec["eta"],
                  random_state=0)
    out = {"ledgers": {}, "kappa_noisy": math.nan, "eig_fixes": 0}
    with threadpool_limits(limits=1, user_api="blas"):
        for method, (modname, clsname) in DIAGNOSTIC_ESTIMATORS.get(spec["task"], {}).items():
            if method not in spec["methods"]:
                continue
            try:
                cls = getattr(importlib.import_module(modname), clsname)
            except (ImportError, AttributeError):
                continue
            est = cls(**common).fit(data.X_train, data.y_train, X_pub=data.X_pub, y_pub=data.y_pub)
            out["ledgers"][method] = est.report_.ledger
            if method == "PMT":
                out["kappa_noisy"] = float(getattr(est.report_, "kappa_noisy", math.nan))
                out["eig_fixes"] = int(getattr(est.report_, "eig_fixes", 0) or 0)
    return out


def with_fits(diag: dict, fits: dict) -> dict:
    """The diagnostics with :func:`estimator_fits` merged in (``kappas["noisy"]`` updated); a new dict."""
    if not fits:
        return diag
    out = {**diag, **fits}
    out["kappas"] = {**diag["kappas"], "noisy": fits["kappa_noisy"]}
    return out


def ledger_methods(spec: dict, diag: dict) -> list[str]:
    """The methods whose privacy ledger the page offers: the ridge fits' (:func:`diagnostics`), or for other
    tasks the selected methods that :data:`DIAGNOSTIC_ESTIMATORS` names (fitted by :func:`estimator_fits`).

    Examples
    --------
    >>> ledger_methods({"task": "classification", "methods": ["Non-private", "DP-GD", "PMT"]}, {"ledgers": None})
    ['PMT', 'DP-GD']
    """
    if diag.get("ledgers") is not None:
        return list(diag["ledgers"])
    if spec.get("public_mode", "labelled") != "labelled":
        from ui.pmt.compute.modes import offered_methods

        return [m for m in offered_methods(spec["task"], spec["public_mode"], spec["methods"]) if m != "Non-private"]
    return [m for m in DIAGNOSTIC_ESTIMATORS.get(spec["task"], {}) if m in spec["methods"]]


def ledger_frame(ledger) -> pd.DataFrame:
    """The engine's ledger as a frame (:meth:`engine.privacy.PrivacyLedger.to_frame`: each release's own
    epsilon at the ledger's delta, then the composed total). Built only for the ledger on screen or in an
    export: DP-GD's ledger has one release per step, each converted to epsilon separately."""
    return ledger.to_frame()


#: Estimators whose privacy ledger the page shows, per page task: method -> (module, class name).
#: The logistic task fills this in when its estimators land (they must accept the ridge keywords
#: epsilon, delta, lam, eta, random_state and expose ``report_.ledger``).
DIAGNOSTIC_ESTIMATORS: dict = {
    "classification": {
        "PMT": ("engine.pmt", "PMTLogistic"),
        "DP-Newton": ("engine.pmt", "DPNewtonLogistic"),
        "DP-GD": ("engine.pmt", "DPGDLogistic"),
    },
}
