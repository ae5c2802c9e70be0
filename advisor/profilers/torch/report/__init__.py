"""The torch kind's report sections: where the analysed window goes per rank (HTA's temporal breakdown, as a
chart), the idle time split by what the device waited for, kernel classes and top
kernels, communication and its overlap with compute, the profiler steps, launches and queues, the host's
synchronisations and data loading, memory operations and ranks of a folder. A trace without device events gets
what it has (operators, annotations, steps, the host's figures). Figures come from the trace's breakdowns and the
torch pack's metrics; labels and wording from data/report.yaml, which also places the shared trace blocks
(utilisation over time, idle gaps: advisor/report/trace_layout.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.core.trace import Breakdown, TraceSummary
from advisor.profilers.torch import KIND
from advisor.profilers.torch.report.idle import idle_section
from advisor.profilers.torch.report.operators import operators_section
from advisor.profilers.torch.tables import DEVICE_TABLES
from advisor.report.document import Chart, Paragraph, Section, Table, escape
from advisor.report.trace_blocks import breakdown_table
from advisor.report.view import View

CHART_ROWS = 12  # bars in a chart; the table beside it has them all
TOP_KERNELS = 15  # rows of the top-kernels table
KERNEL_NAME = 80  # characters of a kernel's name shown (templated CUDA names run to thousands)
STEP_BARS = 24  # up to this many steps, a bar per step; more, a line of durations
# What the trace's tables are called in the setup row and the CPU-only section (tables.py names them).
EVENT_WORDS = (("kernel", "kernel", "kernels"), ("memcpy", "copy", "copies"), ("memset", "set", "sets"),
               ("runtime", "runtime call", "runtime calls"), ("cpu_op", "operator", "operators"),
               ("annotation", "annotation", "annotations"),
               ("gpu_annotation", "device annotation", "device annotations"),
               ("sync", "synchronisation record", "synchronisation records"))


def _has_device(view: View) -> bool:
    """Device figures are unavailable (None), never 0, for a trace without device events."""
    return view.raw("device_busy") is not None


def _rows(view: View, key: str) -> tuple[tuple[str, str], ...]:
    """The report.yaml table `key` (metric, label) for the metrics the analysis has, values with their units."""
    return tuple((escape(label), view.show(name)) for name, label in KIND.data("report.yaml")[key]
                 if name in view.analysis.metrics)


def _table(view: View, key: str, header: str) -> Table | None:
    rows = _rows(view, key)
    return Table((header, "Value"), rows, align=("left", "right")) if rows else None


def _short(name: str) -> str:
    return name if len(name) <= KERNEL_NAME else name[:KERNEL_NAME - 1] + "…"


# --- TL;DR and setup ------------------------------------------------------------------------------


def _filtered(analysis: Analysis, view: View) -> bool:
    """Device events, yet no device figures: the reader found the trace filtered (events.py). Said as such, never
    as "no device events" above a count of them."""
    trace = analysis.trace
    return not _has_device(view) and trace is not None and any(trace.events.get(t) for t in DEVICE_TABLES)


def tldr(analysis: Analysis) -> list[tuple[int, str]]:
    """The device's busy share with what fills it and what the idle time waits for; the steps; the top class.
    Without device events, what the trace has instead."""
    view = View(analysis)
    candidates: list[tuple[int, str]] = []
    if _filtered(analysis, view):
        candidates.append((1, f"**A filtered trace: {view.show('event_coverage')} of the events**: "
                              f"{escape(KIND.data('report.yaml')['filtered'])}"))
    elif not _has_device(view):
        candidates.append((1, f"**No device events**: {escape(KIND.data('report.yaml')['cpu_only'])}"))
    else:
        parts = [f"{label} {view.show(name)}" for i, (name, label) in enumerate(KIND.data("report.yaml")["tldr_parts"])
                 if view.raw(name) is not None and (i == 0 or view.raw(name))]  # a part that is 0 says nothing
        idle = [f"{label.lower()} {view.show(share)}" for _, share, label, _ in KIND.data("report.yaml")["idle_parts"]
                if view.raw(share) is not None]
        candidates.append((1, f"**Device busy {view.show('device_busy_fraction')} of the {view.show('total_time')} "
                              "window**" + (f" ({', '.join(parts)})" if parts else "")
                              + (f"; idle {view.show('device_idle_fraction')}: {', '.join(idle)}." if idle else ".")))
    thin = next((f for f in analysis.findings if f.name == "too-little-evidence"), None)
    if thin is not None:  # the verdict names no cause: say why first
        complete = view.raw("step_count") or 0
        candidates.insert(0, (0, f"**Too little to judge**: a {view.show('total_time')} window with "
                                 f"{view.show('kernel_count')} kernels and {fmt.count(complete)} complete profiler "
                                 f"step{'' if complete == 1 else 's'}, so no finding is a cause (`{thin.name}`)."))
    steps = view.raw("step_count")
    if steps:
        ratio = view.raw("first_step_ratio")
        first = view.show("first_step_time")
        warm = f"; the first {first}, {fmt.ratio(ratio, '×')} the others' median" if ratio else ""
        candidates.append((2, f"**{_steps(steps)}, median {view.show('step_time_median')}**{warm}."))
    top = _top_class(analysis.trace.breakdown("kernel_classes") if analysis.trace else None)
    if top:
        candidates.append((2, top))
    return candidates


def _steps(count: float) -> str:
    return f"{fmt.count(count)} profiler step{'' if count == 1 else 's'}"


def _top_class(classes: Breakdown | None) -> str:
    if not classes or not classes.rows:
        return ""
    share, time = classes.column("share"), classes.column("time")
    key, values = max(classes.rows, key=lambda r: r[1][share] or 0.0)
    if not values[share]:
        return ""
    return (f"**Top kernel class: {escape(key)}, {fmt.percent(values[share])} of kernel time** "
            f"({fmt.seconds(values[time])}).")


def setup_rows(analysis: Analysis) -> list[tuple[str, str]]:
    info, view = analysis.info, View(analysis)
    rows = [(label, escape(info[key])) for key, label in KIND.data("report.yaml")["setup"]
            if info.get(key) not in (None, "")]
    rank, world = view.raw("rank"), view.raw("world_size")
    if rank is not None or world is not None:
        rows.append(("Rank", f"{fmt.count(rank) if rank is not None else 'unknown'} of a world of "
                             f"{fmt.count(world) if world is not None else 'unknown size'}"))
    rows.append(("Analysed window", _window(analysis, view)))
    t = analysis.trace
    if t is not None:
        counts = [fmt.plural(t.events[key], one, many) for key, one, many in EVENT_WORDS if t.events.get(key)]
        skipped = sum(t.skipped.values())
        rows.append(("Events", (", ".join(counts) or "no events") + (f"; {skipped:,} events without a usable time "
                                                                    "left out" if skipped else "")))
    return rows


def _window(analysis: Analysis, view: View) -> str:
    """Which steps the window covers and its length, against the trace's span."""
    steps = analysis.trace.breakdown("steps") if analysis.trace else None
    span = f"{view.show('total_time')} of a {view.show('trace_span')} trace"
    if steps and steps.rows:
        first, last = _step(steps.rows[0][0]), _step(steps.rows[-1][0])
        which = escape(first) if first == last else f"{escape(first)} to {escape(last)}"
        text = f"{which} ({_steps(len(steps.rows))}): {span}"
    elif view.raw("step_count"):
        text = f"{_steps(view.raw('step_count') or 0)}: {span}"
    elif view.raw("partial_step_count"):
        text = f"the span of the trace's events (no complete ProfilerStep#N): {span}"
    else:
        text = f"the whole trace (no ProfilerStep#N marks): {span}"
    left = view.raw("partial_step_count")
    if left:  # which and why: the data notes
        text += f"; {fmt.count(left)} step mark{'' if left == 1 else 's'} left out, partial or outside the events"
    return f"{text}. {escape(KIND.data('report.yaml')['window_note'])}"


def _step(key: str) -> str:
    """A step's name: the annotation's (ProfilerStep#4) when its key is the bare number."""
    return f"ProfilerStep#{key}" if key.isdigit() else key


def hardware_rows(analysis: Analysis) -> list[tuple[str, str]]:
    """The device's own properties where the trace states them (deviceProperties)."""
    view = View(analysis)
    return [(label, view.show(name)) for name, label in (("sm_count", "Multiprocessors"),
                                                         ("device_memory", "Device memory"))
            if view.raw(name) is not None]


# --- utilisation ------------------------------------------------------------------------------------


def _temporal_section(analysis: Analysis, view: View) -> Section | None:
    """HTA's temporal breakdown: compute, communication or memory only, idle, as shares of each rank's window."""
    parts = KIND.data("report.yaml")["temporal"]
    labels, series = _temporal_series(analysis, view, parts)
    if not labels or all(v is None for s in series for v in s):  # nothing measured (filtered ranks): no empty chart
        return None
    rows = tuple((escape(label), *(fmt.percent(s[i]) for s in series)) for i, label in enumerate(labels))
    headers = ("Rank" if analysis.entries else "Trace", *(escape(label) for _, label in parts))
    chart = Chart("temporal", "Where the window goes, per rank", {
        "kind": "grouped_hbar", "labels": list(labels), "xlabel": "% of the analysed window",
        "series": [{"name": label, "values": [100 * v if v is not None else None for v in s]}
                   for (_, label), s in zip(parts, series, strict=True)]},
        alt="Compute, communication or memory only, and idle shares of the window per rank")
    return Section("Temporal breakdown", (Paragraph(
        "Shares of each rank's analysed window: compute (a kernel that is not communication runs), communication or "
        "memory only (collectives, copies or sets with no compute kernel), idle (nothing runs on the device). The "
        "three add up to the window, as in HTA's temporal breakdown."),
        Table(headers, rows, align=("left", *("right" for _ in parts))), chart), "temporal")


def _temporal_series(analysis: Analysis, view: View,
                     parts: list[list[str]]) -> tuple[list[str], list[list[float | None]]]:
    """Per rank from the overview's columns (a folder), else this trace's own shares."""
    columns = KIND.data("report.yaml")["overview"]["columns"]
    titles = {c["metrics"][0]: c["title"] for c in columns}
    if len(analysis.entries) >= 2 and all(name in titles for name, _ in parts):
        labels = [e.where or e.name for e in analysis.entries]
        return labels, [[e.column(titles[name]) for e in analysis.entries] for name, _ in parts]
    if not _has_device(view):
        return [], []
    return [_this(analysis, view)], [[view.raw(name)] for name, _ in parts]


def _this(analysis: Analysis, view: View) -> str:
    rank = view.raw("rank")
    return f"rank {fmt.count(rank)}" if rank is not None else "this trace"


# --- kernels, communication, steps, launches, host --------------------------------------------------


def _bar_chart(name: str, title: str, b: Breakdown, column: str, xlabel: str, alt: str) -> Chart | None:
    i = b.column(column)
    rows = [(key, v) for key, values in b.rows if (v := values[i]) is not None][:CHART_ROWS]
    if not rows:
        return None
    return Chart(name, title, {"kind": "hbar", "labels": [_short(k)[:48] for k, _ in rows],
                               "values": [100 * v for _, v in rows], "texts": [fmt.percent(v) for _, v in rows],
                               "xlabel": xlabel}, alt=alt)


def _kernels_section(t: TraceSummary) -> Section | None:
    classes, top = t.breakdown("kernel_classes"), t.breakdown("top_kernels")
    if not (classes and classes.rows) and not (top and top.rows):
        return None
    blocks: list[Any] = []
    if classes and classes.rows:
        blocks += [Paragraph(escape(classes.note or "Kernel time by class, from the kernels' names (patterns in "
                                    "advisor/profilers/torch/data/kernels.yaml, first match wins).")),
                   breakdown_table(classes)]
        chart = _bar_chart("kernel-classes", "Share of kernel time per class", classes, "share",
                           "% of summed kernel time", "Kernel time per class")
        if chart:
            blocks.append(chart)
    if top and top.rows:
        shown = replace(top, rows=tuple((_short(k), v) for k, v in top.rows))
        total = top.total_rows or len(top.rows)
        blocks += [Paragraph(f"The kernels with the most summed time, {min(TOP_KERNELS, total)} of {total:,} distinct "
                             f"names (names cut at {KERNEL_NAME} characters). " + escape(top.note)),
                   breakdown_table(shown, key_as_code=True, limit=TOP_KERNELS)]
    return Section("Kernels", tuple(blocks), "kernels")


def _comm_section(view: View) -> Section | None:
    if not _has_device(view) or (not view.raw("comm_time") and not view.raw("collective_count")):
        return None
    exposed, overlap = view.show("comm_exposed_fraction"), view.show("comm_overlap_fraction")
    return Section("Communication and overlap", (Paragraph(
        f"Communication kernels (NCCL, RCCL, HCCL, gloo) run {view.show('comm_time')}; compute overlaps {overlap} of "
        f"that time, and {view.show('comm_exposed')} ({exposed} of the window) runs with no compute kernel: time the "
        "step waits for its collectives. Bytes are the collectives' input messages (record_param_comms)."),
        *(b for b in (_table(view, "comm_rows", "Communication"),) if b)), "communication")


def _steps_section(t: TraceSummary, view: View) -> Section | None:
    b = t.breakdown("steps")
    if b is None or not b.rows:
        return None
    blocks: list[Any] = [Paragraph(
        f"{_steps(len(b.rows))}, complete: median {view.show('step_time_median')}, shortest "
        f"{view.show('step_time_min')}, longest {view.show('step_time_max')}, coefficient of variation "
        f"{view.show('step_time_cv')}; the first takes {view.show('first_step_time')}.")]
    chart = _steps_chart(b)
    if chart:
        blocks.append(chart)
    blocks.append(breakdown_table(replace(b, rows=tuple((_step(k), v) for k, v in b.rows)), limit=50))
    if len(b.rows) > 50:
        blocks.append(Paragraph(f"The first 50 of {len(b.rows):,} steps are listed; the chart has them all."))
    return Section("Profiler steps", tuple(blocks), "steps")


def _steps_chart(b: Breakdown) -> Chart | None:
    """Busy and idle time per step (bars), or each step's duration (a line) when there are many."""
    duration, busy = b.column("duration"), b.column("busy_fraction")
    rows = [(k, d, v[busy]) for k, v in b.rows if (d := v[duration]) is not None]
    if len(rows) < 2:
        return None
    scale, unit = fmt.axis("s", [d for _, d, _ in rows])
    if len(rows) > STEP_BARS:
        return Chart("steps", "Duration of each profiler step", {
            "kind": "line", "values": [d / scale for _, d, _ in rows], "xlabel": "step (in order)",
            "ylabel": f"duration ({unit})"}, alt="Duration per profiler step")
    busy_times = [d * f / scale if f is not None else None for _, d, f in rows]
    idle_times = [d * (1 - f) / scale if f is not None else None for _, d, f in rows]
    return Chart("steps", "Device busy and idle time per profiler step", {
        "kind": "grouped_hbar", "labels": [_step(k) for k, _, _ in rows], "xlabel": f"time ({unit})",
        "series": [{"name": "Device busy", "values": busy_times}, {"name": "Device idle", "values": idle_times}]},
        alt="Device busy and idle time per profiler step")


def _launch_section(t: TraceSummary | None, view: View) -> Section | None:
    table = _table(view, "launch_rows", "Launches and queues")
    if table is None or view.raw("kernel_count") is None:
        return None
    blocks: list[Any] = [Paragraph(
        "A kernel shorter than the launch call that started it finishes before the host can launch the next one: "
        "many of them leave the device waiting on launches. Queue length is the kernels launched and not yet "
        "finished on a stream; a queue near zero means the device runs as fast as the host feeds it."), table]
    streams = t.breakdown("streams") if t else None
    if streams and streams.rows:
        blocks.append(breakdown_table(streams))
    return Section("Launches and queues", tuple(blocks), "launches")


def _host_section(view: View) -> Section | None:
    table = _table(view, "host_rows", "Host")
    if table is None:
        return None
    return Section("Synchronisations and data loading", (Paragraph(
        "Host time in synchronising calls (the runtime's device, stream and event synchronisations, aten::item, "
        "aten::_local_scalar_dense: the host waits for the device; data/kernels.yaml `syncs`) and in the "
        "DataLoader's `__next__` (the step waits for its batch)."), table), "host")


def _memory_section(view: View) -> Section | None:
    table = _table(view, "memory_rows", "Copies and sets")
    if table is None or view.raw("memory_op_time") is None:
        return None
    return Section("Memory operations", (Paragraph(
        f"Copies and sets take {view.show('memory_op_time')} ({view.show('memory_op_fraction')} of the window), "
        f"{view.show('memory_op_exposed')} of it with no kernel running ({view.show('memory_op_exposed_fraction')}). "
        "A copy from pageable (not pinned) host memory blocks the host and cannot overlap compute."), table), "memory")


def _ranks_section(analysis: Analysis) -> Section | None:
    """Ranks compared by durations: each rank's trace is on its own host clock."""
    if not analysis.entries:
        return None
    window = [(e.where or e.name, e.total_time) for e in analysis.entries if e.total_time is not None]
    text = ("Each rank's trace is on its own host clock, so ranks are compared by durations (their windows and "
            "shares), never by timestamps.")
    if len(window) >= 2:
        mean = sum(v for _, v in window) / len(window)
        name, longest = max(window, key=lambda item: item[1])
        text += (f" Window imbalance: {fmt.ratio(longest / mean, '×')} (longest ÷ mean over {len(window)} ranks); the "
                 f"longest is **{escape(name)}** ({fmt.seconds(longest)} against a mean of {fmt.seconds(mean)}). In "
                 "synchronous data parallelism every rank's step takes as long as the slowest one's, so the slow rank "
                 "shows as more compute and less communication than the others (they wait for it in their "
                 "collectives): the straggler findings measure both against the others' median.")
    return Section("Ranks", (Paragraph(text),), "ranks")


def _holdings_section(analysis: Analysis, view: View) -> Section | None:
    """A trace without device events: what it has instead."""
    if _has_device(view):
        return None
    t = analysis.trace
    counts = [(many.capitalize(), f"{t.events[key]:,}") for key, _, many in EVENT_WORDS if t and t.events.get(key)]
    words = KIND.data("report.yaml")
    measured = [(escape(label), view.show(name)) for name, label in (*words["host_rows"], *words["comm_rows"])
                if view.raw(name) is not None]  # what it has: a figure it cannot measure is left out
    rows = tuple(counts) + tuple(measured)
    blocks: list[Any] = [Paragraph(escape(words["filtered" if _filtered(analysis, view) else "cpu_only"]))]
    if rows:
        blocks.append(Table(("What the trace holds", "Value"), rows, align=("left", "right")))
    return Section("What the trace holds", tuple(blocks), "holdings")


PLACES = ("utilisation", "memory", "roofline", "trace")  # where sections() puts them (kinds.contract.PLACES)


def sections(analysis: Analysis) -> dict[str, list[Section]]:
    view = View(analysis)
    t = analysis.trace
    # utilisation over time and the idle gaps follow (report.yaml `blocks`), where the device's figures are measured
    utilisation = [_holdings_section(analysis, view), _temporal_section(analysis, view), idle_section(t, view)]
    trace = [_kernels_section(t) if t else None, _comm_section(view), _steps_section(t, view) if t else None,
             _launch_section(t, view), _host_section(view) if _has_device(view) else None, _ranks_section(analysis)]
    return {"utilisation": [s for s in utilisation if s], "memory": [s for s in (_memory_section(view),) if s],
            "roofline": [s for s in (operators_section(analysis),) if s], "trace": [s for s in trace if s]}
