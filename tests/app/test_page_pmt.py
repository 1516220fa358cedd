"""AppTest flows of the PMT explorer page (app_pages/pmt.py) inside the app.py frame.

Plotly charts are opaque to AppTest, so these tests assert on the headline metrics, the ledger
table, error boxes, session state, the export payloads and the CLI command; the figure builders
are tested directly in tests/engine/test_figures_pmt.py and the real browser in tests/browser/test_browser.py.
"""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from conftest import new_app, regression_csv  # the harness: tests/conftest.py


PAGE = "app_pages/pmt.py"


def _app(**state) -> AppTest:
    return new_app("pmt", **state)


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _num(text: str) -> float:
    return float(str(text).rstrip("x%").replace(",", ""))


# the download spy: tests/conftest.py (captured_downloads / downloads)


def test_bundled_default_draws_headline_metrics_and_ledger(captured_downloads):
    at = _app().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    m = _metrics(at)
    # the three private methods at the chosen epsilon, and the derived headline numbers
    for name in ("PMT", "DP-RR", "DP-GD"):
        assert _num(m[name]) > 0
    # the default headline metric is the held-out test RMSE (the number a user reads), the L2 error beside it
    assert at.selectbox(key="metric").value == "rmse"
    assert 2.0 < _num(m["Non-private"]) < 10.0  # CCPP, MW
    pmt_metric = next(x for x in at.metric if x.label == "PMT")
    assert pmt_metric.proto.delta.startswith("L2 ") and float(pmt_metric.proto.delta.split()[1]) > 0
    # the headline compares PMT with the best of ALL baselines, the public rows alone included
    assert _num(m["Public-only"]) > 0
    assert _num(m["PMT / best baseline"]) == pytest.approx(
        _num(m["PMT"]) / min(_num(m["DP-RR"]), _num(m["DP-GD"]), _num(m["Public-only"])), rel=0.05)
    best = min(("DP-RR", "DP-GD", "Public-only"), key=lambda k: _num(m[k]))
    assert f"({best})" in next(x for x in at.metric if x.label == "PMT / best baseline").help
    kappa_metric = next(x for x in at.metric if x.label == "kappa after PMT")
    assert _num(kappa_metric.value) < 3.0  # PMT whitens: condition number near 1
    raw = float(kappa_metric.proto.delta.split()[-1])
    assert raw > _num(kappa_metric.value)
    mu = _num(m["mu (Gaussian DP)"])
    assert mu == pytest.approx(0.268, abs=0.002)  # mu-GDP for (1, 1e-5)
    # the ledger comes from the engine; the composed total equals the mu shown and epsilon = 1
    assert len(at.dataframe) == 0  # built only when its tab is open
    at.session_state["pmt_tab"] = "Privacy ledger"
    at.run()
    ledger = at.dataframe[0].value
    total = ledger[ledger["name"].str.startswith("total")].iloc[0]
    assert float(total["mu"]) == pytest.approx(mu, rel=1e-3)
    assert float(total["epsilon"]) == pytest.approx(1.0, abs=1e-3)
    assert {"S = Z~^T Z~ (joint x, y)"} <= set(ledger["name"])  # the default (joint) form's one release
    assert [t.label for t in at.tabs] == ["Error vs epsilon", "Error vs lam", "Error vs n_pub", "Conditioning",
                                          "Truncation", "Privacy ledger", "Planner", "Export"]
    assert sum("What this shows" in e.label for e in at.expander) == 1  # the open tab's; a closed tab draws nothing
    # teaching: one expander under each figure tab, drawn while it is open
    for tab in ("Conditioning", "Truncation", "Error vs epsilon"):
        at.session_state["pmt_tab"] = tab
        at.run()
        assert sum("What this shows" in e.label for e in at.expander) == 1, tab
    # exports: the results CSV and the settings JSON (the Export tab's buttons)
    at.session_state["pmt_tab"] = "Export"
    at.run()
    csv = captured_downloads["pmt_results.csv"]
    csv = csv.decode() if isinstance(csv, bytes) else csv
    head = csv.splitlines()[0].split(",")
    for col in ("method", "epsilon", "seed", "lam", "n_pub", "l2_error", "kappa_pmt", "sweep"):
        assert col in head
    assert len(csv.splitlines()) > 500
    settings = json.loads(captured_downloads["pmt_settings.json"])
    assert settings["settings"]["epsilon"] == 1.0 and settings["settings"]["n_pub"] == 200
    assert settings["seeds"] == list(range(20))
    assert settings["versions"]["numpy"] and settings["versions"]["streamlit"]
    assert settings["data"]["name"] == "ccpp" and len(settings["data"]["fingerprint"]) == 16


def test_cli_command_parses_and_matches_the_settings():
    from engine.cli import build_parser

    at = _app().run()
    # code blocks are drawn only while the Export tab is open (a hidden one loaded the browser's syntax highlighter
    # before the first figure)
    assert not [c for c in at.code if "-m engine pmt" in c.value]
    at.session_state["pmt_tab"] = "Export"
    at.run()
    code = [c.value for c in at.code if c.value.startswith(".venv/bin/python -m engine pmt")]
    assert len(code) == 2, "the Export tab shows the CLI commands (headline, figure grid)"
    argv = shlex.split(code[1])[3:]
    args = build_parser().parse_args(argv)
    assert args.command == "pmt" and args.dataset == "ccpp"
    assert 1.0 in args.epsilon and args.delta == 1e-5 and args.n_pub == [200] and args.seeds == 20
    assert args.standardize is True and args.lam == [1e-4]


def test_epsilon_change_updates_metrics_summary_and_survives_page_switch():
    at = _app().run()
    before = _metrics(at)
    assert not any("very strong privacy" in c.value for c in at.caption)
    at.select_slider(key="epsilon").set_value(0.1).run()
    assert not at.exception and not at.error
    after = _metrics(at)
    assert _num(after["mu (Gaussian DP)"]) < _num(before["mu (Gaussian DP)"])
    assert _num(after["PMT"]) > _num(before["PMT"])  # more privacy, more error
    assert any("epsilon** = 0.1" in md.value for md in at.sidebar.markdown)
    assert [c.value for c in at.sidebar.caption].count("Active settings") == 1  # drawn once, then replaced
    assert any("very strong privacy" in c.value for c in at.caption)  # advisory below 0.2
    at.switch_page("app_pages/home.py").run()
    at.switch_page(PAGE).run()
    assert at.select_slider(key="epsilon").value == 0.1
    assert _metrics(at)["PMT"] == after["PMT"]


def test_url_query_parameter_sets_the_view():
    at = new_app("pmt", query={"epsilon": "5", "eta": "7", "lam": "0"}).run()
    assert not at.exception
    assert at.select_slider(key="epsilon").value == 5.0
    assert at.select_slider(key="lam").value == 0.0
    assert _num(_metrics(at)["mu (Gaussian DP)"]) > 1.0
    # a bad value in the link is reported and the default kept
    assert any("eta=7" in w.value for w in at.warning)
    assert at.number_input(key="eta").value == 0.05
    # the page writes the non-default settings back to the URL
    at.select_slider(key="delta").set_value(1e-6).run()
    qp = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert qp["epsilon"] == "5" and qp["lam"] == "0" and qp["delta"] == "1e-06"
    assert "n_pub" not in at.query_params


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("n_pub", 0, "n_pub"),
        ("n_pub", 10**6, "n_pub"),
        ("eta", 1.5, "eta"),
        ("clip_radius", 1e-170, "clip_radius must lie in [1e-100"),  # the widget's min is 0 (0 = automatic)
    ],
)
def test_bad_parameter_shows_error_and_keeps_other_settings(key, value, needle):
    at = _app(seeds=5, epsilon=2.0).run()
    assert not at.error
    if key == "clip_radius":  # bounded input: 0 (automatic) to 1e15
        assert (at.number_input(key=key).min, at.number_input(key=key).max) == (0.0, 1e15)
    at.number_input(key=key).set_value(value).run()
    assert not at.exception, at.exception
    assert at.error, f"{key}={value} should show an error box"
    assert needle in at.error[0].value
    assert "PMT" not in _metrics(at)
    # the other settings and the data are unchanged
    assert at.select_slider(key="epsilon").value == 2.0
    assert at.session_state["data"] == "ccpp"
    at.number_input(key=key).set_value({"n_pub": 200, "eta": 0.05, "clip_radius": 0.0}[key]).run()
    assert not at.error and "PMT" in _metrics(at)


def test_upload_choose_target_plots_and_export(captured_downloads, upload_csv):
    at = _app(seeds=5).run()
    at.file_uploader(key="pmt_upload_file").set_value(("plant.csv", upload_csv(), "text/csv")).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="pmt_upload_target").value == "output"  # default: the last column
    at.multiselect(key="pmt_upload_features").set_value(["temp", "speed", "load"]).run()
    btn = next(b for b in at.button if b.label == "Use this data")
    btn.click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["data"] == "upload:plant.csv"
    assert at.session_state["dataset_name"] == "upload:plant.csv"
    up = at.session_state["uploaded_dataset"]
    assert up.feature_names == ("temp", "speed", "load") and up.target_name == "output"
    assert "PMT" in _metrics(at)
    assert any("upload:plant.csv" in c.value and "target **output**" in c.value for c in at.caption)
    at.session_state["pmt_tab"] = "Export"  # its buttons and code blocks are drawn while it is open
    at.run()
    settings = json.loads(captured_downloads["pmt_settings.json"])
    assert settings["data"]["features"] == ["temp", "speed", "load"] and settings["data"]["target"] == "output"
    cmd = next(c.value for c in at.code if "-m engine pmt" in c.value)
    assert "--data /path/to/plant.csv --target output --features temp speed load" in cmd  # placeholder folder
    # computations on the upload are memoised in this session only, never in the server-wide st.cache_data
    memo = at.session_state["_pmt_session_cache"]
    assert {k[0] for k in memo} >= {"_prepare_raw", "_sweep_raw", "_diagnostics_raw"}


def test_bad_upload_shows_error_and_previous_data_stay_selected():
    at = _app(seeds=5).run()
    before = _metrics(at)["PMT"]
    at.file_uploader(key="pmt_upload_file").set_value(("broken.csv", b"a,b,y\n1,2,oops\n3,4,5\n5,6,7\n",
                                                        "text/csv")).run()
    btn = next(b for b in at.button if b.label == "Use this data")
    btn.click().run()
    assert not at.exception
    assert at.error and "broken.csv" in at.error[0].value and "'y'" in at.error[0].value
    assert at.session_state["data"] == "ccpp"
    assert at.session_state.get("uploaded_dataset") is None
    assert _metrics(at)["PMT"] == before  # the figures of the previous data are still shown


def test_empty_upload_error_names_the_problem():
    at = _app(seeds=5).run()
    at.file_uploader(key="pmt_upload_file").set_value(("empty.csv", b"", "text/csv")).run()
    assert not at.exception
    assert at.error and "empty" in at.error[0].value.lower()
    assert at.session_state["data"] == "ccpp" and "PMT" in _metrics(at)


def test_synthetic_data_and_lam_zero():
    at = _app(seeds=5, dataset_name="synthetic", synthetic_kappa=1e4, lam=0.0).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="data").value == "synthetic" and at.select_slider(key="lam").value == 0.0
    k = next(x for x in at.metric if x.label == "kappa after PMT")
    assert float(k.proto.delta.split()[-1]) > 1e3  # raw kappa of the synthetic design
    assert _num(k.value) < 3.0
    assert at.session_state["dataset_name"] == "synthetic"


def test_separate_public_file_and_a_mismatched_one():
    from engine.datasets import load_dataset

    ds = load_dataset("ccpp")
    frame = ds.X.assign(PE=ds.y).iloc[:150]
    at = _app(seeds=5).run()
    at.radio(key="public_source").set_value("file").run()
    assert at.error and "public CSV" in at.error[0].value  # nothing uploaded yet: says what to do
    at.file_uploader(key="pmt_public_file").set_value(("public.csv", frame.to_csv(index=False).encode(),
                                                       "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("150 public rows (separate public file)" in c.value for c in at.caption)
    at.session_state["pmt_tab"] = "Error vs n_pub"
    at.run()
    assert any("nothing to sweep" in i.value for i in at.info)  # the n_pub tab explains itself
    assert "PMT" in _metrics(at)
    # a public file without the target column is rejected with the column named; settings stay
    bad = frame.drop(columns=["PE"]).to_csv(index=False).encode()
    at.file_uploader(key="pmt_public_file").set_value(("public2.csv", bad, "text/csv")).run()
    assert at.error and "public2.csv" in at.error[0].value and "PE" in at.error[0].value
    assert at.radio(key="public_source").value == "file" and at.session_state["data"] == "ccpp"


def _logistic_csv(n=800, seed=1) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 0.2]
    p = 1 / (1 + np.exp(-(X @ [1.5, -0.4, 4.0] + 0.3)))
    y = (rng.random(n) < p).astype(int)
    rows = ["a,b,c,label"] + [f"{r[0]:.5f},{r[1]:.5f},{r[2]:.5f},{t}" for r, t in zip(X, y)]
    return ("\n".join(rows) + "\n").encode()


def test_logistic_task_from_a_classification_upload():
    from ui.pmt.compute import core as C
    from ui.pmt.compute import export as X

    if "classification" not in C.supported_tasks():
        pytest.skip("the engine registers no logistic task")
    at = _app(seeds=3).run()
    at.file_uploader(key="pmt_upload_file").set_value(("labels.csv", _logistic_csv(), "text/csv")).run()
    at.selectbox(key="pmt_upload_task").set_value("classification").run()  # the user's choice, never inferred
    next(b for b in at.button if b.label == "Use this data").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # a classification upload: the page switches to logistic regression
    assert at.session_state["task"] == "classification" and at.session_state["data"] == "upload:labels.csv"
    assert at.session_state["methods"] == C.default_methods("classification")
    assert "DP-Newton" in at.session_state["methods"]
    assert at.selectbox(key="metric").value == "auc"  # the default that separates the methods
    m = _metrics(at)
    for name in ("PMT", "DP-Newton", "DP-GD", "Non-private"):
        assert 0.5 <= _num(m[name]) <= 1.0  # held-out ROC AUC
    assert _num(m["Non-private"]) > 0.7
    assert any("higher is better" in md.value for md in at.markdown)
    at.session_state["pmt_tab"] = "Privacy ledger"
    at.run()
    ledger = at.dataframe[0].value
    assert ledger["name"].str.contains("gradient").any() and ledger["name"].str.contains("Hessian").any()
    assert float(ledger.iloc[-1]["epsilon"]) == pytest.approx(1.0, abs=1e-3)
    if X.cli_supported({"task": "classification"}):  # the CLI cannot run it yet: said, not a broken command
        at.session_state["pmt_tab"] = "Export"  # what the Export tab says, while it is open
        at.run()
        assert not [c for c in at.code if "-m engine pmt" in c.value]
        assert any("logistic task" in i.value for i in at.info)
    # back to ridge: ridge methods and metric again, a regression data set
    at.radio(key="task").set_value("regression").run()
    assert not at.error
    assert at.session_state["methods"] == C.default_methods("regression")
    assert at.selectbox(key="metric").value == "rmse" and at.session_state["data"] == "wine-red"


@pytest.mark.slow
def test_logistic_task_on_bank():
    from ui.pmt.compute import core as C
    from ui.pmt.compute import export as X

    if "classification" not in C.supported_tasks():
        pytest.skip("the engine registers no logistic task")
    at = _app(seeds=3).run()
    at.radio(key="task").set_value("classification").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["data"] == "bank"
    assert 0.7 <= _num(_metrics(at)["Non-private"]) <= 1.0  # held-out ROC AUC (the logistic default)


def test_supported_tasks_follow_the_engine_registry(monkeypatch):
    from engine.pmt import sweep as E
    from ui.pmt.compute import core as C
    from ui.pmt.compute import export as X

    monkeypatch.setattr(E, "TASKS", {"ridge": E.TASKS["ridge"]})
    assert C.supported_tasks() == ["regression"]
    monkeypatch.setattr(E, "TASKS", {"ridge": E.TASKS["ridge"], "logistic": object()})
    assert C.supported_tasks() == ["regression", "classification"]


def test_metric_switch_redraws_the_panel_with_the_reference():
    at = _app().run()
    at.selectbox(key="metric").set_value("l2_error").run()
    assert "Non-private" not in _metrics(at)  # its L2 error to itself is 0 by definition: not a headline
    at.selectbox(key="metric").set_value("rmse").run()
    assert not at.exception and not at.error
    m = _metrics(at)
    # held-out RMSE of the non-private fit is a real reference (CCPP: a few MW), the private ones are above it
    assert 2.0 < _num(m["Non-private"]) < 10.0
    assert _num(m["PMT"]) >= _num(m["Non-private"]) * 0.99
    assert any("held-out RMSE" in md.value for md in at.markdown)


def test_data_page_choice_and_pmt_choice_are_shared():
    at = _app(seeds=3).run()
    at.switch_page("app_pages/data.py").run()
    at.selectbox(key="data_active_choice").set_value("wine-red").run()
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="data").value == "wine-red"
    assert any("**wine-red**: 1599 rows, 11 features" in c.value for c in at.caption)
    at.selectbox(key="data").set_value("wine-white").run()
    at.switch_page("app_pages/data.py").run()
    assert at.selectbox(key="data_active_choice").value == "wine-white"


def test_each_figure_tab_draws_its_chart_when_opened():
    at = _app(seeds=5).run()
    assert len(at.get("plotly_chart")) == 1  # only the open tab's figure is built
    for tab in ("Error vs lam", "Error vs n_pub", "Conditioning", "Truncation"):
        at.session_state["pmt_tab"] = tab
        at.run()
        assert not at.exception and not at.error, (tab, [e.value for e in at.error])
        assert len(at.get("plotly_chart")) == 1, tab
    assert any("R = " in c.value and "baseline clip radius C" in c.value for c in at.caption)
    at.session_state["pmt_tab"] = "Privacy ledger"
    at.run()
    assert len(at.get("plotly_chart")) == 0 and len(at.dataframe) == 1


def test_link_naming_a_classification_data_set_opens_the_logistic_task():
    from ui.pmt.compute import core as C
    from ui.pmt.compute import export as X

    if "classification" not in C.supported_tasks():
        pytest.skip("the engine registers no logistic task")
    at = new_app("pmt", query={"data": "bank", "seeds": "1", "methods": "pmt,non-private"}).run()
    assert not at.exception
    assert at.session_state["task"] == "classification" and at.selectbox(key="data").value == "bank"
    assert at.session_state["methods"] == ["PMT", "Non-private"]  # the link's methods are kept
    assert at.selectbox(key="metric").value == "auc"


# ------------------------------------------------------------------------------------------------
# Noise-dominated banner, public-share cap, public-only in the headline
# ------------------------------------------------------------------------------------------------
def _use_upload(at, n=400):
    at.file_uploader(key="pmt_upload_file").set_value(("plant.csv", regression_csv(n=n), "text/csv")).run()
    at.multiselect(key="pmt_upload_features").set_value(["temp", "speed", "load"]).run()
    next(b for b in at.button if b.label == "Use this data").click().run()
    assert not at.exception, at.exception
    assert at.session_state["data"] == "upload:plant.csv"


def test_small_upload_at_small_epsilon_shows_the_noise_dominated_banner_with_rows_needed():
    import re

    at = _app(seeds=5).run()
    _use_upload(at, n=400)
    # the default n_pub is capped at 20 % of the rows (80 of 400), so no share warning appears
    assert at.number_input(key="n_pub").value == 80
    assert not any("rows public" in w.value for w in at.warning)
    at.select_slider(key="epsilon").set_value(0.1).run()
    assert not at.exception, at.exception
    banners = [w.value for w in at.warning if "noise-dominated" in w.value or "less precise than the public" in w.value]
    assert banners, [w.value for w in at.warning]
    m = re.search(r"PMT would need about ([\d,]+) private rows at this epsilon, n_pub = \d+ and lam = \S+ to beat "
                  r"the (\d+) public rows", banners[0])  # the planner's crossover_n
    assert m, banners[0]
    need, n_pub = int(m.group(1).replace(",", "")), int(m.group(2))
    n_priv = int(re.search(r"n = (\d+) private rows", banners[0]).group(1))
    assert n_pub == 80 and n_priv < 400 - 80
    assert need > n_priv  # the banner is only shown when the private rows are too few
    # at a large epsilon on a large bundled set the private part is not noise-dominated: no banner
    at2 = _app(seeds=5, data="ccpp", epsilon=10.0).run()
    assert not any("PMT would need about" in w.value for w in at2.warning), [w.value for w in at2.warning]


def test_n_pub_above_the_share_cap_shows_the_warning():
    at = _app(seeds=5).run()  # ccpp, 9568 rows
    assert at.selectbox(key="data").value == "ccpp"
    assert not any("rows public" in w.value for w in at.warning)
    at.number_input(key="n_pub").set_value(1900).run()  # 19.9 %: under the cap, no warning
    assert not any("rows public" in w.value for w in at.warning)
    at.number_input(key="n_pub").set_value(2400).run()  # 25 % > 20 %
    assert not at.exception, at.exception
    msgs = [w.value for w in at.warning if "rows public" in w.value]
    assert msgs and "n_pub = 2400 makes 25% of the 9568 rows public" in msgs[0], [w.value for w in at.warning]
    assert "min(200, 20% of the rows)" in msgs[0]
