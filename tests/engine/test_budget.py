"""The time budget's arithmetic: caps, catch-alls, severities under their causes, claims counted once."""

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.core.expr import compile_expression
from advisor.core.model import Evidence, Finding
from advisor.engine import budget
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


def test_a_symptom_with_two_causes_is_held_to_the_most_severe_of_them():
    """The ceiling is the most severe cause's, not the least (review 4 §4.4 E4: `max` → `min` survived, every test
    having one cause per symptom). A critical symptom of a low and a high cause is high; a high symptom stays high."""
    found = budget.severities_below_causes([
        finding("minor-cause", severity="low", explains=("stall", "busy")),
        finding("major-cause", severity="high", explains=("stall", "busy")),
        finding("stall", severity="critical"),
        finding("busy", severity="high")])
    assert [f.severity for f in found] == ["low", "high", "high", "high"]


def test_a_catch_all_is_capped_by_its_own_causes_bounds_not_by_every_fired_bound():
    """A catch-all that specific findings explain is capped by the bounds they name; another fired rule's tighter
    bound is about other time and caps it not (review 4 §4.4 E6, killed by a golden only)."""
    values = {"memory": 0.5, "pipeline": 0.1}
    found = budget.cap_catch_alls([finding("reload", 0.4, capped_by=("memory",), explains=("mfu",)),
                                   finding("dma-wait", 0.1, capped_by=("pipeline",)),
                                   finding("mfu", 0.8, catch_all=True)], values)
    mfu = found[-1]
    assert (mfu.estimated_speedup, mfu.bound) == (pytest.approx(0.5), "memory")  # not 0.1, "pipeline"


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


def symptom(name, speedup=None, **kw):
    """A finding another explains: not a root cause."""
    return replace(finding(name, speedup, **kw), root_cause=False)


def test_a_zero_estimate_that_shares_a_symptoms_claim_adds_nothing_to_the_sum():
    """torch_host_bound: launch-overhead (23.95 %) explains host-bound (23.95 %, claim host-wait); a pack rule with
    a 0 % estimate and `claims: host-wait` made host-wait a root claim and doubled the total to 47.90 %."""
    launch = finding("launch-overhead", 0.2395, claims="kernel-launches")
    host = symptom("host-bound", 0.2395, claims="host-wait")
    assert budget.claimed_together([launch, host], {}) == pytest.approx(0.2395)
    with_pack = [launch, finding("acme-host-note", 0.0, claims="host-wait"), host]
    assert budget.together_and_bound(with_pack, {}) == (pytest.approx(0.2395), "")  # 23.95 %, not 47.90 %


def test_a_zero_estimate_naming_a_loose_bound_cannot_loosen_the_cap():
    """Two fixes that both leave the 30 % floor in place sum to 30 %; a 0 % rule naming a 90 % bound gives no time
    back, so it cannot lift the sum past that floor (it did: no bound was common any more, and the loosest took
    over)."""
    values = {"tight": 0.30, "loose": 0.90}
    a = finding("a", 0.25, capped_by=("tight",), claims="a")
    b = finding("b", 0.20, capped_by=("tight",), claims="b")
    assert budget.together_and_bound([a, b], values) == (pytest.approx(0.30), "tight")
    zero = finding("zero", 0.0, capped_by=("loose",), claims="zero")
    assert budget.together_and_bound([a, b, zero], values) == (pytest.approx(0.30), "tight")
    smaller = finding("smaller", 0.01, capped_by=("loose",), claims="a")  # below its claim's largest: no time
    assert budget.together_and_bound([a, b, smaller], values) == (pytest.approx(0.30), "tight")


def test_zero_estimates_alone_sum_to_zero_not_to_unavailable():
    assert budget.together_and_bound([finding("zero", 0.0, capped_by=("b",))], {"b": 0.4}) == (0.0, "")


def test_a_symptom_that_shares_its_causes_claim_is_bounded_by_it():
    """legacy_trace: tensor-reload (28.55 %) explains weight-reload (36.96 %), both `repeated-loads`; the symptom
    kept 36.96 % and the total took it. The symptom is its cause's time: 28.55 %, set by the cause."""
    cause = finding("tensor-reload", 0.2855, claims="repeated-loads", explains=("weight-reload",))
    weight = finding("weight-reload", 0.3696, claims="repeated-loads")
    found = {f.name: f for f in budget.symptoms_within_causes([cause, weight], {})}
    assert found["weight-reload"].estimated_speedup == pytest.approx(0.2855)
    assert found["weight-reload"].bound == "tensor-reload"


def test_a_zero_estimate_cause_lowers_a_symptom_never_raises_it():
    host = finding("host-bound", 0.2395, claims="host-wait")
    zero = finding("acme-host-note", 0.0, claims="host-wait", explains=("host-bound",))
    found = {f.name: f for f in budget.symptoms_within_causes([zero, host], {})}
    assert found["host-bound"].estimated_speedup == 0.0 and found["host-bound"].bound == "acme-host-note"


def test_sums_count_root_causes_estimates_only_whatever_a_symptom_claims():
    """A symptom's estimate never enters a sum, even where it shares a root cause's claim: the sum is at most what
    the root causes give (28.55 % + 10.24 % = 38.79 % on legacy_trace, not 36.96 % + 10.24 %)."""
    findings = [finding("tensor-reload", 0.2855, claims="repeated-loads"),
                finding("small-dma-payloads", 0.1024, claims="dma-efficiency"),
                symptom("weight-reload", 0.3696, claims="repeated-loads"),
                symptom("memory-bound", 0.4719, claims="memory-traffic")]
    assert budget.claimed_together(findings, {}) == pytest.approx(0.3879)


@pytest.mark.parametrize(("value", "expected"), [
    (0.25, 0.25), (1.0, 1.0), (1.0 + 1e-12, 1.0),  # a ratio of measured times past 1 by rounding only
    (-0.2, 0.0),  # a fix gives back nothing, never less
    (None, None),
])
def test_a_share_of_time_is_zero_to_one(value, expected):
    assert budget.share_of_time(value) == (expected, "")


@pytest.mark.parametrize("value", [1e300, 1.5, float("nan")])
def test_a_value_that_is_no_share_of_time_is_unavailable_never_clamped(value):
    share, problem = budget.share_of_time(value)
    assert share is None and ("more than the whole run" in problem or "NaN" in problem)


def test_a_bound_above_the_whole_run_is_unavailable_with_a_note_naming_it():
    defs = [BoundDef("acme_floor", "ACME floor", compile_expression("t * 1e300", {"t"}), "A floor.", "acme")]
    (found,), notes = budget.bounds_and_notes(defs, {"t": 0.5}, {"t": "fraction"})
    assert found.value is None  # caps nothing, as an unavailable input does; it was clamped to 100 %
    assert notes == {"acme_floor": "advisor: bound acme_floor (pack acme): recoverable evaluated to 5e+299, more "
                                   "than the whole run (a share of time is 0..1); it caps nothing."}
    assert found.description == "A floor. " + notes["acme_floor"]


BOUNDS = {"tight": 0.3, "mid": 0.5, "loose": 0.9}
CLAIMS = ("a", "b", "c")
_finding = st.builds(lambda i, gain, claim, caps, root: replace(
    finding(f"f{i}", gain, capped_by=tuple(caps), claims=claim), root_cause=root),
    st.integers(0, 10**6), st.floats(0.0, 0.6), st.sampled_from(CLAIMS), st.sets(st.sampled_from(sorted(BOUNDS))),
    st.booleans())


@given(st.lists(_finding, max_size=6), st.sampled_from([0.0, None]), st.sampled_from(CLAIMS),
       st.sets(st.sampled_from(sorted(BOUNDS))), st.booleans())
def test_a_finding_with_no_time_never_raises_a_sum(found, gain, claim, caps, root):
    """Whatever else fired, a finding with a 0 % or absent estimate (root cause or symptom, any claim, any
    bounds) leaves "All findings together" as it was or lower."""
    before = budget.claimed_together(found, BOUNDS)
    extra = replace(finding("extra", gain, capped_by=tuple(caps), claims=claim), root_cause=root)
    after = budget.claimed_together([*found, extra], BOUNDS)
    assert (after or 0.0) <= (before or 0.0) + 1e-12
