"""NVDP explorer: clipped vs unclipped NVDP sentence embeddings on real sentences.

Thin page: it reads widgets, calls ``engine.nvdp.explore`` (models trained once and cached on disk;
post-hoc clipping of the trained posteriors; the sentence inspector), caches the results by
(model key, settings), draws figures from ``engine.plots_nvdp`` and explains them. It computes no
privacy quantity itself.

Live sliders (issue 14 item 7). A move of C_mu, alpha_min, alpha_max or the Renyi order first
computes the headline's bounds (RD and BDP, both forms, both models); the accuracy of the new caps
(the model re-run after the bottleneck) then starts on a worker thread while the page draws the
bounds and the figure of the open tab, its metric reading "computing ..." (never an accuracy of
other caps); the run ends when it is drawn, and gives way at once to a newer move, stopping the
superseded job (ui/nvdp_live.py). Only the open
tab is built (``st.tabs(..., on_change="rerun")``); Utility and Export wait for the accuracy. Every number is that of ``python -m
engine nvdp evaluate`` (tests/test_nvdp_explore.py). Timings: ``bench/bench_nvdp_page.py``.

Small settings for tests and demos come from the environment (``NVDP_PAGE_N_SENTENCES``,
``NVDP_PAGE_EPOCHS``, ``NVDP_PAGE_N_TRAIN``; the model cache lives in ``NVDP_CACHE_DIR``), see
:meth:`engine.nvdp.explore.ExploreSettings.from_env`.
"""

from __future__ import annotations

import functools
import inspect
import json
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
from ui import nvdp_live as L
from ui.nvdp_parts import INTRO, choice, float_in, int_in, nvdp_formulas
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


#: URL name -> (session key, parse). A shared link reproduces the view.
URL = {
    "kl": ("nvdp_kl_weight", choice(X.KL_WEIGHTS)),
    "seed": ("nvdp_seed", int_in(0, 99)),
    "C_mu": ("nvdp_C_mu", float_in(0.1, 100.0)),
    "alpha_min": ("nvdp_alpha_min", float_in(0.0, 2.0)),
    "alpha_max": ("nvdp_alpha_max", float_in(0.05, 5.0)),
    "renyi_order": ("nvdp_renyi_order", choice(RENYI_ORDERS)),
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
    """The bounds of one clipping, without the accuracy (:func:`_with_accuracy` adds it)."""
    return _live(key, which, _models, _data).evaluate(ClipConfig.from_dict(json.loads(clip_json)), seed=seed,
                                                      protocol=PROTOCOL, with_accuracy=False)


def _curve_clip(clip_json: str) -> ClipConfig:
    """The clipping of an order curve's key (its order is null: the curve sets each of its own)."""
    return ClipConfig.from_dict({k: v for k, v in json.loads(clip_json).items() if k != "renyi_order"})


@st.cache_resource(max_entries=16, show_spinner=False)
def _order_curve(key: str, which: str, clip_json: str, _models, _data) -> dict:
    from engine.nvdp.order_curve import bdp_order_curve

    live = _live(key, which, _models, _data)
    return bdp_order_curve(live.raw, _curve_clip(clip_json), protocol=PROTOCOL, live=live)


@st.cache_data(max_entries=32, show_spinner=False)
def _inspect(key: str, which: str, clip_json: str, a: str, b: str, _models, max_length: int) -> X.PairInspection:
    return X.inspect_pair(_models[which], a, b, ClipConfig.from_dict(json.loads(clip_json)), max_length=max_length)


_user_store, _user_live = L.user_store, L.user_live


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
                                                                  seed=seed, protocol=PROTOCOL, with_accuracy=False)
    return store[k]


def _evaluator(key, which, models, data) -> X.LiveEvaluator:
    return _user_live(key, which, models, data) if key.startswith("user:") else _live(key, which, models, data)


def _with_accuracy(key, which, res, models, data, *, now: bool = True):
    """``res`` with its accuracy: now (``now``: memoised, waited for or computed) or only if already known."""
    return L.with_accuracy(_evaluator(key, which, models, data), key, which, res, now=now)


def _orders(key, which, clip_json, models, data):
    if not key.startswith("user:"):
        return _order_curve(key, which, clip_json, models, data)
    from engine.nvdp.order_curve import bdp_order_curve

    live = _user_live(key, which, models, data)
    return bdp_order_curve(live.raw, _curve_clip(clip_json), protocol=PROTOCOL, live=live)


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
_intro.markdown(INTRO)

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
        # in the controls' column, so that the headline numbers and the figure share the first screen
        ctrl.caption("Shipped models (assets/nvdp, checksums verified; `scripts/make_nvdp_models.py` reproduces "
                     "them bit for bit). Only the evaluation sentences were encoded on this machine.")
        ctrl.button("Retrain here", on_click=_train_here, key="nvdp_train_here",
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
    clip_json = json.dumps(clip.to_dict(), sort_keys=True)
    # Live sliders (see the docstring): the bounds now, the accuracy of the new caps at the end of the run;
    # this session's accuracy jobs for settings it has left stop now.
    L.retain({L.job_key(_evaluator(mkey, which, models, data), mkey, which, clip, settings.seed),
              L.job_key(_evaluator(ukey, "unclipped", models, data), ukey, "unclipped", unclip, settings.seed)})
    with st.spinner("Applying the clipping to the test sentences ..."):
        res_c = _with_accuracy(mkey, which, _evaluate(mkey, which, clip_json, models, data, settings.seed),
                               models, data, now=False)
        res_u = _with_accuracy(ukey, "unclipped", _evaluate(ukey, "unclipped", json.dumps(unclip.to_dict(), sort_keys=True),
                                                            models, data, settings.seed), models, data, now=False)
    label_c = "clipped" if which == "clipped" else "clipped at release"
    # the worker starts on the accuracy now and computes while this thread draws the headline and the figure
    L.start([(_evaluator(mkey, which, models, data), mkey, which, res_c),
             (_evaluator(ukey, "unclipped", models, data), ukey, "unclipped", res_u)])

    def _complete():  # both accuracies, on the worker thread; a newer move stops this run meanwhile (ui/nvdp_live.py)
        global res_c, res_u
        res_c, res_u = L.complete_all([(_evaluator(mkey, which, models, data), mkey, which, res_c),
                                       (_evaluator(ukey, "unclipped", models, data), ukey, "unclipped", res_u)])

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
    acc_slot = r[3].empty()

    def show_accuracy():
        metric(acc_slot, "Accuracy", res_c.accuracy, res_u.accuracy,
               "Share of held-out sentences whose sentiment is predicted correctly (chance = 50 %).", pct=True)
        if res_c.nan_count or res_u.nan_count:
            warn_slot.warning(f"Numerical failures: {res_c.nan_count} NaN values with clipping, {res_u.nan_count} "
                              "without.", icon=":material/warning:")

    if res_c.accuracy is None or res_u.accuracy is None:
        acc_slot.metric("Accuracy", "computing ...", delta="for the new caps" if res_u.accuracy is None else
                        f"unclipped {100 * res_u.accuracy:.1f}%", delta_color="off", **_NO_ARROW,
                        help="The model is being re-run on the held-out sentences with the new caps (about a second); "
                        "the bounds beside it are already those of the new caps.")
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
    warn_slot = st.empty()
    verdict_slot = None
    if res_c.accuracy is not None and res_u.accuracy is not None:
        show_accuracy()

    # Only the open tab is built (on_change="rerun" tracks it): a slider move draws the headline and
    # the one figure on screen; the other tabs are built when opened.
    tabs = st.tabs(["Privacy bound", "Utility", "Posterior parameters", "Sentence inspector", "Export"],
                   key="nvdp_tab", on_change="rerun")

    def _sized(fig):
        """Size a figure to share the first screen with the headline (and for a room in presenter mode)."""
        fig.update_layout(height=FIGURE_HEIGHT[presenter])
        if fig.layout.legend.orientation == "h":  # a legend below the plot: at the figure's bottom, under the x title
            fig.update_layout(legend=dict(yref="container", yanchor="bottom", y=0.0),
                              margin=dict(b=max(int(fig.layout.margin.b or 0), 130)))
        if presenter:
            fig.update_layout(font=dict(size=17))
        return fig

    def fig_headline():  # the headline comparison (issue 14): the same pairs under both models, both forms
        return P.paired_figure([paired_comparison(res_c.rd_paper, res_u.rd_paper),
                                paired_comparison(res_c.rd_exact, res_u.rd_exact)],
                               kind=ss.get("nvdp_headline_kind", "scatter"), label=label_c)

    def fig_rd():
        form = ss.get("nvdp_form", "paper")
        rc, ru = (res_c.rd_paper, res_u.rd_paper) if form == "paper" else (res_c.rd_exact, res_u.rd_exact)
        notes = None
        if form == "paper":
            notes = {label_c: f"(reported after the authors' outlier filter: max {P.fmt_bound(rc.max)})",
                     "unclipped": f"(reported after the authors' outlier filter: max {P.fmt_bound(ru.max)})"}
        return P.rd_distribution_figure({label_c: rc.values, "unclipped": ru.values}, form=form, notes=notes)

    def fig_acc():
        hist = {label_c: [h["val_accuracy"] for h in models[which].history],
                "unclipped": [h["val_accuracy"] for h in models["unclipped"].history]}
        if which == "unclipped":
            hist = {"unclipped": hist["unclipped"]}
        return P.accuracy_figure({label_c: res_c.accuracy, "unclipped": res_u.accuracy}, hist, n_test=res_c.n_test)

    def fig_post():
        d = res_c.distributions
        return P.posterior_histograms_figure(d["before"], d["after"], C_mu=clip.C_mu, sigma_min=clip.sigma_min,
                                             sigma_max=clip.sigma_max, alpha_min=clip.alpha_min,
                                             alpha_max=clip.alpha_max, fractions=res_c.clip_stats.to_dict())

    FIGURES = {"nvdp_fig_headline": ("Clipped vs unclipped on the same pairs", fig_headline),
               "nvdp_fig_rd": ("Privacy bound: RD over sentence pairs", fig_rd),
               "nvdp_fig_acc": ("Utility: held-out accuracy", fig_acc),
               "nvdp_fig_post": ("Posterior parameters before and after clipping", fig_post)}

    def chart(key):
        st.plotly_chart(_sized(FIGURES[key][1]()), config=CFG, key=key)

    def bounds_table():
        def col(rr):
            return [P.fmt_bound(rr.rd_paper.max), P.fmt_bound(rr.rd_paper.mean), P.fmt_bound(rr.rd_exact.max),
                    P.fmt_bound(rr.rd_exact.mean), f"{rr.rd_exact.n_inf} of {rr.rd_exact.n_pairs}",
                    P.fmt_bound(rr.bdp_paper.epsilon), P.fmt_bound(rr.bdp.epsilon)]

        return pd.DataFrame({"": ["RD max, paper protocol", "RD mean, paper protocol", "RD max, exact (nats)",
                                  "RD mean, exact (nats)", "pairs with an infinite exact bound",
                                  "BDP epsilon, papers' figure (delta 1e-5)", "BDP epsilon, guarantee (delta 1e-5)"],
                             label_c: col(res_c), "unclipped": col(res_u)})

    def show_verdict():
        if verdict_slot is not None:
            verdict_slot.markdown(headline_verdict(res_c, res_u, label_c))

    def _tab_privacy():
        global verdict_slot
        chart("nvdp_fig_headline")
        verdict_slot = st.empty()  # under the figure, so that the headline numbers and the figure share the first screen
        if res_c.accuracy is not None and res_u.accuracy is not None:
            show_verdict()
        else:
            verdict_slot.caption("The verdict follows with the accuracy of the new caps ...")
        st.radio("Headline view", ["scatter", "diff"], horizontal=True, key="nvdp_headline_kind",
                 format_func={"scatter": "each pair: clipped vs unclipped",
                              "diff": "distribution of the per-pair difference"}.get,
                 help="The same pairs of test sentences under both models, in both forms of the bound. Below the "
                 "diagonal (left of 0): clipping makes that pair harder to tell apart.")
        chart("nvdp_fig_rd")
        st.radio("Form of the bound", ["paper", "exact"], horizontal=True, **persist("nvdp_form"),
                        format_func={"paper": "paper protocol (comparable with the papers)",
                                     "exact": f"guarantee (exact, nats, all pairs of {N_EVAL} sentences)"}.get)
        st.dataframe(bounds_table(), hide_index=True, width="stretch")
        if st.toggle("BDP epsilon over Renyi orders (tightest order; why the guarantee is infinite)",
                     key="nvdp_order_curve"):
            with st.spinner("Evaluating both forms at six orders ..."):
                # the curve re-clips at each of its orders: keyed without the slider's order, so an order move reuses it
                cur = _orders(mkey, which, json.dumps({**clip.to_dict(), "renyi_order": None}, sort_keys=True), models, data)
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

    def _tab_utility():
        with st.spinner("Computing the accuracy of the new caps ..."):
            _complete()
        chart("nvdp_fig_acc")
        with st.expander("What this shows, and what to try"):
            st.markdown(
                "Left: the share of held-out sentences whose sentiment the classifier gets right when it only sees "
                "the shared draw (one random draw per sentence, seeded). Right: accuracy on the validation "
                "sentences after each training epoch (the best epoch is kept).\n\n"
                "The paper reports that clipping keeps or improves accuracy while tightening the bound. "
                "Clipping *at release* (right-hand option of *Apply the sliders to*) changes the draws the "
                "classifier was not trained on, so it can cost more accuracy than training with the caps.\n\n"
                + hint("retrain"))

    def _tab_posterior():
        chart("nvdp_fig_post")
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

    def _tab_inspector():
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
                ins = _inspect(mkey, which, clip_json, ss["nvdp_sent_a"], ss["nvdp_sent_b"], models, settings.max_length)
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
            st.plotly_chart(_sized(P.inspector_figure(ins.components, ("A", "B"), C_mu=clip.C_mu, alpha_max=clip.alpha_max)),
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

    def _tab_export():
        from engine.figures.report import safe_csv
        from ui.nvdp_report import evaluate_command, export_notes, nvdp_report_html, package_versions
        with st.spinner("Computing the accuracy of the new caps ..."):
            _complete()
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
            "versions": package_versions(),
        }

        cli_lines = [X.cli_command(settings, model_dir="artifacts/nvdp/clipped"),
                     X.cli_command(settings, ClipConfig(enabled=False), model_dir="artifacts/nvdp/unclipped")]

        def report_figures():  # built when the report is downloaded: every figure of the page, as shown
            figs = [(cap, _sized(make())) for cap, make in FIGURES.values()]
            if ss.get("nvdp_inspect_on"):
                try:
                    ins = _inspect(mkey, which, clip_json, ss["nvdp_sent_a"], ss["nvdp_sent_b"], models, settings.max_length)
                    figs.append(("Sentence inspector: A vs B", _sized(P.inspector_figure(
                        ins.components, ("A", "B"), C_mu=clip.C_mu, alpha_max=clip.alpha_max))))
                except (ValueError, TypeError):
                    pass  # the inspector tab shows the error
            return figs

        report = functools.partial(
            lambda **kw: nvdp_report_html(figures=report_figures(), bounds=bounds_table(), **kw), label_c=label_c,
            res_c=res_c, res_u=res_u,
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
        st.markdown("Evaluate with the clipping on the sliders:")
        st.code(evaluate_command(settings, clip, which), language="bash", wrap_lines=True)
        notes = export_notes(settings, clip, N_EVAL, res_c.n_test)
        for n in notes:
            st.caption(f":material/info: {n}")
        st.caption("Each figure has a camera button (top right, on hover) that saves a PNG at 3x resolution.")

    for _tab, _body in zip(tabs, (_tab_privacy, _tab_utility, _tab_posterior, _tab_inspector, _tab_export)):
        if _tab.open:
            with _tab:
                _body()

# URL: settings that differ from the defaults (a shared link reproduces the view)
want = {}
for name, (key, _) in URL.items():
    v = ss.get(key)
    if v != NVDP_DEFAULTS[key]:
        want[name] = ("1" if v else "0") if isinstance(v, bool) else (f"{v:g}" if isinstance(v, float) else str(v))
if {k: st.query_params[k] for k in st.query_params} != want:
    st.query_params.from_dict(want)

# The accuracy of the new caps, last (see "Live sliders" above): the bounds and the figure are on screen already.
ss["_nvdp_timing"] = {"answer": time.perf_counter(), "answer_cpu": time.process_time()}  # bench_nvdp_page.py
if res_c.accuracy is None or res_u.accuracy is None:
    _complete()
    show_accuracy()
    show_verdict()
ss["_nvdp_timing"]["done"] = time.perf_counter()
# the unclipped model's bounds at the other orders (fixed per model), while the user reads: an order move then
# computes the clipped model's only
L.prefetch_bounds(_evaluator(ukey, "unclipped", models, data), ukey,
                  [ClipConfig(enabled=False, renyi_order=o) for o in RENYI_ORDERS], PROTOCOL)
