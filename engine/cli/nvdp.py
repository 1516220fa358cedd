"""CLI subcommand ``nvdp``: train and evaluate the (clipped) NVDP classifier on the sentiment sentences.

Examples::

    python -m engine nvdp train --kl-weight 0.01 --clip --C-mu 10 --seed 0 --epochs 5 --model-dir artifacts/nvdp/run0
    python -m engine nvdp evaluate --model-dir artifacts/nvdp/run0 --no-clip --json

``train`` encodes the 3000 UCI sentiment sentences with the frozen all-MiniLM-L6-v2 (cached on
disk), splits them 2000 / 500 / 500 by ``--split-seed``, trains, evaluates on the test split and
prints the run's diagnostics (accuracy, RD bounds in both forms, BDP epsilon, clipping fractions).
``evaluate`` loads a saved model and evaluates it on the test split, with the clipping given on
the command line (defaults: the clipping the model was trained with).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "train / evaluate the (clipped) NVDP sentence classifier"


def _clip_from_args(args, default=None):
    from engine.nvdp.clipping import DEFAULT_ALPHA_MAX, DEFAULT_C_MU, ClipConfig

    base = default.to_dict() if default is not None else {
        "enabled": False, "C_mu": DEFAULT_C_MU, "alpha_min": 0.0, "alpha_max": DEFAULT_ALPHA_MAX, "renyi_order": 1.1,
    }
    for key, attr in (("enabled", "clip"), ("C_mu", "C_mu"), ("alpha_min", "alpha_min"), ("alpha_max", "alpha_max"),
                      ("renyi_order", "renyi_order")):
        v = getattr(args, attr, None)
        if v is not None:
            base[key] = v
    return ClipConfig(**base)


def _data(args, progress):
    from engine.nvdp.explorer_models import select_split

    if args.n_train is not None and args.n_train < 10:
        raise ValueError(f"--n-train must be >= 10; got {args.n_train}")
    return select_split(n_sentences=args.n_sentences, split_seed=args.split_seed, n_train=args.n_train,
                        progress=progress)


def _progress(args):
    if args.json or args.quiet:
        return None

    def show(fraction, message):
        print(f"[{fraction * 100:5.1f}%] {message}", file=sys.stderr)

    return show


def _report(args, trained, ev, extra: dict) -> int:
    from engine.cli import dump_json
    from engine.nvdp.diagnostics import run_diagnostics

    diag = run_diagnostics(ev, kl_weight=trained.kl_weight, seed=trained.seed, n_rd=args.n_rd)
    if args.json:
        out = diag.to_dict()
        out.update(extra)
        print(dump_json(out))
    else:
        print(diag.summary())
        for k, v in extra.items():
            print(f"  {k}: {v}")
    return 0


def _cmd_train(args) -> int:
    from engine.nvdp.training import evaluate, save_trained, train_nvdp

    clip = _clip_from_args(args)  # validates before any work
    import math

    if not (math.isfinite(args.kl_weight) and args.kl_weight >= 0):
        raise ValueError(f"--kl-weight must be a finite number >= 0; got {args.kl_weight}")
    if args.epochs < 1:
        raise ValueError(f"--epochs must be >= 1; got {args.epochs}")
    progress = _progress(args)
    states, labels, tr, va, te = _data(args, progress)
    trained = train_nvdp(
        states.subset(tr), labels[tr], val_states=states.subset(va), val_labels=labels[va],
        kl_weight=args.kl_weight, clip=clip, seed=args.seed, epochs=args.epochs, lr=args.lr,
        batch_size=args.batch_size, patience=args.patience, progress=progress,
    )
    extra = {"best_epoch": trained.best_epoch, "best_val_accuracy": trained.best_val_accuracy,
             "train_seconds": round(trained.train_seconds, 2), "n_train": len(tr), "n_test": len(te)}
    if args.model_dir:
        save_trained(trained, args.model_dir)
        extra["model_dir"] = str(args.model_dir)
    ev = evaluate(trained, states.subset(te), labels[te], seed=args.seed)
    if args.model_dir:
        from engine.nvdp.training import save_posteriors

        # Unclipped test posteriors, for post-hoc clipping (dashboard sliders) without re-running the model.
        save_posteriors(ev.raw, Path(args.model_dir) / "posteriors_test.pt", accuracy=ev.accuracy)
    return _report(args, trained, ev, extra)


def _cmd_evaluate(args) -> int:
    from engine.nvdp.training import evaluate, load_trained

    trained = load_trained(args.model_dir)
    clip = _clip_from_args(args, default=trained.clip)
    states, labels, _, _, te = _data(args, _progress(args))
    ev = evaluate(trained, states.subset(te), labels[te], clip=clip, seed=args.seed)
    return _report(args, trained, ev, {"model_dir": str(args.model_dir), "n_test": len(te)})


def _common(p: argparse.ArgumentParser, *, train: bool) -> None:
    p.add_argument("--clip", dest="clip", action="store_true", default=None, help="enable clipping")
    p.add_argument("--no-clip", dest="clip", action="store_false", help="disable clipping (the unclipped baseline)")
    p.add_argument("--C-mu", dest="C_mu", type=float, default=None, help="mean-ball radius C_mu > 0 (default 10)")
    p.add_argument("--alpha-min", type=float, default=None, help="pseudo-count lower clamp >= 0 (default 0)")
    p.add_argument("--alpha-max", type=float, default=None, help="pseudo-count upper clamp (default 1.0)")
    p.add_argument("--renyi-order", type=float, default=None, help="Renyi order lambda > 1 (default 1.1)")
    p.add_argument("--seed", type=int, default=0, help="training / sampling seed (default 0)")
    p.add_argument("--split-seed", type=int, default=0, help="train/validation/test split seed (default 0)")
    p.add_argument("--n-train", type=int, default=None, help="use a random subset of this many training sentences")
    p.add_argument("--n-rd", type=int, default=None,
                   help="evaluation sentences for the bounds (default: the protocol's, engine.nvdp.protocol)")
    p.add_argument("--n-sentences", type=int, default=None, help="stratified subset of the sentences (as the page)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--model-dir", default=None, required=not train, help="where the model is saved / loaded")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("nvdp", help=HELP)
    nsub = p.add_subparsers(dest="nvdp_command", metavar="{train,evaluate}")
    nsub.required = True
    t = nsub.add_parser("train", help="train on the sentiment sentences and report diagnostics")
    t.add_argument("--kl-weight", type=float, required=True, help="KL weight lambda_G = lambda_D >= 0")
    t.add_argument("--epochs", type=int, default=5)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--patience", type=int, default=3)
    _common(t, train=True)
    t.set_defaults(func=_cmd_train)
    e = nsub.add_parser("evaluate", help="evaluate a saved model on the test split")
    _common(e, train=False)
    e.set_defaults(func=_cmd_evaluate)
