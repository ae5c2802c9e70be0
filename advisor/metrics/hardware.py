"""Hardware peaks: each kind's data table (its hardware.yaml), the target matched from the profile as
the table declares (`match:` a profile field, by prefix or exact value), or chosen by the user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from advisor.core import units as fmt
from advisor.core.errors import AdvisorError
from advisor.core.expr import compile_expression
from advisor.core.model import Hardware
from advisor.core.numbers import as_number
from advisor.core.yamlsafe import load_yaml_file
from advisor.kinds.base import ProfileKind


def table(kind: ProfileKind) -> dict[str, Any]:
    data = kind.data("hardware.yaml")
    return {"units": {}, "targets": {}, **data}


def target_names(kind: ProfileKind) -> list[str]:
    return sorted(table(kind)["targets"])


def _build(kind: ProfileKind, name: str, chosen_by: str) -> Hardware:
    data = table(kind)
    spec = data["targets"][name]
    return Hardware(name=name, description=spec.get("description", name),
                    values={k: float(v) for k, v in spec["values"].items()}, units=data["units"],
                    chosen_by=chosen_by, references=(data["reference"],) if data.get("reference") else (),
                    notes=tuple(spec.get("notes", ())))


def _field_text(fields: Mapping[str, object], name: str) -> str:
    """A profile field as text; a number in its shortest form (8.6, and 8.0 as "8")."""
    value = fields.get(name)
    return f"{value:g}" if isinstance(value, float) else str(value or "").strip()


def for_profile(kind: ProfileKind, fields: Mapping[str, object]) -> Hardware | None:
    """The target the profile's own field names (a text or numeric field): the longest matching prefix
    (trn1n. before trn1.), or an exact (case-insensitive) value, as the table's `match:` says (its shape, `how`
    one of prefix and equals, is checked when the table is read: advisor/data/kind-data.schema.yaml)."""
    data = table(kind)
    match = data.get("match") or {}
    how = match.get("how", "prefix")
    shown = _field_text(fields, match.get("field", ""))
    value = shown.lower()
    if not value:
        return None
    exact = how == "equals"
    candidates = [(len(m), name) for name, spec in data["targets"].items() for m in spec.get("matches", ())
                  if (value == str(m).lower() if exact else value.startswith(str(m).lower()))]
    if not candidates:
        return None
    name = max(candidates)[1]
    return _build(kind, name, f"{match['field']} {shown}")


def _positive(value: object) -> float | None:
    number = as_number(value)
    return number if number is not None and number > 0 else None


def _from_file(kind: ProfileKind, path: Path, fields: Mapping[str, object]) -> Hardware:
    spec = load_yaml_file(path)
    if not isinstance(spec, dict) or not isinstance(spec.get("values"), dict):
        raise AdvisorError(str(path), "a hardware file needs a `values:` mapping (see docs/hardware.md)")
    data = table(kind)
    base_name = spec.get("base")
    if base_name is not None and base_name not in data["targets"]:
        raise AdvisorError(str(path), f"unknown base '{base_name}'; known: {', '.join(target_names(kind))}")
    base = _build(kind, base_name, "") if base_name else for_profile(kind, fields)
    values = dict(base.values) if base else {}
    for key, value in spec["values"].items():
        if key not in data["units"]:
            raise AdvisorError(str(path), f"unknown hardware figure '{key}'; known: {', '.join(data['units'])}")
        number = _positive(value)
        if number is None:
            raise AdvisorError(str(path), f"'{key}' must be a positive number, not {value!r}")
        values[key] = number
    on = f" on top of {base.name}" if base else ""
    return Hardware(
        name=str(spec.get("name", path.stem)),
        description=str(spec.get("description", f"user hardware file {path.name}{on}")),
        values=values, units=data["units"], chosen_by=f"file {path}{on}",
        references=(f"user file {path}",) + (base.references if base else ()),
        notes=base.notes if base else (),
    )


def _reported(kind: ProfileKind, metadata: Mapping[str, Any]) -> dict[str, float]:
    """Figures a trace's metadata states about its machine, by the table's `reported:` formulas."""
    spec = table(kind).get("reported") or {}
    env = {name: next((v for field in fields if (v := _positive(metadata.get(field))) is not None), None)
           for name, fields in (spec.get("fields") or {}).items()}
    out = {}
    for figure, formula in (spec.get("figures") or {}).items():
        value = compile_expression(str(formula), set(env)).evaluate(env)
        if value is not None and not isinstance(value, bool):
            out[figure] = float(value)
    return out


def _with_reported(kind: ProfileKind, base: Hardware | None, metadata: Mapping[str, Any]) -> Hardware | None:
    reported = _reported(kind, metadata)
    if not reported:
        return base
    data = table(kind)
    units, spec = data["units"], data.get("reported") or {}
    shown = ", ".join(f"{k} {fmt.value(v, units[k])}" for k, v in sorted(reported.items()))
    if base is None:
        return Hardware(name="profile", description="figures the profile's metadata reports", values=reported,
                        units=units, chosen_by=f"the profile's metadata ({shown})",
                        references=("the profile's metadata",))
    notes = []
    for figure, check in (spec.get("plausible") or {}).items():
        value, known = reported.get(figure), base.values.get(figure)
        low, high = check["ratio"]
        if value is not None and known and not low <= value / known <= high:
            notes.append(f"The profile's metadata reports {figure} {value:.6g} {units[figure]}, far from the "
                         f"{known:.6g} of the {base.name} table ({check['note']}): the table's figure is kept.")
            del reported[figure]
    for figure, others in (spec.get("scales") or {}).items():
        peak, known = reported.get(figure), base.values.get(figure)
        if peak is not None and known:
            reported.update({k: base.values[k] * peak / known for k in others if k in base.values})
    notes += [f"The profile's metadata reports {k} {v:.6g} {units[k]}; the {base.name} table says "
              f"{base.values[k]:.6g}: the profile's figure is used." for k, v in sorted(reported.items())
              if k in base.values and abs(v - base.values[k]) > 0.01 * base.values[k]]
    if not reported:
        return replace(base, notes=base.notes + tuple(notes))
    return replace(base, values={**base.values, **reported}, notes=base.notes + tuple(notes),
                   chosen_by=f"{base.chosen_by}, with {', '.join(sorted(reported))} from the profile's metadata",
                   references=(*base.references, "the profile's metadata"))


def resolve(kind: ProfileKind, fields: Mapping[str, object], override: str | None,
            metadata: Mapping[str, Any] | None = None) -> Hardware | None:
    """The hardware to use: `--hardware NAME|FILE` when given, else the target the profile's fields (text
    and numbers) name, with
    the figures a trace's metadata reports about its machine taking precedence."""
    if override is None:
        return _with_reported(kind, for_profile(kind, fields), metadata or {})
    if override in table(kind)["targets"]:
        return _build(kind, override, f"--hardware {override}")
    path = Path(override)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        return _from_file(kind, path, fields)
    raise AdvisorError("--hardware", f"'{override}' is neither a known {kind.title} target "
                                     f"({', '.join(target_names(kind))}) nor a YAML file")
