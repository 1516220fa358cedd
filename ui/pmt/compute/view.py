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

import functools
import json
import math
from dataclasses import dataclass
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
    by and the exports write), read through typed properties.

    Attributes
    ----------
    spec : dict
        :func:`ui.pmt.compute.core.spec_from_state` with the public mode's fields
        (:func:`ui.pmt.public_mode.spec_fields`) and the methods it offers.
    """

    spec: dict

    @classmethod
    def from_json(cls, spec_json: str) -> Choice:
        """The choice of a spec's canonical JSON; anything not a JSON object counts as an upload (never shared)."""
        try:
            spec = json.loads(spec_json)
        except (TypeError, ValueError):
            spec = None
        return cls(spec if isinstance(spec, dict) else {"data": "upload:"})

    @functools.cached_property
    def json(self) -> str:
        """Canonical JSON of the spec (:func:`ui.pmt.compute.core.dumps`): the diagnostics' cache key."""
        return dumps(self.spec)

    @property
    def upload_kinds(self) -> tuple[str, ...]:
        """Which uploads (:data:`UPLOAD_KINDS`) the view is derived from: an uploaded data set (``data`` =
        ``"upload:<file>"``), a public file, a features-only public file, a moments file (a non-None
        ``public_features`` / ``moments`` entry)."""
        spec = self.spec
        got = (str(spec.get("data", "")).startswith("upload:"), spec.get("public_source") == "file",
               spec.get("public_features") is not None, spec.get("moments") is not None)
        return tuple(kind for kind, yes in zip(UPLOAD_KINDS, got) if yes)

    @property
    def is_upload(self) -> bool:
        """True when anything of the view comes from an uploaded file (data, public file, features-only public
        file, moments file): its results stay in the browser session, never in a cache shared between sessions."""
        return bool(self.upload_kinds)

    @property
    def task(self) -> str:
        return str(self.spec["task"])

    @property
    def data_name(self) -> str:
        """A registry name, or ``"upload:<file name>"``."""
        return str(self.spec.get("data", ""))

    @property
    def epsilon(self) -> float:
        return float(self.spec["epsilon"])

    @property
    def delta(self) -> float:
        return float(self.spec["delta"])

    @property
    def lam(self) -> float:
        return float(self.spec["lam"])

    @property
    def eta(self) -> float:
        return float(self.spec["eta"])

    @property
    def seeds(self) -> int:
        return int(self.spec["seeds"])

    @property
    def n_pub(self) -> int:
        return int(self.spec["n_pub"])

    @property
    def methods(self) -> list[str]:
        return list(self.spec["methods"])

    @property
    def public_mode(self) -> str:
        """"labelled" (default), "unlabelled" or "moments"."""
        return str(self.spec.get("public_mode", "labelled"))

    @property
    def public_file(self) -> bool:
        """A separate public file (not a random split of the data set)."""
        return self.spec.get("public_source") == "file"


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

    @property
    def key(self) -> str:
        """The cache key of the split: the data's fingerprint and the prepared arrays'."""
        return self.data_key + self.prep.key


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

    @classmethod
    def of(cls, raw: dict, choice: Choice) -> Diagnostics:
        """The diagnostics of ``choice``'s view (a new dict: a cached result is never modified)."""
        return cls({**raw, "shared_cache": not choice.is_upload})

    def get(self, key: str, default=None):
        return self.values.get(key, default)

    @property
    def kappa_raw(self) -> float:
        return float(self.values["kappa_raw"])

    @property
    def kappa_pmt(self) -> float:
        return float(self.values["kappa_pmt"])

    @property
    def frac_truncated(self) -> float:
        return float(self.values["frac_truncated"])

    @property
    def radius(self) -> float:
        """PMT's truncation radius R."""
        return float(self.values["radius"])

    @property
    def clip_radius(self) -> float:
        """The baselines' clip radius C."""
        return float(self.values["clip_radius"])

    @property
    def mu(self) -> float:
        return float(self.values["mu"])

    @property
    def B_y(self) -> float:
        return float(self.values.get("B_y", math.nan))

    @property
    def frac_y_clipped(self) -> float:
        return float(self.values.get("frac_y_clipped", math.nan))

    @property
    def ledgers(self) -> dict | None:
        """method -> the engine's privacy ledger; None until the noisy fits ran (tasks other than ridge)."""
        return self.values.get("ledgers")

    @property
    def public_mode(self) -> str:
        return str(self.values.get("public_mode", "labelled"))

    @property
    def response_statement(self) -> str | None:
        """Where the stated response centre and scale came from (the public modes)."""
        return self.values.get("response_statement")


@dataclass(frozen=True, eq=False)
class PMTView:
    """One view of the PMT page: the choice, the data in use, the results, the diagnostics and the warnings."""

    choice: Choice
    data: DataInUse
    results: Results
    diag: Diagnostics
    warnings: tuple[str, ...] = ()

    @property
    def is_upload(self) -> bool:
        """The one "derived from an upload?" answer (:attr:`Choice.is_upload`): every cache decision reads it."""
        return self.choice.is_upload

    @property
    def shared(self) -> bool:
        """Bundled data: what is derived from the view may enter the caches shared between sessions."""
        return not self.is_upload

    @property
    def spec(self) -> dict:
        return self.choice.spec

    @property
    def prep(self) -> PreparedData:
        return self.data.prep

    @property
    def ds(self):
        return self.data.ds

    @property
    def key(self) -> str:
        return self.data.key
