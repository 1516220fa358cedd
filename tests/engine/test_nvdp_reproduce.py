"""The cross-CPU rule of the shipped NVDP direction counts: a count may move only by marginal seeds."""

import copy

from engine.nvdp.bundled import seed_summary
from engine.nvdp.headline import seed_headline
from engine.nvdp.reproduce import TOLERANCE, direction_problems, holds, marginal, marginal_seeds, marginal_sentence


def _row(seed, acc_c, acc_u, worst_c=0.7, worst_u=0.6):
    fig = lambda acc, w: {"accuracy": acc, "rd_max_all_pairs": w, "rd_paper_max": 0.2, "rd_paper_mean": 0.03}  # noqa: E731
    return {"seed": seed, "clipped": fig(acc_c, worst_c), "unclipped": fig(acc_u, worst_u)}


def _blob(rows):
    from engine.nvdp.reproduce import DIRECTIONS

    return {"per_seed": rows, "direction": {**{k: sum(holds(k, r) for r in rows) for k in DIRECTIONS}, "n_seeds": len(rows)}}


def test_accuracy_flip_on_a_marginal_seed_passes_and_is_named():
    # seed 0: 88.0 vs 88.2 %, 0.8 points inside the 1-point threshold (marginal at 2 points per model)
    want = _blob([_row(0, 0.880, 0.882), _row(1, 0.848, 0.874), _row(2, 0.880, 0.862)])
    got = copy.deepcopy(want)
    got["per_seed"][0]["clipped"]["accuracy"] = 0.866  # 1.4 points lower: within the tolerance, now outside 1 point
    got = _blob(got["per_seed"])
    assert want["direction"]["accuracy_within_1_point"] == 2 and got["direction"]["accuracy_within_1_point"] == 1
    problems, notes = direction_problems(want, got)
    assert problems == []
    assert len(notes) == 1 and "seed 0 flipped" in notes[0] and "accuracy_within_1_point" in notes[0]


def test_flip_on_a_clear_seed_fails():
    # seed 2: clipped 5.8 points above the threshold, farther than twice the 2-point tolerance
    want = _blob([_row(0, 0.880, 0.882), _row(2, 0.900, 0.852)])
    assert not marginal("accuracy_within_1_point", want["per_seed"][1])
    got = copy.deepcopy(want)
    got["per_seed"][1]["clipped"]["accuracy"] = 0.80
    problems, _ = direction_problems(want, _blob(got["per_seed"]))
    assert len(problems) == 1 and "seed 2 flipped and was clear" in problems[0]
    # the same flip passes under a tolerance wide enough to make seed 2 marginal
    assert direction_problems(want, _blob(got["per_seed"]), {**TOLERANCE, "accuracy_points": 3.0})[0] == []


def test_rd_marginal_is_the_overlap_of_the_two_tolerance_intervals():
    r = _row(0, 0.88, 0.88, worst_c=0.75, worst_u=0.5)  # |0.25| vs 0.25 * 1.25 = 0.3125: overlap
    assert marginal("rd_max_all_pairs_lower", r)
    r = _row(0, 0.88, 0.88, worst_c=0.9, worst_u=0.5)  # |0.4| > 0.35: clear
    assert not marginal("rd_max_all_pairs_lower", r)


def test_a_count_that_disagrees_with_its_own_seeds_fails():
    want = _blob([_row(0, 0.880, 0.882)])
    bad = copy.deepcopy(want)
    bad["direction"]["accuracy_within_1_point"] = 0
    problems, _ = direction_problems(bad, want)
    assert any("recorded count 0 but its per-seed figures give 1" in p for p in problems)


def test_shipped_counts_are_consistent_and_the_seed_sentence_names_the_marginal_seeds():
    s = seed_summary()
    assert direction_problems(s, s) == ([], [])
    m = marginal_seeds(s["per_seed"])
    # seed 1's accuracy: 84.8 vs 87.4 %, 1.6 points beyond the threshold, within 2 x 2 points
    assert 1 in m["accuracy_within_1_point"]
    text = seed_headline(s)
    assert marginal_sentence(s["per_seed"]) in text and "another CPU" in text
