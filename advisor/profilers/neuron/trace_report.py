"""Report sections from a full event trace: busy time per engine checked against the summary, where
the time goes (hotspots), how the DMA sizes really look, which tensors were loaded again and again. The
report's skeleton adds the shared blocks data/report.yaml places: utilisation over time, the transfer-size
histogram and the idle gaps (advisor/report/trace_layout.py)."""

from __future__ import annotations

from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.core.numbers import CROSS_CHECK_TOLERANCE, relative_difference
from advisor.core.trace import Breakdown, TraceSummary
from advisor.profilers.neuron.tables import DMA, INSTRUCTION
from advisor.report.document import Bullets, Paragraph, Section, Table, code, escape
from advisor.report.trace_blocks import breakdown_table, share_of_span


def _check(measured: float | None, reported: float | None) -> str:
    """The event-derived time against the summary's own figure for it."""
    if measured is None or reported is None:
        return "—"
    difference = relative_difference(reported, measured)
    return "agrees" if difference <= CROSS_CHECK_TOLERANCE else f"**differs by {fmt.percent(difference)}**"


def _reported(value: float | None) -> str:
    return "—" if value is None else fmt.seconds(value)


def _busy_table(t: TraceSummary, analysis: Analysis) -> Table:
    rows = []
    for e in t.engines:
        reported = analysis.value(f"{e.engine}_engine_active_time") if e.engine else None
        name = escape(e.title) if e.engine else f"{escape(e.title)} (unclassified row)"
        rows.append((name, ", ".join(code(r) for r in e.rows), fmt.seconds(e.busy), share_of_span(t, e.busy),
                     _reported(reported), _check(e.busy, reported)))
    compute = ", ".join(escape(e.title) for e in t.engines if e.compute)
    totals = (("Compute engines", compute, t.compute_busy, None),
              ("DMA", "all queues", t.dma_busy, analysis.value("dma_active_time")),
              ("Anything", "every row and DMA", t.busy_union, analysis.value("total_active_time")))
    for name, rows_text, busy, reported in totals:
        if busy is not None:
            rows.append((f"**{name}**", rows_text, fmt.seconds(busy), share_of_span(t, busy), _reported(reported),
                         _check(busy, reported)))
    return Table(("Engine", "Timeline rows", "Busy (union)", "Share of the run", "Summary reports", "Check"),
                 tuple(rows), align=("left", "left", "right", "right", "right", "left"))


def _trace_section(t: TraceSummary, analysis: Analysis) -> Section:
    run = "the run" if analysis.value("total_time") is None else "the run (the summary's total_time)"
    ends = (f" The last event ends at {fmt.seconds(t.last_event_end)}."
            if t.last_event_end is not None and t.last_event_end < t.span else "")
    instructions, transfers = t.events.get(INSTRUCTION, 0), t.events.get(DMA, 0)
    blocks: list[Any] = [Paragraph(
        f"{instructions:,} instructions and {transfers:,} DMA transfers over {fmt.seconds(t.span)}, {run}; "
        f"something runs {fmt.percent(t.busy_union / t.span if t.busy_union is not None and t.span else None)} of "
        f"it.{ends} Busy times are unions of intervals (overlapping instructions or DMA queues counted once), "
        f"checked against the summary's active times (they agree within {fmt.percent(CROSS_CHECK_TOLERANCE)} or "
        "the difference is shown)."), _busy_table(t, analysis)]
    skipped = [f"{n:,} {what}" for n, what in ((t.skipped.get(INSTRUCTION, 0), "instruction events"),
                                               (t.skipped.get(DMA, 0), "DMA events")) if n]
    if skipped:
        blocks.append(Paragraph(f"Left out: {' and '.join(skipped)} without a usable start time or duration "
                                "(not an object, null, negative or not a number)."))
    missing = [what for n, what in ((instructions, "instruction"), (transfers, "DMA")) if not n]
    if missing:
        blocks.append(Paragraph(f"The trace has no {' and no '.join(missing)} events: the figures that need them "
                                "are unavailable (an Explorer folder writes a table only when the profile has that "
                                "activity, so check that no table was left behind when it was copied)."))
    if t.dma_exposed is not None:
        blocks.append(Paragraph(
            f"**DMA runs while every compute engine is idle for {fmt.seconds(t.dma_exposed)}** "
            f"({fmt.percent(analysis.value('dma_wait_fraction'))} of total time): the union of DMA and compute "
            f"intervals ({fmt.seconds((t.compute_busy or 0) + t.dma_exposed)}) minus the compute union "
            f"({fmt.seconds(t.compute_busy)}). In that time compute can only wait on data; it is a lower bound on "
            "DMA wait, since an engine can also stall on DMA while another one runs."))
    unclassified = [e.title for e in t.engines if not e.engine]
    if unclassified:
        blocks.append(Paragraph(
            f"Rows no engine pattern recognises ({', '.join(code(r) for r in unclassified)}) are shown on their "
            "own and not counted as compute; the patterns are in advisor/profilers/neuron/data/trace.yaml."))
    return Section("Event trace", tuple(blocks), "trace")


def _dma_section(analysis: Analysis) -> Section:
    """The transfer sizes against AWS's advice; the histogram follows (report.yaml `blocks.sizes`)."""
    return Section("DMA transfer sizes", (Paragraph(
        f"{fmt.percent(analysis.value('dma_small_transfer_fraction'))} of transfers are under 4 KiB and "
        f"{fmt.percent(analysis.value('dma_transfer_under_32k_fraction'))} under 32 KiB (AWS: aim for at least "
        "4 KiB, ideally 32 KiB)."),), "dma-sizes")


def _tensor_section(b: Breakdown, analysis: Analysis) -> Section:
    if not b.rows:
        return Section("Tensor loads", (Paragraph(f"Unavailable: {escape(b.note)}."),), "tensors")
    over = analysis.value("tensors_loaded_over_twice")
    blocks: list[Any] = [Paragraph(
        f"How many full copies of each input and weight tensor DMA loaded: the bytes transfers naming the tensor "
        f"moved, over the size the NEFF declares ({fmt.count(b.figure('declared'))} tensors declared). "
        f"{fmt.count(over)} {'was' if over == 1 else 'were'} loaded more than twice (neuron-profile's timeline "
        "view draws a warning around such loads); "
        f"loads beyond one copy of each moved {fmt.bytes_(analysis.value('tensor_reload_excess_bytes'))}. "
        "The most reloaded:")]

    def cells(key: str, values: tuple[float | None, ...]) -> tuple[str, ...]:
        shown = [fmt.value(v, c.unit) for v, c in zip(values, b.columns, strict=True)]
        shown[-1] += " (reported)" if b.text(key, "source") == "reported" else ""  # copies: Explorer's own figure
        return (code(key), escape(b.text(key, "kind")) or "—", *shown)

    kind = next((c.title for c in b.text_columns if c.name == "kind"), "Kind")
    blocks.append(Table((escape(b.key_title), escape(kind), *(escape(c.title) for c in b.columns)),
                        tuple(cells(key, values) for key, values in b.rows),
                        align=("left", "left", *("right" for _ in b.columns))))
    unnamed = b.figure("unnamed_fraction")
    if unnamed:
        blocks.append(Paragraph(
            f"{fmt.percent(unnamed)} of DMA bytes name no declared tensor (dynamic DMA captured "
            f"without {code('--enable-dge-notifs')}, spills, intermediates), so the copies measured here are lower "
            "bounds."))
    return Section("Tensor loads", tuple(blocks), "tensors")


def trace_sections(analysis: Analysis) -> list[Section]:
    t = analysis.trace
    if t is None:
        return []
    sections = [_trace_section(t, analysis)]
    hot = [breakdown_table(b, key_as_code=True) for name in ("hotspots_hlo", "hotspots_nki")
           if (b := t.breakdown(name)) is not None and b.rows]
    if hot:
        sections.append(Section("Hotspots", (Paragraph(
            "The HLO ops and NKI source lines with the most instruction time (summed durations, all engines)."),
            *hot), "hotspots"))
    if t.events.get(DMA):
        sections.append(_dma_section(analysis))
        tensors = t.breakdown("tensor_loads")
        if tensors is not None:
            sections.append(_tensor_section(tensors, analysis))
    if t.warnings:
        sections.append(Section("Profiler warnings", (Bullets(tuple(escape(w) for w in t.warnings)),), "warnings"))
    return sections
