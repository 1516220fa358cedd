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


def _spread(head, iqr, n_seeds=20):
    return head.assign(q25=head["median"] - iqr / 2, q75=head["median"] + iqr / 2, n_seeds=n_seeds)


def test_tie_is_decided_by_the_seed_noise_not_a_fixed_tolerance():
    # a 5 % gap inside twice its standard error (IQR 0.3 over 20 seeds: SE 0.062 each) is a tie
    v = pmt_verdict(_spread(_head(PMT=1.05, RR=1.0, PUB=3.0), 0.3), metric_label="RMSE", lower_better=True,
                    epsilon=1.0, n_priv=5000, n_pub=100)
    assert v.tone == "neutral" and v.text.startswith("PMT and DP-RR are about equal")
    assert "within twice its standard error" in v.text
    # the same 5 % gap with tight seeds (IQR 0.01) is a loss: the old fixed 10 % would have called it a tie
    v = pmt_verdict(_spread(_head(PMT=1.05, RR=1.0, PUB=3.0), 0.01), metric_label="RMSE", lower_better=True,
                    epsilon=1.0, n_priv=5000, n_pub=100)
    assert v.tone == "bad" and v.winner == "DP-RR"
    # flights at n = 30,000 (the clip form): PMT 17 vs public-only 15.6 (no noise), tight seeds: a loss
    v = pmt_verdict(_spread(_head(PMT=17.0, PUB=15.6), 0.2, 10), metric_label="RMSE", lower_better=True,
                    epsilon=1.0, n_priv=30000, n_pub=200)
    assert v.tone == "bad" and v.winner == "Public-only"
    # a gap under 1 % is a tie even without noise
    v = pmt_verdict(_head(PMT=1.005, RR=1.0), metric_label="RMSE", lower_better=True, epsilon=1.0, n_priv=50,
                    n_pub=10)
    assert v.tone == "neutral"


def test_never_green_where_a_constant_predicts_as_well():
    # diabetes with unlabelled rows: PMT 74.4 "wins" against DP-GD, but predicting the centre gives 73.4
    head = _spread(_head(PMT=74.4, GD=1900.0), 2.0)
    v = pmt_verdict(head, metric_label="Held-out RMSE", lower_better=True, epsilon=1.0, n_priv=300, n_pub=50,
                    reference=73.4, reference_label="predicting the stated centre", r2_reference=73.4**2)
    assert v.tone == "bad" and v.text.startswith("No method clearly beats predicting the stated centre here")
    assert "74.4, R^2 -0.0274 against 73.4" in v.text
    # penguins: 906 vs 913 for the constant, inside the seeds' spread (IQR 40 over 20 seeds): not a win either
    v = pmt_verdict(_spread(_head(PMT=906.0, RR=2000.0), 40.0), metric_label="Held-out RMSE", lower_better=True,
                    epsilon=1.0, n_priv=300, n_pub=40, reference=913.0, reference_label="predicting the public mean")
    assert v.tone == "bad"
    # a clear win over the constant stays green and quotes R^2
    v = pmt_verdict(_spread(_head(PMT=15.7, RR=30.0, PUB=18.96), 0.1), metric_label="Held-out RMSE",
                    lower_better=True, epsilon=1.0, n_priv=30000, n_pub=200, reference=44.6,
                    reference_label="predicting the public mean", r2_reference=44.6**2)
    assert v.tone == "good" and "R^2 0.876" in v.text
    # AUC: never green at or below a constant score (0.5); log-loss: the base rate's
    v = pmt_verdict(_spread(_head(PMT=0.505, NEWTON=0.45), 0.04), metric_label="held-out AUC", lower_better=False,
                    epsilon=1.0, n_priv=400, n_pub=100, reference=0.5, reference_label="a constant score")
    assert v.tone == "bad" and "No method clearly beats a constant score" in v.text
    v = pmt_verdict(_spread(_head(PMT=0.54, NEWTON=0.9), 0.01), metric_label="held-out log-loss", lower_better=True,
                    epsilon=1.0, n_priv=400, n_pub=100, reference=0.545, reference_label="the public base rate")
    assert v.tone == "bad"


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


def test_nvdp_infinite_pairs_split_by_length():
    import numpy as np
    from types import SimpleNamespace as NS

    r = _res(math.inf, n_inf=3)
    r.rd_exact = NS(n_inf=3, n_pairs=6, values=np.array([np.inf, np.inf, 1.0, np.inf, 2.0, 3.0]),
                    pair_index=np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]))
    v = nvdp_verdict(r, _res(math.inf, n_inf=3), lengths=[4, 4, 5, 5])
    # (0, 1) equal lengths; (0, 2) and (1, 2) different
    assert "3 of 6 sentence pairs have no finite bound: 2 are pairs of sentences of different lengths" in v.text
    assert "1 is a pair of equal length" in v.text
    v = nvdp_verdict(r, _res(math.inf, n_inf=3), lengths=[4, 5, 6, 7])
    assert "3 are pairs of sentences of different lengths" in v.text and "equal length" not in v.text


def test_nvdp_no_finite_guarantee_says_because():
    v = nvdp_verdict(_res(math.inf, n_inf=37), _res(math.inf, n_inf=40))
    assert v.tone == "bad" and v.text.startswith("No finite guarantee here, because 37 of 120 sentence pairs")
    assert "10.5" in v.text  # the papers' figure is named, as not a guarantee


def test_public_only_wins_below_the_planned_crossover_does_not_say_would_need():
    """The planner's crossover at or below n_priv is not quoted as rows still needed (the evaluation disagrees)."""
    v = pmt_verdict(_head(PMT=3.57, RR=9.0, GD=12.0, PUB=1.0, NP=0.0), metric_label="L2 estimation error",
                    lower_better=True, epsilon=1.0, n_priv=7494, n_pub=200, n_needed=4786)
    assert v.winner == "Public-only" and "would need" not in v.text
    assert "predicted it would from about 4,786 private rows" in v.text


def test_contradictions_flag_a_public_only_claim_unless_public_only_wins():
    from engine.figures.verdict import Verdict, contradictions

    claim = "until then the public-only fit (no privacy cost) is the better estimate."
    for winner in ("PMT", None, "PMT-pooled"):
        assert contradictions(Verdict("...", "good", winner=winner), [claim, "kappa 3.1"]) == [claim]
        assert contradictions(Verdict("...", "good", winner=winner), ["The 200 public rows alone beat PMT."])
    assert contradictions(Verdict("...", "bad", winner="Public-only"), [claim]) == []
