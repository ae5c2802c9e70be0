"""Profiler steps and the analysed window. The window is every complete `ProfilerStep#N` annotation, from the
first step's start to the last step's end (HTA drops the last step by default; advisor keeps it: a step the
profiler closed is complete); a trace without steps is analysed over its span (first event start to last
event end). Step figures: durations, their spread, the first (warm-up) step against the others' median, and
per step the device's busy time inside the step's span."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.events import EventTrace
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.kinds.torch import KIND
from advisor.kinds.torch import tables as T
from advisor.kinds.torch.classes import Knowledge
from advisor.metrics.intervals import covered, usable

NS = 1e-9
STEP_COLUMNS = ("duration", "busy_fraction", "idle", "kernels")
MIN_STEPS_FOR_SPREAD = 3  # spread and warm-up need the first step plus at least two others


@dataclass(frozen=True)
class Window:
    start: float  # ns from the trace start
    end: float
    numbers: Any  # int64 step numbers, in start order (empty without steps)
    step_start: Any  # float64 ns
    step_end: Any
    span_start: float  # the trace's first event start (ns)
    span_end: float  # the trace's last event end

    @property
    def length(self) -> float:
        return self.end - self.start

    @property
    def from_steps(self) -> bool:
        return len(self.numbers) > 0


def share(ns: float, window: float) -> float | None:
    """A time's share of the window; unavailable (None), never a division by zero, for an empty window."""
    return ns / window if window > 0 else None


def trace_span(trace: EventTrace) -> tuple[float, float]:
    """(first start, last end) over the usable events of every table, ns; (0, 0) for an empty trace."""
    import numpy as np

    first, last = np.inf, -np.inf
    for table in trace.tables.values():
        start, duration, _ = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
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
    numbers, starts, ends = steps(trace, know)
    first, last = trace_span(trace)
    if len(numbers):
        return Window(float(starts.min()), float(ends.max()), numbers, starts, ends, first, last)
    return Window(first, last, numbers, starts, ends, first, last)


def step_metrics(w: Window) -> dict[str, float | None]:
    """Step times (s) and their spread; the first step against the median of the others."""
    import numpy as np

    d = (w.step_end - w.step_start) * NS
    n = len(d)
    m: dict[str, float | None] = {"step_count": float(n)}
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
