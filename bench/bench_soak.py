"""Benchmark: one long session, and the server's memory over it and after it.

A fresh instrumented server (``bench/_served.py``); a warm-up visit opens the PMT and NVDP pages once
(imports, the bundled data and the shipped NVDP models are loaded: the server's steady base) and
leaves. Then one Chromium session (Debian's ``/usr/bin/chromium``) on the PMT page makes ``--moves``
control changes (epsilon with the keyboard, and every 5th a tab switch), uploading a new small CSV
(``--upload-rows`` rows, a different file each time) through the page's uploader every
``--upload-every`` changes, then ``--nvdp-moves`` Renyi-order moves on the NVDP page. The server's
RSS (psutil) is printed at the start (after the warm-up), every 20 moves, when the session closes and
every 30 s for ``--settle`` seconds after (Streamlit forgets a disconnected session after
``server.disconnectedSessionTTL``, 120 s in ``.streamlit/config.toml``); the peak is the soak's own, and
the warm-up's peak is printed apart.

A move counts as answered when the browser shows a new headline number, or when the server's timing
hook logs the rerun that the key press asked for and the browser shows that rerun's number: on a small
uploaded file two neighbouring epsilons can round to the same displayed headline, and waiting for a
change that never comes would stall the run for the full ``--timeout`` on every such move (this is why
an earlier version seemed to hang at its first upload). An upload waits until the page offers the new
file's columns (each file's target column has a name of its own, ``y001``, ``y002`` ...,) before it clicks "Use this
data": a browser that replaces the uploader's file sends two reruns, the old file's removal and then
the new file, and the previous file's button is on the page until the second is drawn. An upload counts as done
when the page then names the new file in its data choice.

Run: ``.venv/bin/python bench/bench_soak.py [--moves 200 --nvdp-moves 100 --settle 240]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import (CHROMIUM, CHROMIUM_ARGS, EPS_KEYS, HEADLINE, Sampler, epsilon_slider,  # noqa: E402
                        headline_text, nvdp_order_slider, q, served, wait_change)


def small_csv(k: int, rows: int) -> bytes:
    rng = np.random.default_rng(1000 + k)
    X = rng.normal(size=(rows, 3)) * [1.0, 5.0, 0.5]
    y = X @ [1.0, -0.2, 2.0] + rng.normal(size=rows)
    return (f"a,b,c,y{k:03d}\n" + "".join(f"{a:.5f},{b:.5f},{c:.5f},{t:.5f}\n" for (a, b, c), t in zip(X, y))).encode()


class ServerLog:
    """The timing hook's log (``bench/_served.py``): one line per rerun request answered by a headline."""

    def __init__(self, path: str):
        self.path = path

    def rows(self) -> list[dict]:
        try:
            with open(self.path) as f:
                return [json.loads(ln) for ln in f if ln.endswith("\n")]
        except FileNotFoundError:
            return []

    def since(self, t: float) -> list[dict]:
        """Lines for rerun requests that reached the server at or after ``t`` (``time.time()``)."""
        return [r for r in self.rows() if r["recv"] >= t]


async def wait_answer(page, label: str, before, t_key: float, srv: ServerLog, timeout: float):
    """Seconds until the move made at ``t_key`` is answered, and whether the number changed.

    Answered: the headline shows a value other than ``before``, or the server logged a headline for a
    rerun requested after ``t_key`` and the browser shows that value (an unchanged number). Returns
    ``(seconds, changed)``, or ``None`` when neither happened within ``timeout``.
    """
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        now = await headline_text(page, label)
        if now is not None and now != before:
            return time.perf_counter() - t0, True
        done = srv.since(t_key)
        if done and now is not None and now == done[-1]["value"]:
            return time.perf_counter() - t0, False
        await asyncio.sleep(0.05)
    return None


async def wait_logged(srv: ServerLog, t: float, timeout: float) -> bool:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if srv.since(t):
            return True
        await asyncio.sleep(0.05)
    return False


async def _shown(locator) -> str:
    """A widget's visible text and the values of its inputs (a select box shows its choice in either)."""
    if not await locator.count():
        return ""
    return await locator.evaluate("e => e.innerText + ' ' + Array.from(e.querySelectorAll('input')).map(i => i.value).join(' ')")


async def upload(page, k: int, rows: int, srv: ServerLog, timeout: float) -> bool:
    """Upload a new small CSV on the PMT page and make it the data (True when the page then uses it)."""
    if not await page.get_by_text("CSV file (comma").first.is_visible():  # the expander is closed
        await page.get_by_text("Upload your own CSV").first.click()
        await page.get_by_text("CSV file (comma").first.wait_for(state="visible")
    name = f"soak_{k}.csv"
    await page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": small_csv(k, rows)}])
    # The page has read the new file when its target column (y<kkk>, a name only this file has) is offered:
    # a browser replacing a file first sends the old one's removal, and the page's reruns in between
    # still show the previous file's choices (an earlier version clicked then and used that file).
    target = page.locator('[data-testid="stSelectbox"]').filter(has_text="Target column").first
    t0 = time.perf_counter()
    while f"y{k:03d}" not in await _shown(target):
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"the page did not offer {name}'s columns within {timeout:.0f} s of choosing it")
        await asyncio.sleep(0.1)
    button = page.get_by_role("button", name="Use this data")
    await button.wait_for(timeout=timeout * 1000)
    t = time.time()
    await button.click()
    if not await wait_logged(srv, t, timeout):
        raise RuntimeError(f"no rerun logged within {timeout:.0f} s after 'Use this data'")
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Data set").first
    t0 = time.perf_counter()
    while True:  # the browser may render the logged rerun a moment later
        shown = await _shown(box)
        if f"upload: {name} " in shown + " ":
            return True
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"the page's data choice shows {shown!r}, not {name}, after 'Use this data'")
        await asyncio.sleep(0.1)


async def soak(url: str, args, sampler, srv: ServerLog, log) -> dict:
    from playwright.async_api import async_playwright

    out = {"move": [], "lost": 0, "unchanged": 0, "nvdp_unchanged": 0, "uploads_ok": 0, "uploads": 0, "nvdp_move": [], "nvdp_lost": 0, "errors": []}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        if args.warmup:  # both pages once, in a context that then closes
            ctx = await browser.new_context(viewport={"width": 1440, "height": 900})
            page = await ctx.new_page()
            await page.goto(f"{url}/pmt", timeout=600_000)
            await wait_change(page, "PMT", None, args.timeout * 3)
            await page.goto(f"{url}/nvdp", timeout=600_000)
            await wait_change(page, HEADLINE["nvdp"], None, args.timeout * 5)
            await ctx.close()
            await asyncio.sleep(2)
        sampler.start_rss = sampler.rss()
        out["warmup_peak"] = max(sampler.samples or [sampler.start_rss])
        sampler.samples.clear()  # the peak reported for the soak is the soak's own, not the warm-up's
        log(f"after the warm-up (start): RSS {sampler.start_rss:.0f} MB (warm-up peak {out['warmup_peak']:.0f} MB)")

        ctx = await browser.new_context(viewport={"width": 1440, "height": 900})
        ctx.set_default_timeout(args.timeout * 1000)
        page = await ctx.new_page()
        page.on("pageerror", lambda e: out["errors"].append(f"page error {e}"))
        await page.goto(f"{url}/pmt", timeout=600_000)
        await wait_change(page, "PMT", None, args.timeout * 3)
        for k in range(args.moves):
            if k and k % args.upload_every == 0:
                out["uploads"] += 1
                try:
                    out["uploads_ok"] += await upload(page, k // args.upload_every, args.upload_rows, srv, args.timeout)
                except Exception as e:  # noqa: BLE001
                    out["errors"].append(f"upload {k // args.upload_every}: {type(e).__name__}: {str(e)[:150]}")
            if k % 5 == 4:
                tab = "Conditioning" if (k // 5) % 2 == 0 else "Error vs epsilon"
                await page.get_by_role("tab", name=tab).first.click()
            before = await headline_text(page, "PMT")
            slider = epsilon_slider(page)
            await slider.focus()
            t_key = time.time()
            await slider.press(EPS_KEYS[k % len(EPS_KEYS)])
            got = await wait_answer(page, "PMT", before, t_key, srv, args.timeout)
            if got is None:
                out["lost"] += 1
            else:
                out["move"].append(got[0])
                out["unchanged"] += not got[1]
            if (k + 1) % 20 == 0:
                log(f"PMT move {k + 1}: RSS {sampler.rss():.0f} MB ({out['uploads_ok']} uploads)")
        if args.nvdp_moves:
            await page.goto(f"{url}/nvdp", timeout=600_000)
            await wait_change(page, HEADLINE["nvdp"], None, args.timeout * 3)
        order = nvdp_order_slider(page)
        for k in range(args.nvdp_moves):
            before = await headline_text(page, HEADLINE["nvdp"])
            await order.focus()
            t_key = time.time()
            await order.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
            got = await wait_answer(page, HEADLINE["nvdp"], before, t_key, srv, args.timeout)
            if got is None:
                out["nvdp_lost"] += 1
            else:
                out["nvdp_move"].append(got[0])
                out["nvdp_unchanged"] += not got[1]
            if (k + 1) % 20 == 0:
                log(f"NVDP move {k + 1}: RSS {sampler.rss():.0f} MB")
        await ctx.close()
        await browser.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=200)
    ap.add_argument("--upload-every", type=int, default=20, dest="upload_every")
    ap.add_argument("--upload-rows", type=int, default=300, dest="upload_rows")
    ap.add_argument("--nvdp-moves", type=int, default=100, dest="nvdp_moves")
    ap.add_argument("--settle", type=float, default=240.0, help="seconds to watch RSS after the session closes")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--no-warmup", action="store_false", dest="warmup",
                    help="skip the warm-up visit (a quick check of the script; the start RSS is then a cold server's)")
    ap.add_argument("--server-arg", action="append", default=[], dest="server_args", metavar="OPTION=VALUE",
                    help="an extra `streamlit run` option, e.g. runner.postScriptGC=true; repeatable")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t0:7.1f} s, load {os.getloadavg()[0]:.1f}] {msg}", flush=True)

    tmp = tempfile.mkdtemp(prefix="bench_soak_")
    timing = os.path.join(tmp, "timing.jsonl")
    if args.server_args:
        log(f"server options {args.server_args}")
    with served(timing, [f"--{a}" for a in args.server_args]) as (url, pid):
        sampler = Sampler([pid])
        out = asyncio.run(soak(url, args, sampler, ServerLog(timing), log))
        closed = sampler.rss()
        log(f"session closed: RSS {closed:.0f} MB")
        waited = 0.0
        while waited < args.settle:
            time.sleep(30)
            waited += 30
            log(f"{waited:.0f} s after the session closed: RSS {sampler.rss():.0f} MB")
        mem = sampler.stop()
    start = sampler.start_rss
    print(f"\nsoak: {len(out['move'])} PMT moves answered ({out['unchanged']} with an unchanged headline), "
          f"{out['lost']} lost (median {statistics.median(out['move']):.2f} s, "
          f"p95 {q(out['move'], 0.95):.2f} s), {out['uploads_ok']}/{out['uploads']} uploads, "
          f"{len(out['nvdp_move'])} NVDP moves answered ({out['nvdp_unchanged']} unchanged, {out['nvdp_lost']} lost"
          + (f"; median {statistics.median(out['nvdp_move']):.2f} s" if out["nvdp_move"] else "") + ")")
    print(f"server RSS: warm-up peak {out.get('warmup_peak', start):.0f} MB; start {start:.0f} MB, peak during the soak "
          f"{mem['peak']:.0f} MB (growth {mem['peak'] - start:+.0f} MB), "
          f"at close {closed:.0f} MB, {args.settle:.0f} s later {mem['end']:.0f} MB ({mem['end'] - start:+.0f} MB); "
          f"server CPU {mem['cpu']:.0f} s; load average {os.getloadavg()}")
    for e in out["errors"][:10]:
        print("  error:", e)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
