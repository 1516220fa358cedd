"""The planner counts bias: bounds applied to the public rows, the joint form, "no crossover"."""

import numpy as np
import pytest

from engine.pmt.planner import CROSSOVER_MARGIN, plan, plan_inputs_from_public
from engine.pmt.planner_bias import clip_bias, joint_release_error, rr_bias


def _heavy(m=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    X[:, 0] = rng.standard_t(2.0, size=m)  # a heavy-tailed feature: truncating its long rows moves the slope
    return X, 3.0 * X[:, 0] + rng.normal(size=m)


def _light(m=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    return X, 3.0 * X[:, 0] + rng.normal(size=m)


def test_bias_is_what_the_bounds_move_on_the_public_rows():
    nf = np.array([1e2, 1e4, 1e6, 1e8])
    inp = plan_inputs_from_public(*_heavy())
    b = clip_bias(inp.public_rows, nf, 0.05)
    assert np.all(b > 0.1 * inp.resid_sd**2)  # x truncated and y clipped: the slope moves (not monotone in n:
    # the two shrink the slope from opposite ends, and R outgrows the rows before B_y outgrows the labels)
    # by hand at n = 1e4: the same bounds on the public rows, the refit's excess risk
    Z, yc = inp.public_rows
    S = Z.T @ Z / len(yc)
    beta = np.linalg.lstsq(Z, yc, rcond=None)[0]
    w, V = np.linalg.eigh(S)
    W = (V / np.sqrt(w)) @ V.T
    L = 1 + np.log(2 * 1e4 / 0.05)
    Zw = Z @ W
    nz = np.linalg.norm(Zw, axis=1)
    Zt = Zw * np.minimum(1, np.sqrt(3 * L) / nz)[:, None]
    By = np.sqrt(np.mean(yc**2) * L)
    th = W @ np.linalg.lstsq(Zt, np.clip(yc, -By, By), rcond=None)[0]
    assert b[1] == pytest.approx((th - beta) @ S @ (th - beta), rel=1e-9)
    assert np.all(rr_bias(inp.public_rows, nf, 0.05) >= 0)
    # light tails: next to nothing reaches the bounds, no bias worth a digit of the RMSE
    light = plan_inputs_from_public(*_light())
    assert np.max(clip_bias(light.public_rows, nf, 0.05)) < 1e-3 * light.resid_sd**2
    assert np.max(clip_bias(light.public_rows, nf[1:], 0.05)) < 1e-20


def test_bias_keeps_clipped_pmt_above_public_only_no_crossover():
    inp = plan_inputs_from_public(*_heavy(m=100))  # few public rows: beating them is worth the 0.5 % margin
    p = plan(inp, epsilon=1.0, response="clip")
    assert p.crossover_n is None
    c = p.conclusion()
    assert "no crossover" in c and "its bias alone" in c
    floor = p.bias_at(int(p.n[-1]))["PMT"]
    assert f"{floor:.4g}" in c
    # without the bias term the old model promised a crossover
    assert plan(inp, epsilon=1.0, response="clip", bias=False).crossover_n is not None
    d = p.to_dict()
    assert d["response"] == "clip" and "PMT" in d["bias"]


def test_joint_form_is_simulated_and_wins_where_clipping_cannot():
    inp = plan_inputs_from_public(*_heavy())
    p = plan(inp, epsilon=1.0, response="joint")
    assert p.response == "joint"
    at = p.at(10**7)
    assert at["PMT"] < at["Public-only"] * (1 - CROSSOVER_MARGIN)
    err, bias = joint_release_error(inp.public_rows, np.array([1e3, 1e7]), mu=1.0, eta=0.05, delta=1e-5, lam=1e-3)
    assert err[0] > err[1] >= 0 and np.all(bias >= 0)
    assert plan(inp, epsilon=1.0, response="auto").response == "joint"  # labelled public rows


def test_joint_needs_public_labels_and_bad_response_refused():
    X, _ = _light()
    inp = plan_inputs_from_public(X, response_scale=3.0, r2=0.9)
    with pytest.raises(ValueError, match="labelled public rows"):
        plan(inp, epsilon=1.0, response="joint")
    assert plan(inp, epsilon=1.0, response="auto").response == "clip"
    with pytest.raises(ValueError, match="response must be one of"):
        plan(inp, epsilon=1.0, response="both")


def _public_rows(name):
    from engine.datasets import load_dataset
    from engine.pmt.sweep import sweep_split

    X, y = load_dataset(name).to_numpy()
    Xq, yq, *_ = sweep_split(X, y, n_pub=200, split_seed=0)
    return plan_inputs_from_public(Xq, yq)


def test_clip_crossover_is_unknown_where_the_public_rows_see_the_tail_but_cannot_measure_it():
    """flights: at the clip form's would-be crossover its bounds cut 1 of the 200 public rows (1.4 % of the private
    rows lie beyond B_y), and the simulation has no crossover (docs/pmt_planner_check.md): the plan says "unknown"
    rather than promise one. ccpp: no public row reaches the bounds, the crossover stands; the joint form's too."""
    from engine.pmt.planner_bias import TAIL_MIN_ROWS, clip_reach

    fl = _public_rows("flights")
    bare = plan(fl, epsilon=1.0, response="clip", bias=False)  # (no bias term: no unknown rule either)
    p = plan(fl, epsilon=1.0, response="clip")
    assert bare.crossover_n is not None and p.crossover_n is None and p.crossover_note is not None
    assert "not estimable from 200 public rows" in p.crossover_note and "unknown" in p.conclusion()
    assert "no crossover" not in p.conclusion() and p.to_dict()["crossover_note"] == p.crossover_note
    # the count by hand at the plan's n: whitened norm above R or |y - centre| above B_y
    Z, yc = fl.public_rows
    n = 39_811
    L = 1 + np.log(2 * n / 0.05)
    S = Z.T @ Z / len(yc)
    w, V = np.linalg.eigh(S)
    nz = np.linalg.norm(Z @ ((V / np.sqrt(w)) @ V.T), axis=1)
    k = int(np.sum((nz > np.sqrt(Z.shape[1] * L)) | (np.abs(yc) > np.sqrt(np.mean(yc**2) * L))))
    assert clip_reach(fl.public_rows, n, 0.05) == k and 0 < k < TAIL_MIN_ROWS
    assert plan(fl, epsilon=1.0).crossover_n is not None  # the joint default: a crossover (checked by simulation)
    cc = plan(_public_rows("ccpp"), epsilon=1.0, response="clip")
    assert cc.crossover_n is not None and cc.crossover_note is None
    assert clip_reach(_public_rows("ccpp").public_rows, cc.crossover_n, 0.05) == 0


def test_cli_prints_unknown_for_the_clip_form_on_flights(capsys):
    from engine.cli import main

    assert main(["pmt-plan", "--dataset", "flights", "--response", "clip", "--n", "30000"]) == 0
    out = capsys.readouterr().out
    assert "crossover_n = unknown;" in out and "not estimable from 200 public rows" in out
