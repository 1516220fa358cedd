"""PMT ridge and DP-RR on data larger than memory: sufficient statistics on Dask.

DP-PMTRR, PMT-pooled and DP-RR (``docs/PMT.md`` sections 3 and 5) release only sums over the private rows:
``A = Z^T Z`` and ``b = Z^T clip(y, +-B_y)`` of the bounded rows ``Z`` (PMT: whitened with the public
second moment and truncated at R; DP-RR: raw rows clipped at C). This module computes those sums
blockwise with Dask and hands them to the estimators' own release (:meth:`PMTRidge._release`,
:meth:`DPRidge._release`: noise, then the solve), so the Dask path and the in-memory path release the
same statistic with the same noise: for the same ``random_state`` the coefficients agree up to
floating-point summation order (tests: 1e-10 relative).

Design
------
- The private rows are one Dask array ``[X | y]`` (float64, one column chunk). Every block is mapped
  (:func:`dask.array.map_blocks`) to one row of statistics: its row count, ``A``, ``b``, the raw
  ``Xa^T Xa`` (for ``kappa_raw``; display only), the numbers of truncated rows and clipped responses, and
  per column the numbers of NaN/inf entries and of entries with ``|x| > 1e150``. Dask's own tree
  reduction (``.sum(axis=0)``) adds the rows: **one pass** over the private data.
- ``n`` must be known **before** the pass: R and B_y depend on it (``R = sqrt(d (1 + ln(2n/eta)))``).
  Under replace-one n is public. It is the row count of the data: free for a Dask array with known
  chunks, from the Parquet footers for Parquet files, and a counting pass (rows only) for CSV files or
  arrays with unknown chunks. The statistics pass counts the rows again and must agree.
- Bad input (NaN, inf, non-numeric, ``|x| > 1e150``) is found in that pass; the error names the
  column and the chunk (and, for files, the file, from a second look at the files that runs only on
  this error path), and is raised **before any noise is drawn**.
- Noise is added once, on the driver, after the reduction, by the estimator's release.
- Scheduler: Dask's default (the local threaded scheduler for arrays), or a ``dask.distributed``
  cluster when a scheduler address is given (:func:`run_from_files`, ``scheduler="tcp://..."``).

``response="joint"`` (the default ``"auto"`` with public labels) is one pass too: the rows ``[x, 1, y]``
whitened with the public joint moment and truncated at the joint R, summed as ``Z~^T Z~``.

Not on Dask (raise a clear error): ``"private"`` bounds, DP-GD and the GLMs
(each gradient or Newton step is one more pass over the private data).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from engine.pmt._backends import register_dask_fit
from engine.pmt._base import Lazy, _mu, _check_n_ge_d, _check_X_pub, _check_y, penalty_mask
from engine.pmt._dask_files import read_private, read_public
from engine.pmt._dask_pass import PrivateInputError, _reading, blockwise_statistics, private_array
from engine.pmt._bounds import _kappa_from_eigs, pmt_radius
from engine.pmt._moment import public_moment
from engine.pmt.adassp import AdaSSPRidge
from engine.pmt.baselines import DPRidge, DPRidgeOracle
from engine.pmt.pooled import PMTPooledRidge
from engine.pmt.ridge import PMTRidge, SSPStatistics

__all__ = [
    "PrivateInputError",
    "fit_dask",
    "dask_statistics",
    "DaskStatistics",
    "RELEASE_PARAMS",
    "blockwise_statistics",
    "private_array",
    "read_private",
    "read_public",
    "run_from_files",
    "ENGINES",
    "DASK_METHODS",
]

#: Engines of the ``--engine`` CLI flag: in memory (pandas/numpy) or out of core (Dask).
ENGINES = ("memory", "dask")
#: Methods :func:`run_from_files` fits on Dask.
DASK_METHODS = {"pmt": PMTRidge, "dp-rr": DPRidge, "pmt-pooled": PMTPooledRidge, "adassp": AdaSSPRidge}


# --------------------------------------------------------------------------------------------
# the estimators on Dask
# --------------------------------------------------------------------------------------------
def _public(X_pub, y_pub, p, *, need_X_pub, need_y_pub):
    Xq = _check_X_pub(X_pub, p, need_X_pub)
    yq = None
    if y_pub is not None:
        m = Xq.shape[0] if Xq is not None else np.asarray(y_pub).shape[0]
        yq = _check_y(y_pub, m, "y_pub")
    elif need_y_pub:
        raise ValueError("public labels are required here: pass y_pub to fit(), or give response_bound=<float>")
    return Xq, yq


def _no_private_bounds(est, *names):
    for name in names:
        if isinstance(getattr(est, name, None), str) and getattr(est, name) == "private":
            raise ValueError(f"{name}='private' is not supported on Dask (it needs the private data outside any "
                             "mechanism); give None (public default) or a float")


#: Parameters only the release uses: changing them needs no new pass over the private data.
RELEASE_PARAMS = ("epsilon", "delta", "lam", "neighbouring", "penalize_intercept", "eig_floor", "random_state",
                  "sampler")


@dataclass
class DaskStatistics:
    """The result of one pass over the private rows, ready for any number of releases.

    The statistics depend on ``n``, ``d``, ``eta``, the public rows and the bounds, not on epsilon, delta,
    lam or the seed; :meth:`release` draws the noise and solves for any of those (post-processing of the
    same pass; each release spends its own budget).

    Attributes
    ----------
    estimator : PMTRidge or DPRidge
        The template whose bound parameters were used.
    stats : SSPStatistics
    p : int
        Number of features.
    names : list of str
        Feature names and the response name.
    gram_raw, xty_raw : ndarray
        Raw ``Xa^T Xa`` and ``Xa^T y`` (not bounded): the non-private reference only (never released).
    """

    estimator: object
    stats: SSPStatistics
    p: int
    names: list
    gram_raw: np.ndarray
    xty_raw: np.ndarray
    _args: tuple
    #: The public centring (and, for DP-RR, scaling) applied to the rows before the pass, or None
    #: (:mod:`engine.pmt._public_scale`); releases and the reference are mapped back through it.
    scaling: object = None

    def release(self, **params):
        """A fitted copy of the template with ``params`` (only :data:`RELEASE_PARAMS`) from these statistics."""
        from sklearn.base import clone

        other = sorted(set(params) - set(RELEASE_PARAMS))
        if other:
            raise ValueError(f"{other} change the statistics; only {RELEASE_PARAMS} can differ between releases")
        return _release(clone(self.estimator).set_params(**params), self)

    def reference_theta(self, lam: float, *, penalize_intercept: bool = False) -> np.ndarray:
        """Non-private ridge on the untruncated rows from the same pass (normal equations; not a release)."""
        d = self.gram_raw.shape[0]
        Pm = penalty_mask(d, fit_intercept=self.estimator.fit_intercept, penalize_intercept=penalize_intercept)
        sc = self.scaling
        if sc is None:
            return np.linalg.solve(self.gram_raw + self.stats.n * lam * Pm, self.xty_raw)
        theta = np.linalg.solve(self.gram_raw + self.stats.n * lam * sc.penalty(Pm), self.xty_raw)
        return sc.to_raw(theta, self.estimator.fit_intercept)


def dask_statistics(estimator, X, y, X_pub=None, y_pub=None, *, source=None) -> DaskStatistics:
    """Validate everything and run the one pass for ``estimator`` (PMTRidge ``response="clip"``,
    PMTPooledRidge or DPRidge).

    Validation order: the parameters, the schema and shapes, the public rows and bounds, then the pass
    over the private rows (bad entries raise :class:`PrivateInputError` here). No noise is drawn.
    Arguments as in :func:`fit_dask`.
    """
    if isinstance(estimator, DPRidgeOracle) or type(estimator) not in (PMTRidge, DPRidge, PMTPooledRidge, AdaSSPRidge):
        raise TypeError(f"{type(estimator).__name__} is not supported on Dask; use PMTRidge, PMTPooledRidge, "
                        "DPRidge or AdaSSPRidge")
    pmt = not isinstance(estimator, DPRidge)
    if isinstance(estimator, PMTPooledRidge):
        eta = estimator._privacy_params()[4]
    else:
        eta = estimator._check_params()[4]
    joint = isinstance(estimator, PMTRidge) and estimator._response_for(y_pub) == "joint"
    if joint and estimator.response_bound is not None:
        raise ValueError("response_bound applies to response='clip' only; response='joint' bounds (x, y) by R")
    _no_private_bounds(estimator, "response_bound", "clip_radius")
    with _reading(source, source["columns"] if source else None):
        data, names = private_array(X, y)  # counts the rows when the chunks are unknown (CSV)
    n, p = int(data.shape[0]), int(data.shape[1]) - 1
    if p < 1:
        raise ValueError("X must have at least one column")
    d = _check_n_ge_d(n, p, estimator.fit_intercept)
    need_y_pub = estimator.response_bound is None or isinstance(estimator, PMTPooledRidge)
    Xq, yq = _public(X_pub, y_pub, p, need_X_pub=pmt, need_y_pub=need_y_pub)
    if joint:
        return _joint_statistics(estimator, data, names, n, p, d, Xq, yq, eta, source)
    sc = _scaling(estimator, Xq, yq, p)
    shift = div = None
    if sc is not None:  # public statistics only: applied to each block in the one pass, after its entries are checked
        shift, div = np.concatenate([sc.mean, [sc.y_center]]), np.concatenate([sc.scale, [1.0]])
        yq = None if yq is None else yq - sc.y_center
        if not pmt:
            Xq = sc.public(Xq)
    B_y = estimator._response_bound(yq, None, n, eta)
    if pmt:
        moment = public_moment(Xq, fit_intercept=estimator.fit_intercept, on_singular=estimator.on_singular,
                               estimator=getattr(estimator, "public_moment", "sample"))
        R = pmt_radius(d, n, eta)
        whiten, radius, args = moment.Sigma_pub_inv_sqrt, R, (moment, R, B_y, Xq, yq)
    else:
        C = estimator._clip_radius(None, d, n, eta)
        whiten, radius, args = None, C, (C, B_y, Xq)
    stats, G, xty = blockwise_statistics(data, names, fit_intercept=estimator.fit_intercept, whiten=whiten,
                                         radius=radius, B_y=B_y, n=n, source=source, return_raw=True, shift=shift,
                                         div=div)
    return DaskStatistics(estimator, stats, p, names, G, xty, args, sc)


def _joint_statistics(est, data, names, n, p, d, Xq, yq, eta, source):
    """The one pass of ``response="joint"``: the rows ``[x, 1, y]`` whitened with the public joint moment and
    truncated at the joint R, summed as ``S = Z~^T Z~`` (the in-memory transform's rows, in another order).

    The pass sees ``[X | y]`` as features (intercept appended after them) with y repeated as its response;
    ``whiten`` permutes ``[x, y, 1]`` to ``[x, 1, y]`` before the joint whitening, so the rows are the in-memory
    ones; the response statistics of the pass are not used (its bound is inf: nothing is clipped)."""
    import dask.array as da

    from engine.pmt._public_scale import PublicScaling

    c = est._joint_center(yq)  # the public centre of y, as in memory (applied to both y columns in the pass)
    mom = est._joint_moment(Xq, np.asarray(yq, dtype=float) - c)
    k = d + 1
    perm = np.zeros((k, k))  # [x, y, 1] -> [x, 1, y] (no intercept: the order is already [x, y])
    order = list(range(p)) + ([p + 1, p] if est.fit_intercept else [p])
    perm[np.arange(k), order] = 1.0
    whiten = perm @ mom.Sigma_pub_inv_sqrt
    R = pmt_radius(k, n, eta)
    data2 = da.concatenate([data, data[:, -1:]], axis=1).rechunk({1: -1})
    shift = div = None
    if c != 0.0:
        shift, div = np.concatenate([np.zeros(p), [c, c]]), np.ones(p + 2)
    stats, G, _ = blockwise_statistics(data2, list(names) + [names[-1]], fit_intercept=est.fit_intercept,
                                       whiten=whiten, radius=R, B_y=math.inf, n=n, source=source, return_raw=True,
                                       shift=shift, div=div)
    keep = [j for j in range(k) if j != p]  # the raw Gram of [x, 1] (y left out), for kappa_raw
    sc = PublicScaling(np.zeros(p), np.ones(p), c) if c != 0.0 else None
    return DaskStatistics(est, stats, p, names, G[np.ix_(keep, keep)], G[keep, p], ("joint", mom, R), sc)


def _scaling(est, Xq, yq, p):
    """The in-memory fit's public centring (:mod:`engine.pmt._public_scale`): y only for PMT and PMT-pooled
    (the public centre of ``y_pub``), features and y for DP-RR; None with ``center=None``."""
    from engine.pmt._public_scale import PublicScaling, public_scaling
    from engine.pmt.ridge import _public_center

    if isinstance(est, PMTRidge):
        c = _public_center(est, yq)
        return None if c == 0.0 else PublicScaling(np.zeros(p), np.ones(p), c)
    return public_scaling(None if isinstance(est, PMTPooledRidge) else Xq, yq, center=est.center,
                          fit_intercept=est.fit_intercept, penalize_intercept=est.penalize_intercept, p=p)


def fit_dask(estimator, X, y, X_pub=None, y_pub=None, *, source=None):
    """Fit :class:`PMTRidge` (``response="clip"``), :class:`PMTPooledRidge` or :class:`DPRidge` on Dask.

    Called by the estimators' ``fit`` when ``X`` or ``y`` is a Dask collection: :func:`dask_statistics`
    (validation and the one pass), then the estimator's own release (the only place noise is drawn).

    Parameters
    ----------
    estimator : PMTRidge, PMTPooledRidge or DPRidge
    X : dask.array.Array of shape (n, p) or dask.dataframe.DataFrame
    y : dask.array.Array of shape (n,), dask.dataframe.Series or in-memory array
    X_pub, y_pub : in-memory arrays, as for the estimator's ``fit``
    source : dict, optional
        File provenance (see :func:`blockwise_statistics`).

    Returns
    -------
    estimator
        Fitted; ``transform_`` is None (the transformed rows are never held), ``report_`` as in memory
        (``kappa_raw``, ``kappa_pmt``, ``frac_truncated`` and ``frac_y_clipped`` computed in the same pass).

    Raises
    ------
    PrivateInputError, ValueError, TypeError
        Before any noise is drawn.
    """
    return _release(estimator, dask_statistics(estimator, X, y, X_pub, y_pub, source=source))


def _release(est, ds):
    """The estimator's own release (noise, solve, report) from the statistics of the pass, mapped back through
    the public centring of the pass (when there was one)."""
    sc = ds.scaling
    if isinstance(est, DPRidge):
        C, B_y, Xq = ds._args
        pen = None if sc is None else sc.penalty(est._penalty_mask(ds.stats.A.shape[0]))
        est._release(ds.stats, C, B_y, ds.p, Xq, penalty=pen)
    elif ds._args[0] == "joint":
        _, mom, R = ds._args
        est.transform_ = None
        params = est._check_params()
        n, d = ds.stats.n, ds.gram_raw.shape[0]
        st = ds.stats
        est._release_joint(st.A, mom, R, n, ds.p, d, params, _mu(params[0], params[1], n, est.sampler),
                           est._penalty_mask(d), kappa_raw=_kappa_from_eigs(np.linalg.eigvalsh(ds.gram_raw)),
                           kappa_pmt=Lazy(lambda: st.kappa_A), frac_truncated=st.frac_truncated)
    else:
        moment, R, B_y, Xq, yq = ds._args
        est.transform_ = None
        if isinstance(est, PMTPooledRidge):
            est._release(ds.stats, moment, R, B_y, ds.p, Xq, yq)
        else:
            est._release(ds.stats, moment, R, B_y, ds.p)
    if sc is not None:
        est._set_theta(sc.to_raw(est.theta_, est.fit_intercept), ds.p)
        est.report_.extra["response_center"] = sc.y_center
        if isinstance(est, DPRidge):
            est.report_.extra["public_standardized"] = True
    return est


# --------------------------------------------------------------------------------------------
# the scheduler and the file-level entry point (for the CLI)
# --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def scheduler_context(scheduler=None):
    """Dask's local threaded scheduler (None), a named local scheduler, or a ``dask.distributed`` cluster.

    Parameters
    ----------
    scheduler : None, "threads", "processes", "synchronous", a ``tcp://host:port`` address or a
        ``distributed.Client``
    """
    import dask

    if scheduler is None or scheduler == "threads":
        with dask.config.set(scheduler="threads"):
            yield None
    elif scheduler in ("processes", "synchronous", "sync", "single-threaded"):
        with dask.config.set(scheduler=scheduler):
            yield None
    elif isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client

        with Client(scheduler) as client:
            yield client
    elif hasattr(scheduler, "submit"):  # a distributed.Client
        with dask.config.set(scheduler=scheduler):
            yield scheduler
    else:
        raise ValueError(f"scheduler must be None, 'threads', 'processes', 'synchronous' or an address "
                         f"'tcp://host:port', got {scheduler!r}")


def run_from_files(paths, target, features=None, *, public, method="pmt", scheduler=None, sep=",",
                   statistics_only=False, **params):
    """Fit PMT ridge or DP-RR on private Parquet/CSV files out of core (the CLI's ``--engine dask``).

    Parameters
    ----------
    paths : str, path or list
        Private files or globs (``"data/*.parquet"``, ``"data/*.csv"``); see :func:`read_private`.
    target : str
    features : list of str, optional
    public : str or path
        One public CSV or Parquet file with the same columns (held in memory; never inferred from the
        private files).
    method : {"pmt", "dp-rr", "pmt-pooled"}, default "pmt"
    scheduler : see :func:`scheduler_context`
    sep : str, default ","
        CSV delimiter of the private files.
    statistics_only : bool, default False
        Return the :class:`DaskStatistics` of the pass (for many releases: epsilons, lams, seeds) instead
        of one fitted estimator.
    **params
        Estimator parameters (``epsilon``, ``delta``, ``lam``, ``eta``, ``random_state``, ...).

    Returns
    -------
    PMTRidge or DPRidge
        Fitted (or :class:`DaskStatistics` with ``statistics_only``).

    Raises
    ------
    PrivateInputError
        Bad private entries, naming file and column (no noise drawn).
    """
    if method not in DASK_METHODS:
        raise ValueError(f"method must be one of {sorted(DASK_METHODS)} on Dask, got {method!r}")
    # the pass centres with public statistics as the in-memory fit does (center="public" by default: y by the
    # public mean of the labels; DP-RR also the features), so both engines give the same coefficients
    est = DASK_METHODS[method](**params)
    X, y, source = read_private(paths, target, features, sep=sep)
    X_pub, y_pub = read_public(public, target, list(X.columns))
    with scheduler_context(scheduler):
        ds = dask_statistics(est, X, y, X_pub, y_pub, source=source)
    if statistics_only:
        return ds
    return ds.release(**{k: v for k, v in params.items() if k in RELEASE_PARAMS})


register_dask_fit(fit_dask)  # the estimators' fit hands Dask collections here (engine.pmt._backends)
