"""``python -m engine pmt --data ...``: PMT ridge and DP-RR on the user's own files, in memory or on Dask.

Example::

    python -m engine pmt --data 'private/*.parquet' --target PE --public public.csv --engine dask \\
        --epsilon 0.5 1 2 --seeds 20
    python -m engine pmt --data 'private/*.csv' --target PE --public public.csv --engine dask \\
        --scheduler tcp://10.0.0.5:8786

``--engine dask`` (:mod:`engine.pmt.dask`) reads the private files lazily (Parquet or CSV globs), makes
**one pass** per method over them for the sufficient statistics, and releases them for every epsilon x
lam x seed from that pass (each release spends its own budget: the table is a study of the mechanism,
not one private answer). ``--engine memory`` (default) reads one CSV with the dashboard's validating
loader (:func:`engine.datasets.upload.read_csv_upload`) and fits the in-memory estimators. Errors are
measured against the non-private ridge on the same (untruncated) private rows.
"""

from __future__ import annotations

import argparse


#: Methods ``--data`` runs (CLI key -> display name); the error is to the non-private ridge on the same rows.
NAMES = {"pmt": "PMT", "pmt-pooled": "PMT-pooled", "dp-rr": "DP-RR", "adassp": "AdaSSP", "public-only": "Public-only"}


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine``, ``--scheduler``, ``--sep`` of ``pmt``; ``--data``, ``--target``, ``--features`` and
    ``--public`` are :func:`engine.cli.pmt_files.add_file_arguments` (one set of file flags for both engines)."""
    g = p.add_argument_group("larger than memory (with --data)")
    g.add_argument("--engine", choices=["memory", "dask"], default="memory",
                   help="memory: the dashboard's loader, in memory (default); dask: out of core, one pass over "
                   "Parquet/CSV files or a quoted glob such as 'data/*.parquet' (needs --public)")
    g.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="--engine dask: a dask.distributed scheduler, e.g. tcp://host:8786 "
                   "(default: Dask's local threaded scheduler)")
    g.add_argument("--sep", default=",", help="--engine dask: CSV delimiter of the private files (default ',')")


def _summary(rows, metric="l2_error"):
    import pandas as pd

    frame = pd.DataFrame(rows)
    g = frame.groupby(["method", "epsilon", "lam"], sort=False)[metric]
    out = g.agg(median="median", q25=lambda v: v.quantile(0.25), q75=lambda v: v.quantile(0.75), seeds="size")
    return frame, out.reset_index()


def run_data(args) -> int:
    """Run the ``pmt`` subcommand on ``--data`` files (see the module docstring)."""
    import numpy as np

    from engine.cli import dump_json

    if args.target is None or args.public is None:
        raise ValueError("--data needs --target COLUMN and --public PATH (public rows are never taken from --data)")
    if args.task != "ridge" or args.standardize:
        raise ValueError("--data supports --task ridge without --standardize")
    methods = args.methods or ["pmt", "dp-rr", "adassp", "public-only"]
    bad = [m for m in methods if m not in NAMES and m != "non-private"]
    if bad:
        raise ValueError(f"--data runs the methods {', '.join(NAMES)} (and non-private, the reference); not {bad}")
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    base = {"delta": args.delta, "eta": args.eta}
    sampler = getattr(args, "sampler", "numpy")  # "opendp": OpenDP's sampler and accounting (no seed)
    rows, info = [], {}
    private = [m for m in methods if m not in ("non-private", "public-only")]
    if not private:
        raise ValueError("--data needs at least one private method (pmt, pmt-pooled, dp-rr): the errors are "
                         "measured against the non-private fit computed in its pass")
    for method in private + ["public-only"] * ("public-only" in methods):
        if method == "public-only":  # no privacy cost: the same coefficients at every epsilon and seed
            from engine.pmt.dask import read_public
            from engine.pmt.public import PublicOnlyRidge

            X_pub, y_pub = read_public(args.public, args.target, feats)
            for lam in args.lam:
                th = PublicOnlyRidge(lam=lam).fit(None, None, X_pub, y_pub).theta_
                rows += [{"method": NAMES[method], "epsilon": eps, "lam": lam, "seed": seed,
                          "l2_error": float(np.linalg.norm(th - reference(lam)))}
                         for eps in args.epsilon for seed in range(args.seeds)]
            continue
        if args.engine == "dask":
            from engine.pmt.dask import run_from_files

            ds = run_from_files(args.data, args.target, args.features, public=args.public, method=method,
                                scheduler=args.scheduler, sep=args.sep, statistics_only=True,
                                **_method_params(args, method, base))
            release, reference, feats = ds.release, ds.reference_theta, ds.names[:-1]
        else:
            release, reference, feats = _memory(args, method, _method_params(args, method, base))
        for lam in args.lam:
            ref = reference(lam)
            for eps in args.epsilon:
                for seed in range(args.seeds):
                    m = release(epsilon=eps, lam=lam, random_state=seed, sampler=sampler)
                    rows.append({"method": NAMES[method], "epsilon": eps, "lam": lam, "seed": seed,
                                 "l2_error": float(np.linalg.norm(m.theta_ - ref))})
        r = m.report_
        info = {"files": args.data, "engine": args.engine, "n_private": r.n, "d": r.d, "n_pub": r.n_pub,
                "kappa_raw": r.kappa_raw, "kappa_pub": r.kappa_pub, "sampler": sampler, **info}
        if sampler == "opendp":  # what OpenDP's own map certifies for the last release (<= its epsilon)
            info[f"opendp_epsilon_{method}"] = r.extra["opendp_epsilon"]
        info[f"frac_truncated_{method}"] = r.frac_truncated
        if method == "pmt":
            info["kappa_pmt"] = r.kappa_pmt
    frame, summary = _summary(rows)
    if args.out:
        frame.to_csv(args.out, index=False)
    if args.json:
        print(dump_json({"settings": info, "summary": summary.to_dict(orient="records")}))
        return 0
    if sampler == "opendp":
        print("sampler: opendp (OpenDP's Gaussian sampler; budget from OpenDP's zCDP map, certified epsilon <= "
              "the requested one; seeds do not reproduce the noise)")
    print(f"{info['files']} ({args.engine}): n = {info['n_private']} private rows, d = {info['d']} (intercept "
          f"included), n_pub = {info['n_pub']}, delta = {args.delta:g}, replace-one neighbours")
    print(f"kappa(X^T X) raw = {info['kappa_raw']:.3g}, public = {info['kappa_pub']:.3g}"
          + (f", after PMT = {info['kappa_pmt']:.3g}" if "kappa_pmt" in info else ""))
    print("\nL2 error to the non-private ridge on the same rows (median, IQR over seeds):")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def _method_params(args, method, base):
    """The estimator's parameters: ``base`` plus PMT's ``--response`` (the other methods have none)."""
    return {**base, "response": getattr(args, "response", "auto")} if method == "pmt" else dict(base)


def _memory(args, method, base):
    """In memory: one CSV through the dashboard's validating loader; the estimators' own fit per release."""
    from sklearn.base import clone

    from engine.datasets.upload import read_csv_upload
    from engine.pmt import AdaSSPRidge, DPRidge, PMTRidge, RidgeReference
    from engine.pmt.dask import read_public
    from engine.pmt.pooled import PMTPooledRidge

    ds = read_csv_upload(args.data, target=args.target, features=args.features, task="regression")
    X, y = ds.to_numpy()
    X_pub, y_pub = read_public(args.public, args.target, list(ds.X.columns))
    # centred with public statistics (center="public"), as the Dask one-pass release is, so both engines agree
    template = {"pmt": PMTRidge, "pmt-pooled": PMTPooledRidge, "dp-rr": DPRidge, "adassp": AdaSSPRidge}[method](**base)

    def release(**params):
        return clone(template).set_params(**params).fit(X, y, X_pub, y_pub)

    def reference(lam):
        return RidgeReference(lam=lam).fit(X, y).theta_

    return release, reference, list(ds.X.columns)
