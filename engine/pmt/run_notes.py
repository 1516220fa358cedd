"""Notes on a logistic sweep frame: what ``pmt --task logistic`` prints under its tables (``--json``'s ``notes``)
and the PMT page shows beside its numbers (:mod:`ui.pmt.compute.trust`). Pandas only, no Streamlit.

Each note is computed from the sweep frame it sits under:

- the non-private reference diverged (no finite optimum: separable data at lam 0), so every L2 error measures
  the distance to a diverging iterate (as the PMT page's reference note);
- PMT ran in publicly standardised coordinates at some epsilons (``whiten="auto"``: the frame's public
  ``whiten_full`` column is 0), and where its runs equal DP-Newton's seed for seed, that the two coincide
  because those are DP-Newton's coordinates too (rows standardised with public statistics, the same radius).
"""

from __future__ import annotations

import numpy as np

__all__ = ["reference_diverged", "logistic_notes", "whitening_note"]


def reference_diverged(frame) -> bool:
    """True when the non-private logistic reference did not converge in some run of ``frame``."""
    if "reference_converged" in frame.columns:
        return bool((frame["reference_converged"] == False).any())  # noqa: E712
    if "converged" in frame.columns:
        ref = frame.loc[frame["method_key"] == "non-private", "converged"] if "method_key" in frame.columns else []
        return bool((np.asarray(ref) == False).any())  # noqa: E712
    return False


def _same_runs(a, b) -> bool:
    cols = [c for c in ("l2_error", "auc", "log_loss") if c in a.columns]
    if len(a) != len(b) or not cols:
        return False
    a = a.sort_values(["lam", "seed"])
    b = b.sort_values(["lam", "seed"])
    return all(np.allclose(a[c].to_numpy(dtype=float), b[c].to_numpy(dtype=float), rtol=1e-9, atol=0.0, equal_nan=True)
               for c in cols)  # the same fit up to rounding


def logistic_notes(frame) -> list[str]:
    """The notes for a logistic sweep frame (module docstring); empty when there is nothing to say."""
    notes = []
    if reference_diverged(frame):
        notes.append("the non-private logistic reference did not converge (no finite optimum: separable data at this "
                     "lam), so every L2 error above measures the distance to a diverging iterate, not to a reference; "
                     "read the AUC, or use --lam > 0 for a penalised reference.")
    note = whitening_note(frame)
    if note:
        notes.append(note)
    return notes


def whitening_note(frame) -> str | None:
    """The note on PMT's standardised coordinates (module docstring), or None (full whitening everywhere)."""
    if "whiten_full" not in frame.columns or "method_key" not in frame.columns:
        return None
    pmt = frame[frame["method_key"] == "pmt"]
    newton = frame[frame["method_key"] == "dp-newton"]
    std_eps = sorted({float(e) for e, w in zip(pmt["epsilon"], pmt["whiten_full"]) if w == 0.0})
    if not std_eps:
        return None
    same = [e for e in std_eps if _same_runs(pmt[pmt["epsilon"] == e], newton[newton["epsilon"] == e])]
    eps_txt = ", ".join(f"{e:g}" for e in std_eps)
    note = (f"PMT ran in publicly standardised coordinates at epsilon {eps_txt} (whiten='auto'), not in the paper's "
            "full whitening.")
    if same:
        note += (f" At epsilon {', '.join(f'{e:g}' for e in same)} its runs equal DP-Newton's seed for seed (to 1e-9 "
                 "relative): with the rows standardised by public statistics and the same radius, those are "
                 "DP-Newton's coordinates too, so the two methods are the same fit there.")
    return note
