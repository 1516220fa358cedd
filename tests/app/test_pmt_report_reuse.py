"""The HTML report reuses what the page built, with the same numbers; the page's first run has the browser
load the Plotly chart's and the metric's code while the server computes.

- A ledger converts each distinct mu to epsilon once (DP-GD records one release per step, all with the
  same mu; converting each took about 0.5 s of every report click): every row's epsilon equals the
  release's own conversion.
- The report's figures come through the page's figure cache (:mod:`ui.common.figure_cache`): the same figures
  as built directly (equal JSON), and the error-vs-epsilon figure is the page's own cache entry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import new_app  # the harness: tests/conftest.py


def test_ledger_rows_convert_each_distinct_mu_once_with_the_same_epsilons(monkeypatch):
    import engine.privacy as P

    led = P.PrivacyLedger(delta=1e-6)
    sigmas = [2.0] * 40 + [0.7, 3.5, 2.0, 0.7] + [9.0] * 10
    for i, s in enumerate(sigmas):
        led.record(f"step {i}", sensitivity=1.3, sigma=s)
    want = [P.gdp_epsilon(r.mu, 1e-6) for r in led.releases] + [P.gdp_epsilon(led.total_mu, 1e-6)]
    calls = []
    real = P.gdp_epsilon
    monkeypatch.setattr(P, "gdp_epsilon", lambda mu, delta: calls.append(mu) or real(mu, delta))
    rows = led.to_records()
    assert [r["epsilon"] for r in rows] == want
    assert [r["name"] for r in rows[:-1]] == [f"step {i}" for i in range(len(sigmas))]
    assert len(calls) == len(set(sigmas)) + 1  # one per distinct mu, plus the total
    frame = led.to_frame()
    assert frame["epsilon"].tolist() == want and len(frame) == len(sigmas) + 1


@pytest.fixture(scope="module")
def ccpp_view():
    from ui.pmt.compute import core as C
    from engine.datasets import load_dataset

    prep = C.prepare(load_dataset("ccpp"), None, standardize=True, n_pub=200, split_seed=0, task="regression")
    spec = {**C.spec_from_state({}, task="regression"), "seeds": 3}
    diag = C.diagnostics(prep, spec)
    eps = C.sweep(prep, C.sweep_spec(spec, "epsilon", [0.3, 1.0, 3.0]))
    return spec, diag, C.summarize(eps, "rmse", "epsilon")


def test_the_reports_figures_through_the_cache_equal_the_directly_built_ones(ccpp_view):
    from engine.figures import pmt as plots
    from ui.common import figure_cache as FC

    spec, diag, summ = ccpp_view
    FC.clear()
    cases = [(plots.error_vs_epsilon_figure, (summ,), dict(metric="rmse", epsilon=1.0, log_y=True)),
             (plots.conditioning_figure, (diag["kappas"], diag["spectra"]), {}),
             (plots.truncation_figure, (diag["raw_norms"], diag["pmt_norms"]),
              dict(radius=diag["radius"], clip_radius=diag["clip_radius"], frac_truncated=diag["frac_truncated"]))]
    for builder, args, kw in cases:
        direct = json.loads(builder(*args, **kw).to_json())
        assert direct["data"]  # a drawn figure, not an empty one
        assert json.loads(FC.figure(builder, *args, **kw).to_json()) == direct  # a miss: built, stored
        assert json.loads(FC.figure(builder, *args, **kw).to_json()) == direct  # a hit
        assert json.loads(FC.figure(builder, *args, shared=False, **kw).to_json()) == direct
    assert FC.stats()["hits"] == 3 and FC.stats()["misses"] == 3
    FC.clear()


def test_the_first_pmt_run_has_the_browser_load_the_chart_and_metric_code_first_then_not_again():
    import streamlit as st

    from ui.common import layout as R

    names = R._chunk_names()
    assert {n.split(".")[0] for n in names} == set(R.WARM_CHUNKS)  # this Streamlit's files are found
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    assert all((folder / n).is_file() for n in names)
    at = new_app("pmt", timeout=300, seeds=2).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    scripts = [h.proto.body for h in at.get("html") if "import(new URL(" in h.proto.body]
    assert len(scripts) == 1 and all(json.dumps(n) in scripts[0] for n in names)
    assert len(at.get("plotly_chart")) == 1  # nothing drawn for it: the one chart is the open tab's figure
    at.select_slider(key="epsilon").set_value(0.7).run()
    assert not [h for h in at.get("html") if "import(new URL(" in h.proto.body]  # once per session
