"""HTML renderer: one self-contained file (inline CSS, charts as inline SVG, nothing to fetch).

Block text is inline Markdown; markdown-it renders it GFM-correctly with raw HTML turned off, so
anything from a profile or a pack arrives escaped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from advisor.core.version import __version__
from advisor.report import charts
from advisor.report.document import Block, Document
from advisor.report.table_fit import fits_unbroken, plain_text
from advisor.report.templates import environment

PAGE_SIZES = {"a4": "A4", "letter": "Letter"}


def _markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])


PDF_DPI = 200  # print resolution: the chart spans the text width, about 6.6 in, so ~190 px per inch


def chart_job(spec: dict[str, Any], embed: str) -> charts.ChartJob:
    """Inline SVG for screens; for the PDF a PNG, which WeasyPrint draws far faster than matplotlib's SVG
    paths, rendered at print resolution and opaque (WeasyPrint would split an alpha channel out and encode
    the image twice)."""
    return charts.ChartJob(spec, "svg") if embed == "svg" else charts.ChartJob(spec, "png", PDF_DPI, opaque=True)


def _chart(spec: dict[str, Any], embed: str, drawn: Mapping[str, bytes]) -> Markup:
    """The SVG itself, or for the PDF a link the PDF renderer serves (report/pdf.py): the charts may still
    be drawn while WeasyPrint parses and styles the page."""
    if embed == "png":
        return Markup(f'<img alt="" src="{charts.CHART_SCHEME}{charts.key(spec)}">')
    return Markup((drawn.get(charts.key(spec)) or charts.draw(chart_job(spec, embed))).decode("utf-8"))


# A token this long (a path, a hash, a metric name) may make a table wider than the page: only the
# cells holding one may wrap anywhere, and in the PDF only in a table that might not fit its page
# (report/table_fit.py). WeasyPrint sizes a column by trying a line break at every character such a
# cell has: `anywhere` on every cell was a third of the PDF's layout time.
LONG_TOKEN = re.compile(r"\S{24,}")
WIDE_TABLE_COLUMNS = 9  # from here on a table is set smaller to fit an A4 page (the ncu kernel ranking has 11)


def _cell(html: Markup, may_wrap: bool, embed: str) -> dict[str, Any]:
    """A long token gets break points after its separators; only a run still long without one (a hash) needs
    `overflow-wrap: anywhere`, whose break at every character costs the PDF's table layout most of its time."""
    if not (may_wrap and LONG_TOKEN.search(plain_text(html))):
        return {"html": html, "wrap": False}
    broken = separator_breaks(html, SOFT_BREAK[embed])
    runs = plain_text(str(broken).replace("<wbr>", " ")).replace("\u200b", " ")
    return {"html": broken, "wrap": bool(LONG_TOKEN.search(runs))}


# A line-break opportunity that is no character: <wbr> for a browser; WeasyPrint ignores it but breaks at a
# zero-width space, which it leaves out of the PDF's text (a copied name has none)
SOFT_BREAK = {"svg": "<wbr>", "png": "\u200b"}


_TAGS = re.compile(r"(<[^>]*>)")  # no nesting in a tag: linear
# after `_`, `::`, a `.` or `-` between letters (not in 56.26 or 1 - x), a `(` or `,` before a name; not after
# `/`, which joins units (GB/s) more often than path parts (those break at their `_` and `.`)
_SEPARATOR = re.compile(r"(_|::|(?<=[A-Za-z])[.-](?=[A-Za-z])|[(,](?=[A-Za-z_]))")


_VALUE = re.compile(r"(\(-?[\d.,]+) (?=[^\s()]+\))")  # "(410 GB/s)": a formula's value stays with its unit


def separator_breaks(html: Markup, mark: str) -> Markup:
    """A cell that may wrap inside its long tokens breaks them after a separator (`_`, `.`, `-`, `::`, `(`, `,`)
    first: `busiest_unit_active_` / `time_percent`, never `busiest_unit_activ` / `e_time_percent` (issue
    36), and a value in a formula stays with its unit. `overflow-wrap: anywhere` stays the last resort, for a run
    with no separator (a hash)."""
    parts = _TAGS.split(str(html))
    return Markup("".join(part if part.startswith("<") else
                          _VALUE.sub("\\1\u00a0", _SEPARATOR.sub(lambda m: m.group(1) + mark, part)) for part in parts))


def _block(block: Block, md: Any, embed: str, drawn: Mapping[str, bytes], page_size: str) -> dict[str, Any]:
    inline = lambda text: Markup(md.renderInline(text))  # noqa: E731 - a local shorthand
    if block.kind == "paragraph":
        return {"kind": "html", "html": Markup(md.render(block.text))}
    if block.kind == "bullets":
        return {"kind": "list", "tag": "ol" if block.ordered else "ul", "entries": [inline(i) for i in block.items]}
    if block.kind == "table":
        align = [block.align[i] if i < len(block.align) else "left" for i in range(len(block.headers))]
        wide = len(block.headers) >= WIDE_TABLE_COLUMNS
        headers = [inline(h) for h in block.headers]
        rows = [[inline(c) for c in row] for row in block.rows]
        # a screen's width is not known; the PDF's page is
        may_wrap = embed == "svg" or not fits_unbroken(headers, rows, align, page_size, wide)
        return {"kind": "table", "caption": inline(block.caption) if block.caption else "", "align": align,
                "wide": wide, "headers": headers, "rows": [[_cell(c, may_wrap, embed) for c in row] for row in rows]}
    if block.kind == "code":
        return {"kind": "code", "text": block.text}
    if block.kind == "chart":
        return {"kind": "chart", "svg": _chart(block.spec, embed, drawn), "title": block.title}
    raise ValueError(f"unknown block kind {block.kind}")


FOOTER_CHARS = 90  # beside "Page N of M" on an A4 or letter page


def _footer(text: str) -> str:
    """The title for the page footer: cut at a word or name boundary with "…", never mid-word (issue 36)."""
    if len(text) <= FOOTER_CHARS:
        return text
    cut = max(text.rfind(sep, 0, FOOTER_CHARS - 1) for sep in (" ", "_", ",", ":", "/"))
    return text[:cut if cut > 0 else FOOTER_CHARS - 1].rstrip(" _,:/") + "…"


def render_html(doc: Document, page_size: str = "a4", embed: str = "svg",
                drawn: Mapping[str, bytes] | None = None) -> str:
    """`embed`: how charts are included, "svg" (HTML output) or "png" (the PDF's HTML); `drawn`: SVG charts
    drawn already, by `charts.key` (the others are drawn here)."""
    md, drawn = _markdown(), drawn or {}
    title_text = re.sub(r"\\(.)", r"\1", doc.title)  # the <title> is plain text: drop Markdown escapes
    footer = _footer(re.sub(r"[^\w .,:#()/+-]", "", title_text))  # goes into a CSS string: keep it inert
    sections = [{"title": Markup(md.renderInline(s.title)), "level": s.level, "anchor": s.anchor or f"s{i}",
                 "blocks": [_block(b, md, embed, drawn, page_size) for b in s.blocks]}
                for i, s in enumerate(doc.sections)]
    template = environment("html", autoescape=True).get_template("report.html.j2")
    return template.render(title=Markup(md.renderInline(doc.title)), title_text=title_text, footer=footer,
                           lines=[Markup(md.renderInline(line)) for line in doc.lines], sections=sections,
                           page_size=PAGE_SIZES[page_size], version=__version__)
