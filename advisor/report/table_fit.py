"""Whether a table surely fits the PDF's text width without breaking inside its words.

A table is never narrower than its widest unbreakable words (one per column) plus cell padding. When
that estimate, taken generously, is well inside the page, the table needs no `overflow-wrap: anywhere`
on its long tokens: WeasyPrint sizes such a cell by trying a line break at every character, which was a
fifth of the PDF's layout time. The numbers follow report_templates/html/report.html.j2 (page margins,
type sizes, cell padding) and the DejaVu fonts it asks for; a fallback font is narrower.
"""

from __future__ import annotations

import html as html_text
import re
from collections.abc import Sequence
from itertools import zip_longest

MM_PER_PT = 25.4 / 72
TEXT_WIDTH_PT = {"a4": (210 - 32) / MM_PER_PT, "letter": (215.9 - 32) / MM_PER_PT}  # @page: 16 mm each side
SAFETY = 0.85  # the estimate must fit in this share of the text width
SANS_EM = 0.7  # DejaVu Sans: digits 0.64 em, lower case 0.3-0.97 (about 0.6 on average), capitals about 0.7
MONO_EM = 0.602  # DejaVu Sans Mono: every glyph
CODE_PT = 8.0  # `td code`
CODE_PADDING_PT = 3.0  # `code`: 0.15 rem each side
TYPE = {False: (9.0, 9.0), True: (7.0, 4.0)}  # wide table? -> (type size, cell padding left + right), in pt
BORDER_PT = 0.75  # 1 px

_TAG = re.compile(r"<[^>]*>")


def plain_text(cell_html: str) -> str:
    """What a cell shows: its HTML without tags, entities as their characters."""
    return html_text.unescape(_TAG.sub("", cell_html))


def _pieces(cell_html: str) -> list[str]:
    """The cell split into text and `<code>…</code>` pieces, by string search (a lazy regular expression
    would rescan the rest of the cell from every unclosed `<code>`: quadratic)."""
    pieces: list[str] = []
    start = 0
    while (opened := cell_html.find("<code>", start)) >= 0:
        closed = cell_html.find("</code>", opened)
        if closed < 0:
            break
        pieces += [cell_html[start:opened], cell_html[opened:closed + len("</code>")]]
        start = closed + len("</code>")
    return [*pieces, cell_html[start:]]


def widest_word_pt(cell_html: str, type_pt: float, nowrap: bool = False) -> float:
    """The widest run of a cell's text that has no space, in points (code in monospace at its own size);
    `nowrap` (a right-aligned cell: a number stays with its unit): the whole text is one run."""
    widest = run = 0.0
    for piece in _pieces(cell_html):
        code = piece.startswith("<code>")
        per_char = MONO_EM * CODE_PT if code else SANS_EM * type_pt
        run += CODE_PADDING_PT if code else 0.0
        for char in plain_text(piece):
            if char.isspace() and not nowrap:
                widest, run = max(widest, run), 0.0
            else:
                run += per_char
    return max(widest, run)


def fits_unbroken(headers: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str], page_size: str,
                  wide: bool) -> bool:
    """True when the table's narrowest layout, generously estimated, fits the page with room to spare.
    Headers wrap between words; a right-aligned body cell does not wrap at all."""
    type_pt, padding_pt = TYPE[wide]
    columns = zip_longest(headers, *rows, fillvalue="")
    narrowest = BORDER_PT + sum(
        max(widest_word_pt(header, type_pt),
            *(widest_word_pt(cell, type_pt, nowrap=side == "right") for cell in cells)) + padding_pt + BORDER_PT
        for side, (header, *cells) in zip(align, columns, strict=True))
    return narrowest <= SAFETY * TEXT_WIDTH_PT[page_size]
