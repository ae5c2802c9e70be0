"""Issue 36, Nsight Compute: a gain only where the profile shows waste, the fix with the most evident waste first,
and never more than Nsight Compute's own estimate of the same mechanism."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from advisor import kinds
from advisor.api import AnalyzeOptions, analyze
from advisor.core.model import Profile, SourceInfo
from advisor.engine.evaluate import evaluate
from advisor.kinds.base import LoadOptions
from advisor.metrics.derive import derive
from advisor.metrics.hardware import resolve
from advisor.packs.load import load_packs
from advisor.profilers.ncu.adapters.launches import vendor_finding
from advisor.profilers.ncu.verdicts import estimate_inputs
from advisor.report.findings import root_causes

SAMPLES = Path(__file__).parents[3] / "samples"
NCU = kinds.get("ncu")
RULESET = load_packs(kind=NCU.name)

# a cuBLAS GEMM read by ncu 2023.2 (issue 36): SM 75.47 %, memory 50 %, 24.53 % of its global L2 sectors excess, no
# L2 active-cycle ratio in the export, and ncu's own UncoalescedGlobalAccess estimate 0.00
CUBLAS = {"compute_throughput_percent": 0.7547, "memory_throughput_percent": 0.50, "dram_throughput_percent": 0.30,
          "l2_global_excessive_sectors": 2453, "l2_global_sectors": 10000, "grid_size": 432, "sm_count": 108}


def analyse(values: dict, cc: str = "8.0"):
    profile = Profile(SourceInfo("issue-36", "test", "test"), values, {"compute_capability": cc}, kind=NCU.name)
    hw = resolve(NCU, {**profile.values, **profile.info}, None)
    return evaluate(RULESET, derive(profile, hw, RULESET), hw)


def finding(result, name: str):
    return next(f for f in result.findings if f.name == name)


def test_a_mechanism_ncu_itself_estimates_at_zero_claims_nothing_and_is_no_verdict():
    """advisor counted the excess against the compute-busy bound alone (24.53 %); ncu, which weights the excess by
    the L2's active cycles the export lacks, says 0.00. advisor never claims more than ncu's own estimate."""
    alone = finding(analyse(CUBLAS), "uncoalesced-global-access")
    assert alone.estimated_speedup == pytest.approx(0.2453)
    capped = analyse({**CUBLAS, "ncu_uncoalesced_estimate": 0.0})
    uncoalesced = finding(capped, "uncoalesced-global-access")
    assert uncoalesced.estimated_speedup == 0.0
    assert "Nsight Compute's own estimate for this mechanism is 0 %" in uncoalesced.message
    assert uncoalesced.name not in [f.name for f in root_causes_of(capped)]


def test_ncus_estimate_above_advisors_leaves_advisors_in_place():
    """T4 matrix add: ncu 44.30 %, advisor's own formula is the lower one and stays."""
    values = {"compute_throughput_percent": 0.173, "memory_throughput_percent": 0.908,
              "l2_global_excessive_sectors": 375000, "l2_global_sectors": 750000,
              "l2_active_cycles_sum": 1634370, "l2_elapsed_cycles_sum": 1844672}
    plain = finding(analyse(values), "uncoalesced-global-access").estimated_speedup
    with_ncu = finding(analyse({**values, "ncu_uncoalesced_estimate": 0.443}), "uncoalesced-global-access")
    assert with_ncu.estimated_speedup == pytest.approx(min(plain, 0.443))


def root_causes_of(result):
    """The causes a verdict may name, as the report picks them (it reads only the findings)."""
    return root_causes(SimpleNamespace(findings=result.findings))  # type: ignore[arg-type]


def test_the_adapter_gives_ncus_global_estimates_of_the_mapped_rules_as_profile_values():
    """Rule results become inputs by ncu's rule id (CSV) or section (text export), local ones too (a local 0 is
    ncu finding no time: UncoalescedGlobalAccess without the L2 cycle counters)."""
    found = estimate_inputs((
        vendor_finding("UncoalescedGlobalAccess", "SourceCounters", "OPT", "excessive sectors", "global", "0.00"),
        vendor_finding("SharedMemoryConflicts", "MemoryWorkloadAnalysis_Tables", "OPT", "a 16.0 - way bank conflict",
                       "local", "57.38"),
        vendor_finding("", "Source Counters", "OPT", "uncoalesced global accesses", "global", "12.5"),
    ))
    assert found == {"ncu_uncoalesced_estimate": pytest.approx(0.125),  # the later one of one rule wins
                     "ncu_bank_conflict_estimate": pytest.approx(0.5738)}
    assert estimate_inputs(()) == {}


def test_the_sample_attention_kernel_leads_with_its_bank_conflicts():
    """Launch 2 of the A100 sample: the 16-way bank conflict and the shared-memory occupancy limit both reach the
    31.10 % L2 floor; the conflict's own waste (93.75 % of wavefronts) is the larger, and its stalls are the
    symptoms, so it is the first fix."""
    a = analyze(SAMPLES / "ncu_multi_kernel" / "details.csv", AnalyzeOptions(load=LoadOptions(entry="2")))
    causes = root_causes(a)
    assert causes[0].name == "shared-memory-bank-conflicts"
    assert causes[1].name == "occupancy-limited-by-shared-memory"
    assert causes[0].estimated_speedup == causes[1].estimated_speedup == pytest.approx(1 - 0.689)


# an H800 Philox dropout mask (issue 36): integer math keeps the ALU busy, no HMMA, the tensor pipe at noise level
RNG = {"compute_throughput_percent": 0.8930, "memory_throughput_percent": 0.3813, "pipe_alu_percent": 0.8930,
       "pipe_fma_percent": 0.1210, "pipe_tensor_percent": 0.00714, "issue_active_per_scheduler": 0.62}


def test_compute_advice_fits_the_busiest_pipe():
    """The ALU-bound RNG kernel is told about integer work, never to use FMA or tensor cores; a GEMM busy on the
    tensor pipe is told the math is already there. Without pipe figures the clause is dropped, not guessed."""
    rng = analyse_with(RNG, {"busiest_pipe": "alu"})
    advice = " ".join(f.recommendation for f in rng.findings if f.name.startswith("compute-"))
    assert "ALU pipe is the busiest" in advice and "curand4" in advice
    assert "tensor-op" not in advice and "fuse separate multiplies" not in advice
    gemm = analyse_with({**RNG, "pipe_alu_percent": 0.1, "pipe_tensor_percent": 0.864}, {"busiest_pipe": "tensor"})
    assert "already runs on the tensor cores" in finding(gemm, "compute-saturated").recommendation
    unknown = finding(analyse_with(RNG, {}), "compute-bound").recommendation
    assert unknown.startswith("Look at Compute Workload Analysis for the busiest pipe. Remove redundant work")


def analyse_with(values: dict, info: dict, cc: str = "9.0"):
    profile = Profile(SourceInfo("issue-36", "test", "test"), values, {"compute_capability": cc}, kind=NCU.name)
    hw = resolve(NCU, {**profile.values, **profile.info}, None)
    return evaluate(RULESET, derive(profile, hw, RULESET), hw, info=info)


@pytest.mark.parametrize(("sample", "entry", "pipe"),
                         [("ncu_seed004", None, "fma"), ("ncu_multi_kernel", "1", "tensor")])
def test_the_adapter_names_the_busiest_pipe(sample, entry, pipe):
    """Seed 004's cuDNN kernel: FMA 47.40 % leads; the sample's cuBLAS GEMM: tensor 86.40 %."""
    a = analyze(SAMPLES / sample / "details.csv", AnalyzeOptions(load=LoadOptions(entry=entry)))
    assert a.info["busiest_pipe"] == pipe


def test_a_stall_or_rule_advisor_has_no_rule_for_is_not_modelled_never_a_disagreement():
    """An IMC-miss stall (CPIStall) was paired with advisor's long-scoreboard rule, which passed: "disagree". It and
    ncu's WorkloadImbalance are shown as ncu's, "not modelled by advisor", and the TL;DR names the larger ones."""
    from advisor.profilers.ncu.report import tldr
    from advisor.profilers.ncu.verdicts import NOT_MODELLED, verdicts

    base = analyze(SAMPLES / "ncu_seed004" / "details.csv")
    imc = vendor_finding("CPIStall", "WarpStateStats", "OPT", "On average, each warp of this kernel spends 4.1 cycles "
                         "being stalled waiting for an immediate constant cache (IMC) miss.", "global", "12.4",
                         title="IMC Miss Stalls")
    imbalance = vendor_finding("WorkloadImbalance", "WorkloadDistribution", "OPT", "One or more SMs have a much "
                               "higher number of active cycles than the average.", "global", "14.55")
    small = vendor_finding("UncoalescedSharedAccess", "SourceCounters", "OPT", "excessive wavefronts", "global", "2.1")
    analysis = replace(base, vendor_findings=(*base.vendor_findings, imc, imbalance, small))
    rows = {v.vendor.rule + (v.vendor.title or ""): v for v in verdicts(analysis) if v.vendor is not None}
    assert rows["CPIStallIMC Miss Stalls"].status == NOT_MODELLED
    assert rows["WorkloadImbalance"].status == NOT_MODELLED
    assert "shown as ncu gave it" in rows["WorkloadImbalance"].note
    line = next(text for _, text in tldr(analysis) if text.startswith("Nsight Compute also flags"))
    assert "`WorkloadImbalance` (14.55 % global)" in line and "`CPIStall` IMC Miss Stalls (12.40 % global)" in line
    assert "UncoalescedSharedAccess" not in line  # 2.1 %: below the 5 % the TL;DR names
    assert line.index("WorkloadImbalance") < line.index("IMC Miss")
