"""Interval unions per group, for every kind: busy time per unit, per stream, per layer, per sequence —
any integer group beside the rows — in one vectorised numpy pass, exactly (no binning).
`metrics/intervals.py` has the ungrouped form.

The rows are intervals [start, start + duration) sorted by start, with the order of their ends kept
beside them (`Ordered`: `ordered(start, duration)` builds one; a kind's own table may carry the same
three columns). Grouping costs one stable sort by group; merging is a running maximum of end ranks
offset per group, so groups never mix and no end is computed twice. Times are in the table's unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class EndOrdered(Protocol):
    """What the grouped functions read from a table of intervals."""

    start: Any  # float64, ascending (row order is start order)
    end_rank: Any  # int32: each row's rank by end (ends[end_rank] == start + duration)
    ends: Any  # the rows' ends, ascending


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


def union(s: EndOrdered, rows: Any, group: Any, groups: int) -> Any:
    """Covered length per group (an array of `groups` values, in the table's unit)."""
    import numpy as np

    a, b, g = segments(s, rows, group)
    return np.bincount(g, weights=b - a, minlength=groups)[:groups] if groups else np.zeros(0)


def covered(x: Any, starts: Any, ends: Any) -> Any:
    """Whether each point lies in one of the disjoint, sorted segments [start, end)."""
    import numpy as np

    return np.searchsorted(starts, x, side="right") > np.searchsorted(ends, x, side="right")
