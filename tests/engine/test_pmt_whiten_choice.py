"""whiten="auto" by a simulated release on the labelled public rows; the notes on PMT's coordinates."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.datasets import load_dataset
from engine.pmt import PMTLogistic, public_moment
from engine.pmt.run_notes import logistic_notes, reference_diverged, whitening_note
from engine.pmt.sweep import sweep_split
from engine.pmt.sweep_logistic import pmt_whitening, prepare_logistic_context
from engine.pmt.whiten_choice import simulate_whitening

ROOT = Path(__file__).resolve().parents[2]


def _split(name, n, seed=0):
    X, y = load_dataset(name).to_numpy()
    Xq, yq, Xtr, ytr, Xte, yte = sweep_split(X, y, n_pub=200, split_seed=0)
    idx = np.random.default_rng(seed).choice(len(ytr), n, replace=False)
    return Xq, yq, Xtr[idx], ytr[idx], Xte[:2000], yte[:2000]


def test_flights_late_small_n_chooses_full_whitening():
    # the case: the ratio rule chose "standardize" at n = 10,000 (AUC 0.88-0.89 where full gave 0.91-0.93)
    Xq, yq, X, y, _, _ = _split("flights-late", 10_000)
    mom = public_moment(Xq)
    for eps in (0.5, 1.0):
        ch = simulate_whitening(mom, Xq, yq, n=10_000, epsilon=eps, delta=1e-5, eta=0.05, lam=1e-3, n_steps=5)
        assert ch.choice == "full"
        assert ch.auc["full"] > ch.auc["standardize"]
        assert "chose 'full'" in ch.why() and f"{ch.auc['full']:.4f}" in ch.why()
    m = PMTLogistic(epsilon=1.0, random_state=0).fit(X, y, X_pub=Xq, y_pub=yq)
    assert m.report_.extra["whiten"] == "full" and m.report_.extra["whiten_rule"] == "simulated"
    # without public labels the public ratio rule decides (and picks standardised coordinates here)
    m0 = PMTLogistic(epsilon=1.0, random_state=0).fit(X, y, X_pub=Xq)
    assert m0.report_.extra["whiten_rule"] == "ratio" and m0.report_.extra["whiten"] == "standardize"


def test_bank_keeps_standardised_coordinates_and_sweep_agrees_with_estimator():
    Xq, yq, X, y, Xte, yte = _split("bank", 10_000)
    ctx = prepare_logistic_context(X, y, Xq, yq, Xte, yte, lams=[1e-3], delta=1e-5, eta=0.05,
                                   neighbouring="replace-one")
    choice, ratio, sim = pmt_whitening(ctx, 1.0, lam=1e-3)
    assert sim is not None and choice == sim.choice == "standardize"
    with pytest.warns(UserWarning, match="never spans"):  # a category absent from the public rows is dropped
        m = PMTLogistic(epsilon=1.0, random_state=0).fit(X, y, X_pub=Xq, y_pub=yq)
    assert m.report_.extra["whiten"] == choice and m.report_.extra["whiten_rule"] == "simulated"


def test_one_class_public_labels_fall_back_to_the_ratio_rule():
    rng = np.random.default_rng(1)
    Xq = rng.normal(size=(100, 3))
    assert simulate_whitening(public_moment(Xq), Xq, np.zeros(100), n=1000, epsilon=1.0, delta=1e-5, eta=0.05,
                              lam=1e-3, n_steps=5) is None
    X = rng.normal(size=(1000, 3))
    y = (X[:, 0] > 0).astype(int)
    m = PMTLogistic(epsilon=1.0, random_state=0).fit(X, y, X_pub=Xq, y_pub=np.zeros(100, dtype=int))
    assert m.report_.extra["whiten_rule"] == "ratio"


def _frame(pmt_auc, newton_auc, whiten_full, ref_ok=True):
    rows = []
    for s, (a, b) in enumerate(zip(pmt_auc, newton_auc)):
        rows.append(dict(method_key="pmt", epsilon=1.0, lam=1e-3, seed=s, auc=a, l2_error=a, whiten_full=whiten_full,
                         converged=True))
        rows.append(dict(method_key="dp-newton", epsilon=1.0, lam=1e-3, seed=s, auc=b, l2_error=b,
                         whiten_full=np.nan, converged=True))
        rows.append(dict(method_key="non-private", epsilon=1.0, lam=1e-3, seed=s, auc=0.9, l2_error=0.0,
                         whiten_full=np.nan, converged=ref_ok))
    return pd.DataFrame(rows)


def test_notes_follow_the_frame():
    assert whitening_note(_frame([0.8, 0.81], [0.8, 0.81], 1.0)) is None  # full whitening: nothing to say
    n = whitening_note(_frame([0.8, 0.81], [0.7, 0.71], 0.0))
    assert "standardised coordinates at epsilon 1" in n and "DP-Newton's seed for seed" not in n
    n = whitening_note(_frame([0.8, 0.81], [0.8, 0.81], 0.0))
    assert "equal DP-Newton's seed for seed" in n
    assert not reference_diverged(_frame([0.8], [0.8], 1.0))
    f = _frame([0.8], [0.8], 1.0, ref_ok=False)
    assert reference_diverged(f) and "did not converge" in logistic_notes(f)[0]


def test_cli_flags_a_diverged_reference(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)  # separable: no finite MLE at lam = 0
    path = tmp_path / "sep.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(path, index=False)
    out = subprocess.run([sys.executable, "-m", "engine", "pmt", "--task", "logistic", "--data", str(path), "--target",
                          "y", "--standardize", "--epsilon", "1", "--seeds", "2", "--lam", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "note: the non-private logistic reference did not converge" in out.stdout
