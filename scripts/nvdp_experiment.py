#!/usr/bin/env python
"""Clipped vs unclipped NVDP on the UCI sentiment sentences: accuracy, RD bounds (both forms), BDP.

Grid: KL weight in {1e-3, 1e-2, 1e-1, 1} x seeds x {unclipped, clipped (authors' rules,
ClipConfig defaults)}. Every trained model is also evaluated with the guaranteed-finite clipping
variant applied at inference (``ClipConfig.finite()``: alpha_min = ((lambda-1)/lambda) alpha_max
(+1 %), sigma_max = 0.99), because with the authors' rules the *exact* bound is often infinite.

Rows are appended to ``<out>/runs.csv`` as they finish (so a partial run still gives a table);
``--table`` rebuilds ``docs/nvdp_results.md``'s table from the CSV.

Usage::

    python scripts/nvdp_experiment.py --epochs 4 --seeds 0 1 2 --out artifacts/nvdp_experiment
    python scripts/nvdp_experiment.py --table --out artifacts/nvdp_experiment
    python scripts/nvdp_experiment.py --shipped   # the shipped default pair under the one protocol
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FIELDS = [
    "kl_weight", "seed", "arm", "eval_clip", "accuracy", "rd_exact_max", "rd_exact_mean", "rd_exact_mean_finite",
    "rd_paper_max", "rd_paper_mean", "bdp_epsilon", "bdp_epsilon_paper", "nan_count", "inf_count", "rd_n_inf",
    "frac_mu", "frac_sigma", "frac_alpha_high", "frac_alpha_low", "mu_norm_q50", "mu_norm_q95", "best_epoch",
    "train_seconds", "epochs", "n_rd_inputs", "rd_exact_n_pairs", "rd_paper_n_pairs", "nan_steps",
]


def run(args) -> None:
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    from engine.nvdp.clipping import ClipConfig
    from engine.nvdp.diagnostics import run_diagnostics
    from engine.nvdp.encoder import encode_sentences, load_sentiment_sentences, split_indices
    from engine.nvdp.training import evaluate, save_trained, train_nvdp

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "runs.csv"
    done = set()
    if csv_path.is_file():
        with open(csv_path) as fh:
            for r in csv.DictReader(fh):
                done.add((float(r["kl_weight"]), int(r["seed"]), r["arm"], r["eval_clip"]))
    sentences, labels = load_sentiment_sentences()
    states = encode_sentences(sentences)
    tr, va, te = split_indices(labels, seed=0)
    arms = {"unclipped": ClipConfig(enabled=False), "clipped": ClipConfig(enabled=True)}
    finite = ClipConfig.finite()
    for seed in args.seeds:
        for kl in args.kl_weights:
            for arm, clip in arms.items():
                if (kl, seed, arm, "own") in done:
                    continue
                t0 = time.perf_counter()
                trained = train_nvdp(states.subset(tr), labels[tr], val_states=states.subset(va), val_labels=labels[va],
                                     kl_weight=kl, clip=clip, seed=seed, epochs=args.epochs, patience=args.epochs)
                save_trained(trained, out / "models" / f"kl{kl:g}_seed{seed}_{arm}")
                rows = []
                for eval_name, eval_clip in (("own", clip), ("finite", finite)):
                    ev = evaluate(trained, states.subset(te), labels[te], clip=eval_clip, seed=seed)
                    dg = run_diagnostics(ev, kl_weight=kl, seed=seed, n_rd=args.n_rd)
                    q = dg.quantiles((0.5, 0.95))["before"]["mu_norm"]
                    rows.append({
                        "kl_weight": kl, "seed": seed, "arm": arm, "eval_clip": eval_name, "accuracy": dg.accuracy,
                        "rd_exact_max": dg.rd_exact_max, "rd_exact_mean": dg.rd_exact_mean,
                        "rd_exact_mean_finite": dg.rd_exact_mean_finite,
                        "rd_paper_max": dg.rd_paper_max, "rd_paper_mean": dg.rd_paper_mean,
                        "bdp_epsilon": dg.bdp_epsilon, "bdp_epsilon_paper": dg.bdp_epsilon_paper,
                        "nan_count": dg.nan_count, "inf_count": dg.inf_count, "rd_n_inf": dg.rd_n_inf,
                        "frac_mu": dg.clip_stats["frac_mu"], "frac_sigma": dg.clip_stats["frac_sigma"],
                        "frac_alpha_high": dg.clip_stats["frac_alpha_high"], "frac_alpha_low": dg.clip_stats["frac_alpha_low"],
                        "mu_norm_q50": q[0], "mu_norm_q95": q[1], "best_epoch": trained.best_epoch,
                        "train_seconds": round(trained.train_seconds, 1), "epochs": args.epochs,
                        "n_rd_inputs": dg.n_rd_inputs, "rd_exact_n_pairs": dg.rd_exact_n_pairs,
                        "rd_paper_n_pairs": dg.rd_paper_n_pairs, "nan_steps": trained.nan_losses,
                    })
                new = not csv_path.is_file()
                with open(csv_path, "a", newline="") as fh:
                    w = csv.DictWriter(fh, fieldnames=FIELDS)
                    if new:
                        w.writeheader()
                    w.writerows(rows)
                print(f"kl={kl:g} seed={seed} {arm}: acc {rows[0]['accuracy']:.3f}, RD exact max {rows[0]['rd_exact_max']:.4g}, "
                      f"paper max {rows[0]['rd_paper_max']:.4g}, BDP {rows[0]['bdp_epsilon']:.4g} | finite variant: acc "
                      f"{rows[1]['accuracy']:.3f}, exact max {rows[1]['rd_exact_max']:.4g} "
                      f"({time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f})", flush=True)


def _fmt(series) -> str:
    import numpy as np

    v = np.asarray(series, dtype=float)
    if np.isinf(v).any():
        k = int(np.isinf(v).sum())
        fin = v[np.isfinite(v)]
        return "inf" if not len(fin) else f"inf ({k}/{len(v)})"
    if len(v) == 1:
        return f"{v[0]:.4g}"
    return f"{v.mean():.4g} ± {v.std(ddof=1):.2g}"


def table(args) -> str:
    import pandas as pd

    files = sorted(Path(args.out).glob("**/runs.csv"))
    if not files:
        raise SystemExit(f"no runs.csv under {args.out}")
    df = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    lines = []
    for eval_clip, title in (("own", "Each model evaluated with its own clipping (clipped arm: authors' rules)"),
                             ("finite", "Same models, guaranteed-finite clipping applied at inference (ClipConfig.finite())")):
        sub = df[df.eval_clip == eval_clip]
        lines += [f"#### {title}", "",
                  "| KL weight | arm | seeds | accuracy | RD exact max | RD exact mean (finite pairs) | RD paper max | RD paper mean "
                  "| BDP eps (exact, order λ+1) | BDP eps (paper plug-in) | frac mu clipped | frac alpha clipped | NaN | inf pair RDs | other inf |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for (kl, arm), g in sub.groupby(["kl_weight", "arm"], sort=True):
            lines.append(
                f"| {kl:g} | {arm} | {len(g)} | {_fmt(g.accuracy)} | {_fmt(g.rd_exact_max)} | {_fmt(g.rd_exact_mean_finite)} | "
                f"{_fmt(g.rd_paper_max)} | {_fmt(g.rd_paper_mean)} | {_fmt(g.bdp_epsilon)} | {_fmt(g.bdp_epsilon_paper)} | "
                f"{g.frac_mu.mean():.3f} | {(g.frac_alpha_high + g.frac_alpha_low).mean():.3f} | {int(g.nan_count.sum())} | "
                f"{int(g.rd_n_inf.sum())} | {int((g.inf_count - g.rd_n_inf).sum())} |")
        lines.append("")
    return "\n".join(lines)


def shipped(args) -> str:
    """The shipped default pair (assets/nvdp) under the one protocol, several clippings, as markdown.

    Every number comes from ``LiveEvaluator.evaluate`` with ``DEFAULT_PROTOCOL`` (what the page and
    ``python -m engine nvdp evaluate`` show for the same model and clipping).
    """
    import warnings

    import torch

    torch.set_num_threads(args.threads)
    from engine.nvdp import explore as X
    from engine.nvdp.clipping import ClipConfig
    from engine.nvdp.protocol import DEFAULT_PROTOCOL

    settings = X.ExploreSettings()
    data, models = X.load_or_train(settings)
    states, y = data.split("test")
    tc = settings.train_clip
    lam = tc.renyi_order
    cases = [
        ("clipped", "trained clipping (C_mu 5, alpha [0.1, 1], sigma cap 0.99)", tc),
        ("clipped", "authors' rules at inference (alpha_min 0, no sigma cap)", ClipConfig(enabled=True, C_mu=tc.C_mu)),
        ("unclipped", "none", ClipConfig(enabled=False, renyi_order=lam)),
        ("unclipped", "trained clipping applied at release", tc),
        ("unclipped", "authors' rules applied at release", ClipConfig(enabled=True, C_mu=tc.C_mu)),
    ]
    live = {w: X.LiveEvaluator(models[w], states, y) for w in ("clipped", "unclipped")}
    rows = []
    for which, name, clip in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # undefined paper-form pairs are counted below
            r = live[which].evaluate(clip, protocol=DEFAULT_PROTOCOL)
        f = lambda v: "inf" if v == float("inf") else f"{v:.4g}"  # noqa: E731
        rows.append(f"| {which} | {name} | {100 * r.accuracy:.1f} | {f(r.rd_paper.max)} | {f(r.rd_paper.mean)} | "
                    f"{r.rd_paper.n_undefined} | {f(r.bdp_paper.epsilon)} | {f(r.rd_exact.max)} | "
                    f"{r.rd_exact.n_inf} of {r.rd_exact.n_pairs} | {f(r.rd_exact.mean_finite)} | {f(r.bdp.epsilon)} |")
        print(rows[-1], flush=True)
    head = ["| model | clipping at evaluation | accuracy % (500) | RD paper max | RD paper mean | undefined paper pairs "
            "| BDP paper (q = 16/128) | RD exact max | exact pairs infinite | RD exact mean (finite pairs) "
            "| BDP guarantee (order λ+1) |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    return "\n".join(head + rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="artifacts/nvdp_experiment")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--kl-weights", type=float, nargs="+", default=[1e-3, 1e-2, 1e-1, 1.0])
    p.add_argument("--n-rd", type=int, default=None,
                   help="evaluation sentences for the bounds (default: the one protocol, engine.nvdp.protocol)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--table", action="store_true", help="only print the markdown table from runs.csv")
    p.add_argument("--shipped", action="store_true",
                   help="only evaluate the shipped default models (assets/nvdp) under the one protocol (markdown)")
    args = p.parse_args(argv)
    if args.shipped:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        print(shipped(args))
        return 0
    if args.table:
        print(table(args))
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    run(args)
    print(table(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
