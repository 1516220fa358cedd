"""The logistic sigmoid ``expit`` of :mod:`scipy.special`, imported on its first call.

``import scipy.special`` costs about 0.2-0.3 s of CPU (it pulls in scipy's array-API layer), and a
ridge sweep, the default view of the PMT page and ``python -m engine pmt`` on a regression task, never
evaluates it: importing it where a logistic module is merely imported put that cost on their start-up.
:func:`expit` calls scipy's ufunc itself (the same numbers, bit for bit); only the import waits.
"""

from __future__ import annotations

__all__ = ["expit"]

_EXPIT = None


def expit(x, *args, **kwargs):
    """``scipy.special.expit(x, ...)`` (``1 / (1 + exp(-x))``, elementwise; same shape and dtype rules).

    Examples
    --------
    >>> float(expit(0.0))
    0.5
    """
    global _EXPIT
    if _EXPIT is None:
        from scipy.special import expit as ufunc

        _EXPIT = ufunc
    return _EXPIT(x, *args, **kwargs)
