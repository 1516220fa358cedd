"""The Export tab's Python snippet and Jupyter notebook reproduce the page's headline numbers.

The page (AppTest, small settings) hands out both files; the snippet is executed, the notebook's code
cells are executed in order, and their medians are compared with the page's headline metrics. For an
upload, the placeholder path is filled in as the user would.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

from conftest import new_app  # the harness: tests/conftest.py


# the download spy: tests/conftest.py (captured_downloads / downloads)


def _run_snippet(code: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "pmt_view.py", "exec"), {"__name__": "__main__"})
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    header = lines[0].split()
    assert header == ["method", "median", "q25", "q75"], header
    return {ln.rsplit(None, 3)[0].strip(): float(ln.rsplit(None, 3)[1]) for ln in lines[1:]}


def _page_metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_snippet_and_notebook_print_the_page_numbers_for_an_upload(downloads, tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 3)) * [1.0, 5.0, 0.2]
    y = X @ [1.0, -0.5, 3.0] + rng.normal(size=500)
    raw = ("a,b,c,y\n" + "\n".join(f"{r[0]:.5f},{r[1]:.5f},{r[2]:.5f},{t:.5f}" for r, t in zip(X, y)) + "\n").encode()
    at = new_app("pmt", timeout=240, seeds=3, epsilon=2.0).run()
    at.file_uploader(key="pmt_upload_file").set_value(("my data.csv", raw, "text/csv")).run()
    at.button[[b.label for b in at.button].index("Use this data")].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    page = _page_metrics(at)
    snippet = downloads["pmt_view.py"]
    snippet = snippet.decode() if isinstance(snippet, bytes) else snippet
    assert "/path/to/my data.csv" in snippet  # the placeholder the user replaces
    (tmp_path / "my data.csv").write_bytes(raw)
    got = _run_snippet(snippet.replace("/path/to/", f"{tmp_path}/"))
    for method in ("PMT", "DP-RR", "DP-GD", "Public-only"):
        assert page[method] == f"{got[method]:.3g}", method
    nb = json.loads(downloads["pmt_view.ipynb"])
    assert nb["nbformat"] == 4 and [c["cell_type"] for c in nb["cells"]] == ["markdown", "code", "markdown", "code"]
    ns, out = {}, io.StringIO()
    with redirect_stdout(out):
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                exec(compile(src.replace("/path/to/", f"{tmp_path}/"), "cell", "exec"), ns)
    head = ns["head"].set_index("method")["median"]
    for method in ("PMT", "DP-RR", "DP-GD"):
        assert page[method] == f"{head[method]:.3g}", method
    assert set(ns["grid"]["epsilon"]) >= {2.0, 0.05, 20.0}  # the figure's grid
