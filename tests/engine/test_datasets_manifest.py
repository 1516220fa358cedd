"""The bundled-data manifest behind ``list_datasets`` and ``python -m engine datasets``.

The listing is read from ``engine/datasets/manifest.json`` (no pandas, no data file in the CLI). These
tests keep it honest: every number in it must equal what loading the set gives, and the CLI's
standard-library table must print exactly what pandas printed before.
"""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from engine.cli import datasets as cli_datasets
from engine.cli import main
from engine.datasets import bundled, list_datasets

ROOT = Path(__file__).resolve().parents[2]


def test_manifest_matches_the_loaded_data():
    # Loads every bundled file (and synthetic with its defaults): a changed CSV or registry entry fails here.
    assert bundled._manifest_records() == bundled._measured_records()


def test_cli_and_engine_read_the_same_manifest():
    assert cli_datasets.MANIFEST_PATH.resolve() == bundled.MANIFEST_PATH.resolve()
    cols, rows = cli_datasets.manifest_records()
    assert cols == bundled.LIST_COLUMNS
    assert rows == list_datasets().to_dict(orient="records")


def test_text_output_is_pandas_to_string(capsys):
    assert main(["datasets"]) == 0
    assert capsys.readouterr().out == list_datasets().to_string(index=False) + "\n"


def test_json_output_is_the_records(capsys):
    assert main(["datasets", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == list_datasets().to_dict(orient="records")
    assert [r["rows"] for r in out][:3] == [1599, 4898, 9568]


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"a": ["x", "yyyyyyy"], "n": [5, 123456], "k": [1, 2]}),
    pd.DataFrame({"long_header_name": ["p"], "v": [0], "w": ["qqqqqqqqqqqqqqq"]}),
    pd.DataFrame({"s": ["a", "bb", "ccc"], "count": [10, 9, 100000000]}),
])
def test_format_table_matches_pandas_layout(frame):
    rows = frame.to_dict(orient="records")
    rows = [{k: (int(v) if not isinstance(v, str) else v) for k, v in r.items()} for r in rows]
    assert cli_datasets.format_table(list(frame.columns), rows) == frame.to_string(index=False)


def test_datasets_command_imports_neither_pandas_nor_numpy():
    code = ("import runpy, sys\nsys.argv = ['engine', 'datasets']\n"
            "try:\n    runpy.run_module('engine', run_name='__main__', alter_sys=True)\n"
            "except SystemExit:\n    pass\n"
            "sys.stderr.write('HEAVY ' + ' '.join(sorted(m for m in ('pandas', 'numpy') if m in sys.modules)))\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "wine-red" in res.stdout and "9568" in res.stdout
    assert res.stderr.strip().splitlines()[-1] == "HEAVY"
