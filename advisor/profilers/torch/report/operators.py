"""The torch report's "What runs on the device" section (issue 35): kernel time by operator family and the top
operators, each against the device's roofline, and a roofline chart with the operators as points sized by time."""

from __future__ import annotations

from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.core.trace import Breakdown
from advisor.report.document import Chart, Paragraph, Section, escape
from advisor.report.trace_blocks import breakdown_table

PEAKS = (("BF16/FP16 matrix peak", "peak_flops_bf16"), ("TF32 matrix peak", "peak_flops_tf32"),
         ("FP32 peak", "peak_flops_fp32"))


def operators_section(analysis: Analysis) -> Section | None:
    """The families' and top operators' tables, the chart when the device's peaks are known; None without an
    operator tied to a kernel."""
    t = analysis.trace
    families, top = (t.breakdown("operator_families"), t.breakdown("top_operators")) if t else (None, None)
    if not (families and families.rows):
        return None
    if not analysis.value("op_modelled_fraction"):  # no shapes recorded: where the time goes, not the work
        note = Paragraph(
            f"Kernel time by the operator that launched each kernel ({fmt.percent(analysis.value('op_tied_fraction'))}"
            " of it is tied to one). The trace recorded no input shapes, so no operator's work, achieved FLOP/s or "
            "roofline is known: profile with torch.profiler.profile(record_shapes=True) to see them.")
        table = [breakdown_table(top, columns=("time", "share"), key_as_code=True)] if top and top.rows else []
        return Section("What runs on the device: operators", (note, *table), "operators")
    blocks: list[Any] = [Paragraph(escape(families.note)), breakdown_table(families)]
    if top and top.rows:
        blocks += [Paragraph(escape(top.note)), breakdown_table(top, key_as_code=True)]
    chart = _chart(analysis, top)
    if chart is not None:
        blocks.append(chart)
    elif analysis.hardware is None or not analysis.hardware.values.get("memory_bandwidth"):
        blocks.append(Paragraph(
            "No roofline: the device's peaks are unknown (its name is not in "
            "advisor/profilers/torch/data/hardware.yaml); "
            "`--hardware my-gpu.yaml` with peak_flops_bf16, peak_flops_fp32 and memory_bandwidth adds them."))
    return Section("What runs on the device: operators", tuple(blocks), "operators")


SHORT_DTYPES = (("c10::BFloat16", "bf16"), ("c10::Half", "fp16"), ("(float)", "(fp32)"), ("c10::Float8_", "fp8 "))


def _short(label: str) -> str:
    """"aten::mm (c10::BFloat16)" as the chart labels it: "mm (bf16)"."""
    for long, short in SHORT_DTYPES:
        label = label.replace(long, short)
    return label.removeprefix("aten::")[:32]


def _chart(analysis: Analysis, top: Breakdown | None) -> Chart | None:
    hw = analysis.hardware
    values = hw.values if hw is not None else {}
    bandwidth = values.get("memory_bandwidth")
    peaks = [(label, values[key]) for label, key in PEAKS if values.get(key)]
    if not bandwidth or not peaks or top is None:
        return None
    points = []
    for label, row in top.rows:
        time, _, flops_rate, _, intensity, _ = row
        if time and flops_rate and intensity:
            points.append({"label": _short(label), "ai": intensity, "achieved": flops_rate, "time": time})
    if not points:
        return None
    ridge = peaks[0][1] / bandwidth
    return Chart("operator-roofline", "Top operators on the device's roofline", {
        "kind": "operator_roofline", "bandwidth": bandwidth, "peaks": peaks, "points": points},
        alt=f"Roofline of {escape(hw.description if hw else 'the device')} ({fmt.rate(bandwidth, 'bytes/s')}, "
            f"ridge {ridge:.0f} FLOP/B at the matrix peak) with the top operators as points sized by kernel time")
