"""Analysis -> Document: the investigation report's sections, in the order of the findings doc
(seed 002): TL;DR, setup, per-engine tables, memory, roofline, findings, checks, raw data."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.core.resources import load_yaml_resource
from advisor.kinds.neuron.trace_report import trace_sections
from advisor.report.charts import finite
from advisor.report.document import Bullets, Chart, CodeBlock, Document, Paragraph, Section, Table, code, escape
from advisor.report.findings import findings_sections, next_steps_section, not_evaluated_section, verdict
from advisor.report.investigation import (
    amdahl_section,
    expectations_section,
    hypotheses_section,
    meaning_section,
)


@lru_cache(maxsize=1)
def layout() -> dict[str, Any]:
    return load_yaml_resource("kinds/neuron/data/report.yaml")


@dataclass(frozen=True)
class View:
    """Formatted access to an analysis' metrics."""

    analysis: Analysis

    def raw(self, name: str) -> float | None:
        return self.analysis.value(name)

    def show(self, name: str | None) -> str:
        if not name:
            return "—"
        metric = self.analysis.metrics.get(name)
        return fmt.UNAVAILABLE if metric is None else fmt.value(metric.value, metric.unit)

    def hw(self, key: str) -> float | None:
        hw = self.analysis.hardware
        return hw.values.get(key) if hw else None


def _engines(view: View) -> list[dict[str, Any]]:
    """Engines with an active fraction, busiest first (ties by table order, so output is stable)."""
    rows = [e for e in layout()["engines"] if view.raw(e["percent"]) is not None]
    return sorted(rows, key=lambda e: -(view.raw(e["percent"]) or 0.0))


def title_of(analysis: Analysis) -> str:
    inv = analysis.investigation
    if inv and inv.title:
        return escape(inv.title) + (f" ({escape(inv.tracker)})" if inv.tracker else "")
    source = analysis.source
    name = source.path.replace("\\", "/").split("/")
    stem = "/".join(name[-2:]) if len(name) > 1 else name[-1]
    entry = f", entry {escape(source.entry[:14])}" if source.entry else ""
    return f"Profile findings: {escape(stem)}{entry}"


def _tldr(view: View) -> Section:
    """Up to five bullets with the decisive numbers, the most decisive kept when there are more."""
    a = view.analysis
    candidates: list[tuple[int, str]] = []  # (priority, text), in display order
    if view.raw("total_time") is None:  # everything per unit of time is missing: say so first
        why = next((n for n in a.notes if n.startswith("total_time")), "total_time is not in the profile")
        candidates.append((0, f"**Data warning:** {escape(why)}; times, bandwidths and utilisations that need "
                              "it are unavailable."))
    engines = _engines(view)
    if engines:
        top = engines[0]
        others = ", ".join(f"{e['short']} {view.show(e['percent'])}" for e in engines[1:4])
        of_total = f" of {view.show('total_time')} total" if view.raw("total_time") is not None else ""
        active = f" ({view.show(top['active'])}{of_total})" if view.raw(top["active"]) is not None else ""
        then = f"; then {others}" if others else ""
        candidates.append((1, f"**{top['label']}: {view.show(top['percent'])} active**{active}{then}."))
    reads = view.raw("hbm_read_bytes")
    if reads is not None:
        peak = view.hw("hbm_bandwidth")
        against = (f", {view.show('hbm_read_bandwidth_utilization')} of one HBM stack's "
                   f"{fmt.rate(peak, 'bytes/s')}") if peak and view.raw("hbm_read_bandwidth_utilization") else ""
        writes = (f", writes {view.show('hbm_write_bytes')}" if view.raw("hbm_write_bytes") is not None else "")
        bandwidth = (f": effective read bandwidth **{view.show('hbm_read_bandwidth')}**{against}"
                     if view.raw("hbm_read_bandwidth") is not None else " (no total time, so no bandwidth)")
        check = next((e for e in (a.investigation.expectations if a.investigation else ())
                      if e.metric == "hbm_read_bytes"), None)
        matched = (f"; the analytical prediction of {fmt.decimal_bytes(check.expected)} "
                   f"{'matches' if check.verdict == 'matches' else 'does not match'}") if check else ""
        candidates.append((2, f"**HBM reads {fmt.bytes_(reads)}** ({fmt.decimal_bytes(reads)}){writes}"
                              f"{bandwidth}{matched}."))
    candidates.append((5, _roofline_sentence(view)))
    if view.raw("total_active_time_percent") is not None:
        of_total = f" of the {view.show('total_time')}" if view.raw("total_time") is not None else " of the time"
        candidates.append((6, f"Some engine or DMA is active {view.show('total_active_time_percent')}{of_total}"
                              f"{_overlap_clause(view)}."))
    if a.entries:
        analysed = next((e for e in a.entries if e.analysed), None)
        times = sorted(e.total_time for e in a.entries if e.total_time is not None)
        if analysed and analysed.total_time and times:
            rank = "the slowest" if analysed.total_time >= times[-1] else "not the slowest"
            what = "ranks" if all(e.name.startswith("rank ") for e in a.entries) else "profiles in the file"
            candidates.append((2, f"**{len(a.entries)} {what}**; this one "
                                  f"({escape(analysed.core or analysed.name)}) is {rank}, "
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


def _overlap_clause(view: View) -> str:
    """sum of shares − union is an upper bound on the time with two or more units active (each
    extra unit counts once), so it is stated as that, not as concurrent time."""
    if view.raw("engine_overlap") is None:
        return ""
    return (f"; the Tensor, Vector, Scalar, GpSimd and DMA shares add up to "
            f"{fmt.percent((view.raw('engine_overlap') or 0) + (view.raw('total_active_time_percent') or 0))}, "
            f"so they overlap by {view.show('engine_overlap')} of the time")


def _roofline_sentence(view: View) -> str:
    ai, ridge = view.raw("mm_arithmetic_intensity"), view.raw("peak_flops_bandwidth_ratio")
    flops = view.raw("hardware_flops")
    if flops == 0 or (ai is None and flops is None):
        count = view.raw("tensor_engine_instruction_count")
        tail = f" ({fmt.count(count)} Tensor Engine instructions)" if count is not None else ""
        return f"No Tensor Engine matmul FLOPs reported{tail}: the roofline does not apply."
    if ai is None or ridge is None:
        return "Arithmetic intensity or ridge point unavailable: the roofline cannot be placed."
    side = "memory-bound" if ai < ridge else "compute-bound"
    return (f"Arithmetic intensity **{view.show('mm_arithmetic_intensity')}** against a ridge of "
            f"{view.show('peak_flops_bandwidth_ratio')}: the {side} side of the roofline.")


def _entries(analysis: Analysis) -> Section | None:
    """Several cores or ranks side by side: the analysed one marked, the skew, collective-time
    outliers against the median, and findings that fire on some of them only."""
    entries = analysis.entries
    if not entries:
        return None
    ranks = all(e.name.startswith("rank ") for e in entries)
    rows = tuple((f"**{escape(e.name)}** (analysed)" if e.analysed else escape(e.name), escape(e.core or "—"),
                  fmt.seconds(e.total_time), fmt.percent(e.dma_active_time_percent),
                  fmt.percent(e.tensor_engine_active_time_percent), fmt.seconds(e.collective_time),
                  ", ".join(code(r) for r in e.root_causes[:2]) or "—") for e in entries)
    blocks: list[Any] = [Table(("Profile", "Core", "Total time", "DMA active", "Tensor Engine active",
                                "Collective time", "Root cause"), rows,
                               align=("left", "left", "right", "right", "right", "right", "left"))]
    timed = [e for e in entries if e.total_time is not None]
    if timed:
        median = statistics.median(e.total_time for e in timed)
        slowest = max(timed, key=lambda e: e.total_time or 0)
        blocks.append(Paragraph(
            f"The slowest is {escape(slowest.name)} ({escape(slowest.core or 'core unknown')}): "
            f"{fmt.seconds(slowest.total_time)}, {fmt.speedup((slowest.total_time or 0) / median)} the median "
            f"{fmt.seconds(median)} (skew = max ÷ median). This report analyses "
            f"{'it' if slowest.analysed else 'the profile marked above'}; `--entry` analyses another."))
    collective = [e for e in entries if e.collective_time]
    if len(collective) > 1:
        middle = statistics.median(e.collective_time for e in collective)
        outliers = [e for e in collective if not 0.8 <= (e.collective_time or 0) / middle <= 1.25]
        blocks.append(Paragraph(
            "Collective time outliers (outside 0.8–1.25× the median " + fmt.seconds(middle) + "): "
            + (", ".join(f"{escape(e.name)} {fmt.seconds(e.collective_time)}" for e in outliers) or "none") + "."))
    everywhere = set.intersection(*(set(e.findings) for e in entries))
    differing = sorted({f for e in entries for f in e.findings} - everywhere)
    if differing:
        items = tuple(f"{code(f)} fires on " + ", ".join(escape(e.name) for e in entries if f in e.findings)
                      + " only" for f in differing)
        blocks += [Paragraph("Findings that differ between them:"), Bullets(items)]
    title = f"Ranks ({len(entries)})" if ranks else f"Profiles in this file ({len(entries)})"
    return Section(title, tuple(blocks), "entries")


def _setup(view: View) -> Section:
    a = view.analysis
    s = a.source
    rows = [("Input file", code(s.path)), ("Format", f"{s.format} ({escape(s.shape)})")]
    if s.entry:
        rows.append(("Entry analysed", f"{code(s.entry)} of {len(s.entries)}"))
    if s.converted_with:
        rows.append(("Converted with", code(s.converted_with)))
    for key, label in (("instance_type", "Instance type"), ("profiler_version", "Profiler"),
                       ("compiler_version", "Compiler"), ("runtime_version", "Runtime")):
        rows.append((label, escape(a.info[key]) if a.info.get(key) else fmt.UNAVAILABLE))
    hw = a.hardware
    if hw:
        rows.append(("Hardware figures", f"{escape(hw.description)} — chosen by {escape(hw.chosen_by)}"))
        rows.append(("Tensor Engine peak (BF16)", fmt.rate(hw.values.get("tensor_peak_flops_bf16"), "FLOP/s")))
        rows.append(("HBM bandwidth (one stack, as the profiler uses)",
                     fmt.rate(hw.values.get("hbm_bandwidth"), "bytes/s")))
    else:
        rows.append(("Hardware figures", "unknown: pass --hardware trn1|trn1n|inf2|trn2|trn3 or a YAML file"))
    rows.append(("Ridge point", view.show("peak_flops_bandwidth_ratio")))
    rows.append(("Rule packs", ", ".join(f"{escape(n)} {escape(v)}" for n, v in a.packs.items()) or "none"))
    return Section("Profile setup", (Table(("Item", "Value"), tuple(rows)),), "setup")


def _engine_sections(view: View) -> list[Section]:
    engines = _engines(view)
    if not engines:
        return [Section("Per-engine utilisation", (Paragraph("The profile reports no engine activity."),))]
    util = Table(("Engine", "Active %", "Active time"),
                 tuple((e["label"], view.show(e["percent"]), view.show(e["active"])) for e in engines),
                 align=("left", "right", "right"))
    blocks: list[Any] = [util, Paragraph(
        f"Total time: {view.show('total_time')}. Total active: {view.show('total_active_time_percent')} "
        f"(the union of engine and DMA activity){_overlap_clause(view)}.")]
    instr = Table(("Engine", "Instructions", "Instruction time (summed)", "Mean instruction"),
                  tuple((e["label"], view.show(e["instructions"]), view.show(e["instruction_time"]),
                         view.show(e["mean"])) for e in layout()["engines"]
                        if e["instructions"] and view.raw(e["instructions"]) is not None),
                  align=("left", "right", "right", "right"))
    blocks.append(Chart("engines", "Active share of total time per engine", {
        "kind": "hbar", "labels": [e["label"] for e in engines],
        "values": [100 * (view.raw(e["percent"]) or 0.0) for e in engines],
        "texts": [view.show(e["percent"]) for e in engines], "xlabel": "active (% of total time)",
        "xmax": 115, "highlight": 0}, alt="Bar chart of per-engine active time"))
    sections = [Section("Per-engine utilisation", tuple(blocks), "engines")]
    if instr.rows:
        sections.append(Section("Instruction counts", (instr, Paragraph(
            "Instruction time sums the durations of overlapping instructions, so it can exceed the "
            "engine's active time.")), "instructions"))
    return sections


def _memory(view: View) -> Section:
    rows = []
    for name, label in layout()["memory"]:
        if view.raw(name) is None:
            continue
        shown = view.show(name)
        metric = view.analysis.metrics[name]
        if metric.unit == "bytes" and (view.raw(name) or 0) >= 1e6:
            shown += f" ({fmt.decimal_bytes(view.raw(name))})"
        if name == "hbm_read_bandwidth" and view.hw("hbm_bandwidth"):
            shown += (f" = {view.show('hbm_read_bandwidth_utilization')} of "
                      f"{fmt.rate(view.hw('hbm_bandwidth'), 'bytes/s')}")
        rows.append((label, shown, "derived" if metric.source == "derived" else "reported"))
    if not rows:
        return Section("Memory traffic", (Paragraph("The profile reports no memory traffic."),), "memory")
    table = Table(("Metric", "Value", "Source"), tuple(rows), align=("left", "right", "left"))
    volumes = [(label, view.raw(name)) for name, label in layout()["memory"]
               if view.analysis.metrics.get(name) and view.analysis.metrics[name].unit == "bytes"
               and name != "dma_transfer_average_bytes" and (view.raw(name) or 0) > 0]
    blocks: list[Any] = [table]
    if len(volumes) >= 2:
        blocks.append(Chart("memory", "Bytes moved", {
            "kind": "byte_bars", "labels": [label for label, _ in volumes], "values": [v for _, v in volumes],
            "xlabel": "bytes"}, alt="Bar chart of memory traffic by kind"))
    return Section("Memory traffic", tuple(blocks), "memory")


def _roofline(view: View) -> Section:
    if not view.raw("hardware_flops"):
        return Section("Roofline", (Paragraph(_roofline_sentence(view)),), "roofline")
    rows = tuple((label, view.show(name)) for name, label in layout()["roofline"] if name in view.analysis.metrics)
    blocks: list[Any] = [Paragraph(_roofline_sentence(view)), Table(("Metric", "Value"), rows, align=("left", "right"))]
    peak, bandwidth = view.hw("tensor_peak_flops_bf16"), view.hw("hbm_bandwidth")
    ai, achieved = view.raw("mm_arithmetic_intensity"), view.raw("achieved_flops_rate")
    if finite(peak, bandwidth, ai, achieved) and ai and achieved:
        blocks.append(Chart("roofline", "Roofline (Tensor Engine BF16 peak, one HBM stack)", {
            "kind": "roofline", "peak": peak, "bandwidth": bandwidth, "ai": ai, "achieved": achieved},
            alt="Roofline chart with the kernel's point"))
    return Section("Roofline", tuple(blocks), "roofline")


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
    table = Table(("Metric = recomputed from", "Reported", "Recomputed", "Verdict (tolerance 2 %)"), tuple(rows),
                  align=("left", "right", "right", "left"))
    return Section("Cross-checks", (Paragraph(
        "Values the profile reports, recomputed from other reported fields and the hardware figures."), table),
        "checks")


def _notes(analysis: Analysis) -> Section | None:
    if not analysis.notes:
        return None
    return Section("Data notes", (Bullets(tuple(escape(n) for n in analysis.notes)),), "notes")


def _plain_number(value: float | None) -> float | int | None:
    """Integral values as integers, as the profiler wrote them (18935, not 18935.0)."""
    if value is not None and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _raw(analysis: Analysis) -> Section:
    reported = {n: _plain_number(m.value) for n, m in analysis.metrics.items() if m.source == "reported"}
    data = {**reported, **dict(sorted(analysis.info.items()))}
    text = json.dumps(data, indent=2, ensure_ascii=False).replace("```", "'''")
    return Section("Raw profile data", (Paragraph(
        "The fields as read, in machine units (seconds, bytes, FLOPs; `*_percent` as fractions 0..1; "
        "null = unavailable)."), CodeBlock(text, "json")), "raw")


def _header(analysis: Analysis) -> tuple[list[str], Section | None]:
    inv = analysis.investigation
    lines = []
    if inv and (inv.date or inv.tracker):
        parts = ([f"Date: {escape(inv.date)}"] if inv.date else []) + (
            [f"Tracker: {escape(inv.tracker)}"] if inv.tracker else [])
        lines.append(". ".join(parts) + ".")
    source = analysis.source
    lines.append(f"Profile: {code(source.path)} ({escape(source.format)}) · "
                 f"{escape(analysis.info.get('instance_type', 'instance unknown'))} · "
                 f"report by advisor {escape(analysis.advisor_version)}")
    context = None
    if inv and inv.context:
        # The author's own Markdown; renderers never pass raw HTML through (markdown-it, html=False).
        context = Section("Context", tuple(Paragraph(p.strip()) for p in inv.context.split("\n\n") if p.strip()),
                          "context")
    return lines, context


def build_document(analysis: Analysis) -> Document:
    view = View(analysis)
    lines, context = _header(analysis)
    sections = [context, _tldr(view), _entries(analysis), _setup(view), *_engine_sections(view), _memory(view),
                expectations_section(analysis), _roofline(view), *trace_sections(analysis),
                *findings_sections(analysis),
                amdahl_section(analysis), hypotheses_section(analysis), meaning_section(analysis),
                next_steps_section(analysis), not_evaluated_section(analysis), _checks(view), _notes(analysis),
                _raw(analysis)]
    return Document(title=title_of(analysis), lines=tuple(lines), sections=tuple(s for s in sections if s))
