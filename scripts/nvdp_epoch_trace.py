#!/usr/bin/env python
"""Per-epoch trace of clipped vs unclipped NVDP training under the one evaluation protocol.

For every seed and arm, trains the model of ``ExploreSettings(kl_weight, seed, n_train, train_clip with
C_mu)`` for the full epoch budget (``patience`` = budget, so it never stops early), keeps the weights
after every epoch, and evaluates each epoch's model with ``LiveEvaluator.evaluate(own clipping,
protocol=DEFAULT_PROTOCOL)`` (what the page and ``scripts/make_nvdp_models.py`` show). Early stopping
with the settings' patience (3) is then replayed on the recorded validation accuracies: stopping does
not change the training before it (the KL schedule s(t) is fixed by the budget, the RNG use per epoch
is the same), so the replayed model is the one ``train_model`` returns bit for bit (checked against
``--check-sha``, a model SHA-256 of ``assets/nvdp/seeds.json``, when given).

This shows which epoch early stopping restores in each arm and whether the unclipped posteriors drift
late in training (the drift clipping exists for), hidden by the restored early epoch.

Rows go to ``<out>/trace.csv`` (one per seed x arm x epoch; ``restored`` marks the early-stopped
model's epoch, ``last`` the last epoch). Usage::

    nice -n 10 python scripts/nvdp_epoch_trace.py --C-mu 3 --seeds 0 1 2 --out artifacts/nvdp_trace_cmu3
    python scripts/nvdp_epoch_trace.py --summary --out artifacts/nvdp_trace_cmu3
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

FIELDS = ["kl_weight", "C_mu", "n_train", "seed", "arm", "epoch", "val_accuracy", "kl_scale", "restored", "last",
          "accuracy", "rd_max_all_pairs", "rd_paper_max", "rd_paper_mean", "rd_mean_all_pairs", "bdp_paper",
          "rd_exact_max", "rd_exact_n_inf", "rd_exact_mean_finite", "alpha_max", "alpha_total_max", "mu_norm_median",
          "mu_norm_max", "frac_mu", "frac_alpha_high", "frac_alpha_low", "model_sha256", "val_history"]


def replay_early_stopping(val_accs, patience: int) -> tuple[int, int]:
    """(restored epoch, epochs run) of ``train_nvdp``'s rule (strict improvement, stop after ``patience`` misses)."""
    best, best_epoch, bad = -1.0, 0, 0
    for e, a in enumerate(val_accs, start=1):
        if a > best:
            best, best_epoch, bad = a, e, 0
        else:
            bad += 1
        if bad >= patience:
            return best_epoch, e
    return best_epoch, len(val_accs)


def train_with_snapshots(states, labels, **kw):
    """``train_nvdp(..., patience=epochs)`` (never stops early) and the model weights after every epoch.

    Returns
    -------
    trained : TrainedNVDP
        The run (its weights are those of its best epoch; ``history`` has every epoch).
    snaps : list of dict
        ``state_dict`` copies after epochs 1, 2, ..., ``epochs``.
    """
    from engine.nvdp.training import train_nvdp

    snaps = []

    def grab(fraction, message):
        # train_nvdp reports "epoch k/E: val accuracy ..." after every epoch; the model is the caller's
        # local (an experiment script's hook, not library code)
        if ": val accuracy" in message:
            f = sys._getframe(1)
            while f is not None and "model" not in f.f_locals:
                f = f.f_back
            snaps.append({k: v.detach().clone() for k, v in f.f_locals["model"].state_dict().items()})
        return True

    trained = train_nvdp(states, labels, patience=kw["epochs"], progress=grab, **kw)
    return trained, snaps


def run(args) -> None:
    import hashlib
    import tempfile

    import numpy as np
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    from engine.nvdp.bundled import save_model
    from engine.nvdp.clipping import ClipConfig
    from engine.nvdp.encoder import encode_sentences
    from engine.nvdp.explorer_models import ExploreSettings, encode_training_split, select_sentences
    from engine.nvdp.posthoc import LiveEvaluator
    from engine.nvdp.protocol import DEFAULT_PROTOCOL
    from engine.nvdp.training import TrainedNVDP

    base = ExploreSettings(kl_weight=args.kl_weight, n_train=args.n_train or None)
    clip_c = dataclasses.replace(base.train_clip, C_mu=float(args.C_mu))
    base = dataclasses.replace(base, train_clip=clip_c)
    tr_states, tr_y, va_states, va_y = encode_training_split(base)
    sentences, labels, _, _, te = select_sentences(base)
    test_states = encode_sentences([sentences[i] for i in te], max_length=base.max_length)
    test_y = labels[te]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "trace.csv"
    done = set()
    if path.is_file():
        with open(path) as fh:
            done = {(int(r["seed"]), r["arm"]) for r in csv.DictReader(fh)}
    for seed in args.seeds:
        for arm in args.arms:
            if (seed, arm) in done:
                continue
            torch.manual_seed(0)
            np.random.seed(0)
            clip = clip_c if arm == "clipped" else ClipConfig(enabled=False)
            t0, c0 = time.perf_counter(), time.process_time()
            trained, snaps = train_with_snapshots(tr_states, tr_y, val_states=va_states, val_labels=va_y,
                                                  kl_weight=base.kl_weight, clip=clip, seed=seed, epochs=base.epochs,
                                                  lr=base.lr, batch_size=base.batch_size)
            t_train, c_train = time.perf_counter() - t0, time.process_time() - c0
            hist = trained.history
            restored, ran = replay_early_stopping([h["val_accuracy"] for h in hist], base.patience)
            rows = []
            for e, sd in enumerate(snaps, start=1):
                if not args.all_epochs and e not in (restored, len(snaps)) and e % 2:
                    continue
                trained.model.load_state_dict(sd)
                trained.model.eval()
                m = TrainedNVDP(model=trained.model, clip=clip, kl_weight=trained.kl_weight, seed=seed,
                                history=hist[:ran] if e == restored else hist[:e], best_epoch=e,
                                best_val_accuracy=hist[e - 1]["val_accuracy"],
                                params={**trained.params, "patience": base.patience}, train_seconds=0.0,
                                nan_losses=trained.nan_losses)
                with tempfile.TemporaryDirectory() as tmp:
                    save_model(m, Path(tmp))
                    digest = hashlib.sha256((Path(tmp) / "model.safetensors").read_bytes()).hexdigest()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    ev = LiveEvaluator(m, test_states, test_y)
                    r = ev.evaluate(clip, protocol=DEFAULT_PROTOCOL)
                raw = ev.raw
                msk = raw.mask.bool()
                alpha = raw.alpha.detach()
                alpha_tok = alpha[msk] if alpha.shape == msk.shape else alpha
                mu_norm = raw.mu.detach().norm(dim=-1)[msk]
                tot = (alpha * msk).sum(-1) if alpha.shape == msk.shape else alpha.sum(-1)
                s = r.clip_stats
                row = {"kl_weight": base.kl_weight, "C_mu": args.C_mu, "n_train": len(tr_y), "seed": seed, "arm": arm,
                       "epoch": e, "val_accuracy": hist[e - 1]["val_accuracy"], "kl_scale": hist[e - 1]["kl_scale"],
                       "restored": int(e == restored), "last": int(e == len(snaps)), "accuracy": r.accuracy,
                       "rd_max_all_pairs": r.rd_paper.max_unfiltered, "rd_paper_max": r.rd_paper.max,
                       "rd_paper_mean": r.rd_paper.mean, "rd_mean_all_pairs": float(np.nanmean(r.rd_paper.values)),
                       "bdp_paper": r.bdp_paper.epsilon, "rd_exact_max": r.rd_exact.max,
                       "rd_exact_n_inf": r.rd_exact.n_inf, "rd_exact_mean_finite": r.rd_exact.mean_finite,
                       "alpha_max": float(alpha_tok.max()), "alpha_total_max": float(tot.max()),
                       "mu_norm_median": float(mu_norm.median()), "mu_norm_max": float(mu_norm.max()),
                       "frac_mu": s.frac_mu, "frac_alpha_high": s.frac_alpha_high, "frac_alpha_low": s.frac_alpha_low,
                       "model_sha256": digest if e == restored else "",
                       "val_history": ";".join(f"{h['val_accuracy']:.4f}" for h in hist)}
                rows.append(row)
                print(f"seed {seed} {arm} epoch {e}{' (restored)' if e == restored else ''}: val {row['val_accuracy']:.3f} "
                      f"acc {r.accuracy:.3f} RD all-pairs max {row['rd_max_all_pairs']:.4g} filtered {row['rd_paper_max']:.4g} "
                      f"mean {row['rd_paper_mean']:.4g} BDP {row['bdp_paper']:.4f} alpha max {row['alpha_max']:.3g} "
                      f"total max {row['alpha_total_max']:.4g} |mu| med {row['mu_norm_median']:.3g}", flush=True)
            if args.check_sha and seed == 0 and arm in args.check_sha:
                ok = [r for r in rows if r["restored"]][0]["model_sha256"] == args.check_sha[arm]
                print(f"check: replayed seed-0 {arm} model {'matches' if ok else 'DIFFERS from'} the given SHA-256")
            new = not path.is_file()
            with open(path, "a", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=FIELDS)
                if new:
                    w.writeheader()
                w.writerows(rows)
            print(f"seed {seed} {arm}: {len(snaps)} epochs in {t_train:.0f} s wall / {c_train:.0f} s CPU; early stopping "
                  f"(patience {base.patience}) restores epoch {restored} after {ran}; load {os.getloadavg()[0]:.1f}",
                  flush=True)


def summary(args) -> str:
    """Markdown: the restored model per seed and arm, and the last epoch's, clipped vs unclipped."""
    import pandas as pd

    df = pd.read_csv(Path(args.out) / "trace.csv")
    lines = ["| seed | arm | restored epoch (of run) | accuracy % | RD max, all 960 pairs | RD paper max (authors' filter) "
             "| RD paper mean | BDP paper | exact pairs infinite | last epoch: RD max all pairs / filtered / mean | "
             "alpha max (restored / last) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (seed, arm), g in df.groupby(["seed", "arm"], sort=True):
        r, last = g[g.restored == 1].iloc[0], g[g["last"] == 1].iloc[0]
        lines.append(f"| {seed} | {arm} | {int(r.epoch)} | {100 * r.accuracy:.1f} | {r.rd_max_all_pairs:.4g} | "
                     f"{r.rd_paper_max:.4g} | {r.rd_paper_mean:.4g} | {r.bdp_paper:.5g} | {int(r.rd_exact_n_inf)} | "
                     f"{last.rd_max_all_pairs:.4g} / {last.rd_paper_max:.4g} / {last.rd_paper_mean:.4g} | "
                     f"{r.alpha_max:.3g} / {last.alpha_max:.3g} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--arms", nargs="+", default=["unclipped", "clipped"])
    p.add_argument("--kl-weight", type=float, default=1e-2)
    p.add_argument("--C-mu", dest="C_mu", type=float, default=5.0)
    p.add_argument("--n-train", type=int, default=1000, help="training sentences (0: the whole training split, 2,000)")
    p.add_argument("--all-epochs", action="store_true", help="evaluate every epoch (default: even epochs, the restored and the last)")
    p.add_argument("--check-sha", nargs="*", default=None, metavar="ARM=SHA",
                   help="compare the replayed seed-0 model with these SHA-256 (e.g. unclipped=e0ab...)")
    p.add_argument("--summary", action="store_true")
    args = p.parse_args(argv)
    if args.check_sha:
        args.check_sha = dict(x.split("=", 1) for x in args.check_sha)
    if args.summary:
        print(summary(args))
        return 0
    run(args)
    print(summary(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
