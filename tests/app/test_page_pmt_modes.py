"""The PMT page in each kind of public information: labelled rows, unlabelled rows, published moments.

AppTest flows (headline, tabs, exports, the moments upload and its rejection) and the mode path of
:mod:`ui.pmt.compute.modes` against the engine's :func:`engine.pmt.sweep_modes.run_modes` directly; the
figure builders are called on the mode frames (Plotly charts are opaque to AppTest).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from conftest import new_app  # the harness: tests/conftest.py


ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300


# the download spy: tests/conftest.py (captured_downloads / downloads)


def _app(**state) -> AppTest:
    return new_app("pmt", timeout=TIMEOUT, **state)


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _text(x) -> str:
    return x.decode() if isinstance(x, bytes) else x


def _ccpp_public_rows(n_pub=200, split_seed=0):
    from engine.datasets import load_dataset
    from engine.pmt.sweep import sweep_split

    ds = load_dataset("ccpp")
    X, y = ds.to_numpy()
    return ds, sweep_split(X, y, n_pub=n_pub, split_seed=split_seed, test_size=0.2)


@pytest.mark.parametrize("mode", ["labelled", "unlabelled", "moments"])
def test_each_mode_draws_headline_tabs_and_exports(mode, captured_downloads):
    at = _app(seeds=3, public_mode=mode).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    m = _metrics(at)
    assert {"PMT", "DP-RR", "DP-GD"} <= set(m)
    why = [c.value for c in at.caption if "PMT-pooled are not offered" in c.value]
    if mode == "labelled":
        assert "Public-only" in m and not why
    else:
        assert "Public-only" not in m and "PMT-pooled" not in m
        assert len(why) == 1 and ("unlabelled public rows" if mode == "unlabelled" else "published moments") in why[0]
    for tab in ("Error vs lam", "Error vs n_pub", "Conditioning", "Truncation", "Privacy ledger", "Planner"):
        at.session_state["pmt_tab"] = tab
        at.run()
        assert not at.exception and not at.error, (tab, [e.value for e in at.error])
        if tab == "Privacy ledger":
            ledger = at.dataframe[0].value
            total = ledger[ledger["name"].str.startswith("total")].iloc[0]
            assert float(total["epsilon"]) == pytest.approx(1.0, abs=1e-3)
    csv = _text(captured_downloads["pmt_results.csv"])
    settings = json.loads(captured_downloads["pmt_settings.json"])
    report = _text(captured_downloads["pmt_report.html"])
    assert "<html" in report.lower() and "PMT" in report
    if mode == "labelled":
        assert "public_mode" not in settings["settings"]
    else:
        head = csv.splitlines()[0].split(",")
        assert "mode" in head and "rmse" in head
        col = head.index("mode")
        assert {r.split(",")[col] for r in csv.splitlines()[1:] if r} == {mode}
        assert settings["settings"]["public_mode"] == mode
        assert "Public-only" not in settings["settings"]["methods"]
        assert mode in report


def test_unlabelled_page_numbers_are_the_engines_mode_path():
    """The headline PMT median is run_modes' on the same split, with the simulated public statement of y."""
    from engine.pmt.sweep_modes import public_response_statement, run_modes, simulate_public_info

    at = _app(seeds=3, public_mode="unlabelled", metric="rmse").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ds, (Xq, yq, Xtr, ytr, Xte, yte) = _ccpp_public_rows()
    c, s = public_response_statement(yq)
    f = run_modes(Xtr, ytr, Xte, yte, simulate_public_info(Xq, yq, "unlabelled"), methods=["pmt", "dp-rr"],
                  epsilons=[1.0], seeds=3, lam=1e-4, standardize=True, response_center=c, response_scale=s)
    med = f.groupby("method")["rmse"].median()
    m = _metrics(at)
    assert float(m["PMT"]) == pytest.approx(float(f"{med['PMT']:.3g}"))
    assert float(m["DP-RR"]) == pytest.approx(float(f"{med['DP-RR']:.3g}"))


def test_a_stated_response_scale_changes_the_bound():
    at = _app(seeds=3, public_mode="unlabelled", metric="rmse").run()
    before = _metrics(at)["PMT"]
    at.number_input(key="pmt_response_scale").set_value(500.0).run()
    assert not at.error and not at.exception
    assert float(_metrics(at)["PMT"]) > float(before)  # a 30x larger stated scale: more noise on b


def test_moments_file_upload_matches_the_split_and_a_bad_file_is_rejected(captured_downloads):
    from engine.pmt.public_info import PublicInfo
    from engine.pmt.sweep_modes import public_response_statement

    ds, (Xq, yq, *_rest) = _ccpp_public_rows()
    c, s = public_response_statement(yq)
    good = json.dumps(PublicInfo.from_rows(Xq, columns=list(ds.feature_names)).to_dict()).encode()
    at = _app(seeds=3, public_mode="moments", metric="rmse").run()
    assert _metrics(at)["PMT"]  # the split view computes first
    at.radio(key="pmt_moments_source").set_value("file").run()
    assert at.error and "moments file" in at.error[0].value  # nothing uploaded yet: says what to do
    at.file_uploader(key="pmt_moments_file").set_value(("moments.json", good, "application/json")).run()
    # a moments file carries no labels: the page asks for a stated scale, never the private rows
    assert at.error and "response scale" in at.error[0].value
    at.number_input(key="pmt_response_center").set_value(c).run()
    at.number_input(key="pmt_response_scale").set_value(s).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # a public file means no public split: every row of the data set is private, so the release
    # differs from the split's (200 rows set aside there); tests/test_export_one_truth.py checks its numbers
    from_file = _metrics(at)["PMT"]
    captions = " ".join(c.value for c in at.caption)
    assert "200 public" in captions and "7,654 private" in captions, captions
    report = _text(captured_downloads["pmt_report.html"])
    assert "moments.json (n_pub 200)" in report and "no public split" in report
    settings = json.loads(captured_downloads["pmt_settings.json"])
    assert settings["settings"]["moments"]["n_pub"] == 200
    assert "--public-moments /path/to/moments.json" in settings["cli"]["headline"]
    # an asymmetric matrix: the engine's reason, in page terms; the accepted file and the settings stay
    bad = json.loads(good)
    bad["second_moment"][0][1] += 50.0
    at.file_uploader(key="pmt_moments_file").set_value(("bad.json", json.dumps(bad).encode(), "application/json")).run()
    assert at.error and "not accepted" in at.error[0].value and "symmetric" in at.error[0].value
    assert "moments.json" in at.error[0].value
    assert at.session_state["pmt_moments_raw"][0] == "moments.json"
    assert _metrics(at)["PMT"] == from_file and at.session_state["public_mode"] == "moments"
    # columns that do not match the data set: named, and the previous numbers' settings are kept
    other = PublicInfo.from_rows(Xq, columns=["a", "b", "c", "d"]).to_dict()
    at.file_uploader(key="pmt_moments_file").set_value(("other.json", json.dumps(other).encode(),
                                                        "application/json")).run()
    assert at.error and "does not fit the data set" in at.error[0].value
    assert at.session_state["data"] == "ccpp" and at.session_state["epsilon"] == 1.0


def test_mode_sweep_logistic_and_the_figure_builders():
    """The mode path on a small logistic problem: AUC columns, no public-only, figures build from its summary."""
    from engine.figures import pmt as plots
    from engine.datasets.upload import read_csv_upload
    from ui.pmt.compute import core as C
    from ui.pmt.compute.modes import mode_diagnostics, mode_sweep

    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 3))
    y = (rng.random(1500) < 1 / (1 + np.exp(-(X @ [1.5, -1.0, 0.5])))).astype(int)
    rows = ["a,b,c,label"] + [f"{r[0]:.5f},{r[1]:.5f},{r[2]:.5f},{t}" for r, t in zip(X, y)]

    class _F:
        name = "x.csv"

        def __init__(self, b):
            import io

            self._b = io.BytesIO(b)

        def read(self, *a):
            return self._b.read(*a)

        def getvalue(self):
            return self._b.getvalue()

    ds = read_csv_upload(_F(("\n".join(rows) + "\n").encode()), target="label", task="classification")
    prep = C.prepare(ds, None, standardize=True, n_pub=200, split_seed=0, task="classification")
    spec = {"task": "classification", "epsilon": 1.0, "delta": 1e-5, "lam": 1e-3, "n_pub": 200, "eta": 0.05,
            "seeds": 2, "clip_radius": 0.0, "methods": ["PMT", "DP-Newton", "DP-GD", "Public-only", "Non-private"],
            "standardize": True, "public_source": "split", "split_seed": 0, "data": "upload:x.csv",
            "public_mode": "unlabelled", "response_center": None, "response_scale": None, "moments": None}
    frame = mode_sweep(prep, {**spec, "sweep": "epsilon", "values": [0.5, 1.0, 4.0]})
    assert set(frame["method"]) == {"PMT", "DP-Newton", "DP-GD", "Non-private"}
    assert {"auc", "l2_error", "reference_converged", "noise_dominance"} <= set(frame.columns)
    assert frame["auc"].between(0, 1).all() and frame.loc[frame.method == "Non-private", "auc"].iloc[0] > 0.7
    for metric in ("auc", "l2_error"):
        fig = plots.error_vs_epsilon_figure(C.summarize(frame, metric, "epsilon"), metric=metric, epsilon=1.0,
                                            log_y=metric != "auc")
        assert len(fig.data) >= 4
    lam = mode_sweep(prep, {**spec, "sweep": "lam", "values": [0.0, 1e-2]})
    assert sorted(lam["lam"].unique()) == [0.0, 1e-2]
    npub = mode_sweep(prep, {**spec, "sweep": "n_pub", "values": [100, 300]})
    assert sorted(npub["n_pub"].unique()) == [100, 300]
    fig = plots.error_vs_n_pub_figure(C.summarize(npub, "auc", "n_pub"), metric="auc", n_pub=200, log_y=False)
    assert len(fig.data) >= 3
    diag = mode_diagnostics(prep, spec)
    fig = plots.conditioning_figure(diag["kappas"], diag["spectra"])
    assert diag["kappa_pmt"] < diag["kappa_raw"] or diag["kappa_raw"] < 3
    assert len(fig.data) >= 1


def test_the_exported_command_reproduces_a_mode_headline(captured_downloads):
    """The settings' command (``--public-mode``) prints the page's PMT and DP-GD medians."""
    import shlex
    import subprocess
    import sys

    at = _app(seeds=3, public_mode="moments", metric="rmse").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    settings = json.loads(captured_downloads["pmt_settings.json"])
    cmd = settings["cli"]["headline"]
    assert "--public-mode moments" in cmd and "--clip-radius" not in cmd
    argv = shlex.split(cmd)
    assert argv[:3] == [".venv/bin/python", "-m", "engine"]
    out = subprocess.run([sys.executable, *argv[1:], "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={"PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    summary = {r["method"]: r["median"] for r in json.loads(out.stdout)["summary"]}
    m = _metrics(at)
    for name in ("PMT", "DP-GD", "DP-RR"):
        assert float(m[name]) == pytest.approx(float(f"{summary[name]:.3g}")), name


def test_a_link_names_the_kind_of_public_information():
    at = new_app("pmt", timeout=TIMEOUT, query={"public_mode": "unlabelled", "seeds": "3"}).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="public_mode").value == "unlabelled" and "Public-only" not in _metrics(at)
    at.radio(key="public_mode").set_value("moments").run()
    assert at.query_params["public_mode"] == ["moments"] or at.query_params["public_mode"] == "moments"
    bad = new_app("pmt", timeout=TIMEOUT, query={"public_mode": "census", "seeds": "3"}).run()
    assert bad.radio(key="public_mode").value == "labelled"
    assert any("public_mode=census" in w.value for kind in (bad.warning, bad.caption, bad.info, bad.error) for w in kind)
