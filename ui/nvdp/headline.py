"""The NVDP page's headline: both models at the slider caps, bounds first, accuracy when the worker has it.

A slider move first computes the headline's bounds (RD and BDP, both forms, both models,
:func:`evaluate`); the accuracy of the new caps (the model re-run after the bottleneck) then starts
on a worker thread while the page draws the bounds and the open tab's figure, its metric reading
"computing ..." (never an accuracy of other caps). :func:`finish`, at the end of the run, waits for
it in steps that give way at once to a newer move, stopping the superseded job
(:mod:`ui.nvdp.live`), then fills in the accuracy and the verdict. Every number is that of
``python -m engine nvdp evaluate`` (tests/engine/test_nvdp_explore.py).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import streamlit as st

from engine.figures import nvdp as P
from engine.figures.verdict import nvdp_verdict
from engine.nvdp.clipping import ClipConfig
from engine.nvdp import explore as X
from engine.nvdp.headline import accuracy_interval, bdp_floor, headline_verdict
from ui.nvdp import cache as K
from ui.nvdp import live as L
from ui.common.layout import NO_ARROW
from ui.nvdp.controls import neighbour_clips
from ui.nvdp.models import Models
from ui.nvdp.state import N_EVAL, PROTOCOL, RENYI_ORDERS

ss = st.session_state


@dataclass
class View:
    """One run's evaluation of the two models at the slider caps, and the placeholders filled in later.

    ``res_c`` / ``res_u`` (the model the sliders apply to, and the unclipped one) are replaced by their
    completed results (with the accuracy) by :meth:`complete`; everything drawn afterwards reads them
    from here, so it shows the accuracy of these caps.
    """

    m: Models
    which: str  # "clipped" or "unclipped": the model the sliders apply to
    clip: ClipConfig
    unclip: ClipConfig
    presenter: bool
    mkey: str
    clip_json: str
    label_c: str
    res_c: object
    res_u: object
    acc_slot: object = None
    warn_slot: object = None
    verdict_slot: object = None
    lead_slot: object = None
    lead_n: int = 0

    def items(self) -> list:
        """``(evaluator, model key, which, result)`` of both models, for :mod:`ui.nvdp.live`."""
        m = self.m
        return [(K.evaluator(self.mkey, self.which, m.models, m.data), self.mkey, self.which, self.res_c),
                (K.evaluator(m.ukey, "unclipped", m.models, m.data), m.ukey, "unclipped", self.res_u)]

    def complete(self) -> None:
        """Both accuracies, on the worker thread; a newer move stops this run meanwhile (ui/nvdp/live.py)."""
        self.res_c, self.res_u = L.complete_all(self.items())


def evaluate(m: Models, which: str, clip: ClipConfig, lam: float, presenter: bool) -> View:
    """The bounds of both models at ``clip`` now, and their accuracy jobs started on the worker thread.

    Parameters
    ----------
    m : Models
        The model pair.
    which : str
        ``"clipped"`` (the model trained with clipping) or ``"unclipped"`` (clipped only at release).
    clip : engine.nvdp.clipping.ClipConfig
        The clipping on the sliders.
    lam : float
        The Renyi order (the unclipped model is evaluated at it too).
    presenter : bool
        Presenter mode (larger figures, fewer numbers).

    Returns
    -------
    View
    """
    unclip = ClipConfig(enabled=False, renyi_order=lam)
    mkey = m.ckey if which == "clipped" else m.ukey
    clip_json = json.dumps(clip.to_dict(), sort_keys=True)
    models, data, seed = m.models, m.data, m.settings.seed
    # Live sliders: the bounds now, the accuracy of the new caps at the end of the run;
    # this session's accuracy jobs for settings it has left stop now.
    L.keep_neighbour(K.evaluator(mkey, which, models, data), mkey, clip, PROTOCOL)
    L.retain({L.job_key(K.evaluator(mkey, which, models, data), mkey, which, clip, seed),
              L.job_key(K.evaluator(m.ukey, "unclipped", models, data), m.ukey, "unclipped", unclip, seed)})
    with st.spinner("Applying the clipping to the test sentences ..."):
        res_c = K.with_accuracy(mkey, which, K.evaluate(mkey, which, clip_json, models, data, seed),
                                models, data, now=False)
        res_u = K.with_accuracy(m.ukey, "unclipped", K.evaluate(m.ukey, "unclipped", json.dumps(unclip.to_dict(), sort_keys=True),
                                                                models, data, seed), models, data, now=False)
    label_c = "clipped" if which == "clipped" else "clipped at release"
    v = View(m=m, which=which, clip=clip, unclip=unclip, presenter=presenter, mkey=mkey, clip_json=clip_json,
             label_c=label_c, res_c=res_c, res_u=res_u)
    # the worker starts on the accuracy now and computes while this thread draws the headline and the figure
    L.start(v.items())
    return v


def _metric(v: View, col, title, c, u, help_, pct=False):
    fmt = (lambda x: f"{100 * x:.1f}%") if pct else P.fmt_bound
    col.metric(title, fmt(c), delta=f"unclipped {fmt(u)}", delta_color="off", **NO_ARROW,
               help=f"At these caps, {v.label_c} (the number) vs unclipped (below it), on {v.res_c.n_test} held-out "
               f"sentences; smaller RD and BDP = more private, higher accuracy = more useful. {help_}")


def headline(v: View) -> None:
    """The headline metrics: worst case over the pairs and the authors' filtered max, RD mean and BDP epsilon
    clipped vs unclipped, and the accuracy (or "computing ..."); the certified bound and the seeds are in
    :func:`details`, below the tabs."""
    res_c, res_u = v.res_c, v.res_u
    v.lead_slot = st.empty()  # the verdict in words first: the guarantee's number, or why there is none
    show_lead(v)
    r = st.columns(5)
    n_pairs = res_c.rd_paper.n_pairs
    _metric(v, r[0], "RD worst case", res_c.rd_paper.max_unfiltered, res_u.rd_paper.max_unfiltered,
            f"Largest Renyi divergence between two sentences' shared draws over all {n_pairs} evaluated pairs, in the "
            f"authors' normalisation (nats per latent position; pairs within batches of 16 of the first {N_EVAL} test "
            "sentences, undefined dimensions dropped as the authors' code does). Not a guarantee.")
    _metric(v, r[1], "RD filtered max", res_c.rd_paper.max, res_u.rd_paper.max,
            "The papers' figure: the maximum after the authors set aside the pairs with |z-score| > 0.5 (population "
            "std) within a batch, comparable with their 0.01-1.4. It is not the worst case (left).")
    _metric(v, r[2], "RD mean", res_c.rd_paper.mean, res_u.rd_paper.mean,
            "Average over the same pairs (batch means averaged, after the authors' filter).")
    floor = bdp_floor(res_c.bdp_paper.epsilon, v.clip.renyi_order if v.clip.enabled else v.unclip.renyi_order,
                      PROTOCOL.delta, PROTOCOL.q(N_EVAL))
    _metric(v, r[3], "BDP epsilon", res_c.bdp_paper.epsilon, res_u.bdp_paper.epsilon,
            "Bayesian differential privacy budget at delta = 1e-5 from the authors' accountant (scalar blurs, "
            f"moment order 2, subsampling q = 16/{N_EVAL}), the figure the papers report (10.4-22). "
            + floor["sentence"] + " Not a guarantee.")
    v.acc_slot = r[4].empty()

    if res_c.accuracy is None or res_u.accuracy is None:
        v.acc_slot.metric("Accuracy", "computing ...", delta="for the new caps" if res_u.accuracy is None else
                          f"unclipped {100 * res_u.accuracy:.1f}%", delta_color="off", **NO_ARROW,
                          help="The model is being re-run on the held-out sentences with the new caps (about a second); "
                          "the bounds beside it are already those of the new caps.")
    if not v.presenter:
        r2 = st.columns(4)
        _metric(v, r2[0], "RD max (exact)", res_c.rd_exact.max, res_u.rd_exact.max,
                f"The exact bound in nats: summed over every token cloud and dimension, the larger of the two "
                f"directions, maximum over all {res_c.rd_exact.n_pairs} pairs of the first {N_EVAL} test sentences. "
                "'infinite' means some pair is not bounded at all: every pair of sentences of different lengths is, "
                "because padded positions get weight exactly 0 in the shared sample, which reveals the length.")
        _metric(v, r2[1], "RD mean (exact)", res_c.rd_exact.mean, res_u.rd_exact.mean,
                "Mean of the exact bound over the same pairs (infinite if any pair is).")
        _metric(v, r2[2], "BDP guarantee (est.)", res_c.bdp.epsilon, res_u.bdp.epsilon,
                f"A sample-based estimate over the first {N_EVAL} evaluation sentences (pairs of them), not a "
                "bound over every possible sentence. Bayesian DP at delta = 1e-5 from exact divergences of order lambda + 1 (Triastcyn & Faltings 2020), "
                "the guarantee form. It is infinite as soon as one batch of 16 holds two sentences of different "
                "lengths (the sample reveals the length), and where clipping at order lambda does not bound order "
                "lambda + 1.")
        s = res_c.clip_stats
        r2[3].metric("Tokens clipped", f"{100 * max(s.frac_mu, s.frac_alpha):.0f}%",
                     delta=f"mean {100 * s.frac_mu:.0f}%, alpha {100 * s.frac_alpha:.0f}%", delta_color="off",
                     help="Share of token clouds whose centre was shrunk (mean) or whose weight was clamped (alpha); "
                     "the blur rules act per dimension, see the posterior-parameters tab.", **NO_ARROW)
    v.warn_slot = st.empty()
    v.verdict_slot = None
    if res_c.accuracy is not None and res_u.accuracy is not None:
        show_accuracy(v)


def show_accuracy(v: View) -> None:
    """Fill the accuracy slot (and warn of numerical failures) with the completed results."""
    n = v.res_c.n_test
    lo_c, hi_c = accuracy_interval(v.res_c.accuracy, n)
    lo_u, hi_u = accuracy_interval(v.res_u.accuracy, n)
    _metric(v, v.acc_slot, "Accuracy", v.res_c.accuracy, v.res_u.accuracy,
            "Share of held-out sentences whose sentiment is predicted correctly (chance = 50 %). 95 % Wilson "
            f"interval on these {n} items: {100 * lo_c:.1f}-{100 * hi_c:.1f} % ({v.label_c}), "
            f"{100 * lo_u:.1f}-{100 * hi_u:.1f} % (unclipped).", pct=True)
    if v.res_c.nan_count or v.res_u.nan_count:
        v.warn_slot.warning(f"Numerical failures: {v.res_c.nan_count} NaN values with clipping, {v.res_u.nan_count} "
                            "without.", icon=":material/warning:")


def details(v: View) -> None:
    """Below the tabs (the first screen keeps the verdict, the numbers and the figure): the certified bound of
    the slider caps and the shipped pair's figures over its three training seeds, in one expander."""
    if v.presenter or not (v.clip.enabled or v.m.is_bundled):
        return
    with st.expander("What-if: a certified bound if lengths were hidden, and the three training seeds", expanded=False):
        _certified(v)
        if v.m.is_bundled:
            _seeds()


def _certified(v: View) -> None:
    """The certified bound of the slider caps (any two inputs of a length-hiding mechanism) and what it would take."""
    if not v.clip.enabled:
        return
    k = int(v.m.data.states.mask.shape[1]) + 1
    b = X.certified_bound(v.clip, n_components=k)
    e = X.certified_epsilon(v.clip, n_components=k)
    st.caption(X.certified_what_if(v.clip, n_components=k))
    c1, c2 = st.columns([1, 3])
    c1.metric("What-if bound", P.fmt_bound(b.total), delta="if lengths were hidden", delta_color="off",
              **NO_ARROW, help="Supremum of the exact per-pair bound over any two inputs of a length-hiding "
              f"mechanism ({k} components, prior-padded) clipped with these caps. The page's models do not hide "
              "lengths, so this is not their guarantee; it covers the released latent only, not the classifier's "
              "output. " + (b.reason or f"Gap to an attained pair: {b.error:.3g} nats."))
    if not b.reason:
        w = X.what_it_takes(v.clip, 8.0, n_components=k)
        c2.caption(f"Certified bound {b.total:.3g} nats, epsilon {e['epsilon']:.3g} at delta = 1e-5 (order "
                   f"{e['order']:.3g}): **very large**. For epsilon = 8 the order must exceed {w['order_min']:.3g}; at "
                   f"order {w['order']:.3g}, each alone with the others at their best: C_mu <= {w['C_mu']:.3g} (now "
                   f"{v.clip.C_mu:g}), sigma cap <= {w['sigma_cap']:.4g} (floor {w['sigma_floor']:.4g}), alpha_min / "
                   f"alpha_max >= {w['alpha_ratio']:.3g}.")
    else:
        c2.caption(f"No finite certified bound with these caps: {b.reason}.")


def _seeds() -> None:
    """The shipped pair over its three seeds (``assets/nvdp/seeds.json``)."""
    try:
        summary = X.seed_summary()
    except (FileNotFoundError, ValueError, KeyError):
        return
    st.caption(X.seed_headline(summary) + " (the shipped pair at its training clipping; the live figures above "
               f"are for seed {summary['live_seed']} at the slider caps)")


def show_lead(v: View) -> None:
    """The lead sentence (:func:`engine.figures.verdict.nvdp_verdict`), coloured, above the numbers."""
    if v.lead_slot is not None:
        from ui.common import verdict as V

        v.lead_n += 1
        V.show(nvdp_verdict(v.res_c, v.res_u, label=v.label_c, n_eval=N_EVAL, lengths=eval_lengths(v)), v.lead_slot,
               v.lead_n - 1)


def eval_lengths(v: View):
    """Real components of each evaluated test sentence of the model the sliders apply to (for the lead)."""
    ev = K.evaluator(v.mkey, v.which, v.m.models, v.m.data)
    return ev.raw.mask.sum(1).numpy()


def show_verdict(v: View) -> None:
    """The headline verdict under the privacy figure (when its tab is open)."""
    if v.verdict_slot is not None:
        v.verdict_slot.markdown(headline_verdict(v.res_c, v.res_u, v.label_c))


def finish(v: View) -> None:
    """The accuracy of the new caps, last (the bounds and the figure are on screen already); then the prefetch.

    Records ``st.session_state["_nvdp_timing"]`` (``answer``: the bounds and figure drawn; ``done``: the
    accuracy too) for ``bench/bench_nvdp_page.py``. Afterwards the unclipped model's bounds at the other
    orders (fixed per model) are computed while the user reads: an order move then computes the clipped
    model's only.
    """
    ss["_nvdp_timing"] = {"answer": time.perf_counter(), "answer_cpu": time.process_time()}  # bench_nvdp_page.py
    if v.res_c.accuracy is None or v.res_u.accuracy is None:
        v.complete()
    # always: a tab (Utility, Export) may have completed the results after the headline drew "computing ..."
    show_accuracy(v)
    show_lead(v)
    show_verdict(v)
    ss["_nvdp_timing"]["done"] = time.perf_counter()
    m = v.m
    L.prefetch_bounds(K.evaluator(m.ukey, "unclipped", m.models, m.data), m.ukey,
                      [ClipConfig(enabled=False, renyi_order=o) for o in RENYI_ORDERS], PROTOCOL)
    # then, from the session's second run on (the first view's own rendering in the browser is not slowed), the
    # clipped model's bounds one key press away on each slider, the slider moved last first
    prev, now = ss.get("_nvdp_prev_clip"), v.clip.to_dict()
    ss["_nvdp_prev_clip"] = now
    if prev is None:
        return
    moved = next((f for f in ("renyi_order", "C_mu", "alpha_min", "alpha_max") if prev.get(f) != now.get(f)), None)
    live = K.evaluator(v.mkey, v.which, m.models, m.data)
    L.prefetch_neighbours(live, v.mkey, neighbour_clips(v.clip, K.c_mu_range(v.mkey, v.which, m.models, m.data), moved),
                          PROTOCOL)
