"""A kind's field conventions (its data/conventions.yaml): turning raw fields into machine-unit
numbers and text, the same way for every format of that kind.

What differs between profilers is data: whether percentages are fractions 0..1 or 0..100, whether a
negative number means "unavailable", whether units come from a field's name or with each value,
and how vendor metric names map to canonical snake_case names (the raw name is kept).
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.numbers import as_number, number_or_reason
from advisor.core.units import Units
from advisor.kinds.base import ProfileKind


@dataclass(frozen=True)
class Conventions:
    text_fields: frozenset[str]
    text_suffixes: tuple[str, ...]
    profile_patterns: tuple[str, ...]  # a file is a profile only with a number in a field matching one
    suffix_units: tuple[tuple[str, str], ...]  # (name ending, machine unit), first match wins
    text_units: Mapping[str, tuple[float, str]]  # printed unit -> (factor to machine units, machine unit)
    names: Mapping[str, str]  # vendor metric name -> canonical name
    percent_suffix: str = "_percent"
    percent_scale: float = 1.0  # 100 when the kind writes shares as 0..100
    negative_is_unavailable: bool = True
    nonzero: frozenset[str] = frozenset()
    unbounded_percent: frozenset[str] = frozenset()
    unit_fixes: tuple[tuple[str, str], ...] = ()  # (vendor-name pattern, machine unit): units the profiler misprints
    # a JSON is this kind's only with a key matching one of these: fields no other profiler writes (total_time is
    # anyone's); empty = the profile patterns
    identifying_patterns: tuple[str, ...] = ()
    units: Units = field(default_factory=Units)  # the generic units and the counted ones this kind adds (its `units:`)

    def fixed_unit(self, vendor: str) -> str | None:
        return next((unit for pattern, unit in self.unit_fixes if fnmatch.fnmatchcase(vendor, pattern)), None)

    def is_text_field(self, name: str) -> bool:
        return name in self.text_fields or name.endswith(self.text_suffixes)

    def unit_by_suffix(self, name: str) -> str:
        return next((unit for suffix, unit in self.suffix_units if name.endswith(suffix)), "")

    def is_profile_field(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.profile_patterns)

    def is_identifying_field(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.identifying_patterns or self.profile_patterns)

    def factor(self, printed_unit: str) -> float | None:
        found = self.text_units.get(printed_unit)
        return None if found is None else found[0]


@cache
def conventions(kind: ProfileKind) -> Conventions:
    data = kind.data("conventions.yaml")
    text_units = {printed: (float(as_number(factor) or 0.0), unit)
                  for unit, printed_units in (data.get("text_units") or {}).items()
                  for printed, factor in printed_units.items()}
    return Conventions(
        text_fields=frozenset(data.get("text_fields") or ()), text_suffixes=tuple(data.get("text_suffixes") or ()),
        profile_patterns=tuple(data.get("profile_field_patterns") or ("*",)),
        suffix_units=tuple((d["suffix"], d["unit"]) for d in data.get("suffix_units") or ()),
        text_units=text_units, names=dict(data.get("names") or {}),
        percent_suffix=str(data.get("percent_suffix", "_percent")),
        percent_scale=float(data.get("percent_scale", 1)),
        negative_is_unavailable=bool(data.get("negative_is_unavailable", True)),
        nonzero=frozenset(data.get("nonzero_fields") or ()),
        unbounded_percent=frozenset(data.get("unbounded_percent_fields") or ()),
        unit_fixes=tuple((str(k), str(v)) for k, v in (data.get("unit_fixes") or {}).items()),
        identifying_patterns=tuple(data.get("identifying_field_patterns") or ()),
        units=_units(kind, data.get("units", {})),
    )


def _units(kind: ProfileKind, added: object) -> Units:
    try:
        if not isinstance(added, Mapping):
            raise ValueError("`units:` must map each unit the kind adds to how it is shown")
        return Units({str(unit): str(display) for unit, display in added.items()})
    except ValueError as exc:
        raise AdvisorError(str(kind.folder / "conventions.yaml"), f"profile kind '{kind.name}': {exc}") from None


def units_of(chosen: Iterable[ProfileKind]) -> Units:
    """The units values of these kinds may have: the generic ones and the ones each kind adds."""
    merged = Units()
    for kind in chosen:
        merged = merged.merged(conventions(kind).units)
    return merged


@dataclass(frozen=True)
class Normalised:
    values: dict[str, float | None]
    info: dict[str, str]
    notes: tuple[str, ...]
    units: dict[str, str]  # machine unit of each numeric field
    raw_names: dict[str, str]  # canonical name -> the vendor's name, where they differ


def _scaled(name: str, number: float, printed_unit: str | None, conv: Conventions) -> tuple[float, str, str | None]:
    """The number in machine units, its unit, and a note when the printed unit is unknown."""
    if printed_unit:
        found = conv.text_units.get(printed_unit)
        if found is None:
            return number, "", f"{name}: unit {printed_unit!r} is not one advisor knows; the value is kept as printed"
        return number * found[0], found[1], None
    if name.endswith(conv.percent_suffix) and conv.percent_scale != 1:
        return number / conv.percent_scale, "fraction", None
    return number, conv.unit_by_suffix(name), None


def normalise(raw: Mapping[str, Any], conv: Conventions, row_units: Mapping[str, str] | None = None) -> Normalised:
    """Split raw fields into numbers (machine units, None = unavailable) and text, noting oddities.
    A unit printed beside a value (`row_units`, by vendor name) converts it; otherwise the unit follows
    the field's name.

    Negative numbers are the profiler's "unavailable" sentinel where the kind says so; NaN and
    infinities are unavailable too. Unknown fields pass through untouched.
    """
    values: dict[str, float | None] = {}
    info: dict[str, str] = {}
    notes: list[str] = []
    units: dict[str, str] = {}
    raw_names: dict[str, str] = {}
    for key, value in raw.items():
        vendor = str(key)
        name = conv.names.get(vendor, vendor)
        if name != vendor:
            raw_names[name] = vendor
        if isinstance(value, (dict, list)):
            info[name] = json.dumps(value, sort_keys=True, ensure_ascii=False)[:500]
            continue
        if value is None:
            values[name] = None
        elif conv.is_text_field(name) or (isinstance(value, str) and not conv.is_profile_field(name)):
            number = "text" if conv.is_text_field(name) else number_or_reason(value)
            if isinstance(number, float):  # a number in text, in a field no profile pattern names: kept as is
                values[name] = number
            else:
                info[name] = str(value).strip()
                continue
        else:
            number = number_or_reason(value)
            if isinstance(number, str):
                values[name] = None
                notes.append(f"{name} is {number}, not a number: treated as unavailable")
            elif number is None:
                values[name] = None
                notes.append(f"{name} = {value!r:.40} is not finite: treated as unavailable")
            else:
                number, units[name], unit_note = _scaled(name, number, (row_units or {}).get(vendor), conv)
                units[name] = conv.fixed_unit(vendor) or units[name]
                notes += [unit_note] if unit_note else []
                values[name] = _checked(name, number, conv, notes)
        units.setdefault(name, conv.unit_by_suffix(name))
    return Normalised(values=values, info=info, notes=tuple(notes), units=units, raw_names=raw_names)


def _checked(name: str, number: float, conv: Conventions, notes: list[str]) -> float | None:
    """The number, or None with a note when the kind's conventions say it cannot be a measurement."""
    if not math.isfinite(number):  # finite as printed, beyond float range once scaled (1e308 Mbyte)
        notes.append(f"{name} overflows its unit: treated as unavailable")
    elif number < 0 and conv.negative_is_unavailable:
        notes.append(f"{name} = {number:g} (negative means unavailable): treated as unavailable")
    elif number == 0 and name in conv.nonzero:
        notes.append(f"{name} = 0: the profiler measured no time, so it is treated as unavailable")
    elif (name.endswith(conv.percent_suffix) and number > 1.0 and name not in conv.unbounded_percent):
        notes.append(f"{name} = {number:g} lies outside the 0..1 range of a profiler fraction: "
                     "treated as unavailable")
    else:
        return number
    return None


def has_profile_metrics(values: Mapping[str, float | None], conv: Conventions) -> bool:
    return any(conv.is_profile_field(name) for name in values)


def has_usable_metric(values: Mapping[str, float | None], conv: Conventions) -> bool:
    return any(value is not None and conv.is_profile_field(name) for name, value in values.items())


def no_usable_metric(raws: Sequence[Mapping[str, Any]], conv: Conventions) -> str:
    """The problem of fields that name metrics but measure nothing: a file of these is no profile."""
    fields = sum(len(raw) for raw in raws)
    numbers = sum(1 for raw in raws for key, value in raw.items()
                  if conv.is_profile_field(conv.names.get(str(key), str(key)))
                  and not isinstance(value, (dict, list)) and isinstance(number_or_reason(value), float))
    counted = f"{fields} field{'' if fields == 1 else 's'}"
    if not numbers:
        return f"no usable metric ({counted}, none numeric)"
    # numbers, but each one the profiler's "not measured" (a negative sentinel, zero time, a share beyond 0..1)
    return f"no usable metric ({counted}, {numbers} numeric, none a measurement)"
