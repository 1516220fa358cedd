"""The PMT page's typed view (no Streamlit): what the user chose, the data in use, the results, the diagnostics,
the warnings, and the one answer to "is this derived from an upload?".

:func:`ui.pmt.run.compute` builds one :class:`PMTView` per run; the headline, the verdict, the tabs, the export
and the prefetch read it. Every cache decision (the session memo or the shared ``st.cache_data`` in
:mod:`ui.pmt.run`, the disk store :mod:`ui.common.view_store`, the figure cache :mod:`ui.common.figure_cache`,
the prefetch :mod:`ui.pmt.prefetch`, the planner) reads :attr:`Choice.is_upload` (also :attr:`PMTView.is_upload`).

Examples
--------
>>> Choice({"task": "regression", "data": "upload:mine.csv", "epsilon": 1.0}).is_upload
True
>>> c = Choice({"task": "regression", "data": "ccpp", "public_features": {"n_pub": 300}})
>>> c.upload_kinds, c.is_upload
(('features-only public file',), True)
>>> Choice.from_json('{"data": "ccpp", "public_source": "split"}').is_upload, Choice.from_json("[1]").is_upload
(False, True)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:  # annotations only: this module is a leaf below ui.pmt.compute.core (which re-exports it)
    from ui.pmt.compute.core import PreparedData

#: The kinds of upload a view can be derived from (docs/dev/threat_model.md; README "uploads stay in the session").
UPLOAD_KINDS = ("data", "public file", "features-only public file", "moments file")


def dumps(spec: dict) -> str:
    """Canonical JSON of a spec (sorted keys): a stable cache key."""
    return json.dumps(spec, sort_keys=True, default=float)


@dataclass(frozen=True, eq=False)
class Choice:
    """What the user chose: the canonical settings of the view (``spec``, the JSON-able dict the caches are keyed
    by and the exports write) and the typed fields read from it (plain attributes, set once).

    Attributes
    ----------
    spec : dict
        :func:`ui.pmt.compute.core.spec_from_state` with the public mode's fields
        (:func:`ui.pmt.public_mode.spec_fields`) and the methods it offers.
    json : str
        Canonical JSON of the spec (:func:`dumps`): the diagnostics' cache key.
    upload_kinds : tuple of str
        Which uploads (:data:`UPLOAD_KINDS`) the view is derived from: an uploaded data set (``data`` =
        ``"upload:<file>"``), a public file, a features-only public file, a moments file (a non-None
        ``public_features`` / ``moments`` entry).
    is_upload : bool
        True when anything of the view comes from an uploaded file: its results stay in the browser session,
        never in a cache shared between sessions.
    task, data_name, epsilon, delta, lam, eta, seeds, n_pub, methods, public_mode, public_file, standardize, split_seed
        The settings (``public_mode``: "labelled" by default; ``public_file``: a separate public file, not a
        random split; a setting the spec lacks is None).
    """

    spec: dict
    json: str = field(init=False)
    upload_kinds: tuple = field(init=False)
    is_upload: bool = field(init=False)
    task: str = field(init=False)
    data_name: str = field(init=False)
    epsilon: float = field(init=False)
    delta: float = field(init=False)
    lam: float = field(init=False)
    eta: float = field(init=False)
    seeds: int = field(init=False)
    n_pub: int = field(init=False)
    methods: tuple = field(init=False)
    public_mode: str = field(init=False)
    public_file: bool = field(init=False)
    standardize: bool = field(init=False)
    split_seed: int = field(init=False)

    def __post_init__(self):
        spec = self.spec
        got = (str(spec.get("data", "")).startswith("upload:"), spec.get("public_source") == "file",
               spec.get("public_features") is not None, spec.get("moments") is not None)
        kinds = tuple(kind for kind, yes in zip(UPLOAD_KINDS, got) if yes)

        def typed(key, cast):
            return None if spec.get(key) is None else cast(spec[key])

        values = dict(json=dumps(spec), upload_kinds=kinds, is_upload=bool(kinds), task=typed("task", str),
                      data_name=str(spec.get("data", "")), epsilon=typed("epsilon", float),
                      delta=typed("delta", float), lam=typed("lam", float), eta=typed("eta", float),
                      seeds=typed("seeds", int), n_pub=typed("n_pub", int), methods=typed("methods", tuple),
                      public_mode=str(spec.get("public_mode", "labelled")),
                      public_file=spec.get("public_source") == "file", standardize=typed("standardize", bool),
                      split_seed=typed("split_seed", int))
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_json(cls, spec_json: str) -> Choice:
        """The choice of a spec's canonical JSON; anything not a JSON object counts as an upload (never shared)."""
        try:
            spec = json.loads(spec_json)
        except (TypeError, ValueError):
            spec = None
        return cls(spec if isinstance(spec, dict) else {"data": "upload:"})


@dataclass(frozen=True, eq=False)
class DataInUse:
    """The data and the public information the view computes on.

    Attributes
    ----------
    ds : engine.datasets.Dataset
        The chosen data set (bundled or uploaded).
    public_ds : engine.datasets.Dataset or None
        The separate public file, when one is used.
    prep : PreparedData
        The split the sweeps and the diagnostics run on (:func:`ui.pmt.compute.core.prepare`).
    data_key : str
        Fingerprint of the data (and the public file): :func:`ui.pmt.compute.core.data_key`.
    npub_grid : tuple of int or None
        The n_pub sweep's public sample sizes; None where there is nothing to sweep (a public file, moments, a
        features-only public file).
    """

    ds: Any
    public_ds: Any
    prep: PreparedData
    data_key: str
    npub_grid: tuple[int, ...] | None
    key: str = field(init=False)  # the split's cache key: the data's fingerprint and the prepared arrays'

    def __post_init__(self):
        object.__setattr__(self, "key", self.data_key + self.prep.key)


@dataclass(frozen=True, eq=False)
class Results:
    """The sweeps every view needs: the error-vs-epsilon frame (the grid with the chosen epsilon merged in) and the
    chosen epsilon's own sweep (every seed and method: the headline)."""

    eps: pd.DataFrame
    eps_point: pd.DataFrame


@dataclass(frozen=True, eq=False)
class Diagnostics:
    """The diagnostic fits at the chosen settings (:func:`ui.pmt.compute.core.diagnostics`), read through typed
    properties; ``values`` is the dict the compute layer returns (what the advice and the export take).

    ``values["shared_cache"]`` (read by the planner, :func:`ui.pmt.compute.advice.plan_for`) is written here from
    the view's :attr:`Choice.is_upload`, never by the computation.
    """

    values: dict
    kappa_raw: float = field(init=False)
    kappa_pmt: float = field(init=False)
    frac_truncated: float = field(init=False)
    radius: float = field(init=False)  # PMT's truncation radius R
    clip_radius: float = field(init=False)  # the baselines' clip radius C
    mu: float = field(init=False)
    B_y: float = field(init=False)
    frac_y_clipped: float = field(init=False)
    ledgers: dict | None = field(init=False)  # method -> ledger; None until the noisy fits ran (not ridge)
    public_mode: str = field(init=False)
    response_statement: str | None = field(init=False)  # where the stated response centre and scale came from

    def __post_init__(self):
        v = self.values
        for name in ("kappa_raw", "kappa_pmt", "frac_truncated", "radius", "clip_radius", "mu", "B_y",
                     "frac_y_clipped"):
            object.__setattr__(self, name, float(v[name]) if v.get(name) is not None else math.nan)
        object.__setattr__(self, "ledgers", v.get("ledgers"))
        object.__setattr__(self, "public_mode", str(v.get("public_mode", "labelled")))
        object.__setattr__(self, "response_statement", v.get("response_statement"))

    @classmethod
    def of(cls, raw: dict, choice: Choice) -> Diagnostics:
        """The diagnostics of ``choice``'s view (a new dict: a cached result is never modified)."""
        return cls({**raw, "shared_cache": not choice.is_upload})


@dataclass(frozen=True, eq=False)
class PMTView:
    """One view of the PMT page: the choice, the data in use, the results, the diagnostics and the warnings.

    ``is_upload`` (the choice's: the one "derived from an upload?" answer, which every cache decision reads),
    ``shared`` (its negation: what may enter the caches shared between sessions), ``spec``, ``prep``, ``ds`` and
    ``key`` are set from the parts once.
    """

    choice: Choice
    data: DataInUse
    results: Results
    diag: Diagnostics
    warnings: tuple[str, ...] = ()
    is_upload: bool = field(init=False)
    shared: bool = field(init=False)
    spec: dict = field(init=False)
    prep: PreparedData = field(init=False)
    ds: Any = field(init=False)
    key: str = field(init=False)

    def __post_init__(self):
        for name, value in dict(is_upload=self.choice.is_upload, shared=not self.choice.is_upload,
                                spec=self.choice.spec, prep=self.data.prep, ds=self.data.ds,
                                key=self.data.key).items():
            object.__setattr__(self, name, value)

    @classmethod
    def assemble(cls, spec: dict, prep: PreparedData, eps_point: pd.DataFrame, raw_diag: dict, *,
                 eps: pd.DataFrame | None = None, ds=None, public_ds=None, data_key: str = "",
                 npub_grid: tuple[int, ...] | None = None, warnings=()) -> PMTView:
        """A view from its parts as the compute layer returns them (scripts and tests; the page's own is
        :func:`ui.pmt.run.compute`): ``eps`` defaults to the chosen epsilon's sweep alone."""
        choice = Choice(spec)
        return cls(choice=choice, data=DataInUse(ds=ds, public_ds=public_ds, prep=prep, data_key=data_key,
                                                 npub_grid=npub_grid),
                   results=Results(eps=eps_point if eps is None else eps, eps_point=eps_point),
                   diag=Diagnostics.of(raw_diag, choice), warnings=tuple(warnings))
