"""The NVDP explorer's settings, its sentence selection and split (no encoding, no training).

The level below :mod:`engine.nvdp.explorer_models` (the on-disk model cache and training) and
:mod:`engine.nvdp.bundled` (the shipped models): both import from here, neither from the other's
functions in a cycle. :mod:`engine.nvdp.explorer_models` re-exports every name. No Streamlit here.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.encoder import DEFAULT_MAX_LENGTH, TokenStates

__all__ = ["ExploreSettings", "ExploreData", "KL_WEIGHTS", "DEFAULT_TRAIN_CLIP", "CAPPED_TRAIN_CLIP", "DEFAULT_SEEDS",
           "select_sentences", "ProgressFn"]

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
    lr_schedule : {"constant", "linear_warmup_decay"}, default "constant"
        The learning-rate schedule (:func:`engine.nvdp.training.lr_factor`): the product's constant
        rate (the shipped models) or the authors' linear warm-up then linear decay to 0.
    warmup_fraction : float in [0, 1), default 0.06
        The warm-up's share of the steps (``linear_warmup_decay`` only; the authors' 6 %).

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
    lr_schedule: str = "constant"
    warmup_fraction: float = 0.06

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
        if self.lr_schedule not in ("constant", "linear_warmup_decay"):
            raise ValueError(f"lr_schedule must be 'constant' or 'linear_warmup_decay'; got {self.lr_schedule!r}")
        if isinstance(self.warmup_fraction, bool) or not (
            isinstance(self.warmup_fraction, (int, float)) and 0 <= self.warmup_fraction < 1
        ):
            raise ValueError(f"warmup_fraction must be a number in [0, 1); got {self.warmup_fraction!r}")
        object.__setattr__(self, "warmup_fraction", float(self.warmup_fraction))
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
        if d["lr_schedule"] == "constant":  # the keys of models cached before the schedule was a setting
            d.pop("lr_schedule"), d.pop("warmup_fraction")
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
