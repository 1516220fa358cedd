"""The NVDP headline's figures: worst case over all pairs, per-rule effects, the BDP floor, whole batches, Wilson."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.headline import accuracy_interval, bdp_floor, headline_verdict, rule_effects, seed_headline
from engine.nvdp.protocol import EvalProtocol, evaluate_bounds


@pytest.fixture(scope="module")
def raw():
    from conftest import tiny_nvdp

    model, states, _ = tiny_nvdp(seed=3, n=36)
    with torch.no_grad():
        return model.posteriors(states.states, states.mask).detach()


def _res(max_all, max_filtered, mean, acc, pairs):
    vals = np.array([max_all, mean, max_filtered])
    rd = NS(values=vals, pair_index=pairs, form="paper", max=max_filtered, max_unfiltered=max_all, mean=mean)
    ex = NS(values=np.array([np.inf, 1.0, 2.0]), pair_index=pairs, form="exact")
    return NS(rd_paper=rd, rd_exact=ex, accuracy=acc)


def test_verdict_uses_the_true_worst_case_and_quotes_the_filtered_one():
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    # the filtered max is lower with clipping, the true max over the pairs is not: the direction does not hold
    c, u = _res(0.9, 0.10, 0.01, 0.88, pairs), _res(0.6, 0.20, 0.02, 0.88, pairs)
    text = headline_verdict(c, u)
    assert "worst case over the 3 evaluated pairs 0.9 vs 0.6" in text
    assert "outlier-filtered max 0.1 vs 0.2" in text and "does not hold" in text
    assert "holds here" in headline_verdict(_res(0.5, 0.1, 0.01, 0.88, pairs), u)


def test_rule_effects_compare_each_rule_alone_pair_by_pair(raw):
    clip = ClipConfig(enabled=True, C_mu=0.05, alpha_min=0.0, alpha_max=0.5)
    proto = EvalProtocol(n_eval=32, batch_size=8)
    eff = rule_effects(raw, clip, proto)
    assert set(eff) == {"mean", "std", "alpha", "all"}
    base = evaluate_bounds(raw, 1.1, proto, with_bdp=False).rd_paper
    for name, e in eff.items():
        pp = e["paper"]
        assert pp.n_pairs == base.n_pairs == 4 * 28
        assert pp.n_lower + pp.n_higher + pp.n_equal <= pp.n_pairs
        assert e["verdict"] in ("tightens", "loosens", "mixed", "no effect")
        if e["verdict"] == "no effect":
            assert e["paper"].n_lower == e["paper"].n_higher == 0 and e["worst"][0] == e["worst"][1]
    # a tiny mean ball pulls every mean to ~0: the mean rule alone lowers the Gaussian mean terms of most pairs
    assert eff["mean"]["paper"].n_lower > eff["mean"]["paper"].n_higher
    # the mean rule alone changes only mu: recompute one variant by hand
    full, _ = raw.clip(clip)
    from engine.nvdp.layer import Posteriors

    by_hand = evaluate_bounds(Posteriors(full.mu, raw.sigma, raw.alpha, raw.mask), 1.1, proto, with_bdp=False).rd_paper
    assert np.array_equal(eff["mean"]["paper"].n_lower, int(np.sum(by_hand.values < base.values)))


def test_bdp_floor_and_cost():
    d = bdp_floor(10.4660, 1.1, 1e-5, 0.125)
    assert d["floor"] == pytest.approx(math.log(1e5) / 1.1)
    assert d["cost"] == pytest.approx(1.1 * 10.4660 - math.log(1e5))
    assert "10.466" in d["sentence"] and "cannot tell the models apart" in d["sentence"]


def test_paper_form_uses_whole_batches_only(raw):
    """36 sentences in batches of 8: the paper form and its accountant see the first 32 (4 whole batches);
    the guarantee form all 36."""
    proto = EvalProtocol(n_eval=36, batch_size=8)
    b = evaluate_bounds(raw, 1.1, proto)
    assert b.n_eval == 36 and b.n_paper == 32
    assert b.rd_exact.n_pairs == 36 * 35 // 2
    assert b.rd_paper.n_pairs == 4 * 28 and b.bdp_paper["n_batches"] == 4
    assert b.bdp_paper["q"] == pytest.approx(8 / 32)
    same = evaluate_bounds(raw, 1.1, EvalProtocol(n_eval=32, batch_size=8))
    assert b.bdp_paper.epsilon == same.bdp_paper.epsilon and b.rd_paper.max == same.rd_paper.max


def test_wilson_interval_on_small_test_sets():
    lo, hi = accuracy_interval(29 / 33, 33)
    assert lo == pytest.approx(0.72674, abs=1e-4) and hi == pytest.approx(0.95184, abs=1e-4)
    lo2, hi2 = accuracy_interval(0.88, 500)
    assert hi2 - lo2 < hi - lo  # more test items, narrower
    assert accuracy_interval(1.0, 10)[1] == pytest.approx(1.0) and accuracy_interval(1.0, 10)[0] < 0.75
    for bad in ((0.5, 0), (1.2, 10), (0.5, 10, 1.0)):
        with pytest.raises(ValueError):
            accuracy_interval(*bad)


def test_seed_headline_counts_every_seed():
    def arm(v):
        return {k: {"mean": v, "sd": 0.01, "min": v, "max": v} for k in
                ("rd_max_all_pairs", "rd_paper_max", "rd_paper_mean", "accuracy", "bdp_paper")}

    s = {"summary": {"clipped": arm(0.2), "unclipped": arm(0.3)},
         "direction": {"n_seeds": 3, "rd_max_all_pairs_lower": 3, "rd_paper_max_lower": 2, "rd_paper_mean_lower": 3,
                       "accuracy_within_1_point": 3}}
    text = seed_headline(s)
    assert "Over 3 seeds" in text and "lower with clipping in 3 of 3" in text and "holds in every seed" in text
    s["direction"]["rd_max_all_pairs_lower"] = 2
    assert "**holds in 2 of 3 seeds** at most" in seed_headline(s)  # only the counts: an upper limit
    # with the per-seed figures the count is exact: the direction needs all three conditions in one seed
    row = lambda wc, wu, mc, mu, ac, au: {"clipped": {"rd_max_all_pairs": wc, "rd_paper_mean": mc, "accuracy": ac},  # noqa: E731
                                          "unclipped": {"rd_max_all_pairs": wu, "rd_paper_mean": mu, "accuracy": au}}
    s["per_seed"] = [row(0.1, 0.2, 0.1, 0.2, 0.9, 0.9), row(0.3, 0.2, 0.1, 0.2, 0.9, 0.9), row(0.1, 0.2, 0.3, 0.2, 0.9, 0.9)]
    assert "**holds in 1 of 3 seeds**." in seed_headline(s) and "every seed" not in seed_headline(s)


def test_a_rule_that_changes_no_pair_is_labelled_no_effect(raw):
    """A mean cap no cloud reaches changes no bound: "no effect", not "mixed"."""
    clip = ClipConfig(enabled=True, C_mu=1e9, alpha_min=0.0, alpha_max=0.5)
    eff = rule_effects(raw, clip, EvalProtocol(n_eval=32, batch_size=8))
    assert eff["mean"]["verdict"] == "no effect", eff["mean"]
