"""The PMT page after a rejected file: the user's earlier upload, data choice, settings and headline stay."""

from __future__ import annotations

import numpy as np


def _good(n=300, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X @ [1.5, -2.0] + rng.normal(size=n)
    return ("temp,load,output\n" + "".join(f"{a:.5f},{b:.5f},{t:.5f}\n" for (a, b), t in zip(X, y))).encode()


HOSTILE = {  # name -> (bytes, a fragment of the page's error)
    "random.csv": (np.random.default_rng(3).integers(1, 256, 3000).astype(np.uint8).tobytes(), "random.csv"),
    "utf16_no_bom.csv": (_good(50).decode().encode("utf-16-le"), "NUL bytes"),
    "long_header.csv": (b"h" * 200_000 + b",y\n1,2\n3,4\n", "longer than 131,072 characters"),
    "unclosed.csv": (b'a,b,y\n1,2,3\n"4,5,6\n7,8,9\n' * 3, "never closed"),
    "inf.csv": (b"a,b,y\n1,2,3\n4,inf,6\n7,8,9\n5,5,1\n", "infinite value"),
    "wide.csv": ((",".join(f"c{i}" for i in range(10_000)) + "\n" + ",".join(["1"] * 10_000) + "\n"
                  + ",".join(["2"] * 10_000) + "\n").encode(), "too few rows"),
}


def _headline(at):
    return {m.label: m.value for m in at.metric}.get("PMT")


def test_a_rejected_file_keeps_the_earlier_upload_and_settings(app_at):
    at = app_at("pmt", seeds=2).run()  # the harness: tests/conftest.py
    at.file_uploader(key="pmt_upload_file").set_value(("plant.csv", _good(), "text/csv")).run()
    at.button[[b.label for b in at.button].index("Use this data")].click().run()
    assert not at.exception, at.exception
    assert at.session_state["data"] == "upload:plant.csv"
    at.select_slider(key="epsilon").set_value(0.5).run()
    before = {k: at.session_state[k] for k in ("data", "dataset_name", "epsilon", "seeds", "n_pub", "lam")}
    upload, head = at.session_state["uploaded_dataset"], _headline(at)
    assert head is not None
    for name, (raw, fragment) in HOSTILE.items():
        at.file_uploader(key="pmt_upload_file").set_value((name, raw, "text/csv")).run()
        labels = [b.label for b in at.button]
        if "Use this data" in labels:  # the header was readable: the rows are checked on "Use this data"
            at.button[labels.index("Use this data")].click().run()
        assert not at.exception, (name, at.exception)
        errors = [e.value for e in at.error]
        assert any(fragment in e and name in e for e in errors), (name, errors)
        assert all("Traceback" not in e for e in errors)
        assert at.session_state["uploaded_dataset"] is upload, name  # the earlier upload, untouched
        assert {k: at.session_state[k] for k in before} == before, name
        assert _headline(at) == head, name  # the same view, the same number
