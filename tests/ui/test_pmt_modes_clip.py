"""The page's baseline clip radius reaches the runs without public labels (unlabelled rows, published moments)."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def prep():
    from engine.datasets import load_dataset
    from ui.pmt.compute import core as C

    return C.prepare(load_dataset("wine-red"), None, standardize=True, n_pub=200, split_seed=0, task="regression")


def _spec(mode, clip):
    return {"task": "regression", "epsilon": 1.0, "delta": 1e-5, "lam": 1e-3, "n_pub": 200, "eta": 0.05, "seeds": 3,
            "clip_radius": clip, "methods": ["PMT", "DP-RR", "Non-private"], "standardize": True,
            "public_source": "split", "split_seed": 0, "data": "wine-red", "public_mode": mode,
            "response_center": None, "response_scale": None, "moments": None, "sweep": "epsilon", "values": [1.0]}


@pytest.mark.parametrize("mode", ["unlabelled", "moments"])
def test_mode_runs_honour_the_baseline_clip_radius(prep, mode):
    from ui.pmt.compute.modes import mode_diagnostics, mode_sweep

    auto = mode_sweep(prep, _spec(mode, 0.0))
    tight = mode_sweep(prep, _spec(mode, 1.0))
    rr = lambda f: f.loc[f.method == "DP-RR", "rmse"].to_numpy()  # noqa: E731
    assert not np.allclose(rr(auto), rr(tight))  # the radius reached DP-RR (it was ignored before)
    np.testing.assert_array_equal(auto.loc[auto.method == "PMT", "rmse"], tight.loc[tight.method == "PMT", "rmse"])
    assert mode_diagnostics(prep, _spec(mode, 1.0))["clip_radius"] == 1.0
    assert mode_diagnostics(prep, _spec(mode, 0.0))["clip_radius"] > 3.0  # the public formula


def test_run_modes_clip_radius_is_dp_rr_s_radius():
    from engine.datasets import load_dataset
    from engine.pmt import DPRidge
    from engine.pmt.sweep import sweep_split
    from engine.pmt.sweep_modes import run_modes, simulate_public_info

    X, y = load_dataset("wine-red").to_numpy()
    Xq, yq, Xtr, ytr, Xte, yte = sweep_split(X, y, n_pub=200, split_seed=0, standardize=True, center_y=True)
    info = simulate_public_info(Xq, yq, "labelled")
    f = run_modes(Xtr, ytr, Xte, yte, info, methods=["dp-rr"], seeds=[4], clip_radius=2.0)
    m = DPRidge(epsilon=1.0, clip_radius=2.0, random_state=np.random.default_rng(4)).fit(Xtr, ytr, Xq, yq)
    assert f["rmse"].iloc[0] == pytest.approx(float(np.sqrt(np.mean((yte - m.predict(Xte)) ** 2))), rel=1e-9)
