"""Story presets (ui.presets): each link opens a view whose point holds in the numbers.

The view of each link is computed as the page computes it: the page defaults, the link's settings read
with the page's link codec (ui.state.URL_CODEC), the split and sweep of ui.pmt_compute, the headline
table of engine.figures.pmt, the verdict of engine.figures.verdict.
"""

from __future__ import annotations

from engine.datasets import load_dataset
from engine.figures.pmt import headline_table
from engine.figures.verdict import pmt_verdict
from ui import pmt_compute as C
from ui.presets import PRESETS, markdown_links
from ui.state import DEFAULTS, URL_CODEC

BY_KEY = {p.key: p for p in PRESETS}


def _view(preset, **override):
    state = {**DEFAULTS, "data": "ccpp", "synthetic_kappa": 1e3}
    for k, v in preset.params.items():
        state[k] = URL_CODEC[k][0](v)
    state.update(override)
    spec = C.spec_from_state(state, task=state["task"])
    ds = load_dataset("synthetic", kappa=spec["synthetic_kappa"]) if spec["data"] == "synthetic" else load_dataset(spec["data"])
    prep = C.prepare(ds, standardize=spec["standardize"], n_pub=spec["n_pub"], split_seed=spec["split_seed"])
    frame = C.sweep(prep, C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))
    head = headline_table(frame, metric=spec.get("metric", "l2_error"), epsilon=spec["epsilon"])
    return spec, prep, {m: float(v) for m, v in zip(head["method"], head["median"])}, head


def test_every_preset_is_a_valid_link_and_is_listed():
    for p in PRESETS:
        for k, v in p.params.items():
            URL_CODEC[k][0](v)  # raises on a value the page would ignore
        assert f"(/{p.url})" in markdown_links()


def test_when_the_public_rows_are_enough():
    spec, prep, med, head = _view(BY_KEY["public_enough"])
    assert med["Public-only"] < min(med[m] for m in ("PMT", "DP-RR", "DP-GD"))
    v = pmt_verdict(head, metric_label="L2 estimation error", lower_better=True, epsilon=spec["epsilon"],
                    n_priv=prep.n_priv, n_pub=prep.n_pub)
    assert v.winner == "Public-only" and prep.n_priv == 7494 and "7,494" in BY_KEY["public_enough"].point


def test_why_conditioning_matters():
    spec, prep, med, _ = _view(BY_KEY["conditioning"])
    assert spec["synthetic_kappa"] == 1e5
    assert med["PMT"] * 10 < med["DP-RR"], med  # "far below": more than ten times


def test_what_epsilon_costs_in_accuracy():
    _, _, low, _ = _view(BY_KEY["epsilon_cost"])
    _, _, high, _ = _view(BY_KEY["epsilon_cost"], epsilon=10.0)
    assert low["PMT"] > 10 * high["PMT"], (low, high)
