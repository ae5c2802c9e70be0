"""Report blocks every kind with a trace (or a roofline) draws the same way, built once here over the generic
trace summary (core/trace.py): a breakdown as a table, utilisation over time, idle gaps, the transfer-size
histogram and the roofline chart. What differs per kind (a chart's alt text, the gap table's wording) is its
data/report.yaml `blocks:` mapping, passed in as `wording`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from advisor.core import units as fmt
from advisor.core.trace import Breakdown, Gap, TraceSummary
from advisor.report.charts import finite
from advisor.report.document import Chart, Paragraph, Section, Table, code, escape

TIMELINE_TITLE = "Utilisation over time (busy share per time bin)"


def share_of_span(t: TraceSummary, seconds: float | None) -> str:
    """A time as a share of the run (the trace's span)."""
    return fmt.percent(seconds / t.span if seconds is not None and t.span else None)


def breakdown_table(b: Breakdown, columns: tuple[str, ...] | None = None, key_as_code: bool = False,
                    limit: int | None = None) -> Table:
    """A breakdown as a table: the key, then the chosen columns (all by default) with their units."""
    chosen = [i for i, c in enumerate(b.columns) if columns is None or c.name in columns]
    rows = tuple((code(key) if key_as_code else escape(key), *(fmt.value(values[i], b.columns[i].unit) for i in chosen))
                 for key, values in b.rows[:limit])
    return Table((escape(b.key_title), *(escape(b.columns[i].title) for i in chosen)), rows,
                 align=("left", *("right" for _ in chosen)))


def timeline_chart(t: TraceSummary, wording: Mapping[str, Any]) -> Chart | None:
    """Busy share per time bin of each engine or category (`wording`: alt, optional title); None without bins."""
    if not t.timeline:
        return None
    return Chart("timeline", wording.get("title", TIMELINE_TITLE), {
        "kind": "timeline", "edges": list(t.timeline_edges), "rows": {k: list(v) for k, v in t.timeline.items()}},
        alt=wording["alt"])


def gaps_section(t: TraceSummary, wording: Mapping[str, Any]) -> Section | None:
    """The longest idle gaps (`wording`: intro, share — the share column's heading — and, to show where each
    gap is, where: {warmup, inside, after}); None when the trace has none."""
    if not t.gaps:
        return None
    where: Mapping[str, str] | None = wording.get("where")
    headers: tuple[str, ...] = ("Starts at", "Length", wording["share"])
    rows: tuple[tuple[str, ...], ...] = tuple(
        (fmt.seconds(g.start), fmt.seconds(g.duration), share_of_span(t, g.duration)) for g in t.gaps)
    if where:
        headers = ("Where", *headers)
        rows = tuple((_place(t, g, where), *row) for g, row in zip(t.gaps, rows, strict=True))
    return Section("Idle gaps", (Paragraph(wording["intro"]), Table(
        headers, rows, align=("left", "right", "right", "right") if where else ("right", "right", "right"))), "gaps")


def _place(t: TraceSummary, g: Gap, where: Mapping[str, str]) -> str:
    """Where a gap is: the warm-up before the first event, inside the run, or after the last event."""
    if g.start == 0:
        return where["warmup"]
    after = t.last_event_end is not None and g.start >= t.last_event_end
    return where["after"] if after else where["inside"]


def _size_label(low: float, high: float) -> str:
    if high == float("inf"):
        return f"≥ {fmt.bytes_(low)}"
    return f"{fmt.bytes_(low) if low else '0'} – {fmt.bytes_(high)}"


def size_histogram(t: TraceSummary, wording: Mapping[str, Any]) -> tuple[Table, Chart]:
    """Transfers by size, from the first to the last bin used (`wording`: title, alt, key, count, xlabel)."""
    edges, counts = t.dma_size_edges, t.dma_size_counts
    total = sum(counts) or 1
    used = [i for i, c in enumerate(counts) if c]
    shown = range(used[0], used[-1] + 1) if used else range(0)  # empty bins inside the range stay: it is a histogram
    labels = [_size_label(edges[i], edges[i + 1]) for i in shown]
    table = Table((wording["key"], wording["count"], "Share"), tuple(
        (label, f"{counts[i]:,}", fmt.percent(counts[i] / total)) for label, i in zip(labels, shown, strict=True)),
        align=("left", "right", "right"))
    chart = Chart("dma-sizes", wording["title"], {
        "kind": "hbar", "labels": labels, "values": [100 * counts[i] / total for i in shown],
        "texts": [fmt.percent(counts[i] / total) for i in shown], "xlabel": wording["xlabel"]}, alt=wording["alt"])
    return table, chart


def roofline_placement(ai: float | None, ridge: float | None, ai_text: str, ridge_text: str,
                       wording: Mapping[str, Any]) -> str | None:
    """Which side of the ridge the arithmetic intensity falls (`wording`: ridge — how the ridge is named);
    None when either is unavailable (each kind says why in its own words)."""
    if ai is None or ridge is None:
        return None
    side = "memory-bound" if ai < ridge else "compute-bound"
    return (f"Arithmetic intensity **{ai_text}** against {wording['ridge']} of {ridge_text}: the {side} side of the "
            "roofline.")


def roofline_chart(peak: float | None, bandwidth: float | None, ai: float | None, achieved: float | None,
                   wording: Mapping[str, Any]) -> Chart | None:
    """The roofline (peak FLOP/s, bandwidth in bytes/s) with the measured point (FLOP/B, FLOP/s); `wording`:
    title. None unless all four are finite and non-zero."""
    if not (finite(peak, bandwidth, ai, achieved) and peak and bandwidth and ai and achieved):
        return None
    return Chart("roofline", wording["title"], {
        "kind": "roofline", "peak": peak, "bandwidth": bandwidth, "ai": ai, "achieved": achieved},
        alt=wording.get("alt", "Roofline chart with the kernel's point"))
