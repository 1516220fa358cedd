"""The typed objects every loader returns (:class:`Dataset`, :class:`Split`), shared constants and checks.

Nothing here reads a file or draws a random number; the loaders live in :mod:`engine.datasets.bundled`,
:mod:`engine.datasets.synthetic`, :mod:`engine.datasets.upload` and :mod:`engine.datasets.split`.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Folder holding the bundled data files (``assets/data`` at the repository root).
DATA_DIR: Path = Path(__file__).resolve().parents[2] / "assets" / "data"

#: Largest accepted magnitude of a feature or target value. Anything larger is rejected as
#: overflow-prone: second moments of such values (``x**2`` > 1e300) and their sums over many rows
#: overflow float64 (max ~1.8e308). 1e308 itself is therefore rejected, not only ``inf``.
MAX_ABS_VALUE: float = 1e150

#: Default upload size cap in bytes (50 MiB; matches ``server.maxUploadSize`` in .streamlit/config.toml).
MAX_UPLOAD_BYTES: int = 50 * 2**20

#: Task kinds a :class:`Dataset` can carry.
TASKS: tuple[str, ...] = ("regression", "classification", "text-classification")


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
        """A short sha256 hex digest of the data (features, target, task), usable as a cache key.

        Computed once per object (a Dataset is frozen; its frames are not to be changed in place) and kept
        on it: a dashboard rerun asks for it several times."""
        got = self.__dict__.get("_fingerprint")
        if got is None:
            got = self._digest()
            object.__setattr__(self, "_fingerprint", got)
        return got

    def _digest(self) -> str:
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
# Argument checks shared by the loaders
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
