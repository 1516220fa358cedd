"""The NVDP page's tabs: privacy bound | utility | training drift | posterior parameters | sentence inspector | export.

Only the open tab is built (``st.tabs(..., on_change="rerun")`` tracks it): a slider move draws the
headline and the one figure on screen; the other tabs are built when opened. Utility and Export wait
for the accuracy of the new caps (:meth:`ui.nvdp.headline.View.complete`). The figures come from
:mod:`engine.figures.nvdp`; the report and downloads from :mod:`ui.nvdp.compute.report`.
"""

from __future__ import annotations

import functools
import json

import pandas as pd
import streamlit as st

from engine.figures import nvdp as P
from engine.nvdp import explore as X
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.headline import paired_comparison
from engine.nvdp.hints import hint
from ui.nvdp import cache as K
from ui.common.layout import NO_ARROW, NVDP_FIGURE_HEIGHT, PLOTLY_CONFIG, presenter_fonts
from ui.nvdp.headline import View, show_verdict
from ui.nvdp.parts import nvdp_formulas
from ui.nvdp.state import N_EVAL, PROTOCOL, TARGETS
from ui.common.state import persist

ss = st.session_state

TAB_NAMES = ["Privacy bound", "Utility", "Training drift", "Posterior parameters", "Sentence inspector", "Export"]


def _inspect_on() -> None:
    ss["nvdp_inspect_on"] = True


def _sized(v: View, fig):
    """Size a figure to share the first screen with the headline (and for a room in presenter mode)."""
    fig.update_layout(height=NVDP_FIGURE_HEIGHT[v.presenter], margin=dict(t=min(int(fig.layout.margin.t or 90), 90)))
    if fig.layout.legend.orientation == "h":  # a legend below the plot: at the figure's bottom, under the x title
        fig.update_layout(legend=dict(yref="container", yanchor="bottom", y=0.0),
                          margin=dict(b=max(int(fig.layout.margin.b or 0), 130)))
    if v.presenter:
        presenter_fonts(fig, 17)
    return fig


def _fig_headline(v: View):
    """The headline comparison: the same pairs under both models, both forms."""
    return P.paired_figure([paired_comparison(v.res_c.rd_paper, v.res_u.rd_paper),
                            paired_comparison(v.res_c.rd_exact, v.res_u.rd_exact)],
                           kind=ss.get("nvdp_headline_kind", "scatter"), label=v.label_c)


def _fig_rd(v: View):
    form = ss.get("nvdp_form", "paper")
    rc, ru = (v.res_c.rd_paper, v.res_u.rd_paper) if form == "paper" else (v.res_c.rd_exact, v.res_u.rd_exact)
    notes = None
    if form == "paper":
        notes = {v.label_c: f"(the authors' outlier filter: max {P.fmt_bound(rc.max)})",
                 "unclipped": f"(the authors' outlier filter: max {P.fmt_bound(ru.max)})"}
    return P.rd_distribution_figure({v.label_c: rc.values, "unclipped": ru.values}, form=form, notes=notes)


def rule_effects_table(v: View) -> None:
    """What each clipping rule does alone, applied at release to the unclipped model (on request)."""
    if not v.clip.enabled:
        return
    if not st.toggle("Show what each rule does alone", key="nvdp_rule_effects",
                     help="Each rule of the slider caps alone, applied at release to the unclipped model: on how many "
                     "of the evaluated pairs it lowers / raises the paper-form RD (a second or two)."):
        return
    eff = K.rule_effects(v.m.ukey, v.clip_json, v.m.models, v.m.data)
    names = {"mean": "mean (C_mu)", "std": "std floor / cap", "alpha": "pseudo-count clamp", "all": "all three"}
    st.dataframe([{"rule": names[k], "pairs lowered": e["paper"].n_lower, "pairs raised": e["paper"].n_higher,
                   "worst case with rule": P.fmt_bound(e["worst"][0]), "worst case without": P.fmt_bound(e["worst"][1]),
                   "verdict": e["verdict"]} for k, e in eff.items()], hide_index=True)


def _fig_acc(v: View):
    models = v.m.models
    hist = {v.label_c: [h["val_accuracy"] for h in models[v.which].history],
            "unclipped": [h["val_accuracy"] for h in models["unclipped"].history]}
    if v.which == "unclipped":
        hist = {"unclipped": hist["unclipped"]}
    return P.accuracy_figure({v.label_c: v.res_c.accuracy, "unclipped": v.res_u.accuracy}, hist, n_test=v.res_c.n_test)


def _fig_post(v: View):
    d, clip = v.res_c.distributions, v.clip
    return P.posterior_histograms_figure(d["before"], d["after"], C_mu=clip.C_mu, sigma_min=clip.sigma_min,
                                         sigma_max=clip.sigma_max, alpha_min=clip.alpha_min,
                                         alpha_max=clip.alpha_max, fractions=v.res_c.clip_stats.to_dict())


#: Chart key -> (caption in the report, figure builder).
FIGURES = {"nvdp_fig_headline": ("Clipped vs unclipped on the same pairs", _fig_headline),
           "nvdp_fig_rd": ("Privacy bound: RD over sentence pairs", _fig_rd),
           "nvdp_fig_acc": ("Utility: held-out accuracy", _fig_acc),
           "nvdp_fig_post": ("Posterior parameters before and after clipping", _fig_post)}


def _chart(v: View, key: str) -> None:
    st.plotly_chart(_sized(v, FIGURES[key][1](v)), config=PLOTLY_CONFIG, key=key)


def bounds_table(v: View) -> pd.DataFrame:
    """Both forms of the RD and the BDP epsilon, for the model the sliders apply to and the unclipped one."""
    def col(rr):
        return [P.fmt_bound(rr.rd_paper.max), P.fmt_bound(rr.rd_paper.mean), P.fmt_bound(rr.rd_exact.max),
                P.fmt_bound(rr.rd_exact.mean), f"{rr.rd_exact.n_inf} of {rr.rd_exact.n_pairs}",
                P.fmt_bound(rr.bdp_paper.epsilon), P.fmt_bound(rr.bdp.epsilon)]

    return pd.DataFrame({"": ["RD max, paper protocol", "RD mean, paper protocol", "RD max, exact (nats)",
                              "RD mean, exact (nats)", "pairs with an infinite exact bound",
                              "BDP epsilon, papers' figure (delta 1e-5)", "BDP epsilon, guarantee (delta 1e-5)"],
                         v.label_c: col(v.res_c), "unclipped": col(v.res_u)})


def tabs(v: View) -> None:
    """Draw the tabs; only the open one is built."""
    t = st.tabs(TAB_NAMES, key="nvdp_tab", on_change="rerun")
    for _tab, _body in zip(t, (_tab_privacy, _tab_utility, _tab_drift, _tab_posterior, _tab_inspector, _tab_export)):
        if _tab.open:
            with _tab:
                _body(v)


def _tab_privacy(v: View) -> None:
    _chart(v, "nvdp_fig_headline")
    v.verdict_slot = st.empty()  # under the figure, so that the headline numbers and the figure share the first screen
    if v.res_c.accuracy is not None and v.res_u.accuracy is not None:
        show_verdict(v)
    else:
        v.verdict_slot.caption("The verdict follows with the accuracy of the new caps ...")
    st.radio("Headline view", ["scatter", "diff"], horizontal=True, key="nvdp_headline_kind",
             format_func={"scatter": "each pair: clipped vs unclipped",
                          "diff": "distribution of the per-pair difference"}.get,
             help="The same pairs of test sentences under both models, in both forms of the bound. Below the "
             "diagonal (left of 0): clipping makes that pair harder to tell apart.")
    rule_effects_table(v)
    _chart(v, "nvdp_fig_rd")
    st.radio("Form of the bound", ["paper", "exact"], horizontal=True, **persist("nvdp_form"),
             format_func={"paper": "paper protocol (comparable with the papers)",
                          "exact": f"guarantee (exact, nats, all pairs of {N_EVAL} sentences)"}.get)
    st.dataframe(bounds_table(v), hide_index=True, width="stretch")
    if st.toggle("BDP epsilon over Renyi orders (tightest order; why the guarantee is infinite)",
                 key="nvdp_order_curve"):
        with st.spinner("Evaluating both forms at six orders ..."):
            # the curve re-clips at each of its orders: keyed without the slider's order, so an order move reuses it
            cur = K.orders(v.mkey, v.which, json.dumps({**v.clip.to_dict(), "renyi_order": None}, sort_keys=True),
                           v.m.models, v.m.data)
        st.dataframe(pd.DataFrame({"Renyi order": cur["orders"],
                                   "BDP epsilon, guarantee": [P.fmt_bound(e) for e in cur["eps_guarantee"]],
                                   "BDP epsilon, paper protocol": [P.fmt_bound(e) for e in cur["eps_paper"]]}),
                     hide_index=True, width="stretch")
        for name, best in (("guarantee", cur["best_guarantee"]), ("paper protocol", cur["best_paper"])):
            st.caption(f"Tightest order, {name}: " + (f"lambda = {best[0]:g}, epsilon {best[1]:.4g}" if best
                                                      else "none finite at these orders"))
        for o, rs in zip(cur["orders"], cur["reasons"]):
            for r_ in rs:
                st.caption(f"Order {o:g}, guarantee infinite: {r_}")
    with st.expander("What this shows, and what to try"):
        st.markdown(
            "Each pair of test sentences gets one number: how distinguishable their shared draws are. The curve "
            "shows how those numbers spread; the dashed rule marks the worst pair (left = more private). The "
            "headline above says, pair by pair, where clipping moves them left and where it does not.\n\n"
            "**Two forms.** *Exact*: the full bound, added up over every token cloud and all 384 dimensions, in "
            "nats; it can be infinite when two clouds' blurs or weights are too different. *Paper protocol*: "
            "the authors' normalised figure (averaged over dimensions, divided by the 49 latent positions, "
            "their approximation of the weight term, pairs within batches of 16, outlier pairs set aside), so "
            "the numbers compare with their tables.\n\n"
            "**Lengths.** The layer gives padded positions weight exactly 0, so a shared sample reveals how "
            "many tokens a sentence has: the guarantee form is infinite for every pair of different lengths "
            "(counted in the table), whatever the caps.\n\n" + hint("alpha_min"))
    with st.expander("The formulas"):
        nvdp_formulas()


def _tab_utility(v: View) -> None:
    with st.spinner("Computing the accuracy of the new caps ..."):
        v.complete()
    _chart(v, "nvdp_fig_acc")
    with st.expander("What this shows, and what to try"):
        st.markdown(
            "Left: the share of held-out sentences whose sentiment the classifier gets right when it only sees "
            "the shared draw (one random draw per sentence, seeded). Right: accuracy on the validation "
            "sentences after each training epoch (the best epoch is kept).\n\n"
            "The paper reports that clipping keeps or improves accuracy and lowers the bound; on the shipped models "
            "it does so only where training drifts (the Training drift tab). "
            "Clipping *at release* (right-hand option of *Apply the sliders to*) changes the draws the "
            "classifier was not trained on, so it can cost more accuracy than training with the caps.\n\n"
            + hint("retrain"))


def _tab_drift(v: View) -> None:
    from ui.nvdp.drift import drift_tab

    drift_tab(v, _sized)


def _tab_posterior(v: View) -> None:
    _chart(v, "nvdp_fig_post")
    s = v.res_c.clip_stats
    st.caption(f"{s.n_components} token clouds of {v.res_c.n_test} test sentences ({TARGETS[ss['nvdp_target']]}). "
               f"Shrunk means: {100 * s.frac_mu:.1f}%; blur raised: {100 * s.frac_sigma:.2f}% and lowered: "
               f"{100 * s.frac_sigma_high:.2f}% of (token, dimension) entries; alpha raised: "
               f"{100 * s.frac_alpha_low:.1f}%, lowered: {100 * s.frac_alpha_high:.1f}%.")
    with st.expander("What this shows"):
        st.markdown(
            "Each token of a sentence becomes a cloud: a centre **mu** (its length ||mu|| is how far it sits "
            "from the shared prior cloud at 0), a blur **sigma** per dimension, and a weight **alpha**. The "
            "dashed rules are your caps; everything beyond them is moved onto them (orange: before, blue: "
            "after). Caps inside the bulk change many tokens, which may protect more and may cost accuracy.\n\n"
            + hint("c_mu") + "\n\n" + hint("order_floor"))


def _inspection(v: View):
    return K.inspect_pair(v.mkey, v.which, v.clip_json, ss["nvdp_sent_a"], ss["nvdp_sent_b"], v.m.models,
                     v.m.settings.max_length)


def _tab_inspector(v: View) -> None:
    clip = v.clip
    st.markdown("Type two sentences. See what the bottleneck keeps of each token, which caps touched it, and "
                "how distinguishable the two shared draws are.")
    c1, c2 = st.columns(2)
    c1.text_input("Sentence A", max_chars=300, **persist("nvdp_sent_a"))
    c2.text_input("Sentence B", max_chars=300, **persist("nvdp_sent_b"))
    st.caption("Typed sentences are encoded in memory only; nothing is written to disk or logged.")
    if not ss.get("nvdp_inspect_on"):
        # The language model is loaded only on request, so the page's first visit stays fast.
        st.button("Compare these two sentences", type="primary", key="nvdp_inspect_go",
                  on_click=_inspect_on,
                  help="Loads the sentence encoder (a few seconds the first time); afterwards the comparison "
                  "follows your typing and the sliders.")
    ins = None
    try:
        if ss.get("nvdp_inspect_on"):
            ins = _inspection(v)
    except (ValueError, TypeError) as exc:
        st.error(f"**Cannot inspect these sentences.** {exc}", icon=":material/error:")
    if ins is not None:
        m1, m2, m3 = st.columns(3)
        m1.metric("RD bound between A and B (exact)", P.fmt_bound(ins.rd_exact),
                  delta=f"unclipped {P.fmt_bound(ins.rd_exact_unclipped)}", delta_color="off", **NO_ARROW,
                  help=f"max of D(A||B) = {P.fmt_bound(ins.rd_forward)} and D(B||A) = {P.fmt_bound(ins.rd_backward)} "
                  "nats, summed over token clouds and dimensions, with the mechanism's own padding: "
                  + ("this model hides the length (every input released with the same number of prior-padded "
                     "clouds), so sentences of different lengths have a finite bound." if ins.length_hiding else
                     "this model gives padded positions weight 0 in the shared draw, so two sentences of different "
                     "lengths are told apart and their bound is infinite."))
        m2.metric("RD bound (paper protocol)", P.fmt_bound(ins.rd_paper),
                  delta=f"unclipped {P.fmt_bound(ins.rd_paper_unclipped)}", delta_color="off", **NO_ARROW,
                  help="The authors' normalised figure for the ordered pair (A, B) (no outlier filter for one pair).")
        changed = sum(int((t["clipped"] != "").sum()) for t in ins.components)
        total = sum(len(t) - 1 for t in ins.components)
        m3.metric("Tokens touched by the caps", f"{changed} of {total}")
        st.plotly_chart(_sized(v, P.inspector_figure(ins.components, ("A", "B"), C_mu=clip.C_mu, alpha_max=clip.alpha_max)),
                        config=PLOTLY_CONFIG, key="nvdp_fig_inspect")
        cols = {"component": "#", "token": "token", "weight": st.column_config.NumberColumn(
                    "weight", help="expected share of the draw: alpha / sum of alpha", format="%.3f"),
                "alpha_before": st.column_config.NumberColumn("alpha before", format="%.3f"),
                "alpha": st.column_config.NumberColumn("alpha", format="%.3f"),
                "mu_norm_before": st.column_config.NumberColumn("||mu|| before", format="%.2f"),
                "mu_norm": st.column_config.NumberColumn("||mu||", format="%.2f"),
                "sigma_mean": st.column_config.NumberColumn("mean sigma", format="%.3f"),
                "sigma_min": st.column_config.NumberColumn("min sigma", format="%.3f"),
                "clipped": st.column_config.TextColumn("clipped by", help="the caps that changed this token")}
        shown = list(cols)
        for name, t in zip(("A", "B"), ins.components):
            with st.expander(f"Sentence {name}: all {len(t)} components (row 0 is the prior cloud)"):
                st.dataframe(t[shown], hide_index=True, column_config=cols, width="stretch")


def _report_figures(v: View) -> list:
    """Every figure of the page, as shown (built when the report is downloaded)."""
    clip = v.clip
    figs = [(cap, _sized(v, make(v))) for cap, make in FIGURES.values()]
    if ss.get("nvdp_inspect_on"):
        try:
            ins = _inspection(v)
            figs.append(("Sentence inspector: A vs B", _sized(v, P.inspector_figure(
                ins.components, ("A", "B"), C_mu=clip.C_mu, alpha_max=clip.alpha_max))))
        except (ValueError, TypeError):
            pass  # the inspector tab shows the error
    return figs


def report_verdict(v: View):
    """The page's lead sentence (the same call as :func:`ui.nvdp.headline.show_lead`), for the report."""
    from engine.figures.verdict import nvdp_verdict

    from ui.nvdp.headline import eval_lengths

    return nvdp_verdict(v.res_c, v.res_u, label=v.label_c, n_eval=N_EVAL, lengths=eval_lengths(v))


def report_warnings(v: View) -> list[str]:
    """What the page says about its numbers, for the report: the headline's direction check (under the privacy
    figure) and, if any, the numerical failures (:func:`ui.nvdp.headline.show_accuracy`)."""
    from engine.nvdp.headline import headline_verdict

    out = [headline_verdict(v.res_c, v.res_u, v.label_c)]
    if v.res_c.nan_count or v.res_u.nan_count:
        out.append(f"Numerical failures: {v.res_c.nan_count} NaN values with clipping, {v.res_u.nan_count} without.")
    return out


def _tab_export(v: View) -> None:
    from engine.figures.report import safe_csv
    from ui.nvdp.compute.report import evaluate_command, export_notes, nvdp_report_html, package_versions
    with st.spinner("Computing the accuracy of the new caps ..."):
        v.complete()
    m, clip, label_c, res_c, res_u = v.m, v.clip, v.label_c, v.res_c, v.res_u
    settings, user, data = m.settings, m.user, m.data
    summ = pd.DataFrame([{"model": label_c, **res_c.summary()}, {"model": "unclipped", **res_u.summary()}])
    settings_out = {
        "data": ({"source": "uploaded CSV (texts not included)", "n_rows": len(data.sentences),
                  "classes": user["classes"]} if user is not None else
                 {"source": "bundled sentiment sentences", "models": "shipped" if m.is_bundled else "trained here"}),
        "settings": settings.to_dict(),
        "applied_clipping": clip.to_dict(),
        "apply_to": ss["nvdp_target"],
        "protocol": PROTOCOL.to_dict(),
        "n_test": res_c.n_test,
        "diagnostics": summ.to_dict(orient="records"),
        "versions": package_versions(),
    }

    cli_lines = [X.cli_command(settings, model_dir="artifacts/nvdp/clipped"),
                 X.cli_command(settings, ClipConfig(enabled=False), model_dir="artifacts/nvdp/unclipped")]

    report = functools.partial(
        lambda **kw: nvdp_report_html(figures=_report_figures(v), bounds=bounds_table(v), **kw), label_c=label_c,
        res_c=res_c, res_u=res_u, verdict=report_verdict(v), warnings=report_warnings(v),
        settings={**settings.to_dict(), "applied clipping": json.dumps(clip.to_dict()), "apply to": ss["nvdp_target"],
                  "sentence A": ss.get("nvdp_sent_a", ""), "sentence B": ss.get("nvdp_sent_b", "")},
        commands=cli_lines)
    st.download_button("Download report (HTML)", report, file_name="nvdp_report.html", mime="text/html",
                       key="nvdp_dl_report", on_click="ignore", type="primary", icon=":material/summarize:",
                       help="One self-contained HTML file: headline numbers, the figures (interactive, no "
                       "network needed), settings, privacy bounds, data source and licence, and the commands.")
    e1, e2 = st.columns(2)
    e1.download_button("Download diagnostics (CSV)", safe_csv(summ), file_name="nvdp_diagnostics.csv",
                       mime="text/csv", key="nvdp_dl_csv", on_click="ignore",
                       help="One row per model: accuracy, RD max/mean in both forms, BDP epsilons, clipped fractions.")
    e2.download_button("Download settings and diagnostics (JSON)", json.dumps(settings_out, indent=2, default=float),
                       file_name="nvdp_settings.json", mime="application/json", key="nvdp_dl_json", on_click="ignore",
                       help="Every setting, the seed, the live sizes and the package versions.")
    st.markdown("Train the two models from a terminal (each prints accuracy, both RD forms and BDP):")
    st.code("\n".join(cli_lines), language="bash", wrap_lines=True)
    st.markdown("Evaluate with the clipping on the sliders:")
    st.code(evaluate_command(settings, clip, v.which), language="bash", wrap_lines=True)
    notes = export_notes(settings, clip, N_EVAL, res_c.n_test)
    for n in notes:
        st.caption(f":material/info: {n}")
    st.caption("Each figure has a camera button (top right, on hover) that saves a PNG at 3x resolution.")
