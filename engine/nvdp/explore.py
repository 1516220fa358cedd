"""Engine side of the dashboard's NVDP explorer: cached models, live post-hoc clipping, a sentence inspector.

Nothing here imports Streamlit. The page (``app_pages/nvdp.py``) calls three things:

- :func:`load_or_train` -- the clipped and unclipped NVDP classifiers for a KL weight and seed,
  trained once (with a progress callback that can cancel) and cached on disk under
  ``<NVDP cache dir>/explorer_models/<key>/`` (:func:`models_dir` ; :func:`engine.nvdp.encoder.cache_dir`; the key hashes the data, the split and every training setting, :meth:`ExploreSettings.key`);
- :func:`posthoc_evaluate` -- what a clipping configuration does to a trained model's posteriors on
  the test sentences: accuracy (the model re-run with that clipping, samples seeded), the pairwise
  Renyi-divergence (RD) bound in both labelled forms with the full pair distributions, the
  Bayesian-DP (BDP) epsilon in both variants, the fractions clipped, and the distributions of
  ||mu||, sigma and alpha before and after clipping (NVDP.md sections 3 to 6);
- :func:`inspect_pair` -- two typed sentences: their posterior components before and after
  clipping and the RD bound between them.

Choices made for speed (the dashboard's sliders answer live; the live path is
:class:`~engine.nvdp.posthoc.LiveEvaluator`): the
page's exact all-pairs bound uses the first :data:`LIVE_N_RD` = 48 test sentences (1,128 pairs, a
true maximum over those pairs), the paper-protocol bound and both BDP figures the first
:data:`LIVE_N_BDP` = 128 (8 eval batches of 16, 960 within-batch pairs); the functions' own defaults
are 64 and 256. ``engine.nvdp.diagnostics.run_diagnostics`` (the CLI's
report) uses 256 and all 500 test sentences; pass those values to reproduce it exactly.

The default pair ships with the repository (:mod:`engine.nvdp.bundled`: ``assets/nvdp``, checksummed,
reproduced bit for bit by ``scripts/make_nvdp_models.py``), so a first visit loads it and encodes
only the 500 test sentences; other settings train on this machine (1,000 of the 2,000 training
sentences, the CLI's ``--n-train`` subset; the authors' budget of 10 epochs with early stopping,
patience 3, on the 500 validation sentences, the same rule for both arms; KL weight 1e-2 by
default). The clipped model is trained with :data:`DEFAULT_TRAIN_CLIP`, the authors' rules (C_mu = 5,
alpha in [0, 1], sigma floor 0.30151 at lambda = 1.1, no sigma cap); with them the exact bound can be
infinite, :data:`CAPPED_TRAIN_CLIP` (alpha in [0.1, 1], sigma cap 0.99) is the named option under
which every term is finite. Uploaded
texts: :mod:`engine.nvdp.user_text`; the page's hints: :mod:`engine.nvdp.hints`.
"""

from __future__ import annotations

from engine.nvdp.explorer_models import (
    CAPPED_TRAIN_CLIP,
    DEFAULT_SEEDS,
    DEFAULT_TRAIN_CLIP,
    KL_WEIGHTS,
    LIVE_N_BDP,
    LIVE_N_RD,
    ExploreData,
    ExploreSettings,
    cached_models_exist,
    cli_command,
    load_data,
    load_or_train,
    models_dir,
)
from engine.nvdp.bundled import seed_summary
from engine.nvdp.certified import CertifiedBound, certified_bound, certified_epsilon, certified_what_if, what_it_takes
from engine.nvdp.headline import accuracy_interval, bdp_floor, rule_effects, seed_headline
from engine.nvdp.pair_inspector import PairInspection, inspect_pair
from engine.nvdp.posthoc import (
    LiveEvaluator,
    PosthocResult,
    mu_norm_range,
    posthoc_bounds,
    posthoc_evaluate,
    raw_posteriors,
)

__all__ = [
    "ExploreSettings",
    "ExploreData",
    "PosthocResult",
    "LiveEvaluator",
    "PairInspection",
    "KL_WEIGHTS",
    "LIVE_N_RD",
    "LIVE_N_BDP",
    "DEFAULT_TRAIN_CLIP",
    "CAPPED_TRAIN_CLIP",
    "DEFAULT_SEEDS",
    "load_data",
    "models_dir",
    "cached_models_exist",
    "load_or_train",
    "raw_posteriors",
    "posthoc_evaluate",
    "posthoc_bounds",
    "mu_norm_range",
    "inspect_pair",
    "cli_command",
    "seed_summary",
    "seed_headline",
    "CertifiedBound",
    "certified_bound",
    "certified_epsilon",
    "certified_what_if",
    "what_it_takes",
    "rule_effects",
    "bdp_floor",
    "accuracy_interval",
]
