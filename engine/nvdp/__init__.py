"""Clipped nonparametric variational differential privacy (NVDP) for transformer embeddings.

Specification: ``docs/NVDP.md``. Sources: El Zein, Kumar & Henderson, arXiv:2603.09583 (2026)
(clipping); El Zein & Henderson, arXiv:2601.02307 (NVDP); Henderson & Fehr, ICLR 2023 (NVIB);
Triastcyn & Faltings, ICML 2020 (Bayesian DP accountant).

Rooms: ``closed_forms`` (exact Renyi closed forms), ``divergence`` (the pairwise RD bound in the
"exact" and "paper" forms; re-exports the closed forms) with its tiled kernel ``rd_kernel``, ``bdp``
(the Bayesian-DP accountant); the torch model, clipping, encoder, training, diagnostics and CLI live
in their own modules. The dashboard's explorer (``explore``, a facade) is split into
``explorer_models`` (settings, data, model cache), ``posthoc`` (live post-hoc clipping) and
``pair_inspector``. Nothing here imports Streamlit.
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

# The torch model half (encoder, NVIB layer, clipping, training, diagnostics).
from engine.nvdp.clipping import ClipConfig, ClipStats, clip_posteriors, finite_alpha_min, sigma_floor  # noqa: E402
from engine.nvdp.diagnostics import RunDiagnostics, posthoc_clip, run_diagnostics  # noqa: E402
from engine.nvdp.encoder import TokenStates, encode_sentences, load_sentiment_sentences, split_indices  # noqa: E402
from engine.nvdp.layer import NVDPClassifier, NVIBConfig, Posteriors, sample_latents  # noqa: E402
from engine.nvdp.training import (  # noqa: E402
    EvalResult,
    TrainedNVDP,
    TrainingCancelled,
    evaluate,
    load_posteriors,
    load_trained,
    save_posteriors,
    save_trained,
    train_nvdp,
)

__all__ += [
    "ClipConfig", "ClipStats", "clip_posteriors", "finite_alpha_min", "sigma_floor",
    "RunDiagnostics", "posthoc_clip", "run_diagnostics",
    "TokenStates", "encode_sentences", "load_sentiment_sentences", "split_indices",
    "NVDPClassifier", "NVIBConfig", "Posteriors", "sample_latents",
    "EvalResult", "TrainedNVDP", "TrainingCancelled", "evaluate", "load_trained", "save_trained", "train_nvdp",
    "load_posteriors", "save_posteriors",
]
