"""Issue 23, Nsight Compute's time budget: the bounds the pack declares (rules/ncu/metrics.yaml `bounds:`) and
the estimates they cap, through the real pack and engine (derive + evaluate), and on the bundled A100 sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor import kinds
from advisor.api import AnalyzeOptions, analyze
from advisor.core.model import Profile, SourceInfo
from advisor.engine.budget import bound_values, claimed_together
from advisor.engine.evaluate import Selection, evaluate
from advisor.kinds.base import LoadOptions
from advisor.metrics.derive import derive
from advisor.metrics.hardware import resolve
from advisor.packs.load import load_packs
from advisor.profilers.ncu.verdicts import verdicts

NCU = kinds.get("ncu")
RULESET = load_packs(kind=NCU.name)

# ncu's Tail Effect example: an H800, 1,056 blocks of 256 threads at 6 blocks per SM on 132 SMs = 1.33 waves
H800_TAIL = {"grid_size": 1056, "sm_count": 132, "block_size": 256, "block_limit_registers": 6,
             "block_limit_shared_mem": 32, "block_limit_warps": 8, "block_limit_sm": 32}


def analyse(values: dict, cc: str = "9.0"):
    profile = Profile(SourceInfo("issue-23", "test", "test"), values, {"compute_capability": cc}, kind=NCU.name)
    hw = resolve(NCU, {**profile.values, **profile.info}, None)
    metrics = derive(profile, hw, RULESET)
    return evaluate(RULESET, metrics, hw, Selection())


def finding(result, name: str):
    return next(f for f in result.findings if f.name == name)


def bounds(result) -> dict[str, float | None]:
    return bound_values(result.bounds)


def test_the_pack_declares_the_five_bounds_with_their_formulas():
    declared = {b.name: b.recoverable.text for b in RULESET.bounds if b.pack == "ncu"}
    assert declared == {"partial_wave": "partial_wave_recoverable",
                        "compute_busy": "1 - compute_throughput_percent",
                        "memory_busy": "1 - memory_throughput_percent",
                        "l2_dram_floor": "1 - max_known(dram_floor_time / total_time, dram_throughput_percent, "
                                         "l2_throughput_percent)",
                        "latency_room": "busiest_unit_idle_percent"}


def test_tail_effect_keeps_ncus_formula_and_is_capped_by_the_partial_wave():
    """1.33 waves: ncu's estimate 1 / (1 + 1) = 50 % is the last wave's share of the time, but spreading the same
    blocks over whole waves takes 1.33 of 2 waves' time: at most 1 - 1.33 / 2 = 33.33 % comes back."""
    result = analyse({**H800_TAIL, "compute_throughput_percent": 0.30, "memory_throughput_percent": 0.40})
    assert bounds(result)["partial_wave"] == pytest.approx(1 - (1056 / 792) / 2)
    tail = finding(result, "tail-effect")
    assert tail.estimated_speedup == pytest.approx(1 / 3)  # fraction of the kernel's time
    assert tail.bound == "partial_wave"
    assert tail.claim == "partial-wave"


def test_tail_effect_at_busy_memory_is_capped_by_the_memory_busy_time():
    """The same launch with memory 90 % busy: filling the last wave moves the same bytes, 10 % at most."""
    result = analyse({**H800_TAIL, "compute_throughput_percent": 0.30, "memory_throughput_percent": 0.90})
    tail = finding(result, "tail-effect")
    assert tail.estimated_speedup == pytest.approx(0.10)
    assert tail.bound == "memory_busy"


def test_below_one_wave_the_partial_wave_is_the_empty_block_slots():
    """64 blocks on 108 SMs at 1 block per SM: W = 0.593, so 40.74 % of the slots stay empty; small-grid's ncu
    estimate (108 - 64) / 108 = 40.74 % is within it and stands."""
    result = analyse({"grid_size": 64, "sm_count": 108, "block_size": 1024, "block_limit_registers": 1,
                      "block_limit_shared_mem": 32, "block_limit_warps": 2, "block_limit_sm": 32,
                      "compute_throughput_percent": 0.02, "memory_throughput_percent": 0.05}, cc="8.0")
    assert bounds(result)["partial_wave"] == pytest.approx(1 - 64 / 108)
    grid = finding(result, "small-grid")
    assert grid.estimated_speedup == pytest.approx(44 / 108)
    assert grid.capped_by == ("partial_wave", "compute_busy", "memory_busy")


def test_memory_side_fixes_are_capped_by_the_compute_busy_time_and_bank_conflicts_by_the_l2_dram_floor():
    """Bank conflicts on 90 % of wavefronts with L1/TEX 80 % busy: ncu says 72 %. The SMs are 40 % busy (cap 60 %)
    and the kernel moves 60 us of DRAM bytes at peak in 100 us (cap 40 %): the fix moves the same DRAM bytes."""
    result = analyse({"smem_load_bank_conflicts": 9.0e6, "smem_load_wavefronts": 1.0e7, "l1tex_throughput_percent": 0.8,
                      "compute_throughput_percent": 0.40, "memory_throughput_percent": 0.80, "total_time": 100e-6,
                      "dram_bandwidth": 1.2e12, "dram_throughput_percent": 0.60})
    assert bounds(result)["compute_busy"] == pytest.approx(0.60)
    assert bounds(result)["l2_dram_floor"] == pytest.approx(0.40)
    conflicts = finding(result, "shared-memory-bank-conflicts")
    assert conflicts.estimated_speedup == pytest.approx(0.40)
    assert conflicts.bound == "l2_dram_floor"


def test_bank_conflicts_on_the_sample_attention_kernel_cannot_beat_its_l2_busy_time():
    """Launch 2 of the A100 sample: ncu says 57.38 % (93.75 % of wavefronts x L1/TEX 61.2 %), but L2 is 68.9 %
    busy and its traffic stays: at most 31.10 % comes back."""
    a = analyze(SAMPLES / "ncu_multi_kernel" / "details.csv", AnalyzeOptions(load=LoadOptions(entry="2")))
    conflicts = next(f for f in a.findings if f.name == "shared-memory-bank-conflicts")
    assert conflicts.estimated_speedup == pytest.approx(1 - 0.689)
    assert conflicts.bound == "l2_dram_floor"


def test_compute_side_fixes_are_capped_by_the_memory_busy_time():
    """Divergence at 12 of 32 lanes with SM throughput 80 %: ncu says 50 %; memory is 70 % busy, so 30 % at most."""
    result = analyse({"active_threads_per_warp": 12, "predicated_on_threads_per_warp": 12,
                      "compute_throughput_percent": 0.80, "memory_throughput_percent": 0.70})
    divergence = finding(result, "thread-divergence")
    assert divergence.estimated_speedup == pytest.approx(0.30)
    assert divergence.bound == "memory_busy"


def test_an_unavailable_bound_caps_nothing():
    """No memory throughput in the profile: memory_busy is unavailable (never 0 %), and ncu's estimate stands."""
    result = analyse({"active_threads_per_warp": 12, "predicated_on_threads_per_warp": 12,
                      "compute_throughput_percent": 0.80})
    assert bounds(result)["memory_busy"] is None
    divergence = finding(result, "thread-divergence")
    assert divergence.estimated_speedup == pytest.approx((1 - 12 / 32) * 0.80)
    assert divergence.bound == ""


def test_the_occupancy_and_stall_estimates_share_the_issue_slots_they_are_capped_by():
    """ncu turns occupancy and stall estimates global through IssueSlotUtilization: each is min(issue-slot
    estimate, its own), all a claim on the same empty issue slots, so together they count once (38 %, not 76 %)."""
    result = analyse({"issue_active_per_scheduler": 0.30, "compute_throughput_percent": 0.41,
                      "memory_throughput_percent": 0.62, "stall_long_scoreboard": 40.0,
                      "warp_cycles_per_issued_instruction": 50.0, "theoretical_occupancy_percent": 1.0,
                      "achieved_occupancy_percent": 0.40})
    stalls, gap = finding(result, "long-scoreboard-stalls"), finding(result, "achieved-occupancy-gap")
    assert stalls.global_speedup == pytest.approx(0.38) and gap.global_speedup == pytest.approx(0.38)
    assert stalls.claim == gap.claim == "issue-slots"
    # the empty issue slots count once (38 %, not 76 %); memory's 21-point lead over compute is no time (issue 36:
    # a throughput gap only caps the causes below memory-bound, it claims nothing of its own)
    assert claimed_together(result.findings, bounds(result)) == pytest.approx(0.38)
    assert finding(result, "memory-bound").estimated_speedup is None


@pytest.fixture(scope="module")
def add_bias_residual():
    """Launch 4 of the A100 sample: 1.20 waves, DRAM 64.2 % busy."""
    return analyze(SAMPLES / "ncu_multi_kernel" / "details.csv", AnalyzeOptions(load=LoadOptions(entry="4")))


def test_sample_tail_effect_is_capped_and_the_verdict_table_still_shows_ncus_estimate(add_bias_residual):
    a = add_bias_residual
    values = bound_values(a.bounds)
    assert values["partial_wave"] == pytest.approx(1 - 1.2 / 2)
    tail = next(f for f in a.findings if f.name == "tail-effect")
    assert tail.estimated_speedup == pytest.approx(values["memory_busy"]) and tail.bound == "memory_busy"
    row = next(v for v in verdicts(a) if v.vendor is not None and "tail-effect" in {f.name for f in v.ours})
    assert row.vendor.speedup == pytest.approx(0.50)  # ncu's own figure, shown as ncu gave it
    assert "ncu 50.00 % global" in row.note and tail.estimated_speedup < row.vendor.speedup


def test_the_bounds_reach_the_analysis_json_with_their_inputs(add_bias_residual):
    by_name = {b.name: b for b in add_bias_residual.bounds}
    assert set(by_name) >= {"partial_wave", "compute_busy", "memory_busy", "l2_dram_floor"}
    assert by_name["memory_busy"].inputs["memory_throughput_percent"].unit == "fraction"
    assert by_name["l2_dram_floor"].inputs["dram_floor_time"].unit == "s"
    assert Path(add_bias_residual.source.path).name == "details.csv"
