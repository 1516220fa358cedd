"""One truth about the data: the sidebar and the PMT page name the data actually computed on.

AppTest flows inside the app.py frame: a Data-page upload with the task set to classification is what
the PMT page computes on (its task follows the file's), with the same n_pub rule as the PMT page's
own upload; a lost upload (a reload: a new session whose URL names the file) is said on the page and in
the sidebar; the NVDP "Sentences" choice survives a page switch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from conftest import new_app  # the harness: tests/conftest.py

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240


def _binary_csv(n=300, seed=1) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.5, -1.0, 0.5] + rng.normal(size=n) > 0).astype(int)
    lines = ["a,b,c,label"] + [f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{t}" for r, t in zip(X, y)]
    return ("\n".join(lines) + "\n").encode()


def _sidebar_text(at) -> str:
    return " ".join(m.value for m in at.sidebar.markdown) + " " + " ".join(c.value for c in at.sidebar.caption)


def test_data_page_upload_as_classification_is_what_the_pmt_page_computes_on():
    at = new_app("data", timeout=TIMEOUT, seeds=3).run()
    at.file_uploader[0].set_value(("clicks.csv", _binary_csv(), "text/csv")).run()
    at.selectbox(key=[w.key for w in at.selectbox if str(w.key).startswith("up_task_")][0]).set_value(
        "classification").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["dataset_name"] == "upload:clicks.csv"
    # one n_pub rule for both uploads: min(200, 20 % of 300 rows) = 60
    assert at.session_state["n_pub"] == 60
    at.switch_page("app_pages/pmt.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["task"] == "classification"
    assert at.session_state["_computed_on"][0] == "upload:clicks.csv"
    side = _sidebar_text(at)
    assert "upload:clicks.csv (300 rows x 3 features)" in side
    captions = " ".join(c.value for c in at.caption)
    assert "upload:clicks.csv" in captions and "60 public rows" in captions
    assert "Computed on **upload:clicks.csv**: 300 rows, 60 public (random split)" in captions  # above the verdict


def test_a_reload_that_lost_the_upload_says_so_and_the_sidebar_names_what_is_shown():
    at = new_app("pmt", timeout=TIMEOUT, query={"upload": "clicks.csv", "task": "classification"}, seeds=3).run()
    assert not at.exception, [e.message for e in at.exception]
    warn = " ".join(w.value for w in at.warning)
    shown = at.session_state["_computed_on"][0]
    assert "clicks.csv" in warn and "is not here any more" in warn and f"Showing **{shown}** instead" in warn
    side = _sidebar_text(at) + " ".join(w.value for w in at.sidebar.warning)
    assert f"{shown} (" in side and "clicks.csv is gone" in side
    assert shown == "bank"  # the classification task's first data set, not the ccpp the Data page holds


def test_nvdp_sentences_choice_survives_a_page_switch():
    from ui.nvdp.state import NVDP_DEFAULTS

    assert NVDP_DEFAULTS["nvdp_source"] == "bundled"
    src = (ROOT / "ui" / "nvdp" / "controls.py").read_text()
    # bound with persist_state="session" (kept while the page is not drawn), like every other NVDP setting
    assert 'st.radio("Sentences", list(SOURCES), format_func=SOURCES.get, **persist("nvdp_source")' in src


def test_an_all_zero_public_target_is_explained_in_the_page_terms():
    from engine.datasets import read_csv_upload
    from ui.common.upload_file import Named

    rng = np.random.default_rng(0)
    rows = ["a,b,y"] + [f"{rng.normal():.4f},{rng.normal():.4f},{int(i < 3)}" for i in range(200)]
    ds = read_csv_upload(Named("zeros.csv", ("\n".join(rows) + "\n").encode()), target="y")
    from ui.pmt.compute.core import prepare

    seed = next(s for s in range(50)  # a split whose 10 public rows all have target 0 (most do)
                if not prepare(ds, standardize=False, n_pub=10, split_seed=s).y_pub.any())
    at = new_app("pmt", timeout=TIMEOUT, uploaded_dataset=ds, dataset_name=ds.name, data=ds.name, n_pub=10, seeds=2,
                 standardize=False, split_seed=seed).run()
    errors = " ".join(e.value for e in at.error)
    assert "Cannot compute with these settings" in errors
    assert "response_bound=<float>" not in errors and "y_pub" not in errors
    assert "n_pub" in errors and "split" in errors  # the controls to change
