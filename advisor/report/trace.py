"""Report sections from a full event trace: where the time goes (hotspots), how the DMA sizes
really look, utilisation over time and idle gaps."""

from __future__ import annotations

from typing import Any

from advisor.model import Analysis, Hotspot
from advisor.report import format as fmt
from advisor.report.document import Bullets, Chart, Paragraph, Section, Table, code, escape


def _size_label(low: float, high: float) -> str:
    if high == float("inf"):
        return f"≥ {fmt.bytes_(low)}"
    return f"{fmt.bytes_(low) if low else '0'} – {fmt.bytes_(high)}"


def _hotspot_table(spots: tuple[Hotspot, ...], what: str) -> Table:
    rows = tuple((code(h.name), fmt.seconds(h.time), fmt.percent(h.share), f"{h.count:,}") for h in spots)
    return Table((what, "Instruction time", "Share", "Instructions"), rows, align=("left", "right", "right", "right"))


def trace_sections(analysis: Analysis) -> list[Section]:
    t = analysis.trace
    if t is None:
        return []
    blocks: list[Any] = [Paragraph(
        f"{t.instructions:,} instructions and {t.dma_transfers:,} DMA transfers over {fmt.seconds(t.span)}; "
        f"something runs {fmt.percent(t.busy_union / t.span if t.span else None)} of that span. Busy times are "
        "unions of each row's instruction intervals (overlapping instructions counted once).")]
    busy_rows = [*t.engine_busy.items(), *([("DMA", t.dma_busy)] if t.dma_busy is not None else [])]
    rows = tuple((escape(name), fmt.seconds(busy), fmt.percent(busy / t.span if t.span else None))
                 for name, busy in busy_rows)
    blocks.append(Table(("Timeline row", "Busy (union)", "Share of span"), rows, align=("left", "right", "right")))
    if t.timeline:
        blocks.append(Chart("timeline", "Utilisation over time (busy share per time bin)", {
            "kind": "timeline", "edges": list(t.timeline_edges), "rows": {k: list(v) for k, v in t.timeline.items()}},
            alt="Per-engine utilisation over the traced span"))
    sections = [Section("Event trace", tuple(blocks), "trace")]
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
        edges, counts = t.dma_size_edges, t.dma_size_counts
        total = sum(counts) or 1
        labels = [_size_label(edges[i], edges[i + 1]) for i in range(len(counts))]
        table = Table(("Transfer size", "Transfers", "Share"), tuple(
            (label, f"{c:,}", fmt.percent(c / total)) for label, c in zip(labels, counts, strict=True) if c),
            align=("left", "right", "right"))
        chart = Chart("dma-sizes", "DMA transfers by size", {
            "kind": "hbar", "labels": labels, "values": [100 * c / total for c in counts],
            "texts": [fmt.percent(c / total) for c in counts], "xlabel": "share of transfers (%)"},
            alt="Histogram of DMA transfer sizes")
        sections.append(Section("DMA transfer sizes", (Paragraph(
            f"{fmt.percent(analysis.value('dma_small_transfer_fraction'))} of transfers are under 4 KiB and "
            f"{fmt.percent(analysis.value('dma_transfer_under_32k_fraction'))} under 32 KiB (AWS: aim for at least "
            "4 KiB, ideally 32 KiB)."), table, chart), "dma-sizes"))
    if t.gaps:
        share = (lambda d: d / t.span) if t.span else (lambda d: None)
        rows = tuple(("warm-up (before the first event)" if g.start == 0 else "inside the run",
                      fmt.seconds(g.start), fmt.seconds(g.duration), fmt.percent(share(g.duration))) for g in t.gaps)
        sections.append(Section("Idle gaps", (Table(("Where", "Starts at", "Length", "Share of span"), rows,
                                                    align=("left", "right", "right", "right")),), "gaps"))
    if t.warnings:
        sections.append(Section("Profiler warnings", (Bullets(tuple(escape(w) for w in t.warnings)),), "warnings"))
    return sections
