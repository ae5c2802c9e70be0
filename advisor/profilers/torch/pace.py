"""What fills the device's idle time that neither the data loader nor a synchronisation owns (owners.py: the
host's own pace), read on the host thread the device waited for: the thread whose runtime call queued the event
the device ran next (for a gap no queued event ends, the thread with the most launch calls). At each instant of
that idle time the thread is
- on the launch path: inside a top-level operator that queues device work (a launch call runs inside it, so its
  Python, dispatcher and launch time is paid per kernel), in a launch call outside any operator, or between
  operators (untraced: the Python between two operator calls). Fewer, cheaper launches give this time back: device
  graphs, fused kernels, larger ones;
- in a CPU operator: a top-level operator (inside no other operator on its thread) that queues no device work
  (flattening and unflattening tensors, building views, host-side bookkeeping). Launching does not explain this
  time: the operators do, named by their share of it (`Pace.operators`);
- in untraced host work: a stretch with no operator or runtime call on the thread at least
  data/kernels.yaml `untraced_host_work_us` long (Python decoding a video, preprocessing, bookkeeping: issue 34's
  218 ms of preprocessing had been counted as launching). It is CPU work too (`Pace.untraced`, part of `cpu`).
One more piece of idle time, with work already queued (HTA's "other"), is the launch path's: the device waiting
while the launch call that queued its next event is still running. A call that takes milliseconds (MTIA's
runFunction submitting a job, a launch that loads a module) queues its work when it returns, not when it starts.
Launch calls that block (inside a synchronisation, or queuing a pageable copy) are not launch overhead: their
time is the sync's or the copy's. Times are ns from the trace start; Python loops run over threads and names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.events import NS, EventTrace
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.metrics.intervals import covered, intersect, segments, usable
from advisor.profilers.torch import KIND
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.classes import Knowledge, named
from advisor.profilers.torch.idle import HOST_WAIT, OTHER, Idle

NAMED = 5  # CPU operators named (each with the annotation it runs in)


@dataclass(frozen=True)
class Pace:
    launch: float  # ns: host-pace idle on the launch path
    call: float  # ns: idle with work queued while the call that queued it still runs (part of "other")
    cpu: float  # ns: host-pace idle in CPU work (operators and untraced); launch + cpu is the host-pace idle
    operators: tuple[tuple[str, str, float], ...]  # (CPU operator, the annotation it runs in or "", ns), largest first
    untraced: float = 0.0  # ns: of cpu, in long stretches outside any operator or runtime call


def subtract(a_start: Any, a_end: Any, b_start: Any, b_end: Any) -> tuple[Any, Any]:
    """The parts of disjoint sorted segments `a` outside disjoint sorted segments `b`."""
    import numpy as np

    gaps_start = np.concatenate([[-np.inf], b_end])
    gaps_end = np.concatenate([b_start, [np.inf]])
    return intersect(a_start, a_end, gaps_start, gaps_end)


def advance(seg_start: Any, seg_end: Any, at: Any, amount: Any) -> Any:
    """Per point of `at`, the time by which the disjoint sorted segments have covered `amount` more after it."""
    import numpy as np

    if len(seg_start) == 0:
        return np.asarray(at, dtype=float)
    total = np.cumsum(seg_end - seg_start)
    target = covered(seg_start, seg_end, at) + amount
    i = np.minimum(np.searchsorted(total, target, side="left"), len(total) - 1)
    return np.where(amount > 0, seg_end[i] - (total[i] - target), at)


def pace_segments(idle: Idle, loader_idle: tuple[Any, Any], syncs: tuple[Any, Any], sync_part: Any) -> tuple[Any, Any]:
    """The host-pace idle: host-wait gaps less the loader's part (`loader_idle`) and, after each sync's start, the
    first `sync_part` ns of what is left (the sync's part, owners.py)."""
    import numpy as np

    host = idle.gap_category == HOST_WAIT
    free = subtract(idle.gap_start[host], idle.gap_end[host], *loader_idle)
    s_start = np.asarray(syncs[0], dtype=float)
    owned_end = advance(*free, s_start, np.asarray(sync_part, dtype=float))
    keep = owned_end > s_start
    return subtract(*free, s_start[keep], owned_end[keep])


@dataclass(frozen=True)
class _EndingCalls:
    """Per gap end: the runtime call that queued the device work starting there (the earliest such call)."""

    start: Any  # float64 ns; NaN where no queued work starts there
    end: Any  # float64 ns; NaN likewise
    thread: Any  # int64; -1 likewise
    launch: Any  # bool: a launch call that does not block


@dataclass(frozen=True)
class _Queued:
    """Device rows starting at a gap end: their start, correlation id, and whether they copy pageable memory."""

    start: Any
    corr: Any
    pageable: Any


def _queued_at(trace: EventTrace, know: Knowledge, ends: Any) -> _Queued | None:
    """The device rows (kernels that do not wait, copies, sets) starting at a gap end, with their correlation ids
    (None: no device table has them)."""
    import numpy as np

    rows_start, rows_corr, rows_pageable = [], [], []
    for key in T.DEVICE_TABLES:
        table = trace.table(key)
        if table is None or table.extra.get(T.CORRELATION) is None or not len(table):
            continue
        start, _, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
        mine = np.isin(start, ends)
        if key == T.KERNEL:
            mine &= ~know.waits(tuple(table.name.names))[table.name.codes[keep]]
        rows_start.append(start[mine])
        rows_corr.append(np.asarray(table.extra[T.CORRELATION], dtype=np.int64)[keep][mine])
        pageable = table.extra.get(T.PAGEABLE)
        rows_pageable.append(np.asarray(pageable, dtype=float)[keep][mine] == 1.0 if pageable is not None
                             else np.zeros(int(mine.sum()), dtype=bool))
    if not rows_start:
        return None
    return _Queued(np.concatenate(rows_start), np.concatenate(rows_corr), np.concatenate(rows_pageable))


def _ending_calls(trace: EventTrace, know: Knowledge, ends: Any, syncs: tuple[Any, Any]) -> _EndingCalls:
    """Per gap end (ns): the start and end of the runtime call that queued the device work starting there (the
    earliest such call), its thread, and whether it is a launch call that does not block (NaN, NaN, -1, False
    where no queued work starts there)."""
    import numpy as np

    n = len(ends)  # no call yet at any gap end: filled in below where one is found
    calls = _EndingCalls(np.full(n, np.nan), np.full(n, np.nan), np.full(n, -1, dtype=np.int64),
                         np.zeros(n, dtype=bool))
    queued = _queued_at(trace, know, ends)
    table = trace.table(T.RUNTIME)
    if queued is None or table is None or not len(table) or table.extra.get(T.CORRELATION) is None:
        return calls
    r_start, r_corr, r_pageable = queued.start, queued.corr, queued.pageable
    start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    corr = np.asarray(table.extra[T.CORRELATION], dtype=np.int64)[keep]
    wanted = np.flatnonzero(np.isin(corr, r_corr[r_corr >= 0]))
    if not len(wanted):
        return calls
    launch_of = named(tuple(table.name.names), know.launches)[table.name.codes[keep][wanted]]
    order = np.lexsort((~launch_of, corr[wanted]))  # by correlation, a launch call first (as launches.link)
    rows, launch_of = wanted[order], launch_of[order]
    at = np.minimum(np.searchsorted(corr[rows], r_corr), len(rows) - 1)
    hit = (r_corr >= 0) & (corr[rows][at] == r_corr)
    source, by_launch = rows[at[hit]], launch_of[at[hit]]
    r_start, r_pageable = r_start[hit], r_pageable[hit]
    threads = table.extra.get(T.THREAD)
    threads = np.asarray(threads, dtype=np.int64)[keep] if threads is not None else np.zeros(len(start), np.int64)
    c_start, c_end, c_thread = start[source], start[source] + duration[source], threads[source]
    c_launch = by_launch & ~r_pageable & ~_in_sync(c_start, syncs)
    if not len(r_start):
        return calls
    first = np.lexsort((c_start, r_start))  # per gap end, the earliest call
    r_sorted = r_start[first]
    unique = np.flatnonzero(np.r_[True, r_sorted[1:] != r_sorted[:-1]])
    u_start, pick = r_sorted[unique], first[unique]
    at = np.minimum(np.searchsorted(u_start, ends), len(u_start) - 1)
    found = u_start[at] == ends
    chosen = pick[at[found]]
    calls.start[found], calls.end[found] = c_start[chosen], c_end[chosen]
    calls.thread[found], calls.launch[found] = c_thread[chosen], c_launch[chosen]
    return calls


def _in_sync(c_start: Any, syncs: tuple[Any, Any]) -> Any:
    """Which calls (by start) begin inside a synchronisation episode (`syncs`: their starts and ends, sorted)."""
    import numpy as np

    s_start, s_end = (np.asarray(x, dtype=float) for x in syncs)
    if not len(s_start):
        return np.zeros(len(c_start), dtype=bool)
    episode = np.searchsorted(s_start, c_start, side="right") - 1
    return (episode >= 0) & (c_start < s_end[np.maximum(episode, 0)])


def _launch_thread(trace: EventTrace, know: Knowledge, w0: float, w1: float) -> int:
    """The thread with the most launch calls starting in the window (-1 without one)."""
    import numpy as np

    table = trace.table(T.RUNTIME)
    if table is None or not len(table) or table.extra.get(T.THREAD) is None:
        return -1
    start, _, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    mine = named(tuple(table.name.names), know.launches)[table.name.codes[keep]] & (start >= w0) & (start < w1)
    threads, counts = np.unique(np.asarray(table.extra[T.THREAD], dtype=np.int64)[keep][mine], return_counts=True)
    return int(threads[np.argmax(counts)]) if len(threads) else -1


def _host_rows(trace: EventTrace, key: str, thread: int, w0: float, w1: float) -> tuple[Any, Any, Any]:
    """(start, end, name code) of one host table's rows on `thread` with time in the window, in start order
    (a parent before the children it starts with)."""
    import numpy as np

    table = trace.table(key)
    if table is None or not len(table) or table.extra.get(T.THREAD) is None:
        return np.empty(0), np.empty(0), np.empty(0, dtype=np.int64)
    start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    end = start + duration
    mine = (np.asarray(table.extra[T.THREAD], dtype=np.int64)[keep] == thread) & (end > w0) & (start < w1)
    start, end, code = start[mine], end[mine], table.name.codes[keep][mine].astype(np.int64)
    order = np.lexsort((-(end - start), start))
    return start[order], end[order], code[order]


def _top_level(start: Any, end: Any) -> Any:
    """Which rows (in start order, parents first) lie inside no earlier row."""
    import numpy as np

    if not len(start):
        return np.zeros(0, dtype=bool)
    reach = np.maximum.accumulate(end)
    return np.r_[True, start[1:] >= reach[:-1]]


def _context(trace: EventTrace, know: Knowledge, thread: int, start: float, end: float, w0: float, w1: float) -> str:
    """The innermost annotation on `thread` around [start, end) that is not a profiler step, or "" (annotations
    are few: a loop over those on the thread)."""
    a_start, a_end, code = _host_rows(trace, T.ANNOTATION, thread, w0, w1)
    table = trace.table(T.ANNOTATION)
    names = table.name.names if table is not None and len(code) else ()
    best = ""
    for s, e, c in zip(a_start.tolist(), a_end.tolist(), code.tolist(), strict=True):
        if s <= start and e >= end and not know.step.match(names[c]):
            best = names[c]  # in start order: a later one around it is nested deeper
    return best


def attribute(trace: EventTrace, know: Knowledge, idle: Idle, pace: tuple[Any, Any], syncs: tuple[Any, Any],
              w0: float, w1: float) -> Pace:
    """The host-pace idle segments (`pace`, pace_segments) split between the launch path and CPU operators, and
    the idle time inside launch calls that were still running (docstring above)."""
    import numpy as np

    ends = idle.gap_end
    ending = _ending_calls(trace, know, ends, syncs)
    other = (idle.gap_category == OTHER) & ending.launch
    inside = np.minimum(ends[other], ending.end[other]) - np.maximum(idle.gap_start[other], ending.start[other])
    call = float(np.maximum(inside, 0.0).sum())

    p_start, p_end = pace
    gap = np.maximum(np.searchsorted(idle.gap_start, p_start, side="right") - 1, 0)
    fallback = _launch_thread(trace, know, w0, w1)
    thread = np.where(ending.thread[gap] >= 0, ending.thread[gap], fallback) if len(gap) else np.empty(0, np.int64)
    ops, runtime = trace.table(T.CPU_OP), trace.table(T.RUNTIME)
    names = tuple(ops.name.names) if ops is not None else ()
    cpu_by_name, untraced = np.zeros(len(names)), 0.0
    runtime_names = tuple(runtime.name.names) if runtime is not None else ()
    quiet = np.zeros(len(runtime_names))  # per runtime call name: idle in calls outside operators that queue nothing
    largest = np.full(len(names), -1.0)  # per name, its largest instance's time, where and on which thread
    where = np.zeros((len(names), 3))
    for t in np.unique(thread).tolist():
        mine = thread == t
        seg_start, seg_end = p_start[mine], p_end[mine]
        o_start, o_end, o_code = _host_rows(trace, T.CPU_OP, t, w0, w1)
        top = _top_level(o_start, o_end)
        o_start, o_end, o_code = o_start[top], o_end[top], o_code[top]
        l_start, l_end, l_code = _host_rows(trace, T.RUNTIME, t, w0, w1)
        untraced += _untraced(seg_start, seg_end, np.r_[o_start, l_start], np.r_[o_end, l_end],
                              know.untraced_host_work, w0, w1)
        is_launch = named(runtime_names, know.launches)[l_code] if len(l_start) else np.zeros(0, bool)
        calls = (l_start[~is_launch], l_end[~is_launch], l_code[~is_launch])
        l_start = np.sort(l_start[is_launch])
        launches = np.searchsorted(l_start, o_end, side="left") - np.searchsorted(l_start, o_start, side="left")
        if len(calls[0]):
            quiet += _quiet_calls(seg_start, seg_end, o_start[launches == 0], o_end[launches == 0], *calls,
                                  len(quiet))
        time = covered(seg_start, seg_end, o_end) - covered(seg_start, seg_end, o_start)
        cpu_rows = np.flatnonzero((launches == 0) & (time > 0))
        cpu_by_name += np.bincount(o_code[cpu_rows], weights=time[cpu_rows], minlength=len(names))
        if len(cpu_rows):  # per name, its instance with the most idle time (the last of each name by time)
            order = cpu_rows[np.lexsort((time[cpu_rows], o_code[cpu_rows]))]
            last = order[np.r_[o_code[order][1:] != o_code[order][:-1], True]]
            better = time[last] > largest[o_code[last]]
            last = last[better]
            largest[o_code[last]] = time[last]
            where[o_code[last]] = np.column_stack([o_start[last], o_end[last], np.full(len(last), t)])
    cpu = float(cpu_by_name.sum()) + untraced + float(quiet.sum())
    ranked = [i for i in np.argsort(-cpu_by_name, kind="stable")[:NAMED].tolist() if cpu_by_name[i] > 0]
    found = [(names[i], _context(trace, know, int(where[i][2]), where[i][0], where[i][1], w0, w1),
              float(cpu_by_name[i])) for i in ranked]
    found += [(runtime_names[i], "", float(quiet[i])) for i in np.flatnonzero(quiet > 0).tolist()]
    operators = tuple(sorted(found, key=lambda op: -op[2])[:NAMED])
    return Pace(launch=max(float((p_end - p_start).sum()) - cpu, 0.0), call=call, cpu=cpu, operators=operators,
                untraced=untraced)


def _quiet_calls(seg_start: Any, seg_end: Any, o_start: Any, o_end: Any, c_start: Any, c_end: Any, c_code: Any,
                 names: int) -> Any:
    """Per runtime call name (`names` of them): the idle time (ns) of the segments inside calls that queue no
    device work, outside the top-level operators that queue none either (`o_start`, `o_end`, in start order; their
    time is theirs) on the thread: context creation (cudaDeviceGetStreamPriorityRange, 29.9 s inside the first
    aten::to of a cold start), allocation, device queries. CPU work, not launching, inside a launching operator too."""
    import numpy as np

    at = np.searchsorted(o_start, c_start, side="right") - 1
    inside = (at >= 0) & (o_end[np.maximum(at, 0)] >= c_end) if len(o_start) else np.zeros(len(c_start), bool)
    time = covered(seg_start, seg_end, c_end[~inside]) - covered(seg_start, seg_end, c_start[~inside])
    return np.bincount(c_code[~inside], weights=np.maximum(time, 0.0), minlength=names)[:names]


def _untraced(seg_start: Any, seg_end: Any, busy_start: Any, busy_end: Any, longest: float, w0: float,
              w1: float) -> float:
    """The time (ns) of the idle segments that lies in stretches of at least `longest` ns with no host row (the
    operators and runtime calls `busy_start`..`busy_end`) on the thread, inside the window."""
    import numpy as np

    b_start, b_end = segments(busy_start, busy_end - busy_start)
    hole_start, hole_end = np.r_[w0, b_end], np.r_[b_start, w1]
    long = hole_end - hole_start >= longest
    i_start, i_end = intersect(seg_start, seg_end, hole_start[long], hole_end[long])
    return float((i_end - i_start).sum())


def pace_metrics(pace: Pace | None, window: float) -> dict[str, float | None]:
    """launch_idle, launch_call_idle, cpu_op_idle and untraced_host_idle (its part outside any operator) (s) with
    their shares of the window, and cpu_op_top_idle (s):
    the CPU operator with the most of it. None throughout without a pace (a filtered trace)."""
    keys = ("launch_idle", "launch_call_idle", "cpu_op_idle", "untraced_host_idle")
    if pace is None:
        return {**dict.fromkeys(keys), **{f"{k}_fraction": None for k in keys}, "cpu_op_top_idle": None}
    m: dict[str, float | None] = {}
    for key, ns in zip(keys, (pace.launch, pace.call, pace.cpu, pace.untraced), strict=True):
        m[key], m[f"{key}_fraction"] = ns * NS, ns / window if window > 0 else None
    m["cpu_op_top_idle"] = pace.operators[0][2] * NS if pace.operators else 0.0
    return m


def pace_breakdown(pace: Pace | None, window: float) -> Breakdown | None:
    """The host's own pace as a table (data/report.yaml `breakdowns.host_pace`, its row labels `host_pace_rows`):
    the launching part, each named CPU operator with the annotation it runs in, the other CPU operators; time (s)
    and share of the window. None without a pace (no device, a filtered trace)."""
    if pace is None:
        return None
    labels = KIND.data("report.yaml")["host_pace_rows"]
    rows: list[tuple[str, tuple[float | None, ...]]] = []

    def row(label: str, ns: float) -> None:
        rows.append((label, (ns * NS, ns / window if window > 0 else None)))

    row(labels["launching"], pace.launch)
    named_rows = [(labels["inside"].format(operator=name, annotation=context) if context else name, ns)
                  for name, context, ns in pace.operators]
    if pace.untraced > 0:
        named_rows.append((labels["untraced"], pace.untraced))
    for label, ns in sorted(named_rows, key=lambda r: -r[1]):
        row(label, ns)
    rest = pace.cpu - pace.untraced - sum(ns for _, _, ns in pace.operators)
    if rest > 0:
        row(labels["other"], rest)
    return kind_breakdown(KIND, "host_pace", ("time", "share")).make(rows, labels["note"])
