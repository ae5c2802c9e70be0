"""Interval unions per group, for every kind: busy time per unit, per stream, per layer, per sequence —
any integer group beside the rows — in one vectorised numpy pass, exactly (no binning).
`metrics/intervals.py` has the ungrouped form.

The rows are intervals [start, start + duration) sorted by start, with the order of their ends kept
beside them (`Ordered`: `ordered(start, duration)` builds one; a kind's own table may carry the same
three columns). Grouping costs one stable sort by group; merging is a running maximum of end ranks
offset per group, so groups never mix and no end is computed twice. Times are in the table's unit.
Millions of rows are merged a batch at a time, for the same figures bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

BATCH = 1 << 19  # rows merged at a time by `union` and `one_group_segments` (see `union`)


class EndOrdered(Protocol):
    """What the grouped functions read from a table of intervals."""

    # read-only properties: a frozen dataclass's fields (Ordered, a kind's table) satisfy them
    @property
    def start(self) -> Any: ...  # float64, ascending (row order is start order)

    @property
    def end_rank(self) -> Any: ...  # int32: each row's rank by end (ends[end_rank] == start + duration)

    @property
    def ends(self) -> Any: ...  # the rows' ends, ascending


@dataclass(frozen=True)
class Ordered:
    """The smallest `EndOrdered` table: see `ordered`."""

    start: Any
    end_rank: Any
    ends: Any


def end_order(start: Any, duration: Any) -> tuple[Any, Any]:
    """(end_rank, ends) of intervals: each row's rank by end (stable, int32), and the ends ascending.
    The ends are kept once, in end order: a row's end is ends[end_rank[row]], bit for bit."""
    import numpy as np

    end = start + duration
    by_end = np.argsort(end, kind="stable")
    ends = end[by_end]
    del end
    end_rank = np.empty(len(by_end), dtype=np.int32)
    end_rank[by_end] = np.arange(len(by_end), dtype=np.int32)
    return end_rank, ends


def ordered(start: Any, duration: Any) -> Ordered:
    """A table of intervals whose `start` is ascending (sort the rows by start first)."""
    end_rank, ends = end_order(start, duration)
    return Ordered(start, end_rank, ends)


def segments(s: EndOrdered, rows: Any, group: Any) -> tuple[Any, Any, Any]:
    """The merged segments (start, end, group) of the rows' intervals within each group, ordered by
    group then start. `rows` ascending (so in start order), `group` non-negative ints beside them.
    A running maximum of end ranks offset per group merges without mixing groups, exactly."""
    import numpy as np

    if len(rows) == 0:
        return np.empty(0), np.empty(0), np.empty(0, dtype=np.int64)
    group = np.asarray(group)
    g: Any = None
    if group.min() == group.max():  # one group (a single unit, a device): already in order, no offsets
        r = rows
        run = np.maximum.accumulate(s.end_rank[r])
    else:
        order = np.argsort(group, kind="stable")
        r, g = rows[order], group[order].astype(np.int64, copy=False)
        del order
        n = len(s.ends)
        run = g * n
        run += s.end_rank[r]
        np.maximum.accumulate(run, out=run)  # groups ascending: a group's running max never reaches the next
        run %= n  # back to the rank (the group's offset g * n is a multiple of n)
    run_end = s.ends[run]
    del run
    st = s.start[r]
    del r
    new = np.empty(len(st), dtype=bool)
    new[0] = True
    np.greater(st[1:], run_end[:-1], out=new[1:])
    if g is not None:
        new[1:] |= g[1:] != g[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(st) - 1)
    # one group: its column made for the segments only (a column per row would be as long as the trace)
    return st[first], run_end[last], np.full(len(first), group[0], dtype=np.int64) if g is None else g[first]


def _union_at_once(s: EndOrdered, rows: Any, group: Any, groups: int) -> Any:
    """`union` in one pass: the temporaries of every row."""
    import numpy as np

    a, b, g = segments(s, rows, group)
    return np.bincount(g, weights=b - a, minlength=groups)[:groups] if groups else np.zeros(0)


def union(s: EndOrdered, rows: Any, key: Any, groups: int) -> Any:
    """Covered length per group (`key` beside the rows; an array of `groups` values, in the table's unit).
    Above BATCH rows, a range of groups (or, in one group, of rows) at a time: the same sums as one pass
    (segments merged alike, lengths added in the same order, one after the other), for the temporaries of
    BATCH rows instead of several columns as long as the trace."""
    import numpy as np

    if len(rows) <= BATCH:
        return _union_at_once(s, rows, key, groups)
    counts = np.bincount(key, minlength=groups)
    reached = np.cumsum(counts)
    cuts = np.minimum(np.searchsorted(reached, np.arange(BATCH, len(rows), BATCH), side="left") + 1, groups)
    large = np.flatnonzero(counts > BATCH)  # each in a range of its own: merged a batch of rows at a time
    bounds = np.unique(np.concatenate([[0], cuts, large, large + 1, [groups]])).tolist()
    out = np.zeros(groups)
    for a, b in pairwise(bounds):
        pick = None if (a, b) == (0, groups) else (key >= a) & (key < b)
        if pick is not None and not pick.any():
            continue
        some, their = (rows, key) if pick is None else (rows[pick], key[pick])
        present = np.flatnonzero(counts[a:b]) + a
        if len(present) == 1 and len(some) > BATCH:
            total = 0.0  # as np.bincount adds a group's lengths: one after the other, from 0.0
            for starts, ends in _one_group(s, some):
                if len(starts):
                    total = float(np.cumsum(np.concatenate([[total], ends - starts]))[-1])
            out[present[0]] = total
        else:
            out[a:b] = _union_at_once(s, some, their - a if a else their, b - a)  # counts only the range's groups
    return out


def rows_of(mask: Any) -> Any:
    """np.flatnonzero(mask) as int32 (below 2**31 rows), a block at a time: no int64 index of the rows."""
    import numpy as np

    if len(mask) >= 2**31:
        return np.flatnonzero(mask)
    out = np.empty(int(np.count_nonzero(mask)), dtype=np.int32)
    at = 0
    for a in range(0, len(mask), BATCH):
        found = np.flatnonzero(mask[a:a + BATCH])
        found += a
        out[at:at + len(found)] = found
        at += len(found)
    return out


def _one_group(s: EndOrdered, rows: Any) -> Iterator[tuple[Any, Any]]:
    """`segments` of rows (ascending) all in one group, BATCH rows at a time: the merged
    segments (starts, ends) each batch closes, the last one when the rows end. The running end is carried
    from one batch to the next, so the segments are the very same, for a batch's temporaries."""
    import numpy as np

    carry_rank, carry_start = -1, 0.0  # the open segment: the running end's rank, where it starts
    for a in range(0, len(rows), BATCH):
        r = rows[a:a + BATCH]
        run = np.maximum.accumulate(s.end_rank[r])
        if carry_rank >= 0:
            np.maximum(run, carry_rank, out=run)
        run_end = s.ends[run]
        st = s.start[r]
        new = np.empty(len(r), dtype=bool)
        new[0] = carry_rank < 0 or bool(st[0] > s.ends[carry_rank])
        np.greater(st[1:], run_end[:-1], out=new[1:])
        begins = np.flatnonzero(new) if new[0] else np.concatenate([[0], np.flatnonzero(new)])
        starts = st[begins]
        if not new[0]:
            starts[0] = carry_start  # the carried segment goes on here
        ends = run_end[np.append(begins[1:] - 1, len(r) - 1)]
        closed = starts[:-1], ends[:-1]  # the last one may go on into the next batch
        if carry_rank >= 0 and new[0]:  # the carried segment ended with the last batch
            closed = np.append(carry_start, closed[0]), np.append(s.ends[carry_rank], closed[1])
        carry_rank, carry_start = int(run[-1]), float(starts[-1])
        yield closed
    if carry_rank >= 0:
        yield np.array([carry_start]), s.ends[[carry_rank]]


def one_group_segments(s: EndOrdered, rows: Any) -> tuple[Any, Any]:
    """`segments` (starts, ends) of rows (ascending) all in one group, a batch at a time."""
    import numpy as np

    found = list(_one_group(s, rows))
    return (np.concatenate([a for a, _ in found]), np.concatenate([b for _, b in found])) if found else \
        (np.empty(0), np.empty(0))


def covered(x: Any, starts: Any, ends: Any) -> Any:
    """Whether each point lies in one of the disjoint, sorted segments [start, end)."""
    import numpy as np

    return np.searchsorted(starts, x, side="right") > np.searchsorted(ends, x, side="right")
