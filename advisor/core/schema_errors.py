"""msgspec's validation errors of a saved analysis said as one line naming the field as the file has it."""

from __future__ import annotations

import json
import math
import re
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import msgspec

from advisor.core.analysis_schema import AnalysisDoc

# msgspec's "Expected `X`, got `Y` - at `$.findings[3].severity`" as "findings[3].severity: expected …, got 5"
_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.(\w+)|\[(\d+)\]|\[\.\.\.\]")
_WORDS = {"float": "a number", "int": "an integer", "str": "text", "bool": "true or false", "null": "null",
          "object": "an object", "array": "a list"}


def field_problem(message: str, data: Any) -> str:
    """msgspec's validation error as `field.path: problem`, the field named as the file has it (map keys
    too) and the offending value shown."""
    match = _AT.match(message)
    what, path = (match.group("what"), match.group("path") or "") if match else (message, "")
    label, value, choices = _locate(path, data)
    shown = _shown(value)
    if what.startswith(("Invalid enum value", "Expected `str`")) and choices:
        problem = f"expected one of {', '.join(map(str, choices))}, got {shown}"
    elif (found := re.match(r"^Expected `([^`]*)`, got `[^`]*`$", what)) is not None:
        expected = " or ".join(_WORDS.get(t.strip(), t.strip()) for t in found.group(1).split("|"))
        problem = f"expected {expected}, got {shown}"
    elif (found := re.match(r"^Expected `array` of length <= (\d+)$", what)) is not None:
        problem = f"more than {found.group(1)} entries, the most a saved analysis holds"
    elif (found := re.match(r"^Expected `object` of length <= (\d+)$", what)) is not None:
        problem = f"more than {found.group(1)} keys, the most a saved analysis holds"
    elif (found := re.match(r"^Object missing required field `(\w+)`$", what)) is not None:
        problem = f"missing required field '{found.group(1)}'"
    elif what.startswith("Expected `float` ") and isinstance(value, float) and not math.isfinite(value):
        problem = f"value {shown} is not a finite number"  # a NaN in a dict Python's JSON reader filled
    elif re.match(r"^Expected `float` (<= 1\.0|>= 0\.0)$", what):  # the schema's Fraction: only shares of time
        problem = f"{shown} is out of range 0..1 (a share of time)"
    elif what.startswith(("Number out of range", "Expected `float`")):
        problem = f"expected a finite number, got {shown}"
    elif (found := re.match(r"^Expected `int` (>=|<=) ", what)) is not None:
        problem = f"expected a count from 0 to 2**53, got {shown}"
    else:
        problem = what.replace("`", "'")[:200]
    return f"{label}: {problem}" if label else problem


def _locate(path: str, data: Any) -> tuple[str, Any, tuple[Any, ...]]:
    """Follow msgspec's path through the file's data and the schema: the field's name as written (msgspec
    shows map keys as `[...]`), its value, and the values a Literal field allows."""
    tp: Any = AnalysisDoc
    label = ""
    for step in _STEP.finditer(path):
        tp = _plain(tp, data)
        name, index = step.group(1), step.group(2)
        if name is not None and isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            tp, data, label = get_type_hints(tp, include_extras=True).get(name), _get(data, name), f"{label}.{name}"
        elif index is not None:
            args = get_args(tp)
            position = int(index)
            tp = (args[position] if position < len(args) else None) if get_origin(tp) is tuple else (
                args[0] if args else None)
            data, label = _get(data, position), f"{label}[{index}]"
        else:  # a map key: the first whose value does not fit (msgspec stops at the first problem)
            value_type = get_args(tp)[1] if len(get_args(tp)) == 2 else Any
            key = next((k for k, v in data.items() if not _fits(v, value_type)), None) if isinstance(
                data, dict) else None
            tp, data = value_type, _get(data, key)
            label += field_step(key)
    tp = _plain(tp, data)
    choices = get_args(tp) if get_origin(tp) is Literal else ()
    return label.lstrip("."), data, choices


def _plain(tp: Any, data: Any) -> Any:
    """The type under Annotated and `| None` (the non-null arm a value is checked against)."""
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        elif get_origin(tp) in (Union, UnionType):
            arms = [a for a in get_args(tp) if a is not type(None)]
            if len(arms) != 1:
                return tp
            tp = arms[0]
        else:
            return tp


def _fits(value: Any, tp: Any) -> bool:
    try:
        msgspec.convert(value, tp)
    except (msgspec.ValidationError, RecursionError):
        return False
    return True


def _get(data: Any, key: Any) -> Any:
    if isinstance(data, dict):
        return data.get(key)
    if isinstance(data, list) and isinstance(key, int) and key < len(data):
        return data[key]
    return None


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"an integer of {len(str(abs(value)))} digits"
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    return text if len(text) <= 60 else text[:57] + "..."


def non_finite_problem(data: Any) -> str | None:
    """`field.path: value NaN is not a finite number` for the first NaN or ±Infinity in a file Python's JSON
    reader read (it accepts them; JSON and msgspec do not, and advisor writes none); None when there is none."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        label, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return f"{label.lstrip('.')}: value {_shown(node)} is not a finite number"
        if isinstance(node, dict):
            stack += reversed([(label + field_step(k), v) for k, v in node.items()])  # the file's order
        elif isinstance(node, list):
            stack += reversed([(f"{label}[{i}]", v) for i, v in enumerate(node)])
    return None


def field_step(key: Any) -> str:
    """A map key as a step of a field's path: `.name`, or `["a key"]` when it is no identifier."""
    return f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{json.dumps(key)[:60]}]"
