"""User-supplied text shown inside Markdown: data, never markup (no Streamlit here).

A value from a link (``?upload=...``, ``?data=...``, any rejected parameter), a file name or a column name is
written into messages that Streamlit renders as Markdown (GitHub-flavoured: links, images, bare-URL autolinks,
``:material/...:`` icons, ``:red[...]`` colours, LaTeX between ``$``, raw HTML dropped but tags parsed).
:func:`md_escape` makes such a value plain text: every ASCII punctuation character gets a backslash (CommonMark
allows escaping any of them; ``.`` and ``-`` are left as they are, mid-sentence they are no markup), an
invisible word joiner (U+2060) breaks the bare-URL and e-mail autolinks (``_AUTOLINK``: GitHub-flavoured
Markdown finds them in the rendered text, after the escapes are resolved),
line breaks become spaces, and the value is cut to a bounded length.
"""

from __future__ import annotations

import re
import string

__all__ = ["md_escape", "md_name", "MAX_SHOWN_CHARS"]

#: Longest user value shown back in a message (characters, before escaping).
MAX_SHOWN_CHARS = 80

_ESCAPES = {ord(c): "\\" + c for c in string.punctuation if c not in ".-"}
_ESCAPES.update({ord("\n"): " ", ord("\r"): " ", ord("\t"): " ", ord("\u2028"): " ", ord("\u2029"): " "})


def md_escape(value, limit: int = MAX_SHOWN_CHARS) -> str:
    """``value`` as plain text inside Markdown: punctuation escaped, line breaks removed, cut to ``limit`` characters.

    Examples
    --------
    >>> md_escape("[Upload it again here](https://example.org)")
    '\\\\[Upload it again here\\\\]\\\\(https\\\\:\\u2060\\\\/\\\\/example.org\\\\)'
    >>> md_escape("see www.example.org or a@b.org")
    'see www\\u2060.example.org or a\\u2060\\\\@b.org'
    >>> md_escape("x" * 100, limit=10)
    'xxxxxxxxxx... (100 characters)'
    """
    text = str(value)
    cut = len(text) > limit
    shown = _AUTOLINK.sub(lambda m: m.group(0)[:-1] + _JOINER + m.group(0)[-1], text[:limit]).translate(_ESCAPES)
    return shown + (f"... ({len(text)} characters)" if cut else "")


#: GitHub-flavoured Markdown links bare ``https://...``, ``www.`` and ``name@host`` in the *rendered* text (after
#: escapes are resolved), so a backslash cannot stop them: an invisible WORD JOINER (U+2060) goes between the
#: parts the autolink needs next to each other (``:`` and ``//``, ``www`` and ``.``, the name and ``@``).
_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i):/|www\.|[-.\w+]@")


def md_name(name, limit: int = MAX_SHOWN_CHARS) -> str:
    """A data set's name for Markdown: the app's own ``upload:`` prefix kept, the rest (a file name) escaped.

    >>> md_name("upload:[x](https://e.org).csv")
    'upload:\\\\[x\\\\]\\\\(https\\\\:\\u2060\\\\/\\\\/e.org\\\\).csv'
    """
    name = str(name)
    if name.startswith("upload:"):
        return "upload:" + md_escape(name[len("upload:"):], limit)
    return md_escape(name, limit)
