"""What a loaded rule pack is: inputs, derived metrics and rules, and the rule set built from every
loaded pack (rules in dependency order, every name, id and alias resolvable to the current name)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from advisor.core.errors import Problems
from advisor.packs.expr import Expression


class PackError(Problems):
    """One or more problems in rule packs; each is `file:line: problem`."""

    def __init__(self, problems: Sequence[str], where: str = "rule packs"):
        super().__init__(list(problems), where)


@dataclass(frozen=True)
class InputDef:
    name: str
    unit: str
    description: str
    pack: str
    better: str | None = None  # higher | lower: direction of goodness, for compare


@dataclass(frozen=True)
class MetricDef:
    name: str
    expr: Expression
    unit: str
    better: str | None
    description: str
    pack: str
    where: str = ""  # file:line where it is defined, for messages


@dataclass(frozen=True)
class BoundDef:
    """A floor of the time budget: `recoverable` is the share of total time fixes of one class can give back."""

    name: str
    title: str
    recoverable: Expression
    description: str
    pack: str
    where: str = ""


@dataclass(frozen=True)
class Example:
    metrics: dict[str, float | None]
    params: dict[str, float]
    hardware: str | None
    expect: str
    where: str  # file:line, rule and example number, for messages


@dataclass(frozen=True)
class RuleDef:
    id: str
    name: str
    title: str
    category: str
    severity: str
    requires: tuple[str, ...]  # current names (an alias in the pack is resolved at load)
    explains: tuple[str, ...]  # rules this one, when it fires, explains: they are not root causes then
    params: dict[str, float]
    when: Expression
    message: str
    placeholders: tuple[tuple[str, str], ...]  # (name, format spec) in the message
    root_cause: str
    recommendation: str
    estimated_speedup: Expression | None
    references: tuple[str, ...]
    examples: tuple[Example, ...]
    pack: str
    where: str  # file:line where it is defined
    param_units: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()  # former names (or ids) still accepted wherever a rule is named
    # Nsight Compute's scopes: a "local" estimate is of one unit's own inefficiency; it becomes a
    # "global" share of the kernel's time, capped by the parent's, when a rule in global_with fired
    speedup_scope: str = "global"
    global_with: tuple[str, ...] = ()
    capped_by: tuple[str, ...] = ()  # bounds (BoundDef names) the fix cannot move: the estimate is capped by each
    claims: str = ""  # the piece of time the fix shortens, when findings share one (counted once)
    catch_all: bool = False  # a generic rule: ranks after every specific cause, capped by their bounds

    @property
    def keys(self) -> tuple[str, ...]:
        """Everything that names this rule: name, id, aliases."""
        return (self.name, self.id, *self.aliases)


@dataclass(frozen=True)
class Pack:
    name: str
    version: str
    description: str
    path: str
    inputs: tuple[InputDef, ...] = ()
    metrics: tuple[MetricDef, ...] = ()
    rules: tuple[RuleDef, ...] = ()
    kinds: tuple[str, ...] = ()  # the profile kinds the pack applies to; empty = every kind
    bounds: tuple[BoundDef, ...] = ()

    def applies_to(self, kind: str | None) -> bool:
        return applies(self.kinds, kind)


def applies(kinds: Sequence[str], kind: str | None) -> bool:
    """A pack for `kinds` is used for a `kind` profile (None = any: every pack is)."""
    return kind is None or not kinds or kind in kinds


@dataclass(frozen=True)
class RuleSet:
    packs: tuple[Pack, ...]
    inputs: dict[str, InputDef]
    metrics: tuple[MetricDef, ...]
    rules: tuple[RuleDef, ...]  # in dependency order: every rule after the rules it requires
    hardware_names: tuple[str, ...] = field(default=())
    kind: str | None = None  # the profile kind the packs were chosen for; None = every pack
    bounds: tuple[BoundDef, ...] = ()  # the time budget of every loaded pack
    # name, id or alias -> current name; built once, so mapping saved findings is a dict lookup
    names: dict[str, str] = field(init=False, repr=False, compare=False)
    _by_name: dict[str, RuleDef] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {r.name: r for r in self.rules}
        names = {key: r.name for r in self.rules for key in (*r.aliases, r.id)}
        names.update({name: name for name in by_name})  # a current name wins over anything else
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "names", names)

    def canonical(self, key: str) -> str | None:
        """The current name of the rule named, by name, id or alias; None when no rule has it."""
        return self.names.get(key)

    def rule(self, key: str) -> RuleDef | None:
        """The rule with this name, id or alias."""
        name = self.names.get(key)
        return self._by_name[name] if name is not None else None
