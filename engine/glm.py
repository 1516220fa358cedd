"""Moved to :mod:`engine.pmt` (``engine.pmt.logistic``, ``engine.pmt.poisson``, ``engine.pmt._newton``,
``engine.pmt._gd``); this alias stays for one release.

``from engine.glm import PMTLogistic`` etc. keep working; new code imports from :mod:`engine.pmt`.
"""

from engine.pmt._base import FitReport, _GLMBase, _validate_glm_data  # noqa: F401
from engine.pmt._gd import _sigmoid_inplace, dp_gd_logistic_path, logistic_dp_gd_step_size  # noqa: F401
from engine.pmt._newton import (  # noqa: F401
    DEFAULT_CONV_TOL,
    DEFAULT_NEWTON_EIG_FLOOR,
    GLM_METHOD_NAMES,
    LOGISTIC,
    MIN_NEWTON_EIG_FLOOR,
    POISSON,
    GLMFamily,
    NewtonResult,
    _newton_ledger,
    _NoisyNewtonMixin,
    _project_ball,
    glm_reference_solve,
    glm_statistics,
    newton_eig_floor,
    newton_noise,
    newton_noise_stack,
    newton_sensitivities,
    noisy_newton,
    pair_products,
    weighted_grams,
)
from engine.pmt._transform import pmt_radius, pmt_transform, truncate_rows  # noqa: F401
from engine.pmt.logistic import (  # noqa: F401
    DPGDLogistic,
    DPNewtonLogistic,
    LogisticReference,
    PMTLogistic,
    _check_classes,
    _LogisticBase,
    check_binary_labels,
)
from engine.pmt.poisson import PMTPoisson, PoissonReference, _check_counts, poisson_bounds  # noqa: F401

__all__ = [
    "LOGISTIC", "POISSON", "GLMFamily", "GLM_METHOD_NAMES", "DEFAULT_NEWTON_EIG_FLOOR", "MIN_NEWTON_EIG_FLOOR",
    "newton_eig_floor", "DEFAULT_CONV_TOL", "check_binary_labels", "glm_statistics", "newton_sensitivities",
    "newton_noise", "newton_noise_stack", "weighted_grams", "pair_products", "noisy_newton", "NewtonResult",
    "glm_reference_solve", "dp_gd_logistic_path", "logistic_dp_gd_step_size", "PMTLogistic", "DPNewtonLogistic",
    "DPGDLogistic", "LogisticReference", "PMTPoisson", "PoissonReference",
]

