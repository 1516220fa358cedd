"""What each reported figure is, privacy-wise: a DP release, public-only, or a non-private diagnostic.

A simulator shows many numbers computed from the private rows without noise (the raw and post-PMT
condition numbers, the share of truncated rows, every error against the non-private fit or on held-out
private rows, the NVDP divergences and BDP estimates). That is fine for a study, but each such number
must say so. The engine's report objects carry one of three labels per figure:

* :data:`DP` -- released by (or post-processing of) a differentially private mechanism: the
  coefficients, the noisy condition number, the eigenvalue fixes and the convergence flag of a private
  fit (all functions of the noisy release);
* :data:`PUBLIC` -- a function of public information only (the settings, the budget and its accounting,
  n under replace-one, the public rows, bounds derived from them or given by the user);
* :data:`DIAGNOSTIC` -- computed from the private rows **without** noise: not private, shown to explain
  the mechanism (a real release must not publish it).

Used by :class:`engine.pmt.FitReport` (``privacy`` / ``to_dict()["privacy"]``), the sweeps
(:func:`engine.pmt.sweep.summarize` adds a ``privacy`` column; :func:`sweep_column_privacy` labels every
frame column) and the NVDP post-hoc summary (:func:`engine.nvdp.posthoc.summary_privacy`).
"""

from __future__ import annotations

__all__ = ["DP", "PUBLIC", "DIAGNOSTIC", "LABELS", "BDP_ESTIMATE_LABEL"]

DP = "dp"
PUBLIC = "public"
DIAGNOSTIC = "non-private diagnostic"
LABELS = (DP, PUBLIC, DIAGNOSTIC)

#: How the NVDP BDP epsilon is named wherever it is shown: an estimate over the evaluation sentences.
BDP_ESTIMATE_LABEL = "BDP epsilon (sample-based estimate over the evaluation sentences)"
