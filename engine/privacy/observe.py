"""Observation points inside the product's release code (read by the audit, never by the product).

A release is the noisy statistic a mechanism hands out. The empirical audit (:mod:`engine.audit`) must
look at what the product's own code produces, at the point where it produces it, not at a
re-computation from captured inputs (a re-computation stays correct when the product's line is wrong).
The release code therefore calls :func:`emit` right after it adds its noise::

    observe.emit("newton-step", step=t, gradient=g, hessian=H)

With no observer registered (always, in the product) :func:`emit` is one dictionary lookup and returns.
:func:`observing` registers an observer for a ``with`` block (the audit); the observer receives the
keyword arguments as given (the arrays themselves: it must not modify them) and its return value is
ignored, so an observer cannot change a release.

Observation points
------------------
``"newton-step"``
    :func:`engine.pmt._newton.noisy_newton`, every step: ``step`` (int), ``gradient`` (runs, d) and
    ``hessian`` (runs, d, d): the noisy averaged gradient and Hessian of every run (penalty included,
    before the eigenvalue floor and the step), ``sigma_g`` / ``sigma_H`` (runs,), ``theta`` (runs, d): the
    iterate they were computed at.
``"pmt-joint-release"``
    :meth:`engine.pmt._ridge_joint._JointRidgeMixin._release_joint` (PMTRidge's joint form, its one release):
    ``S`` (d+1, d+1): the noisy ``S~ = Z~^T Z~ + s W`` right after the noise is added, ``sigma`` (s) and
    ``sensitivity``.
``"adassp-release"``
    :func:`engine.pmt.adassp.adassp_solve` (AdaSSP, its three releases): ``lambda_min`` (``lambda_min(A) +
    s_l z``, before the public shift and the clamp at 0), ``A`` (``A + s_A W``) and ``b`` (``b + s_b w``)
    right after the noise is added, and ``sigmas`` ``(s_l, s_A, s_b)``.

An observer may raise to stop the fit once it has seen the release (the audit does, with stacked noise
that the rest of the fit is not built for); the product never registers one.

Not thread-safe (one registry per process): audit in one thread.

Examples
--------
>>> seen = []
>>> with observing("demo", lambda **kw: seen.append(kw["x"])):
...     emit("demo", x=1)
>>> emit("demo", x=2)  # no observer any more
>>> seen
[1]
"""

from __future__ import annotations

import contextlib

__all__ = ["emit", "observing", "POINTS"]

#: The observation points the product's code emits.
POINTS = ("newton-step", "pmt-joint-release", "adassp-release")

_OBSERVERS: dict[str, list] = {}


def emit(point: str, **values) -> None:
    """Hand ``values`` to every observer of ``point`` (none in the product: returns at once)."""
    obs = _OBSERVERS.get(point)
    if obs:
        for fn in tuple(obs):
            fn(**values)


@contextlib.contextmanager
def observing(point: str, observer):
    """Register ``observer`` (a callable taking the point's keyword arguments) for a ``with`` block."""
    if not callable(observer):
        raise TypeError(f"observer must be callable, got {type(observer).__name__}")
    lst = _OBSERVERS.setdefault(point, [])
    lst.append(observer)
    try:
        yield observer
    finally:
        lst.remove(observer)
        if not lst:
            _OBSERVERS.pop(point, None)
