"""The PMT page's typed view (ui.pmt.compute.view): one "derived from an upload?" answer that every cache reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ui.pmt.compute import core as C
from ui.pmt.compute import view as V

BUNDLED = {"task": "regression", "data": "ccpp", "public_source": "split", "epsilon": 1.0, "delta": 1e-5,
           "lam": 1e-4, "eta": 0.05, "seeds": 3, "n_pub": 200, "methods": ["PMT", "DP-RR"], "split_seed": 0}
UPLOADS = {
    "data": {"data": "upload:mine.csv"},
    "public file": {"public_source": "file"},
    "features-only public file": {"public_features": {"name": "covariates.csv", "n_pub": 300}},
    "moments file": {"moments": {"name": "moments.json", "n_pub": 500}},
}


def _view(spec: dict) -> V.PMTView:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=300)

    class _DS:
        def to_numpy(self):
            return X, y

    prep = C.prepare(_DS(), standardize=True, n_pub=50, split_seed=0)
    choice = V.Choice(spec)
    frame = pd.DataFrame({"method": ["PMT"], "epsilon": [1.0]})
    return V.PMTView(choice=choice, data=V.DataInUse(ds=None, public_ds=None, prep=prep, data_key="d", npub_grid=None),
                     results=V.Results(eps=frame, eps_point=frame),
                     diag=V.Diagnostics.of({"kappa_pmt": 1.5, "ledgers": None}, choice))


@pytest.mark.parametrize("kind", list(UPLOADS))
def test_each_upload_kind_is_an_upload_for_every_reader(kind):
    spec = {**BUNDLED, **UPLOADS[kind]}
    choice = V.Choice(spec)
    assert choice.upload_kinds == (kind,) and choice.is_upload
    assert C.uses_upload(spec) and C.upload_kinds(spec) == [kind]  # the compute layer asks the view
    from ui.common.view_store import _is_upload

    assert _is_upload(choice.json)  # the disk store reads the same answer from the spec's JSON
    view = _view(spec)
    assert view.is_upload and not view.shared
    assert view.diag.values["shared_cache"] is False  # the planner's flag is the view's


def test_a_bundled_view_is_shared_and_kinds_combine():
    view = _view(BUNDLED)
    assert not view.is_upload and view.shared and view.diag.values["shared_cache"] is True
    both = V.Choice({**BUNDLED, **UPLOADS["data"], **UPLOADS["moments file"]})
    assert both.upload_kinds == ("data", "moments file")
    assert V.Choice.from_json("not json").is_upload and V.Choice.from_json("[1, 2]").is_upload


def test_diagnostics_of_does_not_change_the_cached_dict_and_reads_typed():
    raw = {"kappa_pmt": np.float64(2.5), "ledgers": None}
    d = V.Diagnostics.of(raw, V.Choice(BUNDLED))
    assert "shared_cache" not in raw and d.kappa_pmt == 2.5 and d.ledgers is None and d.public_mode == "labelled"


def test_the_choice_reads_the_spec():
    c = V.Choice({**BUNDLED, "public_mode": "moments"})
    assert (c.task, c.epsilon, c.seeds, c.n_pub, c.methods, c.public_mode) == (
        "regression", 1.0, 3, 200, ("PMT", "DP-RR"), "moments")
    assert c.json == C.dumps(c.spec) and not c.public_file


def test_the_prefetch_skips_an_upload_and_queues_a_bundled_view(monkeypatch):
    from ui.pmt import prefetch as P

    submitted = []

    class _Pool:
        def submit(self, fn):
            submitted.append(fn)

    monkeypatch.setattr(P, "_POOL", _Pool())
    P.forget()
    P._WAITING.clear()
    P.neighbours(_view({**BUNDLED, **UPLOADS["features-only public file"]}), cached={})
    assert submitted == [] and "request" not in P._WAITING
    P.neighbours(_view(BUNDLED), cached={})
    jobs = P._WAITING.pop("request")[0]
    assert len(submitted) == 1 and {kind for _, kind, _ in jobs} == {"sweep", "diagnostics"}
    P._IDLE.set()
    P.forget()
