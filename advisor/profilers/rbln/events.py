"""Event-derived analysis of an RBLN trace (../shared/reference/rbln-profiler.md §6): busy time per command
category as interval unions per unit (a device, or a chiplet on Rebel100), how compute and transfers
overlap, host time the device waits on, sequences, layers, devices and chiplets, a critical path
through the flows, data quality, and the breakdown tables the report shows (busy.py measures the busy
times; the shared builder, metrics/trace_summary.py, makes the summary). numpy throughout: a trace has
millions of slices; Python loops run over distinct names, categories and path nodes only. Unavailable
figures are None, never 0."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from advisor.core.events import NS, EventTrace
from advisor.core.trace import Breakdown, BreakdownLayout, TraceSummary, kind_breakdown
from advisor.metrics.critical_path import critical_path
from advisor.metrics.grouped import covered
from advisor.metrics.intervals import segments, usable
from advisor.metrics.trace_summary import Measured, Span, build_summary
from advisor.profilers.rbln import KIND
from advisor.profilers.rbln.busy import (
    ByCategory,
    Rows,
    category_figures,
    device_span,
    merged,
    overlap_figures,
    seconds,
)
from advisor.profilers.rbln.devices import device_figures
from advisor.profilers.rbln.heap import release_heap
from advisor.profilers.rbln.knowledge import OTHER, categories
from advisor.profilers.rbln.layers import Masks, layer_figures
from advisor.profilers.rbln.naming import name_rules, parse
from advisor.profilers.rbln.sequences import sequence_figures
from advisor.profilers.rbln.slices import Part, Slices, borrow, build, give_back, lent_parts

# The columns of the breakdowns filled here, in the order of their values (titles and units: data/report.yaml)
CATEGORY_COLUMNS = ("busy", "share", "commands", "sum", "concurrency", "bytes", "bandwidth")
PATH_COLUMNS = ("time", "share", "commands")
WAITING = "waiting between commands"


class _Shifted(Mapping[str, Any]):
    """Each shown category's (starts from dev_start, durations) by title, made when asked for: one
    category's copy at a time, not every category's at once."""

    def __init__(self, s: Slices, cat: ByCategory, shown: list[Any], dev_start: float) -> None:
        self._s, self._cat, self._dev_start = s, cat, dev_start
        self._keys = {c.title: c.key for c in shown}

    def __getitem__(self, title: str) -> tuple[Any, Any]:
        release_heap()  # the last category's working set, gone
        mask = self._cat[self._keys[title]]
        return self._s.start[mask] - self._dev_start, self._s.duration[mask]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _part(key: str, table: Any) -> tuple[Part, int]:
    """A table's usable slices (NaN durations: begins never closed), and how many were left out."""
    import numpy as np

    start, duration, keep = usable(table.start, table.duration)
    extra = table.extra

    def codes(name: str) -> tuple[Any, tuple[str, ...]]:
        column = extra.get(name)
        if column is None:
            return np.zeros(len(start), dtype=np.int64), ("device" if name == "device" else "",)
        return column.codes[keep], column.names

    def column(values: Any) -> Any:
        return None if values is None else np.asarray(values, dtype=float)[keep]

    device, devices = codes("device")
    chiplet, chiplets = codes("chiplet")
    ident = extra.get("id")
    part = Part(key, start, duration, table.name.codes[keep], table.name.names, table.track.codes[keep],
                table.track.names, device, devices, chiplet, chiplets,
                None if ident is None else np.asarray(ident)[keep], column(table.bytes), column(extra.get("cycles")))
    return part, int(len(table.start) - len(start))


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _host_split(s: Slices, host: Any, dev: Any, seq_starts: Any, seq_ends: Any) -> dict[str, float | None]:
    """Host time while no device command runs (M8), inside a sequence's span (the run waits on the host)
    or outside every sequence (dispatch between runs): exact, over the elementary intervals of all edges."""
    import numpy as np

    out: dict[str, float | None] = dict.fromkeys(("host_exposed_time", "host_in_sequence_time",
                                                  "host_between_sequences_time"))
    if not host.any():
        return out
    h_start, h_end = merged(s, host)
    d_start, d_end = merged(s, dev)
    q_start, q_end = segments(seq_starts, seq_ends - seq_starts)
    # only host time can be exposed: the other edges inside host segments bound the same elementary
    # intervals there as all of them do (a host segment's end is an edge), far fewer of them
    edges = np.unique(np.concatenate([h_start, h_end, *(x[covered(x, h_start, h_end)]
                                                         for x in (d_start, d_end, q_start, q_end))]))
    left, width = edges[:-1], np.diff(edges)
    exposed = covered(left, h_start, h_end) & ~covered(left, d_start, d_end)
    inside = covered(left, q_start, q_end)
    out["host_exposed_time"] = float(width[exposed].sum()) * NS
    if len(seq_starts):
        out["host_in_sequence_time"] = float(width[exposed & inside].sum()) * NS
        out["host_between_sequences_time"] = float(width[exposed & ~inside].sum()) * NS
    return out


def _quality(trace: EventTrace, s: Slices, cat: Mapping[str, Any], parsed: Any) -> dict[str, float | None]:
    """M27 from the reader's counts (read by attribute: the reader's type is not imported here)."""
    q = trace.extra.get("quality")
    begins, ends = getattr(q, "unclosed_begins", None), getattr(q, "unmatched_ends", None)
    truncated = getattr(q, "truncated", None)
    dropped = getattr(q, "dropped_packets", None)
    commands = ~cat["device_workload"]  # slices that are commands: the Device Workload container is not
    total = float(s.duration.sum())
    return {
        "slice_count": float(sum(len(t.start) for t in trace.tables.values())),
        "unmatched_slices": float(begins + ends) if begins is not None and ends is not None else None,
        "dropped_packets": None if dropped is None else float(dropped),
        "trace_truncated": None if truncated is None else float(bool(truncated)),
        "unparsed_name_share": float((~parsed & commands).sum()) / float(commands.sum()) if commands.any() else None,
        "unknown_category_share": float(s.duration[cat[OTHER]].sum()) / total if total > 0 else None,
    }


def summarize(trace: EventTrace, total_time: float | None = None) -> tuple[TraceSummary, dict[str, float | None]]:
    """The trace summary for the report, and the event-derived metrics (machine units) for the rules. A trace
    the reader made lends its columns (sorted in place, put back before this returns): not held twice."""
    lent = lent_parts(trace)
    if lent is None:  # tables made otherwise (tests, other readers): their usable rows copied
        read = [_part(key, table) for key, table in trace.tables.items()]
        skipped = {p.category: n for p, n in read}
        parts = [p for p, _ in read]
        del read
        return _summarize(trace, build(parts), skipped, total_time)  # build consumes the parts
    parts, columns = lent
    keys = [p.category for p in parts]
    s, unusable, order = borrow(parts, columns)  # the trace's own columns, sorted in place
    try:
        release_heap()
        return _summarize(trace, s, dict(zip(keys, unusable, strict=True)), total_time)
    finally:
        del s
        give_back(columns, order)  # the trace as it was


def _layout(name: str, columns: tuple[str, ...]) -> BreakdownLayout:
    return kind_breakdown(KIND, name, columns)


@dataclass(frozen=True)
class _Named:
    """What the names give: metrics, the reader's data quality (metrics too) and three breakdowns."""

    metrics: dict[str, float | None]
    quality: dict[str, float | None]
    layers: Breakdown | None
    sequences: Breakdown | None
    devices: Breakdown | None


def _summarize(trace: EventTrace, s: Slices, skipped: dict[str, int],
               total_time: float | None) -> tuple[TraceSummary, dict[str, float | None]]:
    """`summarize` over the sorted slices, a phase at a time: busy times, names, the critical path, the summary."""
    import numpy as np

    cats = categories()
    cat = ByCategory(s)
    rows = Rows(s.mask(device=True), s.mask(compute=True), s.mask(dma=True), s.mask(io=True), s.mask(comm=True))
    device, m = device_span(s, rows.dev)
    groups, table_rows, category_metrics = category_figures(s, cat, device.span, total_time)
    m.update(category_metrics)
    ne_busy, overlap = overlap_figures(s, cat, rows)
    m.update(overlap)
    named = _named(trace, s, cat, rows, device.end, ne_busy)
    m.update(named.metrics)
    path_metrics, path_table = _critical(s, rows.dev, trace.extra.get("flows"))
    m.update(path_metrics)
    m.update(named.quality)

    # the summary the report draws
    categories_table = _layout("categories", CATEGORY_COLUMNS).make(
        table_rows, "Busy is the union of a category's commands, mean per device or chiplet (Host: the file's union); "
        "shares are of the device span (Host: of the whole trace).")
    shown = [c for c in cats if (c.device or c.key == "host") and cat[c.key].any()]
    sizes = s.bytes[s.mask(keys=tuple(c.key for c in cats if c.transfer))]
    summary = build_summary(Measured(
        events={"compute": int(rows.ne.sum()), "dma": int(rows.dma.sum())}, span=Span(device.span, device.start),
        groups=groups, timeline=_Shifted(s, cat, shown, device.start), gaps=device.gaps,
        transfer_sizes=sizes[np.isfinite(sizes)], warnings=tuple(trace.warnings),
        skipped={"compute": sum(skipped.get(c.key, 0) for c in cats if c.compute),
                 "dma": sum(skipped.get(c.key, 0) for c in cats if c.dma)},
        last_event_end=s.last_end() if len(s) else None,
        breakdowns=(categories_table, named.layers, named.sequences, named.devices, path_table),
        busy_union=m["device_busy"], dma_busy=m["dma_busy"], compute_busy=seconds(ne_busy),
        dma_exposed=m["dma_only_time"]))
    return summary, m


def _named(trace: EventTrace, s: Slices, cat: ByCategory, rows: Rows, dev_end: float,
           ne_busy: float | None) -> _Named:
    """From the names: sequences, layers, the host split, devices and data quality (the heap trimmed after each
    stage that held columns of temporaries)."""
    dev, ne, dma, io, comm = rows.dev, rows.ne, rows.dma, rows.io, rows.comm
    release_heap()
    names = parse(s.names)
    release_heap()
    rules = name_rules()
    seqs = sequence_figures(s, names, dev, ne, io, dev_end, rules.max_sequences)
    m = dict(seqs.metrics)
    m.update(_host_split(s, cat["host"], dev, seqs.starts, seqs.ends))
    release_heap()
    masks = Masks(dev=dev, ne=ne, dma=dma, neural_dma=cat["neural_dma"], task_dma=cat["task_dma"])
    layer_metrics, layers = layer_figures(s, names, masks, ne_busy, rules)
    m.update(layer_metrics)
    release_heap()
    device_metrics, devices = device_figures(s, dev, ne, dma, comm, cat["device_sync"])
    m.update(device_metrics)
    quality = _quality(trace, s, cat, names.parsed[s.name])
    del names, masks  # a column or more per name: gone before the critical path's working set
    release_heap()
    return _Named(m, quality, layers, seqs.breakdown, devices)


def _critical(s: Slices, dev: Any, flows: Any) -> tuple[dict[str, float | None], Breakdown | None]:
    """The critical path through the device commands: its metrics and its table by category."""
    import numpy as np

    cats = categories()
    path = critical_path(s, dev, flows)
    release_heap()
    if path is None:
        return dict.fromkeys(("critical_path_time", "critical_path_wait", "critical_path_nodes")), None
    length = float(path.time.sum()) + path.wait
    by_cat = np.bincount(s.category[path.rows], weights=path.time, minlength=len(cats))
    counts = np.bincount(s.category[path.rows], minlength=len(cats))
    m: dict[str, float | None] = {"critical_path_time": float(path.time.sum()) * NS,
                                  "critical_path_wait": path.wait * NS, "critical_path_nodes": float(len(path.rows))}
    ranked = sorted((i for i in range(len(cats)) if counts[i]), key=lambda i: (-by_cat[i], i))
    rows: list[tuple[str, tuple[float | None, ...]]] = [
        (cats[i].title, (float(by_cat[i]) * NS, _div(float(by_cat[i]), length), float(counts[i]))) for i in ranked]
    rows.append((WAITING, (path.wait * NS, _div(path.wait, length), None)))
    table = _layout("critical_path", PATH_COLUMNS).make(
        rows, "A lower bound: the path follows the trace's flows and each track's command order, and Neural DMA "
        "dependencies are not drawn as flows. Each command counts up to where the next one on the path starts.")
    return m, table
