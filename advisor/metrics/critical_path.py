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


class PathTable(Protocol):
    """What the critical path reads from a table of events."""

    start: Any  # ascending (row order is start order)
    track: Any  # int codes: events on one track run one after another
    ident: Any  # int ids flows refer to, one per row; None when the table has none

    def __len__(self) -> int: ...

    def end(self, rows: Any = None) -> Any:
        """The ends of the rows (indices), or of all rows."""
        ...


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
    by_id = np.argsort(ids, kind="stable").astype(np.int32)  # rows (int32 like the table's codes)

    def rows_of(values: Any) -> Any:
        values = np.asarray(values, dtype=np.int64)
        if not len(ids):
            return np.full(len(values), -1, dtype=np.int32)
        at = by_id[np.clip(np.searchsorted(ids, values, sorter=by_id), 0, len(ids) - 1)]  # the row of the nearest id
        return np.where(ids[at] == values, at, -1)

    return rows_of(flows[0]), rows_of(flows[1])


def critical_path(s: PathTable, nodes: Any, flows: Any) -> CriticalPath | None:
    """`nodes`: mask of the rows that may be on the path; `flows`: (from ids, to ids) or None."""
    import numpy as np

    rows = np.flatnonzero(nodes).astype(np.int32)  # edges as int32 rows: half the memory of int64
    if len(rows) == 0:
        return None
    # same-track order: each row's predecessor is the previous row on its track (rows are in start order)
    by_track = rows[np.argsort(s.track[rows], kind="stable")]
    same = s.track[by_track[1:]] == s.track[by_track[:-1]]
    pred, succ = by_track[:-1][same], by_track[1:][same]
    flow_pred, flow_succ = flow_rows(s, flows)
    pred, succ = np.concatenate([pred, flow_pred]), np.concatenate([succ, flow_succ])
    # a predecessor is an earlier row (start order, then row number): the walk always ends
    ok = (pred >= 0) & (succ >= 0) & (pred < succ)
    ok[ok] = nodes[pred[ok]] & nodes[succ[ok]]
    pred, succ = pred[ok], succ[ok]
    best = np.full(len(s), -1, dtype=np.int32)
    if len(pred):
        order = np.lexsort((s.end(pred), succ))  # per successor, the latest-ending predecessor last
        pred, succ = pred[order], succ[order]
        del order
        last = np.append(succ[1:] != succ[:-1], True)
        best[succ[last]] = pred[last]
    del pred, succ
    links = memoryview(best)  # item access gives Python ints, without a list of every row
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
