"""Training, evaluation, saving and loading of the NVDP classifier on cached token states.

Objective (NVDP.md section 2; research notes 4.1): cross-entropy + s(t) * kl_weight * (L_G + L_D),
with lambda_G = lambda_D = ``kl_weight`` and s(t) = max(0, (T - t) / T) decaying linearly from 1 to
0 over the T optimisation steps (warm-up 0, as in the released scripts). AdamW; early stopping on
validation accuracy (patience in epochs; the best epoch's weights are restored). The learning rate is
constant (``lr_schedule="constant"``, the product's default) or, as in the authors' released code,
linear warm-up over the first ``warmup_fraction`` of the steps then linear decay to 0
(``lr_schedule="linear_warmup_decay"``). ``on_epoch_end`` sees the model after every epoch. Evaluation samples
the posterior (the sample is what is shared), so it is random: :func:`evaluate` draws from a forked
torch generator seeded by ``seed`` and is reproducible.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from engine.nvdp.clipping import ClipConfig, ClipStats
from engine.nvdp.encoder import TokenStates
from engine.nvdp.layer import NVDPClassifier, NVIBConfig, Posteriors, kl_dirichlet, kl_gaussian

__all__ = [
    "LR_SCHEDULES", "lr_factor", "TrainedNVDP", "EvalResult", "train_nvdp", "evaluate", "save_trained", "load_trained", "TrainingCancelled",
    "save_posteriors", "load_posteriors",
]

ProgressFn = Callable[[float, str], object]
EpochFn = Callable[[int, NVDPClassifier, dict], object]

#: Learning-rate schedules of :func:`train_nvdp`: the product's constant rate, and the authors' linear
#: warm-up (a fraction of the optimisation steps) followed by a linear decay to 0 at the last step.
LR_SCHEDULES: tuple[str, ...] = ("constant", "linear_warmup_decay")


def lr_factor(step: int, total_steps: int, schedule: str = "constant", warmup_fraction: float = 0.06) -> float:
    """Multiplier of the base learning rate for optimisation step ``step`` (0-based) of ``total_steps``.

    ``linear_warmup_decay`` rises linearly as ``step / w`` over the first ``w = int(warmup_fraction *
    total_steps)`` steps and then falls linearly to 0 at ``total_steps`` (the rule of
    ``transformers.get_linear_schedule_with_warmup``, which the authors' code uses).

    >>> lr_factor(5, 100)
    1.0
    >>> [round(lr_factor(s, 100, "linear_warmup_decay"), 4) for s in (0, 3, 6, 53, 100)]
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    if schedule == "constant":
        return 1.0
    if schedule != "linear_warmup_decay":
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}; got {schedule!r}")
    warm = int(warmup_fraction * total_steps)
    if step < warm:
        return step / max(1, warm)
    return max(0.0, (total_steps - step) / max(1, total_steps - warm))


class TrainingCancelled(RuntimeError):
    """Raised when the progress callback returns False."""


@dataclass
class TrainedNVDP:
    """A trained NVDP classifier and its training record.

    Attributes
    ----------
    model : NVDPClassifier
        In eval mode; ``model.clip`` is the clipping it was trained with.
    clip : ClipConfig
    kl_weight : float
    seed : int
    history : list of dict
        One entry per epoch: epoch, train_loss, train_ce, train_kl_g, train_kl_d, val_accuracy, kl_scale.
    best_epoch : int
        1-based epoch whose weights were restored.
    best_val_accuracy : float
    params : dict
        The remaining hyper-parameters (epochs, lr, batch_size, patience, weight_decay, n_train).
    train_seconds : float
    nan_losses : int
        Optimisation steps skipped because the loss or the gradient was NaN/inf (numerical failures).
    """

    model: NVDPClassifier
    clip: ClipConfig
    kl_weight: float
    seed: int
    history: list = field(default_factory=list)
    best_epoch: int = 0
    best_val_accuracy: float = float("nan")
    params: dict = field(default_factory=dict)
    train_seconds: float = 0.0
    nan_losses: int = 0

    def config_dict(self) -> dict:
        """JSON-serialisable description (everything but the weights)."""
        return {
            "nvib": self.model.config.to_dict(),
            "clip": self.clip.to_dict(),
            "kl_weight": self.kl_weight,
            "seed": self.seed,
            "history": self.history,
            "best_epoch": self.best_epoch,
            "best_val_accuracy": self.best_val_accuracy,
            "params": self.params,
            "train_seconds": self.train_seconds,
            "nan_losses": self.nan_losses,
        }


@dataclass
class EvalResult:
    """Outputs of :func:`evaluate`.

    Attributes
    ----------
    accuracy : float
    probs : ndarray of shape (n, n_classes)
    predictions : ndarray of shape (n,)
    raw : Posteriors
        Unclipped posteriors (CPU, detached) -- store these for post-hoc clipping.
    post : Posteriors
        The posteriors actually sampled (clipped when ``clip.enabled``).
    clip : ClipConfig
    clip_stats : ClipStats
        Fractions over the whole evaluated set.
    nan_count, inf_count : int
        Non-finite values among the posterior parameters, samples and logits.
    """

    accuracy: float
    probs: np.ndarray
    predictions: np.ndarray
    raw: Posteriors
    post: Posteriors
    clip: ClipConfig
    clip_stats: ClipStats
    nan_count: int = 0
    inf_count: int = 0


def _validate_labels(states: TokenStates, labels, name: str) -> torch.Tensor:
    if not isinstance(states, TokenStates):
        raise TypeError(f"{name} must be a TokenStates (from engine.nvdp.encoder.encode_sentences); got {type(states).__name__}")
    y = torch.as_tensor(np.asarray(labels), dtype=torch.long)
    if y.ndim != 1 or len(y) != states.n:
        raise ValueError(f"{name} labels must have shape ({states.n},); got {tuple(y.shape)}")
    if states.n == 0:
        raise ValueError(f"{name} is empty")
    return y


def _trimmed(states: TokenStates, sl) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows ``sl`` cut to the longest real sequence among them (padding is inert, so outputs are unchanged
    up to the random draws; this makes a batch of short sentences 2-3x cheaper)."""
    h, m = states.states[sl], states.mask[sl]
    length = max(1, int(m.sum(1).max()))
    return h[:, :length], m[:, :length]


def _length_bucketed_batches(lengths: torch.Tensor, batch_size: int, gen: torch.Generator) -> list[torch.Tensor]:
    """Shuffled mini-batches of similar length: shuffle, cut into pools of 16 batches, sort each pool
    by length, cut into batches, shuffle the batch order (all draws from ``gen``)."""
    n = len(lengths)
    perm = torch.randperm(n, generator=gen)
    pool = batch_size * 16  # keep in sync with steps_per_epoch in train_nvdp
    batches = []
    for p in range(0, n, pool):
        chunk = perm[p : p + pool]
        chunk = chunk[torch.argsort(lengths[chunk], stable=True)]
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    order = torch.randperm(len(batches), generator=gen)
    return [batches[i] for i in order]


def _pad_posteriors(p: Posteriors, k: int) -> Posteriors:
    """Pad posteriors with inert padding components (mu 0, sigma 1, alpha 0, mask False) up to k."""
    extra = k - p.mu.shape[1]
    if extra <= 0:
        return p
    B, _, d = p.mu.shape
    return Posteriors(
        torch.cat([p.mu, p.mu.new_zeros(B, extra, d)], 1),
        torch.cat([p.sigma, p.sigma.new_ones(B, extra, d)], 1),
        torch.cat([p.alpha, p.alpha.new_zeros(B, extra)], 1),
        torch.cat([p.mask, p.mask.new_zeros(B, extra)], 1),
    )


def _check_progress(progress, fraction, message):
    if progress is not None and progress(float(min(max(fraction, 0.0), 1.0)), message) is False:
        raise TrainingCancelled(message)


def _accuracy(model: NVDPClassifier, states: TokenStates, y: torch.Tensor, batch_size: int, seed: int) -> float:
    model.eval()
    correct = 0
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        order = torch.argsort(states.mask.sum(1), stable=True)
        for s in range(0, states.n, batch_size):
            idx = order[s : s + batch_size]
            out = model(*_trimmed(states, idx))
            correct += int((out["logits"].argmax(-1) == y[idx]).sum())
    return correct / states.n


def train_nvdp(
    states: TokenStates,
    labels,
    *,
    val_states: TokenStates | None = None,
    val_labels=None,
    kl_weight: float = 1e-2,
    clip: ClipConfig | None = None,
    seed: int = 0,
    epochs: int = 10,
    lr: float = 1e-3,
    batch_size: int = 32,
    patience: int = 3,
    weight_decay: float = 0.01,
    grad_clip: float = 1.0,
    config: NVIBConfig | None = None,
    progress: ProgressFn | None = None,
    lr_schedule: str = "constant",
    warmup_fraction: float = 0.06,
    on_epoch_end: EpochFn | None = None,
) -> TrainedNVDP:
    """Train the NVDP classifier on cached token states.

    Parameters
    ----------
    states : TokenStates
        Training token states (n, L, d) with mask.
    labels : array-like of shape (n,)
        Integer class labels in [0, n_classes).
    val_states, val_labels : optional
        Validation set for early stopping. If omitted, a stratified 20 % of the training rows
        (by ``seed``) is held out.
    kl_weight : float, default 1e-2
        lambda_G = lambda_D >= 0 (the KL weight, scaled by s(t) decaying linearly 1 -> 0).
    clip : ClipConfig, optional
        Clipping in training and evaluation; default disabled (the unclipped baseline).
    seed : int, default 0
        Seeds ``torch.manual_seed`` (init, sampling) and the shuffling generator.
    epochs : int, default 10
    lr : float, default 1e-3
        AdamW learning rate (the encoder is frozen, so a small-model rate; research notes 5.2).
    batch_size : int, default 32
    patience : int, default 3
        Epochs without a validation-accuracy improvement before stopping; the best epoch is restored.
    weight_decay : float, default 0.01
    grad_clip : float, default 1.0
        Max gradient L2 norm (as in the released code); 0 disables.
    config : NVIBConfig, optional
        Architecture; ``d`` must match the states.
    progress : callable(fraction, message) -> bool or None, optional
        Called after every epoch (and every 10 batches); returning False cancels with
        :class:`TrainingCancelled`.
    lr_schedule : {"constant", "linear_warmup_decay"}, default "constant"
        ``constant`` keeps ``lr`` (the product's default; the shipped models); ``linear_warmup_decay``
        is the authors' schedule (:func:`lr_factor`), over the full budget of ``epochs``.
    warmup_fraction : float in [0, 1), default 0.06
        Share of the optimisation steps of the warm-up (``linear_warmup_decay`` only; the authors' 6 %).
    on_epoch_end : callable(epoch, model, record), optional
        Called after every epoch's validation with the 1-based epoch, the model (in eval mode, the
        weights after that epoch; the callee must not change them) and that epoch's history record.
        Its return value is ignored; it neither draws random numbers nor changes the training.

    Returns
    -------
    TrainedNVDP

    Raises
    ------
    ValueError, TypeError
        Bad settings (negative/non-finite kl_weight, epochs < 1, lr <= 0, batch_size < 1,
        patience < 1, label shape, unknown lr_schedule, warmup_fraction outside [0, 1)), before any training.
    TrainingCancelled
        If the progress callback returns False.
    """
    y = _validate_labels(states, labels, "states")
    if not (isinstance(kl_weight, (int, float)) and math.isfinite(kl_weight) and kl_weight >= 0):
        raise ValueError(f"kl_weight must be a finite number >= 0; got {kl_weight!r}")
    for name, v, lo in (("epochs", epochs, 1), ("batch_size", batch_size, 1), ("patience", patience, 1)):
        if not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an int >= {lo}; got {v!r}")
    if not (isinstance(lr, (int, float)) and lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a finite number > 0; got {lr!r}")
    if not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int; got {seed!r}")
    if lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}; got {lr_schedule!r}")
    if isinstance(warmup_fraction, bool) or not (isinstance(warmup_fraction, (int, float)) and 0 <= warmup_fraction < 1):
        raise ValueError(f"warmup_fraction must be a number in [0, 1); got {warmup_fraction!r}")
    if on_epoch_end is not None and not callable(on_epoch_end):
        raise TypeError(f"on_epoch_end must be callable; got {type(on_epoch_end).__name__}")
    clip = clip if clip is not None else ClipConfig(enabled=False)
    if not isinstance(clip, ClipConfig):
        raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
    n_classes = int(y.max()) + 1 if config is None else config.n_classes
    config = config or NVIBConfig(d=states.d, n_classes=max(2, n_classes))
    if config.d != states.d:
        raise ValueError(f"config.d ({config.d}) does not match the token states' d ({states.d})")
    if int(y.min()) < 0 or int(y.max()) >= config.n_classes:
        raise ValueError(f"labels must be in [0, {config.n_classes}); got range [{int(y.min())}, {int(y.max())}]")
    if val_states is None:
        from sklearn.model_selection import train_test_split

        idx = np.arange(states.n)
        tr, va = train_test_split(idx, test_size=0.2, stratify=y.numpy(), random_state=int(seed))
        val_states, yv = states.subset(np.sort(va)), y[np.sort(va)]
        states, y = states.subset(np.sort(tr)), y[np.sort(tr)]
    else:
        yv = _validate_labels(val_states, val_labels, "val_states")

    t0 = time.perf_counter()
    torch.manual_seed(int(seed))
    gen = torch.Generator().manual_seed(int(seed))
    model = NVDPClassifier(config, clip)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    n = states.n
    pool = batch_size * 16
    steps_per_epoch = sum(math.ceil(min(pool, n - p) / batch_size) for p in range(0, n, pool))
    total_steps = steps_per_epoch * epochs
    ce = nn.CrossEntropyLoss()
    lengths = states.mask.sum(1)
    history, best_state, best_acc, best_epoch, bad_epochs, step, nan_losses = [], None, -1.0, 0, 0, 0, 0
    for epoch in range(1, epochs + 1):
        model.train()
        batches = _length_bucketed_batches(lengths, batch_size, gen)
        sums = {"loss": 0.0, "ce": 0.0, "kl_g": 0.0, "kl_d": 0.0}
        scale = 1.0
        for b, idx in enumerate(batches):
            out = model(*_trimmed(states, idx))
            scale = max(0.0, (total_steps - step) / total_steps)
            l_ce = ce(out["logits"], y[idx])
            l_g = kl_gaussian(out["post"]).mean()
            l_d = kl_dirichlet(out["post"]).mean()
            loss = l_ce + scale * kl_weight * (l_g + l_d)
            step += 1
            if not torch.isfinite(loss):
                nan_losses += 1
                opt.zero_grad(set_to_none=True)
                continue
            opt.zero_grad(set_to_none=True)
            if lr_schedule != "constant":
                for g in opt.param_groups:
                    g["lr"] = lr * lr_factor(step - 1, total_steps, lr_schedule, warmup_fraction)
            loss.backward()
            gnorm = nn.utils.clip_grad_norm_(model.parameters(), grad_clip if grad_clip else float("inf"))
            if not torch.isfinite(gnorm):
                # A non-finite gradient (e.g. from the Gamma reparameterisation at extreme alpha) would turn
                # every weight into NaN: skip the step and count it (reported as a numerical failure).
                nan_losses += 1
                opt.zero_grad(set_to_none=True)
                continue
            opt.step()
            m = len(idx)
            sums["loss"] += float(loss.detach()) * m
            sums["ce"] += float(l_ce.detach()) * m
            sums["kl_g"] += float(l_g.detach()) * m
            sums["kl_d"] += float(l_d.detach()) * m
            if progress is not None and b % 10 == 0:
                _check_progress(progress, (step / total_steps) * 0.98, f"epoch {epoch}/{epochs}, batch {b + 1}/{steps_per_epoch}")
        val_acc = _accuracy(model, val_states, yv, 256, seed=int(seed) + 7919)
        rec = {f"train_{k}": v / n for k, v in sums.items()}
        rec.update(epoch=epoch, val_accuracy=val_acc, kl_scale=scale)
        if lr_schedule != "constant":
            rec["lr"] = float(opt.param_groups[0]["lr"])
        history.append(rec)
        if on_epoch_end is not None:
            on_epoch_end(epoch, model, dict(rec))
            model.eval()
        if val_acc > best_acc:
            best_acc, best_epoch, bad_epochs = val_acc, epoch, 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            bad_epochs += 1
        _check_progress(progress, step / total_steps * 0.98, f"epoch {epoch}/{epochs}: val accuracy {val_acc:.3f} (best {best_acc:.3f})")
        if bad_epochs >= patience:
            break
    model.load_state_dict(best_state)
    model.eval()
    trained = TrainedNVDP(
        model=model,
        clip=clip,
        kl_weight=float(kl_weight),
        seed=int(seed),
        history=history,
        best_epoch=best_epoch,
        best_val_accuracy=best_acc,
        params={"epochs": int(epochs), "lr": float(lr), "batch_size": int(batch_size), "patience": int(patience),
                "weight_decay": float(weight_decay), "grad_clip": float(grad_clip), "n_train": int(n), "n_val": int(val_states.n),
                **({} if lr_schedule == "constant" else {"lr_schedule": lr_schedule,
                                                         "warmup_fraction": float(warmup_fraction)})},
        train_seconds=time.perf_counter() - t0,
        nan_losses=nan_losses,
    )
    if progress is not None:
        progress(1.0, f"done: best validation accuracy {best_acc:.3f} at epoch {best_epoch}")
    return trained


def evaluate(
    trained: TrainedNVDP | NVDPClassifier,
    states: TokenStates,
    labels,
    clip: ClipConfig | None = None,
    *,
    seed: int = 0,
    batch_size: int = 256,
) -> EvalResult:
    """Accuracy and posteriors of a trained model on ``states``.

    Parameters
    ----------
    trained : TrainedNVDP or NVDPClassifier
    states : TokenStates
    labels : array-like of shape (n,)
    clip : ClipConfig, optional
        Clipping at inference; default the one the model was trained with.
    seed : int, default 0
        Seed of the posterior samples (a forked torch generator; the global state is untouched).
    batch_size : int, default 256

    Returns
    -------
    EvalResult
    """
    model = trained.model if isinstance(trained, TrainedNVDP) else trained
    if not isinstance(model, NVDPClassifier):
        raise TypeError(f"trained must be a TrainedNVDP or NVDPClassifier; got {type(trained).__name__}")
    y = _validate_labels(states, labels, "states")
    clip = clip if clip is not None else model.clip
    if not isinstance(clip, ClipConfig):
        raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
    model.eval()
    probs, raws, posts = [], [], []
    nan = inf = 0
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        # Rows are processed in order of length (cheaper batches) and put back in input order below.
        order = torch.argsort(states.mask.sum(1), stable=True)
        for s in range(0, states.n, batch_size):
            out = model(*_trimmed(states, order[s : s + batch_size]), clip=clip)
            probs.append(torch.softmax(out["logits"], -1))
            k = states.states.shape[1] + 1
            raws.append(_pad_posteriors(out["raw"].detach(), k))
            posts.append(_pad_posteriors(out["post"].detach(), k))
            for t in (out["post"].mu, out["post"].sigma, out["post"].alpha, out["z"], out["pi"], out["logits"]):
                nan += int(torch.isnan(t).sum())
                inf += int(torch.isinf(t).sum())
    inv = torch.argsort(order)
    raw = Posteriors.cat(raws)
    post = Posteriors.cat(posts)
    raw = Posteriors(raw.mu[inv], raw.sigma[inv], raw.alpha[inv], raw.mask[inv])
    post = Posteriors(post.mu[inv], post.sigma[inv], post.alpha[inv], post.mask[inv])
    _, stats = raw.clip(clip)
    p = torch.cat(probs)[inv].numpy()
    pred = p.argmax(-1)
    acc = float((pred == y.numpy()).mean())
    return EvalResult(acc, p, pred, raw, post, clip, stats, nan, inf)


def save_trained(trained: TrainedNVDP, directory) -> Path:
    """Save weights (``model.pt``, a state_dict) and ``config.json`` into ``directory`` (created)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    torch.save(trained.model.state_dict(), d / "model.pt")
    (d / "config.json").write_text(json.dumps(trained.config_dict(), indent=2, default=float))
    return d


def load_trained(directory) -> TrainedNVDP:
    """Inverse of :func:`save_trained`.

    Raises
    ------
    FileNotFoundError
        If ``directory`` lacks ``model.pt`` or ``config.json``.
    """
    d = Path(directory)
    if not (d / "model.pt").is_file() or not (d / "config.json").is_file():
        raise FileNotFoundError(f"no saved NVDP model (model.pt + config.json) in {d}")
    cfg = json.loads((d / "config.json").read_text())
    clip = ClipConfig.from_dict(cfg["clip"])
    model = NVDPClassifier(NVIBConfig(**cfg["nvib"]), clip)
    model.load_state_dict(torch.load(d / "model.pt", map_location="cpu", weights_only=True))
    model.eval()
    return TrainedNVDP(
        model=model, clip=clip, kl_weight=cfg["kl_weight"], seed=cfg["seed"], history=cfg.get("history", []),
        best_epoch=cfg.get("best_epoch", 0), best_val_accuracy=cfg.get("best_val_accuracy", float("nan")),
        params=cfg.get("params", {}), train_seconds=cfg.get("train_seconds", 0.0), nan_losses=cfg.get("nan_losses", 0),
    )


def save_posteriors(post: Posteriors, path, *, accuracy: float | None = None) -> Path:
    """Store unclipped eval posteriors (mu, sigma, alpha, mask) once, for post-hoc clipping later.

    Latent positions that are padding for every input are dropped (they carry nothing).

    Parameters
    ----------
    post : Posteriors
        Typically ``EvalResult.raw``.
    path : str or Path
        File to write (``torch.save``; parent folders are created).
    accuracy : float, optional
        Stored alongside (the dashboard shows it next to the post-hoc bounds).
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    k = int(post.mask.sum(1).max())
    torch.save({"mu": post.mu[:, :k].contiguous(), "sigma": post.sigma[:, :k].contiguous(),
                "alpha": post.alpha[:, :k].contiguous(), "mask": post.mask[:, :k].contiguous(),
                "accuracy": accuracy}, p)
    return p


def load_posteriors(path) -> tuple[Posteriors, float | None]:
    """Inverse of :func:`save_posteriors`: ``(Posteriors, accuracy or None)``."""
    blob = torch.load(Path(path), map_location="cpu", weights_only=True)
    return Posteriors(blob["mu"], blob["sigma"], blob["alpha"], blob["mask"].bool()), blob.get("accuracy")
