"""Issue 23, Nsight Compute, second part: local memory beside global, stalls at saturation, and what a
`.ncu-rep` (or the raw page) holds by metric name. Through the real pack and engine (derive + evaluate)."""

from __future__ import annotations

import pytest
from tests_support import FIXTURES

from advisor import kinds
from advisor.core.model import SEVERITIES, Profile, SourceInfo
from advisor.engine.evaluate import Selection, evaluate
from advisor.kinds.base import LoadOptions
from advisor.metrics.derive import derive
from advisor.metrics.hardware import resolve
from advisor.packs.load import load_packs
from advisor.profilers.ncu.adapters import load

NCU = kinds.get("ncu")
RULESET = load_packs(kind=NCU.name)
REPORT = (FIXTURES / "ncu-examples"
          / "ncu_rep_T4_matrix_add2d_uncoalesced.ncu-rep")

# A hand-written SGEMM that spills (issue 23): 98.2 % of the L2 sectors its local and global instructions request
# are local; 80 % of its few global sectors are excess, so ncu's UncoalescedGlobalAccess says 70.58 % (the L2
# active ratio 0.88225 x 0.8). L2 is saturated and warps wait on local-memory results.
SGEMM_SPILLING = {
    "l2_local_sectors": 98_200_000, "l2_global_sectors": 1_800_000, "l2_global_excessive_sectors": 1_440_000,
    "l2_active_cycles_sum": 88_225, "l2_elapsed_cycles_sum": 100_000, "registers_per_thread": 255,
    "compute_throughput_percent": 0.21, "memory_throughput_percent": 0.92, "l2_throughput_percent": 0.92,
    "dram_throughput_percent": 0.31, "issue_active_per_scheduler": 0.12, "stall_long_scoreboard": 61.0,
    "stall_lg_throttle": 2.0, "warp_cycles_per_issued_instruction": 80.0,
}
# The T4 matrix add as its report holds it (no local memory): DRAM at 90.76 %, 80.9 % of stall cycles on long
# scoreboard, achieved occupancy 86.38 % of 100 %.
T4_SATURATED = {
    "compute_throughput_percent": 0.1735, "memory_throughput_percent": 0.9076, "dram_throughput_percent": 0.9076,
    "l2_throughput_percent": 0.3467, "issue_active_per_scheduler": 0.0727, "stall_long_scoreboard": 76.94,
    "warp_cycles_per_issued_instruction": 95.11, "theoretical_occupancy_percent": 1.0,
    "achieved_occupancy_percent": 0.8638,
}
STALLS = ("long-scoreboard-stalls", "lg-throttle-stalls", "math-pipe-throttle-stalls", "wait-stalls",
          "issue-slots-underused", "achieved-occupancy-gap", "latency-bound")


def analyse(values: dict, cc: str = "8.6", params: dict | None = None):
    profile = Profile(SourceInfo("issue-23", "test", "test"), values, {"compute_capability": cc}, kind=NCU.name)
    hw = resolve(NCU, {**profile.values, **profile.info}, None)
    metrics = derive(profile, hw, RULESET)
    return metrics, evaluate(RULESET, metrics, hw, Selection(params=params or {}))


def outcome(result, name: str) -> str:
    return next(o.outcome for o in result.outcomes if o.name == name)


def finding(result, name: str):
    return next(f for f in result.findings if f.name == name)


def rank(severity: str) -> int:
    return SEVERITIES.index(severity)


def assert_symptoms_below_their_causes(result, names):
    """Each named finding that fired is a symptom, and some root cause at least as severe explains it."""
    roots = [f for f in result.findings if f.root_cause]
    for f in result.findings:
        if f.name in names:
            assert not f.root_cause, f.name
            assert any(rank(r.severity) >= rank(f.severity) for r in roots), f.name


# ------------------------------------------------------------------ 1. local memory (register spills)
def test_spilling_sgemm_blames_local_memory_and_scales_the_uncoalesced_estimate():
    """Issue 23: 98 % of the SGEMM's L2 traffic was local memory, yet advisor blamed uncoalesced global stores
    (1.8 % of the traffic) for "up to 70.58 %". Now `local-memory-spills` is the root cause (high, estimate the
    local share of L2 activity: 0.88225 x 0.982 = 86.64 % of the time, capped at 79 % because removing spills
    leaves the SMs' 21 % busy time: the compute_busy bound) and the uncoalesced estimate counts its excess
    against all traffic: 70.58 % x 1.8 % = 1.27 %, no longer a memory-bound root cause."""
    metrics, result = analyse(SGEMM_SPILLING)
    assert metrics["local_memory_share"].value == pytest.approx(0.982)
    assert metrics["local_memory_share"].unit == "fraction"
    spills = finding(result, "local-memory-spills")
    assert spills.root_cause and spills.severity == "high"
    assert spills.estimated_speedup == pytest.approx(1 - 0.21)  # below its own formula, 0.88225 x 0.982
    assert spills.bound == "compute_busy"
    assert finding(result, "uncoalesced-global-access").estimated_speedup == pytest.approx(0.88225 * 0.8 * 0.018)
    assert outcome(result, "uncoalesced-memory-traffic") == "passed"
    assert_symptoms_below_their_causes(result, (*STALLS, "memory-bound", "l2-bound", "memory-saturated"))
    assert result.findings[0].name == "local-memory-spills"


def test_local_share_from_l1_sectors_when_the_l2_split_is_missing():
    """An export with the memory tables' L1/TEX sectors only: 4.2 M local of 6.7 M sectors is 62.7 %."""
    metrics, result = analyse({"local_load_sectors": 3.0e6, "local_store_sectors": 1.2e6,
                               "global_load_sectors": 2.0e6, "global_store_sectors": 0.5e6})
    assert metrics["local_memory_share"].value == pytest.approx(4.2 / 6.7)
    assert outcome(result, "local-memory-spills") == "fired"


def test_without_local_figures_the_rule_is_not_applicable_and_ncus_estimate_stands():
    """No local counters: the spill rule cannot run (never "0 % local"), and the uncoalesced estimate stays
    Nsight Compute's own, 44.30 % on the T4 matrix add (0.886 x 375,000 / 750,000)."""
    metrics, result = analyse({"l2_global_excessive_sectors": 375_000, "l2_global_sectors": 750_000,
                               "l2_active_cycles_sum": 1_634_370, "l2_elapsed_cycles_sum": 1_844_672})
    assert metrics["local_memory_share"].value is None
    assert outcome(result, "local-memory-spills") == "not_applicable"
    assert finding(result, "uncoalesced-global-access").estimated_speedup == pytest.approx(0.4430, abs=5e-5)


# ------------------------------------------------------------------ 2. stalls are symptoms at saturation
def test_stalls_and_occupancy_are_symptoms_when_memory_is_saturated():
    """Issue 23: at DRAM 90.76 % `long-scoreboard-stalls` and `achieved-occupancy-gap` were listed as root causes
    beside the memory bound. At saturation they are what waiting on memory looks like: `memory-saturated`
    explains them, DRAM bandwidth is the root, and no symptom is more severe than it."""
    _, result = analyse(T4_SATURATED)
    assert outcome(result, "memory-saturated") == "fired"
    for name in ("long-scoreboard-stalls", "achieved-occupancy-gap", "issue-slots-underused"):
        assert outcome(result, name) == "fired"
    assert [f.name for f in result.findings if f.root_cause] == ["dram-bound"]
    assert_symptoms_below_their_causes(result, STALLS)


def test_below_saturation_the_stalls_stay_causes_and_the_threshold_is_a_param():
    """Memory-bound at 70 % has 30 % headroom that latency hiding can use: long-scoreboard stays a root cause.
    Lowering `memory-saturated.min_throughput` to 65 % makes it a symptom."""
    values = {**T4_SATURATED, "memory_throughput_percent": 0.70, "dram_throughput_percent": 0.70}
    _, result = analyse(values)
    assert outcome(result, "memory-saturated") == "passed"
    assert finding(result, "long-scoreboard-stalls").root_cause
    _, tuned = analyse(values, params={"memory-saturated.min_throughput": 0.65})
    assert not finding(tuned, "long-scoreboard-stalls").root_cause


def test_pipe_stalls_are_symptoms_when_compute_is_saturated():
    """SM at 92 % of peak with half the stall cycles on a busy math pipe: the saturated pipeline is the finding;
    more warps or ILP cannot run it faster."""
    _, result = analyse({"compute_throughput_percent": 0.92, "memory_throughput_percent": 0.30,
                         "issue_active_per_scheduler": 0.45, "stall_math_pipe_throttle": 6.0, "stall_wait": 4.0,
                         "warp_cycles_per_issued_instruction": 12.0})
    assert outcome(result, "compute-saturated") == "fired"
    assert outcome(result, "math-pipe-throttle-stalls") == "fired"
    assert_symptoms_below_their_causes(result, STALLS)
    assert {f.name for f in result.findings if f.root_cause} == {"compute-saturated"}


# ------------------------------------------------------------------ 3. what a report holds, by metric name
# The T4 report's own metric names and values (as `ncu -i report.ncu-rep --csv --page raw` prints them): FLOPs as
# rates per elapsed cycle, Mem Busy and Max Bandwidth as gpu__compute_memory_* throughputs, local memory beside
# global. 27.0548 FADD per cycle x 36,962 cycles = 1,000,000 adds (the 1000 x 1000 matrix).
RAW_T4 = """\
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",\
"dram__bytes_read.sum","dram__bytes_write.sum","gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",\
"gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum",\
"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",\
"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum","l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",\
"memory_l2_theoretical_sectors_global","memory_l2_theoretical_sectors_local",\
"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained","smsp__cycles_elapsed.avg",\
"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",\
"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",\
"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed"
"","","","","","","","","","","","byte","byte","%","%","nsecond","sector","sector","sector","sector","sectors",\
"sectors","inst/cycle","cycle","inst/cycle","inst/cycle","inst/cycle"
"0","1","cuda_example","h","matrix_addition2D(float *, float *, float *, int, int)","1","7","(16, 16, 1)",\
"(32, 63, 1)","0","7.5","14238976","4125568","34.66903601290635","90.75974190283401","67456","498906","250000",\
"0","0","750000","0","2560","36962","27.054813051241815","0","0"
"""


def _derived(profile):
    hw = resolve(NCU, {**profile.values, **profile.info}, None)
    return derive(profile, hw, RULESET)


def _check_t4_roofline_and_memory(metrics):
    assert metrics["fp32_flops"].value == pytest.approx(1.0e6)
    assert metrics["fp32_flops"].unit == "FLOP"
    assert metrics["arithmetic_intensity"].value == pytest.approx(1.0e6 / (14_238_976 + 4_125_568))
    assert metrics["fp32_peak_fraction"].value == pytest.approx(0.0053, abs=5e-5)  # ncu's SOLFPRoofline: 0.53 %
    assert metrics["mem_busy_percent"].value == pytest.approx(0.3467, abs=5e-5)
    assert metrics["max_bandwidth_percent"].value == pytest.approx(0.9076, abs=5e-5)
    assert metrics["local_memory_share"].value == 0


def test_raw_page_by_metric_name_gives_the_roofline_and_memory_figures(write):
    """Issue 23: a report's FLOP figures are rates and its Mem Busy / Max Bandwidth have no CSV label, so the roofline
    said "cannot be placed" and both rows "unavailable". By metric name: 1 MFLOP, 0.0545 FLOP/B, 0.53 % of the FP32
    peak (ncu's own figure, counted in the SMs' elapsed cycles), Mem Busy 34.67 %, Max Bandwidth 90.76 %."""
    [profile] = load(write("raw.csv", RAW_T4), LoadOptions())
    _check_t4_roofline_and_memory(_derived(profile))


def test_the_real_report_gives_the_roofline_memory_figures_and_symptoms():
    """The real T4 `.ncu-rep` through `ncu_report` (skipped where the optional package is absent, as in CI)."""
    pytest.importorskip("ncu_report")
    if not REPORT.exists():
        pytest.skip("the reference report is not beside the project")
    [profile] = load(REPORT, LoadOptions())
    metrics = _derived(profile)
    _check_t4_roofline_and_memory(metrics)
    result = evaluate(RULESET, metrics, resolve(NCU, {**profile.values, **profile.info}, None))
    assert outcome(result, "local-memory-spills") == "passed"
    assert finding(result, "uncoalesced-memory-traffic").root_cause
    assert finding(result, "uncoalesced-memory-traffic").estimated_speedup == pytest.approx(0.4430, abs=5e-5)
    assert_symptoms_below_their_causes(result, STALLS)
