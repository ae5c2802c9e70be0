"""The analysed window and the step figures: every complete ProfilerStep#N from the first step's start to the last
step's end (the last step kept, unlike HTA's default), else the trace's span. Times given in µs, metrics in s."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from advisor.profilers.torch.classes import knowledge
from advisor.profilers.torch.events import summarize
from advisor.profilers.torch.window import window

_spec = importlib.util.spec_from_file_location("torch_builders", Path(__file__).with_name("builders.py"))
builders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builders)
US = 1e-6  # s per µs


def us(value):
    return pytest.approx(value * US, rel=1e-9, abs=1e-15)


def three_steps():
    """Steps #3 [10, 110), #4 [110, 200), #5 [200, 300) µs inside a trace from 0 to 400 µs."""
    b = builders.TraceBuilder()
    b.step(3, 10, 100).step(4, 110, 90).step(5, 200, 100)
    b.cpu_op("aten::empty", 0, 5).cpu_op("aten::empty", 390, 10)
    return b


def test_the_window_runs_from_the_first_step_start_to_the_last_step_end_and_keeps_the_last_step():
    _, m = summarize(three_steps().build())
    assert m["total_time"] == us(290)  # 10 .. 300 µs: the last step (#5) is in
    assert m["trace_span"] == us(400)
    assert m["step_count"] == 3
    assert m["step_time_median"] == us(100)
    assert m["step_time_mean"] == us(290 / 3)
    assert (m["step_time_max"], m["step_time_min"]) == (us(100), us(90))
    assert m["step_time_cv"] == pytest.approx(np.std([100, 90, 100], ddof=1) / (290 / 3))


def test_the_first_step_is_compared_with_the_median_of_the_others():
    _, m = summarize(three_steps().build())
    assert m["first_step_time"] == us(100)
    assert m["first_step_ratio"] == pytest.approx(100 / 95)  # median of #4 and #5: 95 µs
    assert m["warmup_fraction"] == pytest.approx((100 - 95) / 290)  # 5 µs excess of a 290 µs window


def test_a_first_step_faster_than_the_others_has_no_warmup_excess():
    b = builders.TraceBuilder().step(1, 0, 50).step(2, 50, 100).step(3, 150, 100)
    _, m = summarize(b.build())
    assert m["first_step_ratio"] == pytest.approx(0.5)
    assert m["warmup_fraction"] == 0.0


def test_under_three_steps_spread_and_warmup_are_unavailable():
    b = builders.TraceBuilder().step(1, 0, 80).step(2, 80, 20)
    _, m = summarize(b.build())
    assert m["step_count"] == 2
    assert m["step_time_median"] == us(50)
    assert m["step_time_cv"] is None and m["first_step_ratio"] is None and m["warmup_fraction"] is None


def test_without_steps_the_window_is_the_span_and_step_metrics_are_unavailable():
    b = builders.TraceBuilder().cpu_op("aten::mm", 5, 10).launch("gemm", 6, 2, 20, 30)
    summary, m = summarize(b.build())
    assert m["total_time"] == us(45) and m["trace_span"] == us(45)  # 5 µs (first start) .. 50 µs (last end)
    assert m["step_count"] == 0
    assert all(m[k] is None for k in ("step_time_median", "step_time_mean", "step_time_max", "step_time_min",
                                      "step_time_cv", "first_step_time", "first_step_ratio", "warmup_fraction"))
    assert any("ProfilerStep" in w for w in summary.warnings)
    assert summary.breakdown("steps") is None


def test_a_step_number_seen_twice_keeps_its_longest_annotation_and_other_marks_are_not_steps():
    b = builders.TraceBuilder().step(7, 0, 40).step(7, 0, 100).step(8, 100, 50)
    b.annotation("ProfilerStep#x", 0, 500).annotation("## forward ##", 0, 600)
    w = window(b.build(), knowledge())
    assert w.numbers.tolist() == [7, 8]
    assert (w.start, w.end) == (0.0, 150_000.0)  # ns


def test_the_steps_table_gives_each_steps_duration_device_busy_share_idle_and_kernels():
    b = builders.TraceBuilder().step(1, 0, 100).step(2, 100, 100)
    b.launch("k1", 1, 2, 10, 30).launch("k2", 3, 2, 90, 20)  # k2 runs 10 µs in step 1, 10 µs in step 2
    b.launch("k3", 101, 2, 150, 50)
    summary, _ = summarize(b.build())
    steps = summary.breakdown("steps")
    assert [key for key, _ in steps.rows] == ["1", "2"]
    assert steps.value("1", "duration") == us(100)
    assert steps.value("1", "busy_fraction") == pytest.approx(0.4)  # 30 + 10 µs of 100
    assert steps.value("1", "idle") == us(60)
    assert steps.value("1", "kernels") == 2  # kernels that started in the step
    assert steps.value("2", "busy_fraction") == pytest.approx(0.6)  # 10 + 50 µs
    assert steps.value("2", "kernels") == 1
