"""The torch kind's event summary as a whole: the metric names the rules read (fixed by issue 25), the trace
summary the report draws, a CPU-only trace (device metrics unavailable, never 0), and the real traces of
samples/torch_* read by the kind's own reader, with advisor's figures for the A100 DDP rank pinned.
Times given in µs, metrics in s, bytes, counts and fractions."""

import importlib.util
import math
from pathlib import Path

import pytest

from advisor.profilers.torch import tables as T
from advisor.profilers.torch.events import DEVICE_METRICS, summarize

_spec = importlib.util.spec_from_file_location("torch_builders", Path(__file__).with_name("builders.py"))
builders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builders)
US = 1e-6
SAMPLES = Path(__file__).resolve().parents[3] / "samples"
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
# the host's own pace split (pace.py) and the median kernel launch (launches.py): issue 34, classes 4 and 7
PACE = ("launch_time_median", "launch_idle", "launch_idle_fraction", "launch_call_idle", "launch_call_idle_fraction",
        "cpu_op_idle", "cpu_op_idle_fraction", "cpu_op_top_idle", "untraced_host_idle", "untraced_host_idle_fraction")
# what runs on the device by operator (operators.py): issue 35
OPERATORS = ("op_tied_fraction", "op_modelled_fraction", "fp32_matmul_time", "fp32_matmul_tf32_roofline_time",
             "softmax_time", "matmul_time", "matmul_flops", "matmul_roofline_time", "attention_time",
             "convolution_time", "normalization_time", "normalization_flops", "normalization_bytes",
             "normalization_roofline_time", "reduction_time", "reduction_roofline_time", "elementwise_time",
             "elementwise_flops", "elementwise_bytes", "elementwise_roofline_time", "embedding_time")
METRICS = (*PACE, *OPERATORS, "total_time", "trace_span", "event_coverage", "step_count", "partial_step_count",
           "step_time_median", "step_time_mean",
           "step_time_max",
           "step_time_min", "step_time_cv", "first_step_time", "first_step_ratio", "warmup_fraction", "device_busy",
           "device_idle", "device_busy_fraction", "device_idle_fraction", "compute_time", "compute_fraction",
           "comm_time", "comm_fraction", "comm_exposed", "comm_exposed_fraction", "comm_overlap_fraction",
           "collective_count", "collective_bytes", "memory_op_time", "memory_op_fraction", "memory_op_exposed",
           "memory_op_exposed_fraction", "memcpy_htod_bytes", "memcpy_dtoh_bytes", "memcpy_dtod_bytes",
           "pageable_copy_count", "pageable_copy_time", "pageable_copy_fraction", "idle_host_wait",
           "idle_kernel_wait", "idle_other", "idle_host_wait_fraction", "idle_kernel_wait_fraction",
           "idle_other_fraction", "kernel_count", "kernel_time", "kernel_time_median", "launch_count",
           "launch_time_total", "launch_time_mean", "launch_delay_median", "short_kernel_count",
           "short_kernel_fraction", "queue_length_max", "queue_length_mean", "sync_count", "sync_time",
           "sync_fraction", "sync_per_step", "dataloader_time", "dataloader_fraction", "dataloader_idle_fraction",
           "occupancy_mean", "low_occupancy_time_fraction", "world_size", "rank", "sync_idle", "sync_idle_fraction",
           "idle_host_wait_other", "loader_free_step_cv", "loader_free_step_excess", "dataloader_idle",
           "idle_host_wait_other_fraction", "blocking_launch_count", "launch_lead_median", "blocking_copy_count",
           "blocking_copy_time", "blocking_copy_fraction", "blocking_copy_idle", "blocking_copy_idle_fraction")


def us(value):
    return pytest.approx(value * US, rel=1e-9, abs=1e-15)


def gpu_trace():
    """Two 100 µs steps: a GEMM, an all-reduce on its own stream partly under it, a copy, two small kernels."""
    b = builders.TraceBuilder(metadata={T.META_RANK: 1, T.META_WORLD_SIZE: 8}, warnings=("a caveat of the reader",))
    b.step(1, 0, 100).step(2, 100, 100)
    b.launch("ampere_sgemm_128x64_nn", 1, 4, 10, 60, occupancy=0.5)
    b.launch(NCCL, 2, 4, 50, 40, stream=40, occupancy=0.125)
    b.copy(100, 5, 110, 10, size=4096)
    b.launch("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 121, 3, 130, 2)
    b.launch("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 125, 3, 140, 2)
    return b


def test_summarize_returns_exactly_the_metrics_the_rules_read():
    _, m = summarize(gpu_trace().build())
    assert sorted(m) == sorted(METRICS)
    assert set(DEVICE_METRICS) <= set(METRICS)


def test_a_gpu_trace_summary():
    summary, m = summarize(gpu_trace().build())
    assert m["total_time"] == us(200) and summary.span == us(200)
    assert m["device_busy"] == us(80 + 10 + 4)  # 10..90 (GEMM and all-reduce), the copy, two 2 µs kernels
    assert m["compute_time"] == us(64) and m["comm_time"] == us(40)
    assert m["comm_exposed"] == us(20) and m["comm_overlap_fraction"] == pytest.approx(0.5)
    assert m["kernel_count"] == 4 and m["kernel_time"] == us(104)
    assert m["kernel_time_median"] == us((2 + 40) / 2)
    # kernels without a figure, and the all-reduce (a communication kernel's occupancy says nothing), left out
    assert m["occupancy_mean"] == pytest.approx(0.5)
    assert m["low_occupancy_time_fraction"] == pytest.approx(0.0)
    assert (m["rank"], m["world_size"]) == (1, 8)
    assert summary.busy_union == m["device_busy"]
    assert summary.compute_busy == m["compute_time"] and summary.dma_busy == m["memory_op_time"] == us(10)
    assert [(e.engine, e.title, e.busy, e.compute) for e in summary.engines] == [
        ("compute", "Compute", us(64), True), ("communication", "Communication", us(40), False),
        ("memory", "Memory ops", us(10), False)]
    assert summary.events[T.KERNEL] == 4 and summary.events[T.RUNTIME] == 5
    assert summary.warnings == ("a caveat of the reader",)
    assert summary.timeline_edges[0] == 0.0 and summary.timeline_edges[-1] == pytest.approx(200 * US)
    assert set(summary.timeline) == {"Compute", "Communication", "Memory ops"}
    assert summary.timeline["Compute"][0] == 0.0 and summary.timeline["Compute"][5] == pytest.approx(1.0)
    assert sum(summary.dma_size_counts) == 1  # one copy, 4096 bytes


def test_the_kernel_tables():
    summary, _ = summarize(gpu_trace().build())
    classes = summary.breakdown("kernel_classes")
    assert [k for k, _ in classes.rows] == ["GEMM", "Communication", "Memory (copies and sets)", "Elementwise"]
    assert classes.value("GEMM", "time") == us(60)
    assert classes.value("GEMM", "share") == pytest.approx(60 / 114)  # of the summed kernel, copy and set time
    assert classes.value("Elementwise", "count") == 2
    top = summary.breakdown("top_kernels")
    assert top.rows[0][0] == "ampere_sgemm_128x64_nn" and top.total_rows is None
    fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
    assert (top.value(fill, "count"), top.value(fill, "time"), top.value(fill, "mean")) == (2, us(4), us(2))
    streams = summary.breakdown("streams")
    assert [k for k, _ in streams.rows] == ["device 0 stream 7", "device 0 stream 40"]


def test_the_top_kernel_table_is_cut_to_its_top_entries_and_says_how_many_there_were():
    b = builders.TraceBuilder().step(1, 0, 1000)
    for i in range(20):
        b.kernel(f"kernel_{i:02d}", 10 * i, i + 1)
    summary, _ = summarize(b.build())
    top = summary.breakdown("top_kernels")
    assert len(top.rows) == 15 and top.total_rows == 20
    assert top.rows[0][0] == "kernel_19"


def test_a_cpu_only_trace_has_host_figures_and_every_device_metric_unavailable():
    b = builders.TraceBuilder(metadata={T.META_RANK: 34, T.META_WORLD_SIZE: 300})
    b.step(551, 100, 200).cpu_op("aten::add", 0, 10).annotation("gloo:all_reduce", 150, 20)
    summary, m = summarize(b.build())
    assert all(m[k] is None for k in DEVICE_METRICS)
    assert m["total_time"] == us(200) and m["step_count"] == 1 and m["collective_count"] == 1
    assert summary.busy_union is None and summary.engines == () and summary.timeline == {}
    assert [b.name for b in summary.breakdowns] == ["steps"]
    assert summary.breakdown("steps").rows == (("551", (us(200), None, None, None)),)


def test_an_empty_trace_is_not_an_error():
    summary, m = summarize(builders.TraceBuilder().build())
    assert m["total_time"] == 0.0 and m["device_busy"] is None
    assert summary.span == 0.0


def test_events_the_reader_left_out_are_counted_as_skipped():
    trace = gpu_trace().build()
    trace = type(trace)(trace.tables, trace.summary, trace.metadata, trace.warnings, {"skipped": {T.KERNEL: 3}})
    summary, _ = summarize(trace)
    assert summary.skipped == {T.KERNEL: 3}


# --- the real traces (samples/torch_*), read by the kind's reader --------------------------------------------------

def _real(relative):
    adapters = pytest.importorskip("advisor.profilers.torch.adapters", reason="the torch reader is not installed")
    from advisor.kinds.base import LoadOptions

    path = SAMPLES / relative
    if not path.exists():
        pytest.skip(f"{relative} is not in samples/")
    (profile,) = adapters.load(path, LoadOptions())
    return summarize(profile.trace, profile.values.get("total_time"))


REAL = ["torch_a100_ddp/a100_ddp_rank0_of2.json.gz", "torch_a100_cold_start/a100_alexnet_cold_start.json.gz",
        "torch_amd_mi250/amd_mi250_minitoy_train.json.gz", "torch_mtia_inference/mtia_inference_rank0.json.gz",
        "torch_cpu_only/cpu_only_rank34.pt.trace.json.gz", "torch_sampled_ranks/rank-0.json.gz",
        "torch_sampled_ranks/rank-1.json.gz"]


@pytest.mark.parametrize("relative", REAL)
def test_every_real_trace_gives_consistent_figures(relative):
    summary, m = _real(relative)
    assert sorted(m) == sorted(METRICS)
    assert summary.span == pytest.approx(m["total_time"])
    for key, value in m.items():
        assert value is None or math.isfinite(value), key
        if key.endswith("_fraction") and value is not None:
            assert -1e-12 <= value <= 1 + 1e-12, key
    if m["device_busy"] is not None:
        idle = m["idle_host_wait"] + m["idle_kernel_wait"] + m["idle_other"]
        assert idle == pytest.approx(m["device_idle"], rel=1e-9, abs=1e-12)
        assert m["device_busy"] + m["device_idle"] == pytest.approx(m["total_time"])
        assert m["compute_time"] <= m["device_busy"] + 1e-12 and m["comm_exposed"] <= m["comm_time"] + 1e-12


def test_the_a100_ddp_rank_figures():
    """advisor's own figures for rank 0 of the two-rank DDP job (steps 4..6, all three kept; ns timestamps kept).
    HTA's for the same file are in docs/torch.md "How the figures compare with HTA"."""
    summary, m = _real(REAL[0])
    ms = pytest.approx

    assert m["step_count"] == 3 and m["total_time"] == ms(0.66722596, rel=1e-6)
    assert m["step_time_median"] == ms(0.222442191, rel=1e-6) and m["step_time_cv"] == ms(0.0117168, rel=1e-4)
    assert m["first_step_ratio"] == ms(1.0004975, rel=1e-6)
    assert m["device_busy_fraction"] == ms(0.2360520, rel=1e-6)
    assert m["compute_fraction"] == ms(0.1733384, rel=1e-6)
    assert m["device_busy_fraction"] - m["compute_fraction"] == ms(0.0627136, rel=1e-5)  # HTA's non-compute
    assert m["comm_overlap_fraction"] == ms(0.1560916, rel=1e-6)
    assert m["comm_exposed_fraction"] == ms(0.0592895, rel=1e-6)
    assert m["idle_host_wait_fraction"] == ms(0.7609503, rel=1e-6)
    assert m["idle_kernel_wait_fraction"] == ms(0.0029977, rel=1e-4)
    assert m["idle_other_fraction"] == 0.0
    assert (m["collective_count"], m["collective_bytes"]) == (21, 307_323_096)
    assert m["memcpy_dtod_bytes"] == 307_323_096 and m["memcpy_htod_bytes"] == 0
    assert (m["kernel_count"], m["launch_count"], m["short_kernel_count"]) == (2700, 3777, 1027)
    assert m["launch_delay_median"] == ms(12.786e-6, rel=1e-3)
    assert (m["queue_length_max"], m["sync_count"], m["sync_per_step"]) == (11, 24, 8)
    assert m["occupancy_mean"] == ms(0.6902737, rel=1e-6)  # NCCL kernels and CUPTI's 0 (no estimate) left out
    assert (m["rank"], m["world_size"]) == (0, 2)
    assert [k for k, _ in summary.breakdown("steps").rows] == ["4", "5", "6"]
    assert summary.breakdown("kernel_classes").rows[0][0] == "Communication"
    assert summary.breakdown("top_kernels").rows[0][0].startswith("ncclKernel_AllReduce_RING_LL_Sum_float")


def test_the_mtia_trace_waits_are_not_busy_time():
    _, m = _real(REAL[3])
    assert m["device_busy_fraction"] == pytest.approx(0.917402, rel=1e-5)  # HTA counts event_wait: 95.7 %
    assert m["kernel_count"] == 1265  # 1313 device events, 48 of them event_wait


def test_the_cpu_only_trace():
    summary, m = _real(REAL[4])
    assert all(m[k] is None for k in DEVICE_METRICS)
    assert (m["step_count"], m["rank"], m["world_size"]) == (1, 34, 300)
    assert summary.breakdown("steps").rows[0][0] == "551"
