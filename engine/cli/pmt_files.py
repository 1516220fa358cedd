"""``python -m engine pmt --data PATH.csv --target COLUMN [--features ...] [--public PATH.csv]``.

The user's own CSV file (and optionally a separate public CSV) for the ``pmt`` subcommand, read with
the dashboard's validating loader (:func:`engine.datasets.upload.read_csv_upload`: header row,
numeric columns, no missing values, 50 MB cap, ``,`` ``;`` or tab separated, decimal commas in ``;``
/ tab files). The task is the user's choice (``--task ridge`` reads the target as a number,
``--task logistic`` as 0/1 labels); it is never inferred from the values.

With these flags the CLI runs exactly the sweep the PMT page runs on an upload (same loader, same
public/private/test split from ``--split-seed``, same seeds), so the command the page exports
reproduces its numbers from the user's file::

    .venv/bin/python -m engine pmt --data plant.csv --target output --features temp speed load \\
        --standardize --epsilon 0.05 0.1 0.2 0.5 1 2 5 10 20 --seeds 20

Without ``--public`` the public sample is ``--n-pub`` random rows of ``--data`` (a simulation, as on
the page); with ``--public`` the public rows come from that file (same feature and target columns)
and ``--n-pub`` is ignored (the public sample size is the file's length).
"""

from __future__ import annotations

import argparse

#: ``--task`` -> the loader's task (how the target column is read).
UPLOAD_TASKS = {"ridge": "regression", "logistic": "classification"}


def add_file_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--data``, ``--target``, ``--features``, ``--public`` to the ``pmt`` parser."""
    g = p.add_argument_group("your own CSV file (instead of --dataset)")
    g.add_argument("--data", default=None, metavar="PATH",
                   help="the private rows: a CSV file with a header row (read like a dashboard upload)")
    g.add_argument("--target", default=None, metavar="COLUMN",
                   help="--data: the column to predict (default: the last column)")
    g.add_argument("--features", nargs="+", action="extend", default=None, metavar="COLUMN",
                   help="--data: feature columns, in order (default: every column but the target); "
                   "a name starting with '-' is written --features=NAME")
    g.add_argument("--public", default=None, metavar="PATH",
                   help="--data: a separate public CSV (same feature and target columns) instead of "
                   "--n-pub random rows of --data")


def load_files(args):
    """Read ``--data`` (and ``--public``) for the sweep.

    Parameters
    ----------
    args : argparse.Namespace
        With ``data``, ``target``, ``features``, ``public`` and ``task`` (``"ridge"`` or ``"logistic"``).

    Returns
    -------
    data : tuple (X, y)
        X of shape (n, d) float64, y of shape (n,) (float64; 0/1 for logistic).
    public : tuple (X_pub, y_pub) or None
        The public file's rows (same columns), or None for a random split.
    dataset : engine.datasets.Dataset
        The loaded upload (name ``"upload:<file name>"``, feature and target names).

    Raises
    ------
    ValueError
        From the loader, naming the file, column or value and what is accepted (before any noise is
        drawn); ``--public``, ``--target`` or ``--features`` without ``--data``.
    """
    from engine.datasets.upload import read_csv_upload

    if args.data is None:
        given = [f for f in ("target", "features", "public") if getattr(args, f) is not None]
        if given:
            raise ValueError(f"--{given[0]} applies to --data PATH.csv only (bundled sets have fixed columns)")
        return None
    task = UPLOAD_TASKS.get(args.task)
    if task is None:
        raise ValueError(f"--data supports --task {' or '.join(UPLOAD_TASKS)}, got {args.task!r}")
    try:
        ds = read_csv_upload(args.data, target=args.target, features=args.features, task=task)
    except ValueError as exc:
        raise ValueError(f"--data {args.data}: {exc}") from None
    public = None
    if args.public is not None:
        try:
            pds = read_csv_upload(args.public, target=ds.target_name, features=list(ds.feature_names), task=task)
        except ValueError as exc:
            raise ValueError(f"--public {args.public}: {exc}") from None
        public = pds.to_numpy()
    return ds.to_numpy(), public, ds
