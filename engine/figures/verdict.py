"""The verdict in words: one sentence computed from a page's headline numbers, and its tone.

The PMT and NVDP pages lead with this sentence (coloured by :attr:`Verdict.tone`) above their
numbers; the HTML report repeats it first. Everything is computed from the numbers passed in (the
headline medians over seeds, the condition numbers, the privacy accountant's outputs): nothing is
written by hand, and where PMT loses the sentence says so. No Streamlit here.

The verdict is a **non-private diagnostic** (:attr:`Verdict.privacy`): it compares errors measured on
held-out private rows and branches on the raw condition number of the private rows, all without noise
(replacing one held-out row can flip it). Wherever it is shown it carries that label
(:data:`VERDICT_NOTE`); it is never part of a release.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from engine.privacy.labels import VERDICT_NOTE  # what the verdict is, privacy-wise (shown with it everywhere)

__all__ = ["Verdict", "pmt_verdict", "nvdp_verdict", "contradictions", "PRIVATE_METHODS", "TIE_RELATIVE",
           "NON_PRIVATE_NOTE", "median_se", "VERDICT_NOTE"]

#: Methods that spend the privacy budget on the private rows (the oracle DP-RR is tuned non-privately,
#: the non-private fit is the reference; neither can win).
PRIVATE_METHODS = ("PMT", "PMT (paper solver)", "PMT (clip y)", "PMT-pooled", "DP-RR", "DP-GD", "DP-Newton",
                   "AdaSSP")
#: Two medians differ only when the gap exceeds twice its standard error (the seeds' noise, :func:`median_se`)
#: **and** this relative size (1 %): a gap inside the seed spread, or a negligible one, is a tie.
TIE_RELATIVE = 0.01
#: How many standard errors a gap must exceed.
TIE_SE = 2.0
#: sqrt(pi / 2) / 1.349: the standard error of a median of k normal draws is sqrt(pi / 2) sigma / sqrt(k), and
#: sigma is estimated from the interquartile range as IQR / 1.349.
_SE_PER_IQR = math.sqrt(math.pi / 2) / 1.349


def median_se(q25: float, q75: float, n_seeds: float) -> float:
    """Standard error of a median over ``n_seeds`` seeds from their quartiles: ``0.929 IQR / sqrt(n_seeds)``
    (0 for a method without noise, whose quartiles coincide).

    >>> round(median_se(1.0, 2.349, 100), 4)
    0.1253
    """
    k = float(n_seeds)
    if not (k >= 1 and math.isfinite(q25) and math.isfinite(q75)):
        return 0.0
    return _SE_PER_IQR * abs(float(q75) - float(q25)) / math.sqrt(k)


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
    privacy : str
        Its privacy label (:mod:`engine.privacy.labels`): always a non-private diagnostic (module docstring).
    """

    text: str
    tone: str
    winner: str | None = None
    reason: str = ""
    privacy: str = "non-private diagnostic"

    @property
    def labelled_text(self) -> str:
        """The sentence prefixed with its label, for plain-text exports: ``"[non-private diagnostic] ..."``."""
        return f"[{self.privacy}] {self.text}"


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
                majority_accuracy: float | None = None, reference: float | None = None,
                reference_label: str = "a constant prediction", r2_reference: float | None = None) -> Verdict:
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
        Condition number of the private rows before and after PMT's whitening (non-private diagnostics,
        computed without noise); give the reason when PMT wins or loses to a private baseline.
    n_needed : int, optional
        Private rows PMT would need to beat the public rows (the planner's crossover for the run's response
        form), quoted when the public-only fit wins: as rows still needed when above ``n_priv``, as a prediction
        this evaluation does not bear out when at or below it.
    accuracy : mapping of str to float, optional
        Median test accuracy per method (classification); with ``majority_accuracy`` every method at or
        below the accuracy of always predicting the majority class is called out, whatever the metric.
    majority_accuracy : float, optional
        Accuracy of the public rows' majority label on the test rows.
    reference, reference_label : float and str, optional
        The metric of a prediction that uses no private data at all (the public mean or the stated centre for
        RMSE, 0.5 for AUC, the public base rate's log-loss): the verdict is never "good" unless the winner beats
        it by more than the seed spread, and says so when no method does.
    r2_reference : float, optional
        For RMSE: the mean squared error R^2 is measured against (``R^2 = 1 - RMSE^2 / r2_reference``), quoted
        beside the winner's RMSE.

    Gaps are judged against the noise of the seeds: with columns ``q25, q75, n_seeds`` in ``head`` each median's
    standard error is :func:`median_se`, and two medians tie unless their gap exceeds :data:`TIE_SE` times the
    standard error of the difference and :data:`TIE_RELATIVE` of the smaller (without the columns: the 1 % rule).

    Returns
    -------
    Verdict
        Tone "bad" when PMT loses by more than the noise, a classifier is not above the majority-class rate, or
        no method beats the no-data reference; "good" when PMT wins; "neutral" for a tie or when PMT is not shown.

    Examples
    --------
    >>> h = pd.DataFrame({"method": ["PMT", "DP-RR", "Public-only", "Non-private"], "median": [3.57, 9.0, 1.0, 0.0]})
    >>> v = pmt_verdict(h, metric_label="L2 error", lower_better=True, epsilon=1, n_priv=7494, n_pub=200)
    >>> v.tone, v.winner, v.text.split(":")[0]
    ('bad', 'Public-only', 'The 200 public rows alone beat every private method here')
    """
    cols = ["method", "median"] + [c for c in ("q25", "q75", "n_seeds") if c in head.columns]
    h = head[cols].dropna(subset=["median"])
    h = h[h["method"].isin(PRIVATE_METHODS + ("Public-only",))]
    se = {str(r["method"]): (median_se(float(r["q25"]), float(r["q75"]), float(r["n_seeds"]))
                             if {"q25", "q75", "n_seeds"} <= set(h.columns) else 0.0) for _, r in h.iterrows()}
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
            if a > 0 and b / a < 1.1:  # "1.0 times smaller" says nothing: the percentage
                return f"{100 * (b / a - 1):.1f} % smaller ({_num(a)} vs {_num(b)})"
            return (f"{_times(b / a)} smaller" if a > 0 else "smaller") + f" ({_num(a)} vs {_num(b)})"
        return f"higher by {_num(a - b)} ({_num(a)} vs {_num(b)})"

    def clear(a: float, b: float, sa: float, sb: float) -> bool:
        """Whether a gap between medians a and b (standard errors sa, sb) is larger than the noise and >= 1 %."""
        return abs(a - b) > TIE_SE * math.hypot(sa, sb) and abs(a - b) >= TIE_RELATIVE * min(abs(a), abs(b))

    def tie(a: float, b: float, ma: str = "PMT", mb: str | None = None) -> bool:
        return not clear(a, b, se.get(ma, 0.0), se.get(mb, 0.0) if mb else 0.0)

    if not has_pmt or rival_row is None:
        text, tone, reason = f"{best} has the best {_lc(metric_label)} at epsilon = {epsilon:g} ({_num(best_v)}).", \
            "neutral", ""
    elif tie(pmt_v, float(rival_row["median"]), "PMT", str(rival_row["method"])):
        rival = str(rival_row["method"])
        reason = (f"at epsilon = {epsilon:g} with {n_priv:,} private rows the gap is within twice its standard error "
                  "over the seeds (or under 1 %)")
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
        if n_needed and n_needed > n_priv:
            reason = (f"with {n_priv:,} private rows the noise outweighs the signal (PMT would need about "
                      f"{n_needed:,} private rows at this epsilon)")
        elif n_needed:  # the planner expected PMT to win with fewer rows than these: say so, not "would need"
            reason = (f"with {n_priv:,} private rows PMT does not beat them, although the planner predicted "
                      f"it would from about {n_needed:,} private rows at this epsilon")
        else:
            reason = f"with {n_priv:,} private rows the noise outweighs the signal"
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
    if reference is not None and math.isfinite(reference) and not h.empty:
        win = best if best is not None else "PMT"
        wv = float(h.loc[h["method"] == win, "median"].iloc[0]) if win in set(h["method"]) else best_v
        beats = (wv < reference if lower_better else wv > reference) and clear(wv, reference, se.get(win, 0.0), 0.0)
        r2 = ""
        if r2_reference is not None and r2_reference > 0 and math.isfinite(r2_reference):
            r2 = f", R^2 {_num(1.0 - wv**2 / r2_reference)}"
        if not beats:
            text = (f"No method clearly beats {reference_label} here: the best, {win}, has {_lc(metric_label)} "
                    f"{_num(wv)}{r2} against {_num(reference)} for {reference_label} (a gap within the seed spread "
                    f"or under 1 %, or worse). " + text)
            tone = "bad"
        elif r2:
            text += f" ({win}: R^2 {_num(1.0 - wv**2 / r2_reference)} against {reference_label}'s {_num(reference)}.)"
    if flags:
        text += " " + flags[0][0].upper() + flags[0][1:] + "."
        tone = "bad"
    return Verdict(text=text, tone=tone, winner=best, reason=reason)


#: A claim that the public rows alone are the better estimate, as the page words it (the noise banner, the verdict,
#: the planner's conclusion): matched case-insensitively within one sentence.
PUBLIC_BETTER_CLAIM = re.compile(
    r"public[- ]only fit[^.;]*\bis (?:the )?better|public rows alone beat|public-only is (?:best|better)"
    r"|public[- ]only[^.;]*\bbeats? PMT", re.IGNORECASE)


def contradictions(verdict: Verdict, sentences) -> list[str]:
    """The sentences among ``sentences`` that claim the public-only fit is better while ``verdict`` (computed from
    the same evaluation) does not have the public-only fit winning: PMT wins, a tie, or another method wins.

    >>> v = Verdict("PMT wins at epsilon = 1: ...", "good", winner="PMT")
    >>> contradictions(v, ["until then the public-only fit (no privacy cost) is the better estimate.", "kappa 3"])
    ['until then the public-only fit (no privacy cost) is the better estimate.']
    >>> contradictions(Verdict("The 200 public rows alone beat ...", "bad", winner="Public-only"),
    ...                ["the public-only fit is the better estimate"])
    []
    """
    if verdict.winner == "Public-only":
        return []
    return [s for s in sentences if PUBLIC_BETTER_CLAIM.search(str(s))]


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
