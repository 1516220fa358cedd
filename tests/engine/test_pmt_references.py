"""References that can be trusted: a scale-free ridge reference, n_pub < d warned."""

import warnings

import numpy as np
import pytest

from engine.datasets import load_dataset
from engine.pmt import RidgeReference, SmallPublicSampleWarning, public_moment
from engine.pmt.logistic import PMTLogistic


@pytest.mark.parametrize("lam", [0.0, 1e-3])
@pytest.mark.parametrize("factor", [1e8, 1e-6])
def test_ridge_reference_scale_free(lam, factor):
    X, y = load_dataset("ccpp").to_numpy()
    base = RidgeReference(lam=lam).fit(X, y)
    for cols in ([0], list(range(X.shape[1]))):
        Xs = X.copy()
        Xs[:, cols] *= factor
        m = RidgeReference(lam=lam).fit(Xs, y)
        pred0, pred1 = base.predict(X), m.predict(Xs)
        if lam == 0.0:  # OLS: the fitted values do not depend on the columns' units
            assert np.max(np.abs(pred1 - pred0)) <= 1e-6 * np.max(np.abs(pred0))
            np.testing.assert_allclose(m.coef_[cols] * factor, base.coef_[cols], rtol=1e-6)
        else:  # the penalty has units; the solve must still be the exact minimiser of the rescaled problem
            assert np.all(np.isfinite(pred1))


def test_ridge_reference_matches_ols_on_scaled_columns():
    X, y = load_dataset("ccpp").to_numpy()
    Xs = X * 1e8
    m = RidgeReference(lam=0.0).fit(Xs, y)
    Xa = np.column_stack([X, np.ones(len(X))])
    beta = np.linalg.solve(Xa.T @ Xa, Xa.T @ y)
    rmse_ols = np.sqrt(np.mean((Xa @ beta - y) ** 2))
    rmse = np.sqrt(np.mean((m.predict(Xs) - y) ** 2))
    assert rmse == pytest.approx(rmse_ols, rel=1e-9)


def test_small_public_sample_warned():
    rng = np.random.default_rng(0)
    with pytest.warns(SmallPublicSampleWarning, match="only 3 public rows for d = 7"):
        pm = public_moment(rng.normal(size=(3, 6)))
    assert pm.regularized
    X = rng.normal(size=(500, 6))
    y = (rng.random(500) < 0.5).astype(int)
    with pytest.warns(SmallPublicSampleWarning):
        PMTLogistic(epsilon=1.0, random_state=0).fit(X, y, X_pub=X[:4])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallPublicSampleWarning)
        public_moment(rng.normal(size=(50, 6)))  # enough rows: no warning
