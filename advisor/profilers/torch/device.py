"""The device side of a torch trace as one set of rows: kernels, copies and sets (tables.DEVICE_TABLES) with a
usable time, sorted by start, each with its class (data/kernels.yaml), stream (its timeline track), the
correlation that links it to the runtime call that queued it, and the interval clipped to the analysed window
(an `Ordered` table for the grouped unions). numpy columns; Python loops run over distinct names only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.events import EventTable, EventTrace
from advisor.metrics.grouped import Ordered, ordered
from advisor.metrics.grouped import union as grouped_union
from advisor.metrics.intervals import usable
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.classes import MEMORY, Knowledge

TABLE_CODES = {T.KERNEL: 0, T.MEMCPY: 1, T.MEMSET: 2}


@dataclass(frozen=True)
class Device:
    """Device events in start order. Times in ns from the trace start; `clipped` holds them cut to the window."""

    start: Any  # float64
    end: Any  # float64
    table: Any  # int8: TABLE_CODES
    name: Any  # int32 index into names
    names: tuple[str, ...]
    klass: Any  # int8 index into Knowledge.classes
    wait: Any  # bool: a device-side wait (not work, not busy time)
    track: Any  # int32 index into tracks
    tracks: tuple[str, ...]  # "device D stream S"
    correlation: Any  # int64, -1 unknown
    occupancy: Any  # float64 fraction, NaN unknown (kernels only)
    blocks: Any  # float64 blocks in the grid (x*y*z), NaN unknown (kernels only)
    bytes: Any  # float64, NaN unknown or none (copies and sets)
    direction: Any  # int32 index into directions, -1 for rows that are not copies
    directions: tuple[str, ...]
    pageable: Any  # float64 1.0 / 0.0 / NaN (copies)
    inside: Any  # bool: the row has time in the window (or, lasting 0 ns, starts in it)
    clipped: Ordered  # [max(start, w0), min(end, w1)) in start order, for grouped unions
    skipped: dict[str, int]  # per table: rows without a usable time

    def __len__(self) -> int:
        return len(self.start)

    def union(self, mask: Any) -> float:
        """Covered ns of the masked rows inside the window."""
        import numpy as np

        rows = np.flatnonzero(mask)
        return float(grouped_union(self.clipped, rows, np.zeros(len(rows), dtype=np.int64), 1)[0]) if len(rows) else 0.0

    def kernels(self) -> Any:
        return self.table == TABLE_CODES[T.KERNEL]

    def clipped_duration(self) -> Any:
        return self.clipped.ends[self.clipped.end_rank] - self.clipped.start


def _column(table: EventTable, key: str, keep: Any, fill: float | int, dtype: Any) -> Any:
    import numpy as np

    values = table.extra.get(key)
    if values is None:
        return np.full(int(keep.sum()), fill, dtype=dtype)
    return np.asarray(values, dtype=dtype)[keep]


def _blocks(table: EventTable, keep: Any) -> Any:
    """Blocks in each kernel's grid ("x,y,z" -> x*y*z), NaN where the trace does not say."""
    import numpy as np

    grid = table.extra.get(T.GRID)
    if grid is None:
        return np.full(int(keep.sum()), np.nan)

    def product(dims: str) -> float:
        try:
            return float(np.prod([int(d) for d in dims.split(",")])) if dims else np.nan
        except ValueError:
            return np.nan

    per_name = np.fromiter((product(str(d)) for d in grid.names), dtype=float, count=len(grid.names))
    return per_name[grid.codes[keep]] if len(per_name) else np.full(int(keep.sum()), np.nan)


def _codes(parts: list[tuple[Any, Any]], index: dict[str, int]) -> Any:
    """Codes of several tables' Codes columns in one numbering (`index` grows with new names)."""
    import numpy as np

    out = []
    for codes, names in parts:
        remap = np.fromiter((index.setdefault(n, len(index)) for n in names), dtype=np.int32, count=len(names))
        out.append(remap[codes] if len(codes) else np.empty(0, dtype=np.int32))
    return np.concatenate(out) if out else np.empty(0, dtype=np.int32)


@dataclass(frozen=True)
class _Pieces:
    """The device tables' columns, one piece per table (in tables.DEVICE_TABLES order), before they are joined."""

    cols: dict[str, list[Any]]  # start, duration, table, klass, wait, corr, occ, blocks, bytes, pageable
    names: list[tuple[Any, Any]]  # per table: (codes, names) of its rows' names
    tracks: list[tuple[Any, Any]]  # … of their tracks
    directions: list[tuple[Any, Any]]  # … of their copy directions (codes -1 and no names for a table without)
    skipped: dict[str, int]  # per table: rows without a usable time


def _pieces(trace: EventTrace, know: Knowledge) -> _Pieces:
    """Each device table's usable rows as column pieces: kernels classed by name (data/kernels.yaml), copies and
    sets as memory operations; a column the table lacks is filled (-1 or NaN)."""
    import numpy as np

    memory = know.index(MEMORY)
    cols: dict[str, list[Any]] = {k: [] for k in ("start", "duration", "table", "klass", "wait", "corr", "occ",
                                                  "blocks", "bytes", "pageable")}
    pieces = _Pieces(cols, [], [], [], {})
    for key in T.DEVICE_TABLES:
        table = trace.table(key)
        if table is None:
            continue
        start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
        pieces.skipped[key] = int(len(keep) - len(start))
        n = len(start)
        code = table.name.codes[keep].astype(np.int32, copy=False)
        table_names = tuple(table.name.names)
        cols["start"].append(start)
        cols["duration"].append(duration)
        cols["table"].append(np.full(n, TABLE_CODES[key], dtype=np.int8))
        pieces.names.append((code, table_names))
        if key == T.KERNEL:
            cols["klass"].append(know.classify(table_names)[code] if n else np.empty(0, dtype=np.int8))
            cols["wait"].append(know.waits(table_names)[code] if n else np.empty(0, dtype=bool))
        else:  # copies and sets are memory operations by their category, whatever their name
            cols["klass"].append(np.full(n, memory, dtype=np.int8))
            cols["wait"].append(np.zeros(n, dtype=bool))
        cols["corr"].append(_column(table, T.CORRELATION, keep, -1, np.int64))
        cols["blocks"].append(_blocks(table, keep) if key == T.KERNEL else np.full(n, np.nan))
        cols["occ"].append(_column(table, T.OCCUPANCY, keep, np.nan, float) if key == T.KERNEL
                           else np.full(n, np.nan))
        cols["bytes"].append(np.asarray(table.bytes, dtype=float)[keep] if table.bytes is not None
                             else np.full(n, np.nan))
        cols["pageable"].append(_column(table, T.PAGEABLE, keep, np.nan, float))
        pieces.tracks.append((table.track.codes[keep], tuple(table.track.names)))
        direction = table.extra.get(T.DIRECTION)
        pieces.directions.append((direction.codes[keep], tuple(direction.names)) if direction is not None
                                 else (np.full(n, -1, dtype=np.int32), ()))
    if not cols["start"]:
        for k in cols:
            cols[k] = [np.empty(0)]
    return pieces


def build(trace: EventTrace, know: Knowledge, w0: float, w1: float) -> Device:
    """The device rows of `trace`, with the window [w0, w1] (ns) applied to `inside` and `clipped`."""
    import numpy as np

    pieces = _pieces(trace, know)
    cols = pieces.cols

    def pick(key: str, dtype: Any) -> Any:
        """The column in start order; the per-table pieces are let go as soon as they are joined."""
        joined = np.concatenate(cols.pop(key)).astype(dtype, copy=False)
        return joined if order is None else joined[order]

    order = None
    start = pick("start", float)
    order = np.argsort(start, kind="stable")
    if bool((order == np.arange(len(order))).all()):
        order = None  # already in start order (Kineto writes most tables sorted): no reordered copies
    else:
        start = start[order]
    duration = pick("duration", float)
    name_index: dict[str, int] = {}  # one numbering: a name in two tables is one row of the top-kernel table
    track_index: dict[str, int] = {}
    direction_index: dict[str, int] = {}

    def reorder(values: Any) -> Any:
        return values if order is None else values[order]

    end = start + duration
    c_start = np.clip(start, w0, w1)
    c_end = np.clip(end, w0, w1)
    inside = ((start < w1) & (end > w0)) | ((duration == 0) & (start >= w0) & (start <= w1))
    del duration
    c_end -= c_start
    return Device(
        start=start, end=end, table=pick("table", np.int8), name=reorder(_codes(pieces.names, name_index)),
        names=tuple(name_index), klass=pick("klass", np.int8), wait=pick("wait", bool),
        track=reorder(_codes(pieces.tracks, track_index)), tracks=tuple(track_index),
        correlation=pick("corr", np.int64), occupancy=pick("occ", float), blocks=pick("blocks", float),
        bytes=pick("bytes", float), direction=reorder(_directions(pieces.directions, direction_index)),
        directions=tuple(direction_index), pageable=pick("pageable", float), inside=inside,
        clipped=ordered(c_start, c_end), skipped=pieces.skipped)


def _directions(parts: list[tuple[Any, Any]], index: dict[str, int]) -> Any:
    """Copy directions in one numbering; -1 (rows that are not copies) kept."""
    import numpy as np

    out = []
    for codes, names in parts:
        if not names:
            out.append(np.full(len(codes), -1, dtype=np.int32))
            continue
        remap = np.fromiter((index.setdefault(n, len(index)) for n in names), dtype=np.int32, count=len(names))
        out.append(np.where(codes >= 0, remap[np.maximum(codes, 0)], -1).astype(np.int32))
    return np.concatenate(out) if out else np.empty(0, dtype=np.int32)
