"""Issue 23, Nsight Compute: verdicts that never contradict the numbers the same report prints.

One test per defect, through the real pack and engine (derive + evaluate) on launch figures shaped like
the real reports in ../shared/reference (nsight-compute-rules.md §2.1)."""

from __future__ import annotations

import pytest

from advisor import kinds
from advisor.core.model import Profile, SourceInfo
from advisor.engine.evaluate import evaluate
from advisor.metrics.derive import derive
from advisor.metrics.hardware import resolve
from advisor.packs.load import load_packs

NCU = kinds.get("ncu")
RULESET = load_packs(kind=NCU.name)

# RTX 3080 hand-written SGEMM (AshunFeiyu/Cuda_Gemm_Practice gemm_v9): grid 275 on 68 SMs, 5 blocks per SM fit,
# so 0.81 waves — 4 blocks on every SM — while DRAM runs at 79.7 % of peak
GEMM_3080 = {
    "grid_size": 275, "sm_count": 68, "block_size": 256, "registers_per_thread": 40,
    "block_limit_registers": 6, "block_limit_shared_mem": 5, "block_limit_warps": 6, "block_limit_sm": 16,
    "compute_throughput_percent": 0.036, "memory_throughput_percent": 0.797, "dram_throughput_percent": 0.797,
    "l2_throughput_percent": 0.405, "theoretical_occupancy_percent": 0.8333, "achieved_occupancy_percent": 0.644,
}
# multi_kernel sample's cuBLAS GEMM: registers and shared memory both allow exactly 1 block of 256 threads per SM
GEMM_TIED = {
    "grid_size": 432, "sm_count": 108, "block_size": 256, "registers_per_thread": 232,
    "block_limit_registers": 1, "block_limit_shared_mem": 1, "block_limit_warps": 8, "block_limit_sm": 32,
    "theoretical_occupancy_percent": 0.125, "achieved_occupancy_percent": 0.1231,
    "compute_throughput_percent": 0.8612, "memory_throughput_percent": 0.5743, "issue_active_per_scheduler": 0.31,
}


def analyse(values: dict, cc: str = "8.6"):
    profile = Profile(SourceInfo("issue-23", "test", "test"), values, {"compute_capability": cc}, kind=NCU.name)
    hw = resolve(NCU, {**profile.values, **profile.info}, None)
    return evaluate(RULESET, derive(profile, hw, RULESET), hw)


def outcome(result, name: str) -> str:
    return next(o.outcome for o in result.outcomes if o.name == name)


def finding(result, name: str):
    return next(f for f in result.findings if f.name == name)


# ---------------------------------------------- 1. small-grid only when the grid cannot fill the GPU
def test_small_grid_silent_with_blocks_on_every_sm_at_bandwidth_saturation():
    """Issue 23: `small-grid` fired with 4 blocks on every SM (grid 275 on 68 SMs, 0.81 waves) while DRAM ran
    at 79.7 % of peak. Every SM has work and memory is saturated: the grid is not what limits this kernel."""
    assert outcome(analyse(GEMM_3080), "small-grid") == "passed"


def test_small_grid_fires_when_sms_have_no_block():
    """The real small grid: 3 blocks on a T4's 40 SMs leaves 37 idle; ncu's estimate (40 - 3) / 40 = 92.5 %."""
    result = analyse({"grid_size": 3, "sm_count": 40, "block_size": 256, "registers_per_thread": 32,
                      "block_limit_registers": 4, "block_limit_shared_mem": 128, "block_limit_warps": 4,
                      "block_limit_sm": 16, "compute_throughput_percent": 0.01, "memory_throughput_percent": 0.02},
                     cc="7.5")
    small = finding(result, "small-grid")
    assert small.estimated_speedup == pytest.approx(37 / 40)
    assert "37 SMs get no block" in small.message


def test_small_grid_below_one_wave_only_when_latency_bound():
    """Below one wave (0.81) with every SM busy, small-grid fires only when neither compute nor memory reaches
    60 % (ncu's SOLBottleneck Small Grid), with no time estimate (ncu gives none) and 0 SMs named idle."""
    result = analyse({**GEMM_3080, "memory_throughput_percent": 0.30, "dram_throughput_percent": 0.30})
    small = finding(result, "small-grid")
    assert small.estimated_speedup is None
    assert "0.81 of one full wave" in small.message and "0 SMs get no block" in small.message


def test_small_grid_silent_at_a_full_wave():
    """At one wave or more (4 waves: 432 blocks, 1 per SM on 108 SMs) small-grid never fires."""
    assert outcome(analyse(GEMM_TIED, cc="8.0"), "small-grid") == "passed"


# ------------------------------------------------------------------ 2. impossible advice
def test_no_register_cap_advice_when_shared_memory_also_binds():
    """Issue 23: "cap registers so one more block fits" when shared memory also allows only 1 block (232 registers
    per thread and 145 KiB per block both allow 1 of 256 threads). Neither single-resource advice is possible;
    the tie gets its own finding naming both limits."""
    result = analyse(GEMM_TIED, cc="8.0")
    assert outcome(result, "occupancy-limited-by-registers") == "passed"
    assert outcome(result, "occupancy-limited-by-shared-memory") == "passed"
    tie = finding(result, "occupancy-limited-by-several-resources")
    assert "registers 1 block," in tie.message and "shared memory 1 block," in tie.message
    assert "Cap registers so one more block fits" not in tie.recommendation
    # local 1 - 2/16 warps per scheduler, global as min(issue-slot 1 - 0.8612, local) like ncu's TheoreticalOccupancy;
    # but compute is saturated (86 %), which explains it: a symptom of a pipe at its limit claims no time (issue 36)
    assert finding(result, "compute-saturated").estimated_speedup is None
    assert tie.speedup_scope == "global" and tie.estimated_speedup is None


def test_register_advice_when_registers_are_the_sole_limit():
    """Registers alone binding (4 blocks against shared memory's 5, the Orin seed page) keeps the register advice."""
    result = analyse({**GEMM_TIED, "block_limit_registers": 1, "block_limit_shared_mem": 2}, cc="8.0")
    assert "Cap registers so one more block fits" in finding(result, "occupancy-limited-by-registers").recommendation
    assert outcome(result, "occupancy-limited-by-several-resources") == "passed"


FP32 = {"fp32_mul_thread_instructions": 65536, "fp32_fma_thread_instructions": 98304, "pipe_fma_percent": 0.40}


@pytest.mark.parametrize("adds", [0, None], ids=["zero-adds", "adds-unavailable"])
def test_no_fp32_non_fused_without_adds(adds):
    """Issue 23: `fp32-non-fused` fired with zero FP32 adds (65,536 FMULs and no FADD: nothing to fuse a multiply
    with). With no adds, or adds unavailable, there is no fusable pair and no finding."""
    values = {**FP32} if adds is None else {**FP32, "fp32_add_thread_instructions": adds}
    assert outcome(analyse(values), "fp32-non-fused") != "fired"


def test_fp32_non_fused_estimate_counts_fusable_pairs():
    """With 32,768 adds and 65,536 multiplies only 32,768 pairs can fuse: the estimate is the instructions fusion
    removes (32,768 of 196,608) x FMA pipe 40 %, not half of every separate add and multiply."""
    result = analyse({**FP32, "fp32_add_thread_instructions": 32768})
    assert finding(result, "fp32-non-fused").estimated_speedup == pytest.approx(32768 / 196608 * 0.40)


# ------------------------------------------------------------------ 3. failed launches
_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
           '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type",'
           '"Rule Description","Estimated Speedup Type","Estimated Speedup"')
_GOOD = [("Command line profiler metrics", "gpu__time_duration.sum", "us", "{time}"),
         ("GPU Speed Of Light Throughput", "Memory Throughput", "%", "80.10"),
         ("GPU Speed Of Light Throughput", "DRAM Throughput", "%", "80.10"),
         ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", "20.50"),
         ("Launch Statistics", "# SMs", "SM", "132"), ("Launch Statistics", "Registers Per Thread", "", "40")]
# H800 flash_fwd_kernel of flyinglandlord/sglang profile.ncu-rep: NaN speed-of-light values, no launch metrics,
# ERR rule rows (nsight-compute-rules.md §2.1)
_FAILED = [("Command line profiler metrics", "gpu__time_duration.sum", "us", "nan"),
           ("GPU Speed Of Light Throughput", "Memory Throughput", "%", "nan"),
           ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", "nan"),
           ("Command line profiler metrics", "dram__bytes_read.sum", "Mbyte", "1.5")]


def _launch_lines(launch_id: str, kernel: str, rows, rules=(), time: str = "16.4") -> list[str]:
    identity = (launch_id, "9", "python3", "127.0.0.1", kernel, "1", "7", "(256, 1, 1)", "(1056, 1, 1)", "0", "9.0")
    quote = lambda fields: ",".join(f'"{f}"' for f in fields)  # noqa: E731
    lines = [quote((*identity, s, n, u, v.format(time=time))) + "," for s, n, u, v in rows]
    return lines + [quote((*identity, section, "", "", "", rule, "ERR", text, "", "")) for section, rule, text in rules]


@pytest.fixture
def run_with_failed_launch(tmp_path):
    lines = [_HEADER]
    for i in range(4):
        lines += _launch_lines(str(i), "distribution_elementwise_grid_stride_kernel", _GOOD, time=f"{16.4 + i}")
    lines += _launch_lines("4", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>(Flash_fwd_params)", _FAILED,
                           rules=[("SpeedOfLight", "SOLBottleneck", "Rule returned an error: metric is NaN"),
                                  ("Occupancy", "TheoreticalOccupancy", "Required metric could not be found")])
    path = tmp_path / "ncu.details.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_failed_launch_named_and_excluded_visibly(run_with_failed_launch, tmp_path, capsys):
    """Issue 23: a failed launch (NaN metrics, ERR rule results) is named as failed and left out of the run
    totals visibly: "4 of 5 launches have data: 4 flash_fwd_kernel has no data"; the run is 4 launches of
    16.4 + 17.4 + 18.4 + 19.4 = 71.6 µs, never a sum with an unknown duration counted as 0 s."""
    from advisor.cli import main

    out = tmp_path / "report.md"
    assert main(["report", str(run_with_failed_launch), "-o", str(out)]) == 0
    text = out.read_text()
    assert "4 of 5 launches have data: 4 flash_fwd_kernel has no data (no duration, and 2 of ncu's rule " \
           "results are errors)" in text
    assert "4 kernel launches took 71.6 µs together" in text
    # the TL;DR counts as the setup does (issue 36: it said "4 kernel launches" beside "4 of 5 launches with data")
    assert "**4 kernel launches with data (of 5 in the file)**" in text
    assert "flash_fwd_kernel" not in text.split("## Kernels in this run")[1].split("##")[0]
    assert "took 0 s together" not in text


def test_failed_launch_picked_gets_its_reason(run_with_failed_launch, capsys):
    """`--kernel 4` on the failed launch: one error line saying it has no data, exit 2 — nothing invented for it."""
    from advisor.cli import main

    assert main(["report", str(run_with_failed_launch), "--kernel", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"advisor: error: {run_with_failed_launch}: --kernel 4: launch 4 flash_fwd_kernel has no data "
                   "(no duration, and 2 of ncu's rule results are errors); ncu could not measure it, so there is "
                   "nothing to analyse"]


def test_no_block_limit_invented_without_launch_figures():
    """Issue 23: a launch without its own block limits was "limited by the SM's block limit" — the hardware's
    maximum, known from the compute-capability table alone. With only that, no limiter is named."""
    from advisor.profilers.ncu import report
    from advisor.profilers.ncu.report import occupancy

    class _View:
        def raw(self, name):
            return None

    class _Metric:
        def __init__(self, value):
            self.value, self.check = value, None

    view = _View()
    view.metrics = {"block_limit_sm": _Metric(32.0)}
    original = occupancy._metric
    try:
        occupancy._metric = lambda v, name: v.metrics.get(name)
        assert report.limiters(view) == ([], None)
        view.metrics["block_limit_warps"] = _Metric(8.0)
        assert report.limiters(view) == (["Warps"], 8.0)
    finally:
        occupancy._metric = original


# ------------------------------------------------------------------ 4. labels of ncu's verdicts beside advisor's
def _vendor(rule: str, message: str, speedup: float | None = None, scope: str = "global"):
    from advisor.core.model import VendorFinding

    return VendorFinding(rule=rule, section="", type="OPT", message=message, title="",
                         speedup=speedup, speedup_scope=scope if speedup is not None else "")


def _labelled(analysis, vendor, release: str | None = None):
    from dataclasses import replace

    from advisor.profilers.ncu.verdicts import verdicts

    info = {**analysis.info, **({"profiler_version": release} if release else {})}
    rows = verdicts(replace(analysis, vendor_findings=(vendor,), info=info))
    return next(v for v in rows if v.vendor is vendor)


def _analysis(values: dict, cc: str = "8.6"):
    from advisor.core.model import Analysis

    profile = Profile(SourceInfo("issue-23", "test", "test"), values, {"compute_capability": cc}, kind=NCU.name)
    hw = resolve(NCU, {**profile.values, **profile.info}, None)
    metrics = derive(profile, hw, RULESET)
    result = evaluate(RULESET, metrics, hw)
    return Analysis(advisor_version="test", source=profile.source, info={"compute_capability": cc}, hardware=None,
                    metrics=metrics, findings=tuple(result.findings), outcomes=tuple(result.outcomes), kind="ncu")


def test_disagree_only_when_both_tools_evaluated():
    """Issue 23: ncu's Tail Effect beside advisor's `tail-effect` was "disagree" although advisor had no grid
    to judge: with its counterparts not applicable the row says "not evaluated"; once advisor evaluated and
    passed (the Orin seed page's 85.84 waves), it is a real "disagree"."""
    tail = _vendor("LaunchConfiguration", "A wave of thread blocks ... Tail Effect ... full waves", 0.5)
    assert _labelled(_analysis({"compute_throughput_percent": 0.5}), tail).status == "not evaluated"
    seed = {"grid_size": 2747, "sm_count": 8, "block_size": 128, "block_limit_registers": 4,
            "block_limit_shared_mem": 5, "block_limit_warps": 12, "block_limit_sm": 16}
    assert _labelled(_analysis(seed, cc="8.7"), tail).status == "disagree"


def test_formula_differs_by_version():
    """Issue 23: ncu 2023.3.0 did not cap AchievedOccupancy's global estimate by IssueSlotUtilization (83.41 %
    while the issue-slot estimate was 66.72 %, nsight-compute-rules.md §2.3): advisor's capped figure differs by
    formula, not by diagnosis. From 2024.2.1 (or with no release named) a differing estimate is not relabelled."""
    values = {"theoretical_occupancy_percent": 1.0, "achieved_occupancy_percent": 0.1659,
              "issue_active_per_scheduler": 0.3328, "compute_throughput_percent": 0.2, "memory_throughput_percent": 0.1}
    achieved = _vendor("AchievedOccupancy", "The difference between calculated theoretical (100.0%) and measured "
                       "achieved occupancy (16.6%) ...", 0.8341)
    old = _labelled(_analysis(values), achieved, "2023.3.0.0")
    assert old.status == "formula differs by version" and "ncu 2023.3.0.0 predates" in old.note
    for release in ("2024.2.1.0", None):
        assert _labelled(_analysis(values), achieved, release).status != "formula differs by version"


# ------------------------------------------------------------------ 5. tensor-core work in arithmetic intensity
TENSOR_GEMM = {"fp16_add_thread_instructions": 0, "fp16_mul_thread_instructions": 0,
               "fp16_fma_thread_instructions": 1024, "fp32_add_thread_instructions": 2048,
               "fp32_mul_thread_instructions": 2048, "fp32_fma_thread_instructions": 4096,
               "dram_read_bytes": 4.0e8, "dram_write_bytes": 1.0e8}


@pytest.mark.parametrize("evidence", [{"tensor_instructions": 2.6e6}, {"pipe_tensor_percent": 0.62}],
                         ids=["tensor-instructions", "tensor-pipe-busy"])
def test_tensor_gemm_is_not_placed_at_zero_flop_per_byte(evidence):
    """Issue 23: a tensor-pipe GEMM read "0 FLOP/B" (12,288 non-tensor FLOPs over 500 MB) and so memory-bound,
    because ncu's FLOP counters leave MMA work out. With tensor work the arithmetic intensity is unavailable."""
    profile = Profile(SourceInfo("issue-23", "test", "test"), {**TENSOR_GEMM, **evidence},
                      {"compute_capability": "8.0"}, kind=NCU.name)
    metrics = derive(profile, resolve(NCU, {**profile.values, **profile.info}, None), RULESET)
    assert metrics["arithmetic_intensity"].value is None


def test_arithmetic_intensity_kept_without_tensor_work():
    """No tensor instruction (or none reported): the FLOP counters hold all the work and the intensity stays."""
    # issue 36: an RNG kernel with the tensor pipe 0.714 % busy and no HMMA is no tensor work (the roofline was refused)
    for extra in ({"tensor_instructions": 0, "pipe_tensor_percent": 0.0}, {}, {"pipe_tensor_percent": 0.00714}):
        profile = Profile(SourceInfo("issue-23", "test", "test"), {**TENSOR_GEMM, **extra},
                          {"compute_capability": "8.0"}, kind=NCU.name)
        metrics = derive(profile, resolve(NCU, {**profile.values, **profile.info}, None), RULESET)
        assert metrics["arithmetic_intensity"].value == pytest.approx(12288 / 5.0e8)


def test_estimates_of_different_scopes_never_agree_and_explainers_include_requiring_rules():
    """Issue 24 item 8 (mutations 14 and 15 of the review survived): a local estimate (of one unit's own
    inefficiency) and a global one (of the kernel's time) are different quantities even when equal, and a symptom
    is traced to the rule that requires it as well as to one that explains it."""
    from advisor.core.model import Analysis, Finding, SourceInfo, VendorFinding
    from advisor.profilers.ncu.verdicts import _explainers, _same_size

    def finding(name, speedup=None, scope="global", explains=(), because=()):
        return Finding(id=name, name=name, pack="ncu", severity="medium", category="c", title=name, message="",
                       root_cause=not (explains or because), because=because, evidence={}, params={},
                       estimated_speedup=speedup, recommendation="", explains=explains, speedup_scope=scope)

    ours = finding("issue-slots-underused", 0.30, scope="global")
    vendor = VendorFinding(rule="IssueSlotUtilization", section="SchedulerStats", type="OPT", message="",
                           speedup=0.30, speedup_scope="local")
    empty = Analysis(advisor_version="", source=SourceInfo("x", "csv", ""), info={}, hardware=None, metrics={},
                     kind="ncu")
    assert _same_size(empty, vendor, (ours,), 0.01).startswith("Estimates differ")
    same = VendorFinding(**{**vendor.__dict__, "speedup_scope": "global"})
    assert _same_size(empty, same, (ours,), 0.01).startswith("Estimates agree")
    symptom = finding("memory-bound")
    child = finding("dram-bound", because=("memory-bound",))
    other = finding("uncoalesced-memory-traffic", explains=("memory-bound",))
    analysis = Analysis(advisor_version="", source=SourceInfo("x", "csv", ""), info={}, hardware=None, metrics={},
                        findings=(symptom, child, other), kind="ncu")
    assert sorted(_explainers(analysis, "memory-bound")) == ["dram-bound", "uncoalesced-memory-traffic"]


def test_an_integer_kernel_is_a_launch_id_never_text_in_a_signature(tmp_path, capsys):
    """Issue 36: `--kernel 4` on a five-launch report whose launch 4 has no data selected launch 3, whose signature
    holds `(int)4`, and exited 0. An integer is a launch ID: launch 4's own reason, exit 2, in report and compare."""
    from advisor.cli import main

    lines = [_HEADER]
    for i in range(4):
        name = "void distribution_kernel<(int)4>(int, PhiloxState)" if i == 3 else "elementwise_kernel"
        lines += _launch_lines(str(i), name, _GOOD, time=f"{16.4 + i}")
    lines += _launch_lines("4", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>(Flash_fwd_params)", _FAILED,
                           rules=[("SpeedOfLight", "SOLBottleneck", "Rule returned an error: metric is NaN")])
    path = tmp_path / "five.csv"
    path.write_text("\n".join(lines) + "\n")
    assert main(["report", str(path), "--kernel", "4", "-o", str(tmp_path / "r.md")]) == 2
    assert "--kernel 4: launch 4 flash_fwd_kernel has no data" in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()
    assert main(["compare", str(path), str(path), "--kernel", "4", "-o", str(tmp_path / "c.md")]) == 2
    assert "--kernel 4: launch 4 flash_fwd_kernel has no data" in capsys.readouterr().err
    assert main(["report", str(path), "--kernel", "3", "-o", str(tmp_path / "r3.md")]) == 0  # its own ID still works


@pytest.mark.parametrize(("blocks", "said", "not_said"), [
    (275, "part of each SM's capacity stays unused", "SMs stay idle"),  # every SM has a block: none is idle
    (40, "28 SMs stay idle for the whole kernel", "capacity"),
])
def test_under_a_wave_names_idle_sms_only_when_there_are_some(blocks, said, not_said):
    """Issue 36: "some SMs stay idle for the whole kernel" for 275 blocks on 68 SMs, where every SM has blocks."""
    from advisor.profilers.ncu.report.occupancy import _waves_sentence
    from advisor.report.view import View

    values = {"grid_size": blocks, "sm_count": 68, "block_size": 256, "block_limit_registers": 8,
              "block_limit_shared_mem": 8, "block_limit_warps": 8, "block_limit_sm": 16}
    view = View(_analysis(values))
    assert view.raw("waves_per_sm") < 1
    text = _waves_sentence(view)
    assert said in text and not_said not in text


def test_the_csv_and_text_exports_of_one_capture_agree_on_every_verdict():
    """Issue 36: the text export of the seed capture gave SOLFPRoofline "ncu only" and the DRAM access pattern
    "ncu only" (its section names differ from the CSV's) where the CSV gave "informational" and a verdict."""
    from collections import Counter
    from pathlib import Path

    from advisor.api import analyze
    from advisor.profilers.ncu.verdicts import verdicts

    samples = Path(__file__).resolve().parents[3] / "samples"
    counts = [Counter(v.status for v in verdicts(analyze(samples / "ncu_seed004" / name)))
              for name in ("details.csv", "output.txt")]
    # one not modelled in each: the DRAM access pattern (MemoryCacheAccessPattern), which advisor does not read
    assert counts[0] == counts[1] and counts[1]["not modelled by advisor"] == 1, counts
