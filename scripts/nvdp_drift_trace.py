#!/usr/bin/env python
"""The NVDP training-drift trace: per-epoch bounds of clipped vs unclipped training, two LR schedules.

For every learning-rate schedule (the product's ``constant`` rate and the authors' ``linear_warmup_decay``:
6 % linear warm-up, then linear decay to 0), every seed and both arms of the page's default settings
(``ExploreSettings()``: KL weight 1e-2, 1,000 training sentences, 10 epochs, the authors' clipping C_mu 5,
alpha in [0, 1], lambda 1.1), trains for the full budget (``patience`` = epochs, so no early stop; the
KL weight's decay and the LR schedule are fixed by the budget, so the weights of epoch e are those of a
run with early stopping) and evaluates the model after every epoch, through ``train_nvdp``'s
``on_epoch_end`` callback, under the one protocol the page uses
(``LiveEvaluator.evaluate(clip, protocol=DEFAULT_PROTOCOL)``):

- the unclipped model without clipping (``unclipped``),
- the same unclipped model clipped only at release with the training clipping (``release``),
- the model trained with clipping, under its own clipping (``clipped``).

Each point has the worst case (RD max over all evaluated pairs), the authors' filtered max, their mean,
the paper-form BDP and the test accuracy. Early stopping with the settings' patience (3) is replayed on
the recorded validation accuracies (``restored``). The summary counts, per schedule, the (seed, epoch)
points where each kind of clipping gives a lower worst case than the unclipped model.

Writes ``assets/nvdp/drift_trace.json`` (tens of kB) and, with ``--drifted``, the drifted checkpoint
``assets/nvdp/drifted/`` (constant rate, unclipped, seed 0, last epoch: the model the page's
"clipped only at release" switch acts on).

``--check`` rebuilds into a temporary folder and compares within tolerances (training on another CPU
moves late-epoch values by up to several times, see docs/specs/NVDP.md): accuracy within 2 points, each
worst-case / filtered-max / mean within 25 % relative -- reported as the share of points within it,
which must be at least ``--check-share`` -- and the restored epochs and counts reported side by side. The
counts of points where clipping lowers the worst case may move by flipped points: each flip is named,
marginal (its recorded pair within the tolerance of each other, :func:`engine.nvdp.reproduce.marginal`)
or clear; clear flips may be at most ``1 - --check-share`` of the points. ``--schedules`` and ``--seeds``
check a part of the trace (one part takes ~ 50 min at load 10); ``--keep`` / ``--rebuilt`` keep a rebuilt
trace and compare it again without training.
``--strict`` requires identical bytes. Usage::

    nice -n 10 python scripts/nvdp_drift_trace.py --drifted          # ~ 10-20 min of one core
    python scripts/nvdp_drift_trace.py --check                       # rebuild and compare
    python scripts/nvdp_drift_trace.py --check --schedules constant --seeds 0   # one of the six parts
    python scripts/nvdp_drift_trace.py --seeds 0 --epochs 2 --n-train 100 --out /tmp/t.json   # a smoke run
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

DEFAULT_OUT = ROOT / "assets" / "nvdp" / "drift_trace.json"
DEFAULT_DRIFTED = ROOT / "assets" / "nvdp" / "drifted"
SCHEDULES = ("constant", "linear_warmup_decay")
METRICS = ("accuracy", "rd_max_all_pairs", "rd_paper_max", "rd_paper_mean", "bdp_paper")
VIEWS = ("unclipped", "release", "clipped")


def _r(x, digits=6):
    """A float for the JSON: 6 significant digits, non-finite as a string."""
    x = float(x)
    if not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    return float(f"{x:.{digits}g}")


def replay_early_stopping(val_accs, patience: int) -> tuple[int, int]:
    """(restored epoch, epochs run) of ``train_nvdp``'s rule (strict improvement, stop after ``patience`` misses).

    >>> replay_early_stopping([0.5, 0.6, 0.6, 0.59, 0.58, 0.9], 3)
    (2, 5)
    """
    best, best_epoch, bad = -1.0, 0, 0
    for e, a in enumerate(val_accs, start=1):
        if a > best:
            best, best_epoch, bad = a, e, 0
        else:
            bad += 1
        if bad >= patience:
            return best_epoch, e
    return best_epoch, len(val_accs)


def _point(r) -> dict:
    return {"accuracy": _r(r.accuracy), "rd_max_all_pairs": _r(r.rd_paper.max_unfiltered), "rd_paper_max": _r(r.rd_paper.max),
            "rd_paper_mean": _r(r.rd_paper.mean), "bdp_paper": _r(r.bdp_paper.epsilon)}


def summarise(trace: dict) -> dict:
    """Per schedule: where clipping (in training, or at release only) lowers each RD figure.

    Counts are over (seed, epoch) points; ``*_points`` lists them as ``[seed, epoch]``. Also the restored
    epochs and, at the restored models, the seeds where training with clipping lowers the worst case.
    """
    out = {}
    for sched, block in trace["schedules"].items():
        s = {"n_points": 0}
        for kind in ("clipped", "release"):
            for m in ("rd_max_all_pairs", "rd_paper_max", "rd_paper_mean"):
                s[f"{kind}_lower_{m}"] = 0
                s[f"{kind}_lower_{m}_points"] = []
        restored_lower, last_lower = [], []
        for seed, run in block["seeds"].items():
            un, rel, cl = run["unclipped"]["epochs"], run["release"], run["clipped"]["epochs"]
            for e, (pu, pr, pc) in enumerate(zip(un, rel, cl), start=1):
                s["n_points"] += 1
                for kind, p in (("clipped", pc), ("release", pr)):
                    for m in ("rd_max_all_pairs", "rd_paper_max", "rd_paper_mean"):
                        if float(p[m]) < float(pu[m]):
                            s[f"{kind}_lower_{m}"] += 1
                            s[f"{kind}_lower_{m}_points"].append([int(seed), e])
            ru, rc = run["unclipped"]["restored"], run["clipped"]["restored"]
            if float(cl[rc - 1]["rd_max_all_pairs"]) < float(un[ru - 1]["rd_max_all_pairs"]):
                restored_lower.append(int(seed))
            if float(cl[-1]["rd_max_all_pairs"]) < float(un[-1]["rd_max_all_pairs"]):
                last_lower.append(int(seed))
        s["restored_clipped_lower_worst_seeds"] = restored_lower
        s["last_epoch_clipped_lower_worst_seeds"] = last_lower
        s["restored_epochs"] = {arm: [run[arm]["restored"] for run in block["seeds"].values()] for arm in ("unclipped", "clipped")}
        s["n_seeds"] = len(block["seeds"])
        out[sched] = s
    return out


def build(args, out_json: Path, drifted_dir: Path | None, log=print) -> dict:
    import numpy as np
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    from engine.nvdp.bundled import save_model
    from engine.nvdp.clipping import ClipConfig
    from engine.nvdp.encoder import encode_sentences
    from engine.nvdp.explore_settings import ExploreSettings, select_sentences
    from engine.nvdp.explorer_models import encode_training_split
    from engine.nvdp.posthoc import LiveEvaluator
    from engine.nvdp.protocol import DEFAULT_PROTOCOL
    from engine.nvdp.training import TrainedNVDP, train_nvdp

    base = ExploreSettings(n_train=args.n_train or None, epochs=args.epochs)
    tr_states, tr_y, va_states, va_y = encode_training_split(base)
    sentences, labels, _, _, te = select_sentences(base)
    if args.n_test:
        te = te[: args.n_test]
    test_states = encode_sentences([sentences[i] for i in te], max_length=base.max_length)
    test_y = labels[te]
    clip_c, no_clip = base.train_clip, ClipConfig(enabled=False)
    settings = {k: v for k, v in base.to_dict().items() if k != "lr_schedule"}  # both schedules are traced
    trace = {"settings": {**settings, "warmup_fraction": 0.06, "n_test": len(te)},
             "protocol": DEFAULT_PROTOCOL.to_dict(), "seeds": list(args.seeds),
             "views": {"unclipped": "trained without clipping, released without clipping",
                       "release": "trained without clipping, clipped at release with the training clipping",
                       "clipped": "trained with clipping, released with it"},
             "schedules": {}}
    t_all = time.perf_counter()
    for sched in args.schedules:
        block = {"seeds": {}}
        for seed in args.seeds:
            run = {}
            for arm in ("unclipped", "clipped"):
                torch.manual_seed(0)
                np.random.seed(0)
                clip = clip_c if arm == "clipped" else no_clip
                points, releases = [], []

                def at_epoch(epoch, model, rec, clip=clip, arm=arm, points=points, releases=releases):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        ev = LiveEvaluator(model, test_states, test_y)
                        points.append({"epoch": epoch, "val_accuracy": _r(rec["val_accuracy"]), **_point(
                            ev.evaluate(clip, protocol=DEFAULT_PROTOCOL))})
                        if arm == "unclipped":
                            releases.append({"epoch": epoch, **_point(ev.evaluate(clip_c, protocol=DEFAULT_PROTOCOL))})
                    p = points[-1]
                    log(f"{sched} seed {seed} {arm} epoch {epoch}: acc {p['accuracy']} worst {p['rd_max_all_pairs']} "
                        f"filtered {p['rd_paper_max']} mean {p['rd_paper_mean']}"
                        + (f" | release-clipped worst {releases[-1]['rd_max_all_pairs']} acc {releases[-1]['accuracy']}"
                           if releases else ""))

                last_weights = {}

                def keep_last(epoch, model, rec, at_epoch=at_epoch):
                    at_epoch(epoch, model, rec)
                    if epoch == base.epochs:
                        last_weights.update({k: v.detach().clone() for k, v in model.state_dict().items()})

                t0, c0 = time.perf_counter(), time.process_time()
                trained = train_nvdp(tr_states, tr_y, val_states=va_states, val_labels=va_y, kl_weight=base.kl_weight,
                                     clip=clip, seed=seed, epochs=base.epochs, lr=base.lr, batch_size=base.batch_size,
                                     patience=base.epochs, lr_schedule=sched, warmup_fraction=0.06, on_epoch_end=keep_last)
                restored, ran = replay_early_stopping([h["val_accuracy"] for h in trained.history], base.patience)
                run[arm] = {"epochs": points, "restored": restored, "stopped_after": ran, "nan_steps": trained.nan_losses}
                if arm == "unclipped":
                    run["release"] = releases
                log(f"{sched} seed {seed} {arm}: {base.epochs} epochs in {time.perf_counter() - t0:.0f} s wall / "
                    f"{time.process_time() - c0:.0f} s CPU; early stopping restores epoch {restored} (stops after {ran}); "
                    f"load {os.getloadavg()[0]:.1f}")
                if drifted_dir is not None and sched == "constant" and seed == args.seeds[0] and arm == "unclipped":
                    trained.model.load_state_dict(last_weights)
                    trained.model.eval()
                    m = TrainedNVDP(model=trained.model, clip=no_clip, kl_weight=trained.kl_weight, seed=seed,
                                    history=trained.history, best_epoch=base.epochs,
                                    best_val_accuracy=trained.history[-1]["val_accuracy"],
                                    params={**trained.params, "patience": base.epochs,
                                            "note": "drifted: the last epoch of a constant-rate run, no early stopping"},
                                    train_seconds=0.0, nan_losses=trained.nan_losses)
                    save_model(m, drifted_dir)
                    (drifted_dir / "figures.json").write_text(json.dumps({
                        "seed": seed, "epoch": base.epochs, "lr_schedule": sched, "unclipped": points[-1],
                        "clipped_at_release": releases[-1]}, indent=2, sort_keys=True) + "\n")
                    from engine.nvdp.drift import write_drifted_sums

                    write_drifted_sums(drifted_dir)
            block["seeds"][str(seed)] = run
        trace["schedules"][sched] = block
    trace["summary"] = summarise(trace)
    trace["made"] = {"torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
                     "torch_threads": 1, "seconds": round(time.perf_counter() - t_all), "load_average": round(os.getloadavg()[0], 1)}
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(trace, sort_keys=True, separators=(",", ":")) + "\n")
    return trace


def merge(traces: list) -> dict:
    """One trace from several of the same settings, each with other schedules or seeds (runs made in
    parallel); the summary recomputed.

    Raises
    ------
    ValueError
        If the settings or protocol differ, a (schedule, seed) appears twice, or the schedules end up with
        different seeds.
    """
    first = traces[0]
    out = {k: v for k, v in first.items() if k not in ("schedules", "summary", "made")}
    out["schedules"], out["made"] = {}, {"parts": []}
    seeds = set()
    for t in traces:
        for k in ("settings", "protocol"):
            if t[k] != first[k]:
                raise ValueError(f"cannot merge traces with different {k}")
        seeds |= set(t["seeds"])
        for sched, block in t["schedules"].items():
            dst = out["schedules"].setdefault(sched, {"seeds": {}})["seeds"]
            for seed, run in block["seeds"].items():
                if seed in dst:
                    raise ValueError(f"schedule {sched}, seed {seed} appears in two traces")
                dst[seed] = run
        out["made"]["parts"].append({**t["made"], "schedules": list(t["schedules"]), "seeds": t["seeds"]})
    out["seeds"] = sorted(seeds)
    for sched, block in out["schedules"].items():
        if sorted(int(x) for x in block["seeds"]) != out["seeds"]:
            raise ValueError(f"schedule {sched} has seeds {sorted(block['seeds'])}, the others {out['seeds']}")
        block["seeds"] = {str(x): block["seeds"][str(x)] for x in out["seeds"]}
    out["schedules"] = {s: out["schedules"][s] for s in SCHEDULES if s in out["schedules"]}
    out["summary"] = summarise(out)
    return out


def markdown(trace: dict) -> str:
    """The trace's summary as markdown (docs/nvdp_results.md): per schedule and seed, the restored epochs, the
    worst case at epochs 1, the restored one and 10 for each view, and the counts."""
    lines = ["| schedule | seed | restored (unclipped / clipped) | unclipped worst case: epoch 1 / restored / last | "
             "clipped at release, last | trained with clipping: restored / last | accuracy last: unclipped / release / clipped |",
             "|---|---|---|---|---|---|---|"]
    for sched, block in trace["schedules"].items():
        for seed, run in block["seeds"].items():
            u, c, r = run["unclipped"]["epochs"], run["clipped"]["epochs"], run["release"]
            ru, rc = run["unclipped"]["restored"], run["clipped"]["restored"]
            w = lambda p: f"{float(p['rd_max_all_pairs']):.3g}"  # noqa: E731
            lines.append(f"| {sched} | {seed} | {ru} / {rc} | {w(u[0])} / {w(u[ru - 1])} / {w(u[-1])} | {w(r[-1])} | "
                         f"{w(c[rc - 1])} / {w(c[-1])} | {100 * float(u[-1]['accuracy']):.1f} / "
                         f"{100 * float(r[-1]['accuracy']):.1f} / {100 * float(c[-1]['accuracy']):.1f} |")
    out = ["\n".join(lines), ""]
    for sched, s in trace["summary"].items():
        out.append(f"- **{sched}**: training with clipping lowers the worst case at {s['clipped_lower_rd_max_all_pairs']} "
                   f"of {s['n_points']} seed-epochs, the filtered max at {s['clipped_lower_rd_paper_max']}, the mean at "
                   f"{s['clipped_lower_rd_paper_mean']}; clipping at release lowers them at "
                   f"{s['release_lower_rd_max_all_pairs']} / {s['release_lower_rd_paper_max']} / "
                   f"{s['release_lower_rd_paper_mean']}. Worst case lower with training clipping at: "
                   f"{s['clipped_lower_rd_max_all_pairs_points']}; with release clipping at: "
                   f"{s['release_lower_rd_max_all_pairs_points']}.")
    return "\n".join(out)


def compare(want: dict, got: dict, *, acc_points: float = 2.0, rel: float = 0.25) -> dict:
    """Per schedule, arm or view and metric: the share of points within tolerance of the recorded trace.

    Accuracy: within ``acc_points`` percentage points; RD figures and BDP: within ``rel`` relative.

    >>> t = {"schedules": {"c": {"seeds": {"0": {"unclipped": {"epochs": [{"accuracy": 0.8, "rd_max_all_pairs": 1.0}]}}}}}}
    >>> u = {"schedules": {"c": {"seeds": {"0": {"unclipped": {"epochs": [{"accuracy": 0.81, "rd_max_all_pairs": 1.3}]}}}}}}
    >>> compare(t, u)["shares"]
    {'accuracy': 1.0, 'rd_max_all_pairs': 0.0}
    """
    hits: dict = {}
    for sched, block in want["schedules"].items():
        for seed, run in block["seeds"].items():
            g = got["schedules"][sched]["seeds"][seed]
            for view in VIEWS:
                if view not in run:
                    continue
                a = run[view]["epochs"] if isinstance(run[view], dict) else run[view]
                b = g[view]["epochs"] if isinstance(g[view], dict) else g[view]
                if len(a) != len(b):
                    raise ValueError(f"{sched} seed {seed} {view}: {len(a)} recorded epochs, {len(b)} rebuilt")
                for pa, pb in zip(a, b):
                    for m in METRICS:
                        if m not in pa:
                            continue
                        x, y = float(pa[m]), float(pb[m])
                        ok = abs(x - y) * 100 <= acc_points if m == "accuracy" else (
                            x == y or abs(x - y) <= rel * max(abs(x), 1e-300))
                        hits.setdefault(m, []).append(ok)
    return {"shares": {m: sum(v) / len(v) for m, v in hits.items()}, "n": {m: len(v) for m, v in hits.items()}}


def count_flips(want: dict, got: dict, rel: float = 0.25) -> dict:
    """Per schedule and kind of clipping, the (seed, epoch) points where "clipping lowers the worst case" flipped.

    Each flip is ``[seed, epoch, marginal]``: marginal when the recorded pair of worst cases (clipped or
    released vs unclipped) lies within the relative tolerance of each other (their ``x (1 +- rel)``
    intervals overlap, :func:`engine.nvdp.reproduce.marginal`), so another CPU may count it the other way.

    >>> p = lambda w: {"rd_max_all_pairs": w}
    >>> t = {"schedules": {"c": {"seeds": {"0": {"unclipped": {"epochs": [p(1.0), p(1.0)]}, "release": [p(0.9), p(0.3)],
    ...      "clipped": {"epochs": [p(1.1), p(1.1)]}}}}}}
    >>> u = {"schedules": {"c": {"seeds": {"0": {"unclipped": {"epochs": [p(0.8), p(0.2)]}, "release": [p(0.9), p(0.3)],
    ...      "clipped": {"epochs": [p(1.1), p(1.1)]}}}}}}
    >>> count_flips(t, u)["c"]["release"]
    [[0, 1, True], [0, 2, False]]
    """
    from engine.nvdp.reproduce import marginal

    out = {}
    for sched, block in want["schedules"].items():
        out[sched] = {"clipped": [], "release": []}
        for seed, run in block["seeds"].items():
            g = got["schedules"][sched]["seeds"][seed]
            for kind in ("clipped", "release"):
                a = run[kind]["epochs"] if isinstance(run[kind], dict) else run[kind]
                b = g[kind]["epochs"] if isinstance(g[kind], dict) else g[kind]
                for e, (ua, ka, ub, kb) in enumerate(zip(run["unclipped"]["epochs"], a, g["unclipped"]["epochs"], b), start=1):
                    lower_a = float(ka["rd_max_all_pairs"]) < float(ua["rd_max_all_pairs"])
                    lower_b = float(kb["rd_max_all_pairs"]) < float(ub["rd_max_all_pairs"])
                    if lower_a != lower_b:
                        row = {"clipped": {"rd_max_all_pairs": ka["rd_max_all_pairs"]}, "unclipped": {"rd_max_all_pairs": ua["rd_max_all_pairs"]}}
                        out[sched][kind].append([int(seed), e, marginal("rd_max_all_pairs_lower", row, {"rd_relative": rel})])
    return out


def subset(trace: dict, seeds=None, schedules=None) -> dict:
    """The part of a trace with only these seeds and schedules (None: all), its summary recomputed.

    Raises
    ------
    ValueError
        If a seed or schedule asked for is not in the trace.
    """
    seeds = [int(x) for x in trace["seeds"]] if seeds is None else [int(x) for x in seeds]
    schedules = list(trace["schedules"]) if schedules is None else list(schedules)
    missing = [x for x in seeds if x not in [int(y) for y in trace["seeds"]]] + [x for x in schedules if x not in trace["schedules"]]
    if missing:
        raise ValueError(f"not in the recorded trace: {missing} (it has seeds {trace['seeds']}, schedules {list(trace['schedules'])})")
    out = {**trace, "seeds": seeds,
           "schedules": {k: {"seeds": {str(x): trace["schedules"][k]["seeds"][str(x)] for x in seeds}} for k in schedules}}
    out["summary"] = summarise(out)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--seeds", type=int, nargs="+", default=None,
                   help="seeds to trace (default 0 1 2); with --check: check only these of the recorded seeds")
    p.add_argument("--schedules", nargs="+", default=None, choices=SCHEDULES,
                   help="schedules to trace (default both); with --check: check only these of the recorded ones")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--n-train", type=int, default=1000)
    p.add_argument("--n-test", type=int, default=0, help="first N test sentences only (0: all 500; smoke runs)")
    p.add_argument("--drifted", action="store_true", help="also write the drifted checkpoint to assets/nvdp/drifted/")
    p.add_argument("--drifted-dir", default=str(DEFAULT_DRIFTED))
    p.add_argument("--check", action="store_true", help="rebuild into a temporary folder and compare with --out")
    p.add_argument("--check-share", type=float, default=0.8,
                   help="least share of points within tolerance per metric for --check to pass (default 0.8)")
    p.add_argument("--strict", action="store_true", help="with --check: require identical bytes")
    p.add_argument("--keep", metavar="TRACE", default=None,
                   help="with --check: also write the rebuilt trace here (to compare again with --rebuilt)")
    p.add_argument("--rebuilt", metavar="TRACE", default=None,
                   help="with --check: compare this earlier rebuilt trace (--keep) instead of training again")
    p.add_argument("--markdown", action="store_true", help="print the summary of --out as markdown and exit")
    p.add_argument("--merge", nargs="+", metavar="TRACE", default=None,
                   help="merge traces of the same settings made for different schedules (run in parallel) into --out")
    args = p.parse_args(argv)
    out = Path(args.out)
    if args.markdown:
        print(markdown(json.loads(out.read_text())))
        return 0
    if args.merge:
        trace = merge([json.loads(Path(m).read_text()) for m in args.merge])
        out.write_text(json.dumps(trace, sort_keys=True, separators=(",", ":")) + "\n")
        print(json.dumps(trace["summary"], indent=1))
        return 0
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    log = lambda *a: print(*a, flush=True)  # noqa: E731
    if not args.check:
        args.seeds, args.schedules = args.seeds or [0, 1, 2], args.schedules or list(SCHEDULES)
        trace = build(args, out, Path(args.drifted_dir) if args.drifted else None, log)
        print(json.dumps(trace["summary"], indent=1))
        return 0
    want = subset(json.loads(out.read_text()), args.seeds, args.schedules)
    s = want["settings"]
    args.seeds, args.epochs, args.n_train = [int(x) for x in want["seeds"]], int(s["epochs"]), s["n_train"] or 0
    args.schedules = list(want["schedules"])
    print(f"checking schedules {args.schedules}, seeds {args.seeds}", flush=True)
    args.n_test = int(s["n_test"]) if int(s["n_test"]) < 500 else 0
    if args.rebuilt:
        got_text = Path(args.rebuilt).read_text()
        got = subset(json.loads(got_text), args.seeds, args.schedules)
        print(f"comparing the rebuilt trace {args.rebuilt}")
    else:
        with tempfile.TemporaryDirectory(prefix="nvdp_drift_") as tmp:
            got = build(args, Path(tmp) / "trace.json", None, log)
            got_text = (Path(tmp) / "trace.json").read_text()
        if args.keep:
            Path(args.keep).write_text(got_text)
    if args.strict:
        ok = json.loads(got_text)["schedules"] == want["schedules"]
        print("identical" if ok else "DIFFERENT (--strict: the traces differ)")
        return 0 if ok else 1
    res = compare(want, got)
    for m, share in res["shares"].items():
        print(f"{m}: {100 * share:.0f} % of {res['n'][m]} points within tolerance")
    for sched in want["summary"]:
        a, b = want["summary"][sched], got["summary"][sched]
        print(f"{sched}: training clipping lowers the worst case at {a['clipped_lower_rd_max_all_pairs']}/{a['n_points']} "
              f"recorded vs {b['clipped_lower_rd_max_all_pairs']}/{b['n_points']} rebuilt points; release clipping "
              f"{a['release_lower_rd_max_all_pairs']} vs {b['release_lower_rd_max_all_pairs']}; restored epochs "
              f"{a['restored_epochs']} vs {b['restored_epochs']}")
    bad = [m for m, share in res["shares"].items() if share < args.check_share]
    # a count may move by points that flipped; a flip on a clear point (its recorded pair farther apart than the
    # tolerance) needs a point outside the tolerance, of which at most 1 - check_share are allowed
    flips = count_flips(want, got)
    for sched, kinds in flips.items():
        n_points = want["summary"][sched]["n_points"]
        for kind, fl in kinds.items():
            marg = [f"{sd}/{e}" for sd, e, m in fl if m]
            clear = [f"{sd}/{e}" for sd, e, m in fl if not m]
            print(f"{sched}, {'training' if kind == 'clipped' else 'release'} clipping lowers the worst case: {len(fl)} of {n_points} seed/epoch points flipped; "
                  f"marginal {marg or 'none'}, clear {clear or 'none'}")
            if len(clear) > (1 - args.check_share) * n_points + 1e-9:
                bad.append(f"{sched} {kind}: {len(clear)} clear flips of {n_points} points")
    if bad:
        print(f"DIFFERENT beyond tolerance: {bad}")
        return 1
    print(f"within tolerance (>= {100 * args.check_share:.0f} % of points per figure; count flips: clear ones at most "
          f"{100 * (1 - args.check_share):.0f} % of points)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
