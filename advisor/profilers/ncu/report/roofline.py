"""The roofline and memory-access sections."""

from __future__ import annotations

from typing import Any

from advisor.core import units as fmt
from advisor.profilers.ncu import KIND
from advisor.profilers.ncu.report.common import _any, _has, _metric, _value_table
from advisor.report.document import Paragraph, Section, Table
from advisor.report.trace_blocks import roofline_chart, roofline_placement
from advisor.report.view import View

# --- roofline -------------------------------------------------------------------------------------


def _roofline(view: View) -> Section | None:
    precisions = KIND.data("report.yaml")["precisions"]
    flop_names = [p[k] for p in precisions for k in ("flops", "rate", "peak", "fraction")]
    memory = KIND.data("report.yaml")["roofline_memory"]
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
    chart = roofline_chart(view.raw("fp32_peak_flops"), view.raw("dram_peak_bandwidth"),
                           view.raw("arithmetic_intensity"), view.raw("fp32_flops_rate"),
                           KIND.data("report.yaml")["blocks"]["roofline"])
    if chart:
        blocks.append(chart)
    return Section("Roofline", tuple(blocks), "roofline")


TENSOR_PIPE_EVIDENCE = 0.05  # the tensor pipe busy this share of the time or more is tensor work (metrics.yaml)


def _tensor_work(view: View) -> bool:
    """As rules/ncu/metrics.yaml `tensor_work_guard` decides it: a tensor instruction, or the pipe 5 % busy."""
    return ((view.raw("tensor_instructions") or 0.0) > 0
            or (view.raw("pipe_tensor_percent") or 0.0) >= TENSOR_PIPE_EVIDENCE)


def _roofline_sentence(view: View) -> str:
    ai, ridge = view.raw("arithmetic_intensity"), view.raw("ridge_point")
    placed = roofline_placement(ai, ridge, view.show("arithmetic_intensity"), view.show("ridge_point"),
                                KIND.data("report.yaml")["blocks"]["roofline"])
    if placed:
        return placed
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
    tables = [t for spec in KIND.data("report.yaml")["memory_tables"]
              if (t := _value_table(view, spec["rows"], spec["caption"]))]
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


