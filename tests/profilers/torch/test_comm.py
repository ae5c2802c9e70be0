"""Compute, communication and memory operations on the device (unions in the window), their overlap, and the
collectives and bytes the host asked for. Times given in µs, metrics in s, bytes, counts and fractions."""

import importlib.util
from pathlib import Path

import pytest

from advisor.profilers.torch.events import summarize

_spec = importlib.util.spec_from_file_location("torch_builders", Path(__file__).with_name("builders.py"))
builders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builders)
US = 1e-6
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"


def us(value):
    return pytest.approx(value * US, rel=1e-9, abs=1e-15)


def test_communication_half_hidden_behind_compute():
    # compute 0..100 µs on stream 7, an all-reduce 50..150 µs on stream 40, window 0..200 µs
    b = builders.TraceBuilder().step(1, 0, 200)
    b.kernel("ampere_sgemm_128x64_nn", 0, 100).kernel(NCCL, 50, 100, stream=40)
    _, m = summarize(b.build())
    assert m["compute_time"] == us(100) and m["comm_time"] == us(100)
    assert m["comm_overlap_fraction"] == pytest.approx(0.5)  # HTA's comp_comm_overlap_ratio
    assert m["comm_exposed"] == us(50) and m["comm_exposed_fraction"] == pytest.approx(0.25)
    assert m["compute_fraction"] == pytest.approx(0.5) and m["comm_fraction"] == pytest.approx(0.5)
    assert m["device_busy"] == us(150)


def test_without_communication_the_overlap_share_is_unavailable_and_times_are_zero():
    b = builders.TraceBuilder().step(1, 0, 100).kernel("ampere_sgemm_128x64_nn", 0, 10)
    _, m = summarize(b.build())
    assert m["comm_time"] == 0.0 and m["comm_exposed"] == 0.0
    assert m["comm_overlap_fraction"] is None


def test_collectives_come_from_record_param_comms_without_its_waits():
    b = builders.TraceBuilder().step(1, 0, 100).kernel(NCCL, 10, 10)
    b.cpu_op("record_param_comms", 1, 2, collective="allreduce", message_bytes=1000)
    b.cpu_op("record_param_comms", 3, 2, collective="broadcast", message_bytes=3000)
    b.cpu_op("record_param_comms", 5, 2, collective="wait", message_bytes=1)  # c10d's wait on a work object
    b.cpu_op("record_param_comms", 150, 2, collective="allreduce", message_bytes=5000)  # after the window
    _, m = summarize(b.build())
    assert m["collective_count"] == 2
    assert m["collective_bytes"] == 4000


def test_without_record_param_comms_collectives_are_the_process_groups_marks_and_bytes_are_unknown():
    b = builders.TraceBuilder().step(1, 0, 100)
    b.annotation("nccl:all_reduce", 5, 10).annotation("nccl:broadcast", 30, 10).annotation("## forward ##", 0, 50)
    b.kernel(NCCL, 10, 10)
    _, m = summarize(b.build())
    assert m["collective_count"] == 2 and m["collective_bytes"] is None


def test_without_host_records_collectives_are_the_communication_kernels():
    b = builders.TraceBuilder().step(1, 0, 100).kernel(NCCL, 10, 10).kernel(NCCL, 30, 10).kernel("gemm", 50, 5)
    _, m = summarize(b.build())
    assert m["collective_count"] == 2 and m["collective_bytes"] is None


def test_copies_by_direction_pageable_copies_and_memory_time_with_no_kernel_running():
    b = builders.TraceBuilder().step(1, 0, 200)
    b.kernel("ampere_sgemm_128x64_nn", 0, 50)
    b.memcpy(40, 20, 1_000_000, "HtoD", pageable=1.0)  # 10 µs under the kernel, 10 µs exposed
    b.memcpy(100, 10, 2048, "DtoH")
    b.memcpy(120, 5, 4096, "DtoD").memset(130, 5, 512)
    _, m = summarize(b.build())
    assert (m["memcpy_htod_bytes"], m["memcpy_dtoh_bytes"], m["memcpy_dtod_bytes"]) == (1_000_000, 2048, 4096)
    assert m["memory_op_time"] == us(40)
    assert m["memory_op_exposed"] == us(30) and m["memory_op_exposed_fraction"] == pytest.approx(0.15)
    assert m["pageable_copy_count"] == 1 and m["pageable_copy_time"] == us(20)
    assert m["pageable_copy_fraction"] == pytest.approx(0.1)
    assert m["compute_time"] == us(50)  # copies and sets are not compute


def test_no_copies_is_zero_bytes_but_copies_of_unknown_size_are_unavailable():
    b = builders.TraceBuilder().step(1, 0, 100).kernel("gemm", 0, 10)
    _, m = summarize(b.build())
    assert m["memcpy_htod_bytes"] == 0.0 and m["pageable_copy_count"] == 0
    b.memcpy(20, 5, float("nan"), "HtoD")
    _, m = summarize(b.build())
    assert m["memcpy_htod_bytes"] is None and m["memcpy_dtoh_bytes"] == 0.0
