"""CLI subcommand ``privacy``: (epsilon, delta) -> mu-GDP and a Gaussian noise scale (:mod:`engine.privacy`).

``python -m engine privacy --epsilon E --delta D [--sensitivity S] [--json]``
"""

from __future__ import annotations

import argparse

HELP = "convert (epsilon, delta) to mu-GDP and a Gaussian noise scale"


def _cmd_privacy(args) -> int:
    from engine import privacy as P
    from engine.cli import dump_json

    eps = P.validate_epsilon(args.epsilon)
    delta = P.validate_delta(args.delta)
    mu = P.gdp_mu(eps, delta)
    sigma = P.analytic_gaussian_sigma(eps, delta, args.sensitivity)
    achieved_mu = P.gaussian_mu(args.sensitivity, sigma)
    out = {
        "epsilon_target": eps,
        "delta": delta,
        "sensitivity": args.sensitivity,
        "mu": mu,
        "sigma_analytic": sigma,
        "achieved_mu": achieved_mu,
        "achieved_epsilon": P.gdp_epsilon(achieved_mu, delta),
        "achieved_delta": P.gdp_delta(eps, achieved_mu),
    }
    if eps < 1:
        out["sigma_classical"] = P.classical_gaussian_sigma(eps, delta, args.sensitivity)
    if args.json:
        print(dump_json(out))
    else:
        print(f"target          : epsilon = {eps:g}, delta = {delta:g}, L2 sensitivity = {args.sensitivity:g}")
        print(f"mu-GDP          : mu = {mu:.6f}")
        print(f"sigma (analytic): {sigma:.6f}")
        if "sigma_classical" in out:
            print(f"sigma (classical, Dwork-Roth): {out['sigma_classical']:.6f}")
        print(f"achieved        : epsilon = {out['achieved_epsilon']:.6f} at delta = {delta:g} "
              f"(delta at the target epsilon = {out['achieved_delta']:.3e})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("privacy", help=HELP)
    p.add_argument("--epsilon", type=float, required=True, help="target epsilon (> 0)")
    p.add_argument("--delta", type=float, required=True, help="target delta, in (0, 1)")
    p.add_argument("--sensitivity", type=float, default=1.0, help="L2 sensitivity (default 1)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_privacy)
