"""The corpus of malformed inputs (``tests/data/bad/manifest.json``) run through every entry
point: the upload path (engine.datasets.read_csv_upload and the Data page in AppTest), every estimator
(ridge; logistic when its estimators are present), the public/private split, the NVDP clipping config and
the command line. Each case gets its own message (asserted), an error of the stated type and nothing
else (no traceback, no NaN result), and leaves no partial state behind (a failed fit sets no learned
attribute and draws no noise; a failed upload changes no data key of st.session_state).

Also the privacy hygiene of the product: bounds from private data warn, nothing is written to disk
or logged while uploading and fitting."""

from __future__ import annotations

import copy
import io
import json
import logging
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine import datasets as D
from engine.cli import main as cli_main
from engine.privacy import PrivacyLeakWarning
from engine.pmt import DPGDRidge, DPRidge, DPRidgeOracle, PMTRidge, RidgeReference

from conftest import new_app  # the harness: tests/conftest.py


ROOT = Path(__file__).resolve().parents[2]
BAD = Path(__file__).parents[1] / "data" / "bad"
GOOD = Path(__file__).parents[1] / "data" / "upload_good.csv"
MANIFEST = json.loads((BAD / "manifest.json").read_text())
CASES = MANIFEST["cases"]

try:  # the logistic estimators are covered when their module is present
    from engine.pmt import DPGDLogistic, DPNewtonLogistic, PMTLogistic

    CLASSIFIERS = [PMTLogistic, DPNewtonLogistic, DPGDLogistic]
except ImportError:  # pragma: no cover - before the logistic estimators land
    CLASSIFIERS = []

FAST = {"DPGDRidge": {"n_steps": 20}, "DPRidgeOracle": {"n_trials": 2}, "DPGDLogistic": {"n_steps": 20}}
REGRESSORS = [PMTRidge, DPRidge, DPGDRidge, DPRidgeOracle]


def _make(cls, **params):
    return cls(**{**FAST.get(cls.__name__, {}), **params})


def _by(key):
    return [c for c in CASES if c.get(key) is not None]


def _ids(cases):
    return [c["id"] for c in cases]


def test_corpus_has_at_least_30_cases_with_unique_ids_and_existing_files():
    ids = _ids(CASES)
    assert len(ids) >= 30 and len(set(ids)) == len(ids)
    for c in CASES:
        if "file" in c:
            assert (BAD / c["file"]).is_file(), c["file"]
    # every bad input of CONVENTIONS.md is in the corpus
    wanted = {"empty-file", "header-only", "one-row", "n-less-than-d", "non-numeric-column", "all-nan-column",
              "nan-in-X", "inf-in-X", "1e308-in-X", "nan-in-y", "inf-in-y", "1e308-in-y", "constant-column",
              "identical-columns", "labels-all-0", "labels-all-1", "missing-target-column", "wrong-delimiter-pipe",
              "upload-200MB", "epsilon-0", "epsilon-negative", "epsilon-1e-3", "epsilon-50", "epsilon-inf", "delta-0",
              "delta-1", "delta-1e-12", "n_pub-0", "n_pub-1", "n_pub-d-1", "n_pub-d", "n_pub-n", "lam-negative",
              "C_mu-0", "alpha_min-above-alpha_max", "renyi_order-1"}
    assert wanted <= set(ids), wanted - set(ids)


# ------------------------------------------------------------------------------------------------
# upload path (engine)
# ------------------------------------------------------------------------------------------------
class _Stream200MB(io.RawIOBase):
    """A 200 MB CSV produced on the fly (never held in memory or on disk); counts what is read."""

    SIZE = 200 * 2**20

    def __init__(self, state_size: bool):
        self.pos = 0
        self.read_bytes = 0
        if state_size:
            self.size = self.SIZE
        self.name = "huge.csv"

    def readable(self):
        return True

    def read(self, k=-1):
        k = self.SIZE - self.pos if k is None or k < 0 else min(k, self.SIZE - self.pos)
        line = b"1.0,2.0,3.0\n"
        out = (line * (k // len(line) + 1))[:k]
        self.pos += k
        self.read_bytes += k
        return out


def _upload_source(case):
    if case.get("generated") == "stream-200MB":
        return _Stream200MB(state_size=True)
    if case.get("generated") == "stream-200MB-nosize":
        return _Stream200MB(state_size=False)
    return BAD / case["file"]


@pytest.mark.parametrize("case", _by("upload"), ids=_ids(_by("upload")))
def test_upload_path_rejects_with_its_own_message(case):
    exp = case["upload"]
    src = _upload_source(case)
    with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[exp["error"]]) as info:
        D.read_csv_upload(src, **case.get("upload_kwargs", {}))
    msg = str(info.value)
    assert exp["match"] in msg
    assert "Traceback" not in msg and len(msg) < 500
    if isinstance(src, _Stream200MB):
        assert src.read_bytes <= D.MAX_UPLOAD_BYTES + 1  # never reads the 200 MB


def test_upload_messages_are_distinct():
    """Each bad upload gets its own message (not one generic 'invalid file'), except the two one-class
    files, which must get the SAME message so that it does not reveal which class the data hold."""
    msgs = {}
    for case in _by("upload"):
        try:
            D.read_csv_upload(_upload_source(case), **case.get("upload_kwargs", {}))
        except (ValueError, TypeError) as exc:
            msgs[case["id"]] = str(exc)
    assert msgs["labels-all-0"] == msgs["labels-all-1"]
    others = [m for k, m in msgs.items() if k != "labels-all-1"]
    assert len(set(others)) == len(others)


def test_streamlit_upload_cap_matches_the_engine():
    cfg = (ROOT / ".streamlit" / "config.toml").read_text()
    assert re.search(r"^maxUploadSize\s*=\s*50\s*$", cfg, re.M)
    assert D.MAX_UPLOAD_BYTES == 50 * 2**20


# ------------------------------------------------------------------------------------------------
# estimators
# ------------------------------------------------------------------------------------------------
def _file_arrays(case):
    frame = pd.read_csv(BAD / case["file"])
    X = frame.iloc[:, :-1].to_numpy()
    y = frame.iloc[:, -1].to_numpy()
    return X, y


def _public(p, k=20, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(k, p)), rng.normal(size=k)


def _check_failed_fit(est, X, y, X_pub, y_pub, exp):
    rng = np.random.default_rng(123)
    before = copy.deepcopy(rng.bit_generator.state)
    est.set_params(random_state=rng)
    err = {"ValueError": ValueError, "TypeError": TypeError}[exp["error"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the oracle always warns
        with pytest.raises(err) as info:
            est.fit(X, y, X_pub, y_pub)
    assert type(info.value) is err  # not a subclass from deep inside numpy / scipy
    assert exp["match"] in str(info.value), (type(est).__name__, str(info.value))
    # no partial state: no learned attribute, and no noise was drawn before the error
    learned = [a for a in vars(est) if a.endswith("_") and not a.startswith("_")]
    assert learned == [], (type(est).__name__, learned)
    assert rng.bit_generator.state == before, f"{type(est).__name__} drew noise before failing"


def _check_valid_fit(est, X, y, X_pub, y_pub, exp):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        est.set_params(random_state=0).fit(X, y, X_pub, y_pub)
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
    assert np.all(np.isfinite(est.predict(X_pub[:5] if X_pub is not None and len(X_pub) >= 5 else X[:5])))
    if exp.get("mu") == "inf":
        assert est.report_.mu == math.inf
    else:
        assert 0 < est.report_.mu < math.inf
    if exp.get("regularized") and hasattr(est, "transform_"):
        assert est.report_.sigma_pub_regularized


FILE_EST = [c for c in CASES if "file" in c and c.get("estimators") is not None]


@pytest.mark.parametrize("cls", REGRESSORS + [RidgeReference], ids=lambda c: c.__name__)
@pytest.mark.parametrize("case", FILE_EST, ids=_ids(FILE_EST))
def test_file_cases_through_every_regressor(case, cls):
    X, y = _file_arrays(case)
    p = X.shape[1]
    X_pub, y_pub = _public(p)
    exp = case["estimators"]
    est = RidgeReference() if cls is RidgeReference else _make(cls, epsilon=1.0)
    if "error" in exp:
        if cls is RidgeReference:
            with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[exp["error"]], match=re.escape(exp["match"])):
                est.fit(X, y)
            assert not hasattr(est, "coef_")
        else:
            _check_failed_fit(est, X, y, X_pub, y_pub, exp)
    elif cls is RidgeReference:
        est.fit(X, y)
        assert np.all(np.isfinite(est.coef_))
    else:
        _check_valid_fit(est, X, y, X_pub, y_pub, exp)


CLS_FILE = [c for c in CASES if "file" in c and (c.get("classifiers") or (c.get("estimators") or {}).get("error"))]
LABEL_FILES = {c["id"] for c in CASES if c.get("upload_kwargs", {}).get("task") == "classification"}


@pytest.mark.skipif(not CLASSIFIERS, reason="engine.pmt logistic estimators not present")
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("case", CLS_FILE, ids=_ids(CLS_FILE))
def test_file_cases_through_every_classifier(case, cls):
    X, y = _file_arrays(case)
    if case["id"] not in LABEL_FILES:  # an X problem: alternating 0/1 labels, so that the features are what fails
        if "classifiers" not in case and case["estimators"]["match"].startswith("y "):
            pytest.skip("response-value case: the labels are checked by the label files")
        y = np.arange(len(y)) % 2
    exp = case.get("classifiers") or case["estimators"]
    X_pub, _ = _public(X.shape[1])
    if exp.get("fits"):  # one-class private labels: an error would tell the neighbours apart
        est = _make(cls, epsilon=1.0, random_state=0).fit(X, y, X_pub)
        assert np.all(np.isfinite(est.coef_)) and est.coef_.shape == (X.shape[1],)
        return
    _check_failed_fit(_make(cls, epsilon=1.0), X, y, X_pub, None, exp)


def _good_upload():
    ds = D.read_csv_upload(GOOD)
    return ds.X.to_numpy(), ds.y.to_numpy()


PARAM_CASES = [c for c in CASES if "params" in c or "n_pub" in c]


def _param_inputs(case):
    X, y = _good_upload()
    params = {k: (math.inf if v == "inf" else v) for k, v in case.get("params", {}).items()}
    k = case.get("n_pub", 20)
    X_pub, y_pub = _public(X.shape[1], k=max(k, 1))
    return X, y, X_pub[:k], y_pub[:k], params


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("case", PARAM_CASES, ids=_ids(PARAM_CASES))
def test_parameter_cases_through_every_estimator(case, cls):
    X, y, X_pub, y_pub, params = _param_inputs(case)
    if cls in CLASSIFIERS:
        y = np.arange(len(y)) % 2
        y_pub = None
    exp = case["estimators"]
    est = _make(cls, **params)
    if "error" in exp:
        _check_failed_fit(est, X, y, X_pub, y_pub, exp)
    else:
        _check_valid_fit(est, X, y, X_pub, y_pub, exp)


SPLIT_CASES = _by("split")


@pytest.mark.parametrize("case", SPLIT_CASES, ids=_ids(SPLIT_CASES))
def test_n_pub_cases_through_the_split(case):
    X, y = _good_upload()
    exp = case["split"]
    if "error" in exp:
        with pytest.raises(ValueError) as info:
            D.public_private_split(X, y, n_pub=case["n_pub"], random_state=0)
        assert exp["match"] in str(info.value)
    else:
        with pytest.warns(UserWarning, match=re.escape(exp["warns"])):
            sp = D.public_private_split(X, y, n_pub=case["n_pub"], random_state=0)
        assert len(sp.X_pub) == case["n_pub"] and len(sp.X_priv) == len(X) - case["n_pub"]


CLIP_CASES = _by("clip")


@pytest.mark.parametrize("case", CLIP_CASES, ids=_ids(CLIP_CASES))
def test_nvdp_clip_config_cases(case):
    from engine.nvdp.clipping import ClipConfig

    with pytest.raises(ValueError) as info:
        ClipConfig(enabled=True, **case["clip_config"])
    assert case["clip"]["match"] in str(info.value)


CLI_CASES = _by("cli")


@pytest.mark.parametrize("case", CLI_CASES, ids=_ids(CLI_CASES))
def test_cli_cases_are_one_line_errors(case, capsys):
    rc = cli_main(case["argv"])
    out = capsys.readouterr()
    assert rc == case["cli"]["rc"]
    assert out.err.startswith(case["cli"]["match"]) and out.err.count("\n") == 1 and "Traceback" not in out.err


# ------------------------------------------------------------------------------------------------
# the Data page: a failed upload shows its message and leaves the session's data untouched
# ------------------------------------------------------------------------------------------------
PAGE_CASES = [c for c in _by("upload") if "file" in c and c.get("page", True)]
DATA_KEYS = ("dataset_name", "uploaded_dataset", "dataset_shape", "data_active_choice", "synthetic_kappa")
WIDGET_PREFIXES = ("data_upload_", "up_target_", "up_features_", "up_task_", "_upload_memo", "_upload_views")


def test_bad_uploads_on_the_data_page_change_no_session_data():
    at = new_app().run()
    at.switch_page("app_pages/data.py").run()
    at.selectbox(key="data_active_choice").select("wine-red").run()
    assert not at.exception
    baseline = {k: at.session_state[k] for k in DATA_KEYS if k in at.session_state}
    base_keys = set(at.session_state.keys())
    assert baseline["dataset_name"] == "wine-red"
    captions = " ".join(str(c.value) for c in at.caption)
    assert "Uploaded data stays in this browser session" in captions and "never written to disk" in captions
    for case in PAGE_CASES:
        content = (BAD / case["file"]).read_bytes()
        at.file_uploader[0].set_value((case["file"], content, "text/csv")).run()
        if case.get("upload_kwargs", {}).get("task"):
            sel = [s for s in at.selectbox if s.key and s.key.startswith("up_task_")]
            if sel:
                sel[0].select(case["upload_kwargs"]["task"]).run()
        assert not at.exception, (case["id"], [e.value for e in at.exception])
        errors = [e.value for e in at.error]
        assert any(case["upload"]["match"] in e for e in errors), (case["id"], errors)
        assert all("Traceback" not in e for e in errors)
        now = {k: at.session_state[k] for k in DATA_KEYS if k in at.session_state}
        assert now.keys() == baseline.keys() and all(now[k] is baseline[k] or now[k] == baseline[k] for k in now), case["id"]
        new_keys = set(at.session_state.keys()) - base_keys
        assert all(k.startswith(WIDGET_PREFIXES) for k in new_keys), (case["id"], new_keys)
    assert not at.success  # no bad file was ever accepted


# ------------------------------------------------------------------------------------------------
# privacy hygiene
# ------------------------------------------------------------------------------------------------
def _data(seed=0, n=300, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * [1.0, 5.0, 0.2]
    y = X @ [1.0, -0.5, 2.0] + rng.normal(size=n)
    X_pub = rng.normal(size=(50, p)) * [1.0, 5.0, 0.2]
    return X, y, X_pub, X_pub @ [1.0, -0.5, 2.0]


@pytest.mark.parametrize("cls", REGRESSORS[:3], ids=lambda c: c.__name__)
def test_default_bounds_are_public_and_do_not_warn(cls):
    X, y, X_pub, y_pub = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        m = _make(cls, epsilon=1.0, random_state=0).fit(X, y, X_pub, y_pub)
    # the radius does not depend on the private values: scaling X by 1000 leaves it unchanged
    m2 = _make(cls, epsilon=1.0, random_state=0).fit(1000 * X, 1000 * y, X_pub, y_pub)
    assert m.report_.radius == m2.report_.radius
    if hasattr(m.report_, "B_y") and not math.isnan(m.report_.B_y):
        assert m.report_.B_y == m2.report_.B_y


@pytest.mark.parametrize("cls, param", [(PMTRidge, "response_bound"), (DPRidge, "clip_radius"),
                                        (DPRidge, "response_bound"), (DPGDRidge, "clip_norm"),
                                        (DPGDRidge, "response_bound")])
def test_bounds_taken_from_private_data_warn(cls, param):
    X, y, X_pub, y_pub = _data()
    with pytest.warns(PrivacyLeakWarning, match=param):
        _make(cls, epsilon=1.0, random_state=0, **{param: "private"}).fit(X, y, X_pub, y_pub)


def test_oracle_tuning_is_labelled_non_private_and_warns():
    X, y, X_pub, y_pub = _data()
    with pytest.warns(PrivacyLeakWarning, match="not differentially private"):
        m = DPRidgeOracle(epsilon=1.0, n_trials=2, random_state=0).fit(X, y, X_pub, y_pub)
    assert "non-private tuning" in m.report_.method and m.report_.extra["non_private_tuning"] is True


@pytest.mark.skipif(not CLASSIFIERS, reason="engine.pmt logistic estimators not present")
@pytest.mark.parametrize("cls, param", [("DPNewtonLogistic", "clip_radius"), ("DPGDLogistic", "clip_norm")])
def test_classifier_bounds_from_private_data_warn(cls, param):
    import engine.pmt as G

    X, _, X_pub, _ = _data()
    y = (X[:, 0] > 0).astype(int)
    with pytest.warns(PrivacyLeakWarning, match=param):
        _make(getattr(G, cls), epsilon=1.0, random_state=0, **{param: "private"}).fit(X, y, X_pub)


def test_data_page_never_caches_uploads_across_sessions():
    """(The rendered wording is checked in the AppTest above.) Uploads never enter the cross-session
    st.cache_data: no cached function of the Data page takes the upload."""
    src = (ROOT / "app_pages" / "data.py").read_text()
    cached = re.findall(r"@st\.cache_data[^\n]*\ndef (\w+)\(([^)]*)\)", src)
    assert len(cached) >= 3
    for name, params in cached:
        names = {p.split(":")[0].split("=")[0].strip() for p in params.split(",") if p.strip()}
        assert "upload" not in name and not names & {"up", "upload", "uploaded", "ds", "dataset", "frame"}, name


def test_upload_and_fits_write_no_files_and_log_no_values(tmp_path, monkeypatch, caplog):
    """With a fresh working directory and HOME, validating an upload and fitting every estimator leaves
    both empty, and no log record (any logger, DEBUG and up) contains a data value."""
    work, home = tmp_path / "cwd", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    secret = 271828.18281828  # a value that must never leave memory
    raw = GOOD.read_bytes().replace(b"20.006", str(secret).encode(), 1)
    caplog.set_level(logging.DEBUG)
    ds = D.read_csv_upload(io.BytesIO(raw))
    assert secret in ds.X.to_numpy()
    X, y = ds.X.to_numpy(), ds.y.to_numpy()
    X_pub, y_pub = _public(X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for cls in REGRESSORS:
            _make(cls, epsilon=1.0, random_state=0).fit(X, y, X_pub, y_pub)
        for cls in CLASSIFIERS:
            _make(cls, epsilon=1.0, random_state=0).fit(X, (y > 12).astype(int), X_pub)
        # a failing upload neither
        with pytest.raises(ValueError):
            D.read_csv_upload(io.BytesIO(raw.replace(b"88.03", b"NaN", 1)))
    assert list(work.iterdir()) == [] and list(home.iterdir()) == []
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for v in (str(secret), "271828", "88.03", "20.006"):
        assert v not in logged


def test_sweep_oracle_is_non_private_tuning_and_warns():
    from engine.datasets import make_synthetic_regression
    from engine.pmt.sweep import run_sweep

    data = make_synthetic_regression(n=600, d=3, kappa=10.0, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="non-private tuning"):
        f = run_sweep(data, methods=["dp-rr-oracle"], epsilons=[1.0], seeds=2)
    assert set(f["method"]) == {"DP-RR (oracle C, non-private tuning)"}
    with warnings.catch_warnings():  # the private methods do not warn
        warnings.simplefilter("error", PrivacyLeakWarning)
        run_sweep(data, methods=["pmt", "dp-rr", "dp-gd"], epsilons=[1.0], seeds=2)
