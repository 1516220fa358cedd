"""The PMT page's catalogue (no Streamlit): its tasks, the methods and metrics of each, the held-out share.

A leaf: :mod:`ui.pmt.compute.core` and :mod:`ui.pmt.compute.modes` both read it, so neither imports
the other for it.
"""

from __future__ import annotations

#: Page task -> label.
TASK_LABELS = {"regression": "Ridge regression", "classification": "Logistic regression",
               "count": "Poisson regression (counts)"}
#: Page task -> the Dataset.task values it accepts (counts are read as a regression target).
DATA_TASKS = {"regression": ("regression",), "classification": ("classification",), "count": ("regression",)}
#: Page task -> engine task name for run_sweep.
ENGINE_TASKS = {"regression": "ridge", "classification": "logistic", "count": "poisson"}

#: Methods the page offers for ridge (display names of the engine's sweep frames); see :func:`methods_for`.
METHODS = ["PMT", "DP-RR", "DP-RR (oracle C, non-private tuning)", "DP-GD", "AdaSSP", "Non-private"]

#: Methods selected by default per page task (those the engine offers are kept, in this order).
DEFAULT_METHODS = {
    "regression": ["PMT", "DP-RR", "DP-GD", "AdaSSP", "Public-only", "Non-private"],
    "classification": ["PMT", "DP-Newton", "DP-GD", "Public-only", "Non-private"],
    "count": ["PMT", "DP-Newton", "Public-only", "Non-private"],
}

#: Baselines of the headline "PMT / best baseline": the private-only ones and the public rows alone
#: (a private method that loses to the public sample is not worth its budget; PMT.md section 3, step 6).
PRIVATE_BASELINES = ("DP-RR", "DP-GD", "DP-Newton", "AdaSSP", "Public-only")

#: Default share cap of the public sample: n_pub defaults to min(200, DEFAULT_PUBLIC_SHARE * rows), and
#: the page warns when the chosen n_pub exceeds this share of the rows.
DEFAULT_PUBLIC_SHARE = 0.2

#: Metric columns per page task (the first is the default). For logistic sweeps the engine's
#: ``rmse`` column is a root Brier score, so it is not offered under the RMSE label. The logistic
#: default is the ROC AUC: on bank every method's accuracy lies within 0.89-0.90, next to the 0.88 of
#: always predicting the majority class, while the AUC separates them (0.71-0.73 private, 0.78 non-private).
METRICS_BY_TASK = {
    "regression": ["rmse", "l2_error", "rel_error", "excess_risk"],
    "classification": ["auc", "log_loss", "accuracy", "l2_error", "rel_error", "excess_risk"],
    "count": ["l2_error", "rel_error", "deviance", "rmse", "excess_risk"],
}

#: Fraction of the private rows held out for the RMSE (run_sweep's default ``test_size``).
TEST_SIZE = 0.2

#: The folder an exported command names for an uploaded file (the user replaces it by where the file is).
UPLOAD_DIR_PLACEHOLDER = "/path/to/"
