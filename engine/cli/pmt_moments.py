"""CLI subcommand ``pmt-moments``: export the public moments of a CSV file, so that a user can publish them.

Example::

    python -m engine pmt-moments public.csv --out moments.json
    python -m engine pmt-moments public.csv --target PE --out moments.csv   # the target column left out

Writes the uncentered second moment ``E[x x^T]``, the mean, the column names and ``n_pub`` of the
public rows (:meth:`engine.pmt.public_info.PublicInfo.save`; JSON for ``.json``, CSV otherwise). PMT
whitens with exactly these numbers (``python -m engine pmt --data ... --public-moments moments.json``).
Nothing private is read: the file given here is the public sample.
"""

from __future__ import annotations

import argparse

HELP = "export the public second moment (and mean, n_pub, column names) of a CSV to JSON or CSV"


def _cmd(args) -> int:
    from engine.cli import dump_json
    from engine.pmt.mode_inputs import read_public_features
    from engine.datasets.upload import read_csv_columns

    cols = read_csv_columns(args.public)
    if args.target is not None:
        if args.target not in cols:
            raise ValueError(f"--target {args.target!r} is not a column of {args.public} (columns: {cols})")
        cols = [c for c in cols if c != args.target]
    if args.features:
        missing = [c for c in args.features if c not in cols]
        if missing:
            raise ValueError(f"--features {missing} not among the columns of {args.public}: {cols}")
        cols = list(args.features)
    try:
        info = read_public_features(args.public, cols)
    except ValueError as exc:
        raise ValueError(f"--public-features {args.public}: {exc}") from None
    if info.n_pub <= info.p + 1:
        raise ValueError(f"{args.public} has {info.n_pub} rows for {info.p} columns: n_pub must be > d = {info.p + 1}")
    info.save(args.out)
    out = {"out": args.out, "n_pub": info.n_pub, "columns": list(info.columns),
           "unspanned_columns": [info.columns[j] for j in info.unspanned()]}
    if args.json:
        print(dump_json(out))
    else:
        print(f"wrote the public moments of {info.n_pub} rows x {info.p} columns to {args.out}")
        if out["unspanned_columns"]:
            print(f"note: zero public variance in {out['unspanned_columns']}: PMT will leave them out")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pmt-moments", help=HELP, description=HELP + ".")
    p.add_argument("public", metavar="PUBLIC.csv", help="the public rows (a CSV with a header row)")
    p.add_argument("--out", required=True, help="output file: .json, or CSV for any other suffix")
    p.add_argument("--target", default=None, help="a column to leave out (the response)")
    p.add_argument("--features", nargs="+", default=None, help="the columns to export (default: all but --target)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd)
