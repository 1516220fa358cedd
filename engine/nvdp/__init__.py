"""Clipped nonparametric variational differential privacy (NVDP) for transformer embeddings.

Specification: ``docs/specs/NVDP.md``. Sources: El Zein, Kumar & Henderson, arXiv:2603.09583 (2026)
(clipping); El Zein & Henderson, arXiv:2601.02307 (NVDP); Henderson & Fehr, ICLR 2023 (NVIB);
Triastcyn & Faltings, ICML 2020 (Bayesian DP accountant).

Rooms: ``closed_forms`` (exact Renyi closed forms), ``divergence`` (the pairwise RD bound in the
"exact" and "paper" forms; re-exports the closed forms) with its tiled kernel ``rd_kernel``, ``bdp``
(the Bayesian-DP accountant); the torch model, clipping, encoder, training, diagnostics and CLI live
in their own modules. The dashboard's explorer (``explore``, a facade) is split into
``explorer_models`` (settings, data, model cache), ``posthoc`` (live post-hoc clipping) and
``pair_inspector``. Nothing here imports Streamlit.

The names below are imported on first access (PEP 562 ``__getattr__``): importing one submodule,
e.g. the numpy closed forms for the Learn page, does not load torch through this package.
"""

from __future__ import annotations

import importlib

#: public name -> the submodule that defines it
_NAMES = {
    **dict.fromkeys(("BDPResult", "bdp_epsilon", "bdp_from_posteriors"), "bdp"),
    **dict.fromkeys(("RDBoundResult", "pairwise_rd_bound", "renyi_dirichlet", "renyi_dirichlet_torch", "renyi_gamma",
                     "renyi_gamma_torch", "renyi_gaussian", "renyi_gaussian_torch", "validate_renyi_order"), "divergence"),
    **dict.fromkeys(("ClipConfig", "ClipStats", "clip_posteriors", "finite_alpha_min", "sigma_floor"), "clipping"),
    **dict.fromkeys(("RunDiagnostics", "posthoc_clip", "run_diagnostics"), "diagnostics"),
    **dict.fromkeys(("TokenStates", "encode_sentences", "load_sentiment_sentences", "split_indices"), "encoder"),
    **dict.fromkeys(("NVDPClassifier", "NVIBConfig", "Posteriors", "sample_latents"), "layer"),
    **dict.fromkeys(("EvalResult", "TrainedNVDP", "TrainingCancelled", "evaluate", "load_posteriors", "load_trained",
                     "save_posteriors", "save_trained", "train_nvdp"), "training"),
}
__all__ = list(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        value = getattr(importlib.import_module(f"engine.nvdp.{_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'engine.nvdp' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_NAMES))
