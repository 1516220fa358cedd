"""The PMT verdict is never green where a prediction that uses no private data does as well, on a small upload in
each public-information mode (labelled public rows, unlabelled public rows, published moments) and each task
whose headline has such a reference (ridge: RMSE against the public mean or the stated centre; logistic: AUC
against a constant score). The upload's target is noise, independent of its features: nothing can be learnt, so
a green verdict there would flatter whichever method the seeds favoured."""

from __future__ import annotations

import numpy as np
import pytest

from engine.datasets import read_csv_upload
from engine.figures import pmt as plots
from ui.common.verdict import pmt_verdict
from ui.pmt.compute import core as C
from ui.pmt.compute.view import PMTView
from ui.pmt.public_mode import restrict_methods


def _upload(task: str, n: int = 600, seed: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0]
    y = rng.normal(size=n) if task == "regression" else (rng.random(n) < 0.4).astype(int)
    lines = ["a,b,c,y"] + [f"{a:.6f},{b:.6f},{c:.6f},{t}" for (a, b, c), t in zip(X, y)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("mode", ["labelled", "unlabelled", "moments"])
@pytest.mark.parametrize("task, metric", [("regression", "rmse"), ("classification", "auc")])
def test_no_green_verdict_on_a_noise_upload(task, metric, mode):
    ds = read_csv_upload(_upload(task), target="y", task=task)
    state = {"data": "upload:noise.csv", "seeds": 5, "epsilon": 1.0, "n_pub": 100, "split_seed": 0,
             "standardize": True}
    spec = C.spec_from_state(state, task=task)
    if mode != "labelled":
        spec = restrict_methods({**spec, "public_mode": mode, "response_center": None,
                                 "response_scale": 1.0 if task == "regression" else None, "moments": None})
    prep = C.prepare(ds, None, standardize=True, n_pub=100, split_seed=0, task=task)
    point = C.sweep(prep, C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))
    diag = C.diagnostics(prep, spec)
    res = PMTView.assemble(spec, prep, point, diag, data_key="test")
    head = plots.headline_table(point, metric=metric, epsilon=spec["epsilon"])
    ref = C.no_data_reference(prep, spec, metric)
    assert ref is not None, (mode, task)  # every case here has a no-data reference
    v = pmt_verdict(res, metric, head)
    assert v.tone != "good", (mode, task, v.text)
