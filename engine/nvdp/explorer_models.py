"""The explorer's model pair: settings, the encoded sentences and split, and the on-disk model cache.

Part of the engine side of the dashboard's NVDP explorer (:mod:`engine.nvdp.explore` lists the
whole surface). :func:`load_or_train` gives the clipped and unclipped NVDP classifiers for a KL
weight and seed, trained once (with a progress callback that can cancel) and cached on disk under
``<NVDP cache dir>/explorer_models/<key>/``. Nothing here imports Streamlit.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.encoder import DEFAULT_MAX_LENGTH, TokenStates, cache_dir, encode_sentences

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

#: Clipping of the explorer's clipped model: the authors' three rules (arXiv:2603.09583) at C_mu = 5
#: (the median ||mu|| of our 384-dim encoder), alpha in [0, 1] (their default alpha_min = 0 and their
#: SST-2 alpha_max = 1), the std floor sqrt((lambda-1)/lambda) at lambda = 1.1, and no std cap. With
#: alpha_min = 0 and no cap the exact Renyi bound of a pair can be infinite; :data:`CAPPED_TRAIN_CLIP`
#: is the named option that keeps every term finite.
DEFAULT_TRAIN_CLIP = ClipConfig(enabled=True, C_mu=5.0, alpha_min=0.0, alpha_max=1.0, renyi_order=1.1, sigma_max=None)

#: The capped variant (not the authors' rules): alpha in [0.1, 1] and the std cap sigma_max = 0.99.
#: alpha_min = 0.1 > ((lambda - 1) / lambda) alpha_max = 0.0909 keeps the Gamma/Dirichlet terms finite;
#: the Gaussian term needs lambda s_b^2 - (lambda - 1) s_a^2 > 0 *strictly*, which with the floor
#: s_b = sqrt((lambda-1)/lambda) means s_a < 1, hence the cap 0.99 (as ``ClipConfig.finite``).
CAPPED_TRAIN_CLIP = ClipConfig(enabled=True, C_mu=5.0, alpha_min=0.1, alpha_max=1.0, renyi_order=1.1, sigma_max=0.99)

#: Seeds of the shipped default pair: the pair of :attr:`ExploreSettings.seed` (0) is the page's live
#: model; every seed's figures are in ``assets/nvdp/seeds.json`` (``scripts/make_nvdp_models.py``).
DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 2)

#: Live-path sizes of the dashboard: the exact all-pairs bound on the first LIVE_N_RD test sentences
#: (1,128 pairs), the paper-protocol bound and both BDP figures on the first LIVE_N_BDP (8 eval
#: batches of 16, 960 within-batch pairs), so that a slider move answers in about a second.
LIVE_N_RD = 48
LIVE_N_BDP = 128

#: KL weights offered by the page (the experiment grid of NVDP.md section 6).
KL_WEIGHTS: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)

_CACHE_VERSION = 1
ProgressFn = Callable[[float, str], object]


def _env_int(name: str, default):
    v = os.environ.get(name)
    if v in (None, ""):
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer; got {v!r}") from None


@dataclass(frozen=True)
class ExploreSettings:
    """Everything that determines the pair of trained models the explorer shows.

    Parameters
    ----------
    kl_weight : float, default 1e-2
        lambda_G = lambda_D, >= 0 (NVDP.md section 2).
    seed : int, default 0
        Training and sampling seed.
    epochs : int, default 10
        Maximum epochs (early stopping with ``patience`` on validation accuracy, the same rule for
        both arms); 10 epochs with patience 3 is the authors' budget.
    n_train : int or None, default 1000
        Random subset of the training split (the CLI's ``--n-train``: ``default_rng(split_seed)``);
        None uses the whole training split.
    n_sentences : int or None, default None
        Use a stratified random subset of this many of the 3,000 sentences (tests, tiny demos);
        None uses all of them (the only setting the CLI reproduces). At least 30.
    split_seed : int, default 0
        Seed of the stratified train / validation / test split (2/3, 1/6, 1/6).
    lr, batch_size, patience : float, int, int
        As in :func:`engine.nvdp.training.train_nvdp` (defaults 1e-3, 32, 3).
    train_clip : ClipConfig
        Clipping the *clipped* model is trained with (``enabled`` must be True); default
        :data:`DEFAULT_TRAIN_CLIP`.
    max_length : int, default 48
        Padded length in word pieces.

    Raises
    ------
    ValueError
        Out-of-range values (named), before any work.
    """

    kl_weight: float = 1e-2
    seed: int = 0
    epochs: int = 10
    n_train: int | None = 1000
    n_sentences: int | None = None
    split_seed: int = 0
    lr: float = 1e-3
    batch_size: int = 32
    patience: int = 3
    train_clip: ClipConfig = field(default_factory=lambda: DEFAULT_TRAIN_CLIP)
    max_length: int = DEFAULT_MAX_LENGTH

    def __post_init__(self):
        if isinstance(self.kl_weight, bool) or not isinstance(self.kl_weight, (int, float)) or not (
            math.isfinite(self.kl_weight) and self.kl_weight >= 0
        ):
            raise ValueError(f"kl_weight must be a finite number >= 0; got {self.kl_weight!r}")
        object.__setattr__(self, "kl_weight", float(self.kl_weight))
        for name, lo in (("seed", 0), ("epochs", 1), ("split_seed", 0), ("batch_size", 1), ("patience", 1), ("max_length", 2)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}; got {v!r}")
            object.__setattr__(self, name, int(v))
        for name, lo in (("n_train", 10), ("n_sentences", 30)):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo):
                raise ValueError(f"{name} must be None or an int >= {lo}; got {v!r}")
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0; got {self.lr!r}")
        if not isinstance(self.train_clip, ClipConfig) or not self.train_clip.enabled:
            raise ValueError("train_clip must be an enabled ClipConfig (the clipped model's training clipping)")

    @classmethod
    def from_env(cls, **overrides) -> "ExploreSettings":
        """Defaults, with ``NVDP_PAGE_EPOCHS``, ``NVDP_PAGE_N_TRAIN`` and ``NVDP_PAGE_N_SENTENCES`` from the
        environment (tests and small demos run the page on tiny settings), then ``overrides``.

        >>> ExploreSettings.from_env(kl_weight=0.1).kl_weight
        0.1
        """
        base = {
            "epochs": _env_int("NVDP_PAGE_EPOCHS", cls.epochs),
            "n_train": _env_int("NVDP_PAGE_N_TRAIN", cls.n_train),
            "n_sentences": _env_int("NVDP_PAGE_N_SENTENCES", None),
        }
        base.update(overrides)
        return cls(**base)

    def to_dict(self) -> dict:
        """JSON-ready dict (``train_clip`` as a dict)."""
        d = asdict(self)
        d["train_clip"] = self.train_clip.to_dict()
        return d

    def key(self, data_key: str = "", *, with_clip: bool = True) -> str:
        """Hex SHA-256 of the settings (and the token-state cache key ``data_key``): the model cache key.

        ``with_clip=False`` leaves ``train_clip`` out (the unclipped model does not depend on it).

        >>> ExploreSettings().key() == ExploreSettings().key() != ExploreSettings(seed=1).key()
        True
        >>> other = ExploreSettings(train_clip=ClipConfig(enabled=True, C_mu=3.0))
        >>> other.key(with_clip=False) == ExploreSettings().key(with_clip=False) and other.key() != ExploreSettings().key()
        True
        """
        d = self.to_dict()
        if not with_clip:
            d.pop("train_clip")
        blob = json.dumps({"v": _CACHE_VERSION, "data": data_key, **d}, sort_keys=True, default=float)
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class ExploreData:
    """Encoded sentences and the split used by the explorer.

    Attributes
    ----------
    sentences : list of str
    labels : ndarray of int64, shape (n,)
    states : TokenStates
        Token states of all ``sentences`` (n, max_length, 384).
    train_idx, val_idx, test_idx : ndarray of int
        Row indices into ``sentences`` (train already reduced to ``n_train``).
    encoded_idx : ndarray of int or None
        The rows of ``sentences`` that ``states`` holds, in order (None: all of them). The bundled
        models (:mod:`engine.nvdp.bundled`) encode only the test sentences.
    """

    sentences: list
    labels: np.ndarray
    states: TokenStates
    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray
    encoded_idx: np.ndarray | None = None

    def split(self, name: str) -> tuple[TokenStates, np.ndarray]:
        """States and labels of ``"train"``, ``"val"`` or ``"test"``.

        Raises
        ------
        ValueError
            If that split's sentences were not encoded (``encoded_idx`` leaves them out).
        """
        idx = {"train": self.train_idx, "val": self.val_idx, "test": self.test_idx}[name]
        rows = idx
        if self.encoded_idx is not None:
            pos = np.searchsorted(self.encoded_idx, idx)
            if np.any(pos >= len(self.encoded_idx)) or not np.array_equal(self.encoded_idx[np.minimum(pos, len(self.encoded_idx) - 1)], idx):
                raise ValueError(f"the {name} sentences are not encoded here (only the evaluation sentences are)")
            rows = pos
        return self.states.subset(rows), self.labels[idx]


def select_sentences(settings: ExploreSettings):
    """The sentences, labels and split of ``settings`` (no encoding).

    Returns
    -------
    sentences : list of str
    labels : ndarray of int64
    train_idx, val_idx, test_idx : ndarray of int
        Sorted row indices; train reduced to ``settings.n_train`` by ``default_rng(split_seed)``.
    """
    return _select(settings)


def _select(settings: ExploreSettings):
    from engine.nvdp.encoder import load_sentiment_sentences, split_indices

    sentences, labels = load_sentiment_sentences()
    if settings.n_sentences is not None and settings.n_sentences < len(sentences):
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(np.arange(len(sentences)), train_size=settings.n_sentences, stratify=labels,
                                   random_state=settings.split_seed)
        keep = np.sort(keep)
        sentences, labels = [sentences[i] for i in keep], labels[keep]
    tr, va, te = split_indices(labels, seed=settings.split_seed)
    if settings.n_train is not None and settings.n_train < len(tr):
        rng = np.random.default_rng(settings.split_seed)  # the CLI's --n-train subset
        tr = np.sort(rng.choice(tr, size=settings.n_train, replace=False))
    return sentences, labels, tr, va, te


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
    from engine.nvdp.bundled import bundled_matches

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
    from engine.nvdp.bundled import bundled_matches, load_bundled
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
        patience=settings.patience, progress=progress,
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
    parts += [f"--patience {settings.patience}", f"--lr {g(settings.lr)}", f"--batch-size {settings.batch_size}",
              f"--model-dir {model_dir}"]
    return " ".join(parts)
