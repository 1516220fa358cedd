"""The lam tab's first partial frame (ui.pmt.run.lazy_sweep): the chosen lam's rows, then the unchanged batch."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ui.pmt.compute import core as C
from ui.pmt.compute import view as V
from ui.pmt import run as R
from ui.common.state import LAM_OPTIONS


class _DS:
    def __init__(self, X, y):
        self.X, self.y = X, y

    def to_numpy(self):
        return self.X, self.y


def test_lam_sweep_shows_the_chosen_lam_first_and_keeps_the_batch_numbers(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 3)) * [1.0, 2.0, 0.5]
    y = (rng.random(1500) < 1 / (1 + np.exp(-(X @ [0.6, -0.4, 0.2] + 0.2)))).astype(float)
    prep = C.prepare(_DS(X, y), standardize=True, n_pub=150, split_seed=1, task="classification")
    spec = {"task": "classification", "data": "t", "epsilon": 2.0, "delta": 1e-5, "lam": 1e-4, "eta": 0.05,
            "seeds": 3, "clip_radius": 0.0, "methods": C.default_methods("classification"), "standardize": True,
            "n_pub": 150, "split_seed": 1, "public_source": "split"}
    point = C.sweep(prep, json.loads(C.dumps(C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))))
    results = V.PMTView(choice=V.Choice(spec), data=V.DataInUse(ds=None, public_ds=None, prep=prep, data_key="k",
                                                                npub_grid=None),
                        results=V.Results(eps=point, eps_point=point), diag=V.Diagnostics({}))
    calls, parts = [], []
    monkeypatch.setattr(R, "ss", {})
    monkeypatch.setattr(R, "sweep", lambda choice, key, data, js: calls.append(js) or C.sweep(data, json.loads(js)))
    got = R.lazy_sweep(results, "lam", on_part=lambda f, done, total: parts.append((f, done, total)))
    # the numbers are the one batch over the lam grid, as before (the CSV export calls the same sweep)
    pd.testing.assert_frame_equal(got, C.sweep(prep, json.loads(C.dumps(C.sweep_spec(spec, "lam", LAM_OPTIONS)))))
    assert len(calls) == 1 and [(d, t) for _, d, t in parts] == [(1, len(LAM_OPTIONS))]
    first = parts[0][0]
    assert (first["sweep"] == "lam").all() and first["lam"].unique().tolist() == [spec["lam"]]
    pd.testing.assert_frame_equal(first.drop(columns="sweep"), point.drop(columns="sweep"))  # the headline's rows
    assert (point["sweep"] == "epsilon").all()  # the shared frame is not changed
    parts.clear()  # computed in this session: no partial figure the second time
    R.lazy_sweep(results, "lam", on_part=lambda *a: parts.append(a))
    assert parts == []
