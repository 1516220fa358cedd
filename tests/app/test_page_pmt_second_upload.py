"""The PMT page's upload: a second, different file replaces the first, and "Use this data" uses the
file the uploader holds at the click.

A browser that replaces one file by another in the uploader sends two reruns (the old file removed,
then the new one); a click on "Use this data" can reach the server together with the new file, before
the script has read it. Both must end with the new file as the data, never the replaced one.
"""

from __future__ import annotations


import numpy as np

from conftest import linear_csv, new_app  # the harness: tests/conftest.py


def _csv(k: int, n: int) -> bytes:
    return linear_csv(n, seed=k)


def _use(at):
    labels = [b.label for b in at.button]
    assert "Use this data" in labels, labels
    return at.button[labels.index("Use this data")]


def _page():
    at = new_app("pmt", query={"seeds": "2"}).run()
    at.file_uploader(key="pmt_upload_file").set_value(("first.csv", _csv(1, 300), "text/csv")).run()
    _use(at).click().run()
    assert not at.exception, at.exception
    assert at.session_state["data"] == "upload:first.csv"
    assert at.session_state["uploaded_dataset"].n == 300
    return at


def test_a_second_upload_replaces_the_first():
    at = _page()
    at.file_uploader(key="pmt_upload_file").set_value(("second.csv", _csv(2, 400), "text/csv")).run()
    _use(at).click().run()
    assert not at.exception, at.exception
    assert at.session_state["data"] == "upload:second.csv"
    assert at.session_state["uploaded_dataset"].n == 400  # the second file's rows, not the first's


def test_a_click_that_arrives_with_the_new_file_uses_the_new_file():
    at = _page()
    # the new file and the click in one rerun: the callback runs before the script has read the file
    at.file_uploader(key="pmt_upload_file").set_value(("second.csv", _csv(2, 400), "text/csv"))
    _use(at).click().run()
    assert not at.exception, at.exception
    assert at.session_state["data"] == "upload:second.csv"
    assert at.session_state["uploaded_dataset"].n == 400
    assert at.session_state["pmt_upload_target"] == "y"  # the new file's default target


def test_an_emptied_uploader_offers_no_stale_file():
    at = _page()
    at.file_uploader(key="pmt_upload_file").set_value(None).run()
    assert not at.exception, at.exception
    assert "Use this data" not in [b.label for b in at.button]  # no button for a file no longer held
    assert at.session_state["data"] == "upload:first.csv"  # the data in use stay as they were
