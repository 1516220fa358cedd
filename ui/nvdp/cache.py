"""The NVDP page's cached engine calls: the model pair, the live evaluators, bounds, order curves, the inspector.

Models of the bundled sentences go through Streamlit's process-wide caches (``st.cache_resource`` for
objects that should not be pickled on every rerun, ``st.cache_data`` for small values), keyed by the
model key and the settings. Models trained on a user's uploaded texts have keys starting ``user:``;
everything computed from them stays in this browser session (:func:`ui.nvdp.live.user_store`),
never in the process-wide caches and never on disk.
"""

from __future__ import annotations

import json

import streamlit as st

from engine.nvdp import explore as X
from engine.nvdp.clipping import ClipConfig
from ui.nvdp import live as L
from ui.nvdp.state import PROTOCOL

ss = st.session_state


@st.cache_resource(max_entries=6, show_spinner=False)
def pair(key: str, _settings: X.ExploreSettings, bundled: bool):
    """The (data, models) pair of ``_settings``: the shipped models (``bundled``) or the disk cache's."""
    return X.load_or_train(_settings, use_bundled=bundled)


@st.cache_data(max_entries=8, show_spinner=False)
def exists(key: str, _settings: X.ExploreSettings, nonce: int, bundled: bool) -> bool:
    """Whether the two models of ``_settings`` exist (``nonce`` changes after a training, to look again)."""
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
    """The bounds of one clipping, without the accuracy (:func:`with_accuracy` adds it)."""
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
def inspect_pair(key: str, which: str, clip_json: str, a: str, b: str, _models, max_length: int) -> X.PairInspection:
    """The sentence inspector's comparison of ``a`` and ``b`` under ``_models[which]`` and the clipping."""
    return X.inspect_pair(_models[which], a, b, ClipConfig.from_dict(json.loads(clip_json)), max_length=max_length)


_user_store, _user_live = L.user_store, L.user_live


def rule_effects(key: str, clip_json: str, models, data) -> dict:
    """:func:`engine.nvdp.explore.rule_effects` of the unclipped model's posteriors at ``clip_json`` (memoised per key)."""
    memo = ss.setdefault("_nvdp_rule_effects", {})
    k = (key, clip_json)
    if k not in memo:
        live = evaluator(key, "unclipped", models, data)
        memo.clear()
        memo[k] = X.rule_effects(live.raw, ClipConfig.from_dict(json.loads(clip_json)), PROTOCOL)
    return memo[k]


def c_mu_range(key, which, models, data):
    """The C_mu slider's range: the observed lengths of the cloud centres (:func:`engine.nvdp.explore.mu_norm_range`)."""
    if key.startswith("user:"):
        return X.mu_norm_range(_user_live(key, which, models, data).raw)
    return _mu_range(key, which, models, data)


def evaluate(key, which, clip_json, models, data, seed):
    """The bounds of one clipping (no accuracy): process-wide cache, or this session's store for uploads."""
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


def evaluator(key, which, models, data) -> X.LiveEvaluator:
    """The live evaluator of ``models[which]`` (this session's own for uploaded texts)."""
    return _user_live(key, which, models, data) if key.startswith("user:") else _live(key, which, models, data)


def with_accuracy(key, which, res, models, data, *, now: bool = True):
    """``res`` with its accuracy: now (``now``: memoised, waited for or computed) or only if already known."""
    return L.with_accuracy(evaluator(key, which, models, data), key, which, res, now=now)


def orders(key, which, clip_json, models, data):
    """BDP epsilon of both forms over the Renyi orders (:func:`engine.nvdp.order_curve.bdp_order_curve`)."""
    if not key.startswith("user:"):
        return _order_curve(key, which, clip_json, models, data)
    from engine.nvdp.order_curve import bdp_order_curve

    live = _user_live(key, which, models, data)
    return bdp_order_curve(live.raw, _curve_clip(clip_json), protocol=PROTOCOL, live=live)
