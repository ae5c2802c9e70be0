from markdown_it import MarkdownIt

from advisor.report.document import escape


def render_inline(text: str) -> str:
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def test_escape_neutralises_markup():
    html = render_inline(escape("<script>alert(1)</script> **bold** [link](http://x) `code` | pipe"))
    assert "<script>" not in html and "<strong>" not in html and "<a " not in html and "<code>" not in html


def test_escape_keeps_names_and_versions_readable():
    assert escape("instance_type") == "instance_type"
    assert escape("2.24.5133.0+58f8de22") == "2.24.5133.0+58f8de22"
    assert escape("2.31.24 (0b044)") == "2.31.24 (0b044)"


def test_escape_line_start_markers():
    for text in ("# heading", "- item", "1. item", "+ item"):
        html = render_inline(escape(text))
        assert html.startswith("<p>"), html
