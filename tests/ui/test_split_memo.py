"""engine.pmt._split_memo: per-split quantities kept between GLM sweeps, never changing a number."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.pmt.sweep import run_sweep
from engine.pmt import _split_memo as M
from engine.pmt._newton import LOGISTIC, noisy_newton, pair_products


@pytest.fixture(autouse=True)
def _fresh_memo():
    M.clear()
    yield
    M.clear()


def _data(seed, n=1200, p=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * [1.0, 2.0, 0.5, 3.0][:p]
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.linspace(1.0, -1.0, p)))).astype(float)
    return X, y


def _sweep(data, **kw):
    return run_sweep(data, task="logistic", methods=["pmt", "dp-newton", "non-private"], epsilons=[0.5, 2.0],
                     seeds=4, lams=[1e-3, 1e-2], n_pubs=[150], standardize=True, **kw)


def test_memo_builds_once_freezes_arrays_and_forgets_old_splits(monkeypatch):
    calls = []

    def build():
        calls.append(1)
        return np.arange(3.0), 7

    a = M.memo("s1", ("x",), build)
    b = M.memo("s1", ("x",), build)
    assert a is b and len(calls) == 1
    with pytest.raises(ValueError):  # read-only: a kept array cannot be changed by one caller for the next
        a[0][0] = 1.0
    monkeypatch.setattr(M, "MEMO_SPLITS", 1)
    M.memo("s2", ("x",), build)  # a second split evicts the first
    M.memo("s1", ("x",), build)
    assert len(calls) == 3
    x = np.arange(6.0).reshape(2, 3)
    assert M.fingerprint(x) == M.fingerprint(x.copy()) != M.fingerprint(x.reshape(3, 2))
    assert M.fingerprint(x) != M.fingerprint(x.astype(np.float32)) and M.fingerprint(x) != M.fingerprint(x + 1e-12)


def test_sweeps_reusing_the_memo_equal_fresh_sweeps_bit_for_bit():
    A, B = _data(0), _data(1)
    fresh_a = _sweep(A)
    M.clear()
    fresh_b = _sweep(B)
    M.clear()
    fresh_a_s3 = _sweep(A, split_seed=3)
    M.clear()
    # warm: the same split again, then another data set and another split of A in between
    first = _sweep(A)
    again = _sweep(A)
    b = _sweep(B)
    a_s3 = _sweep(A, split_seed=3)
    back = _sweep(A)
    for got, want in ((first, fresh_a), (again, fresh_a), (b, fresh_b), (a_s3, fresh_a_s3), (back, fresh_a)):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert not fresh_a["l2_error"].equals(fresh_b["l2_error"])  # the data sets differ, so would a wrong reuse


def test_noisy_newton_with_given_pair_products_is_the_same_and_checks_them():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(300, 3))
    y = (rng.random(300) < 0.4).astype(float)
    runs, T, d = 5, 3, 3
    kw = dict(family=LOGISTIC, pen=np.eye(d) * 0.02, sigma_g=np.full(runs, 0.01), sigma_H=np.full(runs, 0.01),
              noise_g=rng.normal(size=(T, runs, d)), noise_H=np.repeat(np.eye(d)[None, None], T, 0).repeat(runs, 1),
              n_steps=T, dtype=np.float32)
    plain = noisy_newton(Z, y, **kw)
    given = noisy_newton(Z, y, K=pair_products(Z, dtype=np.float32), **kw)
    np.testing.assert_array_equal(given.theta, plain.theta)
    # held in float64 (the Hessian sums run in float64): the float32 products give the same iterates
    held = noisy_newton(Z, y, K=pair_products(Z, dtype=np.float32).astype(np.float64), **kw)
    np.testing.assert_array_equal(held.theta, plain.theta)
    with pytest.raises(ValueError, match="pair_products"):
        noisy_newton(Z, y, K=pair_products(Z, dtype=np.int32), **kw)
    with pytest.raises(ValueError, match="pair_products"):
        noisy_newton(Z, y, K=pair_products(Z[:10], dtype=np.float32), **kw)


def test_uploaded_data_leave_nothing_behind_in_the_process():
    """The page keeps everything derived from an upload in the user's session: its sweeps bypass the memo."""
    from ui.pmt.compute import core as C

    class _DS:
        def to_numpy(self):
            return _data(5)

    prep = C.prepare(_DS(), standardize=True, n_pub=150, split_seed=0, task="classification")
    spec = {"task": "classification", "epsilon": 1.0, "delta": 1e-5, "lam": 1e-3, "eta": 0.05, "seeds": 4,
            "clip_radius": 0.0, "methods": ["PMT", "DP-Newton"], "standardize": True, "n_pub": 150,
            "split_seed": 0, "public_source": "split"}
    for upload in ({"data": "upload:mine.csv"}, {"data": "bank", "public_source": "file"}):
        assert C.uses_upload({**spec, **upload})
        got = C.sweep(prep, C.sweep_spec({**spec, **upload}, "epsilon", [1.0]))
        assert not M._STORE, upload
    bundled = C.sweep(prep, C.sweep_spec({**spec, "data": "bank"}, "epsilon", [1.0]))
    assert len(M._STORE) == 1  # bundled data: the split's quantities are kept
    pd.testing.assert_frame_equal(got.drop(columns="sweep"), bundled.drop(columns="sweep"), check_exact=True)
    with M.bypass():
        assert M.memo("s", ("k",), lambda: 1) == 1
    assert "s" not in M._STORE
