"""Ready for a room, in a real browser at 1440 x 900 and 390 x 844 (Playwright + Debian chromium).

One server for the module; per size: the PMT page's verdict is on the first screen and coloured, the
title is not under the header, every chosen method's chip is visible, the headline metrics do not
overlap; a Data-page upload with the task set to classification is what the sidebar and the PMT page
name, and after a reload the page says the upload is gone while the sidebar names what is shown.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, needs_chromium, served_app  # the harness: tests/conftest.py

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]

SIZES = [(1440, 900), (390, 844)]

LAYOUT_JS = """() => {
  const box = e => e.getBoundingClientRect();
  const v = document.querySelector('[class*="st-key-verdict_"]');
  const span = v.querySelector('[data-testid=stMarkdownContainer] span') || v;
  const h1 = document.querySelector('h1'), header = document.querySelector('[data-testid=stHeader]');
  const ms = document.querySelector('[data-testid=stMultiSelect]');
  const msBox = box(ms);
  const chips = Array.from(ms.querySelectorAll('[data-tag]')).map(t => { const r = box(t);
    return {text: t.innerText, inside: r.left >= msBox.left - 1 && r.right <= msBox.right + 1 && r.top >= msBox.top - 1
            && r.bottom <= msBox.bottom + 1 && r.width > 0}; });
  const metrics = Array.from(document.querySelectorAll('[data-testid=stMetric]')).map(m => box(m).toJSON());
  return {verdict: box(v).toJSON(), colour: getComputedStyle(span).color, text: v.innerText,
          h1Top: box(h1).top, headerBottom: header ? box(header).bottom : 0, chips: chips, metrics: metrics,
          innerHeight: innerHeight};
}"""


def _overlap(a, b) -> bool:
    return a["left"] < b["right"] - 1 and b["left"] < a["right"] - 1 and a["top"] < b["bottom"] - 1 and b["top"] < a["bottom"] - 1


@pytest.fixture(scope="module")
def server():
    with served_app("streamlit_room.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_pmt_verdict_on_the_first_screen_coloured_and_nothing_clipped(server, browser, size):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(120_000)
    try:
        page.goto(f"{server}/pmt", timeout=180_000)
        page.locator('[class*="st-key-verdict_good"]').first.wait_for(timeout=240_000)
        page.locator('[data-testid=stMetric]').filter(has_text="PMT").first.wait_for(timeout=120_000)
        page.wait_for_timeout(1500)
        got = page.evaluate(LAYOUT_JS)
        page.screenshot(path=str(ARTIFACTS / f"room_pmt_{size[0]}.png"))
        assert got["text"].startswith("PMT wins at epsilon = 1"), got["text"]  # the joint default on CCPP
        assert got["verdict"]["top"] >= 0 and got["verdict"]["bottom"] <= got["innerHeight"], got["verdict"]
        r, g, b = (int(x) for x in got["colour"].removeprefix("rgb(").rstrip(")").split(",")[:3])
        assert g > r + 50 and g > b + 20, got["colour"]  # green: PMT wins here
        assert got["h1Top"] >= got["headerBottom"] - 1 or size[0] > 640, got  # phones: not under the header
        assert [c["text"] for c in got["chips"]] == ["PMT", "DP-RR", "DP-GD", "AdaSSP", "Public-only", "Non-private"]
        assert all(c["inside"] for c in got["chips"]), got["chips"]  # no chip cut off
        ms = got["metrics"]
        assert len(ms) >= 4 and not any(_overlap(a, b) for i, a in enumerate(ms) for b in ms[i + 1:]), ms
        if size[0] <= 640:  # phones: two headline numbers to a row, so the figure comes up sooner
            assert ms[0]["top"] == ms[1]["top"], ms[:2]
    finally:
        page.close()


def _csv(n=300, seed=1) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.5, -1.0, 0.5] + rng.normal(size=n) > 0).astype(int)
    return ("a,b,c,label\n" + "\n".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{t}" for r, t in zip(X, y)) + "\n").encode()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_sidebar_names_the_computed_data_after_an_upload_and_after_a_reload(server, browser, size, tmp_path):
    path = tmp_path / "clicks.csv"
    path.write_bytes(_csv())
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(120_000)  # a loaded machine: clicks and reads wait for the reruns
    try:
        page.goto(f"{server}/data?seeds=3", timeout=180_000)
        page.locator('[data-testid=stFileUploader] input[type=file]').first.set_input_files(str(path))
        page.get_by_text("is valid: 300 rows").wait_for(timeout=120_000)
        task = page.locator('[data-testid=stSelectbox]').filter(has_text="Task")
        # After an upload the Task picker sits below the first screen. A click on it makes Playwright scroll it into
        # view and press at once: the press reaches the picker's input, yet the list stayed shut about half the time
        # (most likely closed again by the scroll event, dispatched a frame after the press). Scrolled into view
        # first, one click opened it every time (4 of 4, against 2 of 4 without). Neither the uploader (the focus
        # is on the page body) nor a rerun (none is running) is involved, and a person scrolls before clicking.
        # So: scroll first, let the scroll event pass, then one click.
        task.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        task.locator('[role=combobox], [data-baseweb=select]').first.click()
        option = page.locator("[role=option]").filter(has_text=re.compile(r"^\s*classification\s*$")).first
        option.wait_for(timeout=10_000)
        option.click()
        page.get_by_text("task classification").wait_for(timeout=60_000)
        # in-app navigation keeps the session (a new URL would start a new one); the phone's sidebar is closed
        page.evaluate("() => Array.from(document.querySelectorAll('[data-testid=stSidebarNav] a'))"
                      ".find(a => a.href.endsWith('/pmt')).click()")
        page.locator('[class*="st-key-verdict_"]').first.wait_for(timeout=240_000)
        page.wait_for_timeout(1500)
        sidebar = page.locator('[data-testid=stSidebar]').inner_text() if size[0] > 640 else page.evaluate(
            "() => document.querySelector('[data-testid=stSidebar]').textContent")
        assert "upload:clicks.csv (300 rows x 3 features)" in sidebar, sidebar
        assert "upload:clicks.csv" in page.locator('[data-testid=stCaptionContainer]').filter(
            has_text="Computed on").first.inner_text()
        assert "upload=clicks.csv" in page.url
        page.reload(timeout=180_000)
        page.get_by_text("is not here any more").wait_for(timeout=240_000)
        page.locator('[class*="st-key-verdict_"]').first.wait_for(timeout=240_000)
        page.wait_for_timeout(1500)
        warn = page.locator('[data-testid=stAlert]').filter(has_text="is not here any more").first.inner_text()
        sidebar = page.evaluate("() => document.querySelector('[data-testid=stSidebar]').textContent")
        shown = warn.split("Showing ")[1].split(" instead")[0].strip()
        assert shown in sidebar and "clicks.csv is gone" in sidebar, (shown, sidebar)
        page.screenshot(path=str(ARTIFACTS / f"room_reload_{size[0]}.png"))
    finally:
        page.close()
