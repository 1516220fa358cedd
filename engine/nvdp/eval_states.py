"""Shipped encoder states of the explorer's evaluation sentences (``assets/nvdp/eval_states.*``).

The NVDP page evaluates its two shipped models on the 500 test sentences of the default split
(:func:`engine.nvdp.explorer_models.select_sentences`). Those sentences are public, fixed and
checksummed (``assets/data``), and so is the frozen encoder (all-MiniLM-L6-v2, its files hashed by
:func:`engine.nvdp.encoder.model_files_hash`); their last-layer token states are therefore public
too. Encoding them costs about 265 GFLOP (10-30 s on two cores), the whole of a first visit, so
their states ship beside the models and a first visit encodes nothing.

Format
------
``eval_states.safetensors`` holds only what the evaluation reads:

- ``tokens``: float16, shape (total real tokens, 384): the states of the real tokens ([CLS],
  word pieces, [SEP]) of every sentence, sentence after sentence, exactly the float16 values that
  :func:`engine.nvdp.encoder.encode_sentences` stores (so they are the same numbers it returns);
- ``lengths``: int32, shape (n,): real tokens per sentence (the attention mask is a prefix);

``eval_states.json`` (sorted keys) holds the encoder's cache key of (sentences, max_length, model
files) (``key``), ``n``, ``max_length``, ``d`` and a format version. (Not safetensors metadata:
that is written in hash-map order, which changes from run to run.)

Padding positions are not stored: they come back as zeros. Every consumer masks them (NVIB
pseudo-counts are zeroed there, the denoising attention gives them weight exactly 0, the pooling
skips them; ``LiveEvaluator`` trims them), so the page's numbers are those of a fresh encoding,
bit for bit (``tests/engine/test_nvdp_eval_states.py``; ``--check`` of the script below compares the
stored values with a fresh encoding). ``eval_states.sha256`` (``sha256sum`` format) holds the SHA-256
of both files.
``scripts/make_nvdp_eval_states.py`` writes both files, bit for bit reproducibly (one torch thread,
no time stamps) and ``--check`` verifies them.

:func:`load_or_encode` uses the file only when its checksum matches and its key is that of the
requested sentences with the installed encoder files; otherwise (missing, corrupt, other
sentences, another encoder version) it encodes, with a warning where a file was there but unusable.
No Streamlit here.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Callable, Sequence

__all__ = ["STATES_FILE", "META_FILE", "SUMS_FILE", "FORMAT_VERSION", "save_eval_states", "load_eval_states",
           "load_or_encode", "load_split"]

#: File names inside the asset folder (:func:`engine.nvdp.bundled.asset_dir`).
STATES_FILE = "eval_states.safetensors"
META_FILE = "eval_states.json"
SUMS_FILE = "eval_states.sha256"
FORMAT_VERSION = "1"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _idx_hash(idx) -> str:
    """SHA-256 of ``"i0,i1,..."``, as ``scripts/make_nvdp_models.py`` records each split in settings.json."""
    return hashlib.sha256(",".join(str(int(i)) for i in idx).encode()).hexdigest()


def save_eval_states(states, directory, *, split=None) -> Path:
    """Write ``states`` (a :class:`~engine.nvdp.encoder.TokenStates` with its cache key) and its SHA-256.

    ``split`` (optional): the (train, val, test) row indices of the bundle's split, stored in the JSON
    so that a first visit need not recompute the split (:func:`load_split`).

    Deterministic: the same states give byte-identical files (safetensors without metadata has no
    time stamps and a fixed header order; the JSON has sorted keys).

    Raises
    ------
    ValueError
        ``states.key`` is empty (the key ties the file to its sentences and encoder), the values are
        not float16-exact, or a mask is not a prefix (real tokens first, then padding).
    """
    import torch
    from safetensors.torch import save_file

    if not states.key:
        raise ValueError("states.key is empty: save the output of encode_sentences (it carries the cache key)")
    mask = states.mask.bool()
    lengths = mask.sum(1)
    prefix = torch.arange(mask.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    if not torch.equal(prefix, mask):
        raise ValueError("every mask must be a prefix (real tokens first, then padding)")
    s16 = states.states.to(torch.float16)
    if not torch.equal(s16.float(), states.states.float()):
        raise ValueError("the states are not float16-exact (encode_sentences returns float16-rounded values)")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {"key": states.key, "n": str(states.n), "max_length": str(mask.shape[1]), "d": str(states.d),
            "format": FORMAT_VERSION}
    if split is not None:  # (train, val, test) indices of the bundle's split: public, spares the split's import
        meta["split"] = {name: [int(i) for i in idx] for name, idx in zip(("train", "val", "test"), split)}
    path = d / STATES_FILE
    save_file({"tokens": s16[mask].contiguous(), "lengths": lengths.to(torch.int32).contiguous()}, str(path))
    (d / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    (d / SUMS_FILE).write_text("".join(f"{_sha256(d / name)}  {name}\n" for name in (STATES_FILE, META_FILE)))
    return path


def load_eval_states(sentences: Sequence[str], *, max_length: int, directory):
    """The shipped states of ``sentences``, or None when no usable file is there.

    Parameters
    ----------
    sentences : sequence of str
        The sentences, in order (the key is checked against them).
    max_length : int
        Padded length (part of the key).
    directory : path
        The asset folder (:func:`engine.nvdp.bundled.asset_dir`; passed in, so this module does not
        import the bundle's).

    Returns
    -------
    TokenStates or None
        float32 values (float16-exact), padding positions zero, ``key`` the encoder's cache key.
        None when the file is missing.

    Raises
    ------
    ValueError
        The file is there but unusable: its SHA-256 differs from ``eval_states.sha256`` (or that is
        missing), its key is not the one of ``sentences`` / ``max_length`` / the installed encoder
        files, or its contents are inconsistent. :func:`load_or_encode` turns this into a warning
        and encodes.
    """
    d = Path(directory)
    path = d / STATES_FILE
    if not path.is_file():
        return None
    sums = d / SUMS_FILE
    if not sums.is_file():
        raise ValueError(f"{path} has no checksum file {SUMS_FILE}")
    want = dict(reversed(line.split(maxsplit=1)) for line in sums.read_text().splitlines() if line.strip())
    for name in (STATES_FILE, META_FILE):
        got = _sha256(d / name) if (d / name).is_file() else "missing"
        if got != want.get(name):
            raise ValueError(f"{d / name} does not match {SUMS_FILE} (got {got[:12]}..., want "
                             f"{str(want.get(name))[:12]}...); rerun scripts/make_nvdp_eval_states.py")
    from safetensors import safe_open

    from engine.nvdp.encoder import TokenStates, _cache_key

    sentences = list(sentences)
    key = _cache_key(sentences, int(max_length))
    import torch

    meta = json.loads((d / META_FILE).read_text())
    with safe_open(str(path), framework="pt") as f:
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{path}: format {meta.get('format')!r}, expected {FORMAT_VERSION!r}")
        if meta.get("key") != key:
            raise ValueError(f"{path} holds the states of other sentences or another encoder version (key "
                             f"{str(meta.get('key'))[:12]}..., want {key[:12]}...)")
        tokens, lengths = f.get_tensor("tokens"), f.get_tensor("lengths").long()
    n, L, dim = len(sentences), int(meta["max_length"]), int(meta["d"])
    if (int(meta["n"]) != n or L != int(max_length) or tuple(lengths.shape) != (n,) or tokens.shape[1] != dim
            or int(lengths.sum()) != tokens.shape[0] or int(lengths.min()) < 1 or int(lengths.max()) > L):
        raise ValueError(f"{path}: inconsistent contents (n, lengths, shapes)")
    mask = torch.arange(L).unsqueeze(0) < lengths.unsqueeze(1)
    states = torch.zeros((n, L, dim), dtype=torch.float32)
    states[mask] = tokens.float()
    return TokenStates(states, mask, key)


def load_or_encode(sentences: Sequence[str], *, max_length: int, directory,
                   progress: Callable[[float, str], object] | None = None):
    """The shipped states of ``sentences`` when usable, else :func:`engine.nvdp.encoder.encode_sentences`.

    A file that is present but unusable (checksum, key, contents: see :func:`load_eval_states`) gives
    a ``UserWarning`` naming the reason before the sentences are encoded. ``progress`` is forwarded
    to the encoder, or called once with 1.0 when the shipped states are used.
    """
    try:
        states = load_eval_states(sentences, max_length=max_length, directory=directory)
    except (ValueError, OSError, KeyError) as exc:
        warnings.warn(f"shipped evaluation states not used, encoding instead: {exc}", UserWarning, stacklevel=2)
        states = None
    if states is not None:
        if progress is not None:
            progress(1.0, f"loaded the shipped token states of {states.n} sentences")
        return states
    from engine.nvdp.encoder import encode_sentences

    return encode_sentences(list(sentences), max_length=max_length, progress=progress)


def load_split(directory, recorded: dict):
    """The stored (train, val, test) indices when each matches the SHA-256 the bundle recorded, else None.

    Parameters
    ----------
    directory : path
        The asset folder.
    recorded : dict
        The ``data`` entry of the bundle's checksummed ``settings.json`` (``train_idx_sha256``,
        ``val_idx_sha256``, ``test_idx_sha256``: the split the models were trained and evaluated on).

    Returns
    -------
    tuple of three int64 ndarrays or None
        None when no split is stored, the checksums of the eval-state files fail, or a hash differs
        (the caller then computes the split, :func:`engine.nvdp.explorer_models.select_sentences`).
    """
    import numpy as np

    d = Path(directory)
    try:
        sums = dict(reversed(line.split(maxsplit=1)) for line in (d / SUMS_FILE).read_text().splitlines() if line.strip())
        if _sha256(d / META_FILE) != sums.get(META_FILE):
            return None
        split = json.loads((d / META_FILE).read_text()).get("split")
    except (OSError, ValueError):
        return None
    if not isinstance(split, dict):
        return None
    out = []
    for name in ("train", "val", "test"):
        idx = split.get(name)
        if not isinstance(idx, list) or _idx_hash(idx) != recorded.get(f"{name}_idx_sha256"):
            return None
        out.append(np.asarray(idx, dtype=np.int64))
    return tuple(out)
