"""The PMT page's view as Python: a snippet and a Jupyter notebook that reproduce it with the public API.

The snippet calls what the page calls (:func:`engine.pmt.sweep.run_sweep` on the data set's arrays, one
BLAS thread, then :func:`engine.figures.pmt.headline_table` at the chosen epsilon), so it prints the
page's headline medians. For an upload the file is read with the page's validating loader
(:func:`engine.datasets.read_csv_upload`) from a placeholder path, ``/path/to/<file name>``, that the
user replaces. The notebook holds the same code in cells (nbformat 4), plus the error-vs-epsilon
figure. No Streamlit import.
"""

from __future__ import annotations

import json

from ui.pmt_compute import ENGINE_TASKS, TEST_SIZE

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
        The page's settings with ``metric`` (:func:`ui.pmt_compute.spec_from_state`).
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
    lines = ['"""The PMT page\'s headline numbers, from the engine\'s public API (run in the project folder)."""',
             "from threadpoolctl import threadpool_limits", "",
             "from engine.figures.pmt import headline_table",
             "from engine.pmt.sweep import run_sweep"]
    lines += _data_lines(spec, ds, public_name)
    lines += ["X, y = ds.to_numpy()",
              "with threadpool_limits(limits=1, user_api='blas'):  # one BLAS thread, as the page runs its sweeps",
              f"    frame = {_sweep_call(spec, f'[{eps!r}]')}",
              f"head = headline_table(frame, metric={spec.get('metric', 'l2_error')!r}, epsilon={eps!r})",
              "print(head[['method', 'median', 'q25', 'q75']].to_string(index=False))"]
    return "\n".join(lines) + "\n"


def notebook(spec: dict, *, ds, public_name: str | None = None) -> str:
    """A Jupyter notebook (nbformat 4 JSON) with :func:`snippet` and the error-vs-epsilon figure.

    Written with ``nbformat`` when it is installed (validated), else as the same nbformat-4 JSON directly.
    """
    from ui.state import EPSILON_GRID

    eps = float(spec["epsilon"])
    metric = spec.get("metric", "l2_error")
    grid = sorted(set(EPSILON_GRID) | {eps})
    cells = [
        ("markdown", f"# PMT regression: {ds.name}\n\nThe dashboard's view at epsilon = {eps:g}, reproduced with the "
                     "engine's public API. Run it with the project's kernel (`.venv/bin/python`) in the project folder."
                     + ("\n\n**Replace the path** in the next cell with where your file is." if
                        str(spec["data"]).startswith("upload:") else "")),
        ("code", snippet(spec, ds=ds, public_name=public_name).split('"""\n', 2)[-1].rstrip("\n")),
        ("markdown", "The error-vs-epsilon figure (median and bands over the seeds):"),
        ("code", "\n".join([
            "from engine.figures.pmt import error_vs_epsilon_figure",
            "from engine.pmt.sweep import summarize",
            "with threadpool_limits(limits=1, user_api='blas'):",
            f"    grid = {_sweep_call(spec, repr(grid))}",
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
