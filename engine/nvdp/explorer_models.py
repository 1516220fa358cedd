"""The explorer's model pair: the encoded sentences and split, training, and the on-disk model cache.

Part of the engine side of the dashboard's NVDP explorer (:mod:`engine.nvdp.explore` lists the
whole surface). :func:`load_or_train` gives the clipped and unclipped NVDP classifiers for a KL
weight and seed, trained once (with a progress callback that can cancel) and cached on disk under
``<NVDP cache dir>/explorer_models/<key>/``. The settings and the sentence selection live one level
down in :mod:`engine.nvdp.explore_settings` (re-exported here), so that this module and
:mod:`engine.nvdp.bundled` share them without importing each other. Nothing here imports Streamlit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from engine.nvdp.bundled import bundled_matches, load_bundled
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.encoder import DEFAULT_MAX_LENGTH, cache_dir, encode_sentences
from engine.nvdp.explore_settings import (  # noqa: F401  (re-exported)
    CAPPED_TRAIN_CLIP,
    DEFAULT_SEEDS,
    DEFAULT_TRAIN_CLIP,
    KL_WEIGHTS,
    ExploreData,
    ExploreSettings,
    ProgressFn,
    _select,
    select_sentences,
)

__all__ = [
    "ExploreSettings",
    "ExploreData",
    "KL_WEIGHTS",
    "LIVE_N_RD",
    "LIVE_N_BDP",
    "DEFAULT_TRAIN_CLIP",
    "CAPPED_TRAIN_CLIP",
    "DEFAULT_SEEDS",
    "encode_training_split",
    "load_data",
    "select_sentences",
    "select_split",
    "train_model",
    "models_dir",
    "cached_models_exist",
    "load_or_train",
    "cli_command",
]

#: Live-path sizes of the dashboard: the exact all-pairs bound on the first LIVE_N_RD test sentences
#: (1,128 pairs), the paper-protocol bound and both BDP figures on the first LIVE_N_BDP (8 eval
#: batches of 16, 960 within-batch pairs), so that a slider move answers in about a second.
LIVE_N_RD = 48
LIVE_N_BDP = 128

def encode_training_split(settings: ExploreSettings, progress: ProgressFn | None = None):
    """Token states of exactly the training and validation sentences of ``settings`` (one encoding call).

    The shipped models and the results grid are trained on these (``scripts/make_nvdp_models.py``,
    ``scripts/nvdp_experiment.py``), so a model of the grid with the shipped settings is the shipped one.

    Returns
    -------
    tr_states, tr_y, va_states, va_y : TokenStates, ndarray, TokenStates, ndarray
    """
    sentences, labels, tr, va, _ = _select(settings)
    rows = np.concatenate([tr, va])
    states = encode_sentences([sentences[i] for i in rows], max_length=settings.max_length, progress=progress)
    return (states.subset(np.arange(len(tr))), labels[tr], states.subset(np.arange(len(tr), len(rows))), labels[va])


def select_split(*, n_sentences: int | None = None, split_seed: int = 0, n_train: int | None = None,
                 max_length: int = DEFAULT_MAX_LENGTH, progress: ProgressFn | None = None):
    """Encoded sentences and the split exactly as the page selects them (for the CLI and scripts).

    Returns ``(states, labels, train_idx, val_idx, test_idx)``; ``n_sentences`` None uses all
    3,000 sentences. Same selection as :func:`load_data` with these settings.
    """
    settings = ExploreSettings(n_sentences=n_sentences, split_seed=split_seed, n_train=n_train, max_length=max_length)
    data = load_data(settings, progress=progress)
    return data.states, data.labels, data.train_idx, data.val_idx, data.test_idx


def load_data(settings: ExploreSettings, progress: ProgressFn | None = None) -> ExploreData:
    """Sentences, labels, token states (encoded once, cached on disk by the encoder) and the split.

    Parameters
    ----------
    settings : ExploreSettings
    progress : callable(fraction, message), optional
        Forwarded to the encoder (called per encoded batch; a cached load reports 1.0 at once).

    Returns
    -------
    ExploreData
    """
    sentences, labels, tr, va, te = _select(settings)
    states = encode_sentences(sentences, max_length=settings.max_length, progress=progress)
    return ExploreData(sentences, labels, states, tr, va, te)


def models_dir(settings: ExploreSettings, data_key: str, which: str) -> Path:
    """Folder of one cached model: ``<cache_dir()>/explorer_models/<key>/unclipped`` or ``.../clipped-<clip key>``.

    ``<key>`` is the first 24 hex digits of :meth:`ExploreSettings.key` without the training
    clipping; the clipped model's folder adds 12 hex digits of the full key, so retraining the
    clipped model with other clipping settings reuses the unclipped one.
    """
    if which not in ("clipped", "unclipped"):
        raise ValueError(f"which must be 'clipped' or 'unclipped', got {which!r}")
    root = cache_dir() / "explorer_models" / settings.key(data_key, with_clip=False)[:24]
    return root / "unclipped" if which == "unclipped" else root / f"clipped-{settings.key(data_key)[:12]}"


def _data_key_without_encoding(settings: ExploreSettings) -> str:
    from engine.nvdp.encoder import _cache_key

    sentences, *_ = _select(settings)
    return _cache_key(sentences, settings.max_length)


def cached_models_exist(settings: ExploreSettings, *, use_bundled: bool = True) -> bool:
    """True when both models of ``settings`` are on disk (the page then loads instead of training).

    With ``use_bundled`` the shipped models count when ``settings`` are theirs
    (:func:`engine.nvdp.bundled.bundled_matches`).
    """
    if use_bundled and bundled_matches(settings):
        return True
    key = _data_key_without_encoding(settings)
    return all(_saved(models_dir(settings, key, w)) for w in ("clipped", "unclipped"))


def _saved(d: Path) -> bool:
    return (d / "model.pt").is_file() and (d / "config.json").is_file()


def load_or_train(
    settings: ExploreSettings,
    *,
    progress: ProgressFn | None = None,
    data: ExploreData | None = None,
    use_bundled: bool = True,
) -> tuple[ExploreData, dict]:
    """The clipped and unclipped models for ``settings``: bundled, else from the disk cache, else trained and saved.

    Parameters
    ----------
    settings : ExploreSettings
    progress : callable(fraction, message) -> bool or None, optional
        Overall progress in [0, 1] with a message (encoding 0-10 %, unclipped model 10-55 %,
        clipped model 55-100 %). Returning False cancels (:class:`engine.nvdp.training.TrainingCancelled`);
        a model finished before the cancel stays cached.
    data : ExploreData, optional
        Already loaded data for ``settings`` (skips :func:`load_data`).
    use_bundled : bool, default True
        When ``settings`` are those of the shipped models (``assets/nvdp``), load them and encode
        only the test sentences (:func:`engine.nvdp.bundled.load_bundled`); False trains (or loads
        from the cache) models of this machine instead.

    Returns
    -------
    data : ExploreData
    models : dict
        ``{"unclipped": TrainedNVDP, "clipped": TrainedNVDP}``.

    Raises
    ------
    engine.nvdp.training.TrainingCancelled
        When ``progress`` returns False.
    """
    from engine.nvdp.training import TrainingCancelled, load_trained, save_trained

    def stage(lo, hi, prefix):
        if progress is None:
            return None
        clock = EtaClock()

        def cb(fraction, message):
            left = clock.remaining(float(fraction))
            eta = "" if left is None else f", {_fmt_left(left)} left for this step"
            out = progress(lo + (hi - lo) * float(fraction), f"{prefix}: {message}{eta}")
            if out is False:
                raise TrainingCancelled(message)
            return out

        return cb

    if data is None and use_bundled and bundled_matches(settings):
        return load_bundled(settings, progress=stage(0.0, 1.0, "encoding the evaluation sentences with all-MiniLM-L6-v2"))
    if data is None:
        data = load_data(settings, progress=stage(0.0, 0.1, "encoding the sentences with all-MiniLM-L6-v2"))
    tr_states, tr_y = data.split("train")
    va_states, va_y = data.split("val")
    models = {}
    for which, (lo, hi) in (("unclipped", (0.1, 0.55)), ("clipped", (0.55, 1.0))):
        d = models_dir(settings, data.states.key, which)
        if _saved(d):
            models[which] = load_trained(d)
            if progress is not None:
                progress(hi, f"{which} model loaded from the cache")
            continue
        trained = train_model(settings, which, tr_states, tr_y, va_states, va_y,
                              progress=stage(lo, hi, f"training the {which} model"))
        tmp = d.with_name(f"{d.name}.tmp{os.getpid()}")
        save_trained(trained, tmp)
        (tmp / "settings.json").write_text(json.dumps(settings.to_dict(), indent=2, default=float))
        if d.exists():  # another process finished first; keep theirs
            models[which] = load_trained(d)
        else:
            os.replace(tmp, d)
            models[which] = trained
    return data, models


class EtaClock:
    """Remaining time of a task from its measured progress: elapsed x (1 - f) / f.

    >>> c = EtaClock(start=0.0)
    >>> c.remaining(0.25, now=10.0)
    30.0
    >>> c.remaining(0.0, now=10.0) is None
    True
    """

    def __init__(self, start: float | None = None):
        import time

        self._time = time.perf_counter
        self.start = self._time() if start is None else float(start)

    def remaining(self, fraction: float, now: float | None = None) -> float | None:
        """Seconds left at ``fraction`` done (None before any progress or once done)."""
        now = self._time() if now is None else now
        if not (0.0 < fraction < 1.0):
            return None
        return (now - self.start) * (1.0 - fraction) / fraction


def _fmt_left(s: float) -> str:
    return f"about {s:.0f} s" if s < 90 else f"about {s / 60:.0f} min"


def train_model(settings: ExploreSettings, which: str, tr_states, tr_y, va_states, va_y, *, progress=None):
    """Train the ``"clipped"`` or ``"unclipped"`` model of ``settings`` (the page's, the bundle script's).

    The clipped model is trained with ``settings.train_clip``, the unclipped one without clipping;
    everything else (KL weight, seed, epochs, lr, batch size, patience) from ``settings``.
    """
    from engine.nvdp.training import train_nvdp

    if which not in ("clipped", "unclipped"):
        raise ValueError(f"which must be 'clipped' or 'unclipped', got {which!r}")
    clip = settings.train_clip if which == "clipped" else ClipConfig(enabled=False)
    return train_nvdp(
        tr_states, tr_y, val_states=va_states, val_labels=va_y, kl_weight=settings.kl_weight, clip=clip,
        seed=settings.seed, epochs=settings.epochs, lr=settings.lr, batch_size=settings.batch_size,
        patience=settings.patience, progress=progress, lr_schedule=settings.lr_schedule,
        warmup_fraction=settings.warmup_fraction,
    )


def cli_command(settings: ExploreSettings, clip: ClipConfig | None = None, *, model_dir: str = "artifacts/nvdp/run0") -> str:
    """The ``python -m engine nvdp train ...`` command that trains the clipped model of ``settings``.

    ``clip`` defaults to ``settings.train_clip``. The CLI has no flag for ``sigma_max`` or
    ``n_sentences``; the page says so next to the command.

    >>> print(cli_command(ExploreSettings()))  # doctest: +NORMALIZE_WHITESPACE
    .venv/bin/python -m engine nvdp train --kl-weight 0.01 --clip --C-mu 5 --alpha-min 0 --alpha-max 1
      --renyi-order 1.1 --seed 0 --split-seed 0 --epochs 10 --n-train 1000 --patience 3 --lr 0.001 --batch-size 32
      --model-dir artifacts/nvdp/run0
    """
    clip = settings.train_clip if clip is None else clip
    g = lambda x: f"{x:.10g}"  # noqa: E731  (enough digits to reproduce the value)
    parts = [".venv/bin/python -m engine nvdp train", f"--kl-weight {g(settings.kl_weight)}",
             "--clip" if clip.enabled else "--no-clip"]
    if clip.enabled:
        parts += [f"--C-mu {g(clip.C_mu)}", f"--alpha-min {g(clip.alpha_min)}", f"--alpha-max {g(clip.alpha_max)}",
                  f"--renyi-order {g(clip.renyi_order)}"]
    parts += [f"--seed {settings.seed}", f"--split-seed {settings.split_seed}", f"--epochs {settings.epochs}"]
    if settings.n_train is not None:
        parts.append(f"--n-train {settings.n_train}")
    parts += [f"--patience {settings.patience}", f"--lr {g(settings.lr)}", f"--batch-size {settings.batch_size}"]
    if settings.lr_schedule != "constant":
        parts.append(f"--lr-schedule {settings.lr_schedule} --warmup-fraction {g(settings.warmup_fraction)}")
    parts.append(f"--model-dir {model_dir}")
    return " ".join(parts)
