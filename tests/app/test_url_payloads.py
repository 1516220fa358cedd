"""Link values are data, never markup: AppTest flows of hostile query parameters.

Every value a link carries and the page shows back is escaped (no link, image, icon or colour directive can come
from a URL); every out-of-range value is ignored with a one-line note naming it, and the page still computes.
The real browser's DOM is read in tests/browser/test_browser_url_payloads.py.
"""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest


from engine.markup import md_escape, md_name

from conftest import new_app  # the harness: tests/conftest.py

TIMEOUT = 240

#: Markdown that would make a link, an image, an HTML tag or a Streamlit directive, unescaped.
MARKUP = re.compile(r"(?<!\\)\]\((?!\s)|(?<!\\)!\[|(?<!\\)<img|(?<!\\)<a |https?://|(?<!\\):material/home"
                    r"|(?<!\\):red\[")
#: Words of the payloads: a text holding one of them shows a link value back.
PAYLOAD_WORDS = ("example", "Upload it again", "big")

PAYLOADS = {  # parameter -> (value, the note's fragment or None when the value is shown back as a lost upload)
    "upload": ("[Upload it again here](https://example.org)", "is not here any more"),
    "data": ("![x](https://example.org/i.png)", "names no data set"),
    "epsilon": ("[a](https://example.org)", "was ignored"),
    "metric": ("<img src=https://example.org/x.png>", "unknown metric"),
    "lam": (":red[big] :material/home:", "was ignored"),
}


def _texts(at) -> list[str]:
    els = list(at.warning) + list(at.error) + list(at.markdown) + list(at.caption) + list(at.info)
    els += list(at.sidebar.warning) + list(at.sidebar.markdown) + list(at.sidebar.caption)
    return [str(e.value) for e in els]


def test_md_escape_leaves_no_markup():
    for value, _ in PAYLOADS.values():
        assert not MARKUP.search(md_escape(value)), md_escape(value)
    assert md_name("upload:clicks.csv") == "upload:clicks.csv"  # plain names read as they are
    assert md_escape("www.example.org") == "www\u2060.example.org"  # no bare-URL autolink
    assert len(md_escape("x" * 10_000)) < 120


@pytest.mark.parametrize("key", list(PAYLOADS))
def test_a_hostile_link_value_is_shown_as_text_and_the_page_works(key):
    value, fragment = PAYLOADS[key]
    at = new_app("pmt", timeout=TIMEOUT, query={key: value}, seeds=2).run()
    assert not at.exception, [e.message for e in at.exception]
    texts = _texts(at)
    notes = [t for t in texts if fragment in t]
    assert notes, (key, texts[:5])
    assert any(md_escape(value)[:20] in t for t in notes), (key, notes)  # the value itself, escaped
    shown = [t for t in texts if any(w in t for w in PAYLOAD_WORDS)]
    assert shown
    for t in shown:
        assert not MARKUP.search(t), (key, t)
    assert len(at.metric) > 0  # the page computed


@pytest.mark.parametrize(("key", "value", "fragment"), [
    ("n_pub", "9568", "n_pub=9568 was ignored"),  # ccpp has 9568 rows: n_pub >= n
    ("n_pub", "9560", "n_pub=9560 was ignored"),  # leaves 8 private rows
    ("clip_radius", "1e-200", "clip_radius=1e-200 was ignored"),
    ("metric", "bogus", "unknown metric"),
    ("metric", "auc", "metric=auc does not apply to"),  # a classification metric on the regression page
])
def test_an_out_of_range_link_value_is_ignored_with_a_note(key, value, fragment):
    at = new_app("pmt", timeout=TIMEOUT, query={key: value}, seeds=2).run()
    assert not at.exception, [e.message for e in at.exception]
    warnings = [w.value for w in at.warning]
    assert sum(fragment in w for w in warnings) == 1, warnings
    assert not at.error, [e.value for e in at.error]
    assert len(at.metric) > 0  # the page computed with the default instead


def test_nvdp_link_value_is_escaped():
    at = new_app("nvdp", timeout=TIMEOUT, query={"C_mu": "[x](https://example.org)"}).run()
    assert not at.exception, [e.message for e in at.exception]
    notes = [w.value for w in at.warning if "was ignored" in w.value]
    assert notes and all(not MARKUP.search(n) for n in notes), notes
