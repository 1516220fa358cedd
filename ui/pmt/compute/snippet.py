"""The PMT page's view as Python: a snippet and a Jupyter notebook that reproduce it with the public API.

The snippet calls what the page calls (:func:`engine.pmt.sweep.run_sweep` on the data set's arrays, one
BLAS thread, then :func:`engine.figures.pmt.headline_table` at the chosen epsilon; without public labels
:func:`engine.pmt.mode_inputs.mode_inputs` and :func:`engine.pmt.sweep_modes.run_modes`, as the page and
the CLI do), so it prints the page's headline medians. Its first lines make the engine importable from
anywhere (:data:`IMPORT_LINES`: ``PRIVACY_EXPLORER_HOME``, ``PYTHONPATH``, the project folder as the
working directory, or ``pip install -e`` of the project). For an upload the file is read with the page's validating loader
(:func:`engine.datasets.read_csv_upload`) from a placeholder path, ``/path/to/<file name>``, that the
user replaces. The notebook holds the same code in cells (nbformat 4), plus the error-vs-epsilon
figure. No Streamlit import.
"""

from __future__ import annotations

import json

from ui.pmt.compute.catalogue import ENGINE_TASKS, TEST_SIZE

#: Folder written in front of an uploaded file's name: the user replaces it with where the file is.
PLACEHOLDER_DIR = "/path/to/"


def _data_lines(spec: dict, ds, public_name: str | None) -> list[str]:
    data = str(spec["data"])
    if data.startswith("upload:"):
        lines = ["from engine.datasets import read_csv_upload",
                 "",
                 f"DATA_FILE = {PLACEHOLDER_DIR + data.removeprefix('upload:')!r}  # <- replace with your file's path",
                 f"ds = read_csv_upload(DATA_FILE, target={ds.target_name!r}, features={list(map(str, ds.feature_names))!r}"
                 + (f", task={ds.task!r})" if ds.task == "classification" else ")")]
        if spec.get("public_source") == "file" and public_name:
            lines += [f"PUBLIC_FILE = {PLACEHOLDER_DIR + str(public_name)!r}  # <- replace with your public file's path",
                      "public = read_csv_upload(PUBLIC_FILE, target=ds.target_name, features=list(ds.feature_names)"
                      + (f", task={ds.task!r}).to_numpy()" if ds.task == "classification" else ").to_numpy()")]
        return lines
    if data == "synthetic":
        return ["from engine.datasets import load_dataset", "",
                f"ds = load_dataset('synthetic', kappa={float(spec.get('synthetic_kappa', 1e3))!r})"]
    return ["from engine.datasets import load_dataset", "", f"ds = load_dataset({data!r})"]


#: How to run an exported file from any folder (the docstring's first lines).
HOW_TO_RUN = [
    "Run it from any folder with an interpreter that has the project's requirements (e.g. the project's",
    ".venv/bin/python), once the engine is importable in one of these ways:",
    "  PRIVACY_EXPLORER_HOME=/path/to/the/project python pmt_view.py",
    "  PYTHONPATH=/path/to/the/project python pmt_view.py",
    "  cd /path/to/the/project && .venv/bin/python ~/Downloads/pmt_view.py",
    "  pip install -e /path/to/the/project   (once, where the project has a pyproject.toml)",
]

#: The lines that make ``engine`` importable: PRIVACY_EXPLORER_HOME, else the working directory (a no-op
#: when ``engine`` is already importable through PYTHONPATH or an installed project).
IMPORT_LINES = [
    "import os",
    "import sys",
    "",
    "for _home in (os.environ.get('PRIVACY_EXPLORER_HOME'), os.getcwd()):  # where the project is (see above)",
    "    if _home and os.path.isfile(os.path.join(_home, 'engine', '__init__.py')):",
    "        sys.path.insert(0, os.path.abspath(_home))",
    "        break",
]


def _mode_lines(spec: dict, epsilons: str, target: str = "frame") -> list[str]:
    """A view without public labels: the rows and public information as the page forms them, then ``run_modes``."""
    from ui.pmt.compute.modes import MODE_TASKS, PAGE_KEYS, offered_methods

    task = MODE_TASKS[spec["task"]]
    methods = [PAGE_KEYS[m] for m in offered_methods(spec["task"], spec["public_mode"], spec["methods"])]
    clip = float(spec.get("clip_radius") or 0) or None
    ridge = task == "ridge"
    call = [f"mode={spec['public_mode']!r}", f"task={task!r}", f"n_pub={int(spec['n_pub'])}",
            f"split_seed={int(spec['split_seed'])}", f"test_size={TEST_SIZE!r}", "info=info", "public_data=public",
            "columns=cols", f"response_center={spec.get('response_center')!r}",
            f"response_scale={spec.get('response_scale')!r}"]
    run = ["task=" + repr(task), f"methods={methods!r}", f"epsilons={epsilons}", f"seeds={int(spec['seeds'])}",
           f"lam={float(spec['lam'])!r}", f"delta={float(spec['delta'])!r}", f"eta={float(spec['eta'])!r}",
           f"standardize={bool(spec['standardize'])}", "response_center=c" if ridge else "response_center=None",
           "response_scale=s" if ridge else "response_scale=None", f"clip_radius={clip!r}"]
    return ["Xtr, ytr, Xte, yte, info, c, s, statement = mode_inputs(",
            "    X, y, " + ", ".join(call) + ")",
            "with threadpool_limits(limits=1, user_api='blas'):  # one BLAS thread, as the page runs its sweeps",
            f"    {target} = run_modes(Xtr, ytr, Xte, yte, info, " + ", ".join(run) + ")"]


def _mode_data_lines(spec: dict) -> list[str]:
    """The public file of a view without public labels (a moments file or a features-only file), else None."""
    lines = ["from engine.pmt.mode_inputs import mode_inputs", "from engine.pmt.sweep_modes import run_modes", "",
             "cols = [str(c) for c in ds.feature_names]", "info = None  # public information from a file, if any"]
    if spec.get("public_source") != "file":
        lines.append("public = None  # a separate labelled public file, if any")
    if spec.get("moments") is not None:
        lines = ["from engine.pmt.public_info import PublicInfo"] + lines
        lines += [f"MOMENTS_FILE = {PLACEHOLDER_DIR + str(spec['moments']['name'])!r}  # <- replace with your file's path",
                  "info = PublicInfo.load(MOMENTS_FILE).align(cols)  # a public file: no public split, every row private"]
    elif spec.get("public_features") is not None:
        lines = ["from engine.pmt.mode_inputs import read_public_features"] + lines
        lines += [f"FEATURES_FILE = {PLACEHOLDER_DIR + str(spec['public_features']['name'])!r}  # <- replace with "
                  "your file's path",
                  "info = read_public_features(FEATURES_FILE, cols)  # a public file: no public split, every row private"]
    return lines


def _sweep_call(spec: dict, epsilons: str) -> str:
    public = spec.get("public_source") == "file"
    clip = spec.get("clip_radius") or 0
    args = [f"task={ENGINE_TASKS[spec['task']]!r}", f"methods={list(spec['methods'])!r}",
            f"seeds={int(spec['seeds'])}", f"epsilons={epsilons}", f"lams=[{float(spec['lam'])!r}]",
            f"delta={float(spec['delta'])!r}", f"eta={float(spec['eta'])!r}",
            f"clip_radius={float(clip)!r}" if clip else "clip_radius=None", f"test_size={TEST_SIZE!r}",
            f"standardize={bool(spec['standardize'])}", f"split_seed={int(spec['split_seed'])}"]
    if spec["task"] == "regression" and spec.get("response", "auto") != "auto":
        args.append(f"task_options={{'response': {spec['response']!r}}}")
    args.insert(2, "public_data=public" if public else f"n_pubs=[{int(spec['n_pub'])}]")
    return "run_sweep(\n        (X, y), " + ",\n        ".join(args) + ")"


def snippet(spec: dict, *, ds, public_name: str | None = None) -> str:
    """Python code that prints the page's headline medians (the same numbers, bit for bit).

    Parameters
    ----------
    spec : dict
        The page's settings with ``metric`` (:func:`ui.pmt.compute.core.spec_from_state`).
    ds : engine.datasets.Dataset
        The data set shown (an upload's target and feature names are written out).
    public_name : str, optional
        The separate public file's name.

    Returns
    -------
    str
        Code to run in the project folder with ``.venv/bin/python``; an upload's path is
        :data:`PLACEHOLDER_DIR` + its name, to be replaced.
    """
    eps = float(spec["epsilon"])
    modes = spec.get("public_mode", "labelled") != "labelled"
    lines = ['"""The PMT page\'s headline numbers, from the engine\'s public API.', ""] + HOW_TO_RUN + ['"""']
    lines += IMPORT_LINES + ["", "from threadpoolctl import threadpool_limits", "",
                             "from engine.figures.pmt import headline_table"]
    lines += [] if modes else ["from engine.pmt.sweep import run_sweep"]
    lines += _data_lines(spec, ds, public_name)
    lines += ["X, y = ds.to_numpy()"]
    if modes:
        lines += _mode_data_lines(spec) + _mode_lines(spec, f"[{eps!r}]")
    else:
        lines += ["with threadpool_limits(limits=1, user_api='blas'):  # one BLAS thread, as the page runs its sweeps",
                  f"    frame = {_sweep_call(spec, f'[{eps!r}]')}"]
    lines += [f"head = headline_table(frame, metric={spec.get('metric', 'l2_error')!r}, epsilon={eps!r})",
              "print(head[['method', 'median', 'q25', 'q75']].to_string(index=False))"]
    return "\n".join(lines) + "\n"


def notebook(spec: dict, *, ds, public_name: str | None = None) -> str:
    """A Jupyter notebook (nbformat 4 JSON) with :func:`snippet` and the error-vs-epsilon figure.

    Written with ``nbformat`` when it is installed (validated), else as the same nbformat-4 JSON directly.
    """
    from ui.common.settings import EPSILON_GRID

    eps = float(spec["epsilon"])
    metric = spec.get("metric", "l2_error")
    grid = sorted(set(EPSILON_GRID) | {eps})
    cells = [
        ("markdown", f"# PMT regression: {ds.name}\n\nThe dashboard's view at epsilon = {eps:g}, reproduced with the "
                     "engine's public API.\n\n" + "\n".join(f"    {ln}" if ln.startswith("  ") else ln for ln in HOW_TO_RUN)
                     + "\n\n(With Jupyter: start it with `PRIVACY_EXPLORER_HOME` set, or from the project folder.)"
                     + ("\n\n**Replace the path** in the next cell with where your file is." if
                        str(spec["data"]).startswith("upload:") or spec.get("moments") is not None
                        or spec.get("public_features") is not None else "")),
        ("code", snippet(spec, ds=ds, public_name=public_name).split('"""\n', 2)[-1].rstrip("\n")),
        ("markdown", "The error-vs-epsilon figure (median and bands over the seeds):"),
        ("code", "\n".join([
            "from engine.figures.pmt import error_vs_epsilon_figure",
            "from engine.pmt.sweep import summarize",
            *(_mode_lines(spec, repr(grid), "grid")[2:] if spec.get("public_mode", "labelled") != "labelled" else
              ["with threadpool_limits(limits=1, user_api='blas'):", f"    grid = {_sweep_call(spec, repr(grid))}"]),
            f"error_vs_epsilon_figure(summarize(grid, metric={metric!r}), metric={metric!r}, epsilon={eps!r})"])),
    ]
    try:
        import nbformat
    except ImportError:
        nb = {"nbformat": 4, "nbformat_minor": 5,
              "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
              "cells": [({"cell_type": k, "id": f"cell-{i}", "metadata": {}, "source": src}
                         | ({"outputs": [], "execution_count": None} if k == "code" else {}))
                        for i, (k, src) in enumerate(cells)]}
        return json.dumps(nb, indent=1)
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell(src) if k == "markdown" else nbformat.v4.new_code_cell(src)
                for k, src in cells]
    nbformat.validate(nb)
    return nbformat.writes(nb)
