"""Markdown renderer: a Document through the jinja2 template in report_templates/markdown/."""

from __future__ import annotations

from collections.abc import Mapping

from advisor.report.document import Document, table_cell
from advisor.report.templates import environment


def render_markdown(doc: Document, chart_links: Mapping[str, str] | None = None) -> str:
    """GitHub-flavoured Markdown; `chart_links` maps a chart's name to its relative file path."""
    env = environment("markdown", autoescape=False)
    env.filters["cell"] = table_cell
    template = env.get_template("report.md.j2")
    text = template.render(doc=doc, charts=dict(chart_links or {}))
    return "\n".join(line.rstrip() if not line.endswith("  ") else line for line in text.splitlines()).strip() + "\n"
