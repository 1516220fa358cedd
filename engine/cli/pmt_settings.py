"""``python -m engine pmt --settings pmt_settings.json``: a settings file as the command's defaults.

The PMT page's Export tab writes ``pmt_settings.json`` (every setting of the view except the data); this
module turns its ``settings`` into the ``pmt`` parser's defaults, so that the command runs the page's view.
Flags given on the command line win. Data files are never in the file: give ``--data`` (an uploaded data
set), ``--public``, ``--public-moments`` or ``--public-features`` as flags (the file names them under
``settings.data``, ``settings.moments.name`` ...). A file written by hand needs only the keys it sets, e.g.
``{"settings": {"task": "regression", "data": "ccpp", "epsilon": 1, "seeds": 30}}``.
"""

from __future__ import annotations

import json

#: The page's task names -> the CLI's.
TASKS = {"regression": "ridge", "classification": "logistic", "count": "poisson",
         "ridge": "ridge", "logistic": "logistic", "poisson": "poisson"}
#: Settings copied as they are: settings key -> (parser dest, convert).
PLAIN = {"delta": ("delta", float), "seeds": ("seeds", int), "eta": ("eta", float),
         "split_seed": ("split_seed", int), "metric": ("metric", str), "standardize": ("standardize", bool),
         "response_center": ("response_center", float), "response_scale": ("response_scale", float)}
#: Settings the parser takes as a list.
LISTS = {"epsilon": ("epsilon", float), "lam": ("lam", float), "n_pub": ("n_pub", int)}


def _method_keys(task: str, names) -> list[str]:
    """Display names (or CLI keys) of methods -> the CLI's keys, from the engine's registries."""
    from engine.pmt import sweep as E
    from engine.pmt._base import METHOD_NAMES
    from engine.pmt._newton import GLM_METHOD_NAMES

    keys = {v: k for k, v in (METHOD_NAMES if task == "ridge" else GLM_METHOD_NAMES).items()}
    keys.update({s.name: k for (t, k), s in E.METHODS.items() if t == task})
    known = set(keys.values())
    out = []
    for m in names:
        key = keys.get(str(m), str(m))
        if key not in known:
            raise ValueError(f"settings file: unknown method {m!r} for task {task}; known: {sorted(keys)}")
        out.append(key)
    return out


def defaults_from_settings(path) -> dict:
    """The ``pmt`` parser defaults a settings file gives (parser dest -> value).

    Raises
    ------
    ValueError
        Not JSON, no ``settings`` object, a value of the wrong kind or an unknown method, naming it.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            payload = json.load(fh)
    except OSError as exc:
        raise ValueError(f"--settings {path}: cannot read it ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"--settings {path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    s = payload.get("settings") if isinstance(payload, dict) else None
    if not isinstance(s, dict):
        raise ValueError(f"--settings {path}: no 'settings' object (write {{\"settings\": {{...}}}})")
    out = {}
    try:
        task = TASKS[str(s.get("task", "regression"))]
    except KeyError:
        raise ValueError(f"--settings {path}: unknown task {s.get('task')!r}; one of {sorted(TASKS)}") from None
    out["task"] = task
    data = s.get("data")
    if data is not None and not str(data).startswith("upload:"):  # an upload: give --data PATH
        out["dataset"] = str(data)
    try:
        for key, (dest, conv) in PLAIN.items():
            if s.get(key) is not None:
                out[dest] = conv(s[key])
        for key, (dest, conv) in LISTS.items():
            if s.get(key) is not None:
                out[dest] = [conv(v) for v in (s[key] if isinstance(s[key], list) else [s[key]])]
        if s.get("clip_radius"):
            out["clip_radius"] = float(s["clip_radius"])
        if str(data) == "synthetic" and s.get("synthetic_kappa") is not None:
            out["kappa"] = float(s["synthetic_kappa"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--settings {path}: a value of the wrong kind ({exc})") from None
    if s.get("methods"):
        out["methods"] = _method_keys(task, s["methods"])
    mode = s.get("public_mode", "labelled")
    if mode not in ("labelled", "unlabelled", "moments"):
        raise ValueError(f"--settings {path}: unknown public_mode {mode!r}")
    if mode != "labelled" and s.get("moments") is None and s.get("public_features") is None:
        out["public_mode"] = mode  # a simulation; a public file is given as a flag (--public-moments ...)
    return out


def apply(parser, argv: list[str], args):
    """Re-parse ``argv`` with the settings file's values as the ``pmt`` defaults (flags given win)."""
    sub = next(a for a in parser._subparsers._group_actions if a.dest == "command")  # noqa: SLF001
    pmt = sub.choices["pmt"]
    pmt.set_defaults(**defaults_from_settings(args.settings))
    return parser.parse_args(argv)


def add_settings_argument(p) -> None:
    """``--settings PATH`` of ``pmt``."""
    p.add_argument("--settings", default=None, metavar="PATH",
                   help="a settings file (pmt_settings.json from the page's Export tab, or by hand): its values "
                   "become the defaults, flags given here win; data files are given as flags (--data, --public, "
                   "--public-moments, --public-features)")
