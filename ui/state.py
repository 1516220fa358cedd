"""Session-state defaults shared by every page, so settings survive page switches.

Pages read and write ``st.session_state[key]`` for the keys below; :func:`init_state` fills in the
defaults once per browser session (never overwriting what the user set). Nothing here is shared
between sessions.

Widgets that edit a shared setting use the setting's name as their ``key`` together with
:func:`persist` (Streamlit >= 1.67: ``persist_state="session"`` keeps the value when the page is not
rendered, e.g. after a page switch). A widget bound this way must not also pass ``value=``: its
value comes from session state, which :func:`init_state` pre-fills.

The URL carries the settings (a shared link reproduces the view): :func:`url_load` reads the
query string once per session, validating every value, and :func:`url_sync` writes the settings
that differ from :data:`DEFAULTS` back after each run. So a reload after a server restart (a fresh
session) restores every setting from the URL. An uploaded data set cannot travel: the URL carries
only its file name, ``upload=<file name>`` (never the rows), and a fresh session that finds it says
plainly that the file must be uploaded again (:func:`ui.data_choice.show_lost_upload`) and shows the
default data meanwhile. (Streamlit's own ``bind="query-params"``
drops a parameter whose value equals the *widget's* default, which differs from ours when the
value comes from session state, so a link with e.g. ``lam=0`` would not reproduce; hence the
explicit codec.)
"""

from __future__ import annotations

import math

import streamlit as st

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
    "metric": "rmse",  # held-out test RMSE (ridge); the logistic task's default is the AUC (ui.pmt_compute)
    "standardize": True,
    "public_source": "split",
    "split_seed": 0,
    "presenter": False,
}


def init_state() -> None:
    """Fill in missing session-state keys with :data:`DEFAULTS` (idempotent; lists are copied)."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = list(value) if isinstance(value, list) else value


def persist(key: str) -> dict:
    """Keyword arguments that bind a widget to the shared setting ``key`` (kept across page switches).

    Returns
    -------
    dict
        ``key=..., persist_state="session"``, to splat into a widget call.
    """
    return {"key": key, "persist_state": "session"}


def fmt_num(x) -> str:
    """Compact number for the settings summary (``1e-05``, ``0.5``, ``inf``)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    return "inf" if math.isinf(x) else f"{x:g}"


def settings_summary() -> None:
    """A compact summary of the active settings, drawn into the current container (the frame puts it
    in the sidebar, so it is visible on every page and in every screenshot)."""
    ss = st.session_state
    name = str(ss.get("dataset_name", DEFAULTS["dataset_name"]))
    up = ss.get("uploaded_dataset")
    computed = ss.get("_computed_on")  # set by a page that computed on a data set in this run
    note = None
    if computed:  # the data actually computed on, whatever was chosen elsewhere
        if computed[0] != name:
            note = (f"the Data page's choice {name.removeprefix('upload:')} does not fit this page's task"
                    if not (name.startswith("upload:") and up is None) else "your upload is gone")
        name = f"{computed[0]} ({computed[1]} rows x {computed[2]} features)"
    elif name.startswith("upload") and up is not None:
        name = f"{up.name} ({up.n} rows x {up.d} features)"
    else:
        shape = ss.get("dataset_shape")
        if shape and shape[0] == name:
            name = f"{name} ({shape[1]} rows x {shape[2]} features)"
    with st.container():
        st.caption("Active settings")
        if ss.get("_lost_upload"):
            st.warning(f"Your upload {ss['_lost_upload']} is gone (a reload starts a new session): upload it again "
                       "on the Data page.", icon=":material/cloud_off:")
        elif note:
            st.caption(f":orange[:material/warning: Computed on this data: {note}.]")
        st.markdown(
            f"**Data:** {name}  \n"
            f"**epsilon** = {fmt_num(ss.get('epsilon', DEFAULTS['epsilon']))}, "
            f"**delta** = {fmt_num(ss.get('delta', DEFAULTS['delta']))}  \n"
            f"**n_pub** = {ss.get('n_pub', DEFAULTS['n_pub'])} public rows, "
            f"**seeds** = {ss.get('seeds', DEFAULTS['seeds'])}  \n"
            f"**lam** = {fmt_num(ss.get('lam', DEFAULTS['lam']))}, "
            "**replace-one** neighbours",
            help="epsilon, delta: the (epsilon, delta)-differential-privacy target (smaller = more private). "
            "n_pub: size of the public sample. seeds: repetitions of each noisy run. lam: ridge penalty. "
            "replace-one: the neighbouring data sets the guarantee compares (n public; the only relation offered).",
        )


def ensure_frame() -> None:
    """Make sure this page runs inside the ``app.py`` frame (call it first in every page).

    Streamlit decides once per server process whether the app uses the legacy ``pages/``
    directory: while no script has called ``st.navigation`` yet, a folder named ``pages`` next to
    the entry script switches the runner to the legacy mode. If the very first request to a fresh
    server is a deep link (``/pmt?epsilon=0.5``, a shared link), the page script then runs on its
    own, without the frame (no wide layout, no settings summary, file-name navigation) for every
    later session too. This guard detects that mode, switches it off and reruns, so the frame's
    ``st.navigation`` takes over and resolves the same page from the URL.

    It reads and sets ``streamlit.runtime.pages_manager.PagesManager.uses_pages_directory`` (not a
    public API; checked on Streamlit 1.67); if that attribute is missing it does nothing.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - layout of a future Streamlit
        return
    if getattr(PagesManager, "uses_pages_directory", None):
        PagesManager.uses_pages_directory = False
        st.rerun()


def _choice(options):
    def parse(text: str):
        for o in options:
            if text == fmt_num(o) or text == str(o):
                return o
        try:
            v = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not one of {', '.join(fmt_num(o) for o in options)}") from None
        for o in options:
            if math.isclose(v, float(o), rel_tol=1e-9, abs_tol=0.0):
                return o
        raise ValueError(f"{text!r} is not one of {', '.join(fmt_num(o) for o in options)}")

    return parse


def _int_in(lo: int, hi: int):
    def parse(text: str) -> int:
        v = int(text)
        if not lo <= v <= hi:
            raise ValueError(f"{v} is outside {lo}..{hi}")
        return v

    return parse


def _float_in(lo: float, hi: float, *, open_lo=True):
    def parse(text: str) -> float:
        v = float(text)
        if not (math.isfinite(v) and (v > lo if open_lo else v >= lo) and v < hi):
            raise ValueError(f"{text} is outside {'(' if open_lo else '['}{lo:g}, {hi:g})")
        return v

    return parse


def _flag(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{text!r} is not true/false")


def _one_of(values):
    def parse(text: str) -> str:
        if text not in values:
            raise ValueError(f"{text!r} is not one of {', '.join(values)}")
        return text

    return parse


#: Short URL names of the methods (``?methods=pmt,dp-rr``).
METHOD_URL = {"PMT": "pmt", "DP-RR": "dp-rr", "DP-RR (oracle C, non-private tuning)": "dp-rr-oracle",
              "DP-GD": "dp-gd", "DP-Newton": "dp-newton", "Non-private": "non-private",
              "Public-only": "public-only", "PMT-pooled": "pmt-pooled", "PMT (paper solver)": "pmt-paper",
              "AdaSSP": "adassp", "PMT (clip y)": "pmt-clip"}


def _methods(text: str) -> list:
    inv = {v: k for k, v in METHOD_URL.items()}
    out = []
    for part in [p for p in text.split(",") if p]:
        if part not in inv:
            raise ValueError(f"unknown method {part!r}; accepted: {', '.join(inv)}")
        out.append(inv[part])
    if not out:
        raise ValueError("no method named")
    return out


#: URL codec: key -> (parse(str) -> value, format(value) -> str). Unknown keys are ignored.
URL_CODEC: dict = {
    "data": (str, str),
    "task": (_one_of(("regression", "classification")), str),
    "epsilon": (_choice(EPSILON_OPTIONS), fmt_num),
    "delta": (_choice(DELTA_OPTIONS), fmt_num),
    "lam": (_choice(LAM_OPTIONS), fmt_num),
    "n_pub": (_int_in(1, 10**7), str),
    "seeds": (_int_in(1, 200), str),
    "eta": (_float_in(0.0, 1.0), fmt_num),
    "clip_radius": (_float_in(0.0, CLIP_RADIUS_MAX, open_lo=False), fmt_num),
    "methods": (_methods, lambda ms: ",".join(METHOD_URL.get(m, m) for m in ms)),
    "metric": (str, str),
    "standardize": (_flag, lambda b: "1" if b else "0"),
    "public_source": (_one_of(("split", "file")), str),
    "split_seed": (_int_in(0, 2**31 - 1), str),
    "synthetic_kappa": (_choice((1.0, 10.0, 100.0, 1e3, 1e4, 1e5)), fmt_num),
    "public_mode": (_one_of(("labelled", "unlabelled", "moments")), str),
    "response": (_one_of(("auto", "clip", "joint")), str),
}

#: Longest uploaded file name written into the URL's ``upload=<name>`` parameter.
MAX_URL_NAME = 80

#: Defaults of URL keys that are not in DEFAULTS.
_URL_DEFAULTS = {"data": "ccpp", "synthetic_kappa": 1e3, "public_mode": "labelled"}


def url_load(keys) -> list[str]:
    """Copy valid settings from the URL query string into session state, once per session.

    Parameters
    ----------
    keys : iterable of str
        The settings this page reads from the URL (keys of :data:`URL_CODEC`).

    Returns
    -------
    list of str
        One message per parameter that was rejected (the default is kept), for the page to show.
    """
    ss = st.session_state
    if ss.get("_url_loaded"):
        return []
    ss["_url_loaded"] = True
    problems = []
    for key in keys:
        if key not in st.query_params:
            continue
        parse = URL_CODEC[key][0]
        text = st.query_params[key]
        try:
            ss[key] = parse(text)
        except (ValueError, TypeError) as exc:
            problems.append(f"The link's {key}={text} was ignored: {exc}.")
    if "data" in keys and "data" in st.query_params and "data" in ss:
        ss["dataset_name"] = ss["data"]
    return problems


#: Prefix of an uploaded data set's name (``engine.datasets.read_csv_upload``: ``"upload:<file name>"``).
UPLOAD_PREFIX = "upload:"


def url_sync(keys) -> None:
    """Write the settings in ``keys`` that differ from their defaults into the URL (others removed)."""
    ss = st.session_state
    want = {}
    for key in keys:
        if key not in ss:
            continue
        value = ss[key]
        default = DEFAULTS.get(key, _URL_DEFAULTS.get(key))
        if value == default or value is None:
            continue
        if key == "data" and str(value).startswith(UPLOAD_PREFIX):
            # an upload cannot travel in a link; its file name does (``upload=<file>``, never the rows), so a
            # reload or a restarted server can say it is gone (:func:`ui.data_choice.show_lost_upload`)
            want["upload"] = str(value)[len(UPLOAD_PREFIX):][:MAX_URL_NAME]
            continue
        want[key] = URL_CODEC[key][1](value)
    current = {k: st.query_params[k] for k in st.query_params}
    if current != want:
        st.query_params.from_dict(want)
