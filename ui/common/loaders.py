"""The one cached loader of the bundled data sets, for every page (bundled data only: uploads never enter it).

``st.cache_data`` is shared by every session of the server; a data set is keyed by its registry name
and, for the synthetic one alone, its condition number (any kappa given for another set is ignored, so
the Data page and the PMT page share one entry per set).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.datasets import Dataset, list_datasets, load_dataset

#: The synthetic set's condition number when none is given (the Data page's default).
DEFAULT_KAPPA = 1e3


@st.cache_data(max_entries=4, show_spinner=False)
def registry() -> pd.DataFrame:
    """The bundled data sets (:func:`engine.datasets.list_datasets`)."""
    return list_datasets()


def bundled(name: str, kappa: float | None = None) -> Dataset:
    """A bundled data set; the synthetic one with condition number ``kappa`` (default :data:`DEFAULT_KAPPA`)."""
    if name == "synthetic":
        return _load(name, float(kappa if kappa is not None else DEFAULT_KAPPA))
    return _load(name, None)


@st.cache_data(max_entries=16, show_spinner="Loading the data set ...")
def _load(name: str, kappa: float | None) -> Dataset:
    if name == "synthetic":
        return load_dataset("synthetic", kappa=kappa)
    return load_dataset(name)
