"""Event-derived analysis of a PyTorch-profiler (Kineto) trace: what HTA computes (temporal, idle-time and
kernel breakdowns, communication/computation overlap, launch statistics, queue lengths), over the analysed
window (window.py), at the trace's resolution, in seconds, bytes, counts and fractions of the window. numpy
throughout: traces reach millions of events; Python loops run over distinct names, classes and streams only.
A trace without device events (CPU-only) has its device metrics unavailable (None), never 0."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from advisor.core.events import NS, EventTrace
from advisor.core.model import Hardware
from advisor.core.trace import TraceSummary
from advisor.metrics.intervals import segments, usable
from advisor.metrics.trace_summary import GapRule, Group, Measured, Span, build_summary
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.breakdowns import idle_breakdown, kernel_classes, streams, top_kernels
from advisor.profilers.torch.classes import Knowledge, knowledge
from advisor.profilers.torch.comm import collectives, masks, memory_metrics, overlap_metrics
from advisor.profilers.torch.device import Device, build
from advisor.profilers.torch.host import (
    blocking_stack,
    dataloader_metrics,
    loader_segments,
    sync_metrics,
    sync_segments,
)
from advisor.profilers.torch.idle import idle_split, work_segments
from advisor.profilers.torch.launches import blocking_calls, launch_metrics, link, queue_lengths, runtime
from advisor.profilers.torch.operators import OPERATOR_METRICS, operator_breakdowns, operator_metrics, tie
from advisor.profilers.torch.owners import host_pace, loader_free_steps, owned_idle
from advisor.profilers.torch.pace import pace_breakdown
from advisor.profilers.torch.window import Window, share, step_metrics, steps_breakdown, window

ENGINES = (("compute", "Compute", True), ("communication", "Communication", False),
           ("memory", "Memory ops", False))  # the report's engines: key, title, counted as compute
# Metrics only a device can give: None on a CPU-only trace
DEVICE_METRICS = (
    "device_busy", "device_idle", "device_busy_fraction", "device_idle_fraction", "compute_time", "compute_fraction",
    "comm_time", "comm_fraction", "comm_exposed", "comm_exposed_fraction", "comm_overlap_fraction", "memory_op_time",
    "memory_op_fraction", "memory_op_exposed", "memory_op_exposed_fraction", "memcpy_htod_bytes", "memcpy_dtoh_bytes",
    "memcpy_dtod_bytes", "pageable_copy_count", "pageable_copy_time", "pageable_copy_fraction", "idle_host_wait",
    "idle_kernel_wait", "idle_other", "idle_host_wait_fraction", "idle_kernel_wait_fraction", "idle_other_fraction",
    "kernel_count", "kernel_time", "kernel_time_median", "launch_count", "launch_time_total", "launch_time_mean",
    "blocking_launch_count", "launch_delay_median", "short_kernel_count", "short_kernel_fraction", "queue_length_max",
    "queue_length_mean", "sync_count", "sync_time", "sync_fraction", "sync_per_step", "dataloader_idle_fraction",
    "dataloader_idle", "sync_idle", "sync_idle_fraction", "idle_host_wait_other", "idle_host_wait_other_fraction",
    "occupancy_mean", "low_occupancy_time_fraction", "launch_lead_median", "launch_time_median", "launch_idle",
    "launch_idle_fraction", "launch_call_idle", "launch_call_idle_fraction", "cpu_op_idle", "cpu_op_idle_fraction",
    "cpu_op_top_idle", "untraced_host_idle", "untraced_host_idle_fraction", *OPERATOR_METRICS)



def _counts(trace: EventTrace) -> tuple[dict[str, int], dict[str, int]]:
    """Usable and unusable events per table, plus what the reader skipped before the tables (trace.extra)."""
    import numpy as np

    events, skipped = {}, {}
    for key, table in trace.tables.items():
        start, _, _ = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
        events[key] = len(start)
        skipped[key] = len(table) - len(start)
    for key, n in dict(trace.extra.get("skipped") or {}).items():
        skipped[str(key)] = skipped.get(str(key), 0) + int(n)
    return events, {k: n for k, n in skipped.items() if n}


def _kernel_metrics(dev: Device, know: Knowledge, kernels: Any, comm: Any,
                    sms: float | None) -> dict[str, float | None]:
    """Kernel count, summed and median time; occupancy weighted by kernel time where the trace gives it. A
    communication kernel's occupancy (NCCL: a few blocks by design) and a 0 (what Kineto writes when CUPTI gave
    no estimate, seen on large CUTLASS GEMMs) say nothing about occupancy: they are left out."""
    import numpy as np

    clipped = dev.clipped_duration()[kernels]
    duration = (dev.end - dev.start)[kernels]
    occupancy = dev.occupancy[kernels]
    known = np.isfinite(occupancy) & (occupancy > 0) & ~comm[kernels]
    if sms:  # a persistent kernel: one block on each SM (to a GPC's rounding), low occupancy by design
        blocks = dev.blocks[kernels]
        known &= ~((blocks <= sms) & (blocks >= 0.9 * sms))
    weight = float(clipped[known].sum())
    low = known & (occupancy < know.low_occupancy)
    return {"kernel_count": float(kernels.sum()), "kernel_time": float(clipped.sum()) * NS,
            "kernel_time_median": float(np.median(duration)) * NS if len(duration) else None,
            "occupancy_mean": float((occupancy[known] * clipped[known]).sum()) / weight if weight > 0 else None,
            "low_occupancy_time_fraction": float(clipped[low].sum()) / weight if weight > 0 else None}


def _lead(dev: Device, links: Any, kernels: Any) -> float | None:
    """The host's lead over the device (s): the median time a kernel waits queued after its launch call returned
    (from the call's end, so a long launch call is no lead). Kernels in the window queued by a launch call."""
    import numpy as np

    rows = kernels & links.by_launch
    if not rows.any():
        return None
    waited = dev.start[rows] - (links.queued[rows] + links.call_duration[rows])
    return float(np.median(np.maximum(waited, 0.0))) * NS


def _meta_number(trace: EventTrace, key: str) -> float | None:
    value = trace.metadata.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _meta(trace: EventTrace) -> dict[str, float | None]:
    return {"world_size": _meta_number(trace, T.META_WORLD_SIZE), "rank": _meta_number(trace, T.META_RANK)}


def _warnings(trace: EventTrace, w: Window) -> tuple[str, ...]:
    found = list(trace.warnings)  # the reader's caveats: CPU-only, sampled, no distributedInfo
    found.extend(f"{note}." for note in w.left_out)  # step marks that are not steps of the window, and why
    if not w.from_steps:
        found.append("No complete profiler step: the analysed window is the span of the trace's events, warm-up "
                     "included; step metrics are unavailable." if w.left_out else
                     "No ProfilerStep#N annotations: the analysed window is the trace's whole span, warm-up "
                     "included; step metrics are unavailable.")
    return tuple(dict.fromkeys(found))


def summarize(trace: EventTrace, total_time: float | None = None,
              hardware: Hardware | None = None) -> tuple[TraceSummary, dict[str, float | None]]:
    """The trace summary for the report, and the event-derived metrics (machine units) for the rules; `hardware`
    (the device's peaks, data/hardware.yaml or --hardware) bounds each operator by its roofline (operators.py)."""
    know = knowledge()
    w = window(trace, know)
    events, skipped = _counts(trace)
    m: dict[str, float | None] = {"total_time": w.length * NS, "trace_span": (w.span_end - w.span_start) * NS}
    m.update(step_metrics(w))
    m.update(_meta(trace))
    m["event_coverage"] = trace.extra.get("event_coverage")
    loader = loader_segments(trace, know, w.start, w.end)
    m.update(dataloader_metrics(loader, w.length))
    dev = build(trace, know, w.start, w.end)
    measured = Measured(events=events, span=Span(w.length, w.start), warnings=_warnings(trace, w), skipped=skipped,
                        last_event_end=w.span_end)
    if not len(dev):
        return _host_only(trace, know, w, measured, m)
    summary = _device(trace, know, w, dev, loader, hardware, measured, m)
    if trace.extra.get("filtered"):  # a sampled trace: its gaps and unions are not the run's; kernel shares still are
        m.update(dict.fromkeys(DEVICE_METRICS))
    return summary, m


def _host_only(trace: EventTrace, know: Knowledge, w: Window, measured: Measured,
               m: dict[str, float | None]) -> tuple[TraceSummary, dict[str, float | None]]:
    """A trace without device events (CPU-only): its device metrics unavailable, its steps still measured."""
    import numpy as np

    m.update(dict.fromkeys(DEVICE_METRICS))
    m.update(loader_free_steps(w, None))
    m.update(collectives(trace, know, None, None, w.start, w.end))
    steps = (steps_breakdown(w, None, np.empty(0)),) if w.from_steps else ()
    return build_summary(replace(measured, breakdowns=steps)), m


def _device(trace: EventTrace, know: Knowledge, w: Window, dev: Device, loader: Any, hardware: Hardware | None,
            measured: Measured, m: dict[str, float | None]) -> TraceSummary:
    """The device's figures into `m`, and the summary the report draws."""
    w0, w1, length = w.start, w.end, w.length
    work = ~dev.wait
    compute, comm, memory = masks(dev, know)
    busy = dev.union(work)
    m.update({"device_busy": busy * NS, "device_idle": (length - busy) * NS,
              "device_busy_fraction": share(busy, length), "device_idle_fraction": share(length - busy, length)})
    m.update(overlap_metrics(dev, compute, comm, length))
    m.update(memory_metrics(dev, compute, comm, memory, length))
    m.update(collectives(trace, know, dev, comm, w0, w1))

    # idle time by what ended each gap, from the queuing calls the device events are linked to
    rt = runtime(trace, know)
    links = link(dev, rt)
    seg_start, seg_end = work_segments(dev.start[work], dev.end[work])
    idle = idle_split(seg_start, seg_end, dev.start[work], links.queued[work], w0, w1, know.kernel_wait_threshold,
                      (links.queued + links.call_duration)[work])
    for key, t in zip(("idle_host_wait", "idle_kernel_wait", "idle_other"), idle.time, strict=True):
        m[key], m[f"{key}_fraction"] = t * NS, share(t, length)

    kernels = dev.kernels() & dev.inside & work
    m.update(_kernel_metrics(dev, know, kernels, comm, _meta_number(trace, T.META_SM_COUNT)))
    syncs = sync_segments(trace, know, w0, w1)
    m.update(launch_metrics(dev, rt, links, blocking_calls(dev, rt, links, syncs), w0, w1))
    longest, mean = queue_lengths(dev, links, w0, w1)
    m["queue_length_max"] = float(longest.max()) if len(longest) else None
    m["queue_length_mean"] = float(mean.max()) if len(mean) else None
    m["launch_lead_median"] = _lead(dev, links, kernels)
    found = tie(trace, dev, rt, links, kernels)  # each kernel's operator, and the operators' work (issue 35)
    m.update(operator_metrics(found, hardware))
    m.update(sync_metrics(syncs, length, len(w.numbers)))
    pace = host_pace(idle, loader, syncs, w, trace)  # the host's own pace, by what fills it (pace.py)
    m.update(owned_idle(idle, loader, syncs, w, trace, pace))
    clipped_work = (dev.clipped.start[work], dev.clipped_duration()[work])

    # the summary the report draws
    in_work = dev.inside & work
    kernel_starts = dev.start[dev.kernels() & work]  # in start order already
    tables = (steps_breakdown(w, segments(*clipped_work), kernel_starts) if w.from_steps else None,
              kernel_classes(dev, know, in_work), top_kernels(dev, know, in_work),
              idle_breakdown(idle.time, length), pace_breakdown(pace, length), streams(dev, work, longest),
              *operator_breakdowns(found, hardware))
    return build_summary(replace(
        measured, breakdowns=tables, facts=_facts(trace, know, pace, w0, w1), busy_union=m["device_busy"],
        dma_busy=m["memory_op_time"], compute_busy=m["compute_time"], dma_exposed=m["memory_op_exposed"],
        **_drawn(dev, {"compute": compute, "communication": comm, "memory": memory}, clipped_work, w0)))


def _drawn(dev: Device, groups: dict[str, Any], clipped_work: tuple[Any, Any], w0: float) -> dict[str, Any]:
    """What the summary draws of the device: the engines (busy: the union of their events), their rows over the
    window (clipped to it, from its start), the merged work for the idle gaps and the copies' sizes."""
    import numpy as np

    engines, rows = [], {}
    for key, title, is_compute in ENGINES:
        inside = groups[key] & dev.inside
        if inside.any():
            used = tuple(dev.tracks[i] for i in np.unique(dev.track[inside]).tolist())
            engines.append(Group(key, title, used, is_compute, busy=dev.union(groups[key]) * NS))
            rows[title] = (dev.clipped.start[inside] - w0, dev.clipped_duration()[inside])
    copies = groups["memory"] & dev.inside & np.isfinite(dev.bytes)
    return {"groups": engines, "timeline": rows, "busy_segments": segments(clipped_work[0] - w0, clipped_work[1]),
            "gap_rule": GapRule(lasting_only=True, whole_span_when_idle=True), "transfer_sizes": dev.bytes[copies]}


def _facts(trace: EventTrace, know: Any, pace: Any, w0: float, w1: float) -> dict[str, str]:
    """What the findings name in words (rules/torch/terms.yaml): the operator stack of the longest blocking copy,
    and the CPU work that fills most of the host's own pace, with the annotation it runs in."""
    facts = {"blocking_copy_stack": blocking_stack(trace, know, w0, w1)}
    if pace is not None and pace.operators:
        name, context, _ = pace.operators[0]
        facts["cpu_op_top"] = f"{name} in {context}" if context else name
    return {k: v for k, v in facts.items() if v}
