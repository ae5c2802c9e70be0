"""Every built-in rule's own examples, run through the whole pipeline."""

import pytest

from advisor.engine.examples import run_example
from advisor.packs.load import load_packs

RULESET = load_packs()
CASES = [(rule, ex) for rule in RULESET.rules for ex in rule.examples]


@pytest.mark.parametrize(("rule", "example"), CASES,
                         ids=[f"{RULESET.qualified(r)[0]}-{i}" for i, (r, _) in enumerate(CASES)])
def test_example(rule, example):
    result = run_example(RULESET, rule, example)
    assert result.ok, f"{example.where}: expected {example.expect}, got {result.outcome} ({result.detail})"


@pytest.mark.parametrize("rule", RULESET.rules, ids=lambda r: RULESET.qualified(r)[0])
def test_every_rule_has_a_firing_and_a_passing_example(rule):
    expects = {ex.expect for ex in rule.examples}
    assert {"fire", "pass"} <= expects


def test_a_wrong_expectation_is_caught():
    """The example runner must be able to fail: flip an expectation and it reports a mismatch."""
    from dataclasses import replace

    rule = RULESET.rule("vector-engine-bound")
    firing = next(ex for ex in rule.examples if ex.expect == "fire")
    assert not run_example(RULESET, rule, replace(firing, expect="pass")).ok
