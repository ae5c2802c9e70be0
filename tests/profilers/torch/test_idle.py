"""Device idle time split by what ended each gap (HTA's idle-time categories, applied to the device's gaps so the
three sum to device_idle): host wait, kernel wait (under 30 µs with work queued), other. Times in µs, metrics s."""

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


def idle(b):
    _, m = summarize(b.build())
    return m


def step_with(b):
    return b.step(1, 0, 100)


def test_two_kernels_with_a_10us_gap_launched_late_are_10us_of_host_wait_in_the_gap():
    # A runs 10..30 µs; B's launch call starts at 35 µs, after A ended: nothing was queued for 10 µs (30..40)
    b = step_with(builders.TraceBuilder()).launch("A", 1, 4, 10, 20).launch("B", 35, 4, 40, 20)
    m = idle(b)
    # host wait: 0..10 (A queued at 1 µs, after the window opened), 30..40, and the tail 60..100 (nothing queued)
    assert m["idle_host_wait"] == us(10 + 10 + 40)
    assert m["idle_kernel_wait"] == 0.0 and m["idle_other"] == 0.0
    assert m["device_idle"] == us(60)
    assert m["idle_host_wait_fraction"] == pytest.approx(0.6)


def test_a_short_gap_with_the_next_kernel_already_queued_is_kernel_wait():
    # B is queued at 5 µs, long before A ends at 30 µs; the 10 µs gap is under the 30 µs threshold
    b = step_with(builders.TraceBuilder()).launch("A", 1, 2, 10, 20).launch("B", 5, 2, 40, 60)
    m = idle(b)
    assert m["idle_kernel_wait"] == us(10)
    assert m["idle_host_wait"] == us(10)  # 0..10 before A, queued at 1 µs
    assert m["idle_other"] == 0.0


def test_a_long_gap_with_work_queued_is_other():
    # B queued at 5 µs but starts 40 µs after A ends (waiting on an event, another stream, …)
    b = step_with(builders.TraceBuilder()).launch("A", 1, 2, 10, 20).launch("B", 5, 2, 70, 30)
    m = idle(b)
    assert m["idle_other"] == us(40)
    assert m["idle_kernel_wait"] == 0.0
    assert m["idle_host_wait"] + m["idle_kernel_wait"] + m["idle_other"] == pytest.approx(m["device_idle"])


def test_the_threshold_is_strict_a_30us_gap_with_work_queued_is_other():
    b = step_with(builders.TraceBuilder()).launch("A", 1, 2, 10, 20).launch("B", 5, 2, 60, 40)
    m = idle(b)
    assert m["idle_other"] == us(30) and m["idle_kernel_wait"] == 0.0


def test_a_kernel_whose_queuing_call_is_missing_is_never_host_wait():
    b = step_with(builders.TraceBuilder()).launch("A", 1, 2, 10, 20).kernel("B", 40, 60)  # no runtime call
    m = idle(b)
    assert m["idle_kernel_wait"] == us(10)  # 30..40: unknown queuing, short gap
    assert m["idle_host_wait"] == us(10)


def test_gaps_are_the_devices_not_a_streams_so_the_parts_sum_to_device_idle():
    # stream 7 runs 10..30 and 70..90; stream 8 runs 20..60: the device is idle only 0..10, 60..70 and 90..100
    b = step_with(builders.TraceBuilder())
    b.launch("a", 1, 2, 10, 20, stream=7).launch("b", 2, 2, 20, 40, stream=8).launch("c", 65, 2, 70, 20, stream=7)
    m = idle(b)
    assert m["device_idle"] == us(30)
    assert m["idle_host_wait"] == us(30)  # c queued at 65 µs, after the device went idle at 60 µs
    parts = m["idle_host_wait_fraction"] + m["idle_kernel_wait_fraction"] + m["idle_other_fraction"]
    assert parts == pytest.approx(m["device_idle_fraction"])


def test_a_device_wait_is_idle_time_not_work():
    # MTIA's event_wait (data/kernels.yaml device_waits) occupies the stream but does no work
    b = step_with(builders.TraceBuilder()).launch("A", 1, 2, 10, 20).kernel("event_wait", 30, 40)
    b.launch("B", 2, 2, 70, 30)
    m = idle(b)
    assert m["device_busy"] == us(50)
    assert m["kernel_count"] == 2
    assert m["idle_other"] == us(40)  # B was queued at 2 µs: a long wait with work queued


def test_the_summary_gaps_are_the_longest_idle_gaps_in_the_window():
    b = step_with(builders.TraceBuilder()).launch("A", 1, 4, 10, 20).launch("B", 35, 4, 40, 20)
    summary, _ = summarize(b.build())
    # longest first, the window's head and tail among them (of equal ones the later first)
    assert [(g.start, g.duration) for g in summary.gaps] == [(us(60), us(40)), (us(30), us(10)), (0.0, us(10))]
    idle_table = summary.breakdown("idle_breakdown")
    assert [k for k, _ in idle_table.rows] == ["host wait", "kernel wait", "other"]
    assert idle_table.value("host wait", "time") == us(60)
    assert idle_table.value("host wait", "share") == pytest.approx(0.6)
