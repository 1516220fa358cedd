"""Every reported figure says whether it is a DP release, public-only or a non-private diagnostic.

The review's list: "kappa after PMT", raw kappa, rows truncated, every error against the non-private fit
or the held-out private rows, the CSV columns kappa_raw, kappa_pmt, frac_truncated and the errors; the
NVDP "BDP epsilon (guarantee)", a sample-based estimate over the evaluation sentences."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from engine.pmt import (
    DPGDRidge,
    DPRidge,
    DPRidgeOracle,
    PMTLogistic,
    PMTPoisson,
    PMTRidge,
    RidgeReference,
)
from engine.pmt._registry import SWEEP_COLUMN_PRIVACY, sweep_column_privacy
from engine.privacy.labels import BDP_ESTIMATE_LABEL, DIAGNOSTIC, DP, LABELS, PUBLIC

rng = np.random.default_rng(0)
X = rng.normal(size=(800, 2))
Y = X @ [1.0, -1.0] + rng.normal(size=800)
XQ = rng.normal(size=(100, 2))
YQ = XQ @ [1.0, -1.0]


@pytest.mark.parametrize("make, args", [
    (lambda: PMTRidge(epsilon=1.0), (X, Y, XQ, YQ)),
    (lambda: DPRidge(epsilon=1.0), (X, Y, XQ, YQ)),
    (lambda: DPGDRidge(epsilon=1.0, n_steps=5), (X, Y, XQ, YQ)),
    (lambda: PMTLogistic(epsilon=1.0), (X, (X[:, 0] > 0).astype(int), XQ)),
    (lambda: PMTPoisson(epsilon=1.0, y_max=5.0), (X, rng.poisson(1.0, 800).astype(float), XQ)),
])
def test_fit_report_labels_every_figure(make, args):
    r = make().fit(*args).report_
    lab = r.privacy
    d = r.to_dict()
    assert set(d) - {"privacy", "extra"} <= set(lab) and d["privacy"] == lab
    assert set(lab.values()) <= set(LABELS)
    # the review's figures: computed from the private rows without noise
    for k in ("kappa_raw", "kappa_pmt", "frac_truncated", "frac_y_clipped"):
        assert lab[k] == DIAGNOSTIC
    for k in ("epsilon", "delta", "mu", "sensitivities", "noise_scales", "radius", "n", "kappa_pub"):
        assert lab[k] == PUBLIC
    for k in ("kappa_noisy", "eig_fixes", "converged"):  # functions of the noisy release
        assert lab[k] == DP
    assert all(f"extra.{k}" in lab for k in r.extra)
    json.dumps(lab)  # exportable


def test_non_private_fits_have_no_dp_figure():
    ref = RidgeReference(lam=1e-3).fit(X, Y).report_
    assert DP not in ref.privacy.values() and ref.privacy["kappa_noisy"] == DIAGNOSTIC
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        orc = DPRidgeOracle(epsilon=1.0).fit(X, Y, XQ, YQ).report_
    assert DP not in orc.privacy.values()  # tuned on private errors: nothing it reports is DP
    off = PMTRidge(epsilon=np.inf).fit(X, Y, XQ, YQ).report_
    assert DP not in off.privacy.values()  # noise off


def test_sweep_columns_and_summary_carry_their_label():
    from engine.pmt.sweep import run_sweep, summarize

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = run_sweep("synthetic", methods=["pmt", "dp-rr", "dp-gd", "public-only", "non-private", "dp-rr-oracle"],
                      epsilons=[1.0], seeds=2, dataset_kwargs={"n": 1500, "d": 3}, dp_gd_steps=5)
    assert set(f.columns) <= set(SWEEP_COLUMN_PRIVACY)  # every column labelled explicitly
    s = summarize(f, "l2_error")
    assert set(s["privacy"]) == {DIAGNOSTIC}  # errors are against the non-private fit on the private rows
    k = summarize(f, "kappa_noisy").set_index("method")["privacy"]
    assert k["PMT"] == DP and k["Non-private"] == DIAGNOSTIC and k["Public-only"] == PUBLIC
    assert sweep_column_privacy("radius", "dp-rr-oracle") == DIAGNOSTIC and sweep_column_privacy("radius", "pmt") == PUBLIC
    assert sweep_column_privacy("some_new_column") == DIAGNOSTIC  # unknown: assume the worst


def test_logistic_and_poisson_sweep_columns_are_labelled():
    from engine.datasets import make_synthetic_logistic
    from engine.pmt.sweep import run_sweep

    f = run_sweep(make_synthetic_logistic(n=1500, d=3), task="logistic", epsilons=[1.0], seeds=2, dp_gd_steps=5)
    assert set(f.columns) <= set(SWEEP_COLUMN_PRIVACY)
    for c in ("accuracy", "auc", "log_loss"):
        assert sweep_column_privacy(c, "pmt") == DIAGNOSTIC


def test_cli_pmt_json_and_csv_carry_the_labels(tmp_path, capsys):
    from engine.cli import main

    out = tmp_path / "r.csv"
    rc = main(["pmt", "--dataset", "synthetic", "--n-rows", "1500", "--d", "3", "--epsilon", "1", "--seeds", "2",
               "--methods", "pmt", "non-private", "--json", "--out", str(out)])
    assert rc == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["settings"]["privacy"]["kappa_raw"] == DIAGNOSTIC
    assert payload["settings"]["privacy"]["kappa_pmt"] == DIAGNOSTIC
    assert payload["settings"]["privacy"]["kappa_pub"] == PUBLIC
    assert {r["privacy"] for r in payload["summary"]} == {DIAGNOSTIC}
    side = json.loads((tmp_path / "r.privacy.json").read_text())
    assert side["kappa_pmt"] == DIAGNOSTIC and side["l2_error"] == DIAGNOSTIC and side["epsilon"] == PUBLIC
    assert side["kappa_noisy"] == {"non-private": DIAGNOSTIC, "pmt": DP}


def test_nvdp_bdp_epsilon_is_labelled_a_sample_based_estimate():
    import inspect

    from engine.nvdp import diagnostics, posthoc

    src = inspect.getsource(diagnostics)  # the CLI's run summary (engine.cli.nvdp prints it)
    assert "{BDP_ESTIMATE_LABEL} (delta 1e-5)" in src and "(guarantee, order" not in src
    assert "sample-based estimate over the evaluation sentences" in BDP_ESTIMATE_LABEL
    lab = posthoc.summary_privacy({"bdp_epsilon": 1.0, "bdp_epsilon_paper": 0.5, "accuracy": 0.9, "n_test": 10})
    assert lab == {"bdp_epsilon": DIAGNOSTIC, "bdp_epsilon_paper": DIAGNOSTIC, "accuracy": DIAGNOSTIC,
                   "n_test": PUBLIC}
