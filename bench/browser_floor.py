"""Benchmark: the framework's own floor for a first page load in this browser, on this machine.

What does a first visit cost before the explorer does any work? Two throw-away Streamlit apps, each
served by a fresh ``streamlit run`` (no preload, same options as ``bench/bench_browser.py``) and opened
``--visits`` times in new contexts of Debian's Chromium (``executable_path``; never ``playwright install``):

- ``metric``: one ``st.metric`` and nothing else;
- ``plotly``: that metric and one 3-point ``st.plotly_chart`` (Streamlit's Plotly bundle is loaded and
  the figure drawn).

Printed per app: navigation -> the metric's value on screen, and -> the chart's SVG (``plotly``), for the
first visit of the fresh process and the later ones, with the load average. These are the floors under
the rows "PMT first load" and "Learn first load" of ``bench/bench_browser.py``: no page of this dashboard
can show its first figure faster than the ``plotly`` app does in the same browser.

Run: ``.venv/bin/python bench/browser_floor.py [--visits 5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT  # noqa: E402  (the same browser, flags and window)
from launcher.health import free_port, wait_healthy  # noqa: E402  (bench_browser put the checkout on the path)

APPS = {
    "metric": 'import streamlit as st\nst.metric("PMT", "0.123")\n',
    "plotly": ('import plotly.graph_objects as go\nimport streamlit as st\nst.metric("PMT", "0.123")\n'
               'st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))\n'),
}


def _serve(app: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
                             "--server.headless", "true", "--server.address", "127.0.0.1",
                             "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
                            cwd=app.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, 120)
    except RuntimeError:
        proc.kill()
        raise
    return proc, url


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visits", type=int, default=5, help="visits per app (the first is the fresh process's)")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="browser_floor_"))
    print(f"browser_floor: {os.cpu_count()} cores, load average {os.getloadavg()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for name, code in APPS.items():
                app = tmp / f"floor_{name}.py"  # not plotly.py: it would shadow the package
                app.write_text(code)
                proc, url = _serve(app)
                try:
                    metric, chart = [], []
                    for _ in range(args.visits):
                        ctx = browser.new_context(viewport=VIEWPORT)
                        page = ctx.new_page()
                        t = time.perf_counter()
                        page.goto(url)
                        page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
                        metric.append(time.perf_counter() - t)
                        if name == "plotly":
                            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
                            chart.append(time.perf_counter() - t)
                        ctx.close()
                finally:
                    proc.terminate()
                    proc.wait(timeout=15)
                for what, ts in (("metric on screen", metric), ("chart on screen", chart)):
                    if ts:
                        later = ts[1:] or ts
                        print(f"ROW floor {name:6s} {what:17s} first visit {ts[0]:5.2f} s; later visits median "
                              f"{statistics.median(later):5.2f} s, max {max(later):5.2f} s "
                              f"({', '.join(f'{x:.2f}' for x in ts)})  [load {os.getloadavg()[0]:.2f}]", flush=True)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
