"""Figure and lesson builders for the dashboard: pure Plotly figures and tables, no Streamlit.

:mod:`engine.figures.pmt` (the PMT page and the Data page), :mod:`engine.figures.nvdp` (the NVDP
explorer) and :mod:`engine.figures.lessons` (the Learn page's five lessons, by topic in
``lessons_accounting``, ``lessons_pmt`` and ``lessons_nvdp``). Pages call these and only lay the results
out.
"""

import plotly.io as _pio

#: Every figure of the dashboard uses Plotly's "plotly_white" template. Making it the default once
#: gives the same figures (the same JSON) as passing ``template="plotly_white"`` to each, without
#: re-validating and copying the template on every figure (about 10-20 ms per figure here, on
#: every slider move); the builders pass it explicitly only if something reset the default.
TEMPLATE = "plotly_white"
_pio.templates.default = TEMPLATE


def template_kw() -> dict:
    """``{"template": "plotly_white"}`` unless it is the default already (then ``{}``: the same figure)."""
    return {} if _pio.templates.default == TEMPLATE else {"template": TEMPLATE}

