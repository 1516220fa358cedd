"""The PMT page's exports (results CSV, settings JSON, the reproducing CLI commands, the HTML report).

Split from :mod:`ui.pmt_compute` (the page's computations): everything here formats what the engine
returned; nothing is computed from private data. No Streamlit import.
"""

from __future__ import annotations

import functools
import json
import platform
import shlex
from importlib import metadata

import pandas as pd

from engine.datasets.bundled import FLIGHTS_URL, LICENCES
from ui.pmt_compute import ENGINE_TASKS, TASK_LABELS, PreparedData, ledger_display

def warm_report() -> None:
    """Compress plotly.js for the HTML report in a background thread, once per process (when the Export tab opens).

    The report inlines plotly.js gzip-compressed (:func:`engine.figures._packed_html.plotlyjs_blob`, cached
    per process, about 0.3 s of CPU the first time): done here, the first download click finds it ready.
    The same bytes either way (gzip level 9, no time stamp).
    """
    global _WARMED
    if _WARMED:
        return
    _WARMED = True
    import threading

    from engine.figures._packed_html import plotlyjs_blob

    threading.Thread(target=plotlyjs_blob, name="warm-report-plotlyjs", daemon=True).start()


_WARMED = False


def results_csv(frames: dict, *, data_name: str | None = None, target: str | None = None) -> str:
    """All sweep rows as one CSV (a ``sweep`` column says which figure each row belongs to).

    ``data_name`` (a registry name, or ``"upload:<file name>"``: the file name is written) fills the
    ``dataset`` column and ``target`` a ``target`` column, so the rows keep their provenance. Text cells
    that a spreadsheet would run as a formula (a file or column named ``=1+1``) are neutralised
    (:func:`engine.figures.report.safe_csv`); numeric columns stay numeric.

    Two columns say which figures of a row are what (:func:`engine.pmt._registry.sweep_column_privacy`, per
    method): ``dp_release_columns`` (computed from a DP release) and ``non_private_diagnostic_columns``
    (computed from the private rows without noise: every error, the kappas, rows truncated; never
    released); the settings columns and the rest are public.
    """
    from engine.figures.report import safe_csv

    parts = [f.assign(sweep=k) for k, f in frames.items() if f is not None]
    frame = pd.concat(parts, ignore_index=True)
    frame["dp_release_columns"], frame["non_private_diagnostic_columns"] = _privacy_columns(frame)
    if data_name is not None:
        frame["dataset"] = str(data_name).removeprefix("upload:")
    if target is not None:
        frame.insert(1 if "dataset" in frame.columns else 0, "target", str(target))
    return safe_csv(frame)


#: Settings and provenance columns of a sweep frame: public (chosen by the user or the registry).
_SETTINGS_COLUMNS = frozenset({"dataset", "target", "method", "method_key", "sweep", "epsilon", "delta", "seed", "lam",
                               "n_pub", "n", "d", "standardize", "mu", "task", "public_mode"})


def _privacy_columns(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Per row, the ``;``-joined names of its DP-release columns and of its non-private diagnostic columns."""
    from engine.pmt._registry import sweep_column_privacy
    from engine.privacy.labels import DIAGNOSTIC, DP

    values = [c for c in frame.columns if c not in _SETTINGS_COLUMNS]
    keys = frame["method_key"] if "method_key" in frame.columns else pd.Series([None] * len(frame))
    by_key = {}
    for key in pd.unique(keys):
        labels = {c: sweep_column_privacy(c, key) for c in values}
        by_key[key] = (";".join(c for c in values if labels[c] == DP),
                       ";".join(c for c in values if labels[c] == DIAGNOSTIC))
    return [by_key[k][0] for k in keys], [by_key[k][1] for k in keys]


_PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "plotly", "streamlit")


@functools.lru_cache(maxsize=1)
def _versions() -> tuple:
    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:  # pragma: no cover
            out[p] = None
    return tuple(out.items())


def package_versions() -> dict:
    """Versions of Python and the packages the numbers depend on (read once per process: the installed
    packages do not change under a running server)."""
    return dict(_versions())


def settings_json(spec: dict, *, ds, prep: PreparedData, public_name: str | None = None) -> str:
    """Every setting of the view, the seeds, the data fingerprint and the package versions, as JSON."""
    payload = {
        "page": "PMT regression",
        "settings": {k: v for k, v in spec.items() if k not in ("sweep", "epsilons", "lams", "n_pubs")},
        "seeds": list(range(int(spec["seeds"]))),
        "split_seed": spec["split_seed"],
        "data": {"name": ds.name, "rows": ds.n, "features": list(ds.feature_names), "target": ds.target_name,
                 "fingerprint": ds.fingerprint() if hasattr(ds, "fingerprint") else None,
                 "n_pub": prep.n_pub, "n_priv": prep.n_priv,
                 "public_sample": "random split (simulation)" if prep.public_is_split else "separate public file"},
        "versions": package_versions(),
        "cli": None if cli_supported(spec) else cli_commands(spec, ds=ds, public_name=public_name),
        "cli_notes": [cli_supported(spec)] if cli_supported(spec) else cli_notes(spec),
    }
    return json.dumps(payload, indent=2, default=float)


#: How the exported commands start: the project's own interpreter (``./run.sh`` creates ``.venv``), so a
#: command pasted in the project folder runs without activating anything.
CLI_PREFIX = ".venv/bin/python -m engine"


#: Written in front of an uploaded file's name in the commands: a placeholder folder the user replaces
#: with where the file is (the browser never tells the page the file's folder).
UPLOAD_DIR_PLACEHOLDER = "/path/to/"


def _file_name(name: str) -> str:
    """The uploaded file's path in a command: :data:`UPLOAD_DIR_PLACEHOLDER` + its name (``"upload:<name>"``)."""
    return UPLOAD_DIR_PLACEHOLDER + str(name).removeprefix("upload:")


def _exact(x) -> str:
    """A float as short text that reads back as the same float (``1e-05``, ``0.7``, ``0.123456789``)."""
    x = float(x)
    return f"{x:g}" if float(f"{x:g}") == x else repr(x)


def cli_argv(spec: dict, *, ds=None, public_name: str | None = None, epsilons=None) -> list[str]:
    """``python -m engine pmt`` arguments that reproduce one of the page's epsilon sweeps.

    The page runs two sweeps over epsilon: the chosen epsilon alone (the headline numbers) and the
    coarse grid :data:`ui.state.EPSILON_GRID` (the error-vs-epsilon figure). DP-GD advances all runs of a
    sweep as the columns of one float32 matrix, whose products round the same way only for the same
    batch, so each sweep has its own command (``epsilons=None``: the chosen epsilon; else the list).

    Bundled data: ``--dataset NAME`` (``--kappa`` for the synthetic set). An upload: ``--data FILE
    --target COLUMN --features ...`` (the uploaded file's name; :mod:`engine.cli.pmt_files` reads it with
    the page's validating loader), and ``--public FILE`` when the public sample is a separate file.
    Names starting with ``-`` are written ``--flag=NAME`` so that they are never read as options.
    Every other setting of the page has its flag (``--epsilon --delta --seeds --lam --n-pub --methods
    --eta --standardize --split-seed --clip-radius --metric``).

    Parameters
    ----------
    spec : dict
        From :func:`spec_from_state` (plus ``metric``).
    ds : engine.datasets.Dataset, optional
        The data set shown (needed for an upload: its file, target and feature names).
    public_name : str, optional
        The separate public file's name (``public_source == "file"``).
    epsilons : sequence of float, optional
        The epsilons of the sweep (default: ``[spec["epsilon"]]``, the headline sweep).

    Raises
    ------
    ValueError
        An upload without ``ds``, or a separate public file without ``public_name``.

    Examples
    --------
    >>> from ui.state import DEFAULTS
    >>> spec = {**DEFAULTS, "data": "ccpp", "task": "regression", "synthetic_kappa": 1e3}
    >>> cli_argv(spec)[1:5]
    ['--task', 'ridge', '--dataset', 'ccpp']
    """
    from engine.pmt._base import METHOD_NAMES
    from engine.pmt._newton import GLM_METHOD_NAMES
    engine_task = ENGINE_TASKS[spec["task"]]
    from engine.pmt import sweep as E

    # display name -> the CLI's method key, from the sweep registry (every registered method, public-only
    # and pmt-pooled included)
    keys = {v: k for k, v in (METHOD_NAMES if engine_task == "ridge" else GLM_METHOD_NAMES).items()}
    keys.update({s.name: k for (t, k), s in E.METHODS.items() if t == engine_task})
    data = str(spec["data"])

    def opt(flag: str, value: str) -> list[str]:
        return [f"{flag}={value}"] if str(value).startswith("-") else [flag, str(value)]

    argv = ["pmt", "--task", engine_task]
    if data.startswith("upload:"):
        if ds is None or ds.name != data:
            raise ValueError("cli_argv: an upload needs its Dataset (ds) for the file, target and feature names")
        argv += opt("--data", _file_name(ds.name)) + opt("--target", ds.target_name)
        feats = [str(f) for f in ds.feature_names]
        if any(f.startswith("-") for f in feats):
            argv += [f"--features={f}" for f in feats]
        else:
            argv += ["--features", *feats]
    else:
        argv += ["--dataset", data]
    if spec.get("public_source") == "file":
        if not public_name:
            raise ValueError("cli_argv: a separate public file needs its name (public_name)")
        if not data.startswith("upload:"):
            raise ValueError("cli_argv: a separate public file is read with --data; bundled sets use the split")
        argv += opt("--public", _file_name(public_name))
    eps_list = [float(spec["epsilon"])] if epsilons is None else [float(e) for e in epsilons]
    argv += ["--epsilon", *[_exact(e) for e in eps_list],
             "--delta", _exact(spec["delta"]), "--seeds", str(int(spec["seeds"])), "--lam", _exact(spec["lam"]),
             "--n-pub", str(int(spec["n_pub"])), "--methods", *[keys.get(m, m) for m in spec["methods"]],
             "--eta", _exact(spec["eta"]),
             "--split-seed", str(int(spec["split_seed"])), "--metric", spec.get("metric", "l2_error")]
    if float(spec.get("clip_radius") or 0) != 0:
        argv += ["--clip-radius", _exact(spec["clip_radius"])]
    if spec.get("task") == "regression" and spec.get("response", "auto") != "auto":
        argv += ["--response", spec["response"]]
    if spec.get("standardize"):
        argv.append("--standardize")
    if data == "synthetic":
        argv += ["--kappa", _exact(spec.get("synthetic_kappa", 1e3))]
    if spec.get("public_mode", "labelled") != "labelled":  # no public labels: the CLI's public-information flags
        from ui.pmt_modes_compute import cli_flags

        argv = cli_flags(spec, argv)
    return argv


def cli_supported(spec: dict) -> str | None:
    """None if ``python -m engine pmt`` can run this view, else the reason it cannot."""
    from engine.cli import pmt as cli_pmt

    task = ENGINE_TASKS[spec["task"]]
    if task not in getattr(cli_pmt, "TASK_CHOICES", ["ridge"]):
        return f"The command line does not offer the {task} task yet."
    if spec.get("public_mode", "labelled") != "labelled":
        from ui.pmt_modes_compute import cli_reason

        return cli_reason(spec)
    if spec.get("public_source") == "file" and not str(spec.get("data", "")).startswith("upload:"):
        return ("The command line reads a separate public file together with your own data file (--data ... "
                "--public ...); for a bundled data set it draws the public sample as a random split.")
    return None


def cli_notes(spec: dict) -> list[str]:
    """How to run the command of :func:`cli_argv` (shown under it)."""
    notes = ["Run it in the project folder (./run.sh creates .venv there)."]
    if str(spec["data"]).startswith("upload:"):
        notes.append(f"Replace {UPLOAD_DIR_PLACEHOLDER} by the folder your file is in (e.g. ~/Downloads/; keep the "
                     "quotes if the name has spaces): the command reads it with the same validating loader as this "
                     "page and reproduces its numbers.")
    return notes


def cli_command(spec: dict, *, ds=None, public_name: str | None = None, epsilons=None) -> str:
    """The shell command (quoted) for :func:`cli_argv`, starting with :data:`CLI_PREFIX`."""
    argv = cli_argv(spec, ds=ds, public_name=public_name, epsilons=epsilons)
    return CLI_PREFIX + " " + " ".join(shlex.quote(a) for a in argv)


def cli_commands(spec: dict, *, ds=None, public_name: str | None = None) -> dict:
    """The two commands that reproduce the page: ``{"headline": ..., "figure": ...}``.

    ``headline`` runs the chosen epsilon alone (the headline numbers, bit for bit); ``figure`` runs the
    coarse grid :data:`ui.state.EPSILON_GRID` of the error-vs-epsilon figure (the chosen epsilon, when not
    on the grid, is drawn from the headline sweep). See :func:`cli_argv` for why they are two.
    """
    from ui.state import EPSILON_GRID

    return {"headline": cli_command(spec, ds=ds, public_name=public_name),
            "figure": cli_command(spec, ds=ds, public_name=public_name, epsilons=EPSILON_GRID)}



def provenance(ds) -> dict:
    """Where the data come from and under which licence (for the report and the exports).

    Examples
    --------
    >>> from engine.datasets import load_dataset
    >>> provenance(load_dataset("ccpp"))["licence"]
    'CC BY 4.0 (UCI Machine Learning Repository)'
    """
    name = str(ds.name)
    out = {"data set": name, "rows": ds.n, "features": ", ".join(map(str, ds.feature_names)), "target": ds.target_name,
           "description": ds.description}
    if name.startswith("upload:"):
        out.update(source="your uploaded file (kept in the browser session only; not redistributed)",
                   licence="yours: the file's own terms apply", fingerprint=ds.fingerprint())
    elif name in LICENCES:
        out.update(source=ds.citation, url=FLIGHTS_URL, licence=LICENCES[name])
    elif ds.doi:
        out.update(source=ds.citation, doi=f"https://doi.org/{ds.doi}",
                   licence="CC BY 4.0 (UCI Machine Learning Repository)")
    else:
        out.update(source="generated by engine.datasets (synthetic, seeded)", licence="none needed (generated data)")
    return out


def report_html(*, spec: dict, ds, prep: PreparedData, head: pd.DataFrame, metric_label: str, ratio_text: str,
                diag: dict, figures: list, public_name: str | None = None, verdict=None,
                warnings=()) -> str:
    """The PMT page's "Download report": one self-contained HTML file (see :func:`engine.figures.report.html_report`).

    Parameters
    ----------
    spec : dict
        The page's settings (with ``metric``).
    ds : engine.datasets.Dataset
    prep : PreparedData
    head : DataFrame
        The headline rows (``method, median, q25, q75, n_seeds``) at the chosen epsilon.
    metric_label : str
        The metric's display name.
    ratio_text : str
        "PMT / best baseline" as shown on the page.
    diag : dict
        From :func:`diagnostics` (``kappa_pmt``, ``kappa_raw``, ``frac_truncated``, ``mu``, ``ledgers``).
    figures : list of (caption, Figure)
        The figures on screen.
    public_name : str, optional
        The separate public file's name.
    verdict : engine.figures.verdict.Verdict, optional
        The page's verdict sentence: the report's first line, coloured.
    warnings : sequence of str
        The page's warnings (noise-dominated, share of public rows, eigenvalue floor ...), right after it.
    """
    from engine.figures.report import html_report

    cards = [(str(r["method"]), f"{r['median']:.3g}", f"middle half {r['q25']:.3g} - {r['q75']:.3g}")
             for _, r in head.iterrows()]
    cards += [("PMT / best baseline", ratio_text),
              ("kappa after PMT", f"{diag['kappa_pmt']:.3g}", f"raw {diag['kappa_raw']:.3g}; non-private diagnostic"),
              ("rows truncated", f"{100 * diag['frac_truncated']:.2f}%", "non-private diagnostic"),
              ("mu (Gaussian DP)", f"{diag['mu']:.3g}")]
    settings = {k: v for k, v in spec.items() if k not in ("sweep", "values")}
    settings.update({"public sample": "random split (simulation)" if prep.public_is_split else
                     f"separate public file {public_name or ''}".strip(),
                     "public rows": prep.n_pub, "private rows": prep.n_priv})
    if settings.get("moments") is not None:  # the moments file by name and n_pub (its matrix is in the JSON export)
        settings["moments"] = f"{settings['moments'].get('name', 'moments file')} (n_pub {settings['moments']['n_pub']})"
        settings["public rows"] = spec["moments"]["n_pub"]
    why_not = cli_supported(spec)
    commands = list(cli_commands(spec, ds=ds, public_name=public_name).values()) if not why_not else []
    from engine.figures.verdict import NON_PRIVATE_NOTE

    notes = [f"Median {metric_label} at epsilon = {spec['epsilon']:g} over {spec['seeds']} noise seeds "
             f"({TASK_LABELS[spec['task']].lower()}).", NON_PRIVATE_NOTE] + ([why_not] if why_not else [])
    return html_report(
        title=f"PMT regression: {ds.name}",
        subtitle=f"epsilon = {spec['epsilon']:g}, delta = {spec['delta']:g}, {prep.n_pub} public rows, "
                 f"{spec['seeds']} seeds",
        headline=cards, figures=figures, settings=settings,
        ledgers={m: ledger_display(f) for m, f in diag.get("ledgers", {}).items()},
        provenance=provenance(ds), commands=commands, notes=notes,
        verdict=None if verdict is None else (verdict.text, verdict.tone), warnings=list(warnings))
