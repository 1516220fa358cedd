"""The README's screenshots: one per page of the app (scripts/take_screenshots.py writes them)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _app_pages() -> list[str]:
    """The page files ``app.py`` routes to (``st.Page("app_pages/<name>.py", ...)``)."""
    tree = ast.parse((ROOT / "app.py").read_text())
    return [Path(n.args[0].value).stem for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Page" and n.args
            and isinstance(n.args[0], ast.Constant)]


def test_every_page_has_a_current_screenshot_in_the_readme():
    src = (ROOT / "scripts" / "take_screenshots.py").read_text()
    pages = _app_pages()
    assert len(pages) == 6, pages
    readme = (ROOT / "README.md").read_text()
    for name in pages:
        assert f'"{name}"' in src, f"scripts/take_screenshots.py does not shoot the {name} page"
        png = ROOT / "docs" / "img" / f"page_{name}.png"
        assert png.is_file() and png.stat().st_size > 20_000, png  # a real screenshot, not an empty file
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        assert f"docs/img/page_{name}.png" in readme, name
