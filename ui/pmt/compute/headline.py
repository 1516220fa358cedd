"""The PMT headline's numbers without Streamlit: the rows of a metric at the chosen epsilon.

Read by the headline (:mod:`ui.pmt.headline`) and the verdict (:mod:`ui.common.verdict`), so neither
imports the other.
"""

from __future__ import annotations

import pandas as pd

from engine.figures import pmt as plots
from ui.common import figure_cache as FC
from ui.pmt.compute.view import PMTView


def rows(view: PMTView, metric: str) -> pd.DataFrame:
    """The headline rows of ``metric`` at the chosen epsilon (:func:`engine.figures.pmt.headline_table`): for
    bundled data through the cross-session cache (:func:`ui.common.figure_cache.value`; the same frame for every
    session, read only), for an upload computed for this run."""
    return FC.value(plots.headline_table, view.results.eps_point, metric=metric, epsilon=view.choice.epsilon,
                    shared=view.shared, key=(view.key, view.choice.json, "eps_point", metric))
