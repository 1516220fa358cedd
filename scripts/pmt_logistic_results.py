"""Generate ``docs/pmt_logistic_results.md``: DP-PMTLR (noisy Newton) against its baselines on Bank Marketing.

Settings: bank (bank-full; one-hot categoricals, ``duration`` dropped, features standardised
with the public sample's mean/std only) at epsilon in {0.5, 1, 2, 5}, delta = 1e-5, n_pub = 200,
lam in {0, 1e-4, 1e-2}, replace-one, ``--seeds`` noise seeds (default 20), one fixed public/test split
(split seed 0, 20 % of the private rows held out). Reports the median and IQR of the L2 distance to the
non-private logistic fit, held-out accuracy and ROC AUC per method, and convergence failures. A second
block repeats the synthetic acceptance setting (n = 20000, d = 10, kappa(Sigma) = 100, ||theta*|| = 3,
epsilon = 1, lam = 0, 50 seeds). Every sentence with a number is computed from the frames; the output
is deterministic (no timestamps), so rerunning reproduces the file.

Usage::

    .venv/bin/python scripts/pmt_logistic_results.py [--seeds 20] [--out docs/pmt_logistic_results.md]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.datasets import load_dataset, make_synthetic_logistic  # noqa: E402
from engine.pmt.sweep import run_sweep, summarize, sweep_split  # noqa: E402
from scripts.stamp import with_stamp  # noqa: E402

EPSILONS = [0.5, 1.0, 2.0, 5.0]
LAMS = [0.0, 1e-4, 1e-2]
ORDER = ["PMT", "DP-Newton", "DP-GD", "Public-only", "Non-private"]
PRIVATE = ["PMT", "DP-Newton", "DP-GD"]


def fmt(v) -> str:
    return f"{v:.3g}" if np.isfinite(v) else str(v)


def cell(r) -> str:
    return f"{fmt(r['median'])} [{fmt(r['q25'])}, {fmt(r['q75'])}]"


def metric_table(frame: pd.DataFrame, metric: str, methods=ORDER) -> str:
    s = summarize(frame, metric)
    head = "| lam | method | " + " | ".join(f"eps = {e:g}" for e in EPSILONS) + " |"
    lines = [head, "|---|---|" + "---|" * len(EPSILONS)]
    for lam in LAMS:
        for m in methods:
            sub = s[(s["method"] == m) & (s["lam"] == lam)].set_index("epsilon")
            if sub.empty:
                continue
            lines.append(f"| {lam:g} | {m} | " + " | ".join(cell(sub.loc[e]) for e in EPSILONS) + " |")
    return "\n".join(lines)


def failure_table(frame: pd.DataFrame) -> str:
    g = frame.groupby(["lam", "method", "epsilon"])
    fails = g["converged"].apply(lambda c: int((~c.astype(bool)).sum()))
    fixes = g["eig_fixes"].median()
    seeds = g.size()
    head = "| lam | method | " + " | ".join(f"eps = {e:g}" for e in EPSILONS) + " |"
    lines = [head, "|---|---|" + "---|" * len(EPSILONS)]
    for lam in LAMS:
        for m in PRIVATE:
            cells = []
            for e in EPSILONS:
                k = (lam, m, e)
                extra = f", floor fired at {fixes[k]:.0f}/5 steps (median)" if m != "DP-GD" else ""
                cells.append(f"{fails[k]}/{seeds[k]}{extra}")
            lines.append(f"| {lam:g} | {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def conditioning(frame: pd.DataFrame) -> str:
    X, y = load_dataset("bank").to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        X_pub, *_ = sweep_split(X, y, n_pub=200, split_seed=0, test_size=0.2, standardize=False, center_y=False)
    const = int(np.sum(X_pub.std(axis=0) == 0))
    pmt = frame[frame["method"] == "PMT"].iloc[0]
    nw = frame[frame["method"] == "DP-Newton"].iloc[0]
    return "\n".join([
        "| quantity | value |",
        "|---|---|",
        f"| n (private training rows) | {int(pmt['n'])} |",
        f"| d (41 features + intercept) | {int(pmt['d'])} |",
        f"| kappa(X^T X), standardised private rows (display only) | {fmt(pmt['kappa_raw'])} |",
        f"| kappa(Sigma_pub) (200 public rows, uncentered, regularised) | {fmt(pmt['kappa_pub'])} |",
        f"| feature columns constant in the public sample | {const} |",
        f"| kappa(X~^T X~) after PMT | {fmt(pmt['kappa_pmt'])} |",
        f"| PMT radius R (whitened units) | {fmt(pmt['radius'])} |",
        f"| fraction of private rows truncated by PMT | {fmt(pmt['frac_truncated'])} |",
        f"| DP-Newton clip radius C (standardised units) / fraction clipped | {fmt(nw['radius'])} / "
        f"{fmt(nw['frac_truncated'])} |",
    ]), const


def observations(frame: pd.DataFrame, const: int) -> list[str]:
    med = frame.groupby(["method", "lam", "epsilon"])[["l2_error", "auc", "accuracy"]].median()
    ref = frame[frame["method"] == "Non-private"].groupby("lam")[["auc", "accuracy"]].median()
    out = []
    for lam in LAMS:
        best = {e: min(PRIVATE, key=lambda m: med.loc[(m, lam, e), "l2_error"]) for e in EPSILONS}
        out.append(f"- lam = {lam:g}: lowest median L2 error per epsilon: "
                   + ", ".join(f"eps {e:g}: {best[e]} ({fmt(med.loc[(best[e], lam, e), 'l2_error'])})"
                               for e in EPSILONS)
                   + f". Non-private held-out AUC {fmt(ref.loc[lam, 'auc'])}, accuracy {fmt(ref.loc[lam, 'accuracy'])}.")
    for lam in LAMS:
        pub = med.loc[("Public-only", lam, EPSILONS[0])]
        beat = [e for e in EPSILONS if min(med.loc[(m, lam, e), "l2_error"] for m in PRIVATE) < pub["l2_error"]]
        out.append(f"- lam = {lam:g}: the public rows alone (Public-only, no privacy cost) reach median L2 error "
                   f"{fmt(pub['l2_error'])} and held-out AUC {fmt(pub['auc'])}; a private method beats that error at "
                   f"epsilon = {', '.join(f'{e:g}' for e in beat) or 'none'}.")
    fl = frame[frame["method"] == "PMT"].groupby("epsilon")["eig_floor"].median()
    fx = frame[frame["method"] == "PMT"]["eig_fixes"].mean()
    out.append("- Eigenvalue floor in force for PMT (whitened units, = 2 sqrt(d) sigma_H here): "
               + ", ".join(f"eps {e:g}: {fmt(fl[e])}" for e in EPSILONS)
               + f"; it fired at {fmt(fx)} of 5 steps on average. The noise-free whitened Hessian is "
               "b'' X~^T X~ / n with b'' <= 1/4 (about 0.1 at the 11.7 % base rate) and "
               f"kappa(X~^T X~) = {fmt(frame[frame['method'] == 'PMT']['kappa_pmt'].iloc[0])}, so with "
               f"d = {int(frame['d'].iloc[0])} the floor (the Hessian noise level) is at or above the Hessian's "
               "own eigenvalues: the five Newton steps then act like preconditioned gradient steps of size "
               "~1/floor. A likely reason why 100 DP-GD steps on the already standardised (kappa "
               f"{fmt(frame['kappa_raw'].iloc[0])}) features reach a lower error here.")
    p0 = med.loc[("PMT", 0.0, 5.0)]
    p1 = med.loc[("PMT", 1e-4, 5.0)]
    out.append(
        f"- PMT at lam = 0 vs lam = 1e-4 (eps 5): median L2 error {fmt(p0['l2_error'])} vs {fmt(p1['l2_error'])}, "
        f"AUC {fmt(p0['auc'])} vs {fmt(p1['auc'])}. {const} one-hot column(s) are constant in the 200 public rows, "
        "so Sigma_pub is singular there and is regularised with tau = 1e-6 trace/d (PMT.md section 2); "
        "theta = Sigma_pub^{-1/2} theta~ multiplies the noise in those directions by about 1/sqrt(tau). "
        "Without a penalty nothing holds those coefficients back: the L2 error explodes while the predictions "
        "(rare categories) barely change. Any lam > 0 adds 2 lam Sigma_pub^{-1} to the whitened Hessian, "
        "which pins them near 0.")
    return out


def synthetic_block(seeds=50) -> str:
    ds = make_synthetic_logistic(n=20000, d=10, kappa=100.0, theta_norm=3.0, random_state=0)
    lines = ["| eigenvalue floor | method | median L2 error [q25, q75] | convergence failures |", "|---|---|---|---|"]
    for floor, methods in (("auto", ["pmt", "dp-newton", "dp-gd"]), (1e-3, ["pmt", "dp-newton"])):
        f = run_sweep(ds, task="logistic", methods=methods, epsilons=[1.0], seeds=seeds, lams=[0.0], n_pubs=[200],
                      test_size=0.0, task_options={"eig_floor": floor})
        s = summarize(f, "l2_error").set_index("method")
        fails = f.groupby("method")["converged"].apply(lambda c: int((~c).sum()))
        for m in s.index:
            label = "n/a (first order)" if m == "DP-GD" else ("max(1e-3, 2 sqrt(d) sigma_H)" if floor == "auto"
                                                               else "fixed 1e-3")
            lines.append(f"| {label} | {m} | {cell(s.loc[m])} | {fails[m]}/{seeds} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "docs" / "pmt_logistic_results.md"))
    args = ap.parse_args(argv)
    frame = run_sweep("bank", task="logistic", epsilons=EPSILONS, seeds=args.seeds, lams=LAMS, n_pubs=[200],
                      delta=1e-5, standardize=True)
    cond, const = conditioning(frame)
    n_seeds = args.seeds
    doc = f"""# DP-PMTLR (PMT logistic regression, noisy Newton) against its baselines: results

Generated by `scripts/pmt_logistic_results.py` (do not edit by hand; rerun the script). Engine:
`engine.pmt.sweep.run_sweep(task="logistic")` (`engine.pmt.sweep_logistic`), estimators in
`engine.pmt.logistic`, transform in `engine.pmt`. Specification: `docs/specs/PMT.md` sections 4, 5, 6.

**Settings.** Bank Marketing (bank-full, 45211 rows; 9 categoricals one-hot with drop_first, `duration`
dropped; y = 1 for "yes", 11.7 %), features standardised with the **public** sample's mean and std only,
after the split. epsilon in {{0.5, 1, 2, 5}}, delta = 1e-5 (converted to mu-GDP exactly), replace-one,
n_pub = 200, lam in {{0, 1e-4, 1e-2}} (objective `(1/n) sum [log(1 + e^u) - y u] + lam ||theta||^2`,
intercept appended as a constant column and not penalised), eta = 0.05, {n_seeds} noise seeds, one fixed
public/test split (split seed 0; 20 % of the private rows held out before anything is fitted).
PMT and DP-Newton: T = 5 noisy Newton steps from 0, step size 1, 2T releases of mu/sqrt(2T) each
(gradient sensitivity 2R/n, Hessian sqrt(2) R^2/(4n)), eigenvalue floor max(1e-3, 2 sqrt(d) sigma_H)
(the noise level of the symmetric Hessian noise; see `engine.pmt._newton`). DP-Newton runs the same iteration on
the standardised rows clipped at C = sqrt(d (1 + ln(2n/eta))). DP-GD: T = 100 full-batch steps of
mu/sqrt(T), step 1/(lambda_max(Sigma_pub)/4 + 2 lam), per-example gradient clip at the same C.

**Metrics.** L2 distance between the private coefficient vector (intercept included, original
standardised units) and the non-private logistic fit on the same untruncated private training rows and
lam; held-out accuracy (threshold 0.5) and ROC AUC on the test rows. Cells: median [q25, q75] over
the seeds. A run has *converged* when every iterate is finite and the last Newton step is at most
0.25 (1 + ||theta~||) (noise keeps it from reaching 0; the flag separates settled runs from runs still
moving or diverging, it is not a certificate of accuracy: read it with the L2 error). DP-GD has no such
criterion: it fails only on a non-finite iterate.

## 1. Conditioning

{cond}

## 2. L2 error to the non-private fit

{metric_table(frame, "l2_error", PRIVATE)}

## 3. Held-out accuracy

{metric_table(frame, "accuracy")}

## 4. Held-out ROC AUC

{metric_table(frame, "auc")}

## 5. Convergence failures (runs not converged / seeds) and eigenvalue-floor activity

{failure_table(frame)}

## 6. Observations (computed from the tables above)

{chr(10).join(observations(frame, const))}

## 7. Synthetic acceptance setting

n = 20000 (200 public, the rest private), d = 10, kappa(Sigma) = 100, ||theta*|| = 3, epsilon = 1,
delta = 1e-5, lam = 0, 50 seeds, raw (unstandardised) features. PMT.md section 8: DP-PMTLR converges
where the private-only noisy Newton struggles at small lam. The second block uses the research note's
fixed eigenvalue floor 1e-3 instead of the default noise-level floor: at epsilon = 1 both noisy Newton
methods then diverge (the floor fires at almost every step and 1/1e-3 multiplies the noise).

{synthetic_block()}

Reproduce: `python -m engine pmt --task logistic --dataset bank --standardize --epsilon 0.5 1 2 5 --seeds {n_seeds} --lam 0 1e-4 1e-2`.
"""
    Path(args.out).write_text(with_stamp(doc))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
