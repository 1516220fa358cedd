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

__all__ = ["DP", "PUBLIC", "DIAGNOSTIC", "LABELS", "BDP_ESTIMATE_LABEL", "VERDICT_NOTE", "unit_of_privacy",
           "unit_of_privacy_for"]

DP = "dp"
PUBLIC = "public"
DIAGNOSTIC = "non-private diagnostic"
LABELS = (DP, PUBLIC, DIAGNOSTIC)

#: What a page's verdict sentence is, privacy-wise (:mod:`engine.figures.verdict`): shown with it on the page
#: (presenter mode included), in the report and in the exports.
VERDICT_NOTE = ("Non-private diagnostic: this sentence compares errors measured on held-out private rows (and the "
                "condition numbers of the private rows) without noise; it explains the view and is not a release.")

#: How the NVDP BDP epsilon is named wherever it is shown: an estimate over the evaluation sentences.
BDP_ESTIMATE_LABEL = "BDP epsilon (sample-based estimate over the evaluation sentences)"


def unit_of_privacy(mu: float | None = None, neighbouring: str = "replace-one") -> str:
    """The unit of privacy in one line (PMT page, report, CLI): what a neighbour is, and what the user must
    guarantee for the stated budget to protect people (``docs/dev/threat_model.md``, "Unit of privacy").

    With ``mu`` the line states what a person with k rows gets instead (group privacy of mu-GDP: k mu).

    Examples
    --------
    >>> unit_of_privacy(0.5).startswith("Unit of privacy: one row = one person")
    True
    >>> "k x mu = k x 0.5" in unit_of_privacy(0.5)
    True
    """
    if neighbouring == "replace-one":
        rel = "replace-one: neighbouring data sets differ in one row swapped, n is public"
    elif neighbouring == "add-remove":
        rel = "add/remove: neighbouring data sets differ by one row added or removed"
    else:
        raise ValueError(f"neighbouring must be 'replace-one' or 'add-remove', got {neighbouring!r}")
    group = (f"a person with k rows is protected only at k x mu = k x {mu:.3g} (group privacy)" if mu is not None
             else "a person with k rows is protected only at k times the budget's mu (group privacy)")
    return (f"Unit of privacy: one row = one person ({rel}). You must guarantee that each person contributes at most "
            f"one row (deduplicate or aggregate per person first) and that the public rows hold no private person; "
            f"otherwise {group}.")


def unit_of_privacy_for(epsilons, delta: float) -> str:
    """:func:`unit_of_privacy` for a command's output: with one finite epsilon the group-privacy figure uses its
    mu (:func:`engine.privacy.gdp_mu`), otherwise it is stated in words."""
    import math

    from engine.privacy import gdp_mu

    eps = [float(e) for e in epsilons]
    return unit_of_privacy(gdp_mu(eps[0], float(delta)) if len(eps) == 1 and math.isfinite(eps[0]) else None)
