"""The default clipped and unclipped NVDP models shipped with the repository (``assets/nvdp/``).

A first visit of the NVDP page should take seconds, not the minutes that encoding 3,000 sentences
and training two models cost. The two small heads (NVIB layer, denoising
attention, FFN and classifier; 1.28 M float32 parameters each; *not* the frozen encoder) trained
with the page's default :class:`~engine.nvdp.explorer_models.ExploreSettings` are committed in
``assets/nvdp/{unclipped,clipped}/model.safetensors`` with their ``config.json``, the training
settings in ``assets/nvdp/settings.json`` and SHA-256 sums of all of them in ``SHA256SUMS``.
``scripts/make_nvdp_models.py`` reproduces them bit for bit (fixed seeds, one thread,
deterministic torch algorithms) and ``--check`` verifies that.

When the requested settings equal the bundled ones, :func:`load_bundled` loads the heads (after
checking the sums) and encodes only the evaluation sentences (the test split; cached on disk by
:func:`engine.nvdp.encoder.encode_sentences`). ``timing.json`` (not checksummed: wall times vary)
holds the measured seconds per training batch and per encoded sentence, from which
:func:`estimate_seconds` predicts a retraining run. No Streamlit here.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.explore_settings import ExploreData, ExploreSettings, select_sentences

__all__ = [
    "ASSET_DIR",
    "BUNDLE_FILES",
    "bundled_settings",
    "verify_bundle",
    "bundled_matches",
    "load_bundled",
    "save_model",
    "load_model",
    "load_saved_model",
    "seed_summary",
    "write_sums",
    "estimate_seconds",
    "fmt_seconds",
    "fmt_seconds_range",
]

#: Folder of the shipped models (override with ``NVDP_ASSET_DIR``, e.g. a test's temporary copy).
ASSET_DIR = Path(__file__).resolve().parents[2] / "assets" / "nvdp"

#: The checksummed files, relative to the asset folder.
BUNDLE_FILES = ("settings.json", "unclipped/config.json", "unclipped/model.safetensors",
                "clipped/config.json", "clipped/model.safetensors")

#: Checksummed too when present: the per-seed figures of the default pair (``scripts/make_nvdp_models.py``).
OPTIONAL_FILES = ("seeds.json",)


def asset_dir() -> Path:
    """``$NVDP_ASSET_DIR`` if set (an empty value disables the bundle), else :data:`ASSET_DIR`."""
    env = os.environ.get("NVDP_ASSET_DIR")
    return ASSET_DIR if env is None else Path(env) if env else Path("/nonexistent-nvdp-bundle")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_sums(directory) -> Path:
    """Write ``SHA256SUMS`` (``sha256sum`` format) of :data:`BUNDLE_FILES` in ``directory``."""
    d = Path(directory)
    names = list(BUNDLE_FILES) + [n for n in OPTIONAL_FILES if (d / n).is_file()]
    lines = [f"{_sha256(d / name)}  {name}\n" for name in names]
    (d / "SHA256SUMS").write_text("".join(lines))
    return d / "SHA256SUMS"


def verify_bundle(directory=None) -> None:
    """Check every bundled file against ``SHA256SUMS``.

    Raises
    ------
    FileNotFoundError
        A file or ``SHA256SUMS`` is missing.
    ValueError
        A file's SHA-256 differs from the recorded one (names the file).
    """
    d = Path(directory) if directory is not None else asset_dir()
    sums = d / "SHA256SUMS"
    if not sums.is_file():
        raise FileNotFoundError(f"no SHA256SUMS in {d}")
    want = {}
    for line in sums.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            want[name.strip().lstrip("*")] = digest
    for name in list(BUNDLE_FILES) + [n for n in OPTIONAL_FILES if n in want or (d / n).is_file()]:
        if name not in want:
            raise ValueError(f"SHA256SUMS in {d} has no entry for {name}")
        if not (d / name).is_file():
            raise FileNotFoundError(f"bundled file {d / name} is missing")
        got = _sha256(d / name)
        if got != want[name]:
            raise ValueError(f"bundled file {d / name} does not match SHA256SUMS (got {got[:12]}..., "
                             f"want {want[name][:12]}...); rerun scripts/make_nvdp_models.py")


def bundled_settings(directory=None):
    """The :class:`~engine.nvdp.explorer_models.ExploreSettings` the bundled models were trained with, or None."""
    d = Path(directory) if directory is not None else asset_dir()
    path = d / "settings.json"
    if not path.is_file():
        return None
    blob = json.loads(path.read_text())["settings"]
    blob = dict(blob)
    blob["train_clip"] = ClipConfig.from_dict(blob["train_clip"])
    return ExploreSettings(**blob)


def bundled_matches(settings, directory=None) -> bool:
    """True when ``settings`` equal the bundled models' training settings (so they can be loaded)."""
    try:
        b = bundled_settings(directory)
    except (ValueError, TypeError, KeyError, json.JSONDecodeError):
        return False
    return b is not None and b.to_dict() == settings.to_dict()


def save_model(trained, directory) -> Path:
    """Save one trained model deterministically: ``model.safetensors`` and ``config.json`` (no wall times).

    The safetensors file and the sorted JSON hold no time stamps, so training the same model twice
    writes byte-identical files.
    """
    from safetensors.torch import save_file

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().clone() for k, v in trained.model.state_dict().items()}
    save_file(state, str(d / "model.safetensors"))
    cfg = trained.config_dict()
    cfg.pop("train_seconds", None)
    (d / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True, default=float) + "\n")
    return d


def load_model(directory):
    """Inverse of :func:`save_model`: a :class:`~engine.nvdp.training.TrainedNVDP` in eval mode."""
    from safetensors.torch import load_file

    from engine.nvdp.layer import NVDPClassifier, NVIBConfig
    from engine.nvdp.training import TrainedNVDP

    d = Path(directory)
    cfg = json.loads((d / "config.json").read_text())
    clip = ClipConfig.from_dict(cfg["clip"])
    model = NVDPClassifier(NVIBConfig(**cfg["nvib"]), clip)
    model.load_state_dict(load_file(str(d / "model.safetensors")))
    model.eval()
    return TrainedNVDP(
        model=model, clip=clip, kl_weight=cfg["kl_weight"], seed=cfg["seed"], history=cfg.get("history", []),
        best_epoch=cfg.get("best_epoch", 0), best_val_accuracy=cfg.get("best_val_accuracy", float("nan")),
        params=cfg.get("params", {}), nan_losses=cfg.get("nan_losses", 0),
    )


def load_saved_model(directory):
    """A saved model from ``directory``: ``model.safetensors`` (the shipped format, :func:`save_model`) or
    ``model.pt`` (:func:`engine.nvdp.training.save_trained`), each with ``config.json``.

    Raises
    ------
    ValueError
        One line naming the folder and the problem: missing folder, no ``config.json``, no weights
        file, or a file that cannot be read as an NVDP model (malformed JSON, missing keys, weights
        of another shape).
    """
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"model folder {d} does not exist")
    if not (d / "config.json").is_file():
        raise ValueError(f"model folder {d} has no config.json (expected config.json + model.safetensors or model.pt)")
    has_st, has_pt = (d / "model.safetensors").is_file(), (d / "model.pt").is_file()
    if not (has_st or has_pt):
        raise ValueError(f"model folder {d} has no model.safetensors or model.pt")
    try:
        if has_st:
            return load_model(d)
        from engine.nvdp.training import load_trained

        return load_trained(d)
    except Exception as exc:  # any unreadable file: one line for the user, not a traceback
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"model folder {d} does not hold a readable NVDP model ({type(exc).__name__}: {msg[:200]})") from exc


def seed_summary(directory=None) -> dict:
    """The per-seed figures of the shipped default pair (``seeds.json``), with "inf" strings back to floats.

    Keys: ``seeds``, ``live_seed`` (the seed of the shipped models), ``per_seed`` (list of
    ``{"seed", "unclipped": {...}, "clipped": {...}}``), ``summary`` (per arm and figure: mean, sd,
    min, max over the seeds), ``direction`` (in how many seeds clipping lowers each figure),
    ``certified`` (:class:`engine.nvdp.certified.CertifiedBound` of the clipping, as a dict) and
    ``protocol``. Raises FileNotFoundError when the file is missing.
    """
    d = Path(directory) if directory is not None else asset_dir()

    def back(x):
        if isinstance(x, str) and x in ("inf", "-inf", "nan"):
            return float(x)
        if isinstance(x, dict):
            return {k: back(v) for k, v in x.items()}
        if isinstance(x, list):
            return [back(v) for v in x]
        return x

    return back(json.loads((d / "seeds.json").read_text()))


def load_bundled(settings, *, progress=None, directory=None):
    """The bundled models and the evaluation sentences' token states (the only ones encoded).

    Parameters
    ----------
    settings : ExploreSettings
        Must equal the bundled settings (:func:`bundled_matches`).
    progress : callable(fraction, message), optional
        Forwarded to the encoder (a cached encoding reports 1.0 at once).

    Returns
    -------
    data : ExploreData
        All sentences, labels and split indices; ``states`` holds the test sentences only
        (``encoded_idx`` = the test indices), so ``data.split("test")`` works and the other splits
        raise.
    models : dict
        ``{"unclipped": TrainedNVDP, "clipped": TrainedNVDP}``.

    Raises
    ------
    ValueError
        ``settings`` differ from the bundle's, or a checksum does not match.
    """
    from engine.nvdp.encoder import encode_sentences
    d = Path(directory) if directory is not None else asset_dir()
    if not bundled_matches(settings, d):
        raise ValueError("these settings are not the bundled models' settings; train them instead")
    verify_bundle(d)
    models = {w: load_model(d / w) for w in ("unclipped", "clipped")}
    sentences, labels, tr, va, te = select_sentences(settings)
    states = encode_sentences([sentences[i] for i in te], max_length=settings.max_length, progress=progress)
    return ExploreData(sentences, labels, states, tr, va, te, encoded_idx=te), models


def _timing(directory=None) -> dict:
    d = Path(directory) if directory is not None else asset_dir()
    try:
        return json.loads((d / "timing.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def estimate_seconds(settings, *, n_encode: int | None = None, n_models: int = 2, n_texts: int | None = None,
                     directory=None) -> dict:
    """Predicted seconds of a training run from the measured times in ``timing.json``.

    The training and validation sizes follow the split the run will use: the stratified 2/3, 1/6, 1/6
    split of ``n_texts`` items (an upload's size; default the settings' ``n_sentences`` or the 3,000
    bundled sentences), the training part capped at ``settings.n_train``. Early stopping may end a run
    before ``settings.epochs``, so ``train`` is for the full budget and ``train_min`` for the shortest
    run the patience allows (``patience + 1`` epochs); ``total`` uses the full budget. The rates are
    the measured CPU seconds of one thread (``cpu_seconds_per_batch``), i.e. an otherwise idle machine
    like the one that made the bundle; a loaded machine takes longer.

    Parameters
    ----------
    settings : ExploreSettings
    n_encode : int, optional
        Items still to encode (default: all ``n_texts``; 0 when cached).
    n_models : int, default 2
        Models to train.
    n_texts : int, optional
        Size of the data set being split (an upload's number of texts).

    Returns
    -------
    dict
        ``encode``, ``train``, ``train_min``, ``total``, ``total_min`` in seconds (NaN when ``timing.json`` is
        missing), ``n_train``, ``n_val``, ``epochs`` and ``per_batch``, ``per_sentence`` (the measured
        rates).

    Examples
    --------
    >>> from engine.nvdp.explore_settings import ExploreSettings
    >>> e = estimate_seconds(ExploreSettings(), directory="/nonexistent")
    >>> math.isnan(e["total"]), e["n_train"], e["n_val"]
    (True, 1000, 500)
    >>> estimate_seconds(ExploreSettings(), n_texts=200, directory="/nonexistent")["n_train"]
    134
    """
    t = _timing(directory)
    # CPU seconds of one thread: the time on an otherwise idle machine (the wall seconds in timing.json
    # were measured on a shared, loaded one); older files have the wall rates only
    per_batch = float(t.get("cpu_seconds_per_batch") or t.get("seconds_per_batch") or math.nan)
    per_sentence = float(t.get("cpu_seconds_per_sentence_encoded") or t.get("seconds_per_sentence_encoded") or math.nan)
    n_all = int(n_texts) if n_texts is not None else (settings.n_sentences or 3000)
    n_encode = n_all if n_encode is None else int(n_encode)
    n_val = n_all // 6
    n_train = n_all - 2 * n_val  # split_indices: n // 6 validation, n // 6 test, the rest training
    if settings.n_train is not None:
        n_train = min(n_train, settings.n_train)
    per_epoch = math.ceil(n_train / settings.batch_size) + math.ceil(n_val / 256) / 3  # validation: forward only

    def secs(epochs):
        return per_epoch * epochs * n_models * per_batch

    enc = n_encode * per_sentence if n_encode else 0.0
    train = secs(settings.epochs)
    train_min = secs(min(settings.epochs, settings.patience + 1))
    return {"encode": enc, "train": train, "train_min": train_min, "total": enc + train, "total_min": enc + train_min, "n_train": n_train, "n_val": n_val, "epochs": settings.epochs,
            "per_batch": per_batch, "per_sentence": per_sentence}


def fmt_seconds_range(lo: float, hi: float) -> str:
    """``"about 10-40 s"``, ``"about 1-3 min"`` (a run that early stopping may end sooner); ``fmt_seconds`` when equal.

    >>> fmt_seconds_range(12.2, 44.0), fmt_seconds_range(30, 200), fmt_seconds_range(5, 5)
    ('about 12-44 s', 'about 0.5-3 min', 'about 5 s')
    """
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "unknown"
    if round(lo) == round(hi):
        return fmt_seconds(hi)
    if hi < 90:
        return f"about {lo:.0f}-{hi:.0f} s"
    return f"about {lo / 60:.2g}-{hi / 60:.0f} min"


def fmt_seconds(s: float) -> str:
    """``"about 45 s"``, ``"about 3 min"``; ``"unknown"`` for NaN.

    >>> fmt_seconds(44.2), fmt_seconds(185), fmt_seconds(float("nan"))
    ('about 44 s', 'about 3 min', 'unknown')
    """
    if not np.isfinite(s):
        return "unknown"
    return f"about {s:.0f} s" if s < 90 else f"about {s / 60:.0f} min"
