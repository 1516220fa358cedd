"""The NVDP embeddings page (``app_pages/nvdp.py``): its settings, cached engine calls, models, headline and tabs.

The code without Streamlit (the HTML report) is in :mod:`ui.nvdp.compute`.
"""
