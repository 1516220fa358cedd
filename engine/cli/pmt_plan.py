"""CLI subcommand ``pmt-plan``: which method pays off, and from how many private rows (public information only).

Example::

    python -m engine pmt-plan --dataset ccpp --epsilon 1 --json
    python -m engine pmt-plan --dataset wine-red --epsilon 0.5 --n-pub 500 --lam 1e-2
    python -m engine pmt-plan --public public.csv --target PE --n 20000 --epsilon 1

Prints the planner's predicted held-out RMSE of PMT, PMT-pooled, public-only, DP-RR and the non-private
fit against the number of private rows n (1e2..1e8), ``crossover_n`` (PMT below the public rows alone from
there on) and the one-line conclusion (:mod:`engine.pmt.planner`). Only the public rows are read: on a
bundled set the ``--n-pub`` public rows of the usual split (``--split-seed``), with ``--n`` defaulting to the
set's private training size; with ``--public FILE`` that file (labelled) and ``--n`` is required.
No privacy budget is spent.
"""

from __future__ import annotations

import argparse

HELP = "predict which PMT method pays off and from how many private rows (public data only, no privacy cost)"


def _cmd(args) -> int:
    import numpy as np

    from engine.cli import dump_json
    from engine.pmt.planner import plan, plan_inputs_from_public

    if args.public is not None:
        from engine.datasets.upload import read_csv_upload

        if args.n is None:
            raise ValueError("--public FILE needs --n (your number of private rows)")
        ds = read_csv_upload(args.public, target=args.target, task="regression")
        Xq, yq = ds.to_numpy()
        n_user, name = args.n, str(args.public)
    else:
        from engine.datasets import load_dataset
        from engine.pmt.sweep import sweep_split

        name = args.dataset
        X, y = load_dataset(name).to_numpy()
        Xq, yq, Xtr, ytr, _, _ = sweep_split(X, y, n_pub=args.n_pub, split_seed=args.split_seed)
        n_user = args.n if args.n is not None else len(ytr)
    if n_user is not None and n_user < 1:
        raise ValueError(f"--n must be >= 1, got {n_user}")
    p = plan(plan_inputs_from_public(Xq, yq), epsilon=args.epsilon, delta=args.delta, lam=args.lam, eta=args.eta,
             n_user=n_user)
    out = {"dataset": name, **p.to_dict()}
    if args.json:
        print(dump_json(out))
        return 0
    print(f"{name}: planner from {p.inputs.n_pub} public rows (d = {p.inputs.d}, public residual sd "
          f"{p.inputs.resid_sd:.4g}); epsilon {p.epsilon:g}, delta {p.delta:g}, lam {p.lam:g}; no privacy cost")
    grid = [100, 1000, 10**4, 10**5, 10**6, 10**7, 10**8] + ([n_user] if n_user else [])
    print(f"\n{'n':>12} " + " ".join(f"{k:>12}" for k in p.curves))
    for n in sorted(set(grid)):
        at = p.at(n)
        mark = "  <- your n" if n == n_user else ""
        print(f"{n:>12,} " + " ".join(f"{at[k]:>12.4g}" for k in p.curves) + mark)
    print(f"\ncrossover_n = {p.crossover_n}; PMT below DP-RR from n = {p.crossover_private_n}")
    print(p.conclusion())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pmt-plan", help=HELP, description=HELP + ".")
    p.add_argument("--dataset", default="ccpp", help="bundled regression set: ccpp, wine-red, wine-white (default ccpp)")
    p.add_argument("--public", default=None, metavar="PATH", help="your public CSV (with the target) instead")
    p.add_argument("--target", default=None, help="--public: the target column (default: the last)")
    p.add_argument("--n", type=int, default=None, help="your number of private rows (marked on the curves)")
    p.add_argument("--n-pub", type=int, default=200, dest="n_pub", help="bundled set: public rows (default 200)")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--lam", type=float, default=1e-3)
    p.add_argument("--eta", type=float, default=0.05)
    p.add_argument("--split-seed", type=int, default=0, dest="split_seed")
    p.add_argument("--json", action="store_true", help="machine-readable output: the curves and crossover_n")
    p.set_defaults(func=_cmd)
