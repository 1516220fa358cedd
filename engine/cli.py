"""The command line: ``python -m engine <subcommand> [options] [--json]``.

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds a parser
whose ``func(args) -> int`` runs it. Every subcommand accepts ``--json`` for machine-readable
output on stdout. Bad arguments print a one-line error on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys

#: Modules that register subcommands, in the order they are listed in ``--help``.
SUBCOMMAND_MODULES = [
    "engine.cli_basic",
    "engine.cli_pmt",
    "engine.cli_audit",
    "engine.nvdp.cli",
]


def json_default(obj):
    """JSON encoder fallback for numpy scalars/arrays and non-finite floats."""
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return str(obj)


def dump_json(payload) -> str:
    """Serialise ``payload`` to JSON (inf/nan become strings "inf"/"nan" so the output is valid JSON)."""

    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return str(x)
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    import numpy as np

    def to_py(x):
        if isinstance(x, dict):
            return {str(k): to_py(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [to_py(v) for v in x]
        if isinstance(x, np.ndarray):
            return to_py(x.tolist())
        if isinstance(x, np.generic):
            return x.item()
        return x

    return json.dumps(clean(to_py(payload)), indent=2, default=json_default)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m engine", description="Privacy-utility explorer: engine command line.")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")
    sub.required = True
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
