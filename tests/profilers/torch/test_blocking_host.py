"""Issue 34, class 2: the host blocked in a copy. A TorchRec-shaped step blocks ~150 ms in the cudaMemcpyAsync of a
704-byte device-to-pageable copy (aten::to inside ## sparse_data_dist ##) while the device sits in a 64 ms gap
with the copy already queued (HTA's "other" idle). Blocking is measured by the call's host time, given to one
owner (blocking-copy), bounded by the idle it leaves, and the operator stack it sits in is named."""

from __future__ import annotations

import json

import pytest

from advisor.kinds.base import LoadOptions

STEP = 250_000.0  # µs
STEPS = 3


def _x(cat: str, name: str, ts: float, dur: float, tid: int = 1, pid: int = 1, **args) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def _torchrec_trace() -> dict:
    events, corr = [], 100

    def launch(call: float, start: float, dur: float) -> None:
        nonlocal corr
        corr += 1
        events.append(_x("cpu_op", "aten::mm", call - 2, 8, **{"External id": corr}))
        events.append(_x("cuda_runtime", "cudaLaunchKernel", call, 5, correlation=corr, **{"External id": corr}))
        events.append(_x("kernel", "ampere_sgemm_128x64_nn", start, dur, pid=0, tid=7, device=0, stream=7,
                         correlation=corr, **{"External id": corr}))

    for k in range(STEPS):
        base = 1_000.0 + k * STEP
        events.append(_x("user_annotation", f"ProfilerStep#{k}", base, STEP))
        for i in range(4):  # the forward: kernels queued ahead, the device busy to 96 ms
            launch(base + 100 + 10 * i, base + 1_000 + 23_750 * i, 23_750)
        # the sparse features' lengths copied back to the host: a pageable destination, the host blocked 150 ms
        events.append(_x("user_annotation", "## sparse_data_dist ##", base + 5_000, 157_000))
        events.append(_x("cpu_op", "aten::to", base + 8_000, 152_500))
        events.append(_x("cpu_op", "aten::_to_copy", base + 8_100, 152_300))
        events.append(_x("cpu_op", "aten::copy_", base + 8_200, 152_100))
        corr += 1
        events.append(_x("cuda_runtime", "cudaMemcpyAsync", base + 10_000, 150_000, correlation=corr))
        events.append(_x("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", base + 159_946, 54, pid=0, tid=7,
                         device=0, stream=7, correlation=corr, bytes=704))
        for i in range(4):  # the rest of the step, launched once the host is released
            launch(base + 160_010 + 10 * i, base + 160_100 + 22_000 * i, 22_000)
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}],
            "distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": events}


@pytest.fixture(scope="module")
def analysis(analyse_trace):
    return analyse_trace("torchrec", _torchrec_trace())


def test_the_idle_is_other_idle_with_the_copy_queued(analysis):
    """The shape: the device waits ~64 ms a step with the copy already queued (HTA's "other")."""
    window = analysis.value("total_time")
    # and 0.98 ms a step in which launched kernels waited queued past the kernel-wait threshold (the forward's
    # first kernel 895 µs after its launch returned, the rest's 85 µs): other too, the copy's no part of it
    assert analysis.value("idle_other") == pytest.approx(STEPS * (0.063_946 + 0.000_980), rel=1e-3)
    assert analysis.value("idle_other") / window > 0.25
    assert analysis.value("pageable_copy_time") == pytest.approx(STEPS * 54e-6, rel=1e-6)  # the device time: tiny


def test_blocking_is_the_host_time_of_the_calls_that_block(analysis):
    assert analysis.value("blocking_copy_count") == STEPS
    assert analysis.value("blocking_copy_time") == pytest.approx(STEPS * 0.150, rel=1e-6)
    # the idle it causes: the device idle while the host is blocked, counted once (not host pace, not a sync's)
    assert analysis.value("blocking_copy_idle") == pytest.approx(STEPS * 0.063_946, rel=1e-3)
    assert analysis.value("sync_idle") == pytest.approx(0.0, abs=1e-9)


def test_the_blocked_copy_is_the_verdict_bounded_by_the_idle_it_leaves(analysis):
    findings = {f.name: f for f in analysis.findings}
    assert "blocking-copy" in findings, [f.name for f in analysis.findings]
    copy = findings["blocking-copy"]
    causes = [f for f in analysis.findings if f.root_cause]
    assert causes[0].name == "blocking-copy", [(f.name, f.estimated_speedup) for f in causes]
    # bounded by the idle it leaves, not the copies' device time nor the whole blocked time
    window = analysis.value("total_time")
    assert copy.estimated_speedup == pytest.approx(STEPS * 0.063_946 / window, rel=1e-3)
    assert "blocked in 3 copy calls" in copy.message and "450 ms" in copy.message
    # the stack it sits in, named in the finding (a fact of the trace, quoted by the pack's term)
    assert ("the longest call in ## sparse_data_dist ## > aten::to > aten::_to_copy > aten::copy_ > "
            "cudaMemcpyAsync") in copy.message


def test_the_facts_a_finding_quotes_survive_a_saved_analysis(analysis, tmp_path):
    """A saved analysis keeps the trace's facts, so a report or overview drawn from it says the same words."""
    from advisor.api import load_analysis
    from advisor.core import serialize

    path = tmp_path / "torchrec.analysis.json"
    path.write_text(serialize.dumps(analysis))
    again = load_analysis(path)
    assert again.trace.facts["blocking_copy_stack"].startswith("## sparse_data_dist ##")
    assert [f.message for f in again.findings] == [f.message for f in analysis.findings]


def test_the_operator_stack_the_blocking_call_sits_in_is_named(tmp_path):
    from advisor.profilers.torch import adapters
    from advisor.profilers.torch.classes import knowledge
    from advisor.profilers.torch.host import blocking_stack

    path = tmp_path / "torchrec.json"
    path.write_text(json.dumps(_torchrec_trace()))
    (profile,) = adapters.load(path, LoadOptions())
    stack = blocking_stack(profile.trace, knowledge(), 0.0, float("inf"))
    assert stack == "## sparse_data_dist ## > aten::to > aten::_to_copy > aten::copy_ > cudaMemcpyAsync"


def test_a_synchronous_copy_blocks_and_a_copy_inside_a_sync_is_the_syncs():
    """cudaMemcpy (no Async) blocks whatever memory it copies; the copy of Tensor.item() is inside its sync."""
    import importlib.util
    from pathlib import Path

    from advisor.profilers.torch.events import summarize

    spec = importlib.util.spec_from_file_location("torch_builders", Path(__file__).with_name("builders.py"))
    builders = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builders)
    b = builders.TraceBuilder().step(1, 0, 1000).step(2, 1000, 1000)
    b.launch("gemm", 0, 5, 10, 100)
    b.copy(20, 400, 500, 10, 4096, direction="HtoD", api="cudaMemcpy")  # queued behind gemm, waits to 500
    b.cpu_op("aten::item", 1200, 300).runtime("cudaStreamSynchronize", 1210, 280)
    b.copy(1205, 290, 1480, 5, 4, direction="DtoH", pageable=1.0)  # the item's copy: the sync's
    b.launch("gemm", 1600, 5, 1610, 300)
    _, m = summarize(b.build())
    assert m["blocking_copy_count"] == 1  # the item's copy lies inside its sync
    assert m["blocking_copy_time"] == pytest.approx(400e-6)  # the item's copy lies inside its sync
    # the device idle 110 µs to 500 µs with the copy queued; the host blocked in it to 420 µs: 310 µs
    assert m["blocking_copy_idle"] == pytest.approx(310e-6)
