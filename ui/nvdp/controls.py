"""The NVDP page's controls (the left column): the sentences, the model, and the clipping sliders.

Each widget edits a setting under its ``nvdp_*`` session key (:func:`ui.common.state.persist`, defaults and
link parsing in :mod:`ui.nvdp.state`). The clipping sliders apply live, post hoc, to the model trained
with clipping or to the unclipped one at release; "Reset" returns them to the clipping the clipped
model was trained with, "Retrain" trains a clipped model with the slider caps.
"""

from __future__ import annotations

import streamlit as st

from engine.nvdp import explore as X
from engine.nvdp.clipping import ClipConfig, finite_alpha_min, sigma_floor
from ui.nvdp import cache as K
from ui.nvdp.state import LR_SCHEDULES, RENYI_ORDERS, SIGMA_CAP, TARGETS
from ui.common.state import persist

ss = st.session_state

SOURCES = {"bundled": "the 3,000 bundled review sentences", "upload": "your own texts (CSV upload)"}


def _retrain() -> None:
    cfg = ss.get("_nvdp_slider_clip")
    if cfg is not None:
        ss["nvdp_train_clip"] = cfg
        ss["nvdp_target"] = "trained"
        ss["nvdp_cancelled"] = False


def _reset_sliders() -> None:
    tc = ss.get("nvdp_train_clip", X.DEFAULT_TRAIN_CLIP.to_dict())
    ss["nvdp_C_mu"], ss["nvdp_alpha_min"], ss["nvdp_alpha_max"] = tc["C_mu"], tc["alpha_min"], tc["alpha_max"]
    ss["nvdp_renyi_order"], ss["nvdp_sigma_cap"] = tc["renyi_order"], tc.get("sigma_max") is not None


def model_controls(presenter: bool) -> None:
    """The Data and Model sections: which sentences, the KL weight and (outside presenter mode) the seed."""
    st.subheader("Data")
    st.radio("Sentences", list(SOURCES), format_func=SOURCES.get, **persist("nvdp_source"),
             help="Your own texts: a CSV with a text column and a label column (two or more classes). They are "
             "encoded and both models trained in this browser session only; nothing of them is written to disk "
             "unless you tick the cache option.")
    st.subheader("Model")
    st.select_slider("KL weight (how hard the bottleneck squeezes)", options=list(X.KL_WEIGHTS),
                     format_func=lambda v: f"{v:g}", **persist("nvdp_kl_weight"),
                     help="Weight of the regulariser that pulls every token's cloud towards the shared prior "
                     "cloud (lambda_G = lambda_D in the papers). Larger = more private, less accurate.")
    if not presenter:
        st.number_input("Seed (training and sampling)", min_value=0, max_value=99, step=1, **persist("nvdp_seed"))
        st.radio("Learning-rate schedule", list(LR_SCHEDULES), format_func=LR_SCHEDULES.get,
                 **persist("nvdp_lr_schedule"),
                 help="How the step size moves during training. The shipped models use a constant rate; the authors' "
                 "code warms up over the first 6 % of the steps and then decays linearly to 0, which keeps late "
                 "epochs from drifting (the Training drift tab). Another schedule trains new models here.")


def clipping_controls(m, presenter: bool) -> tuple[str, float]:
    """The clipping sliders, with the blur floor and the finiteness threshold they imply, Reset and Retrain.

    Parameters
    ----------
    m : ui.nvdp.models.Models
        The model pair (the C_mu slider's range is that of the model the sliders apply to).
    presenter : bool
        Presenter mode hides the sigma cap switch (its value is kept).

    Returns
    -------
    (str, float)
        Which model the sliders apply to (``"clipped"`` or ``"unclipped"``) and the Renyi order lambda.
    """
    st.subheader("Clipping (applied live)")
    st.radio("Apply the sliders to", list(TARGETS), format_func=TARGETS.get, **persist("nvdp_target"),
             help="The model trained with clipping (its training settings are shown above the figures), or the "
             "unclipped model with the caps applied only when the draw is shared (no retraining).")
    which = "clipped" if ss.get("nvdp_target") == "trained" else "unclipped"
    lo, hi = K.c_mu_range(m.ckey if which == "clipped" else m.ukey, which, m.models, m.data)
    ss["nvdp_C_mu"] = float(min(max(float(ss["nvdp_C_mu"]), lo), hi))
    st.slider("C_mu: longest allowed cloud centre ||mu||", min_value=lo, max_value=hi, step=0.1, **persist("nvdp_C_mu"),
              help=f"Every token's mean vector mu is shrunk onto the ball of radius C_mu (L2 norm over 384 "
              f"dimensions). The range covers the observed lengths (1 % quantile {lo:g} to 1.25 x the 99 % quantile); "
              "the paper's 3-10 are for 1024-dimensional BERT-large.")
    st.slider("alpha_min: smallest pseudo-count", min_value=0.0, max_value=2.0, step=0.01, **persist("nvdp_alpha_min"),
              help="Pseudo-counts alpha set how much weight each token's cloud gets in the draw. The authors' default "
              "is 0; above ((lambda-1)/lambda) x alpha_max every Gamma / Dirichlet term of the exact RD is finite.")
    st.slider("alpha_max: largest pseudo-count", min_value=0.05, max_value=5.0, step=0.05, **persist("nvdp_alpha_max"),
              help="Caps the weight any single token can get (the prior component has alpha = 1; the paper used "
              "alpha_max = 1 on SST-2).")
    st.select_slider("Renyi order", options=list(RENYI_ORDERS), format_func=lambda v: f"{v:g}",
                     **persist("nvdp_renyi_order"),
                     help="The order lambda of the Renyi divergence (1.1 in the papers; not the ridge penalty lam of "
                     "the PMT page). It also sets the blur floor sigma >= sqrt((lambda-1)/lambda).")
    if not presenter:
        st.checkbox(f"Cap sigma at {SIGMA_CAP:g}", **persist("nvdp_sigma_cap"),
                    help=f"Caps every blur at {SIGMA_CAP:g}, just under the prior's blur 1. Not one of the paper's three rules. The exact RD is finite only if every blur stays below "
                    "1 when another can sit on the floor; without the cap (or with a cap of exactly 1) some pairs "
                    "of sentences get an infinite bound.")
    lam = float(ss["nvdp_renyi_order"])
    st.caption(f"Blur floor at lambda = {lam:g}: sigma >= {sigma_floor(lam):.4f}. "
               f"Finite weight terms of the guarantee form need alpha_min > "
               f"{finite_alpha_min(float(ss['nvdp_alpha_max']), lam, margin=0.0):.4f} (and, for any bound at all, two "
               "sentences of the same length).")
    b1, b2 = st.columns(2)
    b1.button("Reset", on_click=_reset_sliders, key="nvdp_reset", width="stretch",
              help="Reset to trained: set the sliders to the clipping the clipped model was trained with.")
    b2.button("Retrain", on_click=_retrain, key="nvdp_retrain", type="primary", width="stretch",
              help="Retrain with these caps: trains a new clipped model with these caps applied during training (train-time clipping), "
              "with progress; it is cached, so switching back is instant.")
    return which, lam


#: The clipping sliders' arrow-key steps and ranges, (field, step, lowest, highest); C_mu's range is the model's
#: (:func:`clipping_controls`), the Renyi order moves along :data:`ui.nvdp.state.RENYI_ORDERS`.
SLIDER_STEPS = (("C_mu", 0.1, None, None), ("alpha_min", 0.01, 0.0, 2.0), ("alpha_max", 0.05, 0.05, 5.0))


def neighbour_clips(clip: ClipConfig, c_mu_range: tuple[float, float], first: str | None = None) -> list[ClipConfig]:
    """The clippings one arrow-key press away from ``clip`` on each clipping slider (both directions), valid ones
    only; those of the slider ``first`` (a field name, e.g. the one the user moved last) first.

    The page computes their bounds ahead of need (:func:`ui.nvdp.live.prefetch_neighbours`): the next key press on
    a slider then finds them computed. Values are rounded to the step's decimals, as the slider sends them.

    >>> c = ClipConfig(enabled=True, C_mu=3.4, alpha_min=0.0, alpha_max=1.0, renyi_order=1.1)
    >>> [(n.C_mu, n.alpha_min, n.alpha_max, n.renyi_order) for n in neighbour_clips(c, (1.0, 5.0), "renyi_order")][:2]
    [(3.4, 0.0, 1.0, 1.05), (3.4, 0.0, 1.0, 1.2)]
    >>> len(neighbour_clips(c, (1.0, 5.0)))  # alpha_min cannot go below 0
    7
    """
    import dataclasses

    moves = []
    for field, step, lo, hi in SLIDER_STEPS:
        lo, hi = c_mu_range if field == "C_mu" else (lo, hi)
        for sign in (-1, 1):
            v = round(float(getattr(clip, field)) + sign * step, 10)
            if lo - 1e-12 <= v <= hi + 1e-12:
                moves.append((field, v))
    orders = list(RENYI_ORDERS)
    if clip.renyi_order in orders:
        i = orders.index(clip.renyi_order)
        moves += [("renyi_order", orders[j]) for j in (i - 1, i + 1) if 0 <= j < len(orders)]
    moves.sort(key=lambda fv: fv[0] != first)  # stable: the slider moved last first
    out = []
    for field, v in moves:
        try:
            out.append(dataclasses.replace(clip, **{field: v}))
        except (ValueError, TypeError):  # e.g. alpha_min above alpha_max: a position the page would refuse
            pass
    return out


def clip_from_sliders(lam: float) -> tuple[ClipConfig | None, list[str]]:
    """The clipping on the sliders (kept for "Retrain"), or None and the problems that make it invalid."""
    problems = []
    a_min, a_max = float(ss["nvdp_alpha_min"]), float(ss["nvdp_alpha_max"])
    if a_min > a_max:
        problems.append(f"alpha_min ({a_min:g}) is larger than alpha_max ({a_max:g}): no pseudo-count can satisfy both. "
                        "Lower alpha_min or raise alpha_max.")
    clip = None
    if not problems:
        try:
            clip = ClipConfig(enabled=True, C_mu=float(ss["nvdp_C_mu"]), alpha_min=a_min, alpha_max=a_max,
                              renyi_order=lam, sigma_max=SIGMA_CAP if ss.get("nvdp_sigma_cap") else None)
        except (ValueError, TypeError) as exc:
            problems.append(str(exc))
    ss["_nvdp_slider_clip"] = clip.to_dict() if clip is not None else None
    return clip, problems


def sidebar_summary(settings, lam: float) -> None:
    """The page's model and clipping settings in the sidebar (a screenshot explains itself)."""
    with st.sidebar:
        st.caption("NVDP settings")
        st.markdown(f"**KL weight** = {settings.kl_weight:g}, **seed** = {settings.seed}  \n"
                    f"**C_mu** = {float(ss['nvdp_C_mu']):g}, **alpha** in [{float(ss['nvdp_alpha_min']):g}, "
                    f"{float(ss['nvdp_alpha_max']):g}]  \n**Renyi order** = {lam:g}"
                    + (f", **sigma cap** = {SIGMA_CAP:g}" if ss.get("nvdp_sigma_cap") else ""),
                    help="The model and clipping settings of this page.")


def stop_if_invalid(problems: list[str]) -> None:
    """Explain invalid clipping settings and stop the script (the other settings are kept)."""
    if problems:
        for p in problems:
            st.error(f"**Clipping settings are invalid.** {p}", icon=":material/error:")
        st.caption("Your other settings are kept; the figures come back as soon as the combination is valid.")
        st.stop()
