"""Generate ``docs/pmt_planner_check.md``: does the planner predict the simulated errors and crossovers?

For each set the planners (:mod:`engine.pmt.planner` for ridge, held-out RMSE; :mod:`engine.pmt.planner_logistic`
for logistic, held-out log-loss) are built from the 200 public rows of the usual split (split seed 0) only; the
simulation subsamples n private training rows, fits each method with ``--seeds`` noise seeds through the
estimators (features standardised with public statistics; ridge: y centred by the public mean) and takes the
median on held-out rows (at most 20,000 of them). Reported per set and epsilon:

* the crossover (PMT below public-only by more than the planner's CROSSOVER_MARGIN, 0.5 %, from that n on): predicted, and
  the simulated bracket ``(n_prev, n_k]`` (the first simulated n from which PMT stays below, and the one before);
  the check passes when the prediction lies in ``[n_prev / 2, 2 n_k]``, or when both say "none" (the prediction
  "none" or beyond the largest simulated n, where the simulation has no crossover); a plan that answers "unknown"
  (:attr:`engine.pmt.planner.Plan.crossover_note`: the clip form's bias rests on a tail the public rows cannot
  measure) is listed apart, neither a hit nor a false crossover;
* the worst predicted / simulated ratio of each method over the simulated n (check: within [0.5, 2]).

Ridge: ccpp, wine-red, wine-white (epsilon 1) and flights (epsilon 0.5, 1, 2); PMT with PMTRidge's default
response and, as its own row, ``response="clip"``. Logistic: bank (epsilon 1) and flights-late (0.5, 1, 2); PMT
is PMTLogistic's default (``whiten="auto"`` with the public labels), DP-Newton runs on the publicly standardised
rows. Sizes are kept modest (the machine is shared): ``--seeds`` (default 4; DP-GD and logistic),
``--cheap-seeds`` (default 15; the closed-form ridge releases) and the n lists below.

Usage::

    nice -n 10 .venv/bin/python scripts/check_planner.py [--seeds 4] [--cheap-seeds 15] [--out docs/pmt_planner_check.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.datasets import load_dataset  # noqa: E402
from engine.pmt import (  # noqa: E402
    DPGDRidge, DPNewtonLogistic, DPRidge, LogisticReference, PMTLogistic, PMTPooledRidge, PMTRidge,
    PublicOnlyLogistic, PublicOnlyRidge, RidgeReference,
)
from engine.pmt.planner import CROSSOVER_MARGIN, plan, plan_inputs_from_public  # noqa: E402
from engine.pmt.planner_logistic import plan_logistic  # noqa: E402
from engine.pmt.sweep import sweep_split  # noqa: E402
from scripts.stamp import with_stamp  # noqa: E402

RIDGE = [("ccpp", [1.0], [200, 1000, 2000, 5000, 10**9]), ("wine-red", [1.0], [200, 500, 1000, 10**9]),
         ("wine-white", [1.0], [200, 1000, 2000, 10**9]),
         ("flights", [0.5, 1.0, 2.0], [1000, 3000, 10000, 30000, 100000, 10**9])]
LOGISTIC = [("bank", [1.0], [1000, 5000, 10000, 10**9]),
            ("flights-late", [0.5, 1.0, 2.0], [1000, 3000, 10000, 20000, 30000, 50000, 100000, 10**9])]
LAM = 1e-3
#: What the doc says about the model and about the checks that stay outside their bounds (measured on this split).
WHY = [
    "- Logistic floor (changed): the best linear model's log-loss `L_inf` and the non-private curve now come from "
    "Takeuchi's correction at the public fit (in-sample loss + tr(H^-1 J) / 2m; slope tr(H^-1 J) / 2), capped by the "
    "public base-rate entropy. The earlier floor, the intercept of a 1/k law fitted to cross-fitted losses at 100 "
    "and 160 rows, put bank's floor (d = 42) at 0.58, above the intercept-only 0.35: every bank curve (PMT, "
    "DP-Newton, non-private) sat 2x above the simulation and the crossover was predicted at 100,000 instead of "
    "(5,000, 10,000].",
    "- Logistic public-only (changed): the cross-fitted losses at 160 and 100 rows are now means over 20 fold "
    "splits (`CV_REPEATS`) instead of one seed-0 split. One split's loss moves with which rows share a fold "
    "(standard deviation over splits 0.008 on flights-late, 0.09 on bank); on flights-late the seed-0 split read "
    "0.297 at 160 rows and 0.286 at 100, a slope of the wrong sign (so the d/2 fallback), and put public-only at "
    "0.292, early crossovers (46,416 / 21,544 / 10,000 at eps 0.5 / 1 / 2) against a public fit that holds out at "
    "0.266. Public rows only.",
    "- flights DP-RR ratio (red where it is): DP-RR inverts the released moment's small eigenvalues. Along the "
    "public moment's smallest eigen-direction (dep_time against hour and dep_delay: the clock columns) the 200 "
    "public rows have variance 0.0024 and kurtosis 2.4; the private rows (a diagnostic reading, not planner input) "
    "have variance 0.055 and kurtosis 244: about 0.4 % of flights (departed past midnight, after a scheduled late-evening hour) sit 30-100x out, and the "
    "public sample holds none of them (its largest projection is 0.11, the private 99.9 % quantile 3.8). So the "
    "planner's DP-RR is pessimistic (about 2.5x) where the noise still rivals that eigenvalue; shrinking the public "
    "coefficients moves the prediction by under 3 % and a bootstrap of the public rows cannot create a tail they do "
    "not hold. Kept red: no public-only estimate sees it.",
    "- flights PMT (clip) crossover (unknown): the same unseen tail. Noise-free, the clip form's bounds applied to "
    "the private rows move the fit by an excess risk of about 100-120 (squared minutes; mostly the whitened-row "
    "truncation of those past-midnight rows, whose whitened norm is about 77 against R = 11), applied to the 200 "
    "public rows by 6-11; a Pareto tail fitted to the public |y| (Hill index 2.5) and carried from the bound that "
    "cuts 10 public rows makes the bias fall with n and would promise a crossover between 30,000 and 260,000 (by epsilon) that the "
    "simulation does not show. A number from the public rows would be a false crossover and \"none\" would rest on "
    "the private rows, so the plan keeps answering \"unknown\" with its reason; these rows stay outside the check.",
]


def _split(name):
    X, y = load_dataset(name).to_numpy()
    Xq, yq, Xtr, ytr, Xte, yte = sweep_split(X, y, n_pub=200, split_seed=0)
    mu, sd = Xq.mean(0), Xq.std(0)
    sd[sd == 0] = 1.0
    f = lambda A: (A - mu) / sd  # noqa: E731  (public statistics)
    te = np.random.default_rng(1).choice(len(yte), min(len(yte), 20000), replace=False)
    return f(Xq), yq, f(Xtr), ytr, f(Xte[te]), yte[te]


def _crossover(ns, pmt, pub):
    """``(n_prev, n_k)``: PMT below public-only (margin) from ``n_k`` on among the simulated ``ns``; None if never."""
    wins = [a < b * (1 - CROSSOVER_MARGIN) for a, b in zip(pmt, pub)]
    if not wins[-1]:
        return None
    k = len(wins) - 1
    while k > 0 and wins[k - 1]:
        k -= 1
    return (ns[k - 1] if k > 0 else 0, ns[k])


def _cross_ok(pred, sim, n_max, note=None):
    """True / False, or "unknown" when the plan answers unknown (``note``): no promise, so neither a hit nor a
    false crossover."""
    if note is not None:
        return "unknown"
    if sim is None:
        return pred is None or pred > n_max
    return pred is not None and sim[0] / 2 <= pred <= 2 * sim[1]


def _fmt_cross(sim):
    return "none" if sim is None else (f"<= {sim[1]:,}" if sim[0] == 0 else f"({sim[0]:,}, {sim[1]:,}]")


def ridge_rows(name, epsilons, ns, seeds, cheap_seeds):
    Xq, yq, Xtr, ytr, Xte, yte = _split(name)
    c = float(yq.mean())
    yq, ytr, yte = yq - c, ytr - c, yte - c
    rmse = lambda m: float(np.sqrt(np.mean((m.predict(Xte) - yte) ** 2)))  # noqa: E731
    inputs = plan_inputs_from_public(Xq, yq)
    default = PMTRidge().response
    pub = rmse(PublicOnlyRidge(lam=LAM).fit(Xtr[:5], None, Xq, yq))
    out = []
    rng = np.random.default_rng(0)
    ns = sorted({min(n, len(ytr)) for n in ns})
    subs = {n: np.sort(rng.choice(len(ytr), n, replace=False)) for n in ns}
    for eps in epsilons:
        plans = {"PMT": plan(inputs, epsilon=eps, lam=LAM), "PMT (clip)": plan(inputs, epsilon=eps, lam=LAM,
                                                                               response="clip")}
        makers = {"PMT": lambda s: PMTRidge(epsilon=eps, lam=LAM, random_state=s),
                  "PMT (clip)": lambda s: PMTRidge(epsilon=eps, lam=LAM, response="clip", random_state=s),
                  "PMT-pooled": lambda s: PMTPooledRidge(epsilon=eps, lam=LAM, random_state=s),
                  "DP-RR": lambda s: DPRidge(epsilon=eps, lam=LAM, random_state=s),
                  "DP-GD": lambda s: DPGDRidge(epsilon=eps, lam=LAM, random_state=s)}
        sim = {k: [] for k in list(makers) + ["Public-only", "Non-private"]}
        for n in ns:
            X, y = Xtr[subs[n]], ytr[subs[n]]
            for k, mk in makers.items():
                reps = seeds if k == "DP-GD" else cheap_seeds  # closed-form releases: more seeds for the same time
                sim[k].append(float(np.median([rmse(mk(s).fit(X, y, Xq, yq)) for s in range(reps)])))
            sim["Public-only"].append(pub)
            sim["Non-private"].append(rmse(RidgeReference(lam=LAM).fit(X, y)))
        ratios = {}
        for k, v in sim.items():
            pk = "PMT" if k == "PMT (clip)" else k
            pl = plans["PMT (clip)"] if k == "PMT (clip)" else plans["PMT"]
            ratios[k] = [pl.at(n)[pk] / s for n, s in zip(ns, v)]
        for label, key in (("PMT (default: " + default + ")", "PMT"), ("PMT (clip)", "PMT (clip)")):
            pred, note = plans[key].crossover_n, plans[key].crossover_note
            scross = _crossover(ns, sim[key], sim["Public-only"])
            out.append(dict(task="ridge", data=name, eps=eps, pmt=label, pred=pred, sim=scross,
                            ok=_cross_ok(pred, scross, ns[-1], note), ns=ns, sim_curves=sim, ratios=ratios,
                            response=plans[key].response, note=note))
    return out


def logistic_rows(name, epsilons, ns, seeds):
    Xq, yq, Xtr, ytr, Xte, yte = _split(name)
    yq, ytr, yte = (np.asarray(v, dtype=float) for v in (yq, ytr, yte))
    ll = lambda m: float(np.mean(np.logaddexp(0, m.decision_function(Xte)) - yte * m.decision_function(Xte)))  # noqa
    pub = ll(PublicOnlyLogistic(lam=LAM).fit(Xtr[:5], None, Xq, yq))
    out = []
    rng = np.random.default_rng(0)
    ns = sorted({min(n, len(ytr)) for n in ns})
    subs = {n: np.sort(rng.choice(len(ytr), n, replace=False)) for n in ns}
    for eps in epsilons:
        pl = plan_logistic(Xq, yq, epsilon=eps, lam=LAM)
        sim = {"PMT": [], "DP-Newton": [], "Public-only": [], "Non-private": []}
        for n in ns:
            X, y = Xtr[subs[n]], ytr[subs[n]]
            sim["PMT"].append(float(np.median([ll(PMTLogistic(epsilon=eps, lam=LAM, random_state=s).fit(X, y, Xq, yq))
                                               for s in range(seeds)])))
            sim["DP-Newton"].append(float(np.median([ll(DPNewtonLogistic(epsilon=eps, lam=LAM, random_state=s).fit(X, y))
                                                     for s in range(seeds)])))
            sim["Public-only"].append(pub)
            sim["Non-private"].append(ll(LogisticReference(lam=LAM).fit(X, y)))
        ratios = {k: [pl.at(n)[k] / s for n, s in zip(ns, v)] for k, v in sim.items()}
        scross = _crossover(ns, sim["PMT"], sim["Public-only"])
        out.append(dict(task="logistic", data=name, eps=eps, pmt="PMT (whiten auto)", pred=pl.crossover_n, sim=scross,
                        ok=_cross_ok(pl.crossover_n, scross, ns[-1]), ns=ns, sim_curves=sim, ratios=ratios,
                        response=None))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=4, help="noise seeds of DP-GD and the logistic fits")
    ap.add_argument("--cheap-seeds", type=int, default=15, dest="cheap_seeds",
                    help="noise seeds of the closed-form ridge releases (PMT, PMT-pooled, DP-RR)")
    ap.add_argument("--only", nargs="*", default=None, help="data set names to run (default all)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "pmt_planner_check.md"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.time()
    rows = []
    for name, eps, ns in RIDGE:
        if args.only is None or name in args.only:
            rows += ridge_rows(name, eps, ns, args.seeds, args.cheap_seeds)
            print(f"{name} done ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    for name, eps, ns in LOGISTIC:
        if args.only is None or name in args.only:
            rows += logistic_rows(name, eps, ns, args.seeds)
            print(f"{name} done ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    lines = ["# PMT planner: predicted against simulated crossovers and errors", "",
             f"Generated by `scripts/check_planner.py` ({args.cheap_seeds} noise seeds per cell for the closed-form ridge "
             f"releases (PMT, PMT-pooled, DP-RR), {args.seeds} for DP-GD and the logistic fits; lam {LAM:g}, delta 1e-5, "
             "n_pub 200, split seed 0, at most 20,000 held-out rows; features standardised and, for ridge, y centred "
             "with public statistics). The planners see the 200 public rows only. Ridge: held-out RMSE; logistic: "
             "held-out log-loss. A crossover counts where PMT is below public-only by more than "
             f"{CROSSOVER_MARGIN:.2%}. Seeds and n are kept small for a shared 2-core machine.", "",
             "Checks: predicted crossover in [n_prev / 2, 2 n_k] of the simulated bracket (n_prev, n_k], or \"none\" "
             "on both sides (a prediction beyond the largest simulated n counts as none); every method's "
             "predicted / simulated ratio within [0.5, 2].", "",
             "| task | data | epsilon | PMT | predicted crossover | simulated crossover | crossover ok | worst ratio "
             "(method, n) | all ratios in [0.5, 2] |", "|---|---|---|---|---|---|---|---|---|"]
    n_fail = n_unknown = 0
    for r in rows:
        flat = [(k, n, x) for k, v in r["ratios"].items() for n, x in zip(r["ns"], v)]
        worst = max(flat, key=lambda t: abs(np.log(t[2])))
        within = all(0.5 <= x <= 2.0 for _, _, x in flat)
        unknown = r["ok"] == "unknown"
        n_unknown += unknown
        n_fail += (not unknown and not r["ok"]) + (not within)
        pred = "unknown" if unknown else "none" if r["pred"] is None else f"{r['pred']:,}"
        ok = "unknown" if unknown else "yes" if r["ok"] else "NO"
        lines.append(f"| {r['task']} | {r['data']} | {r['eps']:g} | {r['pmt']} | {pred} | {_fmt_cross(r['sim'])} | "
                     f"{ok} | {worst[2]:.3g} ({worst[0]}, n = {worst[1]:,}) | "
                     f"{'yes' if within else 'NO'} |")
    lines += ["", "Per-method worst ratio (predicted / simulated) over n:", "",
              "| task | data | epsilon | method | simulated medians over n | worst ratio |", "|---|---|---|---|---|---|"]
    seen = set()
    for r in rows:
        for k, v in r["ratios"].items():
            key = (r["task"], r["data"], r["eps"], k)
            if key in seen:
                continue
            seen.add(key)
            w = max(v, key=lambda x: abs(np.log(x)))
            sims = ", ".join(f"{n:,}: {s:.4g}" for n, s in zip(r["ns"], r["sim_curves"][k]))
            lines.append(f"| {r['task']} | {r['data']} | {r['eps']:g} | {k} | {sims} | {w:.3g} |")
    notes = sorted({f"{r['data']} eps {r['eps']:g}, {r['pmt']}: {r['note']}" for r in rows if r.get("note")})
    if notes:
        lines += ["", "Unknown crossovers (the plan makes no promise; counted apart from the checks):", ""]
        lines += [f"- {t}" for t in notes]
    lines += ["", "Model changes and the checks left red (why):", "", *WHY]
    lines += ["", f"{n_fail} check(s) outside the stated bounds; {n_unknown} crossover(s) answered \"unknown\".", "",
              f"Run time {time.time() - t0:.0f} s (load average {os.getloadavg()[0]:.1f})."]
    Path(args.out).write_text(with_stamp("\n".join(lines) + "\n"))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
