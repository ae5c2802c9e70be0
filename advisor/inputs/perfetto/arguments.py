"""A slice's two figures — bytes it moved and cycles it computed — from its debug annotations, under the
keys a kind names (`Arguments`): a container annotation whose value is JSON text, legacy JSON or a
dictionary holding the keys, or top-level annotations named by the keys. Numbers under a key are
summed (`":4096Byte"`, `[1, 2]`); a key with no number, or one beyond float range, is unavailable."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from advisor.inputs.perfetto.rows import _text

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Arguments:
    """Which annotations carry a slice's figures (a kind's knowledge, sent to the decoding workers)."""

    container: str  # the annotation holding them, as the writer spells it (`Slice Arguments`); matched
    # exactly on the fast path (one JSON string), case-insensitively otherwise
    bytes_key: str  # lower case: the key whose numbers are the slice's bytes
    cycles_key: str  # lower case: the key whose numbers are its cycles
    keys: tuple[str, str] = field(init=False, repr=False, compare=False)
    lowered: str = field(init=False, repr=False, compare=False)  # the container, lower case
    # linear on any text: a value's scan stops at the next bracket or quote, where the next key's value
    # would start, so findall never rescans the rest of the text from each `key:[` (unclosed brackets were
    # quadratic)
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        keys = (self.bytes_key, self.cycles_key)
        alternatives = "|".join(re.escape(k) for k in keys)
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "lowered", self.container.strip().lower())
        object.__setattr__(self, "pattern", re.compile(
            rf"""["']?({alternatives})["']?\s*:\s*(\[[^\[\]]*\]|"[^"]*"|'[^']*'|[-+\d.eE]+)"""))

    def json_sums(self, text: Any) -> tuple[float | None, float | None]:
        """The common container value: JSON text with the keys (one regex pass)."""
        nbytes = cycles = None
        bytes_key = self.bytes_key
        for key, found in self.pattern.findall(text if isinstance(text, str) else _text(text)):
            numbers = _NUMBER.findall(found)
            value = float(numbers[0]) if len(numbers) == 1 else sum(map(float, numbers))
            if not numbers or not math.isfinite(value):  # no number, 1e999, a 400-digit size: unavailable
                continue
            if key == bytes_key:
                nbytes = value if nbytes is None else nbytes + value
            else:
                cycles = value if cycles is None else cycles + value
        return nbytes, cycles

    def annotation_sums(self, annotations: Iterable[Any], names: Callable[[int], str],
                        strings: Callable[[int], str]) -> tuple[float | None, float | None]:
        """Bytes and cycles of a slice's debug annotations: the container annotation (JSON text, legacy
        JSON or nested dictionaries), or top-level annotations named by the keys. `names` and `strings`
        look interned annotation names and string values up (they may raise `Defer`)."""
        sums = _Sums(self)
        keys = self.keys
        for annotation in annotations:
            name = names(annotation.name_iid) if annotation.WhichOneof("name_field") == "name_iid" else annotation.name
            lowered = _text(name).strip().lower()
            if lowered == self.lowered:
                _walk(annotation, None, sums, names, strings)
            elif lowered in keys:
                _walk(annotation, lowered, sums, names, strings)
        return sums.bytes, sums.cycles


class Defer(Exception):
    """An annotation names an interned string the worker does not have: resolved in phase 2."""


def defer(_: int) -> str:
    """A lookup for phase 1, which has no interned strings: the slice's annotations wait for phase 2."""
    raise Defer


def _numbers(text: str) -> float:
    """The sum of the numbers in `text`; NaN (unavailable) when it has none or one is beyond float range."""
    numbers = _NUMBER.findall(text)
    total = sum(map(float, numbers)) if numbers else math.nan  # no number: unavailable, not 0
    return total if math.isfinite(total) else math.nan


class _Sums:
    __slots__ = ("arguments", "bytes", "cycles")

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.bytes: float | None = None
        self.cycles: float | None = None

    def add(self, key: str, value: float) -> None:
        if key == self.arguments.bytes_key:
            self.bytes = (self.bytes or 0.0) + value
        else:
            self.cycles = (self.cycles or 0.0) + value

    def text(self, key: str | None, text: str) -> None:
        """A string value: numbers under a key (`":4096Byte"`), or JSON text holding the keys."""
        if key is not None:
            value = _numbers(text)
            if not math.isnan(value):
                self.add(key, value)
            return
        nbytes, cycles = self.arguments.json_sums(text)
        if nbytes is not None:
            self.add(self.arguments.bytes_key, nbytes)
        if cycles is not None:
            self.add(self.arguments.cycles_key, cycles)


def _walk(annotation: Any, key: str | None, sums: _Sums, names: Callable[[int], str],
          strings: Callable[[int], str]) -> None:
    """One debug annotation's value into the sums; `key` is the bytes or cycles key it is under."""
    kind = annotation.WhichOneof("value")
    if kind in ("string_value", "legacy_json_value"):
        sums.text(key, _text(getattr(annotation, kind)))
    elif kind == "string_value_iid":
        sums.text(key, strings(annotation.string_value_iid))
    elif kind in ("int_value", "uint_value", "double_value"):
        if key is not None:
            value = float(getattr(annotation, kind))
            if math.isfinite(value):
                sums.add(key, value)
    elif kind == "nested_value":
        _nested(annotation.nested_value, key, sums)
    for entry in annotation.dict_entries:
        name = entry.name if entry.WhichOneof("name_field") != "name_iid" else names(entry.name_iid)
        lowered = _text(name).strip().lower()
        _walk(entry, key or (lowered if lowered in sums.arguments.keys else None), sums, names, strings)
    for item in annotation.array_values:
        _walk(item, key, sums, names, strings)


def _nested(value: Any, key: str | None, sums: _Sums) -> None:
    """The older NestedValue form of dictionaries and arrays."""
    for name, sub in zip(value.dict_keys, value.dict_values, strict=False):
        lowered = _text(name).strip().lower()
        _nested(sub, key or (lowered if lowered in sums.arguments.keys else None), sums)
    for sub in value.array_values:
        _nested(sub, key, sums)
    if key is not None:
        if value.HasField("string_value"):
            sums.text(key, _text(value.string_value))
        elif value.HasField("int_value"):
            sums.add(key, float(value.int_value))
        elif value.HasField("double_value") and math.isfinite(value.double_value):
            sums.add(key, value.double_value)
