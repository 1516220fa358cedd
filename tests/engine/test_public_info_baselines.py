"""Private-only baselines given a PublicInfo: its rows are used as public rows; published moments alone are
refused with an error that says what the estimator reads instead (before any noise is drawn)."""

import warnings

import numpy as np
import pytest

from engine.pmt import AdaSSPRidge, DPGDLogistic, DPGDRidge, DPNewtonLogistic, DPRidge
from engine.pmt.public_info import PublicInfo

RIDGES = (DPRidge, AdaSSPRidge, DPGDRidge)
LOGISTICS = (DPNewtonLogistic, DPGDLogistic)


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=600)
    Xp = rng.normal(size=(60, 3))
    return X, y, Xp, Xp @ [1.0, 2.0, 3.0] + rng.normal(size=60)


@pytest.mark.parametrize("cls", RIDGES + LOGISTICS)
def test_rows_in_a_public_info_equal_the_same_rows_as_arrays(cls):
    X, y, Xp, yp = _data()
    labels = cls in LOGISTICS
    yy = (y > 0).astype(int) if labels else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = cls(epsilon=1, delta=1e-5, random_state=3).fit(X, yy, PublicInfo.from_rows(Xp, None if labels else yp))
        b = cls(epsilon=1, delta=1e-5, random_state=3).fit(X, yy, Xp, None if labels else yp)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("cls", RIDGES + LOGISTICS)
def test_published_moments_alone_are_refused_naming_what_is_read(cls):
    X, y, Xp, _ = _data()
    info = PublicInfo.from_moments(columns=["a", "b", "c"], n_pub=60, mean=Xp.mean(0), covariance=np.cov(Xp.T))
    yy = (y > 0).astype(int) if cls in LOGISTICS else y
    with pytest.raises(ValueError, match=r"mode 'moments'.*no public rows.*X_pub=None"):
        cls(epsilon=1, delta=1e-5).fit(X, yy, info)


def test_labels_given_twice_are_refused():
    X, y, Xp, yp = _data()
    with pytest.raises(ValueError, match="y_pub given twice"):
        DPRidge(epsilon=1, delta=1e-5).fit(X, y, PublicInfo.from_rows(Xp, yp), yp)
