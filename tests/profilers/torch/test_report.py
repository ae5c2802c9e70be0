"""The torch kind's report (issue 25): the sections a GPU trace gets, with their units, built from analyses made
directly from metrics and breakdowns (the event analysis fills the same names on real traces); a CPU-only trace
says what it has and shows no device figure as 0; a folder's ranks get the per-rank temporal breakdown."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor import kinds
from advisor.api import analyze_profile
from advisor.core.model import OverviewColumn, Profile, ProfileOverview, SourceInfo
from advisor.core.trace import TraceSummary, kind_breakdown
from advisor.packs.load import load_packs
from advisor.profilers.torch import KIND
from advisor.profilers.torch import report as torch_report
from advisor.report.build import build_document
from advisor.report.document import Chart, Table
from advisor.report.markdown import render_markdown

RULESET = load_packs(kind=KIND.name)
MS, US = 1e-3, 1e-6

GPU = dict(
    total_time=0.4, trace_span=0.45, step_count=3, step_time_median=0.12, step_time_mean=0.1333, step_time_max=0.16,
    step_time_min=0.12, step_time_cv=0.17, first_step_time=0.16, first_step_ratio=1.333, warmup_fraction=0.1,
    device_busy=0.2, device_idle=0.2, device_busy_fraction=0.5, device_idle_fraction=0.5, compute_time=0.18,
    compute_fraction=0.45, comm_time=0.04, comm_fraction=0.1, comm_exposed=0.012, comm_exposed_fraction=0.03,
    comm_overlap_fraction=0.7, collective_count=12, collective_bytes=2.0e8, memory_op_time=0.008,
    memory_op_fraction=0.02, memory_op_exposed=0.004, memory_op_exposed_fraction=0.01, memcpy_htod_bytes=6.4e7,
    memcpy_dtoh_bytes=4096, memcpy_dtod_bytes=0, pageable_copy_count=0, pageable_copy_time=0.0,
    pageable_copy_fraction=0.0, idle_host_wait=0.14, idle_kernel_wait=0.04, idle_other=0.02,
    idle_host_wait_fraction=0.35, idle_kernel_wait_fraction=0.1, idle_other_fraction=0.05, kernel_count=6000,
    kernel_time=0.21, kernel_time_median=3 * US, launch_count=6000, launch_time_total=0.036, launch_time_mean=6 * US,
    launch_delay_median=20 * US, short_kernel_count=4800, short_kernel_fraction=0.8, queue_length_max=9,
    queue_length_mean=1.5, sync_count=6, sync_time=0.003, sync_fraction=0.0075, sync_per_step=2,
    dataloader_time=0.01, dataloader_fraction=0.025, dataloader_idle_fraction=0.01, occupancy_mean=0.45,
    low_occupancy_time_fraction=0.2, world_size=2, rank=0)
INFO = {"device_name": "NVIDIA A100-SXM4-40GB", "device_vendor": "nvidia", "compute_capability": "8.0",
        "backend": "nccl", "rank_source": "distributedInfo"}


def breakdown(name, columns, rows):
    return kind_breakdown(KIND, name, columns).make(rows)


def gpu_trace() -> TraceSummary:
    steps = breakdown("steps", ["duration", "busy_fraction", "idle", "kernels"], [
        ("4", (0.16, 0.4, 0.096, 2000.0)), ("5", (0.12, 0.55, 0.054, 2000.0)),  # keyed by step number
        ("6", (0.12, 0.55, 0.054, 2000.0))])
    classes = breakdown("kernel_classes", ["time", "share", "count"], [
        ("GEMM", (0.12, 0.5714, 1200.0)), ("elementwise", (0.05, 0.2381, 4000.0)),
        ("communication", (0.04, 0.1905, 12.0))])
    top = breakdown("top_kernels", ["time", "share", "count", "mean"], [
        ("ampere_sgemm_128x64_tn" + "_x" * 60, (0.08, 0.381, 600.0, 133 * US)),
        ("ncclKernel_AllReduce_RING_LL_Sum_float", (0.04, 0.1905, 12.0, 3.333 * MS))])
    idle = breakdown("idle_breakdown", ["time", "share"], [
        ("host wait", (0.14, 0.35)), ("kernel wait", (0.04, 0.1)), ("other", (0.02, 0.05))])
    streams = breakdown("streams", ["busy", "kernels", "max_queue"], [("stream 7", (0.19, 5988.0, 9.0)),
                                                                      ("stream 20", (0.04, 12.0, 1.0))])
    return TraceSummary(events={"kernel": 6000, "memcpy": 4, "runtime": 6010, "cpu_op": 20000, "annotation": 40},
                        span=0.4, engines=(), busy_union=0.2, dma_size_edges=(), dma_size_counts=(),
                        timeline_edges=(0.0, 0.2, 0.4), timeline={"Compute": (0.5, 0.4), "Communication": (0.1, 0.1)},
                        gaps=(), warnings=(), breakdowns=(steps, classes, top, idle, streams))


def analysis_of(values, info=None, trace=None):
    values = {k: float(v) if v is not None else None for k, v in values.items()}  # as an adapter gives them
    profile = Profile(SourceInfo("rank0.pt.trace.json", "kineto-json", "Kineto JSON"), values, info or {},
                      kind=KIND.name)
    return replace(analyze_profile(profile, RULESET), trace=trace)


def markdown(analysis) -> str:
    return render_markdown(build_document(analysis))


def section(analysis, anchor):
    return next((s for s in build_document(analysis).sections if s.anchor == anchor), None)


def test_the_report_module_honours_the_kind_contract():
    kinds.check(kinds.get("torch"))
    # roofline: the operators (issue 35)
    assert set(torch_report.PLACES) == {"utilisation", "memory", "roofline", "trace"}


def test_a_gpu_trace_gets_every_section_with_units():
    a = analysis_of(GPU, INFO, gpu_trace())
    anchors = [s.anchor for s in build_document(a).sections]
    for anchor in ("temporal", "idle", "timeline", "kernels", "communication", "steps", "launches", "host", "memory"):
        assert anchor in anchors, anchor
    assert anchors.index("temporal") < anchors.index("memory") < anchors.index("kernels")
    text = markdown(a)
    assert "| Host wait | 140 ms | 35.00 % | 70.00 % |" in text  # time, share of the window, share of the idle
    assert "| Kernel wait | 40 ms | 10.00 % | 20.00 % |" in text
    assert "| Mean launch call | 6 µs |" in text
    assert "| Share of kernels shorter than their launch call | 80.00 % |" in text
    assert "compute overlaps 70.00 % of that time, and 12 ms (3.00 % of the window) runs with no compute" in text
    assert "| GEMM | 120 ms | 57.14 % | 1,200 |" in text
    assert "| ProfilerStep#4 | 160 ms | 40.00 % | 96 ms | 2,000 |" in text
    assert "| Host to device | 61.04 MiB |" in text


def test_the_temporal_breakdown_adds_up_to_the_window():
    s = section(analysis_of(GPU, INFO, gpu_trace()), "temporal")
    table = next(b for b in s.blocks if isinstance(b, Table))
    assert table.rows == (("rank 0", "45.00 %", "5.00 %", "50.00 %"),)
    chart = next(b for b in s.blocks if isinstance(b, Chart))
    assert chart.spec["kind"] == "grouped_hbar" and [x["values"] for x in chart.spec["series"]] == [
        [pytest.approx(45.0)], [pytest.approx(5.0)], [pytest.approx(50.0)]]


def test_the_tldr_and_setup_name_the_window_and_the_device():
    a = analysis_of(GPU, INFO, gpu_trace())
    text = markdown(a)
    assert "**Device busy 50.00 % of the 400 ms window** (compute 45.00 %, communication with no compute 3.00 %" in text
    assert "idle 50.00 %: host wait 35.00 %, kernel wait 10.00 %, other 5.00 %" in text
    assert "**3 profiler steps, median 120 ms**; the first 160 ms, 1.333× the others' median" in text
    assert "**Top kernel class: GEMM, 57.14 % of kernel time** (120 ms)" in text
    assert "| Analysed window | ProfilerStep#4 to ProfilerStep#6 (3 profiler steps): 400 ms of a 450 ms trace." in text
    assert "| Device | NVIDIA A100-SXM4-40GB |" in text and "| Rank | 0 of a world of 2 |" in text
    assert "6,000 kernels, 4 copies, 6,010 runtime calls, 20,000 operators, 40 annotations" in text
    assert "NVIDIA A100-SXM4-40GB" in build_document(a).lines[0]


def test_a_step_chart_shows_busy_and_idle_time_per_step():
    chart = next(b for b in section(analysis_of(GPU, INFO, gpu_trace()), "steps").blocks if isinstance(b, Chart))
    assert chart.spec["labels"] == ["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6"]
    busy, idle = (s["values"] for s in chart.spec["series"])
    assert busy == [pytest.approx(64.0), pytest.approx(66.0), pytest.approx(66.0)]  # ms: 160 ms × 40 %
    assert idle == [pytest.approx(96.0), pytest.approx(54.0), pytest.approx(54.0)]


def test_long_kernel_names_are_cut_in_the_table():
    text = markdown(analysis_of(GPU, INFO, gpu_trace()))
    assert "ampere_sgemm_128x64_tn_x_x" in text and "_x" * 60 not in text
    assert "2 of 2 distinct names" in text


def test_a_cpu_only_trace_says_what_it_has_and_no_device_figure():
    values = {"total_time": 0.4, "trace_span": 0.4, "step_count": 0, "sync_count": 3, "sync_time": 0.001,
              "sync_fraction": 0.0025, "sync_per_step": None, "dataloader_time": 0.01, "dataloader_fraction": 0.025,
              "world_size": 300, "rank": 34}
    trace = TraceSummary(events={"cpu_op": 120, "annotation": 8, "runtime": 0}, span=0.4, engines=(),
                         busy_union=None, dma_size_edges=(), dma_size_counts=(), timeline_edges=(), timeline={},
                         gaps=(), warnings=("CPU-only trace: no device events",))
    a = analysis_of(values, {"device_vendor": "none", "backend": "gloo"}, trace)
    doc = build_document(a)
    anchors = [s.anchor for s in doc.sections]
    assert "holdings" in anchors
    for anchor in ("temporal", "idle", "kernels", "launches", "memory", "communication"):
        assert anchor not in anchors, anchor
    text = markdown(a)
    assert "**No device events**: The trace holds no device events" in text
    assert "| Operators | 120 |" in text and "| Annotations | 8 |" in text
    assert "| Synchronising calls | 3 |" in text
    assert "| Host time in the DataLoader's \\_\\_next\\_\\_ | 10 ms |" in text
    assert "the whole trace (no ProfilerStep#N marks): 400 ms of a 400 ms trace" in text
    assert "| Rank | 34 of a world of 300 |" in text
    assert "no device named in the trace" in doc.lines[0]
    assert "Device busy 0" not in text and "| Idle | 0" not in text


def test_a_report_without_a_trace_summary_still_renders():
    text = markdown(analysis_of(GPU, INFO))
    assert "Temporal breakdown" in text and "Idle time" in text
    assert "6,000 kernels, 4 copies" not in text  # no event counts without the trace summary


def test_a_rank_folder_gets_a_temporal_breakdown_per_rank_and_a_ranks_section():
    def row(name, window, compute, other, idle, analysed=False):
        titles = {c["title"]: c["metrics"][0] for c in KIND.data("report.yaml")["overview"]["columns"]}
        values = {"total_time": window, "compute_fraction": compute, "non_compute_fraction": other,
                  "device_idle_fraction": idle}
        columns = tuple(OverviewColumn(t, values.get(m), "fraction" if m != "total_time" else "s")
                        for t, m in titles.items())
        return ProfileOverview(name, window, name, columns, analysed)

    entries = (row("rank 0", 0.40, 0.45, 0.05, 0.5, True), row("rank 1", 0.44, 0.6, 0.1, 0.3))
    a = replace(analysis_of(GPU, INFO, gpu_trace()), entries=entries)
    temporal = section(a, "temporal")
    table = next(b for b in temporal.blocks if isinstance(b, Table))
    assert table.headers[0] == "Rank" and table.rows == (("rank 0", "45.00 %", "5.00 %", "50.00 %"),
                                                         ("rank 1", "60.00 %", "10.00 %", "30.00 %"))
    ranks = section(a, "ranks")
    text = ranks.blocks[0].text
    assert "Window imbalance: 1.048× (longest ÷ mean over 2 ranks); the longest is **rank 1** (440 ms" in text


def test_a_part_of_the_device_time_that_is_zero_is_left_out_of_the_tldr():
    a = analysis_of({**GPU, "comm_exposed_fraction": 0.0, "comm_exposed": 0.0}, INFO, gpu_trace())
    bullet = next(b for b in build_document(a).sections[0].blocks[0].items if "Device busy" in b)
    assert "(compute 45.00 %, copies and sets with no kernel 1.00 %)" in bullet
