"""The NVDP page's "try this" hints, in one place, each with a promise a test checks.

Every hint the page shows is an entry of :data:`HINTS` (``app_pages/nvdp.py`` renders them with
:func:`hint`); ``tests/app/test_nvdp_hints.py`` performs each one on a tiny cached model and asserts
that the promised change happens. A hint may promise only what follows from the
mechanism for *any* trained model (a projection, a clamp, a floor), never what happened to hold
on one model.

Why each promise holds:

* ``c_mu`` -- a centre is shrunk when ||mu|| > C_mu, so a smaller C_mu shrinks every centre a larger
  one did; the slider runs from the 1 % quantile of ||mu|| (rounded down) to 1.25 x the 99 % quantile
  (:func:`engine.nvdp.posthoc.mu_norm_range`). (Whether the *RD* of a pair falls is not promised:
  the per-dimension Gaussian terms weigh dimensions by their blurs, and a radial projection can
  enlarge a weighted distance.)
* ``order_floor`` -- the blur floor sqrt((lambda - 1) / lambda) grows with lambda, and a higher
  floor raises every blur a lower one raised.
* ``alpha_min`` -- with every blur in [floor, cap < 1] each Gaussian term is finite
  (lambda s_b^2 - (lambda - 1) s_a^2 > 0), and alpha_min > ((lambda - 1) / lambda) alpha_max makes
  lambda a_k + (1 - lambda) b_k > 0 for every weight pair, so every Dirichlet term is finite; what
  remains infinite is the length: the layer gives padded positions pi = 0 exactly, so two
  sentences of different lengths have an infinite guarantee-form RD under any caps
  (``padding="strict"``).
* ``retrain`` -- "Retrain with these" trains the clipped model with the sliders' clipping and
  caches it on disk (:func:`engine.nvdp.explorer_models.load_or_train`).

No Streamlit here.
"""

from __future__ import annotations

__all__ = ["HINTS", "hint"]

HINTS: dict[str, str] = {
    "c_mu": (
        "**Try:** move *C_mu* to the left: the share of shrunk centres (*Tokens clipped*, and the "
        "posterior-parameters tab) grows, to at least 99 % at the slider's left end; at its right end at most 1 % "
        "are shrunk, so the cap changes almost nothing there."),
    "order_floor": (
        "**Try:** raise the *Renyi order*: the blur floor sqrt((lambda-1)/lambda) in the caption under the sliders "
        "rises, so the share of raised blurs grows or stays."),
    "alpha_min": (
        "**Try:** with the sigma cap on, set *alpha_min* above the threshold in the caption under the sliders: no "
        "pair is then infinite because of its weights or blurs, so the pairs with an infinite exact bound are "
        "exactly the pairs of sentences of different lengths (the shared sample reveals the length)."),
    "retrain": (
        "**Try:** set caps, then *Retrain with these*: a clipped model is trained with the sliders' clipping (its "
        "settings appear above the figures) and cached on disk, so coming back to it later is instant."),
}


def hint(name: str) -> str:
    """The text of hint ``name``.

    Raises
    ------
    KeyError
        Unknown name (lists the known ones).
    """
    try:
        return HINTS[name]
    except KeyError:
        raise KeyError(f"unknown hint {name!r}; known: {', '.join(HINTS)}") from None
