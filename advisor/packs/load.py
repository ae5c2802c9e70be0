"""Load and validate rule packs: YAML files (or folders of them) of inputs, derived metrics and rules.

Every problem is collected, with file, line and rule, before anything is refused; a pack that
loads is fully checked: expressions parsed against known names, `requires` resolved across packs,
no cycles, no duplicate ids or names.
"""

from __future__ import annotations

import ast
import difflib
import graphlib
import itertools
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from advisor.core.errors import AdvisorError, Problems
from advisor.core.model import SEVERITIES
from advisor.core.numbers import as_number
from advisor.core.resources import load_yaml_resource, shipped_dir
from advisor.core.units import UNITS
from advisor.core.yamlsafe import load_yaml_file
from advisor.packs.expr import ExprError, Expression, compile_expression, fraction_mistakes

EXPECTS = ("fire", "pass", "not_applicable", "skip")
MAX_RULES = 20000

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{1,31}$")
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")

_PACK_KEYS = ("pack", "version", "description", "inputs", "metrics", "rules")
_INPUT_KEYS = ("name", "unit", "description", "better")
_METRIC_KEYS = ("name", "expr", "unit", "better", "description")
_RULE_KEYS = ("id", "name", "title", "category", "severity", "requires", "explains", "params", "when", "message",
              "root_cause", "recommendation", "estimated_speedup", "references", "examples")
_EXAMPLE_KEYS = ("metrics", "params", "hardware", "expect", "note")


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


@dataclass(frozen=True)
class Example:
    metrics: dict[str, float | None]
    params: dict[str, float]
    hardware: str | None
    expect: str
    where: str


@dataclass(frozen=True)
class RuleDef:
    id: str
    name: str
    title: str
    category: str
    severity: str
    requires: tuple[str, ...]
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
    where: str
    param_units: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Pack:
    name: str
    version: str
    description: str
    path: str
    inputs: tuple[InputDef, ...] = ()
    metrics: tuple[MetricDef, ...] = ()
    rules: tuple[RuleDef, ...] = ()


@dataclass(frozen=True)
class RuleSet:
    packs: tuple[Pack, ...]
    inputs: dict[str, InputDef]
    metrics: tuple[MetricDef, ...]
    rules: tuple[RuleDef, ...]  # in dependency order: every rule after the rules it requires
    hardware_names: tuple[str, ...] = field(default=())

    def rule(self, key: str) -> RuleDef | None:
        return next((r for r in self.rules if key in (r.name, r.id)), None)


# ---------------------------------------------------------------------------------------- reading


@dataclass
class _RawFile:
    path: Path
    data: dict[str, Any]
    lines: dict[tuple[str, int], int]  # (section, index) -> line number


def _item_lines(path: Path, text: str) -> dict[tuple[str, int], int]:
    """Line of each item of the top-level lists, for messages (the loaded data has no marks)."""
    lines: dict[tuple[str, int], int] = {}
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return lines
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(value, yaml.SequenceNode):
                for i, item in enumerate(value.value):
                    lines[(key.value, i)] = item.start_mark.line + 1
    return lines


def _read(path: Path) -> _RawFile:
    data = load_yaml_file(path)
    if not isinstance(data, dict):
        raise PackError([f"{path}: a rule pack file must be a YAML mapping"])
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise PackError([f"{path}: keys must be strings, found {bad_keys[0]!r}"])
    text = path.read_text(encoding="utf-8-sig")
    return _RawFile(path=path, data=data, lines=_item_lines(path, text))


def _pack_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        if not files:
            raise AdvisorError(str(path), "no rule pack (.yaml) files in this folder")
        return files
    if not path.exists():
        raise AdvisorError(str(path), "no such rule pack file or folder")
    return [path]


def builtin_pack_paths() -> list[Path]:
    root = shipped_dir("rules")
    return sorted(p for p in root.iterdir() if p.is_dir() or p.suffix in (".yaml", ".yml"))


def hardware_names() -> tuple[str, ...]:
    units = load_yaml_resource("kinds/neuron/data/hardware.yaml", allow_aliases=True)["units"]
    return tuple(f"hw_{name}" for name in units)


# ------------------------------------------------------------------------------------- validation


class _Checker:
    """Collects problems instead of stopping at the first, so `rules validate` lists them all."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.problems.append(f"{where}: {problem}")

    def keys(self, where: str, obj: dict[str, Any], allowed: Sequence[str], required: Sequence[str]) -> None:
        for key in obj:
            if not isinstance(key, str) or key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                self.add(where, f"unknown key '{key}'{hint}")
        for key in required:
            if key not in obj or obj[key] in (None, ""):
                self.add(where, f"'{key}' is required")

    def text(self, where: str, obj: dict[str, Any], key: str) -> str:
        value = obj.get(key, "")
        if value is None:
            return ""
        if not isinstance(value, str):
            self.add(where, f"'{key}' must be text")
            return ""
        return value.strip()

    def expression(self, where: str, what: str, text: Any, known: set[str]) -> Expression | None:
        try:
            return compile_expression(text, known)
        except ExprError as exc:
            self.add(where, f"{what}: {exc.pointed()}")
            return None


def _number_map(check: _Checker, where: str, what: str, raw: Any) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        check.add(where, f"'{what}' must be a mapping of names to numbers")
        return {}
    out: dict[str, float] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not _IDENT.match(key):
            check.add(where, f"{what}: '{key}' is not a valid name")
        elif as_number(value) is None:
            check.add(where, f"{what}: '{key}' must be a number, not {value!r:.40}")
        else:
            out[key] = as_number(value)  # type: ignore[assignment]
    return out


def _placeholders(check: _Checker, where: str, message: str, known: set[str]) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    try:
        parsed = list(string.Formatter().parse(message))
    except ValueError as exc:
        check.add(where, f"message: {exc}")
        return ()
    for _, field_name, spec, conversion in parsed:
        if field_name is None:
            continue
        if not _IDENT.match(field_name):
            check.add(where, f"message: placeholder {{{field_name}}} must be a plain metric or param name "
                             "(no attributes, indexes or calls)")
            continue
        if conversion is not None or "{" in (spec or ""):
            check.add(where, f"message: placeholder {{{field_name}}} may only have a format spec")
            continue
        if field_name not in known:
            close = difflib.get_close_matches(field_name, list(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            check.add(where, f"message: unknown name '{field_name}'{hint}")
            continue
        if spec:
            try:
                format(1.5, spec)
            except (ValueError, TypeError):
                check.add(where, f"message: '{spec}' is not a valid number format for {{{field_name}}}")
                continue
        found.append((field_name, spec or ""))
    return tuple(found)


# ---------------------------------------------------------------------------------------- loading


def _group(paths: Sequence[Path]) -> list[tuple[Path, list[_RawFile]]]:
    """Each pack path (a file, or a folder of files) with its parsed files."""
    groups = []
    problems: list[str] = []
    for path in paths:
        files = []
        for file in _pack_files(path):
            try:
                files.append(_read(file))
            except PackError as exc:
                problems.extend(exc.problems)
            except AdvisorError as exc:
                problems.append(f"{exc.where}: {exc.problem}")
        groups.append((path, files))
    if problems:
        raise PackError(problems)
    return groups


def load_rulesets(paths: Sequence[Path]) -> RuleSet:
    """Load packs from files or folders, validate everything together, order rules by `requires`."""
    check = _Checker()
    unique: dict[Path, Path] = {}
    for path in paths:  # the same pack named twice (built-in and --rules) is loaded once
        unique.setdefault(path.resolve(), path)
    groups = _group(list(unique.values()))
    hw = hardware_names()

    # Pass 1: headers, and the names every pack declares, so references can cross packs.
    headers: list[tuple[str, str, str, Path, list[_RawFile]]] = []
    declared: set[str] = set(hw)
    units: dict[str, str] = {}  # declared name -> unit, so a threshold param can borrow its metric's unit
    rule_names: dict[str, str] = {}
    rule_ids: dict[str, str] = {}
    pack_names: dict[str, str] = {}
    for path, files in groups:
        head = [f for f in files if "pack" in f.data]
        if len(head) != 1:
            check.add(str(path), "a pack needs exactly one file with `pack:` and `version:` "
                                 f"(found {len(head)})")
            continue
        meta = head[0].data
        name, version = str(meta.get("pack", "")), str(meta.get("version", ""))
        if not _NAME.match(name):
            check.add(str(head[0].path), f"pack name '{name}' must be kebab-case")
        if name in pack_names:
            check.add(str(head[0].path), f"pack '{name}' is already loaded from {pack_names[name]}")
        pack_names[name] = str(head[0].path)
        if not version:
            check.add(str(head[0].path), "'version' is required")
        headers.append((name, version, str(meta.get("description", "") or "").strip(), path, files))
        for f in files:
            check.keys(str(f.path), f.data, _PACK_KEYS, ())
            for section in ("inputs", "metrics", "rules"):
                items = f.data.get(section) or []
                if not isinstance(items, list):
                    check.add(str(f.path), f"'{section}' must be a list")
                    f.data[section] = []
                    continue
                if section == "rules" and len(items) > MAX_RULES:
                    check.add(str(f.path), f"{len(items)} rules; the limit is {MAX_RULES}")
                    f.data[section] = []
                    continue
                for i, item in enumerate(items):
                    if not isinstance(item, dict):
                        check.add(f"{f.path}:{f.lines.get((section, i), '?')}", f"{section} item must be a mapping")
                        continue
                    item_name = item.get("name")
                    if section in ("inputs", "metrics") and isinstance(item_name, str):
                        declared.add(item_name)
                        units.setdefault(item_name, str(item.get("unit", "")))
                    elif section == "rules" and isinstance(item_name, str):
                        where = f"{f.path}:{f.lines.get((section, i), '?')}"
                        if item_name in rule_names:
                            check.add(where, f"rule name '{item_name}' is already used at {rule_names[item_name]}")
                        rule_names[item_name] = where
                        rid = str(item.get("id", ""))
                        if rid and rid in rule_ids:
                            check.add(where, f"rule id '{rid}' is already used at {rule_ids[rid]}")
                        rule_ids[rid] = where
    if check.problems:
        raise PackError(check.problems)

    # Pass 2: every item, against the declared names.
    packs = []
    for name, version, description, path, files in headers:
        inputs, metrics, rules = [], [], []
        for f in files:
            for i, item in enumerate(f.data.get("inputs") or []):
                where = f"{f.path}:{f.lines.get(('inputs', i), '?')}"
                if isinstance(item, dict):
                    inputs.append(_input(check, where, item, name))
            for i, item in enumerate(f.data.get("metrics") or []):
                where = f"{f.path}:{f.lines.get(('metrics', i), '?')}"
                if isinstance(item, dict):
                    metric = _metric(check, where, item, name, declared)
                    if metric:
                        metrics.append(metric)
            for i, item in enumerate(f.data.get("rules") or []):
                where = f"{f.path}:{f.lines.get(('rules', i), '?')}"
                if isinstance(item, dict):
                    rule = _rule(check, where, item, name, declared, rule_names, units)
                    if rule:
                        rules.append(rule)
        packs.append(Pack(name=name, version=version, description=description, path=str(path),
                          inputs=tuple(i for i in inputs if i), metrics=tuple(metrics), rules=tuple(rules)))
    if check.problems:
        raise PackError(check.problems)

    all_rules = [r for p in packs for r in p.rules]
    ordered = _order(all_rules)
    all_inputs: dict[str, InputDef] = {}
    for pack in packs:
        for item in pack.inputs:
            all_inputs.setdefault(item.name, item)
    return RuleSet(packs=tuple(packs), inputs=all_inputs, metrics=tuple(m for p in packs for m in p.metrics),
                   rules=ordered, hardware_names=hw)


def _order(rules: list[RuleDef]) -> tuple[RuleDef, ...]:
    """Rules in `requires` order; a cycle through `requires` or through `explains` is refused (an
    explains-cycle would leave no root cause)."""
    by_name = {r.name: r for r in rules}
    try:
        graphlib.TopologicalSorter({r.name: r.explains for r in rules}).prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        raise PackError([f"{by_name[cycle[0]].where}: `explains` forms a cycle: {' -> '.join(cycle)}"]) from None
    sorter = graphlib.TopologicalSorter({r.name: r.requires for r in rules})
    try:
        return tuple(by_name[n] for n in sorter.static_order())
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        first = by_name[cycle[0]]
        problem = f"`requires` forms a cycle: {' -> '.join(cycle)}"
        raise PackError([f"{first.where}: {problem}"]) from None


def _named(check: _Checker, where: str, item: dict[str, Any], kind: str) -> tuple[str, str, str | None] | None:
    """The name, unit and direction of goodness an input or a metric declares."""
    name = item.get("name")
    if not isinstance(name, str) or not _IDENT.match(name):
        check.add(where, f"{kind} name {name!r} must be a snake_case identifier")
        return None
    unit = item.get("unit", "")
    if unit not in UNITS:
        check.add(where, f"{kind} '{name}': unknown unit {unit!r}; use one of {', '.join(u for u in UNITS if u)}")
    better = item.get("better")
    if better not in (None, "higher", "lower"):
        check.add(where, f"{kind} '{name}': 'better' must be higher or lower, not {better!r}")
    return name, str(unit), better


def _input(check: _Checker, where: str, item: dict[str, Any], pack: str) -> InputDef | None:
    check.keys(where, item, _INPUT_KEYS, ("name",))
    named = _named(check, where, item, "input")
    if named is None:
        return None
    name, unit, better = named
    return InputDef(name=name, unit=unit, description=check.text(where, item, "description"), pack=pack,
                    better=better)


def _metric(check: _Checker, where: str, item: dict[str, Any], pack: str, known: set[str]) -> MetricDef | None:
    check.keys(where, item, _METRIC_KEYS, ("name", "expr", "unit"))
    named = _named(check, where, item, "metric")
    if named is None:
        return None
    name, unit, better = named
    expr = check.expression(f"{where}: metric '{name}'", "expr", item.get("expr"), known)
    if expr is None:
        return None
    return MetricDef(name=name, expr=expr, unit=unit, better=better,
                     description=check.text(where, item, "description"), pack=pack)


def param_problem(name: str, value: float, unit: str) -> str | None:
    """A threshold that cannot mean what its author wanted: negative, or a percent given for a
    fraction (70 for 0.70)."""
    if value < 0:
        return f"{name} = {value:g} is negative; thresholds here are sizes, times, ratios or fractions"
    if unit == "fraction" and value > 1:
        return f"{name} = {value:g} but it is a fraction (0..1); did you mean {value / 100:g}?"
    return None


def _param_units(when: Expression, params: dict[str, float], units: dict[str, str]) -> dict[str, str]:
    """A param compared with a metric takes that metric's unit (`x < max_fraction` -> fraction), so
    thresholds show as 25 % rather than 0.25."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(when.text, mode="eval")):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for a, b in itertools.pairwise(sides):
                for param, other in ((a, b), (b, a)):
                    if isinstance(param, ast.Name) and param.id in params and isinstance(other, ast.Name):
                        unit = units.get(other.id)
                        if unit:
                            found.setdefault(param.id, unit)
    return found


def _rule(check: _Checker, where: str, item: dict[str, Any], pack: str, known: set[str],
          rule_names: dict[str, str], units: dict[str, str]) -> RuleDef | None:
    check.keys(where, item, _RULE_KEYS, ("id", "name", "title", "severity", "when", "message", "recommendation"))
    rid, name = str(item.get("id", "")), item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        check.add(where, f"rule name {name!r} must be kebab-case (e.g. weight-reload)")
        return None
    where = f"{where}: rule {rid} ({name})"
    if not _ID.match(rid):
        check.add(where, f"id {rid!r} must be a letter then letters or digits (e.g. NRN006)")
    severity = item.get("severity")
    if severity not in SEVERITIES:
        check.add(where, f"severity {severity!r} must be one of {', '.join(SEVERITIES)}")
    requires = _rule_names(check, where, item, "requires", rule_names)
    explains = _rule_names(check, where, item, "explains", rule_names)
    params = _number_map(check, where, "params", item.get("params"))
    clash = sorted(set(params) & known)
    if clash:
        check.add(where, f"param '{clash[0]}' has the name of a metric")
    names = known | set(params)
    when = check.expression(where, "when", item.get("when"), names)
    speedup = None
    if item.get("estimated_speedup") is not None:
        speedup = check.expression(where, "estimated_speedup", item.get("estimated_speedup"), names)
    message = check.text(where, item, "message")
    placeholders = _placeholders(check, where, message, names)
    references = item.get("references") or []
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        check.add(where, "'references' must be a list of text")
        references = []
    examples = _examples(check, where, item.get("examples"), params)
    if when is None:
        return None
    for mistake in fraction_mistakes(when, units):
        check.add(where, f"when: {mistake}")
    param_units = _param_units(when, params, units)
    for param, value in params.items():
        problem = param_problem(param, value, param_units.get(param, ""))
        if problem:
            check.add(where, f"params: {problem}")
    return RuleDef(
        id=rid, name=name, title=check.text(where, item, "title"), category=str(item.get("category") or "general"),
        severity=str(severity), requires=requires, explains=explains, params=params, when=when, message=message,
        placeholders=placeholders, root_cause=check.text(where, item, "root_cause"),
        recommendation=check.text(where, item, "recommendation"), estimated_speedup=speedup,
        references=tuple(references), examples=examples, pack=pack, where=where,
        param_units=param_units,
    )


def _rule_names(check: _Checker, where: str, item: dict[str, Any], key: str,
                rule_names: dict[str, str]) -> tuple[str, ...]:
    names = item.get(key) or []
    if not isinstance(names, list) or not all(isinstance(r, str) for r in names):
        check.add(where, f"'{key}' must be a list of rule names")
        return ()
    for name in names:
        if name not in rule_names:
            close = difflib.get_close_matches(name, list(rule_names), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            check.add(where, f"{key} unknown rule '{name}'{hint}")
    return tuple(names)


def _examples(check: _Checker, where: str, raw: Any, params: dict[str, float]) -> tuple[Example, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        check.add(where, "'examples' must be a list")
        return ()
    out = []
    for i, ex in enumerate(raw):
        ex_where = f"{where}: example {i + 1}"
        if not isinstance(ex, dict):
            check.add(ex_where, "must be a mapping")
            continue
        check.keys(ex_where, ex, _EXAMPLE_KEYS, ("metrics", "expect"))
        if ex.get("expect") not in EXPECTS:
            check.add(ex_where, f"expect must be one of {', '.join(EXPECTS)}")
        metrics_raw = ex.get("metrics") or {}
        if not isinstance(metrics_raw, dict):
            check.add(ex_where, "'metrics' must be a mapping")
            continue
        metrics: dict[str, float | None] = {}
        for key, value in metrics_raw.items():
            if value is None:
                metrics[str(key)] = None
            elif as_number(value) is None:
                check.add(ex_where, f"metric '{key}' must be a number or null")
            else:
                metrics[str(key)] = as_number(value)
        ex_params = _number_map(check, ex_where, "params", ex.get("params"))
        unknown = sorted(set(ex_params) - set(params))
        if unknown:
            check.add(ex_where, f"unknown param '{unknown[0]}'")
        hardware = ex.get("hardware")
        out.append(Example(metrics=metrics, params=ex_params, hardware=str(hardware) if hardware else None,
                           expect=str(ex.get("expect")), where=ex_where))
    return tuple(out)


def load_packs(extra: Sequence[Path] = (), builtin: bool = True) -> RuleSet:
    return load_rulesets([*(builtin_pack_paths() if builtin else []), *extra])
