"""Data sets: the bundled registry, the validating CSV loader for uploads, and the public/private split.

Everything the rest of the engine learns from enters through this package as one typed object,
:class:`Dataset` (features as a DataFrame, the target as a Series, the task kind, the feature names
and a citation). One module per idea:

- :mod:`engine.datasets._base`: :class:`Dataset`, :class:`Split`, the constants (``DATA_DIR``,
  ``MAX_ABS_VALUE``, ``MAX_UPLOAD_BYTES``, ``TASKS``) and shared argument checks.
- :mod:`engine.datasets.bundled`: :func:`load_dataset` maps a short registry name (``"wine-red"``,
  ``"wine-white"``, ``"ccpp"``, ``"bank"``, ``"sentiment"``, ``"synthetic"``) to a loader over the
  files bundled in ``assets/data`` (UCI releases, CC BY 4.0; see ``assets/data/CITATION.md``).
  :func:`list_datasets` tabulates the registry.
- :mod:`engine.datasets.upload`: :func:`read_csv_upload` parses a user's CSV (a path, raw bytes, or a
  file-like object such as Streamlit's ``UploadedFile``) and rejects every bad input listed in the
  project's conventions with a :class:`ValueError` that names the column or value and what is
  accepted. The task (regression or classification) is the caller's choice, never guessed from the
  private target's values.
- :mod:`engine.datasets.split`: :func:`public_private_split` draws a seeded public sample of ``n_pub``
  rows (the "simulation" setting of PMT.md section 2.1, where the public sample comes from the same
  population), and :func:`standardize_with_public` centres and scales every feature by the PUBLIC
  sample's mean and standard deviation only, so no statistic of the private rows is ever touched
  without noise.
- :mod:`engine.datasets.synthetic`: :func:`make_synthetic_regression`, :func:`make_synthetic_logistic`
  with a population covariance ``Sigma = Q diag(geomspace(1, 1/kappa, d)) Q^T`` (``Q`` a seeded
  Haar-random rotation), so its condition number is exactly ``kappa``; the ground truth
  (``theta_star``, ``Sigma``) is returned in :attr:`Dataset.extras`.

Nothing here imports Streamlit. Import the public names from this package
(``from engine.datasets import load_dataset``); the submodules are an implementation detail.
"""

from __future__ import annotations

from engine.datasets._base import DATA_DIR, MAX_ABS_VALUE, MAX_UPLOAD_BYTES, TASKS, Dataset, Split
from engine.datasets.bundled import _raw_frame, list_datasets, load_dataset
from engine.datasets.split import public_private_split, standardize_with_public
from engine.datasets.synthetic import make_synthetic_logistic, make_synthetic_regression
from engine.datasets.upload import read_csv_columns, read_csv_upload

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
