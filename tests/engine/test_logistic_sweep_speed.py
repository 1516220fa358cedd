"""The logistic sweep's speed-ups keep its numbers: kept splits, reference fits in a pool, one Newton group.

What each pins:

* a kept split (``engine.pmt.sweep._kept_split``) is the fresh split bit for bit, every caller gets its own
  copies, and an upload's ``bypass`` keeps nothing;
* the reference fits of a lam sweep, computed two at a time, are the fits computed one by one, bit for bit;
* a method's noisy Newton with at most ``NEWTON_ONE_GROUP_MAX_RUNS`` runs runs in one group: the Hessians are
  the same float64 sums in another BLAS blocking, so the frame agrees with the two-group frame to float64
  rounding (tolerance below), every flag and every ranking metric (AUC, accuracy) equal; larger batches (the
  epsilon grid, the lam sweep) are unchanged bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import engine.pmt.sweep as E
import engine.pmt.sweep_logistic as SL
from engine.pmt import _split_memo as M
from engine.pmt._newton import LOGISTIC, glm_reference_solve


@pytest.fixture(autouse=True)
def _fresh_memo():
    M.clear()
    yield
    M.clear()


def _data(seed=0, n=4000, p=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.linspace(0.5, 3.0, p)
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.linspace(1.0, -1.0, p)))).astype(float)
    return X, y


def test_kept_split_is_the_fresh_split_and_each_caller_gets_copies():
    X, y = _data()
    args = (150, 3, 0.2, True, False, None)
    fresh = E._split(X, y, *args)
    a = E._kept_split(X, y, *args)
    a[0][0, 0] = 1e9  # a caller writing to its rows changes nothing kept
    b = E._kept_split(X, y, *args)
    for f, got in zip(fresh, b):
        np.testing.assert_array_equal(got, f)
        assert got.flags.writeable
    assert not np.array_equal(E._kept_split(X, y, 150, 4, 0.2, True, False, None)[0], fresh[0])  # seed in the key
    X2 = X.copy()
    X2[-1, -1] += 1.0  # the content, not the object, is the key
    np.testing.assert_array_equal(E._kept_split(X2, y, *args)[2][-1], E._split(X2, y, *args)[2][-1])
    M.clear()
    with M.bypass():
        E._kept_split(X, y, *args)
    assert not M._ROWS  # an upload's split is not kept


def test_reference_fits_two_at_a_time_are_the_fits_one_by_one():
    X, y = _data(1)
    Xq, yq, Xp, yp, Xt, yt = E._split(X, y, 200, 0, 0.2, True, False, None)
    lams = [0.0, 1e-4, 1e-2, 1.0]
    ctx = SL.prepare_logistic_context(Xp, yp, Xq, yq, Xt, yt, lams=lams, delta=1e-5, eta=0.05,
                                      neighbouring="replace-one")
    for i, lam in enumerate(lams):
        th, ok, _ = glm_reference_solve(ctx.Xa, ctx.y, lam, ctx.Pm, LOGISTIC)
        np.testing.assert_array_equal(ctx.theta_ref[i], th)
    M.clear()
    with M.bypass():  # an upload: fitted in the pool too, nothing kept
        again = SL.prepare_logistic_context(Xp, yp, Xq, yq, Xt, yt, lams=lams, delta=1e-5, eta=0.05,
                                            neighbouring="replace-one")
    np.testing.assert_array_equal(again.theta_ref, ctx.theta_ref)
    assert not M._STORE


#: Agreement of the one-group frame with the two-group one. The Hessians are float64 sums of the same
#: exact float64 terms (float32 products) in another BLAS blocking: each differs by a few ulps; five noisy Newton
#: steps carry that into theta at about 1e-15 relative (measured on bank, 20 seeds: 4e-16), so 1e-11 leaves room
#: for a less well conditioned run while still failing on any real change (a different noise draw or step moves
#: theta by 1e-3 or more).
RTOL = 1e-11


def test_newton_in_one_group_agrees_with_two_groups(monkeypatch):
    data = _data(2, n=6000)
    kw = dict(task="logistic", methods=["pmt", "dp-newton", "non-private"], epsilons=[1.0], seeds=20, lams=[1e-4],
              n_pubs=[300], standardize=True)
    assert SL.NEWTON_ONE_GROUP_MAX_RUNS >= 20  # a point sweep of 20 seeds: one group
    one = E.run_sweep(data, **kw)
    monkeypatch.setattr(SL, "NEWTON_ONE_GROUP_MAX_RUNS", 0)  # the previous grouping: two groups from 16 runs
    two = E.run_sweep(data, **kw)
    assert one.shape == two.shape and list(one.columns) == list(two.columns)
    exact = ["method", "epsilon", "seed", "lam", "mu", "sigma_g", "sigma_H", "eig_floor", "converged", "eig_fixes",
             "accuracy", "auc", "radius", "frac_truncated"]
    pd.testing.assert_frame_equal(one[exact], two[exact])
    for c in ("l2_error", "rel_error", "excess_risk", "log_loss", "rmse", "last_step", "kappa_noisy"):
        np.testing.assert_allclose(one[c].to_numpy(float), two[c].to_numpy(float), rtol=RTOL, atol=0, err_msg=c)
    assert not one["l2_error"].equals(pd.Series(np.zeros(len(one))))


def test_batches_above_the_threshold_keep_their_numbers_bit_for_bit(monkeypatch):
    data = _data(3, n=3000)
    kw = dict(task="logistic", methods=["pmt", "dp-newton"], epsilons=[0.5, 2.0, 5.0], seeds=20, lams=[1e-4],
              n_pubs=[300], standardize=True)
    assert 3 * 20 > SL.NEWTON_ONE_GROUP_MAX_RUNS
    now = E.run_sweep(data, **kw)
    monkeypatch.setattr(SL, "NEWTON_ONE_GROUP_MAX_RUNS", 0)
    pd.testing.assert_frame_equal(now, E.run_sweep(data, **kw))
