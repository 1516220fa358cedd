"""The privacy-utility explorer's engine: DP methods, their accounting and diagnostics.

Layers (see ``docs/dev/architecture.md``): ``privacy`` (mu-GDP accounting, validation, noise, the ledger)
-> ``datasets`` (registry, upload validation, public/private split) -> the mechanisms ``pmt``
(public-moment-guided truncation: transform, PMT and baseline estimators, sweeps) and ``nvdp``
(clipped nonparametric variational DP) -> ``audit`` (empirical DP audits) -> ``figures`` (pure
Plotly figure and lesson builders) -> ``cli`` (``python -m engine``). Nothing here imports Streamlit.
"""

__version__ = "0.2.0"
