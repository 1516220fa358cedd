"""The verdict sentences (engine.figures.verdict): who wins, by how much, and the call-outs."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pandas as pd

from engine.figures.verdict import nvdp_verdict, pmt_verdict


def _head(**medians) -> pd.DataFrame:
    names = {"PMT": "PMT", "RR": "DP-RR", "GD": "DP-GD", "PUB": "Public-only", "NP": "Non-private",
             "NEWTON": "DP-Newton"}
    return pd.DataFrame({"method": [names[k] for k in medians], "median": list(medians.values())})


def test_public_only_wins_quotes_rows_and_rows_needed():
    v = pmt_verdict(_head(PMT=3.57, RR=9.0, GD=12.0, PUB=1.0, NP=0.0), metric_label="L2 estimation error",
                    lower_better=True, epsilon=1.0, n_priv=7494, n_pub=200, n_needed=31811)
    assert v.tone == "bad" and v.winner == "Public-only"
    assert v.text.startswith("The 200 public rows alone beat every private method here")
    assert "7,494 private rows" in v.text and "31,811" in v.text and "PMT, 3.57" in v.text


def test_pmt_wins_by_ratio_with_conditioning_reason():
    v = pmt_verdict(_head(PMT=0.5, RR=2.0, GD=4.0, PUB=1.5, NP=0.0), metric_label="L2 estimation error",
                    lower_better=True, epsilon=2.0, n_priv=9000, n_pub=200, kappa_raw=1e4, kappa_pmt=1.3)
    assert v.tone == "good" and v.winner == "PMT"
    assert "3.0 times smaller" in v.text and "Public-only" in v.text  # 1.5 / 0.5: the public fit is the rival
    assert "10,000 to 1.3" in v.text


def test_baseline_wins_on_well_conditioned_data_says_why():
    v = pmt_verdict(_head(PMT=2.0, RR=1.0, PUB=3.0), metric_label="L2 estimation error", lower_better=True,
                    epsilon=1.0, n_priv=5000, n_pub=100, kappa_raw=4.0, kappa_pmt=1.1)
    assert v.tone == "bad" and v.winner == "DP-RR" and "2.0 times smaller" in v.text
    assert "already well conditioned" in v.text


def test_tie_within_tolerance_is_neutral():
    v = pmt_verdict(_head(PMT=1.05, RR=1.0, PUB=3.0), metric_label="RMSE", lower_better=True, epsilon=1.0,
                    n_priv=5000, n_pub=100)
    assert v.tone == "neutral" and v.text.startswith("PMT and DP-RR are about equal")


def test_higher_is_better_auc_gap_and_majority_call_out():
    head = _head(PMT=0.65, NEWTON=0.92, GD=0.95, PUB=0.99)
    v = pmt_verdict(head, metric_label="held-out AUC", lower_better=False, epsilon=1.0, n_priv=400, n_pub=100,
                    accuracy={"PMT": 0.586, "DP-Newton": 0.70, "DP-GD": 0.72, "Public-only": 0.75},
                    majority_accuracy=0.621)
    assert v.tone == "bad" and v.winner == "Public-only"
    assert "PMT is no better than always predicting the majority class (accuracy 0.586 vs 0.621)" in v.text
    # a classifier above the majority rate and winning stays good
    v2 = pmt_verdict(_head(PMT=0.9, NEWTON=0.7), metric_label="held-out AUC", lower_better=False, epsilon=1.0,
                     n_priv=400, n_pub=100, accuracy={"PMT": 0.8, "DP-Newton": 0.7}, majority_accuracy=0.6)
    assert v2.tone == "good" and "higher by 0.2" in v2.text


def _res(bdp_eps, n_inf=0, acc=0.8, paper=10.5):
    return NS(bdp=NS(epsilon=bdp_eps), rd_exact=NS(n_inf=n_inf, n_pairs=120), bdp_paper=NS(epsilon=paper),
              accuracy=acc)


def test_nvdp_finite_guarantee_leads_with_the_number():
    v = nvdp_verdict(_res(3.2), _res(7.5), n_eval=64)
    assert v.tone == "good" and v.text.startswith("BDP epsilon 3.2 with clipped caps")
    assert "sample-based estimate over the 64 evaluation sentences" in v.text and "7.5" in v.text


def test_nvdp_no_finite_guarantee_says_because():
    v = nvdp_verdict(_res(math.inf, n_inf=37), _res(math.inf, n_inf=40))
    assert v.tone == "bad" and v.text.startswith("No finite guarantee here, because 37 of 120 sentence pairs")
    assert "10.5" in v.text  # the papers' figure is named, as not a guarantee
