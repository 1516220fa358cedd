"""Vectorised privacy-utility sweeps: methods x epsilons x seeds (x lam x n_pub) -> a tidy frame.

:func:`run_sweep` returns one row per (method, epsilon, seed, lam, n_pub) with the columns of the
team contract (``method, epsilon, delta, seed, lam, n_pub, mu, l2_error, rel_error, excess_risk,
rmse, kappa_raw, kappa_pub, kappa_pmt, kappa_noisy, radius, frac_truncated``) plus a few extra ones
(``dataset, method_key, n, d, B_y, sigma_A, sigma_b, eig_fix, standardize``). :func:`summarize`
reduces it to medians and quantile bands (the error is heavy-tailed, so means mislead;
PMT.md section 6).

The tasks live in their own modules and register themselves (:mod:`engine.pmt._registry`):
``"ridge"`` (:mod:`engine.pmt.sweep_ridge`: what is computed once per split, what per seed, the
metrics) and ``"logistic"`` (:mod:`engine.pmt.sweep_logistic`). This module holds what they share:
resolving methods, loading and splitting the data, running the grid, the tidy frame and its summary.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Sequence

import numpy as np
import pandas as pd

from engine import privacy as P
from engine.pmt._base import F32_BOUND_RANGE
from engine.pmt._registry import CONTRACT_COLUMNS, METHODS, SUMMARY_COLUMNS, TASKS, MethodSpec, sweep_column_privacy

# The tasks register themselves on import (ridge first, then logistic: the registry's order).
from engine.pmt.sweep_ridge import DEFAULT_METHODS as _RIDGE_DEFAULTS  # noqa: E402
import engine.pmt.sweep_logistic  # noqa: E402,F401
import engine.pmt.sweep_poisson  # noqa: E402,F401
import engine.pmt.sweep_public  # noqa: E402,F401  (public-only for every task, pmt-pooled for ridge)

#: Default ridge methods: the task's own plus the public-only comparator (PMT.md section 3, step 6).
DEFAULT_METHODS = tuple(_RIDGE_DEFAULTS) + ("public-only",)

__all__ = [
    "CONTRACT_COLUMNS",
    "SUMMARY_COLUMNS",
    "DEFAULT_METHODS",
    "resolve_methods",
    "sweep_split",
    "run_sweep",
    "summarize",
]


def resolve_methods(task: str, methods) -> list[MethodSpec]:
    """Map method keys or display names to registered specs (ValueError lists the accepted ones).

    Examples
    --------
    >>> [m.key for m in resolve_methods("ridge", ["PMT", "dp-gd"])]
    ['pmt', 'dp-gd']
    """
    avail = {k: s for (t, k), s in METHODS.items() if t == task}
    if not avail:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    by_name = {s.name.lower(): s for s in avail.values()}
    out = []
    for m in [methods] if isinstance(methods, str) else list(methods):
        key = str(m).strip().lower()
        spec = avail.get(key) or by_name.get(key)
        if spec is None:
            raise ValueError(f"unknown method {m!r} for task {task!r}; accepted: {', '.join(avail)}")
        if spec not in out:
            out.append(spec)
    if not out:
        raise ValueError("methods must name at least one method")
    return out


# --------------------------------------------------------------------------------------------
# the sweep
# --------------------------------------------------------------------------------------------
def _load(data, dataset_kwargs):
    if isinstance(data, str):
        from engine.datasets import load_dataset

        key = data.strip().lower()
        if key != "synthetic" and not dataset_kwargs:  # a bundled set: its arrays, cached read-only
            from engine.datasets.bundled import _REGISTRY, _bundled_arrays

            if key in _REGISTRY:
                return _bundled_arrays(key)
        ds = load_dataset(data, **(dataset_kwargs or {}))
        X, y = ds.to_numpy()
        return X, y, ds.name
    if hasattr(data, "to_numpy") and hasattr(data, "task"):
        X, y = data.to_numpy()
        return X, y, getattr(data, "name", "data")
    if isinstance(data, (tuple, list)) and len(data) == 2:
        return np.asarray(data[0], dtype=float), np.asarray(data[1], dtype=float), "arrays"
    raise TypeError("data must be a registry name, a Dataset, or a tuple (X, y)")


def _seeds(seeds):
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1 (a count) or a list of ints, got {seeds!r}")
        return list(range(int(seeds)))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds must not be empty")
    if len(set(out)) != len(out):
        raise ValueError("seeds must be distinct")
    return out


def sweep_split(X, y, *, n_pub=None, split_seed=0, test_size=0.2, standardize=False, center_y=None,
                public_data=None):
    """The split a sweep uses: public rows, private training rows, held-out private test rows.

    ``n_pub`` public rows are drawn with :func:`engine.datasets.public_private_split`
    (``random_state=split_seed``); with ``standardize`` the features are centred/scaled by the public
    mean/std (:func:`engine.datasets.standardize_with_public`); with ``center_y`` (default: the value
    of ``standardize``) the public mean of y is subtracted from every response; then a fraction
    ``test_size`` of the private rows (a permutation seeded by ``[split_seed, 1]``) is held out
    before anything is fitted.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    n_pub : int
        Ignored when ``public_data`` is given.
    split_seed : int, default 0
    test_size : float, default 0.2
    standardize : bool, default False
    center_y : bool, optional
    public_data : tuple (X_pub, y_pub), optional
        A separate public sample; then every row of (X, y) is private (minus the test rows).

    Returns
    -------
    tuple of ndarray
        ``(X_pub, y_pub, X_train, y_train, X_test, y_test)``.

    Examples
    --------
    >>> X = np.arange(40.0).reshape(20, 2); y = np.arange(20.0)
    >>> [a.shape[0] for a in sweep_split(X, y, n_pub=5, test_size=0.2)]
    [5, 5, 12, 12, 3, 3]
    """
    center_y = standardize if center_y is None else bool(center_y)
    pub = None if public_data is None else _check_public(public_data, np.asarray(X).shape[1])
    return _split(np.asarray(X, float), np.asarray(y, float), n_pub, split_seed, float(test_size), standardize,
                  center_y, pub)


def _check_public(public_data, p):
    try:
        Xq, yq = public_data
    except (TypeError, ValueError):
        raise TypeError("public_data must be a tuple (X_pub, y_pub)") from None
    Xq, yq = np.asarray(Xq, dtype=float), np.asarray(yq, dtype=float).ravel()
    if Xq.ndim != 2 or Xq.shape[0] < 1:
        raise ValueError(f"public_data X_pub must be 2-D with at least one row (n_pub >= 1), got shape {Xq.shape}")
    if Xq.shape[1] != p:
        raise ValueError(f"public_data X_pub has {Xq.shape[1]} columns but X has {p}; they must match")
    if len(yq) != Xq.shape[0]:
        raise ValueError(f"public_data y_pub has {len(yq)} entries but X_pub has {Xq.shape[0]} rows")
    if not (np.all(np.isfinite(Xq)) and np.all(np.isfinite(yq))):
        raise ValueError("public_data contains NaN or infinite values")
    return Xq, yq


def _split(X, y, n_pub, seed, test_size, standardize, center_y=False, public=None):
    from engine.datasets import Split, public_private_split, standardize_with_public

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n_pub <= d: reported as kappa_pub / regularised
        if public is None:
            sp = public_private_split(X, y, n_pub=int(n_pub), random_state=seed)
        else:  # a separate public sample: every row of (X, y) is private
            Xq, yq = public
            sp = Split(X_pub=Xq, y_pub=yq, X_priv=X, y_priv=y, idx_pub=np.arange(len(yq)), idx_priv=np.arange(len(y)))
        if standardize:
            sp = standardize_with_public(sp)
    Xq, yq, Xp, yp = sp.X_priv, sp.y_priv, sp.X_pub, sp.y_pub
    if center_y:  # public statistic only: the public mean of y
        shift = float(np.mean(yp))
        yq, yp = yq - shift, yp - shift
    n_priv = len(yq)
    n_test = int(round(test_size * n_priv))
    perm = np.random.default_rng([int(seed), 1]).permutation(n_priv)
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return Xp, yp, Xq[train], yq[train], Xq[test], yq[test]


def _kept_split(X, y, n_pub, seed, test_size, standardize, center_y=False, public=None):
    """:func:`_split`, kept for the same data (by content: :func:`engine.pmt._split_memo.fingerprint`) and
    settings (:func:`engine.pmt._split_memo.memo_rows`), so a sweep on a split seen before does not draw and
    standardise it again (bank: about 0.1 s per sweep, a dashboard's every epsilon or lam move).

    The split is a deterministic function of the data and the settings (no noise): a kept one is the one a
    fresh call gives, bit for bit; each call gets its own copies. Inside :func:`engine.pmt._split_memo.bypass`
    (an upload) nothing is kept or reused."""
    from engine.pmt import _split_memo

    def build():
        return _split(X, y, n_pub, seed, test_size, standardize, center_y, public)

    if _split_memo.bypassed():
        return build()
    key = ("split", _split_memo.fingerprint(X, y, *(() if public is None else public)),
           None if public is not None else int(n_pub), int(seed), float(test_size), bool(standardize), bool(center_y),
           public is None)
    return _split_memo.memo_rows(key, build)


def run_sweep(
    data,
    *,
    methods: Sequence[str] = DEFAULT_METHODS,
    epsilons: Sequence[float] = (0.5, 1.0, 2.0, 5.0),
    seeds=50,
    lams: Sequence[float] = (1e-3,),
    n_pubs: Sequence[int] = (200,),
    delta: float = 1e-5,
    eta: float = 0.05,
    standardize: bool = False,
    center_y: bool | None = None,
    task: str = "ridge",
    test_size: float = 0.2,
    split_seed: int = 0,
    resample_split: bool = False,
    neighbouring: str = "replace-one",
    fit_intercept: bool = True,
    penalize_intercept: bool = False,
    dp_gd_steps: int = 100,
    clip_radius: float | None = None,
    clip_norm: float | None = None,
    response_bound: float | None = None,
    oracle_grid=None,
    dtype=np.float32,
    dataset_kwargs: dict | None = None,
    public_data=None,
    task_options: dict | None = None,
) -> pd.DataFrame:
    """Sweep methods x epsilons x seeds x lams x n_pubs and return a tidy frame (one row per run).

    Parameters
    ----------
    data : str, Dataset or tuple (X, y)
        A registry name (:func:`engine.datasets.load_dataset`, with ``dataset_kwargs``), a Dataset, or
        arrays X of shape (n, p) and y of shape (n,).
    methods : sequence of str
        Keys or display names: ``"pmt"``, ``"dp-rr"``, ``"dp-rr-oracle"`` (non-private tuning),
        ``"dp-gd"``, ``"non-private"``, ``"public-only"`` (the public rows alone, no privacy cost),
        ``"pmt-pooled"`` (PMT's release pooled with the public rows; :mod:`engine.pmt.pooled`).
        (Other tasks: their registered methods, ``"public-only"`` included; the default is all of them.)
    epsilons : sequence of float
        Each ``0 < epsilon <= inf`` (inf: noise off).
    seeds : int or sequence of int
        A count (seeds 0..k-1) or explicit seeds; they drive the noise (see the module docstring).
    lams : sequence of float
        Ridge penalties, each >= 0.
    n_pubs : sequence of int
        Public sample sizes, each ``1 <= n_pub < n``.
    delta : float, default 1e-5
        ``0 < delta < 1`` (refused otherwise); a :class:`engine.privacy.DeltaTooLargeWarning` when
        ``delta > 1/n`` for the private training rows (:func:`engine.privacy.check_delta`).
    eta : float, default 0.05
    standardize : bool, default False
        Centre/scale features by the public mean/std (:func:`engine.datasets.standardize_with_public`);
        the response is left in its units. Standardisation changes nothing for PMT at lam = 0: the
        whitening is scale-free (columns equilibrated by their public RMS, so rescaling leaves the
        whitened rows exactly unchanged) and centring is a linear map of (x, 1), which only rotates
        the whitened rows (same norms, same truncation, same noise-free fit; the released noise has the
        same law up to its diagonal), so the error distribution is the same. At lam > 0 the penalty
        ``lam ||theta||^2`` is in the units of the columns given, like the non-private target it is
        compared with. The baselines, which clip raw rows, are not invariant.
    center_y : bool, optional
        Subtract the **public** mean of y from all responses (public information, no budget). Default:
        True for ridge (as :class:`engine.pmt.PMTRidge` centres by default; it was the value of
        ``standardize`` before, which left raw CCPP's PMT at a test RMSE of 79 MW against 5.2). It shrinks the public response bound B_y from the scale of |y|
        to the scale of its spread (CCPP: mean 454 MW, sd 17 MW), which cuts the noise on
        ``b = X^T y`` for every method alike; the intercept absorbs the shift, and all coefficients
        (and errors) are reported for the centred response.
    task : {"ridge", "logistic", "poisson"}, default "ridge"
        ``"logistic"``: DP-PMTLR and its baselines (:mod:`engine.pmt.sweep_logistic`; methods
        ``"pmt"``, ``"dp-newton"``, ``"dp-gd"``, ``"non-private"``; labels in {0, 1}; adds the columns
        ``accuracy, auc, log_loss, converged, eig_fixes, ...``). ``"poisson"``: counts with a log link
        (:mod:`engine.pmt.sweep_poisson`; ``"pmt"``, ``"dp-newton"``, ``"public-only"``,
        ``"non-private"``; adds ``deviance``). ``center_y`` defaults to False for both.
    test_size : float, default 0.2
        Fraction of the private rows held out (before fitting) for the RMSE; ``0 <= test_size < 1``.
    split_seed : int, default 0
        Seed of the public/test split (fixed across noise seeds unless ``resample_split``).
    resample_split : bool, default False
        Draw a new split per seed (split seed = noise seed).
    neighbouring : {"replace-one"}, default "replace-one"
        The only relation offered: n is public under replace-one; add/remove is not offered because n
        enters R(d, n), B_y(n), averages and the noise scale (any other value raises ``ValueError``).
    fit_intercept, penalize_intercept : bool
    dp_gd_steps : int, default 100
    clip_radius, clip_norm, response_bound : float, optional
        Override the public defaults of DP-RR's C, DP-GD's gradient clip and B_y. Accepted range
        ``[1e-100, 1e100]`` (:func:`engine.privacy.check_bound`), and ``[1e-100, 1e15]`` for a bound that
        enters float32 products (``clip_norm`` unless ``dtype`` is float64; ``clip_radius`` of the
        logistic task); otherwise ``ValueError`` naming the range, before any noise.
    oracle_grid : array-like, optional
        Grid of C for the oracle (default :func:`engine.pmt.baselines.default_clip_grid`).
    dtype : numpy dtype, default float32
        dtype of DP-GD's n-sized products (theta and all statistics stay float64).
    dataset_kwargs : dict, optional
    task_options : dict, optional
        Task-specific options passed to the task's context builder (logistic: ``newton_steps``,
        ``eig_floor``, ``tol``, ``classes``, ``newton_dtype``; see :mod:`engine.pmt.sweep_logistic`).
    public_data : tuple (X_pub, y_pub), optional
        A separate public sample (e.g. an uploaded public file). Then every row of ``data`` is private
        (minus the held-out test rows), ``n_pubs`` is ignored and ``resample_split`` only reshuffles the
        test rows.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CONTRACT_COLUMNS` plus ``dataset, method_key, n, d, standardize, B_y, sigma_A,
        sigma_b, eig_fix``.

    Raises
    ------
    ValueError, TypeError
        Bad parameters, before any noise is drawn.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 3)); y = X @ [1.0, 2.0, 3.0] + rng.normal(size=3000)
    >>> f = run_sweep((X, y), methods=["pmt", "non-private"], epsilons=[1.0, 4.0], seeds=3)
    >>> len(f), sorted(f["method"].unique())
    (12, ['Non-private', 'PMT'])
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    if methods is DEFAULT_METHODS and task != "ridge":  # the default list names ridge methods
        methods = [k for (t, k) in METHODS if t == task]
    specs = resolve_methods(task, methods)
    eps_list = [P.validate_epsilon(e, allow_inf=True) for e in np.atleast_1d(epsilons)]
    if not eps_list:
        raise ValueError("epsilons must not be empty")
    delta = P.validate_delta(delta)
    neighbouring = P.validate_neighbouring(neighbouring)
    eta = float(eta)
    if not (0 < eta < 1):
        raise ValueError(f"eta must lie strictly between 0 and 1, got {eta!r}")
    lam_list = [float(v) for v in np.atleast_1d(lams)]
    for v in lam_list:
        if not (v >= 0 and math.isfinite(v)):
            raise ValueError(f"lam must be finite and >= 0 (accepted range: 0 <= lam < inf), got {v!r}")
    if not lam_list:
        raise ValueError("lams must not be empty")
    seed_list = _seeds(seeds)
    if not (0 <= float(test_size) < 1):
        raise ValueError(f"test_size must satisfy 0 <= test_size < 1, got {test_size!r}")
    if isinstance(dp_gd_steps, bool) or not isinstance(dp_gd_steps, (int, np.integer)) or dp_gd_steps < 1:
        raise ValueError(f"dp_gd_steps must be an integer >= 1, got {dp_gd_steps!r}")
    # user-set bounds: a range where the arithmetic is exact (engine.privacy.check_bound);
    # the clip radius / gradient clip also enter float32 products (DP-GD ``dtype``, the logistic task's
    # ``newton_dtype``), so there they stop at 1e15 (squares and sums over rows stay far below 3.4e38)
    f32 = np.dtype(dtype) != np.float64 or task != "ridge"
    for name, v, hi in (("clip_radius", clip_radius, F32_BOUND_RANGE[1] if task != "ridge" else P.BOUND_RANGE[1]),
                        ("clip_norm", clip_norm, F32_BOUND_RANGE[1] if f32 else P.BOUND_RANGE[1]),
                        ("response_bound", response_bound, P.BOUND_RANGE[1])):
        if v is not None:
            P.check_bound(name, v, P.BOUND_RANGE[0], hi)
    X, y, name = _load(data, dataset_kwargs)
    if X.ndim != 2 or not np.all(np.isfinite(X)) or not np.all(np.isfinite(y)):
        raise ValueError("X must be a finite 2-D numeric array and y finite (no NaN or inf)")
    if len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)}; they must match")
    if max(float(np.max(np.abs(X))), float(np.max(np.abs(y)))) > 1e150:
        raise ValueError("X or y has entries with |value| > 1e150; their squares would overflow (rescale them)")
    public = None if public_data is None else _check_public(public_data, X.shape[1])
    pub_list = [int(m) for m in np.atleast_1d(n_pubs)] if public is None else [len(public[1])]
    for m in pub_list if public is None else []:
        if m < 1 or m >= len(y):
            raise ValueError(f"n_pub must satisfy 1 <= n_pub <= n - 1 = {len(y) - 1}, got {m}")
    d = X.shape[1] + int(fit_intercept)
    options = dict(dp_gd_steps=int(dp_gd_steps), clip_radius=clip_radius, clip_norm=clip_norm,
                   response_bound=response_bound, oracle_grid=oracle_grid, dtype=dtype, **(task_options or {}))
    if center_y is None and task != "ridge":
        center_y = False  # labels of a classification task are never shifted
    prepare = TASKS[task]
    frames = []
    split_plan = [(s, [s]) for s in seed_list] if resample_split else [(split_seed, seed_list)]
    for n_pub in pub_list:
        for sseed, run_seeds in split_plan:
            X_pub, y_pub, X_tr, y_tr, X_te, y_te = _kept_split(X, y, n_pub, sseed, float(test_size), standardize,
                                                               True if center_y is None else bool(center_y),
                                                               public)
            if len(y_tr) < d:
                raise ValueError(f"n < d: {len(y_tr)} private training rows for d={d} columns")
            P.check_delta(delta, len(y_tr))  # warns when delta > 1/n (n public under replace-one)
            ctx = prepare(X_tr, y_tr, X_pub, y_pub, X_te, y_te, lams=lam_list, delta=delta, eta=eta, neighbouring=neighbouring,
                          fit_intercept=fit_intercept, penalize_intercept=penalize_intercept, **options)
            frames.extend(_run_methods(ctx, specs, eps_list, run_seeds, name, standardize))
    return _build_frame(frames)


#: Methods of one split run two at a time when the task's context allows it (``concurrent_methods``).
METHOD_THREADS = 2


def _run_methods(ctx, specs, eps_list, run_seeds, name, standardize) -> list:
    """Every method's rows on one split, in the order of ``specs``.

    A context with ``concurrent_methods = True`` (the logistic task, whose runners each hold BLAS at one
    thread and only read the context) has its methods run :data:`METHOD_THREADS` at a time, the longest
    first: a runner's arithmetic does not depend on what runs beside it (its runs, their grouping and BLAS's
    single thread are the same), so every number is the one the methods give one after the other, while
    the sweep at one epsilon (20 runs a method, where DP-GD runs on one thread) uses both cores. BLAS is held
    at one thread around the pool, so no runner's exit restores a count another one relies on, and the
    caller's :func:`engine.pmt._split_memo.bypass` (an upload: nothing kept) holds in the pool's threads.
    """
    def one(spec):
        out = spec.runner(ctx, eps_list, run_seeds)
        return _frame_columns(ctx, spec, out, eps_list, run_seeds, name, standardize)

    if not getattr(ctx, "concurrent_methods", False) or len(specs) < 2:
        return [one(spec) for spec in specs]
    import contextlib
    from concurrent.futures import ThreadPoolExecutor

    from engine.pmt import _split_memo
    from engine.pmt._blas import blas_limit

    off = _split_memo.bypassed()  # thread-local: an upload's sweep keeps nothing, in the pool's threads too

    def in_pool(i):
        with _split_memo.bypass() if off else contextlib.nullcontext():
            return one(specs[i])

    order = sorted(range(len(specs)), key=lambda i: -getattr(ctx, "method_cost", {}).get(specs[i].key, 0))
    with blas_limit(1), ThreadPoolExecutor(min(METHOD_THREADS, len(specs)), thread_name_prefix="sweep-method") as ex:
        done = dict(zip(order, ex.map(in_pool, order)))
    return [done[i] for i in range(len(specs))]


def _frame_columns(ctx, spec, out, epsilons, seeds, name, standardize) -> dict:
    """One runner's rows as a dict of equal-length 1-D arrays (scalars broadcast, no copy)."""
    li, ei, si = out["li"], out["ei"], out["si"]
    k = len(li)
    cols = {
        "dataset": name,
        "method": spec.name,
        "method_key": spec.key,
        "epsilon": np.asarray(epsilons, float)[ei],
        "delta": ctx.delta,
        "seed": np.asarray(seeds, int)[si],
        "lam": ctx.lams[li],
        "n_pub": ctx.n_pub,
        "n": ctx.n,
        "d": ctx.d,
        "standardize": bool(standardize),
        "mu": out["mu"],
    }
    cols.update(ctx.metrics(out["theta"], li))
    cols.update(kappa_raw=ctx.kappa_raw, kappa_pub=ctx.kappa_pub)
    extra = tuple(getattr(ctx, "extra_columns", ()))  # task-specific per-run columns (logistic: converged, ...)
    for c in ("kappa_pmt", "kappa_noisy", "radius", "frac_truncated", "B_y", "sigma_A", "sigma_b", "eig_fix") + extra:
        cols[c] = out.get(c, np.nan)
    # eig_fix: NaN (not applicable) reads as False
    cols["eig_fix"] = np.nan_to_num(np.asarray(cols["eig_fix"], dtype=float), nan=0.0).astype(bool)
    return {c: np.broadcast_to(np.asarray(v), (k,)) for c, v in cols.items()}


def _str_column(arrs: list) -> pd.api.extensions.ExtensionArray:
    """``pd.array(concatenated strings, dtype="str")``, built from codes when every part repeats one value.

    A runner's text columns (data set, method name and key) are one value broadcast over its rows; converting
    1,500 Python strings one by one cost more than all the sweep's arithmetic. The codes are
    expanded by pyarrow's dictionary cast (or by indexing an object array without pyarrow): the same array.
    """
    if not all(a.ndim == 1 and (a.strides[0] == 0 or a.shape[0] <= 1) for a in arrs):
        return pd.array(np.concatenate(arrs).astype(object), dtype="str")
    values = [str(a[0]) if a.shape[0] else "" for a in arrs]
    uniq = list(dict.fromkeys(values))
    codes = np.repeat(np.array([uniq.index(v) for v in values], dtype=np.int32), [a.shape[0] for a in arrs])
    arrow_type = _str_arrow_type()
    if arrow_type is not None:
        import pyarrow as pa

        dense = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(uniq, type=arrow_type)).cast(arrow_type)
        return pd.array(dense, dtype="str")
    return pd.array(np.array(uniq, dtype=object)[codes], dtype="str")


@functools.lru_cache(maxsize=1)
def _str_arrow_type():
    """The pyarrow type behind pandas' ``"str"`` dtype here (None when it is not Arrow-backed)."""
    storage = getattr(pd.array(np.array(["x"], dtype=object), dtype="str"), "_pa_array", None)
    return None if storage is None else storage.type


def _build_frame(parts: list[dict]) -> pd.DataFrame:
    """The tidy frame, built once from the runners' column arrays (no frame per runner + concat).

    Each column is one ``numpy.concatenate`` when every part has the same dtype; otherwise (e.g. a bool
    column that one method leaves NaN) the parts are concatenated as Series, so pandas' own promotion
    rules apply exactly as ``pandas.concat`` of per-runner frames would.
    """
    cols = {}
    for c in parts[0]:
        arrs = [p[c] for p in parts]
        if arrs[0].dtype.kind in "US":
            cols[c] = _str_column(arrs)
        elif all(a.dtype == arrs[0].dtype for a in arrs):
            cols[c] = np.concatenate(arrs)
        else:
            cols[c] = pd.concat([pd.Series(a) for a in arrs], ignore_index=True).to_numpy()
    return pd.DataFrame(cols, index=pd.RangeIndex(len(cols[next(iter(cols))])))


def summarize(frame: pd.DataFrame, metric: str = "l2_error") -> pd.DataFrame:
    """Median and quantile bands of a metric per (method, epsilon, lam, n_pub).

    Parameters
    ----------
    frame : DataFrame
        From :func:`run_sweep`.
    metric : str, default "l2_error"
        Any numeric column (``l2_error``, ``rel_error``, ``excess_risk``, ``rmse``, ...).

    Returns
    -------
    DataFrame
        Columns :data:`SUMMARY_COLUMNS` (preceded by ``dataset`` when the frame holds several data
        sets); methods in sweep order, epsilons ascending. ``privacy`` says what the metric is for that
        method (:func:`engine.pmt._registry.sweep_column_privacy`; every error metric is a non-private
        diagnostic: it is measured against the non-private fit or on held-out private rows).

    Raises
    ------
    ValueError
        If the metric column is missing.

    Examples
    --------
    >>> f = pd.DataFrame({"method": "PMT", "epsilon": 1.0, "lam": 0.0, "n_pub": 200,
    ...                   "seed": range(5), "l2_error": [1.0, 2.0, 3.0, 4.0, 100.0]})
    >>> summarize(f)[["median", "q25", "q75", "n_seeds"]].values.tolist()
    [[3.0, 2.0, 4.0, 5.0]]
    """
    if metric not in frame.columns:
        raise ValueError(f"metric {metric!r} is not a column of the frame; columns: {list(frame.columns)}")
    multi = "dataset" in frame.columns and frame["dataset"].nunique() > 1
    keys = (["dataset"] if multi else []) + ["method", "epsilon", "lam", "n_pub"]
    order = {m: i for i, m in enumerate(pd.unique(frame["method"]))}
    g = frame.groupby(keys, sort=False)[metric]
    q = g.quantile([0.05, 0.25, 0.5, 0.75, 0.95]).unstack()
    out = pd.DataFrame({
        "median": q[0.5], "q05": q[0.05], "q25": q[0.25], "q75": q[0.75], "q95": q[0.95],
        "n_seeds": g.size(),
    }).reset_index()
    out.insert(len(keys), "metric", metric)
    keys_of = (dict(zip(frame["method"], frame["method_key"])) if "method_key" in frame.columns else {})
    privacy_of = {m: sweep_column_privacy(metric, keys_of.get(m)) for m in out["method"].unique()}  # once per method
    out["privacy"] = [privacy_of[m] for m in out["method"]]
    out = out.sort_values(keys, key=lambda s: s.map(order) if s.name == "method" else s, kind="stable")
    return out.reset_index(drop=True)[(["dataset"] if multi else []) + list(SUMMARY_COLUMNS)]


#: Public name of one split's method runs (scripts/pmt_flights_results.py runs them with the noise on and off).
run_methods = _run_methods
__all__ += ["run_methods"]
