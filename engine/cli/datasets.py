"""CLI subcommand ``datasets``: list the bundled data sets (:func:`engine.datasets.list_datasets`).

``python -m engine datasets [--json]``
"""

from __future__ import annotations

import argparse

HELP = "list the bundled data sets"


def _cmd_datasets(args) -> int:
    from engine.cli import dump_json
    from engine.datasets import list_datasets

    table = list_datasets()
    if args.json:
        print(dump_json(table.to_dict(orient="records")))
    else:
        print(table.to_string(index=False))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("datasets", help=HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_datasets)
