"""How a result shows itself in a notebook: a short `repr` (kind, input, verdict, top findings) and a rich
`_repr_html_` (the TL;DR, a findings table and the charts), drawn by the HTML report's own renderer, so it is
escaped as the report is. The page sits in an iframe: the report's stylesheet styles its own page, not the
notebook around it."""

from __future__ import annotations

import html

from advisor.core import units as fmt
from advisor.core.model import Analysis, Finding
from advisor.report.build import build_document
from advisor.report.document import Document, Section, Table, code, escape
from advisor.report.findings import root_causes
from advisor.report.html import render_html

TOP_FINDINGS = 3  # in the repr: enough to see what is wrong, short enough to read at a glance
FRAME_HEIGHT_PX = 640  # the rich display's height: the TL;DR and the findings without scrolling, charts below


def gain_text(f: Finding) -> str:
    if f.caps_only or f.estimated_speedup is None:
        return "no gain claimed"
    scope = "of its time" if f.speedup_scope == "global" else "of the unit's inefficiency (local)"
    return f"up to {fmt.percent(f.estimated_speedup)} {scope}"


def analysis_repr(analysis: Analysis, what: str = "Result") -> str:
    """<advisor.Result ncu details.csv> and a few lines: the verdict, then the top findings."""
    causes = root_causes(analysis)
    head = f"<advisor.{what} {analysis.kind}: {analysis.source.path}"
    head += f" (entry {analysis.source.entry})>" if analysis.source.entry else ">"
    verdict = (f"verdict: {causes[0].name} — {causes[0].title} ({gain_text(causes[0])})" if causes
               else "verdict: no cause to fix was found")
    lines = [head, verdict, f"{fmt.plural(len(analysis.findings), 'finding')}:"]
    lines += [f"  {f.severity:<8} {f.name}{' (root cause)' if f.root_cause else ''}"
              for f in analysis.findings[:TOP_FINDINGS]]
    if len(analysis.findings) > TOP_FINDINGS:
        lines.append(f"  … and {len(analysis.findings) - TOP_FINDINGS} more (.findings)")
    return "\n".join(lines)


def _findings_section(analysis: Analysis) -> Section:
    rows = tuple((code(f.name), escape(f.severity), "root cause" if f.root_cause else "symptom or context",
                  escape(gain_text(f)), escape(f.title)) for f in analysis.findings)
    return Section("Findings", (Table(("Rule", "Severity", "Role", "Estimated gain", "Title"), rows),), "findings")


def analysis_html(analysis: Analysis) -> str:
    """The TL;DR, the findings and every chart of the report, in an iframe of its own."""
    full = build_document(analysis)
    charts = tuple(b for s in full.sections for b in s.blocks if b.kind == "chart")
    sections = [s for s in full.sections if s.anchor == "tldr"] + [_findings_section(analysis)]
    if charts:
        sections.append(Section("Charts", charts, "charts"))
    return framed(render_html(Document(full.title, full.lines, tuple(sections))))


def framed(page: str) -> str:
    """A whole HTML page shown in a notebook cell without its stylesheet reaching the notebook."""
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" style="width: 100%; height: {FRAME_HEIGHT_PX}px; '
            'border: 1px solid #d9dee3;" sandbox=""></iframe>')
