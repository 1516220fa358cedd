"""``python -m engine pmt`` with unlabelled public rows or published moments (and the mode simulation).

Examples::

    python -m engine pmt --data private.csv --target PE --public-features public_X.csv --response-center 454 \\
        --response-scale 17 --epsilon 1
    python -m engine pmt --data private.csv --target PE --public-moments moments.json --response-bound 60
    python -m engine pmt --dataset ccpp --public-mode moments --standardize --epsilon 1 --seeds 30
    python -m engine pmt --task logistic --dataset bank --public-mode unlabelled --standardize --lam 1e-4

``--public-features PATH.csv`` (the private file's feature columns, no target needed) gives mode
"unlabelled"; ``--public-moments PATH`` (JSON or CSV, :meth:`engine.pmt.public_info.PublicInfo.load`;
written by ``python -m engine pmt-moments``; keys in docs/public_information.md) gives mode "moments";
``--public`` stays mode "labelled". A public file means no public split: every row of ``--data`` (or of
a bundled ``--dataset``) is private, and ``--n-pub`` is ignored (the file's n_pub is used).
On a bundled set (``--dataset``), ``--public-mode`` simulates the mode from the usual ``--n-pub`` public
rows: their labels are dropped ("unlabelled"), or only their published moments are kept ("moments").
Public-only and PMT-pooled need public labels and are not offered in the other two modes.

Without public labels a ridge needs a stated response scale or bound (``--response-scale``, the RMS of
``y - centre``; or ``--response-bound``, B_y itself) and optionally ``--response-center`` (default 0): they
are public statements, never taken from the private rows. In the bundled simulation the default
statement is the public rows' label mean and RMS (what a data provider would publish), said so in the
output.

Metrics: ``--metric`` defaults to the held-out prediction a user reads, ``rmse`` (ridge) or ``auc``
(logistic); the median coefficient L2 error is printed beside it. A non-private logistic reference with
no finite optimum (separable data at lam 0) is flagged next to the L2 numbers.
"""

from __future__ import annotations

import argparse
import sys

#: Held-out metrics per task (first: the default).
MODE_METRICS = {"ridge": ["rmse", "r2", "l2_error"], "logistic": ["auc", "accuracy", "log_loss", "l2_error"]}


def add_mode_arguments(p: argparse.ArgumentParser) -> None:
    """The public-information flags of ``pmt``."""
    g = p.add_argument_group("kind of public information (default: labelled public rows)")
    g.add_argument("--public-features", default=None, metavar="PATH", dest="public_features",
                   help="--data: a CSV of public covariates only (the private feature columns, no target): mode "
                   "'unlabelled'")
    g.add_argument("--public-moments", default=None, metavar="PATH", dest="public_moments",
                   help="a published moments file (JSON or CSV; see pmt-moments and docs/public_information.md): mode "
                   "'moments'; every row of the data is private")
    g.add_argument("--public-mode", choices=["labelled", "unlabelled", "moments"], default=None, dest="public_mode",
                   help="--dataset: simulate a mode from the --n-pub public rows (drop their labels, or keep only "
                   "their moments)")
    g.add_argument("--response-center", type=float, default=None, dest="response_center",
                   help="ridge: a stated public centre of y (default: the public mean when there are public labels, "
                   "else 0)")
    g.add_argument("--response-scale", type=float, default=None, dest="response_scale",
                   help="ridge: a stated RMS of y - centre; B_y = scale sqrt(1 + ln(2n/eta))")
    g.add_argument("--response-bound", type=float, default=None, dest="response_bound",
                   help="ridge: a stated bound B_y on |y - centre|")
    g.add_argument("--unspanned", choices=["drop", "regularize"], default="drop",
                   help="PMT's treatment of a column the public information never spans (default drop, with a "
                   "warning naming it)")


def wants_modes(args) -> bool:
    """Whether ``pmt`` runs through this module (a public-information flag was given)."""
    return any(getattr(args, k, None) is not None for k in ("public_features", "public_moments", "public_mode"))


def _inputs(args):
    """``(X_train, y_train, X_test, y_test, info, name, statement)`` for the run (statement: how y's bound was set).

    The rows and the public information come from :func:`engine.pmt.mode_inputs.mode_inputs`, as on the page:
    a public file (``--public-moments`` or ``--public-features``) means no public split (every row private,
    on ``--data`` or a bundled ``--dataset``); ``--public-mode`` on a bundled set simulates the mode from
    ``--n-pub`` public rows.
    """
    from engine.pmt.mode_inputs import mode_inputs
    from engine.pmt.public_info import PublicInfo

    n_given = sum(getattr(args, k) is not None for k in ("public", "public_features", "public_moments"))
    if n_given > 1:
        raise ValueError("give one kind of public information: --public, --public-features or --public-moments")
    from_file = bool(args.public_features or args.public_moments)
    if from_file and args.public_mode is not None:
        raise ValueError("--public-mode simulates a mode from public rows; with --public-features or "
                         "--public-moments the file is the public information (leave --public-mode out)")
    if args.public is not None and args.public_mode is None:
        raise ValueError("--public gives labelled public rows; add --public-mode unlabelled or moments to drop labels")
    public = None
    if args.data is None:
        from engine.datasets import load_dataset

        name = args.dataset or "ccpp"
        if args.task == "logistic" and name == "ccpp":
            name = "bank"
        kappa = getattr(args, "kappa", None)
        ds = load_dataset(name, **({"kappa": kappa} if name == "synthetic" and kappa is not None else {}))
    else:  # the user's file (and a separate labelled public file), read as the labelled path reads them
        from engine.cli.pmt_files import load_files

        _, public, ds = load_files(args)
        name = str(args.data)
    X, y = ds.to_numpy()
    cols = [str(c) for c in ds.feature_names]
    info = None
    if args.public_features:
        from engine.pmt.mode_inputs import read_public_features

        try:
            info = read_public_features(args.public_features, cols)
        except ValueError as exc:
            raise ValueError(f"--public-features {args.public_features}: {exc}") from None
    elif args.public_moments:
        info = PublicInfo.load(args.public_moments).align(cols)
    elif len(args.n_pub) != 1:
        raise ValueError("--public-mode runs one --n-pub at a time")
    Xtr, ytr, Xte, yte, info, c, s, statement = mode_inputs(
        X, y, mode=args.public_mode or "labelled", task=args.task, n_pub=args.n_pub[0], split_seed=args.split_seed,
        info=info, public_data=public, columns=cols, response_center=args.response_center, response_scale=args.response_scale,
        response_bound=args.response_bound)
    if args.task == "ridge":
        args.response_center, args.response_scale = c, s
        if statement and "simulation" in statement:
            statement = "simulated public statement: " + statement
        else:
            statement = None
    return Xtr, ytr, Xte, yte, info, name, statement


def run_modes_cli(args) -> int:
    """Run ``pmt`` with a kind of public information (module docstring)."""
    import warnings

    from threadpoolctl import threadpool_limits

    from engine.cli import dump_json
    from engine.pmt.public_info import MODE_NOTES, UnspannedWarning
    from engine.pmt.sweep_modes import run_modes, summarize_modes

    if args.task not in MODE_METRICS:
        raise ValueError(f"the public modes run --task ridge or logistic, got {args.task!r}")
    metric = args.metric or MODE_METRICS[args.task][0]
    if metric not in MODE_METRICS[args.task]:
        raise ValueError(f"--metric for --task {args.task} in the public modes: one of {MODE_METRICS[args.task]}")
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    Xtr, ytr, Xte, yte, info, name, statement = _inputs(args)
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnspannedWarning)
        frame = run_modes(Xtr, ytr, Xte, yte, info, task=args.task, methods=args.methods, epsilons=args.epsilon,
                          seeds=args.seeds, lam=args.lam[0], delta=args.delta, eta=args.eta,
                          standardize=args.standardize, response_center=args.response_center,
                          response_scale=args.response_scale, response_bound=args.response_bound,
                          dp_gd_steps=args.steps, newton_steps=args.newton_steps, unspanned=args.unspanned,
                          clip_radius=getattr(args, "clip_radius", None) or None)
    notes = sorted({str(w.message) for w in caught if issubclass(w.category, UnspannedWarning)})
    for w in caught:
        if not issubclass(w.category, UnspannedWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    from engine.cli._metrics import check_defined

    check_defined(frame, metric)  # a one-class test split: no AUC, a non-zero exit
    summary = summarize_modes(frame, metric)
    if args.out:
        frame.to_csv(args.out, index=False)
    ref_ok = bool(frame.get("reference_converged", True).all()) if "reference_converged" in frame else True
    nd = frame.loc[frame["method_key"] == "pmt", "noise_dominance"] if "noise_dominance" in frame else None
    nd_med = float(nd.median()) if nd is not None and nd.notna().any() else None
    info_d = {"dataset": name, "task": args.task, "public_mode": info.mode, "public_source": info.source,
              "pmt_newton_noise_dominance": nd_med,
              "n_pub": info.n_pub, "n_private_train": len(ytr), "n_test": len(yte), "d": info.p + 1,
              "metric": metric, "standardize": bool(args.standardize), "mode_note": MODE_NOTES[info.mode],
              "response_statement": statement, "warnings": notes, "reference_converged": ref_ok}
    from engine.privacy.labels import unit_of_privacy_for

    info_d["unit_of_privacy"] = unit_of_privacy_for(args.epsilon, args.delta)
    if args.json:
        print(dump_json({"settings": info_d, "summary": summary.to_dict(orient="records")}))
        return 0
    print(f"{name} (task {args.task}), public information: {info.mode} ({info.source}, n_pub = {info.n_pub}); "
          f"n = {len(ytr)} private training rows, {len(yte)} held out, d = {info.p + 1} (intercept included)")
    print(info_d["unit_of_privacy"])
    print(MODE_NOTES[info.mode])
    if statement:
        print(statement)
    for msg in notes:
        print(f"warning: {msg}", file=sys.stderr)
    show = summary.copy()
    show["L2 to non-private"] = show["l2_median"].map(lambda v: f"{v:.4g}") + (
        "" if ref_ok else " (reference diverged: no finite optimum)")
    show = show.rename(columns={"median": f"median {metric}"}).drop(columns=["l2_median", "metric", "mode"]
                                                                  + (["reference_converged"] if "reference_converged"
                                                                     in show else []))
    print()
    print(show.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if nd_med is not None and nd_med >= 0.5:
        print(f"\nnote: PMT's noisy Newton is noise-dominated: the Hessian noise is {nd_med:.3g}x the public curvature "
              "(median over seeds; >= 0.5 means the eigenvalue floor sets the steps). Computed from public quantities.")
    if not ref_ok:
        print("\nnote: the non-private logistic fit has no finite optimum here (separable data at this lam); the L2 "
              "column measures the distance to a diverging iterate. Use --lam > 0 for a penalised reference.")
    if args.out:
        print(f"\nfull results ({len(frame)} rows) written to {args.out}", file=sys.stderr)
    return 0
