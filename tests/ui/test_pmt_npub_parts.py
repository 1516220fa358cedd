"""The PMT page's n_pub sweep, one public sample size at a time (ui.pmt.run.lazy_sweep).

The tab fetches each n_pub through the page cache and takes the chosen n_pub's rows from the chosen
epsilon's sweep; these tests pin that this gives the very frame of one ``run_sweep`` over the grid, row
for row, and that the partial frames the tab draws are prefixes of it in the grid's order.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ui.pmt.compute import core as C
from ui.pmt.compute import view as V
from ui.pmt import run as R


class _DS:
    def __init__(self, X, y):
        self.X, self.y = X, y

    def to_numpy(self):
        return self.X, self.y


def _data(task):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1400, 3)) * [1.0, 2.0, 0.5]
    if task == "classification":
        y = (rng.random(1400) < 1 / (1 + np.exp(-(X @ [0.6, -0.4, 0.2] + 0.2)))).astype(float)
    else:
        y = X @ [1.0, -2.0, 0.5] + rng.normal(size=1400)
    return _DS(X, y)


def _spec(task):
    methods = C.default_methods(task)
    return {"task": task, "data": "t", "epsilon": 2.0, "delta": 1e-5, "lam": 1e-3, "eta": 0.05, "seeds": 3,
            "clip_radius": 0.0, "methods": methods, "standardize": True, "n_pub": 100, "split_seed": 1,
            "public_source": "split"}


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_npub_sweep_by_parts_is_the_one_call_frame(task, monkeypatch):
    spec = _spec(task)
    prep = C.prepare(_data(task), standardize=True, n_pub=100, split_seed=1, task=task)
    grid = [50, 100, 200]
    point = C.sweep(prep, json.loads(C.dumps(C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))))
    results = V.PMTView(choice=V.Choice(spec), data=V.DataInUse(ds=None, public_ds=None, prep=prep, data_key="k",
                                                                npub_grid=tuple(grid)),
                        results=V.Results(eps=point, eps_point=point), diag=V.Diagnostics({}))
    calls, parts = [], []
    monkeypatch.setattr(R, "ss", {})
    monkeypatch.setattr(R, "sweep", lambda choice, key, data, js: calls.append(js) or C.sweep(data, json.loads(js)))
    got = R.lazy_sweep(results, "n_pub", on_part=lambda f, done, total: parts.append((f, done, total)))
    whole = C.sweep(prep, json.loads(C.dumps(C.sweep_spec(spec, "n_pub", grid))))
    pd.testing.assert_frame_equal(got, whole)
    assert len(calls) == 2  # the chosen n_pub = 100 is the chosen epsilon's sweep, not computed again
    assert [(d, t) for _, d, t in parts] == [(1, 3), (2, 3)]
    assert parts[0][0]["n_pub"].unique().tolist() == [100] and parts[1][0]["n_pub"].unique().tolist() == [50, 100]
    # a second call (all sizes computed in this session) draws no partial figure
    parts.clear()
    pd.testing.assert_frame_equal(R.lazy_sweep(results, "n_pub", on_part=lambda *a: parts.append(a)), whole)
    assert parts == []
