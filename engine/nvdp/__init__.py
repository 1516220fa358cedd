"""Clipped nonparametric variational differential privacy (NVDP) for transformer embeddings.

Specification: ``shared/docs/NVDP.md``. Sources: El Zein, Kumar & Henderson, arXiv:2603.09583 (2026)
(clipping); El Zein & Henderson, arXiv:2601.02307 (NVDP); Henderson & Fehr, ICLR 2023 (NVIB);
Triastcyn & Faltings, ICML 2020 (Bayesian DP accountant).

Rooms: ``divergence`` (exact Renyi closed forms, the pairwise RD bound in the "exact" and "paper"
forms), ``bdp`` (the Bayesian-DP accountant); the torch model, clipping, encoder, training,
diagnostics and CLI live in their own modules. Nothing here imports Streamlit.
"""

from engine.nvdp.bdp import BDPResult, bdp_epsilon, bdp_from_posteriors
from engine.nvdp.divergence import (
    RDBoundResult,
    pairwise_rd_bound,
    renyi_dirichlet,
    renyi_dirichlet_torch,
    renyi_gamma,
    renyi_gamma_torch,
    renyi_gaussian,
    renyi_gaussian_torch,
    validate_renyi_order,
)

__all__ = [
    "BDPResult",
    "RDBoundResult",
    "bdp_epsilon",
    "bdp_from_posteriors",
    "pairwise_rd_bound",
    "renyi_dirichlet",
    "renyi_dirichlet_torch",
    "renyi_gamma",
    "renyi_gamma_torch",
    "renyi_gaussian",
    "renyi_gaussian_torch",
    "validate_renyi_order",
]
