"""The launcher ``python -m launcher.serve`` (run.sh): what EXPLORER_PRELOAD accepts, what a preload loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.serve import PARTS, parse_parts

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value, parts", [
    (None, ("pmt", "nvdp")), ("", ()), ("none", ()), (" NONE ", ()), ("nvdp", ("nvdp",)),
    ("nvdp, pmt", ("pmt", "nvdp")), ("pmt,pmt", ("pmt",)),
])
def test_explorer_preload_names_a_subset_of_the_parts(value, parts):
    assert parse_parts(value) == parts


@pytest.mark.parametrize("value", ["pmt,torch", "all", "pmt;nvdp", "none,pmt"])
def test_an_unknown_part_is_an_error_that_lists_the_accepted_names(value):
    with pytest.raises(ValueError, match="accepted: a comma-separated list of pmt, nvdp"):
        parse_parts(value)


def _run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **env))


def test_the_launcher_refuses_an_unknown_part_before_starting_anything():
    out = _run("import sys; from launcher.serve import main; rc = main(['app.py']); "
               "print(rc, 'streamlit.web.bootstrap' in sys.modules, 'pandas' in sys.modules)",
               EXPLORER_PRELOAD="pmt,gpu")
    assert out.stdout.split() == ["2", "False", "False"], out.stderr
    assert "unknown part(s) gpu" in out.stderr


def test_the_pmt_preload_loads_the_pmt_libraries_kernels_and_page_modules_and_not_torch_or_any_page_cache():
    code = (
        "import sys, pkgutil, ui.common, ui.pmt\n"
        "from launcher.serve import preload\n"
        "times = preload(('pmt',))\n"
        "from engine.pmt import _gd_kernel as K\n"
        "from ui.common import figure_cache as F, view_store as V\n"
        "print(list(times))\n"
        "print(K._compiled.cache_info().currsize, K.MAX_KERNEL_D)\n"
        "print(all(m in sys.modules for m in ('pandas', 'plotly.graph_objects', 'engine.pmt.sweep', 'engine.figures.pmt')))\n"
        "mods = [m.name for p in (ui.common, ui.pmt) for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.')]\n"
        "print(len(mods) > 20, all(m in sys.modules for m in mods), 'streamlit.emojis' in sys.modules)\n"
        "print('torch' in sys.modules, any(m.startswith('ui.nvdp') for m in sys.modules), len(F._CACHE), V.STATS)\n"
    )
    out = _run(code)
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "['pmt imports', 'DP-GD kernels', 'page modules']", out.stderr
    compiled, max_d = map(int, lines[1].split())
    assert compiled == max_d  # one (m, d) kernel pair per d = 1 .. MAX_KERNEL_D (both dtypes share it)
    assert lines[2] == "True"
    assert lines[3] == "True True True"  # every PMT page module (and Streamlit's emoji table) imported ahead
    # no PyTorch and no NVDP page module for a PMT-only preload, and nothing computed: no cache entry, no store read
    assert lines[4] == "False False 0 {'hit': 0, 'miss': 0}"
    # the page modules' cache decorators run before the server exists: Streamlit's "No runtime found" is silenced
    assert "No runtime found" not in out.stderr, out.stderr


def test_the_page_modules_step_imports_each_parts_packages_and_logs_as_before():
    import logging

    import streamlit.runtime.caching  # noqa: F401 - Streamlit sets its logger's level on import

    import launcher.serve as S

    log = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level = log.level
    done = S.import_page_modules(("nvdp",))
    assert done[0] == "streamlit.emojis" and "ui.nvdp.headline" in done and "ui.common.state" in done
    assert not any(m.startswith("ui.pmt") for m in done)
    assert log.level == level  # the logger's level is restored after the step
    assert set(S.PAGE_PACKAGES) == set(S.PARTS)


def test_parts_are_the_documented_ones():
    import launcher.serve as S

    assert PARTS == ("pmt", "nvdp") and S.DEFAULT == "pmt,nvdp"
    for part in PARTS:
        assert f"``{part}``" in S.__doc__


def test_the_launcher_preloads_on_a_worker_thread_and_reraises_its_errors(monkeypatch):
    """The kernels must not first run on the main thread: after that the logistic page's numpy / OpenBLAS
    sweeps on the script threads ran 2x slower for the life of the process (see launcher.serve.preload_in_thread)."""
    import threading

    import launcher.serve as S

    seen = []
    monkeypatch.setattr(S, "preload", lambda parts: seen.append((threading.current_thread().name, parts)) or {"x": 0.0})
    assert S.preload_in_thread(("pmt",)) == {"x": 0.0}
    assert seen == [("preload", ("pmt",))] and threading.current_thread() is threading.main_thread()

    def boom(parts):
        raise RuntimeError("no kernels")

    monkeypatch.setattr(S, "preload", boom)
    with pytest.raises(RuntimeError, match="no kernels"):
        S.preload_in_thread(("pmt",))


def test_streamlit_reads_the_room_settings_from_the_checkouts_config():
    """Streamlit itself parses .streamlit/config.toml (a misspelt key would be ignored silently): the
    post-run full GC is off (0.21 s of GIL per rerun, see the file's comment), no file watcher, the
    upload cap, and a closed tab's session forgotten after 120 s."""
    out = _run("from streamlit import config as c; c.get_config_options(force_reparse=True); "
               "print([c.get_option(k) for k in ('runner.postScriptGC', 'server.fileWatcherType', "
               "'server.maxUploadSize', 'server.disconnectedSessionTTL', 'server.headless')])")
    assert out.stdout.strip() == "[False, 'none', 50, 120, True]", out.stderr


def test_the_launcher_makes_openmp_threads_wait_passively_unless_the_environment_names_a_policy(monkeypatch):
    import launcher.serve as S

    seen = []
    monkeypatch.setattr(S, "preload_in_thread", lambda parts: seen.append(os.environ.get("OMP_WAIT_POLICY")) or {})
    import streamlit.web.cli as cli

    monkeypatch.setattr(cli, "main", lambda: 0)
    monkeypatch.setenv("EXPLORER_PRELOAD", "nvdp")
    from ui.common.view_store import ENV

    monkeypatch.setattr(sys, "argv", list(sys.argv))  # main hands streamlit its own argv: restored afterwards
    monkeypatch.setenv(ENV, os.environ.get(ENV, ""))  # main's default store folder: restored afterwards
    for given, expected in ((None, "PASSIVE"), ("ACTIVE", "ACTIVE")):
        if given is None:
            monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
        else:
            monkeypatch.setenv("OMP_WAIT_POLICY", given)
        assert S.main(["app.py"]) == 0
    assert seen == ["PASSIVE", "ACTIVE"]  # set before the preload loads PyTorch; a user's own policy is kept


def test_wait_healthy_returns_on_200_and_says_why_it_gave_up():
    import http.server
    import threading

    from launcher.health import free_port, wait_healthy

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/_stcore/health" else 404)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        wait_healthy(f"http://127.0.0.1:{srv.server_address[1]}", timeout_s=10)
    finally:
        srv.shutdown()
    nobody = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(RuntimeError, match="within 0.3 s .see server.log."):
        wait_healthy(nobody, timeout_s=0.3, poll_s=0.05, log="server.log")
    gone = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    gone.wait()
    with pytest.raises(RuntimeError, match="exited with status 3"):
        wait_healthy(nobody, gone, timeout_s=30)


def test_stop_terminates_a_server_process_and_kills_one_that_ignores_it():
    from launcher.health import stop

    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stop(polite, 10)
    assert polite.returncode is not None
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time, sys; "
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
                                 "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout.readline().strip() == "ready"  # its handler is installed before the terminate
    stop(stubborn, 0.5)
    assert stubborn.returncode == -9  # killed after the terminate was ignored
