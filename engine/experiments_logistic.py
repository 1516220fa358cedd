"""Moved to :mod:`engine.pmt.sweep_logistic`; this alias stays for one release.

``from engine.experiments_logistic import prepare_logistic_context`` etc. keep working; new code
imports from :mod:`engine.pmt.sweep_logistic`.
"""

from engine.pmt.sweep_logistic import (  # noqa: F401
    EXTRA_COLUMNS,
    LOGISTIC_METHODS,
    LogisticSweepContext,
    prepare_logistic_context,
    roc_auc_columns,
)

__all__ = ["LOGISTIC_METHODS", "LogisticSweepContext", "prepare_logistic_context", "roc_auc_columns"]

