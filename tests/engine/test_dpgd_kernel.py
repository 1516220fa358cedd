"""The fused DP-GD ridge kernel (engine/pmt/_gd_kernel.py): same clip rule, same values as the numpy
path up to float32 summation order, and it really clips each example's gradient at C."""

import numpy as np
import pytest

pytest.importorskip("numba")

from engine.pmt import _gd  # noqa: E402
from engine.pmt._gd import dp_gd_ridge_path  # noqa: E402
from engine.pmt._gd_kernel import MAX_KERNEL_D, ridge_kernel  # noqa: E402


def _problem(n=1500, d=4, runs=48, T=20, seed=0, outlier=None):
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n, d - 1)), np.ones((n, 1))])
    y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    if outlier is not None:
        y[0] = outlier
    return dict(Xa=X, y=y, clip_norm=2.0, lam=1e-3, Pm=np.eye(d), step_size=0.05,
                sigma=np.geomspace(1e-4, 1e-2, runs), noise=rng.standard_normal((T, d, runs)), n_steps=T)


def _numpy_path(monkeypatch, prob, **kw):
    with monkeypatch.context() as m:
        m.setattr(_gd, "_FUSED_MIN_RUNS", 10 ** 9)
        return dp_gd_ridge_path(**prob, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("runs,n_jobs", [(48, 1), (130, 2)])
def test_fused_matches_numpy_path(monkeypatch, dtype, runs, n_jobs):
    prob = _problem(runs=runs)
    th_f, fr_f = dp_gd_ridge_path(**prob, dtype=dtype, n_jobs=n_jobs)
    th_n, fr_n = _numpy_path(monkeypatch, prob, dtype=dtype, n_jobs=n_jobs)
    scale = np.abs(th_n).max()
    tol = 2e-6 if dtype is np.float32 else 1e-13  # summation order only (the BLAS may block a chunk's rows)
    assert np.max(np.abs(th_f - th_n)) <= tol * scale
    assert np.abs(fr_f - fr_n).max() <= 2.0 / prob["Xa"].shape[0]  # a row within rounding of C may flip
    assert 0.0 < fr_f.mean() < 1.0  # the clip is active on some rows and not on all: the test bites


def test_fused_path_is_taken_and_clips_each_example(monkeypatch):
    """One step from theta = 0 with no noise and no penalty: the update is -step/n sum_i u_i clip(s_i, -C, C),
    with s_i = -2 ||x_i|| y_i. An outlier y_0 = 1e6 must contribute exactly C / n in its direction."""
    n, d, runs = 400, 3, 40
    rng = np.random.default_rng(3)
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    y[0] = 1e6
    C, step = 0.5, 1.0
    noise = np.zeros((1, d, runs))
    calls = []
    real = _gd._ridge_fused

    def spy(*a, **k):
        f = real(*a, **k)
        calls.append(f is not None)
        return f

    monkeypatch.setattr(_gd, "_ridge_fused", spy)
    th, frac = dp_gd_ridge_path(X, y, clip_norm=C, lam=0.0, Pm=np.eye(d), step_size=step, sigma=np.zeros(runs),
                                noise=noise, n_steps=1, dtype=np.float64, n_jobs=1)
    assert calls == [True]  # the kernel ran (40 runs in one group)
    rn = np.linalg.norm(X, axis=1)
    s = -2.0 * rn * y
    expect = -step / n * (X / rn[:, None]).T @ np.clip(s, -C, C)
    unclipped = -step / n * (X / rn[:, None]).T @ s
    np.testing.assert_allclose(th[:, 0], expect, rtol=1e-12, atol=1e-15)
    assert np.linalg.norm(unclipped - expect) > 1e3 * np.linalg.norm(expect)
    assert np.all(th == th[:, :1])  # every run saw the same data and no noise
    assert frac[0] == np.count_nonzero(np.abs(s) > C) / n


def test_kernel_direct_clip_count_and_inf():
    """The kernel alone against a float64 reference: clipped gradient, counts, and C = inf (no clip)."""
    rng = np.random.default_rng(5)
    n, d, k, cr = 999, 5, 37, 128
    S = rng.standard_normal((n, d + 1)) * 3
    U = rng.standard_normal((n, d))
    th = rng.standard_normal((d + 1, k))
    kern = ridge_kernel(d + 1, d)
    s = S @ th
    for C in (1.0, np.inf):
        grad = np.empty((d, k))
        cnt = np.zeros(k, dtype=np.int32)
        kern(S, U, th, np.float64(C), cr, grad, np.empty((d, k)), cnt)
        np.testing.assert_allclose(grad, U.T @ np.clip(s, -C, C), rtol=1e-11, atol=1e-11)
        assert np.array_equal(cnt, np.count_nonzero(np.abs(s) > C, axis=0))
        if C == 1.0:
            assert cnt.min() > 0


def test_no_kernel_above_max_d():
    assert ridge_kernel(MAX_KERNEL_D + 2, MAX_KERNEL_D + 1) is None
