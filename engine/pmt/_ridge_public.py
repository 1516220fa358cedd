"""PMTRidge's fit from public information (a public centre of y, a stated or public bound): the ``_fit_moment`` step.

:func:`engine.pmt.public_fit.fit_public` calls :meth:`_PublicRidgeMixin._fit_moment` on a
:class:`engine.pmt.PMTRidge` with the kept columns, the public information and its moment; ``_public_center``
is the centre the Dask path uses. Kept beside :mod:`engine.pmt.ridge` (which mixes it in) to keep that module
to the SSP release itself.
"""

from __future__ import annotations

import math

import numpy as np

from engine.pmt._base import Lazy, _mu, _validate_data
from engine.pmt._blas import blas_limit
from engine.pmt._bounds import _kappa_from_eigs, _response_bound_rows
from engine.pmt._transform import _transform_rows

__all__: list = []


def _public_center(est, y_pub) -> float:
    """The public centre of y that ``center="public"`` uses on public rows: the mean of ``y_pub`` (0 when it does
    not apply: ``center=None``, ``response="joint"``, no or equal public labels, no or a penalised intercept)."""
    if (est.center != "public" or est._response_for(y_pub) != "clip" or y_pub is None or not est.fit_intercept
            or est.penalize_intercept):
        return 0.0
    yq = np.asarray(y_pub, dtype=float).ravel()
    if yq.size < 1 or not np.all(np.isfinite(yq)) or np.all(yq == yq[0]):
        return 0.0
    return float(np.mean(yq))



class _PublicRidgeMixin:
    """The ridge release from a :class:`engine.pmt.public_info.PublicInfo` (module docstring)."""

    def _fit_moment(self, Xk, y, sub, mom, response_center) -> float:
        """The release (response="clip") with public information ``sub`` (a :class:`engine.pmt.public_info.PublicInfo`
        on the kept columns), its moment ``mom`` and a public centre of y; returns the centre used
        (:func:`engine.pmt.public_fit.fit_public`)."""
        est = self
        if est._response_for(sub.y_pub) == "joint":
            if sub.y_pub is None:
                raise ValueError("response='joint' needs public labels (mode 'labelled')")
            if sub.X_pub is None:
                raise ValueError("response='joint' is fitted from public rows: pass X_pub and y_pub as arrays")
            if est.response_bound is not None:
                raise ValueError("response_bound applies to response='clip' only; response='joint' bounds (x, y) by R")
            # the joint release (never centred: the intercept block of the joint moment does it)
            with blas_limit(1):
                eps, dlt, nb, lam, eta, eig_floor = est._check_params()
                Xp, yv, Xq, yq, n, p, d = _validate_data(Xk, y, sub.X_pub, sub.y_pub, fit_intercept=est.fit_intercept,
                                                         need_X_pub=True, need_y_pub=True)
                est._fit_joint(Xp, yv, Xq, yq, n, p, d, eps, dlt, nb, _mu(eps, dlt, n, est.sampler), lam, eta,
                               eig_floor, est._penalty_mask(d))
            return float(est.report_.extra.get("response_center", 0.0))
        with blas_limit(1):
            params = est._check_params()
            eps, dlt, nb, lam, eta, eig_floor = params
            Xp, yv, _, _, n, p, d = _validate_data(Xk, y, None, None, fit_intercept=est.fit_intercept, need_X_pub=False)
            if response_center is None:
                c = sub.y_mean() if sub.y_pub is not None else 0.0
                if sub.y_pub is not None and np.all(sub.y_pub == sub.y_pub[0]):
                    c = 0.0  # equal public labels (e.g. one public row): no spread to bound around a centre
            else:
                c = float(response_center)
                if not math.isfinite(c):
                    raise ValueError(f"response_center must be finite, got {response_center!r}")
            if not est.fit_intercept or est.penalize_intercept:
                c = 0.0  # a shift of y is undone exactly by an unpenalised intercept only: otherwise nothing is centred
            yc = yv - c
            if est.response_bound is None:
                if sub.y_pub is None:
                    raise ValueError("public labels y_pub are required for the public response bound; without them the "
                                     "bound must come from you: set response_bound=<float> (|y - centre| <= bound; a "
                                     "stated, public bound), never from the private rows")
                B_y = _response_bound_rows(np.asarray(sub.y_pub, dtype=float) - c, n, eta)
            else:
                B_y = est._response_bound(None, yc, n, eta)
            ycl = np.clip(yc, -B_y, B_y)
            tr = _transform_rows(Xp, mom, eta, y=ycl)
            stats = self._ssp_statistics(tr, n, int(np.count_nonzero(ycl != yc)))
            est.transform_ = tr
            est._release(stats, tr.moment, tr.radius, B_y, p, params=params,
                         kappa_raw=Lazy(lambda: _kappa_from_eigs(tr.eigenvalues_raw * n)))
        if est.fit_intercept:
            est._set_theta(np.concatenate([est.coef_, [est.intercept_ + c]]), p)
        return float(c)
