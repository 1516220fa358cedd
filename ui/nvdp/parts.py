"""Static parts of the NVDP page (app_pages/nvdp.py): the plain-words introduction, the formulas, the link parsers."""

from __future__ import annotations

import math

import streamlit as st

#: The page's introduction (every abbreviation spelled out).
INTRO = (
    "A sentence is turned into numbers by a small language model (all-MiniLM-L6-v2). **NVDP** "
    "(*nonparametric variational differential privacy*) does not share those numbers: a "
    "**bottleneck** (NVIB, *nonparametric variational information bottleneck*) replaces each word piece by a "
    "blurred, weighted cloud, and only one random draw from it is shared. A sentiment classifier "
    "(positive / negative, on 3,000 product, film and restaurant reviews) reads only that draw.  \n"
    "**How private?** If the draws of any two sentences look alike, an observer cannot tell which sentence was "
    "used. The **RD** (*Renyi divergence*) between the two draw distributions measures that: smaller = more "
    "private. **BDP** epsilon (*Bayesian differential privacy*) turns the RDs over many pairs into one privacy "
    "budget (smaller = more private; 10.47 is the floor when all RDs are 0).  \n"
    "**Clipping** (El Zein, Kumar & Henderson 2026) caps the bottleneck's parameters: the length of each "
    "cloud's centre (**C_mu**), the smallest blur (**sigma**), and the weights (**alpha** between "
    "**alpha_min** and **alpha_max**). Caps limit how different two sentences can look in the bottleneck; whether "
    "that lowers the RD depends on how the model was trained."
)


def _computed_claims() -> str:
    """What clipping does to the shipped models, computed from their figures (engine.nvdp.claims)."""
    try:
        from engine.nvdp.claims import clipping_sentence, restored_sentence, shipped_facts

        facts = shipped_facts()
        return " " + clipping_sentence(facts) + " " + restored_sentence(facts)
    except (FileNotFoundError, KeyError, ValueError, StopIteration):
        return ""


INTRO = INTRO + _computed_claims()


def float_in(lo, hi):
    """A link parser: a finite float in [lo, hi], else ValueError naming the range."""
    def parse(text):
        v = float(text)
        if not (math.isfinite(v) and lo <= v <= hi):
            raise ValueError(f"{text} is outside [{lo:g}, {hi:g}]")
        return v
    return parse


def choice(options):
    """A link parser: one of ``options`` (floats, compared with a relative tolerance 1e-9), else ValueError."""
    def parse(text):
        v = float(text)
        for o in options:
            if math.isclose(v, o, rel_tol=1e-9):
                return o
        raise ValueError(f"{text} is not one of {', '.join(f'{o:g}' for o in options)}")
    return parse


def int_in(lo, hi):
    """A link parser: an int in lo..hi, else ValueError naming the range."""
    def parse(text):
        v = int(text)
        if not lo <= v <= hi:
            raise ValueError(f"{v} is outside {lo}..{hi}")
        return v
    return parse


def nvdp_formulas() -> None:
    """Draw the Renyi bound, the Gaussian term, the three clipping rules and the BDP accountant (LaTeX)."""
    st.latex(r"D_\lambda(P\,\|\,Q) = \frac{1}{\lambda-1}\ln \int p^\lambda q^{1-\lambda}")
    st.latex(r"\mathrm{RD}(a,b) \le D_\lambda\big(\mathrm{Dir}(\alpha^a)\,\|\,\mathrm{Dir}(\alpha^b)\big)"
             r" + \sum_{k}\sum_{d} D_\lambda\big(\mathcal N(\mu^a_{kd},\sigma^{a\,2}_{kd})\,\|\,"
             r"\mathcal N(\mu^b_{kd},\sigma^{b\,2}_{kd})\big)")
    st.latex(r"D_\lambda\big(\mathcal N(m_a,s_a^2)\|\mathcal N(m_b,s_b^2)\big) = "
             r"\frac{\lambda (m_a-m_b)^2}{2 s^2} + \frac{1}{1-\lambda}\ln\frac{s}{s_a^{1-\lambda}s_b^{\lambda}},"
             r"\quad s^2=\lambda s_b^2+(1-\lambda)s_a^2 > 0")
    st.latex(r"\mu \leftarrow \mu\,\min\!\left(1,\tfrac{C_\mu}{\|\mu\|_2}\right),\quad "
             r"\sigma \leftarrow \max\!\left(\sigma, \sqrt{\tfrac{\lambda-1}{\lambda}}\right),\quad "
             r"\alpha \leftarrow \operatorname{clamp}(\alpha, \alpha_{\min}, \alpha_{\max})")
    st.latex(r"\varepsilon_{\mathrm{BDP}} = \frac{\sum_t c_t - \ln\!\big(\delta - (1-\text{conf}^B)\big)}{\lambda},"
             r"\quad c_t = \ln \widehat{\mathbb E}_{\text{pairs in batch }t}\big[e^{\lambda D}\big]"
             r" \text{ (Student-t upper bound)}")
    st.caption("Clipped means lie within C_mu of the prior's centre 0, so (m_a - m_b)^2 summed over dims is "
               "at most 4 C_mu^2; the blur floor keeps s^2 > 0 against the prior's blur 1.")
