"""The analysis JSON (docs/analysis-json.md): written by `report -o x.json`, read back by `report`
(re-rendering) and `compare`. An analysis written before kinds existed reads as a Neuron one."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from sys import float_info
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import msgspec

from advisor.core.comparison import Comparison, Series, Side
from advisor.core.errors import AdvisorError
from advisor.core.model import (
    READ_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
    SEVERITIES,
    Amdahl,
    Analysis,
    AnalysisSettings,
    CrossCheck,
    Evidence,
    Expectation,
    Finding,
    Hardware,
    HiddenFinding,
    Hypothesis,
    Investigation,
    Metric,
    NotApplicable,
    OverviewColumn,
    ProfileOverview,
    RuleOutcome,
    SourceInfo,
    VendorFinding,
)
from advisor.core.trace import Breakdown, BreakdownColumn, EngineBusy, Gap, Hotspot, TensorLoad, TraceSummary

SOURCE_FIELDS = ("profiler_version", "compiler_version", "runtime_version", "instance_type")
LEGACY_KIND = "neuron"  # the only kind there was before analyses named theirs


def to_dict(analysis: Analysis) -> dict[str, Any]:
    source = asdict(analysis.source)
    source["entries"] = list(analysis.source.entries)
    for key in SOURCE_FIELDS:
        source[key] = analysis.info.get(key)
    source["info"] = dict(sorted(analysis.info.items()))
    hardware = None
    if analysis.hardware:
        hw = analysis.hardware
        hardware = {
            "name": hw.name, "description": hw.description, "chosen_by": hw.chosen_by,
            "values": {k: {"value": v, "unit": hw.units.get(k, "")} for k, v in sorted(hw.values.items())},
            "references": list(hw.references), "notes": list(hw.notes),
        }
    return {
        "schema_version": analysis.schema_version,
        "advisor_version": analysis.advisor_version,
        "kind": analysis.kind,
        "source": source,
        "hardware": hardware,
        "packs": dict(analysis.packs),
        "metrics": {name: _metric(m) for name, m in analysis.metrics.items()},
        "findings": [_finding(f) for f in analysis.findings],
        "not_applicable": [{"name": n.name, "title": n.title, "missing": list(n.missing)}
                           for n in analysis.not_applicable],
        "outcomes": [asdict(o) for o in analysis.outcomes],
        "notes": list(analysis.notes),
        "investigation": _investigation(analysis.investigation),
        "entries": [asdict(e) for e in analysis.entries],
        "trace": _trace(analysis.trace),
        "vendor_findings": [asdict(v) for v in analysis.vendor_findings],
        "settings": _settings(analysis.settings),
    }


def _settings(settings: AnalysisSettings | None) -> dict[str, Any] | None:
    if settings is None:
        return None
    return {"select": list(settings.select), "ignore": list(settings.ignore), "set": dict(settings.params),
            "hardware": settings.hardware, "config": settings.config,
            "hidden": [asdict(h) for h in settings.hidden]}


def _settings_from(data: dict[str, Any] | None) -> AnalysisSettings | None:
    if data is None:
        return None
    return AnalysisSettings(select=tuple(data.get("select", ())), ignore=tuple(data.get("ignore", ())),
                            params=dict(data.get("set", {})), hardware=data.get("hardware"),
                            config=data.get("config"),
                            hidden=tuple(HiddenFinding(**h) for h in data.get("hidden", ())))


def _trace(trace: TraceSummary | None) -> dict[str, Any] | None:
    if trace is None:
        return None
    out = asdict(trace)
    out["dma_size_edges"] = [e if e != float("inf") else None for e in trace.dma_size_edges]  # JSON has no inf
    return out


def _trace_from(data: dict[str, Any] | None) -> TraceSummary | None:
    if not data:
        return None
    if "engines" not in data:  # written before rows were grouped into engines: each row stands alone
        data = {**{k: v for k, v in data.items() if k != "engine_busy"}, "engines": [
            {"engine": "", "title": row, "rows": [row], "busy": busy, "compute": False}
            for row, busy in data.get("engine_busy", {}).items()]}
    return TraceSummary(**{
        **data, "engines": tuple(EngineBusy(**{**e, "rows": tuple(e["rows"])}) for e in data["engines"]),
        "hotspots_hlo": tuple(Hotspot(**h) for h in data["hotspots_hlo"]),
        "hotspots_nki": tuple(Hotspot(**h) for h in data["hotspots_nki"]),
        "dma_size_edges": tuple(float("inf") if e is None else e for e in data["dma_size_edges"]),
        "dma_size_counts": tuple(data["dma_size_counts"]), "timeline_edges": tuple(data["timeline_edges"]),
        "timeline": {k: tuple(v) for k, v in data["timeline"].items()},
        "gaps": tuple(Gap(**g) for g in data["gaps"]), "warnings": tuple(data["warnings"]),
        "tensor_loads": tuple(TensorLoad(**t) for t in data.get("tensor_loads", ())),
        "breakdowns": tuple(_breakdown_from(b) for b in data.get("breakdowns", ()))})


def _breakdown_from(data: dict[str, Any]) -> Breakdown:
    return Breakdown(**{**data, "columns": tuple(BreakdownColumn(**c) for c in data["columns"]),
                        "rows": tuple((key, tuple(values)) for key, values in data["rows"])})


def _investigation(inv: Investigation | None) -> dict[str, Any] | None:
    if inv is None:
        return None
    out = asdict(inv)
    out["hypotheses"] = [{**asdict(h), "evidence": {k: asdict(e) for k, e in h.evidence.items()}}
                         for h in inv.hypotheses]
    return out


def _investigation_from(data: dict[str, Any] | None) -> Investigation | None:
    if not data:
        return None
    workload = data.get("amdahl")
    return Investigation(
        title=data.get("title"), tracker=data.get("tracker"), date=data.get("date"), context=data.get("context"),
        amdahl=Amdahl(**{**workload, "changed": tuple(workload["changed"])}) if workload else None,
        expectations=tuple(Expectation(**e) for e in data.get("expectations", [])),
        hypotheses=tuple(Hypothesis(**{**h, "evidence": {k: Evidence(**e) for k, e in h["evidence"].items()}})
                         for h in data.get("hypotheses", [])),
    )


def _metric(m: Metric) -> dict[str, Any]:
    out: dict[str, Any] = {"value": m.value, "unit": m.unit, "source": m.source, "description": m.description}
    if m.formula:
        out["formula"] = m.formula
        out["inputs"] = list(m.inputs)
    if m.missing:
        out["missing"] = list(m.missing)
    if m.check:
        out["check"] = asdict(m.check)
    if m.note:
        out["note"] = m.note
    if m.better:
        out["better"] = m.better
    if m.raw_name:
        out["raw_name"] = m.raw_name
    return out


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "id": f.id, "name": f.name, "pack": f.pack, "severity": f.severity, "category": f.category,
        "title": f.title, "message": f.message, "root_cause": f.root_cause, "because": list(f.because),
        "evidence": {k: {"value": e.value, "unit": e.unit} for k, e in f.evidence.items()},
        "params": {k: {"value": p.value, "unit": p.unit} for k, p in f.params.items()},
        "estimated_speedup": f.estimated_speedup, "speedup_scope": f.speedup_scope,
        "recommendation": f.recommendation, "root_cause_text": f.root_cause_text,
        "condition": f.condition, "references": list(f.references), "explains": list(f.explains),
    }


def dumps(analysis: Analysis) -> str:
    return json.dumps(to_dict(analysis), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# ------------------------------------------------------------------------------------ reading back


# The schema a saved analysis is checked against before anything is built from it: a hand-edited or
# tampered file gets one line naming the field, never a half-rendered report. Unknown keys are ignored (a
# newer advisor may add some); every list and map is capped, so a file cannot ask for unbounded work.
_FINITE = float_info.max
Num = Annotated[float, msgspec.Meta(ge=-_FINITE, le=_FINITE)]  # finite: JSON has no NaN, and advisor writes none
Count = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
Fraction = Annotated[float, msgspec.Meta(ge=0, le=1)]
MAX_FINDINGS = 2_000  # one per rule at most: the built-in packs have under a hundred
MAX_METRICS = 20_000
MAX_ROWS = 100_000  # entries (ranks, kernels), rows of a table, timeline bins
MAX_ITEMS = 10_000  # any other list or map
DEFAULT_MAX_MEMORY = 2 << 30  # --max-memory's default (kinds.base's; core may not import kinds)
ANALYSIS_MEMORY_SHARE = 16  # a saved analysis may be at most this fraction of --max-memory (2GiB: 128 MiB)


def _list(item: Any, limit: int = MAX_ITEMS) -> Any:
    return Annotated[list[item], msgspec.Meta(max_length=limit)]


def _map(value: Any, limit: int = MAX_ITEMS) -> Any:
    return Annotated[dict[str, value], msgspec.Meta(max_length=limit)]


class _Doc(msgspec.Struct, omit_defaults=True):  # omitted defaults: `from_dict` fills them as it always has
    pass


class _Value(_Doc):
    value: Num | None
    unit: str


class _HardwareValue(_Doc):
    value: Num
    unit: str = ""


class _Hardware(_Doc):
    name: str
    values: _map(_HardwareValue)
    description: str = ""
    chosen_by: str = ""
    references: _list(str) | None = None
    notes: _list(str) | None = None


class _Source(_Doc):
    path: str
    format: str
    shape: str = ""
    entry: str | None = None
    entries: _list(str, MAX_ROWS) | None = None
    converted_with: str | None = None
    info: _map(str) = {}


class _Check(_Doc):
    derived_value: Num | None
    relative_difference: Num | None
    tolerance: Num
    agrees: bool | None


class _Metric(_Doc):
    value: Num | None
    unit: str = ""
    source: Literal["reported", "derived"] = "reported"
    description: str = ""
    formula: str | None = None
    inputs: _list(str) | None = None
    missing: _list(str) | None = None
    check: _Check | None = None
    note: str | None = None
    better: Literal["higher", "lower"] | None = None
    raw_name: str | None = None


class _Finding(_Doc):
    id: str
    name: str
    pack: str
    severity: Literal[SEVERITIES]  # type: ignore[valid-type]
    category: str
    title: str
    message: str
    root_cause: bool
    because: _list(str)
    evidence: _map(_Value)
    params: _map(_Value) = {}
    estimated_speedup: Fraction | None = None
    speedup_scope: Literal["global", "local"] = "global"
    recommendation: str = ""
    root_cause_text: str = ""
    condition: str = ""
    references: _list(str) | None = None
    explains: _list(str) | None = None


class _NotApplicable(_Doc):
    name: str
    missing: _list(str)
    title: str = ""


class _Outcome(_Doc):
    name: str
    outcome: Literal["fired", "passed", "not_applicable", "skipped"]
    detail: str = ""


class _Amdahl(_Doc):
    baseline: _map(Num)
    optimized: _map(Num)
    changed: _list(str)
    fraction: Num | None
    step_speedup: Num | None
    predicted: Num | None
    measured: Num | None
    ceiling: Num | None
    target: Num | None = None
    needed_step_speedup: Num | None = None
    target_reachable: bool | None = None
    unchanged_needed_speedup: Num | None = None
    kernel_share: Num | None = None


class _Expectation(_Doc):
    metric: str
    expr: str
    expected: Num | None
    actual: Num | None
    unit: str
    tolerance: Num
    relative_difference: Num | None
    verdict: Literal["matches", "differs", "unavailable"]


class _Hypothesis(_Doc):
    name: str
    expect: str
    verdict: Literal["supported", "falsified", "undecided"]
    evidence: _map(_Value)
    note: str = ""


class _Investigation(_Doc):
    title: str | None = None
    tracker: str | None = None
    date: str | None = None
    context: str | None = None
    amdahl: _Amdahl | None = None
    expectations: _list(_Expectation) = []
    hypotheses: _list(_Hypothesis) = []


class _Column(_Doc):
    title: str
    value: Num | None
    unit: str


class _Entry(_Doc):
    name: str
    total_time: Num | None = None
    where: str | None = None
    columns: _list(_Column) | None = None  # absent: schema 1's fixed Neuron columns below
    analysed: bool = False
    findings: _list(str) = []
    root_causes: _list(str) = []
    gain: Num | None = None
    gain_finding: str = ""
    core: str | None = None  # schema 1
    dma_active_time_percent: Num | None = None
    tensor_engine_active_time_percent: Num | None = None
    collective_time: Num | None = None


class _VendorFinding(_Doc):
    rule: str
    section: str
    type: str
    message: str
    title: str = ""
    speedup: Num | None = None
    speedup_scope: str = ""


class _Hotspot(_Doc):
    name: str
    time: Num
    share: Num
    count: Count


class _Gap(_Doc):
    start: Num
    duration: Num


class _Engine(_Doc):
    engine: str
    title: str
    rows: _list(str)
    busy: Num
    compute: bool


class _TensorLoad(_Doc):
    name: str
    kind: str
    size: Num
    loaded_bytes: Num
    loads: Count | None
    repeat: Num
    source: str


class _BreakdownColumn(_Doc):
    name: str
    title: str
    unit: str


class _Breakdown(_Doc):
    name: str
    title: str
    key_title: str
    columns: _list(_BreakdownColumn)
    rows: _list(tuple[str, _list(Num | None)], MAX_ROWS)
    note: str = ""
    total_rows: Count | None = None


class _Trace(_Doc):
    instructions: Count
    dma_transfers: Count
    span: Num
    busy_union: Num | None
    hotspots_hlo: _list(_Hotspot)
    hotspots_nki: _list(_Hotspot)
    dma_size_edges: _list(Num | None)
    dma_size_counts: _list(Count)
    timeline_edges: _list(Num, MAX_ROWS)
    timeline: _map(_list(Num, MAX_ROWS))
    gaps: _list(_Gap)
    warnings: _list(str)
    engines: _list(_Engine) | None = None  # absent: written before rows were grouped into engines
    engine_busy: _map(Num) | None = None
    dma_busy: Num | None = None
    compute_busy: Num | None = None
    dma_exposed: Num | None = None
    tensor_loads: _list(_TensorLoad) = []
    tensors_declared: Count = 0
    dma_unnamed_fraction: Num | None = None
    tensor_note: str | None = None
    skipped_instructions: Count = 0
    skipped_dma: Count = 0
    last_event_end: Num | None = None
    breakdowns: _list(_Breakdown) = []


class _Hidden(_Doc):
    name: str
    title: str
    reason: str


class _Settings(_Doc):
    select: _list(str) = []
    ignore: _list(str) = []
    set: _map(Num) = {}
    hardware: str | None = None
    config: str | None = None
    hidden: _list(_Hidden, MAX_FINDINGS) = []


class _AnalysisDoc(_Doc):
    schema_version: Literal[READ_SCHEMA_VERSIONS]  # type: ignore[valid-type]
    source: _Source
    metrics: _map(_Metric, MAX_METRICS)
    advisor_version: str = ""
    kind: str | None = None
    hardware: _Hardware | None = None
    packs: _map(str) = {}
    findings: _list(_Finding, MAX_FINDINGS) = []
    not_applicable: _list(_NotApplicable) = []
    outcomes: _list(_Outcome) = []
    notes: _list(str) = []
    investigation: _Investigation | None = None
    entries: _list(_Entry, MAX_ROWS) = []
    trace: _Trace | None = None
    vendor_findings: _list(_VendorFinding) = []
    settings: _Settings | None = None


class _Header(msgspec.Struct):
    schema_version: Any = msgspec.UNSET
    advisor_version: Any = msgspec.UNSET


def _unsupported(version: Any, where: str) -> AdvisorError:
    shown = repr(version)[:40]
    return AdvisorError(where, f"analysis schema_version {shown} is not supported "
                               f"(this advisor reads {', '.join(map(str, READ_SCHEMA_VERSIONS))})")


def from_dict(data: dict[str, Any], where: str) -> Analysis:
    """An analysis from its JSON object, checked against the schema first (one line naming the field)."""
    if not isinstance(data, dict) or data.get("schema_version") not in READ_SCHEMA_VERSIONS:
        raise _unsupported(data.get("schema_version") if isinstance(data, dict) else None, where)
    try:
        doc = msgspec.convert(data, _AnalysisDoc)
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, _field_problem(str(exc), data)) from None
    except RecursionError:
        raise AdvisorError(where, "nested too deeply for an advisor analysis JSON") from None
    return _build(msgspec.to_builtins(doc), where)


def _build(data: dict[str, Any], where: str) -> Analysis:
    """The analysis from its checked JSON object (every type already as the schema says)."""
    try:
        src = data["source"]
        source = SourceInfo(path=src["path"], format=src["format"], shape=src.get("shape", ""),
                            entry=src.get("entry"), entries=tuple(src.get("entries") or ()),
                            converted_with=src.get("converted_with"))
        hw = data.get("hardware")
        hardware = None
        if hw:
            hardware = Hardware(
                name=hw["name"], description=hw.get("description", ""),
                values={k: float(v["value"]) for k, v in hw["values"].items()},
                units={k: v.get("unit", "") for k, v in hw["values"].items()}, chosen_by=hw.get("chosen_by", ""),
                references=tuple(hw.get("references") or ()), notes=tuple(hw.get("notes") or ()),
            )
        metrics = {name: Metric(
            name=name, value=m["value"], unit=m.get("unit", ""), source=m.get("source", "reported"),
            description=m.get("description", ""), formula=m.get("formula"), inputs=tuple(m.get("inputs") or ()),
            missing=tuple(m.get("missing") or ()), check=CrossCheck(**m["check"]) if m.get("check") else None,
            note=m.get("note"), better=m.get("better"), raw_name=m.get("raw_name"),
        ) for name, m in data["metrics"].items()}
        findings = tuple(Finding(
            id=f["id"], name=f["name"], pack=f["pack"], severity=f["severity"], category=f["category"],
            title=f["title"], message=f["message"], root_cause=f["root_cause"], because=tuple(f["because"]),
            evidence={k: Evidence(value=e["value"], unit=e["unit"]) for k, e in f["evidence"].items()},
            params={k: Evidence(value=p["value"], unit=p["unit"]) for k, p in f.get("params", {}).items()},
            estimated_speedup=f.get("estimated_speedup"),
            recommendation=f.get("recommendation", ""), root_cause_text=f.get("root_cause_text", ""),
            condition=f.get("condition", ""), references=tuple(f.get("references") or ()),
            explains=tuple(f.get("explains") or ()), speedup_scope=f.get("speedup_scope", "global"),
        ) for f in data.get("findings", []))
        return Analysis(
            advisor_version=data.get("advisor_version", ""), source=source, info=src.get("info", {}),
            hardware=hardware, metrics=metrics, findings=findings,
            not_applicable=tuple(NotApplicable(name=n["name"], missing=tuple(n["missing"]), title=n.get("title", ""))
                                 for n in data.get("not_applicable", [])),
            outcomes=tuple(RuleOutcome(**o) for o in data.get("outcomes", [])),
            packs=data.get("packs", {}), notes=tuple(data.get("notes", [])),
            investigation=_investigation_from(data.get("investigation")),
            entries=tuple(_overview_from(e) for e in data.get("entries", [])),
            trace=_trace_from(data.get("trace")),
            vendor_findings=tuple(VendorFinding(**v) for v in data.get("vendor_findings", [])),
            settings=_settings_from(data.get("settings")),
            kind=str(data.get("kind") or LEGACY_KIND),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # the schema should have said: a bug
        raise AdvisorError(where, f"not a valid advisor analysis JSON ({type(exc).__name__}: {exc})") from None


# msgspec's "Expected `X`, got `Y` - at `$.findings[3].severity`" as "findings[3].severity: expected …, got 5"
_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.(\w+)|\[(\d+)\]|\[\.\.\.\]")
_WORDS = {"float": "a number", "int": "an integer", "str": "text", "bool": "true or false", "null": "null",
          "object": "an object", "array": "a list"}


def _field_problem(message: str, data: Any) -> str:
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
    tp: Any = _AnalysisDoc
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
            label += f".{key}" if isinstance(key, str) and key.isidentifier() else f"[{json.dumps(key)[:60]}]"
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


_LEGACY_ENTRY_KEYS = ("core", "dma_active_time_percent", "tensor_engine_active_time_percent", "collective_time")


def _overview_from(data: dict[str, Any]) -> ProfileOverview:
    if "columns" not in data:  # written before kinds: Neuron's fixed overview columns
        columns = [{"title": "DMA active", "value": data.get("dma_active_time_percent"), "unit": "fraction"},
                   {"title": "Tensor Engine active", "value": data.get("tensor_engine_active_time_percent"),
                    "unit": "fraction"},
                   {"title": "Collective time", "value": data.get("collective_time"), "unit": "s"}]
        data = {"name": data["name"], "total_time": data.get("total_time"), "where": data.get("core"),
                "columns": columns, **{k: data[k] for k in ("analysed", "findings", "root_causes") if k in data}}
    data = {"total_time": None, "where": None, **{k: v for k, v in data.items() if k not in _LEGACY_ENTRY_KEYS}}
    return ProfileOverview(**{**data, "columns": tuple(OverviewColumn(**c) for c in data.get("columns", ())),
                              "findings": tuple(data.get("findings", ())),
                              "root_causes": tuple(data.get("root_causes", ()))})


def with_current_rule_names(analysis: Analysis, canonical: Callable[[str], str | None]) -> Analysis:
    """A saved analysis with its findings under today's rule names (a renamed rule keeps its old name
    as an alias), so a baseline saved before a rename still matches in compare."""
    def current(name: str) -> str:
        return canonical(name) or name

    findings = tuple(replace(f, name=current(f.name), because=tuple(map(current, f.because)),
                             explains=tuple(map(current, f.explains))) for f in analysis.findings)
    entries = tuple(replace(e, findings=tuple(map(current, e.findings)),
                            root_causes=tuple(map(current, e.root_causes))) for e in analysis.entries)
    return replace(analysis, findings=findings, entries=entries)


def is_analysis(data: Any) -> bool:
    return isinstance(data, dict) and "schema_version" in data and "advisor_version" in data


def analysis_size_limit(max_memory: int = DEFAULT_MAX_MEMORY) -> int:
    """The largest saved analysis read under `--max-memory`: reading one costs a few times its size."""
    return max(1, max_memory // ANALYSIS_MEMORY_SHARE)


def read_if_analysis(path: Path, max_memory: int = DEFAULT_MAX_MEMORY) -> Analysis | None:
    """The analysis in `path` when it is an advisor analysis JSON; None for anything else (a
    profile, or a file the profile adapters will explain the problem with). The file is checked
    against the schema, and its size against `--max-memory`, before anything is built from it."""
    if path.suffix.lower() != ".json":
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None  # a FIFO, a device or a folder: the readers refuse it with their own line
    with os.fdopen(fd, "rb") as handle:
        try:
            head = handle.read(4096)
            if b'"advisor_version"' not in head and b'"schema_version"' not in head:
                return None
            limit = analysis_size_limit(max_memory)
            if info.st_size > limit:
                raise AdvisorError(str(path), f"a saved analysis of {info.st_size / 2**20:.1f} MiB is more than the "
                                              f"{limit / 2**20:.0f} MiB limit (1/{ANALYSIS_MEMORY_SHARE} of "
                                              "--max-memory); raise --max-memory to read it")
            data = head + handle.read(limit + 1 - len(head))
        except OSError:
            return None
    if len(data) > limit:  # it grew while being read
        raise AdvisorError(str(path), f"a saved analysis larger than the {limit / 2**20:.0f} MiB limit "
                                      f"(1/{ANALYSIS_MEMORY_SHARE} of --max-memory); raise --max-memory to read it")
    return decode_analysis(data, str(path))


def decode_analysis(data: bytes, where: str) -> Analysis | None:
    """A saved analysis from its bytes, checked against the schema; None when they are not one."""
    try:
        header = msgspec.json.decode(data, type=_Header)
    except (msgspec.DecodeError, RecursionError):
        return None  # not JSON, or not an object: a profile adapter explains what it is
    if header.schema_version is msgspec.UNSET or header.advisor_version is msgspec.UNSET:
        return None
    if header.schema_version not in READ_SCHEMA_VERSIONS or isinstance(header.schema_version, bool):
        raise _unsupported(header.schema_version, where)
    try:
        doc = msgspec.json.decode(data, type=_AnalysisDoc)
    except msgspec.ValidationError as exc:
        message = str(exc)  # a count past its cap needs no second reading of a file that large
        raise AdvisorError(where, _field_problem(message, None if " of length <= " in message else _untyped(data))
                           ) from None
    except RecursionError:
        raise AdvisorError(where, "nested too deeply for an advisor analysis JSON") from None
    return _build(msgspec.to_builtins(doc), where)


def _untyped(data: bytes) -> Any:
    """The file as plain JSON values, to show the offending one in an error (None when that fails). Python's
    reader, which reads 1e400 as infinity where msgspec refuses it."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


# ------------------------------------------------------------------------------------- comparisons


def _comparison(c: Comparison) -> dict[str, Any]:
    def side(s: Side) -> dict[str, Any]:
        return {"label": s.label, "kind": s.kind, "source": {**asdict(s.source), "entries": list(s.source.entries),
                                             **{k: s.info.get(k) for k in SOURCE_FIELDS}},
                "hardware": s.hardware, "packs": dict(s.packs), "advisor_version": s.advisor_version}

    by_status = {s: [f.name for f in c.findings if f.status == s] for s in ("fixed", "new", "persisting")}
    return {
        "schema_version": SCHEMA_VERSION, "before": side(c.before), "after": side(c.after), "speedup": c.speedup,
        "noise": c.noise,
        "metrics": {n: {"before": m.before, "after": m.after, "change": m.change, "verdict": m.verdict,
                        "unit": m.unit, "group": m.group, "better": m.better} for n, m in c.metrics.items()},
        "findings": by_status,
        "root_cause": {"before": list(c.root_cause_before), "after": list(c.root_cause_after)},
        "warnings": list(c.warnings),
        "entries": [asdict(e) for e in c.entries],
        "breakdowns": [asdict(b) for b in c.breakdowns],
    }


def comparison_json(result: Comparison | Series) -> str:
    if isinstance(result, Series):
        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "attempts": [{"label": s.label, "source": s.source.path, "total_time": t}
                         for s, t in zip(result.sides, result.total_times, strict=True)],
            "steps": [_comparison(c) for c in result.steps], "overall": _comparison(result.overall),
        }
    else:
        data = _comparison(result)
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
