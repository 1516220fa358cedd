"""engine.datasets.read_csv_upload: good uploads in every accepted form, and every bad input of
CONVENTIONS.md that concerns data, each with a distinctive fragment of its message."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.datasets import MAX_ABS_VALUE, read_csv_upload

DATA = Path(__file__).parents[1] / "data"


def _csv(header, *rows, sep=","):
    return (sep.join(header) + "\n" + "".join(sep.join(map(str, r)) + "\n" for r in rows)).encode()


GOOD_ROWS = [(1, 2.5, 3.0), (2, 0.5, 4.5), (3, 1.5, 5.0), (4, 4.0, 1.0), (5, 3.0, 2.2)]


# ---------------------------------------------------------------------------------------------
# Good uploads
# ---------------------------------------------------------------------------------------------
def test_good_file_from_path():
    ds = read_csv_upload(DATA / "upload_good.csv")
    ref = pd.read_csv(DATA / "upload_good.csv")
    assert ds.name == "upload:upload_good.csv"
    assert (ds.n, ds.d, ds.task, ds.target_name) == (40, 3, "regression", "output")
    assert ds.feature_names == ("temperature", "humidity", "noise")
    np.testing.assert_array_equal(ds.X.to_numpy(), ref[["temperature", "humidity", "noise"]].to_numpy())
    np.testing.assert_array_equal(ds.y.to_numpy(), ref["output"].to_numpy())
    assert ds.citation == "" and ds.doi is None
    assert str(DATA) not in ds.name  # only the file name is kept


def test_good_file_from_bytes_and_file_like():
    raw = (DATA / "upload_good.csv").read_bytes()
    a = read_csv_upload(raw)
    b = read_csv_upload(io.BytesIO(raw))
    assert a.name == "upload:data.csv"
    pd.testing.assert_frame_equal(a.X, b.X)
    pd.testing.assert_series_equal(a.y, b.y)


def test_good_file_from_a_streamlit_uploaded_file():
    from streamlit.proto.Common_pb2 import FileURLs
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    raw = (DATA / "upload_good.csv").read_bytes()
    up = UploadedFile(UploadedFileRec("id1", "my data.csv", "text/csv", raw), FileURLs())
    ds = read_csv_upload(up, target="noise", features=["humidity", "temperature"])
    assert ds.name == "upload:my data.csv"
    assert ds.feature_names == ("humidity", "temperature") and ds.target_name == "noise"
    assert list(ds.X.columns) == ["humidity", "temperature"]


def test_semicolon_file_with_decimal_comma_is_sniffed_and_read_as_classification_when_asked():
    ds = read_csv_upload(DATA / "upload_good_semicolon_decimal_comma.csv", task="classification")
    assert ds.feature_names == ("temperature", "humidity")  # quoted header read correctly
    assert ds.task == "classification" and ds.y.dtype == np.int64
    assert ds.X["temperature"].iloc[0] == 20.006 and ds.X["humidity"].iloc[0] == 88.03
    ref = pd.read_csv(DATA / "upload_good.csv")
    np.testing.assert_array_equal(ds.X["humidity"].to_numpy(), ref["humidity"].to_numpy())


def test_tab_separated_and_explicit_task():
    raw = _csv(["a", "b", "y"], *GOOD_ROWS, sep="\t")
    ds = read_csv_upload(raw, task="regression")
    assert ds.d == 2 and ds.y.tolist() == [3.0, 4.5, 5.0, 1.0, 2.2]


def test_text_classification_upload():
    raw = b"text\tlabel\ngreat phone\t1\nterrible \"battery\t0\nok I guess\t1\n"
    ds = read_csv_upload(raw, task="text-classification")
    assert ds.feature_names == ("sentence",) and ds.X["sentence"].tolist()[1] == 'terrible "battery'
    assert ds.y.tolist() == [1, 0, 1]


@settings(max_examples=25, deadline=None)
@given(
    values=st.lists(
        st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, width=64), min_size=3, max_size=3),
        min_size=5,
        max_size=20,
    ),
    sep=st.sampled_from([",", ";", "\t"]),
)
def test_round_trip_any_delimiter(values, sep):
    arr = np.array(values)
    i = np.arange(len(arr))
    arr[:, 0] += i  # make the columns non-constant and distinct from each other
    arr[:, 1] += i**2
    arr[:, 2] += 0.5 * i
    frame = pd.DataFrame(arr, columns=["f1", "f2", "target"])
    raw = frame.to_csv(index=False, sep=sep, float_format="%.17g").encode()
    ds = read_csv_upload(raw, task="regression")
    np.testing.assert_array_equal(ds.X.to_numpy(), arr[:, :2])
    np.testing.assert_array_equal(ds.y.to_numpy(), arr[:, 2])


# ---------------------------------------------------------------------------------------------
# Bad uploads: each one names the problem (the column / value) and what is accepted
# ---------------------------------------------------------------------------------------------
BAD = {
    "empty file": (b"", {}, "the file is empty"),
    "blank lines only": (b"\n\n  \n", {}, "the file is empty"),
    "header only": (b"a,b,y\n", {}, "has a header (3 columns) but no data rows"),
    "one row": (b"a,b,y\n1,2,3\n", {}, "only one data row; need at least 2 rows"),
    "n < d": (_csv(["a", "b", "c", "d", "y"], (1, 2, 3, 9, 1.5), (2, 1, 5, 7, 2.5), (4, 3, 1, 1, 0.5)), {},
              "n = 3 rows for d = 4 features; need more rows than features"),
    "n == d": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, 1, 2.5)), {}, "n = 2 rows for d = 2 features"),
    "non-numeric column": (_csv(["a", "city", "y"], (1, "Lyon", 1.5), (2, "Bern", 2.5), (3, "Graz", 3.5)), {},
                           "feature column 'city' is not numeric: 3 of 3 values"),
    "partly non-numeric": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, "n/a?", 2.5), (3, 5, 3.5), (4, 1, 1)), {},
                           "feature column 'b' is not numeric: 1 of 4 values cannot be read as numbers (data row 2)"),
    "all-NaN column": (_csv(["a", "b", "y"], (1, "", 1.5), (2, "", 2.5), (3, "", 3.5)), {},
                       "feature column 'b' is empty: all 3 values are missing"),
    "NaN in X": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, "", 2.5), (3, 5, 3.5), (4, "NaN", 1)), {},
                 "feature column 'b' has 2 missing (NaN) values (data rows 2, 4)"),
    "NaN in y": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, 3, ""), (3, 5, 3.5), (4, 1, 1)), {},
                 "target column 'y' has 1 missing (NaN) value (data row 2)"),
    "inf in X": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, "inf", 2.5), (3, 5, 3.5), (4, "-inf", 1)), {},
                 "feature column 'b' has 2 infinite values"),
    "inf in y": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, 3, 2.5), (3, 5, "1e400"), (4, 1, 1)), {},
                 "target column 'y' has 1 infinite value (data row 3)"),
    "1e308 in X": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, "1e308", 2.5), (3, 5, 3.5), (4, 1, 1)), {},
                   "feature column 'b' has 1 value with magnitude above 1e+150 (data row 2); they are overflow-prone"),
    "-1e308 in y": (_csv(["a", "b", "y"], (1, 2, 1.5), (2, 3, "-1e308"), (3, 5, 3.5), (4, 1, 1)), {},
                    "target column 'y' has 1 value with magnitude above 1e+150"),
    "constant column": (_csv(["a", "b", "y"], (1, 7, 1.5), (2, 7, 2.5), (3, 7, 3.5), (4, 7, 1)), {},
                        "feature column 'b' is constant"),
    "constant target": (_csv(["a", "b", "y"], (1, 7, 2.5), (2, 3, 2.5), (3, 1, 2.5), (4, 5, 2.5)), {},
                        "target column 'y' is constant"),
    "identical columns": (_csv(["a", "b", "c", "y"], (1, 2, 1, 1.5), (2, 1, 2, 2.5), (3, 5, 3, 3.5), (4, 4, 4, 1),
                               (5, 5, 5, 9)), {}, "feature columns 'a' and 'c' are identical"),
    "target missing": (_csv(["a", "b", "y"], *GOOD_ROWS), {"target": "price"},
                       "target column 'price' not found; the columns are: 'a', 'b', 'y'"),
    "feature missing": (_csv(["a", "b", "y"], *GOOD_ROWS), {"features": ["a", "zz"]},
                        "feature column 'zz' not found"),
    "target among features": (_csv(["a", "b", "y"], *GOOD_ROWS), {"features": ["a", "y"]},
                              "column 'y' is the target and cannot also be a feature"),
    "wrong delimiter forced": (_csv(["a", "b", "y"], *GOOD_ROWS, sep=";"), {"sep": ","},
                               "parsed into a single column ('a;b;y') with delimiter ',' (comma)"),
    "pipe delimiter": ((DATA / "upload_pipe_delimited.csv").read_bytes(), {},
                       "other delimiters such as '|' or spaces are not accepted"),
    "duplicate column names": (_csv(["a", "a", "y"], *GOOD_ROWS), {}, "column name 'a' appears more than once"),
    "ragged row": (b"a,b,y\n1,2,3\n4,5,6,7\n", {}, "data row 2 has 4"),
    "binary file": (b"PK\x03\x04\x00\x00\x00binary", {}, "looks binary"),
    "non-binary labels": (_csv(["a", "b", "y"], (1, 2, 0), (2, 1, 1), (3, 5, 2), (4, 4, 1), (6, 1, 0)),
                          {"task": "classification"},
                          "classification target column 'y' must hold only the labels 0 and 1 (or true/false); 1 row"),
    "string labels": (_csv(["a", "b", "y"], (1, 2, "yes"), (2, 1, "no"), (3, 5, "no"), (4, 4, "yes")),
                      {"task": "classification"}, "must hold only the labels 0 and 1"),
    "unknown task": (_csv(["a", "b", "y"], *GOOD_ROWS), {"task": "clustering"},
                     "task must be one of regression, classification, text-classification"),
    "bad sep option": (_csv(["a", "b", "y"], *GOOD_ROWS), {"sep": "|"}, "sep must be one of"),
    "text task with two features": (_csv(["a", "b", "y"], (1, 2, 0), (2, 1, 1), (3, 5, 1)),
                                    {"task": "text-classification"}, "needs exactly one text feature column, got 2"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_upload_raises_specific_value_error(case):
    raw, kwargs, fragment = BAD[case]
    with pytest.raises(ValueError) as info:
        read_csv_upload(raw, **kwargs)
    assert fragment in str(info.value), str(info.value)


def test_nonnumeric_fixture_file_names_the_column():
    with pytest.raises(ValueError, match="feature column 'city' is not numeric"):
        read_csv_upload(DATA / "upload_nonnumeric.csv")
    with pytest.raises(ValueError, match="has a header"):
        read_csv_upload(DATA / "upload_header_only.csv")


@pytest.mark.parametrize("label", [0, 1])
def test_single_class_message_does_not_reveal_which_class(label):
    raw = _csv(["a", "b", "y"], *[(i, i * i % 7, label) for i in range(8)])
    with pytest.raises(ValueError) as info:
        read_csv_upload(raw, task="classification")
    msg = str(info.value)
    assert msg == "classification target column 'y' has only one class: both labels 0 and 1 must occur"


def test_single_class_message_is_identical_for_all_zero_and_all_one():
    msgs = []
    for label in (0, 1):
        with pytest.raises(ValueError) as info:
            read_csv_upload(_csv(["a", "b", "y"], *[(i, i % 3, label) for i in range(6)]), task="classification")
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_overflow_threshold_is_documented_constant():
    assert MAX_ABS_VALUE == 1e150
    ok = read_csv_upload(_csv(["a", "b", "y"], (1, 2, 1.5), (2, "1e150", 2.5), (3, 5, 3.5), (4, 1, 1)))
    assert ok.X["b"].max() == 1e150


class _HugeUpload:
    """Looks like Streamlit's UploadedFile of 200 MB; reading it would be a bug (size is checked first)."""

    name = "huge.csv"
    size = 200 * 2**20

    def read(self, *a):  # pragma: no cover - must not be called
        raise AssertionError("read() called on an oversized upload")

    getvalue = read


def test_200_mb_upload_is_rejected_before_reading():
    with pytest.raises(ValueError, match=r"the file is 200\.0 MB, larger than the upload limit of 50\.0 MB"):
        read_csv_upload(_HugeUpload())


def test_size_cap_on_bytes_and_paths(tmp_path):
    raw = _csv(["a", "b", "y"], *GOOD_ROWS)
    with pytest.raises(ValueError, match="larger than the upload limit of 20 bytes"):
        read_csv_upload(raw, max_bytes=20)
    p = tmp_path / "big.csv"
    p.write_bytes(raw)
    with pytest.raises(ValueError, match=rf"the file is {len(raw)} bytes, larger than the upload limit of 20 bytes"):
        read_csv_upload(p, max_bytes=20)
    assert read_csv_upload(p, max_bytes=len(raw)).n == 5


def test_bad_source_types():
    with pytest.raises(TypeError, match="source must be a path, bytes or a file-like"):
        read_csv_upload(12345)
    with pytest.raises(ValueError, match="no such file"):
        read_csv_upload("/nonexistent/file.csv")


@pytest.mark.parametrize(
    "raw, names",
    [
        (b"\xef\xbb\xbfa,b,y\r\n1,2,3\r\n2,1,4\r\n3,5,5\r\n4,4,1\r\n", ("a", "b")),  # BOM + CRLF (Excel)
        ("temp\xe9rature;b;y\n1;2;3\n2;1;4\n3;5;5\n4;4;1\n".encode("latin-1"), ("temp\xe9rature", "b")),
        (b'"a","b","y"\n"1.5",2,3\n2,1,4\n3,5,5\n4,4,1\n', ("a", "b")),  # quoted header and values
    ],
)
def test_common_spreadsheet_exports(raw, names):
    ds = read_csv_upload(raw)
    assert ds.feature_names == names
    assert ds.y.tolist() == [3.0, 4.0, 5.0, 1.0]


# ---------------------------------------------------------------------------------------------
# CSV quirks (CR-only line endings, decimal comma)
# ---------------------------------------------------------------------------------------------
def test_cr_only_line_endings_load():
    raw = b"a,b,y\r1.5,2,0.25\r-3,4.5,1\r2,0.5,7\r"
    ds = read_csv_upload(raw)
    np.testing.assert_array_equal(ds.X.to_numpy(), [[1.5, 2.0], [-3.0, 4.5], [2.0, 0.5]])
    np.testing.assert_array_equal(ds.y.to_numpy(), [0.25, 1.0, 7.0])
    assert ds.feature_names == ("a", "b")


def test_cr_only_line_endings_load_semicolon_with_decimal_comma():
    ds = read_csv_upload(b"a;b;y\r1,5;2;0,25\r-3;4,5;1\r2;0,5;7\r")
    np.testing.assert_array_equal(ds.X.to_numpy(), [[1.5, 2.0], [-3.0, 4.5], [2.0, 0.5]])
    np.testing.assert_array_equal(ds.y.to_numpy(), [0.25, 1.0, 7.0])


def test_crlf_line_endings_still_load():
    ds = read_csv_upload(b"a,b,y\r\n1.5,2,0.25\r\n-3,4.5,1\r\n2,0.5,7\r\n")
    np.testing.assert_array_equal(ds.y.to_numpy(), [0.25, 1.0, 7.0])


def test_tab_separated_with_decimal_comma_loads():
    raw = b"a\tb\ty\n1,5\t2\t0,25\n-3\t4,5\t1\n2\t0,125\t7,5\n"
    ds = read_csv_upload(raw)
    np.testing.assert_array_equal(ds.X.to_numpy(), [[1.5, 2.0], [-3.0, 4.5], [2.0, 0.125]])
    np.testing.assert_array_equal(ds.y.to_numpy(), [0.25, 1.0, 7.5])


def test_quoted_decimal_comma_in_a_comma_separated_file_is_named():
    raw = b'a,b,y\n"1,5",2,0.25\n"-3,25",4.5,1\n"2,0",0.5,7\n'
    with pytest.raises(ValueError) as info:
        read_csv_upload(raw)
    msg = str(info.value)
    assert msg.startswith("feature column 'a' is not numeric: 3 of 3 values cannot be read as numbers (data rows 1, 2, 3)")
    assert "decimal comma" in msg and "re-save the file with ';' or tab" in msg
    # the message shows a generic example, never the private entries themselves
    assert "3,25" not in msg and "-3" not in msg


def test_mixed_decimal_marks_in_a_semicolon_file_are_named():
    # column a uses a decimal comma, column b a decimal point: no single reading makes both numeric
    raw = b"a;b;y\n1,5;2.5;1\n2,5;0.5;2\n3,5;1.25;3\n"
    with pytest.raises(ValueError, match="decimal comma .* use one decimal mark throughout"):
        read_csv_upload(raw)


def test_text_that_is_not_a_number_gets_no_decimal_comma_hint():
    raw = b'a,b,y\n"x,y",2,0.25\n"1,5",4.5,1\n"2,0",0.5,7\n'
    with pytest.raises(ValueError, match="is not numeric") as info:
        read_csv_upload(raw)
    assert "decimal comma" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# The task is the caller's choice, never inferred from the private target values
# ---------------------------------------------------------------------------------------------
def test_zero_one_target_is_regression_unless_classification_is_chosen():
    rows = [(i, (i * 7) % 5, i % 2) for i in range(8)]
    ds = read_csv_upload(_csv(["a", "b", "y"], *rows))
    assert ds.task == "regression" and ds.y.dtype == np.float64
    np.testing.assert_array_equal(ds.y.to_numpy(), [i % 2 for i in range(8)])
    ds = read_csv_upload(_csv(["a", "b", "y"], *rows), task="classification")
    assert ds.task == "classification" and ds.y.dtype == np.int64


def test_neighbouring_targets_get_the_same_default_task():
    # Replace-one neighbours: 0/1 labels vs the same labels with one 2. The default task, and so the
    # analysis, must not tell them apart (it used to: classification vs regression).
    rows = [(i, (i * 7) % 5, i % 2) for i in range(8)]
    neighbour = rows[:-1] + [(7, 0, 2)]
    a = read_csv_upload(_csv(["a", "b", "y"], *rows))
    b = read_csv_upload(_csv(["a", "b", "y"], *neighbour))
    assert a.task == b.task == "regression"


def test_boolean_typed_target_is_classification_by_default():
    rows = [(i, (i * 7) % 5, "true" if i % 3 else "False") for i in range(8)]
    ds = read_csv_upload(_csv(["a", "b", "y"], *rows))
    assert ds.task == "classification"
    np.testing.assert_array_equal(ds.y.to_numpy(), [0, 1, 1, 0, 1, 1, 0, 1])
