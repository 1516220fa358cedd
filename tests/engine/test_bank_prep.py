"""Bank Marketing preparation for the logistic experiments (issue: PMT logistic; PMT.md section 7).

One-hot the categoricals (drop_first), drop ``duration`` (known only after the call), y = 1 for "yes",
and standardise with public-split statistics only (after the split).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from engine.datasets import _raw_frame, load_dataset, public_private_split, standardize_with_public
from engine.pmt.sweep import _split

CATEGORICALS = ["job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome"]


@pytest.fixture(scope="module")
def bank():
    return load_dataset("bank")


@pytest.fixture(scope="module")
def raw():
    return _raw_frame("bank")


def test_shape_target_and_no_duration(bank, raw):
    assert bank.task == "classification"
    assert bank.X.shape == (45211, 41)
    assert "duration" not in bank.X.columns and not any(c.startswith("duration") for c in bank.X.columns)
    assert set(bank.y.unique()) == {0, 1}
    assert int(bank.y.sum()) == int((raw["y"] == "yes").sum()) == 5289
    np.testing.assert_array_equal(bank.y.to_numpy(), (raw["y"] == "yes").to_numpy().astype(int))
    assert bank.doi == "10.24432/C5K306"


def test_one_hot_with_drop_first(bank, raw):
    X = bank.X
    assert all(np.issubdtype(t, np.number) for t in X.dtypes)
    for c in CATEGORICALS:
        levels = sorted(raw[c].unique())
        cols = [k for k in X.columns if k.startswith(c + "_")]
        assert len(cols) == len(levels) - 1, c  # drop_first: one level is the baseline
        assert f"{c}_{levels[0]}" not in X.columns  # pandas drops the first (sorted) level
        block = X[cols].to_numpy()
        assert set(np.unique(block)) <= {0.0, 1.0}
        assert (block.sum(axis=1) <= 1).all()
        # a row's indicators reproduce its category (baseline = all zeros)
        for lev in levels[1:3]:
            np.testing.assert_array_equal(X[f"{c}_{lev}"].to_numpy(), (raw[c] == lev).to_numpy().astype(float))
    for c in ["age", "balance", "day", "campaign", "pdays", "previous"]:
        np.testing.assert_array_equal(X[c].to_numpy(), raw[c].to_numpy().astype(float))


def test_standardisation_uses_public_statistics_only(bank):
    X, y = bank.to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        sp = public_private_split(X, y, n_pub=200, random_state=0)
        z = standardize_with_public(sp)
    np.testing.assert_allclose(z.center, sp.X_pub.mean(axis=0))
    # private rows are mapped with the public centre/scale, not their own
    np.testing.assert_allclose(z.X_priv, (sp.X_priv - z.center) / z.scale)
    assert not np.allclose(z.X_priv.mean(axis=0), 0.0, atol=1e-3)
    # changing private rows does not change the transform (nothing private enters it)
    sp2 = sp.__class__(sp.X_pub, sp.y_pub, sp.X_priv * 10 + 5, sp.y_priv, sp.idx_pub, sp.idx_priv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        z2 = standardize_with_public(sp2)
    np.testing.assert_array_equal(z2.center, z.center)
    np.testing.assert_array_equal(z2.scale, z.scale)


def test_sweep_split_standardises_after_the_split_and_keeps_labels(bank):
    X, y = bank.to_numpy()
    X_pub, y_pub, X_tr, y_tr, X_te, y_te = _split(X, y, 200, 0, 0.2, True, False, None)
    np.testing.assert_allclose(X_pub.mean(axis=0), 0.0, atol=1e-10)  # public rows: mean 0 exactly
    assert set(np.unique(y_tr)) == {0.0, 1.0} and set(np.unique(y_te)) <= {0.0, 1.0}
    assert len(y_pub) == 200 and len(y_tr) + len(y_te) == 45211 - 200
