"""Devices and chiplets (reference M21–M23, M26): each device's and each chiplet's busy time, how far the
busiest is above the mean (the straggler), and how long devices wait for each other at a sync point."""

from __future__ import annotations

from typing import Any

from advisor.core.events import NS
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.metrics.grouped import rows_of, union
from advisor.profilers.rbln import KIND
from advisor.profilers.rbln.knowledge import track_rules
from advisor.profilers.rbln.slices import Slices
from advisor.profilers.rbln.unions import per_unit

# the columns in the order of their values (their titles and units: data/report.yaml breakdowns)
COLUMNS = ("busy", "ne_busy", "dma_busy", "comm_busy", "relative")
NOTE = ("Busy times are unions of the device's (or chiplet's) commands; relative is against the mean of the "
        "devices (device rows) or of the chiplets (chiplet rows). Each .pb file has its own clock, so devices are "
        "compared by durations.")
METRICS = ("device_count", "device_imbalance", "straggler_device", "chiplet_count", "chiplet_imbalance",
           "straggler_chiplet", "sync_wait_skew")


def _number(label: str, fallback: int) -> int:
    pattern = track_rules().chiplet
    found = pattern.search(label) if pattern else None
    return int(found.group(1)) if found else fallback


def _per_device(s: Slices, mask: Any) -> Any:
    rows = rows_of(mask)
    return union(s, rows, s.device[rows], len(s.devices))


def sync_wait_skew(s: Slices, sync: Any) -> float | None:
    """Max over sync points (one command name seen on two or more devices) of the spread of their Device
    Sync durations, in ns: the device that waited least arrived last."""
    import numpy as np

    rows = np.flatnonzero(sync)
    if len(np.unique(s.device[rows])) < 2:
        return None
    name, device, duration = s.name[rows], s.device[rows], s.duration[rows]
    n = len(s.names)
    longest, shortest = np.full(n, -np.inf), np.full(n, np.inf)
    np.maximum.at(longest, name, duration)
    np.minimum.at(shortest, name, duration)
    pairs = np.unique(np.column_stack([name, device]), axis=0)
    shared = np.bincount(pairs[:, 0], minlength=n) >= 2
    return float((longest - shortest)[shared].max()) if shared.any() else None


def device_figures(s: Slices, dev: Any, ne: Any, dma: Any, comm: Any,
                   sync: Any) -> tuple[dict[str, float | None], Breakdown | None]:
    import numpy as np

    out: dict[str, float | None] = dict.fromkeys(METRICS)
    if not dev.any():
        return out, None
    present = np.unique(s.device[dev])  # natural order: the order of the breakdown's device rows
    by_device = {key: _per_device(s, mask) for key, mask in (("busy", dev), ("ne", ne), ("dma", dma),
                                                               ("comm", comm))}
    by_unit = {key: per_unit(s, mask) for key, mask in (("busy", dev), ("ne", ne), ("dma", dma), ("comm", comm))}
    chiplet_units = [i for i, (_, c) in enumerate(s.units) if c]
    out["device_count"] = float(len(present))
    busy = by_device["busy"][present]
    if len(present) >= 2 and busy.mean() > 0:
        out["device_imbalance"] = float(busy.max() / busy.mean())
        out["straggler_device"] = float(np.argmax(busy))
    if chiplet_units:
        out["chiplet_count"] = float(len({s.units[i][1] for i in chiplet_units}))
        unit_busy = by_unit["busy"][chiplet_units]
        if len(chiplet_units) >= 2 and unit_busy.mean() > 0:
            out["chiplet_imbalance"] = float(unit_busy.max() / unit_busy.mean())
            top = chiplet_units[int(np.argmax(unit_busy))]
            out["straggler_chiplet"] = float(_number(s.chiplets[s.units[top][1]], s.units[top][1] - 1))
    skew = sync_wait_skew(s, sync)
    out["sync_wait_skew"] = None if skew is None else skew * NS
    if len(present) < 2 and len(chiplet_units) < 2:
        return out, None
    has = {key: bool(mask.any()) for key, mask in (("ne", ne), ("dma", dma), ("comm", comm))}

    def row(label: str, table: dict[str, Any], i: int, mean: float) -> tuple[str, tuple[float | None, ...]]:
        busy_i = float(table["busy"][i])
        return label, (busy_i * NS, *(float(table[k][i]) * NS if has[k] else None for k in ("ne", "dma", "comm")),
                       busy_i / mean if mean > 0 else None)

    rows = []
    chip_mean = float(by_unit["busy"][chiplet_units].mean()) if chiplet_units else 0.0
    for d in present:
        if len(present) >= 2:
            rows.append(row(s.devices[d], by_device, int(d), float(busy.mean())))
        for u in chiplet_units:
            if s.units[u][0] == d:
                rows.append(row(f"{s.devices[d]} / {s.chiplets[s.units[u][1]]}", by_unit, u, chip_mean))
    return out, kind_breakdown(KIND, "devices", COLUMNS).make(rows, NOTE)
