"""The work an operator does, from the shapes a trace recorded (record_shapes=True: `Input Dims`, `Input type`,
`Concrete Inputs`), by the families and formulas of data/operators.yaml (issue 35). An operator no family lists,
or whose inputs do not bind a formula's names, is not modelled: `model` returns None, never zero work."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor.core.expr import Expression, compile_expression
from advisor.profilers.torch import KIND

ALWAYS = ("size", "elements_in", "bytes_in", "elements_out")  # names every operator binds


@dataclass(frozen=True)
class Binding:
    """How one operator's inputs name a family's variables."""

    dims: tuple[tuple[str, int, int | None], ...]  # name, input, axis (None: every element)
    scalars: tuple[tuple[str, int, int], ...]  # name, concrete input, element
    flags: tuple[tuple[str, int, int], ...]
    constants: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Family:
    key: str
    title: str
    matrix: bool  # runs on the matrix units (its peak by dtype), else on the ordinary pipes
    flops: Expression
    bytes: Expression
    derived: tuple[tuple[str, Expression], ...]
    ops: dict[str, Binding]
    source: str
    metrics: tuple[str, ...]  # the figures reported as metrics: {key}_{figure}


@dataclass(frozen=True)
class Work:
    family: str
    flops: float
    bytes: float
    dtype: str  # input 0's, as the profiler names it


@dataclass(frozen=True)
class Model:
    families: tuple[Family, ...]
    by_op: dict[str, Family]
    dtype_bytes: dict[str, float]
    matrix_peaks: dict[str, str]
    vector_peak: str
    tf32_kernels: re.Pattern[str]


def _pairs(raw: Any, what: str) -> list[tuple[str, int, int | None]]:
    out = []
    for name, where in (raw or {}).items():
        if not (isinstance(where, list) and len(where) == 2 and isinstance(where[0], int)
                and (isinstance(where[1], int) or where[1] == "numel")):
            raise ValueError(f"operators.yaml: {what} {name}: expected [input, axis]")
        out.append((str(name), where[0], None if where[1] == "numel" else where[1]))
    return out


def _binding(raw: dict[str, Any]) -> Binding:
    return Binding(dims=tuple(_pairs(raw.get("dims"), "dims")),
                   scalars=tuple((n, i, int(a or 0)) for n, i, a in _pairs(raw.get("scalars"), "scalars")),
                   flags=tuple((n, i, int(a or 0)) for n, i, a in _pairs(raw.get("flags"), "flags")),
                   constants=tuple((str(k), float(v)) for k, v in (raw.get("constants") or {}).items()))


@cache
def model_data() -> Model:
    data = KIND.data("operators.yaml")
    families = []
    for key, raw in data["families"].items():
        ops = {name: _binding(b or {}) for name, b in raw["ops"].items()}
        names = {*ALWAYS, *(n for b in ops.values() for n, *_ in (*b.dims, *b.scalars, *b.flags)),
                 *(n for b in ops.values() for n, _ in b.constants)}
        derived = []
        for name, text in (raw.get("derived") or {}).items():
            derived.append((str(name), compile_expression(str(text), names)))
            names.add(str(name))
        families.append(Family(key, raw["title"], bool(raw.get("matrix")), compile_expression(str(raw["flops"]), names),
                               compile_expression(str(raw["bytes"]), names), tuple(derived), ops,
                               " ".join(str(raw.get("source", "")).split()), tuple(raw.get("metrics") or ("time",))))
    by_op = {op: f for f in families for op in f.ops}
    return Model(tuple(families), by_op, {k: float(v) for k, v in data["dtype_bytes"].items()},
                 dict(data["matrix_peaks"]), str(data["vector_peak"]), re.compile(str(data["tf32_kernels"])))


def _shape(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return tuple(value)
    return None


def _scalar(text: Any, element: int) -> float | None:
    """A concrete input as a number: "2", "0.125", "True"; element `element` of a list ("[1, 1]")."""
    if not isinstance(text, str) or not text:
        return None
    if text in ("True", "False"):
        return float(text == "True")
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError:
            return None
        value = items[element] if isinstance(items, list) and -len(items) <= element < len(items) else None
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _env(binding: Binding, shapes: list[tuple[int, ...] | None], types: list[Any], concrete: list[Any],
         sizes: dict[str, float]) -> dict[str, float | None] | None:
    """The names an operator binds, or None when its inputs cannot bind them (a missing shape or dtype)."""
    if not shapes or shapes[0] is None or not types or types[0] not in sizes:
        return None
    env: dict[str, float | None] = {"size": sizes[types[0]]}
    tensors = [(math.prod(s), sizes[t]) for s, t in zip(shapes, types, strict=False) if s and t in sizes]
    env["elements_in"] = float(sum(n for n, _ in tensors))
    env["bytes_in"] = float(sum(n * b for n, b in tensors))
    env["elements_out"] = float(max((n for n, _ in tensors), default=0))
    for name, index, axis in binding.dims:
        shape = shapes[index] if index < len(shapes) else None
        if shape is None or (axis is not None and not -len(shape) <= axis < len(shape)):
            return None
        env[name] = float(math.prod(shape) if axis is None else shape[axis])
    for name, index, element in (*binding.scalars, *binding.flags):
        env[name] = _scalar(concrete[index] if index < len(concrete) else None, element)
        if env[name] is None:
            return None
    env.update(binding.constants)
    return env


def model(op: str, dims: str, types: str, concrete: str) -> Work | None:
    """The work of one operator call from its recorded inputs (compact JSON text, as the reader keeps them)."""
    data = model_data()
    family = data.by_op.get(op)
    if family is None or not dims:
        return None
    try:
        shapes_raw, types_raw = json.loads(dims), json.loads(types or "[]")
        concrete_raw = json.loads(concrete) if concrete else []
    except ValueError:
        return None
    if not isinstance(shapes_raw, list) or not isinstance(types_raw, list) or not isinstance(concrete_raw, list):
        return None
    env = _env(family.ops[op], [_shape(s) for s in shapes_raw], types_raw, concrete_raw, data.dtype_bytes)
    if env is None:
        return None
    for name, expression in family.derived:
        env[name] = _number(expression.evaluate(env))
    flops, moved = _number(family.flops.evaluate(env)), _number(family.bytes.evaluate(env))
    if flops is None or moved is None or flops < 0 or moved <= 0:
        return None
    return Work(family.key, flops, moved, str(types_raw[0]))


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return number if math.isfinite(number) else None
