"""Accuracy-first planning, the logistic planner, and the page's Planner tab = pmt-plan --json."""

import json

import numpy as np
import pytest

from engine.cli import main


def _answer_is_consistent(p, answer, make):
    for k, v in answer["methods"].items():
        curve = p.curves[k]
        if k == "Public-only":
            assert (v["n_needed"] == 0) == (curve[0] <= answer["target"])
            continue
        if v["n_needed"] is not None:
            i = int(np.flatnonzero(p.n == v["n_needed"])[0])
            assert np.all(curve[i:] <= answer["target"]) and (i == 0 or curve[i - 1] > answer["target"])
        else:
            assert curve[-1] > answer["target"]
        if v["epsilon_needed"] is not None:
            e = v["epsilon_needed"]
            assert make(e).at(p.n_user)[k] <= answer["target"]
            lower = [x for x in answer["epsilons_tried"] if x < e]
            if lower:
                assert make(lower[-1]).at(p.n_user)[k] > answer["target"]


def test_accuracy_first_ridge_answers_n_and_epsilon(capsys):
    rc = main(["pmt-plan", "--dataset", "ccpp", "--epsilon", "1", "--target-rmse", "4.8", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    ans = out["accuracy_first"]
    assert ans["target"] == 4.8 and ans["metric"] == "RMSE" and ans["n_user"] == out["n_user"]
    assert set(ans["methods"]) == set(out["curves"])
    from engine.datasets import load_dataset
    from engine.pmt.planner_target import plan_from_public
    from engine.pmt.sweep import sweep_split

    X, y = load_dataset("ccpp").to_numpy()
    Xq, yq, _, ytr, _, _ = sweep_split(X, y, n_pub=200, split_seed=0)
    p, a = plan_from_public(Xq, yq, epsilon=1.0, n_user=len(ytr), target=4.8)
    assert a["methods"] == ans["methods"]
    _answer_is_consistent(p, a, lambda e: plan_from_public(Xq, yq, epsilon=e, n_user=len(ytr))[0])
    assert any(line.startswith("PMT: at epsilon 1 needs n >= ") for line in a["lines"])


def test_accuracy_first_refuses_bad_targets(capsys):
    from engine.pmt.planner_target import plan_from_public

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X @ [1.0, 2.0, 0.0] + rng.normal(size=200)
    with pytest.raises(ValueError, match="target"):
        plan_from_public(X, y, epsilon=1.0, n_user=1000, target=-1.0)
    with pytest.raises(ValueError, match="task"):
        plan_from_public(X, y, task="poisson", epsilon=1.0)
    # the ridge planner has no log-loss: a clear error, exit status != 0
    assert main(["pmt-plan", "--dataset", "ccpp", "--target-log-loss", "0.3"]) != 0
    assert "--target-log-loss applies to --task logistic" in capsys.readouterr().err


def test_logistic_planner_crossover_and_json(capsys):
    rc = main(["pmt-plan", "--task", "logistic", "--dataset", "flights-late", "--epsilon", "1",
               "--target-log-loss", "0.28", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["task"] == "logistic" and out["metric"] == "log_loss"
    assert set(out["curves"]) == {"PMT", "DP-Newton", "Public-only", "Non-private"}
    pub = out["curves"]["Public-only"][0]
    npv = np.array(out["curves"]["Non-private"])
    assert np.all(np.diff(npv) < 0) and npv[-1] < pub  # more rows, less loss; the limit below the public fit
    assert out["crossover_n"] is not None and 1e3 < out["crossover_n"] < 1e6
    assert out["accuracy_first"]["methods"]["PMT"]["n_needed"] is not None
    assert len(out["pmt_whiten"]) == len(out["n"])


def test_page_planner_gives_the_cli_numbers():
    from engine.cli.pmt_plan import build
    from engine.datasets import load_dataset
    from ui.pmt.compute import core as C
    from ui.pmt.planner import plan_and_answer

    prep = C.prepare(load_dataset("ccpp"), standardize=True, n_pub=200, split_seed=0)
    diag = {"task": "regression", "epsilon": 1.0, "delta": 1e-5, "lam": 1e-3, "eta": 0.05}
    p_page, a_page = plan_and_answer(prep, diag, 4.8)

    class Args:
        task, dataset, public, target, n, n_pub, epsilon, delta, lam, eta = ("ridge", "ccpp", None, None,
                                                                             int(prep.n_priv), 200, 1.0, 1e-5, 1e-3,
                                                                             0.05)
        response, target_rmse, target_log_loss, split_seed = "auto", 4.8, None, 0

    p_cli, a_cli, _ = build(Args)
    for k in p_cli.curves:
        np.testing.assert_allclose(p_page.curves[k], p_cli.curves[k], rtol=1e-6)
    assert p_page.crossover_n == p_cli.crossover_n
    assert {k: (v["n_needed"], v["epsilon_needed"]) for k, v in a_page["methods"].items()} == \
        {k: (v["n_needed"], v["epsilon_needed"]) for k, v in a_cli["methods"].items()}


def test_page_planner_reads_centred_logistic_labels():
    from types import SimpleNamespace

    from ui.pmt.planner import planner_settings

    rng = np.random.default_rng(0)
    y01 = (rng.random(100) < 0.3).astype(float)
    data = SimpleNamespace(X_pub=rng.normal(size=(100, 3)), y_pub=y01 - y01.mean(), n_priv=5000)
    s = planner_settings(data, {"task": "classification", "epsilon": 1.0, "delta": 1e-5, "lam": 1e-3})
    assert s["task"] == "logistic" and np.array_equal(s["yq"], y01)
    assert planner_settings(data, {"task": "classification", "epsilon": float("inf"), "delta": 1e-5,
                                   "lam": 1e-3}) is None
