"""What the PMT page computes, without Streamlit: data preparation, sweep specs, exports.

The page (``pages/pmt.py``) wraps these in ``st.cache_data``; everything DP is done by the engine
(:func:`engine.experiments.run_sweep`, the estimators' ``report_`` and their privacy ledgers). This
module only assembles arguments, reshapes results and formats exports, so it can be tested
without a browser.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import shlex
from dataclasses import dataclass
from importlib import metadata

import numpy as np
import pandas as pd

from engine.figures.report import fmt_ratio  # noqa: F401  (the page formats "PMT / best baseline" with it)


#: Page task -> label.
TASK_LABELS = {"regression": "Ridge regression", "classification": "Logistic regression",
               "count": "Poisson regression (counts)"}
#: Page task -> the Dataset.task values it accepts (counts are read as a regression target).
DATA_TASKS = {"regression": ("regression",), "classification": ("classification",), "count": ("regression",)}
#: Page task -> engine task name for run_sweep.
ENGINE_TASKS = {"regression": "ridge", "classification": "logistic", "count": "poisson"}

#: Methods the page offers for ridge (display names of the engine's sweep frames); see :func:`methods_for`.
METHODS = ["PMT", "DP-RR", "DP-RR (oracle C, non-private tuning)", "DP-GD", "Non-private"]

#: Methods selected by default per page task (those the engine offers are kept, in this order).
DEFAULT_METHODS = {
    "regression": ["PMT", "DP-RR", "DP-GD", "Public-only", "Non-private"],
    "classification": ["PMT", "DP-Newton", "DP-GD", "Public-only", "Non-private"],
    "count": ["PMT", "DP-Newton", "Public-only", "Non-private"],
}

#: Baselines of the headline "PMT / best baseline": the private-only ones and the public rows alone
#: (a private method that loses to the public sample is not worth its budget; PMT.md section 3, step 6).
PRIVATE_BASELINES = ("DP-RR", "DP-GD", "DP-Newton", "Public-only")

#: Default share cap of the public sample: n_pub defaults to min(200, DEFAULT_PUBLIC_SHARE * rows), and
#: the page warns when the chosen n_pub exceeds this share of the rows.
DEFAULT_PUBLIC_SHARE = 0.2

#: Metric columns per page task (the first is the default). For logistic sweeps the engine's
#: ``rmse`` column is a root Brier score, so it is not offered under the RMSE label. The logistic
#: default is the ROC AUC: on bank every method's accuracy lies within 0.89-0.90, next to the 0.88 of
#: always predicting the majority class, while the AUC separates them (0.71-0.73 private, 0.78 non-private).
METRICS_BY_TASK = {
    "regression": ["l2_error", "rel_error", "excess_risk", "rmse"],
    "classification": ["auc", "log_loss", "accuracy", "l2_error", "rel_error", "excess_risk"],
    "count": ["l2_error", "rel_error", "deviance", "rmse", "excess_risk"],
}


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


def methods_for(task: str) -> list[str]:
    """Display names of the methods the engine registers for a page task (registration order)."""
    from engine import experiments as E

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
    "split_seed": int, "synthetic_kappa": float,
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
    """Page tasks the engine supports: ``engine.experiments.SUPPORTED_TASKS`` if present, else ridge only."""
    try:
        from engine import experiments
    except ImportError:  # pragma: no cover - the engine ships experiments
        return ["regression"]
    sup = getattr(experiments, "SUPPORTED_TASKS", None) or tuple(getattr(experiments, "TASKS", ("ridge",)))
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
    from ui.state import DEFAULTS

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


def dumps(spec: dict) -> str:
    """Canonical JSON of a spec (sorted keys): a stable cache key."""
    return json.dumps(spec, sort_keys=True, default=float)


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


#: Fraction of the private rows held out for the RMSE (run_sweep's default ``test_size``).
TEST_SIZE = 0.2


def data_key(ds, public_ds, spec: dict) -> str:
    """Cache key of the data: the data set's fingerprint (+ the public file's)."""
    fp = ds.fingerprint()
    if public_ds is not None:
        fp += "+" + public_ds.fingerprint()
    return fp


def prepare(ds, public_ds=None, *, standardize: bool, n_pub: int, split_seed: int, task: str = "regression") -> PreparedData:
    """Arrays for the sweeps, and the split the diagnostics use (the very rows the sweep uses).

    The split comes from :func:`engine.experiments.sweep_split` (random split of ``n_pub`` public rows
    with ``split_seed``, or the separate public file; public-only standardisation of the features and
    centring of y for regression only, as ``run_sweep`` does; :data:`TEST_SIZE` of the private rows held
    out).

    Raises
    ------
    ValueError, TypeError
        From the engine: ``n_pub`` outside ``1..n-1``, non-numeric data, mismatched columns.
    """
    from engine.experiments import sweep_split

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
    )


def sweep(data: PreparedData, spec: dict) -> pd.DataFrame:
    """Run one sweep with BLAS limited to one thread (see :func:`_sweep`)."""
    from threadpoolctl import threadpool_limits

    # Multi-threaded BLAS on the n x d by d x runs products of DP-GD is up to 40x slower on a busy
    # 2-core machine (thread oversubscription); one thread per session is also fairer to other users.
    with threadpool_limits(limits=1, user_api="blas"):
        return _sweep(data, spec)


def _sweep(data: PreparedData, spec: dict) -> pd.DataFrame:
    from engine import experiments as E

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
    """Median and quantile bands per (method, ``by``) via :func:`engine.experiments.summarize`."""
    from engine.experiments import summarize as _summarize

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


def advisories(data: PreparedData, diag: dict, delta: float | None = None) -> list[str]:
    """Plain-language warnings about the current view (shown above the figures).

    With ``delta``: the engine's :class:`engine.privacy.DeltaTooLargeWarning` when delta > 1/n for the
    private training rows (:func:`engine.privacy.check_delta`, the check the estimators and the sweep make).
    """
    out = []
    if delta is not None:
        import warnings

        from engine import privacy as P

        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            P.check_delta(float(delta), int(len(data.y_train)))
        out += [str(w.message) for w in rec if issubclass(w.category, P.DeltaTooLargeWarning)]
    if data.n_pub <= data.d + 1:
        out.append(f"n_pub = {data.n_pub} public rows for {data.d} features (+ intercept): the public second moment is "
                   "singular, so the engine adds a tiny ridge (tau I) before whitening. Use n_pub >= d + 2.")
    if data.public_is_split and data.n_pub > DEFAULT_PUBLIC_SHARE * data.n_total:
        out.append(f"n_pub = {data.n_pub} makes {100 * data.n_pub / data.n_total:.0f}% of the {data.n_total} rows public "
                   f"(more than {100 * DEFAULT_PUBLIC_SHARE:.0f}%): in a real release these rows would be published "
                   f"as they are. The default is min(200, {100 * DEFAULT_PUBLIC_SHARE:.0f}% of the rows).")
    banner = noise_banner(data, diag)
    if banner:
        out.insert(0, banner)
    if diag.get("eig_fixes") and diag.get("task", "regression") == "regression":
        out.append("In the diagnostic fit the noisy matrix PMT released had directions no larger than its noise; PMT "
                   "raised their eigenvalues to the noise level, which shrinks them towards zero (counted in the "
                   "sweep's eig_fix column; the paper's solver only floors a matrix that is not positive definite).")
    if not data.standardize:
        out.append("Features are not standardised and the response is not centred (public statistics would cost no "
                   "privacy): the response bound B_y then grows with the raw response (e.g. about 450 MW on CCPP), which "
                   "adds noise to every method, and the private-only baselines clip raw rows at a radius made for "
                   "standardised data. PMT's whitening itself does not need standardised features.")
    return out


def noise_banner(data: PreparedData, diag: dict) -> str | None:
    """The "noise-dominated" banner (ridge), from public quantities and the budget only, or None.

    Uses :func:`engine.pmt.public.noise_dominance` with n = private training rows (public under
    replace-one), d (intercept included), mu (the budget), and the public rows' least-squares fit in
    PMT's whitened coordinates (residual sd, coefficient norm) and RMS response.
    """
    if diag.get("task", "regression") != "regression" or not (float(diag.get("mu", 0) or 0) > 0):
        return None
    if not math.isfinite(float(diag["mu"])):
        return None
    from engine.pmt import public_moment
    from engine.pmt.public import noise_dominance

    mom = public_moment(data.X_pub, fit_intercept=True)
    Z = mom.prepare(data.X_pub) @ mom.Sigma_pub_inv_sqrt
    yq = np.asarray(data.y_pub, dtype=float)
    m, d = Z.shape
    if m <= d:
        return None
    th = np.linalg.lstsq(Z, yq, rcond=None)[0]
    r = yq - Z @ th
    nd = noise_dominance(n=int(data.n_priv), d=d, mu=float(diag["mu"]), eta=float(diag.get("eta", 0.05) or 0.05),
                         n_pub=m, resid_sd=float(np.sqrt(r @ r / (m - d))), theta_norm=float(np.linalg.norm(th)),
                         y_rms=float(np.sqrt(np.mean(yq**2))),
                         neighbouring=str(diag.get("neighbouring", "replace-one") or "replace-one"))
    if not nd.dominated and nd.n_needed <= data.n_priv:
        return None
    what = ("The private part is noise-dominated at this epsilon" if nd.dominated
            else "At this epsilon the private statistics are less precise than the public sample")
    return (f"{what}: the noise on PMT's released X^T X (spectral size about {nd.noise_scale:.3g}) is "
            f"{nd.noise_scale / nd.signal:.2g}x its signal (n = {data.n_priv} private rows). PMT would need about "
            f"{nd.n_needed:,} private rows at this epsilon to beat the {m} public rows alone; until then the "
            "public-only fit (no privacy cost) is the better estimate. Computed from public quantities only.")


def results_csv(frames: dict, *, data_name: str | None = None, target: str | None = None) -> str:
    """All sweep rows as one CSV (a ``sweep`` column says which figure each row belongs to).

    ``data_name`` (a registry name, or ``"upload:<file name>"``: the file name is written) fills the
    ``dataset`` column and ``target`` a ``target`` column, so the rows keep their provenance. Text cells
    that a spreadsheet would run as a formula (a file or column named ``=1+1``) are neutralised
    (:func:`engine.figures.report.safe_csv`); numeric columns stay numeric.
    """
    from engine.figures.report import safe_csv

    parts = [f.assign(sweep=k) for k, f in frames.items() if f is not None]
    frame = pd.concat(parts, ignore_index=True)
    if data_name is not None:
        frame["dataset"] = str(data_name).removeprefix("upload:")
    if target is not None:
        frame.insert(1 if "dataset" in frame.columns else 0, "target", str(target))
    return safe_csv(frame)


_PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "plotly", "streamlit")


def package_versions() -> dict:
    """Versions of Python and the packages the numbers depend on."""
    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:  # pragma: no cover
            out[p] = None
    return out


def settings_json(spec: dict, *, ds, prep: PreparedData, public_name: str | None = None) -> str:
    """Every setting of the view, the seeds, the data fingerprint and the package versions, as JSON."""
    payload = {
        "page": "PMT regression",
        "settings": {k: v for k, v in spec.items() if k not in ("sweep", "epsilons", "lams", "n_pubs")},
        "seeds": list(range(int(spec["seeds"]))),
        "split_seed": spec["split_seed"],
        "data": {"name": ds.name, "rows": ds.n, "features": list(ds.feature_names), "target": ds.target_name,
                 "fingerprint": ds.fingerprint() if hasattr(ds, "fingerprint") else None,
                 "n_pub": prep.n_pub, "n_priv": prep.n_priv,
                 "public_sample": "random split (simulation)" if prep.public_is_split else "separate public file"},
        "versions": package_versions(),
        "cli": None if cli_supported(spec) else cli_commands(spec, ds=ds, public_name=public_name),
        "cli_notes": [cli_supported(spec)] if cli_supported(spec) else cli_notes(spec),
    }
    return json.dumps(payload, indent=2, default=float)


#: How the exported commands start: the project's own interpreter (``./run.sh`` creates ``.venv``), so a
#: command pasted in the project folder runs without activating anything.
CLI_PREFIX = ".venv/bin/python -m engine"


def _file_name(name: str) -> str:
    """The uploaded file's name from a data set name ``"upload:<file name>"``."""
    return str(name).removeprefix("upload:")


def _exact(x) -> str:
    """A float as short text that reads back as the same float (``1e-05``, ``0.7``, ``0.123456789``)."""
    x = float(x)
    return f"{x:g}" if float(f"{x:g}") == x else repr(x)


def cli_argv(spec: dict, *, ds=None, public_name: str | None = None, epsilons=None) -> list[str]:
    """``python -m engine pmt`` arguments that reproduce one of the page's epsilon sweeps.

    The page runs two sweeps over epsilon: the chosen epsilon alone (the headline numbers) and the
    coarse grid :data:`ui.state.EPSILON_GRID` (the error-vs-epsilon figure). DP-GD advances all runs of a
    sweep as the columns of one float32 matrix, whose products round the same way only for the same
    batch, so each sweep has its own command (``epsilons=None``: the chosen epsilon; else the list).

    Bundled data: ``--dataset NAME`` (``--kappa`` for the synthetic set). An upload: ``--data FILE
    --target COLUMN --features ...`` (the uploaded file's name; :mod:`engine.cli.pmt_files` reads it with
    the page's validating loader), and ``--public FILE`` when the public sample is a separate file.
    Names starting with ``-`` are written ``--flag=NAME`` so that they are never read as options.
    Every other setting of the page has its flag (``--epsilon --delta --seeds --lam --n-pub --methods
    --eta --standardize --split-seed --clip-radius --metric``).

    Parameters
    ----------
    spec : dict
        From :func:`spec_from_state` (plus ``metric``).
    ds : engine.datasets.Dataset, optional
        The data set shown (needed for an upload: its file, target and feature names).
    public_name : str, optional
        The separate public file's name (``public_source == "file"``).
    epsilons : sequence of float, optional
        The epsilons of the sweep (default: ``[spec["epsilon"]]``, the headline sweep).

    Raises
    ------
    ValueError
        An upload without ``ds``, or a separate public file without ``public_name``.

    Examples
    --------
    >>> from ui.state import DEFAULTS
    >>> spec = {**DEFAULTS, "data": "ccpp", "task": "regression", "synthetic_kappa": 1e3}
    >>> cli_argv(spec)[1:5]
    ['--task', 'ridge', '--dataset', 'ccpp']
    """
    from engine.pmt._base import METHOD_NAMES
    from engine.pmt._newton import GLM_METHOD_NAMES
    engine_task = ENGINE_TASKS[spec["task"]]
    from engine import experiments as E

    # display name -> the CLI's method key, from the sweep registry (every registered method, public-only
    # and pmt-pooled included)
    keys = {v: k for k, v in (METHOD_NAMES if engine_task == "ridge" else GLM_METHOD_NAMES).items()}
    keys.update({s.name: k for (t, k), s in E.METHODS.items() if t == engine_task})
    data = str(spec["data"])

    def opt(flag: str, value: str) -> list[str]:
        return [f"{flag}={value}"] if str(value).startswith("-") else [flag, str(value)]

    argv = ["pmt", "--task", engine_task]
    if data.startswith("upload:"):
        if ds is None or ds.name != data:
            raise ValueError("cli_argv: an upload needs its Dataset (ds) for the file, target and feature names")
        argv += opt("--data", _file_name(ds.name)) + opt("--target", ds.target_name)
        feats = [str(f) for f in ds.feature_names]
        if any(f.startswith("-") for f in feats):
            argv += [f"--features={f}" for f in feats]
        else:
            argv += ["--features", *feats]
    else:
        argv += ["--dataset", data]
    if spec.get("public_source") == "file":
        if not public_name:
            raise ValueError("cli_argv: a separate public file needs its name (public_name)")
        if not data.startswith("upload:"):
            raise ValueError("cli_argv: a separate public file is read with --data; bundled sets use the split")
        argv += opt("--public", _file_name(public_name))
    eps_list = [float(spec["epsilon"])] if epsilons is None else [float(e) for e in epsilons]
    argv += ["--epsilon", *[_exact(e) for e in eps_list],
             "--delta", _exact(spec["delta"]), "--seeds", str(int(spec["seeds"])), "--lam", _exact(spec["lam"]),
             "--n-pub", str(int(spec["n_pub"])), "--methods", *[keys.get(m, m) for m in spec["methods"]],
             "--eta", _exact(spec["eta"]),
             "--split-seed", str(int(spec["split_seed"])), "--metric", spec.get("metric", "l2_error")]
    if float(spec.get("clip_radius") or 0) != 0:
        argv += ["--clip-radius", _exact(spec["clip_radius"])]
    if spec.get("standardize"):
        argv.append("--standardize")
    if data == "synthetic":
        argv += ["--kappa", _exact(spec.get("synthetic_kappa", 1e3))]
    return argv


def cli_supported(spec: dict) -> str | None:
    """None if ``python -m engine pmt`` can run this view, else the reason it cannot."""
    from engine.cli import pmt as cli_pmt

    task = ENGINE_TASKS[spec["task"]]
    if task not in getattr(cli_pmt, "TASK_CHOICES", ["ridge"]):
        return f"The command line does not offer the {task} task yet."
    if spec.get("public_source") == "file" and not str(spec.get("data", "")).startswith("upload:"):
        return ("The command line reads a separate public file together with your own data file (--data ... "
                "--public ...); for a bundled data set it draws the public sample as a random split.")
    return None


def cli_notes(spec: dict) -> list[str]:
    """How to run the command of :func:`cli_argv` (shown under it)."""
    notes = ["Run it in the project folder (./run.sh creates .venv there)."]
    if str(spec["data"]).startswith("upload:"):
        notes.append("Copy your file(s) into that folder, or replace the file names by their paths: the command "
                     "reads them with the same validating loader as this page and reproduces its numbers.")
    return notes


def cli_command(spec: dict, *, ds=None, public_name: str | None = None, epsilons=None) -> str:
    """The shell command (quoted) for :func:`cli_argv`, starting with :data:`CLI_PREFIX`."""
    argv = cli_argv(spec, ds=ds, public_name=public_name, epsilons=epsilons)
    return CLI_PREFIX + " " + " ".join(shlex.quote(a) for a in argv)


def cli_commands(spec: dict, *, ds=None, public_name: str | None = None) -> dict:
    """The two commands that reproduce the page: ``{"headline": ..., "figure": ...}``.

    ``headline`` runs the chosen epsilon alone (the headline numbers, bit for bit); ``figure`` runs the
    coarse grid :data:`ui.state.EPSILON_GRID` of the error-vs-epsilon figure (the chosen epsilon, when not
    on the grid, is drawn from the headline sweep). See :func:`cli_argv` for why they are two.
    """
    from ui.state import EPSILON_GRID

    return {"headline": cli_command(spec, ds=ds, public_name=public_name),
            "figure": cli_command(spec, ds=ds, public_name=public_name, epsilons=EPSILON_GRID)}


def diagnostics(data: PreparedData, spec: dict) -> dict:
    """Diagnostic fits at the chosen settings (BLAS limited to one thread; see :func:`_diagnostics`)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _diagnostics(data, spec)


def _diagnostics(data: PreparedData, spec: dict) -> dict:
    """One fit of each selected private method at the chosen settings (noise seed 0): reports and ledgers.

    Returns
    -------
    dict
        ``kappa_raw, kappa_pmt, kappas`` (raw / public / pmt / noisy), ``spectra`` (eigenvalues of the
        raw, public and whitened second moments), ``radius`` (R), ``frac_truncated``, ``B_y``,
        ``frac_y_clipped``, ``mu``, ``clip_radius`` (C of DP-RR), ``raw_norms`` (raw row norms, intercept
        column included, as DP-RR clips them), ``pmt_norms`` (whitened norms before truncation),
        ``ledgers`` (method -> the engine's ledger frame) and ``eig_fixes``. Everything comes from the
        engine (the estimators' ``report_`` / ``transform_``, :func:`engine.pmt.pmt_transform`,
        :func:`engine.privacy.gdp_mu`); the row norms are for display only.

    Notes
    -----
    For the ridge task the PMT, DP-RR and DP-GD estimators of :mod:`engine.regression` are fitted. For
    other tasks (logistic, once the engine registers it) the transform diagnostics come from
    :func:`engine.pmt.pmt_transform` and the ledgers from the task's estimators when
    :data:`DIAGNOSTIC_ESTIMATORS` names them; otherwise the ledger tab says so.
    """
    from engine import privacy as P
    from engine import regression as R
    from engine.pmt import add_intercept, pmt_radius, pmt_transform

    common = dict(epsilon=spec["epsilon"], delta=spec["delta"], lam=spec["lam"], eta=spec["eta"],
                  random_state=0)
    Xp, yp, Xq, yq = data.X_train, data.y_train, data.X_pub, data.y_pub
    clip = spec.get("clip_radius") or None
    out = {"task": spec["task"], "eta": spec["eta"], "neighbouring": "replace-one", "raw_norms": np.linalg.norm(add_intercept(Xp), axis=1), "ledgers": {}, "eig_fixes": 0,
           "B_y": math.nan, "frac_y_clipped": math.nan}
    if spec["task"] == "regression":
        pmt = R.PMTRidge(**common).fit(Xp, yp, X_pub=Xq, y_pub=yq)
        rep, tr = pmt.report_, pmt.transform_
        out["ledgers"]["PMT"] = rep.ledger.to_frame()
        rr = R.DPRidge(**common, clip_radius=clip).fit(Xp, yp, X_pub=Xq, y_pub=yq)
        if "DP-RR" in spec["methods"]:
            out["ledgers"]["DP-RR"] = rr.report_.ledger.to_frame()
        if "DP-GD" in spec["methods"]:
            gd = R.DPGDRidge(**common).fit(Xp, yp, X_pub=Xq, y_pub=yq)
            out["ledgers"]["DP-GD"] = gd.report_.ledger.to_frame()
        out.update(kappa_noisy=rep.kappa_noisy, B_y=rep.B_y, frac_y_clipped=rep.frac_y_clipped, mu=rep.mu,
                   eig_fixes=rep.eig_fixes, clip_radius=rr.report_.radius)
    else:
        tr = pmt_transform(Xp, Xq, eta=spec["eta"])
        out.update(kappa_noisy=math.nan, mu=P.gdp_mu(spec["epsilon"], spec["delta"]),
                   clip_radius=float(clip) if clip else pmt_radius(tr.d, tr.n, spec["eta"]))
        for method, (modname, clsname) in DIAGNOSTIC_ESTIMATORS.get(spec["task"], {}).items():
            if method not in spec["methods"]:
                continue
            try:
                import importlib

                cls = getattr(importlib.import_module(modname), clsname)
            except (ImportError, AttributeError):
                continue
            est = cls(**common).fit(Xp, yp, X_pub=Xq, y_pub=yq)
            out["ledgers"][method] = est.report_.ledger.to_frame()
            if method == "PMT":
                out["kappa_noisy"] = float(getattr(est.report_, "kappa_noisy", math.nan))
                out["eig_fixes"] = int(getattr(est.report_, "eig_fixes", 0) or 0)
    out.update(
        kappa_raw=tr.kappa_raw, kappa_pmt=tr.kappa_pmt, radius=tr.radius, frac_truncated=tr.frac_truncated,
        kappas={"raw": tr.kappa_raw, "public": tr.kappa_pub, "pmt": tr.kappa_pmt, "noisy": out["kappa_noisy"]},
        spectra={"raw": tr.eigenvalues_raw, "public": tr.eigenvalues_public, "pmt": tr.eigenvalues_pmt},
        pmt_norms=tr.norms_before,
    )
    return out


#: Estimators whose privacy ledger the page shows, per page task: method -> (module, class name).
#: The logistic task fills this in when its estimators land (they must accept the ridge keywords
#: epsilon, delta, lam, eta, random_state and expose ``report_.ledger``).
DIAGNOSTIC_ESTIMATORS: dict = {
    "classification": {
        "PMT": ("engine.glm", "PMTLogistic"),
        "DP-Newton": ("engine.glm", "DPNewtonLogistic"),
        "DP-GD": ("engine.glm", "DPGDLogistic"),
    },
}


def provenance(ds) -> dict:
    """Where the data come from and under which licence (for the report and the exports).

    Examples
    --------
    >>> from engine.datasets import load_dataset
    >>> provenance(load_dataset("ccpp"))["licence"]
    'CC BY 4.0 (UCI Machine Learning Repository)'
    """
    name = str(ds.name)
    out = {"data set": name, "rows": ds.n, "features": ", ".join(map(str, ds.feature_names)), "target": ds.target_name,
           "description": ds.description}
    if name.startswith("upload:"):
        out.update(source="your uploaded file (kept in the browser session only; not redistributed)",
                   licence="yours: the file's own terms apply", fingerprint=ds.fingerprint())
    elif ds.doi:
        out.update(source=ds.citation, doi=f"https://doi.org/{ds.doi}",
                   licence="CC BY 4.0 (UCI Machine Learning Repository)")
    else:
        out.update(source="generated by engine.datasets (synthetic, seeded)", licence="none needed (generated data)")
    return out


def report_html(*, spec: dict, ds, prep: PreparedData, head: pd.DataFrame, metric_label: str, ratio_text: str,
                diag: dict, figures: list, public_name: str | None = None) -> str:
    """The PMT page's "Download report": one self-contained HTML file (see :func:`engine.figures.report.html_report`).

    Parameters
    ----------
    spec : dict
        The page's settings (with ``metric``).
    ds : engine.datasets.Dataset
    prep : PreparedData
    head : DataFrame
        The headline rows (``method, median, q25, q75, n_seeds``) at the chosen epsilon.
    metric_label : str
        The metric's display name.
    ratio_text : str
        "PMT / best baseline" as shown on the page.
    diag : dict
        From :func:`diagnostics` (``kappa_pmt``, ``kappa_raw``, ``frac_truncated``, ``mu``, ``ledgers``).
    figures : list of (caption, Figure)
        The figures on screen.
    public_name : str, optional
        The separate public file's name.
    """
    from engine.figures.report import html_report

    cards = [(str(r["method"]), f"{r['median']:.3g}", f"middle half {r['q25']:.3g} - {r['q75']:.3g}")
             for _, r in head.iterrows()]
    cards += [("PMT / best baseline", ratio_text),
              ("kappa after PMT", f"{diag['kappa_pmt']:.3g}", f"raw {diag['kappa_raw']:.3g}"),
              ("rows truncated", f"{100 * diag['frac_truncated']:.2f}%"),
              ("mu (Gaussian DP)", f"{diag['mu']:.3g}")]
    settings = {k: v for k, v in spec.items() if k not in ("sweep", "values")}
    settings.update({"public sample": "random split (simulation)" if prep.public_is_split else
                     f"separate public file {public_name or ''}".strip(),
                     "public rows": prep.n_pub, "private rows": prep.n_priv})
    why_not = cli_supported(spec)
    commands = list(cli_commands(spec, ds=ds, public_name=public_name).values()) if not why_not else []
    notes = [f"Median {metric_label} at epsilon = {spec['epsilon']:g} over {spec['seeds']} noise seeds "
             f"({TASK_LABELS[spec['task']].lower()})."] + ([why_not] if why_not else [])
    return html_report(
        title=f"PMT regression: {ds.name}",
        subtitle=f"epsilon = {spec['epsilon']:g}, delta = {spec['delta']:g}, {prep.n_pub} public rows, "
                 f"{spec['seeds']} seeds",
        headline=cards, figures=figures, settings=settings,
        ledgers={m: ledger_display(f) for m, f in diag.get("ledgers", {}).items()},
        provenance=provenance(ds), commands=commands, notes=notes)
