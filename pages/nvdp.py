"""NVDP explorer: clipped vs unclipped NVDP sentence embeddings on real sentences.

Thin page: it reads widgets, calls ``engine.nvdp.explore`` (models trained once and cached on disk;
post-hoc clipping of the trained posteriors; the sentence inspector), caches the results by
(model key, settings), draws figures from ``engine.plots_nvdp`` and explains them. It computes no
privacy quantity itself.

Small settings for tests and demos come from the environment (``NVDP_PAGE_N_SENTENCES``,
``NVDP_PAGE_EPOCHS``, ``NVDP_PAGE_N_TRAIN``; the model cache lives in ``NVDP_CACHE_DIR``), see
:meth:`engine.nvdp.explore.ExploreSettings.from_env`.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import platform
import time

import pandas as pd
import streamlit as st

from engine.figures import nvdp as P
from engine.nvdp import explore as X
from engine.nvdp.bundled import bundled_matches, estimate_seconds, fmt_seconds
from engine.nvdp.clipping import ClipConfig, finite_alpha_min, sigma_floor
from engine.nvdp.hints import hint
from engine.nvdp.headline import headline_verdict, paired_comparison
from engine.nvdp.protocol import DEFAULT_PROTOCOL
from engine.nvdp.training import TrainingCancelled
from ui.nvdp_upload import user_data_flow
from ui.layout import FIGURE_HEIGHT, RESULTS_ANCHOR, page_style
from ui.state import ensure_frame, init_state, persist

ensure_frame()
init_state()
ss = st.session_state

#: The one evaluation protocol (engine.nvdp.protocol): the CLI, the results script and the docs use it too.
PROTOCOL = DEFAULT_PROTOCOL
N_EVAL = PROTOCOL.n_eval
SIGMA_CAP = X.DEFAULT_TRAIN_CLIP.sigma_max or 0.99
RENYI_ORDERS = (1.01, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0)
TARGETS = {"trained": "the model trained with clipping", "release": "the unclipped model, clipped only at release"}
DEFAULT_SENTENCES = ("The battery lasts all day and the screen is gorgeous.",
                     "Terrible customer service, I will never order again.")

_D = X.DEFAULT_TRAIN_CLIP
NVDP_DEFAULTS = {
    "nvdp_kl_weight": 1e-2,
    "nvdp_seed": 0,
    "nvdp_C_mu": _D.C_mu,
    "nvdp_alpha_min": _D.alpha_min,
    "nvdp_alpha_max": _D.alpha_max,
    "nvdp_renyi_order": _D.renyi_order,
    "nvdp_sigma_cap": _D.sigma_max is not None,
    "nvdp_target": "trained",
    "nvdp_form": "paper",
    "nvdp_sent_a": DEFAULT_SENTENCES[0],
    "nvdp_sent_b": DEFAULT_SENTENCES[1],
}


def _float_in(lo, hi):
    def parse(text):
        v = float(text)
        if not (math.isfinite(v) and lo <= v <= hi):
            raise ValueError(f"{text} is outside [{lo:g}, {hi:g}]")
        return v
    return parse


def _choice(options):
    def parse(text):
        v = float(text)
        for o in options:
            if math.isclose(v, o, rel_tol=1e-9):
                return o
        raise ValueError(f"{text} is not one of {', '.join(f'{o:g}' for o in options)}")
    return parse


def _int_in(lo, hi):
    def parse(text):
        v = int(text)
        if not lo <= v <= hi:
            raise ValueError(f"{v} is outside {lo}..{hi}")
        return v
    return parse


#: URL name -> (session key, parse). A shared link reproduces the view.
URL = {
    "kl": ("nvdp_kl_weight", _choice(X.KL_WEIGHTS)),
    "seed": ("nvdp_seed", _int_in(0, 99)),
    "C_mu": ("nvdp_C_mu", _float_in(0.1, 100.0)),
    "alpha_min": ("nvdp_alpha_min", _float_in(0.0, 2.0)),
    "alpha_max": ("nvdp_alpha_max", _float_in(0.05, 5.0)),
    "renyi_order": ("nvdp_renyi_order", _choice(RENYI_ORDERS)),
    "sigma_cap": ("nvdp_sigma_cap", lambda t: {"1": True, "0": False}[t]),
    "apply_to": ("nvdp_target", lambda t: t if t in TARGETS else (_ for _ in ()).throw(ValueError(f"{t!r} is not one of {', '.join(TARGETS)}"))),
}

for k, v in NVDP_DEFAULTS.items():
    ss.setdefault(k, v)
ss.setdefault("nvdp_train_clip", _D.to_dict())
url_problems = []
if not ss.get("_nvdp_url_loaded"):
    ss["_nvdp_url_loaded"] = True
    for name, (key, parse) in URL.items():
        if name in st.query_params:
            try:
                ss[key] = parse(st.query_params[name])
            except (ValueError, TypeError, KeyError) as exc:
                url_problems.append(f"The link's {name}={st.query_params[name]} was ignored: {exc}.")

#: st.metric's delta arrow would suggest a direction for a plain comparison value; hide it.
_NO_ARROW = {"delta_arrow": "off"} if "delta_arrow" in inspect.signature(st.metric).parameters else {}
CFG = {"toImageButtonOptions": {"format": "png", "scale": 3}, "displaylogo": False}

# ---------------------------------------------------------------------------------------------
# cached engine calls
# ---------------------------------------------------------------------------------------------


@st.cache_resource(max_entries=6, show_spinner=False)
def _pair(key: str, _settings: X.ExploreSettings, bundled: bool):
    """The (data, models) pair of ``_settings``: the shipped models (``bundled``) or the disk cache's."""
    return X.load_or_train(_settings, use_bundled=bundled)


@st.cache_data(max_entries=8, show_spinner=False)
def _exists(key: str, _settings: X.ExploreSettings, nonce: int, bundled: bool) -> bool:
    return X.cached_models_exist(_settings, use_bundled=bundled)


@st.cache_resource(max_entries=8, show_spinner=False)
def _live(key: str, which: str, _models, _data) -> X.LiveEvaluator:
    """The model prepared for fast post-hoc clipping on the test sentences (unclipped posteriors computed once)."""
    states, y = _data.split("test")
    return X.LiveEvaluator(_models[which], states, y)


@st.cache_data(max_entries=8, show_spinner=False)
def _mu_range(key: str, which: str, _models, _data) -> tuple[float, float]:
    return X.mu_norm_range(_live(key, which, _models, _data).raw)


@st.cache_resource(max_entries=128, show_spinner=False)  # a resource: no pickling on every rerun
def _posthoc(key: str, which: str, clip_json: str, _models, _data, seed: int) -> X.PosthocResult:
    return _live(key, which, _models, _data).evaluate(ClipConfig.from_dict(json.loads(clip_json)), seed=seed,
                                                      protocol=PROTOCOL)


@st.cache_resource(max_entries=16, show_spinner=False)
def _order_curve(key: str, which: str, clip_json: str, _models, _data) -> dict:
    from engine.nvdp.order_curve import bdp_order_curve

    raw = _live(key, which, _models, _data).raw
    return bdp_order_curve(raw, ClipConfig.from_dict(json.loads(clip_json)), protocol=PROTOCOL)


@st.cache_data(max_entries=32, show_spinner=False)
def _inspect(key: str, which: str, clip_json: str, a: str, b: str, _models, max_length: int) -> X.PairInspection:
    return X.inspect_pair(_models[which], a, b, ClipConfig.from_dict(json.loads(clip_json)), max_length=max_length)


def _user_store() -> dict:
    """Session-only results for uploaded texts (never in the process-wide caches, never on disk)."""
    return ss.setdefault("_nvdp_user_cache", {})


def _user_live(key: str, which: str, models, data) -> X.LiveEvaluator:
    store = _user_store()
    if ("live", key, which) not in store:
        states, y = data.split("test")
        store[("live", key, which)] = X.LiveEvaluator(models[which], states, y)
    return store[("live", key, which)]


def _c_mu_range(key, which, models, data):
    if key.startswith("user:"):
        return X.mu_norm_range(_user_live(key, which, models, data).raw)
    return _mu_range(key, which, models, data)


def _evaluate(key, which, clip_json, models, data, seed):
    if not key.startswith("user:"):
        return _posthoc(key, which, clip_json, models, data, seed)
    store = _user_store()
    k = ("posthoc", key, which, clip_json, seed)
    if k not in store:
        if sum(1 for x in store if x[0] == "posthoc") > 64:
            for x in [x for x in store if x[0] == "posthoc"]:
                store.pop(x)
        store[k] = _user_live(key, which, models, data).evaluate(ClipConfig.from_dict(json.loads(clip_json)),
                                                                  seed=seed, protocol=PROTOCOL)
    return store[k]


def _orders(key, which, clip_json, models, data):
    if not key.startswith("user:"):
        return _order_curve(key, which, clip_json, models, data)
    from engine.nvdp.order_curve import bdp_order_curve

    return bdp_order_curve(_user_live(key, which, models, data).raw, ClipConfig.from_dict(json.loads(clip_json)),
                           protocol=PROTOCOL)


def _versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for name in ("torch", "numpy", "pandas", "streamlit", "transformers", "plotly"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def _inspect_on() -> None:
    ss["nvdp_inspect_on"] = True


def _cancel() -> None:
    ss["nvdp_cancelled"] = True


def _train_now() -> None:
    ss["nvdp_cancelled"] = False


def _train_here() -> None:
    ss["nvdp_use_bundled"] = False
    ss["nvdp_cancelled"] = False


def _use_bundle() -> None:
    ss["nvdp_use_bundled"] = True


def _retrain() -> None:
    cfg = ss.get("_nvdp_slider_clip")
    if cfg is not None:
        ss["nvdp_train_clip"] = cfg
        ss["nvdp_target"] = "trained"
        ss["nvdp_cancelled"] = False


def _reset_sliders() -> None:
    tc = ss.get("nvdp_train_clip", _D.to_dict())
    ss["nvdp_C_mu"], ss["nvdp_alpha_min"], ss["nvdp_alpha_max"] = tc["C_mu"], tc["alpha_min"], tc["alpha_max"]
    ss["nvdp_renyi_order"], ss["nvdp_sigma_cap"] = tc["renyi_order"], tc.get("sigma_max") is not None


# ---------------------------------------------------------------------------------------------
# header and plain-words introduction
# ---------------------------------------------------------------------------------------------
head_l, head_r = st.columns([5, 1], vertical_alignment="center")
with head_l:
    st.title("NVDP embeddings: private sentence vectors")
with head_r:
    st.toggle("Presenter", help="Presenter mode: hides the explanations and the advanced controls, enlarges the "
              "text, the numbers and the figures for a room.", **persist("presenter"))
presenter = bool(ss.get("presenter", False))
page_style(presenter)
for msg in url_problems:
    st.warning(msg, icon=":material/link_off:")

_intro = st.expander("What am I looking at? NVDP, RD, BDP and clipping in plain words") if not presenter \
    else st.container(key="teach_intro")
_intro.markdown(
    "A sentence is turned into numbers by a small language model (all-MiniLM-L6-v2). **NVDP** "
    "(*nonparametric variational differential privacy*) does not share those numbers: a "
    "**bottleneck** (NVIB, *nonparametric variational information bottleneck*) replaces each word piece by a "
    "blurred, weighted cloud, and only one random draw from it is shared. A sentiment classifier "
    "(positive / negative, on 3,000 product, film and restaurant reviews) reads only that draw.  \n"
    "**How private?** If the draws of any two sentences look alike, an observer cannot tell which sentence was "
    "used. The **RD** (*Renyi divergence*) between the two draw distributions measures that: smaller = more "
    "private. **BDP** epsilon (*Bayesian differential privacy*) turns the RDs over many pairs into one privacy "
    "budget (smaller = more private; 10.47 is the floor when all RDs are 0).  \n"
    "**Clipping** (El Zein, Kumar & Henderson 2026) caps the bottleneck's parameters: the length of each "
    "cloud's centre (**C_mu**), the smallest blur (**sigma**), and the weights (**alpha** between "
    "**alpha_min** and **alpha_max**). Caps bound how different two sentences can look, which tightens the RD."
)

ctrl, main = st.columns([1, 3], gap="large")
main.container(key=RESULTS_ANCHOR).html("<span></span>")  # marks the results column (ui.layout: phones)

# ---------------------------------------------------------------------------------------------
# model choice (left) and training / loading (right)
# ---------------------------------------------------------------------------------------------
SOURCES = {"bundled": "the 3,000 bundled review sentences", "upload": "your own texts (CSV upload)"}
with ctrl:
    st.subheader("Data")
    st.radio("Sentences", list(SOURCES), format_func=SOURCES.get, key="nvdp_source",
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

try:
    train_clip = ClipConfig.from_dict(ss["nvdp_train_clip"])
    settings = X.ExploreSettings.from_env(kl_weight=float(ss["nvdp_kl_weight"]), seed=int(ss["nvdp_seed"]),
                                          train_clip=train_clip)
except (ValueError, TypeError) as exc:
    with main:
        st.error(f"**Cannot set up the models.** {exc}", icon=":material/error:")
    st.stop()
user = None
if ss.get("nvdp_source") == "upload":
    with main:
        user = user_data_flow(settings)  # stops the script until a trained user pair exists
pair_key = settings.key()
use_bundled = bool(ss.get("nvdp_use_bundled", True))
is_bundled = use_bundled and bundled_matches(settings)
# Cache keys of the two models: the shipped pair and a pair trained here are different models.
_src = ":bundled" if is_bundled else ":local"
ckey, ukey = pair_key + _src, settings.key(with_clip=False) + _src

if user is not None:
    pair_key = "user:" + user["key"]
    ckey, ukey = pair_key + ":clipped", pair_key + ":unclipped"
    data, models = user["data"], user["models"]
    is_bundled = False
    with main:
        status = st.container()
        tc = models["clipped"].clip
        status.caption(
            f"Your texts ({user['name']}, {len(data.sentences)} rows, classes {', '.join(user['classes'])}; in this "
            f"session only): trained on {len(data.train_idx)}, {len(data.val_idx)} for early stopping, evaluated on "
            f"{len(data.test_idx)} held-out texts. Clipped model trained with C_mu = {tc.C_mu:g}, alpha in "
            f"[{tc.alpha_min:g}, {tc.alpha_max:g}], Renyi order {tc.renyi_order:g}"
            + (f", sigma cap {tc.sigma_max:g}" if tc.sigma_max is not None else "") + ".")

with main:
    status = st.container()
    if user is not None:
        pass
    elif not _exists(pair_key, settings, ss.get("_nvdp_nonce", 0), use_bundled):
        if ss.get("nvdp_cancelled"):
            status.info("Training was cancelled. The page needs the two models (unclipped and clipped) to draw "
                        "anything; a model that finished before the cancel is kept.", icon=":material/pause_circle:")
            status.button("Train now", on_click=_train_now, type="primary", key="nvdp_train_now")
            st.stop()
        with status:
            n_desc = (f"{settings.n_sentences} sentences" if settings.n_sentences else "3,000 sentences")
            est = estimate_seconds(settings)
            st.markdown(f"**Training two small models** for KL weight {settings.kl_weight:g}, seed {settings.seed} "
                        f"({n_desc}, up to {settings.epochs} epochs, {settings.n_train or 'all'} training sentences): "
                        f"estimated {fmt_seconds(est['total'])} (from the {est['per_batch']:.3g} s per batch and "
                        f"{est['per_sentence']:.3g} s per encoded sentence measured when the shipped models were made, "
                        "one thread; the bar below updates the estimate as it goes). "
                        "This happens once per setting: the models are cached on disk.")
            bar = st.progress(0.0, text="starting ...")
            st.button("Cancel", on_click=_cancel, key="nvdp_cancel", icon=":material/cancel:",
                      help="Stops training after the current batch. Finished models are kept.")
            t_start = time.perf_counter()

            def progress(fraction, message):
                if ss.get("nvdp_cancelled"):
                    return False
                bar.progress(min(max(float(fraction), 0.0), 1.0),
                             text=f"{message} ({time.perf_counter() - t_start:.0f} s)")
                return True

            try:
                X.load_or_train(settings, progress=progress, use_bundled=use_bundled)
            except TrainingCancelled:
                ss["nvdp_cancelled"] = True
                st.rerun()
            except (ValueError, TypeError, FileNotFoundError) as exc:
                st.error(f"**Training failed.** {exc}", icon=":material/error:")
                st.stop()
        ss["_nvdp_nonce"] = ss.get("_nvdp_nonce", 0) + 1
        st.rerun()
    if user is None:
        ss["nvdp_cancelled"] = False
        with st.spinner("Loading the models and encoding the evaluation sentences (once) ..."):
            data, models = _pair(pair_key, settings, use_bundled)
    tm = models["clipped"]
    tc = tm.clip
    if user is not None:
        pass
    elif is_bundled:
        est = estimate_seconds(settings)
        b1_, b2_ = status.columns([3, 1])
        b1_.caption("Shipped models (assets/nvdp, checksums verified; `scripts/make_nvdp_models.py` reproduces "
                    "them bit for bit). Only the evaluation sentences were encoded on this machine.")
        b2_.button("Retrain here", on_click=_train_here, key="nvdp_train_here",
                   help=f"Train both models on this machine instead (estimated {fmt_seconds(est['total'])}, "
                   "with a progress bar, a time estimate and Cancel).")
    elif use_bundled is False and bundled_matches(settings):
        status.button("Use the shipped models", on_click=_use_bundle, key="nvdp_use_bundle")
    if user is None and not presenter:
        st.sidebar.caption(  # the sidebar, so that the headline numbers and the figure share the first screen
            f"Models ready ({'shipped' if is_bundled else 'cached on disk'}): KL weight {settings.kl_weight:g}, seed {settings.seed}; trained on "
            f"{len(data.train_idx)} sentences, {len(data.val_idx)} for early stopping, evaluated on {len(data.test_idx)} "
            f"held-out test sentences. Clipped model trained with C_mu = {tc.C_mu:g}, alpha in [{tc.alpha_min:g}, "
            f"{tc.alpha_max:g}], Renyi order {tc.renyi_order:g}"
            + (f", sigma cap {tc.sigma_max:g}" if tc.sigma_max is not None else "") + ".")

# ---------------------------------------------------------------------------------------------
# clipping sliders (left)
# ---------------------------------------------------------------------------------------------
with ctrl:
    st.subheader("Clipping (applied live)")
    st.radio("Apply the sliders to", list(TARGETS), format_func=TARGETS.get, **persist("nvdp_target"),
             help="The model trained with clipping (its training settings are shown above the figures), or the "
             "unclipped model with the caps applied only when the draw is shared (no retraining).")
    which = "clipped" if ss.get("nvdp_target") == "trained" else "unclipped"
    lo, hi = _c_mu_range(ckey if which == "clipped" else ukey, which, models, data)
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
    st.select_slider("Renyi order lambda", options=list(RENYI_ORDERS), format_func=lambda v: f"{v:g}",
                     **persist("nvdp_renyi_order"),
                     help="The order of the Renyi divergence (1.1 in the papers). It also sets the blur floor "
                     "sigma >= sqrt((lambda-1)/lambda).")
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

# ---------------------------------------------------------------------------------------------
# post-hoc evaluation (cached) and drawing (right)
# ---------------------------------------------------------------------------------------------
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

with st.sidebar:
    st.caption("NVDP settings")
    st.markdown(f"**KL weight** = {settings.kl_weight:g}, **seed** = {settings.seed}  \n"
                f"**C_mu** = {float(ss['nvdp_C_mu']):g}, **alpha** in [{float(ss['nvdp_alpha_min']):g}, "
                f"{float(ss['nvdp_alpha_max']):g}]  \n**Renyi order** = {lam:g}"
                + (f", **sigma cap** = {SIGMA_CAP:g}" if ss.get("nvdp_sigma_cap") else ""),
                help="The model and clipping settings of this page.")

with main:
    if problems:
        for p in problems:
            st.error(f"**Clipping settings are invalid.** {p}", icon=":material/error:")
        st.caption("Your other settings are kept; the figures come back as soon as the combination is valid.")
        st.stop()
    unclip = ClipConfig(enabled=False, renyi_order=lam)
    mkey = ckey if which == "clipped" else ukey
    with st.spinner("Applying the clipping to the test sentences ..."):
        res_c = _evaluate(mkey, which, json.dumps(clip.to_dict(), sort_keys=True), models, data, settings.seed)
        res_u = _evaluate(ukey, "unclipped", json.dumps(unclip.to_dict(), sort_keys=True),
                         models, data, settings.seed)
    label_c = "clipped" if which == "clipped" else "clipped at release"

    # ---- headline metrics -------------------------------------------------------------------

    def metric(col, title, c, u, help_, pct=False):
        fmt = (lambda v: f"{100 * v:.1f}%") if pct else P.fmt_bound
        col.metric(title, fmt(c), delta=f"unclipped {fmt(u)}", delta_color="off", **_NO_ARROW,
                   help=f"At these caps, {label_c} (the number) vs unclipped (below it), on {res_c.n_test} held-out "
                   f"sentences; smaller RD and BDP = more private, higher accuracy = more useful. {help_}")

    r = st.columns(4)
    metric(r[0], "RD max (paper)", res_c.rd_paper.max, res_u.rd_paper.max,
           f"Largest Renyi divergence between two sentences' shared draws, in the authors' normalisation (nats per "
           f"latent position; pairs within batches of 16 of the first {N_EVAL} test sentences, outliers with "
           "|z-score| > 0.5 (population std) within a batch set aside, undefined dimensions dropped as the authors' "
           "code does), comparable with the papers' 0.01-1.4. Not a guarantee.")
    metric(r[1], "RD mean (paper)", res_c.rd_paper.mean, res_u.rd_paper.mean,
           "Average over the same pairs (batch means averaged).")
    metric(r[2], "BDP epsilon", res_c.bdp_paper.epsilon, res_u.bdp_paper.epsilon,
           "Bayesian differential privacy budget at delta = 1e-5 from the authors' accountant (scalar blurs, "
           f"moment order 2, subsampling q = 16/{N_EVAL}), the figure the papers report (10.4-22). 10.47 is the "
           "floor reached when every RD is 0. Not a guarantee.")
    metric(r[3], "Accuracy", res_c.accuracy, res_u.accuracy,
           "Share of held-out sentences whose sentiment is predicted correctly (chance = 50 %).", pct=True)
    if not presenter:
        r2 = st.columns(4)
        metric(r2[0], "RD max (exact)", res_c.rd_exact.max, res_u.rd_exact.max,
               f"The exact bound in nats: summed over every token cloud and dimension, the larger of the two "
               f"directions, maximum over all {res_c.rd_exact.n_pairs} pairs of the first {N_EVAL} test sentences. "
               "'infinite' means some pair is not bounded at all: every pair of sentences of different lengths is, "
               "because padded positions get weight exactly 0 in the shared sample, which reveals the length.")
        metric(r2[1], "RD mean (exact)", res_c.rd_exact.mean, res_u.rd_exact.mean,
               "Mean of the exact bound over the same pairs (infinite if any pair is).")
        metric(r2[2], "BDP epsilon (guarantee)", res_c.bdp.epsilon, res_u.bdp.epsilon,
               "Bayesian DP at delta = 1e-5 from exact divergences of order lambda + 1 (Triastcyn & Faltings 2020), "
               "the guarantee form. It is infinite as soon as one batch of 16 holds two sentences of different "
               "lengths (the sample reveals the length), and where clipping at order lambda does not bound order "
               "lambda + 1.")
        s = res_c.clip_stats
        r2[3].metric("Tokens clipped", f"{100 * max(s.frac_mu, s.frac_alpha):.0f}%",
                     delta=f"mean {100 * s.frac_mu:.0f}%, alpha {100 * s.frac_alpha:.0f}%", delta_color="off",
                     help="Share of token clouds whose centre was shrunk (mean) or whose weight was clamped (alpha); "
                     "the blur rules act per dimension, see the posterior-parameters tab.", **_NO_ARROW)
    verdict = [headline_verdict(res_c, res_u, label_c)]
    if res_c.nan_count or res_u.nan_count:
        st.warning(f"Numerical failures: {res_c.nan_count} NaN values with clipping, {res_u.nan_count} without.",
                   icon=":material/warning:")

    tabs = st.tabs(["Privacy bound", "Utility", "Posterior parameters", "Sentence inspector", "Export"])
    shown_figures: list = []

    def _shown(caption: str, fig):
        """Keep each figure drawn on screen for the report (sized to share the first screen with the headline)."""
        fig.update_layout(height=FIGURE_HEIGHT[presenter])
        if fig.layout.legend.orientation == "h":  # a legend below the plot: at the figure's bottom, under the x title
            fig.update_layout(legend=dict(yref="container", yanchor="bottom", y=0.0),
                              margin=dict(b=max(int(fig.layout.margin.b or 0), 130)))
        if presenter:
            fig.update_layout(font=dict(size=17))
        shown_figures.append((caption, fig))
        return fig

    with tabs[0]:
        form_slot = st.empty()  # the figure first (first screen); its form switch is drawn under it
        form = ss.get("nvdp_form", "paper")
        rc, ru = (res_c.rd_paper, res_u.rd_paper) if form == "paper" else (res_c.rd_exact, res_u.rd_exact)
        notes = None
        if form == "paper":
            notes = {label_c: f"(reported after the authors' outlier filter: max {P.fmt_bound(rc.max)})",
                     "unclipped": f"(reported after the authors' outlier filter: max {P.fmt_bound(ru.max)})"}
        # the headline comparison (issue 14): the same pairs under both models, in both forms of the bound
        st.plotly_chart(_shown("Clipped vs unclipped on the same pairs",
                               P.paired_figure([paired_comparison(res_c.rd_paper, res_u.rd_paper),
                                                paired_comparison(res_c.rd_exact, res_u.rd_exact)],
                                               kind=ss.get("nvdp_headline_kind", "scatter"), label=label_c)),
                        config=CFG, key="nvdp_fig_headline")
        if verdict:  # under the figure, so that the headline numbers and the figure share the first screen
            st.markdown(" ".join(verdict))
        st.radio("Headline view", ["scatter", "diff"], horizontal=True, key="nvdp_headline_kind",
                 format_func={"scatter": "each pair: clipped vs unclipped",
                              "diff": "distribution of the per-pair difference"}.get,
                 help="The same pairs of test sentences under both models, in both forms of the bound. Below the "
                 "diagonal (left of 0): clipping makes that pair harder to tell apart.")
        st.plotly_chart(_shown("Privacy bound: RD over sentence pairs",
                               P.rd_distribution_figure({label_c: rc.values, "unclipped": ru.values}, form=form, notes=notes)),
                        config=CFG, key="nvdp_fig_rd")
        form_slot = st.container()
        form_slot.radio("Form of the bound", ["paper", "exact"], horizontal=True, **persist("nvdp_form"),
                        format_func={"paper": "paper protocol (comparable with the papers)",
                                     "exact": f"guarantee (exact, nats, all pairs of {N_EVAL} sentences)"}.get)
        def col(rr):
            return [P.fmt_bound(rr.rd_paper.max), P.fmt_bound(rr.rd_paper.mean), P.fmt_bound(rr.rd_exact.max),
                    P.fmt_bound(rr.rd_exact.mean), f"{rr.rd_exact.n_inf} of {rr.rd_exact.n_pairs}",
                    P.fmt_bound(rr.bdp_paper.epsilon), P.fmt_bound(rr.bdp.epsilon)]

        table = pd.DataFrame({"": ["RD max, paper protocol", "RD mean, paper protocol", "RD max, exact (nats)",
                                   "RD mean, exact (nats)", "pairs with an infinite exact bound",
                                   "BDP epsilon, papers' figure (delta 1e-5)", "BDP epsilon, guarantee (delta 1e-5)"],
                              label_c: col(res_c), "unclipped": col(res_u)})
        st.dataframe(table, hide_index=True, width="stretch")
        if st.toggle("BDP epsilon over Renyi orders (tightest order; why the guarantee is infinite)",
                     key="nvdp_order_curve"):
            with st.spinner("Evaluating both forms at six orders ..."):
                cur = _orders(mkey, which, json.dumps(clip.to_dict(), sort_keys=True), models, data)
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
            st.latex(r"D_\lambda(P\,\|\,Q) = \frac{1}{\lambda-1}\ln \int p^\lambda q^{1-\lambda}")
            st.latex(r"\mathrm{RD}(a,b) \le D_\lambda\big(\mathrm{Dir}(\alpha^a)\,\|\,\mathrm{Dir}(\alpha^b)\big)"
                     r" + \sum_{k}\sum_{d} D_\lambda\big(\mathcal N(\mu^a_{kd},\sigma^{a\,2}_{kd})\,\|\,"
                     r"\mathcal N(\mu^b_{kd},\sigma^{b\,2}_{kd})\big)")
            st.latex(r"D_\lambda\big(\mathcal N(m_a,s_a^2)\|\mathcal N(m_b,s_b^2)\big) = "
                     r"\frac{\lambda (m_a-m_b)^2}{2 s^2} + \frac{1}{1-\lambda}\ln\frac{s}{s_a^{1-\lambda}s_b^{\lambda}},"
                     r"\quad s^2=\lambda s_b^2+(1-\lambda)s_a^2 > 0")
            st.latex(r"\mu \leftarrow \mu\,\min\!\left(1,\tfrac{C_\mu}{\|\mu\|_2}\right),\quad "
                     r"\sigma \leftarrow \max\!\left(\sigma, \sqrt{\tfrac{\lambda-1}{\lambda}}\right),\quad "
                     r"\alpha \leftarrow \operatorname{clamp}(\alpha, \alpha_{\min}, \alpha_{\max})")
            st.latex(r"\varepsilon_{\mathrm{BDP}} = \frac{\sum_t c_t - \ln\!\big(\delta - (1-\text{conf}^B)\big)}{\lambda},"
                     r"\quad c_t = \ln \widehat{\mathbb E}_{\text{pairs in batch }t}\big[e^{\lambda D}\big]"
                     r" \text{ (Student-t upper bound)}")
            st.caption("Clipped means lie within C_mu of the prior's centre 0, so (m_a - m_b)^2 summed over dims is "
                       "at most 4 C_mu^2; the blur floor keeps s^2 > 0 against the prior's blur 1.")

    with tabs[1]:
        hist = {label_c: [h["val_accuracy"] for h in models[which].history],
                "unclipped": [h["val_accuracy"] for h in models["unclipped"].history]}
        if which == "unclipped":
            hist = {"unclipped": hist["unclipped"]}
        st.plotly_chart(_shown("Utility: held-out accuracy", P.accuracy_figure(
            {label_c: res_c.accuracy, "unclipped": res_u.accuracy}, hist, n_test=res_c.n_test)), config=CFG, key="nvdp_fig_acc")
        with st.expander("What this shows, and what to try"):
            st.markdown(
                "Left: the share of held-out sentences whose sentiment the classifier gets right when it only sees "
                "the shared draw (one random draw per sentence, seeded). Right: accuracy on the validation "
                "sentences after each training epoch (the best epoch is kept).\n\n"
                "The paper reports that clipping keeps or improves accuracy while tightening the bound. "
                "Clipping *at release* (right-hand option of *Apply the sliders to*) changes the draws the "
                "classifier was not trained on, so it can cost more accuracy than training with the caps.\n\n"
                + hint("retrain"))

    with tabs[2]:
        d = res_c.distributions
        st.plotly_chart(_shown("Posterior parameters before and after clipping", P.posterior_histograms_figure(
                                                      d["before"], d["after"], C_mu=clip.C_mu, sigma_min=clip.sigma_min,
                                                      sigma_max=clip.sigma_max, alpha_min=clip.alpha_min,
                                                      alpha_max=clip.alpha_max, fractions=res_c.clip_stats.to_dict())),
                        config=CFG, key="nvdp_fig_post")
        s = res_c.clip_stats
        st.caption(f"{s.n_components} token clouds of {res_c.n_test} test sentences ({TARGETS[ss['nvdp_target']]}). "
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

    with tabs[3]:
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
                ins = _inspect(mkey, which, json.dumps(clip.to_dict(), sort_keys=True), ss["nvdp_sent_a"], ss["nvdp_sent_b"],
                               models, settings.max_length)
        except (ValueError, TypeError) as exc:
            st.error(f"**Cannot inspect these sentences.** {exc}", icon=":material/error:")
        if ins is not None:
            m1, m2, m3 = st.columns(3)
            m1.metric("RD bound between A and B (exact)", P.fmt_bound(ins.rd_exact),
                      delta=f"unclipped {P.fmt_bound(ins.rd_exact_unclipped)}", delta_color="off", **_NO_ARROW,
                      help=f"max of D(A||B) = {P.fmt_bound(ins.rd_forward)} and D(B||A) = {P.fmt_bound(ins.rd_backward)} "
                      "nats, summed over token clouds and dimensions.")
            m2.metric("RD bound (paper protocol)", P.fmt_bound(ins.rd_paper),
                      delta=f"unclipped {P.fmt_bound(ins.rd_paper_unclipped)}", delta_color="off", **_NO_ARROW,
                      help="The authors' normalised figure for the ordered pair (A, B) (no outlier filter for one pair).")
            changed = sum(int((t["clipped"] != "").sum()) for t in ins.components)
            total = sum(len(t) - 1 for t in ins.components)
            m3.metric("Tokens touched by the caps", f"{changed} of {total}")
            st.plotly_chart(_shown("Sentence inspector: A vs B", P.inspector_figure(
                                ins.components, ("A", "B"), C_mu=clip.C_mu, alpha_max=clip.alpha_max)),
                            config=CFG, key="nvdp_fig_inspect")
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

    with tabs[4]:
        summ = pd.DataFrame([{"model": label_c, **res_c.summary()}, {"model": "unclipped", **res_u.summary()}])
        settings_out = {
            "data": ({"source": "uploaded CSV (texts not included)", "n_rows": len(data.sentences),
                      "classes": user["classes"]} if user is not None else
                     {"source": "bundled sentiment sentences", "models": "shipped" if is_bundled else "trained here"}),
            "settings": settings.to_dict(),
            "applied_clipping": clip.to_dict(),
            "apply_to": ss["nvdp_target"],
            "protocol": PROTOCOL.to_dict(),
            "n_test": res_c.n_test,
            "diagnostics": summ.to_dict(orient="records"),
            "versions": _versions(),
        }
        from engine.figures.report import safe_csv
        from ui.nvdp_report import nvdp_report_html

        cli_lines = [X.cli_command(settings, model_dir="artifacts/nvdp/clipped"),
                     X.cli_command(settings, ClipConfig(enabled=False), model_dir="artifacts/nvdp/unclipped")]
        report = functools.partial(
            nvdp_report_html, label_c=label_c, res_c=res_c, res_u=res_u, figures=list(shown_figures), bounds=table,
            settings={**settings.to_dict(), "applied clipping": json.dumps(clip.to_dict()), "apply to": ss["nvdp_target"],
                      "sentence A": ss.get("nvdp_sent_a", ""), "sentence B": ss.get("nvdp_sent_b", "")},
            commands=cli_lines)
        st.download_button("Download report (HTML)", report, file_name="nvdp_report.html", mime="text/html",
                           key="nvdp_dl_report", type="primary", icon=":material/summarize:",
                           help="One self-contained HTML file: headline numbers, the figures (interactive, no "
                           "network needed), settings, privacy bounds, data source and licence, and the commands.")
        e1, e2 = st.columns(2)
        e1.download_button("Download diagnostics (CSV)", safe_csv(summ), file_name="nvdp_diagnostics.csv",
                           mime="text/csv", key="nvdp_dl_csv",
                           help="One row per model: accuracy, RD max/mean in both forms, BDP epsilons, clipped fractions.")
        e2.download_button("Download settings and diagnostics (JSON)", json.dumps(settings_out, indent=2, default=float),
                           file_name="nvdp_settings.json", mime="application/json", key="nvdp_dl_json",
                           help="Every setting, the seed, the live sizes and the package versions.")
        st.markdown("Train the two models from a terminal (each prints accuracy, both RD forms and BDP):")
        st.code("\n".join(cli_lines), language="bash", wrap_lines=True)
        ev_model = "artifacts/nvdp/clipped" if which == "clipped" else "artifacts/nvdp/unclipped"
        st.markdown("Evaluate with the clipping on the sliders:")
        st.code(f".venv/bin/python -m engine nvdp evaluate --model-dir {ev_model} --clip --C-mu {clip.C_mu:.10g} "
                f"--alpha-min {clip.alpha_min:.10g} --alpha-max {clip.alpha_max:.10g} --renyi-order {clip.renyi_order:g} "
                f"--seed {settings.seed} --split-seed {settings.split_seed}"
                + (f" --n-sentences {settings.n_sentences}" if settings.n_sentences else "") + " --json",
                language="bash", wrap_lines=True)
        notes = [f"The CLI, the results script and this page use one protocol (bounds on the first {N_EVAL} test "
                 f"sentences, accuracy on all {res_c.n_test}): the same model and clipping give the same numbers."]
        if clip.sigma_max is not None or settings.train_clip.sigma_max is not None:
            notes.append("The CLI has no flag for the sigma cap; its runs clip sigma only from below.")
        if settings.n_sentences:
            notes.append(f"This page runs on a subset of {settings.n_sentences} sentences (NVDP_PAGE_N_SENTENCES); "
                         "the command above passes the same --n-sentences.")
        for n in notes:
            st.caption(f":material/info: {n}")
        st.caption("Each figure has a camera button (top right, on hover) that saves a PNG at 3x resolution.")

# URL: settings that differ from the defaults (a shared link reproduces the view)
want = {}
for name, (key, _) in URL.items():
    v = ss.get(key)
    if v != NVDP_DEFAULTS[key]:
        want[name] = ("1" if v else "0") if isinstance(v, bool) else (f"{v:g}" if isinstance(v, float) else str(v))
if {k: st.query_params[k] for k in st.query_params} != want:
    st.query_params.from_dict(want)
