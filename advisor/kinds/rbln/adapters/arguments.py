"""Transfer bytes and compute cycles of a slice, from its debug annotations (`Slice Arguments`)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from advisor.kinds.rbln.adapters.rows import _text

_ARGS_NAME = "slice arguments"
_KEYS = ("transfer", "comp_cycle")
# linear on any text: a value's scan stops at the next bracket or quote, where the next key's value would
# start, so findall never rescans the rest of the text from each `transfer:[` (unclosed brackets were quadratic)
_JSON_ARGS = re.compile(r"""["']?(transfer|comp_cycle)["']?\s*:\s*(\[[^\[\]]*\]|"[^"]*"|'[^']*'|[-+\d.eE]+)""")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


class Defer(Exception):
    """An annotation names an interned string the worker does not have: resolved in phase 2."""


def _numbers(text: str) -> float:
    """The sum of the numbers in `text`; NaN (unavailable) when it has none or one is beyond float range."""
    numbers = _NUMBER.findall(text)
    total = sum(map(float, numbers)) if numbers else math.nan  # no number: unavailable, not 0
    return total if math.isfinite(total) else math.nan


class _Sums:
    __slots__ = ("bytes", "cycles")

    def __init__(self) -> None:
        self.bytes: float | None = None
        self.cycles: float | None = None

    def add(self, key: str, value: float) -> None:
        if key == "transfer":
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
        nbytes, cycles = _json_sums(text)
        if nbytes is not None:
            self.add("transfer", nbytes)
        if cycles is not None:
            self.add("comp_cycle", cycles)


def _walk(annotation: Any, key: str | None, sums: _Sums, names: Callable[[int], str],
          strings: Callable[[int], str]) -> None:
    """One debug annotation's value into the sums; `key` is the transfer/comp_cycle entry it is under."""
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
        _walk(entry, key or (lowered if lowered in _KEYS else None), sums, names, strings)
    for item in annotation.array_values:
        _walk(item, key, sums, names, strings)


def _nested(value: Any, key: str | None, sums: _Sums) -> None:
    """The older NestedValue form of dictionaries and arrays."""
    for name, sub in zip(value.dict_keys, value.dict_values, strict=False):
        lowered = _text(name).strip().lower()
        _nested(sub, key or (lowered if lowered in _KEYS else None), sums)
    for sub in value.array_values:
        _nested(sub, key, sums)
    if key is not None:
        if value.HasField("string_value"):
            sums.text(key, _text(value.string_value))
        elif value.HasField("int_value"):
            sums.add(key, float(value.int_value))
        elif value.HasField("double_value") and math.isfinite(value.double_value):
            sums.add(key, value.double_value)


def annotation_sums(annotations: Iterable[Any], names: Callable[[int], str],
                    strings: Callable[[int], str]) -> tuple[float | None, float | None]:
    """Transfer bytes and compute cycles of a slice's debug annotations: the `Slice Arguments`
    annotation (JSON text, legacy JSON or nested dictionaries), or top-level `transfer`/`comp_cycle`."""
    sums = _Sums()
    for annotation in annotations:
        name = names(annotation.name_iid) if annotation.WhichOneof("name_field") == "name_iid" else annotation.name
        lowered = _text(name).strip().lower()
        if lowered == _ARGS_NAME:
            _walk(annotation, None, sums, names, strings)
        elif lowered in _KEYS:
            _walk(annotation, lowered, sums, names, strings)
    return sums.bytes, sums.cycles


def _defer(_: int) -> str:
    raise Defer


def _json_sums(text: Any) -> tuple[float | None, float | None]:
    """The common `Slice Arguments` value: JSON text with transfer and/or comp_cycle (one regex pass)."""
    nbytes = cycles = None
    for key, found in _JSON_ARGS.findall(text if isinstance(text, str) else _text(text)):
        numbers = _NUMBER.findall(found)
        value = float(numbers[0]) if len(numbers) == 1 else sum(map(float, numbers))
        if not numbers or not math.isfinite(value):  # no number, 1e999, a 400-digit size: unavailable
            continue
        if key == "transfer":
            nbytes = value if nbytes is None else nbytes + value
        else:
            cycles = value if cycles is None else cycles + value
    return nbytes, cycles
