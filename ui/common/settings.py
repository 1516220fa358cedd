"""The settings' values and defaults (no Streamlit): the slider options, the sweep grids, :data:`DEFAULTS`.

:mod:`ui.common.state` puts them into session state and the URL; the compute rooms
(``ui/pmt/compute/``) read them from here so that they never import Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

#: Log-spaced epsilon values offered by the epsilon slider (0.05 .. 20, about 3 per decade).
EPSILON_OPTIONS: tuple[float, ...] = (0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0)

#: Coarse epsilon grid of the error-vs-epsilon sweep (the chosen epsilon is always added).
EPSILON_GRID: tuple[float, ...] = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)

#: Ridge penalties offered by the lam slider (0 = no penalty).
LAM_OPTIONS: tuple[float, ...] = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)

#: delta values offered (the usual choices; 1e-5 is the default).
DELTA_OPTIONS: tuple[float, ...] = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3)
#: Largest baseline clip radius the page accepts: engine.pmt._base.F32_BOUND_RANGE (the radius enters the
#: logistic sweep's float32 products); 0 means automatic, values in (0, 1e-100) are refused by the engine.
CLIP_RADIUS_MAX = 1e15

#: Public sample sizes of the error-vs-n_pub sweep (those < the private n are kept).
N_PUB_GRID: tuple[int, ...] = (20, 50, 100, 200, 500, 1000, 2000)

#: Epsilon below / above which the page shows an advisory note.
EPSILON_ADVISORY = (0.2, 5.0)

#: The working default the app opens with (DASHBOARD.md, "The first minute").
DEFAULTS: dict = {
    "dataset_name": "ccpp",
    "task": "regression",
    "epsilon": 1.0,
    "delta": 1e-5,
    "n_pub": 200,
    "seeds": 20,
    "lam": 1e-4,
    "eta": 0.05,
    "clip_radius": 0.0,
    "methods": ["PMT", "DP-RR", "DP-GD", "AdaSSP", "Public-only", "Non-private"],
    "response": "auto",  # PMT ridge's response handling (engine.pmt.ridge.resolve_response)
    "metric": "rmse",  # held-out test RMSE (ridge); the logistic task's default is the AUC (ui.pmt.compute.core)
    "standardize": True,
    "public_source": "split",
    "split_seed": 0,
    "presenter": False,
}


def _url(key: str, in_settings_file: bool = True):
    """A setting carried in the page's link (``ui.common.state.URL_CODEC``); ``in_settings_file``: also read back
    from an Export tab's ``pmt_settings.json`` with the link codec (:mod:`ui.pmt.settings_load`)."""
    return field(default=key, metadata={"url": True, "settings_file": in_settings_file})


@dataclass(frozen=True)
class PMTKeys:
    """Every session-state and widget key of the PMT page, one typed name each (``K.epsilon == "epsilon"``).

    The page reads and writes ``st.session_state[K.<name>]`` and binds widgets with ``key=K.<name>``; the settings
    that travel in a link (:attr:`url_keys`, in the link's order) are loaded and synced by
    :func:`ui.common.state.url_load` / :func:`ui.common.state.url_sync`, and those of them a settings file sets with
    the same codec are :attr:`settings_file_keys`. Shared with the other pages: ``data``, ``dataset_name``,
    ``uploaded_dataset`` and the privacy settings (:data:`DEFAULTS`).

    Examples
    --------
    >>> K.epsilon, K.upload_raw, K.url_keys[:3], "task" in K.settings_file_keys
    ('epsilon', 'pmt_upload_raw', ('data', 'task', 'epsilon'), False)
    """

    # ---- the settings a link carries (the URL's order) ----
    data: str = _url("data", in_settings_file=False)  # a registry name or "upload:<file name>"
    task: str = _url("task", in_settings_file=False)
    epsilon: str = _url("epsilon")
    delta: str = _url("delta")
    lam: str = _url("lam")
    n_pub: str = _url("n_pub")
    seeds: str = _url("seeds")
    eta: str = _url("eta")
    clip_radius: str = _url("clip_radius")
    methods: str = _url("methods")
    metric: str = _url("metric")
    standardize: str = _url("standardize")
    public_source: str = _url("public_source", in_settings_file=False)  # "split" or "file"
    split_seed: str = _url("split_seed")
    synthetic_kappa: str = _url("synthetic_kappa")
    public_mode: str = _url("public_mode")  # "labelled", "unlabelled" or "moments"
    response: str = _url("response", in_settings_file=False)
    # ---- shared with the Data page and the sidebar ----
    dataset_name: str = "dataset_name"
    uploaded_dataset: str = "uploaded_dataset"
    dataset_shape: str = "dataset_shape"
    feature_names: str = "pmt_feature_names"
    # ---- the CSV upload (ui.pmt.upload) ----
    upload_file: str = "pmt_upload_file"
    upload_raw: str = "pmt_upload_raw"  # (file name, bytes)
    upload_error: str = "pmt_upload_error"
    upload_target: str = "pmt_upload_target"
    upload_features: str = "pmt_upload_features"
    upload_task: str = "pmt_upload_task"
    # ---- the public information (ui.pmt.controls, ui.pmt.public_mode) ----
    public_file: str = "pmt_public_file"
    public_raw: str = "pmt_public_raw"  # (file name, bytes)
    rows_source: str = "pmt_rows_source"  # unlabelled mode: "split" or "file"
    public_features_file: str = "pmt_public_features_file"
    public_features_raw: str = "pmt_public_features_raw"
    moments_source: str = "pmt_moments_source"  # moments mode: "split" or "file"
    moments_file: str = "pmt_moments_file"
    moments_raw: str = "pmt_moments_raw"
    response_center: str = "pmt_response_center"
    response_scale: str = "pmt_response_scale"
    # ---- the results panel ----
    tab: str = "pmt_tab"
    ledger_method: str = "pmt_ledger_method"
    plan_target: str = "plan_target"
    settings_file: str = "pmt_settings_file"
    # ---- bookkeeping of this session (never a widget) ----
    done: str = "_pmt_done"  # (cache key, spec JSON) computed in this session
    session_cache: str = "_pmt_session_cache"  # an upload's results (ui.pmt.run)
    session_cache_owner: str = "_pmt_session_cache_owner"
    settings_seen: str = "_pmt_settings_seen"
    settings_pending: str = "_pmt_settings_pending"
    url_task_inferred: str = "_url_task_inferred"
    url_metric_pending: str = "_url_metric_pending"  # written by ui.common.state.url_load as _url_<key>_pending
    url_n_pub_pending: str = "_url_n_pub_pending"

    #: The settings the page's link carries (a shared link reproduces the view).
    url_keys: tuple = field(init=False, default=())
    #: The link settings a settings file sets with the link's codec (data, task, public file and response have their
    #: own rules there).
    settings_file_keys: tuple = field(init=False, default=())

    def __post_init__(self):
        for name, flag in (("url_keys", "url"), ("settings_file_keys", "settings_file")):
            object.__setattr__(self, name, tuple(getattr(self, f.name) for f in fields(self) if f.metadata.get(flag)))


#: The PMT page's keys (:class:`PMTKeys`).
K = PMTKeys()
