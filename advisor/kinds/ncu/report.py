"""The Nsight Compute kind's report sections: the kernel and its launch shape in the TL;DR and setup,
speed of light with the issue slots and warp stalls, the occupancy calculation (ncu's block limits
beside advisor's recomputation), the roofline, memory access, and ncu's own rule results beside
advisor's findings. Rows and labels come from data/report.yaml; a figure the profile lacks is shown
as unavailable, and a section none of whose figures exist is left out."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis, Metric
from advisor.kinds.ncu import KIND
from advisor.kinds.ncu.verdicts import DISAGREE, estimate, verdicts
from advisor.report.charts import finite
from advisor.report.document import Chart, Paragraph, Section, Table, code, escape
from advisor.report.view import View

NO_VALUE = "—"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_SIGNATURE_LIMIT = 110  # characters of a kernel signature shown in the setup table
_TEMPLATE_LIMIT = 24  # template argument lists longer than this are shown as <…>


def layout() -> dict[str, Any]:
    return KIND.data("report.yaml")


# --- small helpers --------------------------------------------------------------------------------


def _has(view: View, name: str | None) -> bool:
    return bool(name) and view.raw(name) is not None  # type: ignore[arg-type]


def _any(view: View, names: list[str | None]) -> bool:
    return any(_has(view, n) for n in names)


def _metric(view: View, name: str) -> Metric | None:
    return view.analysis.metrics.get(name)


def _source(view: View, name: str) -> str:
    metric = _metric(view, name)
    if metric is None or metric.value is None:
        return NO_VALUE
    return "ncu" if metric.source == "reported" else "advisor"


def _value_rows(view: View, rows: list[list[str]]) -> tuple[tuple[str, str, str], ...]:
    """(label, value, source) for each row; every row is kept, the missing ones as unavailable."""
    return tuple((escape(label), view.show(name) if _metric(view, name) else fmt.UNAVAILABLE, _source(view, name))
                 for name, label in rows)


def _value_table(view: View, rows: list[list[str]], caption: str = "") -> Table | None:
    """A Metric | Value | Source table, or None when none of its figures exist."""
    if not _any(view, [name for name, _ in rows]):
        return None
    return Table(("Metric", "Value", "Source"), _value_rows(view, rows), align=("left", "right", "left"),
                 caption=caption)


def _shape(analysis: Analysis) -> str:
    """`(224, 1, 1)×(32, 4, 1)` as ncu prints grid × block, or what of it is known."""
    grid, block = analysis.info.get("grid_dims"), analysis.info.get("block_dims")
    if grid and block:
        return f"{escape(grid)}×{escape(block)}"
    view = View(analysis)
    if _has(view, "grid_size") and _has(view, "block_size"):
        return f"{fmt.count(view.raw('grid_size'))} blocks × {fmt.count(view.raw('block_size'))} threads"
    return "launch shape unavailable"


def short_signature(signature: str, limit: int = _SIGNATURE_LIMIT) -> str:
    """A kernel signature readable in a table: long template argument lists folded to `<…>`,
    then cut at `limit` characters. The full signature stays in the raw profile data."""
    out, i = [], 0
    while i < len(signature):
        char = signature[i]
        if char != "<":
            out.append(char)
            i += 1
            continue
        depth, j = 0, i
        for j in range(i, len(signature)):
            depth += {"<": 1, ">": -1}.get(signature[j], 0)
            if depth == 0:
                break
        inner = signature[i + 1:j]
        out.append("<…>" if len(inner) > _TEMPLATE_LIMIT else signature[i:j + 1])
        i = j + 1
    text = " ".join("".join(out).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --- speed of light -------------------------------------------------------------------------------


def _bound(view: View) -> tuple[str, str] | None:
    """(bound, explanation): the speed-of-light finding that fired (report.yaml `bounds`), with the
    two percentages it was decided on."""
    fired = {f.name: f for f in view.analysis.findings}
    for rule, word, clause in layout()["bounds"]:
        finding = fired.get(rule)
        if finding is not None:
            params = {name: fmt.value(p.value, p.unit) for name, p in finding.params.items()}
            return word, (f"compute (SM) {view.show('compute_throughput_percent')}, memory "
                          f"{view.show('memory_throughput_percent')} of peak{clause.format_map(params)}")
    return None


def _dominant_memory_unit(view: View) -> dict[str, Any] | None:
    units = [r for r in layout()["throughput"] if r.get("memory") and _has(view, r["metric"])]
    return max(units, key=lambda r: view.raw(r["metric"]) or 0.0) if units else None


def _speed_of_light(view: View) -> Section | None:
    rows_spec = layout()["throughput"]
    issue_names = [name for name, _ in layout()["issue"]]
    stalls = _stalls(view)
    if not _any(view, [r["metric"] for r in rows_spec]) and not _any(view, issue_names) and not stalls:
        return None
    blocks: list[Any] = []
    bound = _bound(view)
    top = _dominant_memory_unit(view)
    if bound:
        sentence = f"**{bound[0].capitalize()}**: {bound[1]}."
        if top:
            sentence += (f" The busiest memory unit is {escape(top['label'])} at {view.show(top['metric'])} "
                         "of its peak.")
        blocks.append(Paragraph(sentence))
    shown = [r for r in rows_spec if _metric(view, r["metric"]) is not None]
    if _any(view, [r["metric"] for r in rows_spec]):
        rows = tuple((escape(r["label"]) + (" (busiest memory unit)" if top is r else ""), view.show(r["metric"]),
                      _source(view, r["metric"])) for r in shown)
        blocks.append(Table(("Unit", "Throughput (% of peak)", "Source"), rows, align=("left", "right", "left")))
        charted = [r for r in shown if _has(view, r["metric"]) and r["metric"] != "max_throughput_percent"]
        if len(charted) >= 2:
            values = [100 * (view.raw(r["metric"]) or 0.0) for r in charted]
            blocks.append(Chart("speed-of-light", "Throughput as a share of each unit's peak", {
                "kind": "hbar", "labels": [r["label"] for r in charted], "values": values,
                "texts": [view.show(r["metric"]) for r in charted], "xlabel": "% of peak", "xmax": 115,
                "highlight": max(range(len(values)), key=lambda i: values[i])},
                alt="Bar chart of compute and memory throughput as a share of peak"))
    if _any(view, issue_names):
        if _issue_sentence(view):
            blocks.append(Paragraph(_issue_sentence(view)))
        blocks.append(Table(("Issue slots", "Value", "Source"), _value_rows(view, layout()["issue"]),
                            align=("left", "right", "left")))
    if stalls:
        blocks.append(Paragraph(
            "Warp stalls, in cycles per issued instruction (the chart ncu draws under Warp State Statistics), "
            "largest first; the share is of all stall cycles. Stalls matter only where the schedulers fail to "
            "issue every cycle."))
        blocks.append(Table(("Stall reason", "Cycles per issued instruction", "Share of stalls"), tuple(stalls),
                            align=("left", "right", "right")))
    return Section("Speed of light", tuple(blocks), "speed-of-light")


def _issue_sentence(view: View) -> str:
    issued = view.raw("issue_active_per_scheduler")
    parts = []
    if issued:
        parts.append(f"Each scheduler issues {fmt.ratio(issued)} instructions per cycle, one "
                     f"every {fmt.ratio(1 / issued)} cycles")
    if _has(view, "active_warps_per_scheduler") and _has(view, "eligible_warps_per_scheduler"):
        of_max = (f" (of a hardware maximum of {view.show('max_warps_per_scheduler')})"
                  if _has(view, "max_warps_per_scheduler") else "")
        parts.append(f"it has {view.show('active_warps_per_scheduler')} active{of_max}, "
                     f"{view.show('eligible_warps_per_scheduler')} of them eligible per cycle")
    if _has(view, "no_eligible_percent"):
        parts.append(f"{view.show('no_eligible_percent')} of cycles issue nothing")
    return ("; ".join(parts) + ".") if parts else ""


def _stalls(view: View) -> list[tuple[str, str, str]]:
    """(reason, cycles per issued instruction, share) for every stall reason with a value, largest first."""
    metrics = view.analysis.metrics
    reasons = [n for n in metrics if n.startswith("stall_") and not n.endswith("_share")
               and metrics[n].value is not None]
    shares = {n[: -len("_share")] for n in metrics if n.startswith("stall_") and n.endswith("_share")
              and metrics[n].value is not None}
    reasons += [n for n in shares if n not in reasons]
    reasons.sort(key=lambda n: -(view.raw(n) if view.raw(n) is not None else view.raw(n + "_share") or 0.0))
    return [(escape(n[len("stall_"):].replace("_", " ")), view.show(n) if n in metrics else fmt.UNAVAILABLE,
             view.show(n + "_share") if n + "_share" in metrics else fmt.UNAVAILABLE) for n in reasons]


# --- occupancy ------------------------------------------------------------------------------------


def _checked(view: View, name: str) -> tuple[str, str, str]:
    """(ncu's value, advisor's value, agreement) for a figure ncu reports and advisor may recompute."""
    metric = _metric(view, name)
    if metric is None or (metric.value is None and metric.source == "reported" and metric.check is None):
        return fmt.UNAVAILABLE, fmt.UNAVAILABLE, NO_VALUE
    if metric.source != "reported":
        ours = fmt.value(metric.value, metric.unit)
        return fmt.UNAVAILABLE, ours, "ncu did not report it" if metric.value is not None else NO_VALUE
    ncu = fmt.value(metric.value, metric.unit)
    check = metric.check
    if check is None and not metric.formula:
        return ncu, NO_VALUE, ("measured" if name.startswith("achieved_") else "no recomputation in the packs")
    if check is None or check.derived_value is None:
        missing = [n for n in metric.inputs if (view.hw(n[3:]) if n.startswith("hw_") else view.raw(n)) is None]
        why = f" (needs {', '.join(code(n) for n in missing[:3])})" if missing else ""
        if missing:
            return ncu, fmt.UNAVAILABLE, f"not recomputed{why}"
        return ncu, fmt.UNAVAILABLE, "not cross-checked (derived from derived figures)"
    ours = fmt.value(check.derived_value, metric.unit)
    if check.agrees:
        return ncu, ours, "agrees"
    apart = (f" ({check.relative_difference * 100:.2g} % apart)" if check.relative_difference is not None else "")
    return ncu, ours, f"**disagrees**{apart}"


def _limit_value(view: View, name: str) -> float | None:
    """The block limit as ncu reports it, else as advisor recomputes it."""
    metric = _metric(view, name)
    if metric is None:
        return None
    if metric.value is not None:
        return metric.value
    return metric.check.derived_value if metric.check else None


def limiters(view: View) -> tuple[list[str], float | None]:
    """The block limits that bind (the smallest; ties all named), and that number of blocks."""
    limits = [(label, _limit_value(view, name)) for name, label, _ in layout()["block_limits"]]
    known = [(label, v) for label, v in limits if v is not None]
    if all(label == "SM" for label, _ in known):  # the SM's limit is the hardware's, not the launch's: alone it
        return [], None  # says nothing of this launch (a failed one has no launch figures; issue 23)
    least = min(v for _, v in known)
    return [label for label, v in known if v == least], least


def _limiter_text(view: View) -> str:
    names, blocks = limiters(view)
    if not names:
        return ""
    what = " and ".join(n.lower() if n != "SM" else "the SM's block limit" for n in names)
    full = view.raw("theoretical_occupancy_percent")
    if full is not None and full >= 0.9999:  # nothing holds occupancy below the maximum
        return f"no limit binds below full occupancy ({what} allow {fmt.value(blocks, 'blocks')} per SM)"
    return f"limited by {what} ({fmt.value(blocks, 'blocks')} per SM)"


def _occupancy(view: View) -> Section | None:
    limit_names = [name for name, _, _ in layout()["block_limits"]]
    occ_names = [name for name, _ in layout()["occupancy"]]
    wave_names = [name for name, _ in layout()["waves"]]
    if not _any(view, limit_names + occ_names + wave_names) and not any(
            (m := _metric(view, n)) is not None and m.check is not None for n in limit_names):
        return None
    blocks: list[Any] = []
    sentence = _occupancy_sentence(view)
    if sentence:
        blocks.append(Paragraph(sentence))
    names, _ = limiters(view)
    rows = []
    for name, label, basis in layout()["block_limits"]:
        ncu, ours, agreement = _checked(view, name)
        shown = f"**{escape(label)}** (smallest)" if label in names else escape(label)
        rows.append((shown, ncu, ours, agreement, escape(basis)))
    blocks.append(Table(("Block limit", "Nsight Compute", "advisor", "Agreement", "advisor recomputes from"),
                        tuple(rows), align=("left", "right", "right", "left", "left"),
                        caption="Blocks per SM each resource allows; the smallest binds"))
    occupancy_rows = []
    for name, label in layout()["occupancy"]:
        ncu, ours, agreement = _checked(view, name)
        occupancy_rows.append((escape(label), ncu, ours, agreement))
    if _any(view, occ_names) or any(r[2] != fmt.UNAVAILABLE for r in occupancy_rows):
        blocks.append(Table(("Occupancy", "Nsight Compute", "advisor", "Agreement"), tuple(occupancy_rows),
                            align=("left", "right", "right", "left")))
    if _any(view, wave_names):
        if _has(view, "waves_per_sm"):
            blocks.append(Paragraph(_waves_sentence(view)))
        blocks.append(Table(("Launch", "Value", "Source"), _value_rows(view, layout()["waves"]),
                            align=("left", "right", "left")))
    return Section("Occupancy", tuple(blocks), "occupancy")


def _occupancy_sentence(view: View) -> str:
    theoretical, achieved = view.raw("theoretical_occupancy_percent"), view.raw("achieved_occupancy_percent")
    limiter = _limiter_text(view)
    if theoretical is None and achieved is None:
        return f"Occupancy is unavailable; the block limits say it is {limiter}." if limiter else ""
    text = (f"Theoretical occupancy **{view.show('theoretical_occupancy_percent')}**, achieved "
            f"**{view.show('achieved_occupancy_percent')}**")
    if limiter:
        text += f"; {limiter}"
    if theoretical is not None and achieved is not None and theoretical > 0:
        text += (f". The achieved occupancy is {fmt.percent(achieved / theoretical)} of what the launch allows: "
                 + ("the gap is scheduling overhead or imbalance (blocks finishing at different times, a partial "
                    "last wave), not a resource limit" if achieved / theoretical < 0.8 else
                    "no resource limit binds, so what gap there is comes from scheduling or imbalance"
                    if theoretical >= 0.999 else
                    "the resource limits, not imbalance, set the occupancy"))
    return text + "."


def _waves_sentence(view: View) -> str:
    waves = view.raw("waves_per_sm")
    if waves is None:
        return "Launch figures:"
    if waves < 1:
        return (f"**{fmt.ratio(waves)} waves per SM**: the grid does not fill the GPU once, so some SMs "
                "stay idle for the whole kernel.")
    fill = view.raw("tail_wave_fraction")
    tail = ("" if fill is None else " The waves divide evenly: no partial last wave." if fill == 0
            else f" The last wave is {view.show('tail_wave_fraction')} full.")
    return f"{fmt.ratio(waves)} waves per SM.{tail}"


# --- roofline -------------------------------------------------------------------------------------


def _roofline(view: View) -> Section | None:
    precisions = layout()["precisions"]
    flop_names = [p[k] for p in precisions for k in ("flops", "rate", "peak", "fraction")]
    memory = layout()["roofline_memory"]
    if not _any(view, flop_names + [name for name, _ in memory]):
        return None
    blocks: list[Any] = [Paragraph(_roofline_sentence(view))]
    measured = [p for p in precisions if _any(view, [p["flops"], p["rate"], p["peak"], p["fraction"]])]
    if measured:
        rows = []
        for p in measured:
            fraction = p["fraction"]
            if fraction and _metric(view, fraction) is not None:
                share = view.show(fraction)
            elif _has(view, p["rate"]) and _has(view, p["peak"]) and view.raw(p["peak"]):
                share = fmt.percent((view.raw(p["rate"]) or 0.0) / (view.raw(p["peak"]) or 1.0))
            else:
                share = fmt.UNAVAILABLE
            rows.append((p["label"], view.show(p["flops"]) if _metric(view, p["flops"]) else fmt.UNAVAILABLE,
                         view.show(p["rate"]) if _metric(view, p["rate"]) else fmt.UNAVAILABLE,
                         view.show(p["peak"]) if _metric(view, p["peak"]) else fmt.UNAVAILABLE, share))
        blocks.append(Table(("Precision", "FLOPs", "Achieved", "Peak", "Of peak"), tuple(rows),
                            align=("left", "right", "right", "right", "right")))
    missing = [p["label"] for p in precisions if p not in measured]
    if missing:
        blocks.append(Paragraph(
            f"No {', '.join(missing)} FLOP count in this export (ncu collects them with "
            "`--section SpeedOfLight_RooflineChart` or `--set full`)."))
    table = _value_table(view, memory)
    if table:
        blocks.append(table)
    peak, bandwidth = view.raw("fp32_peak_flops"), view.raw("dram_peak_bandwidth")
    ai, achieved = view.raw("arithmetic_intensity"), view.raw("fp32_flops_rate")
    if finite(peak, bandwidth, ai, achieved) and peak and bandwidth and ai and achieved:
        blocks.append(Chart("roofline", "Roofline (FP32 peak, DRAM bandwidth)", {
            "kind": "roofline", "peak": peak, "bandwidth": bandwidth, "ai": ai, "achieved": achieved},
            alt="Roofline chart with the kernel's point"))
    return Section("Roofline", tuple(blocks), "roofline")


def _tensor_work(view: View) -> bool:
    return any((view.raw(name) or 0.0) > 0 for name in ("tensor_instructions", "pipe_tensor_percent"))


def _roofline_sentence(view: View) -> str:
    ai, ridge = view.raw("arithmetic_intensity"), view.raw("ridge_point")
    if ai is not None and ridge is not None:
        side = "memory-bound" if ai < ridge else "compute-bound"
        return (f"Arithmetic intensity **{view.show('arithmetic_intensity')}** against a ridge point of "
                f"{view.show('ridge_point')}: the {side} side of the roofline.")
    if ai is not None:
        return (f"Arithmetic intensity {view.show('arithmetic_intensity')}; the ridge point is unavailable (it "
                "needs the device's peak FLOP/s and DRAM bandwidth: `--hardware`).")
    if _tensor_work(view):  # tensor_work_guard made it unavailable: the FLOP counters miss MMA work
        shown = [f"{label} {view.show(name)}" for name, label in (("pipe_tensor_percent", "tensor pipe busy"),
                 ("tensor_instructions", "tensor-pipe instructions")) if _has(view, name)]
        return ("The kernel cannot be placed on the roofline: it runs matrix math on the tensor cores "
                f"({', '.join(shown)}), which Nsight Compute's FLOP counters do not count, so its FLOPs per DRAM "
                "byte would understate the work and wrongly place it on the memory-bound side.")
    return ("The kernel cannot be placed on the roofline: arithmetic intensity is unavailable (it needs FLOP "
            "counts and DRAM bytes). What the export has is below.")


# --- memory access --------------------------------------------------------------------------------


def _memory(view: View) -> Section | None:
    tables = [t for spec in layout()["memory_tables"] if (t := _value_table(view, spec["rows"], spec["caption"]))]
    if not tables:
        return None
    blocks: list[Any] = []
    if _has(view, "l1tex_hit_rate_percent") or _has(view, "l2_hit_rate_percent"):
        blocks.append(Paragraph(
            f"L1/TEX hits {view.show('l1tex_hit_rate_percent')} of sectors and L2 "
            f"{view.show('l2_hit_rate_percent')}; misses in L2 go to DRAM."))
    if _has(view, "uncoalesced_excess_fraction"):
        blocks.append(Paragraph(
            f"{view.show('uncoalesced_excess_fraction')} of the L2 sectors global accesses move are excess over a "
            "perfectly coalesced pattern."))
    if _has(view, "local_memory_share"):
        blocks.append(Paragraph(
            f"Local memory (register spills and per-thread arrays) is {view.show('local_memory_share')} of the traffic "
            "local and global memory instructions request."))
    return Section("Memory access", (*blocks, *tables), "memory-access")


# --- ncu's verdicts beside advisor's ---------------------------------------------------------------


def first_sentence(text: str, limit: int = 160) -> str:
    sentence = _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _verdicts(analysis: Analysis) -> Section:
    found = verdicts(analysis)
    intro = Paragraph(
        "Every rule result Nsight Compute wrote into the export, beside the advisor findings that make the same "
        "diagnosis; advisor findings ncu has no result for follow. Each tool's estimate is its own: a global one "
        "is a reduction of the kernel's duration, a local one of that unit's own inefficiency (an upper bound for "
        "the unit, not a share of time).")
    if not found:
        if not analysis.vendor_findings:
            return Section("Nsight Compute's own verdicts beside advisor's", (Paragraph(
                "This export holds no Nsight Compute rule results (ncu writes them only for the sections it "
                "collected, and a `--metrics` list has none), so there is nothing to set beside advisor's "
                "findings."),), "ncu-verdicts")
        return Section("Nsight Compute's own verdicts beside advisor's", (intro, Paragraph(
            "No verdict could be paired."),), "ncu-verdicts")
    rows = []
    for v in found:
        vendor = v.vendor
        if vendor is None:
            theirs, their_estimate = "none", NO_VALUE
        else:
            rule = code(vendor.rule) if vendor.rule else escape(vendor.section)
            what = escape(vendor.title or first_sentence(vendor.message))
            theirs = f"{escape(vendor.type)} {rule}: {what}"
            their_estimate = estimate(vendor.speedup, vendor.speedup_scope, NO_VALUE)
        ours = "; ".join(f"{code(f.name)} ({estimate(f.estimated_speedup, f.speedup_scope, NO_VALUE)}"
                         f"{', root cause' if f.root_cause else ''})" for f in v.ours) or "none"
        status = f"**{escape(v.status)}**" if v.status == DISAGREE else escape(v.status)
        rows.append((theirs, their_estimate, ours, status, escape(v.note) or NO_VALUE))
    table = Table(("Nsight Compute", "ncu estimate", "advisor", "Agreement", "Note"), tuple(rows),
                  align=("left", "right", "left", "left", "left"))
    counts = Counter(v.status for v in found)
    summary = Paragraph("In all: " + ", ".join(f"{n} {escape(status)}" for status, n in counts.items()) + ".")
    return Section("Nsight Compute's own verdicts beside advisor's", (intro, table, summary), "ncu-verdicts")


# --- the kind's report interface ------------------------------------------------------------------


def tldr(analysis: Analysis) -> list[tuple[int, str]]:
    """The kernel, its launch shape and time with the speed-of-light bound; then occupancy with its limiter."""
    view = View(analysis)
    info = analysis.info
    function = info.get("kernel_function") or info.get("kernel_name")
    where = []
    if info.get("device_name"):
        where.append(escape(info["device_name"]))
    if info.get("compute_capability"):
        where.append(f"cc {escape(info['compute_capability'])}")
    on = f" on {', '.join(where)}" if where else ""
    time = f", {view.show('total_time')}" if _has(view, "total_time") else ""
    head = f"{code(function) if function else 'The kernel'} {_shape(analysis)}{on}{time}"
    bound = _bound(view)
    candidates = [(1, f"{head}: **{bound[0]}** — {bound[1]}." if bound else f"{head}.")]
    theoretical, achieved = _has(view, "theoretical_occupancy_percent"), _has(view, "achieved_occupancy_percent")
    limiter = _limiter_text(view)
    if theoretical or achieved or limiter:
        text = (f"**Occupancy: theoretical {view.show('theoretical_occupancy_percent')}, achieved "
                f"{view.show('achieved_occupancy_percent')}**")
        if limiter:
            text += f", {limiter}"
        if _has(view, "waves_per_sm"):
            text += f"; {fmt.ratio(view.raw('waves_per_sm'))} waves per SM"
        candidates.append((1, text + "."))
    return candidates


def setup_rows(analysis: Analysis) -> list[tuple[str, str]]:
    """The kernel and its launch, the device, the process and the export."""
    view = View(analysis)
    info = analysis.info
    rows: list[tuple[str, str]] = []
    signature = info.get("kernel_name", "")
    function = info.get("kernel_function")
    if function or signature:
        kernel = code(function) if function else ""
        if signature and signature != function:
            kernel += f" — {code(short_signature(signature))}" if kernel else code(short_signature(signature))
        rows.append(("Kernel", kernel))
    launch = info.get("launch_id")
    if launch is not None:
        where = ", ".join(f"{k} {escape(info[k])}" for k in ("context", "stream") if info.get(k))
        rows.append(("Launch ID", escape(launch) + (f" ({where})" if where else "")))
    shape = _shape(analysis)
    if _has(view, "grid_size") and _has(view, "block_size"):
        shape += (f" = {fmt.count(view.raw('grid_size'))} blocks of {fmt.count(view.raw('block_size'))} threads")
    rows.append(("Grid × block", shape))
    rows.append(("Registers per thread", view.show("registers_per_thread")))
    rows.append(("Shared memory per block", _smem(view)))
    device = info.get("device")
    rows.append(("Device", escape(info["device_name"]) if info.get("device_name") else
                 f"device {escape(device)} (its model is not in this export)" if device else fmt.UNAVAILABLE))
    rows += [(label, escape(info[key]) if info.get(key) else fmt.UNAVAILABLE) for key, label in layout()["setup"]]
    if info.get("process_name"):
        host = f" on {escape(info['host_name'])}" if info.get("host_name") else ""
        rows.append(("Process", escape(info["process_name"]) + host))
    if info.get("profiler_version"):  # most exports do not say
        rows.append(("Profiler", escape(info["profiler_version"])))
    export = (layout().get("exports") or {}).get(analysis.source.format)
    if export:
        rows.append(("Export", export))
    return rows


def _smem(view: View) -> str:
    parts = [(label, name) for label, name in (("static", "smem_static_per_block"),
                                               ("dynamic", "smem_dynamic_per_block"),
                                               ("driver", "smem_driver_per_block")) if _has(view, name)]
    detail = ", ".join(f"{label} {view.show(name)}" for label, name in parts)
    if _has(view, "smem_per_block"):
        return view.show("smem_per_block") + (f" ({detail})" if detail else "")
    if parts:
        total = sum(view.raw(name) or 0.0 for _, name in parts)
        return f"{fmt.bytes_(total)} ({detail})"
    return fmt.UNAVAILABLE


def _provenance(view: View, name: str) -> str:
    metric = _metric(view, name)
    if metric is None or metric.value is None:
        return ""
    if metric.source == "reported":
        return f" (profile: {code(metric.raw_name or name)})"
    hw = view.analysis.hardware
    if metric.formula and "hw_" in metric.formula:
        return f" (hardware table: {escape(hw.name)})" if hw else " (hardware table)"
    return f" (derived: {code(metric.formula)})" if metric.formula else " (derived)"


def hardware_rows(analysis: Analysis) -> list[tuple[str, str]]:
    """Clocks, the SM count and the device limits of the occupancy calculation, each with its origin."""
    view = View(analysis)
    rows = [("SMs", view.show("sm_count") + _provenance(view, "sm_count")),
            ("SM frequency", view.show("sm_frequency")),
            ("DRAM frequency", view.show("dram_frequency"))]
    hw = analysis.hardware
    for name, label, key in layout()["device_limits"]:
        if not _has(view, name) and hw and hw.values.get(key) is not None:  # the pack did not derive it
            shown = fmt.value(hw.values[key], hw.units.get(key, "")) + f" (hardware table: {escape(hw.name)})"
        else:
            shown = view.show(name) + _provenance(view, name)
        rows.append((label, shown))
    return rows


def sections(analysis: Analysis) -> dict[str, list[Section]]:
    """The kind's sections, by where the report places them."""
    view = View(analysis)
    utilisation = [s for s in (_speed_of_light(view), _occupancy(view)) if s]
    utilisation.append(_verdicts(analysis))
    return {"utilisation": utilisation, "memory": [s for s in (_memory(view),) if s],
            "roofline": [s for s in (_roofline(view),) if s]}
