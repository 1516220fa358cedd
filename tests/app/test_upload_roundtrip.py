"""The command the PMT page exports for an upload reproduces the page's numbers from the file.

The page (AppTest) runs on an uploaded CSV; its Export tab shows ``.venv/bin/python -m engine pmt --data
FILE --target ... --features ...``. The test runs that very command (its argv, through
:func:`engine.cli.main`) in a folder holding the same file and compares every run of the page's
error-vs-epsilon sweep (method x epsilon x seed) with the CLI's ``--out`` frame, and the headline
numbers with the CLI's summary.
"""

from __future__ import annotations

import json
import shlex

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from conftest import new_app, regression_csv  # the harness: tests/conftest.py


def _csv(n=420, seed=3) -> bytes:
    return regression_csv(n, seed, header="temp,speed,load,unused,output")


# the download spy: tests/conftest.py (captured_downloads / downloads)


def _text(x) -> str:
    return x.decode() if isinstance(x, bytes) else x


@pytest.mark.parametrize("public_file", [False, True], ids=["random-split", "public-file+clip-radius"])
def test_exported_command_reproduces_the_page_numbers_from_the_uploaded_file(public_file, tmp_path, monkeypatch,
                                                                             downloads, capsys):
    from engine.cli import main

    raw = _csv()
    # epsilon 0.7 is not on the coarse grid: the page computes it as a separate point
    at = new_app("pmt", seeds=4, epsilon=0.7).run()
    at.file_uploader(key="pmt_upload_file").set_value(("my plant.csv", raw, "text/csv")).run()
    at.multiselect(key="pmt_upload_features").set_value(["temp", "speed", "load"]).run()
    next(b for b in at.button if b.label == "Use this data").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    public_raw = None
    if public_file:
        rng = np.random.default_rng(11)
        pub = pd.read_csv(pd.io.common.BytesIO(_csv(n=150, seed=99)))
        public_raw = pub.to_csv(index=False).encode()
        at.radio(key="public_source").set_value("file").run()
        at.file_uploader(key="pmt_public_file").set_value(("pub.csv", public_raw, "text/csv")).run()
        at.number_input(key="clip_radius").set_value(float(rng.choice([2.5, 3.0]))).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
    page_metrics = {m.label: m.value for m in at.metric}
    at.session_state["pmt_tab"] = "Export"  # its code blocks are drawn while it is open
    at.run()
    assert {m.label: m.value for m in at.metric} == page_metrics
    codes = [c.value for c in at.code if "-m engine pmt" in c.value]
    assert len(codes) == 2, "the Export tab shows the headline command and the figure's command"
    argvs = [shlex.split(c) for c in codes]
    for argv in argvs:
        assert argv[:3] == [".venv/bin/python", "-m", "engine"]  # never a bare `python`
        # a placeholder folder the user replaces (the browser does not tell the page where the file is)
        assert argv[argv.index("--data") + 1] == "/path/to/my plant.csv" and argv[argv.index("--target") + 1] == "output"
        assert argv[argv.index("--features") + 1: argv.index("--features") + 4] == ["temp", "speed", "load"]
        if public_file:
            assert argv[argv.index("--public") + 1] == "/path/to/pub.csv" and "--clip-radius" in argv
    # the user fills in the folder: here the test's folder
    head_argv, grid_argv = ([x.replace("/path/to/", f"{tmp_path}/") for x in a[3:]] for a in argvs)
    assert head_argv[head_argv.index("--epsilon") + 1] == "0.7"

    # the user's folder: the same file(s) under the uploaded names
    (tmp_path / "my plant.csv").write_bytes(raw)
    if public_file:
        (tmp_path / "pub.csv").write_bytes(public_raw)
    monkeypatch.chdir(tmp_path)
    runs = {}
    for what, argv in (("headline", head_argv), ("figure", grid_argv)):
        rc = main(argv + ["--json", "--out", f"{what}.csv"])
        assert rc == 0, capsys.readouterr().err
        runs[what] = (json.loads(capsys.readouterr().out), pd.read_csv(tmp_path / f"{what}.csv"))
    cli = pd.concat([runs["figure"][1], runs["headline"][1]], ignore_index=True)

    page = pd.read_csv(pd.io.common.StringIO(_text(downloads["pmt_results.csv"])))
    page = page[page["sweep"] == "epsilon"]
    key = ["method", "epsilon", "seed"]
    merged = page.merge(cli, on=key, suffixes=("_page", "_cli"))
    assert len(merged) == len(page) == len(cli) == 6 * 4 * 10  # 6 methods (AdaSSP and public-only included) x 4 seeds x (9 grid + 0.7)
    for col in ("l2_error", "rmse", "excess_risk", "kappa_pmt", "radius", "n_pub", "n"):
        a, b = merged[f"{col}_page"].to_numpy(), merged[f"{col}_cli"].to_numpy()
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        assert same.all(), (col, merged.loc[~same, key].to_dict("records"))  # bit for bit
    from ui.pmt.compute.core import default_n_pub

    n_rows = len(pd.read_csv(pd.io.common.BytesIO(raw)))
    # a separate file: all its rows; a random split: the upload default min(200, 20 % of the rows)
    assert (cli["n_pub"] == (150 if public_file else default_n_pub(n_rows))).all() and default_n_pub(n_rows) < 200
    # the headline numbers at the chosen epsilon are the headline command's medians
    payload = runs["headline"][0]
    summ = pd.DataFrame(payload["summary"]).set_index("method")["median"]
    for method in ("PMT", "DP-RR", "DP-GD"):
        assert page_metrics[method] == f"{summ[method]:.3g}", method
    if public_file:
        assert payload["settings"]["clip_radius"] in (2.5, 3.0) and str(payload["settings"]["public"]).endswith("pub.csv")


def test_cli_data_flags_reject_bad_input_before_any_noise(tmp_path, capsys):
    from engine.cli import main

    f = tmp_path / "d.csv"
    f.write_bytes(_csv(n=60))
    cases = [
        (["--data", str(f), "--dataset", "ccpp"], "not both"),
        (["--public", str(f)], "--public applies to --data"),
        (["--data", str(tmp_path / "missing.csv")], "no such file"),
        (["--data", str(f), "--target", "nope"], "target column 'nope' not found"),
        (["--data", str(f), "--target", "output", "--features", "temp", "zzz"], "feature column 'zzz'"),
        (["--data", str(f), "--task", "logistic"], "--data"),  # a numeric target is not 0/1 labels
        (["--data", str(f), "--clip-radius", "-1"], "--clip-radius"),
        (["--data", str(f), "--kappa", "10"], "synthetic only"),
    ]
    for extra, needle in cases:
        rc = main(["pmt", "--seeds", "2", "--epsilon", "1", *extra])
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and "Traceback" not in err, (extra, err)


def test_features_starting_with_a_dash_are_never_read_as_options(tmp_path, capsys):
    from engine.cli import build_parser
    from engine.datasets import read_csv_upload
    from ui.pmt.compute import core as C
    from ui.pmt.compute import export as X
    from ui.common.state import DEFAULTS

    raw = b"-x,=1+1,y\n" + b"".join(f"{i % 7},{(i * 3) % 11},{i % 5 + 0.5 * (i % 3)}\n".encode() for i in range(40))
    ds = read_csv_upload(raw, target="y")
    spec = {**DEFAULTS, "data": ds.name, "task": "regression", "synthetic_kappa": 1e3, "seeds": 2}
    args = build_parser().parse_args(shlex.split(X.cli_command(spec, ds=ds))[3:])
    assert args.features == ["-x", "=1+1"] and args.target == "y" and args.data == "/path/to/data.csv"
