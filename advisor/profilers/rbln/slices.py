"""The usable slices of an RBLN trace as one flat table (numpy columns sorted by start, times in ns), and
the units busy times are measured per (a device, or a device's chiplet on Rebel100; the unions: unions.py).
Pure numpy. Built from a copy of the usable rows of any event tables (`build`), or, from the tables the
reader made (`lent_parts`), out of the trace's own columns sorted in place and given back after
(`borrow`, `give_back`): a 500 MB trace's columns are not held twice. The categories and their flags are
tracks.yaml's, loaded by knowledge.py."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from advisor.core.events import EventTrace, Kept, code_type, int32_if_fits
from advisor.metrics.grouped import end_order
from advisor.profilers.rbln.knowledge import OTHER, categories

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


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
    # float64 per row, NaN where a slice names none: `bytes[rows]` (an array, or a Gathered from the trace)
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
    return codes.astype(code_type(count), copy=False)


def _coded(parts: list[Part]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Each part's category, track, device and chiplet as global codes (each distinct string coded once),
    and its names as global codes when the parts do not share one table; the label tables beside them."""
    import numpy as np

    index = {c.key: i for i, c in enumerate(categories())}
    names: dict[str, int] = {}
    labels: dict[str, Any] = {"names": names, "devices": {}, "chiplets": {"": 0}, "tracks": {}}
    tracks = labels["tracks"]
    cols: dict[str, list[Any]] = {k: [] for k in ("category", "name", "track", "device", "chiplet")}
    remaps: dict[tuple[int, str], Any] = {}

    def remap(values: Sequence[str], table: dict, kind: str) -> Any:
        key = (id(values), kind)  # tables of one reader share their string tables: code them once
        if key not in remaps:
            remaps[key] = (_codes(values, table), values)  # keep `values` alive so its id stays unique
        return remaps[key][0]

    # the reader codes every table's names with one interner: then its codes are global already
    shared = bool(parts) and all(p.names is parts[0].names for p in parts)
    labels["shared_names"] = parts[0].names if shared else None
    for p in parts:
        cat = index.get(p.category, index[OTHER])
        cols["category"].append(np.full(len(p.track), cat, dtype=np.int32))
        if not shared:
            cols["name"].append(remap(p.names, names, "name")[p.name])
        track_codes = np.fromiter((tracks.setdefault((cat, t), len(tracks)) for t in p.tracks), dtype=np.int32,
                                  count=len(p.tracks))
        cols["track"].append(track_codes[p.track])
        cols["device"].append(remap(p.devices, labels["devices"], "device")[p.device])
        cols["chiplet"].append(remap(p.chiplets, labels["chiplets"], "chiplet")[p.chiplet])
    return cols, labels


def _finish(merged: dict[str, Any], labels: dict[str, Any]) -> Slices:
    """The table from its columns in start order: narrow codes, labels in natural order, ends, units."""
    device_labels, device_remap = _ordered(labels["devices"], natural)
    chiplet_labels, chiplet_remap = _ordered(labels["chiplets"], natural)  # "" sorts first: code 0 stays ""
    # remapped through narrow tables: the columns come out narrow, without an int32 copy first
    device = _narrow(_narrow(device_remap, len(device_labels))[merged.pop("device")] if len(device_remap)
                     else merged.pop("device"), len(device_labels))
    chiplet = _narrow(_narrow(chiplet_remap, len(chiplet_labels))[merged.pop("chiplet")], len(chiplet_labels))
    category = _narrow(merged.pop("category"), len(categories()))
    track = _narrow(merged.pop("track"), len(labels["tracks"]))
    start, duration = merged["start"], merged["duration"]
    end_rank, ends = end_order(start, duration)
    units, x_row, x_unit = _units(category, device, chiplet, len(device_labels), len(chiplet_labels))
    shared = labels["shared_names"]
    return Slices(start=start, duration=duration, category=category, name=merged["name"],
                  names=shared if shared is not None else tuple(labels["names"]), track=track,
                  tracks=tuple(labels["tracks"]), device=device,
                  devices=device_labels, chiplet=chiplet, chiplets=chiplet_labels, units=units,
                  ident=merged["ident"], bytes=merged["bytes"], cycles=merged["cycles"], end_rank=end_rank,
                  ends=ends, x_row=x_row, x_unit=x_unit)


def build(parts: list[Part]) -> Slices:
    """One table from the categories' parts (the list is emptied: the parts' columns are freed as they are
    merged): global codes (each distinct string coded once), rows sorted by start, units and the unit view."""
    import numpy as np

    cols: dict[str, list[Any]] = {k: [] for k in ("start", "duration", "ident", "bytes", "cycles")}
    codes, labels = _coded(parts)
    cols.update(codes)
    for p in parts:
        n = len(p.start)
        cols["start"].append(np.asarray(p.start, dtype=float))
        cols["duration"].append(np.asarray(p.duration, dtype=float))
        if labels["shared_names"] is not None:
            cols["name"].append(np.asarray(p.name, dtype=np.int32))
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
    merged["ident"] = int32_if_fits(take("ident")) if has_ids else None  # flows still compare them exactly
    cols.clear()
    return _finish(merged, labels)


BORROWED = ("start", "duration", "name", "ident")  # a trace's columns the table borrows, sorted in place
CARRIED = ("bytes", "cycles")  # kept for some tables only: the table reads them through its rows' positions


@dataclass(frozen=True)
class Gathered:
    """A `Kept` column read through the rows' positions in table order: `column[rows]` is a new float64 array
    (NaN where none)."""

    position: Any  # each row's position in table order
    kept: Kept

    def __getitem__(self, rows: Any) -> Any:
        import numpy as np

        values = self.kept.values
        at = self.position[rows] - self.kept.start
        out = np.full(len(at), np.nan)
        inside = (at >= 0) & (at < len(values))
        out[inside] = values[at[inside]]
        return out



def borrow(parts: list[Part], columns: dict[str, Any]) -> tuple[Slices, Any, Any]:
    """The table as `build` makes it, from parts that cover every row (usable or not) of `columns`, in
    order, as views of them (profilers/rbln/adapters/trace.py hands them over): its columns are those very
    columns, reordered in place (usable rows by start first, the others after them), not a copy of them.
    Also gives each part's count of unusable rows, and the order applied: `give_back(columns, order)`
    puts the columns back as they were, which the caller must do before anything else reads them."""
    import numpy as np

    start, duration = columns["start"], columns["duration"]
    keep = (start >= 0) & (duration >= 0) & np.isfinite(start) & np.isfinite(duration)  # as intervals.usable
    bounds = np.cumsum([0, *(len(p.track) for p in parts)])
    unusable = [int(len(p.track) - keep[a:b].sum()) for p, a, b in zip(parts, bounds[:-1], bounds[1:], strict=True)]
    usable_rows = int(keep.sum())
    # the order `build` sorts the usable rows of the parts (concatenated in order) into, then the unusable rows
    if usable_rows == len(keep):
        order = np.argsort(start, kind="stable")
    else:
        rows = np.flatnonzero(keep)
        order = np.concatenate([rows[np.argsort(start[rows], kind="stable")], np.flatnonzero(~keep)])
        del rows
    del keep
    codes, labels = _coded(parts)
    parts.clear()
    merged: dict[str, Any] = {}
    for key, values in codes.items():
        if values:
            column = np.concatenate(values)
            codes[key] = []
            merged[key] = _narrow(column, int(column.max()) + 1 if len(column) else 0)[order[:usable_rows]]
    reordered: list[str] = []
    try:  # whatever fails from here (memory, most likely) leaves the trace's columns as they were
        for key in BORROWED:
            column = columns[key]
            column[:] = column[order]  # one column's copy at a time
            reordered.append(key)
            merged[key] = column[:usable_rows]
        order = int32_if_fits(order)  # kept until the columns are given back
        for key in CARRIED:
            merged[key] = Gathered(order[:usable_rows], columns[key])
        if merged["ident"].dtype != np.int32:
            merged["ident"] = int32_if_fits(merged["ident"])
        return _finish(merged, labels), unusable, order
    except BaseException:
        merged.clear()
        give_back(columns, order, reordered)
        raise


def give_back(columns: dict[str, Any], order: Any, keys: Sequence[str] = BORROWED) -> None:
    """The borrowed columns (`keys` of them) in their order again (`borrow`'s `order`)."""
    for key in keys:
        column = columns[key]
        column[order] = column.copy()


def _units(category: Any, device: Any, chiplet: Any, n_devices: int,
           n_chiplets: int) -> tuple[tuple[tuple[int, int], ...], Any, Any]:
    """Units from the rows outside Host: each chiplet of a device that has chiplet groups, else the
    device. The unit view repeats a row without a chiplet on a chiplet device once per chiplet."""
    import numpy as np

    host = [i for i, c in enumerate(categories()) if c.key == "host"]
    rows = np.flatnonzero(~np.isin(category, host))
    present = np.zeros((max(n_devices, 1), max(n_chiplets, 1)), dtype=bool)
    present[device[rows], chiplet[rows]] = True
    # numpy's stubs type any(axis=…) as a bool or an array; along an axis of a 2-D array it is an array
    has_chiplets = cast("npt.NDArray[np.bool_]", present[:, 1:].any(axis=1))
    present[has_chiplets, 0] = False  # a chiplet device's own tracks count in its chiplets
    dev_idx, chip_idx = np.nonzero(present)  # row-major: by device, then chiplet (both natural order)
    unit_of = np.full(present.shape, -1, dtype=code_type(len(dev_idx)))
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
                      unit_of[device[x_row], chiplet[x_row]]).astype(unit_of.dtype)
    return units, x_row, x_unit


def lent_parts(trace: EventTrace) -> tuple[list[Part], dict[str, Any]] | None:
    """When the trace's tables are consecutive views of the full columns its reader handed over
    (`extra["columns"]`, in table order), the parts of all their rows, to `borrow` those columns; else None."""
    import numpy as np

    columns = trace.extra.get("columns")
    if not isinstance(columns, Mapping) or any(not isinstance(columns.get(k), np.ndarray) for k in BORROWED) \
            or any(not _is_carried(columns.get(k)) for k in CARRIED):
        return None
    at, parts = 0, []
    for key, table in trace.tables.items():
        extra = table.extra
        device, chiplet, ident = extra.get("device"), extra.get("chiplet"), extra.get("id")
        if device is None or chiplet is None:
            return None
        views = {"start": table.start, "duration": table.duration, "name": table.name.codes, "ident": ident,
                 "bytes": table.bytes, "cycles": extra.get("cycles")}
        if not all(_is_view(views[k], columns[k], at, len(table)) for k in BORROWED):
            return None
        for k in CARRIED:  # a view where the table is inside the kept part, else None
            kept = columns[k]
            if not (_is_view(views[k], kept.values, at - kept.start, len(table)) if kept.covers(at, at + len(table))
                    else views[k] is None):
                return None
        at += len(table)
        parts.append(Part(key, table.start, table.duration, table.name.codes, table.name.names, table.track.codes,
                          table.track.names, device.codes, device.names, chiplet.codes, chiplet.names, ident,
                          table.bytes, views["cycles"]))
    if at != len(columns["start"]) or any(len(columns[k]) != at for k in BORROWED):
        return None
    return parts, dict(columns)


def _is_carried(found: Any) -> bool:
    import numpy as np

    return isinstance(found, Kept) and isinstance(found.values, np.ndarray) and found.values.ndim == 1


def _is_view(view: Any, column: Any, at: int, n: int) -> bool:
    """`view` is column[at:at + n] (the same memory, not a copy of it), and the column may be written."""
    import numpy as np

    return (isinstance(view, np.ndarray) and view.ndim == column.ndim == 1 and view.dtype == column.dtype
            and len(view) == n and column.flags.writeable and column.flags.c_contiguous
            and view.strides == column.strides
            and view.__array_interface__["data"][0] == column.__array_interface__["data"][0] + at * column.itemsize)
