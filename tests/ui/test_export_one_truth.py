"""One view, one truth: per public-information mode and task, the page's headline numbers equal the HTML
report's, the CSV's, the CLI command's, the Python snippet's and the notebook's.

The page's numbers come from the page's own computation (:mod:`ui.pmt.compute.core`, :mod:`ui.pmt.compute.modes`:
what :func:`ui.pmt.run.compute` calls, without the Streamlit cache); every export is generated from the same
spec by the Export tab's functions and run as a user would: the CLI command and the snippet and the
notebook's code from a folder outside the project (``PRIVACY_EXPLORER_HOME`` set, as the snippet's first lines
say), with the ``/path/to/`` placeholders replaced by where the files are. Compared to the last printed digit:
the CLI's JSON medians and the snippet's printed medians at full precision, the report's cards at the 3
significant digits the page shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable

#: (page task, bundled data set, methods, metric) kept small: each case runs one epsilon and 2 seeds.
TASKS = {"regression": ("wine-red", ["PMT", "DP-RR", "Non-private"], "rmse"),
         "classification": ("bank", ["PMT", "DP-Newton"], "auc"),
         "count": ("bank-campaign", ["PMT", "DP-GD"], None)}
MODES = ["labelled", "unlabelled", "moments", "moments-file", "features-file"]


def _spec(task, mode, tmp_path):
    from engine.datasets import load_dataset
    from engine.pmt.public_info import PublicInfo
    from ui.pmt.compute import core as C
    from ui.pmt.public_mode import restrict_methods

    name, methods, metric = TASKS[task]
    ds = load_dataset(name)
    state = {"data": name, "methods": methods, "seeds": 2, "epsilon": 1.0, "n_pub": 150, "split_seed": 0,
             "standardize": True}
    spec = C.spec_from_state(state, task=task)
    metric = metric or C.metrics_for(task)[0]
    if mode != "labelled":
        X, _ = ds.to_numpy()
        cols = [str(c) for c in ds.feature_names]
        rows = X[np.random.default_rng(7).choice(len(X), 300, replace=False)] * 1.01  # a public file's rows
        extra = {"public_mode": mode.split("-")[0] if mode != "features-file" else "unlabelled",
                 "response_center": None, "response_scale": None, "moments": None}
        if task == "regression" and mode.endswith("file"):
            extra["response_scale"] = 1.5  # a public file carries no labels: a stated scale
        if mode == "moments-file":
            PublicInfo.from_rows(rows, columns=cols).save(tmp_path / "moments.json")
            from ui.pmt.compute.modes import moments_spec, read_moments  # as the page reads the upload

            got = read_moments("moments.json", (tmp_path / "moments.json").read_bytes())
            extra["moments"] = {**moments_spec(got, cols), "name": "moments.json"}
        if mode == "features-file":
            pd.DataFrame(rows, columns=cols).to_csv(tmp_path / "features.csv", index=False)
            from ui.pmt.compute.modes import read_public_features  # as the page reads the upload

            info = read_public_features("features.csv", (tmp_path / "features.csv").read_bytes(), cols)
            extra["public_features"] = {**info.to_dict(), "rows": info.X_pub.tolist(), "name": "features.csv"}
        spec = restrict_methods({**spec, **extra})
    return ds, {**spec, "metric": metric}


def _page(ds, spec):
    """What the page shows: the headline table at the chosen epsilon, and the prepared split."""
    from dataclasses import replace

    from engine.figures.pmt import headline_table
    from ui.pmt.compute import core as C
    from ui.pmt.compute.modes import file_info

    prep = C.prepare(ds, None, standardize=spec["standardize"], n_pub=spec["n_pub"], split_seed=spec["split_seed"],
                     task=spec["task"])
    info = file_info(spec)
    if info is not None:
        prep = replace(prep, n_pub=int(info.n_pub), n_priv=prep.n_total - int(round(C.TEST_SIZE * prep.n_total)),
                       public_is_split=False)
    frame = C.sweep(prep, C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))
    return prep, frame, headline_table(frame, metric=spec["metric"], epsilon=spec["epsilon"])


def _outside(tmp_path) -> dict:
    env = {**os.environ, "PRIVACY_EXPLORER_HOME": str(ROOT)}
    env.pop("PYTHONPATH", None)
    return dict(cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)


def _printed(out: str) -> dict:
    lines = [ln for ln in out.splitlines() if ln.strip()]
    i = next(k for k, ln in enumerate(lines) if ln.split()[:2] == ["method", "median"])
    return {ln.rsplit(None, 3)[0].strip(): ln.rsplit(None, 3)[1] for ln in lines[i + 1:]}


def _same_digits(token: str, value: float) -> bool:
    """``token`` (as printed) is ``value`` to the last printed digit."""
    if "e" in token.lower():
        mant = token.lower().split("e")[0]
        digits = len(mant.replace("-", "").replace(".", "")) - 1
        return float(token) == float(f"{value:.{digits}e}")
    decimals = len(token.split(".")[1]) if "." in token else 0
    return token == f"{value:.{decimals}f}"


CASES = [(t, m) for t in TASKS for m in MODES if t != "count" or m == "labelled"]


@pytest.mark.parametrize("task,mode", CASES)
def test_page_report_csv_cli_snippet_notebook_agree(task, mode, tmp_path):
    from engine.figures.report import html_report  # noqa: F401  (the report builder the Export tab calls)
    from ui.pmt.compute import export as X
    from ui.pmt.compute import snippet as S

    ds, spec = _spec(task, mode, tmp_path)
    prep, frame, head = _page(ds, spec)
    page = dict(zip(head["method"], head["median"].astype(float)))
    assert page and all(np.isfinite(v) for v in page.values())
    if mode.endswith("file"):  # a public file: no public split, every row private, the file's n_pub
        assert prep.n_pub == 300 and prep.n_priv == prep.n_total - int(round(0.2 * prep.n_total))
        assert not prep.public_is_split

    # CSV: the rows of the page's sweep, read back
    csv = pd.read_csv(StringIO(X.results_csv({"epsilon": frame}, data_name=ds.name, target=ds.target_name)))
    got = csv[csv["epsilon"] == spec["epsilon"]].groupby("method")[spec["metric"]].median()
    for m, v in page.items():
        assert got[m] == pytest.approx(v, rel=1e-12, abs=0), m

    # report: its cards print the page's medians (3 significant digits, as the page's metrics)
    diag = {"kappa_pmt": 1.0, "kappa_raw": 1.0, "frac_truncated": 0.0, "mu": 1.0, "ledgers": {}}
    html = X.report_html(spec=spec, ds=ds, prep=prep, head=head, metric_label=spec["metric"], ratio_text="n/a",
                         diag=diag, figures=[])
    for m, v in page.items():
        assert f"{v:.3g}" in html, m
    if mode.endswith("file"):
        assert "n_pub 150" not in html and "no public split" in html

    # CLI: the Export tab's headline command, its placeholders replaced, run from outside the project
    why = X.cli_supported(spec)
    if task == "count":
        assert why is None or "poisson" in why.lower()
    if why is None:
        cmd = X.cli_commands(spec, ds=ds)["headline"]
        assert (X.UPLOAD_DIR_PLACEHOLDER in cmd) == mode.endswith("file")
        argv = [PY, "-m", "engine"] + __import__("shlex").split(cmd.replace(X.CLI_PREFIX + " ", ""))
        argv = [a.replace(X.UPLOAD_DIR_PLACEHOLDER, f"{tmp_path}/") for a in argv] + ["--json"]
        run = subprocess.run(argv, **{**_outside(tmp_path), "env": {**_outside(tmp_path)["env"],
                                                                      "PYTHONPATH": str(ROOT)}})
        assert run.returncode == 0, run.stderr[-2000:]
        out = json.loads(run.stdout)
        rows = out["summary"]
        cli = {r.get("method"): float(r["median"]) for r in rows}
        for m, v in page.items():
            assert cli[m] == v, (m, cli[m], v)

        # the settings file (the Export tab's pmt_settings.json) loaded back by the CLI: the same numbers
        (tmp_path / "pmt_settings.json").write_text(X.settings_json(spec, ds=ds, prep=prep))
        files = (["--public-moments", str(tmp_path / "moments.json")] if mode == "moments-file" else
                 ["--public-features", str(tmp_path / "features.csv")] if mode == "features-file" else [])
        run = subprocess.run([PY, "-m", "engine", "pmt", "--settings", str(tmp_path / "pmt_settings.json"), *files,
                              "--json"], **{**_outside(tmp_path), "env": {**_outside(tmp_path)["env"],
                                                                          "PYTHONPATH": str(ROOT)}})
        assert run.returncode == 0, run.stderr[-2000:]
        got = {r.get("method"): float(r["median"]) for r in json.loads(run.stdout)["summary"]}
        assert got == cli, (got, cli)

    # snippet: written to a folder outside the project, run there with PRIVACY_EXPLORER_HOME
    code = S.snippet(spec, ds=ds)
    assert code.index("PRIVACY_EXPLORER_HOME") < code.index("from engine")
    (tmp_path / "pmt_view.py").write_text(code.replace("/path/to/", f"{tmp_path}/"))
    run = subprocess.run([PY, "pmt_view.py"], **_outside(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    snip = _printed(run.stdout)
    for m, v in page.items():
        assert _same_digits(snip[m], v), (m, snip[m], v)

    # notebook: its first code cell (the snippet's body), run the same way
    nb = json.loads(S.notebook(spec, ds=ds))
    cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
             for c in nb["cells"] if c["cell_type"] == "code"]
    (tmp_path / "cell.py").write_text(cells[0].replace("/path/to/", f"{tmp_path}/"))
    run = subprocess.run([PY, "cell.py"], **_outside(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    assert _printed(run.stdout) == snip
    assert "PRIVACY_EXPLORER_HOME" in "".join(c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                                               for c in nb["cells"] if c["cell_type"] == "markdown")


def test_snippet_runs_from_the_project_folder_as_its_docstring_says(tmp_path):
    """``cd <project> && .venv/bin/python ~/Downloads/pmt_view.py``: the working directory makes engine importable."""
    from ui.pmt.compute import snippet as S

    ds, spec = _spec("regression", "labelled", tmp_path)
    code = S.snippet(spec, ds=ds)
    assert "cd /path/to/the/project && .venv/bin/python ~/Downloads/pmt_view.py" in code
    (tmp_path / "pmt_view.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PRIVACY_EXPLORER_HOME")}
    run = subprocess.run([PY, str(tmp_path / "pmt_view.py")], cwd=str(ROOT), env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert set(_printed(run.stdout)) >= {"PMT", "DP-RR"}
    run = subprocess.run([PY, str(tmp_path / "pmt_view.py")], cwd=str(tmp_path), env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode != 0 and "engine" in run.stderr  # nowhere to find it: a plain ModuleNotFoundError
    assert re.search(r"No module named 'engine'", run.stderr)
