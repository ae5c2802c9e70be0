"""The torch pack (issue 25): it loads beside every other pack, its rules read only what it declares, its
examples pass, each rule fires and passes on values worked out by hand, no estimate exceeds a bound the same
analysis records, and the root-cause chains hold (host-bound is its causes' symptom; warm-up explains the step
spread and claims no time). Times are seconds, shares fractions of the analysed window (total_time)."""

from __future__ import annotations

import random

import pytest
from tests_support import SAMPLES

from advisor import kinds
from advisor.api import analyze_profile
from advisor.core.model import Metric, Profile, SourceInfo
from advisor.engine.budget import bound_values, claimed_together
from advisor.engine.evaluate import evaluate
from advisor.engine.examples import run_examples
from advisor.kinds.base import LoadOptions
from advisor.metrics.derive import derive
from advisor.metrics.members import member_metric_names, member_metrics, member_spec
from advisor.packs.load import load_packs

TORCH = kinds.get("torch")
RULESET = load_packs(kind=TORCH.name)
PACK = next(p for p in RULESET.packs if p.name == "torch")
DECLARED = {i.name for i in PACK.inputs} | {m.name for m in PACK.metrics}
TERMS = {t.name for t in PACK.terms}  # words a rule's texts may name (rules/torch/terms.yaml), never a `when`
EPS = 1e-12

NAMES = {
    "TRC000": "trace-coverage", "TRC001": "host-bound", "TRC002": "launch-overhead", "TRC003": "sync-in-step",
    "TRC004": "blocking-copy", "TRC005": "dataloader-stall", "TRC006": "exposed-communication",
    "TRC007": "warm-up-dominated", "TRC008": "step-time-variance", "TRC009": "memory-ops-dominant",
    "TRC010": "low-occupancy-kernels",
    # the device as the limit, and the minimum evidence for any verdict (device_bound.yaml, evidence.yaml)
    "TRC020": "device-bound", "TRC021": "too-little-evidence", "TRC022": "unexplained-queued-wait",
    # what runs on the device, by operator against its roofline (operators.yaml; issue 35)
    "TRC030": "fp32-matmul", "TRC031": "gemm-below-roofline", "TRC032": "unfused-elementwise",
    "TRC033": "attention-not-fused", "TRC034": "memory-bound-op",
    # cross-member rules: they read advisor/metrics/members.py's metrics of a rank folder
    "TRC040": "straggler-rank", "TRC041": "straggler-rank-device", "TRC042": "straggler-rank-host",
    "TRC043": "straggler-rank-comm", "TRC044": "rank-compute-imbalance",
}

# The metrics of the spec (issue 25), each with its unit: the pack declares every one.
SPEC_UNITS = {
    "total_time": "s", "trace_span": "s", "step_count": "count", "step_time_median": "s", "step_time_mean": "s",
    "step_time_max": "s", "step_time_min": "s", "step_time_cv": "ratio", "first_step_time": "s",
    "first_step_ratio": "ratio", "warmup_fraction": "fraction", "device_busy": "s", "device_idle": "s",
    "device_busy_fraction": "fraction", "device_idle_fraction": "fraction", "compute_time": "s",
    "compute_fraction": "fraction", "comm_time": "s", "comm_fraction": "fraction", "comm_exposed": "s",
    "comm_exposed_fraction": "fraction", "comm_overlap_fraction": "fraction", "collective_count": "count",
    "collective_bytes": "bytes", "memory_op_time": "s", "memory_op_fraction": "fraction", "memory_op_exposed": "s",
    "memory_op_exposed_fraction": "fraction", "memcpy_htod_bytes": "bytes", "memcpy_dtoh_bytes": "bytes",
    "memcpy_dtod_bytes": "bytes", "pageable_copy_count": "count", "pageable_copy_time": "s",
    "pageable_copy_fraction": "fraction", "idle_host_wait": "s", "idle_kernel_wait": "s", "idle_other": "s",
    "idle_host_wait_fraction": "fraction", "idle_kernel_wait_fraction": "fraction", "idle_other_fraction": "fraction",
    "kernel_count": "count", "kernel_time": "s", "kernel_time_median": "s", "launch_count": "count",
    "launch_time_total": "s", "launch_time_mean": "s", "launch_delay_median": "s", "short_kernel_count": "count",
    "short_kernel_fraction": "fraction", "queue_length_max": "count", "queue_length_mean": "count",
    "sync_count": "count", "sync_time": "s", "sync_fraction": "fraction", "sync_per_step": "ratio",
    "dataloader_time": "s", "dataloader_fraction": "fraction", "dataloader_idle_fraction": "fraction",
    "occupancy_mean": "fraction", "low_occupancy_time_fraction": "fraction", "world_size": "count", "rank": "count",
    # one owner per piece of host-wait idle (advisor/profilers/torch/owners.py)
    "sync_idle": "s", "sync_idle_fraction": "fraction", "idle_host_wait_other": "s", "loader_free_step_cv": "ratio",
    "loader_free_step_excess": "s", "dataloader_idle": "s", "idle_host_wait_other_fraction": "fraction",
    "blocking_launch_count": "count",
}


def steady_state(**changes: float | None) -> dict[str, float | None]:
    """A healthy 5-step window of 400 ms on one GPU: busy 92 %, collectives hidden, no stalls."""
    window = 0.4
    values: dict[str, float | None] = dict(
        total_time=window, trace_span=0.45, step_count=5, step_time_median=0.08, step_time_mean=0.08,
        step_time_max=0.082, step_time_min=0.079, step_time_cv=0.01, first_step_time=0.081, first_step_ratio=1.01,
        warmup_fraction=0.0025, device_busy=0.368, device_idle=0.032, device_busy_fraction=0.92,
        device_idle_fraction=0.08, compute_time=0.34, compute_fraction=0.85, comm_time=0.05, comm_fraction=0.125,
        comm_exposed=0.008, comm_exposed_fraction=0.02, comm_overlap_fraction=0.84, collective_count=10,
        collective_bytes=4.0e8, memory_op_time=0.01, memory_op_fraction=0.025, memory_op_exposed=0.004,
        memory_op_exposed_fraction=0.01, memcpy_htod_bytes=1.0e8, memcpy_dtoh_bytes=4096, memcpy_dtod_bytes=0,
        pageable_copy_count=0, pageable_copy_time=0.0, pageable_copy_fraction=0.0, idle_host_wait=0.012,
        idle_kernel_wait=0.012, idle_other=0.008, idle_host_wait_fraction=0.03, idle_kernel_wait_fraction=0.03,
        idle_other_fraction=0.02, kernel_count=5000, kernel_time=0.36, kernel_time_median=4.0e-5, launch_count=5000,
        launch_time_total=0.025, launch_time_mean=5.0e-6, launch_delay_median=0.002, short_kernel_count=200,
        short_kernel_fraction=0.04, queue_length_max=64, queue_length_mean=20, sync_count=5, sync_time=0.002,
        sync_fraction=0.005, sync_per_step=1, dataloader_time=0.004, dataloader_fraction=0.01,
        dataloader_idle_fraction=0.001, occupancy_mean=0.6, low_occupancy_time_fraction=0.1, world_size=2, rank=0,
        sync_idle=0.001, sync_idle_fraction=0.0025, idle_host_wait_other=0.0106, loader_free_step_cv=0.01,
        loader_free_step_excess=0.0, launch_time_median=5.0e-6, launch_idle=0.0106, launch_idle_fraction=0.0265,
        launch_call_idle=0.0, launch_call_idle_fraction=0.0, cpu_op_idle=0.0, cpu_op_idle_fraction=0.0,
        cpu_op_top_idle=0.0)
    values.update(changes)
    return values


def analyse(values: dict[str, float | None]):
    profile = Profile(SourceInfo("test", "kineto-json", "test"), values, {}, kind=TORCH.name)
    return analyze_profile(profile, RULESET)


def finding(analysis, name):
    return next((f for f in analysis.findings if f.name == name), None)


def outcome(analysis, name):
    return next(o.outcome for o in analysis.outcomes if o.name == name)


def test_the_pack_has_its_rules_and_loads_with_every_other_pack():
    assert PACK.kinds == ("torch",) and PACK.version == "1.0.0"
    assert {r.id: r.name for r in PACK.rules} == NAMES
    everything = load_packs()  # names, ids and metric names are unique within each kind
    assert {r.name for r in everything.for_kind("torch").rules if r.pack == "torch"} == set(NAMES.values())
    assert {r.severity for r in PACK.rules if r.name == "trace-coverage"} == {"info"}


def test_the_examples_pass():
    failed = [(r.rule.name, r.example.where, r.outcome) for r in run_examples(RULESET, {"torch"}) if not r.ok]
    assert not failed


def test_every_metric_of_the_spec_is_declared_with_its_unit():
    units = {i.name: i.unit for i in PACK.inputs}
    assert {name: units.get(name) for name in SPEC_UNITS} == SPEC_UNITS


def test_the_cross_member_metrics_are_declared():
    spec = member_spec(TORCH.name)
    assert spec is not None and "compute_time" in spec.causes and "idle_host_wait" in spec.causes
    assert set(member_metric_names(spec)) <= {i.name for i in PACK.inputs}


@pytest.mark.parametrize("sample", ["torch_a100_ddp/a100_ddp_rank0_of2.json.gz",
                                    "torch_cpu_only/cpu_only_rank34.pt.trace.json.gz"])
def test_what_the_event_analysis_measures_is_exactly_what_the_pack_declares(sample):
    path = SAMPLES / sample
    if not path.exists():
        pytest.skip(f"{sample} is not bundled")
    profile = TORCH.adapters().load(path, LoadOptions())[0]
    _, measured = TORCH.events().summarize(profile.trace, profile.values.get("total_time"))
    across = set(member_metric_names(member_spec(TORCH.name)))  # measured across the ranks, not on one trace
    assert set(measured) == {i.name for i in PACK.inputs} - across


@pytest.mark.parametrize("rule", PACK.rules, ids=lambda r: r.name)
def test_every_name_a_rule_reads_is_declared_by_the_pack(rule):
    read = set(rule.when.names) | {name for name, _ in rule.placeholders}
    read |= set(rule.estimated_speedup.names) if rule.estimated_speedup else set()
    assert read - DECLARED - TERMS - set(rule.params) == set()
    assert not set(rule.when.names) & TERMS
    assert rule.examples and {"fire", "pass"} <= {e.expect for e in rule.examples}
    assert rule.references and rule.root_cause and rule.recommendation


def test_every_metric_and_bound_reads_declared_names():
    for metric in PACK.metrics:
        assert set(metric.expr.names) <= DECLARED, metric.name
    for bound in PACK.bounds:
        assert set(bound.recoverable.names) <= DECLARED, bound.name


def test_a_steady_state_window_fires_nothing():
    a = analyse(steady_state())
    assert [f.name for f in a.findings] == []
    assert outcome(a, "straggler-rank") == "not_applicable"  # one trace: no cross-member metrics
    assert outcome(a, "straggler-rank-host") == "skipped"


def test_the_bounds_worked_out_by_hand():
    """Host wait 140 ms (the loader's 24 ms, 36 ms after syncs, 80 ms the host's own pace), kernel wait 30 ms,
    other 30 ms of a 400 ms window; 50 ms in syncs; 10 ms of exposed copies; steps of median 70 ms and mean 80 ms
    over 5 steps, 20 ms of the excess left less the loader's idle."""
    a = analyse(steady_state(
        idle_host_wait=0.14, idle_kernel_wait=0.03, idle_other=0.03, idle_host_wait_fraction=0.35,
        idle_kernel_wait_fraction=0.075, idle_other_fraction=0.075, device_idle=0.2, device_idle_fraction=0.5,
        device_busy=0.2, device_busy_fraction=0.5, compute_fraction=0.45, sync_time=0.05, sync_fraction=0.125,
        memory_op_exposed=0.01, memory_op_exposed_fraction=0.025, step_time_median=0.07, step_time_mean=0.08,
        dataloader_idle_fraction=0.06, sync_idle=0.036, sync_idle_fraction=0.09, idle_host_wait_other=0.08,
        launch_idle=0.08, loader_free_step_excess=0.02))
    values = bound_values(a.bounds)
    assert values["device_idle"] == pytest.approx(0.5)
    assert values["host_wait"] == pytest.approx(0.35)
    assert values["launch_gaps"] == pytest.approx(0.11 / 0.4)  # 80 ms launching (no loader, sync or CPU op) + 30 ms
    assert values["sync_stalls"] == pytest.approx(0.036 / 0.4)  # min(50 ms blocked, 36 ms idle after the syncs)
    assert values["dataloader_idle"] == pytest.approx(0.06)
    assert values["copy_stalls"] == pytest.approx(0.15 / 0.4)  # 10 ms exposed copies + 140 ms host wait
    assert values["memory_ops_exposed"] == pytest.approx(0.025)
    assert values["comm_exposed"] == pytest.approx(0.02)
    assert values["step_excess"] == pytest.approx(0.02 / 0.4)  # 5 × (80 ms − 70 ms), 20 ms of it not the loader's
    assert values["rank_excess"] is None and values["rank_wait"] is None  # one trace: unavailable, not 0
    assert a.value("non_compute_fraction") == pytest.approx(0.05)  # busy 50 % less compute 45 %


def test_host_bound_alone_is_a_root_cause_with_the_host_wait_time():
    a = analyse(steady_state(idle_host_wait=0.1, idle_host_wait_fraction=0.25, device_idle=0.12,
                             device_idle_fraction=0.3, queue_length_mean=1.2))
    host = finding(a, "host-bound")
    assert host.root_cause and host.severity == "high"
    assert host.estimated_speedup == pytest.approx(0.25) and host.capped_by == ("host_wait",)
    assert "nothing queued for 25.00 % of the 400 ms window (100 ms" in host.message


def test_launch_overhead_explains_host_bound_and_caps_it():
    """80 % of 5,000 kernels shorter than their launch, the queue shallow; of 100 ms host wait, 60 ms launching and
    40 ms in CPU operators that queue nothing, and 20 ms kernel wait: fewer launches give back at most the 80 ms
    launching explains (the operators and Python around each call go with it, not only the 30 ms of calls), 20 %
    of the window, and host-bound is its symptom."""
    a = analyse(steady_state(short_kernel_fraction=0.8, short_kernel_count=4000, launch_time_total=0.03,
                             idle_host_wait=0.1, idle_host_wait_fraction=0.25, idle_host_wait_other=0.1,
                             launch_idle=0.06, cpu_op_idle=0.04, cpu_op_top_idle=0.03, idle_kernel_wait=0.02,
                             idle_kernel_wait_fraction=0.05, device_idle=0.13, device_idle_fraction=0.325,
                             queue_length_mean=0.6, untraced_host_idle=0.005))
    launch, host = finding(a, "launch-overhead"), finding(a, "host-bound")
    assert launch.root_cause and not host.root_cause
    assert launch.estimated_speedup == pytest.approx(0.08 / 0.4)
    assert host.estimated_speedup == pytest.approx(0.08 / 0.4)  # a symptom's time is its causes'
    assert host.bound == "launch-overhead"
    assert [f.name for f in a.findings][:2] == ["launch-overhead", "host-bound"]  # root cause first
    assert "80.00 % of the 5,000 kernels" in launch.message
    assert "idles 80 ms of the 400 ms window waiting on launching: 60 ms with nothing queued" in launch.message
    assert "60 ms is spent launching" in host.message
    assert ("40 ms in CPU work that queues no device work: operators and runtime calls that queue nothing (the "
            "largest one 30 ms) and 5 ms inside untraced host work") in host.message


def test_launch_overhead_needs_a_shallow_queue():
    """Short kernels and idle time, but 20 kernels queued on average: the host runs ahead, launches are not what
    the device waits for."""
    a = analyse(steady_state(short_kernel_fraction=0.8, short_kernel_count=4000, idle_host_wait=0.1,
                             idle_host_wait_fraction=0.25, idle_host_wait_other=0.1, launch_idle=0.1,
                             idle_kernel_wait=0.02, device_idle=0.13, device_idle_fraction=0.325))
    assert outcome(a, "launch-overhead") == "passed"


def test_every_cause_of_host_bound_caps_it_together():
    a = analyse(steady_state(
        idle_host_wait=0.14, idle_host_wait_fraction=0.35, device_idle=0.2, device_idle_fraction=0.5,
        short_kernel_fraction=0.8, launch_time_total=0.036, idle_kernel_wait=0.03, idle_kernel_wait_fraction=0.075,
        queue_length_mean=0.6, launch_idle=0.016, cpu_op_idle=0.05,
        sync_time=0.05, sync_fraction=0.125, pageable_copy_time=0.012, pageable_copy_fraction=0.03,
        pageable_copy_count=5, dataloader_idle_fraction=0.06, sync_idle=0.05, sync_idle_fraction=0.125,
        idle_host_wait_other=0.066))  # host wait 140 ms: the loader's 24 ms, the syncs' 50 ms, the rest 66 ms
    # (16 ms launching, 50 ms CPU operators)
    causes = {n: finding(a, n) for n in ("launch-overhead", "sync-in-step", "blocking-copy", "dataloader-stall")}
    assert all(f is not None and f.root_cause for f in causes.values())
    assert causes["launch-overhead"].estimated_speedup == pytest.approx(0.046 / 0.4)  # 16 ms + 30 ms kernel wait
    assert causes["sync-in-step"].estimated_speedup == pytest.approx(0.05 / 0.4)
    assert causes["blocking-copy"].estimated_speedup == pytest.approx(0.012 / 0.4)
    assert causes["dataloader-stall"].estimated_speedup == pytest.approx(0.06)
    host = finding(a, "host-bound")
    assert not host.root_cause
    assert host.estimated_speedup == pytest.approx(0.115 + 0.125 + 0.03 + 0.06)  # 33 %, under 35 % host wait
    total = claimed_together(a.findings, bound_values(a.bounds))
    assert total == pytest.approx(0.33) and total <= 0.5  # within the device's idle time


def test_a_synchronisation_claims_no_more_than_the_idle_it_leaves():
    """The host blocked 200 ms in .item() calls, but the device waits with nothing queued after them only 40 ms."""
    a = analyse(steady_state(sync_time=0.2, sync_fraction=0.5, sync_count=50, sync_per_step=10,
                             idle_host_wait=0.04, idle_host_wait_fraction=0.1, device_idle=0.06,
                             device_idle_fraction=0.15, sync_idle=0.04, sync_idle_fraction=0.1,
                             idle_host_wait_other=0.0))
    sync = finding(a, "sync-in-step")
    assert sync.estimated_speedup == pytest.approx(0.1) and sync.bound == "sync_stalls"
    assert "50 synchronising calls (10× per step) for 200 ms" in sync.message


def test_exposed_communication_is_capped_by_its_exposed_time():
    a = analyse(steady_state(comm_exposed=0.1, comm_exposed_fraction=0.25, comm_overlap_fraction=0.375,
                             comm_time=0.16, comm_fraction=0.4))
    comm = finding(a, "exposed-communication")
    assert comm.root_cause and comm.estimated_speedup == pytest.approx(0.25)
    assert "no compute kernel for 25.00 % of the 400 ms window (100 ms" in comm.message
    assert "10 collectives moved 381.5 MiB on a world of 2 ranks" in comm.message


def test_blocking_copies_explain_exposed_memory_operations():
    a = analyse(steady_state(pageable_copy_count=12, pageable_copy_time=0.05, pageable_copy_fraction=0.125,
                             memory_op_time=0.06, memory_op_fraction=0.15, memory_op_exposed=0.048,
                             memory_op_exposed_fraction=0.12))
    copy, memory = finding(a, "blocking-copy"), finding(a, "memory-ops-dominant")
    assert copy.root_cause and not memory.root_cause
    # pinned copies give back at most the exposed copies plus the host-wait idle: 48 ms + 12 ms of 400 ms
    assert copy.estimated_speedup == pytest.approx(0.125) and copy.bound == ""
    assert memory.estimated_speedup == pytest.approx(0.12)
    assert memory.estimated_speedup <= copy.estimated_speedup + EPS


def test_warm_up_explains_the_step_spread_and_neither_claims_time():
    """A 900 ms first step against 100 ms steps: the spread is the warm-up, and profiling later is the fix."""
    a = analyse(steady_state(step_count=5, first_step_time=0.9, first_step_ratio=9.0, step_time_median=0.1,
                             step_time_mean=0.26, step_time_min=0.1, step_time_max=0.9, step_time_cv=1.4,
                             loader_free_step_cv=1.4, loader_free_step_excess=0.8, warmup_fraction=0.8 / 1.3,
                             total_time=1.3))
    warm, spread = finding(a, "warm-up-dominated"), finding(a, "step-time-variance")
    assert warm.root_cause and not spread.root_cause
    assert warm.estimated_speedup is None and spread.estimated_speedup is None
    assert "the first step takes 900 ms, 9× the median of the others (100 ms)" in warm.message
    assert claimed_together(a.findings, bound_values(a.bounds)) is None


def test_a_cold_start_without_steps_is_warm_up_and_its_idle_time_claims_nothing():
    """a100_alexnet_cold_start: no steps, 79 launches of 31 ms on average, the device idle 99.8 % with nothing
    queued. The idle time is start-up, not the host's steady pace: profile steady-state steps."""
    window = 43.43
    a = analyse({"total_time": window, "trace_span": window, "step_count": 0.0, "launch_time_mean": 0.03114,
                 "launch_time_median": 9.0e-6,
                 "launch_time_total": 3.114, "launch_count": 100.0, "kernel_count": 79.0, "device_busy": 0.066,
                 "device_busy_fraction": 0.066 / window, "device_idle": window - 0.066,
                 "device_idle_fraction": 1 - 0.066 / window, "idle_host_wait": 43.36,
                 "idle_host_wait_fraction": 43.36 / window, "short_kernel_fraction": 0.16})
    warm, host = finding(a, "warm-up-dominated"), finding(a, "host-bound")
    assert warm.root_cause and not host.root_cause and host.estimated_speedup is None
    assert "launch calls take 31.14 ms on average but 9 µs at the median, 3.114 s in all" in warm.message
    assert "Start-up dominates the 43.43 s window (0 complete steps; launch calls" in warm.message
    assert claimed_together(a.findings, bound_values(a.bounds)) is None


def test_a_spread_without_warm_up_claims_the_steps_above_the_median():
    a = analyse(steady_state(step_count=10, step_time_median=0.05, step_time_mean=0.06, step_time_cv=0.3,
                             loader_free_step_cv=0.3, loader_free_step_excess=0.1, total_time=0.6,
                             warmup_fraction=0.01))
    spread = finding(a, "step-time-variance")
    assert spread.root_cause and spread.estimated_speedup == pytest.approx(10 * 0.01 / 0.6)
    assert "every step at the median would save 100 ms" in spread.message


def test_a_spread_the_data_loader_explains_is_the_loaders_alone():
    """torch_dataloader_stall: every other step waits for a batch. Less that wait the steps do not vary, and the
    .item() each step leaves almost no idle of its own: one cause, one claim."""
    a = analyse(steady_state(step_count=8, step_time_median=0.0323, step_time_mean=0.0406, step_time_cv=0.30,
                             loader_free_step_cv=0.002, loader_free_step_excess=0.0, total_time=0.325,
                             dataloader_idle_fraction=0.207, idle_host_wait=0.0675, idle_host_wait_fraction=0.2077,
                             sync_time=0.218, sync_fraction=0.67, sync_idle=0.0003, sync_idle_fraction=0.0008,
                             idle_host_wait_other=0.0, device_idle=0.069, device_idle_fraction=0.212))
    assert [f.name for f in a.findings] == ["dataloader-stall", "host-bound"]
    assert outcome(a, "step-time-variance") == "passed" and outcome(a, "sync-in-step") == "passed"
    assert claimed_together(a.findings, bound_values(a.bounds)) == pytest.approx(0.207)


def test_a_cpu_only_trace_fires_only_the_coverage_rule():
    values = {"total_time": 0.4, "trace_span": 0.4, "step_count": 0, "sync_count": 3, "sync_time": 0.001,
              "sync_fraction": 0.0025, "dataloader_time": 0.01, "dataloader_fraction": 0.025, "world_size": 300,
              "rank": 34}
    a = analyse(values)
    assert [f.name for f in a.findings] == ["trace-coverage"]
    for name in ("host-bound", "launch-overhead", "exposed-communication", "memory-ops-dominant"):
        assert outcome(a, name) == "not_applicable", name
    message = finding(a, "trace-coverage").message  # no device figure shown as 0: the clause is left out
    assert message == ("Complete profiler steps in the 400 ms window of a 400 ms trace: 0; warm-up and step spread "
                       "need 3 steps or more, every device figure needs device events (kernels, copies, sets), and "
                       "idle time needs the trace's events, not a sample of them.")


def _member(compute: float, comm: float, window: float, host_wait: float = 0.01, loader: float = 0.004):
    values = steady_state(total_time=window, compute_time=compute, comm_time=comm, idle_host_wait=host_wait,
                          dataloader_time=loader)
    profile = Profile(SourceInfo("test", "kineto-json", "test"), values, {}, kind=TORCH.name)
    return derive(profile, None, RULESET)


def _with_members(members, chosen):
    metrics = dict(members[chosen])
    metrics.update(member_metrics(members, chosen, member_spec(TORCH.name), RULESET.inputs))
    return metrics, evaluate(RULESET, metrics, None)


def test_a_slow_rank_whose_extra_time_is_its_data_loader():
    """Rank 2's window is 460 ms against 400 ms for the others; its data loader runs 54 ms against 4 ms. The
    loader explains 50 ms of the 60 ms excess: the straggler (a symptom) is bounded by that cause, even though
    both claim `straggler` (docs/time-budget.md, rule 5)."""
    members = [_member(0.34, 0.05, 0.4), _member(0.34, 0.05, 0.4), _member(0.34, 0.05, 0.46, 0.06, 0.054)]
    metrics, result = _with_members(members, 2)
    assert metrics["straggler_excess_time"].value == pytest.approx(0.06)
    assert metrics["straggler_dataloader_time_excess"].value == pytest.approx(0.05)
    fired = {f.name: f for f in result.findings}
    assert {"straggler-rank", "straggler-rank-host"} <= set(fired)
    assert "straggler-rank-device" not in fired and "straggler-rank-comm" not in fired
    assert fired["straggler-rank-host"].claims == fired["straggler-rank"].claims == "straggler"
    assert fired["straggler-rank-host"].estimated_speedup == pytest.approx(0.05 / 0.46)  # 10.87 % of the window
    straggler = fired["straggler-rank"]
    assert (straggler.estimated_speedup, straggler.bound) == (pytest.approx(0.05 / 0.46), "straggler-rank-host")


def test_synchronous_ranks_show_the_slow_one_by_its_compute_not_its_window():
    """Data parallel: every window is 400 ms, but rank 1 computes 60 ms longer and the others wait 50 ms longer
    in their all-reduces: balancing moves work, it removes none, so every rank computes the mean 320 ms and rank 1
    gives back 40 ms, 10 % of the window (not the others' whole 50 ms wait: issue 34)."""
    members = [_member(0.30, 0.10, 0.4), _member(0.36, 0.05, 0.4), _member(0.30, 0.10, 0.4)]
    _, result = _with_members(members, 1)
    fired = {f.name: f for f in result.findings}
    assert "straggler-rank" not in fired
    imbalance = fired["rank-compute-imbalance"]
    assert imbalance.estimated_speedup == pytest.approx((0.36 - 0.32) / 0.4)
    _, other = _with_members(members, 0)  # a rank that waits: it computes less
    assert "rank-compute-imbalance" not in {f.name for f in other.findings}


@pytest.mark.parametrize("seed", range(40))
def test_no_estimate_exceeds_a_bound_it_names_on_random_windows(seed):
    """Random but consistent windows: every estimate within each bound it is capped by, a symptom within its
    causes, and the findings' total within the device's idle time plus the exposed and spread time they claim."""
    rng = random.Random(seed)
    window = 0.4
    idle = rng.uniform(0, 0.8) * window
    parts = [rng.random() for _ in range(3)]
    host, kernel, other = (idle * p / sum(parts) for p in parts)
    busy = window - idle
    comm = rng.uniform(0, 0.5) * busy
    exposed = rng.uniform(0, 1) * comm
    mem = rng.uniform(0, 0.3) * busy
    mem_exposed = rng.uniform(0, 1) * mem
    pageable = rng.uniform(0, 1) * mem
    median = rng.uniform(0.05, 0.08)
    sync_time = rng.uniform(0, 0.5) * window
    loader = rng.uniform(0, 1) * host  # the host-wait idle split among its owners
    after_syncs = min(rng.uniform(0, 1) * (host - loader), sync_time)
    cv = rng.uniform(0, 0.5)
    values = steady_state(
        device_idle=idle, device_idle_fraction=idle / window, device_busy=busy, device_busy_fraction=busy / window,
        idle_host_wait=host, idle_kernel_wait=kernel, idle_other=other, idle_host_wait_fraction=host / window,
        idle_kernel_wait_fraction=kernel / window, idle_other_fraction=other / window,
        comm_time=comm, comm_fraction=comm / window, comm_exposed=exposed, comm_exposed_fraction=exposed / window,
        memory_op_time=mem, memory_op_fraction=mem / window, memory_op_exposed=mem_exposed,
        memory_op_exposed_fraction=mem_exposed / window, pageable_copy_time=pageable,
        pageable_copy_fraction=pageable / window, pageable_copy_count=rng.randint(0, 50),
        sync_time=sync_time, dataloader_idle_fraction=loader / window, sync_idle=after_syncs,
        sync_idle_fraction=after_syncs / window, idle_host_wait_other=host - loader - after_syncs,
        short_kernel_fraction=rng.uniform(0, 1), launch_time_total=rng.uniform(0, 0.3) * window,
        step_time_median=median, step_time_mean=median * rng.uniform(1, 1.3), step_time_cv=cv,
        loader_free_step_cv=cv * rng.uniform(0, 1), loader_free_step_excess=5 * median * rng.uniform(0, 0.3),
        warmup_fraction=rng.uniform(0, 0.6), low_occupancy_time_fraction=rng.uniform(0, 1))
    values["sync_fraction"] = values["sync_time"] / window
    a = analyse(values)
    limits = bound_values(a.bounds)
    for f in a.findings:
        if f.estimated_speedup is None:
            continue
        for name in f.capped_by:
            if limits[name] is not None:
                assert f.estimated_speedup <= limits[name] + EPS, (f.name, name)
        causes = [c for c in a.findings if f.name in c.explains and c.claim != f.claim]
        if causes:
            assert f.estimated_speedup <= sum(c.estimated_speedup or 0.0 for c in causes) + EPS, f.name
    for name in ("host-bound", "sync-in-step", "launch-overhead", "dataloader-stall"):
        f = finding(a, name)
        if f is not None and f.estimated_speedup is not None:
            assert f.estimated_speedup <= idle / window + EPS, name  # never more than the idle time it explains
    owners = [finding(a, n) for n in ("sync-in-step", "launch-overhead", "dataloader-stall")]
    owned = sum(f.estimated_speedup or 0.0 for f in owners if f is not None)
    assert owned <= (host + kernel) / window + EPS  # each piece of the host and kernel wait claimed once
    total = claimed_together(a.findings, limits)
    assert total is None or total < 1.0


def test_units_of_the_messages():
    """Every number a message shows carries its unit: the launch-overhead message on the hand-made window."""
    a = analyse(steady_state(short_kernel_fraction=0.8, short_kernel_count=4000, launch_time_total=0.03,
                             idle_host_wait=0.1, idle_host_wait_fraction=0.25, idle_host_wait_other=0.1,
                             idle_kernel_wait=0.02, idle_kernel_wait_fraction=0.05, kernel_time_median=3.0e-6,
                             launch_time_mean=6.0e-6, launch_idle=0.1, queue_length_mean=0.6))
    message = finding(a, "launch-overhead").message
    assert "median kernel 3 µs; launch call 5 µs at the median, 6 µs on average" in message
    assert "took 30 ms of host time" in message


def test_metric_values_keep_their_pack_units():
    a = analyse(steady_state())
    assert a.metrics["launch_gap_time"].unit == "s"
    assert a.value("launch_gap_time") == pytest.approx(0.0226)  # s: 10.6 ms launching + 12 ms kernel wait
    assert a.metrics["step_excess_time"].unit == "s" and a.value("step_excess_time") == pytest.approx(0.0)
    assert isinstance(a.metrics["non_compute_fraction"], Metric)
