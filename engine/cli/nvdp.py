"""CLI subcommand ``nvdp``: train and evaluate the (clipped) NVDP classifier on the sentiment sentences.

Examples::

    python -m engine nvdp train --kl-weight 0.01 --clip --C-mu 5 --seed 0 --epochs 10 --model-dir artifacts/nvdp/run0
    python -m engine nvdp evaluate --model-dir artifacts/nvdp/run0 --no-clip --json
    python -m engine nvdp evaluate --model-dir assets/nvdp/clipped --clip   # the shipped model, the page's numbers

``train`` encodes the 3000 UCI sentiment sentences with the frozen all-MiniLM-L6-v2 (cached on
disk), splits them 2000 / 500 / 500 by ``--split-seed``, trains, evaluates on the test split and
prints the run's diagnostics (accuracy, RD bounds in both forms, BDP epsilon, clipping fractions).
``evaluate`` loads a saved model (``model.safetensors``, the shipped format, or ``model.pt``) and
evaluates it on the test split, with the clipping given on the command line (defaults: the
clipping the model was trained with). Besides the diagnostics it prints the page's headline for
that model and clipping: ``LiveEvaluator.evaluate`` under ``DEFAULT_PROTOCOL`` on the test sentences
encoded as the page encodes them, so ``--model-dir assets/nvdp/clipped --clip`` gives the page's
numbers for the shipped clipped model. A missing or unreadable model folder is one error line.
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
    if not 0 <= args.warmup_fraction < 1:
        raise ValueError(f"--warmup-fraction must be in [0, 1); got {args.warmup_fraction}")
    progress = _progress(args)
    states, labels, tr, va, te = _data(args, progress)
    trained = train_nvdp(
        states.subset(tr), labels[tr], val_states=states.subset(va), val_labels=labels[va],
        kl_weight=args.kl_weight, clip=clip, seed=args.seed, epochs=args.epochs, lr=args.lr,
        batch_size=args.batch_size, patience=args.patience, progress=progress, lr_schedule=args.lr_schedule,
        warmup_fraction=args.warmup_fraction,
    )
    extra = {"best_epoch": trained.best_epoch, "best_val_accuracy": trained.best_val_accuracy,
             "train_seconds": round(trained.train_seconds, 2), "n_train": len(tr), "n_test": len(te),
             "lr_schedule": args.lr_schedule}
    if args.model_dir:
        save_trained(trained, args.model_dir)
        extra["model_dir"] = str(args.model_dir)
    # evaluated on the test sentences encoded as the page and ``evaluate`` encode them
    ev = evaluate(trained, *_test_states(args), seed=args.seed)
    if args.model_dir:
        from engine.nvdp.training import save_posteriors

        # Unclipped test posteriors, for post-hoc clipping (dashboard sliders) without re-running the model.
        save_posteriors(ev.raw, Path(args.model_dir) / "posteriors_test.pt", accuracy=ev.accuracy)
    return _report(args, trained, ev, extra)


def _test_states(args, progress=None):
    """The test sentences encoded as the page encodes them (:func:`engine.nvdp.bundled.load_bundled`)."""
    from engine.nvdp.encoder import encode_sentences
    from engine.nvdp.explore_settings import ExploreSettings, select_sentences

    s = ExploreSettings(n_sentences=args.n_sentences, split_seed=args.split_seed)
    sentences, labels, _, _, te = select_sentences(s)
    return encode_sentences([sentences[i] for i in te], max_length=s.max_length, progress=progress), labels[te]


def page_headline(trained, clip, states, labels) -> dict:
    """The page's headline figures for ``trained`` with ``clip``: ``LiveEvaluator.evaluate`` under
    ``DEFAULT_PROTOCOL`` on ``states`` (the test sentences, :func:`_test_states`)."""
    import warnings

    import numpy as np

    from engine.nvdp.certified import certified_bound
    from engine.nvdp.posthoc import LiveEvaluator
    from engine.nvdp.protocol import DEFAULT_PROTOCOL

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = LiveEvaluator(trained, states, labels).evaluate(clip, protocol=DEFAULT_PROTOCOL)
    k = trained.model.config.n_components or (int(states.mask.shape[1]) + 1)
    return {
        "accuracy": r.accuracy, "n_test": int(states.n),
        "rd_max_all_pairs": r.rd_paper.max_unfiltered, "rd_paper_max_filtered": r.rd_paper.max,
        "rd_paper_mean": r.rd_paper.mean, "rd_mean_all_pairs": float(np.nanmean(r.rd_paper.values)),
        "rd_paper_n_pairs": int(r.rd_paper.n_pairs), "bdp_paper": r.bdp_paper.epsilon,
        "rd_exact_max": r.rd_exact.max, "rd_exact_n_inf": int(r.rd_exact.n_inf),
        "rd_exact_n_pairs": int(r.rd_exact.n_pairs), "bdp_guarantee": r.bdp.epsilon,
        "certified_bound": certified_bound(clip, n_components=k, d=trained.model.config.d).total,
        "length_hiding": trained.model.config.n_components is not None,
        "protocol": DEFAULT_PROTOCOL.to_dict(),
    }


def _cmd_evaluate(args) -> int:
    from engine.nvdp.bundled import load_saved_model
    from engine.nvdp.training import evaluate

    trained = load_saved_model(args.model_dir)  # ValueError (one line) for a missing or unreadable folder
    clip = _clip_from_args(args, default=trained.clip)
    if args.n_train is not None and args.n_train < 10:
        raise ValueError(f"--n-train must be >= 10; got {args.n_train}")
    test_states, test_y = _test_states(args, _progress(args))
    ev = evaluate(trained, test_states, test_y, clip=clip, seed=args.seed)
    head = page_headline(trained, clip, test_states, test_y)
    if not args.json:
        f = lambda v: "infinite" if v == float("inf") else f"{v:.4g}"  # noqa: E731
        print(f"page headline ({'clipped' if clip.enabled else 'unclipped'}, the one protocol): accuracy "
              f"{100 * head['accuracy']:.1f}% of {head['n_test']}; worst case over the {head['rd_paper_n_pairs']} "
              f"evaluated pairs {f(head['rd_max_all_pairs'])} (authors' outlier-filtered max "
              f"{f(head['rd_paper_max_filtered'])}), mean {f(head['rd_paper_mean'])}; BDP paper {f(head['bdp_paper'])}; "
              f"exact max {f(head['rd_exact_max'])} ({head['rd_exact_n_inf']} of {head['rd_exact_n_pairs']} pairs "
              f"infinite); certified bound {f(head['certified_bound'])} nats")
    return _report(args, trained, ev, {"model_dir": str(args.model_dir), "n_test": test_states.n, "page_headline": head})


def _common(p: argparse.ArgumentParser, *, train: bool) -> None:
    p.add_argument("--clip", dest="clip", action="store_true", default=None, help="enable clipping")
    p.add_argument("--no-clip", dest="clip", action="store_false", help="disable clipping (the unclipped baseline)")
    p.add_argument("--C-mu", dest="C_mu", type=float, default=None, help="mean-ball radius C_mu > 0 (default 5)")
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
    t.add_argument("--epochs", type=int, default=10, help="maximum epochs (default 10, the authors' budget)")
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--patience", type=int, default=3, help="early-stopping patience in epochs (default 3)")
    t.add_argument("--lr-schedule", choices=("constant", "linear_warmup_decay"), default="constant",
                   help="learning-rate schedule: constant (default, the shipped models) or the authors' linear "
                        "warm-up then linear decay to 0")
    t.add_argument("--warmup-fraction", type=float, default=0.06,
                   help="warm-up share of the steps for linear_warmup_decay (default 0.06, the authors')")
    _common(t, train=True)
    t.set_defaults(func=_cmd_train)
    e = nsub.add_parser("evaluate", help="evaluate a saved model on the test split")
    _common(e, train=False)
    e.set_defaults(func=_cmd_evaluate)
