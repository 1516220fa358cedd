"""CLI subcommand ``audit``: an empirical lower bound on a mechanism's epsilon (:mod:`engine.audit`).

``python -m engine audit --mechanism dp-pmtrr --epsilon 2 --delta 1e-5 --trials 20000 [--broken noise-0.2]
[--seed S] [--confidence 0.95] [--json]``
"""

from __future__ import annotations

import argparse

HELP = "empirical DP audit: a Clopper-Pearson lower bound on epsilon"


def _cmd_audit(args) -> int:
    from engine.audit import audit
    from engine.cli import dump_json

    res = audit(args.mechanism, epsilon=args.epsilon, delta=args.delta, trials=args.trials, seed=args.seed,
                broken=args.broken, confidence=args.confidence, n=args.n)
    if args.json:
        print(dump_json(res.to_dict()))
        return 0
    name = res.label + (f"  [BROKEN COPY: {res.broken}]" if res.broken else "")
    print(f"mechanism         : {name}")
    print(f"released          : {res.released}")
    print(f"claim             : epsilon = {res.epsilon:g}, delta = {res.delta:g} (mu = {res.mu_claimed:.4f} GDP)")
    print(f"trials            : {res.trials} per data set ({res.n_test} counted), seed {res.seed}")
    print(f"errors (test half): FP = {res.fp}, FN = {res.fn}; Clopper-Pearson upper bounds "
          f"FPR <= {res.fpr_ub:.4g}, FNR <= {res.fnr_ub:.4g}")
    print(f"audited epsilon   : >= {res.epsilon_lb:.4f} at {100 * res.confidence:g}% confidence")
    print(f"ideal bound       : {res.ideal_epsilon_lb:.4f} (perfect test of an exactly tight mechanism, same trials)")
    print(f"separation mu_hat : {res.mu_hat:.4g} (pair can show at most {res.pair_mu_ratio:.3f} x mu if correct)")
    verdict = ("VIOLATION: the lower bound exceeds the claimed epsilon" if res.violation
               else "consistent with the claim (lower bound below the claimed epsilon)")
    print(f"verdict           : {verdict}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from engine.audit import BROKEN, MECHANISMS

    p = sub.add_parser("audit", help=HELP)
    p.add_argument("--mechanism", required=True, choices=list(MECHANISMS), help="mechanism to audit")
    p.add_argument("--epsilon", type=float, required=True, help="claimed epsilon (> 0)")
    p.add_argument("--delta", type=float, default=1e-5, help="claimed delta, in (0, 1) (default 1e-5)")
    p.add_argument("--trials", type=int, default=20_000, help="runs per data set (default 20000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and the noise (default 0)")
    p.add_argument("--broken", choices=list(BROKEN), default=None,
                   help="audit a deliberately broken copy (teeth check)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence of the bound (default 0.95)")
    p.add_argument("--n", type=int, default=100, help="private rows in the audit data sets (default 100)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_audit)
