"""The GLMs, DP-GD and the references on Dask: the in-memory fit for the same seed, one pass per step, the
noise drawn once on the driver, bad input before noise, and no estimator reading a Dask input into memory."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

import engine.pmt._dask_glm as dglm  # noqa: E402
from engine.pmt import (  # noqa: E402
    DPGDLogistic,
    DPGDRidge,
    DPNewtonLogistic,
    DPRidge,
    DPRidgeOracle,
    LogisticReference,
    PMTLogistic,
    PMTPoisson,
    PMTRidge,
    PoissonReference,
    RidgeReference,
)
from engine.pmt._backends import NotOutOfCoreError  # noqa: E402
from engine.pmt._special import expit  # noqa: E402
from engine.pmt.dask import PrivateInputError  # noqa: E402
from engine.pmt.pooled_logistic import PMTPooledLogistic  # noqa: E402

N, P_, N_PUB = 6000, 5, 300
TOL = 1e-12


def _data():
    rng = np.random.default_rng(0)
    mix = np.eye(P_) + 0.4 * rng.standard_normal((P_, P_)) / np.sqrt(P_)
    X = (rng.standard_normal((N + N_PUB, P_)) @ mix) * [1.0, 3.0, 0.3, 10.0, 1.0] + 0.5
    th = np.array([0.8, -0.2, 1.5, 0.05, 0.0])
    y = (rng.random(N + N_PUB) < expit(X @ th - 0.3)).astype(float)
    c = rng.poisson(np.exp(0.15 * (X - 0.5) @ (th / [1.0, 3.0, 0.3, 10.0, 1.0]))).astype(float)
    r = X @ th + rng.standard_normal(N + N_PUB)
    ys = {"logistic": y, "poisson": c, "ridge": r}
    return X[N_PUB:], X[:N_PUB], {k: v[N_PUB:] for k, v in ys.items()}, {k: v[:N_PUB] for k, v in ys.items()}


XP, XQ, YS, YQ = _data()
CHUNKS = (700, 1300, 2000, 500, 1500)  # uneven


def _dask(X, y):
    return da.from_array(X, chunks=(CHUNKS, -1)), da.from_array(y, chunks=((3000, 3000),))  # y chunked otherwise


def _pub(kind, with_y=False):
    yq = YQ[kind]
    return (XQ, yq) if with_y else (XQ,)


#: (estimator, response, public arguments): every estimator that runs on Dask.
CASES = [
    ("pmt-logistic", lambda: PMTLogistic(epsilon=1.0, random_state=3), "logistic", False),
    ("pmt-logistic-full", lambda: PMTLogistic(epsilon=2.0, lam=0.0, whiten="full", random_state=4), "logistic", False),
    ("pmt-logistic-inf", lambda: PMTLogistic(epsilon=np.inf, n_steps=8, random_state=0), "logistic", False),
    ("dp-newton", lambda: DPNewtonLogistic(epsilon=1.0, random_state=3), "logistic", False),
    ("dp-newton-nopub", lambda: DPNewtonLogistic(epsilon=0.5, clip_radius=20.0, random_state=5), "logistic", None),
    ("dp-gd-logistic", lambda: DPGDLogistic(epsilon=1.0, n_steps=15, random_state=3), "logistic", False),
    ("logistic-reference", lambda: LogisticReference(lam=1e-3), "logistic", None),
    ("logistic-reference-0", lambda: LogisticReference(lam=0.0), "logistic", None),
    ("pmt-poisson", lambda: PMTPoisson(epsilon=2.0, y_max=8.0, theta_radius=0.3, random_state=3), "poisson", False),
    ("poisson-reference", lambda: PoissonReference(lam=1e-3), "poisson", None),
    ("dp-gd-ridge", lambda: DPGDRidge(epsilon=1.0, n_steps=15, random_state=3), "ridge", True),
    ("dp-gd-ridge-raw", lambda: DPGDRidge(epsilon=1.0, n_steps=10, center=None, clip_norm=50.0, random_state=2),
     "ridge", False),
    ("ridge-reference", lambda: RidgeReference(lam=1e-3), "ridge", None),
]


def _pub_args(kind, pub):
    if pub is None:
        return ()
    return _pub(kind, with_y=pub)


@pytest.fixture
def no_materialise(monkeypatch):
    """Reading a whole Dask collection into numpy (``np.asarray``, ``__array__``) fails the test."""

    def refuse(self, *a, **k):
        raise AssertionError("a Dask collection was read into memory")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    monkeypatch.setattr(dd.DataFrame, "__array__", refuse, raising=False)
    monkeypatch.setattr(dd.Series, "__array__", refuse, raising=False)


@pytest.fixture
def noise_spy(monkeypatch):
    calls = []
    real_newton, real_gd = dglm.newton_noise, dglm.dp_gd_noise

    def newton(rng, T, d):
        calls.append(("newton", T, d))
        return real_newton(rng, T, d)

    def gd(rng, T, d):
        calls.append(("gd", T, d))
        return real_gd(rng, T, d)

    monkeypatch.setattr(dglm, "newton_noise", newton)
    monkeypatch.setattr(dglm, "dp_gd_noise", gd)
    return calls


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("name,make,kind,pub", CASES, ids=[c[0] for c in CASES])
def test_dask_equals_memory_one_pass_per_step(name, make, kind, pub, no_materialise, noise_spy):
    y = YS[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = make().fit(XP, y, *_pub_args(kind, pub))
        assert len(noise_spy) == 0  # the in-memory fit does not go through the Dask module
        Xd, yd = _dask(XP, y)
        est = make()
        out = est.fit(Xd, yd, *_pub_args(kind, pub))
    assert out is est
    assert _rel(est.theta_, mem.theta_) < TOL, name
    r, rm = est.report_, mem.report_
    assert r.extra["engine"] == "dask"
    private = np.isfinite(rm.mu) and rm.mu > 0 and np.isfinite(rm.epsilon)
    if private:  # the noise is drawn once, on the driver, with the in-memory fit's sensitivities and ledger
        assert len(noise_spy) == 1
        assert r.sensitivities == pytest.approx(rm.sensitivities, rel=1e-15)
        assert r.noise_scales == pytest.approx(rm.noise_scales, rel=1e-15)
        assert [x.sigma for x in r.ledger.releases] == pytest.approx([x.sigma for x in rm.ledger.releases], rel=1e-15)
    T = getattr(est, "n_steps", None)
    if isinstance(est, (PMTLogistic, DPNewtonLogistic, PMTPoisson)):
        assert r.extra["passes"] == T  # the first pass checks and gives step 0; one pass per later step
        assert r.eig_fixes == rm.eig_fixes and r.converged == rm.converged
        assert r.frac_truncated == pytest.approx(rm.frac_truncated, abs=1e-15)
        assert r.kappa_raw == pytest.approx(rm.kappa_raw, rel=1e-8)
    elif isinstance(est, (DPGDLogistic, DPGDRidge)):
        assert r.extra["passes"] == T + 1
        assert r.frac_truncated == pytest.approx(rm.frac_truncated, abs=1e-15)
    if hasattr(mem, "converged_"):
        assert est.converged_ == mem.converged_


def test_pmt_dataframe_drops_unspanned_public_column_as_in_memory(no_materialise):
    """Public rows that never span a column: PMT drops it (fit_public) on a Dask data frame too."""
    Xq = XQ.copy()
    Xq[:, 2] = 0.0  # column 2 never varies in the public rows
    y = YS["logistic"]
    cols = [f"c{j}" for j in range(P_)]
    frame = dd.from_pandas(pd.DataFrame(XP, columns=cols), npartitions=4)
    ys = dd.from_pandas(pd.Series(y, name="y"), npartitions=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = PMTLogistic(epsilon=1.0, random_state=9).fit(XP, y, Xq)
        dk = PMTLogistic(epsilon=1.0, random_state=9).fit(frame, ys, Xq)
    assert mem.report_.extra["dropped_columns"] == dk.report_.extra["dropped_columns"] == ["x2"]
    assert dk.coef_[2] == 0.0
    assert _rel(dk.theta_, mem.theta_) < TOL


def test_files_parquet_and_csv_equal_memory(tmp_path, no_materialise):
    from engine.pmt.dask import read_private

    y = YS["logistic"]
    cols = [f"c{j}" for j in range(P_)]
    frame = pd.DataFrame(XP, columns=cols).assign(y=y)
    for i, part in enumerate(np.array_split(np.arange(N), 3)):
        frame.iloc[part].to_parquet(tmp_path / f"p{i}.parquet", index=False)
        frame.iloc[part].to_csv(tmp_path / f"c{i}.csv", index=False)
    mem = PMTLogistic(epsilon=1.0, random_state=1).fit(XP, y, XQ)
    for pattern in ("p*.parquet", "c*.csv"):
        X, yy, _ = read_private(str(tmp_path / pattern), "y", cols)
        got = PMTLogistic(epsilon=1.0, random_state=1).fit(X, yy, XQ)
        assert _rel(got.theta_, mem.theta_) < TOL, pattern


def test_bad_input_raises_before_noise(noise_spy):
    y = YS["logistic"].copy()
    Xb = XP.copy()
    Xb[4000, 1] = np.nan
    with pytest.raises(PrivateInputError, match=r"column 'x1'.*chunk 3 \(rows 4000-4499\)"):
        PMTLogistic(epsilon=1.0, random_state=0).fit(*_dask(Xb, y), XQ)
    yb = y.copy()
    yb[10] = 2.0
    with pytest.raises(ValueError, match="labels other than classes"):
        DPNewtonLogistic(epsilon=1.0, random_state=0).fit(*_dask(XP, yb))
    cb = YS["poisson"].copy()
    cb[5] = -1.0
    with pytest.raises(ValueError, match="negative"):
        PMTPoisson(epsilon=1.0, y_max=5.0, random_state=0).fit(*_dask(XP, cb), XQ)
    Xbig = XP.copy()
    Xbig[0, 0] = 1e200
    with pytest.raises(PrivateInputError, match="1e\\+150"):
        DPGDRidge(epsilon=1.0, n_steps=3, random_state=0).fit(*_dask(Xbig, YS["ridge"]), *_pub("ridge", True))
    with pytest.raises(ValueError, match="both classes"):  # the reference refuses one class, as in memory
        LogisticReference().fit(*_dask(XP, np.zeros(N)))
    assert noise_spy == []


def test_one_class_labels_fit_like_a_neighbour():
    """Whether the private labels hold both classes is private: the DP fits do not branch on it."""
    m = DPNewtonLogistic(epsilon=1.0, random_state=0).fit(*_dask(XP, np.zeros(N)))
    assert np.all(np.isfinite(m.theta_))


class _Counted:
    """A Dask array whose blocks count how often they are computed."""

    def __init__(self, X):
        self.calls = 0

        def block(b):
            self.calls += int(b.shape[0] > 0)  # (Dask calls it once on an empty block for the metadata)
            return b

        self.array = da.from_array(X, chunks=(CHUNKS, -1)).map_blocks(block, dtype=float)


@pytest.mark.parametrize("make,pub", [
    (lambda: PMTPooledLogistic(epsilon=1.0), True),
    (lambda: DPRidgeOracle(epsilon=1.0, n_trials=2), True),
    (lambda: DPNewtonLogistic(clip_radius="private"), False),
    (lambda: DPGDLogistic(clip_norm="private"), False),
    (lambda: DPGDRidge(clip_norm="private"), False),
    (lambda: DPGDRidge(response_bound="private"), False),
    (lambda: PMTLogistic(classes=("no", "yes")), False),
], ids=["pooled-logistic", "dp-rr-oracle", "dp-newton-private-C", "dp-gd-private-C", "dp-gd-ridge-private-C",
        "dp-gd-ridge-private-By", "string-classes"])
def test_cannot_run_out_of_core_refuses_without_reading(make, pub, no_materialise, noise_spy):
    c = _Counted(XP)
    y = da.from_array(YS["logistic"], chunks=((3000, 3000),))
    with pytest.raises(NotOutOfCoreError, match="out of core|on Dask"):
        make().fit(c.array, y, XQ, YQ["logistic"] if pub else None)
    assert c.calls == 0 and noise_spy == []


def test_other_in_memory_code_paths_refuse_dask(no_materialise):
    """The validation every in-memory fit goes through refuses a Dask collection (the safety net)."""
    from engine.pmt._base import _check_X
    from engine.pmt.logistic import check_binary_labels

    Xd, yd = _dask(XP, YS["logistic"])
    with pytest.raises(NotOutOfCoreError, match="X is a Dask collection"):
        _check_X(Xd, "X")
    with pytest.raises(NotOutOfCoreError, match="y is a Dask collection"):
        check_binary_labels(yd)
    with pytest.raises(NotOutOfCoreError, match="X_pub is a Dask collection"):
        PMTLogistic().fit(XP, YS["logistic"], Xd)  # Dask public rows: the public rows are held in memory


def test_ridge_estimators_still_on_their_one_pass_path(no_materialise):
    Xd, yd = _dask(XP, YS["ridge"])
    for make in (lambda: PMTRidge(epsilon=1.0, random_state=0), lambda: DPRidge(epsilon=1.0, random_state=0)):
        mem = make().fit(XP, YS["ridge"], XQ, YQ["ridge"])
        got = make().fit(Xd, yd, XQ, YQ["ridge"])
        assert _rel(got.theta_, mem.theta_) < 1e-10


def test_cli_glm_dask_equals_estimators(tmp_path, capsys):
    import json

    from engine.cli import main

    y = YS["logistic"]
    cols = [f"c{j}" for j in range(P_)]
    pd.DataFrame(XP, columns=cols).assign(y=y).to_parquet(tmp_path / "priv.parquet", index=False)
    pd.DataFrame(XQ, columns=cols).assign(y=YQ["logistic"]).to_csv(
        tmp_path / "pub.csv", index=False)
    rc = main(["pmt", "--task", "logistic", "--data", str(tmp_path / "*.parquet"), "--target", "y", "--public",
               str(tmp_path / "pub.csv"), "--engine", "dask", "--epsilon", "1", "--seeds", "2", "--methods", "pmt",
               "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["passes_per_fit_pmt"] == 5
    ref = LogisticReference(lam=1e-3).fit(XP, y).theta_
    errs = [np.linalg.norm(PMTLogistic(epsilon=1.0, lam=1e-3, random_state=s).fit(XP, y, XQ).theta_ - ref)
            for s in range(2)]
    row = out["summary"][0]
    assert row["method"] == "PMT" and row["median"] == pytest.approx(float(np.median(errs)), rel=1e-10)
    rc = main(["pmt", "--task", "poisson", "--data", str(tmp_path / "*.parquet"), "--target", "y", "--public",
               str(tmp_path / "pub.csv"), "--engine", "dask", "--seeds", "1"])
    assert rc != 0 and "--y-max" in capsys.readouterr().err


def test_on_a_distributed_cluster_equals_memory():
    """``--scheduler``: the same fits on a dask.distributed cluster (worker processes: the specs and block
    functions travel by pickle, the family by name)."""
    distributed = pytest.importorskip("distributed")
    from engine.pmt.dask import scheduler_context

    y = YS["logistic"]
    mem = PMTLogistic(epsilon=1.0, random_state=6).fit(XP, y, XQ)
    ref = PoissonReference().fit(XP, YS["poisson"])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        with scheduler_context(cl.scheduler_address):
            got = PMTLogistic(epsilon=1.0, random_state=6).fit(*_dask(XP, y), XQ)
            got_ref = PoissonReference().fit(*_dask(XP, YS["poisson"]))
    assert _rel(got.theta_, mem.theta_) < TOL and _rel(got_ref.theta_, ref.theta_) < TOL
