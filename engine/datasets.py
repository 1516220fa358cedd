"""Data sets: the bundled registry, the validating CSV loader for uploads, and the public/private split.

Everything the rest of the engine learns from enters through this module as one typed object,
:class:`Dataset` (features as a DataFrame, the target as a Series, the task kind, the feature names
and a citation). Three entry points:

- :func:`load_dataset` maps a short registry name (``"wine-red"``, ``"wine-white"``, ``"ccpp"``,
  ``"bank"``, ``"sentiment"``, ``"synthetic"``) to a loader over the files bundled in
  ``assets/data`` (UCI releases, CC BY 4.0; see ``assets/data/CITATION.md``). :func:`list_datasets`
  tabulates the registry.
- :func:`read_csv_upload` parses a user's CSV (a path, raw bytes, or a file-like object such as
  Streamlit's ``UploadedFile``) and rejects every bad input listed in the project's conventions with
  a :class:`ValueError` that names the column or value and what is accepted.
- :func:`public_private_split` draws a seeded public sample of ``n_pub`` rows (the "simulation"
  setting of PMT.md section 2.1, where the public sample comes from the same population), and
  :func:`standardize_with_public` centres and scales every feature by the PUBLIC sample's mean and
  standard deviation only, so no statistic of the private rows is ever touched without noise.

Synthetic data (:func:`make_synthetic_regression`, :func:`make_synthetic_logistic`) has a population
covariance ``Sigma = Q diag(geomspace(1, 1/kappa, d)) Q^T`` with a seeded Haar-random rotation ``Q``,
so its condition number is exactly ``kappa``; the ground truth (``theta_star``, ``Sigma``) is returned
in :attr:`Dataset.extras` so errors against the truth can be measured.

Nothing here imports Streamlit. The bundled raw frames are cached with :func:`functools.lru_cache`
and every loader returns fresh copies, so a caller cannot mutate the cache.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import numbers
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.privacy import check_random_state

__all__ = [
    "DATA_DIR",
    "MAX_ABS_VALUE",
    "MAX_UPLOAD_BYTES",
    "TASKS",
    "Dataset",
    "Split",
    "list_datasets",
    "load_dataset",
    "make_synthetic_logistic",
    "make_synthetic_regression",
    "public_private_split",
    "read_csv_columns",
    "read_csv_upload",
    "standardize_with_public",
]

#: Folder holding the bundled data files (``assets/data`` at the repository root).
DATA_DIR: Path = Path(__file__).resolve().parent.parent / "assets" / "data"

#: Largest accepted magnitude of a feature or target value. Anything larger is rejected as
#: overflow-prone: second moments of such values (``x**2`` > 1e300) and their sums over many rows
#: overflow float64 (max ~1.8e308). 1e308 itself is therefore rejected, not only ``inf``.
MAX_ABS_VALUE: float = 1e150

#: Default upload size cap in bytes (50 MiB; matches ``server.maxUploadSize`` in .streamlit/config.toml).
MAX_UPLOAD_BYTES: int = 50 * 2**20

#: Task kinds a :class:`Dataset` can carry.
TASKS: tuple[str, ...] = ("regression", "classification", "text-classification")

#: Delimiters :func:`read_csv_upload` sniffs among, in order of preference on ties.
_DELIMITERS: tuple[str, ...] = (",", ";", "\t")
_DELIM_NAMES = {",": "',' (comma)", ";": "';' (semicolon)", "\t": "tab"}


# --------------------------------------------------------------------------------------------------
# The typed object
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Dataset:
    """One data set: features, target, task kind and provenance.

    Attributes
    ----------
    name : str
        Registry short name (``"wine-red"`` ...) or ``"upload:<filename>"``.
    X : pandas.DataFrame of shape (n_samples, ...)
        Features. For tabular sets every column is float64 and ``list(X.columns) == feature_names``.
        For ``"text-classification"`` the feature is one string column ``"sentence"``; the bundled
        sentiment set also carries a metadata column ``"source"`` (``amazon``/``imdb``/``yelp``)
        that is NOT a feature (it is not in ``feature_names``).
    y : pandas.Series of shape (n_samples,)
        Target: float64 for regression, int64 in {0, 1} for (text-)classification.
    task : {"regression", "classification", "text-classification"}
    feature_names : tuple of str
        The feature columns, in order (``d = len(feature_names)``).
    target_name : str
    citation : str
        Human-readable citation including the DOI (``""`` for uploads and synthetic data).
    doi : str or None
    description : str
    extras : Mapping, optional
        Extra read-only facts. Synthetic sets hold the ground truth: ``theta_star`` (ndarray (d,)),
        ``Sigma`` (ndarray (d, d)), ``kappa``, ``eigenvalues``, ``random_state`` (and ``noise_std``
        for regression).
    """

    name: str
    X: pd.DataFrame
    y: pd.Series
    task: str
    feature_names: tuple[str, ...]
    target_name: str
    citation: str
    doi: str | None
    description: str
    extras: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of rows (samples)."""
        return int(len(self.X))

    @property
    def d(self) -> int:
        """Number of features (``len(feature_names)``)."""
        return len(self.feature_names)

    def to_numpy(self) -> tuple[np.ndarray, np.ndarray]:
        """Features and target as float64 arrays.

        Returns
        -------
        X : ndarray of shape (n, d), float64
        y : ndarray of shape (n,), float64

        Raises
        ------
        TypeError
            For ``"text-classification"`` data (the feature is text; embed it first, e.g. with
            ``X["sentence"]``).
        """
        if self.task == "text-classification":
            raise TypeError(
                f"data set {self.name!r} holds text (column 'sentence'); to_numpy() needs numeric features: "
                "embed the sentences first"
            )
        X = self.X.loc[:, list(self.feature_names)].to_numpy(dtype=np.float64, copy=True)
        y = self.y.to_numpy(dtype=np.float64, copy=True)
        return X, y

    def fingerprint(self) -> str:
        """A short sha256 hex digest of the data (features, target, task), usable as a cache key."""
        h = hashlib.sha256()
        h.update(self.task.encode())
        h.update("\x1f".join(self.feature_names).encode())
        h.update(pd.util.hash_pandas_object(self.X.loc[:, list(self.feature_names)], index=False).to_numpy().tobytes())
        h.update(pd.util.hash_pandas_object(self.y, index=False).to_numpy().tobytes())
        return h.hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class Split:
    """A public/private split of one data set.

    Attributes
    ----------
    X_pub : ndarray of shape (n_pub, d)
    y_pub : ndarray of shape (n_pub,)
    X_priv : ndarray of shape (n - n_pub, d)
    y_priv : ndarray of shape (n - n_pub,)
    idx_pub, idx_priv : ndarray of int64
        Row positions (0-based, sorted ascending) in the original data; disjoint, together ``0..n-1``.
    center, scale : ndarray of shape (d,) or None
        Set by :func:`standardize_with_public`: the public mean and standard deviation applied to
        both parts (``None`` for an unstandardised split).
    """

    X_pub: np.ndarray
    y_pub: np.ndarray
    X_priv: np.ndarray
    y_priv: np.ndarray
    idx_pub: np.ndarray
    idx_priv: np.ndarray
    center: np.ndarray | None = None
    scale: np.ndarray | None = None

    @property
    def n_pub(self) -> int:
        """Number of public rows."""
        return int(len(self.idx_pub))

    @property
    def n_priv(self) -> int:
        """Number of private rows."""
        return int(len(self.idx_priv))


# --------------------------------------------------------------------------------------------------
# Bundled data: registry and cached raw loaders
# --------------------------------------------------------------------------------------------------
_WINE_CITATION = (
    "P. Cortez, A. Cerdeira, F. Almeida, T. Matos, J. Reis (2009). Wine Quality. "
    "UCI Machine Learning Repository. https://doi.org/10.24432/C56S3T"
)
_CCPP_CITATION = (
    "P. Tüfekci, H. Kaya (2014). Combined Cycle Power Plant. UCI Machine Learning Repository. "
    "https://doi.org/10.24432/C5002N"
)
_BANK_CITATION = (
    "S. Moro, P. Rita, P. Cortez (2012). Bank Marketing. UCI Machine Learning Repository. "
    "https://doi.org/10.24432/C5K306"
)
_SENTIMENT_CITATION = (
    "D. Kotzias (2015). Sentiment Labelled Sentences. UCI Machine Learning Repository. "
    "https://doi.org/10.24432/C57604"
)

_SENTIMENT_SOURCES = (
    ("amazon", "amazon_cells_labelled.txt"),
    ("imdb", "imdb_labelled.txt"),
    ("yelp", "yelp_labelled.txt"),
)


@functools.lru_cache(maxsize=None)
def _raw_frame(key: str) -> pd.DataFrame:
    """Read one bundled file once (cached). Callers must copy before returning to users."""
    if key in ("wine-red", "wine-white"):
        colour = key.split("-")[1]
        return pd.read_csv(DATA_DIR / "wine_quality" / f"winequality-{colour}.csv", sep=";")
    if key == "ccpp":
        return pd.read_csv(DATA_DIR / "ccpp" / "Folds5x2_pp.csv", sep=",")
    if key == "bank":
        return pd.read_csv(DATA_DIR / "bank_marketing" / "bank-full.csv.gz", sep=";")
    if key == "sentiment":
        parts = []
        for source, fname in _SENTIMENT_SOURCES:
            # QUOTE_NONE: stray '"' characters would otherwise merge lines (imdb drops to 748 rows).
            part = pd.read_csv(
                DATA_DIR / "sentiment_labelled_sentences" / fname,
                sep="\t",
                header=None,
                names=["sentence", "label"],
                quoting=csv.QUOTE_NONE,
                encoding="utf-8",
                dtype={"sentence": str, "label": "int64"},
            )
            part["source"] = source
            parts.append(part)
        return pd.concat(parts, ignore_index=True)
    raise KeyError(key)  # pragma: no cover - guarded by load_dataset


def _tabular(name, frame, target, task, citation, doi, description) -> Dataset:
    X = frame.drop(columns=[target]).astype(np.float64)
    y = frame[target]
    y = y.astype(np.float64) if task == "regression" else y.astype(np.int64)
    X.columns = [str(c) for c in X.columns]
    return Dataset(
        name=name,
        X=X,
        y=y.rename(target),
        task=task,
        feature_names=tuple(X.columns),
        target_name=target,
        citation=citation,
        doi=doi,
        description=description,
    )


def _load_wine(colour: str) -> Dataset:
    name = f"wine-{colour}"
    frame = _raw_frame(name).copy()
    return _tabular(
        name, frame, "quality", "regression", _WINE_CITATION, "10.24432/C56S3T",
        f"Physicochemical tests of Portuguese 'Vinho Verde' {colour} wines (11 features) and the median "
        "sensory quality score 3-9 (treated as a real-valued regression target).",
    )


def _load_ccpp() -> Dataset:
    return _tabular(
        "ccpp", _raw_frame("ccpp").copy(), "PE", "regression", _CCPP_CITATION, "10.24432/C5002N",
        "Hourly averages from a combined cycle power plant: ambient temperature AT (degC), exhaust "
        "vacuum V (cm Hg), ambient pressure AP (mbar), relative humidity RH (%); target net electrical "
        "output PE (MW).",
    )


@functools.lru_cache(maxsize=1)
def _bank_prepared() -> pd.DataFrame:
    """bank-full: one-hot the 9 categoricals (drop_first), drop ``duration``, y = 1 for "yes" (cached)."""
    raw = _raw_frame("bank")
    y = (raw["y"] == "yes").astype(np.int64)
    # `duration` is only known after the call ends; UCI advises leaving it out of a predictive model.
    X = raw.drop(columns=["y", "duration"])
    X = pd.get_dummies(X, drop_first=True, dtype=np.float64).astype(np.float64)
    return X.assign(y=y.to_numpy())


def _load_bank() -> Dataset:
    """bank-full: one-hot the 9 categoricals (drop_first), drop ``duration``, y = 1 for "yes"."""
    frame = _bank_prepared().copy()
    return _tabular(
        "bank", frame, "y", "classification", _BANK_CITATION, "10.24432/C5K306",
        "Direct-marketing phone calls of a Portuguese bank (bank-full): did the client subscribe a term "
        "deposit (y = 1)? 6 numeric inputs plus 9 one-hot-encoded categoricals (first level dropped); "
        "'duration' is dropped because it is only known after the call.",
    )


def _load_sentiment() -> Dataset:
    raw = _raw_frame("sentiment").copy()
    X = raw[["sentence", "source"]].copy()
    return Dataset(
        name="sentiment",
        X=X,
        y=raw["label"].astype(np.int64).rename("label"),
        task="text-classification",
        feature_names=("sentence",),
        target_name="label",
        citation=_SENTIMENT_CITATION,
        doi="10.24432/C57604",
        description="3000 review sentences (500 positive + 500 negative from each of amazon, imdb and "
        "yelp) labelled 1 (positive) or 0 (negative). Column 'source' names the site (metadata).",
    )


_REGISTRY: dict[str, dict[str, Any]] = {
    "wine-red": {"loader": lambda **kw: _load_wine("red"), "task": "regression", "target": "quality",
                 "doi": "10.24432/C56S3T"},
    "wine-white": {"loader": lambda **kw: _load_wine("white"), "task": "regression", "target": "quality",
                   "doi": "10.24432/C56S3T"},
    "ccpp": {"loader": lambda **kw: _load_ccpp(), "task": "regression", "target": "PE", "doi": "10.24432/C5002N"},
    "bank": {"loader": lambda **kw: _load_bank(), "task": "classification", "target": "y", "doi": "10.24432/C5K306"},
    "sentiment": {"loader": lambda **kw: _load_sentiment(), "task": "text-classification", "target": "label",
                  "doi": "10.24432/C57604"},
    "synthetic": {"loader": lambda **kw: make_synthetic_regression(**kw), "task": "regression", "target": "y",
                  "doi": None},
}


def load_dataset(name: str, **kwargs) -> Dataset:
    """Load a data set from the registry by its short name.

    Parameters
    ----------
    name : {"wine-red", "wine-white", "ccpp", "bank", "sentiment", "synthetic"}
        Short registry name (case-insensitive; surrounding blanks ignored).
    **kwargs
        Only for ``"synthetic"``: forwarded to :func:`make_synthetic_regression`
        (``n, d, kappa, noise_std, theta_norm, random_state``). The bundled sets take none.

    Returns
    -------
    Dataset
        A fresh object (its frames are copies; mutating them does not affect later loads).

    Raises
    ------
    ValueError
        Unknown name (the message lists the accepted names).
    TypeError
        Keyword arguments passed for a bundled set.

    Notes
    -----
    Shapes: wine-red 1599 x 11, wine-white 4898 x 11, ccpp 9568 x 4, bank 45211 x 41, sentiment 3000
    sentences. Sources: UCI Machine Learning Repository, CC BY 4.0 (``assets/data/CITATION.md``).

    Examples
    --------
    >>> ds = load_dataset("wine-red")
    >>> (ds.n, ds.d, ds.task, ds.target_name)
    (1599, 11, 'regression', 'quality')
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in _REGISTRY:
        raise ValueError(f"unknown data set {name!r}; accepted names: {', '.join(_REGISTRY)}")
    if kwargs and key != "synthetic":
        raise TypeError(f"data set {key!r} takes no options, got {sorted(kwargs)}")
    return _REGISTRY[key]["loader"](**kwargs)


def list_datasets() -> pd.DataFrame:
    """The registry as a table.

    Returns
    -------
    pandas.DataFrame
        One row per registry name with columns ``name, rows, features, task, target, source``
        (``source`` is ``"doi:<DOI>"`` or ``"generated"``; rows/features are measured by loading the
        data, with the defaults for ``synthetic``).

    Examples
    --------
    >>> t = list_datasets()
    >>> list(t.columns)
    ['name', 'rows', 'features', 'task', 'target', 'source']
    >>> t.set_index("name").loc["ccpp", ["rows", "features"]].tolist()
    [9568, 4]
    """
    rows = []
    for key, spec in _REGISTRY.items():
        ds = load_dataset(key)
        rows.append(
            {
                "name": key,
                "rows": ds.n,
                "features": ds.d,
                "task": ds.task,
                "target": ds.target_name,
                "source": f"doi:{spec['doi']}" if spec["doi"] else "generated",
            }
        )
    return pd.DataFrame(rows, columns=["name", "rows", "features", "task", "target", "source"])


# --------------------------------------------------------------------------------------------------
# Synthetic data with an exact condition number
# --------------------------------------------------------------------------------------------------
def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _check_float(value, name: str, *, minimum: float, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not np.isfinite(v) or v < minimum or (strict and v == minimum):
        op = ">" if strict else ">="
        raise ValueError(f"{name} must be finite and {op} {minimum:g}, got {value!r}")
    return v


def _synthetic_design(n, d, kappa, theta_norm, random_state):
    """Validate and draw (X, theta*, Sigma, eigenvalues, rng) for the synthetic generators."""
    n = _check_int(n, "n", 2)
    d = _check_int(d, "d", 1)
    kappa = _check_float(kappa, "kappa", minimum=1.0)
    theta_norm = _check_float(theta_norm, "theta_norm", minimum=0.0)
    if d == 1 and kappa != 1.0:
        raise ValueError(f"with d = 1 the covariance is a scalar, so kappa must be 1, got {kappa:g}")
    rng = check_random_state(random_state)
    eig = np.geomspace(1.0, 1.0 / kappa, d)
    # Haar-random rotation: QR of a Gaussian matrix with the signs of R's diagonal folded into Q.
    G = rng.standard_normal((d, d))
    Q, R = np.linalg.qr(G)
    Q = Q * np.sign(np.diag(R))
    Sigma = (Q * eig) @ Q.T
    Sigma = (Sigma + Sigma.T) / 2.0
    X = (rng.standard_normal((n, d)) * np.sqrt(eig)) @ Q.T
    direction = rng.standard_normal(d)
    theta = theta_norm * direction / np.linalg.norm(direction)
    return n, d, kappa, theta_norm, X, theta, Sigma, eig, rng


def make_synthetic_regression(
    *, n: int = 20000, d: int = 10, kappa: float = 1e3, noise_std: float = 1.0, theta_norm: float = 1.0,
    random_state=0,
) -> Dataset:
    """Gaussian linear-regression data whose population covariance has condition number ``kappa``.

    Rows ``x_i ~ N(0, Sigma)`` with ``Sigma = Q diag(geomspace(1, 1/kappa, d)) Q^T`` (``Q`` a seeded
    Haar-random rotation, so ``kappa(Sigma) = kappa`` exactly, up to float rounding), and
    ``y_i = x_i^T theta* + noise_std * N(0, 1)`` with ``||theta*||_2 = theta_norm`` (uniformly random
    direction). This is the ill-conditioned design PMT (PMT.md) is meant for.

    Parameters
    ----------
    n : int, default 20000
        Rows (>= 2).
    d : int, default 10
        Features (>= 1; with d = 1, kappa must be 1).
    kappa : float, default 1e3
        Condition number of Sigma (>= 1, finite).
    noise_std : float, default 1.0
        Standard deviation of the additive Gaussian noise (>= 0).
    theta_norm : float, default 1.0
        L2 norm of the true coefficient vector (>= 0).
    random_state : None, int or numpy.random.Generator, default 0

    Returns
    -------
    Dataset
        ``task="regression"``, features ``x0..x{d-1}``, target ``y``; ``extras`` holds
        ``theta_star`` (d,), ``Sigma`` (d, d), ``eigenvalues`` (d,), ``kappa``, ``noise_std``.

    Raises
    ------
    TypeError, ValueError
        For parameters outside the ranges above.

    Examples
    --------
    >>> ds = make_synthetic_regression(n=500, d=4, kappa=100.0, random_state=1)
    >>> ds.X.shape, round(float(np.linalg.cond(ds.extras["Sigma"])), 6)
    ((500, 4), 100.0)
    """
    noise_std = _check_float(noise_std, "noise_std", minimum=0.0)
    n, d, kappa, theta_norm, X, theta, Sigma, eig, rng = _synthetic_design(n, d, kappa, theta_norm, random_state)
    y = X @ theta + noise_std * rng.standard_normal(n)
    return _synthetic_dataset(
        "synthetic", X, y, "regression",
        f"Synthetic Gaussian linear regression: n={n}, d={d}, kappa(Sigma)={kappa:g}, "
        f"noise_std={noise_std:g}, ||theta*||={theta_norm:g}.",
        {"theta_star": theta, "Sigma": Sigma, "eigenvalues": eig, "kappa": kappa,
         "noise_std": noise_std, "theta_norm": theta_norm, "random_state": random_state},
    )


def _synthetic_dataset(name, X, y, task, description, extras):
    """Wrap synthetic arrays as a :class:`Dataset` (columns ``x0..x{d-1}``, target ``y``, no citation)."""
    names = tuple(f"x{j}" for j in range(X.shape[1]))
    return Dataset(
        name=name,
        X=pd.DataFrame(X, columns=list(names)),
        y=pd.Series(y, name="y"),
        task=task,
        feature_names=names,
        target_name="y",
        citation="",
        doi=None,
        description=description,
        extras=extras,
    )


def make_synthetic_logistic(
    *, n: int = 20000, d: int = 10, kappa: float = 100.0, theta_norm: float = 3.0, random_state=0,
) -> Dataset:
    """Gaussian logistic-regression data whose population covariance has condition number ``kappa``.

    Rows ``x_i ~ N(0, Sigma)`` as in :func:`make_synthetic_regression`; labels
    ``y_i ~ Bernoulli(sigmoid(x_i^T theta*))`` in {0, 1} with ``||theta*||_2 = theta_norm``.

    Parameters
    ----------
    n : int, default 20000
    d : int, default 10
    kappa : float, default 100.0
    theta_norm : float, default 3.0
    random_state : None, int or numpy.random.Generator, default 0

    Returns
    -------
    Dataset
        ``task="classification"``, ``y`` int64 in {0, 1}; ``extras`` as for regression (no ``noise_std``).

    Raises
    ------
    TypeError, ValueError
        For parameters outside the ranges of :func:`make_synthetic_regression`.

    Examples
    --------
    >>> ds = make_synthetic_logistic(n=400, d=3, kappa=10.0, random_state=2)
    >>> ds.task, sorted(ds.y.unique().tolist())
    ('classification', [0, 1])
    """
    n, d, kappa, theta_norm, X, theta, Sigma, eig, rng = _synthetic_design(n, d, kappa, theta_norm, random_state)
    p = 1.0 / (1.0 + np.exp(-(X @ theta)))
    y = (rng.random(n) < p).astype(np.int64)
    return _synthetic_dataset(
        "synthetic-logistic", X, y, "classification",
        f"Synthetic Gaussian logistic regression: n={n}, d={d}, kappa(Sigma)={kappa:g}, "
        f"||theta*||={theta_norm:g}.",
        {"theta_star": theta, "Sigma": Sigma, "eigenvalues": eig, "kappa": kappa,
         "theta_norm": theta_norm, "random_state": random_state},
    )


# --------------------------------------------------------------------------------------------------
# CSV uploads
# --------------------------------------------------------------------------------------------------
def _fmt_bytes(b: int) -> str:
    return f"{b / 2**20:.1f} MB" if b >= 2**20 else f"{b} bytes"


def _read_source(source, max_bytes: int) -> tuple[bytes, str]:
    """Return (raw bytes, file name) from a path, bytes, or a file-like object; enforce the size cap."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"no such file: {str(path)!r}")
        size = path.stat().st_size
        if size > max_bytes:
            raise ValueError(f"the file is {_fmt_bytes(size)}, larger than the upload limit of {_fmt_bytes(max_bytes)}")
        return path.read_bytes(), path.name
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
        name = "data.csv"
    elif hasattr(source, "read"):
        size = getattr(source, "size", None)
        if isinstance(size, numbers.Integral) and size > max_bytes:
            raise ValueError(f"the file is {_fmt_bytes(int(size))}, larger than the upload limit of {_fmt_bytes(max_bytes)}")
        if hasattr(source, "getvalue"):
            raw = source.getvalue()
        else:
            if hasattr(source, "seek"):
                try:
                    source.seek(0)
                except (OSError, ValueError):
                    pass
            raw = source.read(max_bytes + 1)
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        name = os.path.basename(str(getattr(source, "name", "") or "data.csv"))
    else:
        raise TypeError(
            f"source must be a path, bytes or a file-like object with .read(), got {type(source).__name__}"
        )
    if len(raw) > max_bytes:
        raise ValueError(f"the file is larger than the upload limit of {_fmt_bytes(max_bytes)} "
                         f"(read {_fmt_bytes(len(raw))} so far)")
    return raw, name


def _decode(raw: bytes) -> str:
    if b"\x00" in raw[:8192]:
        raise ValueError(
            "the file looks binary (it contains NUL bytes), not a CSV text file; export it as CSV "
            "(comma, semicolon or tab separated) first"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # every byte sequence decodes; Western-European spreadsheets


def _header_fields(line: str, delim: str) -> list[str]:
    return next(csv.reader([line], delimiter=delim))


def _sniff_delimiter(header: str) -> str:
    """Pick the delimiter among ',', ';', tab that splits the header line into the most fields."""
    best, best_count = ",", 1
    for delim in _DELIMITERS:
        count = len(_header_fields(header, delim))
        if count > best_count:
            best, best_count = delim, count
    return best


def _row_list(mask: np.ndarray, limit: int = 5) -> str:
    """'data row 3' / 'data rows 3, 7, ...' for the True entries of mask (1-based, header not counted)."""
    rows = (np.flatnonzero(mask) + 1).tolist()
    shown = ", ".join(str(r) for r in rows[:limit])
    return ("data row " if len(rows) == 1 else "data rows ") + shown + (", ..." if len(rows) > limit else "")


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _numeric_column(series: pd.Series, col: str, role: str) -> np.ndarray:
    """Convert one column to float64, rejecting non-numeric, missing, infinite and huge entries."""
    what = f"{role} column {col!r}"
    if series.dtype == bool:
        values = series.to_numpy(dtype=np.float64)
    else:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    missing_in_file = series.isna().to_numpy()
    if missing_in_file.all():
        raise ValueError(f"{what} is empty: all {len(series)} values are missing (NaN); drop the column")
    unreadable = np.isnan(values) & ~missing_in_file
    if unreadable.any():
        raise ValueError(
            f"{what} is not numeric: {int(unreadable.sum())} of {len(series)} values cannot be read as numbers "
            f"({_row_list(unreadable)}); only numeric columns are accepted as features or a "
            "regression target: remove the column or encode it as numbers"
        )
    nan = np.isnan(values)
    if nan.any():
        raise ValueError(
            f"{what} has {_count(int(nan.sum()), 'missing (NaN) value')} ({_row_list(nan)}); "
            "missing values are not accepted: remove or impute those rows first"
        )
    inf = np.isinf(values)
    if inf.any():
        raise ValueError(
            f"{what} has {_count(int(inf.sum()), 'infinite value')} ({_row_list(inf)}); only finite numbers "
            f"with |value| <= {MAX_ABS_VALUE:g} are accepted"
        )
    huge = np.abs(values) > MAX_ABS_VALUE
    if huge.any():
        raise ValueError(
            f"{what} has {_count(int(huge.sum()), 'value')} with magnitude above {MAX_ABS_VALUE:g} "
            f"({_row_list(huge)}); they are overflow-prone (their squares exceed float64's range), "
            f"accepted are finite numbers with |value| <= {MAX_ABS_VALUE:g}: rescale the column"
        )
    return values


def _binary_labels(series: pd.Series, col: str) -> np.ndarray:
    """Labels must be exactly 0/1 (or true/false); both classes must occur. Messages never reveal values."""
    if series.isna().any():
        miss = series.isna().to_numpy()
        raise ValueError(
            f"target column {col!r} has {_count(int(miss.sum()), 'missing label')} ({_row_list(miss)}); "
            "every row needs a label 0 or 1"
        )
    if series.dtype == bool:
        values = series.to_numpy(dtype=np.float64)
    elif not pd.api.types.is_numeric_dtype(series):
        lowered = series.astype(str).str.strip().str.lower().map({"true": 1.0, "false": 0.0})
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
        values = np.where(np.isnan(values), lowered.to_numpy(dtype=np.float64), values)
    else:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            f"classification target column {col!r} must hold only the labels 0 and 1 (or true/false); "
            f"{_count(int(bad.sum()), 'row')} with other values ({_row_list(bad)}): encode the positive class "
            "as 1 and the negative class as 0, or choose task 'regression'"
        )
    if np.all(values == values[0]):
        raise ValueError(
            f"classification target column {col!r} has only one class: both labels 0 and 1 must occur"
        )
    return values.astype(np.int64)


def _parse_header(text: str, sep: str | None) -> tuple[str, list[str]]:
    """Find the header line, choose the delimiter, and validate the column names."""
    header = next((ln.rstrip("\r\n") for ln in io.StringIO(text) if ln.strip()), None)
    if header is None:
        raise ValueError("the file is empty: expected a header line with column names and at least 2 data rows")
    delim = sep if sep is not None else _sniff_delimiter(header)
    names = [h.strip() for h in _header_fields(header, delim)]
    if len(names) < 2:
        seen = [_DELIM_NAMES[c] for c in _DELIMITERS if c != delim and c in header]
        hint = (
            f"; the header contains {seen[0]}, so the file looks {seen[0].split()[0]}-separated: choose that delimiter"
            if seen
            else "; other delimiters such as '|' or spaces are not accepted: re-save the file as CSV"
        )
        raise ValueError(
            f"the file parsed into a single column ({names[0][:60]!r}) with delimiter {_DELIM_NAMES[delim]}: "
            f"need at least 2 columns (features and a target) separated by ',', ';' or tab{hint}"
        )
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise ValueError(f"column name {dupes[0]!r} appears more than once in the header; column names must be unique")
    if any(c == "" for c in names):
        raise ValueError(f"column {names.index('') + 1} has an empty name in the header; every column needs a name")
    return delim, names


def read_csv_columns(source, *, max_bytes: int = MAX_UPLOAD_BYTES, sep: str | None = None) -> list[str]:
    """The column names of a CSV upload (header only), e.g. to offer target/feature pickers.

    Applies the same size cap, encoding, delimiter sniffing and header checks as
    :func:`read_csv_upload` (and raises the same :class:`ValueError` messages for them); the data
    rows are not validated.

    Parameters
    ----------
    source : str, os.PathLike, bytes, or file-like
    max_bytes : int, default 50 MiB
    sep : {",", ";", "\\t"}, optional

    Returns
    -------
    list of str

    Examples
    --------
    >>> read_csv_columns(b"x;y;label\\n1;2;0\\n")
    ['x', 'y', 'label']
    """
    max_bytes = _check_int(max_bytes, "max_bytes", 1)
    if sep is not None and sep not in _DELIMITERS:
        raise ValueError(f"sep must be one of ',', ';', '\\t' (or None to sniff), got {sep!r}")
    raw, _ = _read_source(source, max_bytes)
    return _parse_header(_decode(raw), sep)[1]


def read_csv_upload(
    source,
    *,
    target: str | None = None,
    features=None,
    task: str | None = None,
    max_bytes: int = MAX_UPLOAD_BYTES,
    sep: str | None = None,
) -> Dataset:
    """Parse and validate a user's CSV into a :class:`Dataset`.

    Parameters
    ----------
    source : str, os.PathLike, bytes, or file-like
        A path to a CSV file, its raw bytes, or an object with ``.read()`` (Streamlit's
        ``UploadedFile`` works: its ``.size`` is checked before reading, its ``.name`` is kept).
    target : str, optional
        Target column. Default: the LAST column.
    features : sequence of str, optional
        Feature columns, in order. Default: every column except the target.
    task : {"regression", "classification", "text-classification"}, optional
        Default: ``"classification"`` if the target holds only 0/1 (or true/false) values, else
        ``"regression"``. ``"text-classification"`` needs exactly one (string) feature column.
    max_bytes : int, default 50 MiB
        Size cap; a larger file is rejected before it is parsed.
    sep : {",", ";", "\\t"}, optional
        Delimiter. Default: sniffed from the header line (the candidate giving the most fields).
        A ``;``-separated file whose numbers use a decimal comma (``1,5``) is read with
        ``decimal=","`` when that turns more columns numeric.

    Returns
    -------
    Dataset
        ``name="upload:<filename>"``, float64 features, float64 (regression) or int64 {0, 1}
        (classification) target, empty citation.

    Raises
    ------
    ValueError
        With a message naming the column or value and what is accepted, for: a file over
        ``max_bytes``; an empty file; a binary file; a header without rows; a single data row; a
        file that parses into one column (wrong delimiter); duplicate column names; a missing target
        or feature column; a non-numeric or all-missing column; NaN, infinite or overflow-prone
        (``|x| > MAX_ABS_VALUE = 1e150``, so 1e308 is rejected) values in a feature or the target; a
        constant column; two identical feature columns; labels other than 0/1 or a single class for
        classification; n <= d (need more rows than features).
    TypeError
        ``source`` of an unsupported type.

    Notes
    -----
    Messages name columns and 1-based data-row numbers (the header is not counted) but, for the
    class-balance check, never the data values (an all-0 and an all-1 target give the same message).
    Nothing is written to disk.

    Examples
    --------
    >>> ds = read_csv_upload(b"a;b;y\\n1;2;0\\n2;1;1\\n3;5;0\\n4;4;1\\n")
    >>> ds.name, ds.task, ds.feature_names, ds.n
    ('upload:data.csv', 'classification', ('a', 'b'), 4)
    """
    max_bytes = _check_int(max_bytes, "max_bytes", 1)
    if task is not None and task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)} (or None to infer), got {task!r}")
    if sep is not None and sep not in _DELIMITERS:
        raise ValueError(f"sep must be one of ',', ';', '\\t' (or None to sniff), got {sep!r}")

    raw, filename = _read_source(source, max_bytes)
    text = _decode(raw)
    delim, names = _parse_header(text, sep)

    try:
        with warnings.catch_warnings():
            # pandas only warns (and drops data) when a row has more fields than the header.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.StringIO(text), sep=delim, header=0, names=names, index_col=False,
                                skip_blank_lines=True, skipinitialspace=True)
    except pd.errors.EmptyDataError as exc:
        raise ValueError("the file is empty: expected a header line with column names and at least 2 data rows") from exc
    except (pd.errors.ParserError, pd.errors.ParserWarning, csv.Error) as exc:
        data_lines = [ln for ln in io.StringIO(text) if ln.strip()][1:]
        lengths = [len(row) for row in csv.reader(data_lines, delimiter=delim)]
        long_rows = [i for i, k in enumerate(lengths, start=1) if k > len(names)]
        where = f" (data row {long_rows[0]} has {lengths[long_rows[0] - 1]})" if long_rows else ""
        raise ValueError(
            f"the file could not be parsed as {_DELIM_NAMES[delim]}-separated CSV: a row has more fields than the "
            f"header's {len(names)} columns{where}; every row must have one field per column"
        ) from exc
    def n_text(f: pd.DataFrame) -> int:
        return sum(not pd.api.types.is_numeric_dtype(t) for t in f.dtypes)

    if delim == ";" and n_text(frame) > 0:
        # Semicolon files from European spreadsheets often write decimals with a comma ("1,5").
        try:
            alt = pd.read_csv(io.StringIO(text), sep=delim, header=0, names=names, index_col=False,
                              skip_blank_lines=True, skipinitialspace=True, decimal=",")
            if n_text(alt) < n_text(frame):
                frame = alt
        except (pd.errors.ParserError, ValueError):  # pragma: no cover - the first parse succeeded
            pass
    if len(frame) == 0:
        raise ValueError(f"the file has a header ({len(names)} columns) but no data rows; need at least 2 rows")
    if len(frame) == 1:
        raise ValueError("the file has only one data row; need at least 2 rows (and more rows than features)")

    # --- choose columns ---------------------------------------------------------------------------
    if target is None:
        target = names[-1]
    if target not in names:
        raise ValueError(f"target column {target!r} not found; the columns are: {', '.join(map(repr, names))}")
    if features is None:
        features = [c for c in names if c != target]
    else:
        if isinstance(features, str):
            features = [features]
        features = list(features)
        if not features:
            raise ValueError("features is empty: choose at least one feature column")
        missing = [c for c in features if c not in names]
        if missing:
            raise ValueError(f"feature column {missing[0]!r} not found; the columns are: {', '.join(map(repr, names))}")
        if target in features:
            raise ValueError(f"column {target!r} is the target and cannot also be a feature")
        dup_feat = sorted({c for c in features if features.count(c) > 1})
        if dup_feat:
            raise ValueError(f"feature column {dup_feat[0]!r} is listed more than once")

    # --- task ---------------------------------------------------------------------------------------
    if task is None:
        t = frame[target]
        if t.dtype == bool:
            task = "classification"
        else:
            num = pd.to_numeric(t, errors="coerce")
            task = "classification" if (num.notna().all() and num.isin((0, 1)).all()) else "regression"

    # --- target ------------------------------------------------------------------------------------
    if task == "regression":
        y_values = _numeric_column(frame[target], target, "target")
        if np.all(y_values == y_values[0]):
            raise ValueError(f"target column {target!r} is constant (every row has the same value): nothing to learn")
        y = pd.Series(y_values, name=target)
    else:
        y = pd.Series(_binary_labels(frame[target], target), name=target)

    # --- features ----------------------------------------------------------------------------------
    if task == "text-classification":
        if len(features) != 1:
            raise ValueError(
                f"task 'text-classification' needs exactly one text feature column, got {len(features)}: "
                f"{', '.join(map(repr, features))}"
            )
        col = features[0]
        s = frame[col]
        blank = s.isna().to_numpy() | (s.astype(str).str.strip() == "").to_numpy()
        if blank.any():
            raise ValueError(
                f"text column {col!r} has {_count(int(blank.sum()), 'empty entry').replace('entrys', 'entries')} ({_row_list(blank)}); "
                "every row needs a sentence"
            )
        X = pd.DataFrame({"sentence": s.astype(str).to_numpy()})
        feature_names: tuple[str, ...] = ("sentence",)
    else:
        cols = {c: _numeric_column(frame[c], c, "feature") for c in features}
        for c, v in cols.items():
            if np.all(v == v[0]):
                raise ValueError(
                    f"feature column {c!r} is constant (every row has the same value); it carries no information "
                    "and makes the second-moment matrix singular: drop it"
                )
        seen: dict[bytes, str] = {}
        for c, v in cols.items():
            key = hashlib.sha256(np.ascontiguousarray(v + 0.0).tobytes()).digest()
            if key in seen and np.array_equal(cols[seen[key]], v):
                raise ValueError(
                    f"feature columns {seen[key]!r} and {c!r} are identical; the design matrix would be "
                    "rank-deficient: drop one of them"
                )
            seen[key] = c
        X = pd.DataFrame(cols)
        feature_names = tuple(features)
        n, d = len(X), len(feature_names)
        if n <= d:
            raise ValueError(
                f"too few rows: n = {n} rows for d = {d} features; need more rows than features (n >= d + 1 = {d + 1})"
            )

    return Dataset(
        name=f"upload:{filename}",
        X=X,
        y=y,
        task=task,
        feature_names=feature_names,
        target_name=target,
        citation="",
        doi=None,
        description=f"Uploaded file {filename!r}: {len(X)} rows, {len(feature_names)} features, target {target!r} "
        f"({task}).",
    )


# --------------------------------------------------------------------------------------------------
# Public / private split and public-only standardisation
# --------------------------------------------------------------------------------------------------
def public_private_split(X, y, *, n_pub: int, random_state) -> Split:
    """Draw a seeded public sample of ``n_pub`` rows; the rest is private.

    This is the "simulation" setting of PMT.md section 2.1: the public sample is a uniformly random
    subset of the same population (in a real deployment it would be a separate, public file).

    Parameters
    ----------
    X : array-like of shape (n, d) (or (n,), e.g. sentences)
    y : array-like of shape (n,)
    n_pub : int
        Public rows, ``1 <= n_pub <= n - 1`` (``n_pub < 1`` or ``n_pub >= n`` raise). When
        ``n_pub <= d`` (and X is 2-D) a :class:`UserWarning` says that the public second moment
        will be singular: ``(1/m) X_pub^T X_pub`` has rank <= m, so it is singular for m < d, and
        for m <= d once PMT appends the intercept column (d + 1 columns) or the features are
        centred with public statistics. Such splits are allowed because PMT.md section 2 step 1
        regularises a singular public moment (``tau * I``); ``n_pub >= d + 1`` avoids that.
    random_state : None, int or numpy.random.Generator
        Source of the permutation; the same int gives the same split.

    Returns
    -------
    Split
        Index arrays sorted ascending, disjoint, covering ``0..n-1``.

    Raises
    ------
    TypeError
        ``n_pub`` not an int; bad ``random_state``.
    ValueError
        ``n_pub < 1`` or ``n_pub >= n``; X and y of different lengths.

    Examples
    --------
    >>> X = np.arange(20.0).reshape(10, 2); y = np.arange(10.0)
    >>> s = public_private_split(X, y, n_pub=3, random_state=0)
    >>> s.X_pub.shape, s.X_priv.shape, sorted(set(s.idx_pub) | set(s.idx_priv)) == list(range(10))
    ((3, 2), (7, 2), True)
    """
    Xa = X.to_numpy() if isinstance(X, (pd.DataFrame, pd.Series)) else np.asarray(X)
    ya = y.to_numpy() if isinstance(y, (pd.DataFrame, pd.Series)) else np.asarray(y)
    if Xa.ndim not in (1, 2):
        raise ValueError(f"X must be 1-D or 2-D, got shape {Xa.shape}")
    if ya.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {ya.shape}")
    n = Xa.shape[0]
    if len(ya) != n:
        raise ValueError(f"X has {n} rows but y has {len(ya)}; they must match")
    if isinstance(n_pub, bool) or not isinstance(n_pub, numbers.Integral):
        raise TypeError(f"n_pub must be an int, got {n_pub!r}")
    n_pub = int(n_pub)
    if n_pub < 1 or n_pub >= n:
        raise ValueError(
            f"n_pub must satisfy 1 <= n_pub <= n - 1 = {n - 1} (some rows must stay private), got n_pub = {n_pub}"
        )
    d = Xa.shape[1] if Xa.ndim == 2 else None
    if d is not None and n_pub <= d:
        warnings.warn(
            f"n_pub = {n_pub} <= d = {d}: the public second-moment matrix is singular and will be regularised; "
            f"n_pub >= d + 1 = {d + 1} gives a nonsingular public moment",
            UserWarning,
            stacklevel=2,
        )
    rng = check_random_state(random_state)
    perm = rng.permutation(n)
    idx_pub = np.sort(perm[:n_pub]).astype(np.int64)
    idx_priv = np.sort(perm[n_pub:]).astype(np.int64)
    return Split(
        X_pub=Xa[idx_pub].copy(),
        y_pub=ya[idx_pub].copy(),
        X_priv=Xa[idx_priv].copy(),
        y_priv=ya[idx_priv].copy(),
        idx_pub=idx_pub,
        idx_priv=idx_priv,
    )


def standardize_with_public(split: Split) -> Split:
    """Centre and scale every feature column by the PUBLIC sample's mean and standard deviation.

    ``X -> (X - mean(X_pub)) / std(X_pub)`` (population std, ``ddof=0``) is applied to both parts;
    the target is left unchanged. The private rows' own statistics are never used, so this step
    spends no privacy budget (and the private mean is in general NOT zero afterwards).

    A column whose public std is 0 (e.g. a rare one-hot indicator absent from a small public
    sample, or ``n_pub = 1``) is only centred (scale 1), and a :class:`UserWarning` names how many
    columns that affected.

    Parameters
    ----------
    split : Split
        From :func:`public_private_split`; X parts must be numeric 2-D arrays.

    Returns
    -------
    Split
        A new split with float64 X parts and ``center``/``scale`` set (both shape (d,)).

    Raises
    ------
    TypeError
        Non-numeric features (e.g. text).

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 9.0], [6.0, 5.0], [1.0, 7.0], [3.0, 2.0]])
    >>> s = public_private_split(X, np.zeros(6), n_pub=3, random_state=0)
    >>> z = standardize_with_public(s)
    >>> np.allclose(z.X_pub.mean(axis=0), 0.0), np.allclose(z.X_pub.std(axis=0), 1.0)
    (True, True)
    """
    if not isinstance(split, Split):
        raise TypeError(f"split must be a Split, got {type(split).__name__}")
    Xp, Xq = np.asarray(split.X_pub), np.asarray(split.X_priv)
    if Xp.ndim != 2 or not np.issubdtype(Xp.dtype, np.number) or not np.issubdtype(Xq.dtype, np.number):
        raise TypeError("standardize_with_public needs numeric 2-D features (text must be embedded first)")
    Xp = Xp.astype(np.float64)
    Xq = Xq.astype(np.float64)
    center = Xp.mean(axis=0)
    std = Xp.std(axis=0)
    zero = ~(std > 0)
    if zero.any():
        warnings.warn(
            f"{int(zero.sum())} feature column(s) are constant in the public sample (public std = 0); "
            "they are centred but not scaled",
            UserWarning,
            stacklevel=2,
        )
    scale = np.where(zero, 1.0, std)
    return Split(
        X_pub=(Xp - center) / scale,
        y_pub=np.asarray(split.y_pub).copy(),
        X_priv=(Xq - center) / scale,
        y_priv=np.asarray(split.y_priv).copy(),
        idx_pub=split.idx_pub.copy(),
        idx_priv=split.idx_priv.copy(),
        center=center,
        scale=scale,
    )
