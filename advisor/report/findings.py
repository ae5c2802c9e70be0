"""The report's rule output: the verdict, ranked findings with their root-cause chains, next
steps, and the rules that could not be evaluated."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.model import Analysis, Finding
from advisor.report import format as fmt
from advisor.report.document import Bullets, Paragraph, Section, Table, code, escape


@dataclass(frozen=True)
class Verdict:
    tldr: tuple[str, ...]
    paragraph: str


def root_causes(analysis: Analysis) -> list[Finding]:
    return [f for f in analysis.findings if f.root_cause]


def _gain(f: Finding) -> str:
    if f.estimated_speedup is None:
        return ""
    return f", estimated gain up to {fmt.percent(f.estimated_speedup)} of total time"


def verdict(analysis: Analysis) -> Verdict:
    causes = root_causes(analysis)
    if not causes:
        skipped = len(analysis.not_applicable)
        tail = f" {skipped} rule(s) could not be evaluated for missing metrics (see the appendix)." if skipped else ""
        return Verdict((), "**Verdict:** no rule in the loaded packs fired on this profile." + tail)
    top = causes[0]
    bullet = f"Root cause: **{escape(top.title)}** ({code(top.name)}{_gain(top)})."
    chain = _chain(analysis, top)
    because = f" It was reached through {chain}." if chain else ""
    others = ""
    if len(causes) > 1:
        others = " Other root causes: " + ", ".join(f"{escape(c.title)} ({code(c.name)})" for c in causes[1:]) + "."
    paragraph = (f"**Verdict: {escape(top.title)}.** {escape(top.message)}{because} "
                 f"{escape(top.root_cause_text)} **Next:** {escape(top.recommendation)}{others}")
    return Verdict((bullet,), " ".join(paragraph.split()))


def _chain(analysis: Analysis, finding: Finding) -> str:
    """`memory-bound` → `dma-fragmentation`: the required rules that led to this finding."""
    by_name = {f.name: f for f in analysis.findings}
    path: list[str] = []
    current = finding
    seen = {finding.name}
    while current.because:
        parent = by_name.get(current.because[0])
        if parent is None or parent.name in seen:
            break
        path.append(parent.name)
        seen.add(parent.name)
        current = parent
    return " → ".join(code(n) for n in [*reversed(path), finding.name]) if path else ""


def _finding_section(analysis: Analysis, rank: int, f: Finding) -> Section:
    by_name = {x.name: x for x in analysis.findings}
    blocks: list = [Paragraph(f"**{escape(f.severity.upper())}** · {escape(f.category)} · {code(f.id)} "
                              f"{code(f.name)}{' · **root cause**' if f.root_cause else ''}"),
                    Paragraph(escape(f.message))]
    if f.because:
        reasons = []
        for name in f.because:
            parent = by_name.get(name)
            detail = f": {code(parent.condition)}" if parent and parent.condition else ""
            reasons.append(f"because {code(name)} fired{detail}")
        blocks.append(Paragraph("Chain: " + "; ".join(reasons) + "."))
    if f.root_cause_text:
        blocks.append(Paragraph(f"**Why:** {escape(f.root_cause_text)}"))
    blocks.append(Paragraph(f"**Action:** {escape(f.recommendation)}"))
    rows = tuple((code(name), fmt.value(e.value, e.unit)) for name, e in f.evidence.items())
    rows += tuple((f"{code(name)} (threshold)", fmt.value(p.value, p.unit)) for name, p in f.params.items())
    blocks.append(Table(("Evidence", "Value"), rows, align=("left", "right"),
                        caption=f"Condition: {code(f.condition)}" if f.condition else ""))
    if f.estimated_speedup is not None:
        overall = fmt.speedup(1 / (1 - f.estimated_speedup)) if f.estimated_speedup < 1 else "unbounded"
        blocks.append(Paragraph(f"Estimated speedup: removing this problem could save up to "
                                f"{fmt.percent(f.estimated_speedup)} of total time ({overall} overall)."))
    if f.references:
        blocks.append(Paragraph("References: " + "; ".join(escape(r) for r in f.references)))
    return Section(f"{rank}. {escape(f.title)}", tuple(blocks), f"finding-{f.name}", level=3)


def findings_sections(analysis: Analysis) -> list[Section]:
    sections: list[Section] = []
    if analysis.findings:
        intro = Paragraph(f"{len(analysis.findings)} rule(s) fired, ranked by estimated gain, then severity. "
                          "A root cause is a finding no other fired finding explains further.")
        sections.append(Section("Findings", (intro,), "findings"))
        sections.extend(_finding_section(analysis, i + 1, f) for i, f in enumerate(analysis.findings))
        steps = []
        for f in analysis.findings:
            if f.recommendation and f.recommendation not in [s[1] for s in steps]:
                steps.append((f, f.recommendation))
        sections.append(Section("Next steps", (Bullets(tuple(
            f"{escape(text)} ({code(f.name)}{_gain(f)})" for f, text in steps), ordered=True),), "next-steps"))
    if analysis.not_applicable:
        rows = tuple((code(n.name), escape(n.title), ", ".join(code(m) for m in n.missing))
                     for n in analysis.not_applicable)
        sections.append(Section("Rules not evaluated", (
            Paragraph("These rules read metrics the profile does not have. Capturing them (a newer "
                      "profiler, the full JSON output, or `--hardware` for `hw_*` figures) enables the rule."),
            Table(("Rule", "Title", "Missing metrics"), rows)), "not-evaluated"))
    return sections
