"""Device idle time in the analysed window, split as HTA's idle-time breakdown splits a stream's gaps, applied to
the device's gaps (the holes in the union of every stream's work), so the three parts sum to the device's idle
time:
- host wait: the device event that ends the gap was queued (its runtime call started) after the device went
  idle: nothing was queued, the host set the pace. A gap no later event ends (the window's tail) is host wait
  too: nothing was queued at all.
- kernel wait: work was queued and the gap is shorter than the kernel-wait threshold (HTA's
  consecutive_kernel_delay): per-kernel launch and scheduling overhead between back-to-back kernels.
- other: work was queued and the gap is longer: waits on events, synchronisation or another stream.
A device event whose queuing call is not in the trace is never host wait (HTA: an unmatched kernel's runtime
time is unknown).
A host-wait gap is host wait only until its ending work was queued (the queuing call returned): if the device then
waits longer than the kernel-wait threshold with that work queued, the rest of the gap is "other", as HTA calls a
gap that began with the work already queued (issue 34: an SGLang step whose kernels, queued at 0.1 ms behind an
event wait, ran at 463 ms was 463 ms of host wait). Launch latency, shorter than the threshold, stays host wait,
so HTA's figures move only where the device waited on something other than the host."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.metrics.intervals import segments

HOST_WAIT, KERNEL_WAIT, OTHER = 0, 1, 2
CATEGORIES = ("host wait", "kernel wait", "other")  # the idle breakdown's row keys, in this order


@dataclass(frozen=True)
class Idle:
    time: tuple[float, float, float]  # ns in the window per category (CATEGORIES order)
    gap_start: Any  # float64 ns: the gaps inside the window, clipped to it, in time order
    gap_end: Any
    gap_category: Any  # int8


def work_segments(start: Any, end: Any) -> tuple[Any, Any]:
    """Merged segments of the device's work rows (whole trace, not clipped)."""
    return segments(start, end - start)


def idle_split(seg_start: Any, seg_end: Any, row_start: Any, row_queued: Any, w0: float, w1: float,
               threshold: float, row_ready: Any = None) -> Idle:
    """Classify the holes of the merged work segments inside [w0, w1]. `row_start` (sorted) and `row_queued`
    (ns, NaN unknown) are the work rows' starts and their queuing calls' starts; `row_ready` (ns, NaN unknown)
    when those calls returned, which ends a host-wait gap's host wait (None: the gap is all host wait)."""
    import numpy as np

    n = len(seg_start)
    if n == 0:  # no work at all: the whole window waits on the host
        return Idle((max(w1 - w0, 0.0), 0.0, 0.0), np.array([w0]), np.array([w1]), np.array([HOST_WAIT], np.int8))
    # the earliest queuing of the rows that start a segment (ties: several rows start at the same time)
    seg_of_row = np.searchsorted(seg_start, row_start, side="right") - 1
    first = row_start == seg_start[seg_of_row]
    queued, ready = np.full(n, np.nan), np.full(n, np.nan)
    np.fmin.at(queued, seg_of_row[first], row_queued[first])
    if row_ready is not None:
        np.fmin.at(ready, seg_of_row[first], row_ready[first])
    # gap i ends at segment i and starts at the previous segment's end (segment 0: the window's start)
    gap_start = np.concatenate([[min(w0, seg_start[0])], seg_end[:-1], [seg_end[-1]]])
    gap_end = np.concatenate([seg_start, [max(w1, seg_end[-1])]])
    gap_queued = np.concatenate([queued, [np.inf]])  # the tail: nothing queued after the last work
    length = gap_end - gap_start
    category = np.full(n + 1, OTHER, dtype=np.int8)
    host = gap_queued > gap_start  # NaN compares False: an unmatched event is never host wait
    category[~host & (length < threshold)] = KERNEL_WAIT
    category[host] = HOST_WAIT
    # a host-wait gap whose work then waited queued longer than the threshold: host wait up to `ready`, then other
    gap_ready = np.concatenate([ready, [np.nan]])
    late = host & (gap_end - gap_ready > threshold) & (gap_ready > gap_start)
    if late.any():
        gap_start = np.concatenate([gap_start, gap_ready[late]])
        gap_end = np.concatenate([np.where(late, gap_ready, gap_end)[: n + 1], gap_end[late]])
        category = np.concatenate([category, np.full(int(late.sum()), OTHER, dtype=np.int8)])
        order = np.argsort(gap_start, kind="stable")
        gap_start, gap_end, category = gap_start[order], gap_end[order], category[order]
    a, b = np.maximum(gap_start, w0), np.minimum(gap_end, w1)
    keep = b > a
    a, b, category = a[keep], b[keep], category[keep]
    time = np.bincount(category, weights=b - a, minlength=3)
    return Idle((float(time[0]), float(time[1]), float(time[2])), a, b, category)
