"""Figure and lesson builders for the dashboard: pure Plotly figures and tables, no Streamlit.

:mod:`engine.figures.pmt` (the PMT page and the Data page), :mod:`engine.figures.nvdp` (the NVDP
explorer) and the Learn page's lessons. Pages call these and only lay the results out.
"""
