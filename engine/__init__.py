"""The privacy-utility explorer's engine: DP methods, their accounting and diagnostics.

Rooms (one idea per module): ``privacy`` (mu-GDP accounting, noise calibration, ledger),
``datasets`` (registry, upload validation, public/private split), ``pmt`` (public-moment-guided
truncation), ``regression`` (PMT and baseline estimators), ``experiments`` (vectorised sweeps),
``plots`` (pure Plotly figure builders), ``nvdp`` (clipped nonparametric variational DP), ``audit``
(empirical DP audits). Nothing here imports Streamlit.
"""

__version__ = "0.1.0"
