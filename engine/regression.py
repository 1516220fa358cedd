"""Moved to :mod:`engine.pmt` (``engine.pmt.ridge``, ``engine.pmt.baselines``, ``engine.pmt._base``,
``engine.pmt._gd``); this alias stays for one release.

``from engine.regression import PMTRidge`` etc. keep working; new code imports from :mod:`engine.pmt`.
"""

from engine.pmt._base import (  # noqa: F401
    DEFAULT_EIG_FLOOR,
    MAX_ABS_VALUE,
    METHOD_NAMES,
    FitReport,
    _check_eta,
    _check_lam,
    _check_n_ge_d,
    _check_on_singular,
    _check_positive,
    _check_steps,
    _check_X,
    _check_X_pub,
    _check_y,
    _CoefBase,
    _gram_kappa,
    _LinearBase,
    _mu,
    _pmt_report_fields,
    _resolve_bound,
    _run_groups,
    _validate_data,
    _validate_privacy,
    penalty_mask,
)
from engine.pmt._gd import _dp_gd_ledger, _dp_gd_setup, dp_gd_noise, dp_gd_ridge_path  # noqa: F401
from engine.pmt._transform import truncate_rows  # noqa: F401
from engine.pmt.baselines import DPGDRidge, DPRidge, DPRidgeOracle, RidgeReference, default_clip_grid  # noqa: F401
from engine.pmt.ridge import RESPONSES, PMTRidge, _ledger_ssp, ridge_reference_solve  # noqa: F401
from engine.pmt.ridge import ssp_noise, ssp_sensitivities, ssp_solve, sufficient_statistics  # noqa: F401

#: Public aliases of the shared validators and base class (as before the move).
validate_fit_data = _validate_data
validate_privacy = _validate_privacy
LinearEstimatorBase = _LinearBase

__all__ = [
    "FitReport", "PMTRidge", "DPRidge", "DPRidgeOracle", "DPGDRidge", "RidgeReference", "penalty_mask",
    "ridge_reference_solve", "ssp_noise", "ssp_sensitivities", "sufficient_statistics", "dp_gd_noise",
    "default_clip_grid", "ssp_solve", "dp_gd_ridge_path", "RESPONSES", "validate_fit_data", "validate_privacy",
    "LinearEstimatorBase", "METHOD_NAMES",
]

