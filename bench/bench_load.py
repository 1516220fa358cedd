"""Benchmark: a room at once. N people open the dashboard, move controls and switch tabs.

One Chromium (Debian's ``/usr/bin/chromium`` via ``executable_path``; never ``playwright install``)
with one browser context per person, started ``--stagger`` seconds apart. Each person opens the PMT
page, waits for the headline, makes ``--moves`` epsilon moves with the keyboard (waiting each time for
the headline's new number), switches to the Conditioning tab and back, then (``--pages pmt nvdp``)
opens the NVDP page and makes ``--nvdp-moves`` Renyi-order moves. A fresh server is started for every N
(``bench/_served.py``: ``streamlit run`` with a timing hook), so each row starts cold.

Printed per N and page: key -> new headline in the browser (median / p95), server-side (the
browser's message reaching the server -> the server queueing the new headline; from the hook),
first page load (median / max), the server's RSS (start -> end, peak; psutil) and CPU seconds, the
browsers' CPU seconds, errors and lost moves (a move whose new headline never came within
``--move-timeout``), and the load average. ``--url`` measures a running server instead (e.g. the
proxy of ``deploy/room.sh``): with ``--pids`` for RSS/CPU and ``--timing-logs`` for server-side times;
``--room K`` starts ``deploy/room.sh K`` (K instrumented servers behind nginx, sticky sessions) for
every N and measures through the proxy (RSS and CPU summed over the K servers).

``--nice-browsers 10`` runs the benchmark's browsers at a lower CPU priority, so that the server gets the
cores first, as it would with the people's browsers on their own machines (the figures say which).

Run: ``.venv/bin/python bench/bench_load.py --n 1 4 8 16 [--pages pmt nvdp] [--nice-browsers 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from launcher.health import free_port, stop, wait_healthy  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]
#: Epsilon moves: left from 1 to 0.5, right to 2, left to 1 again (each move changes epsilon; the cycle is
#: balanced, so a long run never walks into an end of the slider, where a key press changes nothing).
EPS_KEYS = ["ArrowLeft", "ArrowLeft", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowLeft", "ArrowLeft"]
HEADLINE = {"pmt": "PMT", "nvdp": "RD filtered max"}


@contextlib.contextmanager
def served(timing_log: str, extra: list[str] | None = None):
    """A fresh instrumented server on a free port (yields (url, pid))."""
    port = free_port()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", BENCH_TIMING_LOG=timing_log)
    cmd = [sys.executable, str(ROOT / "bench" / "_served.py"), "app.py", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", *(extra or [])]
    log = open(timing_log + ".server.log", "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, 120, poll_s=0.3)
        yield url, proc.pid
    finally:
        stop(proc, 15)
        log.close()


@contextlib.contextmanager
def room_proxy(k: int):
    """``deploy/room.sh k``: k instrumented servers behind nginx (yields (url, server pids, timing logs))."""
    port = free_port()
    run = tempfile.mkdtemp(prefix="bench_room_")
    env = dict(os.environ, ROOM_RUN_DIR=run, BENCH_TIMING_LOG="1",
               ROOM_STREAMLIT=f"{sys.executable} {ROOT / 'bench' / '_served.py'}")
    log = open(os.path.join(run, "room.log"), "w")
    proc = subprocess.Popen(["bash", str(ROOT / "deploy" / "room.sh"), str(k), str(port)], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, 300, poll_s=0.3)
        ports = [port + i for i in range(1, k + 1)]
        pids = [int(Path(run, f"streamlit_{p}.pid").read_text()) for p in ports]
        yield url, pids, [os.path.join(run, f"timing_{p}.jsonl") for p in ports]
    finally:
        proc.terminate()  # room.sh stops nginx and its servers
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        log.close()


class Sampler:
    """RSS (sum over the given processes) every 0.5 s in a thread, and their CPU seconds."""

    def __init__(self, pids):
        self.procs = [psutil.Process(p) for p in pids]
        self.samples: list[float] = []
        self._stop = threading.Event()
        self.cpu0 = self.cpu()
        self.start_rss = self.rss()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def rss(self) -> float:
        total = 0
        for p in self.procs:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        return total / 2**20

    def cpu(self) -> float:
        total = 0.0
        for p in self.procs:
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system
        return total

    def _run(self):
        while not self._stop.wait(0.5):
            self.samples.append(self.rss())

    def stop(self):
        self._stop.set()
        self.thread.join()
        return {"start": self.start_rss, "end": self.rss(), "peak": max(self.samples or [self.rss()]),
                "cpu": self.cpu() - self.cpu0}


def chromium_cpu(browser_pid_hint=None) -> float:
    """CPU seconds of every chromium process of this user (the benchmark's browsers)."""
    total = 0.0
    for p in psutil.process_iter(["name", "cpu_times"]):
        if p.info["name"] and "chrom" in p.info["name"]:
            t = p.info["cpu_times"]
            if t:
                total += t.user + t.system
    return total


class Renicer:
    """While running, gives every chromium process (the benchmark's browsers, new renderers included) the
    niceness ``level`` every 0.3 s (``--nice-browsers``): the server then gets the cores first, as it would
    with the people's browsers on their own machines. Off by default (the browsers compete as they are)."""

    def __init__(self, level: int):
        self.level, self.stop_flag = level, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop_flag.wait(0.3):
            for p in psutil.process_iter(["name"]):
                if p.info["name"] and "chrom" in p.info["name"]:
                    with contextlib.suppress(psutil.Error):
                        if p.nice() != self.level:
                            p.nice(self.level)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join()
        return False


def q(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, round(p * (len(v) - 1))))]


async def headline_text(page, label: str) -> str | None:
    return await page.evaluate(
        """(label) => {
          for (const m of document.querySelectorAll('[data-testid="stMetric"]')) {
            const l = m.querySelector('[data-testid="stMetricLabel"]');
            const v = m.querySelector('[data-testid="stMetricValue"]');
            if (l && v && l.innerText.trim() === label) return v.innerText.trim();
          }
          return null;
        }""", label)


async def wait_change(page, label: str, before, timeout: float) -> float | None:
    """Seconds until the headline named ``label`` shows a value other than ``before`` (None on timeout)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        now = await headline_text(page, label)
        if now is not None and now != before:
            return time.perf_counter() - t0
        await asyncio.sleep(0.05)
    return None


def epsilon_slider(page):
    return page.locator('[data-testid="stSlider"]').filter(has_text="epsilon (privacy budget").get_by_role("slider")


def nvdp_order_slider(page):
    """The NVDP page's Renyi order (every step changes the RD bound; a C_mu step above the largest norm
    would not)."""
    return page.locator('[data-testid="stSlider"]').filter(has_text="Renyi order").get_by_role("slider").first


async def person(i: int, browser, url: str, args, rec: dict) -> None:
    await asyncio.sleep(i * args.stagger)
    ctx = await browser.new_context(viewport={"width": 1440, "height": 900})
    ctx.set_default_timeout(args.move_timeout * 1000)  # a busy machine: Playwright's 30 s are not enough
    page = await ctx.new_page()
    page.on("pageerror", lambda e: rec["errors"].append(f"person {i}: page error {e}"))
    try:
        t0 = time.perf_counter()
        await page.goto(f"{url}/pmt?seeds={args.seeds}", timeout=300_000)
        dt = await wait_change(page, "PMT", None, args.load_timeout)
        if dt is None:
            rec["errors"].append(f"person {i}: the PMT page did not load in {args.load_timeout:.0f} s")
            return
        rec["pmt"]["load"].append(time.perf_counter() - t0)
        slider = epsilon_slider(page)
        for k in range(args.moves):
            before = await headline_text(page, "PMT")
            await slider.focus()
            await slider.press(EPS_KEYS[k % len(EPS_KEYS)])
            dt = await wait_change(page, "PMT", before, args.move_timeout)
            if dt is None:
                rec["pmt"]["lost"] += 1
            else:
                rec["pmt"]["move"].append(dt)
            await asyncio.sleep(args.think)
        for name in ("Conditioning", "Error vs epsilon"):
            t1 = time.perf_counter()
            await page.get_by_role("tab", name=name).first.click()
            await page.get_by_role("tab", name=name, selected=True).first.wait_for(timeout=60_000)
            rec["pmt"]["tab"].append(time.perf_counter() - t1)
            await asyncio.sleep(args.think)
        if "nvdp" in args.pages:
            t0 = time.perf_counter()
            await page.goto(f"{url}/nvdp", timeout=300_000)
            dt = await wait_change(page, HEADLINE["nvdp"], None, args.load_timeout)
            if dt is None:
                rec["errors"].append(f"person {i}: the NVDP page did not load in {args.load_timeout:.0f} s")
                return
            rec["nvdp"]["load"].append(time.perf_counter() - t0)
            order = nvdp_order_slider(page)
            for k in range(args.nvdp_moves):
                before = await headline_text(page, HEADLINE["nvdp"])
                await order.focus()
                await order.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
                dt = await wait_change(page, HEADLINE["nvdp"], before, args.move_timeout)
                if dt is None:
                    rec["nvdp"]["lost"] += 1
                else:
                    rec["nvdp"]["move"].append(dt)
                await asyncio.sleep(args.think)
        exc = await page.locator('[data-testid="stException"]').count()
        if exc:
            rec["errors"].append(f"person {i}: {exc} exception box(es) on the page")
    except Exception as e:  # noqa: BLE001 - recorded as an error of this person
        rec["errors"].append(f"person {i}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    finally:
        await ctx.close()


async def room(url: str, n: int, args) -> dict:
    from playwright.async_api import async_playwright

    rec = {"errors": [], **{p: {"load": [], "move": [], "tab": [], "lost": 0} for p in ("pmt", "nvdp")}}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            await asyncio.gather(*(person(i, browser, url, args, rec) for i in range(n)))
        finally:
            rec["browser_cpu_end"] = chromium_cpu()  # before the browser's processes exit
            await browser.close()
    return rec


def server_side(paths) -> dict:
    """Server-side latencies per page from the hook's logs: reruns whose headline changed in that session
    (the first headline of a session, its page load, and reruns that left the number alone are left out)."""
    rows = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            rows += [json.loads(ln) for ln in open(path) if ln.strip()]
    rows.sort(key=lambda r: r["recv"])
    last: dict = {}
    out = {"pmt": [], "nvdp": []}
    for r in rows:
        key = (r["session"], r["page"])
        if key in last and last[key] != r["value"]:
            out[r["page"]].append(r["latency"])
        last[key] = r["value"]
    return out


def fmt(values, scale=1.0) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values) * scale:.2f} / {q(values, 0.95) * scale:.2f}"


def report(n: int, rec: dict, srv: dict, mem: dict, browser_cpu: float, wall: float, load0, load1, args) -> list[str]:
    lines = []
    for pg in args.pages:
        r = rec[pg]
        loads = r["load"]
        first = f"{statistics.median(loads):.1f} / {max(loads):.1f} s" if loads else "-"
        rss = f"{mem['start']:.0f} -> {mem['end']:.0f} MB (peak {mem['peak']:.0f})"
        if "settled" in mem:
            rss += f", {mem['settled']:.0f} after {args.settle:.0f} s"
        lines.append(f"| {n} | {pg} | {fmt(r['move'])} s | {fmt(srv.get(pg, []))} s | {first} | {rss} | "
                     f"{len(r['move'])} moves, {r['lost']} lost | {mem['cpu']:.0f} s / {browser_cpu:.0f} s | "
                     f"{len(rec['errors'])} | {load0[0]:.1f} -> {load1[0]:.1f} | {wall:.0f} s |")
    return lines


HEADER = ("| people | page | key -> new headline, median / p95 | server-side, median / p95 | first load, median / max "
          "| server RSS | moves | server / browser CPU | errors | load (1 min) | wall |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1, 4, 8, 16], help="people at once (one run each)")
    ap.add_argument("--pages", nargs="+", default=["pmt"], choices=["pmt", "nvdp"])
    ap.add_argument("--moves", type=int, default=5, help="epsilon moves per person (PMT page)")
    ap.add_argument("--nvdp-moves", type=int, default=3, dest="nvdp_moves", help="Renyi-order moves per person (NVDP page)")
    ap.add_argument("--seeds", type=int, default=20, help="the PMT page's seeds (the default view: 20)")
    ap.add_argument("--stagger", type=float, default=1.0, help="seconds between people's arrivals")
    ap.add_argument("--think", type=float, default=0.5, help="seconds between a person's actions")
    ap.add_argument("--move-timeout", type=float, default=120.0, dest="move_timeout")
    ap.add_argument("--load-timeout", type=float, default=300.0, dest="load_timeout")
    ap.add_argument("--room", type=int, default=0,
                    help="start deploy/room.sh with this many server processes behind nginx and measure through it")
    ap.add_argument("--url", default=None, help="measure this running server (or proxy) instead of starting one")
    ap.add_argument("--pids", type=int, nargs="*", default=[], help="--url: server processes for RSS and CPU")
    ap.add_argument("--timing-logs", nargs="*", default=[], dest="timing_logs",
                    help="--url: the servers' BENCH_TIMING_LOG files (server-side times)")
    ap.add_argument("--settle", type=float, default=0.0, help="seconds to wait after the room leaves, then RSS again")
    ap.add_argument("--json", default=None, help="also write the raw figures to this file")
    ap.add_argument("--nice-browsers", type=int, default=0, dest="nice_browsers",
                    help="run the benchmark's browsers at this niceness (e.g. 10: the server gets the cores first, "
                         "as with the browsers on other machines); 0: as they are")
    ap.add_argument("--server-arg", action="append", default=[], dest="server_args", metavar="OPTION=VALUE",
                    help="an extra `streamlit run` option for the started server, e.g. runner.postScriptGC=true "
                         "(before/after comparisons in the same minutes); repeatable")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)", file=sys.stderr)
        return 2
    print(f"bench_load: {os.cpu_count()} cores, load average {os.getloadavg()}, pages {args.pages}, "
          f"{args.moves} epsilon moves per person, stagger {args.stagger} s, think {args.think} s, "
          f"browsers' niceness {args.nice_browsers}, server options {args.server_args or 'from config.toml'}")
    table, raw = [HEADER], []
    for n in args.n:
        tmp = tempfile.mkdtemp(prefix="bench_load_")
        log = os.path.join(tmp, "timing.jsonl")
        with contextlib.ExitStack() as stack:
            if args.room:
                url, pids, logs = stack.enter_context(room_proxy(args.room))
            elif args.url:
                url, pids, logs = args.url, args.pids, args.timing_logs
                for p in logs:  # only this run's lines
                    with contextlib.suppress(FileNotFoundError):
                        os.truncate(p, 0)
            else:
                url, pid = stack.enter_context(served(log, [f"--{a}" for a in args.server_args]))
                pids, logs = [pid], [log]
            sampler = Sampler(pids) if pids else None
            load0, b0, t0 = os.getloadavg(), chromium_cpu(), time.perf_counter()
            with (Renicer(args.nice_browsers) if args.nice_browsers else contextlib.nullcontext()):
                rec = asyncio.run(room(url, n, args))
            wall, load1 = time.perf_counter() - t0, os.getloadavg()
            bcpu = rec.pop("browser_cpu_end", b0) - b0
            mem = sampler.stop() if sampler else {"start": float("nan"), "end": float("nan"), "peak": float("nan"),
                                                  "cpu": float("nan")}
            if args.settle and pids:
                time.sleep(args.settle)
                mem["settled"] = Sampler(pids).stop()["end"]
            srv = server_side(logs)
        rows = report(n, rec, srv, mem, bcpu, wall, load0, load1, args)
        table += rows
        print("\n".join(rows), flush=True)
        for e in rec["errors"][:10]:
            print("   error:", e)
        raw.append({"n": n, "rec": rec, "server_side": srv, "mem": mem, "browser_cpu": bcpu, "wall": wall,
                    "load": [load0, load1]})
    print("\n" + "\n".join(table))
    print(f"load average at the end: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
