"""PMTRidge per fit: the faster plumbing gives the numbers of the plain forms it replaces.

Bit for bit where the same operations run (noise fill, ledger, seed sequence, solve bookkeeping, LAPACK
calls, lazy display quantities, the public-moment memo); to float rounding where the transform's sums run
in another order (the transposed layout for d < 16).
"""

import pickle

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from engine import privacy as P
from engine.pmt import PMTRidge, _split_memo
from engine.pmt._blas import blas_limit
from engine.pmt._moment import public_moment
from engine.pmt._whiten import FEW_COLUMNS
from engine.pmt._whiten import _add_row, _whiten_few, truncate_rows_inplace
from engine.pmt.ridge import (
    _eigh,
    _ledger_ssp,
    _public_moment_memo,
    _solve_columns,
    _symmetric,
    noise_aware_solve,
    ssp_noise,
)


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8, 17])
def test_ssp_noise_is_the_privacy_modules_symmetric_noise_bit_for_bit(d):
    for seed in range(5):
        W, w = ssp_noise(np.random.default_rng(seed), d)
        ref_rng = np.random.default_rng(seed)
        W0 = P.symmetric_gaussian_noise(d, 1.0, ref_rng)
        w0 = P.gaussian_noise(d, 1.0, ref_rng)
        assert _bits_equal(W, W0) and _bits_equal(w, w0)
        assert np.array_equal(W, W.T)


def test_symmetric_fill_keeps_the_plus_zero_of_the_triangle_sum():
    z = np.array([[-0.0, -0.0, 1.5], [2.0, -0.0, -3.0], [-0.0, 4.0, 5.0]])
    ref = np.triu(z) + np.triu(z, 1).T
    got = _symmetric(z)
    assert _bits_equal(got, ref)
    assert not np.signbit(got).any() or np.signbit(got).sum() == np.signbit(ref).sum()
    assert got[0, 0] == 0.0 and not np.signbit(got[0, 0])  # -0.0 + 0.0 = +0.0, as the sum gives


def _row_major(Xp, W, fit_intercept, R, y):
    """The row-major pass of ``_transform_rows`` for d >= FEW_COLUMNS (the form the few-column pass replaces)."""
    if fit_intercept:
        Z = Xp @ W[:-1]
        _add_row(Z, W[-1])
    else:
        Z = Xp @ W
    norms, truncated = truncate_rows_inplace(Z, R)
    return Z, norms, truncated, Z.T @ Z, Z.T @ y


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("d", [1, 2, 4, 7, 15])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_few_column_pass_matches_the_row_major_pass(layout, d, fit_intercept):
    rng = np.random.default_rng(100 * d + len(layout))
    p = d - int(fit_intercept)
    if p < 1:
        pytest.skip("no feature column")
    n = 3001
    X = rng.standard_t(3.0, size=(2 * n, p)) * rng.uniform(0.01, 100.0, size=p)
    Xp = {"C": np.ascontiguousarray(X[:n]), "F": np.asfortranarray(X[:n]), "strided": X[::2]}[layout]
    y = rng.normal(size=n)
    mom = public_moment(X[n:n + 200], fit_intercept=fit_intercept)
    W = mom.Sigma_pub_inv_sqrt
    _, norms, *_ = _row_major(Xp, W, fit_intercept, np.inf, y)
    R = float(np.quantile(norms, 0.9))  # a tenth of the rows truncated
    Z, nb, tr, G, b = _whiten_few(Xp, W, fit_intercept, R, y)
    Z0, nb0, tr0, G0, b0 = _row_major(Xp, W, fit_intercept, R, y)
    assert 0 < tr.sum() < n
    # the same truncation except for a row whose norm lies within rounding of R (none here)
    near = np.abs(nb0 - R) <= 1e-12 * R
    assert np.array_equal(tr[~near], tr0[~near])
    np.testing.assert_allclose(nb, nb0, rtol=1e-14)
    scale = np.abs(Z0).max()
    np.testing.assert_allclose(Z, Z0, rtol=0, atol=1e-14 * scale)
    assert np.max(np.linalg.norm(Z, axis=1)) <= R * (1 + 1e-12)
    np.testing.assert_allclose(G, G0, rtol=0, atol=1e-13 * np.abs(G0).max())
    np.testing.assert_allclose(b, b0, rtol=0, atol=1e-13 * np.abs(G0).max() ** 0.5 * np.abs(y).max())
    assert np.array_equal(G, G.T)  # exactly symmetric, as numpy's syrk result
    # without y: the same Gram (the extra row of the product is zeros), no b
    Z2, *_, G2, b2 = _whiten_few(Xp, W, fit_intercept, R)
    assert _bits_equal(G2, G) and _bits_equal(Z2, Z) and b2 is None


def test_few_column_pass_is_what_pmtridge_uses_and_its_threshold():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, FEW_COLUMNS - 2))
    y = X.sum(axis=1) + rng.normal(size=2000)
    m = PMTRidge(epsilon=1.0, random_state=0, center=None, response="clip").fit(X[200:], y[200:], X[:200], y[:200])
    tr = m.transform_
    assert tr.d == FEW_COLUMNS - 1 and tr.X_tilde.flags.f_contiguous  # the transposed buffer's view
    B_y = m.report_.B_y
    np.testing.assert_allclose(tr.xty, tr.X_tilde.T @ np.clip(y[200:], -B_y, B_y), rtol=1e-13)


def test_lazy_transform_quantities_are_the_eager_ones():
    rng = np.random.default_rng(8)
    X = rng.standard_t(2.5, size=(4000, 3)) * [1.0, 20.0, 0.1]
    y = rng.normal(size=4000)
    m = PMTRidge(epsilon=1.0, eta=0.9, random_state=0, response="clip").fit(X[500:], y[500:], X[:500], y[:500])
    tr = m.transform_
    idx = np.flatnonzero(tr.truncated)
    assert idx.size > 0
    Zt = tr.X_tilde[idx]
    na = tr.norms_before.copy()
    na[idx] = np.sqrt(np.einsum("ij,ij->i", Zt, Zt))
    assert _bits_equal(tr.norms_after, na)
    wgt = (tr.norms_before[idx] / tr.radius) ** 2 - 1.0
    assert _bits_equal(tr.gram_untruncated, tr.gram + (Zt * wgt[:, None]).T @ Zt)
    raw = np.sqrt(np.einsum("ij,ij->i", X[500:], X[500:]) + 1.0)
    assert _bits_equal(tr.norms_raw, raw)
    assert tr.frac_truncated == idx.size / tr.n == m.report_.frac_truncated
    assert np.all(tr.norms_after <= tr.radius * (1 + 1e-12))
    # pickled (a dashboard cache): the display values travel resolved, the private input rows do not
    m2 = PMTRidge(epsilon=1.0, eta=0.9, random_state=0, response="clip").fit(X[500:], y[500:], X[:500], y[:500])
    back = pickle.loads(pickle.dumps(m2.transform_))
    assert back.rows is None and m2.transform_.rows is not None
    for name in ("norms_after", "gram_untruncated", "norms_raw", "X_tilde", "gram"):
        assert _bits_equal(getattr(back, name), getattr(tr, name)), name


def test_public_moment_memo_same_object_for_same_content_fresh_otherwise():
    rng = np.random.default_rng(5)
    Xq = rng.normal(size=(50, 3))
    a = _public_moment_memo(Xq, True, "regularize", "sample")
    b = _public_moment_memo(Xq.copy(order="F"), True, "regularize", "sample")  # same content, other layout
    assert a is b
    assert not a.Sigma_pub_inv_sqrt.flags.writeable and not a.eigenvalues.flags.writeable
    fresh = public_moment(Xq, fit_intercept=True)
    for name in ("Sigma_pub", "Sigma_pub_inv_sqrt", "Sigma_pub_sqrt", "Sigma_pub_inv", "eigenvalues", "col_scale"):
        assert _bits_equal(getattr(a, name), getattr(fresh, name)), name
    Xq2 = Xq.copy()
    Xq2[7, 1] = np.nextafter(Xq2[7, 1], np.inf)  # one bit of one public entry
    assert _public_moment_memo(Xq2, True, "regularize", "sample") is not a
    assert _public_moment_memo(Xq, False, "regularize", "sample") is not a  # other settings: another entry
    with _split_memo.bypass():
        assert _public_moment_memo(Xq, True, "regularize", "sample") is not a
    big = rng.normal(size=(3000, 4))  # keyed by digest above 64 KiB
    assert _public_moment_memo(big, True, "regularize", "sample") is _public_moment_memo(big.copy(), True,
                                                                                      "regularize", "sample")


def test_public_moment_memo_keeps_no_error_and_refits_identically():
    singular = np.ones((5, 2))
    for _ in range(2):  # raised each time: an exception is never kept
        with pytest.raises(ValueError, match="singular"):
            _public_moment_memo(singular, True, "raise", "sample")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1500, 3))
    y = X @ [1.0, -1.0, 2.0] + rng.normal(size=1500)
    _split_memo.clear()
    # the memo serves the clip form's public moment (the joint form's moment includes y_pub)
    cold = PMTRidge(epsilon=0.5, random_state=4, response="clip").fit(X[100:], y[100:], X[:100], y[:100])
    warm = PMTRidge(epsilon=0.5, random_state=4, response="clip").fit(X[100:], y[100:], X[:100].copy(), y[:100])
    with _split_memo.bypass():
        off = PMTRidge(epsilon=0.5, random_state=4, response="clip").fit(X[100:], y[100:], X[:100], y[:100])
    assert warm.transform_.moment is cold.transform_.moment
    assert _bits_equal(cold.theta_, warm.theta_) and _bits_equal(cold.theta_, off.theta_)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 9])
def test_one_system_noise_aware_solve_is_the_stack_solve_bit_for_bit(d):
    rng = np.random.default_rng(d)
    for trial in range(30):
        A = rng.normal(size=(d, d)) * 10.0
        A = A + A.T + rng.uniform(-5.0, 40.0) * np.eye(d)
        b = rng.normal(size=d)
        pen = np.diag(rng.uniform(0.0, 2.0, size=d))
        c = [0.0, 1e-3, 3.0, 50.0][trial % 4]
        th, fixed, kappa = noise_aware_solve(A, b, pen, c)
        ths, fixeds, kappas = noise_aware_solve(A[None], b[None], pen, np.array([c]))
        assert _bits_equal(th, ths[0]) and bool(fixed) == bool(fixeds[0]) and kappa == kappas[0]
        assert isinstance(fixed, np.bool_)
        th_l, fixed_l, k_l = noise_aware_solve(A, b, pen, c, lazy_kappa=True)
        assert _bits_equal(th_l, th) and bool(fixed_l) == bool(fixed)


def test_lapack_gufuncs_are_numpys_eigh_and_solve():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(7, 6, 6))
    A = A + np.swapaxes(A, 1, 2)
    B = rng.normal(size=(7, 6, 1))
    for got, ref in zip(_eigh(A), np.linalg.eigh(A)):
        assert _bits_equal(got, ref)
    assert _bits_equal(_eigh(A[0])[1], np.linalg.eigh(A[0])[1])
    assert _bits_equal(_solve_columns(A, B), np.linalg.solve(A, B))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        _solve_columns(np.zeros((3, 3)), np.ones((3, 1)))


def test_ssp_ledger_is_fresh_each_call_with_the_same_records():
    a, sA, sb = _ledger_ssp(1e-5, 0.8, 3.0, 2.0, "replace-one", ("A", "b"))
    ref = P.PrivacyLedger(delta=1e-5)
    part = P.split_mu(0.8, 2)
    ref.record("A", sensitivity=3.0, sigma=P.gaussian_sigma(3.0, part))
    ref.record("b", sensitivity=2.0, sigma=P.gaussian_sigma(2.0, part))
    assert a.releases == ref.releases and str(a.to_records()) == str(ref.to_records()) and a.delta == ref.delta
    assert (sA, sb) == (ref.releases[0].sigma, ref.releases[1].sigma)
    a.record("extra", sensitivity=1.0, sigma=1.0)  # the fit's own ledger: mutating it changes no later one
    b, _, _ = _ledger_ssp(1e-5, 0.8, 3.0, 2.0, "replace-one", ("A", "b"))
    assert b is not a and len(b.releases) == 2
    with pytest.raises(ValueError):
        _ledger_ssp(1e-5, -1.0, 3.0, 2.0, "replace-one", ("A", "b"))


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_nested_blas_limit_is_a_no_op_and_the_outer_restores():
    before = _blas_threads()
    with blas_limit(1):
        assert set(_blas_threads()) == {1}
        with blas_limit(1):
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}
        with blas_limit(2):
            assert set(_blas_threads()) == {2}
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before


def test_ridge_sweep_runners_hold_blas_at_the_threads_chosen_for_the_shape():
    """A ridge sweep's runners run with blas_threads(n, d) BLAS threads (1 at small d) and restore
    the previous count afterwards; the count never depends on the data's values."""
    from types import SimpleNamespace

    from threadpoolctl import threadpool_info

    from engine.pmt._blas import blas_threads
    from engine.pmt.sweep_ridge import _blas_for_shape

    def blas_counts():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_counts()
    seen = {}
    probe = _blas_for_shape(lambda ctx, eps, seeds: seen.setdefault((ctx.n, ctx.d), blas_counts()))
    probe(SimpleNamespace(n=9568, d=5), [1.0], [0])
    assert blas_threads(9568, 5) == 1 and set(seen[(9568, 5)]) == {1}
    assert blas_counts() == before


def test_blas_rule_depends_on_the_shape_only(monkeypatch):
    """One BLAS thread below the compute-bound shapes, BLAS's own setting (None) above; the machine's load
    is never read (a load average that raises or says "busy" changes nothing), and the blocked transform's
    pool has os.cpu_count() threads."""
    import os
    from types import SimpleNamespace

    from threadpoolctl import threadpool_info

    from engine.pmt import _blas
    from engine.pmt.sweep_ridge import _blas_for_shape

    def no_load():
        raise AssertionError("the BLAS rule must not read the load average")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert [_blas.blas_threads(n, d) for n, d in ((9568, 5), (10**6, 63), (4882, 64), (4883, 64), (10**5, 200))] == \
        [1, 1, 1, None, None]
    assert _blas.pool_threads() == (os.cpu_count() or 1)

    def blas_counts():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_counts()
    with _blas.blas_limit(1):  # a large shape leaves BLAS as the caller set it
        seen = _blas_for_shape(lambda ctx, eps, seeds: blas_counts())(SimpleNamespace(n=10**5, d=200), [1.0], [0])
        assert set(seen) == {1}
    seen = _blas_for_shape(lambda ctx, eps, seeds: blas_counts())(SimpleNamespace(n=10**5, d=200), [1.0], [0])
    assert seen == before
