"""Launch statistics (each device event linked by correlation to the runtime call that queued it) and stream queue
lengths (events queued by a launch call and not yet finished). Times given in µs, metrics in s and counts."""

import importlib.util
from pathlib import Path

import pytest

from advisor.profilers.torch.events import summarize

_spec = importlib.util.spec_from_file_location("torch_builders", Path(__file__).with_name("builders.py"))
builders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builders)
US = 1e-6


def us(value):
    return pytest.approx(value * US, rel=1e-9, abs=1e-15)


def test_a_kernel_shorter_than_its_launch_call_is_short_and_the_delay_runs_from_call_start_to_kernel_start():
    b = builders.TraceBuilder().step(1, 0, 100)
    b.launch("tiny", 0, 5, 10, 2)  # 2 µs kernel, 5 µs call: short; delay 10 µs
    b.launch("big", 6, 5, 20, 20)  # 20 µs kernel: not short; delay 14 µs
    b.launch("mid", 12, 4, 40, 3)  # 3 µs kernel, 4 µs call: short; delay 28 µs
    _, m = summarize(b.build())
    assert m["launch_count"] == 3
    assert m["launch_time_total"] == us(14) and m["launch_time_mean"] == us(14 / 3)
    assert m["launch_delay_median"] == us(14)
    assert m["short_kernel_count"] == 2
    assert m["short_kernel_fraction"] == pytest.approx(2 / 3)


def test_copies_are_launches_but_only_kernels_are_judged_short():
    b = builders.TraceBuilder().step(1, 0, 100)
    b.launch("k", 0, 5, 10, 2)
    b.copy(20, 10, 40, 1, size=64)  # cudaMemcpyAsync (10 µs) queued a 1 µs copy
    _, m = summarize(b.build())
    assert m["launch_count"] == 2 and m["launch_time_total"] == us(15)
    assert m["short_kernel_count"] == 1 and m["short_kernel_fraction"] == 1.0


def test_a_copy_call_inside_a_sync_blocks_and_is_not_launch_overhead():
    # loss.item(): aten::item -> cudaMemcpyAsync to pageable memory, which waits 300 µs for the queued kernel
    b = builders.TraceBuilder().step(1, 0, 1000)
    b.launch("gemm", 0, 5, 10, 300)
    b.cpu_op("aten::item", 20, 320).copy(25, 310, 312, 2, size=4, direction="DtoH")
    _, m = summarize(b.build())
    assert m["launch_count"] == 1 and m["launch_time_total"] == us(5) and m["launch_time_mean"] == us(5)
    assert m["blocking_launch_count"] == 1
    assert m["sync_time"] == us(320)  # the blocked time is the sync's, counted once


def test_a_copy_call_that_queued_a_pageable_copy_blocks_and_is_not_launch_overhead():
    b = builders.TraceBuilder().step(1, 0, 1000)
    b.launch("gemm", 0, 5, 10, 20)
    b.copy(40, 200, 45, 190, size=64 << 20, pageable=1.0)  # the host waits for the staged 64 MiB copy
    b.copy(300, 8, 310, 5, size=4096)  # a pinned copy: a launch like any other
    _, m = summarize(b.build())
    assert m["launch_count"] == 2 and m["launch_time_total"] == us(13)
    assert m["blocking_launch_count"] == 1
    assert m["pageable_copy_time"] == us(190)


def test_a_kernel_started_by_a_graph_launch_is_not_judged_against_the_call():
    # cudaGraphLaunch queues a whole graph: no kernel is "its" kernel (data/kernels.yaml leaves it out of launches)
    b = builders.TraceBuilder().step(1, 0, 100)
    b.launch("g1", 5, 30, 40, 2, api="cudaGraphLaunch")
    _, m = summarize(b.build())
    assert m["launch_count"] == 0 and m["launch_time_mean"] is None
    assert m["short_kernel_count"] is None and m["launch_delay_median"] is None
    # but the call still says when the work was queued: 5 µs, after the window opened at 0
    assert m["idle_host_wait"] == us(40 + 58)


def test_launches_outside_the_window_are_not_counted():
    b = builders.TraceBuilder().step(1, 10, 90)
    b.launch("before", 0, 5, 20, 10).launch("inside", 15, 5, 40, 10).launch("after", 100, 5, 110, 10)
    _, m = summarize(b.build())
    assert m["launch_count"] == 1  # calls starting in [10, 100) µs
    assert m["kernel_count"] == 2  # kernels with time in the window: before (20..30) and inside (40..50)


def test_the_queue_counts_events_from_their_launch_call_to_their_end():
    # three kernels queued at 0, 1 and 2 µs run back to back 10..40 µs: the queue is 1, 2, 3, 3, 2, 1, 0
    b = builders.TraceBuilder().step(1, 0, 50)
    b.launch("a", 0, 1, 10, 10).launch("b", 1, 1, 20, 10).launch("c", 2, 1, 30, 10)
    summary, m = summarize(b.build())
    assert m["queue_length_max"] == 3
    assert m["queue_length_mean"] == pytest.approx((1 * 1 + 2 * 1 + 3 * 18 + 2 * 10 + 1 * 10) / 50)
    streams = summary.breakdown("streams")
    assert streams.rows[0][0] == "device 0 stream 7"
    assert streams.value("device 0 stream 7", "max_queue") == 3
    assert streams.value("device 0 stream 7", "busy") == us(30)
    assert streams.value("device 0 stream 7", "kernels") == 3


def test_queues_are_per_stream_the_maximum_over_streams_is_reported():
    b = builders.TraceBuilder().step(1, 0, 100)
    b.launch("a", 0, 1, 10, 50, stream=7).launch("b", 1, 1, 20, 10, stream=8).launch("c", 2, 1, 30, 10, stream=8)
    summary, m = summarize(b.build())
    assert m["queue_length_max"] == 2  # stream 8: b and c queued together; stream 7 never holds more than 1
    assert summary.breakdown("streams").value("device 0 stream 7", "max_queue") == 1
    # stream 7: 1 from 0 to 60 µs (0.6); stream 8: 1 at 1..2, 2 at 2..30, 1 at 30..40 → (1 + 56 + 10) / 100
    assert m["queue_length_mean"] == pytest.approx(0.67)
