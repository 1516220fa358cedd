"""Every rejected round-4 file leaves the page's data and settings as they were (AppTest, one flow per reader).

The PMT page's CSV upload, its moments upload, and the NVDP page's text upload each first accept a good file,
then get one file of every refused kind of :mod:`tests.hostile_round4`: the page shows one error naming the file
and the problem, raises nothing, and keeps the accepted data, the settings and the headline numbers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from conftest import linear_csv, new_app  # the harness: tests/conftest.py

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_round4 as gen  # noqa: E402

TIMEOUT = 300


def _one_per_kind(cases):
    seen, out = set(), []
    for kind, name, raw, expect in cases:
        if expect[0] == "error" and kind not in seen and len(raw) < 2_000_000:
            seen.add(kind)
            out.append((kind, name, raw, expect))
    return out


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _good_csv(n=300, seed=0) -> bytes:
    return linear_csv(n, seed, coef=(1.5, -2.0), header="temp,load,output")


def test_pmt_csv_upload_keeps_the_accepted_file():
    at = new_app("pmt", timeout=TIMEOUT, query={"seeds": "2"}).run()
    at.file_uploader(key="pmt_upload_file").set_value(("plant.csv", _good_csv(), "text/csv")).run()
    at.button[[b.label for b in at.button].index("Use this data")].click().run()
    assert not at.exception and at.session_state["data"] == "upload:plant.csv"
    keys = ("data", "dataset_name", "epsilon", "seeds", "n_pub", "lam", "task")
    before = {k: at.session_state[k] for k in keys}
    upload, head = at.session_state["uploaded_dataset"], _metrics(at)
    cases = _one_per_kind(gen.csv_cases())
    assert len(cases) >= 20
    for kind, name, raw, expect in cases:
        at.file_uploader(key="pmt_upload_file").set_value((name, raw, "text/csv")).run()
        labels = [b.label for b in at.button]
        if "Use this data" in labels:  # the header was readable: the rows are checked on "Use this data"
            at.button[labels.index("Use this data")].click().run()
        assert not at.exception, (name, at.exception)
        errors = [e.value for e in at.error]
        assert any(name in e and all(f in e for f in expect[1]) for e in errors), (name, errors)
        assert at.session_state["uploaded_dataset"] is upload, name
        assert {k: at.session_state[k] for k in keys} == before, name
        assert _metrics(at) == head, name


def test_pmt_moments_upload_keeps_the_accepted_file():
    from engine.datasets import load_dataset
    from engine.pmt.public_info import PublicInfo
    from engine.pmt.sweep import sweep_split

    ds = load_dataset("ccpp")
    X, y = ds.to_numpy()
    Xq = sweep_split(X, y, n_pub=200, split_seed=0, test_size=0.2)[0]
    good = json.dumps(PublicInfo.from_rows(Xq, columns=list(ds.feature_names)).to_dict()).encode()
    at = new_app("pmt", timeout=TIMEOUT, seeds=2, public_mode="moments", metric="rmse").run()
    at.radio(key="pmt_moments_source").set_value("file").run()
    at.file_uploader(key="pmt_moments_file").set_value(("moments.json", good, "application/json")).run()
    at.number_input(key="pmt_response_scale").set_value(17.0).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    keys = ("data", "epsilon", "seeds", "public_mode", "pmt_moments_raw", "pmt_response_scale")
    before, head = {k: at.session_state[k] for k in keys}, _metrics(at)
    cases = _one_per_kind(gen.moments_cases())
    assert len(cases) >= 25
    for kind, name, raw, expect in cases:
        at.file_uploader(key="pmt_moments_file").set_value((name, raw, "application/json")).run()
        assert not at.exception, (name, at.exception)
        errors = [e.value for e in at.error]
        assert any("not accepted" in e and name in e and "Still using 'moments.json'" in e
                   and all(f in e for f in expect[1]) for e in errors), (name, errors)
        assert all(len(e) < 800 for e in errors), name
        assert {k: at.session_state[k] for k in keys} == before, name
        assert _metrics(at) == head, name


def test_nvdp_text_upload_keeps_the_trained_texts(tmp_path, monkeypatch):
    monkeypatch.setenv("NVDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NVDP_PAGE_EPOCHS", "1")
    good = next(raw for kind, name, raw, expect in gen.nvdp_cases() if kind == "quoted_comma")
    at = new_app("nvdp", timeout=TIMEOUT, nvdp_source="upload").run()
    at.file_uploader(key="nvdp_upload").set_value(("mine.csv", good, "text/csv")).run()
    at.button(key="nvdp_upload_go").click().run()
    assert not at.exception, [e.message for e in at.exception]
    user = at.session_state["nvdp_user"]
    settings = {k: at.session_state[k] for k in ("nvdp_source", "nvdp_C_mu")}
    head = _metrics(at)
    assert head
    for kind, name, raw, expect in _one_per_kind(gen.nvdp_cases()):
        at.file_uploader(key="nvdp_upload").set_value((name, raw, "text/csv")).run()
        assert not at.exception, (name, at.exception)
        errors = [e.value for e in at.error]
        assert any("cannot be used" in e and "Still showing your earlier texts (mine.csv)" in e for e in errors), (
            name, errors)
        assert at.session_state["nvdp_user"] is user, name
        assert {k: at.session_state[k] for k in settings} == settings, name
        assert _metrics(at) == head, name  # the views still show the trained texts' numbers
