"""Benchmark: speed as the user feels it, from a key press to the changed pixels in a real browser.

Starts the server as ``run.sh`` does (``python -m launcher.serve app.py``: the preload of :mod:`launcher.serve`, then
``streamlit run``; ``--plain``, or a checkout without ``launcher/serve.py``: ``streamlit run app.py``;
``--server.headless true``, a free localhost port) from a chosen
checkout (``--repo``, default this one; e.g. a worktree of an older commit for a before/after
comparison, with its own ``.venv`` or a symlink to one) and drives Debian's Chromium
(``/usr/bin/chromium``, through Playwright's ``executable_path``; never ``playwright install``).

Every interaction is timed inside the page with ``performance.now()``: a capture-phase ``keydown`` /
``pointerdown`` listener marks the press, a ``MutationObserver`` (plus an animation-frame poll) marks
the first moment the watched text on screen (the headline metrics, a figure's data) differs from what
it was. A first load is timed from the navigation start (``performance.now()``'s origin) to the
moment the page's headline number and figure are on screen; "settled" is the last DOM change
before the page stayed still (no running indicator) for a second. Rows:

- ``pmt_first``: PMT page, first load in a fresh server process (headline number + error figure);
- ``pmt_epsilon``: epsilon slider key -> new headline numbers (ccpp, ridge defaults);
- ``pmt_lam``: lam slider key -> new headline numbers;
- ``report``: "Download report (HTML)" click -> download complete (Python-side wall) and its size;
- ``logistic``: on bank: epsilon key -> new headline; first opening of the lam tab / the n_pub tab
  -> its figure on screen (first drawn; "settled": the last change, the n_pub figure complete);
- ``learn_first``: Learn page, first load in a fresh server process (first figure; settled);
- ``nvdp_first``: NVDP page, first visit with an empty ``NVDP_CACHE_DIR`` (shipped models; same fresh
  server as ``learn_first``, after it): headline bounds on screen; accuracy on screen;
- ``nvdp_moves``: C_mu, alpha_max and Renyi order keys -> new bounds (headline metrics) on screen;
- ``floor``: the framework's own floor, measured in the same minutes (:mod:`bench.browser_floor`'s ``plotly``
  app: one metric and one 3-point ``st.plotly_chart`` in a fresh ``streamlit run``): its first visit (fresh
  process) and the median of its later visits (warm server), run before the dashboard's rows and again after
  them. Every first-view row is then also printed as a **ratio to the floor** of the same kind (a fresh
  process's first load to the fresh floor, a warm server's to the warm floor; the mean of the two floor runs):
  on a shared, loaded machine the ratio moves much less than the seconds;
- ``cli``: ``python -m engine pmt ...`` wall time, fresh interpreter each (no browser); the sweep's command is
  also split into start-up (process start to ``run_sweep`` entered: interpreter, imports, argument parsing) and
  the rest (computation and output).

Median and max over ``--repeat`` (>= 5) moves; each move waits for the page to settle before the next
key (a key landing mid-rerun may be dropped). The load average (1, 5, 15 min) is printed with every
row: the machine is shared, read the figures against it.

Run: ``.venv/bin/python bench/bench_browser.py [--repo DIR] [--repeat 5] [--only pmt,logistic,...] [--plain]``.
Tests never assert times.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from launcher.health import free_port, stop, wait_healthy  # noqa: E402  (this checkout's; also for --repo)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
VIEWPORT = {"width": 1440, "height": 900}
ROWS = ("floor", "pmt", "logistic", "learn", "nvdp", "cli")
#: Longest wait for a first lam / n_pub tab of logistic on bank (minutes on a machine at load 10+).
TAB_TIMEOUT_S = 240

# ------------------------------------------------------------------------------------------------
# in-page instrumentation
# ------------------------------------------------------------------------------------------------
INIT_JS = """
(() => {
  const B = window.__bench = {t0: null, lastMut: 0, first: {}, conds: {}};
  const mark = () => { B.t0 = performance.now(); };
  document.addEventListener('keydown', mark, true);
  document.addEventListener('pointerdown', mark, true);
  const check = () => {
    B.lastMut = performance.now();
    for (const [name, f] of Object.entries(B.conds)) {
      if (B.first[name] === undefined) { try { if (f()) B.first[name] = performance.now(); } catch (e) {} }
    }
  };
  const start = () => new MutationObserver(check).observe(document.documentElement,
      {subtree: true, childList: true, characterData: true, attributes: true});
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
})();
"""

# JS expressions (functions of no argument) used as conditions and signatures
METRICS = """(() => Array.from(document.querySelectorAll('[data-testid="stMetric"]')).map(
  m => { const l = m.querySelector('[data-testid="stMetricLabel"]'); const v = m.querySelector('[data-testid="stMetricValue"]');
         return [l ? l.innerText.trim() : '', v ? v.innerText.trim() : '']; }))"""
METRIC_VALUE = "((label) => { const m = " + METRICS + "().find(p => p[0].startsWith(label)); return m ? m[1] : null; })"
PLOTS = """(() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter(g => g.data && g.layout))"""
#: a visible, drawn figure whose x-axis title names ``word`` (epsilon, lam, n_pub)
VISIBLE_PLOT_TITLED = """((word) => """ + PLOTS + """().some(g => g.offsetParent !== null && g.layout.xaxis &&
  g.layout.xaxis.title && String(g.layout.xaxis.title.text || g.layout.xaxis.title || '').includes(word) &&
  g.querySelector('.main-svg')))"""
RUNNING = """(() => !!document.querySelector('[data-testid="stStatusWidget"]') ||
  !!document.querySelector('[data-stale="true"]'))"""


def _load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far (``/proc/PID/stat``; Linux)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: True: start a plain ``streamlit run`` even where the checkout has ``launcher/serve.py`` (``--plain``)
PLAIN: list[bool] = [False]
#: extra ``streamlit run`` options for the started server (``--server-arg``, e.g. ``--runner.postScriptGC=true``)
SERVER_ARGS: list[str] = []
#: pid of the streamlit server of the running block (for its CPU time); set by :func:`server`
SERVER_PID: list[int] = []
#: the Plotly floor's runs: {"fresh": [s, ...], "warm": [s, ...]} (:func:`bench_floor`)
FLOOR: dict = {"fresh": [], "warm": []}
#: ``EXPLORER_VIEW_STORE`` for the started server (``--view-store``; None: the launcher's default)
VIEW_STORE: list = [None]


@contextlib.contextmanager
def server(repo: Path, cache_dir: str):
    """The server from ``repo`` (its ``.venv``) until the block ends; yields (url, start-up s).

    ``python -m launcher.serve app.py`` (what ``run.sh`` starts: the preload, then ``streamlit run``) where the
    checkout has it and ``--plain`` is not given, else ``python -m streamlit run app.py``. The start-up is
    from the process start to the first healthy answer, the preload included."""
    port = free_port()
    py = repo / ".venv" / "bin" / "python"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONHASHSEED="0",
               NVDP_CACHE_DIR=cache_dir)
    if VIEW_STORE[0] is not None:  # the bundled views' disk store (ui.common.view_store): a folder, or "off"
        env["EXPLORER_VIEW_STORE"] = VIEW_STORE[0]
    # the launcher run.sh uses (launcher/serve.py: preloads, then ``streamlit run``); a checkout older than it: plain
    if PLAIN[0]:
        launcher = ["-m", "streamlit", "run"]
    elif (repo / "launcher" / "serve.py").exists():
        launcher = ["-m", "launcher.serve"]
    elif (repo / "ui" / "serve.py").exists():  # a checkout older than launcher/  (apply_moves: keep)
        launcher = ["-m", "ui.serve"]  # (apply_moves: keep)
    else:
        launcher = ["-m", "streamlit", "run"]
    cmd = [str(py if py.exists() else sys.executable), *launcher, "app.py", "--server.port", str(port),
           "--server.headless", "true", "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false", *SERVER_ARGS]
    log = tempfile.NamedTemporaryFile("w+", prefix="bench_browser_", suffix=".log", delete=False)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, 120, poll_s=0.1, log=log.name)
        SERVER_PID[:] = [proc.pid]
        yield url, time.perf_counter() - t
    finally:
        stop(proc, 15)
        log.close()
        os.unlink(log.name)


class Page:
    """One Chromium page with the instrumentation installed."""

    def __init__(self, browser):
        self.ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        self.ctx.add_init_script(INIT_JS)
        self.page = self.ctx.new_page()

    def first_load(self, url: str, conds: dict[str, str], timeout_s: float = 300) -> dict[str, float]:
        """Navigate and return, per condition, the seconds since navigation start when it first held."""
        js_conds = "{" + ",".join(f"{k!r}: {v}" for k, v in conds.items()) + "}"
        self.ctx.add_init_script(f"window.__bench.conds = {js_conds};")
        self.page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            first = self.page.evaluate("() => window.__bench && window.__bench.first")
            if first and all(k in first for k in conds):
                break
            time.sleep(0.1)
        else:
            raise TimeoutError(f"{url}: conditions not met: {set(conds) - set(first or {})}")
        settled = self.settle()
        return {**{k: v / 1000 for k, v in first.items()}, "settled": settled / 1000}

    def settle(self, quiet_s: float = 1.0, extra: str | None = None, timeout_s: float = 300) -> float:
        """Wait until no running indicator (and ``extra`` false) for ``quiet_s``; return the last mutation (ms)."""
        busy = RUNNING if extra is None else f"(() => {RUNNING}() || {extra}())"
        deadline = time.time() + timeout_s
        quiet_since = None
        while time.time() < deadline:
            if self.page.evaluate(busy):
                quiet_since = None
            else:
                quiet_since = quiet_since or time.time()
                if time.time() - quiet_since >= quiet_s:
                    return self.page.evaluate("() => window.__bench.lastMut")
            time.sleep(0.05)
        raise TimeoutError("the page did not settle")

    def timed(self, signature: str, action, timeout_s: float = 120, settle_extra: str | None = None) -> float:
        """Run ``action`` (a key press or a click); seconds from the press to ``signature()`` changing on screen."""
        self.page.evaluate("""([sig, timeout]) => {
          const B = window.__bench, f = eval(sig), before = JSON.stringify(f());
          B.t0 = null;
          B.p = new Promise(resolve => {
            let done = false;
            const check = () => {
              if (done || B.t0 === null) return;
              const now = JSON.stringify(f());
              if (now !== before && now !== 'null') { done = true; obs.disconnect(); resolve(performance.now() - B.t0); }
            };
            const obs = new MutationObserver(check);
            obs.observe(document.documentElement, {subtree: true, childList: true, characterData: true, attributes: true});
            const poll = () => { check(); if (!done) requestAnimationFrame(poll); };
            requestAnimationFrame(poll);
            setTimeout(() => { if (!done) { done = true; obs.disconnect(); resolve(null); } }, timeout);
          });
        }""", [signature, timeout_s * 1000])
        action()
        dt = self.page.evaluate("() => window.__bench.p")
        self.settle(0.6, settle_extra)
        if dt is None:
            raise TimeoutError(f"nothing changed on screen within {timeout_s} s")
        return dt / 1000

    def close(self):
        self.ctx.close()


def _row(name: str, values: list[float], goal: str) -> None:
    vals = ", ".join(f"{v:.2f}" for v in values)
    print(f"ROW {name:48s} median {statistics.median(values):6.2f} s  max {max(values):6.2f} s  (n={len(values)}; "
          f"{vals})  goal {goal}  [{_load()}]", flush=True)


def _one(name: str, value: float, goal: str, extra: str = "", floor: str | None = None) -> None:
    """One row; ``floor`` ("fresh" or "warm"): a first view, also printed as a ratio to the Plotly floor."""
    ratio = ""
    if floor is not None and FLOOR[floor]:
        f = statistics.mean(FLOOR[floor])
        ratio = f"  = {value / f:.2f}x the {floor} Plotly floor ({f:.2f} s)"
    print(f"ROW {name:48s} {value:6.2f} s{ratio}{extra}  goal {goal}  [{_load()}]", flush=True)


def bench_floor(browser, visits: int = 4) -> None:
    """The framework's floor in the same minutes: :mod:`browser_floor`'s ``plotly`` app, navigation -> its chart."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("browser_floor", Path(__file__).resolve().parent / "browser_floor.py")
    bf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bf)
    tmp = Path(tempfile.mkdtemp(prefix="bench_floor_"))
    app = tmp / "floor_plotly.py"  # not plotly.py: it would shadow the package
    app.write_text(bf.APPS["plotly"])
    proc, url = bf._serve(app)
    try:
        ts = []
        for _ in range(max(2, visits)):
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            t = time.perf_counter()
            page.goto(url)
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
            ts.append(time.perf_counter() - t)
            ctx.close()
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        shutil.rmtree(tmp, ignore_errors=True)
    FLOOR["fresh"].append(ts[0])
    FLOOR["warm"].append(statistics.median(ts[1:]))
    print(f"ROW {'floor: 3-point st.plotly_chart on screen':48s} fresh process {ts[0]:6.2f} s, warm server median "
          f"{statistics.median(ts[1:]):6.2f} s ({', '.join(f'{x:.2f}' for x in ts)})  [{_load()}]", flush=True)


def _slider(page, label: str):
    return page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")


def _press(loc, key: str):
    def act():
        loc.focus()
        loc.press(key)
    return act


# ------------------------------------------------------------------------------------------------
# rows
# ------------------------------------------------------------------------------------------------
#: every headline number and the y data of every visible figure: the first change of any counts
HEADLINE = ("(() => [" + METRICS + "(), " + PLOTS + "().filter(g => g.offsetParent !== null).map("
            "g => g.data.map(t => (t.y && t.y.bdata) ? String(t.y.bdata) : Array.from(t.y || []).slice(0, 200)))])")
PMT_READY = {"headline": f"() => /[0-9]/.test({METRIC_VALUE}('PMT') || '')",
             "figure": f"() => {VISIBLE_PLOT_TITLED}('epsilon')"}


def bench_pmt(browser, url: str, repeat: int, server_s: float) -> None:
    p = Page(browser)
    try:
        cpu0 = _cpu_s(SERVER_PID[0])
        first = p.first_load(f"{url}/pmt", PMT_READY)
        cpu = _cpu_s(SERVER_PID[0]) - cpu0  # the server's CPU for this page load (less sensitive to load than wall)
        _one("PMT first load, fresh process (headline+figure)", max(first["headline"], first["figure"]), "<= 1.3x floor",
             f"  (headline {first['headline']:.2f} s, figure {first['figure']:.2f} s, settled {first['settled']:.2f} s;"
             f" server CPU {cpu:.2f} s; server start-up {server_s:.2f} s before it)", floor="fresh")
        page = p.page
        eps = _slider(page, "epsilon (privacy budget")
        keys = ["ArrowLeft", "ArrowRight"]  # 1 -> 0.7 -> 1 -> ... (both values seen after the first two moves)
        cold, warm = [], []
        fresh = ["ArrowRight"] * repeat  # 1 -> 1.5 -> 2 -> 3 ...: values not seen before
        for k in fresh:
            cold.append(p.timed(HEADLINE, _press(eps, k)))
        _row("PMT epsilon key -> new headline (new values)", cold, "<= 0.3 s")
        for i in range(repeat):
            warm.append(p.timed(HEADLINE, _press(eps, keys[i % 2])))
        _row("PMT epsilon key -> new headline (seen values)", warm, "<= 0.3 s")
        lam = _slider(page, "lam (ridge penalty")
        lam_keys = (["ArrowRight"] * 2 + ["ArrowLeft"] * 3) * (repeat // 5 + 1)  # 1e-4 -> 1e-3 -> 1e-2 -> ... -> 1e-5
        lams = [p.timed(HEADLINE, _press(lam, k)) for k in lam_keys[:repeat]]
        _row("PMT lam key -> new headline (new values)", lams, "<= 0.3 s")
        # the report: Export tab, then the download button
        page.get_by_role("tab", name="Export").click()
        p.settle(0.6)
        btn = page.get_by_role("button", name="Download report (HTML)")
        btn.wait_for(timeout=60_000)
        times, sizes = [], []
        for i in range(max(3, repeat // 2 + 1)):
            with page.expect_download(timeout=120_000) as dl:
                t = time.perf_counter()
                btn.click()
            path = dl.value.path()
            times.append(time.perf_counter() - t)
            sizes.append(Path(path).stat().st_size)
            p.settle(0.6)
        _row("HTML report download (click -> file)", times, "<= 0.5 s")
        print(f"ROW {'HTML report size':48s} {sizes[-1] / 1e6:6.2f} MB  goal < 2 MB", flush=True)
    finally:
        p.close()


def bench_logistic(browser, url: str, repeat: int) -> None:
    p = Page(browser)
    try:
        cpu0 = _cpu_s(SERVER_PID[0])
        first = p.first_load(f"{url}/pmt?task=classification&data=bank", PMT_READY)
        cpu = _cpu_s(SERVER_PID[0]) - cpu0
        _one("logistic on bank: first load (warm server)", max(first["headline"], first["figure"]), "<= 2x floor",
             f"  (settled {first['settled']:.2f} s; server CPU {cpu:.2f} s)", floor="warm")
        page = p.page
        eps = _slider(page, "epsilon (privacy budget")
        ch = [p.timed(HEADLINE, _press(eps, "ArrowRight")) for _ in range(repeat)]
        _row("logistic bank: epsilon key -> new headline", ch, "<= 0.3 s")
        for tab, word, goal in (("Error vs lam", "lam", "<= 1.5 s"), ("Error vs n_pub", "n_pub", "<= 1.5 s")):
            try:
                t = p.timed(f"() => {VISIBLE_PLOT_TITLED}('{word}')",
                            lambda tab=tab: page.get_by_role("tab", name=tab).click(), timeout_s=TAB_TIMEOUT_S)
                # the last change on screen after the click (the tab may draw its figure as it fills in:
                # the n_pub tab shows the chosen n_pub at once, then each computed size)
                full = page.evaluate("() => (window.__bench.lastMut - window.__bench.t0) / 1000")
                _one(f"logistic bank: first {tab} tab -> figure", t, goal, f"  (settled {full:.2f} s)")
            except TimeoutError:
                print(f"ROW {'logistic bank: first ' + tab + ' tab -> figure':48s}  > {TAB_TIMEOUT_S} s (gave up)  "
                      f"goal {goal}  [{_load()}]", flush=True)
                p.settle(1.0, timeout_s=900)
    finally:
        p.close()


def bench_learn_nvdp(browser, url: str, repeat: int, server_s: float, rows: set) -> None:
    if "learn" in rows:
        p = Page(browser)
        try:
            first = p.first_load(f"{url}/learn", {"figure": f"() => {PLOTS}().some(g => g.querySelector('.main-svg'))"})
            _one("Learn first load, fresh process (first figure)", first["figure"], "<= 1.3x floor",
                 f"  (settled {first['settled']:.2f} s; server start-up {server_s:.2f} s before it)", floor="fresh")
        finally:
            p.close()
    if "nvdp" not in rows:
        return
    p = Page(browser)
    acc_ready = f"() => ({METRIC_VALUE}('Accuracy') || '').includes('%')"
    computing = f"(() => ({METRIC_VALUE}('Accuracy') || '').includes('computing'))"
    try:
        first = p.first_load(f"{url}/nvdp", {"bounds": f"() => /[0-9]/.test({METRIC_VALUE}('RD mean') || '')",
                                             "accuracy": acc_ready}, timeout_s=600)
        _one("first NVDP visit, empty cache (bounds on screen)", first["bounds"], "<= 1.3x floor",
             f"  (accuracy {first['accuracy']:.2f} s, settled {first['settled']:.2f} s)", floor="warm")
        page = p.page
        p.settle(1.0, computing)
        bounds = ("(() => " + METRICS + "().filter(m => m[0].startsWith('RD') || m[0].startsWith('BDP')))")
        allm = []
        for label, key in (("C_mu: longest", "ArrowLeft"), ("alpha_max: largest", "ArrowLeft"),
                           ("Renyi order", "ArrowRight")):
            sl = _slider(page, label)
            n = repeat if not label.startswith("Renyi") else min(repeat, 4)
            ts = [p.timed(bounds, _press(sl, key if i < 4 or not label.startswith("Renyi") else "ArrowLeft"),
                          settle_extra=computing) for i in range(n)]
            allm += ts
            _row(f"NVDP {label.split(':')[0]} key -> new bounds", ts, "<= 0.3 s")
        _row("NVDP slider key -> new bounds (all moves)", allm, "<= 0.3 s")
    finally:
        p.close()


#: ``python -m engine`` with a marker: prints the wall clock (``time.time()``) and the process's CPU seconds
#: when ``run_sweep`` is entered, i.e. when the computation starts (argument parsing and every import before
#: it are the start-up).
_CLI_MARKED = (
    "import runpy, sys, time\n"
    "import engine.pmt.sweep as S\n"
    "_run = S.run_sweep\n"
    "def _marked(*a, **k):\n"
    "    if not getattr(_marked, 'done', False):\n"
    "        _marked.done = True\n"
    "        sys.stderr.write('\\nCOMPUTE_STARTS %.6f %.6f\\n' % (time.time(), time.process_time()))\n"
    "    return _run(*a, **k)\n"
    "S.run_sweep = _marked\n"
    "sys.argv = ['engine'] + sys.argv[1:]\n"
    "runpy.run_module('engine', run_name='__main__', alter_sys=True)\n"
)


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def bench_cli(repo: Path, repeat: int) -> None:
    py = repo / ".venv" / "bin" / "python"
    py = str(py if py.exists() else sys.executable)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONHASHSEED="0")
    sweep = ["--dataset", "ccpp", "--epsilon", "1", "--seeds", "1", "--methods", "pmt", "--standardize"]
    cmds = [("python -m engine pmt --help", ["--help"]),
            ("python -m engine pmt (ccpp, 1 eps, 1 seed, pmt)", sweep)]
    for label, argv in cmds:
        ts, cpus = [], []
        for _ in range(repeat):
            t, c = time.perf_counter(), _children_cpu_s()
            res = subprocess.run([py, "-m", "engine", "pmt", *argv], cwd=repo, env=env, capture_output=True, text=True)
            ts.append(time.perf_counter() - t)
            cpus.append(_children_cpu_s() - c)
            if res.returncode:
                raise RuntimeError(res.stderr[-800:])
        _row(label, ts, ("<= 0.4 s" if argv[0] == "--help" else "- (start-up below)")
             + f"; CPU median {statistics.median(cpus):.2f} s")
    # the same sweep, split at the moment run_sweep is entered: start-up (interpreter, imports, parsing) and the rest
    starts, rests, start_cpu = [], [], []
    for _ in range(repeat):
        t_wall = time.time()
        t = time.perf_counter()
        res = subprocess.run([py, "-c", _CLI_MARKED, "pmt", *sweep], cwd=repo, env=env, capture_output=True, text=True)
        total = time.perf_counter() - t
        marks = [ln for ln in res.stderr.splitlines() if ln.startswith("COMPUTE_STARTS ")]
        if res.returncode or not marks:
            raise RuntimeError(res.stderr[-800:])
        starts.append(float(marks[-1].split()[1]) - t_wall)
        start_cpu.append(float(marks[-1].split()[2]))  # the child's CPU seconds up to that moment
        rests.append(total - starts[-1])
    _row("python -m engine pmt (ccpp ...): start-up", starts, f"<= 0.4 s; CPU median {statistics.median(start_cpu):.2f} s")
    _row("python -m engine pmt (ccpp ...): computation+output", rests, "-")


_STORE_NOTE = """
import os, sys
sys.path.insert(0, os.getcwd())
try:
    from ui.common import view_store as v
except ImportError:
    print("none (this checkout has no ui/common/view_store.py)"); raise SystemExit
if os.environ.get("BENCH_VIEW_STORE"):
    os.environ[v.ENV] = os.environ["BENCH_VIEW_STORE"]
os.environ.setdefault(v.ENV, str(v.DEFAULT_DIR))
f = v.folder()
if f is None:
    print("off"); raise SystemExit
n = len(list(f.glob("*.pkl"))) if f.is_dir() else 0
stamp = f / (".complete-" + v.fingerprint()[:24])
print(f"{f}: {n} entries; every bundled view of this code {'stored' if stamp.is_file() else 'NOT stored (run scripts/precompute_views.py)'}")
"""


def store_note(repo: Path) -> str:
    """What the served checkout's view store (:mod:`ui.common.view_store`) holds for its code: the first views, tabs and
    slider keys read from disk, or computed on the page (``scripts/precompute_views.py`` fills it)."""
    py = repo / ".venv" / "bin" / "python"
    env = dict(os.environ, BENCH_VIEW_STORE=VIEW_STORE[0] or "")
    res = subprocess.run([str(py if py.exists() else sys.executable), "-c", _STORE_NOTE], cwd=repo, env=env,
                         capture_output=True, text=True, timeout=300)
    return (res.stdout.strip() or res.stderr.strip()[-200:]).splitlines()[-1] if (res.stdout or res.stderr) else "?"


def _guarded(name: str, fn) -> None:
    """Run one group of rows; a failure is printed and the other groups still run."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - a benchmark prints what failed and goes on
        print(f"FAILED {name}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=ROOT, help="checkout to serve (default: this one)")
    ap.add_argument("--repeat", type=int, default=5, help="moves per row (>= 5)")
    ap.add_argument("--only", default=",".join(ROWS), help=f"comma-separated subset of {','.join(ROWS)}")
    ap.add_argument("--plain", action="store_true",
                    help="start a plain `streamlit run` (no preload) even where the checkout has launcher/serve.py")
    ap.add_argument("--view-store", default=None, dest="view_store", metavar="DIR|off",
                    help="EXPLORER_VIEW_STORE for the server (ui.common.view_store): a folder (e.g. one filled by "
                         "scripts/precompute_views.py) or 'off' (every view computed); default: the launcher's")
    ap.add_argument("--server-arg", action="append", default=[], dest="server_args", metavar="OPTION=VALUE",
                    help="an extra `streamlit run` option, e.g. runner.postScriptGC=true (before/after in the same "
                         "minutes); repeatable")
    args = ap.parse_args()
    PLAIN[0] = args.plain
    VIEW_STORE[0] = args.view_store
    SERVER_ARGS[:] = [f"--{a}" for a in args.server_args]
    rows = set(args.only.split(","))
    repo = args.repo.resolve()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    print(f"checkout {repo} ({head}); cpus {os.cpu_count()}; {_load()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
          f"{'; server options ' + ' '.join(SERVER_ARGS) if SERVER_ARGS else ''}",
          flush=True)
    if rows & {"pmt", "logistic"}:
        print(f"view store: {store_note(repo)}", flush=True)
    if "cli" in rows:
        bench_cli(repo, args.repeat)
    if rows & {"pmt", "logistic", "learn", "nvdp"}:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                if "floor" in rows:
                    _guarded("floor", lambda: bench_floor(browser))
                if rows & {"pmt", "logistic"}:
                    cache = tempfile.mkdtemp(prefix="bench_nvdp_cache_")
                    try:
                        with server(repo, cache) as (url, s):
                            for name, fn in (("pmt", lambda: bench_pmt(browser, url, args.repeat, s)),
                                             ("logistic", lambda: bench_logistic(browser, url, args.repeat))):
                                if name in rows:
                                    _guarded(name, fn)
                    finally:
                        shutil.rmtree(cache, ignore_errors=True)
                if rows & {"learn", "nvdp"}:
                    cache = tempfile.mkdtemp(prefix="bench_nvdp_cache_")  # empty: the fresh-clone first visit
                    try:
                        with server(repo, cache) as (url, s):
                            _guarded("learn/nvdp", lambda: bench_learn_nvdp(browser, url, args.repeat, s, rows))
                    finally:
                        shutil.rmtree(cache, ignore_errors=True)
            except Exception as exc:  # noqa: BLE001 - print what failed, keep the rows already printed
                print(f"FAILED: {type(exc).__name__}: {exc}", flush=True)
            finally:
                browser.close()
    if "floor" in rows and rows & {"pmt", "logistic", "learn", "nvdp"}:  # the floor again, after the rows
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                _guarded("floor (after)", lambda: bench_floor(browser))
            finally:
                browser.close()
    print(f"done; {_load()}", flush=True)


if __name__ == "__main__":
    main()
