"""CLI subcommand ``audit``: a confidence interval on a mechanism's mu-GDP and a verdict (:mod:`engine.audit`).

``python -m engine audit --mechanism dp-pmtrr [--epsilon 4] [--delta 1e-5] [--trials 20000]
[--broken sensitivity-0.9] [--seed S] [--alpha 1e-3] [--json]``
"""

from __future__ import annotations

import argparse

HELP = "empirical DP audit: a confidence interval on the mu-GDP of each release, with a verdict"


def _cmd_audit(args) -> int:
    from engine.audit import audit
    from engine.cli import dump_json

    res = audit(args.mechanism, epsilon=args.epsilon, delta=args.delta, trials=args.trials, seed=args.seed,
                broken=args.broken, alpha=args.alpha, confidence=args.confidence, n=args.n)
    if args.json:
        print(dump_json(res.to_dict()))
        return 0
    name = res.label + (f"  [BROKEN COPY: {res.broken}]" if res.broken else "")
    print(f"mechanism         : {name}")
    print(f"released          : {res.released}")
    print(f"claim             : epsilon = {res.epsilon:g}, delta = {res.delta:g} (mu = {res.mu_claimed:.4f} GDP)")
    print(f"trials            : {res.trials} per data set and release, seed {res.seed}")
    k = len(res.releases)
    print(f"false-alarm rate  : {res.alpha:g} (one-sided, {res.alpha / k:.2g} per release over {k} releases)")
    for r in res.releases:
        print(f"- {r['name']}")
        print(f"    pair moves it by {r['ratio']:.5f} x its sensitivity; claimed mu {r['mu_claim']:.4f}, "
              f"a correct release shows at most {r['bound']:.4f}")
        print(f"    mu_hat = {r['mu_hat']:.4g} (mu_hat / mu = {r['mu_hat'] / r['mu_claim']:.3f}); "
              f"one-sided bounds [{r['lower']:.4g}, {r['upper']:.4g}] from {r['runs']} runs per side"
              + ("  <- VIOLATION" if r["violation"] else ""))
    verdict = ("VIOLATION: a lower confidence bound exceeds what the claim allows" if res.violation
               else "consistent with the claim (every lower bound below what the claim allows)")
    print(f"verdict           : {verdict}")
    return 0


def _broken_arg(value: str) -> str:
    from engine.audit.hooks import parse_broken

    try:
        return parse_broken(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def register(sub: argparse._SubParsersAction) -> None:
    from engine.audit import MECHANISMS

    p = sub.add_parser("audit", help=HELP)
    p.add_argument("--mechanism", required=True, choices=list(MECHANISMS), help="mechanism to audit")
    p.add_argument("--epsilon", type=float, default=4.0, help="claimed epsilon (> 0, default 4)")
    p.add_argument("--delta", type=float, default=1e-5, help="claimed delta, in (0, 1) (default 1e-5)")
    p.add_argument("--trials", type=int, default=20_000, help="runs per data set (default 20000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and the noise (default 0)")
    p.add_argument("--broken", type=_broken_arg, default=None,
                   help="audit a deliberately broken copy: sensitivity-F (e.g. sensitivity-0.9), noise-F, "
                        "skip-clipping, partial-noise, combination-leak (pmt-pooled)")
    p.add_argument("--alpha", type=float, default=1e-3, help="false-alarm rate of the verdict (default 1e-3)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the informative Clopper-Pearson epsilon bound (default 0.95)")
    p.add_argument("--n", type=int, default=100, help="private rows in the audit data sets (default 100)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_audit)
