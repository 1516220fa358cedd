"""PMT: public-moment-guided truncation and the differentially private estimators built on it.

Specification: ``docs/specs/PMT.md``. Sources: Cao & Zhang, arXiv:2508.18037 (the transform, Algorithm 1);
Cao, Bi & Zhang, "Differentially Private Truncation of Unbounded Data via Public Second Moments",
arXiv:2602.22282 (DP-PMTRR, DP-PMTLR).

Rooms (private modules, the public names re-exported here; scikit-learn layout):

- ``_bounds`` (the radius R, the response bound, truncation), ``_moment`` (the public second moment and
  its whitening, :class:`PublicMoment`), ``_transform`` (:func:`pmt_transform`, :class:`PMTTransform`),
  with ``_whiten`` (the row pass), ``_tyler``, ``_blas`` and ``_lapack`` below them;
- ``_base``: shared estimator plumbing (validation, parameters, :class:`FitReport`, coefficients);
- ``ridge``: DP-PMTRR (:class:`PMTRidge`) and the sufficient-statistics perturbation it shares with
  DP-RR; ``baselines``: DP-RR, its non-private-tuning oracle, DP-GD ridge, the non-private reference;
- ``_newton`` (noisy Newton, GLM families) and ``_gd`` (DP gradient descent) behind ``logistic``
  (DP-PMTLR and its baselines) and ``poisson`` (the GLM extension);
- the sweeps: ``_registry`` (tasks and methods), ``sweep_ridge`` and ``sweep_logistic`` (the two
  tasks), ``sweep`` (:func:`engine.pmt.sweep.run_sweep`, :func:`engine.pmt.sweep.summarize`; not
  imported here, so the transform and the estimators load without pandas);
- ``dask`` (the ridge releases from blockwise statistics: ``_dask_files`` reads the files,
  ``_dask_pass`` runs the one pass), reached from the estimators' ``fit`` through ``_backends``.

Nothing here imports Streamlit. Examples: see :mod:`engine.pmt._transform`, :mod:`engine.pmt._bounds` and each estimator.
"""

from engine.pmt._bounds import add_intercept, condition_number, pmt_radius, response_bound, truncate_rows
from engine.pmt._moment import (
    MOMENT_ESTIMATORS,
    ON_SINGULAR,
    REGULARIZATION_FACTOR,
    SINGULAR_RCOND,
    PublicMoment,
    SmallPublicSampleWarning,
    public_moment,
    second_moment,
)
from engine.pmt._transform import PMTTransform, pmt_transform
from engine.pmt._tyler import tyler_moment
from engine.pmt._whiten import truncate_rows_inplace

__all__ = [
    "ON_SINGULAR", "REGULARIZATION_FACTOR", "add_intercept", "second_moment", "pmt_radius", "response_bound",
    "truncate_rows", "truncate_rows_inplace", "condition_number", "MOMENT_ESTIMATORS", "PublicMoment",
    "public_moment", "tyler_moment", "PMTTransform", "pmt_transform", "SmallPublicSampleWarning",
]

# The estimators (they import the transform above).
from engine.pmt._base import FitReport  # noqa: E402
from engine.pmt.baselines import DPGDRidge, DPRidge, DPRidgeOracle, RidgeReference  # noqa: E402
from engine.pmt.logistic import DPGDLogistic, DPNewtonLogistic, LogisticReference, PMTLogistic  # noqa: E402
from engine.pmt.poisson import PMTPoisson, PoissonReference  # noqa: E402
from engine.pmt.ridge import PMTRidge  # noqa: E402
from engine.pmt.pooled import PMTPooledRidge  # noqa: E402
from engine.pmt.public import PublicOnlyLogistic, PublicOnlyPoisson, PublicOnlyRidge  # noqa: E402
from engine.pmt.adassp import AdaSSPRidge  # noqa: E402

__all__ += [
    "FitReport",
    "PMTRidge", "DPRidge", "DPRidgeOracle", "DPGDRidge", "RidgeReference", "AdaSSPRidge",
    "PMTLogistic", "DPNewtonLogistic", "DPGDLogistic", "LogisticReference",
    "PMTPoisson", "PoissonReference",
    "PMTPooledRidge", "PublicOnlyRidge", "PublicOnlyLogistic", "PublicOnlyPoisson",
]

# The Dask path registers itself with engine.pmt._backends (the estimators never import it; dask itself
# is imported only when a Dask collection is fitted).
import engine.pmt.dask  # noqa: E402,F401
import engine.pmt._dask_glm  # noqa: E402,F401  (the GLMs, DP-GD and the references: one pass per step)
