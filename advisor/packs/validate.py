"""Checking each item of a pack (inputs, metrics, rules, examples, message placeholders, params and
their units) against the names every loaded pack declares.

Problems are collected rather than raised at the first, so `rules validate` lists them all, each as
`file:line: rule ID (name): problem`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from advisor.core.errors import suggest
from advisor.core.expr import Expression, fraction_mistakes
from advisor.core.model import SEVERITIES
from advisor.core.numbers import as_number
from advisor.core.units import Units
from advisor.packs.checker import Checker
from advisor.packs.message import check_template, text_placeholders
from advisor.packs.model import BoundDef, Example, InputDef, MetricDef, RuleDef, split_kind
from advisor.packs.thresholds import param_problem, param_units

EXPECTS = ("fire", "pass", "not_applicable", "skip")
SPEEDUP_SCOPES = ("global", "local")

NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # pack and rule names, aliases: kebab-case
ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{1,31}$")
IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")  # metric, input and param names

PACK_KEYS = ("pack", "version", "description", "kinds", "inputs", "metrics", "bounds", "terms", "rules")
_INPUT_KEYS = ("name", "unit", "description", "better")
_METRIC_KEYS = ("name", "expr", "unit", "better", "description")
_BOUND_KEYS = ("name", "title", "recoverable", "description")
_RULE_KEYS = ("id", "name", "aliases", "title", "category", "severity", "requires", "explains", "params", "when",
              "message", "root_cause", "recommendation", "estimated_speedup", "speedup_scope", "global_with",
              "capped_by", "claims", "catch_all", "caps_only", "references", "examples")
_EXAMPLE_KEYS = ("metrics", "params", "hardware", "expect", "note")


@dataclass
class RuleKey:
    """A name, id or alias that refers to a rule."""

    name: str  # the rule's current name
    where: str  # file:line of the rule
    what: str  # name | id | alias


@dataclass
class Declared:
    """What pass 1 found in the loaded packs, for pass 2 to check references against."""

    names: set[str] = field(default_factory=set)  # inputs, metrics and hardware figures
    units: dict[str, str] = field(default_factory=dict)  # so a threshold param can borrow its metric's unit
    rules: dict[str, RuleKey] = field(default_factory=dict)  # every name, id and alias of this kind's rules
    bounds: set[str] = field(default_factory=set)  # the time budget's bound names, this kind's
    terms: set[str] = field(default_factory=set)  # words of advice a rule's text may name (never a `when`)
    elsewhere: dict[str, list[str]] = field(default_factory=dict)  # rule keys of packs left out -> those packs
    kind: str | None = None  # the kind the packs are checked for: names are resolved in its namespace

    def own(self, ref: str) -> str | None:
        """A reference as a bare name of this kind: `ref`, or `KIND/ref` for this kind; None for another's."""
        kind, bare = split_kind(ref)
        return bare if kind is None or kind == self.kind else None


def _number_map(check: Checker, where: str, what: str, raw: Any) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        check.add(where, f"'{what}' must be a mapping of names to numbers")
        return {}
    out: dict[str, float] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not IDENT.match(key):
            check.add(where, f"{what}: '{key}' is not a valid name")
        elif as_number(value) is None:
            check.add(where, f"{what}: '{key}' must be a number, not {value!r:.40}")
        else:
            out[key] = as_number(value)  # type: ignore[assignment]
    return out


def _named(check: Checker, where: str, item: dict[str, Any], what: str,
           units: Units) -> tuple[str, str, str | None] | None:
    """The name, unit (one of the pack's kinds' units) and direction of goodness an input or a metric declares."""
    name = item.get("name")
    if not isinstance(name, str) or not IDENT.match(name):
        check.add(where, f"{what} name {name!r} must be a snake_case identifier")
        return None
    unit = item.get("unit", "")
    if unit not in units:
        known = ", ".join(u for u in units.names() if u)
        check.add(where, f"{what} '{name}': unknown unit {unit!r}; use one of {known}")
    better = item.get("better")
    if better not in (None, "higher", "lower"):
        check.add(where, f"{what} '{name}': 'better' must be higher or lower, not {better!r}")
    return name, str(unit), better


def input_def(check: Checker, where: str, item: dict[str, Any], pack: str, units: Units) -> InputDef | None:
    check.keys(where, item, _INPUT_KEYS, ("name",))
    named = _named(check, where, item, "input", units)
    if named is None:
        return None
    name, unit, better = named
    return InputDef(name=name, unit=unit, description=check.text(where, item, "description"), pack=pack,
                    better=better)


def metric_def(check: Checker, where: str, item: dict[str, Any], pack: str, known: set[str],
               units: Units) -> MetricDef | None:
    check.keys(where, item, _METRIC_KEYS, ("name", "expr", "unit"))
    named = _named(check, where, item, "metric", units)
    if named is None:
        return None
    name, unit, better = named
    expr = check.expression(f"{where}: metric '{name}'", "expr", item.get("expr"), known)
    if expr is None:
        return None
    return MetricDef(name=name, expr=expr, unit=unit, better=better,
                     description=check.text(where, item, "description"), pack=pack, where=where)


def bound_def(check: Checker, where: str, item: dict[str, Any], pack: str, known: set[str]) -> BoundDef | None:
    """A bound: its recoverable share is an expression over metrics, like a metric's, so its formula and
    inputs are recorded with it."""
    check.keys(where, item, _BOUND_KEYS, ("name", "title", "recoverable"))
    name = item.get("name")
    if not isinstance(name, str) or not IDENT.match(name):
        check.add(where, f"bound name {name!r} must be a snake_case identifier")
        return None
    recoverable = check.expression(f"{where}: bound '{name}'", "recoverable", item.get("recoverable"), known)
    if recoverable is None:
        return None
    share_of_time(check, f"{where}: bound '{name}'", "recoverable", recoverable, {})
    return BoundDef(name=name, title=check.text(where, item, "title"), recoverable=recoverable,
                    description=check.text(where, item, "description"), pack=pack, where=where)


def share_of_time(check: Checker, where: str, what: str, expression: Expression | None,
                  params: dict[str, float]) -> None:
    """An estimate or bound is a share of the run (0..1). One that reads no metric (a number, or only the rule's
    params) is known now: outside 0..1 it is refused here, not met at run time (where it is unavailable)."""
    if expression is None or not set(expression.names) <= set(params):
        return
    value = expression.evaluate(params)
    number = None if value is None or isinstance(value, bool) else float(value)
    if number is None or not 0.0 <= number <= 1.0:
        shown = f"{expression.text} = {'unknown' if number is None else f'{number:g}'}"
        shown = expression.text if as_number(expression.text) is not None else shown
        check.add(where, f"{what} {shown} is not a share of time (0..1, e.g. 0.25 for 25 %)")


def _budget(check: Checker, where: str, item: dict[str, Any], declared: Declared,
            speedup: Expression | None) -> tuple[tuple[str, ...], str, bool]:
    """`capped_by`, `claims` and `catch_all`: a rule's place in the time budget."""
    capped_by = []
    for ref in check.text_list(where, item, "capped_by", "bound names") or []:
        name = declared.own(ref)
        if name is None:
            check.add(where, f"capped_by bound '{ref}' is not of profile kind '{declared.kind}', which this pack "
                             "applies to")
        elif name not in declared.bounds:
            check.add(where, f"capped_by unknown bound '{name}'{suggest(name, declared.bounds)}")
        capped_by.append(name or ref)
    claims = item.get("claims", "")
    if not isinstance(claims, str) or (claims and not NAME.match(claims)):
        check.add(where, f"claims {claims!r} must be a kebab-case name of a piece of time (e.g. repeated-loads)")
        claims = ""
    catch_all = item.get("catch_all", False)
    if not isinstance(catch_all, bool):
        check.add(where, "catch_all must be true or false")
        catch_all = False
    if (capped_by or claims) and speedup is None:
        check.add(where, "capped_by and claims bound an estimate: the rule needs estimated_speedup")
    return tuple(dict.fromkeys(capped_by)), claims, catch_all


def rule_def(check: Checker, where: str, item: dict[str, Any], pack: str, declared: Declared,
             kinds: tuple[str, ...] = ()) -> RuleDef | None:
    """One rule of a pack for `kinds` (empty: every kind); its references are resolved in `declared.kind`."""
    check.keys(where, item, _RULE_KEYS, ("id", "name", "title", "severity", "when", "message", "recommendation"))
    rid, name = str(item.get("id", "")), item.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        check.add(where, f"rule name {name!r} must be kebab-case (e.g. weight-reload)")
        return None
    defined_at, where = where, f"{where}: rule {rid} ({name})"
    severity = _id_and_severity(check, where, rid, item)
    aliases = _aliases(check, where, item)
    requires = _rule_refs(check, where, item, "requires", declared, kinds)
    explains = _rule_refs(check, where, item, "explains", declared, kinds)
    global_with = _rule_refs(check, where, item, "global_with", declared, kinds)
    scope = _speedup_scope(check, where, item, global_with)
    params = _params(check, where, item, declared)
    names = declared.names | set(params)
    when = check.expression(where, "when", item.get("when"), names)
    speedup = None
    if item.get("estimated_speedup") is not None:
        speedup = check.expression(where, "estimated_speedup", item.get("estimated_speedup"), names)
        share_of_time(check, where, "estimated_speedup", speedup, params)
    capped_by, claims, catch_all = _budget(check, where, item, declared, speedup)
    caps_only = item.get("caps_only", False) is True
    if "caps_only" in item and (not isinstance(item["caps_only"], bool) or (caps_only and speedup is None)):
        check.add(where, "caps_only must be true or false, and true only with an estimated_speedup to cap by")
    message = check.text(where, item, "message")
    placeholders = _texts(check, where, item, message, names | declared.terms, declared.terms)
    references = check.text_list(where, item, "references", "text") or []
    examples = _examples(check, where, item.get("examples"), params, declared.names)
    if when is None:
        return None
    units = _checked_units(check, where, when, params, declared, speedup)
    return RuleDef(
        id=rid, name=name, title=check.text(where, item, "title"), category=str(item.get("category") or "general"),
        severity=str(severity), requires=requires, explains=explains, params=params, when=when, message=message,
        placeholders=placeholders, root_cause=check.text(where, item, "root_cause"),
        recommendation=check.text(where, item, "recommendation"), estimated_speedup=speedup,
        references=tuple(references), examples=examples, pack=pack, where=defined_at, param_units=units,
        aliases=aliases, speedup_scope=str(scope), global_with=global_with, capped_by=capped_by, claims=claims,
        catch_all=catch_all, caps_only=caps_only, kinds=kinds,
    )


def _id_and_severity(check: Checker, where: str, rid: str, item: dict[str, Any]) -> Any:
    """The rule's severity, as given; a malformed id or an unknown severity is a problem."""
    if not ID.match(rid):
        check.add(where, f"id {rid!r} must be a letter then letters or digits (e.g. NRN006)")
    severity = item.get("severity")
    if severity not in SEVERITIES:
        check.add(where, f"severity {severity!r} must be one of {', '.join(SEVERITIES)}")
    return severity


def _speedup_scope(check: Checker, where: str, item: dict[str, Any], global_with: tuple[str, ...]) -> Any:
    """Whether the rule's estimate is a share of the whole run (global) or of its own part (local)."""
    scope = item.get("speedup_scope", "global")
    if scope not in SPEEDUP_SCOPES:
        check.add(where, f"speedup_scope {scope!r} must be one of {', '.join(SPEEDUP_SCOPES)}")
    if global_with and scope != "local":
        check.add(where, "global_with turns a local estimate global: it needs speedup_scope: local")
    return scope


def _params(check: Checker, where: str, item: dict[str, Any], declared: Declared) -> dict[str, float]:
    """The rule's thresholds; one named like a metric is a problem (the names would clash in `when`)."""
    params = _number_map(check, where, "params", item.get("params"))
    clash = sorted(set(params) & declared.names)
    if clash:
        check.add(where, f"param '{clash[0]}' has the name of a metric")
    return params


def _texts(check: Checker, where: str, item: dict[str, Any], message: str, worded: set[str],
           terms: set[str]) -> tuple[tuple[str, str], ...]:
    """The message's placeholders, as the engine's bounded formatter reads them; the message, root cause and
    recommendation may name metrics, params and terms (a term may be named in the texts, never in a `when`)."""
    template = check_template(message, worded, terms)
    for problem in template.problems:
        check.add(where, f"message: {problem}")
    for text_field in ("root_cause", "recommendation"):  # formatted like the message when they name values
        for placeholder in text_placeholders(check.text(where, item, text_field)) or ():
            if placeholder not in worded:
                check.add(where, f"{text_field}: unknown name {{{placeholder}}}{suggest(placeholder, worded)}")
    return tuple(template.placeholders)


def _checked_units(check: Checker, where: str, when: Expression, params: dict[str, float], declared: Declared,
                   speedup: Expression | None) -> dict[str, str]:
    """The units the params take from the metrics they are compared with; a fraction compared with a percent,
    or a threshold that cannot mean what was meant, is a problem."""
    for mistake in fraction_mistakes(when, declared.units):
        check.add(where, f"when: {mistake}")
    units = param_units(when, params, declared.units, speedup)
    for param, value in params.items():
        problem = param_problem(param, value, units.get(param, ""))
        if problem:
            check.add(where, f"params: {problem}")
    return units


def _aliases(check: Checker, where: str, item: dict[str, Any]) -> tuple[str, ...]:
    aliases = check.text_list(where, item, "aliases", "former rule names")
    if aliases is None:
        return ()
    for alias in aliases:
        if not NAME.match(alias) and not ID.match(alias):
            check.add(where, f"alias {alias!r} must be a kebab-case name (or a former id)")
    return tuple(dict.fromkeys(aliases))


def _rule_refs(check: Checker, where: str, item: dict[str, Any], key: str, declared: Declared,
               kinds: tuple[str, ...]) -> tuple[str, ...]:
    """`requires`, `explains` or `global_with`: rule names (or ids, or aliases; bare, or KIND/NAME), resolved
    to current names of the kind the pack is checked for."""
    refs = check.text_list(where, item, key, "rule names")
    if refs is None:
        return ()
    # a pack without `kinds:` is loaded for every kind, so a rule of one kind is missing for the others
    hint = ("a pack without `kinds:` applies to every kind: name the kinds it is for?" if not kinds else
            "list it in this pack's `kinds:` too?")
    out = []
    for ref in refs:
        bare = declared.own(ref)
        found = declared.rules.get(bare) if bare is not None else None
        if found is not None:
            out.append(found.name)
        elif bare is None:
            check.add(where, f"{key} rule '{ref}' is not of profile kind '{declared.kind}', which this pack applies "
                             f"to ({hint})")
        elif bare in declared.elsewhere:
            packs = declared.elsewhere[bare]
            which = f"pack {packs[0]}, which does not" if len(packs) == 1 else f"packs {', '.join(packs)}, which do not"
            check.add(where, f"{key} rule '{ref}' of {which} apply to profile kind '{declared.kind}' ({hint})")
        else:
            known = [k for k, v in declared.rules.items() if v.what != "id"]
            check.add(where, f"{key} unknown rule '{ref}'{suggest(ref, known)}")
    return tuple(dict.fromkeys(out))


def _examples(check: Checker, where: str, raw: Any, params: dict[str, float], names: set[str],
              ) -> tuple[Example, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        check.add(where, "'examples' must be a list")
        return ()
    out = []
    for i, ex in enumerate(raw):
        example = _example(check, f"{where}: example {i + 1}", ex, params, names)
        if example is not None:
            out.append(example)
    return tuple(out)


def _example(check: Checker, where: str, ex: Any, params: dict[str, float], names: set[str]) -> Example | None:
    """One example; its metrics must be names the packs declare (a misspelt one would test nothing)."""
    if not isinstance(ex, dict):
        check.add(where, "must be a mapping")
        return None
    check.keys(where, ex, _EXAMPLE_KEYS, ("metrics", "expect"))
    if ex.get("expect") not in EXPECTS:
        check.add(where, f"expect must be one of {', '.join(EXPECTS)}")
    metrics_raw = ex.get("metrics") or {}
    if not isinstance(metrics_raw, dict):
        check.add(where, "'metrics' must be a mapping")
        return None
    metrics: dict[str, float | None] = {}
    for key, value in metrics_raw.items():
        if key not in names:
            check.add(where, f"unknown metric '{key}'{suggest(str(key), names)}")
        elif value is None:
            metrics[str(key)] = None
        elif as_number(value) is None:
            check.add(where, f"metric '{key}' must be a number or null")
        else:
            metrics[str(key)] = as_number(value)
    ex_params = _number_map(check, where, "params", ex.get("params"))
    unknown = sorted(set(ex_params) - set(params))
    if unknown:
        check.add(where, f"unknown param '{unknown[0]}'")
    hardware = ex.get("hardware")
    return Example(metrics=metrics, params=ex_params, hardware=str(hardware) if hardware else None,
                   expect=str(ex.get("expect")), where=where)
