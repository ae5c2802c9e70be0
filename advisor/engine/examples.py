"""Run rule packs' own examples: each example's metrics go through the whole pipeline (derived
metrics, hardware, every rule), and the rule under test must end as the example expects."""

from __future__ import annotations

from dataclasses import dataclass

from advisor import kinds
from advisor.core.model import Profile, SourceInfo
from advisor.engine.evaluate import Selection, evaluate
from advisor.kinds.base import ProfileKind
from advisor.metrics import hardware
from advisor.metrics.derive import derive
from advisor.packs.model import Example, RuleDef, RuleSet

_OUTCOME_OF_EXPECT = {"fire": "fired", "pass": "passed", "not_applicable": "not_applicable", "skip": "skipped"}


@dataclass(frozen=True)
class ExampleResult:
    rule: RuleDef
    example: Example
    outcome: str
    detail: str

    @property
    def ok(self) -> bool:
        return _OUTCOME_OF_EXPECT[self.example.expect] == self.outcome


def example_kind(ruleset: RuleSet, rule: RuleDef, example: Example) -> ProfileKind:
    """The profile kind an example is a profile of: the kind the rule set was loaded for, else among the
    kinds the rule's pack applies to, the first whose hardware table has the example's target."""
    pack = next(p for p in ruleset.packs if p.name == rule.pack)
    names = (ruleset.kind,) if ruleset.kind else pack.kinds
    candidates = [kinds.get(name) for name in names] if names else list(kinds.available())
    return next((k for k in candidates if example.hardware in hardware.target_names(k)), candidates[0])


def run_example(ruleset: RuleSet, rule: RuleDef, example: Example) -> ExampleResult:
    kind = example_kind(ruleset, rule, example)
    ruleset = ruleset.for_kind(kind.name) or ruleset  # a profile of that kind runs that kind's rules
    profile = Profile(source=SourceInfo(path=example.where, format="example", shape="example"),
                      values=dict(example.metrics), info={}, kind=kind.name)
    hw = hardware.resolve(kind, {}, example.hardware) if example.hardware else None
    metrics = derive(profile, hw, ruleset)
    overrides = {f"{rule.name}.{k}": v for k, v in example.params.items()}
    result = evaluate(ruleset, metrics, hw, Selection(params=overrides))
    outcome = next(o for o in result.outcomes if o.name == rule.name)
    return ExampleResult(rule=rule, example=example, outcome=outcome.outcome, detail=outcome.detail)


def run_examples(ruleset: RuleSet, pack_names: set[str] | None = None) -> list[ExampleResult]:
    return [run_example(ruleset, rule, ex) for rule in ruleset.rules
            if pack_names is None or rule.pack in pack_names for ex in rule.examples]
