"""A pack's place in the time budget: `bounds`, and a rule's `capped_by`, `claims` and `catch_all`."""

import pytest
from packs.test_load import GOOD_RULE, pack_text, refused

from advisor.packs.load import load_packs

ESTIMATED = GOOD_RULE + "    estimated_speedup: 0.1\n"


def test_a_rule_names_bounds_from_any_loaded_pack_and_claims_time(write):
    path = write("pack.yaml", pack_text(ESTIMATED + "    capped_by: [memory_floor]\n    claims: memory-traffic\n"
                                        "    catch_all: true\n", head="pack: test\nversion: 1\nkinds: [neuron]\n"))
    rule = load_packs([path], kind="neuron").rule("T001")
    assert (rule.capped_by, rule.claims, rule.catch_all) == (("memory_floor",), "memory-traffic", True)


def test_an_org_pack_declares_its_own_bound(write):
    text = ("pack: test\nversion: 1\nkinds: [neuron]\nbounds:\n  - {name: org_floor, title: Org floor, "
            "recoverable: 1 - dma_active_time_percent}\nrules:" + ESTIMATED + "    capped_by: [org_floor]\n")
    rules = load_packs([write("pack.yaml", text)], kind="neuron")
    assert [b.name for b in rules.bounds if b.pack == "test"] == ["org_floor"]


@pytest.mark.parametrize(("extra", "expected"), [
    ("    capped_by: [memory_flor]\n", "capped_by unknown bound 'memory_flor'"),
    ("    claims: Memory Traffic\n", "must be a kebab-case name"),
    ("    catch_all: yes please\n", "catch_all must be true or false"),
])
def test_budget_keys_are_checked_with_file_and_line(write, extra, expected):
    message = refused(write, pack_text(ESTIMATED + extra, head="pack: test\nversion: 1\nkinds: [neuron]\n"))
    assert expected in message and "pack.yaml:" in message


def test_a_claim_needs_an_estimate(write):
    message = refused(write, pack_text(GOOD_RULE + "    claims: memory-traffic\n"))
    assert "needs estimated_speedup" in message


def test_a_bound_is_an_expression_over_known_names(write):
    text = "pack: test\nversion: 1\nbounds:\n  - {name: b, title: B, recoverable: 1 - no_such_metric}\n"
    assert "no_such_metric" in refused(write, text)


def test_bound_names_are_each_kinds_own(write):
    """Issue 24: like rule names, bound names are unique among the packs of one kind only, and `capped_by`
    names a bound of the kind it is loaded for (bare, or KIND/NAME)."""
    ncu_bound = """pack: gpu
version: 1
kinds: [ncu]
bounds:
  - {name: idle_time, title: GPU idle, recoverable: 1 - compute_throughput_percent}
rules:
  - id: G001
    name: gpu-rule
    title: A test rule
    severity: high
    when: compute_throughput_percent > 0.5
    message: Busy.
    recommendation: Less.
    estimated_speedup: 0.1
    capped_by: [ncu/idle_time]
"""
    catalogue = load_packs([write("gpu.yaml", ncu_bound)])  # neuron's pack has an `idle_time` bound too
    assert catalogue.rule("G001").capped_by == ("idle_time",)
    assert [b.pack for b in catalogue.bounds if b.name == "idle_time"] == ["neuron", "gpu"]
    assert [b.pack for b in load_packs([write("gpu.yaml", ncu_bound)], kind="ncu").bounds
            if b.name == "idle_time"] == ["gpu"]

    twice = ncu_bound.replace("kinds: [ncu]", "kinds: [neuron]").replace("capped_by: [ncu/idle_time]",
                                                                          "capped_by: [idle_time]")
    assert "bound 'idle_time' is already declared" in refused(write, twice)
    other = ncu_bound.replace("capped_by: [ncu/idle_time]", "capped_by: [neuron/idle_time]")
    assert "capped_by bound 'neuron/idle_time' is not of profile kind 'ncu'" in refused(write, other)


NEURON = "pack: test\nversion: 1\nkinds: [neuron]\n"


@pytest.mark.parametrize(("estimate", "shown"), [
    ("1e300", "1e300"), ("1.5", "1.5"), ("-0.1", "-0.1"),
    ("share * 2", "share * 2 = 1.5"),  # params are known when the pack is checked too
    ("1 / 0", "1 / 0 = unknown"),
])
def test_a_constant_estimate_outside_zero_to_one_is_refused_naming_the_rule(write, capsys, estimate, shown):
    """Issue (safety): `estimated_speedup: 1e300` passed `rules validate` and was clamped to 100 % at run time.
    An estimate that reads no metric is known when the pack is checked: one line, file:line and the rule."""
    from advisor.cli import main

    rule = GOOD_RULE.replace("{min_ratio: 2}", "{min_ratio: 2, share: 0.75}")
    path = write("pack.yaml", pack_text(rule + f"    estimated_speedup: {estimate}\n", head=NEURON))
    assert main(["rules", "validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"advisor: error: {path}:5: rule T001 (test-rule): estimated_speedup {shown} is not "
                                "a share of time (0..1, e.g. 0.25 for 25 %)"]
    assert out == ""


@pytest.mark.parametrize("recoverable", ["1e300", "-0.5", "2 - 0.5"])
def test_a_constant_bound_outside_zero_to_one_is_refused_naming_the_bound(write, recoverable):
    text = NEURON + f"bounds:\n  - {{name: org_floor, title: Org floor, recoverable: {recoverable}}}\n"
    message = refused(write, text)
    assert f"pack.yaml:5: bound 'org_floor': recoverable {recoverable}" in message
    assert "is not a share of time (0..1" in message


@pytest.mark.parametrize("estimate", ["0", "1", "0.25", "dma_active_time_percent * 1e300"])
def test_an_estimate_in_range_or_read_from_metrics_passes(write, estimate):
    """A formula over metrics is only known at run time, where a value above 1 is unavailable (never clamped)."""
    path = write("pack.yaml", pack_text(ESTIMATED.replace("0.1", estimate), head=NEURON))
    assert load_packs([path], kind="neuron").rule("T001").estimated_speedup is not None
