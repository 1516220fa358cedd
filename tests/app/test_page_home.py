"""AppTest: the Home page and the About page render inside the frame, with their links and citations."""

from __future__ import annotations

from pathlib import Path

from conftest import new_app  # the harness: tests/conftest.py


ROOT = Path(__file__).resolve().parents[2]


def test_home_renders_with_one_click_link_to_pmt_and_settings_summary():
    at = new_app().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Privacy-utility explorer"
    links = [el for el in at.get("page_link")]
    labels = [el.proto.label for el in links]
    assert "Explore PMT on real data" in labels
    pmt_link = links[labels.index("Explore PMT on real data")].proto
    assert pmt_link.page.endswith("pmt")
    summary = " ".join(md.value for md in at.sidebar.markdown)
    assert "**Data:** ccpp" in summary and "**epsilon** = 1" in summary and "**n_pub** = 200" in summary


def test_about_page_lists_papers_citations_and_cli():
    at = new_app("about").run()
    assert not at.exception, at.exception
    text = " ".join(md.value for md in at.markdown)
    for arxiv in ("2602.22282", "2508.18037", "2603.09583", "2601.02307"):
        assert arxiv in text
    for doi in ("10.24432/C56S3T", "10.24432/C5002N", "10.24432/C5K306", "10.24432/C57604"):
        assert doi in text, doi
    assert "CC BY 4.0" in text or "Creative Commons Attribution 4.0" in text
    code = " ".join(c.value for c in at.code)
    assert "python -m engine privacy --epsilon 1 --delta 1e-5" in code and "python -m engine pmt" in code
    # the results tables in docs/ are embedded (or the page says there are none yet)
    docs = sorted((ROOT / "docs").glob("*.md")) if (ROOT / "docs").is_dir() else []
    developer = {"CONVENTIONS.md", "DASHBOARD.md", "architecture.md", "README.md"}  # not for users: not listed
    if docs:
        labels = {e.label for e in at.expander}
        assert {f"docs/{p.name}" for p in docs if p.name not in developer} <= labels
        assert not {f"docs/{n}" for n in developer} & labels
    else:
        assert any("No results tables" in i.value for i in at.info)
