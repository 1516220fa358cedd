"""How far the shipped NVDP figures are reproducible on another CPU: the tolerances and the direction counts.

Training the bundled models again on another CPU kind (AVX-512 vs AVX2 float32 kernels) moves the
weights, which early stopping can turn into another restored epoch; ``scripts/make_nvdp_models.py
--check`` therefore compares each model's figures within :data:`TOLERANCE` (accuracy in points, the RD
figures relative).

The seed counts of the papers' direction (``direction`` in ``seeds.json``: in how many seeds clipping
lowers each RD figure, and keeps the accuracy within 1 point) compare two models per seed against a
threshold. If each of the two figures may move within its tolerance, a comparison whose two tolerance
intervals overlap can come out either way on another CPU: that seed is **marginal** for that count
(:func:`marginal`). The rule of :func:`direction_problems`: a rebuilt count may differ from the recorded
one only by seeds that flipped and were marginal in the recorded figures; a flip on a clear seed (one
whose intervals do not overlap, so one of its models moved beyond the tolerance) is a failure, and so
is a recorded count that disagrees with the recorded per-seed figures. No Streamlit here.
"""

from __future__ import annotations

__all__ = ["TOLERANCE", "DIRECTIONS", "holds", "marginal", "marginal_seeds", "direction_problems",
           "marginal_sentence"]

#: Cross-CPU tolerances of one model's figures: accuracy within 2 points, the RD figures within 25 %
#: relative; ``models_allowed_outside`` models of the rebuilt set may exceed them.
TOLERANCE = {"accuracy_points": 2.0, "rd_relative": 0.25, "models_allowed_outside": 1}

#: The direction counts of ``seeds.json`` and what each compares (clipped vs unclipped figure).
DIRECTIONS = {
    "rd_max_all_pairs_lower": "rd_max_all_pairs",
    "rd_paper_max_lower": "rd_paper_max",
    "rd_paper_mean_lower": "rd_paper_mean",
    "accuracy_within_1_point": "accuracy",
}
#: The words the page uses for each count.
NAMES = {"rd_max_all_pairs_lower": "worst case", "rd_paper_max_lower": "filtered max",
         "rd_paper_mean_lower": "mean", "accuracy_within_1_point": "accuracy within 1 point"}
ACCURACY_POINT = 0.01  # the "within 1 point" threshold, as a fraction


def holds(key: str, row: dict) -> bool:
    """Whether count ``key`` holds in one seed's row (``{"clipped": {...}, "unclipped": {...}}``).

    >>> row = {"clipped": {"rd_max_all_pairs": 0.5, "accuracy": 0.875}, "unclipped": {"rd_max_all_pairs": 0.6, "accuracy": 0.88}}
    >>> holds("rd_max_all_pairs_lower", row), holds("accuracy_within_1_point", row)
    (True, True)
    """
    c, u = float(row["clipped"][DIRECTIONS[key]]), float(row["unclipped"][DIRECTIONS[key]])
    if key == "accuracy_within_1_point":
        return c >= u - ACCURACY_POINT
    return c < u


def marginal(key: str, row: dict, tol: dict = TOLERANCE) -> bool:
    """Whether one seed's comparison can come out either way with each figure moved within ``tol``.

    RD counts (clipped < unclipped): the intervals ``x (1 +- rd_relative)`` of the two figures overlap,
    i.e. ``|c - u| <= rd_relative (|c| + |u|)``. Accuracy (clipped >= unclipped - 1 point): each accuracy
    may move by ``accuracy_points``, so the gap to the threshold may move by twice that:
    ``|c - u + 0.01| <= 2 accuracy_points / 100``.

    >>> row = {"clipped": {"rd_max_all_pairs": 0.70, "accuracy": 0.848}, "unclipped": {"rd_max_all_pairs": 0.68, "accuracy": 0.874}}
    >>> marginal("rd_max_all_pairs_lower", row), marginal("accuracy_within_1_point", row)
    (True, True)
    >>> marginal("rd_max_all_pairs_lower", row, {"rd_relative": 0.01, "accuracy_points": 0.5})
    False
    >>> marginal("accuracy_within_1_point", row, {"rd_relative": 0.01, "accuracy_points": 0.5})
    False
    """
    c, u = float(row["clipped"][DIRECTIONS[key]]), float(row["unclipped"][DIRECTIONS[key]])
    if key == "accuracy_within_1_point":
        return abs(c - u + ACCURACY_POINT) <= 2 * tol["accuracy_points"] / 100 + 1e-12
    return abs(c - u) <= tol["rd_relative"] * (abs(c) + abs(u))


def marginal_seeds(per_seed: list, tol: dict = TOLERANCE) -> dict:
    """Per direction count, the seeds whose comparison is marginal (:func:`marginal`); a count whose figure the
    rows lack is left out. Rows without a ``seed`` are numbered by position."""
    return {key: [int(r.get("seed", i)) for i, r in enumerate(per_seed) if marginal(key, r, tol)] for key, m in DIRECTIONS.items()
            if all(m in r["clipped"] and m in r["unclipped"] for r in per_seed)}


def direction_problems(want: dict, got: dict, tol: dict = TOLERANCE) -> tuple[list[str], list[str]]:
    """(problems, notes) of the rebuilt direction counts against the recorded ones (two ``seeds.json`` blobs).

    A count may differ only by seeds that flipped and whose recorded comparison is marginal; each such
    seed is a note. A flip on a clear seed, a recorded or rebuilt count that disagrees with its own
    per-seed figures, or a different set of seeds is a problem.

    >>> row = lambda wc, wu: {"seed": 0, "clipped": {"rd_max_all_pairs": wc}, "unclipped": {"rd_max_all_pairs": wu}}
    >>> want = {"per_seed": [row(0.70, 0.68)], "direction": {"rd_max_all_pairs_lower": 0, "n_seeds": 1}}
    >>> got = {"per_seed": [row(0.66, 0.69)], "direction": {"rd_max_all_pairs_lower": 1, "n_seeds": 1}}
    >>> direction_problems(want, got)[0]
    []
    >>> want = {"per_seed": [row(0.99, 0.50)], "direction": {"rd_max_all_pairs_lower": 0, "n_seeds": 1}}
    >>> direction_problems(want, got)[0]
    ['direction rd_max_all_pairs_lower: recorded 0, rebuilt 1; seed 0 flipped and was clear (clipped 0.99 vs unclipped 0.5 recorded)']
    """
    problems, notes = [], []
    wseeds = [int(r["seed"]) for r in want["per_seed"]]
    if wseeds != [int(r["seed"]) for r in got["per_seed"]]:
        return [f"seeds differ: recorded {wseeds}, rebuilt {[int(r['seed']) for r in got['per_seed']]}"], notes
    for key, metric in DIRECTIONS.items():
        if key not in want["direction"]:
            continue
        for label, blob in (("recorded", want), ("rebuilt", got)):
            k = sum(holds(key, r) for r in blob["per_seed"])
            if blob["direction"].get(key) != k:
                problems.append(f"direction {key}: {label} count {blob['direction'].get(key)} but its per-seed figures give {k}")
        flips = [(a, b) for a, b in zip(want["per_seed"], got["per_seed"]) if holds(key, a) != holds(key, b)]
        clear = [a for a, _ in flips if not marginal(key, a, tol)]
        if clear:
            problems.append(f"direction {key}: recorded {want['direction'][key]}, rebuilt {got['direction'].get(key)}; "
                            + "; ".join(f"seed {a['seed']} flipped and was clear (clipped {float(a['clipped'][metric]):.4g} vs "
                                        f"unclipped {float(a['unclipped'][metric]):.4g} recorded)" for a in clear))
        for a, b in flips:
            if marginal(key, a, tol):
                notes.append(f"direction {key}: seed {a['seed']} flipped ({'holds' if holds(key, a) else 'fails'} -> "
                             f"{'holds' if holds(key, b) else 'fails'}; clipped vs unclipped {float(a['clipped'][metric]):.4g} vs "
                             f"{float(a['unclipped'][metric]):.4g} recorded, {float(b['clipped'][metric]):.4g} vs "
                             f"{float(b['unclipped'][metric]):.4g} rebuilt), marginal within the tolerance")
    return problems, notes


def marginal_sentence(per_seed: list, tol: dict = TOLERANCE) -> str:
    """The page's note on which seeds another CPU may count the other way (computed; empty if none).

    >>> r = {"seed": 0, "clipped": {"rd_max_all_pairs": 0.9, "rd_paper_max": 0.2, "rd_paper_mean": 0.03, "accuracy": 0.88},
    ...      "unclipped": {"rd_max_all_pairs": 0.5, "rd_paper_max": 0.19, "rd_paper_mean": 0.01, "accuracy": 0.95}}
    >>> marginal_sentence([r])
    'Another CPU may count these seeds the other way (their clipped and unclipped figures lie within the cross-CPU tolerance of each other: accuracy 2 points, RD 25 % per model): filtered max seed 0.'
    >>> r["clipped"] = {"rd_max_all_pairs": 0.5, "rd_paper_max": 0.2, "rd_paper_mean": 0.01, "accuracy": 0.95}
    >>> marginal_sentence([r, {**r, "seed": 1}])
    'Each of these counts can differ on another CPU: in all 2 seeds the clipped and unclipped figures lie within the cross-CPU tolerance of each other (accuracy 2 points, RD 25 % per model).'
    """
    m = marginal_seeds(per_seed, tol)
    n = len(per_seed)
    how = f"accuracy {tol['accuracy_points']:g} points, RD {100 * tol['rd_relative']:g} % per model"
    if m and all(len(v) == n for v in m.values()):
        return (f"Each of these counts can differ on another CPU: in all {n} seeds the clipped and unclipped figures lie "
                f"within the cross-CPU tolerance of each other ({how}).")
    parts = [f"{NAMES[k]} seed{'s' if len(v) > 1 else ''} {', '.join(map(str, v))}" for k, v in m.items() if v]
    if not parts:
        return ""
    return ("Another CPU may count these seeds the other way (their clipped and unclipped figures lie within the "
            f"cross-CPU tolerance of each other: {how}): " + "; ".join(parts) + ".")
