"""Turning raw summary fields into machine-unit numbers and text, the same for every format."""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from advisor.core.resources import load_yaml_resource


@dataclass(frozen=True)
class FieldRules:
    text_fields: frozenset[str]
    text_suffixes: tuple[str, ...]
    profile_patterns: tuple[str, ...]
    suffix_units: tuple[tuple[str, str], ...]
    text_units: dict[str, float]
    nonzero: frozenset[str] = frozenset()
    unbounded_percent: frozenset[str] = frozenset()

    def is_text_field(self, name: str) -> bool:
        return name in self.text_fields or name.endswith(self.text_suffixes)

    def unit_by_suffix(self, name: str) -> str:
        for suffix, unit in self.suffix_units:
            if name.endswith(suffix):
                return unit
        return ""

    def is_profile_field(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.profile_patterns)


@lru_cache(maxsize=1)
def field_rules() -> FieldRules:
    data = load_yaml_resource("kinds/neuron/data/conventions.yaml")
    return FieldRules(
        text_fields=frozenset(data["text_fields"]),
        text_suffixes=tuple(data["text_suffixes"]),
        profile_patterns=tuple(data["profile_field_patterns"]),
        suffix_units=tuple((d["suffix"], d["unit"]) for d in data["suffix_units"]),
        text_units={str(k): float(v) for k, v in data["text_units"].items()},
        nonzero=frozenset(data["nonzero_fields"]),
        unbounded_percent=frozenset(data["unbounded_percent_fields"]),
    )


@dataclass(frozen=True)
class Normalised:
    values: dict[str, float | None]
    info: dict[str, str]
    notes: tuple[str, ...]


def _as_number(raw: Any) -> float | str | None:
    """A finite float, None for NaN/infinite/out of range, or the reason it is not a number."""
    if isinstance(raw, bool):
        return "a boolean"
    if isinstance(raw, (int, float)):
        try:
            number = float(raw)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(raw, str):
        try:
            number = float(raw.strip().replace(",", ""))
        except ValueError:
            return f"text {raw.strip()[:40]!r}"
        return number if math.isfinite(number) else None
    return f"a {type(raw).__name__}"


def normalise(raw: dict[str, Any]) -> Normalised:
    """Split raw fields into numbers (machine units, None = unavailable) and text, noting oddities.

    Negative numbers are the profiler's "unavailable" sentinel; NaN and infinities are unavailable
    too. Unknown fields pass through untouched.
    """
    rules = field_rules()
    values: dict[str, float | None] = {}
    info: dict[str, str] = {}
    notes: list[str] = []
    for key, value in raw.items():
        name = str(key)
        if isinstance(value, (dict, list)):
            info[name] = json.dumps(value, sort_keys=True, ensure_ascii=False)[:500]
            continue
        if value is None:
            values[name] = None
            continue
        if rules.is_text_field(name) or (isinstance(value, str) and not rules.is_profile_field(name)):
            number = _as_number(value) if not rules.is_text_field(name) else "text"
            if isinstance(number, float):
                values[name] = number
            else:
                info[name] = str(value).strip()
            continue
        number = _as_number(value)
        if isinstance(number, str):
            values[name] = None
            notes.append(f"{name} is {number}, not a number: treated as unavailable")
        elif number is None:
            values[name] = None
            notes.append(f"{name} = {value!r:.40} is not finite: treated as unavailable")
        elif number < 0:
            values[name] = None
            notes.append(f"{name} = {value:g} (negative means unavailable): treated as unavailable")
        elif number == 0 and name in rules.nonzero:
            values[name] = None
            notes.append(f"{name} = 0: the profiler measured no time, so it is treated as unavailable")
        elif name.endswith("_percent") and number > 1.0 and name not in rules.unbounded_percent:
            values[name] = None
            notes.append(f"{name} = {number:g} lies outside the 0..1 range of a profiler fraction: "
                         "treated as unavailable")
        else:
            values[name] = number
    return Normalised(values=values, info=info, notes=tuple(notes))


def has_profile_metrics(values: dict[str, float | None]) -> bool:
    rules = field_rules()
    return any(rules.is_profile_field(name) for name in values)
