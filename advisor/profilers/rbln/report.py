"""The RBLN kind's report sections: where the device's time goes by command category (table, chart),
transfers with their bytes and bandwidth, the top layers, the sequences
(repeated runs, decode steps), the critical path through the trace's flows, devices and chiplets,
and what the reader could not recognise. Figures come from the trace's breakdowns and the rbln pack's
metrics; labels and choices from data/report.yaml, which also places the shared trace blocks (utilisation
over time, idle gaps: advisor/report/trace_layout.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.core.trace import Breakdown, TraceSummary
from advisor.profilers.rbln import KIND
from advisor.profilers.rbln.slices import categories
from advisor.report.document import Bullets, Chart, Paragraph, Section, Table, code, escape
from advisor.report.trace_blocks import breakdown_table
from advisor.report.view import View

CHART_ROWS = 12  # bars in a chart; the table beside it has them all


def _share(part: float | None, whole: float | None) -> str:
    return fmt.percent(part / whole if part is not None and whole else None)


def _bar_chart(name: str, title: str, b: Breakdown, column: str, xlabel: str, alt: str) -> Chart | None:
    """Horizontal bars of one fraction column (largest first), for the rows that have it."""
    i = b.column(column)
    rows = [(key, v) for key, values in b.rows if (v := values[i]) is not None][:CHART_ROWS]
    if not rows:
        return None
    labels = [key if len(key) <= 48 else key[:47] + "…" for key, _ in rows]
    return Chart(name, title, {"kind": "hbar", "labels": labels, "values": [100 * v for _, v in rows],
                               "texts": [fmt.percent(v) for _, v in rows], "xlabel": xlabel}, alt=alt)


# --- TL;DR and setup ------------------------------------------------------------------------------


def tldr(analysis: Analysis) -> list[tuple[int, str]]:
    """The device's busy share with the categories behind it, the top layer, and the straggler."""
    view = View(analysis)
    span = view.raw("device_span")
    candidates: list[tuple[int, str]] = []
    if span:
        parts = [f"{label} {_share(view.raw(name), span)}"
                 for name, label in KIND.data("report.yaml")["tldr_categories"] if view.raw(name) is not None]
        candidates.append((1, f"**Device busy {_share(view.raw('device_busy'), span)} of its "
                              f"{fmt.seconds(span)} span**{_unit_mean(view, span)}"
                              + (f" ({', '.join(parts)})" if parts else "")
                              + "; profiled runs are slower than unprofiled ones, so read the shares."))
    top = _top_layer(analysis.trace.breakdown("layers") if analysis.trace else None)
    if top:
        candidates.append((2, top))
    straggler = _straggler_sentence(analysis)
    if straggler:
        candidates.append((2, straggler))
    return candidates


def _unit_mean(view: View, span: float) -> str:
    """With several devices or chiplets, the device's busy share (their union) and the mean one's differ:
    name the mean as what it is, the base of the category shares that follow."""
    unit_busy, busy = view.raw("mean_unit_busy"), view.raw("device_busy")
    if unit_busy is None or busy is None or abs(unit_busy - busy) <= 1e-12 * span:
        return ""
    unit = "chiplet" if view.raw("chiplet_count") else "device"
    return f" (at least one {unit} running); the mean {unit} is busy {_share(unit_busy, span)}"


def _top_layer(layers: Breakdown | None) -> str:
    """The layer with the most Neural Engine time (the Layers table ranks by device time, so its first row
    can be a DMA-only layer); none when no layer has measurable Neural Engine time: a 0 % layer is not top."""
    if not layers or not layers.rows:
        return ""
    share, time = layers.column("share"), layers.column("ne_time")
    key, values = max(layers.rows, key=lambda r: r[1][share] or 0.0)
    if not values[share]:
        return ""
    ratio = values[layers.column("dma_ratio")]
    dma = f", DMA time {fmt.ratio(ratio, '×')} its Neural Engine time" if ratio else ""  # none for no DMA
    return (f"**Top layer {code(key)}: {fmt.percent(values[share])} of Neural Engine time** "
            f"({fmt.seconds(values[time])}{dma}).")


def _straggler_sentence(analysis: Analysis) -> str:
    devices = analysis.trace.breakdown("devices") if analysis.trace else None
    if not devices or len(devices.rows) < 2:
        return ""
    i = devices.column("relative")
    key, values = max(devices.rows, key=lambda r: r[1][i] or 0.0)
    if values[i] is None:
        return ""
    return (f"**Busiest: {escape(key)}**, {fmt.ratio(values[i], '×')} the mean busy time of the "
            f"{len(devices.rows)} rows of the Devices and chiplets table.")


def setup_rows(analysis: Analysis) -> list[tuple[str, str]]:
    info = analysis.info
    rows = [(label, escape(info[key])) for key, label in KIND.data("report.yaml")["setup"]
            if info.get(key) not in (None, "", "0")]
    t = analysis.trace
    if t is not None:
        tracks = sum(len(e.rows) for e in t.engines)
        ne, dma = t.events.get("compute", 0), t.events.get("dma", 0)
        rows.append(("Trace", f"{ne:,} Neural Engine and {dma:,} DMA commands on {tracks:,} "
                              f"tracks; device span {fmt.seconds(t.span)}"))
    rows.append(("Timing", escape(KIND.data("report.yaml")["profiled_note"])))
    return rows


# --- utilisation ------------------------------------------------------------------------------------


def _overlap_bullets(view: View) -> tuple[str, ...]:
    span, total = view.raw("device_span"), view.raw("total_time")
    items = []
    pairs = (("ne_only_time", "only the Neural Engine runs (no Neural or Task DMA)"),
             ("dma_only_time", "only DMA runs (the Neural Engine waits or has nothing to do)"),
             ("ne_dma_overlap_time", "the Neural Engine and DMA overlap"),
             ("ne_starved_time", "the Neural Engine is idle while Task DMA or External HDMA transfers run"),
             ("ne_idle_under_neural_dma_time", "the Neural Engine is idle while only Neural DMA runs (no Task DMA or "
              "External HDMA)"),
             ("device_idle_time", "no device command runs on any device or chiplet (the device is idle)"))
    for name, what in pairs:
        if view.raw(name) is not None:
            items.append(f"{view.show(name)} ({_share(view.raw(name), span)} of the span): {what}.")
    unit_idle, idle = view.raw("mean_unit_idle_time"), view.raw("device_idle_time")
    if unit_idle is not None and idle is not None and span and abs(unit_idle - idle) > 1e-12 * span:
        items.append(f"{view.show('mean_unit_idle_time')} ({_share(unit_idle, span)} of the span): the mean device "
                     "or chiplet is idle, waits while another one runs included; not device idle time.")
    if view.raw("host_exposed_time") is not None:
        items.append(
            f"Host work the device does not overlap: {view.show('host_exposed_time')} "
            f"({_share(view.raw('host_exposed_time'), total)} of the traced time) — "
            f"{view.show('host_in_sequence_time')} inside a sequence (the device waits on a host operation mid-run), "
            f"{view.show('host_between_sequences_time')} between sequences (dispatch).")
    return tuple(items)


def _categories_section(t: TraceSummary, view: View) -> Section | None:
    b = t.breakdown("categories")
    if b is None:
        return None
    blocks: list[Any] = [Paragraph(
        "Busy time per command category: the union of its commands' intervals (overlapping commands counted "
        "once), averaged over the devices" + (" and chiplets" if view.raw("chiplet_count") else "") + "; the share "
        f"is of the device span ({fmt.seconds(t.span)}, first to last device command), Host's of the whole trace. "
        "Concurrency is summed command time over busy time (above 1: commands of the category overlap)."),
        breakdown_table(b, ("busy", "share", "commands", "concurrency"))]
    chart = _bar_chart("categories", "Busy share of the device span per command category", b, "share",
                       "busy (% of the device span)", "Busy share per RBLN command category")
    if chart:
        blocks.append(chart)
    overlap = _overlap_bullets(view)
    if overlap:
        blocks += [Paragraph("Over the device span:"), Bullets(overlap)]
    if any(e.engine == "device_workload" for e in t.engines):
        blocks.append(Paragraph("Device Workload is a container (one slice per runtime call: prefill, decoder, "
                                "sampler), not device work: it is shown, and left out of device busy and idle time."))
    unknown = [e for e in t.engines if not e.engine]
    if unknown:
        names = ", ".join(code(r) for e in unknown for r in e.rows)
        blocks.append(Paragraph(f"Tracks no category pattern recognises ({names}) are shown as `other` and left out "
                                "of device time; the patterns are in advisor/profilers/rbln/data/tracks.yaml."))
    return Section("Command categories", tuple(blocks), "categories")


# --- transfers --------------------------------------------------------------------------------------


def _transfers_section(t: TraceSummary, view: View) -> Section | None:
    b = t.breakdown("categories")
    if b is None:
        return None
    wanted = {c.title for c in categories() if c.transfer}
    rows = [(key, values) for key, values in b.rows if key in wanted]
    if not rows:
        return None
    cols = [b.column(c) for c in ("bytes", "busy", "bandwidth", "commands")]
    table = Table(("Category", "Bytes moved", "Busy", "Achieved bandwidth", "Commands"), tuple(
        (escape(key), *(fmt.value(values[i], b.columns[i].unit) for i in cols)) for key, values in rows),
        align=("left", "right", "right", "right", "right"))
    blocks: list[Any] = [Paragraph(
        "Bytes are the sums of the `transfer` entries of each command's `Slice Arguments`; bandwidth is bytes "
        "over busy time (unavailable where the trace carries no byte counts)."), table]
    barrier, tail = view.raw("first_command_barrier_time"), view.raw("output_tail_time")
    total = view.raw("sequence_time_total")
    if barrier is not None or tail is not None:
        blocks.append(Paragraph(
            f"First-command barrier: the Neural Engine's first command waits {view.show('first_command_barrier_time')} "
            f"in all for the External HDMA upload before it ({_share(barrier, total)} of the sequences' time); "
            f"output tail: {view.show('output_tail_time')} of External HDMA after the last Neural Engine command "
            f"({_share(tail, total)})."))
    return Section("Transfers", tuple(blocks), "transfers")


# --- layers, sequences, critical path, devices, gaps, data quality -----------------------------------


def _layers_section(t: TraceSummary, view: View) -> Section | None:
    b = t.breakdown("layers")
    if b is None or not b.rows:
        return None
    limit = int(KIND.data("names.yaml")["top_layers"])
    total = b.total_rows or len(b.rows)
    shown = f"the top {min(limit, total)} of {total:,}" if total > limit else "all"
    blocks: list[Any] = [Paragraph(
        f"Layers from the command names (`{{sequence}}_{{layer}}_{{command}}`; fused groups `fused(a+b)` kept whole), "
        f"by time, {shown}: NE (Neural Engine) time and DMA time are unions of the layer's commands in each, device "
        "time the union of all of them, the share is of all Neural Engine busy time, and a DMA ÷ NE ratio above "
        f"{fmt.ratio(KIND.data('names.yaml').get('dma_bound_ratio'), '×')} marks a DMA-bound layer."),
        breakdown_table(b, ("ne_time", "dma_time", "time", "share", "dma_ratio", "bytes"), key_as_code=True,
               limit=limit)]
    chart = _bar_chart("layers", "Share of Neural Engine time per layer", b, "share", "% of Neural Engine busy time",
                       "Top layers by Neural Engine time")
    if chart:
        blocks.append(chart)
    if b.note:
        blocks.append(Paragraph(escape(b.note)))
    return Section("Top layers", tuple(blocks), "layers")


def _sequences_section(t: TraceSummary, view: View) -> Section | None:
    b = t.breakdown("sequences")
    count = view.raw("sequence_count")
    if b is None or not count or count < 2:
        return None
    blocks: list[Any] = [Paragraph(
        f"{fmt.count(count)} sequences (repeated runs or decode steps, from the names' sequence index): span mean "
        f"{view.show('sequence_span_mean')}, median {view.show('sequence_span_p50')}, p95 "
        f"{view.show('sequence_span_p95')}, max {view.show('sequence_span_max')}; coefficient of variation "
        f"{view.show('sequence_span_cv')}. The first one includes warm-up ({view.show('warmup_span')}).")]
    i = b.column("span")
    spans = [v for _, values in b.rows if (v := values[i]) is not None]
    if len(spans) >= 2:
        scale, unit = fmt.axis("s", spans)
        blocks.append(Chart("sequences", "Span of each sequence", {
            "kind": "line", "values": [v / scale for v in spans], "xlabel": "sequence (in order)",
            "ylabel": f"span ({unit})"}, alt="Span per sequence"))
    slowest = sorted(b.rows, key=lambda r: -(r[1][i] or 0.0))[:5]
    blocks.append(replace(breakdown_table(replace(b, rows=tuple(slowest))), caption="The slowest sequences"))
    return Section("Sequences", tuple(blocks), "sequences")


def _critical_path_section(t: TraceSummary, view: View) -> Section | None:
    b = t.breakdown("critical_path")
    if b is None or not b.rows:
        return None
    return Section("Critical path", (Paragraph(
        f"The longest chain of dependent commands, walked back from the last command through the trace's flows "
        f"and each track's order: {view.show('critical_path_time')} of commands and "
        f"{view.show('critical_path_wait')} of waiting between them over {view.show('critical_path_nodes')} "
        "commands. It is a **lower bound**: Neural DMA dependencies (the Task Manager's) and the first-command "
        "barrier are not drawn as flows, so the real chain can only be longer." + _undrawn(view)), breakdown_table(b)),
        "critical-path")


def _undrawn(view: View) -> str:
    """When waiting dominates the path, the drawn flows explain little of the span: say so."""
    wait, time = view.raw("critical_path_wait"), view.raw("critical_path_time")
    if wait is None or time is None or wait <= time:
        return ""
    return (f" Here waiting ({_share(wait, wait + time)} of the path) outweighs the commands on it: the drawn "
            "dependencies explain little of the span, and what the commands wait on is not in the trace's flows.")


def _devices_section(t: TraceSummary, view: View) -> Section | None:
    b = t.breakdown("devices")
    if b is None or len(b.rows) < 2:
        return None
    blocks: list[Any] = [Paragraph(
        "Busy time per device (and chiplet), with each one's busy time over the mean: the slowest sets the pace "
        "of every synchronisation."), breakdown_table(b)]
    sentences = []
    if view.raw("device_imbalance") is not None and (view.raw("device_count") or 0) >= 2:
        sentences.append(f"device imbalance {view.show('device_imbalance')} (max ÷ mean busy)")
    if view.raw("chiplet_imbalance") is not None:
        sentences.append(f"chiplet imbalance {view.show('chiplet_imbalance')}")
    if view.raw("sync_wait_skew") is not None:
        sentences.append(f"Device Sync waits differ by up to {view.show('sync_wait_skew')} at one sync point")
    if sentences:
        blocks.append(Paragraph("; ".join(sentences).capitalize() + "."))
    return Section("Devices and chiplets", tuple(blocks), "devices")


def _ranks_section(analysis: Analysis) -> Section | None:
    """Ranks compared by their device spans: each trace is on its own device clock."""
    if not analysis.entries:
        return None
    title = next(c["title"] for c in KIND.data("report.yaml")["overview"]["columns"] if "device_span" in c["metrics"])
    spans = [(e.name, v) for e in analysis.entries if (v := e.column(title)) is not None]
    text = ("Each rank's trace is on its own device clock, so ranks are compared by durations (their spans and busy "
            "times), never by timestamps; to line ranks up in time, merge the PyTorch chrome traces (host clock) "
            "instead.")
    if len(spans) >= 2:
        mean = sum(v for _, v in spans) / len(spans)
        name, longest = max(spans, key=lambda item: item[1])
        text += (f" Rank imbalance: {fmt.ratio(longest / mean, '×')} (longest device span ÷ mean over "
                 f"{len(spans)} ranks); the straggler is **{escape(name)}** ({fmt.seconds(longest)} against a mean of "
                 f"{fmt.seconds(mean)}). Every rank waits for the straggler at each collective, so its excess is time "
                 "the other ranks lose; the rank-straggler findings measure it against the others' median and "
                 "name where it comes from.")
    return Section("Ranks and clocks", (Paragraph(text),), "ranks")


def _quality_section(analysis: Analysis, view: View) -> Section:
    rows = [(label, view.show(name)) for name, label in (
        ("unmatched_slices", "Slices that began and never ended, or ended without a beginning (left out)"),
        ("dropped_packets", "Packets dropped (interned data on a sequence never cleared)"),
        ("unparsed_name_share", "Commands whose name does not follow the naming convention"),
        ("unknown_category_share", "Command time on tracks of no known category"),
        ("trace_truncated", "File ends inside a packet (1 = yes)")) if name in analysis.metrics]
    blocks: list[Any] = [Paragraph(escape(KIND.data("report.yaml")["profiled_note"]))]
    if rows:
        blocks.append(Table(("What the reader could not use", "Value"), tuple(rows), align=("left", "right")))
    blocks.append(Paragraph("The reader's own notes are under Data notes below." if analysis.notes else
                            "The reader recognised every packet, track and name it needed."))
    return Section("Data quality", tuple(blocks), "quality")


PLACES = ("utilisation", "memory", "trace")  # where sections() puts its sections (kinds.contract.PLACES)


def sections(analysis: Analysis) -> dict[str, list[Section]]:
    t = analysis.trace
    if t is None:
        return {}
    view = View(analysis)
    utilisation = [_categories_section(t, view)]
    trace = [_layers_section(t, view), _sequences_section(t, view), _critical_path_section(t, view),
             _devices_section(t, view), _ranks_section(analysis),
             _quality_section(analysis, view)]
    return {"utilisation": [s for s in utilisation if s], "memory": [s for s in (_transfers_section(t, view),) if s],
            "trace": [s for s in trace if s]}
