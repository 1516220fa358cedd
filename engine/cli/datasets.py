"""CLI subcommand ``datasets``: list the bundled data sets (:func:`engine.datasets.list_datasets`).

``python -m engine datasets [--json]``

The listing is read from ``engine/datasets/manifest.json`` with the standard library only: neither pandas
nor a data file is loaded (importing pandas and reading every bundled CSV to count rows took most of
the 0.86 s the command used to need). The text output is the same table pandas'
``list_datasets().to_string(index=False)`` prints (tests/engine/test_datasets_manifest.py compares them), and
``--json`` the same records.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "list the bundled data sets"

#: The manifest :func:`engine.datasets.list_datasets` reads too (``engine.datasets.bundled.MANIFEST_PATH``).
MANIFEST_PATH = Path(__file__).resolve().parents[1] / "datasets" / "manifest.json"


def manifest_records() -> tuple[list[str], list[dict]]:
    """``(columns, records)`` of the bundled sets, as :func:`engine.datasets.list_datasets` tabulates them."""
    with open(MANIFEST_PATH, encoding="utf-8") as fh:
        man = json.load(fh)
    cols = list(man["columns"])
    rows = []
    for e in man["datasets"]:
        rec = {"name": e["name"], "rows": int(e["rows"]), "features": int(e["features"]), "task": e["task"],
               "target": e["target"], "source": f"doi:{e['doi']}" if e["doi"] else (e.get("url") or "generated")}
        rows.append({c: rec[c] for c in cols})
    return cols, rows


def format_table(columns: list[str], rows: list[dict]) -> str:
    """A plain-text table in the layout of pandas' ``DataFrame.to_string(index=False)`` for string and integer
    columns: each column right-aligned to its widest cell, one space between columns, and the header of an
    integer column preceded by a space (pandas reserves it for a sign)."""
    numeric = [bool(rows) and all(isinstance(r[c], int) and not isinstance(r[c], bool) for r in rows) for c in columns]
    cells = [[(" " if num else "") + str(c) for c, num in zip(columns, numeric)]]
    cells += [[str(r[c]) for c in columns] for r in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(columns))]
    return "\n".join(" ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells)


def _cmd_datasets(args) -> int:
    columns, rows = manifest_records()
    if args.json:  # plain ints and strings: what engine.cli.dump_json prints, without importing numpy
        print(json.dumps(rows, indent=2))
    else:
        print(format_table(columns, rows))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("datasets", help=HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_datasets)
