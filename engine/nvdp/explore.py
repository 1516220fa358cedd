"""Engine side of the dashboard's NVDP explorer: cached models, live post-hoc clipping, a sentence inspector.

Nothing here imports Streamlit. The page (``pages/nvdp.py``) calls three things:

- :func:`load_or_train` -- the clipped and unclipped NVDP classifiers for a KL weight and seed,
  trained once (with a progress callback that can cancel) and cached on disk under
  ``<NVDP cache dir>/explorer_models/<key>/`` (:func:`models_dir` ; :func:`engine.nvdp.encoder.cache_dir`; the key hashes the data, the split and every training setting, :meth:`ExploreSettings.key`);
- :func:`posthoc_evaluate` -- what a clipping configuration does to a trained model's posteriors on
  the test sentences: accuracy (the model re-run with that clipping, samples seeded), the pairwise
  Renyi-divergence (RD) bound in both labelled forms with the full pair distributions, the
  Bayesian-DP (BDP) epsilon in both variants, the fractions clipped, and the distributions of
  ||mu||, sigma and alpha before and after clipping (NVDP.md sections 3 to 6);
- :func:`inspect_pair` -- two typed sentences: their posterior components before and after
  clipping and the RD bound between them.

Choices made for speed (the dashboard's sliders must answer in about a second on 2 cores): the
page's exact all-pairs bound uses the first :data:`LIVE_N_RD` = 48 test sentences (1,128 pairs, a
true maximum over those pairs), the paper-protocol bound and both BDP figures the first
:data:`LIVE_N_BDP` = 128 (8 eval batches of 16, 960 within-batch pairs); the functions' own defaults
are 64 and 256. ``engine.nvdp.diagnostics.run_diagnostics`` (the CLI's
report) uses 256 and all 500 test sentences; pass those values to reproduce it exactly.

The default demo model is small enough to train twice within the first-visit budget of the
dashboard (issue 7: <= 3 min including the first encoding of the 3,000 sentences): 1,000 of the
2,000 training sentences (the CLI's ``--n-train`` subset), 3 epochs (early stopping on the 500
validation sentences), KL weight 1e-2. The clipped model is trained with
:data:`DEFAULT_TRAIN_CLIP` (C_mu = 5, alpha in [0.1, 1], sigma in [0.30151, 0.99] at lambda = 1.1),
the variant under which every term of the exact bound is finite; the authors' own defaults
(alpha_min = 0, no upper sigma clamp) leave the exact bound infinite for most pairs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

from engine.nvdp.bdp import BDPResult, bdp_epsilon, bdp_from_posteriors
from engine.nvdp.clipping import ClipConfig, ClipStats
from engine.nvdp.divergence import RDBoundResult, pairwise_rd_bound
from engine.nvdp.encoder import DEFAULT_MAX_LENGTH, TokenStates, cache_dir, encode_sentences
from engine.nvdp.layer import Posteriors

__all__ = [
    "ExploreSettings",
    "ExploreData",
    "PosthocResult",
    "LiveEvaluator",
    "PairInspection",
    "KL_WEIGHTS",
    "LIVE_N_RD",
    "LIVE_N_BDP",
    "DEFAULT_TRAIN_CLIP",
    "load_data",
    "models_dir",
    "cached_models_exist",
    "load_or_train",
    "raw_posteriors",
    "posthoc_evaluate",
    "posthoc_bounds",
    "mu_norm_range",
    "inspect_pair",
    "cli_command",
]

#: Clipping of the explorer's clipped model: the paper's three rules at C_mu = 5 (the median ||mu|| of
#: our 384-dim encoder), alpha in [0.1, 1], lambda = 1.1, plus the std cap sigma_max = 0.99 (research
#: notes A1). alpha_min = 0.1 > ((lambda - 1) / lambda) alpha_max = 0.0909 keeps the Gamma/Dirichlet
#: terms finite. The Gaussian term needs lambda s_b^2 - (lambda - 1) s_a^2 > 0 *strictly*; with the
#: floor s_b = sqrt((lambda-1)/lambda) that means s_a < 1, so a cap of exactly 1 leaves a floor-vs-cap
#: pair at s^2 = 0 (infinite; 21 of 2,016 pairs on our trained model). Hence 0.99, as ``ClipConfig.finite``.
DEFAULT_TRAIN_CLIP = ClipConfig(enabled=True, C_mu=5.0, alpha_min=0.1, alpha_max=1.0, renyi_order=1.1, sigma_max=0.99)

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
    epochs : int, default 3
        Maximum epochs (early stopping with ``patience`` on validation accuracy).
    n_train : int or None, default 1000
        Random subset of the training split (the CLI's ``--n-train``: ``default_rng(split_seed)``);
        None uses the whole training split.
    n_sentences : int or None, default None
        Use a stratified random subset of this many of the 3,000 sentences (tests, tiny demos);
        None uses all of them (the only setting the CLI reproduces). At least 30.
    split_seed : int, default 0
        Seed of the stratified train / validation / test split (2/3, 1/6, 1/6).
    lr, batch_size, patience : float, int, int
        As in :func:`engine.nvdp.training.train_nvdp` (defaults 1e-3, 32, 2).
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
    epochs: int = 3
    n_train: int | None = 1000
    n_sentences: int | None = None
    split_seed: int = 0
    lr: float = 1e-3
    batch_size: int = 32
    patience: int = 2
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
    """

    sentences: list
    labels: np.ndarray
    states: TokenStates
    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray

    def split(self, name: str) -> tuple[TokenStates, np.ndarray]:
        """States and labels of ``"train"``, ``"val"`` or ``"test"``."""
        idx = {"train": self.train_idx, "val": self.val_idx, "test": self.test_idx}[name]
        return self.states.subset(idx), self.labels[idx]


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


def cached_models_exist(settings: ExploreSettings) -> bool:
    """True when both models of ``settings`` are on disk (the page then loads instead of training)."""
    key = _data_key_without_encoding(settings)
    return all(_saved(models_dir(settings, key, w)) for w in ("clipped", "unclipped"))


def _saved(d: Path) -> bool:
    return (d / "model.pt").is_file() and (d / "config.json").is_file()


def load_or_train(
    settings: ExploreSettings,
    *,
    progress: ProgressFn | None = None,
    data: ExploreData | None = None,
) -> tuple[ExploreData, dict]:
    """The clipped and unclipped models for ``settings``: loaded from the disk cache, else trained and saved.

    Parameters
    ----------
    settings : ExploreSettings
    progress : callable(fraction, message) -> bool or None, optional
        Overall progress in [0, 1] with a message (encoding 0-10 %, unclipped model 10-55 %,
        clipped model 55-100 %). Returning False cancels (:class:`engine.nvdp.training.TrainingCancelled`);
        a model finished before the cancel stays cached.
    data : ExploreData, optional
        Already loaded data for ``settings`` (skips :func:`load_data`).

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
    from engine.nvdp.training import TrainingCancelled, load_trained, save_trained, train_nvdp

    def stage(lo, hi, prefix):
        if progress is None:
            return None

        def cb(fraction, message):
            out = progress(lo + (hi - lo) * float(fraction), f"{prefix}: {message}")
            if out is False:
                raise TrainingCancelled(message)
            return out

        return cb

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
        clip = settings.train_clip if which == "clipped" else ClipConfig(enabled=False)
        trained = train_nvdp(
            tr_states, tr_y, val_states=va_states, val_labels=va_y, kl_weight=settings.kl_weight, clip=clip,
            seed=settings.seed, epochs=settings.epochs, lr=settings.lr, batch_size=settings.batch_size,
            patience=settings.patience, progress=stage(lo, hi, f"training the {which} model"),
        )
        tmp = d.with_name(f"{d.name}.tmp{os.getpid()}")
        save_trained(trained, tmp)
        (tmp / "settings.json").write_text(json.dumps(settings.to_dict(), indent=2, default=float))
        if d.exists():  # another process finished first; keep theirs
            models[which] = load_trained(d)
        else:
            os.replace(tmp, d)
            models[which] = trained
    return data, models


def raw_posteriors(trained, states: TokenStates) -> Posteriors:
    """Unclipped NVIB posteriors of ``states`` (deterministic: no sampling), prior component at index 0.

    Returns
    -------
    Posteriors
        mu, sigma (n, L + 1, d); alpha, mask (n, L + 1); CPU, detached.
    """
    model = getattr(trained, "model", trained)
    with torch.no_grad():
        return model.posteriors(states.states, states.mask).detach()


def mu_norm_range(raw: Posteriors, *, quantiles=(0.01, 0.99)) -> tuple[float, float]:
    """A slider range for C_mu from the observed ||mu|| of real token components.

    Returns (lo, hi): lo = the 1 % quantile rounded down to 0.1 (at least 0.1), hi = 1.25 x the
    99 % quantile rounded up to an integer, so the default C_mu = 5 of the 384-dim encoder usually
    lies inside.

    >>> mu = torch.zeros(2, 3, 4); mu[:, 1:, 0] = torch.tensor([[2.0, 4.0], [6.0, 8.0]])
    >>> post = Posteriors(mu, torch.ones(2, 3, 4), torch.ones(2, 3), torch.ones(2, 3, dtype=torch.bool))
    >>> mu_norm_range(post)
    (2.0, 10.0)
    """
    real = raw.mask.clone().bool()
    real[:, 0] = False
    norms = torch.linalg.vector_norm(raw.mu.float(), dim=-1)[real].numpy()
    if norms.size == 0:
        raise ValueError("no real token components to calibrate C_mu on")
    q_lo, q_hi = np.quantile(norms, quantiles)
    lo = max(0.1, math.floor(q_lo * 10) / 10)
    hi = max(lo + 1.0, float(math.ceil(1.25 * q_hi)))
    return float(lo), float(hi)


@dataclass
class PosthocResult:
    """What one clipping configuration does to a trained model on the test sentences.

    Attributes
    ----------
    accuracy : float
        Test accuracy with this clipping applied inside the model (samples seeded by ``seed``).
    clip : ClipConfig
    rd_exact : RDBoundResult
        Exact bound (nats, summed over components and dims, max of both orders) over all pairs of
        the first ``n_rd`` test sentences.
    rd_paper : RDBoundResult
        The authors' protocol (normalised, eval batches of 16, |z| > 0.5 filter) on the first ``n_bdp``.
    bdp : BDPResult
        BDP epsilon from exact divergences of order lambda + 1 (a guarantee), delta 1e-5, ``n_bdp`` inputs.
    bdp_paper : BDPResult
        The papers' plug-in figure: paper-form divergences of order lambda.
    clip_stats : ClipStats
        Fractions of real token components changed by each rule (all test sentences).
    distributions : dict
        ``{"before": {...}, "after": {...}}`` with arrays ``mu_norm``, ``sigma``, ``alpha``.
    nan_count, inf_count : int
        Non-finite values in posteriors, samples and logits.
    n_test : int
    seconds : float
    """

    accuracy: float
    clip: ClipConfig
    rd_exact: RDBoundResult
    rd_paper: RDBoundResult
    bdp: BDPResult
    bdp_paper: BDPResult
    clip_stats: ClipStats
    distributions: dict
    nan_count: int
    inf_count: int
    n_test: int
    seconds: float = 0.0

    def summary(self) -> dict:
        """Flat JSON-ready dict of the headline numbers (for CSV/JSON export)."""
        s = self.clip_stats.to_dict()
        return {
            "accuracy": self.accuracy,
            "rd_exact_max": self.rd_exact.max,
            "rd_exact_mean": self.rd_exact.mean,
            "rd_exact_mean_finite": self.rd_exact.mean_finite,
            "rd_exact_n_pairs": self.rd_exact.n_pairs,
            "rd_exact_n_inf": self.rd_exact.n_inf,
            "rd_paper_max": self.rd_paper.max,
            "rd_paper_mean": self.rd_paper.mean,
            "rd_paper_max_unfiltered": self.rd_paper.max_unfiltered,
            "rd_paper_n_pairs": self.rd_paper.n_pairs,
            "rd_paper_n_inf": self.rd_paper.n_inf,
            "bdp_epsilon": self.bdp.epsilon,
            "bdp_epsilon_paper": self.bdp_paper.epsilon,
            "frac_mu_clipped": s["frac_mu"],
            "frac_sigma_raised": s["frac_sigma"],
            "frac_sigma_lowered": s["frac_sigma_high"],
            "frac_alpha_low": s["frac_alpha_low"],
            "frac_alpha_high": s["frac_alpha_high"],
            "n_components": s["n_components"],
            "nan_count": self.nan_count,
            "inf_count": self.inf_count,
            "n_test": self.n_test,
        }


def _trim(post: Posteriors, n: int) -> Posteriors:
    k = max(2, int(post.mask[:n].sum(1).max()))
    return Posteriors(post.mu[:n, :k], post.sigma[:n, :k], post.alpha[:n, :k], post.mask[:n, :k])


def posthoc_bounds(post: Posteriors, renyi_order: float, *, n_rd: int = 64, n_bdp: int = 256, delta: float = 1e-5,
                   n_latent: int | None = None):
    """RD bounds (both forms) and BDP epsilons (both variants) of already clipped posteriors.

    Parameters
    ----------
    post : Posteriors
        Clipped (or unclipped) posteriors of at least 2 inputs.
    renyi_order : float
        lambda > 1.
    n_rd : int, default 64
        Inputs for the exact all-pairs bound (n_rd (n_rd - 1) / 2 pairs).
    n_bdp : int, default 256
        Inputs for the paper-protocol bound and the BDP accountant (eval batches of 16).
    delta : float, default 1e-5
    n_latent : int, optional
        Normaliser of the paper form (default: the padded latent length of ``post``, which is
        max_length + 1 = 49 for stored test posteriors, the authors' convention).

    Returns
    -------
    rd_exact, rd_paper : RDBoundResult
    bdp, bdp_paper : BDPResult
    """
    n = len(post)
    if n < 2:
        raise ValueError(f"need at least 2 inputs for pairwise bounds; got {n}")
    n_latent = int(post.mu.shape[1]) if n_latent is None else int(n_latent)
    ex = _trim(post, min(n_rd, n))
    pb = _trim(post, min(n_bdp, n))
    rd_exact = pairwise_rd_bound(ex.mu, ex.sigma, ex.alpha, ex.mask, renyi_order=renyi_order, form="exact")
    rd_paper = pairwise_rd_bound(pb.mu, pb.sigma, pb.alpha, pb.mask, renyi_order=renyi_order, form="paper",
                                 n_latent=n_latent)
    bdp, _ = bdp_from_posteriors(pb.mu, pb.sigma, pb.alpha, pb.mask, renyi_order=renyi_order, delta=delta, form="exact")
    # The papers' plug-in BDP uses the same paper-form divergences of order lambda (before the outlier
    # filter, which the accountant does not apply): reuse them instead of computing them again.
    bdp_paper = bdp_epsilon(rd_paper.values, rd_paper.batch_index, renyi_order=renyi_order, delta=delta,
                            divergence_order=renyi_order)
    return rd_exact, rd_paper, bdp, bdp_paper


class LiveEvaluator:
    """A trained model prepared for fast repeated post-hoc clipping on a fixed set of sentences.

    The clipping-independent work is done once: the length-sorted, trimmed batches (those of
    :func:`engine.nvdp.training.evaluate`, 256 sentences each) and their unclipped posteriors, and the
    padded posteriors of all sentences in input order. :meth:`evaluate` then clips, samples and runs
    only the part of the model after the bottleneck (denoising attention, FFN, pooling, classifier),
    with the same random stream as ``evaluate``, so the accuracy is identical to
    ``evaluate(trained, states, labels, clip=clip, seed=seed).accuracy``.

    Parameters
    ----------
    trained : TrainedNVDP or NVDPClassifier
    states : TokenStates
    labels : array-like of shape (n,)
    batch_size : int, default 256
        As in ``evaluate`` (changing it changes the random draws, hence the accuracy slightly).
    """

    def __init__(self, trained, states: TokenStates, labels, *, batch_size: int = 256):
        from engine.nvdp.training import _pad_posteriors, _trimmed, _validate_labels

        self.model = getattr(trained, "model", trained)
        self.model.eval()
        self.y = _validate_labels(states, labels, "states")
        self.n = states.n
        k = states.states.shape[1] + 1
        order = torch.argsort(states.mask.sum(1), stable=True)
        self.batches, raws = [], []
        with torch.no_grad():
            for s in range(0, states.n, batch_size):
                idx = order[s : s + batch_size]
                h, m = _trimmed(states, idx)
                raw = self.model.posteriors(h, m).detach()
                self.batches.append((idx, h, m, raw))
                raws.append(_pad_posteriors(raw, k))
        inv = torch.argsort(order)
        raw = Posteriors.cat(raws)
        self.raw = Posteriors(raw.mu[inv], raw.sigma[inv], raw.alpha[inv], raw.mask[inv])

    def accuracy(self, clip: ClipConfig, seed: int = 0) -> tuple[float, int, int]:
        """Accuracy with ``clip`` applied before sampling, and the NaN / inf counts (posteriors, samples, logits)."""
        from engine.nvdp.layer import sample_latents

        m_ = self.model
        correct = nan = inf = 0
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            for idx, h, mask, raw in self.batches:
                post, _ = raw.clip(clip)
                z, pi = sample_latents(post)
                a = m_.attn(h, z, pi)
                x = m_.ffn_norm(m_.ffn(a) + a)
                w = mask.to(x.dtype).unsqueeze(-1)
                logits = m_.classifier((x * w).sum(1) / w.sum(1).clamp_min(1.0))
                correct += int((logits.argmax(-1) == self.y[idx]).sum())
                for t in (post.mu, post.sigma, post.alpha, z, pi, logits):
                    nan += int(torch.isnan(t).sum())
                    inf += int(torch.isinf(t).sum())
        return correct / self.n, nan, inf

    def evaluate(self, clip: ClipConfig, *, seed: int = 0, n_rd: int = 64, n_bdp: int = 256, delta: float = 1e-5,
                 max_values: int = 20000) -> "PosthocResult":
        """See :func:`posthoc_evaluate`."""
        from engine.nvdp.diagnostics import posterior_distributions

        if not isinstance(clip, ClipConfig):
            raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
        for name, v in (("n_rd", n_rd), ("n_bdp", n_bdp)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2:
                raise ValueError(f"{name} must be an int >= 2; got {v!r}")
        t0 = time.perf_counter()
        acc, nan, inf = self.accuracy(clip, seed)
        with torch.no_grad():
            post, stats = self.raw.clip(clip)
        rd_exact, rd_paper, bdp, bdp_paper = posthoc_bounds(post, clip.renyi_order, n_rd=n_rd, n_bdp=n_bdp, delta=delta)
        return PosthocResult(
            accuracy=float(acc),
            clip=clip,
            rd_exact=rd_exact,
            rd_paper=rd_paper,
            bdp=bdp,
            bdp_paper=bdp_paper,
            clip_stats=stats,
            distributions={
                "before": posterior_distributions(self.raw, max_values=max_values),
                "after": posterior_distributions(post, max_values=max_values),
            },
            nan_count=int(nan),
            inf_count=int(inf),
            n_test=int(self.n),
            seconds=time.perf_counter() - t0,
        )


def posthoc_evaluate(
    trained,
    states: TokenStates,
    labels,
    clip: ClipConfig,
    *,
    seed: int = 0,
    n_rd: int = 64,
    n_bdp: int = 256,
    delta: float = 1e-5,
    max_values: int = 20000,
) -> PosthocResult:
    """Apply ``clip`` to a trained model on ``states``: accuracy, RD bounds, BDP, fractions clipped, distributions.

    The model is re-run with ``clip`` in place of the clipping it was trained with (inference-time
    clipping: ``enabled=False`` gives its unclipped mechanism). The bounds are those of the
    posteriors it then samples from. For repeated calls on the same sentences build a
    :class:`LiveEvaluator` once and call its ``evaluate`` (this function does exactly that).

    Parameters
    ----------
    trained : TrainedNVDP or NVDPClassifier
    states : TokenStates
        Test sentences (the first ``n_rd`` / ``n_bdp`` enter the bounds).
    labels : array-like of shape (n,)
    clip : ClipConfig
    seed : int, default 0
        Seed of the posterior samples behind the accuracy.
    n_rd, n_bdp, delta, max_values
        See :func:`posthoc_bounds` and :func:`engine.nvdp.diagnostics.posterior_distributions`.

    Returns
    -------
    PosthocResult

    Raises
    ------
    TypeError
        If ``clip`` is not a ClipConfig.
    ValueError
        Fewer than 2 test sentences, bad n_rd / n_bdp.
    """
    if not isinstance(clip, ClipConfig):
        raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
    return LiveEvaluator(trained, states, labels).evaluate(clip, seed=seed, n_rd=n_rd, n_bdp=n_bdp, delta=delta,
                                                           max_values=max_values)


@dataclass
class PairInspection:
    """Two typed sentences through a trained model's NVIB layer (see :func:`inspect_pair`).

    Attributes
    ----------
    components : list of pandas.DataFrame
        One table per sentence, one row per latent component (row 0 = the prior component), with
        columns ``component``, ``token``, ``alpha_before``, ``alpha``, ``weight`` (the expected
        Dirichlet weight alpha / sum(alpha) after clipping), ``mu_norm_before``, ``mu_norm``,
        ``sigma_mean_before``, ``sigma_mean``, ``sigma_min``, ``sigma_max``, ``clipped`` (the rules
        that changed the component: "mean", "std", "alpha low", "alpha high", comma-separated).
    rd_exact : float
        max(D(a||b), D(b||a)) in nats, the exact bound.
    rd_forward, rd_backward : float
        D(a||b) and D(b||a).
    rd_paper : float
        The paper-protocol figure for the ordered pair (a, b) (no outlier filter: one pair).
    rd_exact_unclipped, rd_paper_unclipped : float
        The same two figures without clipping.
    clip : ClipConfig
    """

    components: list
    rd_exact: float
    rd_forward: float
    rd_backward: float
    rd_paper: float
    rd_exact_unclipped: float
    rd_paper_unclipped: float
    clip: ClipConfig


def _tokens(sentence: str, max_length: int) -> list[str]:
    from engine.nvdp.encoder import _load_model

    tokenizer, _ = _load_model()
    ids = tokenizer(sentence, truncation=True, max_length=max_length)["input_ids"]
    return tokenizer.convert_ids_to_tokens(ids)


def inspect_pair(trained, sentence_a: str, sentence_b: str, clip: ClipConfig, *,
                 max_length: int = DEFAULT_MAX_LENGTH) -> PairInspection:
    """Encode two sentences (never cached on disk), clip their posteriors with ``clip``, bound their RD.

    Parameters
    ----------
    trained : TrainedNVDP or NVDPClassifier
    sentence_a, sentence_b : str
        Non-empty after stripping white space.
    clip : ClipConfig
        Clipping applied to both (``enabled=False``: none).
    max_length : int, default 48

    Returns
    -------
    PairInspection

    Raises
    ------
    ValueError
        If a sentence is empty (named ``sentence_a`` / ``sentence_b``).
    TypeError
        If a sentence is not a str or ``clip`` not a ClipConfig.
    """
    if not isinstance(clip, ClipConfig):
        raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
    texts = []
    for name, s in (("sentence_a", sentence_a), ("sentence_b", sentence_b)):
        if not isinstance(s, str):
            raise TypeError(f"{name} must be a str; got {type(s).__name__}")
        if not s.strip():
            raise ValueError(f"{name} is empty: type a sentence")
        texts.append(s.strip())
    states = encode_sentences(texts, max_length=max_length, use_cache=False)  # typed text never touches the disk
    raw = raw_posteriors(trained, states)
    post, _ = raw.clip(clip)
    k = int(raw.mask.sum(1).max())
    n_latent = max_length + 1

    def bounds(p):
        mu, sg, al, m = p.mu[:, :k], p.sigma[:, :k], p.alpha[:, :k], p.mask[:, :k]
        fw = pairwise_rd_bound(mu, sg, al, m, renyi_order=clip.renyi_order, form="exact", direction="forward")
        bw = pairwise_rd_bound(mu, sg, al, m, renyi_order=clip.renyi_order, form="exact", direction="backward")
        pp = pairwise_rd_bound(mu, sg, al, m, renyi_order=clip.renyi_order, form="paper", batch_size=2,
                               outlier_z=None, n_latent=n_latent)
        f, b = float(fw.values[0]), float(bw.values[0])
        return f, b, max(f, b), float(pp.values[0])

    f, b, ex, pa = bounds(post)
    _, _, ex_u, pa_u = bounds(raw)
    floor, cap = clip.sigma_min, clip.sigma_max
    tables = []
    for i, text in enumerate(texts):
        n = int(raw.mask[i].sum())
        toks = ["(prior)"] + _tokens(text, max_length)[: n - 1]
        mu_b = torch.linalg.vector_norm(raw.mu[i, :n], dim=-1).numpy()
        mu_a = torch.linalg.vector_norm(post.mu[i, :n], dim=-1).numpy()
        a_b = raw.alpha[i, :n].numpy().astype(float)
        a_a = post.alpha[i, :n].numpy().astype(float)
        s_b, s_a = raw.sigma[i, :n], post.sigma[i, :n]
        rules = []
        for j in range(n):
            r = []
            if clip.enabled and j > 0:
                if mu_b[j] > clip.C_mu:
                    r.append("mean")
                if bool((s_b[j] < floor).any()) or (cap is not None and bool((s_b[j] > cap).any())):
                    r.append("std")
                if a_b[j] < clip.alpha_min:
                    r.append("alpha low")
                if a_b[j] > clip.alpha_max:
                    r.append("alpha high")
            rules.append(", ".join(r))
        tables.append(pd.DataFrame({
            "component": np.arange(n),
            "token": toks,
            "alpha_before": a_b,
            "alpha": a_a,
            "weight": a_a / a_a.sum(),
            "mu_norm_before": mu_b.astype(float),
            "mu_norm": mu_a.astype(float),
            "sigma_mean_before": s_b.mean(-1).numpy().astype(float),
            "sigma_mean": s_a.mean(-1).numpy().astype(float),
            "sigma_min": s_a.min(-1).values.numpy().astype(float),
            "sigma_max": s_a.max(-1).values.numpy().astype(float),
            "clipped": rules,
        }))
    return PairInspection(tables, ex, f, b, pa, ex_u, pa_u, clip)


def cli_command(settings: ExploreSettings, clip: ClipConfig | None = None, *, model_dir: str = "artifacts/nvdp/run0") -> str:
    """The ``python -m engine nvdp train ...`` command that trains the clipped model of ``settings``.

    ``clip`` defaults to ``settings.train_clip``. The CLI has no flag for ``sigma_max`` or
    ``n_sentences``; the page says so next to the command.

    >>> print(cli_command(ExploreSettings()))  # doctest: +NORMALIZE_WHITESPACE
    python -m engine nvdp train --kl-weight 0.01 --clip --C-mu 5 --alpha-min 0.1 --alpha-max 1
      --renyi-order 1.1 --seed 0 --split-seed 0 --epochs 3 --n-train 1000 --patience 2 --lr 0.001 --batch-size 32
      --model-dir artifacts/nvdp/run0
    """
    clip = settings.train_clip if clip is None else clip
    g = lambda x: f"{x:.10g}"  # noqa: E731  (enough digits to reproduce the value)
    parts = ["python -m engine nvdp train", f"--kl-weight {g(settings.kl_weight)}",
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
