"""A server restart mid-session: a reload restores the settings from the URL, and an uploaded file (never
stored) is announced as lost, with a plain request to upload it again, while the page falls back to
bundled data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from engine.datasets import read_csv_upload

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = "app_pages/pmt.py"
TIMEOUT = 180


def _upload(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X @ [1.5, -2.0] + rng.normal(size=n)
    text = "temp,load,output\n" + "".join(f"{a:.5f},{b:.5f},{t:.5f}\n" for (a, b), t in zip(X, y))
    return read_csv_upload(text.encode(), task="regression")


def _query(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_the_url_carries_an_upload_marker_and_a_fresh_session_asks_for_the_file_again():
    ds = _upload()
    ds = type(ds)(**{**ds.__dict__, "name": "upload:plant readings.csv"})
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["uploaded_dataset"] = ds
    at.session_state["dataset_name"] = ds.name
    at.session_state["data"] = ds.name
    at.query_params["seeds"] = "2"
    at.query_params["epsilon"] = "5"
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    qp = _query(at)
    assert qp["upload"] == "plant readings.csv" and qp["epsilon"] == "5" and qp["seeds"] == "2"
    assert "data" not in qp  # the data parameter names bundled sets only
    assert not any("uploaded file" in w.value for w in at.warning)  # the upload is here: nothing lost

    # the server restarts: a new runtime and a new session open the same URL, without the upload
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in qp.items():
        fresh.query_params[k] = v
    fresh.switch_page(PAGE).run()
    assert not fresh.exception, fresh.exception
    lost = [w.value for w in fresh.warning if "uploaded file" in w.value and "plant readings.csv" in w.value]
    assert len(lost) == 1 and "Upload the file again" in lost[0] and "never stored" in lost[0]
    # the settings came back from the URL, and the page visibly shows bundled data instead
    assert fresh.select_slider(key="epsilon").value == 5.0
    assert fresh.session_state["seeds"] == 2
    assert not str(fresh.session_state["data"]).startswith("upload:")
    assert fresh.session_state["dataset_name"] == fresh.session_state["data"]
    assert "PMT" in {m.label for m in fresh.metric}
    # ... and the URL no longer claims the upload
    assert "upload" not in _query(fresh) and not str(_query(fresh).get("data", "")).startswith("upload:")


def test_a_reload_restores_bundled_settings_without_an_upload_message():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in {"data": "wine-red", "epsilon": "0.5", "lam": "0", "seeds": "2"}.items():
        at.query_params[k] = v
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.session_state["data"] == "wine-red" and at.select_slider(key="epsilon").value == 0.5
    assert at.select_slider(key="lam").value == 0.0
    assert not any("uploaded file" in w.value for w in at.warning)
