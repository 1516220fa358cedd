"""plotly.js and figure JSON, gzip-compressed and text-encoded inside one HTML file (the report's figures).

plotly.min.js is 4.8 MB: inlined as it is, it made every downloaded report about 5 MB. Compressed
with gzip (level 9, no time stamp: the same bytes every time) it is 1.47 MB, and written in base-85
(RFC 1924 alphabet, Python's :func:`base64.b85encode`) 1.84 MB. The browser decodes it and
decompresses it with the standard ``DecompressionStream('gzip')`` (Chromium 80, Firefox 113,
Safari 16.4 and later), then draws each figure with ``Plotly.newPlot`` from its JSON (compressed
the same way). Nothing is fetched: the file stays self-contained and opens offline. A browser
without ``DecompressionStream`` shows a sentence saying so in place of each figure.

The encoded text sits in ``<script type="application/octet-stream">`` elements (never executed).
Base-85's alphabet has ``<``, ``>`` and ``&``; they are written as ``.``, ``:`` and ``,`` (three
printable characters the alphabet leaves out), so the text holds no markup character at all: it
cannot end the element, open a comment or look like a tag. plotly.js is compressed once per
process (:func:`plotlyjs_blob`, about 0.3 s). No Streamlit here.
"""

from __future__ import annotations

import base64
import functools
import gzip

__all__ = ["pack", "unpack", "plotlyjs_blob", "blob_element", "LOADER_JS"]


#: Base-85 characters that are markup in HTML -> printable characters outside the base-85 alphabet.
_HTML_SAFE = str.maketrans({"<": ".", ">": ":", "&": ","})


def pack(data: bytes) -> tuple[str, str]:
    """``(encoding, text)`` of gzip-compressed ``data``: base-85 with ``<>&`` written as ``.:,`` ("b85h")."""
    gz = gzip.compress(data, compresslevel=9, mtime=0)
    return "b85h", base64.b85encode(gz).decode("ascii").translate(_HTML_SAFE)


def unpack(encoding: str, text: str) -> bytes:
    """Inverse of :func:`pack` (what the browser's loader does)."""
    if encoding != "b85h":
        raise ValueError(f"unknown encoding {encoding!r}")
    return gzip.decompress(base64.b85decode(text.translate(str.maketrans(".:,", "<>&"))))


@functools.lru_cache(maxsize=1)
def plotlyjs_blob() -> tuple[str, str, str]:
    """``(encoding, text, version)`` of the installed plotly.js (compressed once per process)."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    return (*pack(get_plotlyjs().encode("utf-8")), get_plotlyjs_version())


def blob_element(element_id: str, encoding: str, text: str, **data_attrs: str) -> str:
    """The ``<script type="application/octet-stream">`` element holding one packed blob."""
    extra = "".join(f' data-{k}="{v}"' for k, v in data_attrs.items())
    return (f'<script type="application/octet-stream" id="{element_id}" data-encoding="{encoding}"{extra}>'
            f"{text}</script>")


#: Decodes the blobs, runs plotly.js, draws every figure of ``#report-figures-packed`` into its div.
LOADER_JS = r"""
(async () => {
  const A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%,()*+-;.=:?@^_`{|}~";
  const T = new Int16Array(128).fill(-1);
  for (let i = 0; i < 85; i++) T[A.charCodeAt(i)] = i;
  const b85 = (s) => {
    const n = s.length, rem = n % 5, out = new Uint8Array(Math.floor(n / 5) * 4 + (rem ? rem - 1 : 0));
    let o = 0;
    for (let i = 0; i < n; i += 5) {
      let acc = 0;
      for (let j = 0; j < 5; j++) acc = acc * 85 + (i + j < n ? T[s.charCodeAt(i + j)] : 84);
      const take = n - i >= 5 ? 4 : n - i - 1;
      for (let k = 0; k < take; k++) out[o++] = Math.floor(acc / 2 ** (24 - 8 * k)) % 256;
    }
    return out;
  };
  const unpack = async (id) => {
    const el = document.getElementById(id), s = el.textContent.trim();
    if (el.dataset.encoding !== "b85h") throw new Error("unknown encoding " + el.dataset.encoding);
    const bytes = b85(s);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).text();
  };
  try {
    if (typeof DecompressionStream === "undefined") throw new Error("this browser has no DecompressionStream");
    if (typeof window.Plotly === "undefined") {
      const sc = document.createElement("script");
      sc.textContent = await unpack("plotlyjs-packed");
      document.head.appendChild(sc);
    }
    for (const f of JSON.parse(await unpack("report-figures-packed"))) {
      await Plotly.newPlot(f.id, f.data, f.layout, f.config);
    }
  } catch (e) {
    document.querySelectorAll(".plotly-graph-div").forEach((d) => {
      d.textContent = "The interactive figures need a browser from 2023 or later (" + e + ").";
    });
  }
})();
"""
