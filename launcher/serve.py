"""Start the dashboard with its one-time costs paid before the server listens.

``python -m launcher.serve app.py [streamlit run options]`` is ``streamlit run app.py ...`` (``run.sh``,
``deploy/room.sh`` and the benchmarks use it) with one step in front: :func:`preload` imports the
libraries the pages need (pandas, Plotly, SciPy, numba, PyTorch, the engine; then the dashboard's own page
modules and Streamlit's emoji table, :func:`import_page_modules`) and loads the compiled numba kernels from
their on-disk cache, so the first visitor of a page does not wait for them.
Measured on the 2-core machine (``bench/bench_browser.py``): a plain ``streamlit run`` spends about
2 s of the first PMT load and about 4 s of the first NVDP visit importing and loading kernels.

The price is paid once per server process, while the person starting it waits: the server answers
its health check a few seconds later than a plain ``streamlit run`` (the launcher prints how long),
and the process holds PyTorch (about 150 MB more resident memory) even if nobody opens the NVDP page.
``EXPLORER_PRELOAD`` chooses what is preloaded: a comma-separated list of ``pmt`` (PMT, Data and Learn
pages) and ``nvdp`` (the NVDP page), default ``pmt,nvdp``; ``none`` (or an empty value) starts a plain
``streamlit run``. Unknown names are an error, before anything starts.

Privacy: nothing here reads data. The kernels are loaded by running the engine's DP-GD and Renyi-bound
code on small random inputs from a fixed seed (:func:`engine.pmt._gd.warm_kernels`, :func:`engine.nvdp.divergence.warm_kernels`, also run by
``scripts/bootstrap.sh``);
the results are thrown away and no cache of the pages is filled.

OpenMP wait policy (:data:`OMP_WAIT`): the server sets ``OMP_WAIT_POLICY=PASSIVE`` unless the environment
names a policy. PyTorch's OpenMP threads (the NVDP page) otherwise spin on a core between two parallel
operations; on a small machine that also runs the browser (a laptop; the 2-core test machine) they then
compete with the browser's own work on a first visit, which is when it loads the chart code. Passive
threads sleep instead. It changes how threads wait, never a computed value. Measured with
``bench/bench_browser.py --only floor,nvdp`` (2 cores, load 1.2-3.5, five runs each, alternating with the
previous main): the first NVDP visit's accuracy on screen after 4.27-4.38 s instead of 4.71-5.35 s; its
bounds after 2.91-3.85 s instead of 3.41-3.86 s (they race the browser's own loading of the chart code).
"""

from __future__ import annotations

import os
import sys
import time

#: The OpenMP wait policy the server starts with unless the environment sets one (``OMP_WAIT_POLICY``).
OMP_WAIT = ("OMP_WAIT_POLICY", "PASSIVE")

#: What ``EXPLORER_PRELOAD`` may name.
PARTS = ("pmt", "nvdp")
DEFAULT = "pmt,nvdp"


def parse_parts(value: str | None) -> tuple[str, ...]:
    """The parts named by ``value`` (``EXPLORER_PRELOAD``): a comma-separated subset of :data:`PARTS`.

    Parameters
    ----------
    value : str or None
        None means the default (:data:`DEFAULT`); ``""`` or ``"none"`` means nothing.

    Returns
    -------
    tuple of str
        The named parts, in the order of :data:`PARTS`.

    Raises
    ------
    ValueError
        A name that is not one of :data:`PARTS` (the message lists the accepted names).
    """
    value = DEFAULT if value is None else value
    names = {v.strip().lower() for v in value.split(",") if v.strip()}
    if names <= {"none"}:
        return ()
    unknown = sorted(names - set(PARTS))
    if unknown:
        raise ValueError(f"EXPLORER_PRELOAD: unknown part(s) {', '.join(unknown)}; accepted: "
                         f"a comma-separated list of {', '.join(PARTS)}, or 'none'")
    return tuple(p for p in PARTS if p in names)


def preload(parts: tuple[str, ...] = PARTS) -> dict[str, float]:
    """Import what the pages of ``parts`` need and load their numba kernels; seconds per step.

    Parameters
    ----------
    parts : tuple of str
        Subset of :data:`PARTS`: ``"pmt"`` (pandas, Plotly, the PMT engine and its figures, the fused
        DP-GD kernels in float32 and float64 for d = 1 .. 8), ``"nvdp"`` (PyTorch, the NVDP engine, the
        Renyi-bound kernels).

    Returns
    -------
    dict
        ``{step: seconds}`` (wall time), in the order the steps ran.
    """
    times: dict[str, float] = {}

    def step(name, fn):
        t0 = time.perf_counter()
        fn()
        times[name] = time.perf_counter() - t0

    if "pmt" in parts:
        def imports_pmt():
            import pandas  # noqa: F401
            import plotly.graph_objects  # noqa: F401
            import scipy.linalg  # noqa: F401
            import scipy.special  # noqa: F401

            import engine.cli.pmt  # noqa: F401
            import engine.figures.pmt  # noqa: F401
            import engine.figures.report  # noqa: F401
            import engine.pmt  # noqa: F401
            import engine.pmt.planner  # noqa: F401
            import engine.pmt.sweep  # noqa: F401

        step("pmt imports", imports_pmt)
        from engine.pmt.kernels import warm_kernels as warm_dpgd

        step("DP-GD kernels", warm_dpgd)
    if "nvdp" in parts:
        def imports_nvdp():
            import scipy.stats  # noqa: F401
            import torch  # noqa: F401

            import engine.figures.nvdp  # noqa: F401
            import engine.nvdp.explore  # noqa: F401
            import engine.nvdp.posthoc  # noqa: F401

        step("nvdp imports", imports_nvdp)
        from engine.nvdp.divergence import warm_kernels as warm_rd

        step("Renyi-bound kernels", warm_rd)
    step("page modules", lambda: import_page_modules(parts))
    return times


#: The dashboard's own modules each part's pages import (every module under these packages).
PAGE_PACKAGES = {"pmt": ("ui.common", "ui.pmt"), "nvdp": ("ui.common", "ui.nvdp")}


def import_page_modules(parts: tuple[str, ...] = PARTS) -> list[str]:
    """Import every module of the dashboard's packages the pages of ``parts`` use (:data:`PAGE_PACKAGES`), and
    Streamlit's emoji table (``app.py``'s page icon is checked against it).

    Otherwise the first visitor's run imports them (about 0.5 s of the server's time before the page's first
    element, measured in the server's first run on the 2-core machine). Their ``st.cache_data`` decorators check their parameters against a storage manager at import; before
    the server runs there is none and Streamlit logs "No runtime found" once per decorated function. The caches
    themselves are made when first called, inside the server, so that message says nothing about them: it is
    silenced for this step only. Nothing is computed and no cache is filled.

    Returns
    -------
    list of str
        The imported module names, in import order.
    """
    import importlib
    import logging
    import pkgutil

    import streamlit.runtime.caching  # noqa: F401 - creates (and sets the level of) the logger silenced below

    log = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level, done = log.level, []
    log.setLevel(logging.ERROR)
    try:
        # app.py's st.set_page_config checks its emoji icon against Streamlit's emoji table, whose import compiles
        # a large regular expression (0.2-0.3 s; every page's first run in a new process would wait for it)
        importlib.import_module("streamlit.emojis")
        done.append("streamlit.emojis")
        for pkg_name in dict.fromkeys(p for part in parts for p in PAGE_PACKAGES[part]):
            pkg = importlib.import_module(pkg_name)
            done.append(pkg_name)
            for mod in pkgutil.walk_packages(pkg.__path__, pkg_name + "."):
                importlib.import_module(mod.name)
                done.append(mod.name)
    finally:
        log.setLevel(level)
    return done


def preload_in_thread(parts: tuple[str, ...] = PARTS) -> dict[str, float]:
    """:func:`preload` on a worker thread (waited for), as the pages' scripts run: their own threads.

    Not on the main thread: after the DP-GD kernels had run once on the main thread, the logistic page's
    sweeps (numpy / OpenBLAS on the script threads) ran 2x slower for the life of the process (an epsilon
    move 1.7-2.3 s instead of 0.8-1.0 s, measured in Streamlit's AppTest and in the browser); run on a
    worker thread, the same preload leaves them as fast as without it. Exceptions are re-raised here.
    """
    import threading

    out: dict = {}

    def work():
        try:
            out["times"] = preload(parts)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            out["error"] = exc

    t = threading.Thread(target=work, name="preload")
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["times"]


def main(argv: list[str] | None = None) -> int:
    """Preload (``EXPLORER_PRELOAD``), then hand over to ``streamlit run`` with ``argv``.

    Raises
    ------
    SystemExit
        With status 2 and a message when ``EXPLORER_PRELOAD`` names an unknown part.
    """
    argv = sys.argv[1:] if argv is None else argv
    from ui.common.view_store import DEFAULT_DIR, ENV

    os.environ.setdefault(ENV, str(DEFAULT_DIR))  # bundled views computed before are read from disk (ui.common.view_store)
    # PyTorch's OpenMP threads sleep when idle instead of spinning (no effect on any number: only how they wait);
    # read when PyTorch loads, so set before the preload. See OMP_WAIT in the module's docstring.
    os.environ.setdefault(OMP_WAIT[0], OMP_WAIT[1])
    try:
        parts = parse_parts(os.environ.get("EXPLORER_PRELOAD"))
    except ValueError as exc:
        print(f"launcher.serve: {exc}", file=sys.stderr)
        return 2
    if parts:
        t0 = time.perf_counter()
        times = preload_in_thread(parts)
        detail = ", ".join(f"{k} {v:.1f} s" for k, v in times.items())
        print(f"[serve] preloaded {', '.join(parts)} in {time.perf_counter() - t0:.1f} s ({detail}); "
              "EXPLORER_PRELOAD=none skips this", flush=True)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
