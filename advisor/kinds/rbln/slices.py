"""The usable slices of an RBLN trace as one flat table (numpy columns sorted by start, times in ns),
the units busy times are measured per (a device, or a device's chiplet on Rebel100), and unions per
unit and per (group, unit) through the shared grouped unions (metrics/grouped.py). Pure numpy: the
event analysis (events.py) drops unusable slices before building it. The categories and their flags
are tracks.yaml's, loaded by knowledge.py."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.core.events import int32_if_fits
from advisor.kinds.rbln.knowledge import OTHER, categories
from advisor.metrics.grouped import end_order, union


def natural(label: str) -> tuple:
    """rbln2 before rbln10, Chiplet 2 before Chiplet 10: the digit runs (the split's odd places) by value
    — length first, so a run of any length compares without int() — the rest as text."""
    parts = re.split(r"(\d+)", label)
    return tuple((len(p.lstrip("0")), p.lstrip("0"), "") if i % 2 else (-1, "", p) for i, p in enumerate(parts))


@dataclass(frozen=True)
class Part:
    """One category's usable slices as the reader gave them (codes index the table's own names)."""

    category: str
    start: Any
    duration: Any
    name: Any  # codes
    names: Sequence[str]
    track: Any
    tracks: Sequence[str]
    device: Any
    devices: Sequence[str]
    chiplet: Any
    chiplets: Sequence[str]
    ident: Any  # int64 slice ids, or None
    bytes: Any  # float64, NaN when the slice carries none
    cycles: Any


@dataclass(frozen=True)
class Slices:
    start: Any  # float64 ns, ascending
    duration: Any
    category: Any  # index into categories(); codes (category, track, device, chiplet: as narrow as they fit)
    name: Any  # int32 index into names
    names: Sequence[str]  # the reader's table itself when shared (millions of names: not copied)
    track: Any  # index into tracks
    tracks: tuple[tuple[int, str], ...]  # (category, display path)
    device: Any  # index into devices (natural order)
    devices: tuple[str, ...]
    chiplet: Any  # index into chiplets; 0 is "" (no chiplet group)
    chiplets: tuple[str, ...]
    units: tuple[tuple[int, int], ...]  # (device, chiplet): a device, or one of its chiplets
    ident: Any  # slice ids (flows refer to them; int32 when they fit), or None
    bytes: Any
    cycles: Any
    end_rank: Any  # int32: each row's rank by end (ends[end_rank] == start + duration)
    ends: Any  # ends sorted ascending (the rows' ends are not kept a second time: see end())
    # The unit view: rows repeated so that a device-level slice (no chiplet group, e.g. CCL Workload on a
    # chiplet device) counts in every chiplet unit of its device; ascending in row (so in start). When each
    # row is in exactly one unit (no chiplets), x_row is None and x_unit is per row (see unit_view).
    x_row: Any
    x_unit: Any

    def __len__(self) -> int:
        return len(self.start)

    def end(self, rows: Any = None) -> Any:
        """The ends (start + duration, bit for bit) of the rows (indices or a mask), or of all rows."""
        return self.ends[self.end_rank if rows is None else self.end_rank[rows]]

    def last_end(self) -> float:
        """The latest end (the table must not be empty)."""
        return float(self.ends[-1])

    def mask(self, keys: Sequence[str] | None = None, **flags: bool) -> Any:
        """Rows of the categories named, or whose flags (device=True, compute=True…) all hold."""
        import numpy as np

        chosen = [i for i, c in enumerate(categories())
                  if (keys is None or c.key in keys) and all(getattr(c, f) == v for f, v in flags.items())]
        return np.isin(self.category, chosen)


def _codes(values: Sequence[str], labels: dict[str, int]) -> Any:
    import numpy as np

    return np.fromiter((labels.setdefault(v, len(labels)) for v in values), dtype=np.int32, count=len(values))


def _ordered(labels: dict[str, int], key: Any) -> tuple[tuple[str, ...], Any]:
    """Labels sorted by `key`, and the remap old code -> new code."""
    import numpy as np

    ordered = sorted(labels, key=key)
    remap = np.empty(len(labels), dtype=np.int32)
    remap[[labels[v] for v in ordered]] = np.arange(len(ordered))
    return tuple(ordered), remap


def _narrow(codes: Any, count: int) -> Any:
    """Codes in the smallest signed integer type that holds `count` values (callers widen before arithmetic)."""
    import numpy as np

    return codes.astype(np.int8 if count < 2**7 else np.int16 if count < 2**15 else np.int32, copy=False)



def build(parts: list[Part]) -> Slices:
    """One table from the categories' parts (the list is emptied: the parts' columns are freed as they are
    merged): global codes (each distinct string coded once), rows sorted by start, units and the unit view."""
    import numpy as np

    index = {c.key: i for i, c in enumerate(categories())}
    names: dict[str, int] = {}
    devices: dict[str, int] = {}
    chiplets: dict[str, int] = {"": 0}
    tracks: dict[tuple[int, str], int] = {}
    cols: dict[str, list[Any]] = {k: [] for k in ("start", "duration", "category", "name", "track", "device",
                                                  "chiplet", "ident", "bytes", "cycles")}
    remaps: dict[tuple[int, str], Any] = {}

    def remap(values: Sequence[str], labels: dict, kind: str) -> Any:
        key = (id(values), kind)  # tables of one reader share their string tables: code them once
        if key not in remaps:
            remaps[key] = (_codes(values, labels), values)  # keep `values` alive so its id stays unique
        return remaps[key][0]

    # the reader codes every table's names with one interner: then its codes are global already
    shared = bool(parts) and all(p.names is parts[0].names for p in parts)
    shared_names = parts[0].names if shared else ()
    for p in parts:
        cat = index.get(p.category, index[OTHER])
        n = len(p.start)
        cols["start"].append(np.asarray(p.start, dtype=float))
        cols["duration"].append(np.asarray(p.duration, dtype=float))
        cols["category"].append(np.full(n, cat, dtype=np.int32))
        cols["name"].append(np.asarray(p.name, dtype=np.int32) if shared else remap(p.names, names, "name")[p.name])
        track_codes = np.fromiter((tracks.setdefault((cat, t), len(tracks)) for t in p.tracks), dtype=np.int32,
                                  count=len(p.tracks))
        cols["track"].append(track_codes[p.track])
        cols["device"].append(remap(p.devices, devices, "device")[p.device])
        cols["chiplet"].append(remap(p.chiplets, chiplets, "chiplet")[p.chiplet])
        cols["ident"].append(None if p.ident is None else np.asarray(p.ident, dtype=np.int64))
        for key, values in (("bytes", p.bytes), ("cycles", p.cycles)):
            cols[key].append(np.full(n, np.nan) if values is None else np.asarray(values, dtype=float))
    if not parts:
        cols = {k: [np.empty(0, dtype=float if k in ("start", "duration", "bytes", "cycles")
                             else np.int64 if k == "ident" else np.int32)]
                for k in cols}
    parts.clear()  # the columns lists now hold the only references: each part column dies once merged
    has_ids = all(i is not None for i in cols["ident"])
    # one column at a time (concatenate, reorder, let go): a 3 M-slice trace holds one extra column, not
    # two more copies of every column
    order = np.argsort(np.concatenate(cols["start"]), kind="stable")

    def take(key: str) -> Any:
        merged = np.concatenate(cols.pop(key))
        return merged[order]

    merged = {k: take(k) for k in list(cols) if k != "ident"}
    ident = int32_if_fits(take("ident")) if has_ids else None  # flows still compare them exactly
    cols.clear()
    device_labels, device_remap = _ordered(devices, natural)
    chiplet_labels, chiplet_remap = _ordered(chiplets, natural)  # "" sorts first: code 0 stays ""
    device = _narrow(device_remap[merged.pop("device")] if len(device_remap) else merged.pop("device"),
                     len(device_labels))
    chiplet = _narrow(chiplet_remap[merged.pop("chiplet")], len(chiplet_labels))
    category = _narrow(merged.pop("category"), len(categories()))
    track = _narrow(merged.pop("track"), len(tracks))
    start, duration = merged["start"], merged["duration"]
    end_rank, ends = end_order(start, duration)
    units, x_row, x_unit = _units(category, device, chiplet, len(device_labels), len(chiplet_labels))
    return Slices(start=start, duration=duration, category=category, name=merged["name"],
                  names=shared_names if shared else tuple(names), track=track,
                  tracks=tuple(tracks), device=device,
                  devices=device_labels, chiplet=chiplet, chiplets=chiplet_labels, units=units, ident=ident,
                  bytes=merged["bytes"], cycles=merged["cycles"], end_rank=end_rank, ends=ends,
                  x_row=x_row, x_unit=x_unit)


def _units(category: Any, device: Any, chiplet: Any, n_devices: int, n_chiplets: int) -> tuple[tuple, Any, Any]:
    """Units from the rows outside Host: each chiplet of a device that has chiplet groups, else the
    device. The unit view repeats a row without a chiplet on a chiplet device once per chiplet."""
    import numpy as np

    host = [i for i, c in enumerate(categories()) if c.key == "host"]
    rows = np.flatnonzero(~np.isin(category, host))
    present = np.zeros((max(n_devices, 1), max(n_chiplets, 1)), dtype=bool)
    present[device[rows], chiplet[rows]] = True
    has_chiplets = present[:, 1:].any(axis=1)
    present[has_chiplets, 0] = False  # a chiplet device's own tracks count in its chiplets
    dev_idx, chip_idx = np.nonzero(present)  # row-major: by device, then chiplet (both natural order)
    small = np.int8 if len(dev_idx) < 2**7 else np.int16 if len(dev_idx) < 2**15 else np.int32
    unit_of = np.full(present.shape, -1, dtype=small)
    unit_of[dev_idx, chip_idx] = np.arange(len(dev_idx))
    units = tuple(zip(dev_idx.tolist(), chip_idx.tolist(), strict=True))
    del rows
    if not has_chiplets.any():  # no row is spread: the view is the rows themselves when each has a unit
        unit_row = unit_of[device, chiplet]
        if (unit_row >= 0).all():
            return units, None, unit_row
        del unit_row
    per_device = np.bincount(dev_idx, minlength=present.shape[0])
    first_unit = np.concatenate([[0], np.cumsum(per_device)[:-1]])
    all_rows = np.arange(len(category), dtype=np.int32)
    spread = (chiplet == 0) & has_chiplets[device] if len(category) else np.zeros(0, dtype=bool)
    counts = np.where(spread, per_device[device], (unit_of[device, chiplet] >= 0).astype(np.int64)) \
        if len(category) else np.zeros(0, dtype=np.int64)
    x_row = np.repeat(all_rows, counts)
    offsets = np.arange(len(x_row)) - np.repeat(np.cumsum(counts) - counts, counts)
    x_unit = np.where(spread[x_row], first_unit[device[x_row]] + offsets,
                      unit_of[device[x_row], chiplet[x_row]]).astype(small)
    return units, x_row, x_unit


def unit_view(s: Slices, mask: Any) -> tuple[Any, Any]:
    """The unit view's entries of the masked rows: (rows ascending, their units)."""
    import numpy as np

    if s.x_row is None:
        return np.flatnonzero(mask).astype(np.int32), s.x_unit[mask]
    keep = mask[s.x_row]
    return s.x_row[keep], s.x_unit[keep]


def per_unit(s: Slices, mask: Any) -> Any:
    """The union of the masked rows in each unit (ns)."""
    rows, unit = unit_view(s, mask)
    return union(s, rows, unit, len(s.units))


def per_unit_groups(s: Slices, mask: Any, group: Any, groups: int) -> Any:
    """The union of the masked rows per (group, unit), as an array groups × units (ns). `group` is per row."""
    import numpy as np

    units = len(s.units)
    rows, unit = unit_view(s, mask)
    key = group[rows].astype(np.int64)
    key *= units
    key += unit
    flat = union(s, rows, key, groups * units)
    return flat.reshape(groups, units)
