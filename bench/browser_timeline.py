"""Diagnostic: where a first page load's time goes in Chromium (resources, websocket messages, long tasks).

Starts the server as ``bench/bench_browser.py`` does, opens ``PATH`` (default ``/pmt``) in a fresh browser
context and prints: the server start-up, when the headline / figure appeared, navigation timings
(response end, DOMContentLoaded, load), the larger or slower resources, the websocket's open time and the
arrival times of the server's messages, and the main thread's long tasks (> 50 ms; PerformanceObserver).
With a third argument (any), another context loads the page first, so the timed load finds every result
cached on the server (what is left is the browser's own work).

Run: ``.venv/bin/python bench/browser_timeline.py [REPO] [PATH] [warm]``; figures in docs/performance/notebook.md.
"""
import sys, time, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from pathlib import Path
import bench_browser as B
from playwright.sync_api import sync_playwright
repo = Path(sys.argv[1]) if len(sys.argv) > 1 else B.ROOT
path = sys.argv[2] if len(sys.argv) > 2 else "/pmt"
WS_JS = """
(() => {
  const T = window.__tl = {ws: [], longtasks: []};
  const W = window.WebSocket;
  window.WebSocket = function(...a) { const s = new W(...a); T.ws.push(['open-call', performance.now()]);
    s.addEventListener('open', () => T.ws.push(['open', performance.now()]));
    s.addEventListener('message', (e) => T.ws.push(['msg', performance.now(), (e.data.size||e.data.byteLength||0)]));
    return s; };
  window.WebSocket.prototype = W.prototype;
  try { new PerformanceObserver(l => { for (const e of l.getEntries()) T.longtasks.push([e.startTime, e.duration]); }).observe({entryTypes: ['longtask']}); } catch (e) {}
})();
"""
import tempfile
with B.server(repo, tempfile.mkdtemp(prefix="tl_cache")) as (url, s):
    print("server start", round(s, 2))
    with sync_playwright() as pw:
        br = pw.chromium.launch(executable_path=B.CHROMIUM, args=B.CHROMIUM_ARGS)
        if len(sys.argv) > 3:  # warm the server first with another context (its caches), then time a new one
            w = B.Page(br); w.first_load(url + path, {"/pmt": B.PMT_READY}.get(path.split("?")[0]) or {"x": "() => document.querySelector('.js-plotly-plot .main-svg')"}); w.close()
            print("server warmed by a first context")
        p = B.Page(br)
        p.ctx.add_init_script(WS_JS)
        first = p.first_load(url + path, {"/pmt": B.PMT_READY, }.get(path.split("?")[0]) or {"figure": "() => !!document.querySelector('.js-plotly-plot .main-svg')", "bounds": f"() => /[0-9]/.test({B.METRIC_VALUE}('RD mean') || '')"})
        print("first", {k: round(v, 2) for k, v in first.items()})
        res = p.page.evaluate("() => performance.getEntriesByType('resource').map(e => [e.name.split('/').slice(-1)[0].slice(0,40), Math.round(e.startTime), Math.round(e.responseEnd), e.transferSize])")
        nav = p.page.evaluate("() => { const e = performance.getEntriesByType('navigation')[0]; return [e.responseEnd, e.domContentLoadedEventEnd, e.loadEventEnd]; }")
        print("nav responseEnd/DCL/load", [round(x) for x in nav])
        for r in sorted(res, key=lambda r: r[1]):
            if r[3] > 20000 or r[2] - r[1] > 100: print("  res", r)
        tl = p.page.evaluate("() => window.__tl")
        ws = tl["ws"]; msgs = [m for m in ws if m[0] == "msg"]
        print("ws", [w for w in ws if w[0] != 'msg'], "msgs", len(msgs), "first msg", round(msgs[0][1]) if msgs else None, "last", round(msgs[-1][1]) if msgs else None, "bytes", sum(m[2] for m in msgs))
        # message times histogram
        print("msg times", [round(m[1]) for m in msgs][:80])
        lt = tl["longtasks"]; print("longtasks total ms", round(sum(d for _, d in lt)), [(round(a), round(d)) for a, d in lt if d > 80])
        br.close()
