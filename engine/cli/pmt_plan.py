"""CLI subcommand ``pmt-plan``: which method pays off, and from how many private rows (public information only).

Example::

    python -m engine pmt-plan --dataset ccpp --epsilon 1 --json
    python -m engine pmt-plan --dataset wine-red --epsilon 0.5 --n-pub 500 --lam 1e-2
    python -m engine pmt-plan --public public.csv --target PE --n 20000 --epsilon 1
    python -m engine pmt-plan --dataset flights --epsilon 1 --target-rmse 16.0 --json
    python -m engine pmt-plan --task logistic --dataset flights-late --epsilon 1 --target-log-loss 0.28

Ridge (default): the planner's predicted held-out RMSE of PMT (``--response``: auto, clip or joint; auto is
PMTRidge's default), PMT-pooled, public-only, DP-RR, DP-GD and the non-private fit against the number of private
rows n (1e2..1e8), with each method's bias from the bounds applied to the public rows, ``crossover_n`` (PMT below
the public rows alone from there on, or "no crossover") and the one-line conclusion (:mod:`engine.pmt.planner`).
``--task logistic``: predicted held-out log-loss of PMT, DP-Newton, public-only and non-private
(:mod:`engine.pmt.planner_logistic`). ``--target-rmse`` / ``--target-log-loss``: the accuracy-first answer, the n
and the epsilon each method needs for that error (:mod:`engine.pmt.planner_target`). Only the public rows are
read: on a bundled set the ``--n-pub`` public rows of the usual split (``--split-seed``), with ``--n`` defaulting
to the set's private training size; with ``--public FILE`` that file (labelled) and ``--n`` is required.
No privacy budget is spent.
"""

from __future__ import annotations

import argparse

HELP = "predict which PMT method pays off and from how many private rows (public data only, no privacy cost)"


def _public_rows(args):
    task = "classification" if args.task == "logistic" else "regression"
    if args.public is not None:
        from engine.datasets.upload import read_csv_upload

        if args.n is None:
            raise ValueError("--public FILE needs --n (your number of private rows)")
        ds = read_csv_upload(args.public, target=args.target, task=task)
        Xq, yq = ds.to_numpy()
        return Xq, yq, args.n, str(args.public)
    from engine.datasets import load_dataset
    from engine.pmt.sweep import sweep_split

    name = args.dataset or ("flights-late" if args.task == "logistic" else "ccpp")
    X, y = load_dataset(name).to_numpy()
    Xq, yq, Xtr, ytr, _, _ = sweep_split(X, y, n_pub=args.n_pub, split_seed=args.split_seed)
    return Xq, yq, (args.n if args.n is not None else len(ytr)), name


def build(args):
    """``(plan, accuracy-first answer or None, name)`` for parsed arguments
    (:func:`engine.pmt.planner_target.plan_from_public`, as the PMT page's Planner tab)."""
    from engine.pmt.planner_target import plan_from_public

    Xq, yq, n_user, name = _public_rows(args)
    if n_user is not None and n_user < 1:
        raise ValueError(f"--n must be >= 1, got {n_user}")
    if args.task == "logistic":
        if args.target_rmse is not None:
            raise ValueError("--target-rmse applies to ridge; use --target-log-loss with --task logistic")
        if args.response != "auto":
            raise ValueError("--response applies to --task ridge only")
        from engine.pmt.logistic import check_binary_labels

        yq = check_binary_labels(yq, len(yq), classes=(0, 1), name="y_pub")
        target = args.target_log_loss
    else:
        if args.target_log_loss is not None:
            raise ValueError("--target-log-loss applies to --task logistic; use --target-rmse for ridge")
        target = args.target_rmse
    p, answer = plan_from_public(Xq, yq, task=args.task, epsilon=args.epsilon, delta=args.delta, lam=args.lam,
                                 eta=args.eta, n_user=n_user, response=args.response, target=target)
    return p, answer, name


def _cmd(args) -> int:
    from engine.cli import dump_json

    p, answer, name = build(args)
    out = {"dataset": name, **p.to_dict()}
    if answer is not None:
        out["accuracy_first"] = answer
    if args.json:
        print(dump_json(out))
        return 0
    if args.task == "logistic":
        print(f"{name}: logistic planner from {p.n_pub} public rows (d = {p.d}); epsilon {p.epsilon:g}, delta "
              f"{p.delta:g}, lam {p.lam:g}; held-out log-loss; no privacy cost")
    else:
        print(f"{name}: planner from {p.inputs.n_pub} public rows (d = {p.inputs.d}, public residual sd "
              f"{p.inputs.resid_sd:.4g}); epsilon {p.epsilon:g}, delta {p.delta:g}, lam {p.lam:g}, PMT response "
              f"{p.response}; no privacy cost")
    n_user = p.n_user
    grid = [100, 1000, 10**4, 10**5, 10**6, 10**7, 10**8] + ([n_user] if n_user else [])
    print(f"\n{'n':>12} " + " ".join(f"{k:>12}" for k in p.curves))
    for n in sorted(set(grid)):
        at = p.at(n)
        mark = "  <- your n" if n == n_user else ""
        print(f"{n:>12,} " + " ".join(f"{at[k]:>12.4g}" for k in p.curves) + mark)
    if args.task == "logistic":
        print(f"\ncrossover_n = {p.crossover_n if p.crossover_n is not None else 'none'}")
    else:
        cross = (p.crossover_n if p.crossover_n is not None
                 else "unknown" if getattr(p, "crossover_note", None) else "none")
        print(f"\ncrossover_n = {cross}; PMT below DP-RR from n = {p.crossover_private_n}")
    print(p.conclusion())
    if answer is not None:
        print(f"\naccuracy first: {answer['metric']} <= {answer['target']:g}")
        for line in answer["lines"]:
            print(f"  {line}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pmt-plan", help=HELP, description=HELP + ".")
    p.add_argument("--task", choices=["ridge", "logistic"], default="ridge",
                   help="ridge (held-out RMSE, default) or logistic (held-out log-loss)")
    p.add_argument("--dataset", default=None,
                   help="bundled set: ccpp (default), wine-red, wine-white, flights; logistic: flights-late (default), "
                   "bank")
    p.add_argument("--public", default=None, metavar="PATH", help="your public CSV (with the target) instead")
    p.add_argument("--target", default=None, help="--public: the target column (default: the last)")
    p.add_argument("--n", type=int, default=None, help="your number of private rows (marked on the curves)")
    p.add_argument("--n-pub", type=int, default=200, dest="n_pub", help="bundled set: public rows (default 200)")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--lam", type=float, default=1e-3)
    p.add_argument("--eta", type=float, default=0.05)
    p.add_argument("--response", choices=["auto", "clip", "joint"], default="auto",
                   help="ridge: PMT's response handling (auto: PMTRidge's default)")
    p.add_argument("--target-rmse", type=float, default=None, dest="target_rmse",
                   help="ridge: the RMSE you can accept; prints the n and the epsilon each method needs")
    p.add_argument("--target-log-loss", type=float, default=None, dest="target_log_loss",
                   help="logistic: the held-out log-loss you can accept; the n and the epsilon each method needs")
    p.add_argument("--split-seed", type=int, default=0, dest="split_seed")
    p.add_argument("--json", action="store_true", help="machine-readable output: the curves, crossover_n, the answer")
    p.set_defaults(func=_cmd)
