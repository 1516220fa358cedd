"""Fit a PMT estimator from any kind of public information (:class:`engine.pmt.public_info.PublicInfo`).

:func:`fit_public` is what ``PMTRidge``, ``PMTLogistic`` and ``PMTPoisson`` do when ``fit`` is given a
:class:`~engine.pmt.public_info.PublicInfo` as ``X_pub`` (labelled rows, unlabelled rows or a published
moment; ``docs/specs/PMT.md`` section 2 allows "public X_pub or a public second-moment matrix"):

1. **Columns the public information never spans** (:meth:`PublicInfo.unspanned`) are dropped from the
   PMT fit with an :class:`~engine.pmt.public_info.UnspannedWarning` naming them (``unspanned="drop"``,
   default; their coefficient is 0 and ``report_.extra["dropped_columns"]`` names them), or kept with the
   regularised whitening and the same warning (``unspanned="regularize"``). Remaining exact collinearity
   among the public columns is warned about too (the columns loading on the null directions are named).
2. **Centring with public statistics** (ridge): the response is centred by a public centre ``c`` before
   the response bound is applied: the public mean of ``y_pub`` (mode "labelled") or the centre the user
   states (``response_center``; default 0 without public labels). The bound is then
   ``B_y = sqrt(mean((y_pub - c)^2) (1 + ln(2n/eta)))`` from the public labels, or the user's
   ``response_bound`` (required without public labels: it is never taken from the private rows). The
   fitted intercept is shifted back by ``c``, so predictions are on the scale of ``y``. Why this matters:
   on raw CCPP (power output about 450 MW with a spread of 17) the uncentred bound was 1,685 and PMT's
   noise on ``b`` about 27 times larger than needed. The features need no explicit centring: PMT whitens
   ``(x, 1)`` with the uncentered moment, whose intercept block is the public mean, so the whitened rows
   are those of the publicly centred features up to a rotation.
3. The estimator's own release on the kept columns, whitened with the public moment
   (:meth:`PublicInfo.public_moment`).

Privacy: every choice above (which columns, the centre, the bound) is a function of the public
information and the user's statements; the private rows enter only the estimator's noisy release.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from engine.pmt.public_info import UNSPANNED, PublicInfo, UnspannedWarning, unspanned_message

__all__ = ["fit_public", "family_of"]


def family_of(est) -> str:
    """``"ridge"``, ``"logistic"`` or ``"poisson"``: the estimator's ``_public_family`` (``ValueError`` otherwise)."""
    fam = getattr(type(est), "_public_family", None)
    if fam not in ("ridge", "logistic", "poisson"):
        raise ValueError(f"fit_public fits PMTRidge, PMTLogistic or PMTPoisson, got {type(est).__name__}")
    return fam


def _public_info_path(X_pub) -> bool:
    """Whether an estimator's ``fit`` goes through :func:`fit_public`: a PublicInfo, or public rows (a 2-D array-like).

    A :class:`engine.pmt.PublicMoment` (built by the caller) and None go the estimator's own way.
    """
    from engine.pmt._moment import PublicMoment

    if X_pub is None or isinstance(X_pub, PublicMoment):
        return False
    if isinstance(X_pub, PublicInfo):
        return True
    return np.ndim(X_pub) == 2 and np.shape(X_pub)[0] >= 1


def _as_public_info(X_pub, y_pub=None) -> PublicInfo:
    """``X_pub`` itself if a PublicInfo, else :meth:`PublicInfo.from_rows` of the rows (names ``x0, x1, ...``)."""
    from engine.pmt._base import _check_X

    if isinstance(X_pub, PublicInfo):
        return X_pub
    if np.ndim(X_pub) == 2 and np.shape(X_pub)[0] < 1:
        raise ValueError("X_pub has 0 rows: n_pub must be >= 1")
    return PublicInfo.from_rows(_check_X(X_pub, "X_pub"), y_pub)  # the estimators' checks and wording


def fit_public(est, X, y, info: PublicInfo, *, unspanned: str = "drop", response_center=None, stacklevel: int = 3):
    """Fit ``est`` (a PMT estimator) on private ``(X, y)`` with public information ``info`` (module docstring).

    Parameters
    ----------
    est : PMTRidge, PMTLogistic or PMTPoisson
        Its parameters are used as set (``response_bound`` of a ridge: a float is the user's bound).
    X : array-like of shape (n, p)
        Private features, columns in ``info.columns`` order (use :meth:`PublicInfo.align` first).
    y : array-like of shape (n,)
    info : PublicInfo
    unspanned : {"drop", "regularize"}, default "drop"
    response_center : float, optional
        Ridge: the public centre of y (a stated value). Default: the public mean of ``y_pub`` in mode
        "labelled", else 0.

    Returns
    -------
    est
        Fitted; ``coef_`` has p entries (0 for a dropped column); ``report_.extra`` gains ``public_mode``,
        ``dropped_columns``, ``collinear_columns`` and (ridge) ``response_center``.

    Raises
    ------
    ValueError
        Before any noise: column count mismatch, unknown ``unspanned``, a ridge without public labels and
        without a numeric ``response_bound``, ``response="joint"`` without public labels; and the estimator's
        own checks. (Nothing is dropped when ``n_pub <= d``, where the moment is singular whatever the
        columns, or when no column is spanned at all: the regularised moment is used, as reported.)
    """
    if unspanned not in UNSPANNED:
        raise ValueError(f"unspanned must be one of {UNSPANNED}, got {unspanned!r}")
    if not isinstance(info, PublicInfo):
        raise TypeError(f"info must be a PublicInfo, got {type(info).__name__}")
    from engine.pmt._base import _check_X

    fam = family_of(est)
    if fam == "ridge":
        est._check_params()  # every parameter before the data (and before any noise)
    else:
        est._newton_params()
    from engine.pmt._backends import dask_features, is_dask, select_columns

    dask = is_dask(X, y)
    if dask:  # out of core: the columns are selected lazily; est.fit goes to engine.pmt._dask_glm
        Xp = dask_features(X)
    else:
        Xp = _check_X(X, "X")
    if Xp.shape[1] != info.p:
        raise ValueError(f"X_pub has {info.p} columns but X has {Xp.shape[1]}; they must match")
    # with n_pub <= d the moment is singular whatever the columns (reported as regularised): nothing is dropped
    drop = info.unspanned() if info.n_pub > info.p + 1 else []
    if len(drop) == info.p:
        drop = []  # no column spanned (e.g. identical public rows): the regularised moment, as before
    if drop:
        warnings.warn(unspanned_message([info.columns[j] for j in drop])
                      if unspanned == "drop" else
                      f"the public information never spans the column(s) {[info.columns[j] for j in drop]}; kept with "
                      "the regularised whitening (its coefficient can be far off)", UnspannedWarning,
                      stacklevel=stacklevel)
    keep = [j for j in range(info.p) if not (unspanned == "drop" and j in drop)]
    sub = info.subset(keep)
    collinear = sub.collinear_columns() if est.fit_intercept and sub.n_pub > sub.p + 1 else []
    if collinear:
        warnings.warn(f"the public moment is singular along a combination of the columns {collinear} (exactly "
                      "collinear in the public information); PMT regularises that direction", UnspannedWarning,
                      stacklevel=stacklevel)
    if len(keep) == info.p and info.X_pub is not None and hasattr(est, "_memo_moment"):
        mom = est._memo_moment(info.X_pub)  # the estimator's memoised moment of the same public rows
    else:
        mom = sub.public_moment(fit_intercept=est.fit_intercept, on_singular=est.on_singular,
                                estimator=getattr(est, "public_moment", "sample"))
    Xk = Xp if len(keep) == info.p else (select_columns(Xp, keep) if dask else Xp[:, keep])
    extra = {"public_mode": info.mode, "public_source": info.source,
             "dropped_columns": [info.columns[j] for j in drop] if unspanned == "drop" else [],
             "unspanned_columns": [info.columns[j] for j in drop], "collinear_columns": collinear}
    if fam == "ridge":
        c = est._fit_moment(Xk, y, sub, mom, response_center)
        extra["response_center"] = c
    else:
        est.fit(Xk, y, X_pub=mom)
    # coefficients back on all p columns (0 for the dropped ones)
    coef = np.zeros(info.p)
    coef[keep] = est.coef_
    theta = np.concatenate([coef, [est.intercept_]]) if est.fit_intercept else coef
    est._set_theta(theta, info.p)
    est.report_.extra.update(extra)
    est.report_.n_pub = info.n_pub
    return est
