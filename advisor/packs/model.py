"""What a loaded rule pack is: inputs, derived metrics and rules, and the rule set built from every
loaded pack (rules in dependency order, every name, id and alias resolvable to the current name).

Rule names are per profile kind: `ncu/memory-bound` and `neuron/memory-bound` are two rules. A rule set
loaded for one kind answers to bare names; one loaded for no kind (a catalogue: `rules list`, `show`,
`docs`) holds every kind's rule set and refuses a bare name that rules of several kinds answer to."""

from __future__ import annotations

import graphlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from advisor.core.errors import AdvisorError, Problems
from advisor.core.expr import Expression


class PackError(Problems):
    """One or more problems in rule packs; each is `file:line: problem`."""

    def __init__(self, problems: Sequence[str], where: str = "rule packs"):
        super().__init__(list(problems), where)


class AmbiguousRule(AdvisorError):
    """A bare rule name (id, alias) that rules of several profile kinds answer to, where no kind is known."""

    def __init__(self, key: str, candidates: Sequence[str]):
        super().__init__(key, f"ambiguous: rules of several profile kinds answer to it ({', '.join(candidates)}); "
                              "name one as KIND/NAME")
        self.candidates = tuple(candidates)

    def __reduce__(self):
        return (type(self), (self.where, self.candidates))


def split_kind(key: str) -> tuple[str | None, str]:
    """`ncu/memory-bound` -> ("ncu", "memory-bound"); a bare key -> (None, key). Names, ids and aliases
    never hold a slash, so the first one separates the kind."""
    kind, sep, rest = key.partition("/")
    return (kind, rest) if sep else (None, key)


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
class TermDef:
    """A word of advice that depends on the profile: the text of `values` chosen by the profile's text field
    `source` (the torch kind's device_vendor: nvidia, amd, mtia), or without `values` that field's own text
    quoted (a fact the trace names: the operator stack of a blocking copy). A rule's text names it as `{name}`; a
    profile whose field is absent or not in `values` has no such term, and the clause naming it is dropped,
    as for a missing number."""

    name: str
    source: str
    values: Mapping[str, str] | None  # None: the field's own text, quoted (trimmed to MAX_QUOTED characters)
    description: str
    pack: str
    where: str = ""


MAX_QUOTED = 300  # characters of a profile's text a term quotes: an operator stack, not a page


def _quoted(text: object) -> str:
    """A profile's own text as a term quotes it: one line, at most MAX_QUOTED characters (cut with an ellipsis)."""
    line = " ".join(str(text).split()) if isinstance(text, str) else ""
    return line if len(line) <= MAX_QUOTED else line[:MAX_QUOTED - 1] + "…"


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
    # its estimate is a ceiling for the rules that require it or that it makes global, not a gain of its own
    # (Nsight Compute's throughput lead: a gap between two units' busy shares is no time a fix gives back)
    caps_only: bool = False
    kinds: tuple[str, ...] = ()  # its pack's profile kinds (empty: every kind): `kind/name` names it in each

    @property
    def keys(self) -> tuple[str, ...]:
        """Everything that names this rule within its kind: name, id, aliases."""
        return (self.name, self.id, *self.aliases)

    @property
    def identity(self) -> tuple[str, str]:
        """(pack, name): one rule across kinds (a pack's rule names are unique, pack names too)."""
        return (self.pack, self.name)


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
    terms: tuple[TermDef, ...] = ()

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
    # a catalogue (kind None): each kind's own rule set, where its bare names are resolved
    by_kind: Mapping[str, RuleSet] = field(default_factory=dict)
    # name, id or alias -> current name; built once, so mapping saved findings is a dict lookup
    names: dict[str, str] = field(init=False, repr=False, compare=False)
    _by_name: dict[str, RuleDef] = field(init=False, repr=False, compare=False)
    _by_identity: dict[tuple[str, str], RuleDef] = field(init=False, repr=False, compare=False)

    @property
    def terms(self) -> dict[str, TermDef]:
        """Every pack's terms by name (the first pack's where two share one: the loader refuses that)."""
        found: dict[str, TermDef] = {}
        for pack in self.packs:
            for term in pack.terms:
                found.setdefault(term.name, term)
        return found

    def texts(self, info: Mapping[str, str]) -> dict[str, str]:
        """The terms' texts for a profile with these text fields (info); a term without one is left out."""
        chosen = {name: (t.values.get(info.get(t.source, "")) if t.values is not None
                         else _quoted(info.get(t.source, ""))) for name, t in self.terms.items()}
        return {name: text for name, text in chosen.items() if text}

    def __post_init__(self) -> None:
        by_name = {r.name: r for r in self.rules}
        names = {key: r.name for r in self.rules for key in (*r.aliases, r.id)}
        names.update({name: name for name in by_name})  # a current name wins over anything else
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "_by_identity", {r.identity: r for r in self.rules})

    def canonical(self, key: str) -> str | None:
        """The current name of the rule named, by name, id or alias (or KIND/any of them); None when no rule
        has it. Raises AmbiguousRule for a bare key that rules of several kinds of a catalogue answer to."""
        rule = self.rule(key)
        return rule.name if rule is not None else None

    def rule(self, key: str) -> RuleDef | None:
        """The rule with this name, id or alias, bare or as KIND/NAME; None when no rule here has it.
        Raises AmbiguousRule for a bare key that rules of several kinds of a catalogue answer to."""
        kind, bare = split_kind(key)
        if self.by_kind:
            named = self.candidates(key)
            if len(named) > 1:
                raise AmbiguousRule(key, sorted(q for r in named for q in self.qualified(r)))
            return named[0] if named else None
        name = self.names.get(bare)
        found = self._by_name[name] if name is not None else None
        if found is not None and kind is not None and self.kinds_of(found) and kind not in self.kinds_of(found):
            return None  # a rule of another kind than the one named
        return found

    def candidates(self, key: str) -> list[RuleDef]:
        """Every distinct rule this key names: one at most in a kind's rule set; in a catalogue, a bare key
        may name rules of several kinds."""
        kind, bare = split_kind(key)
        if not self.by_kind:
            one = self.rule(key)
            return [one] if one is not None else []
        subsets = list(self.by_kind.values()) if kind is None else [s for k, s in self.by_kind.items() if k == kind]
        found: dict[tuple[str, str], RuleDef] = {}
        for subset in subsets:
            rule = subset.rule(bare)
            if rule is not None:
                found.setdefault(rule.identity, self._by_identity.get(rule.identity, rule))
        return list(found.values())

    def kinds_of(self, rule: RuleDef) -> tuple[str, ...]:
        """The kinds this rule is named in: the set's own kind, else its pack's (every kind for none)."""
        if self.kind is not None:
            return (self.kind,)
        return rule.kinds or tuple(self.by_kind)  # empty outside a catalogue: every kind

    def qualified(self, rule: RuleDef) -> tuple[str, ...]:
        """`kind/name` for each kind the rule is named in (the bare name when no kind is known)."""
        return tuple(f"{kind}/{rule.name}" for kind in self.kinds_of(rule)) or (rule.name,)

    def for_kind(self, kind: str) -> RuleSet | None:
        """The rule set of one kind: this one when it is that kind's, a catalogue's part, or None."""
        if self.kind == kind or (self.kind is None and not self.by_kind):
            return self
        return self.by_kind.get(kind)


def catalogue(per_kind: Mapping[str, RuleSet], pack_order: Sequence[str], hardware_names: tuple[str, ...]) -> RuleSet:
    """Every kind's rule set as one (kind None): each pack, rule and bound once, packs in `pack_order` (their
    paths), rules each after the rules it requires in every kind it is named in."""
    position = {path: i for i, path in enumerate(pack_order)}
    packs: dict[str, Pack] = {}
    for ruleset in per_kind.values():
        for pack in ruleset.packs:
            packs.setdefault(pack.name, pack)
    ordered = sorted(packs.values(), key=lambda p: position.get(p.path, len(position)))
    inputs: dict[str, InputDef] = {}
    for pack in ordered:
        for item in pack.inputs:
            inputs.setdefault(item.name, item)
    return RuleSet(packs=tuple(ordered), inputs=inputs, metrics=tuple(m for p in ordered for m in p.metrics),
                   rules=_in_order(per_kind), hardware_names=hardware_names, kind=None,
                   bounds=tuple(b for p in ordered for b in p.bounds), by_kind=dict(per_kind))


def _in_order(per_kind: Mapping[str, RuleSet]) -> tuple[RuleDef, ...]:
    """Each rule once, after the rules it requires or is made global by, as each kind resolves their names."""
    first: dict[tuple[str, str], RuleDef] = {}
    after: dict[tuple[str, str], dict[tuple[str, str], None]] = {}  # dicts, not sets: a stable order
    for ruleset in per_kind.values():
        for rule in ruleset.rules:
            first.setdefault(rule.identity, rule)
            before = (ruleset.rule(n) for n in (*rule.requires, *rule.global_with))
            after.setdefault(rule.identity, {}).update((r.identity, None) for r in before if r is not None)
    try:
        return tuple(first[i] for i in graphlib.TopologicalSorter(after).static_order())
    except graphlib.CycleError:  # only across kinds: each kind's own order is checked acyclic at load
        return tuple(first.values())
