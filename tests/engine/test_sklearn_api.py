"""The estimators keep scikit-learn's API without importing scikit-learn (engine.pmt._sklearn_api)."""

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError as SkNotFitted
from sklearn.model_selection import GridSearchCV

from engine.pmt import PMTLogistic, PMTPoisson, PMTRidge
from engine.pmt._sklearn_api import NotFittedError


def test_types_tags_and_clone():
    assert is_regressor(PMTRidge()) and not is_classifier(PMTRidge())
    assert is_classifier(PMTLogistic()) and is_regressor(PMTPoisson())
    m = PMTRidge(lam=0.5, epsilon=2.0)
    c = clone(m)
    assert c is not m and c.get_params() == m.get_params()
    assert repr(m) == "PMTRidge(epsilon=2.0, lam=0.5)" and repr(PMTRidge()) == "PMTRidge()"


def test_set_params_and_errors():
    m = PMTRidge()
    assert m.set_params(lam=0.25, epsilon=3.0) is m and (m.lam, m.epsilon) == (0.25, 3.0)
    with pytest.raises(ValueError, match="Invalid parameter 'lamb'.*'lam'"):
        m.set_params(lamb=1.0)
    with pytest.raises(NotFittedError, match="not fitted"):
        PMTRidge().predict(np.ones((2, 2)))
    assert issubclass(NotFittedError, (ValueError, AttributeError))
    assert not issubclass(NotFittedError, SkNotFitted)  # our own class: catch ValueError or AttributeError


def test_score_and_grid_search_work_with_sklearn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=600)
    Xp, yp = X[:100], y[:100]
    m = PMTRidge(epsilon=np.inf).fit(X, y, Xp, yp)
    r2 = 1 - np.sum((y - m.predict(X)) ** 2) / np.sum((y - y.mean()) ** 2)
    assert m.score(X, y) == pytest.approx(r2, rel=1e-12)
    gs = GridSearchCV(PMTRidge(epsilon=np.inf), {"lam": [1e-4, 10.0]}, cv=2).fit(X, y, X_pub=Xp, y_pub=yp)
    assert gs.best_params_ == {"lam": 1e-4}
