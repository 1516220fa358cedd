"""The verdict in words: one sentence computed from a page's headline numbers, and its tone.

The PMT and NVDP pages lead with this sentence (coloured by :attr:`Verdict.tone`) above their
numbers; the HTML report repeats it first. Everything is computed from the numbers passed in (the
headline medians over seeds, public quantities, the privacy accountant's outputs): nothing is
written by hand, and where PMT loses the sentence says so. No Streamlit here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

__all__ = ["Verdict", "pmt_verdict", "nvdp_verdict", "PRIVATE_METHODS", "TIE_TOLERANCE", "NON_PRIVATE_NOTE"]

#: Methods that spend the privacy budget on the private rows (the oracle DP-RR is tuned non-privately,
#: the non-private fit is the reference; neither can win).
PRIVATE_METHODS = ("PMT", "PMT (paper solver)", "PMT-pooled", "DP-RR", "DP-GD", "DP-Newton")
#: Relative difference below which two medians are called "about equal" (lower-is-better metrics), and
#: the absolute difference for scores in [0, 1] (AUC, accuracy).
TIE_TOLERANCE = 0.1
TIE_SCORE = 0.005


#: What the PMT headline shows that is computed from the private rows without noise (for understanding the
#: view, never for release): the numbers the page labels "non-private diagnostic".
PMT_NON_PRIVATE = ("kappa after PMT", "raw kappa", "rows truncated", "Non-private")
NON_PRIVATE_NOTE = ("Non-private diagnostics: kappa after PMT, raw kappa, rows truncated and the Non-private fit's "
                    "error are computed from the private rows without noise, and every method's error is measured "
                    "on held-out private rows; they explain the view and are not part of any release. mu and the "
                    "radius R are public.")



@dataclass(frozen=True)
class Verdict:
    """One sentence about a view, computed from its numbers.

    Attributes
    ----------
    text : str
        The sentence in plain words (no markup).
    tone : {"good", "bad", "neutral"}
        good: the paper's method wins (or the guarantee is finite and tighter); bad: it loses, a
        classifier is below the majority-class rate, or there is no finite guarantee; neutral: a tie.
    winner : str or None
        The best method (PMT page) or None.
    reason : str
        The one reason given (also inside ``text``).
    """

    text: str
    tone: str
    winner: str | None = None
    reason: str = ""


def _num(x: float) -> str:
    """Three significant digits as people read them: 0.896, 3.57, 1,000 (never 1e+03 below 1e9)."""
    x = float(x)
    if math.isfinite(x) and 1000 <= abs(x) < 1e9:
        return f"{float(f'{x:.3g}'):,.0f}"
    return f"{x:.3g}"


def _lc(label: str) -> str:
    """A metric label inside a sentence: first letter lowered unless it starts an acronym ("L2", "AUC")."""
    return label if label[:2].isupper() else label[:1].lower() + label[1:]


def _times(r: float) -> str:
    from engine.figures.report import fmt_ratio

    return fmt_ratio(r).removesuffix("x") + " times"


def pmt_verdict(head: pd.DataFrame, *, metric_label: str, lower_better: bool, epsilon: float, n_priv: int,
                n_pub: int, kappa_raw: float | None = None, kappa_pmt: float | None = None,
                n_needed: int | None = None, accuracy: Mapping[str, float] | None = None,
                majority_accuracy: float | None = None) -> Verdict:
    """The PMT page's verdict: which method wins at this epsilon, by how much, and the one reason.

    Parameters
    ----------
    head : DataFrame
        The headline rows, columns ``method`` and ``median`` (median over seeds at ``epsilon``).
    metric_label : str
        The metric's display name (e.g. "L2 estimation error").
    lower_better : bool
        Whether a smaller value of the metric is better (errors) or a larger one (AUC, accuracy).
    epsilon : float
    n_priv, n_pub : int
        Private training rows and public rows (both public under replace-one).
    kappa_raw, kappa_pmt : float, optional
        Condition number before and after PMT's whitening (public quantities of the transform); give
        the reason when PMT wins or loses to a private baseline.
    n_needed : int, optional
        Private rows PMT would need to beat the public rows (:func:`engine.pmt.public.noise_dominance`),
        quoted when the public-only fit wins.
    accuracy : mapping of str to float, optional
        Median test accuracy per method (classification); with ``majority_accuracy`` every method at or
        below the accuracy of always predicting the majority class is called out, whatever the metric.
    majority_accuracy : float, optional
        Accuracy of the public rows' majority label on the test rows.

    Returns
    -------
    Verdict
        Tone "bad" when PMT loses by more than :data:`TIE_TOLERANCE` or a classifier is not above the
        majority-class rate; "good" when PMT wins; "neutral" for a tie or when PMT is not shown.

    Examples
    --------
    >>> h = pd.DataFrame({"method": ["PMT", "DP-RR", "Public-only", "Non-private"], "median": [3.57, 9.0, 1.0, 0.0]})
    >>> v = pmt_verdict(h, metric_label="L2 error", lower_better=True, epsilon=1, n_priv=7494, n_pub=200)
    >>> v.tone, v.winner, v.text.split(":")[0]
    ('bad', 'Public-only', 'The 200 public rows alone beat every private method here')
    """
    h = head[["method", "median"]].dropna()
    h = h[h["method"].isin(PRIVATE_METHODS + ("Public-only",))]
    flags = []
    if accuracy is not None and majority_accuracy is not None and math.isfinite(majority_accuracy):
        below = [m for m, a in accuracy.items() if m in PRIVATE_METHODS + ("Public-only",) and a <= majority_accuracy]
        if below:
            flags.append(f"{', '.join(below)} {'is' if len(below) == 1 else 'are'} no better than always predicting "
                         f"the majority class (accuracy {', '.join(_num(accuracy[m]) for m in below)} vs "
                         f"{_num(majority_accuracy)})")
    if h.empty:
        text = "No private method is selected: add PMT and a baseline to compare."
        return Verdict(text + (" " + flags[0][0].upper() + flags[0][1:] + "." if flags else ""), "neutral")
    best_row = h.loc[h["median"].idxmin() if lower_better else h["median"].idxmax()]
    best, best_v = str(best_row["method"]), float(best_row["median"])
    has_pmt = "PMT" in set(h["method"])
    pmt_v = float(h.loc[h["method"] == "PMT", "median"].iloc[0]) if has_pmt else math.nan
    others = h[h["method"] != "PMT"]
    rival_row = (others.loc[others["median"].idxmin() if lower_better else others["median"].idxmax()]
                 if not others.empty else None)
    well_conditioned = kappa_raw is not None and math.isfinite(kappa_raw) and kappa_raw < 30

    def gap(a: float, b: float) -> str:  # a is the better value
        if lower_better:
            return (f"{_times(b / a)} smaller" if a > 0 else "smaller") + f" ({_num(a)} vs {_num(b)})"
        return f"higher by {_num(a - b)} ({_num(a)} vs {_num(b)})"

    def tie(a: float, b: float) -> bool:
        if lower_better:
            lo, hi = sorted((a, b))
            return hi <= lo * (1 + TIE_TOLERANCE)
        return abs(a - b) <= TIE_SCORE

    if not has_pmt or rival_row is None:
        text, tone, reason = f"{best} has the best {_lc(metric_label)} at epsilon = {epsilon:g} ({_num(best_v)}).", \
            "neutral", ""
    elif tie(pmt_v, float(rival_row["median"])):
        rival = str(rival_row["method"])
        reason = f"at epsilon = {epsilon:g} with {n_priv:,} private rows the two are within the noise of each other"
        text, tone = (f"PMT and {rival} are about equal here ({_num(pmt_v)} vs {_num(float(rival_row['median']))} "
                      f"{_lc(metric_label)}): {reason}."), "neutral"
        best = None
    elif best == "PMT":
        rival, rv = str(rival_row["method"]), float(rival_row["median"])
        if kappa_raw is not None and kappa_pmt is not None and math.isfinite(kappa_raw) and not well_conditioned:
            reason = (f"whitening with the {n_pub} public rows brings the condition number from {_num(kappa_raw)} "
                      f"to {_num(kappa_pmt)}, so the noise is not amplified")
        else:
            reason = "its noise is calibrated to the public rows' shape of the data, not to raw row lengths"
        text, tone = (f"PMT wins at epsilon = {epsilon:g}: its {_lc(metric_label)} is {gap(pmt_v, rv)} than "
                      f"{rival}'s, the best of the rest, because {reason}."), "good"
    elif best == "Public-only":
        reason = (f"with {n_priv:,} private rows the noise outweighs the signal"
                  + (f" (PMT would need about {n_needed:,} private rows at this epsilon)" if n_needed else ""))
        priv = h[h["method"] != "Public-only"]
        pbest = priv.loc[priv["median"].idxmin() if lower_better else priv["median"].idxmax()]
        text, tone = (f"The {n_pub} public rows alone beat every private method here: {reason}. Public-only "
                      f"{_lc(metric_label)} {_num(best_v)}; the best private method, {pbest['method']}, "
                      f"{_num(float(pbest['median']))}."), "bad"
    else:
        reason = (f"the data are already well conditioned (raw condition number {_num(kappa_raw)}), so PMT's "
                  "whitening has little to fix and its wider truncation costs noise" if well_conditioned else
                  f"at epsilon = {epsilon:g} PMT's added noise costs more than its whitening saves")
        text, tone = (f"{best} beats PMT here: its {_lc(metric_label)} is {gap(best_v, pmt_v)}; {reason}."), "bad"
    if flags:
        text += " " + flags[0][0].upper() + flags[0][1:] + "."
        tone = "bad"
    return Verdict(text=text, tone=tone, winner=best, reason=reason)


def infinite_pairs_by_length(rd_exact, lengths) -> tuple[int, int]:
    """(pairs of different lengths, pairs of equal length) among the infinite pairs of an exact RD result.

    ``lengths``: the number of real components of each evaluated input (``pair_index`` indexes them).

    >>> import numpy as np
    >>> from types import SimpleNamespace as NS
    >>> r = NS(values=np.array([np.inf, np.inf, 1.0]), pair_index=np.array([[0, 1], [0, 2], [1, 2]]))
    >>> infinite_pairs_by_length(r, [3, 4, 3])
    (1, 1)
    """
    import numpy as np

    inf = np.isinf(np.asarray(rd_exact.values))
    ln = np.asarray(lengths)
    pi = np.asarray(rd_exact.pair_index)[inf]
    diff = int((ln[pi[:, 0]] != ln[pi[:, 1]]).sum())
    return diff, int(inf.sum()) - diff


def nvdp_verdict(res_c, res_u, *, label: str = "clipped", n_eval: int | None = None, lengths=None) -> Verdict:
    """The NVDP page's lead: one readable number, or "no finite guarantee here, because ...".

    Parameters
    ----------
    res_c, res_u : engine.nvdp.posthoc.PosthocResult
        The model the sliders apply to (clipped) and the unclipped one, under one protocol. Uses
        ``bdp.epsilon`` (guarantee form, from exact divergences over the evaluation sentences),
        ``rd_exact.n_inf`` / ``n_pairs``, ``bdp_paper.epsilon`` (the papers' figure) and ``accuracy``
        (None while it is computing).
    label : str
        How the clipped model is named ("clipped", "clipped at release").
    n_eval : int, optional
        Number of evaluation sentences behind the bound (said in the sentence: the guarantee is a
        sample-based estimate over them, not a bound over all possible sentences).
    lengths : array-like of int, optional
        Real components of each evaluated input: the reason then counts the infinite pairs of different
        lengths (told apart by their padding) and those of equal length (other causes) separately.

    Returns
    -------
    Verdict
        good: a finite guarantee, tighter than unclipped; bad: no finite guarantee; neutral otherwise.
    """
    eps_c = float(res_c.bdp.epsilon)
    eps_u = float(res_u.bdp.epsilon)
    over = f" over the {n_eval} evaluation sentences" if n_eval else " over the evaluation sentences"
    acc = ""
    if res_c.accuracy is not None and res_u.accuracy is not None:
        acc = f" Accuracy {100 * res_c.accuracy:.1f}% {label} vs {100 * res_u.accuracy:.1f}% unclipped."
    paper = float(getattr(res_c.bdp_paper, "epsilon", math.nan))
    paper_txt = (f" The papers' BDP epsilon {_num(paper)} (below) is not a guarantee." if math.isfinite(paper) else "")
    if math.isfinite(eps_c):
        cmp = ("tighter than" if eps_c < eps_u else "no tighter than") + (
            f" the unclipped model's {_num(eps_u)}" if math.isfinite(eps_u) else " the unclipped model's, which is infinite")
        tone = "good" if eps_c < eps_u else "neutral"
        text = (f"BDP epsilon {_num(eps_c)} with {label} caps (a sample-based estimate{over}), {cmp}.{acc}")
        return Verdict(text, tone, reason=cmp)
    n_inf, n_pairs = int(res_c.rd_exact.n_inf), int(res_c.rd_exact.n_pairs)
    if n_inf and lengths is not None:
        diff, same = infinite_pairs_by_length(res_c.rd_exact, lengths)
        parts = []
        if diff:
            parts.append(f"{diff} {'is a pair' if diff == 1 else 'are pairs'} of sentences of different lengths, "
                         "told apart by their padding, which clipping does not hide")
        if same:
            parts.append(f"{same} {'is a pair' if same == 1 else 'are pairs'} of equal length whose blurs or weights "
                         "differ too much for a finite bound at this Renyi order")
        reason = f"{n_inf} of {n_pairs} sentence pairs have no finite bound: " + "; ".join(parts)
    elif n_inf:
        reason = (f"{n_inf} of {n_pairs} sentence pairs have no finite bound (sentences of different lengths are "
                  "told apart by their padding, which clipping does not hide)")
    else:
        reason = ("clipping at the chosen Renyi order does not bound the divergence of the next order, which the "
                  "guarantee needs")
    text = f"No finite guarantee here, because {reason}.{paper_txt}"  # the accuracy is in the headline beside it
    return Verdict(text, "bad", reason=reason)
