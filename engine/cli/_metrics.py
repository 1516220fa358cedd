"""Metric columns of the command line's results and the check that the summarised one is defined (no Streamlit)."""

from __future__ import annotations

import sys

#: Result columns that hold a metric (a NaN there is reported, never printed silently).
METRIC_COLUMNS = ("l2_error", "rel_error", "excess_risk", "rmse", "accuracy", "auc", "log_loss", "deviance")

#: Why a metric can be undefined on every run.
UNDEFINED_WHY = {"auc": "ROC AUC needs both classes in the held-out test rows, and they hold one class only"}


def check_defined(frame, metric: str) -> None:
    """Exit status tells the truth: ``ValueError`` when the summarised metric is undefined (NaN) for every run
    (a one-class test split gives no ROC AUC), a warning line for another metric column that is."""
    undefined = [c for c in METRIC_COLUMNS if c in frame and len(frame) and frame[c].isna().all()]
    if metric in undefined:
        raise ValueError(
            f"the metric {metric} is undefined for every run ({UNDEFINED_WHY.get(metric, 'no held-out value')}); "
            "choose another --metric (such as accuracy or log_loss), more rows, or another --split-seed")
    for c in undefined:
        if c in UNDEFINED_WHY:
            print(f"warning: {c} is undefined ({UNDEFINED_WHY[c]}); it is shown as nan", file=sys.stderr)
