"""Screenshots of every dashboard page at 1440 x 900 for the README (``docs/img/page_*.png``).

Run: ``.venv/bin/python scripts/take_screenshots.py [OUT_DIR]``. Starts ``streamlit run app.py`` on a free
port (the NVDP page uses whatever models ``NVDP_CACHE_DIR`` holds, or trains them on first visit), opens
each page in Debian's Chromium (``/usr/bin/chromium``) and saves the first screen.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_browser import CHROMIUM, CHROMIUM_ARGS, _streamlit_server  # noqa: E402

PAGES = {"home": "", "data": "data", "pmt": "pmt", "nvdp": "nvdp", "learn": "learn", "about": "about"}


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with _streamlit_server("streamlit_screenshots.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        for name, path in PAGES.items():
            page.goto(f"{url}/{path}", timeout=600_000)
            page.wait_for_selector('[data-testid="stMainBlockContainer"]', timeout=600_000)
            if name in ("pmt", "nvdp"):
                page.wait_for_selector(".js-plotly-plot .main-svg", timeout=600_000)
                page.wait_for_selector('[class*="st-key-verdict_"]', timeout=600_000)  # the verdict leads
            if name == "data":  # the tables and the uploader drawn, not their grey placeholders
                for sel in ('[data-testid="stDataFrame"] canvas', '[data-testid="stFileUploader"]', '[data-testid="stSelectbox"]'):
                    page.wait_for_selector(sel, state="visible", timeout=600_000)
            if name == "nvdp":  # the accuracy of the caps, not "computing ..."
                page.wait_for_function("() => !document.body.innerText.includes('computing ...')", timeout=600_000)
            # every element drawn: no skeleton placeholder (tables load after the page) and no run in progress
            page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')"
                                   " && !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=600_000)
            page.wait_for_timeout(4000)
            page.screenshot(path=str(out / f"page_{name}.png"))
            print("saved", out / f"page_{name}.png")
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img")
