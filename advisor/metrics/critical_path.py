"""A critical path through a trace's events, for every kind: the graph is the flows (drawn dependencies
between events, by id) plus the order of events on each track. From the event that ends last, walk
back to the predecessor that ended latest (the last arrival) until none is left. Each event counts up
to where the next one on the path starts, and the holes between them are waiting, so the path's events
and waits add up to its length. A lower bound when some dependencies are not drawn as flows.

The table is any rows sorted by start with a track code per row, ids flows refer to, and their ends
(`PathTable`: an RBLN slice table is one; a CPU-launch → GPU-kernel trace would be another)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from advisor.core.events import first_rows


class PathTable(Protocol):
    """What the critical path reads from a table of events."""

    # read-only properties: a frozen dataclass's fields (an RBLN slice table) satisfy them
    @property
    def start(self) -> Any: ...  # ascending (row order is start order)

    @property
    def track(self) -> Any: ...  # int codes: events on one track run one after another

    @property
    def ident(self) -> Any: ...  # int ids flows refer to, one per row; None when the table has none

    def __len__(self) -> int: ...

    def end(self, rows: Any = None) -> Any:
        """The ends of the rows (indices), or of all rows."""
        ...


FEW_TRACKS = 64  # up to this many tracks, same-track edges are found a track at a time (no sort)


@dataclass(frozen=True)
class CriticalPath:
    rows: Any  # the path's rows, earliest first
    time: Any  # each row's share of the path, in the table's time unit
    wait: float  # time between path events, in the table's unit


def flow_rows(s: PathTable, flows: Any) -> tuple[Any, Any]:
    """Flow edges as (predecessor row, successor row), for ids both ends of which are rows here."""
    import numpy as np

    empty = np.empty(0, dtype=np.int32)
    if s.ident is None or flows is None or len(flows) != 2 or len(flows[0]) == 0:
        return empty, empty
    ids = s.ident
    if len(ids) and int(ids.min()) >= 0 and int(ids.max()) < 2 * len(ids) + 1024 and len(ids) < 2**31:
        # ids numbered from 0 with few holes (a reader's slice ids): a table by id, no sort of the rows
        row_of = first_rows(ids, int(ids.max()) + 1)  # each id's first row; len(ids) where there is none
        row_of[row_of == len(ids)] = -1

        def by_table(values: Any) -> Any:
            values = np.asarray(values, dtype=np.int64)
            known = (values >= 0) & (values < len(row_of))
            return np.where(known, row_of[np.where(known, values, 0)], -1).astype(np.int32)

        return by_table(flows[0]), by_table(flows[1])
    by_id = np.argsort(ids, kind="stable").astype(np.int32)  # rows (int32 like the table's codes)

    def rows_of(values: Any) -> Any:
        values = np.asarray(values, dtype=np.int64)
        if not len(ids):
            return np.full(len(values), -1, dtype=np.int32)
        at = by_id[np.clip(np.searchsorted(ids, values, sorter=by_id), 0, len(ids) - 1)]  # the row of the nearest id
        return np.where(ids[at] == values, at, -1)

    return rows_of(flows[0]), rows_of(flows[1])


def _track_predecessors(s: PathTable, rows: Any, best: Any) -> None:
    """best[row] = the previous row (of `rows`, ascending) on its track. A few tracks: one track's rows at a
    time; many: one stable sort by track (a column of sort indices as long as the rows)."""
    import numpy as np

    track = s.track[rows]
    present = np.flatnonzero(np.bincount(track - track.min())) + track.min() if len(track) else []
    if len(present) <= FEW_TRACKS:
        for t in present:
            on = rows[track == t]
            best[on[1:]] = on[:-1]
        return
    by_track = rows[np.argsort(track, kind="stable")]
    del track
    same = s.track[by_track[1:]] == s.track[by_track[:-1]]
    best[by_track[1:][same]] = by_track[:-1][same]


def critical_path(s: PathTable, nodes: Any, flows: Any) -> CriticalPath | None:
    """`nodes`: mask of the rows that may be on the path; `flows`: (from ids, to ids) or None."""
    import numpy as np

    rows = np.flatnonzero(nodes).astype(np.int32)  # edges as int32 rows: half the memory of int64
    if len(rows) == 0:
        return None
    # each row's predecessor is the one of its edges whose predecessor ends latest; of equal ends the last
    # edge, in the order: same-track edges, then flows in their order. A row has at most one same-track edge
    # (the previous row on its track: rows are in start order), which is earlier and a node: written first.
    best = np.full(len(s), -1, dtype=np.int32)
    _track_predecessors(s, rows, best)
    pred, succ = flow_rows(s, flows)
    ok = (pred >= 0) & (succ >= 0) & (pred < succ)  # a predecessor is an earlier row: the walk always ends
    ok[ok] = nodes[pred[ok]] & nodes[succ[ok]]
    pred, succ = pred[ok], succ[ok]
    del ok
    if len(pred):
        ends = s.end(pred)
        order = np.lexsort((ends, succ))  # per successor, the latest-ending flow predecessor last
        pred, succ, ends = pred[order], succ[order], ends[order]
        del order
        last = np.append(succ[1:] != succ[:-1], True)
        pred, succ, ends = pred[last], succ[last], ends[last]
        held = best[succ]
        # the flow wins over the same-track edge unless that one ends later (equal: the later edge, the flow)
        win = held < 0
        win[~win] = ends[~win] >= s.end(held[~win])
        best[succ[win]] = pred[win]
    del pred, succ
    links = best.data  # a memoryview: item access gives Python ints, without a list of every row
    v = int(rows[np.argmax(s.end(rows))])
    path = np.empty(len(rows), dtype=np.int64)  # each node at most once: a predecessor is an earlier row
    k = 0
    while v >= 0:
        path[k] = v
        k += 1
        v = links[v]
    chain = path[:k][::-1].copy()
    del path
    start, end = s.start[chain], s.end(chain)
    # where the path moves on after each row: the next rows' earliest start (the last row: its end)
    after = np.minimum.accumulate(np.append(start[1:], end[-1])[::-1])[::-1]
    time = np.clip(np.minimum(end, after) - start, 0, None)
    wait = float(np.clip(after - end, 0, None).sum())
    return CriticalPath(chain, time, wait)
