"""The shipped NVDP training-drift trace (``assets/nvdp/drift_trace.json``): loading, bands and sentences.

The trace is made by ``scripts/nvdp_drift_trace.py`` through ``train_nvdp``'s ``on_epoch_end`` callback:
for two learning-rate schedules (the product's constant rate, the authors' warm-up and linear decay),
seeds 0-2 and every epoch, the worst case over the evaluated pairs (RD max, all pairs), the authors'
filtered max, their mean, BDP and accuracy of three views: the unclipped model, the same model clipped
only at release, and the model trained with clipping. Every sentence here is computed from the trace
(``tests/ui/test_nvdp_claims.py``). No Streamlit here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["load_trace", "bands", "SCHEDULE_NAMES", "VIEW_NAMES", "METRIC_NAMES", "points_text", "drift_lead",
           "drift_note", "drifted_dir", "drifted_figures",
           "write_drifted_sums", "verify_drifted", "release_sentence"]

_ASSETS = Path(__file__).resolve().parents[2] / "assets" / "nvdp"

SCHEDULE_NAMES = {"constant": "the product's constant learning rate",
                  "linear_warmup_decay": "the authors' schedule (6 % warm-up, then linear decay to 0)"}
VIEW_NAMES = {"unclipped": "unclipped", "release": "unclipped, clipped at release", "clipped": "trained with clipping"}
METRIC_NAMES = {"rd_max_all_pairs": "worst case (RD max, all pairs)", "rd_paper_max": "authors' filtered max",
                "rd_paper_mean": "RD mean (paper form)", "accuracy": "accuracy"}


def load_trace(path=None) -> dict:
    """The trace as written by the script (non-finite values as strings are turned back into floats).

    Raises
    ------
    FileNotFoundError
        If the trace is missing.
    """
    p = Path(path) if path is not None else _ASSETS / "drift_trace.json"
    if not p.is_file():
        raise FileNotFoundError(f"no drift trace at {p}; run scripts/nvdp_drift_trace.py")
    return json.loads(p.read_text())


def _f(x) -> float:
    return float(x)  # "inf" / "nan" strings included


def _series(run: dict, view: str) -> list:
    v = run[view]
    return v["epochs"] if isinstance(v, dict) else v


def bands(trace: dict, schedule: str, view: str, metric: str) -> dict:
    """Per epoch, over the seeds: ``epochs``, ``lo``, ``median``, ``hi`` and ``per_seed`` (seed -> values).

    >>> t = {"schedules": {"c": {"seeds": {"0": {"unclipped": {"epochs": [{"accuracy": 0.5}, {"accuracy": 0.7}]}},
    ...                                   "1": {"unclipped": {"epochs": [{"accuracy": 0.6}, {"accuracy": 0.9}]}}}}}}
    >>> bands(t, "c", "unclipped", "accuracy")["hi"]
    [0.6, 0.9]
    """
    import numpy as np

    seeds = trace["schedules"][schedule]["seeds"]
    per_seed = {s: [_f(p[metric]) for p in _series(run, view)] for s, run in seeds.items()}
    arr = np.array(list(per_seed.values()), dtype=float)
    n = arr.shape[1]
    return {"epochs": list(range(1, n + 1)), "lo": arr.min(0).tolist(), "median": np.median(arr, 0).tolist(),
            "hi": arr.max(0).tolist(), "per_seed": per_seed}


def restored(trace: dict, schedule: str, arm: str) -> dict:
    """Seed -> the epoch early stopping (patience 3) restores, for ``arm`` ``"unclipped"`` or ``"clipped"``."""
    return {s: int(run[arm]["restored"]) for s, run in trace["schedules"][schedule]["seeds"].items()}


def points_text(points) -> str:
    """``[[seed, epoch], ...]`` as "seed 0: epochs 8, 9; seed 2: epoch 10", or "none".

    >>> points_text([[0, 8], [2, 10], [0, 9]])
    'seed 0: epochs 8, 9; seed 2: epoch 10'
    >>> points_text([])
    'none'
    """
    by: dict = {}
    for s, e in points:
        by.setdefault(int(s), []).append(int(e))
    if not by:
        return "none"
    return "; ".join(f"seed {s}: epoch{'s' if len(es) > 1 else ''} {', '.join(str(e) for e in sorted(es))}"
                     for s, es in sorted(by.items()))


def _median_at(trace, schedule, view, metric, epoch_idx) -> float:
    return bands(trace, schedule, view, metric)["median"][epoch_idx]


def drift_lead(trace: dict) -> str:
    """The drift view's lead: per schedule, how the unclipped worst case moves over training and at how many
    (seed, epoch) points clipping (in training, and at release only) gives a lower worst case."""
    parts = []
    for sched, s in trace["summary"].items():
        first = _median_at(trace, sched, "unclipped", "rd_max_all_pairs", 0)
        last = _median_at(trace, sched, "unclipped", "rd_max_all_pairs", -1)
        peak = max(bands(trace, sched, "unclipped", "rd_max_all_pairs")["hi"])
        n = s["n_points"]
        parts.append(
            f"With {SCHEDULE_NAMES[sched]}, the unclipped model's worst case (median over {s['n_seeds']} seeds) goes "
            f"from {first:.3g} after epoch 1 to {last:.3g} after the last epoch (highest seed-epoch {peak:.3g}); "
            f"training with clipping gives a lower worst case at {s['clipped_lower_rd_max_all_pairs']} of {n} "
            f"seed-epochs, clipping only at release at {s['release_lower_rd_max_all_pairs']} of {n}.")
    return " ".join(parts)


def drift_note(trace: dict) -> str:
    """The closing note: per schedule, the seeds and epochs where clipping lowers the worst case, and the
    restored epochs."""
    out = []
    for sched, s in trace["summary"].items():
        r = s["restored_epochs"]
        out.append(
            f"**{SCHEDULE_NAMES[sched][0].upper() + SCHEDULE_NAMES[sched][1:]}.** Training with clipping lowers the "
            f"worst case at {points_text(s['clipped_lower_rd_max_all_pairs_points'])}; clipping at release lowers it at "
            f"{points_text(s['release_lower_rd_max_all_pairs_points'])}. Early stopping (patience 3) restores epochs "
            f"{', '.join(map(str, r['unclipped']))} (unclipped) and {', '.join(map(str, r['clipped']))} (clipped) for "
            f"seeds {', '.join(trace['schedules'][sched]['seeds'])}; at those restored models training with clipping "
            f"gives the lower worst case in {len(s['restored_clipped_lower_worst_seeds'])} of {s['n_seeds']} seeds.")
    return "\n\n".join(out)


def drifted_dir() -> Path:
    """Folder of the shipped drifted checkpoint (constant rate, unclipped, seed 0, last epoch)."""
    return _ASSETS / "drifted"


DRIFTED_FILES = ("config.json", "model.safetensors", "figures.json")


def write_drifted_sums(directory=None) -> Path:
    """``SHA256SUMS`` of the drifted checkpoint's files (the script writes it after the files)."""
    import hashlib

    d = Path(directory) if directory is not None else drifted_dir()
    lines = [f"{hashlib.sha256((d / n).read_bytes()).hexdigest()}  {n}" for n in DRIFTED_FILES]
    (d / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    return d / "SHA256SUMS"


def verify_drifted(directory=None) -> None:
    """Raise ValueError if a file of the drifted checkpoint does not match its ``SHA256SUMS``."""
    import hashlib

    d = Path(directory) if directory is not None else drifted_dir()
    for line in (d / "SHA256SUMS").read_text().splitlines():
        want, name = line.split("  ", 1)
        got = hashlib.sha256((d / name).read_bytes()).hexdigest()
        if got != want:
            raise ValueError(f"drifted checkpoint file {d / name} does not match SHA256SUMS; rerun "
                             "scripts/nvdp_drift_trace.py --drifted")


def drifted_figures(directory=None) -> dict:
    """The drifted checkpoint's recorded figures (``figures.json``): unclipped and clipped at release."""
    d = Path(directory) if directory is not None else drifted_dir()
    blob = json.loads((d / "figures.json").read_text())
    for k in ("unclipped", "clipped_at_release"):
        blob[k] = {m: _f(v) if not isinstance(v, int) else v for m, v in blob[k].items()}
    return blob


def release_sentence(fig: dict) -> str:
    """What clipping at release does to the drifted checkpoint, from its recorded figures.

    >>> release_sentence({"epoch": 10, "unclipped": {"rd_max_all_pairs": 1.5, "accuracy": 0.856},
    ...                   "clipped_at_release": {"rd_max_all_pairs": 0.75, "accuracy": 0.88}})
    'On the drifted checkpoint (epoch 10, constant rate), clipping at release moves the worst case from 1.5 to 0.75 (2 times lower) and the accuracy from 85.6 % to 88.0 %.'
    """
    u, c = fig["unclipped"], fig["clipped_at_release"]
    wu, wc = _f(u["rd_max_all_pairs"]), _f(c["rd_max_all_pairs"])
    ratio = wu / wc if wc > 0 else math.inf
    change = (f"{ratio:.3g} times lower" if ratio > 1 else (f"{1 / ratio:.3g} times higher" if ratio < 1 else "unchanged"))
    return (f"On the drifted checkpoint (epoch {fig['epoch']}, constant rate), clipping at release moves the worst case "
            f"from {wu:.3g} to {wc:.3g} ({change}) and the accuracy from {100 * _f(u['accuracy']):.1f} % to "
            f"{100 * _f(c['accuracy']):.1f} %.")
