"""engine.privacy._ndtr.log_ndtr (math.erfc-based, no SciPy) against mpmath and scipy.special.log_ndtr.

The error budget of engine.privacy.gdp (8e-15 relative for t <= 0, 2e-12 for t > 0) must hold with 10x
headroom; the CLI start-up is why the accounting no longer imports scipy.special.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import log_ndtr as scipy_log_ndtr

from engine.privacy._ndtr import log_ndtr

mp.mp.dps = 80


def _exact(t: float):
    return mp.log1p(-mp.ncdf(-mp.mpf(t))) if t > 0 else mp.log(mp.ncdf(mp.mpf(t)))


def _rel(v: float, t: float) -> float:
    ex = _exact(t)
    return float(abs((mp.mpf(v) - ex) / ex))


GRID_NEG = np.concatenate([np.linspace(-45.0, 0.0, 901), -np.logspace(-10, 1.65, 200),
                           [-20.0, math.nextafter(-20.0, 0.0), math.nextafter(-20.0, -math.inf), -37.5, -38.0]])
GRID_POS = np.concatenate([np.linspace(1e-3, 37.0, 600), np.logspace(-10, 1.5, 100)])


def test_lower_tail_within_budget_with_headroom():
    worst = max(_rel(log_ndtr(float(t)), float(t)) for t in GRID_NEG)
    assert worst <= 8e-16  # budget 8e-15 in engine.privacy.gdp


def test_upper_tail_within_budget_with_headroom():
    worst = max(_rel(log_ndtr(float(t)), float(t)) for t in GRID_POS)
    assert worst <= 2e-13  # budget 2e-12


@pytest.mark.parametrize("grid", [GRID_NEG[::3], GRID_POS[::3]], ids=["t<=0", "t>0"])
def test_worst_case_no_worse_than_scipy(grid):
    mine = max(_rel(log_ndtr(float(t)), float(t)) for t in grid)
    ref = max(_rel(float(scipy_log_ndtr(t)), float(t)) for t in grid)
    assert mine <= 1.1 * ref, (mine, ref)


def test_array_shapes_and_special_values():
    a = np.array([[-50.0, 0.0], [3.0, np.inf]])
    out = log_ndtr(a)
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out, scipy_log_ndtr(a), rtol=1e-14)
    assert log_ndtr(-math.inf) == -math.inf and math.isnan(log_ndtr(math.nan))
    assert log_ndtr(np.array(-3.0)).shape == () and isinstance(log_ndtr(-3.0), float)
