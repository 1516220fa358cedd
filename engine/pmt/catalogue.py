"""The PMT methods' public names: their display names per task and the privacy label of each sweep column.

The public face of the registry (``_registry``, ``_base``, ``_newton``) for code outside the engine (the
dashboard's exports, the CLI commands it writes).

Examples
--------
>>> METHOD_NAMES["pmt"], GLM_METHOD_NAMES["dp-newton"]
('PMT', 'DP-Newton')
>>> sweep_column_privacy("rmse")
'non-private diagnostic'
"""

from engine.pmt._base import METHOD_NAMES
from engine.pmt._newton import GLM_METHOD_NAMES
from engine.pmt._registry import sweep_column_privacy

__all__ = ["METHOD_NAMES", "GLM_METHOD_NAMES", "sweep_column_privacy"]
