"""Interval algebra over event tables, for every kind: usable events, merged segments, unions
(busy time), exact busy share per time bin, and idle gaps. numpy throughout: traces have millions
of events. Times are in the table's unit (ns); callers convert."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Intervals = tuple[Any, Any]  # (start, duration) arrays


def usable(start: Any, duration: Any) -> tuple[Any, Any, Any]:
    """The events with a finite, non-negative start and duration, and the mask that chose them."""
    import numpy as np

    keep = (start >= 0) & (duration >= 0) & np.isfinite(start) & np.isfinite(duration)
    return start[keep], duration[keep], keep


def segments(start: Any, duration: Any) -> tuple[Any, Any]:
    """The merged, disjoint segments (starts, ends) covered by [start, start + duration) intervals."""
    import numpy as np

    if len(start) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(start, kind="stable")
    s, e = start[order], (start + duration)[order]
    running_end = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > running_end[:-1]
    seg_start = s[new]
    seg_end = np.append(running_end[np.flatnonzero(new)[1:] - 1], running_end[-1])
    return seg_start, seg_end


def union(start: Any, duration: Any) -> float:
    """Total covered length of [start, start + duration) intervals."""
    seg_start, seg_end = segments(start, duration)
    return float((seg_end - seg_start).sum())


def concat(parts: Sequence[Intervals]) -> Intervals:
    """Several interval sets as one (their union is the union of all)."""
    import numpy as np

    if not parts:
        return np.empty(0), np.empty(0)
    return np.concatenate([s for s, _ in parts]), np.concatenate([d for _, d in parts])


def covered(seg_start: Any, seg_end: Any, points: Any) -> Any:
    """Covered length of disjoint sorted segments up to each point (piecewise linear through their ends)."""
    import numpy as np

    if len(seg_start) == 0:
        return np.zeros(len(points))
    lengths = seg_end - seg_start
    before = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
    xs = np.column_stack([seg_start, seg_end]).ravel()
    ys = np.column_stack([before, before + lengths]).ravel()
    return np.interp(points, xs, ys)


def intersect(a_start: Any, a_end: Any, b_start: Any, b_end: Any) -> tuple[Any, Any]:
    """The segments (starts, ends) covered by both of two sets of disjoint segments: where the count of
    open segments is two. Touching segments do not overlap (an end sorts before a start at the same point)."""
    import numpy as np

    points = np.concatenate([a_start, a_end, b_start, b_end]).astype(float)
    delta = np.concatenate([np.ones(len(a_start)), -np.ones(len(a_end)), np.ones(len(b_start)), -np.ones(len(b_end))])
    order = np.lexsort((delta, points))
    points, level = points[order], np.cumsum(delta[order])
    both = np.flatnonzero(level[:-1] == 2)
    start, end = points[both], points[both + 1]
    keep = end > start
    return start[keep], end[keep]


def timeline(rows: Mapping[str, Intervals], span: float, bins: int) -> tuple[tuple[float, ...],
                                                                          dict[str, tuple[float, ...]]]:
    """Bin edges over [0, span] and, per row, the busy fraction of each bin, exact: the covered length
    of the row's merged segments inside the bin (overlapping events count once)."""
    import numpy as np

    edges = np.linspace(0, span, bins + 1)
    width = span / bins
    out = {}
    for name, (start, duration) in rows.items():
        seg_start, seg_end = segments(start, duration)
        if len(seg_start) == 0:
            out[name] = (0.0,) * bins
            continue
        out[name] = tuple(float(v) for v in np.clip(np.diff(covered(seg_start, seg_end, edges)) / width, 0.0, 1.0))
    return tuple(float(e) for e in edges), out


def gaps(starts: Any, ends: Any, span: float, longest: int = 5) -> list[tuple[float, float]]:
    """(start, length) of idle time around merged segments (numpy starts and ends, sorted, disjoint): the time
    before the first segment, the `longest` gaps between segments, and the time after the last segment when the
    run goes on past it, all longest first (of equal ones the later first), as the reports' tables say. No tuple
    per segment: a trace's device union can have millions."""
    import numpy as np

    if not len(starts):
        return []
    found = [(0.0, float(starts[0]))] if starts[0] > 0 else []
    lengths, at = starts[1:] - ends[:-1], ends[:-1]
    top = np.lexsort((at, lengths))[::-1][:longest]
    found += [(float(at[i]), float(lengths[i])) for i in top.tolist() if lengths[i] > 0]
    if span > ends[-1]:
        found.append((float(ends[-1]), span - float(ends[-1])))
    return sorted(found, key=lambda gap: (-gap[1], -gap[0]))
