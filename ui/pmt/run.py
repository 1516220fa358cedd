"""The PMT page's computations: cached engine calls, the staged run with its progress bar, the lazy sweeps.

Bundled data go through ``st.cache_data`` (shared by every session of the server, keyed by data
fingerprint and parameters, so moving a slider back is instant); uploaded data, and everything
computed from them, are memoised in ``st.session_state`` instead, so nothing of them leaves the
browser session (:func:`_cached`). :func:`compute` loads the chosen data and runs the stages every
view needs (the error-vs-epsilon grid, the chosen epsilon, one fit per method for the diagnostics);
the lam and n_pub sweeps wait until their tab is opened (:func:`lazy_sweep`). Nothing here computes
a DP quantity itself: it calls :mod:`ui.pmt.compute.core` and the engine.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import pandas as pd
import streamlit as st

from engine.datasets import read_csv_upload
from ui.common import view_store
from ui.pmt.compute import core as C
from ui.common.data_choice import computed_on
from ui.common.layout import warm_browser_code
from ui.common.loaders import bundled, registry  # noqa: F401 - registry: also read as ui.pmt.run.registry
from ui.common.upload_file import Named
from ui.pmt.compute.modes import file_info
from ui.pmt.compute.trust import newton_banner, reference_note, whitening_note
from ui.pmt.prefetch import neighbours
from ui.common.settings import EPSILON_GRID, LAM_OPTIONS, N_PUB_GRID
from ui.pmt.compute.view import Choice, DataInUse, Diagnostics, PMTView, Results
from ui.common.settings import K

ss = st.session_state


def _sweep_raw(data_key: str, _data: C.PreparedData, spec_json: str) -> pd.DataFrame:
    return C.sweep(_data, json.loads(spec_json))


def _diagnostics_raw(data_key: str, _data: C.PreparedData, spec_json: str) -> dict:
    return C.diagnostics(_data, json.loads(spec_json))


def _fits_raw(data_key: str, _data: C.PreparedData, spec_json: str) -> dict:
    return C.estimator_fits(_data, json.loads(spec_json))


def _ledger_raw(data_key: str, _data: C.PreparedData, spec_json: str, method: str) -> pd.DataFrame:
    """One method's ledger for display: the ridge fits come with the diagnostics, the others' on demand."""
    choice = Choice.from_json(spec_json)  # the very spec: an upload's stays in the session memo
    diag = diagnostics(choice, data_key, _data, spec_json)
    ledgers = (diag["ledgers"] if diag["ledgers"] is not None
               else _cached(_fits_raw, choice, data_key, _data, spec_json)["ledgers"])
    return C.ledger_display(C.ledger_frame(ledgers[method]))


def _prepare_raw(data_key: str, _ds, _public_ds, standardize: bool, n_pub: int, split_seed: int, task: str) -> C.PreparedData:
    # n_pub / split_seed only matter for a random split; the key still carries them (cheap).
    return C.prepare(_ds, _public_ds, standardize=standardize, n_pub=n_pub, split_seed=split_seed, task=task)


#: Seconds a shared (bundled-data) result is kept: a class session is about an hour; with the entry
#: limits below this bounds the caches' memory whatever the traffic.
SHARED_TTL_S = 3600

def _sweep_shared(data_key: str, _data: C.PreparedData, spec_json: str) -> pd.DataFrame:
    """A bundled view's sweep, from the disk store of earlier server processes when there (:mod:`ui.common.view_store`)."""
    return view_store.through("sweep", data_key, spec_json, lambda: _sweep_raw(data_key, _data, spec_json))


def _diagnostics_shared(data_key: str, _data: C.PreparedData, spec_json: str) -> dict:
    """A bundled view's diagnostics, through the disk store (:mod:`ui.common.view_store`)."""
    return view_store.through("diagnostics", data_key, spec_json, lambda: _diagnostics_raw(data_key, _data, spec_json))


def _fits_shared(data_key: str, _data: C.PreparedData, spec_json: str) -> dict:
    """A bundled view's noisy fits, through the disk store (:mod:`ui.common.view_store`)."""
    return view_store.through("fits", data_key, spec_json, lambda: _fits_raw(data_key, _data, spec_json))


# bundled data only (uploads take the session memo of _cached, never these): the disk store sits under the
# cross-session cache, so a result computed by an earlier server process (or scripts/precompute_views.py) is read
_SHARED = {
    _sweep_raw: st.cache_data(max_entries=256, ttl=SHARED_TTL_S, show_spinner=False)(_sweep_shared),  # see run_stages
    _diagnostics_raw: st.cache_data(max_entries=64, ttl=SHARED_TTL_S, show_spinner=False)(_diagnostics_shared),
    _fits_raw: st.cache_data(max_entries=64, ttl=SHARED_TTL_S, show_spinner=False)(_fits_shared),
    _ledger_raw: st.cache_data(max_entries=64, ttl=SHARED_TTL_S, show_spinner=False)(_ledger_raw),
    _prepare_raw: st.cache_data(max_entries=32, ttl=SHARED_TTL_S, show_spinner=False)(_prepare_raw),
}
#: The shared cached functions the prefetch worker calls ahead of a key press (:func:`ui.pmt.prefetch.neighbours`).
PREFETCHED = {"sweep": _SHARED[_sweep_raw], "diagnostics": _SHARED[_diagnostics_raw]}
#: Uploaded data (and everything computed from them) must stay in this browser session:
#: ``st.cache_data`` is shared by every session of the server, so upload-derived calls are memoised
#: in ``st.session_state`` instead (bounded; dropped with the session).
_SESSION_CACHE_SIZE = 24


def _cached(raw, choice: Choice, *args):
    """Call ``raw`` through the shared cache for bundled data, through a per-session memo when ``choice`` is derived
    from an upload (:attr:`ui.pmt.compute.view.Choice.is_upload`)."""
    if not choice.is_upload:
        return _SHARED[raw](*args)
    # A new upload replaces the old one: its results are released with it (the memo holds one upload's).
    owner = (id(ss.get(K.uploaded_dataset)), id(ss.get(K.public_raw)), id(ss.get(K.public_features_raw)))
    if ss.get(K.session_cache_owner) != owner:
        ss[K.session_cache] = {}
        ss[K.session_cache_owner] = owner
    memo = ss[K.session_cache]
    key = (raw.__name__,) + tuple(a for a in args if a is None or isinstance(a, (str, int, float, bool)))
    if key not in memo:
        if len(memo) >= _SESSION_CACHE_SIZE:
            memo.pop(next(iter(memo)))
        memo[key] = raw(*args)
    return memo[key]


def sweep(choice: Choice, *args) -> pd.DataFrame:
    """A sweep ``(data key, prepared data, spec JSON)`` of ``choice``'s view through the page cache."""
    return _cached(_sweep_raw, choice, *args)


def diagnostics(choice: Choice, *args) -> dict:
    """The diagnostics ``(data key, prepared data, spec JSON)`` through the page cache."""
    return _cached(_diagnostics_raw, choice, *args)


def ledger(view: PMTView, method: str) -> pd.DataFrame:
    """One method's ledger of the view, for display."""
    return _cached(_ledger_raw, view.choice, view.key, view.prep, view.choice.json, method)


def diag_with_fits(view: PMTView) -> dict:
    """The diagnostics plus the estimators' noisy fits (computed on demand, with a spinner, for tasks other than
    ridge)."""
    diag = view.diag.values
    if diag["ledgers"] is not None:
        return diag
    with st.spinner("One noisy fit of each method for the conditioning figure and the privacy ledger ..."):
        fits = _cached(_fits_raw, view.choice, view.key, view.prep, view.choice.json)
    return C.with_fits(diag, fits)


def run_stages(choice: Choice, key: str, prep, stages) -> list:
    """Run the cached computations of ``choice``'s view in order with a progress bar naming each stage.

    The bar appears only when something is not yet computed in this session (cached results return at
    once); Streamlit's Stop button (top right while running) cancels the run, and the settings stay.
    """
    done = ss.setdefault(K.done, set())
    todo = [i for i, (_, _, spec_json) in enumerate(stages) if (key, spec_json) not in done]
    bar = st.progress(0.0, text="Computing ...") if todo else None
    out = []
    try:
        for i, (label, fn, spec_json) in enumerate(stages):
            if bar is not None and i in todo:
                bar.progress(todo.index(i) / len(todo),
                             text=f"Computing {todo.index(i) + 1}/{len(todo)}: {label} (Stop, top right, cancels)")
            out.append(fn(choice, key, prep, spec_json))
            done.add((key, spec_json))
    finally:  # an error clears the progress line too (it would stay above the error box)
        if bar is not None:
            bar.empty()
    return out


def sweep_args(view: PMTView, kind: str):
    """(cache key, spec JSON) of the lam or n_pub sweep at the chosen settings; None if not applicable."""
    spec = view.spec
    if kind == "lam":
        return view.key, C.dumps(C.sweep_spec(spec, "lam", LAM_OPTIONS))
    if view.data.npub_grid is None:
        return None
    return view.data.data_key, C.dumps(C.sweep_spec(spec, "n_pub", view.data.npub_grid))


def lazy_sweep(view: PMTView, kind: str, on_part=None):
    """The lam / n_pub sweep through the page cache (computed the first time its tab is opened).

    The n_pub sweep (a random split) runs one public sample size at a time, each through the cache
    (:func:`npub_parts`), and the chosen n_pub is the chosen epsilon's own sweep (``view.results.eps_point``,
    the very same runs: each n_pub is its own split, swept on its own), so it costs nothing;
    ``on_part(frame, done, total)``, when given, is called with the rows so far (in the grid's order)
    before each size this session has not computed yet (the tab draws the figure as it fills in). The concatenation equals one ``run_sweep``
    over the whole grid row for row.

    The lam sweep is one ``run_sweep`` over the lam grid (its 8 x seeds runs of a method in one batch: the
    cheapest way, and its numbers); when this session has not computed it yet, ``on_part`` is first called with
    the chosen lam's rows, the chosen epsilon's sweep (on screen already), so the tab can
    draw that point while the other lams are computed. The batch's rows at the chosen lam are the same runs in
    another batch: equal to float64 rounding.
    """
    args = sweep_args(view, kind)
    if args is None:
        return None
    choice = view.choice
    if kind == "n_pub":
        return _npub_sweep(view, on_part)
    done = ss.setdefault(K.done, set())  # what this session has computed (see run_stages)
    if on_part is not None and tuple(args) not in done and view.results.eps_point is not None:
        first = view.results.eps_point.copy()
        first["sweep"] = kind
        on_part(first, 1, len(LAM_OPTIONS))
    what = f"{len(LAM_OPTIONS)} values of lam"
    with st.spinner(f"Computing the {kind} sweep: {what} x {choice.seeds} seeds x {len(choice.methods)} methods "
                    "(cached afterwards) ..."):
        frame = sweep(choice, args[0], view.prep, args[1])
    done.add(tuple(args))
    return frame


def npub_parts(view: PMTView) -> list:
    """``(n_pub, spec JSON or None)`` per public sample size of the n_pub sweep, in the grid's order; None
    marks the chosen n_pub, whose rows are the chosen epsilon's sweep (labelled public rows only)."""
    spec = view.spec
    reuse = view.choice.public_mode == "labelled"
    return [(int(v), None if reuse and int(v) == view.choice.n_pub else C.dumps(C.sweep_spec(spec, "n_pub", [v])))
            for v in view.data.npub_grid]


def _npub_sweep(view: PMTView, on_part) -> pd.DataFrame:
    choice, dkey = view.choice, view.data.data_key
    parts = npub_parts(view)
    done = ss.setdefault(K.done, set())  # what this session has computed (see run_stages)
    got = {}
    for i, (_, spec_json) in enumerate(parts):
        if spec_json is None:  # the chosen n_pub: the chosen epsilon's rows, first
            got[i] = view.results.eps_point.copy()
            got[i]["sweep"] = "n_pub"
    for i, (n_pub, spec_json) in enumerate(parts):
        if spec_json is None:
            continue
        new = (dkey, spec_json) not in done
        if new and on_part is not None and got:
            on_part(pd.concat([got[k] for k in sorted(got)], ignore_index=True), len(got), len(parts))
        with st.spinner(f"Computing the n_pub sweep: n_pub = {n_pub} ({len(got) + 1} of {len(parts)} public sample "
                        f"sizes) x {choice.seeds} seeds x {len(choice.methods)} methods (cached afterwards) ..."):
            got[i] = sweep(choice, dkey, view.prep, spec_json)
        done.add((dkey, spec_json))
    return pd.concat([got[k] for k in range(len(parts))], ignore_index=True)


def _load(task: str):
    """``(data set, public data set or None)`` of the session's choice (ValueError naming what is missing)."""
    name = ss.get(K.data)
    if name is None:
        raise ValueError(f"No data set for the task {task!r}: upload one.")
    if str(name).startswith("upload:"):
        ds = ss[K.uploaded_dataset]
    else:
        ds = bundled(name, float(ss.get(K.synthetic_kappa, 1e3)))
    ss[K.dataset_shape] = (name, ds.n, ds.d)
    ss[K.feature_names] = list(ds.feature_names)  # the public-features upload is checked against them
    computed_on(name, ds.n, ds.d)  # the sidebar names the data actually computed on
    public_ds = None
    if ss.get(K.public_source) == "file":
        pname, pdata = ss[K.public_raw]
        try:
            public_ds = read_csv_upload(Named(pname, pdata), target=ds.target_name, features=list(ds.feature_names),
                                        task=ds.task if ds.task != "text-classification" else None)
        except ValueError as exc:
            raise ValueError(f"The public file {pname!r} does not fit the data set: {exc}") from exc
    return ds, public_ds


def _view(task: str) -> PMTView:
    """Load the data, run the stages every view needs and assemble the view (ValueError / TypeError: bad settings)."""
    from ui.pmt.public_mode import restrict_methods, spec_fields

    ds, public_ds = _load(task)
    choice = Choice(restrict_methods({**C.spec_from_state(ss, task=task), **spec_fields(task, ds.feature_names)}))
    spec = choice.spec
    dkey = C.data_key(ds, public_ds, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # advisories are shown explicitly below
        prep = _cached(_prepare_raw, choice, dkey, ds, public_ds, choice.standardize, choice.n_pub,
                       choice.split_seed, task)
        info = file_info(spec)
        if info is not None:  # a moments or features-only public file: no public split, every row private
            n_test = int(round(C.TEST_SIZE * prep.n_total))
            prep = replace(prep, n_pub=int(info.n_pub), n_priv=prep.n_total - n_test, public_is_split=False)
        key = dkey + prep.key
        n_methods, n_seeds = len(choice.methods), choice.seeds
        stages = [
            (f"error vs epsilon: {len(EPSILON_GRID)} epsilons x {n_seeds} seeds x {n_methods} methods",
             sweep, C.dumps(C.sweep_spec(spec, "epsilon", EPSILON_GRID))),
            (f"your epsilon = {choice.epsilon:g}: {n_seeds} seeds x {n_methods} methods",
             sweep, C.dumps(C.sweep_spec(spec, "epsilon", [choice.epsilon]))),
            ("one fit of each method for the diagnostics and the privacy ledger", diagnostics, choice.json),
        ]
        eps_grid, eps_point, raw_diag = run_stages(choice, key, prep, stages)
    # the lam and n_pub sweeps are computed when their tab is opened (see lazy_sweep)
    npub_grid = (tuple(sorted({n for n in N_PUB_GRID if n < prep.n_total // 2} | {choice.n_pub}))
                 if prep.public_is_split and spec.get("moments") is None and spec.get("public_features") is None
                 else None)
    diag = Diagnostics.of(raw_diag, choice)
    notes = ([b for b in (newton_banner(prep, spec),) if b] + C.advisories(prep, diag.values, choice.delta)
             + [b for b in (reference_note(eps_point, task), whitening_note(eps_point, task)) if b])
    return PMTView(choice=choice, data=DataInUse(ds=ds, public_ds=public_ds, prep=prep, data_key=dkey,
                                                 npub_grid=npub_grid),
                   results=Results(eps=C.merge_eps(eps_grid, eps_point), eps_point=eps_point), diag=diag,
                   warnings=tuple(notes))


def compute(task: str, problems: list[str]) -> PMTView | None:
    """Load the chosen data and run every stage the view needs; on bad settings show why and return None.

    Parameters
    ----------
    task : str
        The page's task (a key of :data:`ui.pmt.compute.core.TASK_LABELS`).
    problems : list of str
        Problems the controls found (e.g. a missing public file); any of them stops the computation.

    Returns
    -------
    PMTView or None
        The view (:class:`ui.pmt.compute.view.PMTView`: the choice, the data in use, the error-vs-epsilon
        results, the diagnostics and the warnings); None after an error box.
    """
    warm_browser_code()
    try:
        if problems:
            raise ValueError(" ".join(problems))
        view = _view(task)
    except (ValueError, TypeError) as exc:
        st.error(f"**Cannot compute with these settings.** {C.in_page_terms(str(exc))}", icon=":material/error:")
        st.caption("Your other settings and your data are unchanged; fix the setting named above.")
        return None
    neighbours(view, cached=PREFETCHED)  # the next epsilon either way, ahead of the key press (bundled views only)
    return view
