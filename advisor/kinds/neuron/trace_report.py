"""Report sections from a full event trace: busy time per engine checked against the summary, where
the time goes (hotspots), how the DMA sizes really look, which tensors were loaded again and again,
utilisation over time and idle gaps."""

from __future__ import annotations

from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.core.numbers import CROSS_CHECK_TOLERANCE, relative_difference
from advisor.core.trace import Gap, Hotspot, TraceSummary
from advisor.report.document import Bullets, Chart, Paragraph, Section, Table, code, escape


def _size_label(low: float, high: float) -> str:
    if high == float("inf"):
        return f"≥ {fmt.bytes_(low)}"
    return f"{fmt.bytes_(low) if low else '0'} – {fmt.bytes_(high)}"


def _hotspot_table(spots: tuple[Hotspot, ...], what: str) -> Table:
    rows = tuple((code(h.name), fmt.seconds(h.time), fmt.percent(h.share), f"{h.count:,}") for h in spots)
    return Table((what, "Instruction time", "Share", "Instructions"), rows, align=("left", "right", "right", "right"))


def _check(measured: float | None, reported: float | None) -> str:
    """The event-derived time against the summary's own figure for it."""
    if measured is None or reported is None:
        return "—"
    difference = relative_difference(reported, measured)
    return "agrees" if difference <= CROSS_CHECK_TOLERANCE else f"**differs by {fmt.percent(difference)}**"


def _reported(value: float | None) -> str:
    return "—" if value is None else fmt.seconds(value)


def _share(t: TraceSummary, seconds: float) -> str:
    """A time as a share of the run."""
    return fmt.percent(seconds / t.span if t.span else None)


def _busy_table(t: TraceSummary, analysis: Analysis) -> Table:
    rows = []
    for e in t.engines:
        reported = analysis.value(f"{e.engine}_engine_active_time") if e.engine else None
        name = escape(e.title) if e.engine else f"{escape(e.title)} (unclassified row)"
        rows.append((name, ", ".join(code(r) for r in e.rows), fmt.seconds(e.busy), _share(t, e.busy),
                     _reported(reported), _check(e.busy, reported)))
    compute = ", ".join(escape(e.title) for e in t.engines if e.compute)
    totals = (("Compute engines", compute, t.compute_busy, None),
              ("DMA", "all queues", t.dma_busy, analysis.value("dma_active_time")),
              ("Anything", "every row and DMA", t.busy_union, analysis.value("total_active_time")))
    for name, rows_text, busy, reported in totals:
        if busy is not None:
            rows.append((f"**{name}**", rows_text, fmt.seconds(busy), _share(t, busy), _reported(reported),
                         _check(busy, reported)))
    return Table(("Engine", "Timeline rows", "Busy (union)", "Share of the run", "Summary reports", "Check"),
                 tuple(rows), align=("left", "left", "right", "right", "right", "left"))


def _trace_section(t: TraceSummary, analysis: Analysis) -> Section:
    run = "the run" if analysis.value("total_time") is None else "the run (the summary's total_time)"
    ends = (f" The last event ends at {fmt.seconds(t.last_event_end)}."
            if t.last_event_end is not None and t.last_event_end < t.span else "")
    blocks: list[Any] = [Paragraph(
        f"{t.instructions:,} instructions and {t.dma_transfers:,} DMA transfers over {fmt.seconds(t.span)}, {run}; "
        f"something runs {fmt.percent(t.busy_union / t.span if t.busy_union is not None and t.span else None)} of "
        f"it.{ends} Busy times are unions of intervals (overlapping instructions or DMA queues counted once), "
        f"checked against the summary's active times (they agree within {fmt.percent(CROSS_CHECK_TOLERANCE)} or "
        "the difference is shown)."), _busy_table(t, analysis)]
    skipped = [f"{n:,} {what}" for n, what in ((t.skipped_instructions, "instruction events"),
                                               (t.skipped_dma, "DMA events")) if n]
    if skipped:
        blocks.append(Paragraph(f"Left out: {' and '.join(skipped)} without a usable start time or duration "
                                "(not an object, null, negative or not a number)."))
    missing = [what for n, what in ((t.instructions, "instruction"), (t.dma_transfers, "DMA")) if not n]
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
            "own and not counted as compute; the patterns are in advisor/kinds/neuron/data/trace.yaml."))
    if t.timeline:
        blocks.append(Chart("timeline", "Utilisation over time (busy share per time bin)", {
            "kind": "timeline", "edges": list(t.timeline_edges), "rows": {k: list(v) for k, v in t.timeline.items()}},
            alt="Per-engine utilisation over the traced span"))
    return Section("Event trace", tuple(blocks), "trace")


def _dma_section(t: TraceSummary, analysis: Analysis) -> Section:
    edges, counts = t.dma_size_edges, t.dma_size_counts
    total = sum(counts) or 1
    used = [i for i, c in enumerate(counts) if c]
    shown = range(used[0], used[-1] + 1) if used else range(0)  # empty bins inside the range stay: it is a histogram
    labels = [_size_label(edges[i], edges[i + 1]) for i in shown]
    table = Table(("Transfer size", "Transfers", "Share"), tuple(
        (label, f"{counts[i]:,}", fmt.percent(counts[i] / total)) for label, i in zip(labels, shown, strict=True)),
        align=("left", "right", "right"))
    chart = Chart("dma-sizes", "DMA transfers by size", {
        "kind": "hbar", "labels": labels, "values": [100 * counts[i] / total for i in shown],
        "texts": [fmt.percent(counts[i] / total) for i in shown], "xlabel": "share of transfers (%)"},
        alt="Histogram of DMA transfer sizes")
    return Section("DMA transfer sizes", (Paragraph(
        f"{fmt.percent(analysis.value('dma_small_transfer_fraction'))} of transfers are under 4 KiB and "
        f"{fmt.percent(analysis.value('dma_transfer_under_32k_fraction'))} under 32 KiB (AWS: aim for at least "
        "4 KiB, ideally 32 KiB)."), table, chart), "dma-sizes")


def _tensor_section(t: TraceSummary, analysis: Analysis) -> Section:
    if not t.tensor_loads:
        return Section("Tensor loads", (Paragraph(f"Unavailable: {escape(t.tensor_note)}."),), "tensors")
    over = analysis.value("tensors_loaded_over_twice")
    blocks: list[Any] = [Paragraph(
        f"How many full copies of each input and weight tensor DMA loaded: the bytes transfers naming the tensor "
        f"moved, over the size the NEFF declares ({t.tensors_declared:,} tensors declared). "
        f"{fmt.count(over)} {'was' if over == 1 else 'were'} loaded more than twice (neuron-profile's timeline "
        "view draws a warning around such loads); "
        f"loads beyond one copy of each moved {fmt.bytes_(analysis.value('tensor_reload_excess_bytes'))}. "
        "The most reloaded:")]
    rows = tuple((code(x.name), escape(x.kind) or "—", fmt.bytes_(x.size), fmt.bytes_(x.loaded_bytes),
                  fmt.count(x.loads), fmt.ratio(x.repeat, "×") + (" (reported)" if x.source == "reported" else ""))
                 for x in t.tensor_loads)
    blocks.append(Table(("Tensor", "Kind", "Size", "Loaded", "Transfers", "Copies loaded"), rows,
                        align=("left", "left", "right", "right", "right", "right")))
    if t.dma_unnamed_fraction:
        blocks.append(Paragraph(
            f"{fmt.percent(t.dma_unnamed_fraction)} of DMA bytes name no declared tensor (dynamic DMA captured "
            f"without {code('--enable-dge-notifs')}, spills, intermediates), so the copies measured here are lower "
            "bounds."))
    return Section("Tensor loads", tuple(blocks), "tensors")


def _gaps_section(t: TraceSummary) -> Section:
    def where(g: Gap) -> str:
        if g.start == 0:
            return "warm-up (before the first event)"
        after = t.last_event_end is not None and g.start >= t.last_event_end
        return "after the last event" if after else "inside the run"

    rows = tuple((where(g), fmt.seconds(g.start), fmt.seconds(g.duration), _share(t, g.duration)) for g in t.gaps)
    return Section("Idle gaps", (
        Paragraph("Time in which no instruction or DMA runs: the warm-up before the first event, the longest gaps "
                  "inside the run (longest first) and the time after the last event."),
        Table(("Where", "Starts at", "Length", "Share of the run"), rows, align=("left", "right", "right", "right"))),
        "gaps")


def trace_sections(analysis: Analysis) -> list[Section]:
    t = analysis.trace
    if t is None:
        return []
    sections = [_trace_section(t, analysis)]
    hot: list[Any] = []
    if t.hotspots_hlo:
        hot.append(_hotspot_table(t.hotspots_hlo, "HLO op"))
    if t.hotspots_nki:
        hot.append(_hotspot_table(t.hotspots_nki, "NKI source line"))
    if hot:
        sections.append(Section("Hotspots", (Paragraph(
            "The HLO ops and NKI source lines with the most instruction time (summed durations, all engines)."),
            *hot), "hotspots"))
    if t.dma_transfers:
        sections.append(_dma_section(t, analysis))
        sections.append(_tensor_section(t, analysis))
    if t.gaps:
        sections.append(_gaps_section(t))
    if t.warnings:
        sections.append(Section("Profiler warnings", (Bullets(tuple(escape(w) for w in t.warnings)),), "warnings"))
    return sections
