"""The planner's private-only baselines (DP-RR, DP-GD) against simulation, where the noise dominates."""

import numpy as np
import pytest


def _split(name):
    from engine.datasets import load_dataset
    from engine.pmt.sweep import sweep_split

    X, y = load_dataset(name).to_numpy()
    return sweep_split(X, y, n_pub=200, split_seed=0)


@pytest.mark.parametrize("name,n", [("wine-white", 200), ("wine-red", 500)])
def test_planner_dp_rr_and_dp_gd_within_2x_of_simulation_when_noise_dominates(name, n):
    # a first-order DP-RR model (floor at 1e-3 n mean(lambda), ignoring the trace's own noise) predicted
    # 7.2x (wine-white, n = 200) and 2.9x (wine-red, n = 500) the simulated median; DP-GD was not planned
    from engine.pmt.planner import plan, plan_inputs_from_public
    from engine.pmt.sweep_modes import run_modes, simulate_public_info

    Xq, yq, Xtr, ytr, Xte, yte = _split(name)
    p = plan(plan_inputs_from_public(Xq, yq), epsilon=1.0, lam=1e-3)
    idx = np.sort(np.random.default_rng(0).choice(len(ytr), n, replace=False))
    f = run_modes(Xtr[idx], ytr[idx], Xte, yte, simulate_public_info(Xq, yq, "labelled"), methods=["dp-rr", "dp-gd"],
                  seeds=20, standardize=True, lam=1e-3)
    sim = f.groupby("method")["rmse"].median()
    at = p.at(n)
    for m in ("DP-RR", "DP-GD"):
        assert 0.5 <= at[m] / sim[m] <= 2.0, (m, at[m], sim[m])
    assert at["DP-RR"] > 100 * at["PMT"]  # far in the noise-dominated range, so the check is not met by the floor s


def test_planner_is_a_pure_function_of_public_inputs():
    from engine.pmt.planner import _RR_CACHE, plan, plan_inputs_from_public

    Xq, yq, *_ = _split("wine-red")
    inp = plan_inputs_from_public(Xq, yq)
    a = plan(inp, epsilon=1.0).curves
    _RR_CACHE.clear()
    b = plan(inp, epsilon=1.0).curves
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    # a larger budget lowers every private-only curve
    c = plan(inp, epsilon=4.0).curves
    assert np.all(c["DP-GD"] <= a["DP-GD"] + 1e-12) and np.all(c["DP-RR"][:50] < a["DP-RR"][:50])
