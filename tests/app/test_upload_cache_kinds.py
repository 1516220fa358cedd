"""One "derived from an upload" predicate, a test per upload kind, and the features-only
public file that used to put upload-derived tables and a figure into the cross-session figure cache."""

from __future__ import annotations


import numpy as np
import pytest

from ui.pmt.compute import core as C

from conftest import new_app  # the harness: tests/conftest.py


BUNDLED = {"data": "ccpp", "public_source": "split", "moments": None, "public_features": None}
KINDS = {
    "data": {**BUNDLED, "data": "upload:mine.csv"},
    "public file": {**BUNDLED, "public_source": "file"},
    "features-only public file": {**BUNDLED, "public_features": {"name": "covariates.csv", "n_pub": 300}},
    "moments file": {**BUNDLED, "moments": {"name": "moments.json", "n_pub": 500}},
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_upload_kind_is_derived_from_an_upload(kind):
    spec = KINDS[kind]
    assert C.upload_kinds(spec) == [kind] and C.uses_upload(spec)
    # the diagnostics' shared-cache flag (the planner) reads the same predicate
    assert kind in C.UPLOAD_KINDS


def test_bundled_data_is_not_an_upload_and_kinds_combine():
    assert C.upload_kinds(BUNDLED) == [] and not C.uses_upload(BUNDLED)
    both = {**KINDS["data"], "public_source": "file"}
    assert C.upload_kinds(both) == ["data", "public file"]


def test_a_features_only_public_upload_puts_nothing_into_the_shared_figure_cache():
    """The leak: one run with an uploaded features-only public file stored 4 upload-derived entries (the headline
    table twice, the summary table, a figure) in the cache every session shares."""
    import pandas as pd

    from engine.datasets import load_dataset
    from ui.common import figure_cache as FC

    ds = load_dataset("ccpp")
    X, _ = ds.to_numpy()
    rng = np.random.default_rng(3)
    Xf = X[rng.choice(len(X), 200, replace=False)] * (1 + 0.01 * rng.standard_normal((200, X.shape[1])))
    csv = pd.DataFrame(Xf, columns=list(ds.feature_names)).to_csv(index=False).encode()
    at = new_app("pmt", timeout=300, seeds=2, public_mode="unlabelled", metric="rmse").run()
    at.radio(key="pmt_rows_source").set_value("file").run()
    at.file_uploader(key="pmt_public_features_file").set_value(("covariates.csv", csv, "text/csv")).run()
    at.number_input(key="pmt_response_center").set_value(454.0).run()
    FC.clear()
    at.number_input(key="pmt_response_scale").set_value(17.0).run()  # the run on the uploaded file
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {"PMT", "DP-RR"} <= {m.label for m in at.metric}
    assert FC.stats()["entries"] == 0, FC.stats()
