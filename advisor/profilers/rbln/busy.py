"""Busy time in an RBLN trace (events.py's first stages): the device's span, busy and idle time and its idle gaps;
each command category's busy time (the mean per unit), commands, bytes and bandwidth; and how the Neural Engine's
compute and the transfers overlap (M5, M6, M21). Times in ns inside, seconds in the metrics."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from advisor.core.events import NS
from advisor.core.trace import Gap
from advisor.metrics.grouped import one_group_segments, rows_of, union
from advisor.metrics.trace_summary import GapRule, Group, Span, idle_gaps
from advisor.profilers.rbln.knowledge import OTHER, categories
from advisor.profilers.rbln.naming import name_rules
from advisor.profilers.rbln.slices import Slices
from advisor.profilers.rbln.unions import per_unit, per_unit_groups


class ByCategory(Mapping[str, Any]):
    """Each category's row mask, made when asked for (not kept: a mask per category is a column's worth)."""

    def __init__(self, s: Slices) -> None:
        self._s, self._index = s, {c.key: i for i, c in enumerate(categories())}

    def __getitem__(self, key: str) -> Any:
        return self._s.category == self._index[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


@dataclass(frozen=True)
class Rows:
    """The rows of each kind of command (masks): device, Neural Engine, DMA, I/O and communication."""

    dev: Any
    ne: Any
    dma: Any
    io: Any
    comm: Any


@dataclass(frozen=True)
class Device:
    """The device's span (ns, first to last device command) and its idle gaps."""

    start: float
    end: float
    span: float
    gaps: tuple[Gap, ...]


def mean_ns(s: Slices, mask: Any) -> float | None:
    return float(per_unit(s, mask).mean()) if mask.any() and s.units else None


def seconds(ns: float | None) -> float | None:
    return None if ns is None else ns * NS


def merged(s: Slices, mask: Any) -> tuple[Any, Any]:
    """The merged segments of the masked rows, all in one group: their starts and ends."""
    return one_group_segments(s, rows_of(mask))


def device_span(s: Slices, dev: Any) -> tuple[Device, dict[str, float | None]]:
    """The device's span, busy and idle time, and its idle gaps. The device is idle only when no device or
    chiplet runs anything: the holes of the union over all units (a chiplet waiting for a straggler is not
    device idle time); the mean per unit is its own figure."""
    has_dev = bool(dev.any())
    dev_start = float(s.start[dev].min()) if has_dev else 0.0
    dev_end = float(s.end(dev).max()) if has_dev else 0.0
    span_ns = dev_end - dev_start
    d_start, d_end = merged(s, dev)
    holes = d_start[1:] - d_end[:-1]
    device_busy = float((d_end - d_start).sum()) if has_dev else None
    unit_busy = mean_ns(s, dev)
    m: dict[str, float | None] = {
        "device_span": span_ns * NS if has_dev else None,
        "device_busy": seconds(device_busy),
        "device_idle_time": (span_ns - device_busy) * NS if device_busy is not None else None,
        "mean_unit_busy": seconds(unit_busy),
        "mean_unit_idle_time": (span_ns - unit_busy) * NS if unit_busy is not None else None,
        "largest_gap": float(holes.max()) * NS if len(holes) else (0.0 if has_dev else None),
        "gap_count": float((holes >= name_rules().min_gap).sum()) if has_dev else None,
    }
    # read here: a segment each time the device idles, millions in a long trace, not kept
    idle = idle_gaps((d_start - dev_start, d_end - dev_start), Span(span_ns, dev_start), GapRule())
    return Device(dev_start, dev_end, span_ns, idle), m


def category_figures(s: Slices, cat: ByCategory, span_ns: float, total_time: float | None) -> tuple[
        list[Group], list[tuple[str, tuple[float | None, ...]]], dict[str, float | None]]:
    """Per category: busy (mean per unit; Host: the file's union), commands, bytes, bandwidth; as engines, as
    the categories table's rows (ranked) and as metrics."""
    import numpy as np

    cats = categories()
    host = cat["host"]
    units = len(s.units)
    per_cat = per_unit_groups(s, ~host, s.category, len(cats)) if units else np.zeros((len(cats), 0))
    scope_sum = _scope_sums(s)
    h_start, h_end = merged(s, host)
    host_union = float((h_end - h_start).sum())
    file_span = float(s.last_end() - s.start.min()) if len(s) else 0.0
    run_ns = total_time / NS if total_time else file_span
    m: dict[str, float | None] = {}
    table_rows: list[tuple[str, tuple[float | None, ...]]] = []
    groups = []
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
        groups.append(Group("" if c.key == OTHER else c.key, c.title, tuple(s.tracks[t][1] for t in used),
                            c.compute, busy=busy_ns * NS))
    order = {c.title: i for i, c in enumerate(cats)}
    table_rows.sort(key=lambda r: (r[0] == cats[-1].title, -(r[1][0] or 0.0), order[r[0]]))
    return groups, table_rows, m


def _scope_sums(s: Slices) -> Any:
    """Each category's busy time summed over its track groups (device, or device and chiplet), each counted
    once: bandwidth and concurrency divide by it (the unit view would count a device-level track once per
    chiplet)."""
    import numpy as np

    cats = len(categories())
    scopes = len(s.devices) * len(s.chiplets)
    wide = np.int32 if cats * scopes < 2**31 else np.int64
    scope = s.category.astype(wide) * scopes
    scope += np.multiply(s.device, len(s.chiplets), dtype=wide)
    scope += s.chiplet
    return union(s, np.arange(len(s), dtype=np.int32), scope, cats * scopes).reshape(cats, scopes).sum(axis=1)


def overlap_figures(s: Slices, cat: ByCategory, rows: Rows) -> tuple[float | None, dict[str, float | None]]:
    """The Neural Engine's busy time (ns), and how compute and transfers overlap (M5, M6, M21)."""
    ne, dma, comm = rows.ne, rows.dma, rows.comm
    ne_busy, dma_busy, comm_busy = mean_ns(s, ne), mean_ns(s, dma), mean_ns(s, comm)
    # M6 over the transfers on the Neural Engine's flow path; the NE idle under Neural DMA alone is its own
    # figure below (a different fix: prefetch), so the two never claim the same time
    starving = cat["task_dma"] | cat["external_hdma"]
    both = mean_ns(s, ne | dma) if ne_busy is not None and dma_busy is not None else None
    m: dict[str, float | None] = {"dma_busy": seconds(dma_busy)}
    m["ne_only_time"] = seconds(both - dma_busy) if both is not None and dma_busy is not None else None
    m["dma_only_time"] = seconds(both - ne_busy) if both is not None and ne_busy is not None else None
    m["ne_dma_overlap_time"] = (seconds(ne_busy + dma_busy - both) if both is not None and ne_busy is not None
                                and dma_busy is not None else None)
    starved = mean_ns(s, ne | starving) if ne_busy is not None and starving.any() else None
    m["ne_starved_time"] = seconds(starved - ne_busy) if starved is not None and ne_busy is not None else None
    # the Neural Engine idle while Neural DMA runs and no Task DMA or External HDMA does: the time double-buffering
    # Neural DMA (loading the next tile under the current command) can give back
    under_ndma = None
    if ne_busy is not None and cat["neural_dma"].any():
        loaded = mean_ns(s, ne | starving | cat["neural_dma"])
        if loaded is not None:  # never None here: the mask has the Neural Engine's rows
            under_ndma = loaded - (starved if starved is not None else ne_busy)
    m["ne_idle_under_neural_dma_time"] = seconds(under_ndma)
    # the part under Task DMA alone: what removing spills through Task DMA can give back at most
    spilled = mean_ns(s, ne | cat["task_dma"]) if ne_busy is not None and cat["task_dma"].any() else None
    m["task_dma_exposed_time"] = seconds(spilled - ne_busy) if spilled is not None and ne_busy is not None else None
    m["comm_busy"] = seconds(comm_busy)
    exposed = mean_ns(s, ne | comm) if ne_busy is not None and comm_busy is not None else None
    m["comm_exposed_time"] = seconds(exposed - ne_busy) if exposed is not None and ne_busy is not None else None
    m["ne_cycles"], m["ne_efficiency_median"] = _efficiency(s, ne)
    return ne_busy, m


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
