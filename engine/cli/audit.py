"""CLI subcommand ``audit``: a confidence interval on a mechanism's mu-GDP and a verdict (:mod:`engine.audit`).

``python -m engine audit --mechanism dp-pmtrr [--mode all|releases|parameters] [--epsilon 4] [--delta 1e-5]
[--trials 20000] [--broken sensitivity-0.9] [--seed S] [--alpha 1e-3] [--json]``

``--mode releases``: the release audit (:func:`engine.audit.audit`); ``--mode parameters``: the parameter
audit (:func:`engine.audit.parameters.parameter_audit`: neighbours with an extreme row must see the same
bounds, noise scales, options, warnings and errors); ``--mode all`` (default): both, one verdict.
"""

from __future__ import annotations

import argparse

HELP = "empirical DP audit: a confidence interval on the mu-GDP of each release, with a verdict"


def _cmd_audit(args) -> int:
    from engine.audit import audit
    from engine.audit.parameters import parameter_audit
    from engine.cli import dump_json

    res = par = None
    if args.mode in ("all", "releases"):
        res = audit(args.mechanism, epsilon=args.epsilon, delta=args.delta, trials=args.trials, seed=args.seed,
                    broken=args.broken, alpha=args.alpha, confidence=args.confidence, n=args.n)
    if args.mode in ("all", "parameters"):
        par = parameter_audit(args.mechanism, epsilon=args.epsilon, delta=args.delta, seed=args.seed,
                              broken=args.broken, n=args.n)
    if args.json:
        if res is None:
            print(dump_json({"mode": args.mode, **par.to_dict()}))
            return 0
        out = {"mode": args.mode, **res.to_dict()}
        if par is not None:
            out["release_violation"] = res.violation
            out["parameters"] = par.to_dict()
            out["violation"] = bool(res.violation or par.violation)
        print(dump_json(out))
        return 0
    if res is not None:
        _print_releases(res)
    if par is not None:
        _print_parameters(par, header=res is None)
    if res is not None and par is not None:
        both = res.violation or par.violation
        print(f"overall verdict   : {'VIOLATION' if both else 'consistent'} (releases: "
              f"{'violation' if res.violation else 'consistent'}; parameters: "
              f"{'violation' if par.violation else 'invariant'})")
    return 0


def _print_parameters(par, header: bool) -> None:
    if header:
        print(f"mechanism         : {par.mechanism}" + (f"  [BROKEN COPY: {par.broken}]" if par.broken else ""))
    print(f"parameter audit   : D and {len(par.neighbours)} replace-one neighbours (row 0 replaced), same seed; "
          "everything but the noisy release must be bit-identical")
    for name, diff in par.neighbours.items():
        shown = "identical" if not diff else "DIFFERS: " + "; ".join(diff[:6]) + (" ..." if len(diff) > 6 else "")
        print(f"- {name:<14}: {shown}")
    verdict = ("VIOLATION: a neighbour sees a different parameter, warning or error (computed from the private "
               "rows)" if par.violation else "invariant (false-alarm rate 0: an exact comparison)")
    print(f"parameter verdict : {verdict}")


def _print_releases(res) -> None:
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
                        "skip-clipping, partial-noise, combination-leak (pmt-pooled), newton-noise-F (the Newton "
                        "mechanisms: a planted line in noisy_newton), joint-noise-F (dp-pmtrr-joint: in _release_joint), "
                        "adassp-noise-F (adassp: in adassp_solve), private-response-bound (dp-pmtrr, pmt-pooled)")
    p.add_argument("--mode", choices=["all", "releases", "parameters"], default="all",
                   help="releases: the noisy releases; parameters: everything else must not depend on the private "
                        "rows; all (default): both")
    p.add_argument("--alpha", type=float, default=1e-3, help="false-alarm rate of the verdict (default 1e-3)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the informative Clopper-Pearson epsilon bound (default 0.95)")
    p.add_argument("--n", type=int, default=100, help="private rows in the audit data sets (default 100)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_audit)
