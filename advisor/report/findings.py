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
                 f"{escape(top.root_cause_text)} **Next:** {escape(top.recommendation)}{others}"
                 f"{_workload_sentence(analysis)}")
    return Verdict((bullet,), " ".join(paragraph.split()))


def _workload_sentence(analysis: Analysis) -> str:
    """With workload timings, the verdict says how far any kernel gain can carry the workload."""
    a = analysis.investigation.amdahl if analysis.investigation else None
    if a is None or a.ceiling is None or a.measured is None:
        return ""
    text = (f" **Workload:** the measured {fmt.speedup(a.measured)} is an Amdahl limit (f = {a.fraction:.3f}); "
            f"however fast these steps get, the workload cannot pass {fmt.speedup(a.ceiling)}")
    if a.target is not None and not a.target_reachable:
        text += f", so the {fmt.speedup(a.target)} target needs the other steps to change"
    return text + "."


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
    if not analysis.findings:
        return [Section("Findings", (Paragraph("No rule fired on this profile."),), "findings")]
    intro = Paragraph(f"{len(analysis.findings)} rule(s) fired, ranked by estimated gain, then severity. "
                      "A root cause is a finding no other fired finding explains further.")
    return [Section("Findings", (intro,), "findings"),
            *(_finding_section(analysis, i + 1, f) for i, f in enumerate(analysis.findings))]


def next_steps_section(analysis: Analysis) -> Section | None:
    """The fired rules' recommendations, in ranking order (estimated gain first), each once."""
    steps: list[tuple[Finding, str]] = []
    for f in analysis.findings:
        if f.recommendation and f.recommendation not in [text for _, text in steps]:
            steps.append((f, f.recommendation))
    if not steps:
        return None
    return Section("Next steps", (Bullets(tuple(
        f"{escape(text)} ({code(f.name)}{_gain(f)})" for f, text in steps), ordered=True),), "next-steps")


def not_evaluated_section(analysis: Analysis) -> Section | None:
    if not analysis.not_applicable:
        return None
    rows = tuple((code(n.name), escape(n.title), ", ".join(code(m) for m in n.missing))
                 for n in analysis.not_applicable)
    return Section("Rules not evaluated", (
        Paragraph("These rules read metrics the profile does not have. Capturing them (a newer profiler, the "
                  "full JSON output, or `--hardware` for `hw_*` figures) enables the rule."),
        Table(("Rule", "Title", "Missing metrics"), rows)), "not-evaluated")
