"""The NVDP page's headline: clipped vs unclipped on the same pairs, and a verdict computed from the numbers.

Does clipping make sentences harder to tell apart *here*? Both models are evaluated under one
protocol on the same sentences, so their per-pair RD values line up pair by pair.
:func:`paired_comparison` counts, per form, the pairs where clipping lowers / raises the RD and the
pairs with no finite bound; :func:`headline_verdict` turns that, the worst pairs and the accuracy
into one sentence. Nothing is written by hand: where the papers' direction (clipping tightens the
bound at equal or better accuracy) does not hold, the sentence says so. No Streamlit here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.nvdp.reproduce import marginal_sentence

__all__ = ["PairedComparison", "paired_comparison", "headline_verdict", "accuracy_interval", "rule_effects",
           "bdp_floor", "seed_headline", "HEADLINE_PRIVACY"]

#: Privacy label of every headline figure (:mod:`engine.privacy.labels`): the per-pair RD values, their
#: counts and the accuracies are computed from the evaluation sentences without noise.
HEADLINE_PRIVACY = "non-private diagnostic"


@dataclass(frozen=True)
class PairedComparison:
    """Per-pair comparison of one form of the RD between a clipped and an unclipped model.

    Attributes
    ----------
    form : str
        "paper" or "exact" (the guarantee form).
    n_pairs : int
        Pairs compared (the same pairs on both sides).
    n_lower, n_higher, n_equal : int
        Pairs where the clipped RD is lower / higher / equal (infinite values compare as usual:
        inf vs inf is equal; NaN pairs are left out).
    n_inf_clipped, n_inf_unclipped : int
        Pairs with no finite bound.
    median_diff : float
        Median of clipped - unclipped over the pairs finite on both sides (NaN if none).
    diff : ndarray of float64
        clipped - unclipped per pair where both are finite (for a figure).
    clipped, unclipped : ndarray of float64
        The two values of those same pairs (finite on both sides), for a paired scatter.
    """

    form: str
    n_pairs: int
    n_lower: int
    n_higher: int
    n_equal: int
    n_inf_clipped: int
    n_inf_unclipped: int
    median_diff: float
    diff: np.ndarray
    clipped: np.ndarray = None
    unclipped: np.ndarray = None


def paired_comparison(rd_clipped, rd_unclipped) -> PairedComparison:
    """Compare two :class:`~engine.nvdp.divergence.RDBoundResult` of the same pairs.

    Raises
    ------
    ValueError
        If the two results are not over the same pairs.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> a = NS(values=np.array([0.1, np.inf, 0.5]), pair_index=np.array([[0, 1], [0, 2], [1, 2]]), form="exact")
    >>> b = NS(values=np.array([0.2, np.inf, 0.4]), pair_index=a.pair_index, form="exact")
    >>> c = paired_comparison(a, b)
    >>> c.n_lower, c.n_higher, c.n_equal, c.n_inf_clipped
    (1, 1, 1, 1)
    """
    if not np.array_equal(rd_clipped.pair_index, rd_unclipped.pair_index):
        raise ValueError("the two results are not over the same pairs; evaluate both under one protocol")
    a = np.asarray(rd_clipped.values, dtype=np.float64)
    b = np.asarray(rd_unclipped.values, dtype=np.float64)
    ok = ~(np.isnan(a) | np.isnan(b))
    both = ok & np.isfinite(a) & np.isfinite(b)
    diff = a[both] - b[both]
    with np.errstate(invalid="ignore"):
        lower = int((ok & (a < b)).sum())
        higher = int((ok & (a > b)).sum())
    return PairedComparison(
        form=str(rd_clipped.form), n_pairs=int(a.size), n_lower=lower, n_higher=higher,
        n_equal=int(ok.sum()) - lower - higher, n_inf_clipped=int(np.isinf(a).sum()),
        n_inf_unclipped=int(np.isinf(b).sum()), median_diff=float(np.median(diff)) if diff.size else math.nan,
        diff=diff, clipped=a[both], unclipped=b[both],
    )


def _fmt(x: float) -> str:
    return "infinite" if math.isinf(x) else ("n/a" if math.isnan(x) else f"{x:.3g}")


def headline_verdict(res_c, res_u, label: str = "clipped") -> str:
    """One-line verdict from two :class:`~engine.nvdp.posthoc.PosthocResult` under one protocol.

    States, for the paper protocol and for the guarantee form, on how many of the same pairs
    clipping lowers the RD, how many pairs have no finite bound, and the accuracy change; then
    whether the papers' direction holds here (tighter paper-form worst case -- the maximum over all
    evaluated pairs, not the authors' outlier-filtered one, which is quoted beside it -- and mean,
    accuracy not lower by more than 1 point) -- "holds" or "does not hold", computed.
    """
    pp = paired_comparison(res_c.rd_paper, res_u.rd_paper)
    pe = paired_comparison(res_c.rd_exact, res_u.rd_exact)
    acc_d = 100.0 * (res_c.accuracy - res_u.accuracy)
    tighter = (res_c.rd_paper.max_unfiltered < res_u.rd_paper.max_unfiltered) and (res_c.rd_paper.mean < res_u.rd_paper.mean)
    holds = tighter and acc_d >= -1.0
    parts = [
        f"**Same pairs, {label} vs unclipped.** Paper protocol: clipping lowers the RD on {pp.n_lower} of "
        f"{pp.n_pairs} pairs and raises it on {pp.n_higher} (worst case over the {pp.n_pairs} evaluated pairs "
        f"{_fmt(res_c.rd_paper.max_unfiltered)} vs {_fmt(res_u.rd_paper.max_unfiltered)}; the authors' "
        f"outlier-filtered max {_fmt(res_c.rd_paper.max)} vs {_fmt(res_u.rd_paper.max)}).",
        f"Guarantee form: lower on {pe.n_lower} of {pe.n_pairs}, higher on {pe.n_higher}; "
        f"{pe.n_inf_clipped} pairs have no finite bound with clipping, {pe.n_inf_unclipped} without.",
        f"Accuracy {100 * res_c.accuracy:.1f}% vs {100 * res_u.accuracy:.1f}%.",
        ("The papers' direction (a tighter bound at equal or better accuracy) **holds here** in the paper protocol."
         if holds else
         "The papers' direction (a tighter bound at equal or better accuracy) **does not hold here**"
         + (": the paper-protocol worst case or mean is not lower with clipping." if not tighter
            else f": accuracy drops by {-acc_d:.1f} points.")),
    ]
    return " ".join(parts)


def accuracy_interval(accuracy: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of an accuracy measured on ``n`` test items (``scipy.stats.binomtest``).

    The count of correct items is ``round(accuracy * n)``. Small test sets (e.g. 33 texts of an
    upload) give wide intervals; show them next to the accuracy.

    Raises
    ------
    ValueError
        n < 1, accuracy outside [0, 1], or confidence outside (0, 1).

    Examples
    --------
    >>> lo, hi = accuracy_interval(29 / 33, 33)
    >>> round(lo, 3), round(hi, 3)
    (0.727, 0.952)
    """
    from scipy.stats import binomtest

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an int >= 1; got {n!r}")
    if not (0.0 <= float(accuracy) <= 1.0):
        raise ValueError(f"accuracy must lie in [0, 1]; got {accuracy!r}")
    if not (0.0 < float(confidence) < 1.0):
        raise ValueError(f"confidence must lie in (0, 1); got {confidence!r}")
    k = int(round(float(accuracy) * int(n)))
    ci = binomtest(k, int(n)).proportion_ci(confidence_level=float(confidence), method="wilson")
    return float(ci.low), float(ci.high)


def rule_effects(raw, clip, protocol=None) -> dict:
    """What each clipping rule does alone, applied at release to unclipped posteriors, per pair.

    For the mean rule, the std rule and the pseudo-count rule of ``clip`` (each alone: the other
    parameters left raw) and for all three together, the paper-form and exact bounds under
    ``protocol`` are compared pair by pair with no clipping.

    Parameters
    ----------
    raw : engine.nvdp.layer.Posteriors
        Unclipped posteriors of the evaluation sentences in split order.
    clip : ClipConfig
        Enabled.
    protocol : EvalProtocol, optional
        Default :data:`engine.nvdp.protocol.DEFAULT_PROTOCOL`.

    Returns
    -------
    dict
        ``{"mean" | "std" | "alpha" | "all": {"paper": PairedComparison, "exact": PairedComparison,
        "verdict": "tightens" | "loosens" | "mixed" | "no effect"}}``; the verdict is from the paper form:
        no effect when no pair's bound moves and neither does the worst case, tightens when more pairs go down
        than up and the worst case over the pairs does not rise, loosens when more go up and the worst case
        does not fall, else mixed.
    """
    from engine.nvdp.layer import Posteriors
    from engine.nvdp.protocol import DEFAULT_PROTOCOL, evaluate_bounds

    if not clip.enabled:
        raise ValueError("rule_effects needs an enabled ClipConfig")
    protocol = DEFAULT_PROTOCOL if protocol is None else protocol
    full, _ = raw.clip(clip)
    lam = clip.renyi_order
    base = evaluate_bounds(raw, lam, protocol, with_bdp=False)
    variants = {
        "mean": Posteriors(full.mu, raw.sigma, raw.alpha, raw.mask),
        "std": Posteriors(raw.mu, full.sigma, raw.alpha, raw.mask),
        "alpha": Posteriors(raw.mu, raw.sigma, full.alpha, raw.mask),
        "all": full,
    }
    out = {}
    for name, post in variants.items():
        b = evaluate_bounds(post, lam, protocol, with_bdp=False)
        pp = paired_comparison(b.rd_paper, base.rd_paper)
        pe = paired_comparison(b.rd_exact, base.rd_exact)
        worst_c, worst_u = b.rd_paper.max_unfiltered, base.rd_paper.max_unfiltered
        if pp.n_lower == 0 and pp.n_higher == 0 and worst_c == worst_u:
            verdict = "no effect"  # the rule changes no pair's bound (e.g. a cap no cloud reaches)
        elif pp.n_lower > pp.n_higher and worst_c <= worst_u:
            verdict = "tightens"
        elif pp.n_higher > pp.n_lower and worst_c >= worst_u:
            verdict = "loosens"
        else:
            verdict = "mixed"
        out[name] = {"paper": pp, "exact": pe, "verdict": verdict, "worst": (worst_c, worst_u)}
    return out


def bdp_floor(epsilon: float, renyi_order: float, delta: float, q: float) -> dict:
    """Why the authors' BDP epsilon sits at ln(1/delta)/lambda: the floor, the cost and the excess.

    epsilon = (cost + ln(1/delta)) / lambda, so the floor ln(1/delta)/lambda (10.466 at lambda 1.1 and
    delta 1e-5) is reached with zero divergence, and the total privacy cost of all batches is
    lambda epsilon - ln(1/delta). With subsampling ratio q each batch's cost is of order q^2 times
    its moment excess, tiny at q = 1/8 and RDs of 0.1-1, so epsilon stays within a few hundredths of
    the floor and cannot separate two models. Returns ``floor``, ``cost``, ``excess`` and ``sentence``.

    >>> d = bdp_floor(10.52, 1.1, 1e-5, 0.125)
    >>> round(d["floor"], 3), round(d["excess"], 3)
    (10.466, 0.054)
    """
    floor = math.log(1.0 / delta) / renyi_order
    cost = renyi_order * epsilon - math.log(1.0 / delta)
    excess = epsilon - floor
    sentence = (f"The authors' BDP epsilon is (cost + ln(1/delta)) / lambda: with delta = {delta:g} and lambda = "
                f"{renyi_order:g} its floor, reached with zero divergence, is {floor:.3f}. Here the total cost of all "
                f"batches is {cost:.3g} (subsampling q = {q:.3g} scales each batch's cost by about q^2), so epsilon "
                f"= {epsilon:.4g} sits {excess:.3g} above the floor: at this scale it cannot tell the models apart.")
    return {"floor": floor, "cost": cost, "excess": excess, "sentence": sentence}


def seed_headline(summary: dict) -> str:
    """The headline over the seeds of the shipped pair (:func:`engine.nvdp.bundled.seed_summary`), computed.

    Mean ± sample sd over the seeds of the worst case over the evaluated pairs, the authors'
    outlier-filtered maximum (labelled), the paper-form mean, the accuracy and the BDP, clipped vs
    unclipped, with the number of seeds in which clipping lowers each; then in how many seeds the papers'
    direction (worst case and mean lower, accuracy within 1 point) holds; with the per-seed figures, which
    seeds are marginal for each count (:func:`engine.nvdp.reproduce.marginal_sentence`: another CPU may
    count them the other way).
    """
    S, D = summary["summary"], summary["direction"]
    n = D["n_seeds"]

    def ms(arm, key, scale=1.0, digits=3):
        m, sd = S[arm][key]["mean"], S[arm][key]["sd"]
        if m is None or not math.isfinite(m):
            return "infinite"
        return f"{scale * m:.{digits}g} ± {scale * (sd or 0.0):.2g}"

    per = summary.get("per_seed")
    if per:
        k = sum(float(r["clipped"]["rd_max_all_pairs"]) < float(r["unclipped"]["rd_max_all_pairs"])
                and float(r["clipped"]["rd_paper_mean"]) < float(r["unclipped"]["rd_paper_mean"])
                and float(r["clipped"]["accuracy"]) >= float(r["unclipped"]["accuracy"]) - 0.01 for r in per)
    else:  # only the counts: at most the smallest of them
        k = min(D["rd_max_all_pairs_lower"], D["rd_paper_mean_lower"], D["accuracy_within_1_point"])
    return (f"**Over {n} seeds (mean ± sd), clipped vs unclipped.** Worst case over the evaluated pairs "
            f"{ms('clipped', 'rd_max_all_pairs')} vs {ms('unclipped', 'rd_max_all_pairs')} (lower with clipping in "
            f"{D['rd_max_all_pairs_lower']} of {n}); the authors' outlier-filtered max {ms('clipped', 'rd_paper_max')} vs "
            f"{ms('unclipped', 'rd_paper_max')} ({D['rd_paper_max_lower']} of {n}); mean {ms('clipped', 'rd_paper_mean')} vs "
            f"{ms('unclipped', 'rd_paper_mean')} ({D['rd_paper_mean_lower']} of {n}); accuracy "
            f"{ms('clipped', 'accuracy', 100, 3)} % vs {ms('unclipped', 'accuracy', 100, 3)} % (within 1 point in "
            f"{D['accuracy_within_1_point']} of {n}); BDP {ms('clipped', 'bdp_paper', 1, 4)} vs "
            f"{ms('unclipped', 'bdp_paper', 1, 4)}, both at the floor. The papers' direction "
            + ("(worst case and mean lower, accuracy within 1 point) "
               + (f"**holds in every seed** ({k} of {n})." if k == n else f"**holds in {k} of {n} seeds**"
                  + ("" if per else " at most") + "."))
            + (" " + marginal_sentence(per) if per and marginal_sentence(per) else ""))
