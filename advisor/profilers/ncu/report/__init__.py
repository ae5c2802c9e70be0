"""The Nsight Compute kind's report sections: the kernel and its launch shape in the TL;DR and setup,
speed of light with the issue slots and warp stalls, the occupancy calculation (ncu's block limits
beside advisor's recomputation), the roofline, memory access, and ncu's own rule results beside
advisor's findings. Rows and labels come from data/report.yaml; a figure the profile lacks is shown
as unavailable, and a section none of whose figures exist is left out."""

from __future__ import annotations

from collections import Counter
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.profilers.ncu import KIND
from advisor.profilers.ncu.report.common import (
    _SENTENCE_END,
    NO_VALUE,
    _any,
    _has,
    _shape,
    _source,
    _value_rows,
)
from advisor.profilers.ncu.report.common import _metric as _metric  # the tests read these through the package
from advisor.profilers.ncu.report.common import short_signature as short_signature
from advisor.profilers.ncu.report.grouped import grouped
from advisor.profilers.ncu.report.occupancy import _limiter_text, _occupancy
from advisor.profilers.ncu.report.occupancy import limiters as limiters
from advisor.profilers.ncu.report.roofline import _memory, _roofline
from advisor.profilers.ncu.verdicts import DISAGREE, NOT_MODELLED, Verdict, estimate, verdicts
from advisor.report.document import Chart, Paragraph, Section, Table, code, escape
from advisor.report.view import View

# --- speed of light -------------------------------------------------------------------------------


def _bound(view: View) -> tuple[str, str] | None:
    """(bound, explanation): the speed-of-light finding that fired (report.yaml `bounds`), with the
    two percentages it was decided on."""
    fired = {f.name: f for f in view.analysis.findings}
    for rule, word, clause in KIND.data("report.yaml")["bounds"]:
        finding = fired.get(rule)
        if finding is not None:
            params = {name: fmt.value(p.value, p.unit) for name, p in finding.params.items()}
            return word, (f"compute (SM) {view.show('compute_throughput_percent')}, memory "
                          f"{view.show('memory_throughput_percent')} of peak{clause.format_map(params)}")
    return None


def _dominant_memory_unit(view: View) -> dict[str, Any] | None:
    units = [r for r in KIND.data("report.yaml")["throughput"] if r.get("memory") and _has(view, r["metric"])]
    return max(units, key=lambda r: view.raw(r["metric"]) or 0.0) if units else None


def _speed_of_light(view: View) -> Section | None:
    rows_spec = KIND.data("report.yaml")["throughput"]
    issue_names = [name for name, _ in KIND.data("report.yaml")["issue"]]
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
        blocks.append(Table(("Issue slots", "Value", "Source"), _value_rows(view, KIND.data("report.yaml")["issue"]),
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

    def stalled(n: str) -> float:  # cycles per issued instruction, else the share
        own = view.raw(n)
        return own if own is not None else view.raw(n + "_share") or 0.0

    reasons.sort(key=lambda n: -stalled(n))
    return [(escape(n[len("stall_"):].replace("_", " ")), view.show(n) if n in metrics else fmt.UNAVAILABLE,
             view.show(n + "_share") if n + "_share" in metrics else fmt.UNAVAILABLE) for n in reasons]


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
    rows: list[tuple[Verdict, tuple[str, ...]]] = []
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
        rows.append((v, (theirs, their_estimate, ours, status, escape(v.note) or NO_VALUE)))
    table = Table(("Nsight Compute", "ncu estimate", "advisor", "Agreement", "Note"),
                  tuple(grouped(rows, first_sentence)), align=("left", "right", "left", "left", "left"))
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
    unmodelled = _unmodelled(analysis)
    if unmodelled:
        candidates.append((4, "Nsight Compute also flags what advisor does not model: " + "; ".join(unmodelled)
                           + " (ncu's own estimates, in none of advisor's sums; see its verdicts table)."))
    return candidates


UNMODELLED_SHOWN = 0.05  # ncu's estimate from which a result advisor has no rule for is named in the TL;DR


def _unmodelled(analysis: Analysis) -> list[str]:
    """ncu's results with an estimate of 5 % or more that no advisor rule diagnoses, largest first (issue 36)."""
    found = [v.vendor for v in verdicts(analysis) if v.status == NOT_MODELLED and v.vendor is not None
             and v.vendor.speedup is not None and v.vendor.speedup >= UNMODELLED_SHOWN]
    found.sort(key=lambda f: -(f.speedup or 0.0))
    return [f"{code(f.rule) if f.rule else escape(f.section)} {escape(f.title) if f.title else ''} "
            f"({estimate(f.speedup, f.speedup_scope)})".replace("  ", " ") for f in found[:3]]


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
    rows += [(label, escape(info[key]) if info.get(key) else fmt.UNAVAILABLE)
             for key, label in KIND.data("report.yaml")["setup"]]
    if info.get("process_name"):
        host = f" on {escape(info['host_name'])}" if info.get("host_name") else ""
        rows.append(("Process", escape(info["process_name"]) + host))
    if info.get("profiler_version"):  # most exports do not say
        rows.append(("Profiler", escape(info["profiler_version"])))
    export = (KIND.data("report.yaml").get("exports") or {}).get(analysis.source.format)
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
    for name, label, key in KIND.data("report.yaml")["device_limits"]:
        if not _has(view, name) and hw and hw.values.get(key) is not None:  # the pack did not derive it
            shown = fmt.value(hw.values[key], hw.units.get(key, "")) + f" (hardware table: {escape(hw.name)})"
        else:
            shown = view.show(name) + _provenance(view, name)
        rows.append((label, shown))
    return rows


PLACES = ("utilisation", "memory", "roofline")  # where sections() puts its sections (kinds.contract.PLACES)


def sections(analysis: Analysis) -> dict[str, list[Section]]:
    """The kind's sections, by where the report places them."""
    view = View(analysis)
    utilisation = [s for s in (_speed_of_light(view), _occupancy(view)) if s]
    utilisation.append(_verdicts(analysis))
    return {"utilisation": utilisation, "memory": [s for s in (_memory(view),) if s],
            "roofline": [s for s in (_roofline(view),) if s]}

