"""Bring your own text: validation of a text CSV, and an AppTest upload that trains and shows the views."""

from __future__ import annotations


import numpy as np
import pytest

from engine.nvdp.user_text import read_text_csv

from conftest import new_app  # the harness: tests/conftest.py


WORDS = {"pos": ["great", "lovely", "excellent", "superb", "fine work"],
         "neg": ["awful", "broken", "terrible", "poor", "waste of money"],
         "mid": ["okay", "average", "so so", "fair", "middling"]}


def _csv(n_per_class=12, classes=("pos", "neg"), sep=",", header=("text", "label")) -> bytes:
    rows = [sep.join(header)]
    for i in range(n_per_class):
        for c in classes:
            rows.append(f"the product was {WORDS[c][i % 5]} number {i}{sep}{c}")
    return ("\n".join(rows) + "\n").encode()


def test_reads_binary_and_multiclass_and_codes_labels_in_sorted_order():
    ds = read_text_csv(_csv(), min_rows=20)
    assert ds.n == 24 and ds.classes == ["neg", "pos"]
    assert ds.labels[:2].tolist() == [1, 0] and ds.text_column == "text" and ds.encoding == "utf-8"
    multi = read_text_csv(_csv(classes=("pos", "neg", "mid"), sep=";", header=("review", "class")), min_rows=20)
    assert multi.classes == ["mid", "neg", "pos"] and np.bincount(multi.labels).tolist() == [12, 12, 12]
    assert multi.text_column == "review" and multi.label_column == "class"


def test_latin1_file_is_read_and_reported():
    raw = _csv().replace(b"great", "gr\u00e9at".encode("latin-1"))
    ds = read_text_csv(raw, min_rows=20)
    assert ds.encoding == "latin-1" and any("gr\u00e9at" in t for t in ds.texts)


@pytest.mark.parametrize("content, match", [
    (b"text,label\n\x00\x01binary", "looks binary"),
    (_csv(n_per_class=5), "too few rows: 10; need at least 20"),
    (_csv(classes=("pos",), n_per_class=40), "one class only"),
    (_csv() .replace(b"the product was great number 0", b"  "), "empty text.*data row 1"),
    (_csv().replace(b"number 3,", b"number 3" + b"x" * 1200 + b",", 1), "longer than 1000 characters.*data row 7"),
    (_csv().replace(b"number 2,pos", b"number 2,"), "missing label.*data row 5"),
    (_csv(header=("body", "label")), "no text column found"),
    (_csv(classes=("pos", "neg", "mid"), n_per_class=12).replace(b",mid\n", b",pos\n", 8), "too few rows of class 'mid' \\(4\\)"),
])
def test_bad_uploads_raise_clear_errors(content, match):
    with pytest.raises(ValueError, match=match):
        read_text_csv(content, min_rows=20)


def test_named_column_must_exist_and_row_cap():
    with pytest.raises(ValueError, match="the label column 'y2' is not in the file; its columns are: text, label"):
        read_text_csv(_csv(), label_column="y2", min_rows=20)
    with pytest.raises(ValueError, match="the file has 24 rows; at most 10 are accepted"):
        read_text_csv(_csv(), min_rows=5, max_rows=10)
    with pytest.raises(ValueError, match="both 'text'"):
        read_text_csv(_csv(), text_column="text", label_column="text", min_rows=20)


def test_upload_trains_in_session_and_shows_every_view(tmp_path, monkeypatch):
    """A tiny 3-class CSV: upload, encode, train (1 epoch), then the metrics, headline, tabs and export appear;
    nothing of the texts is written to the encoder cache."""

    cache = tmp_path / "cache"
    monkeypatch.setenv("NVDP_CACHE_DIR", str(cache))
    monkeypatch.setenv("NVDP_PAGE_EPOCHS", "1")
    at = new_app("nvdp", timeout=300, nvdp_source="upload").run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("Upload a CSV" in i.value for i in at.info)
    at.file_uploader(key="nvdp_upload").set_value(("mine.csv", _csv(classes=("pos", "neg", "mid")), "text/csv")).run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("36 texts" in m.value for m in at.markdown)
    at.button(key="nvdp_upload_go").click().run()
    assert not at.exception, [e.message for e in at.exception]
    metrics = {m.label for m in at.metric}
    assert {"RD worst case", "RD filtered max", "BDP epsilon", "Accuracy"} <= metrics
    caps = " ".join(c.value for c in at.caption)
    assert "Your texts (mine.csv, 36 rows, classes mid, neg, pos; in this session only)" in caps
    assert any("Same pairs, clipped vs unclipped" in m.value for m in at.markdown)
    assert len(at.tabs) >= 5
    # a slider move re-evaluates on the user's models
    lo = at.slider(key="nvdp_C_mu").min
    at.slider(key="nvdp_C_mu").set_value(lo).run()
    assert not at.exception, [e.message for e in at.exception]
    # session only: no token-state file of the upload in the encoder cache
    assert not any(cache.glob("*.pt")) if cache.exists() else True
    user = at.session_state["nvdp_user"]
    assert user["models"]["clipped"].model.config.n_classes == 3
