"""``python -m engine pmt --data ... --task logistic|poisson --engine dask``: the GLMs on the user's own files.

Example::

    python -m engine pmt --task logistic --data 'private/*.parquet' --target y --public public.csv \\
        --engine dask --epsilon 0.5 1 --seeds 5
    python -m engine pmt --task poisson --y-max 20 --data 'private/*.csv' --target count --public public.csv \\
        --engine dask --scheduler tcp://10.0.0.5:8786

Every fit reads the files once per step (:mod:`engine.pmt._dask_glm`: noisy Newton T passes, DP-GD one per
step after a checking pass; the noise is drawn once per fit on the driver), so the cost grows with
epsilons x lams x seeds x steps: keep ``--seeds`` small on large files. Errors are the L2 distance to the
non-private fit (:class:`~engine.pmt.LogisticReference` / :class:`~engine.pmt.PoissonReference`) on the same
(untruncated) private rows, fitted on Dask too. ``--engine memory`` (reached with ``--sampler opendp``) reads
the same files into memory and fits the in-memory estimators: the same numbers up to summation order.
"""

from __future__ import annotations

#: Methods per task (CLI key -> display name).
GLM_NAMES = {
    "logistic": {"pmt": "PMT", "dp-newton": "DP-Newton", "dp-gd": "DP-GD", "public-only": "Public-only"},
    "poisson": {"pmt": "PMT", "public-only": "Public-only"},
}
DEFAULT_METHODS = {"logistic": ["pmt", "dp-newton", "public-only"], "poisson": ["pmt", "public-only"]}


def _estimators(task, args):
    from engine.pmt import DPGDLogistic, DPNewtonLogistic, LogisticReference, PMTLogistic, PMTPoisson, PoissonReference
    from engine.pmt.public import PublicOnlyLogistic, PublicOnlyPoisson

    base = {"delta": args.delta, "eta": args.eta}
    if task == "logistic":
        return {"pmt": lambda: PMTLogistic(n_steps=args.newton_steps, **base),
                "dp-newton": lambda: DPNewtonLogistic(n_steps=args.newton_steps, **base),
                "dp-gd": lambda: DPGDLogistic(n_steps=args.steps, **base)}, LogisticReference, PublicOnlyLogistic
    if args.y_max is None:
        raise ValueError("--task poisson needs --y-max (the public upper clip of the counts; never taken from the "
                         "private data)")
    return ({"pmt": lambda: PMTPoisson(n_steps=args.newton_steps, y_max=args.y_max, **base)}, PoissonReference,
            PublicOnlyPoisson)


def _summary(rows, metric="l2_error"):
    import pandas as pd

    frame = pd.DataFrame(rows)
    g = frame.groupby(["method", "epsilon", "lam"], sort=False)[metric]
    out = g.agg(median="median", q25=lambda v: v.quantile(0.25), q75=lambda v: v.quantile(0.75), seeds="size")
    return frame, out.reset_index()


def run_data_glm(args) -> int:
    """Run ``pmt --task logistic|poisson --data FILES`` (module docstring)."""
    import numpy as np

    from engine.cli import dump_json
    from engine.pmt._dask_glm import file_source
    from engine.pmt.dask import read_private, read_public, scheduler_context

    task = args.task
    if args.target is None or args.public is None:
        raise ValueError("--data needs --target COLUMN and --public PATH (public rows are never taken from --data)")
    if args.standardize:
        raise ValueError(f"--data with --task {task} does not take --standardize (PMT whitens with the public rows)")
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    names = GLM_NAMES[task]
    methods = args.methods or DEFAULT_METHODS[task]
    bad = [m for m in methods if m not in names and m != "non-private"]
    if bad:
        raise ValueError(f"--data --task {task} runs the methods {', '.join(names)}; not {bad}")
    private = [m for m in methods if m in names and m != "public-only"]
    if not private:
        raise ValueError(f"--data needs at least one private method ({', '.join(m for m in names if m != 'public-only')})")
    makers, Reference, PublicOnly = _estimators(task, args)
    sampler = getattr(args, "sampler", "numpy")
    X, y, source = read_private(args.data, args.target, args.features, sep=args.sep)
    feats = list(X.columns)
    X_pub, y_pub = read_public(args.public, args.target, feats)
    if args.engine != "dask":  # the explicit in-memory engine: the same files read into memory
        X, y = X.compute().to_numpy(dtype=float), y.compute().to_numpy(dtype=float)
    rows, info = [], {}
    with scheduler_context(args.scheduler if args.engine == "dask" else None), file_source(source):
        refs = {lam: Reference(lam=lam).fit(X, y).theta_ for lam in args.lam}
        for method in private:
            for lam in args.lam:
                for eps in args.epsilon:
                    for seed in range(args.seeds):
                        m = makers[method]().set_params(epsilon=eps, lam=lam, random_state=seed, sampler=sampler)
                        m.fit(X, y, X_pub)
                        rows.append({"method": names[method], "epsilon": eps, "lam": lam, "seed": seed,
                                     "l2_error": float(np.linalg.norm(m.theta_ - refs[lam])),
                                     "converged": m.report_.converged})
            r = m.report_
            info = {"files": args.data, "engine": args.engine, "task": task, "n_private": r.n, "d": r.d,
                    "n_pub": int(np.shape(X_pub)[0]), "kappa_raw": r.kappa_raw, "sampler": sampler, **info}
            info[f"frac_truncated_{method}"] = r.frac_truncated
            info[f"passes_per_fit_{method}"] = r.extra.get("passes")
    if "public-only" in methods:  # no privacy cost: the same coefficients at every epsilon and seed
        for lam in args.lam:
            th = PublicOnly(lam=lam).fit(None, None, X_pub, y_pub).theta_
            rows += [{"method": names["public-only"], "epsilon": eps, "lam": lam, "seed": seed,
                      "l2_error": float(np.linalg.norm(th - refs[lam])), "converged": True}
                     for eps in args.epsilon for seed in range(args.seeds)]
    frame, summary = _summary(rows)
    if args.out:
        frame.to_csv(args.out, index=False)
    if args.json:
        print(dump_json({"settings": info, "summary": summary.to_dict(orient="records")}))
        return 0
    print(f"{info['files']} ({args.engine}, {task}): n = {info['n_private']} private rows, d = {info['d']} "
          f"(intercept included), n_pub = {info['n_pub']}, delta = {args.delta:g}, replace-one neighbours")
    print(f"kappa(X^T X) raw = {info['kappa_raw']:.3g}; passes over the files per fit: "
          + ", ".join(f"{names[m]} {info.get('passes_per_fit_' + m)}" for m in private))
    print(f"\nL2 error to the non-private {task} fit on the same rows (median, IQR over seeds):")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0
