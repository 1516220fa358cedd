"""The PMT page's compute path (ui.pmt.compute.core): what runs on every control change and what waits for a tab.

A control change on the logistic task used to fit one PMT, DP-Newton and DP-GD estimator for the
Conditioning and Privacy ledger tabs (on bank: more than the sweep at the chosen epsilon). These tests
pin that the split keeps every number: the on-demand fits are the estimators' own, with their ledgers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import privacy as P
from engine.pmt import DPGDLogistic, DPNewtonLogistic, PMTLogistic
from ui.pmt.compute import core as C


class _DS:
    """The two calls of a Dataset that ``prepare`` makes."""

    def __init__(self, X, y):
        self.X, self.y = X, y

    def to_numpy(self):
        return self.X, self.y


def _logistic_prep(n=1500, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * [1.0, 3.0, 0.5, 2.0][:p]
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ np.linspace(0.5, -0.5, p) + 0.3)))).astype(float)
    return C.prepare(_DS(X, y), standardize=True, n_pub=150, split_seed=2, task="classification")


def _spec(**kw):
    spec = {"task": "classification", "epsilon": 1.5, "delta": 1e-5, "lam": 1e-3, "eta": 0.05, "seeds": 3,
            "clip_radius": 0.0, "methods": ["PMT", "DP-Newton", "DP-GD", "Non-private"], "standardize": True,
            "n_pub": 150, "split_seed": 2}
    spec.update(kw)
    return spec


def test_logistic_diagnostics_defer_the_noisy_fits_and_the_fits_are_the_estimators():
    prep, spec = _logistic_prep(), _spec()
    diag = C.diagnostics(prep, spec)
    assert diag["ledgers"] is None and math.isnan(diag["kappa_noisy"]) and math.isnan(diag["kappas"]["noisy"])
    assert diag["mu"] == pytest.approx(P.gdp_mu(1.5, 1e-5))
    assert C.ledger_methods(spec, diag) == ["PMT", "DP-Newton", "DP-GD"]
    fits = C.estimator_fits(prep, spec)
    assert set(fits["ledgers"]) == {"PMT", "DP-Newton", "DP-GD"}
    common = dict(epsilon=1.5, delta=1e-5, lam=1e-3, eta=0.05, random_state=0)
    args = (prep.X_train, prep.y_train)
    pmt = PMTLogistic(**common).fit(*args, X_pub=prep.X_pub, y_pub=prep.y_pub)
    assert fits["kappa_noisy"] == pmt.report_.kappa_noisy and fits["eig_fixes"] == pmt.report_.eig_fixes
    for name, cls in (("PMT", PMTLogistic), ("DP-Newton", DPNewtonLogistic), ("DP-GD", DPGDLogistic)):
        want = cls(**common).fit(*args, X_pub=prep.X_pub, y_pub=prep.y_pub).report_.ledger.to_frame()
        got = C.ledger_frame(fits["ledgers"][name])
        assert got.equals(want), name
        total = got.iloc[-1]
        assert total["name"].startswith("total") and total["epsilon"] <= 1.5 + 1e-9
        assert total["mu"] == pytest.approx(P.gdp_mu(1.5, 1e-5), rel=1e-9)
    full = C.with_fits(diag, fits)
    assert full["kappas"]["noisy"] == pmt.report_.kappa_noisy and full["kappa_noisy"] == pmt.report_.kappa_noisy
    assert math.isnan(diag["kappas"]["noisy"])  # the cached diagnostics are not modified
    assert C.ledger_methods(spec, full) == ["PMT", "DP-Newton", "DP-GD"]


def test_fits_follow_the_selected_methods_and_ridge_keeps_its_fits_in_the_diagnostics():
    prep = _logistic_prep(seed=1)
    spec = _spec(methods=["DP-GD", "Non-private"])
    assert C.ledger_methods(spec, C.diagnostics(prep, spec)) == ["DP-GD"]
    fits = C.estimator_fits(prep, spec)
    assert list(fits["ledgers"]) == ["DP-GD"] and math.isnan(fits["kappa_noisy"])  # no PMT fit
    rng = np.random.default_rng(3)
    X = rng.normal(size=(800, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=800)
    rprep = C.prepare(_DS(X, y), standardize=True, n_pub=100, split_seed=0, task="regression")
    rspec = _spec(task="regression", methods=["PMT", "DP-RR", "Non-private"])
    rdiag = C.diagnostics(rprep, rspec)
    assert list(rdiag["ledgers"]) == ["PMT", "DP-RR"] and np.isfinite(rdiag["kappa_noisy"])
    assert C.estimator_fits(rprep, rspec) == {} and C.with_fits(rdiag, {}) is rdiag
    frame = C.ledger_frame(rdiag["ledgers"]["PMT"])
    assert frame.iloc[-1]["mu"] == pytest.approx(P.gdp_mu(1.5, 1e-5), rel=1e-9)
