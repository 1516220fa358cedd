"""The command line: ``python -m engine <subcommand> [options] [--json]``.

One module per subcommand (:mod:`engine.cli.datasets`, :mod:`engine.cli.privacy`,
:mod:`engine.cli.pmt`, :mod:`engine.cli.audit`, :mod:`engine.cli.nvdp`), each exposing ``HELP`` (its
line in ``--help``) and ``register(subparsers)``, which adds a parser whose ``func(args) -> int`` runs
it. The modules import nothing heavy at import time; :func:`main` registers in full only the
subcommand about to run (the others get a stub parser with their help line), so ``--help``,
``privacy`` and ``datasets`` never import torch, scikit-learn or transformers.

Every subcommand accepts ``--json`` for machine-readable output on stdout. Bad arguments or a bad
input file print a one-line error on stderr and exit with status 2; a failure nobody foresaw prints one
line naming the exception and exits with status 1 (``ENGINE_DEBUG=1`` shows the traceback instead), so a
user never sees a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys

#: Subcommand name -> module that registers it, in the order they are listed in ``--help``.
SUBCOMMANDS = {
    "datasets": "engine.cli.datasets",
    "privacy": "engine.cli.privacy",
    "pmt": "engine.cli.pmt",
    "pmt-moments": "engine.cli.pmt_moments",
    "pmt-plan": "engine.cli.pmt_plan",
    "audit": "engine.cli.audit",
    "nvdp": "engine.cli.nvdp",
}


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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``python -m engine`` parser.

    Parameters
    ----------
    command : str or None, default None
        None registers every subcommand in full. A name registers only that subcommand in full (its
        ``register`` may import what its options need, e.g. ``audit`` the mechanism names) and the
        others as stubs carrying their help line; any other string gives stubs only (enough for
        ``--help`` and for argparse's errors).

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(prog="python -m engine", description="Privacy-utility explorer: engine command line.")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND")
    sub.required = True
    for name, module_name in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        if command is None or command == name:
            module.register(sub)
        else:
            sub.add_parser(name, help=module.HELP)
    return parser


def _command_in(argv: list[str]) -> str:
    """The subcommand named in ``argv`` (the first word not starting with '-'), or '' if none."""
    return next((a for a in argv if not a.startswith("-")), "")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_in(argv))
    args = parser.parse_args(argv)
    try:
        if getattr(args, "settings", None):  # pmt --settings FILE: its values as the defaults (flags win)
            from engine.cli.pmt_settings import apply

            args = apply(parser, argv, args)
        return int(args.func(args) or 0)
    except (ValueError, TypeError) as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if os.environ.get("ENGINE_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {_one_line(exc)} (ENGINE_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1


def _one_line(exc: BaseException) -> str:
    """The exception's message on one line (a message with newlines is joined with ' / ')."""
    return " / ".join(part.strip() for part in str(exc).splitlines() if part.strip()) or type(exc).__name__
