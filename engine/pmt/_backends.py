"""Where an estimator's ``fit`` hands data that is not in memory: the out-of-core (Dask) registry.

The ridge estimators (:class:`~engine.pmt.PMTRidge`, :class:`~engine.pmt.PMTPooledRidge`,
:class:`~engine.pmt.DPRidge`) sit below the Dask path: :mod:`engine.pmt.dask` computes the same
sufficient statistics blockwise and calls the estimators' own release, so it imports them, never the
reverse. An estimator asks :func:`is_dask` whether its arguments are Dask collections and, if so,
calls :func:`fit_out_of_core`, which runs the handler :mod:`engine.pmt.dask` registered with
:func:`register_dask_fit` when it was imported (``engine.pmt``'s ``__init__`` imports it, so the
handler is always there once any ``engine.pmt`` module is loaded).

Nothing here touches the data or draws noise: it only routes the call.
"""

from __future__ import annotations

import sys
from typing import Callable

_dask_fit: Callable | None = None


def register_dask_fit(fit: Callable) -> Callable:
    """Register ``fit(estimator, X, y, X_pub, y_pub)`` as the Dask path of the estimators; returns ``fit``."""
    global _dask_fit
    _dask_fit = fit
    return fit


def is_dask(*arrays) -> bool:
    """Whether any argument is a Dask collection (without importing dask when it is not loaded)."""
    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return any(is_dask_collection(a) for a in arrays)


def fit_out_of_core(estimator, X, y, X_pub=None, y_pub=None):
    """Fit ``estimator`` on Dask collections with the registered Dask path.

    Raises
    ------
    RuntimeError
        No Dask path is registered (``engine.pmt.dask`` was not imported).
    """
    if _dask_fit is None:
        raise RuntimeError("no Dask path is registered: import engine.pmt.dask before fitting on Dask collections")
    return _dask_fit(estimator, X, y, X_pub, y_pub)


class NotOutOfCoreError(TypeError):
    """A Dask collection was given to an estimator (or a code path) that cannot run out of core.

    Raised before anything is read from the collection and before any noise is drawn, instead of pulling the
    private rows into memory without saying so. :data:`OUT_OF_CORE` names the estimators that run on Dask.
    """


#: The estimators whose ``fit`` accepts Dask collections (one pass over the chunks per statistic).
OUT_OF_CORE = ("PMTRidge (response='clip')", "PMTPooledRidge", "DPRidge", "DPGDRidge", "RidgeReference",
               "PMTLogistic", "DPNewtonLogistic", "DPGDLogistic", "LogisticReference", "PMTPoisson",
               "PoissonReference")

_dask_glm_fit: Callable | None = None


def register_dask_glm_fit(fit: Callable) -> Callable:
    """Register ``fit(estimator, X, y, X_pub, y_pub)`` as the Dask path of the GLMs, DP-GD and the references."""
    global _dask_glm_fit
    _dask_glm_fit = fit
    return fit


def fit_glm_out_of_core(estimator, X, y, X_pub=None, y_pub=None):
    """Fit a GLM, DP-GD or reference estimator on Dask collections (:mod:`engine.pmt._dask_glm`, registered when
    ``engine.pmt`` is imported)."""
    if _dask_glm_fit is None:
        raise RuntimeError("no Dask path for the GLMs is registered: import engine.pmt._dask_glm first")
    return _dask_glm_fit(estimator, X, y, X_pub, y_pub)


def dask_features(X):
    """The private features of a Dask fit, checked lazily (a Dask array or data frame with numeric columns;
    nothing is computed), for :func:`engine.pmt.public_fit.fit_public`'s column selection (:func:`select_columns`)."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, dd.DataFrame):
        bad = [f"{c!r} ({t})" for c, t in zip(X.columns, X.dtypes) if getattr(t, "kind", "O") not in "biuf"]
        if bad:
            raise TypeError(f"private column(s) {', '.join(bad)} are not numeric; the features must be real-valued")
        return X
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask.array.Array or a dask.dataframe.DataFrame, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features), got {X.ndim} dimension(s)")
    return X


def select_columns(X, keep):
    """Columns ``keep`` (positions) of a Dask array or data frame, lazily (a data frame's by name)."""
    if hasattr(X, "columns"):
        return X[[X.columns[j] for j in keep]]
    return X[:, list(keep)]


def refuse_dask(who: str, *arrays, why: str = "") -> None:
    """Raise :class:`NotOutOfCoreError` naming ``who`` when any argument is a Dask collection."""
    if is_dask(*arrays):
        raise NotOutOfCoreError(
            f"{who} cannot run out of core{': ' + why if why else ''}; it would have to read the whole Dask "
            f"collection into memory, which it does not do silently. Compute the data yourself (e.g. "
            f"X.compute()) if it fits in memory, or use an estimator that runs on Dask: {', '.join(OUT_OF_CORE)}")
