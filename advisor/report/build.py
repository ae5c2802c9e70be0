"""Analysis -> Document: the investigation report's skeleton, in the order of a hand-written
investigation: TL;DR, setup, the kind's utilisation and memory sections, expectations, roofline, the
kind's trace sections, findings, Amdahl, hypotheses, next steps, checks, raw data. The kind's report
module (advisor/profilers/<kind>/report.py) contributes TL;DR figures, setup rows and its sections; the
trace blocks every trace kind shares are placed where its data/report.yaml says (trace_layout.py)."""

from __future__ import annotations

import re
import statistics

from advisor.core import units as fmt
from advisor.core.model import Analysis, AnalysisSettings
from advisor.core.numbers import CROSS_CHECK_TOLERANCE
from advisor.kinds import get as get_kind
from advisor.kinds.contract import Report
from advisor.metrics.hardware import table
from advisor.report.appendix import grouped_notes, lists_used, raw_section, used_fields, watch
from advisor.report.budget import time_budget_section
from advisor.report.document import (
    Bullets,
    Document,
    Paragraph,
    Section,
    Table,
    author_markdown,
    code,
    escape,
)
from advisor.report.findings import findings_sections, next_steps_section, not_evaluated_section, verdict
from advisor.report.investigation import (
    amdahl_section,
    expectations_section,
    hypotheses_section,
    meaning_section,
)
from advisor.report.overview import overview_section, overview_words
from advisor.report.trace_layout import with_trace_blocks
from advisor.report.view import View


class _InfoOrUnknown(dict[str, str]):
    """str.format_map over a profile's text fields; a field it lacks reads as "unknown"."""

    def __missing__(self, key: str) -> str:
        return "unknown"

def title_of(analysis: Analysis) -> str:
    inv = analysis.investigation
    if inv and inv.title:
        return escape(inv.title) + (f" ({escape(inv.tracker)})" if inv.tracker else "")
    source = analysis.source
    name = source.path.replace("\\", "/").split("/")
    stem = "/".join(name[-2:]) if len(name) > 1 else name[-1]
    entry = f", entry {escape(short_name(source.entry))}" if source.entry else ""
    return f"Profile findings: {escape(stem)}{entry}"


_HASH = re.compile(r"[0-9a-f]{16,}")  # a content hash in a name (Neuron's n_<40 hex>): its first 12 digits say it
TITLE_NAME_CHARS = 60


def short_name(name: str) -> str:
    """A profile's name for a title: hashes shortened, and a long name cut at a separator with "…", never inside
    a word (issue 36: "entry 2 attention_so" for `2 attention_softmax_kernel`)."""
    name = _HASH.sub(lambda m: m.group(0)[:12], name)
    if len(name) <= TITLE_NAME_CHARS:
        return name
    cut = max(name.rfind(sep, 0, TITLE_NAME_CHARS) for sep in (" ", "_", "::", ",", "<", "("))
    return name[:cut if cut > 0 else TITLE_NAME_CHARS].rstrip(" _:,<(") + "…"


def _tldr(view: View, kind_report: Report) -> Section:
    """Up to five bullets with the decisive numbers, the most decisive kept when there are more."""
    a = view.analysis
    candidates: list[tuple[int, str]] = []  # (priority, text), in display order
    if view.raw("total_time") is None:  # everything per unit of time is missing: say so first
        why = next((n for n in a.notes if n.startswith("total_time")), "total_time is not in the profile")
        candidates.append((0, f"**Data warning:** {escape(why)}; times, bandwidths and utilisations that need "
                              "it are unavailable."))
    candidates.extend(kind_report.tldr(a))
    if len(a.entries) > 1:  # a folder of one trace has no slowest member to name
        analysed = next((e for e in a.entries if e.analysed), None)
        times = sorted(e.total_time for e in a.entries if e.total_time is not None)
        if analysed and analysed.total_time and times:
            rank = "the slowest" if analysed.total_time >= times[-1] else "not the slowest"
            what = overview_words(a)[1]
            # "4 of 5 launches with data": the TL;DR counts as the setup does (issue 36), not 4 launches in all
            held = re.match(r"(\d+) of (\d+) .* with data$", a.source.shape or "")
            if held and int(held.group(2)) > len(a.entries):
                what += f" with data (of {held.group(2)} in the file)"
            candidates.append((2, f"**{len(a.entries)} {what}**; this one "
                                  f"({escape(analysed.where or analysed.name)}) is {rank}, "
                                  f"{fmt.speedup(analysed.total_time / statistics.median(times))} the median."))
    workload = a.investigation.amdahl if a.investigation else None
    if workload and workload.predicted is not None:
        ceiling = f", ceiling **{fmt.speedup(workload.ceiling)}**" if workload.ceiling else ""
        candidates.append((4, f"**Amdahl: {fmt.speedup(workload.predicted)}** predicted, "
                              f"{fmt.speedup(workload.measured)} measured for the workload (f = "
                              f"{workload.fraction:.3f} of the time sped up {fmt.speedup(workload.step_speedup)})"
                              f"{ceiling}."))
    candidates.extend((3, text) for text in verdict(a).tldr)
    keep = sorted(candidates, key=lambda c: c[0])[:5]
    items = tuple(text for p, text in candidates if (p, text) in keep)
    return Section("TL;DR", (Bullets(items), Paragraph(verdict(a).paragraph)), "tldr")


def _setup(view: View, kind_report: Report) -> Section:
    a = view.analysis
    s = a.source
    rows = [("Input file", code(s.path)), ("Format", f"{escape(s.format)} ({escape(s.shape)})")]
    if s.entry:
        rows.append(("Entry analysed", f"{code(s.entry)} of {len(s.entries)}"))
    if s.converted_with:
        rows.append(("Converted with", code(s.converted_with)))
    rows += kind_report.setup_rows(a)
    hw = a.hardware
    if hw:
        rows.append(("Hardware figures", f"{escape(hw.description)} — chosen by {escape(hw.chosen_by)}"))
    else:
        targets = "|".join(table(get_kind(a.kind))["targets"])
        how = f"--hardware {targets} or a YAML file" if targets else "--hardware with a YAML file of figures"
        rows.append(("Hardware figures", f"unknown: pass {how}"))
    rows += kind_report.hardware_rows(a)
    rows.append(("Rule packs", ", ".join(f"{escape(n)} {escape(v)}" for n, v in a.packs.items()) or "none"))
    rows.append(("Settings", settings_text(a.settings)))
    return Section("Profile setup", (Table(("Item", "Value"), tuple(rows)),), "setup")


def settings_text(settings: AnalysisSettings | None) -> str:
    """What the rules ran with, as the options that give it: a reader can tell a weakened run apart."""
    if settings is None:
        return "unknown (saved before advisor recorded them)"
    parts = [f"{flag} {', '.join(code(v) for v in values)}" for flag, values in (
        ("--select", settings.select), ("--ignore", settings.ignore),
        ("--set", [f"{k}={v:g}" for k, v in settings.params.items()])) if values]
    if settings.hardware:
        parts.append(f"--hardware {code(settings.hardware)}")
    if settings.config:
        parts.append(f"settings file {code(settings.config)}")
    return "; ".join(parts) or "defaults (no --select, --ignore, --set, --hardware or settings file)"


def _checks(view: View) -> Section | None:
    rows = []
    for m in view.analysis.metrics.values():
        if m.check is None:
            continue
        verdict_text = "agrees" if m.check.agrees else "unavailable" if m.check.agrees is None else "**disagrees**"
        if m.check.relative_difference is not None:
            verdict_text += f" ({m.check.relative_difference * 100:.2g} % apart)"
        rows.append((f"{code(m.name)} = {code(m.formula or '')}", fmt.value(m.value, m.unit),
                     fmt.value(m.check.derived_value, m.unit), verdict_text))
    if not rows:
        return None
    table = Table(("Metric = recomputed from", "Reported", "Recomputed",
                   f"Verdict (tolerance {fmt.percent(CROSS_CHECK_TOLERANCE).replace('.00', '')})"), tuple(rows),
                  align=("left", "right", "right", "left"))
    return Section("Cross-checks", (Paragraph(
        "Values the profile reports, recomputed from other reported fields and the hardware figures."), table),
        "checks")


def _notes(analysis: Analysis) -> Section | None:
    if not analysis.notes:
        return None
    return Section("Data notes", (Bullets(grouped_notes(analysis.notes)),), "notes")


def _header(analysis: Analysis) -> tuple[list[str], Section | None]:
    inv = analysis.investigation
    lines = []
    if inv and (inv.date or inv.tracker):
        parts = ([f"Date: {escape(inv.date)}"] if inv.date else []) + (
            [f"Tracker: {escape(inv.tracker)}"] if inv.tracker else [])
        lines.append(". ".join(parts) + ".")
    source = analysis.source
    device = get_kind(analysis.kind).data("report.yaml").get("device") or {}  # the field that names the machine
    # when the field is absent, `unknown` may name other text fields: "cc {compute_capability}"
    shown = analysis.info.get(device.get("field", "")) or str(device.get("unknown", "")).format_map(
        _InfoOrUnknown(analysis.info))
    lines.append(f"Profile: {code(source.path)} ({escape(source.format)}) · " + (f"{escape(shown)} · " if shown else "")
                 + f"report by advisor {escape(analysis.advisor_version)}")
    context = None
    if inv and inv.context:
        # The author's own Markdown, less raw HTML and unsafe links (in the .md file too, not only in HTML)
        context = Section("Context", tuple(Paragraph(author_markdown(p.strip())) for p in inv.context.split("\n\n")
                                           if p.strip()), "context")
    return lines, context


def build_document(analysis: Analysis) -> Document:
    used = lists_used(analysis)
    full, analysis = analysis, watch(analysis) if used else analysis  # the sections note the fields they read
    view = View(analysis)
    kind = get_kind(analysis.kind)
    kind_report = kind.report()
    parts = with_trace_blocks(kind_report.sections(analysis), analysis, kind.data("report.yaml").get("blocks") or {})
    lines, context = _header(analysis)
    sections = [context, _tldr(view, kind_report), overview_section(analysis), _setup(view, kind_report),
                *parts.get("utilisation", ()), *parts.get("memory", ()), expectations_section(analysis),
                *parts.get("roofline", ()), *parts.get("trace", ()), *findings_sections(analysis),
                time_budget_section(analysis), amdahl_section(analysis), hypotheses_section(analysis),
                meaning_section(analysis),
                next_steps_section(analysis), not_evaluated_section(analysis), _checks(view), _notes(analysis)]
    sections.append(raw_section(full, used_fields(full, analysis) if used else None))
    return Document(title=title_of(analysis), lines=tuple(lines), sections=tuple(s for s in sections if s))
