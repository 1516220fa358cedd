"""The NVDP page's two models (unclipped and clipped): shipped, cached on disk, trained here, or on uploaded texts.

:func:`load_models` builds the settings from the controls, then either loads the pair (the shipped
models when they match the settings, else the disk cache) or trains it with a progress bar, a time
estimate and Cancel; uploaded texts go through :func:`ui.nvdp.upload.user_data_flow`. It stops the
script (``st.stop``) until a pair exists, and says which models are shown.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from engine.nvdp import explore as X
from engine.nvdp.bundled import bundled_matches, estimate_seconds, fmt_seconds, fmt_seconds_range
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.training import TrainingCancelled
from ui.nvdp import cache as K
from ui.nvdp.upload import user_data_flow

ss = st.session_state


@dataclass
class Models:
    """The page's model pair and where it came from.

    Attributes
    ----------
    settings : engine.nvdp.explore.ExploreSettings
        Data, training and model settings of the pair.
    user : dict or None
        The session's uploaded-texts pair (name, classes, key, data, models), None for the bundled sentences.
    ckey, ukey : str
        Cache keys of the clipped and the unclipped model (the shipped pair and one trained here differ).
    data : object
        The encoded sentences and their train / validation / test split.
    models : dict
        ``{"clipped": ..., "unclipped": ...}``.
    is_bundled : bool
        Whether the shipped models are shown.
    """

    settings: X.ExploreSettings
    user: dict | None
    ckey: str
    ukey: str
    data: object
    models: dict
    is_bundled: bool


def _cancel() -> None:
    ss["nvdp_cancelled"] = True


def _train_now() -> None:
    ss["nvdp_cancelled"] = False


def _train_here() -> None:
    ss["nvdp_use_bundled"] = False
    ss["nvdp_cancelled"] = False


def _use_bundle() -> None:
    ss["nvdp_use_bundled"] = True


def load_models(ctrl, main, presenter: bool) -> Models:
    """Set up, load or train the two models; stop the script until they exist.

    Parameters
    ----------
    ctrl, main : streamlit containers
        The controls' column (the shipped models' note and "Retrain here" go there) and the results column
        (errors, the training progress and the status).
    presenter : bool
        Presenter mode hides the sidebar note on the models.

    Returns
    -------
    Models
    """
    try:
        train_clip = ClipConfig.from_dict(ss["nvdp_train_clip"])
        settings = X.ExploreSettings.from_env(kl_weight=float(ss["nvdp_kl_weight"]), seed=int(ss["nvdp_seed"]),
                                              train_clip=train_clip,
                                              lr_schedule=str(ss.get("nvdp_lr_schedule", "constant")))
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
        elif not K.exists(pair_key, settings, ss.get("_nvdp_nonce", 0), use_bundled):
            if ss.get("nvdp_cancelled"):
                status.info("Training was cancelled. The page needs the two models (unclipped and clipped) to draw "
                            "anything; a model that finished before the cancel is kept.", icon=":material/pause_circle:")
                status.button("Train now", on_click=_train_now, type="primary", key="nvdp_train_now")
                st.stop()
            with status:
                _train(settings, use_bundled)
            ss["_nvdp_nonce"] = ss.get("_nvdp_nonce", 0) + 1
            st.rerun()
        if user is None:
            ss["nvdp_cancelled"] = False
            with st.spinner("Loading the models and encoding the evaluation sentences (once) ..."):
                data, models = K.pair(pair_key, settings, use_bundled)
        tm = models["clipped"]
        tc = tm.clip
        if user is not None:
            pass
        elif is_bundled:
            est = estimate_seconds(settings)
            # in the controls' column, so that the headline numbers and the figure share the first screen
            ctrl.caption("Shipped models (assets/nvdp, checksums verified; `scripts/make_nvdp_models.py --check` "
                         "retrains them and compares within documented tolerances: another CPU kind moves the weights; "
                         f"{settings.lr_schedule.replace('_', ' ')} learning rate), with the shipped encoder states of the 500 evaluation sentences (encoded here only if that file is missing or does not match).")
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
    return Models(settings=settings, user=user, ckey=ckey, ukey=ukey, data=data, models=models, is_bundled=is_bundled)


def _train(settings: X.ExploreSettings, use_bundled: bool) -> None:
    """Train the two models with a progress bar, a time estimate and Cancel (a cancel reruns the page)."""
    n_desc = (f"{settings.n_sentences} sentences" if settings.n_sentences else "3,000 sentences")
    est = estimate_seconds(settings)
    st.markdown(f"**Training two small models** for KL weight {settings.kl_weight:g}, seed {settings.seed} "
                f"({n_desc}, up to {settings.epochs} epochs, {settings.n_train or 'all'} training sentences): "
                f"estimated {fmt_seconds_range(est['total_min'], est['total'])} (early stopping may end a model after "
                f"{min(settings.epochs, settings.patience + 1)} epochs; from the {est['per_batch']:.3g} CPU seconds per "
                f"batch and {est['per_sentence']:.3g} per encoded sentence measured when the shipped models were made, "
                "one thread, an otherwise idle machine; the bar below updates the estimate as it goes). "
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
        bar.empty()  # done: the bar and its estimate leave the screen
    except TrainingCancelled:
        ss["nvdp_cancelled"] = True
        st.rerun()
    except (ValueError, TypeError, FileNotFoundError) as exc:
        st.error(f"**Training failed.** {exc}", icon=":material/error:")
        st.stop()
