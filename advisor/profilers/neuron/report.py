"""The Neuron kind's report sections: TL;DR figures, the setup rows, per-engine utilisation and
instruction tables, memory traffic and the roofline, laid out by data/report.yaml."""

from __future__ import annotations

from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.profilers.neuron import KIND
from advisor.profilers.neuron.trace_report import trace_sections
from advisor.report.document import Chart, Paragraph, Section, Table, escape
from advisor.report.trace_blocks import roofline_chart, roofline_placement
from advisor.report.view import View


def _engines(view: View) -> list[dict[str, Any]]:
    """Engines with an active fraction, busiest first (ties by table order, so output is stable)."""
    rows = [e for e in KIND.data("report.yaml")["engines"] if view.raw(e["percent"]) is not None]
    return sorted(rows, key=lambda e: -(view.raw(e["percent"]) or 0.0))


def tldr(analysis: Analysis) -> list[tuple[int, str]]:
    """TL;DR candidates (priority, text), in display order: the busiest engine, HBM traffic, the
    roofline, the active share."""
    view = View(analysis)
    candidates: list[tuple[int, str]] = []
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
        check = next((e for e in (analysis.investigation.expectations if analysis.investigation else ())
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
    return candidates


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
    placed = roofline_placement(ai, ridge, view.show("mm_arithmetic_intensity"),
                                view.show("peak_flops_bandwidth_ratio"), KIND.data("report.yaml")["blocks"]["roofline"])
    return placed or "Arithmetic intensity or ridge point unavailable: the roofline cannot be placed."


def setup_rows(analysis: Analysis) -> list[tuple[str, str]]:
    """The instance and the tool versions."""
    return [(label, escape(analysis.info[key]) if analysis.info.get(key) else fmt.UNAVAILABLE)
            for key, label in KIND.data("report.yaml")["setup"]]


def hardware_rows(analysis: Analysis) -> list[tuple[str, str]]:
    """The peaks the derived metrics divide by, and the ridge point."""
    hw = analysis.hardware
    rows = [("Tensor Engine peak (BF16)", fmt.rate(hw.values.get("tensor_peak_flops_bf16"), "FLOP/s")),
            ("HBM bandwidth (one stack, as the profiler uses)", fmt.rate(hw.values.get("hbm_bandwidth"), "bytes/s"))
            ] if hw else []
    return [*rows, ("Ridge point", View(analysis).show("peak_flops_bandwidth_ratio"))]


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
                         view.show(e["mean"])) for e in KIND.data("report.yaml")["engines"]
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
    for name, label in KIND.data("report.yaml")["memory"]:
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
    volumes = [(label, view.raw(name)) for name, label in KIND.data("report.yaml")["memory"]
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
    rows = tuple((label, view.show(name)) for name, label in KIND.data("report.yaml")["roofline"]
                 if name in view.analysis.metrics)
    blocks: list[Any] = [Paragraph(_roofline_sentence(view)), Table(("Metric", "Value"), rows, align=("left", "right"))]
    chart = roofline_chart(view.hw("tensor_peak_flops_bf16"), view.hw("hbm_bandwidth"),
                           view.raw("mm_arithmetic_intensity"), view.raw("achieved_flops_rate"),
                           KIND.data("report.yaml")["blocks"]["roofline"])
    if chart:
        blocks.append(chart)
    return Section("Roofline", tuple(blocks), "roofline")


PLACES = ("utilisation", "memory", "roofline", "trace")  # where sections() puts its sections (kinds.contract.PLACES)


def sections(analysis: Analysis) -> dict[str, list[Section]]:
    """The kind's sections, by where the report places them."""
    view = View(analysis)
    return {"utilisation": _engine_sections(view), "memory": [_memory(view)], "roofline": [_roofline(view)],
            "trace": trace_sections(analysis)}
