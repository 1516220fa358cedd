"""Real browser (Debian's Chromium via Playwright): the hostile link payloads leave no link, image or markup.

Opens the PMT page with each hostile query string on a fresh server and reads the DOM: no ``<a>`` and no ``<img>``
points outside the app (``example.org``), no element was made from the payload's Markdown, the payload is shown as
text inside the page's note, and the headline numbers are there (the page works). Chromium's own requests are
watched too: nothing is fetched from ``example.org``.
"""

from __future__ import annotations

import sys
import urllib.parse
from pathlib import Path

import pytest

from conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, served_app  # the harness: tests/conftest.py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_browser import pytestmark  # noqa: E402, F401

PAYLOADS = [
    ("upload", "[Upload it again here](https://example.org)", "Upload it again here"),
    ("data", "![x](https://example.org/i.png)", "names no data set"),
    ("epsilon", "[a](https://example.org)", "was ignored"),
    ("metric", "<img src=https://example.org/x.png>", "unknown metric"),
    ("lam", "[x](javascript:alert(1)) :red[big]", "was ignored"),
]

OUTSIDE_JS = """() => ({
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href).filter(h => /example\\.org|javascript:/.test(h)),
  images: Array.from(document.querySelectorAll('img[src]')).map(i => i.src).filter(s => /example\\.org/.test(s)),
  red: Array.from(document.querySelectorAll('[data-testid="stAlert"] span')).filter(s => s.style && s.style.color === 'red').length,
  alerts: Array.from(document.querySelectorAll('[data-testid="stAlert"]')).map(a => a.innerText),
  metrics: document.querySelectorAll('[data-testid="stMetric"]').length,
})"""


@pytest.fixture(scope="module")
def server():
    """The app (``launcher.serve app.py``) on a free localhost port, no preload; up to 5 minutes to start on a
    loaded machine."""
    with served_app("streamlit_server_url_payloads.log", {"EXPLORER_PRELOAD": "none"}, start_s=300) as url:
        yield url


def test_link_payloads_leave_no_link_image_or_markup(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for key, value, shown in PAYLOADS:
                page = browser.new_page(viewport={"width": 1600, "height": 1100})
                fetched = []
                page.on("request", lambda r: fetched.append(r.url)
                        if (urllib.parse.urlparse(r.url).hostname or "").endswith("example.org") else None)
                page.goto(f"{server}/pmt?seeds=2&{key}={urllib.parse.quote(value, safe='')}", timeout=120_000)
                page.locator('[data-testid="stMetric"]').first.wait_for(timeout=150_000)
                page.wait_for_timeout(1000)
                state = page.evaluate(OUTSIDE_JS)
                page.screenshot(path=str(ARTIFACTS / f"browser_url_payload_{key}.png"), full_page=False)
                assert state["links"] == [] and state["images"] == [], (key, state)
                assert state["red"] == 0, (key, state)
                assert any(shown in a for a in state["alerts"]), (key, state["alerts"])
                assert state["metrics"] > 0, key
                assert fetched == [], (key, fetched)
                page.close()
        finally:
            browser.close()
