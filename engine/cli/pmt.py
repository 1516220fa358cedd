"""CLI subcommand ``pmt``: run a PMT sweep and print the summary (median and IQR per method x epsilon).

Example::

    python -m engine pmt --dataset ccpp --epsilon 0.5 1 2 --seeds 50 --standardize
    python -m engine pmt --dataset synthetic --kappa 1000 --epsilon 1 --seeds 50 --json
    python -m engine pmt --dataset wine-red --epsilon 1 --lam 0 1e-3 --out results.csv
    python -m engine pmt --task logistic --dataset bank --standardize --epsilon 0.5 1 2 5 --seeds 20 --lam 1e-4
    python -m engine pmt --task poisson --dataset bank-campaign --standardize --epsilon 1 10 --seeds 20
    python -m engine pmt --dataset wine-red --standardize --methods pmt pmt-pooled public-only non-private
    python -m engine pmt --data plant.csv --target output --features temp speed load --standardize --epsilon 1
    python -m engine pmt --data plant.csv --target output --public public.csv --clip-radius 3 --epsilon 1

``--data PATH.csv`` (with ``--target``, ``--features``, ``--public``; :mod:`engine.cli.pmt_files`) runs on
the user's own CSV file through the dashboard's validating loader: the same sweep as the PMT page on an
upload, so the page's exported command reproduces its numbers. ``--engine dask`` (with ``--public``;
:mod:`engine.cli.pmt_data`) instead reads Parquet/CSV files or a glob out of core (larger than memory).

``--task logistic`` (DP-PMTLR, DP-Newton, DP-GD, non-private; :mod:`engine.pmt.sweep_logistic`) also
prints the median held-out accuracy and ROC AUC and the number of convergence failures per method and
epsilon; ``--dataset synthetic`` then means :func:`engine.datasets.make_synthetic_logistic`.

``--out`` writes the full tidy frame (one row per run; columns of :func:`engine.pmt.sweep.run_sweep`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


HELP = "sweep DP-PMT ridge and its baselines over epsilons and seeds; print median and IQR"

#: Default ``--metric`` per task: the held-out prediction metric a user reads (L2 is printed beside it).
DEFAULT_METRIC = {"ridge": "rmse", "logistic": "auc", "poisson": "deviance"}

#: Tasks the ``--task`` option accepts (the logistic/GLM task appends to this list).
TASK_CHOICES = ["ridge", "logistic", "poisson"]
#: Default methods per task (every task compares against the public rows alone: "public-only").
DEFAULT_METHODS = {"ridge": ["pmt", "dp-rr", "dp-gd", "adassp", "public-only", "non-private"],
                   "logistic": ["pmt", "dp-newton", "dp-gd", "public-only", "non-private"],
                   "poisson": ["pmt", "dp-newton", "public-only", "non-private"]}


def _format_table(summary, metric: str) -> str:
    import pandas as pd

    rows = []
    for r in summary.itertuples(index=False):
        rows.append({
            "method": r.method,
            "epsilon": f"{r.epsilon:g}",
            "lam": f"{r.lam:g}",
            "n_pub": r.n_pub,
            f"median {metric}": f"{r.median:.4g}",
            "IQR (q25 - q75)": f"{r.q25:.4g} - {r.q75:.4g}",
            **({"median l2_error": f"{r.l2_median:.4g}"} if hasattr(r, "l2_median") else {}),
            "seeds": r.n_seeds,
        })
    return pd.DataFrame(rows).to_string(index=False)


def _classification_table(frame):
    """Median accuracy / AUC / log-loss and convergence failures per (method, epsilon, lam, n_pub)."""
    keys = ["method", "epsilon", "lam", "n_pub"]
    order = {m: i for i, m in enumerate(frame["method"].unique())}
    g = frame.groupby(keys, sort=False)
    out = g.agg(accuracy=("accuracy", "median"), auc=("auc", "median"), log_loss=("log_loss", "median"),
                failures=("converged", lambda c: int((~c.astype(bool)).sum())), seeds=("seed", "size")).reset_index()
    out = out.sort_values(keys, key=lambda s: s.map(order) if s.name == "method" else s, kind="stable")
    return out.reset_index(drop=True)


def _is_numpy_fp(w) -> bool:
    """A floating-point RuntimeWarning of numpy ("overflow encountered in matmul", "invalid value ...")."""
    return "encountered in" in str(w.message)


def _check_finite(frame, metric: str, numeric) -> None:
    """One line instead of numpy's floating-point warnings; an error when the summarised metric is not finite.

    A metric that overflows (data so large that sums of squares leave float64's range) would otherwise show
    as NaN or inf in the table. The error names the methods and the likely cause.
    """
    import numpy as np

    from engine.cli._metrics import METRIC_COLUMNS, check_defined

    check_defined(frame, metric)
    bad = {c: sorted(frame.loc[~np.isfinite(frame[c].to_numpy(dtype=float)), "method"].unique())
           for c in METRIC_COLUMNS if c in frame and frame[c].notna().any()
           and not np.isfinite(frame[c].to_numpy(dtype=float)).all()}
    kinds = sorted({str(w.message) for w in numeric})
    cause = (f" (numpy: {'; '.join(kinds[:3])})" if kinds else "")
    if metric in bad:
        raise ValueError(
            f"the metric {metric} is not finite for {', '.join(bad[metric])}{cause}: the data's values are too large "
            "(or too small) for float64 sums of squares; rescale the columns or use --standardize")
    if bad:
        where = "; ".join(f"{c} for {', '.join(m)}" for c, m in bad.items())
        print(f"warning: some results are not finite ({where}){cause}: the data's scale is too large for float64 "
              "sums of squares; rescale the columns or use --standardize", file=sys.stderr)
    elif kinds:
        print(f"warning: floating-point trouble in the sweep{cause}; the printed results are finite", file=sys.stderr)


def _sweep(run_sweep, data, methods, args, ds_kwargs, task_options, public):
    return run_sweep(
        data,
        methods=methods,
        epsilons=args.epsilon,
        seeds=args.seeds,
        lams=args.lam,
        n_pubs=args.n_pub,
        delta=args.delta,
        eta=args.eta,
        standardize=args.standardize,
        task=args.task,
        split_seed=args.split_seed,
        dp_gd_steps=args.steps,
        dataset_kwargs=ds_kwargs or None,
        task_options=task_options,
        clip_radius=args.clip_radius or None,
        public_data=public,
    )


def _write_column_privacy(frame, out: str) -> str:
    """Next to the ``--out`` CSV, ``<out>.privacy.json``: each column's privacy label (``"dp"``,
    ``"public"``, ``"non-private diagnostic"``; per method where it differs). Returns its path."""
    import json
    from pathlib import Path

    from engine.pmt._registry import sweep_column_privacy

    keys = sorted(set(frame["method_key"])) if "method_key" in frame.columns else [None]
    labels = {c: {str(k): sweep_column_privacy(c, k) for k in keys} for c in frame.columns}
    labels = {c: (next(iter(v.values())) if len(set(v.values())) == 1 else v) for c, v in labels.items()}
    path = Path(out).with_suffix(".privacy.json")
    path.write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    return str(path)


def unit_line(args) -> str:
    """The unit of privacy for a command's output (:func:`engine.privacy.labels.unit_of_privacy_for`)."""
    from engine.privacy.labels import unit_of_privacy_for

    return unit_of_privacy_for(getattr(args, "epsilon", []), args.delta)


def _cmd_pmt(args) -> int:
    import numpy as np

    from engine.cli import dump_json
    from engine.pmt.sweep import run_sweep, summarize

    from engine.cli.pmt_files import load_files

    from engine.cli.pmt_modes import run_modes_cli, wants_modes

    if args.sampler == "opendp" and args.data is None:
        raise ValueError("--sampler opendp releases through the estimators on your own files: use it with --data "
                         "(the --dataset sweeps are seeded simulations with numpy noise)")
    if getattr(args, "error_split", False):
        return _error_split(args)
    if wants_modes(args):  # unlabelled public rows, published moments, or their simulation (engine.cli.pmt_modes)
        return run_modes_cli(args)
    if args.data is not None and (args.engine == "dask" or args.sampler == "opendp"):  # engine.cli.pmt_data
        from engine.cli.pmt_data import run_data

        return run_data(args)
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    if args.data is not None and args.dataset is not None:
        raise ValueError("give either --dataset NAME (bundled) or --data PATH.csv (your file), not both")
    if args.clip_radius is not None and not (args.clip_radius >= 0 and np.isfinite(args.clip_radius)):
        raise ValueError(f"--clip-radius must be finite and >= 0 (0 = automatic), got {args.clip_radius!r}")
    files = load_files(args)  # validates --data / --public before any noise is drawn
    if args.dataset is None:
        args.dataset = "ccpp" if files is None else args.data
    public = None
    ds_kwargs = {}
    if files is not None:
        if any(v is not None for v in (args.kappa, args.n_rows, args.d)):
            raise ValueError("--kappa, --n-rows and --d apply to --dataset synthetic only")
    elif args.dataset == "synthetic":
        ds_kwargs = {"n": args.n_rows, "d": args.d, "kappa": args.kappa}
    elif any(v is not None for v in (args.kappa, args.n_rows, args.d)):
        raise ValueError("--kappa, --n-rows and --d apply to --dataset synthetic only")
    ds_kwargs = {k: v for k, v in ds_kwargs.items() if v is not None}
    methods = args.methods or DEFAULT_METHODS.get(args.task, DEFAULT_METHODS["ridge"])
    data = args.dataset
    task_options = None
    if files is not None:
        data, public, _upload = files
    if args.task in ("logistic", "poisson"):
        task_options = {"newton_steps": args.newton_steps}
        if args.dataset == "synthetic" and files is None:
            from engine.datasets import make_synthetic_logistic

            data, ds_kwargs = make_synthetic_logistic(**ds_kwargs), {}
    elif args.newton_steps != 5:
        raise ValueError("--newton-steps applies to --task logistic or poisson only")
    if args.public_moment != "sample":
        if args.task != "ridge":
            raise ValueError("--public-moment applies to --task ridge only")
        task_options = {"public_moment": args.public_moment}
    if args.response != "auto":
        if args.task != "ridge":
            raise ValueError("--response applies to --task ridge only")
        task_options = {**(task_options or {}), "response": args.response}
    import warnings

    from threadpoolctl import threadpool_limits

    from engine.privacy import DeltaTooLargeWarning

    # one BLAS thread, as the dashboard runs its sweeps: the float32 products of DP-GD then round the
    # same way, so a command exported by the page reproduces its numbers bit for bit
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeltaTooLargeWarning)  # delta > 1/n: one clean line on stderr
        frame = _sweep(run_sweep, data, methods, args, ds_kwargs, task_options, public)
    numeric = [w for w in caught if issubclass(w.category, RuntimeWarning) and _is_numpy_fp(w)]
    for w in caught:  # other warnings pass through unchanged
        if not issubclass(w.category, DeltaTooLargeWarning) and w not in numeric:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for msg in sorted({str(w.message) for w in caught if issubclass(w.category, DeltaTooLargeWarning)}):
        print(f"warning: {msg}", file=sys.stderr)
    args.metric = args.metric or DEFAULT_METRIC.get(args.task, "l2_error")
    _check_finite(frame, args.metric, numeric)
    summary = summarize(frame, args.metric)
    if args.metric != "l2_error":  # the coefficient error beside the held-out metric a user reads
        l2 = summarize(frame, "l2_error")
        summary = summary.assign(l2_median=l2["median"].to_numpy())
    classification = _classification_table(frame) if args.task == "logistic" else None
    if args.out:
        frame.to_csv(args.out, index=False)
        _write_column_privacy(frame, args.out)
    first = frame.iloc[0]
    kpmt = frame["kappa_pmt"].dropna()
    info = {
        "dataset": str(first["dataset"]) if files is None else str(args.data),
        "task": args.task,
        "n_private_train": int(first["n"]),
        "d": int(first["d"]),
        "delta": args.delta,
        "standardize": bool(args.standardize),
        "neighbouring": "replace-one",  # the only relation offered (n is public)
        "kappa_raw": float(first["kappa_raw"]),
        "kappa_pub": float(first["kappa_pub"]),
        "kappa_pmt": float(kpmt.iloc[0]) if len(kpmt) else None,
        "metric": args.metric,
        "out": args.out,
    }
    if files is not None:
        info.update(target=files[2].target_name, features=list(files[2].feature_names),
                    public=args.public or f"random split of n_pub rows (seed {args.split_seed})",
                    n_pub=int(first["n_pub"]))
    info["clip_radius"] = args.clip_radius or None
    from engine.privacy.labels import DIAGNOSTIC, PUBLIC

    info["unit_of_privacy"] = unit_line(args)

    # what each setting is: kappa_raw / kappa_pmt come from the private rows without noise
    info["privacy"] = {k: (DIAGNOSTIC if k in ("kappa_raw", "kappa_pmt") else PUBLIC) for k in info}
    notes = []
    if args.task == "logistic":
        from engine.pmt.run_notes import logistic_notes, reference_diverged

        notes = logistic_notes(frame)
        info["reference_converged"] = not reference_diverged(frame)
        info["privacy"]["reference_converged"] = DIAGNOSTIC
    if args.json:
        payload = {"settings": info, "summary": summary.to_dict(orient="records")}
        if classification is not None:
            payload["classification"] = classification.to_dict(orient="records")
        if notes:
            payload["notes"] = notes
        print(dump_json(payload))
        return 0
    print(f"dataset {info['dataset']} (task {args.task}): n = {info['n_private_train']} private training rows, "
          f"d = {info['d']} (intercept included), delta = {args.delta:g}, replace-one neighbours, "
          f"standardize = {args.standardize}")
    print(info["unit_of_privacy"])
    kp = f"{info['kappa_pmt']:.3g}" if info["kappa_pmt"] is not None else "n/a"
    print(f"kappa(X^T X) raw = {info['kappa_raw']:.3g}, public = {info['kappa_pub']:.3g}, after PMT = {kp} "
          "(raw and after PMT: non-private diagnostics, computed from the private rows without noise)")
    print()
    print(_format_table(summary, args.metric))
    if classification is not None:
        print("\nheld-out classification (medians over seeds) and convergence failures:")
        print(classification.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for note in notes:
        print(f"\nnote: {note}")
    if "DP-RR (oracle C, non-private tuning)" in set(frame["method"]):
        print("\nnote: the DP-RR oracle picks C by looking at the private error: non-private tuning.")
    if args.out:
        print(f"\nfull results ({len(frame)} rows) written to {args.out}; each column's privacy label (dp / public / "
              f"non-private diagnostic) in {Path(args.out).with_suffix('.privacy.json')}", file=sys.stderr)
    return 0


def _error_split(args) -> int:
    """``pmt --error-split``: bounding bias and noise per method from the public rows (engine.pmt.error_split)."""
    from engine.cli import dump_json
    from engine.datasets import load_dataset
    from engine.pmt.error_split import error_split
    from engine.pmt.sweep import sweep_split

    if args.task != "ridge" or args.data is not None:
        raise ValueError("--error-split applies to --task ridge on a bundled --dataset")
    X, y = load_dataset(args.dataset or "ccpp").to_numpy()
    rows = []
    for n_pub in args.n_pub:
        Xq, yq, Xp, _, _, _ = sweep_split(X, y, n_pub=n_pub, split_seed=args.split_seed, test_size=0.2)
        for eps in args.epsilon:
            t = error_split(Xq, yq, len(Xp), epsilon=eps, delta=args.delta, lam=args.lam[0], eta=args.eta,
                            seeds=min(args.seeds, 20))
            rows.append(t.assign(epsilon=eps, n_pub=n_pub, n=len(Xp)))
    import pandas as pd

    table = pd.concat(rows, ignore_index=True)
    if args.json:
        print(dump_json({"error_split": table.to_dict(orient="records")}))
        return 0
    print(f"bounding bias and noise (prediction RMSE, units of y) on {args.dataset or 'ccpp'}: "
          f"{table['source'].iloc[0]}")
    print(table.drop(columns=["source"]).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pmt",
        help=HELP,
        description="Run PMT (public-moment-guided truncation) ridge regression and the private-only "
        "baselines (DP-RR, DP-GD) over epsilons x seeds; print the median and IQR of the error "
        "to the non-private fit per method and epsilon.",
    )
    p.add_argument("--task", choices=TASK_CHOICES, default="ridge", help="model family (default ridge)")
    p.add_argument("--dataset", default=None,
                   help="wine-red, wine-white, ccpp, synthetic; logistic: bank, synthetic; poisson: bank-campaign "
                   "(default ccpp; or --data PATH.csv for your own file)")
    p.add_argument("--epsilon", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0],
                   help="one or more epsilons (> 0; 'inf' switches the noise off)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta (0 < delta < 1; default 1e-5)")
    p.add_argument("--seeds", type=int, default=50, help="number of noise seeds (default 50)")
    p.add_argument("--lam", type=float, nargs="+", default=[1e-3], help="ridge penalty lam >= 0 (default 1e-3)")
    p.add_argument("--n-pub", type=int, nargs="+", default=[200], dest="n_pub",
                   help="public sample size(s) (default 200)")
    p.add_argument("--methods", nargs="+", default=None,
                   help="ridge: pmt pmt-clip dp-rr dp-rr-oracle dp-gd adassp public-only pmt-pooled non-private "
                   "(default: pmt dp-rr dp-gd adassp public-only non-private); "
                   "logistic: pmt dp-newton dp-gd non-private (default: all four)")
    p.add_argument("--response", choices=["auto", "clip", "joint"], default="auto",
                   help="ridge: how PMT bounds the response. auto (default): the joint (x, y) transform when the "
                   "public rows carry labels and no --response-bound is given (unbiased on heavy-tailed y), else "
                   "clip y at the public bound B_y; clip / joint force one form")
    p.add_argument("--sampler", choices=["numpy", "opendp"], default="numpy",
                   help="noise sampler of the releases (with --data): numpy (default, seeded) or opendp (OpenDP's "
                   "Gaussian sampler and its own zCDP accounting: the epsilon OpenDP certifies is <= --epsilon)")
    p.add_argument("--eta", type=float, default=0.05, help="truncation failure probability (default 0.05)")
    p.add_argument("--standardize", action="store_true",
                   help="standardise features and centre y with PUBLIC statistics")
    p.add_argument("--clip-radius", type=float, default=None, dest="clip_radius",
                   help="row-norm radius C at which DP-RR / DP-Newton clip the rows (DP-RR: after standardising "
                   "them with public statistics; default or 0: automatic, sqrt(d (1 + ln(2n/eta))))")
    p.add_argument("--steps", type=int, default=100, help="DP-GD steps T (default 100)")
    p.add_argument("--public-moment", choices=["sample", "tyler"], default="sample", dest="public_moment",
                   help="ridge: the public moment PMT whitens with: the paper's sample second moment (default) or "
                   "Tyler's robust shape with a median scale (heavy-tailed features)")
    p.add_argument("--newton-steps", type=int, default=5, dest="newton_steps",
                   help="logistic / poisson: noisy Newton steps T of PMT / DP-Newton (default 5; 2T releases)")
    p.add_argument("--split-seed", type=int, default=0, dest="split_seed", help="seed of the public/test split")
    p.add_argument("--metric", default=None,
                   choices=["l2_error", "rel_error", "excess_risk", "rmse", "accuracy", "auc", "log_loss", "deviance"],
                   help="metric to summarise (default: the held-out prediction a user reads: rmse for ridge, auc for "
                   "logistic, deviance for poisson; the median l2_error is shown beside it; accuracy, auc, log_loss: "
                   "--task logistic; deviance: --task poisson)")
    p.add_argument("--kappa", type=float, default=None, help="synthetic only: kappa(Sigma) (default 1000)")
    p.add_argument("--n-rows", type=int, default=None, dest="n_rows", help="synthetic only: rows (default 20000)")
    p.add_argument("--d", type=int, default=None, help="synthetic only: features (default 10)")
    p.add_argument("--out", default=None, help="write the full tidy frame to this CSV file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--error-split", action="store_true", dest="error_split",
                   help="ridge: estimate each method's bounding bias and noise (PMT joint and clip forms, DP-RR, "
                   "AdaSSP) from the public rows alone, repeated to the private n (no privacy cost), and print them")
    from engine.cli.pmt_files import add_file_arguments

    add_file_arguments(p)
    from engine.cli.pmt_data import add_engine_arguments

    add_engine_arguments(p)
    from engine.cli.pmt_modes import add_mode_arguments

    add_mode_arguments(p)
    from engine.cli.pmt_settings import add_settings_argument

    add_settings_argument(p)
    p.set_defaults(func=_cmd_pmt)
