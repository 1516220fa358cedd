"""The Data page (run through app.py with AppTest), and engine.figures.pmt.feature_scale_figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest


from engine.figures.pmt import feature_scale_figure

from conftest import new_app  # the harness: tests/conftest.py

DATA = Path(__file__).parents[1] / "data"


def _data_page() -> AppTest:
    at = new_app().run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    return "\n".join(str(p) for p in parts)


def _choose(at: AppTest, name: str) -> None:
    at.selectbox(key="data_active_choice").select(name).run()
    assert not at.exception, [e.value for e in at.exception]


def _upload(at: AppTest, filename: str, content: bytes) -> None:
    at.file_uploader[0].set_value((filename, content, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]


def test_default_and_bundled_wine_red_preview():
    at = _data_page()
    assert at.session_state["dataset_name"] == "ccpp"
    assert "9568 rows x 4 features" in _text(at)
    # the registry table lists every bundled set with its DOI link
    table = at.dataframe[0].value
    assert table["name"].tolist()[:6] == ["wine-red", "wine-white", "ccpp", "bank", "bank-campaign", "sentiment"]
    assert "https://doi.org/10.24432/C56S3T" in table["source"].tolist()
    _choose(at, "wine-red")
    assert at.session_state["dataset_name"] == "wine-red"
    assert at.session_state["dataset_shape"] == ("wine-red", 1599, 11)
    text = _text(at)
    assert "1599 rows x 11 features" in text and "10.24432/C56S3T" in text
    assert not at.error
    # the feature-scale figure is drawn (Plotly chart element) and the column-type table names the target
    assert len(at.get("plotly_chart")) == 1
    types = [df.value for df in at.dataframe if "role" in getattr(df.value, "columns", [])][0]
    assert types.set_index("column").loc["quality", "role"] == "target"
    assert (types["role"] == "feature").sum() == 11


def test_sentiment_and_synthetic_previews():
    at = _data_page()
    _choose(at, "sentiment")
    assert "3000 rows x 1 features" in _text(at) and not at.error
    _choose(at, "synthetic")
    assert "20000 rows x 10 features" in _text(at)
    at.select_slider(key="synthetic_kappa").set_value(1e5).run()
    assert not at.exception
    assert "kappa(Sigma)=100000" in _text(at)


def test_good_upload_becomes_the_active_data_set():
    at = _data_page()
    _upload(at, "upload_good.csv", (DATA / "upload_good.csv").read_bytes())
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["dataset_name"] == "upload:upload_good.csv"
    ds = at.session_state["uploaded_dataset"]
    assert (ds.n, ds.d, ds.target_name) == (40, 3, "output")
    assert "is valid: 40 rows, 3 features" in at.success[0].value
    assert "40 rows x 3 features" in _text(at)
    assert "never written to disk" in _text(at)
    # choosing another target re-validates the same file with the new choice
    at.selectbox(key=[s.key for s in at.selectbox if s.key.startswith("up_target_")][0]).select("noise").run()
    assert at.session_state["uploaded_dataset"].target_name == "noise"


BAD_UPLOADS = [
    ("header_only.csv", (DATA / "upload_header_only.csv").read_bytes(), "has a header (3 columns) but no data rows"),
    ("cities.csv", (DATA / "upload_nonnumeric.csv").read_bytes(), "feature column 'city' is not numeric"),
    ("pipes.csv", (DATA / "upload_pipe_delimited.csv").read_bytes(), "parsed into a single column"),
    ("one_class.csv", b"a,b,y\n1,5,true\n2,3,true\n3,8,true\n4,1,true\n", "has only one class"),
    ("empty.csv", b"", "the file is empty"),
]


@pytest.mark.parametrize("filename, content, fragment", BAD_UPLOADS, ids=[b[0] for b in BAD_UPLOADS])
def test_bad_upload_shows_error_and_keeps_previous_choice(filename, content, fragment):
    at = _data_page()
    _choose(at, "wine-red")
    _upload(at, filename, content)
    errors = [e.value for e in at.error]
    assert any(fragment in e for e in errors), errors
    assert any(filename in e for e in errors)
    assert at.session_state["dataset_name"] == "wine-red"
    assert at.session_state["uploaded_dataset"] is None
    assert at.selectbox(key="data_active_choice").value == "wine-red"
    assert "1599 rows x 11 features" in _text(at)  # the preview still shows the previous data set


def test_bad_upload_after_a_good_one_keeps_the_good_one():
    at = _data_page()
    _upload(at, "upload_good.csv", (DATA / "upload_good.csv").read_bytes())
    _upload(at, "cities.csv", (DATA / "upload_nonnumeric.csv").read_bytes())
    assert any("feature column 'city' is not numeric" in e.value for e in at.error)
    assert at.session_state["dataset_name"] == "upload:upload_good.csv"
    assert at.session_state["uploaded_dataset"].n == 40
    assert "40 rows x 3 features" in _text(at)


def test_fixing_a_bad_upload_with_the_pickers_and_forgetting_it():
    at = _data_page()
    _upload(at, "cities.csv", (DATA / "upload_nonnumeric.csv").read_bytes())
    assert any("'city' is not numeric" in e.value for e in at.error)
    # dropping the text column from the features makes the same file valid
    feats = [m for m in at.multiselect if m.key.startswith("up_features_")][0]
    feats.unselect("city").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ds = at.session_state["uploaded_dataset"]
    assert ds.feature_names == ("temperature",) and at.session_state["dataset_name"] == "upload:cities.csv"
    at.button(key="forget_upload").click().run()
    assert not at.exception
    assert at.session_state["uploaded_dataset"] is None
    assert at.session_state["dataset_name"] == "ccpp"
    assert at.file_uploader[0].value is None  # the widget was emptied too
    assert "9568 rows x 4 features" in _text(at)


# ------------------------------------------------------------------------------------------------
# engine.figures.pmt.feature_scale_figure
# ------------------------------------------------------------------------------------------------
def test_feature_scale_figure_sorts_by_std_on_a_log_axis():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"small": rng.normal(0, 0.01, 500), "big": rng.normal(0, 1000, 500),
                       "mid": rng.normal(5, 1, 500), "text": ["x"] * 500})
    fig = feature_scale_figure(df)
    bar = fig.data[0]
    assert list(bar.y) == ["big", "mid", "small"]  # text column ignored
    np.testing.assert_allclose(bar.x, df[["big", "mid", "small"]].std(ddof=0).to_numpy())
    assert fig.layout.xaxis.type == "log"
    assert "largest / smallest" in fig.layout.title.text
    np.testing.assert_allclose(bar.customdata[1][0], df["mid"].mean())


def test_feature_scale_figure_notes_zero_spread_and_rejects_no_numeric():
    fig = feature_scale_figure(pd.DataFrame({"a": [1.0, 2.0, 3.0], "flat": [4.0, 4.0, 4.0]}))
    assert list(fig.data[0].y) == ["a"]
    assert any("flat" in a.text for a in fig.layout.annotations)
    with pytest.raises(ValueError, match="at least one numeric column"):
        feature_scale_figure(pd.DataFrame({"s": ["a", "b"]}))
    with pytest.raises(TypeError, match="DataFrame"):
        feature_scale_figure(np.zeros((3, 2)))
