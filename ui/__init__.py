"""The Streamlit side of the explorer; the engine never imports this.

- ``ui.common``: what every page shares (settings and session state, page chrome, the figure cache, the
  active data and its loader, the upload file, presets, verdicts);
- ``ui.pmt`` and ``ui.nvdp``: one package per explorer page, its sections as modules, and its code
  without Streamlit in ``ui.pmt.compute`` / ``ui.nvdp.compute``.

The pages themselves are in ``app_pages/`` (registered by ``app.py``); the launcher in ``launcher/``.
"""
