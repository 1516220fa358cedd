"""The packed plotly.js of the HTML reports (public names of ``_packed_html``): :func:`plotlyjs_blob`.

A report embeds plotly.js once, compressed; :func:`plotlyjs_blob` builds that blob (cached in the
process), so a caller can build it ahead of the first download.
"""

from engine.figures._packed_html import plotlyjs_blob

__all__ = ["plotlyjs_blob"]
