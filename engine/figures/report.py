"""Exports a stakeholder can open anywhere: a self-contained HTML report and injection-safe CSV.

:func:`html_report` writes one HTML file holding the headline numbers, the figures (plotly.js and
the figures' JSON inlined once, gzip-compressed and decoded in the browser, so the figures stay
interactive, nothing is fetched from the network and the file is about 2 MB instead of 5:
:mod:`engine.figures._packed_html`), the settings, the privacy ledger, the data's provenance and licence, and the commands that
reproduce it. Every string that may come from a user (file and column names, typed sentences, labels
built from them) is HTML-escaped; the figures' JSON is compressed (never parsed as HTML), so a name
cannot close a ``<script>``.

:func:`safe_csv` writes a frame as CSV with the text cells a spreadsheet would run as a formula
(starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return; OWASP "CSV injection")
prefixed by a single quote. Numbers stay numbers (``-1.5`` in a numeric column is untouched), and
text that is just a number (``"-2"``) is left as it is, since a spreadsheet reads it as that number.

No Streamlit here: the pages call these and hand the result to ``st.download_button``.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
import re
from collections.abc import Mapping, Sequence

import pandas as pd

#: First characters that make a spreadsheet evaluate a cell (OWASP: CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise_cell(value):
    """A text cell made inert for spreadsheets; any other value unchanged.

    Parameters
    ----------
    value : object
        A cell. Only ``str`` values are changed.

    Returns
    -------
    object
        ``"'" + value`` for a string starting with one of :data:`FORMULA_PREFIXES` that is not a plain
        number; otherwise ``value`` itself.

    Examples
    --------
    >>> neutralise_cell("=1+1"), neutralise_cell("@SUM(A1)"), neutralise_cell("-2"), neutralise_cell(-2.5)
    ("'=1+1", "'@SUM(A1)", '-2', -2.5)
    >>> neutralise_cell("-1+cmd|' /C calc'!A0")
    "'-1+cmd|' /C calc'!A0"
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell and column name passed through :func:`neutralise_cell`.

    Numeric, boolean and datetime columns are not touched (their values keep their type).
    """
    out = frame.copy()
    for c in out.columns:
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c]):
            out[c] = out[c].map(neutralise_cell)
    out.columns = [neutralise_cell(str(c)) for c in out.columns]
    return out


def safe_csv(frame: pd.DataFrame, **to_csv_kwargs) -> str:
    """``frame`` as CSV text (no index by default) with formula-like text cells neutralised.

    Examples
    --------
    >>> print(safe_csv(pd.DataFrame({"=1+1": ["=cmd()", "ok"], "x": [-1.5, 2.0]})), end="")
    '=1+1,x
    '=cmd(),-1.5
    ok,2.0
    """
    to_csv_kwargs.setdefault("index", False)
    return safe_frame(frame).to_csv(**to_csv_kwargs)


def fmt_ratio(r: float, digits: int = 2) -> str:
    """A ratio as people read it: ``"0.25x"``, ``"3.4x"``, ``"200x"``, ``"1.2e4x"`` (never ``"2e+02x"``).

    Parameters
    ----------
    r : float
        The ratio (>= 0; nan and inf are printed as ``"n/a"`` and ``"infx"``).
    digits : int, default 2
        Significant digits.

    Examples
    --------
    >>> [fmt_ratio(v) for v in (0.25, 3.41, 200.0, 1234.0, 12345.0, 0.00123, float("inf"))]
    ['0.25x', '3.4x', '200x', '1200x', '1.2e4x', '1.2e-3x', 'infx']
    """
    r = float(r)
    if math.isnan(r):
        return "n/a"
    if math.isinf(r):
        return "infx"
    if r == 0:
        return "0x"
    r = float(f"{r:.{digits - 1}e}")  # rounded to the significant digits first (0.999 -> 1.0)
    exp = math.floor(math.log10(abs(r)))
    if -2 <= exp < 4:
        return f"{r:.{max(digits - 1 - exp, 0)}f}x"
    return f"{r / 10 ** exp:.{digits - 1}f}e{exp}x"


_NUMBERED = re.compile(r"^(.*?)\s*(\d+)$")


def collapse_ledger(frame: pd.DataFrame) -> pd.DataFrame:
    """A ledger with runs of identical releases collapsed to one row and a count.

    Consecutive rows whose name differs only by a trailing number ("gradient step 1" ... "gradient step
    100") and whose other columns are equal become one row named "gradient step 1-100" with ``count``
    100. Every other row keeps ``count`` 1. Nothing is recomputed: the composed total row stays as the
    engine wrote it.

    Parameters
    ----------
    frame : DataFrame
        A ledger frame (column ``name`` and the release's columns), numbers or display strings.

    Returns
    -------
    DataFrame
        The same columns with ``count`` after ``name``.

    Examples
    --------
    >>> f = pd.DataFrame({"name": ["step 1", "step 2", "step 3", "total"], "mu": [0.1, 0.1, 0.1, 0.17]})
    >>> collapse_ledger(f).values.tolist()
    [['step 1-3', 3, 0.1], ['total', 1, 0.17]]
    """
    if frame.empty or "name" not in frame.columns:
        return frame.assign(count=[])[["name", "count", *[c for c in frame.columns if c != "name"]]] \
            if "name" in frame.columns else frame
    rest = [c for c in frame.columns if c != "name"]
    rows: list[list] = []
    runs: list[tuple] = []  # (stem, first number, last number, values)
    for rec in frame.itertuples(index=False):
        name = str(getattr(rec, "name") if hasattr(rec, "name") else rec[0])
        vals = tuple(rec[list(frame.columns).index(c)] for c in rest)
        m = _NUMBERED.match(name)
        key = tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in vals)
        if m and runs and runs[-1][0] == m.group(1) and runs[-1][3] == key and int(m.group(2)) == runs[-1][2] + 1:
            stem, first, _, k = runs[-1]
            runs[-1] = (stem, first, int(m.group(2)), k)
            rows[-1][1] += 1
            rows[-1][0] = f"{stem} {first}-{int(m.group(2))}"
            continue
        runs.append((m.group(1), int(m.group(2)), int(m.group(2)), key) if m else (None, 0, 0, key))
        rows.append([name, 1, *vals])
    return pd.DataFrame(rows, columns=["name", "count", *rest])


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return "inf" if math.isinf(value) else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _table(rows: Sequence[Sequence], header: Sequence[str] | None = None, cls: str = "kv") -> str:
    out = [f'<table class="{cls}">']
    if header:
        out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead>")
    out.append("<tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_e(_fmt(v))}</td>" for v in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _frame_table(frame: pd.DataFrame) -> str:
    return _table(frame.itertuples(index=False), header=[str(c) for c in frame.columns], cls="grid")


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1B1F24;margin:2rem auto;max-width:1100px;
padding:0 1rem;line-height:1.45}
h1{font-size:1.7rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #dde3ea}
.sub{color:#556;margin-top:0}.cards{display:flex;flex-wrap:wrap;gap:.8rem;margin:1rem 0}
.card{border:1px solid #dde3ea;border-radius:8px;padding:.6rem .9rem;min-width:9rem;background:#F3F6F9}
.card .label{font-size:.85rem;color:#445}.card .value{font-size:1.7rem;font-weight:600}
.card .note{font-size:.78rem;color:#556}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #dde3ea;padding:.25rem .6rem;text-align:left;
font-size:.9rem;vertical-align:top}th{background:#F3F6F9}pre{background:#F3F6F9;padding:.7rem;white-space:pre-wrap;
word-break:break-all;border-radius:6px}.figure{margin:1rem 0}.fine{font-size:.8rem;color:#556}
.verdict{font-size:1.15rem;font-weight:600;padding:.6rem .9rem;border-radius:8px;border:1px solid}
.verdict .badge{font-size:.75rem;font-weight:600;color:#444;background:#E6E6E6;border-radius:4px;padding:.1rem .4rem;
margin-right:.4rem;vertical-align:middle}
.verdict.good{color:#0B6B2E;background:#E8F6EC;border-color:#9BD3AE}
.verdict.bad{color:#9B1C1C;background:#FDECEC;border-color:#F0A8A8}
.verdict.neutral{color:#1D4E89;background:#EAF2FB;border-color:#A9C7EA}
.warn{color:#7A4B00;background:#FFF6E0;border:1px solid #F2D28B;border-radius:6px;padding:.4rem .7rem;margin:.4rem 0}
"""


_FIGURE_CONFIG = {"displaylogo": False, "responsive": True, "toImageButtonOptions": {"format": "png", "scale": 3}}


def _figures_html(figures) -> str:
    """The figures' divs, plotly.js and their JSON packed once each (:mod:`engine.figures._packed_html`)."""
    import json

    from engine.figures._packed_html import LOADER_JS, blob_element, pack, plotlyjs_blob

    divs, specs = [], []
    for i, (caption, fig) in enumerate(figures):
        fid = f"figure-{i}"
        height = int(fig.layout.height or 450)
        divs.append(f"<div class='figure'><p><b>{_e(caption)}</b></p><div id='{fid}' class=\"plotly-graph-div\" "
                    f"style='height:{height}px; width:100%;'></div></div>")
        # Plotly's own JSON of the figure (numpy arrays as typed-array blocks), with the div and the config
        specs.append(f'{{"id": "{fid}", "config": {json.dumps(_FIGURE_CONFIG)}, ' + fig.to_json()[1:])
    enc_js, text_js, version = plotlyjs_blob()
    enc_f, text_f = pack(("[" + ",".join(specs) + "]").encode("utf-8"))
    return ("".join(divs) + f"<!-- plotly.js v{version}, gzip-compressed, decoded in the browser -->"
            + blob_element("plotlyjs-packed", enc_js, text_js) + blob_element("report-figures-packed", enc_f, text_f)
            + f"<script>{LOADER_JS}</script>")


def _plain_figures(figures) -> list[str]:
    """Plotly's own HTML export, plotly.js inlined once (about 4.8 MB)."""
    out, first = [], True
    for i, (caption, fig) in enumerate(figures):
        div = fig.to_html(full_html=False, include_plotlyjs=True if first else False, div_id=f"figure-{i}",
                          config=_FIGURE_CONFIG)
        first = False
        out.append(f"<div class='figure'><p><b>{_e(caption)}</b></p>{div}</div>")
    return out


def html_report(
    *,
    title: str,
    subtitle: str = "",
    headline: Sequence[tuple] = (),
    figures: Sequence[tuple] = (),
    settings: Mapping | None = None,
    ledgers: Mapping[str, pd.DataFrame] | None = None,
    provenance: Mapping | None = None,
    commands: Sequence[str] = (),
    notes: Sequence[str] = (),
    generated: str | None = None,
    verdict: tuple[str, str] | None = None,
    warnings: Sequence[str] = (),
    compress: bool = True,
) -> str:
    """One self-contained HTML page (plotly.js inlined once, compressed; opens offline) for a dashboard view.

    Parameters
    ----------
    title, subtitle : str
        Page heading and the line under it.
    headline : sequence of (label, value) or (label, value, note)
        The headline numbers, drawn as cards; ``value`` is shown as given (format it first).
    figures : sequence of (caption, plotly.graph_objects.Figure)
        The figures, in order; each stays interactive (zoom, hover, legend toggles).
    settings : mapping, optional
        Setting name -> value.
    ledgers : mapping of str to DataFrame, optional
        Method -> its privacy ledger (one row per noisy release and a composed total).
    provenance : mapping, optional
        Facts about the data (name, rows, source, DOI, licence, ...).
    commands : sequence of str
        Shell commands that reproduce the numbers.
    notes : sequence of str
        Extra sentences (shown under the headline).
    generated : str, optional
        Time stamp (default: now, UTC).
    verdict : (text, tone) or (text, tone, label), optional
        The page's verdict sentence (:mod:`engine.figures.verdict`), shown first, coloured by tone
        ("good", "bad", "neutral"), with its privacy label (default "non-private diagnostic": every verdict
        compares errors on held-out private rows without noise) and the note of
        :data:`engine.figures.verdict.VERDICT_NOTE`.
    warnings : sequence of str
        The page's warnings, shown right after the verdict (before the numbers).
    compress : bool, default True
        Inline plotly.js gzip-compressed (base85 text, unpacked by the browser's own
        ``DecompressionStream``; Chrome 80, Firefox 113, Safari 16.4 or later) and the figures as JSON:
        about 2 MB instead of 5 MB, still offline. False: Plotly's own HTML export (plotly.js as is).

    Returns
    -------
    str
        The HTML document. Every string argument is escaped (user-provided names cannot inject markup);
        the figures' JSON is Plotly's, which escapes ``<``.
    """
    generated = generated or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{_e(title)}</h1>"]
    if subtitle:
        parts.append(f"<p class='sub'>{_e(subtitle)}</p>")
    parts.append(f"<p class='fine'>Generated {_e(generated)} by the privacy-utility explorer. The figures are "
                 "interactive (hover, zoom, click a legend entry) and need no network.</p>")
    if verdict:
        from engine.privacy.labels import VERDICT_NOTE

        label = verdict[2] if len(verdict) > 2 else "non-private diagnostic"
        parts.append(f"<p class='verdict {_e(verdict[1])}' id='verdict'><span class='badge' id='verdict-label' "
                     f"title='{_e(VERDICT_NOTE)}'>{_e(label)}</span> {_e(verdict[0])}</p>")
        parts.append(f"<p class='fine' id='verdict-note'>{_e(VERDICT_NOTE)}</p>")
    if warnings:
        parts.append("<div id='warnings'>" + "".join(f"<p class='warn'>&#9888; {_e(w)}</p>" for w in warnings)
                     + "</div>")
    if headline:
        parts.append("<h2>Headline numbers</h2><div class='cards' id='headline'>")
        for item in headline:
            label, value = item[0], item[1]
            note = item[2] if len(item) > 2 else ""
            parts.append(f"<div class='card'><div class='label'>{_e(label)}</div><div class='value'>{_e(value)}</div>"
                         + (f"<div class='note'>{_e(note)}</div>" if note else "") + "</div>")
        parts.append("</div>")
    for n in notes:
        parts.append(f"<p>{_e(n)}</p>")
    if figures:
        parts.append("<h2>Figures</h2>")
        parts += [_figures_html(figures)] if compress else _plain_figures(figures)
    if settings:
        parts.append("<h2>Settings</h2>" + _table(list(settings.items()), header=["setting", "value"]))
    if ledgers:
        parts.append("<h2>Privacy ledger</h2><p>Every noisy release with its sensitivity, noise scale and "
                     "Gaussian-DP cost; the total row composes them.</p>")
        parts.append("<p class='fine'>Runs of identical releases (e.g. one per gradient step) are one row with "
                     "their count.</p>")
        for method, frame in ledgers.items():
            parts.append(f"<h3>{_e(method)}</h3>" + _frame_table(collapse_ledger(frame)))
    if provenance:
        parts.append("<h2>Data: provenance and licence</h2>" + _table(list(provenance.items()), header=["", ""]))
    if commands:
        parts.append("<h2>Reproduce from a terminal</h2><p>In the project folder (<code>./run.sh</code> creates "
                     "<code>.venv</code>):</p>")
        parts.append("<pre id='commands'>" + "\n\n".join(_e(c) for c in commands) + "</pre>")
    parts.append("</body></html>")
    return "".join(parts)
