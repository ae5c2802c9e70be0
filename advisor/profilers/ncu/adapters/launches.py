"""One kernel launch as every Nsight Compute export states it (rows of section/label/unit/value and
the rule results), and its conversion to a Profile with canonical names and machine units.

Every reader (details CSV, raw CSV, text output, .ncu-rep) produces `Launch`es; only this module
knows how they become profiles, so the four formats give the same numbers for the same launch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from advisor.core.model import Profile, SourceInfo, VendorFinding
from advisor.core.numbers import number_or_reason
from advisor.kinds.conventions import conventions, has_profile_metrics, normalise
from advisor.profilers.ncu import KIND
from advisor.profilers.ncu.verdicts import estimate_inputs

METRICS_SECTION = "Command line profiler metrics"  # --metrics rows: the name is the metric's own
RULE_TYPES = ("OPT", "INF", "WRN", "ERR")
_DIMS = re.compile(r"^\(\s*(\d{1,12})\s*,\s*(\d{1,12})\s*,\s*(\d{1,12})\s*\)$")  # longer is no launch size
_IDENTIFIER = re.compile(r"[A-Za-z_~][A-Za-z0-9_]*")
INPUT_PATTERNS = {"ncu launch dims": (_DIMS, ("( ", "1", " , ", "1" * 13)),
                  "ncu identifier": (_IDENTIFIER, ("a", "~", "_1"))}
_UNAVAILABLE = {"n/a", "nan", "(!) nan", "-nan", "inf", "-inf", ""}


@dataclass(frozen=True)
class Row:
    """One value as the export printed it."""

    section: str  # the section's display name; "" or METRICS_SECTION when `name` is a metric name
    name: str  # the display label, or the metric name
    unit: str  # as printed ("Mhz", "Kbyte/block", "%", "")
    value: str  # as printed ("13,485", "n/a", "CachePreferNone")

    @property
    def key(self) -> str:
        """The vendor name the conventions map: "<section>: <label>", or the bare metric name."""
        return self.name if self.section in ("", METRICS_SECTION) else f"{self.section}: {self.name}"


@dataclass
class Launch:
    """One profiled kernel launch: identity, values and the profiler's own rule results."""

    id: str  # the launch ordinal (`ID` column, or the position in the file)
    kernel: str  # the kernel's signature or name as printed
    identity: dict[str, str] = field(default_factory=dict)  # device, compute_capability, block_dims, …
    rows: list[Row] = field(default_factory=list)
    rules: list[VendorFinding] = field(default_factory=list)


def function_name(signature: str) -> str:
    """`fused` from `void fused<float, 256>(const T1 *, …)`; `kernel` from
    `enable_if<!T7, void>::type kernel<int, …>(T13)`: the last identifier before the template
    arguments and parameter list of the outermost call."""
    signature = signature.replace("(anonymous namespace)", "anonymous_namespace")  # not a parameter list
    depth, end = 0, len(signature)
    for i, char in enumerate(signature):  # the parameter list: the first "(" outside template brackets
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(0, depth - 1)
        elif char == "(" and depth == 0:
            end = i
            break
    head = signature[:end].rstrip()
    while head.endswith(">"):  # drop the template arguments of the function itself
        depth, i = 0, len(head) - 1
        for i in range(len(head) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(head[i], 0)
            if depth == 0:
                break
        head = head[:i].rstrip()
    names = _IDENTIFIER.findall(head.split("::")[-1])
    return names[-1] if names else signature.strip()[:60]


def entry_name(launch: Launch) -> str:
    """`<ID> <function>`, the name `--kernel`/`--entry` and the overview use."""
    return f"{launch.id} {function_name(launch.kernel)}"


def _dims(text: str) -> tuple[int, int, int] | None:
    found = _DIMS.match(text.strip())
    return tuple(int(g) for g in found.groups()) if found else None  # type: ignore[return-value]


def _raw(launch: Launch) -> tuple[dict[str, object], dict[str, str]]:
    """Vendor-named values and printed units; "n/a" and NaN become None (unavailable, never 0).
    Display rows first, metric-name rows after, so the metric name wins where both map to one name."""
    values: dict[str, object] = {}
    units: dict[str, str] = {}
    ordered = sorted(launch.rows, key=lambda r: r.section in ("", METRICS_SECTION))
    for row in ordered:
        text = row.value.strip()
        values[row.key] = None if text.lower() in _UNAVAILABLE else text
        if row.unit:
            units[row.key] = row.unit
    return values, units


def to_profile(launch: Launch, path: str, fmt: str, shape: str, entries: Sequence[str]) -> Profile | None:
    """The launch as a profile, or None when not one value in it is a usable number."""
    conv = conventions(KIND)
    raw, units = _raw(launch)
    fields = normalise(raw, conv, units)
    if not has_profile_metrics({k: v for k, v in fields.values.items() if v is not None}, conv):
        return None  # nothing measured (every value n/a or nan): the launch shape alone is not a profile
    values, info, notes = dict(fields.values), dict(fields.info), list(fields.notes)
    values_units = dict(fields.units)
    info.update({k: v for k, v in launch.identity.items() if v})
    info["kernel_name"] = launch.kernel
    info["kernel_function"] = function_name(launch.kernel)
    info["launch_id"] = launch.id
    pattern = KIND.data("kernels.yaml").get("matmul_name_pattern")
    if pattern:  # the name is the only evidence of a matmul-shaped kernel an export carries
        values["matmul_shaped_kernel"] = float(bool(re.search(str(pattern), launch.kernel, re.IGNORECASE)))
        values_units["matmul_shaped_kernel"] = ""
    for dims_field, count_field in (("block_dims", "block_size"), ("grid_dims", "grid_size")):
        dims = _dims(info.get(dims_field, ""))
        if dims and values.get(count_field) is None:  # the CSV's "(x, y, z)" columns say it when no row does
            values[count_field] = float(dims[0] * dims[1] * dims[2])
            values_units[count_field] = "threads" if count_field == "block_size" else "blocks"
    for name, value, unit, note in _from_rule_messages(launch.rules, values):
        values[name], values_units[name] = value, unit
        notes.append(note)
    busiest = _busiest_pipe(values)
    if busiest:
        info["busiest_pipe"] = busiest
    for name, speedup in estimate_inputs(launch.rules).items():  # ncu's own estimates cap advisor's (issue 36)
        values[name] = speedup
        values_units[name] = "fraction"
    many = len(entries) > 1
    source = SourceInfo(path=path, format=fmt, shape=shape, entry=entry_name(launch) if many else None,
                        entries=tuple(entries) if many else ())
    return Profile(source=source, values=values, info=info, notes=tuple(notes), units=values_units,
                   raw_names=fields.raw_names, vendor_findings=tuple(launch.rules), kind=KIND.name)


def _from_rule_messages(rules: Sequence[VendorFinding],
                        values: dict[str, float | None]) -> list[tuple[str, float, str, str]]:
    """Figures ncu printed only in its rule results (data/kernels.yaml `from_rule_messages`), for fields the export
    has no value of: (field, value, unit, the note that says where it came from)."""
    found = []
    for entry in KIND.data("kernels.yaml").get("from_rule_messages") or ():
        field_name = str(entry["field"])
        if values.get(field_name) is not None:
            continue
        pattern = re.compile(str(entry["pattern"]))
        for vendor in rules:
            match = pattern.search(vendor.message) if vendor.rule == entry["rule"] else None
            if match:
                value = float(match.group(1))
                found.append((field_name, value, str(entry["unit"]), f"{field_name} {value:g} is read from Nsight "
                              f"Compute's {vendor.rule} result (the export has no metric for it)."))
                break
    return found


def _busiest_pipe(values: dict[str, float | None]) -> str:
    """The name of the busiest pipe data/kernels.yaml lists, or "" when the profile has none of their figures."""
    pipes = KIND.data("kernels.yaml").get("busiest_pipe") or {}
    known = [(value, str(name)) for field_name, name in pipes.items()
             if isinstance(value := values.get(field_name), float) and value > 0]
    return max(known)[1] if known else ""


def vendor_finding(rule: str, section: str, rule_type: str, message: str, speedup_type: str = "",
                   speedup: str | float | None = None, title: str = "") -> VendorFinding:
    """An ncu rule result with its speedup as a fraction (ncu prints percent)."""
    parsed = number_or_reason(str(speedup).rstrip("%")) if speedup not in (None, "") else None
    number = parsed / 100 if isinstance(parsed, float) else None
    scope = speedup_type.strip().lower() if number is not None else ""
    return VendorFinding(rule=rule, section=section, type=rule_type.strip().upper(), message=" ".join(message.split()),
                         title=title, speedup=number, speedup_scope=scope)
