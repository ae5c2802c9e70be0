"""Issue 22 §3 and §5, checklist: text from profiles, packs and context files renders as text in every
format; a pipe in a name never breaks a Markdown table."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt
from tests_support import SAMPLES

from advisor.cli import main
from advisor.report.document import Document, Section, Table, author_markdown, code, escape
from advisor.report.markdown import render_markdown

MP2 = SAMPLES / "mp2_energy" / "summary.json"
HOSTILE_CONTEXT = """\
title: "T <script>alert(1)</script> [click](http://evil.example)"
tracker: "<img src=x onerror=alert(1)>"
context: |
  Notes with <script>alert(2)</script>, [a link](javascript:alert(3)), [data](data:text/html,x),
  <javascript:alert(4)>, **bold**, `code <kept>` and [the tracker](https://example.com/33).
hypotheses:
  - name: "H <script>x</script> | pipe"
    expect: idle_time_percent > 0.2
"""


def _html_of_markdown(text: str) -> str:
    """What a Markdown viewer that passes raw HTML through (many do) would show."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_context_text_is_escaped_in_markdown_as_well_as_html(tmp_path, fmt):
    context = tmp_path / "ctx.yaml"
    context.write_text(HOSTILE_CONTEXT)
    out = tmp_path / f"r.{fmt}"
    assert main(["report", str(MP2), "--context", str(context), "-o", str(out)]) == 0
    text = out.read_text()
    html = _html_of_markdown(text) if fmt == "md" else text
    for forbidden in ("<script>", "<img src=x", 'href="javascript:', 'href="data:', 'href="http://evil'):
        assert forbidden not in html, forbidden
    assert "<strong>bold</strong>" in html and "<code>code &lt;kept&gt;</code>" in html
    assert 'href="https://example.com/33"' in html  # the author's own safe link still works


@pytest.mark.parametrize(("text", "shown"), [
    ("a <b> c", "a \\<b\\> c"), ("`x<y>` and <z>", "`x<y>` and \\<z\\>"),
    ("[x](JavaScript:alert(1))", "\\[x](JavaScript:alert(1))"), ("[x](https://a.b)", "[x](https://a.b)"),
])
def test_author_markdown_keeps_formatting_and_drops_markup(text, shown):
    assert author_markdown(text) == shown


# --- Markdown tables: a pipe in a name stays in its cell -------------------------------------------------

@pytest.mark.parametrize("name", ["a|b", "x || y", "k\\|v", "|edge|"])
def test_a_pipe_in_a_name_does_not_break_a_table(name):
    table = Table(("kernel", "time"), ((code(name), "1 ms"), (escape(name), "2 ms")))
    text = render_markdown(Document(title="t", lines=(), sections=(Section("s", (table,)),)))
    html = MarkdownIt("commonmark").enable("table").render(text)
    rows = html.split("<tr>")[2:]
    assert len(rows) == 2 and all(row.count("<td>") == 2 for row in rows), html




@pytest.mark.hang_guard
def test_measuring_a_cell_is_linear_in_its_length():
    """The PDF's table fitting split cells with a lazy `<code>.*?</code>`: quadratic on unclosed tags (4.6 s
    at 48 KB). 1 MB of them now takes a blink; the bound is generous."""
    import time

    from advisor.report.table_fit import widest_word_pt

    started = time.perf_counter()
    widest_word_pt("<code>x " * 130_000, 9.0)
    assert time.perf_counter() - started < 120  # a hang guard (quadratic took minutes), not a speed target
