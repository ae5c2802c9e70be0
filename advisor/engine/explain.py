"""One explanation of a rule, built from its definition and its pack, for every place that explains it:
`advisor rules show` (text and `--json`) and the rule reference `advisor rules docs` writes (Markdown).
Each renders this value, so what a rule means is worded once (ruff's `Explanation::from_rule`).

`SHOWN` says where each `RuleDef` field goes and `HIDDEN` why a field is left out, so a new field is
either explained or left out on purpose (tests/engine/test_explain.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from advisor.packs.model import BoundDef, RuleDef, RuleSet

# RuleDef field -> the Explanation field that carries it
SHOWN = {
    "id": "id", "name": "name", "kinds": "kinds", "title": "title", "category": "category", "severity": "severity",
    "pack": "pack", "where": "where", "aliases": "aliases", "requires": "requires", "explains": "explains",
    "when": "condition", "params": "params", "param_units": "params", "message": "message",
    "root_cause": "root_cause", "recommendation": "recommendation", "estimated_speedup": "estimate",
    "speedup_scope": "estimate", "global_with": "estimate", "capped_by": "estimate", "claims": "estimate",
    "catch_all": "catch_all", "references": "references", "examples": "examples", "caps_only": "estimate",
}
# RuleDef field -> why no rendering shows it
HIDDEN = {"placeholders": "the {names} of the message, which is shown whole"}
# fields one rendering leaves out, with why
HIDDEN_IN = {"markdown": {"where": "a path on the machine that wrote the pages; `advisor rules show` prints it"}}

CATCH_ALL = ("A catch-all: it ranks after every specific cause, and its estimate is capped by the tightest bound "
             "any fired rule names.")


@dataclass(frozen=True)
class RuleLink:
    """Another rule this one names (requires, explains, global_with), as its kind resolves it."""

    name: str
    qualified: str  # kind/name
    pack: str  # its page is PACK/NAME.md in the rule reference


@dataclass(frozen=True)
class Param:
    name: str
    default: float
    unit: str  # '' when the threshold compares with no metric of a unit


@dataclass(frozen=True)
class BoundNote:
    """A bound of the time budget that caps the estimate (docs/time-budget.md)."""

    name: str
    title: str  # '' when no pack of the rule's kind declares it
    description: str


@dataclass(frozen=True)
class Estimate:
    formula: str
    scope: str  # global | local (Nsight Compute's scopes)
    meaning: str  # what the figure is a share of, and what caps it
    global_with: tuple[RuleLink, ...]
    capped_by: tuple[BoundNote, ...]
    claims: str  # the piece of time it shares with other findings ('' for its own)


@dataclass(frozen=True)
class ExampleNote:
    expect: str
    hardware: str | None
    metrics: dict[str, float | None]
    params: dict[str, float]


@dataclass(frozen=True)
class Explanation:
    id: str
    name: str
    qualified: tuple[str, ...]  # kind/name in each kind it is named in
    kinds: tuple[str, ...]  # its pack's kinds; empty: every kind
    title: str
    pack: str
    where: str  # file:line of its definition
    severity: str
    category: str
    aliases: tuple[str, ...]
    requires: tuple[RuleLink, ...]
    explains: tuple[RuleLink, ...]
    condition: str
    params: tuple[Param, ...]
    message: str
    root_cause: str
    recommendation: str
    estimate: Estimate | None
    catch_all: bool
    references: tuple[str, ...]
    examples: tuple[ExampleNote, ...]

    @property
    def kinds_text(self) -> str:
        return ", ".join(self.kinds) or "all"


def explain(rule: RuleDef, ruleset: RuleSet) -> Explanation:
    """The explanation of `rule`, its references resolved in its own kind (the first, for a pack of several)."""
    kind = next(iter(ruleset.kinds_of(rule)), None)
    own = (ruleset.for_kind(kind) if kind is not None else None) or ruleset

    def link(name: str) -> RuleLink:
        other = own.rule(name)
        return RuleLink(name, f"{kind}/{name}" if kind else name, other.pack if other is not None else rule.pack)

    bounds = {b.name: b for b in own.bounds}
    return Explanation(
        id=rule.id, name=rule.name, qualified=ruleset.qualified(rule), kinds=rule.kinds, title=rule.title,
        pack=rule.pack, where=rule.where, severity=rule.severity, category=rule.category, aliases=rule.aliases,
        requires=tuple(map(link, rule.requires)), explains=tuple(map(link, rule.explains)), condition=rule.when.text,
        params=tuple(Param(k, v, rule.param_units.get(k, "")) for k, v in rule.params.items()),
        message=rule.message, root_cause=rule.root_cause, recommendation=rule.recommendation,
        estimate=_estimate(rule, link, bounds), catch_all=rule.catch_all, references=rule.references,
        examples=tuple(ExampleNote(e.expect, e.hardware, dict(e.metrics), dict(e.params)) for e in rule.examples),
    )


def _estimate(rule: RuleDef, link, bounds: dict[str, BoundDef]) -> Estimate | None:
    if rule.estimated_speedup is None:
        return None
    capped = tuple(BoundNote(n, bounds[n].title, bounds[n].description) if n in bounds else BoundNote(n, "", "")
                   for n in rule.capped_by)
    return Estimate(formula=rule.estimated_speedup.text, scope=rule.speedup_scope, meaning=meaning(rule),
                    global_with=tuple(map(link, rule.global_with)), capped_by=capped, claims=rule.claims)


def _names(names: tuple[str, ...]) -> str:
    return " or ".join(f"`{n}`" for n in names)


def meaning(rule: RuleDef) -> str:
    """What the estimate is a share of and what caps it, as the engine computes it (engine/evaluate.py): a
    global one is a share of total time; a local one (Nsight Compute) is of one unit's own inefficiency and
    becomes global only when a rule of `global_with` fired; bounds cap a global estimate only."""
    parents = f", capped by the estimate of {_names(rule.requires)}" if rule.requires else ""
    bounds = " The bounds below cap it." if rule.capped_by else ""
    if rule.caps_only:
        return (f"A ceiling, not a gain: it caps the estimates of the rules that require it or that it makes global"
                f"{parents}, and the finding claims no time of its own.{bounds}")
    if rule.speedup_scope != "local":
        return f"Share of total time recoverable at most{parents}.{bounds}"
    if not rule.global_with:
        return f"Of that unit's own inefficiency (local), as Nsight Compute estimates it{parents}; it stays local."
    once = " Once global, the bounds below cap it." if rule.capped_by else ""
    return (f"Of that unit's own inefficiency (local), as Nsight Compute estimates it{parents}; global when "
            f"{_names(rule.global_with)} fired, then capped by that rule's estimate.{once}")


# --------------------------------------------------------------------------------- text and JSON


def _number(value: float | None) -> str:
    return "null" if value is None else f"{value:g}"


def as_text(e: Explanation) -> str:
    """`advisor rules show`: the explanation as indented lines."""
    lines = [f"{e.id} {' '.join(e.qualified)}: {e.title}",
             f"  pack {e.pack} · kinds {e.kinds_text} · severity {e.severity} · category {e.category} · "
             f"defined at {e.where}"]
    if e.aliases:
        lines.append(f"  aliases: {', '.join(e.aliases)} (former names, still accepted)")
    if e.requires:
        lines.append(f"  requires: {', '.join(r.name for r in e.requires)} (fires only after them)")
    if e.explains:
        lines.append(f"  explains: {', '.join(r.name for r in e.explains)} (they are not root causes when this fires)")
    lines.append(f"  when: {e.condition}")
    lines += [f"  param {p.name} = {p.default:g}{' ' + p.unit if p.unit else ''}" for p in e.params]
    lines.append(f"  message: {e.message}")
    if e.root_cause:
        lines.append(f"  root cause: {e.root_cause}")
    lines.append(f"  recommendation: {e.recommendation}")
    if e.estimate is not None:
        est = e.estimate
        lines += [f"  estimated speedup ({est.scope}): {est.formula}", f"    {est.meaning}"]
        lines += [f"    capped by {b.name}{': ' + b.title if b.title else ''}" for b in est.capped_by]
        if est.claims:
            lines.append(f"    claims {est.claims}: findings with the same claim count once together")
    if e.catch_all:
        lines.append(f"  catch-all: {CATCH_ALL}")
    lines += [f"  reference: {ref}" for ref in e.references]
    for ex in e.examples:
        metrics = ", ".join(f"{k}={_number(v)}" for k, v in ex.metrics.items())
        params = "".join(f", {k}={v:g}" for k, v in ex.params.items())
        lines.append(f"  example ({ex.expect}{' on ' + ex.hardware if ex.hardware else ''}): {metrics}{params}")
    return "\n".join(lines)


def as_json(e: Explanation) -> dict[str, Any]:
    """`advisor rules show --json`: every field of the explanation."""
    return asdict(e)
