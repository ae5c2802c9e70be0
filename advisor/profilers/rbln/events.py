"""Event-derived analysis of an RBLN trace (../shared/reference/rbln-profiler.md §6): busy time per command
category as interval unions per unit (a device, or a chiplet on Rebel100), how compute and transfers
overlap, host time the device waits on, sequences, layers, devices and chiplets, a critical path
through the flows, data quality, and the breakdown tables the report shows. numpy throughout: a trace
has millions of slices; Python loops run over distinct names, categories and path nodes only.
Unavailable figures are None, never 0."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from advisor.core.events import EventTrace
from advisor.core.trace import DMA_SIZE_EDGES, EngineBusy, Gap, TraceSummary, kind_breakdown
from advisor.metrics.critical_path import critical_path
from advisor.metrics.grouped import covered, one_group_segments, rows_of, union
from advisor.metrics.intervals import gaps, segments, timeline, usable
from advisor.profilers.rbln import KIND
from advisor.profilers.rbln.devices import device_figures
from advisor.profilers.rbln.heap import release_heap
from advisor.profilers.rbln.knowledge import OTHER, categories
from advisor.profilers.rbln.layers import Masks, layer_figures
from advisor.profilers.rbln.naming import name_rules, parse
from advisor.profilers.rbln.sequences import sequence_figures
from advisor.profilers.rbln.slices import Part, Slices, borrow, build, give_back, lent_parts
from advisor.profilers.rbln.unions import per_unit, per_unit_groups

NS = 1e-9
TIMELINE_BINS = 60
# The columns of the breakdowns filled here, in the order of their values (titles and units: data/report.yaml)
CATEGORY_COLUMNS = ("busy", "share", "commands", "sum", "concurrency", "bytes", "bandwidth")
PATH_COLUMNS = ("time", "share", "commands")
WAITING = "waiting between commands"


class _ByCategory(Mapping[str, Any]):
    """Each category's row mask, made when asked for (not kept: a mask per category is a column's worth)."""

    def __init__(self, s: Slices) -> None:
        self._s, self._index = s, {c.key: i for i, c in enumerate(categories())}

    def __getitem__(self, key: str) -> Any:
        return self._s.category == self._index[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


class _Shifted(Mapping[str, Any]):
    """Each shown category's (starts from dev_start, durations) by title, made when asked for: one
    category's copy at a time, not every category's at once."""

    def __init__(self, s: Slices, cat: _ByCategory, shown: list[Any], dev_start: float) -> None:
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


def _mean_ns(s: Slices, mask: Any) -> float | None:
    return float(per_unit(s, mask).mean()) if mask.any() and s.units else None


def _s(ns: float | None) -> float | None:
    return None if ns is None else ns * NS


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
    h_start, h_end = _merged(s, host)
    d_start, d_end = _merged(s, dev)
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


def _merged(s: Slices, mask: Any) -> tuple[Any, Any]:
    """The merged segments of the masked rows, all in one group: their starts and ends."""
    return one_group_segments(s, rows_of(mask))


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


def _efficiency(s: Slices, ne: Any) -> tuple[float | None, float | None]:
    """Σ comp_cycle on the Neural Engine, and the median command's cycle density over the p90 density
    (no clock rate is published: relative density only, M14)."""
    import numpy as np

    cycles, duration = s.cycles[ne], s.duration[ne]
    known = np.isfinite(cycles)
    if not known.any():
        return None, None
    dense = known & (duration > 0)
    density = cycles[dense] / duration[dense]
    p90 = float(np.percentile(density, 90)) if len(density) else 0.0
    median = float(np.median(np.clip(density / p90, 0, 1))) if p90 > 0 else None
    return float(cycles[known].sum()), median


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


def _summarize(trace: EventTrace, s: Slices, skipped: dict[str, int],
               total_time: float | None) -> tuple[TraceSummary, dict[str, float | None]]:
    import numpy as np

    cats = categories()
    cat = _ByCategory(s)
    dev, ne = s.mask(device=True), s.mask(compute=True)
    dma, io, comm = s.mask(dma=True), s.mask(io=True), s.mask(comm=True)
    host = cat["host"]
    units = len(s.units)
    m: dict[str, float | None] = {}

    # spans and idle time
    has_dev = bool(dev.any())
    dev_start = float(s.start[dev].min()) if has_dev else 0.0
    dev_end = float(s.end(dev).max()) if has_dev else 0.0
    span_ns = dev_end - dev_start
    d_start, d_end = _merged(s, dev)
    holes = d_start[1:] - d_end[:-1]
    # the device is idle only when no device or chiplet runs anything: the holes of the union over all
    # units (a chiplet waiting for a straggler is not device idle time); the mean per unit is its own figure
    device_busy = float((d_end - d_start).sum()) if has_dev else None
    unit_busy = _mean_ns(s, dev)
    m["device_span"] = span_ns * NS if has_dev else None
    m["device_busy"] = _s(device_busy)
    m["device_idle_time"] = (span_ns - device_busy) * NS if device_busy is not None else None
    m["mean_unit_busy"] = _s(unit_busy)
    m["mean_unit_idle_time"] = (span_ns - unit_busy) * NS if unit_busy is not None else None
    m["largest_gap"] = float(holes.max()) * NS if len(holes) else (0.0 if has_dev else None)
    m["gap_count"] = float((holes >= name_rules().min_gap).sum()) if has_dev else None
    idle = tuple(Gap((a + dev_start) * NS, length * NS)
                 for a, length in gaps(d_start - dev_start, d_end - dev_start, span_ns))
    del d_start, d_end, holes  # a segment each time the device idles: millions in a long trace

    # per category: busy (mean per unit; Host: the file's union), commands, bytes, bandwidth
    per_cat = per_unit_groups(s, ~host, s.category, len(cats)) if units else np.zeros((len(cats), 0))
    # bandwidth and concurrency divide by the busy time of each track group (device, or device and chiplet)
    # once: the unit view would count a device-level track once per chiplet
    scopes = len(s.devices) * len(s.chiplets)
    wide = np.int32 if len(cats) * scopes < 2**31 else np.int64
    scope = s.category.astype(wide) * scopes
    scope += np.multiply(s.device, len(s.chiplets), dtype=wide)
    scope += s.chiplet
    scope_sum = union(s, np.arange(len(s), dtype=np.int32), scope,
                      len(cats) * scopes).reshape(len(cats), scopes).sum(axis=1)
    del scope
    h_start, h_end = _merged(s, host)
    host_union = float((h_end - h_start).sum())
    file_span = float(s.last_end() - s.start.min()) if len(s) else 0.0
    run_ns = total_time / NS if total_time else file_span
    table_rows, engines = [], []
    for i, c in enumerate(cats):
        rows = cat[c.key]
        n = int(rows.sum())
        busy_ns = host_union if c.key == "host" else float(per_cat[i].mean()) if units else 0.0
        unit_sum = host_union if c.key == "host" else float(scope_sum[i])
        carried = s.bytes[rows]
        known = np.isfinite(carried)
        moved = float(carried[known].sum()) if known.any() else None
        bandwidth = moved / (unit_sum * NS) if moved is not None and unit_sum > 0 else None
        if c.key != OTHER:
            m[f"{c.key}_busy"] = busy_ns * NS if n else None
            m[f"{c.key}_commands"] = float(n) if n else None
            if c.transfer:
                m[f"{c.key}_bytes"], m[f"{c.key}_bandwidth"] = moved, bandwidth
        if not n:
            continue
        total = float(s.duration[rows].sum())
        whole = run_ns if c.key == "host" else span_ns
        table_rows.append((c.title, (busy_ns * NS, busy_ns / whole if whole > 0 else None, float(n), total * NS,
                                     total / unit_sum if unit_sum > 0 else None, moved, bandwidth)))
        used = np.unique(s.track[rows])
        engines.append(EngineBusy(engine="" if c.key == OTHER else c.key, title=c.title,
                                  rows=tuple(s.tracks[t][1] for t in used), busy=busy_ns * NS, compute=c.compute))
    order = {c.title: i for i, c in enumerate(cats)}
    engines.sort(key=lambda e: (e.engine == "", -e.busy, order[e.title]))
    table_rows.sort(key=lambda r: (r[0] == cats[-1].title, -(r[1][0] or 0.0), order[r[0]]))

    # overlap of compute and transfers (M5, M6, M21)
    ne_busy, dma_busy, comm_busy = _mean_ns(s, ne), _mean_ns(s, dma), _mean_ns(s, comm)
    # M6 over the transfers on the Neural Engine's flow path; the NE idle under Neural DMA alone is its own
    # figure below (a different fix: prefetch), so the two never claim the same time
    starving = cat["task_dma"] | cat["external_hdma"]
    both = _mean_ns(s, ne | dma) if ne_busy is not None and dma_busy is not None else None
    m["dma_busy"] = _s(dma_busy)
    m["ne_only_time"] = _s(both - dma_busy) if both is not None and dma_busy is not None else None
    m["dma_only_time"] = _s(both - ne_busy) if both is not None and ne_busy is not None else None
    m["ne_dma_overlap_time"] = _s(ne_busy + dma_busy - both) if both is not None else None
    starved = _mean_ns(s, ne | starving) if ne_busy is not None and starving.any() else None
    m["ne_starved_time"] = _s(starved - ne_busy) if starved is not None and ne_busy is not None else None
    # the Neural Engine idle while Neural DMA runs and no Task DMA or External HDMA does: the time double-buffering
    # Neural DMA (loading the next tile under the current command) can give back
    under_ndma = None
    if ne_busy is not None and cat["neural_dma"].any():
        loaded = _mean_ns(s, ne | starving | cat["neural_dma"])
        under_ndma = loaded - (starved if starved is not None else ne_busy)
    m["ne_idle_under_neural_dma_time"] = _s(under_ndma)
    # the part under Task DMA alone: what removing spills through Task DMA can give back at most
    spilled = _mean_ns(s, ne | cat["task_dma"]) if ne_busy is not None and cat["task_dma"].any() else None
    m["task_dma_exposed_time"] = _s(spilled - ne_busy) if spilled is not None and ne_busy is not None else None
    m["comm_busy"] = _s(comm_busy)
    exposed = _mean_ns(s, ne | comm) if ne_busy is not None and comm_busy is not None else None
    m["comm_exposed_time"] = _s(exposed - ne_busy) if exposed is not None and ne_busy is not None else None
    m["ne_cycles"], m["ne_efficiency_median"] = _efficiency(s, ne)

    # names: sequences, layers, host split (the heap trimmed after each stage that held columns of temporaries)
    release_heap()
    names = parse(s.names)
    release_heap()
    rules = name_rules()
    seqs = sequence_figures(s, names, dev, ne, io, dev_end, rules.max_sequences)
    m.update(seqs.metrics)
    m.update(_host_split(s, host, dev, seqs.starts, seqs.ends))
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

    # critical path through the device commands
    path = critical_path(s, dev, trace.extra.get("flows"))
    release_heap()
    path_table = None
    if path is not None:
        length = float(path.time.sum()) + path.wait
        by_cat = np.bincount(s.category[path.rows], weights=path.time, minlength=len(cats))
        counts = np.bincount(s.category[path.rows], minlength=len(cats))
        m["critical_path_time"] = float(path.time.sum()) * NS
        m["critical_path_wait"] = path.wait * NS
        m["critical_path_nodes"] = float(len(path.rows))
        ranked = sorted((i for i in range(len(cats)) if counts[i]), key=lambda i: (-by_cat[i], i))
        rows = [(cats[i].title, (float(by_cat[i]) * NS, _div(float(by_cat[i]), length), float(counts[i])))
                for i in ranked] + [(WAITING, (path.wait * NS, _div(path.wait, length), None))]
        path_table = kind_breakdown(KIND, "critical_path", PATH_COLUMNS).make(
            rows, "A lower bound: the path follows the trace's flows and each track's command order, and Neural DMA "
            "dependencies are not drawn as flows. Each command counts up to where the next one on the path starts.")
    else:
        m.update(dict.fromkeys(("critical_path_time", "critical_path_wait", "critical_path_nodes")))
    m.update(quality)

    # the summary the report draws
    categories_table = kind_breakdown(KIND, "categories", CATEGORY_COLUMNS).make(
        table_rows, "Busy is the union of a category's commands, mean per device or chiplet (Host: the file's union); "
        "shares are of the device span (Host: of the whole trace).")
    shown = [c for c in cats if (c.device or c.key == "host") and cat[c.key].any()]
    edges, shares = timeline(_Shifted(s, cat, shown, dev_start), span_ns, TIMELINE_BINS) if span_ns > 0 else ((), {})
    transfer = s.mask(keys=tuple(c.key for c in cats if c.transfer))
    sizes = s.bytes[transfer]
    sizes = sizes[np.isfinite(sizes)]
    counts_hist, _ = np.histogram(sizes, bins=np.array(DMA_SIZE_EDGES, dtype=float))
    summary = TraceSummary(
        events={"compute": int(ne.sum()), "dma": int(dma.sum())}, span=span_ns * NS, engines=tuple(engines),
        busy_union=m["device_busy"], dma_size_edges=DMA_SIZE_EDGES,
        dma_size_counts=tuple(int(c) for c in counts_hist), timeline_edges=tuple((e + dev_start) * NS for e in edges),
        timeline=shares, warnings=tuple(trace.warnings),
        gaps=idle,
        dma_busy=m["dma_busy"], compute_busy=_s(ne_busy), dma_exposed=m["dma_only_time"],
        skipped={"compute": sum(skipped.get(c.key, 0) for c in cats if c.compute),
                 "dma": sum(skipped.get(c.key, 0) for c in cats if c.dma)},
        last_event_end=s.last_end() * NS if len(s) else None,
        breakdowns=tuple(b for b in (categories_table, layers, seqs.breakdown, devices, path_table) if b is not None),
    )
    return summary, m
