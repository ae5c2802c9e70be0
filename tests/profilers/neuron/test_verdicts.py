"""Issue 23, Neuron part: verdicts that never contradict the numbers the same report prints.
One test per defect; each docstring quotes the numbers the defect showed."""

from pathlib import Path

import pytest
from tests_support import ROOT

from advisor.api import AnalyzeOptions, analyze
from advisor.report.findings import ranked_steps, root_causes, verdict
from advisor.report.render import render

SAMPLES = ROOT / "samples"
CATCH_ALL = "mfu-below-achievable"
NEURON = ["legacy_trace/profile.json", "multi_core/summary.json", "matmul_fragmented_dma/summary.json",
          "matmul_text/summary.txt", "weight_reload/summary.json", "weight_reload_fixed/summary.json",
          "sbuf_spill/summary.json", "compute_bound_tuned/summary.json", "mp2_energy/summary.json"]


def _analysis(name: str, context: Path | None = None):
    return analyze(SAMPLES / name, AnalyzeOptions(context=context) if context else AnalyzeOptions())


def _markdown(analysis) -> str:
    return render(analysis, "md", Path("report.md")).main.decode("utf-8")


def _findings(name: str) -> dict:
    return {f.name: f for f in _analysis(name).findings}


@pytest.mark.parametrize("name", ["legacy_trace/profile.json", "multi_core/summary.json"])
def test_catch_all_never_outranks_a_specific_cause(name):
    """legacy_trace: the verdict was `mfu-below-achievable` "up to 86.68 %", first step "Overlap DMA",
    while DMA is 96.07 % busy and `dma-wait` says ≤ 3.93 %. multi_core showed the same (56.16 %)."""
    a = _analysis(name)
    assert CATCH_ALL in [f.name for f in a.findings]
    assert all(f.name != CATCH_ALL for f in root_causes(a))  # specific causes explain it
    assert CATCH_ALL not in verdict(a).paragraph
    steps = ranked_steps(a)
    assert steps and f"`{root_causes(a)[0].name}`" in steps[0]
    assert not any(f"`{CATCH_ALL}`" in s for s in steps)  # a symptom's action stays under its finding


@pytest.mark.parametrize("name", NEURON)
def test_overlap_is_capped_by_the_busiest_unit_including_dma(name):
    """legacy_trace: overlapping DMA with compute was credited 86.68 % although DMA alone is busy
    96.07 % of the run: no overlap or pipeline fix can recover more than 1 − the busiest unit's
    (compute engine or DMA) active share."""
    a = _analysis(name)
    busiest = max(v for v in (a.value("busiest_compute_engine_active_time_percent"),
                              a.value("dma_active_time_percent")) if v is not None)
    for f in a.findings:
        if f.name in (CATCH_ALL, "dma-wait") and f.estimated_speedup is not None:
            assert f.estimated_speedup <= 1 - busiest + 1e-9, (f.name, f.estimated_speedup, busiest)


def test_perfect_pipeline_includes_dma():
    """legacy_trace: "perfect overlap could reach at most 4.33×, because the busiest compute engine is
    active 23.08 %" while DMA is active 96.07 %: the bound is 1.04× (DMA)."""
    text = _markdown(_analysis("legacy_trace/profile.json"))
    line = next(s for s in text.splitlines() if s.startswith("Perfect pipeline"))
    assert "1.04×" in line and "DMA" in line and "4.33×" not in line


@pytest.mark.parametrize("name", NEURON)
def test_same_bytes_fixes_are_capped_by_the_memory_floor(name):
    """matmul_fragmented_dma claimed 64.80 % (2.84×) against its own memory floor of 1.153 ms of 2.15 ms
    (46.4 %, 1.86×): fragmented or small DMA moves the same bytes, so it saves at most the time above
    bytes ÷ peak bandwidth."""
    a = _analysis(name)
    floor = a.value("ideal_memory_time") / a.value("total_time")
    for f in a.findings:
        if f.name in ("dma-fragmentation", "small-dma-payloads") and f.estimated_speedup is not None:
            assert f.estimated_speedup <= 1 - floor + 1e-9, (f.name, f.estimated_speedup, 1 - floor)


def test_fragmented_dma_estimate_is_the_time_above_the_memory_floor():
    """matmul_fragmented_dma: 64.80 % before; the memory floor leaves 46.4 %."""
    f = _findings("matmul_fragmented_dma/summary.json")["dma-fragmentation"]
    assert f.estimated_speedup == pytest.approx(0.464, abs=0.001)


def test_memory_bound_without_removable_bytes_is_capped_by_the_memory_floor():
    """matmul_text claimed 39.90 % against a memory floor of 1.175 ms of 1.714 ms (31.4 % above it),
    with weights read 1× and 0 B of spills: no bytes to cut, so the floor bounds the gain. Since issue 36 that
    31.4 % is only the ceiling of the waste rules below memory-bound, which claims no gain of its own."""
    a = _analysis("matmul_text/summary.txt")
    f = {x.name: x for x in a.findings}["memory-bound"]
    assert f.estimated_speedup is None and f.caps_only
    assert {b.name: b.value for b in a.bounds}["bytes_that_stay"] == pytest.approx(0.314, abs=0.001)


def test_byte_cutting_fixes_may_go_below_the_floor():
    """weight_reload reads weights 3.5×: cutting those bytes moves the floor itself, so its estimate
    (58.00 %) is not capped by the floor of today's bytes; the cap is the floor of the bytes left."""
    a = _analysis("weight_reload/summary.json")
    f = {x.name: x for x in a.findings}["weight-reload"]
    floor = a.value("ideal_memory_time") / a.value("total_time")
    assert f.estimated_speedup > 1 - floor


def test_a_met_condition_produces_no_step():
    """matmul_text's only step was "fewer reloads and spills" at a reload ratio of 1× and 0 B of
    spills; compute_bound_tuned asked for "near 90 % active" at 93.10 %."""
    text = " ".join(ranked_steps(_analysis("matmul_text/summary.txt")))
    assert "reloads" not in text and "spills" not in text
    text = " ".join(ranked_steps(_analysis("compute_bound_tuned/summary.json")))
    assert "near 90 % active" not in text


@pytest.mark.parametrize("name", NEURON)
def test_no_mfu_above_100_percent_is_called_an_allowance(name):
    """An MFU above 100 % ("MFU allows 274 %") is not an allowance: it says HBM is not the limit."""
    text = _markdown(_analysis(name))
    assert "MFU the arithmetic intensity allows" not in text
    assert "HBM traffic would allow" not in text


def test_a_slowdown_is_not_an_amdahl_limit():
    """The measured workload speedup was called "an Amdahl limit"; an Amdahl limit is a ceiling on
    speedup, and a measured result (or a slowdown) is not one."""
    text = _markdown(_analysis("mp2_energy/summary.json", ROOT / "samples/mp2_energy/investigation.yaml"))
    assert "is an Amdahl limit" not in text
    assert "Amdahl" in text and "1.54×" in text
