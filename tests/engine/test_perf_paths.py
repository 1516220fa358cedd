"""The fast paths compute exactly what the plain code computes.

Each test compares a fast path with the straightforward computation it replaces: bit for bit where the
work is only reorganised (memoised pure functions, codes for text columns), and
to rounding where the blocked transform sums ``Z^T Z`` in another order (then it must not depend on the
number of threads).
"""

import math
import pickle
import random
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import engine.pmt._blas as B
from engine import privacy as P
from engine.pmt import PMTRidge
from engine.pmt import _transform as T
from engine.pmt._bounds import _kappa_from_eigs
from engine.pmt._whiten import _chunked
from engine.pmt._base import FitReport, Lazy, _spawn_key, release_rng
from engine.pmt.sweep import _load, _str_column
from engine.privacy import gdp


def _big(n=20_000, d=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.geomspace(1, 50, d)
    X[400:440] *= 6.0  # private rows past the radius
    return X[400:], X[:400]


def test_blocked_transform_is_thread_count_independent(monkeypatch):
    X, Xq = _big()
    assert _chunked(X.shape[0], X.shape[1] + 1)
    runs = []
    for cores in (1, 2):
        monkeypatch.setattr(B, "pool_threads", lambda c=cores: c)
        runs.append(T.pmt_transform(X, Xq, eta=0.05))
    a, b = runs
    for name in ("X_tilde", "gram", "gram_untruncated", "norms_before", "norms_after", "truncated"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.truncated.sum() > 0


def test_blocked_transform_matches_the_direct_products():
    X, Xq = _big()
    t = T.pmt_transform(X, Xq, eta=0.05)
    W = t.moment.Sigma_pub_inv_sqrt
    U = np.hstack([X, np.ones((len(X), 1))]) @ W
    nu = np.linalg.norm(U, axis=1)
    Z = U * np.minimum(1.0, t.radius / nu)[:, None]
    np.testing.assert_allclose(t.norms_before, nu, rtol=1e-12)
    assert np.array_equal(t.truncated, nu > t.radius)
    np.testing.assert_allclose(t.X_tilde, Z, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(t.gram, Z.T @ Z, rtol=1e-11, atol=1e-9 * np.abs(Z.T @ Z).max())
    assert np.all(np.linalg.norm(t.X_tilde, axis=1) <= t.radius * (1 + 1e-12))


def test_lazy_report_fields_resolve_to_the_eager_values():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 3)) * [1.0, 10.0, 100.0]
    y = X @ [1.0, 0.1, 0.01] + rng.normal(size=3000)
    m = PMTRidge(epsilon=2.0, random_state=0, response="clip").fit(X[200:], y[200:], X_pub=X[:200], y_pub=y[:200])
    r = m.report_
    assert isinstance(r.__dict__["_lazy_kappa_noisy"], Lazy)  # not computed by fit
    Xa = np.hstack([X[200:], np.ones((2800, 1))])
    assert r.kappa_raw == pytest.approx(np.linalg.cond(Xa.T @ Xa), rel=1e-6)
    assert r.kappa_pmt == _kappa_from_eigs(np.linalg.eigvalsh(m.transform_.gram))
    assert not isinstance(r.__dict__["_lazy_kappa_raw"], Lazy)  # resolved once, then stored
    r2 = pickle.loads(pickle.dumps(m.report_))
    assert r2.kappa_noisy == r.kappa_noisy and math.isfinite(r2.kappa_noisy)
    assert r.to_dict()["kappa_noisy"] == r.kappa_noisy


def test_fitreport_accepts_plain_values():
    r = FitReport("x", 1.0, 1e-5, 0.2, "replace-one", 10, 2, 0.0, P.PrivacyLedger(), kappa_raw=4.0)
    assert r.kappa_raw == 4.0 and math.isnan(r.kappa_pmt) and math.isnan(FitReport.kappa_noisy)


def test_integer_exact_rounding_agrees_with_fractions():
    rnd = random.Random(0)
    for _ in range(3000):
        num = rnd.choice([0.0, 10 ** rnd.uniform(-300, 300), rnd.random() * 1e3, float(rnd.randint(1, 99))])
        den = rnd.choice([10 ** rnd.uniform(-300, 300), rnd.random() + 1e-300, 0.1 * rnd.randint(1, 30)])
        q = gdp._div_up(num, den)
        if math.isinf(q):  # the quotient overflows: inf is the smallest float above it
            assert num / den == math.inf
            continue
        exact = Fraction(num) / Fraction(den)
        assert Fraction(q) >= exact and (q == 0 or Fraction(math.nextafter(q, 0.0)) < exact)
        m, k = rnd.choice([10 ** rnd.uniform(-50, 50), rnd.random()]), rnd.randint(1, 40)
        part = P.split_mu(m, k)
        assert k * Fraction(part) ** 2 <= Fraction(m) ** 2 < k * Fraction(math.nextafter(part, math.inf)) ** 2


def test_check_delta_boundary_is_exact():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P.check_delta(0.5, 2)  # delta == 1/n exactly: no warning
    with pytest.warns(P.DeltaTooLargeWarning):
        P.check_delta(0.0125, 80)  # the float 0.0125 is slightly above 1/80


def test_memoised_spawn_key_is_the_plain_one():
    a = PMTRidge(epsilon=1.5, lam=0.01, random_state=3)
    names = [k for k in a._get_param_names() if k not in ("random_state", "sampler")]  # the identity (no sampler)
    key = _spawn_key(PMTRidge, tuple(getattr(a, k) for k in names))
    expect = np.random.default_rng(np.random.SeedSequence(3, spawn_key=key)).normal(size=4)
    assert np.array_equal(release_rng(a).normal(size=4), expect)
    # settings equal as numbers but written differently keep distinct streams (True vs 1)
    b, c = PMTRidge(fit_intercept=True, random_state=0), PMTRidge(fit_intercept=1, random_state=0)
    assert not np.array_equal(release_rng(b).normal(size=3), release_rng(c).normal(size=3))


@pytest.mark.parametrize("parts", [
    [np.broadcast_to(np.asarray("PMT"), (5,)), np.broadcast_to(np.asarray("DP-RR"), (3,)),
     np.broadcast_to(np.asarray("PMT"), (2,))],
    [np.array(["a", "bb", "a"]), np.broadcast_to(np.asarray("c"), (2,))],
])
def test_text_columns_from_codes(parts):
    fast = _str_column(parts)
    plain = pd.array(np.concatenate(parts).astype(object), dtype="str")
    assert fast.dtype == plain.dtype
    pd.testing.assert_extension_array_equal(fast, plain)


def test_sweep_loads_bundled_sets_as_frozen_arrays():
    from engine.datasets import load_dataset

    X, y, name = _load("ccpp", None)
    X2, y2 = load_dataset("ccpp").to_numpy()
    assert name == "ccpp" and np.array_equal(X, X2) and np.array_equal(y, y2)
    assert not X.flags.writeable and not y.flags.writeable
    assert _load(" CCPP ", None)[0] is X  # cached
