"""PMT ridge and DP-RR on Dask: same release as in memory, bad input before noise, files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

import engine.pmt.baselines as baselines_mod  # noqa: E402
import engine.pmt.pooled as pooled_mod  # noqa: E402
import engine.pmt.ridge as ridge_mod  # noqa: E402
from engine.datasets import load_dataset  # noqa: E402
from engine.pmt import DPRidge, PMTRidge  # noqa: E402
from engine.pmt.dask import PrivateInputError, read_private, run_from_files  # noqa: E402

N_PUB = 200


def _split(name):
    X, y = load_dataset(name).to_numpy()
    perm = np.random.default_rng(11).permutation(len(y))
    X, y = X[perm], y[perm]
    return X[N_PUB:], y[N_PUB:], X[:N_PUB], y[:N_PUB]


def _uneven_chunks(n, k, seed):
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, n), size=k - 1, replace=False))
    return tuple(int(c) for c in np.diff(np.concatenate([[0], cuts, [n]])))


@pytest.fixture
def noise_spy(monkeypatch):
    """Count calls of the SSP noise draw (the one place the ridge releases draw noise)."""
    calls = []
    real = ridge_mod.ssp_noise

    def spy(rng, d):
        calls.append(d)
        return real(rng, d)

    monkeypatch.setattr(ridge_mod, "ssp_noise", spy)
    monkeypatch.setattr(baselines_mod, "ssp_noise", spy)
    monkeypatch.setattr(pooled_mod, "ssp_noise", spy)
    return calls


@pytest.mark.parametrize("name", ["ccpp", "wine-red", "wine-white"])
@pytest.mark.parametrize("cls,kw", [(PMTRidge, {"response": "clip"}),
                                    (PMTRidge, {"response": "clip", "lam": 0.0, "epsilon": 0.5}),
                                    (DPRidge, {"clip_radius": 5e3})])
def test_dask_equals_memory_shuffled_many_chunks(name, cls, kw, noise_spy):
    Xp, yp, Xq, yq = _split(name)
    params = {"epsilon": 1.0, "random_state": 7, **kw}
    ref = cls(**params).fit(Xp, yp, Xq, yq)
    perm = np.random.default_rng(3).permutation(len(yp))  # rows arrive in another order
    chunks = _uneven_chunks(len(yp), 41, 5)
    Xd = da.from_array(Xp[perm], chunks=(chunks, -1))
    yd = da.from_array(yp[perm], chunks=(_uneven_chunks(len(yp), 17, 6),))  # other chunks than X
    m = cls(**params).fit(Xd, yd, Xq, yq)
    assert len(noise_spy) == 2  # one release each
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=1e-10, atol=0)
    assert np.linalg.norm(m.theta_ - ref.theta_) <= 1e-10 * np.linalg.norm(ref.theta_)
    r, q = m.report_, ref.report_
    assert (r.n, r.d, r.radius, r.B_y, r.noise_scales, r.eig_fixes) == (q.n, q.d, q.radius, q.B_y, q.noise_scales,
                                                                         q.eig_fixes)
    assert r.frac_truncated == q.frac_truncated and r.frac_y_clipped == q.frac_y_clipped
    assert r.kappa_raw == pytest.approx(q.kappa_raw, rel=1e-6)
    assert r.kappa_noisy == pytest.approx(q.kappa_noisy, rel=1e-8)
    if cls is PMTRidge:
        assert r.kappa_pmt == pytest.approx(q.kappa_pmt, rel=1e-9) and m.transform_ is None


def test_dask_truncation_active_and_counted():
    """A heavy-tailed column: some rows are truncated; the Dask pass counts the same rows and agrees."""
    rng = np.random.default_rng(0)
    X = rng.standard_t(df=1.5, size=(30_000, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=30_000)
    ref = PMTRidge(random_state=1, response="clip").fit(X[500:], y[500:], X[:500], y[:500])
    m = PMTRidge(random_state=1, response="clip").fit(da.from_array(X[500:], chunks=(1000, 3)),
                                                      da.from_array(y[500:], chunks=1000), X[:500], y[:500])
    assert ref.report_.frac_truncated > 0.001 and ref.report_.frac_y_clipped > 0
    assert m.report_.frac_truncated == ref.report_.frac_truncated
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=1e-10)


@pytest.mark.parametrize("name", ["ccpp", "wine-red"])
@pytest.mark.parametrize("kw", [{}, {"response": "joint", "lam": 0.0, "epsilon": 0.5}, {"solver": "paper"}])
def test_dask_joint_release_equals_memory(name, kw):
    """The default response="auto" is the joint form with public labels; on Dask it is one pass too and gives the
    in-memory coefficients, truncation count and report (rows in another order, uneven chunks)."""
    Xp, yp, Xq, yq = _split(name)
    params = {"epsilon": 1.0, "random_state": 7, **kw}
    ref = PMTRidge(**params).fit(Xp, yp, Xq, yq)
    perm = np.random.default_rng(3).permutation(len(yp))
    Xd = da.from_array(Xp[perm], chunks=(_uneven_chunks(len(yp), 41, 5), -1))
    yd = da.from_array(yp[perm], chunks=(_uneven_chunks(len(yp), 17, 6),))
    m = PMTRidge(**params).fit(Xd, yd, Xq, yq)
    assert m.report_.extra["response"] == ref.report_.extra["response"] == "joint"
    # raw wine-red at lam = 0 is ill-conditioned: the order of the sums moves theta by ~1e-9 of its norm
    assert np.linalg.norm(m.theta_ - ref.theta_) <= 1e-8 * np.linalg.norm(ref.theta_)
    r, q = m.report_, ref.report_
    assert (r.n, r.d, r.radius, r.noise_scales, r.eig_fixes, r.frac_truncated) == (
        q.n, q.d, q.radius, q.noise_scales, q.eig_fixes, q.frac_truncated)
    assert r.kappa_raw == pytest.approx(q.kappa_raw, rel=1e-6) and r.kappa_pmt == pytest.approx(q.kappa_pmt, rel=1e-6)
    assert m.transform_ is None


def test_dask_joint_bad_entry_raises_before_noise(monkeypatch):
    calls = []
    real = ridge_mod.P.symmetric_gaussian_noise
    monkeypatch.setattr(ridge_mod.P, "symmetric_gaussian_noise", lambda *a, **k: calls.append(1) or real(*a, **k))
    Xp, yp, Xq, yq = _split("ccpp")
    yp = yp.copy()
    yp[7321] = np.nan
    with pytest.raises(PrivateInputError, match="column 'y'.*NaN or infinite"):
        PMTRidge(random_state=0).fit(da.from_array(Xp, chunks=(500, -1)), da.from_array(yp, chunks=500), Xq, yq)
    assert calls == []
    PMTRidge(random_state=0).fit(da.from_array(Xp[:7000], chunks=(500, -1)), da.from_array(yp[:7000], chunks=500),
                                 Xq, yq)
    assert calls == [1]


def test_dask_dataframe_unknown_partition_lengths():
    Xp, yp, Xq, yq = _split("wine-red")
    cols = [f"c{j}" for j in range(Xp.shape[1])]
    frame = pd.DataFrame(Xp, columns=cols).assign(quality=yp)
    ddf = dd.from_pandas(frame, npartitions=9).clear_divisions()
    ref = PMTRidge(random_state=2).fit(Xp, yp, Xq, yq)
    m = PMTRidge(random_state=2).fit(ddf[cols], ddf["quality"], Xq, yq)
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=1e-10)
    # a Dask array with unknown chunk sizes is counted first
    Xu = ddf[cols].to_dask_array()
    assert np.isnan(Xu.shape[0])
    m2 = PMTRidge(random_state=2).fit(Xu, ddf["quality"].to_dask_array(), Xq, yq)
    np.testing.assert_allclose(m2.theta_, ref.theta_, rtol=1e-10)


@pytest.mark.parametrize("where,value,problem", [
    ("X", np.nan, "NaN or infinite"), ("X", np.inf, "NaN or infinite"), ("X", -3e150, "|value| > 1e+150"),
    ("y", np.nan, "NaN or infinite"), ("y", 2e151, "|value| > 1e+150"),
])
@pytest.mark.parametrize("cls", [PMTRidge, DPRidge])
def test_bad_entry_in_one_chunk_raises_before_noise(where, value, problem, cls, noise_spy):
    kw = {"response": "clip"} if cls is PMTRidge else {}  # the spy counts the SSP draw (the joint form: below)
    Xp, yp, Xq, yq = _split("ccpp")
    Xp, yp = Xp.copy(), yp.copy()
    row = 7321
    if where == "X":
        Xp[row, 2] = value
    else:
        yp[row] = value
    Xd = da.from_array(Xp, chunks=(500, -1))
    with pytest.raises(PrivateInputError) as ei:
        cls(random_state=0, **kw).fit(Xd, da.from_array(yp, chunks=500), Xq, yq)
    msg = str(ei.value)
    col = "'x2'" if where == "X" else "'y'"
    assert f"column {col}" in msg and problem in msg and "chunk 14 (rows 7000-7499)" in msg, msg
    assert "no noise was drawn" in msg
    assert noise_spy == []  # the noise function was never called
    cls(random_state=0, **kw).fit(da.from_array(Xp[:7000], chunks=500), da.from_array(yp[:7000], chunks=500), Xq, yq)
    assert noise_spy == [Xp.shape[1] + 1]  # the spy does see a release on good rows


def test_non_numeric_dtype_raises_before_any_pass(noise_spy):
    frame = pd.DataFrame({"a": np.arange(50.0), "b": ["x"] * 50, "t": np.arange(50.0)})
    ddf = dd.from_pandas(frame, npartitions=3)
    with pytest.raises(PrivateInputError, match=r"'b' \(.*\) are not numeric"):
        PMTRidge().fit(ddf[["a", "b"]], ddf["t"], np.ones((5, 2)), np.ones(5))
    assert noise_spy == []


def _write_parts(tmp_path, frame, k, fmt):
    parts = np.array_split(np.arange(len(frame)), k)
    for i, idx in enumerate(parts):
        part = frame.iloc[idx]
        if fmt == "parquet":
            part.to_parquet(tmp_path / f"part{i:02d}.parquet", index=False)
        else:
            part.to_csv(tmp_path / f"part{i:02d}.csv", index=False)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_run_from_files_equals_memory(tmp_path, fmt):
    X, y = load_dataset("ccpp").to_numpy()
    cols = list(load_dataset("ccpp").X.columns)
    frame = pd.DataFrame(X, columns=cols).assign(PE=y)
    pub, priv = frame.iloc[:N_PUB], frame.iloc[N_PUB:]
    _write_parts(tmp_path, priv, 12, fmt)
    pub.to_csv(tmp_path / "public.csv", index=False)
    # the one-pass study path (run_from_files) centres y by the public mean, as the in-memory fit does
    ref = PMTRidge(epsilon=2.0, random_state=5).fit(priv[cols].to_numpy(), priv["PE"].to_numpy(),
                                                    pub[cols].to_numpy(), pub["PE"].to_numpy())
    m = run_from_files(str(tmp_path / f"part*.{fmt}"), "PE", public=tmp_path / "public.csv", epsilon=2.0,
                       random_state=5)
    # the default (joint) form on raw CCPP: the sums' order moves the small coefficients by ~1e-14 of the norm
    assert np.linalg.norm(m.theta_ - ref.theta_) <= 1e-10 * np.linalg.norm(ref.theta_)
    assert m.report_.n == len(priv)
    assert m.report_.extra["response"] == "joint"
    assert m.report_.extra["response_center"] == pytest.approx(pub["PE"].mean())  # y centred publicly
    mc = run_from_files(str(tmp_path / f"part*.{fmt}"), "PE", public=tmp_path / "public.csv", epsilon=2.0,
                        random_state=5, response="clip")
    assert mc.report_.extra["response_center"] == pytest.approx(pub["PE"].mean())
    rr = run_from_files(str(tmp_path / f"part*.{fmt}"), "PE", public=tmp_path / "public.csv", method="dp-rr",
                        clip_radius=3e3, random_state=5)
    ref_rr = DPRidge(clip_radius=3e3, random_state=5).fit(priv[cols].to_numpy(), priv["PE"].to_numpy(),
                                                          pub[cols].to_numpy(), pub["PE"].to_numpy())
    np.testing.assert_allclose(rr.theta_, ref_rr.theta_, rtol=1e-10)


@pytest.mark.parametrize("fmt,bad,expect", [
    ("parquet", np.nan, "NaN or infinite"), ("parquet", 5e150, "|value| > 1e+150"),
    ("csv", "abc", "non-numeric (e.g. 'abc')"), ("csv", "", "empty (NaN)"), ("csv", "inf", "NaN or infinite"),
])
def test_bad_file_names_file_and_column(tmp_path, fmt, bad, expect, noise_spy):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(3000, 3)), columns=["u", "v", "w"]).assign(t=lambda f: f.u + f.v)
    frame.iloc[:100].to_csv(tmp_path / "public.csv", index=False)
    priv = frame.iloc[100:].reset_index(drop=True)
    if fmt == "csv":
        priv = priv.astype(object)
    priv.loc[2000, "v"] = bad  # in the 3rd of 4 files (rows 1450-2174), its row 550
    _write_parts(tmp_path, priv, 4, fmt)
    with pytest.raises(PrivateInputError) as ei:
        run_from_files(str(tmp_path / f"part*.{fmt}"), "t", public=tmp_path / "public.csv", random_state=0)
    msg = str(ei.value)
    assert "column 'v'" in msg and expect in msg and f"part02.{fmt}" in msg, msg
    assert ("row 550 (0-based)" if fmt == "parquet" else "line 552") in msg, msg
    assert noise_spy == []


def test_read_private_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no file matches"):
        read_private(str(tmp_path / "*.parquet"), "t")
    pd.DataFrame({"a": [1.0], "t": [2.0]}).to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(ValueError, match="target column 'zz'"):
        read_private(str(tmp_path / "*.csv"), "zz")
    with pytest.raises(ValueError, match="missing: \\['q'\\]"):
        read_private(str(tmp_path / "*.csv"), "t", ["q"])


def test_unsupported_options_raise_before_pass():
    X = da.ones((100, 2), chunks=10)
    y = da.ones(100, chunks=10)
    with pytest.raises(ValueError, match="response='joint' bounds"):
        PMTRidge(response="joint", response_bound=1.0).fit(X, y, np.eye(2), np.ones(2))
    with pytest.raises(ValueError, match="'private' is not supported on Dask"):
        DPRidge(clip_radius="private", response_bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="public data are required"):
        PMTRidge(response_bound=1.0).fit(X, y)


def test_distributed_cluster_same_result(tmp_path):
    distributed = pytest.importorskip("distributed")
    X, y = load_dataset("wine-red").to_numpy()
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]).assign(q=y)
    frame.iloc[:N_PUB].to_csv(tmp_path / "public.csv", index=False)
    _write_parts(tmp_path, frame.iloc[N_PUB:], 6, "parquet")
    local = run_from_files(str(tmp_path / "part*.parquet"), "q", public=tmp_path / "public.csv", random_state=4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        m = run_from_files(str(tmp_path / "part*.parquet"), "q", public=tmp_path / "public.csv", random_state=4,
                           scheduler=cluster.scheduler_address)
    assert cluster.scheduler_address.startswith("tcp://")
    np.testing.assert_allclose(m.theta_, local.theta_, rtol=1e-10)


def test_non_numeric_parquet_column_names_the_file(tmp_path, noise_spy):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(400, 2)), columns=["u", "v"]).assign(t=lambda f: f.u)
    frame.iloc[:50].to_csv(tmp_path / "public.csv", index=False)
    priv = frame.iloc[50:].copy()
    priv["v"] = priv["v"].map(lambda x: f"{x:.3f}").astype(str)
    priv.iloc[5, 1] = "n/a?"
    _write_parts(tmp_path, priv, 2, "parquet")
    with pytest.raises(PrivateInputError) as ei:
        run_from_files(str(tmp_path / "part*.parquet"), "t", public=tmp_path / "public.csv")
    msg = str(ei.value)
    assert "column 'v'" in msg and "non-numeric" in msg and "part00.parquet" in msg, msg
    assert noise_spy == []


def test_one_pass_many_releases_and_reference():
    """The statistics do not depend on epsilon, lam or the seed: one pass serves every release."""
    from engine.pmt import RidgeReference
    from engine.pmt.dask import dask_statistics

    Xp, yp, Xq, yq = _split("wine-white")
    ds = dask_statistics(PMTRidge(center=None), da.from_array(Xp, chunks=(700, -1)), da.from_array(yp, chunks=700),
                         Xq, yq)
    for eps, lam, seed in [(0.5, 1e-3, 1), (4.0, 0.0, 2), (np.inf, 1e-2, 3)]:
        ref = PMTRidge(epsilon=eps, lam=lam, random_state=seed, center=None).fit(Xp, yp, Xq, yq)  # as the one pass
        th = ds.release(epsilon=eps, lam=lam, random_state=seed).theta_
        # Summation order changes A by ~1e-16 relative; the solve amplifies that by kappa of the system
        # (with lam > 0 on raw wine features, kappa_noisy ~ 1e5: then ~1e-9, as for the in-memory path
        # fed the same rows in another order). Below kappa ~ 1e4 the 1e-10 target holds.
        kappa = ref.report_.kappa_noisy if np.isfinite(ref.report_.kappa_noisy) else 1.0
        tol = max(1e-10, 100 * kappa * np.finfo(float).eps)
        assert np.linalg.norm(th - ref.theta_) <= tol * np.linalg.norm(ref.theta_), (eps, lam, kappa)
    with pytest.raises(ValueError, match="change the statistics"):
        ds.release(eta=0.1)
    np.testing.assert_allclose(ds.reference_theta(1e-3), RidgeReference(lam=1e-3).fit(Xp, yp).theta_, rtol=1e-6)


def test_cli_data_engine_dask_equals_memory(tmp_path, capsys):
    import json

    from engine.cli import main

    ds = load_dataset("wine-red")
    frame = ds.X.assign(quality=ds.y)
    frame.iloc[:N_PUB].to_csv(tmp_path / "public.csv", index=False)
    frame.iloc[N_PUB:].to_csv(tmp_path / "private.csv", index=False)
    _write_parts(tmp_path, frame.iloc[N_PUB:], 5, "parquet")
    common = ["pmt", "--target", "quality", "--public", str(tmp_path / "public.csv"), "--epsilon", "1", "3",
              "--seeds", "4", "--json"]
    # the same estimators on the same files, in memory (engine.cli.pmt_data's memory mode)
    from engine.cli import build_parser
    from engine.cli.pmt_data import run_data

    mem_args = build_parser().parse_args(common + ["--data", str(tmp_path / "private.csv")])
    assert mem_args.engine == "memory" and run_data(mem_args) == 0
    mem = json.loads(capsys.readouterr().out)
    assert main(common + ["--data", str(tmp_path / "part*.parquet"), "--engine", "dask"]) == 0
    dsk = json.loads(capsys.readouterr().out)
    assert dsk["settings"]["n_private"] == mem["settings"]["n_private"] == len(frame) - N_PUB
    assert [r["method"] for r in dsk["summary"]] == ["PMT", "PMT", "DP-RR", "DP-RR", "AdaSSP", "AdaSSP", "Public-only",
                                                    "Public-only"]
    for a, b in zip(mem["summary"], dsk["summary"]):
        assert (a["method"], a["epsilon"]) == (b["method"], b["epsilon"])
        assert b["median"] == pytest.approx(a["median"], rel=1e-6)
    assert main(["pmt", "--data", str(tmp_path / "part*.parquet"), "--engine", "dask", "--target", "quality"]) == 2
    assert "--public" in capsys.readouterr().err
    # the text report names the neighbouring relation (replace-one: n is public)
    assert main(common[:-1] + ["--data", str(tmp_path / "part*.parquet"), "--engine", "dask"]) == 0
    out = capsys.readouterr().out
    assert f"n = {len(frame) - N_PUB} private rows" in out and "replace-one" in out


def test_parquet_row_counts_come_from_the_footers(tmp_path):
    """n for R is read from the Parquet metadata: no task runs (a scheduler that refuses to run proves it)."""
    import dask

    from engine.pmt._dask_pass import _partition_lengths

    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(1000, 3)), columns=["a", "b", "t"])
    _write_parts(tmp_path, frame, 3, "parquet")
    ddf = dd.read_parquet(str(tmp_path / "part*.parquet"))

    def refuse(*args, **kwargs):
        raise AssertionError("a pass over the data was started")

    with dask.config.set(scheduler=refuse):
        lengths = _partition_lengths(ddf[["a", "b"]].assign(r=ddf["t"]))
    assert lengths == (334, 333, 333)


@pytest.mark.parametrize("name", ["ccpp", "wine-red", "wine-white"])
def test_pooled_on_dask_equals_memory(name, noise_spy):
    from engine.pmt.pooled import PMTPooledRidge

    Xp, yp, Xq, yq = _split(name)
    ref = PMTPooledRidge(random_state=9).fit(Xp, yp, Xq, yq)
    perm = np.random.default_rng(1).permutation(len(yp))
    m = PMTPooledRidge(random_state=9).fit(da.from_array(Xp[perm], chunks=(300, -1)),
                                           da.from_array(yp[perm], chunks=300), Xq, yq)
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=1e-10)
    assert m.report_.frac_y_clipped == ref.report_.frac_y_clipped and len(noise_spy) == 2


def test_public_only_with_dask_private_rows_runs_no_pass():
    import dask

    from engine.pmt.public import PublicOnlyRidge

    Xp, yp, Xq, yq = _split("wine-red")

    def refuse(*args, **kwargs):
        raise AssertionError("a pass over the private data was started")

    with dask.config.set(scheduler=refuse):
        m = PublicOnlyRidge().fit(da.from_array(Xp, chunks=100), da.from_array(yp, chunks=100), Xq, yq)
    np.testing.assert_allclose(m.theta_, PublicOnlyRidge().fit(Xp, yp, Xq, yq).theta_)
    with pytest.raises(ValueError, match="columns"):
        PublicOnlyRidge().fit(da.from_array(Xp[:, :3], chunks=100), None, Xq, yq)
