"""Launch statistics and queue lengths. Each device event is linked by `correlation` to the runtime call that
queued it (cudaLaunchKernel, cudaMemcpyAsync, hipLaunchKernel, MTIA's runFunction, …: data/kernels.yaml
`launches`); a kernel shorter than the call that launched it cannot be kept busy by launching one at a time.
A launch call that blocks is not launch overhead and is left out of the launch figures: one inside a
synchronisation (the cudaMemcpyAsync of Tensor.item() waits for everything queued: the sync's time), one that
queued a copy from or to pageable memory (the host waits for the staged copy: the pageable copy's time) and a
synchronous copy call (hipMemcpyWithStream, cudaMemcpy: it returns when the copy is done, issue 34 class 2).
The queue of a stream counts the events queued by a launch call and not yet finished: +1 when the call starts,
-1 when the event ends, a step function whose time-weighted mean and maximum are taken over the window."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from advisor.core.events import NS, EventTrace
from advisor.metrics.intervals import usable
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.classes import Knowledge, named
from advisor.profilers.torch.device import Device

SYNC_COPY = re.compile(r"^(cu|cuda|hip)Memcpy(?!.*Async)")  # returns when the copy is done (hipMemcpyWithStream too)


@dataclass(frozen=True)
class Runtime:
    """The runtime calls (host side) with a usable time."""

    start: Any
    duration: Any
    launch: Any  # bool: a launch call (data/kernels.yaml `launches`)
    correlation: Any  # int64, -1 unknown
    sync_copy: Any  # bool: a synchronous copy call (SYNC_COPY), which blocks the host
    filtered: bool = False  # a sampled trace (the reader's `filtered`): its calls' spread is not the run's


@dataclass(frozen=True)
class Links:
    """Per device row: its queuing runtime call (any call with its correlation) and whether that call is a launch."""

    queued: Any  # float64 ns: the call's start, NaN without one
    call_duration: Any  # float64 ns, NaN without one
    by_launch: Any  # bool: the call is a launch call
    call: Any  # int64: the call's row in Runtime, -1 without one


def runtime(trace: EventTrace, know: Knowledge) -> Runtime:
    import numpy as np

    table = trace.table(T.RUNTIME)
    if table is None or not len(table):
        empty = np.empty(0)
        return Runtime(empty, empty, np.empty(0, dtype=bool), np.empty(0, dtype=np.int64), np.empty(0, dtype=bool))
    start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    names = tuple(table.name.names)
    launch = named(names, know.launches)[table.name.codes[keep]]
    sync_copy = np.fromiter((bool(SYNC_COPY.search(n)) for n in names), dtype=bool, count=len(names))
    sync_copy = sync_copy[table.name.codes[keep]]
    corr = table.extra.get(T.CORRELATION)
    correlation = (np.asarray(corr, dtype=np.int64)[keep] if corr is not None
                   else np.full(len(start), -1, dtype=np.int64))
    return Runtime(start, duration, launch, correlation, sync_copy, bool(trace.extra.get("filtered")))


def link(dev: Device, rt: Runtime) -> Links:
    """Join device rows to runtime calls on correlation (sorted search; a correlation seen twice keeps a launch)."""
    import numpy as np

    n = len(dev)
    queued, call, by_launch = np.full(n, np.nan), np.full(n, np.nan), np.zeros(n, dtype=bool)
    row = np.full(n, -1, dtype=np.int64)
    known = rt.correlation >= 0
    if not known.any() or n == 0:
        return Links(queued, call, by_launch, row)
    rows = np.flatnonzero(known)
    order = rows[np.lexsort((~rt.launch[rows], rt.correlation[rows]))]  # by correlation, launches first
    keys = rt.correlation[order]
    at = np.searchsorted(keys, dev.correlation, side="left")
    at_ok = np.minimum(at, len(keys) - 1)
    hit = (dev.correlation >= 0) & (at < len(keys)) & (keys[at_ok] == dev.correlation)
    source = order[at_ok[hit]]
    queued[hit], call[hit], by_launch[hit] = rt.start[source], rt.duration[source], rt.launch[source]
    row[hit] = source
    return Links(queued, call, by_launch, row)


def blocking_calls(dev: Device, rt: Runtime, links: Links, syncs: tuple[Any, Any]) -> Any:
    """Per runtime call (bool): a launch call that starts inside a synchronisation (`syncs`: merged episodes, ns),
    that queued a copy from or to pageable memory, or that is a synchronous copy."""
    import numpy as np

    s_start, s_end = syncs
    episode = np.searchsorted(s_start, rt.start, side="right") - 1
    blocking = np.zeros(len(rt.start), dtype=bool)
    inside = episode >= 0
    blocking[inside] = rt.start[inside] < s_end[episode[inside]]
    pageable = (dev.pageable == 1.0) & (links.call >= 0)
    blocking[links.call[pageable]] = True
    return (blocking | rt.sync_copy) & rt.launch


def launch_metrics(dev: Device, rt: Runtime, links: Links, blocking: Any, w0: float,
                   w1: float) -> dict[str, float | None]:
    """Launch calls started in the window, the blocking ones (`blocking_calls`) counted apart; kernels in the
    window against the launch call that queued them (the median of those calls: launch_time_median)."""
    import numpy as np

    started = (rt.start >= w0) & (rt.start < w1)
    in_window = rt.launch & ~blocking & started
    count = int(in_window.sum())
    total = float(rt.duration[in_window].sum())
    kernels = dev.kernels() & dev.inside & links.by_launch
    delay = dev.start[kernels] - links.queued[kernels]
    duration = (dev.end - dev.start)[kernels]
    short = int((duration < links.call_duration[kernels]).sum())
    return {
        "launch_count": float(count), "launch_time_total": total * NS,
        "blocking_launch_count": float((blocking & started).sum()),
        "launch_time_mean": total / count * NS if count else None,
        # the calls that queued kernels (copies and sets are launched too, and are quick): a mean of milliseconds
        # over a median of microseconds is a few slow calls (start-up); both slow, every kernel's launch is slow
        "launch_time_median": (float(np.median(links.call_duration[kernels])) * NS
                               if len(delay) and not rt.filtered else None),
        "launch_delay_median": float(np.median(delay)) * NS if len(delay) else None,
        "short_kernel_count": float(short) if len(delay) else None,
        "short_kernel_fraction": short / len(delay) if len(delay) else None,
    }


def queue_lengths(dev: Device, links: Links, w0: float, w1: float) -> tuple[Any, Any]:
    """Per stream (dev.tracks order): the longest queue in the window (count) and its time-weighted mean over the
    window (count). Events queued by a launch call count from the call's start to the event's end."""
    import numpy as np

    streams = len(dev.tracks)
    longest, mean = np.zeros(streams), np.zeros(streams)
    rows = np.flatnonzero(links.by_launch)
    n = len(rows)
    if n == 0 or w1 <= w0:
        return longest, mean
    time = np.concatenate([links.queued[rows], dev.end[rows]])
    track = np.concatenate([dev.track[rows], dev.track[rows]]).astype(np.int32, copy=False)
    del rows
    opens = np.zeros(2 * n, dtype=bool)
    opens[:n] = True
    order = np.lexsort((opens, time, track))  # per stream in time; at one instant an end before a start
    time, track, opens = time[order], track[order], opens[order]
    del order
    # every +1 has its -1 on the same stream, so a stream's running total starts and ends at 0: one cumulative
    # sum over the streams in turn is each stream's queue
    level = np.cumsum(np.where(opens, 1, -1), dtype=np.int64)
    del opens
    first = np.flatnonzero(np.r_[True, track[1:] != track[:-1]])
    following = np.empty_like(time)
    following[:-1] = time[1:]
    following[np.r_[first[1:] - 1, len(time) - 1]] = time[np.r_[first[1:] - 1, len(time) - 1]]  # then empty
    np.minimum(following, w1, out=following)
    held = following - np.maximum(time, w0)
    del following
    live = (held > 0) | ((time >= w0) & (time < w1))
    np.maximum(held, 0.0, out=held)
    held *= level
    mean[:] = np.bincount(track, weights=held, minlength=streams)[:streams] / (w1 - w0)
    del held
    peak = np.where(live, level, 0)
    longest[track[first]] = np.maximum.reduceat(peak, first)
    return longest, mean
