"""A server restart mid-session: a reload restores the settings from the URL, and an uploaded file (never
stored) is announced as lost, with a plain request to upload it again, while the page falls back to
bundled data."""

from __future__ import annotations


import numpy as np

from engine.datasets import read_csv_upload

from conftest import linear_csv, new_app  # the harness: tests/conftest.py


def _upload(n=300, seed=0):
    return read_csv_upload(linear_csv(n, seed, coef=(1.5, -2.0), header="temp,load,output"), task="regression")


def _query(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_the_url_carries_an_upload_marker_and_a_fresh_session_asks_for_the_file_again():
    ds = _upload()
    ds = type(ds)(**{**ds.__dict__, "name": "upload:plant readings.csv"})
    at = new_app("pmt", query={"seeds": "2", "epsilon": "5"}, uploaded_dataset=ds, dataset_name=ds.name,
                 data=ds.name).run()
    assert not at.exception, at.exception
    qp = _query(at)
    assert qp["upload"] == "plant readings.csv" and qp["epsilon"] == "5" and qp["seeds"] == "2"
    assert "data" not in qp  # the data parameter names bundled sets only
    assert not any("uploaded file" in w.value for w in at.warning)  # the upload is here: nothing lost

    # the server restarts: a new runtime and a new session open the same URL, without the upload
    fresh = new_app("pmt", query=qp).run()
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
    at = new_app("pmt", query={"data": "wine-red", "epsilon": "0.5", "lam": "0", "seeds": "2"}).run()
    assert not at.exception, at.exception
    assert at.session_state["data"] == "wine-red" and at.select_slider(key="epsilon").value == 0.5
    assert at.select_slider(key="lam").value == 0.0
    assert not any("uploaded file" in w.value for w in at.warning)
