"""Issue 34, classes 2 and 4 on an SGLang-shaped decode step (HIP): four small kernels are queued at 0.1 ms behind a
hipStreamWaitEvent whose event the trace does not hold, the host then blocks 463 ms in a synchronous 256-byte
hipMemcpyWithStream, the kernels and the copy run at 463 ms, and one hipGraphLaunch replays the step busily.

- A synchronous copy call is a blocking call, not a launch: it is left out of the launch figures (it was counted as a
  463 ms launch and the trace called warm-up).
- A gap is host wait only until its ending work was queued: the device then waited with work queued ("other"), as
  HTA's idle breakdown would say of a gap that began after the work was queued.
- A copy that blocks the host owns the idle only where the device waits for that copy; here the device waits for
  kernels queued before it (for an event the trace does not hold) and the host waits for the device."""

from __future__ import annotations

import pytest

WAIT = 463_000.0  # µs: the stream's wait on an event the trace does not hold


def _x(cat: str, name: str, ts: float, dur: float, tid: int = 1, pid: int = 1, **args) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _decode_trace() -> dict:
    events = [_x("user_annotation", "step[DECODE bs=32]", 10.0, WAIT + 12_000),
              _x("cuda_runtime", "hipStreamWaitEvent", 60.0, 4, correlation=1)]
    corr = 10
    for i in range(4):  # queued right after the wait, run once the event fires
        corr += 1
        events += [_x("cpu_op", "aten::slice", 100 + 40 * i, 30),
                   _x("cuda_runtime", "hipLaunchKernel", 110 + 40 * i, 8, correlation=corr),
                   _x("kernel", "elementwise_kernel", WAIT + 5 * i, 4, pid=0, tid=1, device=0, stream=1,
                      correlation=corr)]
    corr += 1
    events += [_x("cpu_op", "aten::copy_", 290, WAIT - 200),
               _x("cuda_runtime", "hipMemcpyWithStream", 300, WAIT - 220, correlation=corr, size=256),
               _x("gpu_memcpy", "Memcpy DtoH (Device -> Host)", WAIT + 40, 5, pid=0, tid=1, device=0, stream=1,
                  correlation=corr, bytes=256)]
    corr += 1
    events.append(_x("cuda_runtime", "hipGraphLaunch", WAIT + 200, 60, correlation=corr))
    for i in range(300):  # the decode step's graph: 300 kernels back to back, 10 ms
        events.append(_x("kernel", "Cijk_Alik_Bljk_gemm", WAIT + 300 + 33.3 * i, 33.0, pid=0, tid=1, device=0,
                         stream=1, correlation=corr))
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X"}],
            "distributedInfo": {"rank": 0, "world_size": 1, "backend": "nccl"}, "traceEvents": events}


@pytest.fixture(scope="module")
def analysis(analyse_trace):
    return analyse_trace("decode", _decode_trace())


def test_a_synchronous_copy_call_is_not_a_launch(analysis):
    assert analysis.value("blocking_launch_count") >= 1
    assert analysis.value("launch_time_mean") < 100e-6  # the launches take microseconds; the copy is left out
    assert analysis.value("launch_time_total") < 1e-3


def test_a_gap_is_host_wait_only_until_its_work_was_queued(analysis):
    # the device waited ~463 ms with the four kernels queued at 0.11 ms: "other", not host wait
    assert analysis.value("idle_other") == pytest.approx(WAIT * 1e-6, rel=0.01)
    assert analysis.value("idle_host_wait") < 0.01 * analysis.value("idle_other")  # the head and tail only


def test_the_blocking_copy_owns_no_idle_it_did_not_cause(analysis):
    assert analysis.value("blocking_copy_time") == pytest.approx((WAIT - 220) * 1e-6, rel=1e-6)
    assert analysis.value("blocking_copy_idle") == pytest.approx(0.0, abs=1e-6)


def test_no_host_side_verdict_on_a_wait_the_trace_cannot_explain(analysis):
    wrong = {"warm-up-dominated", "host-bound", "launch-overhead", "blocking-copy", "sync-in-step"}
    fired = {f.name for f in analysis.findings if f.severity != "info"}
    assert not fired & wrong, fired
