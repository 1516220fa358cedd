"""BDP epsilon as a curve over the Renyi order, the tightest order, and why the guarantee form is infinite.

The accountant's floor ln(1/delta)/lambda falls as the order lambda grows while the divergences
grow, so, as RDP accountants do, the epsilon is reported at the order that minimises it.
For each order the clipping is re-applied (its std floor depends on lambda),
and both forms are computed under one :class:`~engine.nvdp.protocol.EvalProtocol`.

The guarantee form feeds order lambda + 1 divergences to the accountant; it is infinite when
(computed by :func:`infinity_reasons`):

* two sentences of different lengths share a batch (padding gets weight exactly 0 in the shared
  sample, so the sample reveals the length; no clipping setting changes this);
* a Gaussian term at order m = lambda + 1 is undefined: m s_b^2 - (m - 1) s_a^2 <= 0, i.e. the
  ratio of the smallest to the largest std is <= sqrt((m - 1)/m); finite needs, e.g., a std cap
  ``sigma_max`` below ``sigma_min / sqrt((m - 1)/m)``;
* a Dirichlet term at order m is undefined: alpha_min <= ((m - 1)/m) alpha_max.

No Streamlit here.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import torch

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.protocol import DEFAULT_PROTOCOL, EvalProtocol, evaluate_bounds

__all__ = ["infinity_reasons", "bdp_order_curve"]


def infinity_reasons(post, clip: ClipConfig, protocol: EvalProtocol = DEFAULT_PROTOCOL) -> list[str]:
    """Which conditions make the exact-form BDP epsilon (a sample-based estimate over the evaluation
    sentences) infinite, and the setting that would fix each.

    Parameters
    ----------
    post : Posteriors
        Clipped posteriors of the evaluation sentences (the first ``protocol.n_eval`` are used).
    clip : ClipConfig
        The clipping they were clipped with (its order lambda; the accountant uses lambda + 1).
    protocol : EvalProtocol
    live : engine.nvdp.posthoc.LiveEvaluator, optional
        The evaluator whose ``raw`` this is: the clipping and the bounds of each order then come
        from its caches (the same values), so the curve and the page's evaluation at the slider's
        order share their work, and the curve does not depend on ``clip.renyi_order`` at all
        (cache it per clipping without the order).

    Returns
    -------
    list of str
        Empty when none of the three conditions holds.

    Examples
    --------
    >>> from engine.nvdp.layer import Posteriors
    >>> mu = torch.zeros(2, 3, 2); sg = torch.ones(2, 3, 2); sg[0, 1] = 0.5
    >>> al = torch.ones(2, 3); m = torch.ones(2, 3, dtype=torch.bool)
    >>> infinity_reasons(Posteriors(mu, sg, al, m), ClipConfig(enabled=False))[0][:40]
    'std ratio 0.5 <= sqrt((m-1)/m) = 0.7237 '
    """
    n = min(protocol.n_eval, len(post))
    m = clip.renyi_order + 1.0
    out = []
    lengths = post.mask[:n].sum(1).numpy()
    for s in range(0, n, protocol.batch_size):
        if np.unique(lengths[s : s + protocol.batch_size]).size > 1 and protocol.padding == "strict":
            out.append("sentences of different lengths share a batch: the shared sample reveals the length "
                       "(padding has weight 0); no clipping setting makes this finite")
            break
    real = post.mask[:n]
    sg = post.sigma[:n][real].double()
    lo, hi = float(sg.min()), float(sg.max())
    need = math.sqrt((m - 1.0) / m)
    if lo / hi <= need:
        out.append(f"std ratio {lo / hi:.4g} <= sqrt((m-1)/m) = {need:.4f} at order m = {m:g}: "
                   f"a std cap sigma_max < {lo / need:.4g} (with the floor {lo:.4g}) would make the Gaussian terms finite")
    al = post.alpha[:n][real].double()
    a_lo, a_hi = float(al.min()), float(al.max())
    if a_lo <= (m - 1.0) / m * a_hi:
        out.append(f"alpha_min {a_lo:.4g} <= ((m-1)/m) alpha_max = {(m - 1.0) / m * a_hi:.4g} at order m = {m:g}: "
                   f"alpha_min > {(m - 1.0) / m * a_hi:.4g} would make the weight terms finite")
    return out


def bdp_order_curve(raw, clip: ClipConfig, orders=(1.05, 1.1, 1.2, 1.5, 2.0, 3.0),
                    protocol: EvalProtocol = DEFAULT_PROTOCOL, *, live=None) -> dict:
    """BDP epsilon over Renyi orders for both forms, the tightest order of each, and the reasons for infinity.

    Parameters
    ----------
    raw : Posteriors
        *Unclipped* posteriors of the evaluation sentences (the clipping is re-applied per order,
        since its std floor depends on the order).
    clip : ClipConfig
        Clipping (its ``renyi_order`` is replaced by each order; ``enabled=False``: none).
    orders : sequence of float
        Renyi orders lambda > 1.
    protocol : EvalProtocol
    live : engine.nvdp.posthoc.LiveEvaluator, optional
        The evaluator whose ``raw`` this is: the clipping and the bounds of each order then come
        from its caches (the same values), so the curve and the page's evaluation at the slider's
        order share their work, and the curve does not depend on ``clip.renyi_order`` at all
        (cache it per clipping without the order).

    Returns
    -------
    dict
        ``orders``, ``eps_guarantee``, ``eps_paper`` (lists), ``best_guarantee`` / ``best_paper``
        ((order, epsilon) at the smallest finite epsilon, or None), ``reasons`` (per order, list of str).
    """
    eps_g, eps_p, reasons = [], [], []
    for lam in orders:
        c = replace(clip, renyi_order=float(lam))
        if live is not None:
            post, _ = live.clip(c)
            b = live.bounds(c, protocol)
        else:
            with torch.no_grad():
                post, _ = raw.clip(c)
            b = evaluate_bounds(post, float(lam), protocol)
        eps_g.append(float(b.bdp.epsilon))
        eps_p.append(float(b.bdp_paper.epsilon))
        reasons.append(infinity_reasons(post, c, protocol) if not math.isfinite(b.bdp.epsilon) else [])

    def best(eps):
        fin = [(o, e) for o, e in zip(orders, eps) if math.isfinite(e)]
        return min(fin, key=lambda t: t[1]) if fin else None

    return {"orders": [float(o) for o in orders], "eps_guarantee": eps_g, "eps_paper": eps_p,
            "best_guarantee": best(eps_g), "best_paper": best(eps_p), "reasons": reasons}
