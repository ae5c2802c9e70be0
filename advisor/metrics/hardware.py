"""Hardware peaks: a data table keyed by target, chosen from the profile or by the user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.model import Hardware
from advisor.core.numbers import as_number
from advisor.core.resources import load_yaml_resource
from advisor.core.yamlsafe import load_yaml_file

REFERENCE = "AWS Neuron documentation, as collected in shared/reference/neuron-profiler.md §5"


def _table() -> dict[str, Any]:
    return load_yaml_resource("kinds/neuron/data/hardware.yaml", allow_aliases=True)


def target_names() -> list[str]:
    return sorted(_table()["targets"])


def _build(name: str, spec: dict[str, Any], units: dict[str, str], chosen_by: str) -> Hardware:
    return Hardware(
        name=name,
        description=spec.get("description", name),
        values={k: float(v) for k, v in spec["values"].items()},
        units=units,
        chosen_by=chosen_by,
        references=(REFERENCE,),
        notes=tuple(spec.get("notes", ())),
    )


def for_instance_type(instance_type: str | None) -> Hardware | None:
    """The table entry whose instance prefix matches, longest prefix first (trn1n. before trn1.)."""
    if not instance_type:
        return None
    table = _table()
    candidates = [
        (len(prefix), name)
        for name, spec in table["targets"].items()
        for prefix in spec.get("instance_prefixes", ())
        if instance_type.lower().startswith(prefix)
    ]
    if not candidates:
        return None
    name = max(candidates)[1]
    return _build(name, table["targets"][name], table["units"], f"instance_type {instance_type}")


def _positive(value: object) -> float | None:
    number = as_number(value)
    return number if number is not None and number > 0 else None


def _from_file(path: Path, instance_type: str | None) -> Hardware:
    spec = load_yaml_file(path)
    if not isinstance(spec, dict) or not isinstance(spec.get("values"), dict):
        raise AdvisorError(str(path), "a hardware file needs a `values:` mapping (see docs/hardware.md)")
    table = _table()
    base_name = spec.get("base")
    if base_name is not None and base_name not in table["targets"]:
        raise AdvisorError(str(path), f"unknown base '{base_name}'; known: {', '.join(target_names())}")
    base = (
        _build(base_name, table["targets"][base_name], table["units"], "")
        if base_name
        else for_instance_type(instance_type)
    )
    values = dict(base.values) if base else {}
    for key, value in spec["values"].items():
        if key not in table["units"]:
            raise AdvisorError(str(path), f"unknown hardware figure '{key}'; known: {', '.join(table['units'])}")
        number = _positive(value)
        if number is None:
            raise AdvisorError(str(path), f"'{key}' must be a positive number, not {value!r}")
        values[key] = number
    on = f" on top of {base.name}" if base else ""
    return Hardware(
        name=str(spec.get("name", path.stem)),
        description=str(spec.get("description", f"user hardware file {path.name}{on}")),
        values=values,
        units=table["units"],
        chosen_by=f"file {path}{on}",
        references=(f"user file {path}",) + (base.references if base else ()),
        notes=base.notes if base else (),
    )


def _reported(metadata: Mapping[str, Any]) -> dict[str, float]:
    """Figures a trace's metadata states about its machine, in the table's units."""
    fields = _table()["reported"]
    found = {key: next((v for name in names if (v := _positive(metadata.get(name))) is not None), None)
             for key, names in fields.items()}
    out = {}
    if found["hbm_bandwidth"] is not None:
        out["hbm_bandwidth"] = found["hbm_bandwidth"]
    if None not in (found["tensor_rows"], found["tensor_cols"], found["tensor_clock_ghz"]):
        out["tensor_clock_hz"] = found["tensor_clock_ghz"] * 1e9
        out["tensor_peak_flops_bf16"] = 2 * found["tensor_rows"] * found["tensor_cols"] * out["tensor_clock_hz"]
    return out


def _with_reported(base: Hardware | None, metadata: Mapping[str, Any]) -> Hardware | None:
    reported = _reported(metadata)
    if not reported:
        return base
    units = _table()["units"]
    shown = ", ".join(f"{k} {v:.6g} {units[k]}" for k, v in sorted(reported.items()))
    if base is None:
        return Hardware(name="profile", description="figures the profile's metadata reports", values=reported,
                        units=units, chosen_by=f"the profile's metadata ({shown})",
                        references=("the profile's metadata",))
    notes = []
    hbm = reported.get("hbm_bandwidth")
    table_hbm = base.values.get("hbm_bandwidth")
    if hbm is not None and table_hbm and not 0.5 <= hbm / table_hbm <= 2:
        # the profiler's formulas use one HBM stack; a figure this far off is likely the whole chip's
        notes.append(f"The profile's metadata reports hbm_ddr_bandwidth {hbm:.6g} bytes/s, far from the one-stack "
                     f"{table_hbm:.6g} the profiler's formulas use on {base.name}: the table's figure is kept.")
        del reported["hbm_bandwidth"]
    peak, table_peak = reported.get("tensor_peak_flops_bf16"), base.values.get("tensor_peak_flops_bf16")
    if peak is not None and table_peak:  # another clock: the FP8 and FP32 peaks scale with it
        reported.update({k: base.values[k] * peak / table_peak for k in ("tensor_peak_flops_fp8",
                                                                         "tensor_peak_flops_fp32") if k in base.values})
    notes += [f"The profile's metadata reports {k} {v:.6g} {units[k]}; the {base.name} table says "
              f"{base.values[k]:.6g}: the profile's figure is used." for k, v in sorted(reported.items())
              if k in base.values and abs(v - base.values[k]) > 0.01 * base.values[k]]
    if not reported:
        return replace(base, notes=base.notes + tuple(notes))
    return replace(base, values={**base.values, **reported}, notes=base.notes + tuple(notes),
                   chosen_by=f"{base.chosen_by}, with {', '.join(sorted(reported))} from the profile's metadata",
                   references=(*base.references, "the profile's metadata"))


def resolve(instance_type: str | None, override: str | None,
            metadata: Mapping[str, Any] | None = None) -> Hardware | None:
    """The hardware to use: `--hardware NAME|FILE` when given, else the profile's instance type with
    the figures a trace's metadata reports about its machine taking precedence."""
    if override is None:
        return _with_reported(for_instance_type(instance_type), metadata or {})
    table = _table()
    if override in table["targets"]:
        return _build(override, table["targets"][override], table["units"], f"--hardware {override}")
    path = Path(override)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        return _from_file(path, instance_type)
    raise AdvisorError(
        "--hardware", f"'{override}' is neither a known target ({', '.join(target_names())}) nor a YAML file"
    )
