"""Every ridge estimator the page and the CLI fit centres (and, for the raw-row baselines, scales) with public
statistics by default: raw and publicly standardised inputs give the same held-out RMSE."""

import numpy as np
import pandas as pd
import pytest

from engine.datasets import load_dataset
from engine.pmt import DPGDRidge, DPRidge, PMTRidge
from engine.pmt.pooled import PMTPooledRidge
from engine.pmt.sweep import sweep_split

ESTIMATORS = {"PMT": (PMTRidge, {}), "PMT-pooled": (PMTPooledRidge, {}), "DP-RR": (DPRidge, {}),
              "DP-GD": (DPGDRidge, {"n_steps": 100})}


@pytest.fixture(scope="module")
def ccpp():
    X, y = load_dataset("ccpp").to_numpy()
    raw = sweep_split(X, y, n_pub=200, split_seed=0)
    std = sweep_split(X, y, n_pub=200, split_seed=0, standardize=True, center_y=True)
    return raw, std


def _median_rmse(cls, kw, split, seeds=range(5), **extra):
    Xq, yq, Xtr, ytr, Xte, yte = split
    out = []
    for s in seeds:
        m = cls(epsilon=1.0, lam=1e-3, random_state=np.random.default_rng(s), **kw, **extra).fit(Xtr, ytr, Xq, yq)
        out.append(float(np.sqrt(np.mean((yte - m.predict(Xte)) ** 2))))
    return float(np.median(out))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_raw_and_standardised_inputs_give_the_same_test_rmse(ccpp, name):
    raw, std = ccpp
    cls, kw = ESTIMATORS[name]
    r, s = _median_rmse(cls, kw, raw), _median_rmse(cls, kw, std)
    assert abs(r - s) <= 0.2 * s, (name, r, s)
    assert s < 20.0  # a useful fit on ccpp (power output sd 17 MW), so the comparison means something


@pytest.mark.parametrize("name", ["DP-RR", "DP-GD"])
def test_uncentred_raw_inputs_were_far_off(ccpp, name):
    # what the default fixes: on the rows as given (center=None) the raw-row radius clips every raw row and
    # the response bound is the scale of |y| (about 450 MW)
    raw, std = ccpp
    cls, kw = ESTIMATORS[name]
    r, s = _median_rmse(cls, kw, raw, center=None), _median_rmse(cls, kw, std)
    assert abs(r - s) > 0.2 * s, (name, r, s)


def test_noise_off_baselines_are_the_non_private_ridge_in_original_units(ccpp):
    from engine.pmt import RidgeReference

    Xq, yq, Xtr, ytr, *_ = ccpp[0]
    ref = RidgeReference(lam=1e-3).fit(Xtr, ytr).theta_
    m = DPRidge(epsilon=np.inf, lam=1e-3, clip_radius=1e6, response_bound=1e6).fit(Xtr, ytr, Xq, yq)
    np.testing.assert_allclose(m.theta_, ref, rtol=1e-8)
    assert m.report_.extra["public_standardized"] and m.report_.extra["response_center"] == pytest.approx(yq.mean())


def test_dask_run_from_files_is_centred_like_memory(tmp_path, ccpp):
    pytest.importorskip("dask")
    from engine.pmt.dask import run_from_files

    cols = list(load_dataset("ccpp").X.columns)
    rmse = {}
    for label, split in zip(("raw", "std"), ccpp):
        Xq, yq, Xtr, ytr, Xte, yte = split
        d = tmp_path / label
        d.mkdir()
        pd.DataFrame(Xtr, columns=cols).assign(PE=ytr).to_parquet(d / "part0.parquet", index=False)
        pd.DataFrame(Xq, columns=cols).assign(PE=yq).to_csv(d / "public.csv", index=False)
        for method in ("pmt", "dp-rr"):
            m = run_from_files(str(d / "part*.parquet"), "PE", public=d / "public.csv", method=method, epsilon=1.0,
                               random_state=3)
            mem = ESTIMATORS["PMT" if method == "pmt" else "DP-RR"][0](epsilon=1.0, random_state=3).fit(Xtr, ytr, Xq, yq)
            np.testing.assert_allclose(m.theta_, mem.theta_, rtol=1e-8)
            rmse[label, method] = float(np.sqrt(np.mean((yte - m.predict(Xte)) ** 2)))
    for method in ("pmt", "dp-rr"):
        assert abs(rmse["raw", method] - rmse["std", method]) <= 0.2 * rmse["std", method], rmse
