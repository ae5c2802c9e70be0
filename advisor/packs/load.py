"""Load rule packs: YAML files (or folders of them) of inputs, derived metrics and rules, for one
profile kind or for all of them.

Two passes: the first reads every pack's header and the names its items declare (inputs, metrics,
rule names, ids and aliases), so references can cross packs; the second checks every item against
them. Every problem is collected, with file, line and rule, before anything is refused; a pack set
that loads is fully checked: expressions parsed against known names, `requires` and `explains`
resolved across packs, no cycles, no name, id or alias used twice.
"""

from __future__ import annotations

import graphlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from advisor import kinds
from advisor.core.errors import suggest
from advisor.core.units import Units
from advisor.kinds.conventions import conventions, units_of
from advisor.packs.checker import Checker
from advisor.packs.model import InputDef, Pack, PackError, RuleDef, RuleSet, applies, catalogue
from advisor.packs.names import Declaration, metric_cycles, shadowing
from advisor.packs.read import RawFile, builtin_pack_paths, read_packs
from advisor.packs.terms import term_def
from advisor.packs.validate import (
    NAME,
    PACK_KEYS,
    Declared,
    RuleKey,
    bound_def,
    input_def,
    metric_def,
    rule_def,
)

MAX_RULES = 20000
SECTIONS = ("inputs", "metrics", "bounds", "terms", "rules")


@dataclass
class _Header:
    """A pack as its header file declares it, with all its files."""

    name: str
    version: str
    description: str
    kinds: tuple[str, ...]
    path: Path
    head: RawFile
    files: list[RawFile]
    builtin: bool = False  # shipped in rules/ or brought by a profile kind


def hardware_names(kind: str | None = None) -> tuple[str, ...]:
    """The `hw_*` names packs may read: the figures of the kind's hardware table, or of every kind's."""
    chosen = (kinds.get(kind),) if kind is not None else kinds.available()
    return tuple(dict.fromkeys(name for k in chosen for name in k.hardware_names()))


def load_rulesets(paths: Sequence[Path], kind: str | None = None) -> RuleSet:
    """Load the packs in `paths` that apply to `kind`, validate them together and order their rules by
    `requires`. Packs for other kinds are left out before their items are checked. With no kind, the
    packs are loaded for each installed kind in turn, as a profile of that kind would load them (names,
    ids, aliases and bounds are each kind's own), and every problem of any kind is listed."""
    hw = hardware_names(kind)  # first: an unknown kind is a one-line error
    builtin = {path.resolve() for path in builtin_pack_paths()}
    only_builtin = kind is not None and all(path.resolve() in builtin for path in paths)
    groups = read_packs(paths, header_only_unless=kind if only_builtin else None)
    if kind is not None:
        return _load_for(groups, kind, hw)
    per_kind: dict[str, RuleSet] = {}
    problems: dict[str, None] = {}  # a problem of a pack for several kinds is listed once
    for name in kinds.names():
        try:
            per_kind[name] = _load_for(groups, name, hardware_names(name))
        except PackError as exc:
            problems.update(dict.fromkeys(exc.problems))
    if problems:
        raise PackError(list(problems))
    return catalogue(per_kind, [str(path) for path, _ in groups], hw)


def _load_for(groups: list[tuple[Path, list[RawFile]]], kind: str, hw: tuple[str, ...]) -> RuleSet:
    """The packs that apply to one kind, checked against its names and each other."""
    check = Checker()
    headers = _headers(check, groups, kinds.names())
    kept = [h for h in headers if applies(h.kinds, kind)]
    left_out = [h for h in headers if not applies(h.kinds, kind)]
    declared = _declare(check, kept, hw, kind)
    declared.elsewhere = _rule_keys_of(left_out)
    _check_names(check, kept, left_out)
    if check.problems:
        raise PackError(check.problems)
    unscoped = _for_every_kind(declared, left_out)
    packs = [_pack(check, header, declared if header.kinds else unscoped) for header in kept]
    ruleset = _ruleset(packs, hw, kind)
    for problem in metric_cycles(ruleset.metrics, ruleset.inputs):
        check.problems.append(problem)
    if check.problems:
        raise PackError(check.problems)
    return ruleset


def load_packs(extra: Sequence[Path] = (), builtin: bool = True, kind: str | None = None) -> RuleSet:
    """The built-in packs (rules/ and every kind's own) plus `extra`, those that apply to `kind`."""
    return load_rulesets([*(builtin_pack_paths() if builtin else []), *extra], kind)


class PackCache:
    """The rule sets of one set of pack paths by kind, loaded once for many profiles (a fleet task):
    reading and checking the packs costs more than analysing a summary profile."""

    def __init__(self, extra: Sequence[Path] = ()):
        self.extra = tuple(extra)
        self._by_kind: dict[str, RuleSet] = {}

    def get(self, kind: str) -> RuleSet:
        if kind not in self._by_kind:
            self._by_kind[kind] = load_packs(self.extra, kind=kind)
        return self._by_kind[kind]


# ----------------------------------------------------------------------------- pass 1: declarations


def _headers(check: Checker, groups: list[tuple[Path, list[RawFile]]], known_kinds: Sequence[str]) -> list[_Header]:
    headers: list[_Header] = []
    seen: dict[str, str] = {}
    builtin = {path.resolve() for path in builtin_pack_paths()}
    for path, files in groups:
        header = _header(check, path, files, known_kinds)
        if header is None:
            continue
        header.builtin = path.resolve() in builtin
        if header.name in seen:
            check.add(str(header.head.path), f"pack '{header.name}' is already loaded from {seen[header.name]}")
        seen[header.name] = str(header.head.path)
        headers.append(header)
    return headers


def _header(check: Checker, path: Path, files: list[RawFile], known_kinds: Sequence[str]) -> _Header | None:
    heads = [f for f in files if "pack" in f.data]
    if len(heads) != 1:
        check.add(str(path), f"a pack needs exactly one file with `pack:` and `version:` (found {len(heads)})")
        return None
    head = heads[0]
    name, version = str(head.data.get("pack", "")), str(head.data.get("version", ""))
    if not NAME.match(name):
        check.add(str(head.path), f"pack name '{name}' must be kebab-case")
    if not version:
        check.add(str(head.path), "'version' is required")
    for other in files:
        if other is not head and "kinds" in other.data:
            check.add(str(other.path), "'kinds' belongs in the pack's header (the file with `pack:`)")
    return _Header(name=name, version=version, description=str(head.data.get("description", "") or "").strip(),
                   kinds=_header_kinds(check, head, known_kinds), path=path, head=head, files=files)


def _header_kinds(check: Checker, head: RawFile, known: Sequence[str]) -> tuple[str, ...]:
    """The `kinds:` of a pack header; empty when it applies to every kind."""
    if "kinds" not in head.data:
        return ()
    raw = check.text_list(str(head.path), head.data, "kinds", "profile kind names")
    if raw is None:
        return ()
    if not raw:
        check.add(str(head.path), "'kinds' is empty; leave it out for a pack that applies to every kind")
    for i, name in enumerate(raw):
        if name not in known:
            check.add(head.where("kinds", i),
                      f"unknown profile kind '{name}' (installed: {', '.join(known)}){suggest(name, known)}")
    return tuple(dict.fromkeys(raw))


def _declare(check: Checker, headers: list[_Header], hw: Sequence[str], kind: str | None) -> Declared:
    """Every name the packs declare: inputs and metrics (with units), rule names, ids and aliases."""
    declared = Declared(names=set(hw), kind=kind)
    for header in headers:
        for f in header.files:
            check.keys(str(f.path), f.data, PACK_KEYS, ())
            for section in SECTIONS:
                _check_section(check, f, section)
                for i, item in _entries(f, section):
                    _declare_item(check, declared, f.where(section, i), section, item)
    return declared


def _check_names(check: Checker, kept: list[_Header], left_out: list[_Header]) -> None:
    """Inputs and metrics of the packs that are not built-in may not shadow a built-in name (of any
    kind's packs, so a pack means the same whichever kind it is loaded for), a hardware figure, a
    profile field, or each other."""
    every = [d for header in (*kept, *left_out) for d in _declarations(header)]
    checked = [d for header in kept if not header.builtin for d in _declarations(header)]
    if not checked:
        return
    fields = {name: kind.name for kind in kinds.available() for name in _profile_fields(kind)}
    for problem in shadowing(every, checked, hardware_names(None), fields):
        check.problems.append(problem)


def _profile_fields(kind: kinds.ProfileKind) -> set[str]:
    """The fields a kind reads from its profiles under their canonical names (its conventions)."""
    conv = conventions(kind)
    return {*conv.names.values(), *conv.text_fields}


def _declarations(header: _Header) -> Iterator[Declaration]:
    for f in header.files:
        for section, what in (("inputs", "input"), ("metrics", "metric")):
            for i, item in _entries(f, section):
                name = item.get("name")
                if isinstance(name, str):
                    yield Declaration(name=name, what=what, unit=str(item.get("unit", "")), pack=header.name,
                                      where=f.where(section, i), builtin=header.builtin)


def _for_every_kind(declared: Declared, left_out: list[_Header]) -> Declared:
    """What a pack without `kinds:` may read when loaded for one kind: also the names other kinds'
    packs and hardware tables declare. On a profile of this kind they are missing, so its rules that
    read them end "not applicable" instead of the pack failing to load (it was written for all kinds)."""
    others = _declare(Checker(), left_out, hardware_names(None), None)  # their own problems are not ours
    return replace(declared, names=declared.names | others.names, units={**others.units, **declared.units})


def _check_section(check: Checker, f: RawFile, section: str) -> None:
    """A section must be a list of mappings; one that is not is reported and read as empty (`_entries`)."""
    items = f.data.get(section) or []
    if not isinstance(items, list):
        check.add(str(f.path), f"'{section}' must be a list")
    elif section == "rules" and len(items) > MAX_RULES:
        check.add(str(f.path), f"{len(items)} rules; the limit is {MAX_RULES}")
    else:
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                check.add(f.where(section, i), f"{section} item must be a mapping")


def _entries(f: RawFile, section: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The mappings of a section; none of a section `_check_section` refuses (files are read once and
    checked once per kind, so they are never changed)."""
    items = f.data.get(section) or []
    if not isinstance(items, list) or (section == "rules" and len(items) > MAX_RULES):
        items = []
    return ((i, item) for i, item in enumerate(items) if isinstance(item, dict))


def _declare_item(check: Checker, declared: Declared, where: str, section: str, item: dict[str, Any]) -> None:
    name = item.get("name")
    if not isinstance(name, str):
        return
    if section in ("bounds", "terms"):
        seen = declared.bounds if section == "bounds" else declared.terms
        if name in seen:
            check.add(where, f"{section[:-1]} '{name}' is already declared")
        seen.add(name)
        return
    if section != "rules":
        declared.names.add(name)
        declared.units.setdefault(name, str(item.get("unit", "")))
        return
    _register(check, declared, RuleKey(name, where, "name"), name)
    rid = str(item.get("id", ""))
    if rid:
        _register(check, declared, RuleKey(name, where, "id"), rid)
    aliases = item.get("aliases")
    for alias in aliases if isinstance(aliases, list) else []:
        if isinstance(alias, str):
            _register(check, declared, RuleKey(name, where, "alias"), alias)


def _register(check: Checker, declared: Declared, new: RuleKey, key: str) -> None:
    """One name, id or alias: each refers to one rule only (a rule's id may equal its own name)."""
    old = declared.rules.get(key)
    if old is None:
        declared.rules[key] = new
        return
    if old.where == new.where and old.name == new.name and "alias" not in (old.what, new.what):
        return
    taken = "" if old.what == new.what else f" as the {old.what} of rule '{old.name}'"
    check.add(new.where, f"rule {new.what} '{key}' is already used at {old.where}{taken}")


def _rule_keys_of(headers: list[_Header]) -> dict[str, list[str]]:
    """Rule names, ids and aliases of packs left out (each kind's own), so a reference to one says why it is
    unknown."""
    found: dict[str, list[str]] = {}
    for header in headers:
        for f in header.files:
            for _, item in _entries(f, "rules"):
                aliases = item.get("aliases")
                for key in (item.get("name"), item.get("id"), *(aliases if isinstance(aliases, list) else ())):
                    if isinstance(key, str) and header.name not in found.setdefault(key, []):
                        found[key].append(header.name)
    return found


# ------------------------------------------------------------------------------------ pass 2: items


def _pack(check: Checker, header: _Header, declared: Declared) -> Pack:
    inputs, metrics, bounds, terms, rules = [], [], [], [], []
    units = pack_units(header.kinds)
    for f in header.files:
        for i, item in _entries(f, "inputs"):
            inputs.append(input_def(check, f.where("inputs", i), item, header.name, units))
        for i, item in _entries(f, "metrics"):
            metrics.append(metric_def(check, f.where("metrics", i), item, header.name, declared.names, units))
        for i, item in _entries(f, "bounds"):
            bounds.append(bound_def(check, f.where("bounds", i), item, header.name, declared.names))
        for i, item in _entries(f, "terms"):
            terms.append(term_def(check, f.where("terms", i), item, header.name, declared))
        for i, item in _entries(f, "rules"):
            rules.append(rule_def(check, f.where("rules", i), item, header.name, declared, header.kinds))
    return Pack(name=header.name, version=header.version, description=header.description, path=str(header.path),
                inputs=tuple(i for i in inputs if i), metrics=tuple(m for m in metrics if m),
                rules=tuple(r for r in rules if r), kinds=header.kinds, bounds=tuple(b for b in bounds if b),
                terms=tuple(t for t in terms if t))


def pack_units(kind_names: Sequence[str]) -> Units:
    """The units a pack's inputs and metrics may have: the generic ones and those its kinds add (every
    kind's for a pack without `kinds:`, as it may read every kind's names)."""
    known = kinds.available()
    return units_of([k for k in known if k.name in kind_names] if kind_names else known)


def _ruleset(packs: list[Pack], hw: tuple[str, ...], kind: str) -> RuleSet:
    inputs: dict[str, InputDef] = {}
    for pack in packs:
        for item in pack.inputs:
            inputs.setdefault(item.name, item)
    return RuleSet(packs=tuple(packs), inputs=inputs, metrics=tuple(m for p in packs for m in p.metrics),
                   rules=order([r for p in packs for r in p.rules]), hardware_names=hw, kind=kind,
                   bounds=tuple(b for p in packs for b in p.bounds))


def order(rules: list[RuleDef]) -> tuple[RuleDef, ...]:
    """Rules in `requires` order; a cycle through `requires` or through `explains` is refused (an
    explains-cycle would leave no root cause)."""
    by_name = {r.name: r for r in rules}
    for key in ("explains", "requires"):
        try:
            graphlib.TopologicalSorter({r.name: getattr(r, key) for r in rules}).prepare()
        except graphlib.CycleError as exc:
            cycle = exc.args[1]
            raise PackError([f"{by_name[cycle[0]].where}: `{key}` forms a cycle: {' -> '.join(cycle)}"]) from None
    first = {r.name: (*r.requires, *(n for n in r.global_with if n in by_name)) for r in rules}
    try:
        return tuple(by_name[n] for n in graphlib.TopologicalSorter(first).static_order())
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        raise PackError([f"{by_name[cycle[0]].where}: `global_with` forms a cycle: {' -> '.join(cycle)}"]) from None
