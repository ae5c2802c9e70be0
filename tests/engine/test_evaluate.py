import pytest
import yaml

from advisor import kinds
from advisor.core.errors import AdvisorError
from advisor.core.model import Metric, Profile, SourceInfo
from advisor.engine.evaluate import Selection, evaluate, resolve_params
from advisor.metrics.derive import derive
from advisor.metrics.hardware import resolve
from advisor.packs.load import load_packs
from advisor.packs.model import RuleSet

NEURON = kinds.get("neuron")
RULESET = load_packs(kind=NEURON.name)

WEIGHT_RELOAD = {"total_time": 0.001, "hardware_flops": 1.2e10, "transpose_flops": 0, "hbm_read_bytes": 1.0e8,
                 "hbm_write_bytes": 1.0e6, "weight_queue_bytes": 7.2e7, "weight_size_bytes": 6.0e6,
                 "dma_active_time_percent": 0.9, "tensor_engine_active_time_percent": 0.4,
                 "vector_engine_active_time_percent": 0.2}


def run(values, selection=None, hardware="trn1"):
    hw = resolve(NEURON, {}, hardware) if hardware else None
    profile = Profile(SourceInfo("t", "test", "test"), values, {}, kind=NEURON.name)
    return evaluate(RULESET, derive(profile, hw, RULESET), hw, selection)


def outcome(result, name):
    return next(o.outcome for o in result.outcomes if o.name == name)


def test_chain_and_root_cause():
    result = run(WEIGHT_RELOAD)
    by_name = {f.name: f for f in result.findings}
    assert by_name["weight-reload"].because == ("memory-bound",)
    assert by_name["weight-reload"].root_cause is True
    assert by_name["memory-bound"].root_cause is False  # explained by weight-reload


def test_evidence_has_values_and_units():
    finding = next(f for f in run(WEIGHT_RELOAD).findings if f.name == "memory-bound")
    ai = finding.evidence["mm_arithmetic_intensity"]
    assert ai.unit == "FLOP/B"
    assert ai.value == pytest.approx(1.2e10 / 1.01e8)
    assert finding.evidence["peak_flops_bandwidth_ratio"].value == pytest.approx(223.78, abs=0.01)
    assert "mm_arithmetic_intensity (118.8 FLOP/B) < peak_flops_bandwidth_ratio (223.8 FLOP/B)" in finding.condition


def test_message_numbers_carry_units():
    finding = next(f for f in run(WEIGHT_RELOAD).findings if f.name == "weight-reload")
    assert finding.message.startswith("Weights were read 12.0× their size (68.66 MiB through the weight queues "
                                      "for 5.722 MiB of weights)")


def tiny_pack(write, rules: list[dict]) -> RuleSet:
    """A pack of `rules` (each: name, id, severity, optionally requires, estimate and catch_all) on one input x,
    loaded without the built-in packs; every rule fires when x > 0."""
    items = [{"id": r["id"], "name": r["name"], "title": r["name"], "category": "test", "severity": r["severity"],
              "when": "x > 0", "message": "Fired.", "recommendation": "Fix it.",
              **({"requires": r["requires"]} if "requires" in r else {}),
              **({"estimated_speedup": r["estimate"]} if "estimate" in r else {}),
              **({"catch_all": r["catch_all"]} if "catch_all" in r else {})} for r in rules]
    pack = {"pack": "tiny", "version": "1.0.0",
            "inputs": [{"name": "x", "unit": "fraction", "description": "The only input."}], "rules": items}
    return load_packs([write("tiny.yaml", yaml.safe_dump(pack, sort_keys=False))], builtin=False)


def run_tiny(ruleset: RuleSet, selection: Selection | None = None):
    return evaluate(ruleset, {"x": Metric("x", 0.5, "fraction", "reported")}, None, selection)


def test_child_estimate_capped_by_parent(write):
    """The cap binds: the child's own estimate (0.5) is above its parent's (0.1), so it becomes 0.1."""
    ruleset = tiny_pack(write, [
        {"name": "parent", "id": "T001", "severity": "low", "estimate": "0.1"},
        {"name": "child", "id": "T002", "severity": "high", "requires": ["parent"], "estimate": "0.5"}])
    by_name = {f.name: f for f in run_tiny(ruleset).findings}
    assert set(by_name) == {"parent", "child"}
    assert by_name["parent"].estimated_speedup == 0.1
    assert by_name["child"].estimated_speedup == 0.1  # not its own 0.5: capped by the parent's


def test_child_estimate_below_the_cap_is_kept_and_caps_the_parent_it_explains(write):
    """The parent is the symptom the child explains: its time is the child's, so it claims no more."""
    ruleset = tiny_pack(write, [
        {"name": "parent", "id": "T001", "severity": "low", "estimate": "0.5"},
        {"name": "child", "id": "T002", "severity": "high", "requires": ["parent"], "estimate": "0.1"}])
    found = {f.name: f for f in run_tiny(ruleset).findings}
    assert {n: f.estimated_speedup for n, f in found.items()} == {"parent": 0.1, "child": 0.1}
    assert found["parent"].bound == "child" and not found["parent"].root_cause


def test_ranking_is_estimate_then_severity_then_id(write):
    """Findings rank by estimated speedup (highest first, unknown last), ties by severity (most
    severe first), then by id. Declared in an order that matches none of these keys."""
    ruleset = tiny_pack(write, [
        {"name": "low-tie", "id": "T001", "severity": "low", "estimate": "0.3"},
        {"name": "high-tie-later-id", "id": "T005", "severity": "high", "estimate": "0.3"},
        {"name": "unknown-estimate", "id": "T000", "severity": "critical"},
        {"name": "critical-tie", "id": "T009", "severity": "critical", "estimate": "0.3"},
        {"name": "biggest-estimate", "id": "T008", "severity": "low", "estimate": "0.5"},
        {"name": "high-tie-earlier-id", "id": "T003", "severity": "high", "estimate": "0.3"}])
    assert [f.name for f in run_tiny(ruleset).findings] == [
        "biggest-estimate",  # 0.5 beats every 0.3, whatever the severity
        "critical-tie",  # 0.3, critical
        "high-tie-earlier-id",  # 0.3, high, T003
        "high-tie-later-id",  # 0.3, high, T005
        "low-tie",  # 0.3, low
        "unknown-estimate",  # no estimate: last, even though critical
    ]


def test_a_catch_all_ranks_after_every_specific_cause_whatever_its_estimate(write):
    """A catch-all names no mechanism: with a larger estimate and a higher severity it still ranks after the
    specific root causes (review 4 §4.4 E7, killed by a golden only)."""
    ruleset = tiny_pack(write, [
        {"name": "mfu-low", "id": "T001", "severity": "critical", "estimate": "0.8", "catch_all": True},
        {"name": "dma-wait", "id": "T002", "severity": "low", "estimate": "0.1"},
        {"name": "weight-reload", "id": "T003", "severity": "medium", "estimate": "0.3"}])
    found = run_tiny(ruleset).findings
    assert all(f.root_cause for f in found)  # none explains another: only catch_all orders them
    assert [f.name for f in found] == ["weight-reload", "dma-wait", "mfu-low"]


def test_select_brings_required_rules_transitively(write):
    """chain-c requires chain-b, which requires chain-a: selecting c runs the whole chain."""
    ruleset = tiny_pack(write, [
        {"name": "chain-a", "id": "T001", "severity": "low"},
        {"name": "chain-b", "id": "T002", "severity": "low", "requires": ["chain-a"]},
        {"name": "chain-c", "id": "T003", "severity": "low", "requires": ["chain-b"]}])
    assert Selection(select=("chain-c",)).resolve(ruleset) == {"chain-a", "chain-b", "chain-c"}
    assert Selection(select=("T003",)).resolve(ruleset) == {"chain-a", "chain-b", "chain-c"}
    assert Selection(select=("chain-b",)).resolve(ruleset) == {"chain-a", "chain-b"}
    result = run_tiny(ruleset, Selection(select=("chain-c",)))
    assert {o.name: o.outcome for o in result.outcomes} == {"chain-a": "fired", "chain-b": "fired",
                                                             "chain-c": "fired"}


def test_missing_metrics_make_rules_not_applicable_with_the_list():
    result = run({"total_time": 0.1, "vector_engine_active_time_percent": 0.9})
    na = {n.name: n.missing for n in result.not_applicable}
    assert set(na["memory-bound"]) == {"hardware_flops", "transpose_flops", "hbm_read_bytes", "hbm_write_bytes"}
    assert outcome(result, "weight-reload") == "skipped"


def test_no_tensor_rules_without_matmul_work():
    result = run({"total_time": 0.1, "hardware_flops": 0, "matmul_instruction_count": 0, "transpose_flops": 0,
                  "hbm_read_bytes": 1e6, "hbm_write_bytes": 0, "tensor_engine_active_time_percent": 0.0})
    fired = {f.name for f in result.findings}
    assert not fired & {"memory-bound", "compute-bound", "low-tensor-engine-utilization", "transpose-overhead"}


def test_select_ignore_by_name_id_category_and_glob():
    assert {f.name for f in run(WEIGHT_RELOAD, Selection(select=("memory-bound",))).findings} == {"memory-bound"}
    assert {f.name for f in run(WEIGHT_RELOAD, Selection(select=("NRN001",))).findings} == {"memory-bound"}
    names = {f.name for f in run(WEIGHT_RELOAD, Selection(select=("roofline",))).findings}
    assert names == {"memory-bound"}
    ignored = run(WEIGHT_RELOAD, Selection(ignore=("memory-*",)))
    assert "memory-bound" not in {f.name for f in ignored.findings}
    assert outcome(ignored, "weight-reload") == "skipped"  # its requirement is not selected


def test_set_changes_a_threshold():
    assert "weight-reload" in {f.name for f in run(WEIGHT_RELOAD).findings}
    raised = run(WEIGHT_RELOAD, Selection(params={"weight-reload.min_ratio": 20}))
    assert outcome(raised, "weight-reload") == "passed"
    by_id = run(WEIGHT_RELOAD, Selection(params={"NRN006.min_ratio": 20}))
    assert outcome(by_id, "weight-reload") == "passed"


@pytest.mark.parametrize(("key", "problem"), [("nope.min_ratio", "no rule named"),
                                              ("weight-reload.max", "has no param 'max'")])
def test_set_typos_are_errors(key, problem):
    with pytest.raises(AdvisorError, match=problem):
        resolve_params(RULESET, {key: 1.0})


def test_select_brings_required_rules_and_unknown_patterns_fail():
    names = {f.name for f in run(WEIGHT_RELOAD, Selection(select=("weight-reload",))).findings}
    assert names == {"weight-reload", "memory-bound"}
    with pytest.raises(AdvisorError, match="matches no rule"):
        run(WEIGHT_RELOAD, Selection(select=("weigth-reload",)))
    with pytest.raises(AdvisorError, match="matches no rule"):
        run(WEIGHT_RELOAD, Selection(ignore=("nosuch*",)))


@pytest.mark.parametrize(("key", "value", "problem"), [("vector-engine-bound.min_active", 70, "did you mean 0.7"),
                                                       ("weight-reload.min_ratio", -5, "is negative")])
def test_set_refuses_thresholds_that_cannot_be_meant(key, value, problem):
    with pytest.raises(AdvisorError, match=problem):
        resolve_params(RULESET, {key: value})


def test_explains_makes_the_specific_finding_the_root_cause():
    spill = {**WEIGHT_RELOAD, "weight_queue_bytes": 6.0e6, "spill_reload_bytes": 5.0e7, "spill_save_bytes": 4.0e7}
    by_name = {f.name: f for f in run(spill).findings}
    assert by_name["sbuf-spill"].root_cause is True
    assert by_name["memory-bound"].root_cause is False  # explained by the spills
    assert "memory-bound" in by_name["sbuf-spill"].explains


def test_unknown_parent_bound_leaves_the_child_unbounded():
    """weight-reload is capped by memory-bound's bound; when that bound is unknown, so is the child's."""
    values = {k: v for k, v in WEIGHT_RELOAD.items() if not k.endswith("_active_time_percent")}
    values["mm_arithmetic_intensity"] = 50.0
    values["peak_flops_bandwidth_ratio"] = 223.78
    values["dma_active_time_percent"] = 0.9
    by_name = {f.name: f for f in run(values, hardware=None).findings}
    assert by_name["memory-bound"].estimated_speedup is None
    assert by_name["weight-reload"].estimated_speedup is None


def test_an_info_finding_is_context_never_a_root_cause(write):
    """Inherent work (a training step's three weight reads) is context: listed after the causes, not one of them."""
    ruleset = tiny_pack(write, [
        {"name": "context", "id": "T001", "severity": "info", "estimate": "0.5"},
        {"name": "cause", "id": "T002", "severity": "low", "estimate": "0.1"}])
    findings = run_tiny(ruleset).findings
    assert [(f.name, f.root_cause) for f in findings] == [("cause", True), ("context", False)]
