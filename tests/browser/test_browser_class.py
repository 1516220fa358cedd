"""Class mode in a real browser: presenter links on PMT, NVDP and each Learn lesson at 1440 x 900 and 1280 x 720
(the verdict and the main figure start on the first screen, PMT's and NVDP's whole figure at 1440 x 900, figure
text at least 16 px, no overlapping figure titles), no request leaves the server (favicon and fonts included),
and the lessons' titles do not overlap on a phone (390 x 844).

Uses the server and browser of tests/browser/test_browser_demo.py (Debian's chromium; skipped without it).
"""

from __future__ import annotations

import pytest

from test_browser_demo import FOLD_JS, LABELS_JS, _settle, browser, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

#: Smallest font (px) of any text drawn in the first visible figure.
MIN_FONT_JS = """() => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot')).find(g => g.getBoundingClientRect().width > 0);
  if (!gd) return null;
  const sizes = Array.from(gd.querySelectorAll('text')).filter(t => t.getBoundingClientRect().width > 0 && t.textContent.trim())
                     .map(t => parseFloat(getComputedStyle(t).fontSize));
  return sizes.length ? Math.min(...sizes) : null;
}"""

VIEWS = [{"width": 1440, "height": 900}, {"width": 1280, "height": 720}]
PAGES = ["pmt?presenter=1", "nvdp?presenter=1"] + [f"learn?lesson={n}&presenter=1" for n in range(1, 6)]


def _open(browser, url, viewport):  # noqa: F811 - the fixture object, passed on
    page = browser.new_page(viewport=viewport)
    outside = []
    base = url.split("/", 3)[:3]
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("/".join(base), "data:", "blob:"))
            else None)
    page.goto(url, timeout=300_000)
    _settle(page, 400)
    return page, outside


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: f"{v['width']}x{v['height']}")
@pytest.mark.parametrize("path", PAGES)
def test_presenter_link_first_screen(server, browser, path, view):  # noqa: F811
    page, outside = _open(browser, f"{server}/{path}", view)
    try:
        assert page.locator('[data-testid="stException"]').count() == 0
        st = page.evaluate(FOLD_JS)
        p = st["plot"]
        assert p is not None and 0 <= p["top"] < st["vh"], f"{path}: the main figure does not start on screen: {p}"
        if not path.startswith("learn"):
            v = st["verdict"]
            assert v is not None and 0 <= v["top"] and v["bottom"] <= p["top"], f"{path}: verdict {v}"
            if view["height"] == 900:
                assert p["bottom"] <= st["vh"], f"{path}: figure {p} does not end on the first screen"
        assert page.evaluate(MIN_FONT_JS) >= 16, f"{path}: figure text smaller than 16 px"
        for fig in page.evaluate(LABELS_JS):
            assert not fig["overlaps"], f"{path}: overlapping figure labels {fig['overlaps']}"
            assert not fig["clipped"], f"{path}: clipped figure labels {fig['clipped']}"
        # presenter mode keeps a way between pages (the sidebar is hidden)
        assert page.get_by_role("button", name="Pages").count() == 1
        assert outside == [], f"{path}: requests outside the server: {outside}"
    finally:
        page.close()


@pytest.mark.parametrize("lesson", [1, 2, 3, 4, 5])
def test_lessons_on_a_phone_have_no_overlapping_titles(server, browser, lesson):  # noqa: F811
    page, outside = _open(browser, f"{server}/learn?lesson={lesson}", {"width": 390, "height": 844})
    try:
        figs = page.evaluate(LABELS_JS)
        assert figs, f"lesson {lesson}: no figure"
        for fig in figs:
            assert not fig["overlaps"], f"lesson {lesson}: overlapping titles {fig['overlaps']}"
        assert outside == []
    finally:
        page.close()


def test_home_and_data_make_no_outside_request(server, browser):  # noqa: F811
    for path in ("", "data"):
        page = browser.new_page(viewport=VIEWS[0])
        outside = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((server, "data:", "blob:")) else None)
        page.goto(f"{server}/{path}", timeout=300_000)
        page.wait_for_timeout(4000)
        page.close()
        assert outside == [], f"/{path}: {outside}"
