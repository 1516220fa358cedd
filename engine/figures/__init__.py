"""Figure and lesson builders for the dashboard: pure Plotly figures and tables, no Streamlit.

:mod:`engine.figures.pmt` (the PMT page and the Data page), :mod:`engine.figures.nvdp` (the NVDP
explorer) and :mod:`engine.figures.lessons` (the Learn page's five lessons, by topic in
``lessons_accounting``, ``lessons_pmt`` and ``lessons_nvdp``). Pages call these and only lay the results
out.
"""
