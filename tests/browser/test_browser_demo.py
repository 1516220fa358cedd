"""Real browser at 1440 x 900: the answer above the fold, no truncated label, phone layout.

For the PMT and NVDP pages (normal and presenter mode) the verdict, the headline metrics and the whole main
figure's bounding box lie inside the first viewport, without scrolling; no widget label or metric label is cut off
(``scrollWidth > clientWidth`` on the label's text elements); the NVDP sidebar shows no PMT setting.
At 390 x 844 (phone) the PMT figure's title, subtitle and x-axis title lie inside the figure; on the NVDP page
and in Learn lesson 1, at both sizes, no figure's title, panel title, axis title, annotation or legend entry is
cut off or overlaps another title or a tick label (bounding boxes). Screenshots
go to ``/tmp/shots`` (override with ``DEMO_SHOTS``).

The NVDP page runs on a tiny model pair (60 sentences, 1 epoch) trained once into a temporary cache
(``NVDP_CACHE_DIR``) unless ``NVDP_CACHE_DIR`` already holds the page's default models.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, needs_chromium, served_app  # the harness: tests/conftest.py

SHOTS = Path(os.environ.get("DEMO_SHOTS", "/tmp/shots"))
VIEW = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
TINY = {"NVDP_PAGE_N_SENTENCES": "60", "NVDP_PAGE_EPOCHS": "1"}

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]

#: Text elements of widget labels, metric labels, buttons and tabs whose content is wider than their box.
TRUNCATED_JS = """() => {
  const sel = ['[data-testid="stWidgetLabel"] p', '[data-testid="stWidgetLabel"] div', '[data-testid="stMetricLabel"] p',
               '[data-testid="stMetricLabel"] div', '[data-testid="stMetricValue"] div',
               'button[data-testid^="stBaseButton"] p', '[data-testid="stTab"] p', '[data-baseweb="tag"] span',
               '[data-testid="stExpander"] summary p', '[data-testid="stCheckbox"] p'];
  const out = [];
  for (const el of document.querySelectorAll(sel.join(','))) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1) out.push(el.innerText.trim() + ' [' + el.scrollWidth + '>' + el.clientWidth + ']');
  }
  return out;
}"""

FOLD_JS = """() => {
  const vis = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 ? r : null; };
  const plot = Array.from(document.querySelectorAll('.js-plotly-plot')).map(vis).filter(Boolean)[0] || null;
  const metrics = Array.from(document.querySelectorAll('[data-testid="stMetric"]')).map(vis).filter(Boolean);
  const box = (r) => r && {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
  const verdict = document.querySelector('[class*="st-key-verdict_"]');
  return {plot: box(plot), metrics: metrics.map(box), verdict: box(verdict && vis(verdict)), scrollY: window.scrollY, vh: window.innerHeight,
          vw: window.innerWidth};
}"""

PHONE_FIG_JS = """() => {
  const gd = Array.from(document.querySelectorAll('.js-plotly-plot')).find(g => g.getBoundingClientRect().width > 0);
  if (!gd) return null;
  const fr = gd.getBoundingClientRect();
  const parts = {};
  for (const [name, sel] of [['title', '.g-gtitle text'], ['xtitle', '.g-xtitle text'], ['ytitle', '.g-ytitle text']]) {
    const el = gd.querySelector(sel);
    if (el) { const r = el.getBoundingClientRect(); parts[name] = {left: r.left - fr.left, right: r.right - fr.left,
                                                                   top: r.top - fr.top, bottom: r.bottom - fr.top}; }
  }
  return {width: fr.width, height: fr.height, parts: parts};
}"""


#: Per drawn figure: its text boxes (figure and panel titles, axis titles, annotations, legend entries, tick labels)
#: relative to the figure; ``clipped``: a title or legend entry outside the figure; ``overlaps``: two titles, or a
#: title and a tick label, on top of each other (tick labels among themselves and legend entries are not compared).
LABELS_JS = """() => {
  const out = [];
  const figs = Array.from(document.querySelectorAll('.js-plotly-plot')).filter(g => g.getBoundingClientRect().width > 0);
  figs.forEach((gd, i) => {
    const fr = gd.getBoundingClientRect();
    const items = [];
    const take = (sel, kind) => { for (const el of gd.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || !el.textContent.trim()) continue;
      const t = {kind: kind, text: el.textContent.trim().slice(0, 60), l: r.left - fr.left, r: r.right - fr.left,
                 t: r.top - fr.top, b: r.bottom - fr.top};
      if (!items.some(o => o.text === t.text && Math.abs(o.l - t.l) < 1 && Math.abs(o.t - t.t) < 1)) items.push(t);
    } };
    take('.g-gtitle text, .infolayer [class^="g-"][class$="title"] text, .annotation text', 'title');
    take('.legendtext', 'legend');
    take('.xaxislayer-above [class$="tick"] text, .yaxislayer-above [class$="tick"] text', 'tick');
    const tol = 3;  // an SVG text box includes the font's ascent above the glyphs
    const clipped = items.filter(a => a.kind !== 'tick' && (a.l < -tol || a.r > fr.width + tol || a.t < -tol || a.b > fr.height + tol));
    const over = [];
    for (let x = 0; x < items.length; x++) for (let y = x + 1; y < items.length; y++) {
      const a = items[x], b = items[y];
      if (a.kind === 'tick' && b.kind === 'tick') continue;
      if (a.kind === 'legend' || b.kind === 'legend') continue;
      if (a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1) over.push([a.text, b.text]);
    }
    out.push({fig: i, w: fr.width, h: fr.height, n: items.length, clipped: clipped, overlaps: over});
  });
  return out;
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    env = {}
    cache = os.environ.get("NVDP_CACHE_DIR")
    from engine.nvdp import explore as X

    if not (cache and X.cached_models_exist(X.ExploreSettings.from_env())):
        import torch

        path = tmp_path_factory.mktemp("nvdp_demo_cache")
        old = {k: os.environ.get(k) for k in (*TINY, "NVDP_CACHE_DIR")}
        os.environ.update(TINY, NVDP_CACHE_DIR=str(path))
        torch.set_num_threads(min(2, torch.get_num_threads()))
        try:
            X.load_or_train(X.ExploreSettings.from_env())
        finally:
            for k, v in old.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        env = dict(TINY, NVDP_CACHE_DIR=str(path))
    with served_app("streamlit_demo.log", extra_env=env) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _open(browser, url: str, viewport: dict, *, presenter: bool = False):
    page = browser.new_page(viewport=viewport)
    page.goto(url, timeout=180_000)
    _settle(page)
    if presenter:
        page.locator("label").filter(has_text="Presenter").first.click()
        page.wait_for_timeout(1000)
        _settle(page)
    return page


def _settle(page, timeout_s: float = 240):
    """Wait until a figure is drawn and Streamlit has finished running (no spinner / status 'running')."""
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot .main-svg'))"
                           ".some(e => e.getBoundingClientRect().width > 0)", timeout=timeout_s * 1000)
    for _ in range(int(timeout_s * 4)):
        running = page.locator('[data-testid="stStatusWidget"]').count()
        if not running:
            break
        page.wait_for_timeout(250)
    page.wait_for_timeout(1500)


def _assert_fold(page, what: str):
    st = page.evaluate(FOLD_JS)
    assert st["plot"] is not None, f"{what}: no figure drawn"
    assert st["scrollY"] == 0
    p = st["plot"]
    # the verdict in words and the headline numbers lead, and the whole main figure follows on the first screen
    assert 0 <= p["top"] and p["bottom"] <= st["vh"] and p["right"] <= st["vw"], f"{what}: figure {p} not inside {st['vh']}"
    v = st["verdict"]
    assert v is not None and 0 <= v["top"] and v["bottom"] <= p["top"], f"{what}: verdict {v} not above the figure"
    assert st["metrics"], f"{what}: no headline metric"
    first_row = [m for m in st["metrics"] if m["top"] < p["top"]]
    assert first_row and all(m["bottom"] <= st["vh"] for m in first_row), f"{what}: headline metrics {st['metrics']}"
    return st


@pytest.mark.parametrize("path,name", [("pmt", "PMT"), ("nvdp", "NVDP")])
@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_answer_above_the_fold_and_no_truncated_label(server, browser, path, name, presenter):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = _open(browser, f"{server}/{path}", VIEW, presenter=presenter)
    try:
        shot = SHOTS / f"{path}_{'presenter' if presenter else 'normal'}_1440x900.png"
        page.screenshot(path=str(shot))
        _assert_fold(page, f"{name} {'presenter' if presenter else 'normal'}")
        assert page.evaluate(TRUNCATED_JS) == []
        assert page.locator('[data-testid="stException"]').count() == 0
        if path == "nvdp":
            sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
            assert "Active settings" not in sidebar and "n_pub" not in sidebar and "NVDP settings" in sidebar
        # no Deploy button in the toolbar
        assert page.get_by_role("button", name="Deploy").count() == 0
    finally:
        page.close()


def test_phone_figure_titles_are_not_clipped(server, browser):
    page = _open(browser, f"{server}/pmt", PHONE)
    try:
        # the numbers come before the controls on a phone (they were ~1,700 px down)
        first_metric = page.evaluate("() => document.querySelector('[data-testid=\"stMetric\"]')"
                                     ".getBoundingClientRect().top + window.scrollY")
        assert first_metric < 700, first_metric
        fig = page.locator(".js-plotly-plot").first
        fig.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        page.screenshot(path=str(SHOTS / "pmt_phone_390x844.png"))
        fig.screenshot(path=str(SHOTS / "pmt_phone_figure.png"))
        st = page.evaluate(PHONE_FIG_JS)
        assert st is not None and {"title", "xtitle", "ytitle"} <= set(st["parts"]), st
        for name, r in st["parts"].items():
            assert r["left"] >= -1 and r["right"] <= st["width"] + 1 and r["top"] >= -1 and r["bottom"] <= st["height"] + 1, \
                (name, r, st["width"], st["height"])
    finally:
        page.close()


@pytest.mark.parametrize("size", [VIEW, PHONE], ids=lambda v: f"{v['width']}x{v['height']}")
@pytest.mark.parametrize("path", ["nvdp", "learn"])
def test_figure_labels_are_not_clipped_or_overlapping(server, browser, path, size):
    """The NVDP page's first tab (its two figures) and Learn lesson 1 (the open lesson), desktop and phone."""
    page = _open(browser, f"{server}/{path}", size)
    try:
        figs = page.evaluate(LABELS_JS)
        for k in range(page.locator(".js-plotly-plot").count()):
            page.locator(".js-plotly-plot").nth(k).screenshot(path=str(SHOTS / f"{path}_fig{k}_{size['width']}.png"))
        assert len(figs) >= (2 if path == "nvdp" else 1), figs
        for f in figs:
            assert f["n"] >= 5, f  # titles and ticks were found (the selectors still match Plotly's SVG)
            assert f["clipped"] == [] and f["overlaps"] == [], (path, size, f)
    finally:
        page.close()
