"""The PMT page's unlabelled-rows mode with an uploaded features-only public CSV (AppTest)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from conftest import new_app  # the harness: tests/conftest.py


TIMEOUT = 300


def _app(**state) -> AppTest:
    return new_app("pmt", timeout=TIMEOUT, **state)


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _csv(frame) -> bytes:
    return frame.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def ccpp():
    from engine.datasets import load_dataset

    ds = load_dataset("ccpp")
    X, y = ds.to_numpy()
    rng = np.random.default_rng(7)
    # public covariates from elsewhere (here: jittered rows of the set), no target column
    Xf = X[rng.choice(len(y), 300, replace=False)] * (1 + 0.01 * rng.standard_normal((300, X.shape[1])))
    return ds, X, y, Xf


def test_features_only_public_file_runs_the_unlabelled_mode_and_bad_files_are_rejected(ccpp):
    import pandas as pd

    from engine.pmt.public_info import PublicInfo
    from engine.pmt.sweep_modes import run_modes

    ds, X, y, Xf = ccpp
    cols = list(ds.feature_names)
    at = _app(seeds=3, public_mode="unlabelled", metric="rmse").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.radio(key="pmt_rows_source").set_value("file").run()
    assert at.error and "features-only public CSV" in at.error[0].value  # nothing uploaded yet: says what to do
    good = pd.DataFrame(Xf[:, ::-1], columns=cols[::-1])  # any column order: matched by name
    at.file_uploader(key="pmt_public_features_file").set_value(("covariates.csv", _csv(good), "text/csv")).run()
    # no labels in the file: the page asks for a stated response scale, never the private rows
    assert at.error and "features-only public file carries no labels" in at.error[0].value
    at.number_input(key="pmt_response_center").set_value(454.0).run()
    at.number_input(key="pmt_response_scale").set_value(17.0).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    m = _metrics(at)
    assert {"PMT", "DP-RR", "DP-GD"} <= set(m) and "Public-only" not in m
    # the engine's mode path on the same rows: every row of the data set private, 20 % held out
    n_test = int(round(0.2 * len(y)))
    perm = np.random.default_rng([0, 1]).permutation(len(y))
    te, tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    f = run_modes(X[tr], y[tr], X[te], y[te], PublicInfo.from_rows(Xf, columns=cols), methods=["pmt", "dp-rr"],
                  epsilons=[1.0], seeds=3, lam=1e-4, standardize=True, response_center=454.0, response_scale=17.0)
    med = f.groupby("method")["rmse"].median()
    assert float(m["PMT"]) == pytest.approx(float(f"{med['PMT']:.3g}"))
    assert float(m["DP-RR"]) == pytest.approx(float(f"{med['DP-RR']:.3g}"))
    first = m["PMT"]
    # the counts the page shows are the mode run's: the file's 300 public rows, every row of the set private
    captions = " ".join(c.value for c in at.caption)
    assert f"{len(tr)} private rows" in captions, captions
    # a missing column: named, in page terms; the accepted file and the numbers stay
    at.file_uploader(key="pmt_public_features_file").set_value(
        ("three.csv", _csv(good.drop(columns=[cols[1]])), "text/csv")).run()
    assert at.error and "not accepted" in at.error[0].value and cols[1] in at.error[0].value
    assert "covariates.csv" in at.error[0].value and at.session_state["pmt_public_features_raw"][0] == "covariates.csv"
    assert _metrics(at)["PMT"] == first
    # a non-numeric entry
    bad = good.astype(object)
    bad.iloc[5, 0] = "n/a"
    at.file_uploader(key="pmt_public_features_file").set_value(("text.csv", _csv(bad), "text/csv")).run()
    assert at.error and "not accepted" in at.error[0].value
    # too few rows for a second moment of d = 5 columns
    at.file_uploader(key="pmt_public_features_file").set_value(("tiny.csv", _csv(good.iloc[:4]), "text/csv")).run()
    assert at.error and "PMT needs more public rows" in at.error[0].value
    assert _metrics(at)["PMT"] == first and at.session_state["public_mode"] == "unlabelled"


def test_read_public_features_names_the_problem():
    from ui.pmt.compute.modes import read_public_features

    good = b"a,b\n1,2\n3,5\n4,4\n6,1\n2,2\n"
    info = read_public_features("p.csv", b"b,a,extra_target\n2,1,9\n5,3,9\n4,4,9\n1,6,9\n2,2,9\n", ["a", "b"])
    assert info.mode == "unlabelled" and info.columns == ("a", "b") and info.n_pub == 5
    np.testing.assert_allclose(info.mean, [3.2, 2.8])
    assert read_public_features("p.csv", good, ["a", "b"]).n_pub == 5
    with pytest.raises(ValueError, match=r"'p.csv' was not accepted.*\['a', 'b', 'c'\]"):
        read_public_features("p.csv", good, ["a", "b", "c"])
    with pytest.raises(ValueError, match="has 3 rows"):
        read_public_features("p.csv", b"a,b\n1,2\n3,5\n4,4\n", ["a", "b"])
    assert json.dumps(info.to_dict())  # what the page's spec carries
