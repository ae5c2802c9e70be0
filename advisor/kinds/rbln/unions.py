"""Interval unions over an RBLN slice table (slices.py) per unit (a device, or a device's chiplet on
Rebel100) and per (group, unit), through the shared grouped unions (metrics/grouped.py) — a batch of rows
at a time when there are millions: the same segments and the same sums, bit for bit, for the temporaries
of a batch instead of several columns as long as the trace."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from advisor.kinds.rbln.slices import Slices
from advisor.metrics.grouped import union

BATCH = 1 << 19  # rows merged at a time (see grouped_union)


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


def unit_view(s: Slices, mask: Any) -> tuple[Any, Any]:
    """The unit view's entries of the masked rows: (rows ascending, their units)."""

    if s.x_row is None:
        return rows_of(mask), s.x_unit[mask]
    keep = mask[s.x_row]
    return s.x_row[keep], s.x_unit[keep]


def _one_group(s: Slices, rows: Any) -> Iterator[tuple[Any, Any]]:
    """metrics.grouped.segments of rows (ascending) all in one group, BATCH rows at a time: the merged
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


def one_group_segments(s: Slices, rows: Any) -> tuple[Any, Any]:
    """metrics.grouped.segments (starts, ends) of rows (ascending) all in one group, a batch at a time."""
    import numpy as np

    found = list(_one_group(s, rows))
    return (np.concatenate([a for a, _ in found]), np.concatenate([b for _, b in found])) if found else \
        (np.empty(0), np.empty(0))


def grouped_union(s: Slices, rows: Any, key: Any, groups: int) -> Any:
    """metrics.grouped.union of the rows per group (`key`), a range of groups (or, in one group, of rows) at
    a time when there are many rows: the same sums (segments merged alike, lengths added in the same
    order, one after the other), and the temporaries of BATCH rows instead of all of them."""
    import numpy as np

    if len(rows) <= BATCH:
        return union(s, rows, key, groups)
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
            out[a:b] = union(s, some, their - a if a else their, b - a)  # counts only the range's groups
    return out


def per_unit(s: Slices, mask: Any) -> Any:
    """The union of the masked rows in each unit (ns)."""
    rows, unit = unit_view(s, mask)
    return grouped_union(s, rows, unit, len(s.units))


def per_unit_groups(s: Slices, mask: Any, group: Any, groups: int) -> Any:
    """The union of the masked rows per (group, unit), as an array groups × units (ns). `group` is per row."""
    import numpy as np

    units = len(s.units)
    rows, unit = unit_view(s, mask)
    key = group[rows].astype(np.int32 if groups * units < 2**31 else np.int64)
    key *= units
    key += unit
    flat = grouped_union(s, rows, key, groups * units)
    return flat.reshape(groups, units)
