"""The sentence inspector: two typed sentences through a trained model's NVIB layer, clipped, and their RD.

Typed text is encoded without the disk cache. Nothing here imports Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.divergence import pairwise_rd_bound
from engine.nvdp.encoder import DEFAULT_MAX_LENGTH, encode_sentences
from engine.nvdp.posthoc import raw_posteriors

__all__ = ["PairInspection", "inspect_pair"]


@dataclass
class PairInspection:
    """Two typed sentences through a trained model's NVIB layer (see :func:`inspect_pair`).

    Attributes
    ----------
    components : list of pandas.DataFrame
        One table per sentence, one row per latent component (row 0 = the prior component), with
        columns ``component``, ``token``, ``alpha_before``, ``alpha``, ``weight`` (the expected
        Dirichlet weight alpha / sum(alpha) after clipping), ``mu_norm_before``, ``mu_norm``,
        ``sigma_mean_before``, ``sigma_mean``, ``sigma_min``, ``sigma_max``, ``clipped`` (the rules
        that changed the component: "mean", "std", "alpha low", "alpha high", comma-separated).
    rd_exact : float
        max(D(a||b), D(b||a)) in nats, the exact bound of what the mechanism releases: padding as the
        mechanism pads (``padding="strict"``: the authors' layer gives padded positions weight 0, so
        two sentences of different lengths are told apart and the bound is +inf; a length-hiding
        model, ``NVIBConfig.n_components``, releases prior components instead and the bound is finite).
    rd_forward, rd_backward : float
        D(a||b) and D(b||a).
    rd_paper : float
        The paper-protocol figure for the ordered pair (a, b) (no outlier filter: one pair).
    rd_exact_unclipped, rd_paper_unclipped : float
        The same two figures without clipping.
    clip : ClipConfig
    length_hiding : bool
        Whether the model hides the length (then the lengths do not make the bound infinite).
    """

    components: list
    rd_exact: float
    rd_forward: float
    rd_backward: float
    rd_paper: float
    rd_exact_unclipped: float
    rd_paper_unclipped: float
    clip: ClipConfig
    length_hiding: bool = False


def _tokens(sentence: str, max_length: int) -> list[str]:
    from engine.nvdp.encoder import _load_model

    tokenizer, _ = _load_model()
    ids = tokenizer(sentence, truncation=True, max_length=max_length)["input_ids"]
    return tokenizer.convert_ids_to_tokens(ids)


def inspect_pair(trained, sentence_a: str, sentence_b: str, clip: ClipConfig, *,
                 max_length: int = DEFAULT_MAX_LENGTH) -> PairInspection:
    """Encode two sentences (never cached on disk), clip their posteriors with ``clip``, bound their RD.

    Parameters
    ----------
    trained : TrainedNVDP or NVDPClassifier
    sentence_a, sentence_b : str
        Non-empty after stripping white space.
    clip : ClipConfig
        Clipping applied to both (``enabled=False``: none).
    max_length : int, default 48

    Returns
    -------
    PairInspection

    Raises
    ------
    ValueError
        If a sentence is empty (named ``sentence_a`` / ``sentence_b``).
    TypeError
        If a sentence is not a str or ``clip`` not a ClipConfig.
    """
    if not isinstance(clip, ClipConfig):
        raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
    texts = []
    for name, s in (("sentence_a", sentence_a), ("sentence_b", sentence_b)):
        if not isinstance(s, str):
            raise TypeError(f"{name} must be a str; got {type(s).__name__}")
        if not s.strip():
            raise ValueError(f"{name} is empty: type a sentence")
        texts.append(s.strip())
    states = encode_sentences(texts, max_length=max_length, use_cache=False)  # typed text never touches the disk
    raw = raw_posteriors(trained, states)
    post, _ = raw.clip(clip)
    k = int(raw.mask.sum(1).max())
    n_latent = max_length + 1

    def bounds(p):
        mu, sg, al, m = p.mu[:, :k], p.sigma[:, :k], p.alpha[:, :k], p.mask[:, :k]
        fw = pairwise_rd_bound(mu, sg, al, m, renyi_order=clip.renyi_order, form="exact", direction="forward",
                               padding="strict")  # the mechanism's own padding
        bw = pairwise_rd_bound(mu, sg, al, m, renyi_order=clip.renyi_order, form="exact", direction="backward",
                               padding="strict")
        pp = pairwise_rd_bound(mu, sg, al, m, renyi_order=clip.renyi_order, form="paper", batch_size=2,
                               outlier_z=None, n_latent=n_latent)
        f, b = float(fw.values[0]), float(bw.values[0])
        return f, b, max(f, b), float(pp.values[0])

    f, b, ex, pa = bounds(post)
    _, _, ex_u, pa_u = bounds(raw)
    floor, cap = clip.sigma_min, clip.sigma_max
    tables = []
    for i, text in enumerate(texts):
        n = int(raw.mask[i].sum())
        toks = ["(prior)"] + _tokens(text, max_length)[: n - 1]
        toks += ["(length padding: prior)"] * (n - len(toks))  # a length-hiding model releases these too
        mu_b = torch.linalg.vector_norm(raw.mu[i, :n], dim=-1).numpy()
        mu_a = torch.linalg.vector_norm(post.mu[i, :n], dim=-1).numpy()
        a_b = raw.alpha[i, :n].numpy().astype(float)
        a_a = post.alpha[i, :n].numpy().astype(float)
        s_b, s_a = raw.sigma[i, :n], post.sigma[i, :n]
        rules = []
        for j in range(n):
            r = []
            if clip.enabled and j > 0:
                if mu_b[j] > clip.C_mu:
                    r.append("mean")
                if bool((s_b[j] < floor).any()) or (cap is not None and bool((s_b[j] > cap).any())):
                    r.append("std")
                if a_b[j] < clip.alpha_min:
                    r.append("alpha low")
                if a_b[j] > clip.alpha_max:
                    r.append("alpha high")
            rules.append(", ".join(r))
        tables.append(pd.DataFrame({
            "component": np.arange(n),
            "token": toks,
            "alpha_before": a_b,
            "alpha": a_a,
            "weight": a_a / a_a.sum(),
            "mu_norm_before": mu_b.astype(float),
            "mu_norm": mu_a.astype(float),
            "sigma_mean_before": s_b.mean(-1).numpy().astype(float),
            "sigma_mean": s_a.mean(-1).numpy().astype(float),
            "sigma_min": s_a.min(-1).values.numpy().astype(float),
            "sigma_max": s_a.max(-1).values.numpy().astype(float),
            "clipped": rules,
        }))
    model = getattr(trained, "model", trained)
    return PairInspection(tables, ex, f, b, pa, ex_u, pa_u, clip, model.config.n_components is not None)
