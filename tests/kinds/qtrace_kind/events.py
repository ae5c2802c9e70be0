"""What the trace adds: the kernels' and copies' busy time, and the copies no kernel overlaps. The summary the
report draws (engines, utilisation over time, idle gaps, copy sizes) is the shared builder's."""

from __future__ import annotations

import numpy as np

from advisor.core.events import NS, EventTrace
from advisor.core.trace import TraceSummary
from advisor.metrics.intervals import segments, union
from advisor.metrics.trace_summary import Group, Measured, Span, build_summary


def summarize(trace: EventTrace, total_time: float | None) -> tuple[TraceSummary, dict[str, float | None]]:
    kernels, copies = trace.tables["kernel"], trace.tables["copy"]
    starts = np.concatenate([kernels.start, copies.start])
    durations = np.concatenate([kernels.duration, copies.duration])
    span = float((starts + durations).max())  # ns, from the events themselves: total_time has been through seconds
    kernel_busy, copy_busy, busy = union(kernels.start, kernels.duration), union(copies.start, copies.duration), \
        union(starts, durations)
    exposed = busy - kernel_busy  # copying while no kernel runs
    summary = build_summary(Measured(
        events={"kernel": len(kernels), "copy": len(copies)}, span=Span(length=span),
        groups=(Group("kernel", "Kernels", ("kernel",), True, intervals=(kernels.start, kernels.duration)),
                Group("copy", "Copies", ("copy",), False, intervals=(copies.start, copies.duration))),
        busy_segments=segments(starts, durations), transfer_sizes=copies.bytes[np.isfinite(copies.bytes)],
        last_event_end=span, busy_union=busy * NS, compute_busy=kernel_busy * NS,
        dma_busy=copy_busy * NS, dma_exposed=exposed * NS))
    share = (lambda t: t / span) if span > 0 else (lambda t: None)
    return summary, {"kernel_busy_fraction": share(kernel_busy), "copy_exposed_fraction": share(exposed)}
