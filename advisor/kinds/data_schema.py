"""The shapes of a kind's data files (advisor/data/kind-data.schema.yaml, extended by a kind's own
data/schema.yaml) and the check of one file against them: the first problem, as one line naming the key.

A small language of its own rather than JSON Schema: the shapes are a handful (scalars, lists, pairs, open
and closed mappings), the runtime needs no validator dependency, and the messages say the key's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError, suggest
from advisor.core.numbers import as_number
from advisor.core.yamlsafe import load_yaml_file

SCHEMA = Path(__file__).resolve().parent.parent / "data" / "kind-data.schema.yaml"
_SCALARS: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "number": (int, float), "bool": (bool,),
                                         "any": (object,)}


@cache
def shared_shapes() -> dict[str, Any]:
    """File name -> shape of the keys shared modules read."""
    loaded = load_yaml_file(SCHEMA)
    return loaded if isinstance(loaded, dict) else {}


def merged(shared: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """The shared shapes with a kind's own top-level keys added (a kind may not redefine a shared key)."""
    out = {name: dict(shape) for name, shape in shared.items()}
    for name, shape in own.items():
        base = out.setdefault(name, {"keys": {}})
        for key, sub in (shape.get("keys") or {}).items() if isinstance(shape, dict) else ():
            if key in base["keys"]:
                raise ValueError(f"{name}: key '{key}' is shared; a kind's schema.yaml may only add keys")
            base["keys"] = {**base["keys"], key: sub}
    return out


OWN_SCHEMA = "schema.yaml"  # a kind's own keys, in the shapes of kind-data.schema.yaml


@cache
def kind_shapes(kind: str, folder: Path) -> dict[str, Any]:
    """The shapes of the data files of kind `kind` (in `folder`): the shared ones with the kind's own keys
    (data/schema.yaml) added."""
    own_path = folder / OWN_SCHEMA
    if not own_path.is_file():
        return shared_shapes()
    own = load_yaml_file(own_path)
    try:
        return merged(shared_shapes(), own if isinstance(own, dict) else {})
    except ValueError as exc:
        raise AdvisorError(f"profile kind '{kind}' ({own_path})", str(exc)) from None


def check_file(kind: str, folder: Path, name: str, data: Any) -> None:
    """One data file against its shape (ProfileKind.data runs it the first time a file is read, so a file is
    parsed once and only when a stage needs it); the error names the kind, the file and the key."""
    shape = kind_shapes(kind, folder).get(name)
    found = problem(data, shape) if shape is not None else None
    if found:
        raise AdvisorError(f"profile kind '{kind}' ({folder / name})", found)


def problem(value: Any, shape: Any, where: str = "") -> str | None:
    """The first way `value` does not fit `shape`, as "<key path>: <what>", or None when it fits."""
    at = where or "the file"
    if isinstance(shape, str):
        if shape not in _SCALARS:
            raise ValueError(f"unknown shape {shape!r} in the schema")
        if shape == "number":  # YAML 1.1 reads 1.0e3 as text; packs and data accept numeric text
            return None if as_number(value) is not None else f"{at}: expected a number, got {value!r}"
        if shape == "int" and isinstance(value, bool):
            return f"{at}: expected a whole number, got {value!r}"
        return None if isinstance(value, _SCALARS[shape]) else f"{at}: expected {_word(shape)}, got {_kind(value)}"
    if "enum" in shape:
        return None if value in shape["enum"] else f"{at}: {value!r} is not one of {', '.join(map(str, shape['enum']))}"
    if "one_of" in shape:
        found = [problem(value, s, where) for s in shape["one_of"]]
        return None if None in found else found[0]
    if "list" in shape:
        if not isinstance(value, list):
            return f"{at}: expected a list, got {_kind(value)}"
        return next((p for i, item in enumerate(value) if (p := problem(item, shape["list"], f"{where}[{i}]"))), None)
    if "tuple" in shape:
        items = shape["tuple"]
        if not isinstance(value, list) or len(value) != len(items):
            return f"{at}: expected a list of {len(items)} items, got {value!r}"
        return next((p for i, (v, s) in enumerate(zip(value, items, strict=True))
                     if (p := problem(v, s, f"{where}[{i}]"))), None)
    if not isinstance(value, dict):
        return f"{at}: expected a mapping, got {_kind(value)}"
    if "map" in shape:
        return next((p for k, v in value.items() if (p := problem(v, shape["map"], _join(where, k)))), None)
    keys = shape.get("keys") or {}
    for key in value:
        if key not in keys:
            return f"{_join(where, key)}: unknown key{suggest(str(key), list(keys))}"
    missing = [k for k in shape.get("required", ()) if k not in value]
    if missing:
        return f"{at}: missing {', '.join(missing)}"
    return next((p for k, v in value.items() if v is not None and (p := problem(v, keys[k], _join(where, k)))), None)


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _word(shape: str) -> str:
    return {"str": "text", "int": "a whole number", "number": "a number", "bool": "true or false"}.get(shape, shape)


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false", type(None): "nothing"}.get(
        type(value), f"{type(value).__name__} {value!r}")
