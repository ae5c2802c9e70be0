"""The time budget's arithmetic: caps, catch-alls, severities under their causes, claims counted once."""

import pytest

from advisor.core.model import Evidence, Finding
from advisor.engine import budget
from advisor.packs.expr import compile_expression
from advisor.packs.model import BoundDef


def finding(name, speedup=None, *, capped_by=(), claims="", catch_all=False, severity="medium", explains=(),
            because=(), scope="global"):
    return Finding(id=name.upper(), name=name, pack="t", severity=severity, category="c", title=name, message="",
                   root_cause=True, because=because, evidence={}, params={}, estimated_speedup=speedup,
                   recommendation="", explains=explains, speedup_scope=scope, capped_by=capped_by, claims=claims,
                   catch_all=catch_all)


def test_bounds_are_computed_from_the_metrics_with_their_inputs():
    defs = [BoundDef("floor", "Floor", compile_expression("1 - t_floor / t", {"t", "t_floor"}), "", "t")]
    (b,) = budget.bounds(defs, {"t": 2e-3, "t_floor": 5e-4}, {"t": "s", "t_floor": "s"})
    assert b.value == pytest.approx(0.75)
    assert b.inputs == {"t": Evidence(2e-3, "s"), "t_floor": Evidence(5e-4, "s")}
    (missing,) = budget.bounds(defs, {"t": 2e-3, "t_floor": None}, {})
    assert missing.value is None  # unavailable, never 0


def test_an_estimate_is_capped_by_each_bound_and_names_the_one_that_set_it():
    assert budget.capped(0.648, ["memory_floor", "pipeline"], {"memory_floor": 0.464, "pipeline": 0.9}) == (
        0.464, "memory_floor")
    assert budget.capped(0.1, ["memory_floor"], {"memory_floor": 0.464}) == (0.1, "")
    assert budget.capped(0.3, ["gone"], {"gone": None}) == (0.3, "")  # an unavailable bound caps nothing
    assert budget.capped(None, ["memory_floor"], {"memory_floor": 0.4}) == (None, "")


def test_a_catch_all_is_capped_by_the_tightest_bound_a_fired_rule_established():
    values = {"pipeline": 0.0393, "memory": 0.77}
    found = budget.cap_catch_alls([finding("dma-wait", 0.0393, capped_by=("pipeline",)),
                                   finding("memory-bound", 0.77, capped_by=("memory",)),
                                   finding("mfu", 0.8668, catch_all=True)], values)
    mfu = found[-1]
    assert mfu.estimated_speedup == pytest.approx(0.0393) and mfu.bound == "pipeline"


def test_a_symptom_is_never_more_severe_than_its_cause_through_a_chain():
    found = budget.severities_below_causes([
        finding("cause", severity="medium", explains=("middle",)),
        finding("middle", severity="high", explains=("leaf",)),
        finding("leaf", severity="critical")])
    assert [f.severity for f in found] == ["medium", "medium", "medium"]


def test_findings_that_claim_the_same_time_count_once():
    values = {"memory": 0.77, "pipeline": 0.04}
    together = budget.claimed_together([
        finding("weight-reload", 0.37, capped_by=("memory",), claims="memory-traffic"),
        finding("tensor-reload", 0.29, capped_by=("memory",), claims="memory-traffic"),
        finding("dma-wait", 0.04, capped_by=("pipeline",), claims="overlap")], values)
    assert together == pytest.approx(0.41)  # 0.37 once for the shared loads, plus 0.04 of overlap
    capped = budget.claimed_together([finding("a", 0.7, capped_by=("memory",)),
                                      finding("b", 0.3, capped_by=("pipeline",))], values)
    assert capped == pytest.approx(0.77)  # never past the loosest bound any of them is capped by
    local = budget.claimed_together([finding("local", 0.5, scope="local")], values)
    assert local is None  # a local estimate is not a share of time


def test_a_bound_every_summed_fix_leaves_in_place_caps_their_sum():
    """Bank conflicts and occupancy both leave the L2 traffic: together they cannot beat the L2 floor."""
    values = {"l2": 0.311, "compute": 0.557}
    together = budget.claimed_together([
        finding("bank-conflicts", 0.311, capped_by=("l2",), claims="bank-conflicts"),
        finding("occupancy", 0.311, capped_by=("l2", "compute"), claims="issue-slots")], values)
    assert together == pytest.approx(0.311)
