"""Profiler steps and the analysed window. The window is every complete `ProfilerStep#N` annotation, from the
first complete step's start to the last one's end (HTA drops the last step by default; advisor keeps it when it is
complete); a trace without complete steps is analysed over the span of its events. Two kinds
of mark are not steps of the trace (thresholds in data/window.yaml):
- a partial first or last step: far shorter than the others' median and far less work started in it (launch calls,
  else host operators): the profiler started or stopped inside it, so it is not a step's time;
- a mark reaching far outside everything else the profiler recorded (a `ProfilerStep#1` many times the span of
  the trace's events): the window is checked against the events' span, and such a mark is left out and said.
Step figures: durations of the complete steps, their spread, the first (warm-up) step against the others'
median, and per step the device's busy time inside the step's span."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor.core import units as fmt
from advisor.core.events import NS, EventTrace
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.metrics.intervals import covered, usable
from advisor.profilers.torch import KIND
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.classes import Knowledge, named

STEP_COLUMNS = ("duration", "busy_fraction", "idle", "kernels")
MIN_STEPS_FOR_SPREAD = 3  # spread and warm-up need the first step plus at least two others


@dataclass(frozen=True)
class Window:
    start: float  # ns from the trace start
    end: float
    numbers: Any  # int64 step numbers, in start order (empty without steps)
    step_start: Any  # float64 ns
    step_end: Any
    span_start: float  # the trace's first event start (ns), marks left out (outside the events) aside
    span_end: float  # the trace's last event end
    left_out: tuple[str, ...] = ()  # one sentence per ProfilerStep mark that is not a step of the window, and why

    @property
    def length(self) -> float:
        return self.end - self.start

    @property
    def from_steps(self) -> bool:
        return len(self.numbers) > 0


def share(ns: float, window: float) -> float | None:
    """A time's share of the window; unavailable (None), never a division by zero, for an empty window."""
    return ns / window if window > 0 else None


@cache
def checks() -> dict[str, float]:
    """data/window.yaml: when a step mark is partial or outside the trace's events."""
    data = KIND.data("window.yaml")
    return {key: float(data[key]) for key in ("partial_step", "outside_span")}


def trace_span(trace: EventTrace, know: Knowledge | None = None) -> tuple[float, float]:
    """(first start, last end) over the usable events of every table, ns; (0, 0) for an empty trace. With `know`,
    the ProfilerStep annotations are left out: the span of what the profiler recorded besides its step marks."""
    import numpy as np

    first, last = np.inf, -np.inf
    for key, table in trace.tables.items():
        start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
        if know is not None and key == T.ANNOTATION and len(start):
            marks = np.array([_number(know, n) >= 0 for n in table.name.names], dtype=bool)
            other = ~marks[table.name.codes[keep]]
            start, duration = start[other], duration[other]
        if len(start):
            first = min(first, float(start.min()))
            last = max(last, float((start + duration).max()))
    return (0.0, 0.0) if first > last else (first, last)


def steps(trace: EventTrace, know: Knowledge) -> tuple[Any, Any, Any]:
    """(numbers, starts, ends) of the ProfilerStep annotations in start order; a number seen twice keeps its
    longest annotation."""
    import numpy as np

    table = trace.table(T.ANNOTATION)
    empty = (np.empty(0, dtype=np.int64), np.empty(0), np.empty(0))
    if table is None or not len(table):
        return empty
    numbers_of = np.array([_number(know, n) for n in table.name.names], dtype=np.int64)
    start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    number = numbers_of[table.name.codes[keep]] if len(start) else np.empty(0, dtype=np.int64)
    mine = number >= 0
    if not mine.any():
        return empty
    number, start, duration = number[mine], start[mine], duration[mine]
    longest = np.lexsort((-duration, number))  # by number, the longest first
    first = np.unique(number[longest], return_index=True)[1]
    chosen = longest[first]
    chosen = chosen[np.argsort(start[chosen], kind="stable")]
    return number[chosen], start[chosen], start[chosen] + duration[chosen]


def _number(know: Knowledge, name: str) -> int:
    found = know.step.match(name)
    return int(found.group(1)) if found and len(found.group(1)) < 18 else -1


def window(trace: EventTrace, know: Knowledge) -> Window:
    import numpy as np

    numbers, starts, ends = steps(trace, know)
    first, last = trace_span(trace)
    if not len(numbers):
        return Window(first, last, numbers, starts, ends, first, last)
    e0, e1 = trace_span(trace, know)
    if e1 <= e0:  # nothing but step marks: they are the trace
        e0, e1 = first, last
    c = checks()
    duration = ends - starts
    outside = np.minimum(np.maximum(e0 - starts, 0.0) + np.maximum(ends - e1, 0.0), duration)
    away = (outside > c["outside_span"] * (e1 - e0)) & (e1 > e0)
    notes = [f"ProfilerStep#{n} lasts {fmt.seconds(d * NS)}, {fmt.ratio(d / (e1 - e0), '×')} the "
             f"{fmt.seconds((e1 - e0) * NS)} the trace's other events span, {fmt.percent(o / d)} of it outside "
             "them: it is not a step of this trace (a mark opened before the profiler started or closed after it "
             "stopped); the window is checked against the events' span and leaves it out"
             for n, d, o in zip(numbers[away].tolist(), duration[away].tolist(), outside[away].tolist(), strict=True)]
    partial = _partial(trace, know, starts, ends, ~away, c["partial_step"])
    for i in np.flatnonzero(partial).tolist():
        edge = "start" if i == int(np.flatnonzero(~away)[0]) else "end"
        notes.append(f"ProfilerStep#{int(numbers[i])} is a partial step, cut by the trace's {edge}: "
                     f"{fmt.seconds(float(duration[i]) * NS)} against the other steps' median "
                     f"{fmt.seconds(float(np.median(duration[~away & ~partial])) * NS)}, with far less work started "
                     "in it; it is left out of the window and of the step figures")
    keep = ~away & ~partial
    marked = ~away  # the marks inside the trace's events widen its span, as any event does
    span = (min(e0, float(starts[marked].min())) if marked.any() else e0,
            max(e1, float(ends[marked].max())) if marked.any() else e1)
    if not keep.any():
        empty = (numbers[:0], starts[:0], ends[:0])
        return Window(e0, e1, *empty, *span, tuple(notes))
    numbers, starts, ends = numbers[keep], starts[keep], ends[keep]
    return Window(float(starts.min()), float(ends.max()), numbers, starts, ends, *span, tuple(notes))


def _partial(trace: EventTrace, know: Knowledge, starts: Any, ends: Any, candidates: Any, ratio: float) -> Any:
    """Per step (bool): a first or last candidate step under `ratio` of the other candidates' median duration
    with under `ratio` of their median work started in it: launch calls, or host operators in a trace without
    launch calls. No work measured in the other steps, no judgement: a step is partial on evidence only."""
    import numpy as np

    partial = np.zeros(len(starts), dtype=bool)
    rows = np.flatnonzero(candidates)
    if len(rows) < 2:
        return partial
    work = _work(trace, know, starts[rows], ends[rows])
    duration = ends[rows] - starts[rows]
    for at in (0, len(rows) - 1):
        others = np.arange(len(rows)) != at
        short = duration[at] < ratio * float(np.median(duration[others]))
        little = work[at] < ratio * float(np.median(work[others]))
        partial[rows[at]] = bool(short and little)
    return partial


def _work(trace: EventTrace, know: Knowledge, starts: Any, ends: Any) -> Any:
    """Launch calls started in each [start, end) (ns), or host operators when the trace has no launch call."""
    import numpy as np

    def started(table_key: str, launches: bool) -> Any | None:
        table = trace.table(table_key)
        if table is None or not len(table):
            return None
        start, _, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
        if launches:
            start = start[named(tuple(table.name.names), know.launches)[table.name.codes[keep]]]
        return np.sort(start) if len(start) else None

    found = started(T.RUNTIME, True)
    found = found if found is not None else started(T.CPU_OP, False)
    if found is None:
        return np.zeros(len(starts))
    return (np.searchsorted(found, ends, side="left") - np.searchsorted(found, starts, side="left")).astype(float)


def step_metrics(w: Window) -> dict[str, float | None]:
    """Step times (s) and their spread; the first step against the median of the others."""
    import numpy as np

    d = (w.step_end - w.step_start) * NS
    n = len(d)
    m: dict[str, float | None] = {"step_count": float(n), "partial_step_count": float(len(w.left_out))}
    for key, f in (("median", np.median), ("mean", np.mean), ("max", np.max), ("min", np.min)):
        m[f"step_time_{key}"] = float(f(d)) if n else None
    spread = n >= MIN_STEPS_FOR_SPREAD
    m["step_time_cv"] = variation(d)
    m["first_step_time"] = float(d[0]) if n else None
    others = float(np.median(d[1:])) if spread else None
    m["first_step_ratio"] = float(d[0]) / others if others else None
    m["warmup_fraction"] = (max(0.0, float(d[0]) - others) / (w.length * NS)
                            if others is not None and w.length > 0 else None)
    return m


def variation(durations: Any) -> float | None:
    """The coefficient of variation of step durations (sample standard deviation over mean), from three steps."""
    mean = float(durations.mean()) if len(durations) else 0.0
    if len(durations) < MIN_STEPS_FOR_SPREAD or mean <= 0:
        return None
    return float(durations.std(ddof=1)) / mean


def steps_breakdown(w: Window, busy_segments: tuple[Any, Any] | None, kernel_starts: Any) -> Breakdown:
    """One row per step: duration (s), device busy share of the step, device idle (s), kernels started in it.
    `busy_segments` are the device's merged work segments (None: no device); `kernel_starts` sorted."""
    import numpy as np

    layout = kind_breakdown(KIND, "steps", STEP_COLUMNS)
    duration = w.step_end - w.step_start
    rows: list[tuple[str, tuple[float | None, ...]]] = []
    if busy_segments is None:
        rows = [(str(n), (float(d) * NS, None, None, None)) for n, d in zip(w.numbers.tolist(), duration.tolist(),
                                                                             strict=True)]
        return layout.make(rows, "No device events: the steps' host-side durations only.")
    at_start = covered(*busy_segments, w.step_start)
    busy = covered(*busy_segments, w.step_end) - at_start
    kernels = np.searchsorted(kernel_starts, w.step_end, side="left") - np.searchsorted(kernel_starts, w.step_start,
                                                                                       side="left")
    for n, d, b, k in zip(w.numbers.tolist(), duration.tolist(), busy.tolist(), kernels.tolist(), strict=True):
        rows.append((str(n), (d * NS, b / d if d > 0 else None, (d - b) * NS, float(k))))
    return layout.make(rows, "Each step's span on the host (its ProfilerStep annotation); device busy and idle "
                             "time inside that span; kernels that started in it.")
