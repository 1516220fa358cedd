"""The PMT regression page (``app_pages/pmt.py``): its controls, staged run, headline and tabs (Streamlit).

The view-model code without Streamlit (data preparation, sweep specs, the modes without public labels,
exports, the snippet, the trust checks) is in :mod:`ui.pmt.compute`.
"""
