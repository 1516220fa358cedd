"""The registry of bundled data sets (UCI releases in ``assets/data``) and its cached raw loaders.

:func:`load_dataset` maps a short registry name (``"wine-red"``, ``"wine-white"``, ``"ccpp"``,
``"bank"``, ``"sentiment"``, ``"synthetic"``) to a loader over the files bundled in ``assets/data``
(UCI releases, CC BY 4.0; see ``assets/data/CITATION.md``); :func:`list_datasets` tabulates the
registry. The raw frames are cached with :func:`functools.lru_cache` and every loader returns fresh
copies, so a caller cannot mutate the cache.
"""

from __future__ import annotations

import csv
import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.datasets._base import DATA_DIR, Dataset
from engine.datasets.synthetic import make_synthetic_regression

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
_FLIGHTS_CITATION = (
    "H. Wickham (2021). nycflights13: Flights that Departed NYC in 2013. R package version 1.0.2 "
    "(data: US Bureau of Transportation Statistics, On-Time Performance); Python data package "
    "nycflights13 0.0.3 by M. Chow. CC0 1.0. https://github.com/tidyverse/nycflights13"
)
#: Where the flights data come from (no DOI): the R package's repository; licence CC0 1.0.
FLIGHTS_URL = "https://github.com/tidyverse/nycflights13"
#: Licence of each bundled set that is not a UCI release (CC BY 4.0).
LICENCES = {"flights": "CC0 1.0 (public domain dedication; nycflights13)",
            "flights-late": "CC0 1.0 (public domain dedication; nycflights13)"}
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
    if key == "flights":
        return pd.read_csv(DATA_DIR / "nycflights13" / "flights.csv.gz", sep=",", dtype=np.float64)
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


#: Features of the count task ``bank-campaign`` (few columns: the Poisson bounds grow like e^{R B_theta}).
_BANK_CAMPAIGN_FEATURES = ("age", "balance", "day", "pdays", "previous", "housing_yes", "loan_yes")


def _load_bank_campaign() -> Dataset:
    """bank-full as a count task: y = ``campaign`` (contacts during this campaign, >= 1), 7 features."""
    frame = _bank_prepared()[list(_BANK_CAMPAIGN_FEATURES)].copy()
    frame["campaign"] = _raw_frame("bank")["campaign"].to_numpy(dtype=np.float64)
    return _tabular(
        "bank-campaign", frame, "campaign", "regression", _BANK_CITATION, "10.24432/C5K306",
        "bank-full as a count target: 'campaign', the number of contacts with the client during this "
        "campaign (1-63; for Poisson regression, task 'poisson'). Features: age, balance, day, pdays, "
        "previous and the housing / personal-loan indicators.",
    )


def _load_flights() -> Dataset:
    """nycflights13 ``flights`` (327,346 complete rows): y = ``arr_delay`` (minutes), 7 numeric features."""
    return _tabular(
        "flights", _raw_frame("flights").copy(), "arr_delay", "regression", _FLIGHTS_CITATION, None,
        "Flights that departed New York City (JFK, LGA, EWR) in 2013 and arrived (nycflights13; rows with "
        "a missing value dropped): arrival delay arr_delay (minutes; heavy right tail) from month, "
        "dep_time, sched_arr_time, hour (hhmm clock times / scheduled hour), dep_delay (min), air_time "
        "(min) and distance (miles).",
    )


#: The delay above which a flight counts as late in ``flights-late`` (minutes; the US DOT's on-time cut).
FLIGHTS_LATE_MINUTES = 15.0


def _load_flights_late() -> Dataset:
    """``flights`` as a classification task: y = 1 when ``arr_delay`` > 15 minutes."""
    frame = _raw_frame("flights").copy()
    frame["late"] = (frame.pop("arr_delay") > FLIGHTS_LATE_MINUTES).astype(np.int64)
    return _tabular(
        "flights-late", frame, "late", "classification", _FLIGHTS_CITATION, None,
        "nycflights13 flights as a classification task: was the flight late (arr_delay > 15 min, "
        "y = 1)? Same 7 numeric features as 'flights'.",
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
    "bank-campaign": {"loader": lambda **kw: _load_bank_campaign(), "task": "regression", "target": "campaign",
                      "doi": "10.24432/C5K306"},
    "sentiment": {"loader": lambda **kw: _load_sentiment(), "task": "text-classification", "target": "label",
                  "doi": "10.24432/C57604"},
    "flights": {"loader": lambda **kw: _load_flights(), "task": "regression", "target": "arr_delay", "doi": None,
                "url": FLIGHTS_URL},
    "flights-late": {"loader": lambda **kw: _load_flights_late(), "task": "classification", "target": "late",
                     "doi": None, "url": FLIGHTS_URL},
    "synthetic": {"loader": lambda **kw: make_synthetic_regression(**kw), "task": "regression", "target": "y",
                  "doi": None},
}


def load_dataset(name: str, **kwargs) -> Dataset:
    """Load a data set from the registry by its short name.

    Parameters
    ----------
    name : {"wine-red", "wine-white", "ccpp", "bank", "bank-campaign", "flights", "flights-late", "sentiment", "synthetic"}
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
    Shapes: wine-red 1599 x 11, wine-white 4898 x 11, ccpp 9568 x 4, bank 45211 x 41, flights and
    flights-late 327346 x 7, sentiment 3000 sentences. Sources: UCI Machine Learning Repository, CC BY 4.0;
    flights: nycflights13, CC0 1.0 (``assets/data/CITATION.md``).

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


@functools.lru_cache(maxsize=None)
def _bundled_arrays(key: str) -> tuple:
    """``(X, y, name)`` of a bundled set as read-only float64 arrays (``load_dataset(key).to_numpy()``),
    cached: the sweeps take arrays only, and building the Dataset's frames cost more than a whole ridge
    sweep's arithmetic. Read-only, so no caller can change the cache; copy before writing."""
    ds = load_dataset(key)
    X, y = ds.to_numpy()
    X, y = np.array(X, dtype=np.float64), np.array(y, dtype=np.float64)  # own copies, then frozen
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y, ds.name


#: The listing of the bundled sets (rows, features, task, target, DOI), read by :func:`list_datasets` and by
#: ``python -m engine datasets`` without pandas or the data files; checked against the loaded data
#: by ``tests/engine/test_datasets_manifest.py``.
MANIFEST_PATH = Path(__file__).with_name("manifest.json")

#: Columns of :func:`list_datasets`.
LIST_COLUMNS = ["name", "rows", "features", "task", "target", "source"]


def _source(entry: dict) -> str:
    """``"doi:<DOI>"``, else the source's URL (data without a DOI), else ``"generated"``."""
    if entry.get("doi"):
        return f"doi:{entry['doi']}"
    return entry.get("url") or "generated"


def _manifest_records() -> list[dict]:
    """The manifest's rows as :func:`list_datasets` records (``source`` = ``"doi:<DOI>"``, a URL or ``"generated"``)."""
    with open(MANIFEST_PATH, encoding="utf-8") as fh:
        entries = json.load(fh)["datasets"]
    return [{"name": e["name"], "rows": int(e["rows"]), "features": int(e["features"]), "task": e["task"],
             "target": e["target"], "source": _source(e)} for e in entries]


def _measured_records() -> list[dict]:
    """:func:`list_datasets` records measured by loading every set (synthetic with its defaults): the
    manifest's reference (slow: reads every bundled file)."""
    rows = []
    for key, spec in _REGISTRY.items():
        ds = load_dataset(key)
        rows.append({"name": key, "rows": ds.n, "features": ds.d, "task": ds.task, "target": ds.target_name,
                     "source": _source(spec)})
    return rows


def list_datasets() -> pd.DataFrame:
    """The registry as a table.

    Returns
    -------
    pandas.DataFrame
        One row per registry name with columns ``name, rows, features, task, target, source``
        (``source`` is ``"doi:<DOI>"``, the source's URL for data without a DOI, or ``"generated"``). Read from ``engine/datasets/manifest.json``
        (no data file is read); rows/features are those of :func:`load_dataset` (the defaults for
        ``synthetic``), which ``tests/engine/test_datasets_manifest.py`` checks by loading every set.

    Examples
    --------
    >>> t = list_datasets()
    >>> list(t.columns)
    ['name', 'rows', 'features', 'task', 'target', 'source']
    >>> t.set_index("name").loc["ccpp", ["rows", "features"]].tolist()
    [9568, 4]
    """
    return pd.DataFrame(_manifest_records(), columns=LIST_COLUMNS)


# --------------------------------------------------------------------------------------------------
