"""The analysis JSON (docs/analysis-json.md): written by `report -o x.json`, read back by `report`
(re-rendering) and `compare`. An analysis written before kinds existed reads as a Neuron one."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import msgspec

from advisor.core import saved_checks, units
from advisor.core.analysis_schema import (
    AnalysisDoc,
    Header,
)
from advisor.core.errors import AdvisorError
from advisor.core.model import (
    READ_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
    Amdahl,
    Analysis,
    AnalysisSettings,
    Bound,
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
from advisor.core.regular import open_regular, read_at_most, require_regular_file
from advisor.core.schema_errors import field_problem, non_finite_problem
from advisor.core.trace_json import trace_from_dict, trace_to_dict

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
        "schema_version": SCHEMA_VERSION,  # a saved analysis read back is written in today's schema
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
        "trace": trace_to_dict(analysis.trace),
        "vendor_findings": [asdict(v) for v in analysis.vendor_findings],
        "settings": _settings(analysis.settings),
        "bounds": [_bound(b) for b in analysis.bounds],
    }


def _bound(b: Bound) -> dict[str, Any]:
    return {"name": b.name, "title": b.title, "value": b.value, "unit": "fraction", "formula": b.formula,
            "inputs": {k: {"value": e.value, "unit": e.unit} for k, e in b.inputs.items()},
            "description": b.description, "pack": b.pack}


def _bound_from(b: dict[str, Any]) -> Bound:
    return Bound(name=b["name"], title=b.get("title", ""), value=b.get("value"), formula=b.get("formula", ""),
                 inputs={k: Evidence(value=e["value"], unit=e["unit"]) for k, e in b.get("inputs", {}).items()},
                 description=b.get("description", ""), pack=b.get("pack", ""))


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
        "capped_by": list(f.capped_by), "bound": f.bound, "claims": f.claims, "catch_all": f.catch_all,
        "caps_only": f.caps_only,
    }


def dumps(analysis: Analysis, compact: bool = False) -> str:
    """The analysis JSON: indented for a reader, or compact for a fleet's store (json's C encoder does not
    indent: the indented form costs 1–3 ms a profile, a fifth of a summary profile's whole analysis)."""
    layout: dict[str, Any] = {"separators": (",", ":")} if compact else {"indent": 2}
    return json.dumps(to_dict(analysis), ensure_ascii=False, allow_nan=False, **layout) + "\n"


# ------------------------------------------------------------------------------------ reading back


def _unsupported(version: Any, where: str) -> AdvisorError:
    shown = repr(version)[:40]
    return AdvisorError(where, f"analysis schema_version {shown} is not supported "
                               f"(this advisor reads {', '.join(map(str, READ_SCHEMA_VERSIONS))})")


def from_dict(data: dict[str, Any], where: str) -> Analysis:
    """An analysis from its JSON object, checked against the schema first (one line naming the field)."""
    if not isinstance(data, dict) or data.get("schema_version") not in READ_SCHEMA_VERSIONS:
        raise _unsupported(data.get("schema_version") if isinstance(data, dict) else None, where)
    try:
        doc = msgspec.convert(data, AnalysisDoc)
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, field_problem(str(exc), data)) from None
    except RecursionError:
        raise AdvisorError(where, "nested too deeply for an advisor analysis JSON") from None
    return _build(msgspec.to_builtins(doc), where)


def _build(data: dict[str, Any], where: str) -> Analysis:
    """The analysis from its checked JSON object (every type already as the schema says)."""
    try:
        kind = str(data.get("kind") or LEGACY_KIND)
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
            capped_by=tuple(f.get("capped_by") or ()), bound=f.get("bound", ""), claims=f.get("claims", ""),
            catch_all=bool(f.get("catch_all", False)), caps_only=bool(f.get("caps_only", False)),
        ) for f in data.get("findings", []))
        analysis = Analysis(
            advisor_version=data.get("advisor_version", ""), source=source, info=src.get("info", {}),
            hardware=hardware, metrics=metrics, findings=findings,
            not_applicable=tuple(NotApplicable(name=n["name"], missing=tuple(n["missing"]), title=n.get("title", ""))
                                 for n in data.get("not_applicable", [])),
            outcomes=tuple(RuleOutcome(**o) for o in data.get("outcomes", [])),
            packs=data.get("packs", {}), notes=tuple(data.get("notes", [])),
            investigation=_investigation_from(data.get("investigation")),
            entries=tuple(_overview_from(e) for e in data.get("entries", [])),
            trace=trace_from_dict(data.get("trace"), data["schema_version"], kind),
            vendor_findings=tuple(VendorFinding(**v) for v in data.get("vendor_findings", [])),
            settings=_settings_from(data.get("settings")),
            bounds=tuple(_bound_from(b) for b in data.get("bounds", [])),
            kind=kind,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # the schema should have said: a bug
        raise AdvisorError(where, f"not a valid advisor analysis JSON ({type(exc).__name__}: {exc})") from None
    saved_checks.check(analysis, where)  # its figures agree with each other, as advisor writes them
    return analysis


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
    """A saved analysis with every rule it names under today's names (a renamed rule keeps its old name
    as an alias), so a baseline saved before a rename still matches in compare and re-renders with the
    same verdicts. `canonical` resolves names of the analysis's own kind: saved findings hold bare names,
    and the analysis's `kind` says whose they are (`ncu/memory-bound`)."""
    def current(name: str) -> str:
        return canonical(name) or name

    def bound(text: str) -> str:  # a bound's name, or the causes that capped a symptom, comma-joined
        return ",".join(map(current, text.split(","))) if text else text

    findings = tuple(replace(f, name=current(f.name), because=tuple(map(current, f.because)),
                             explains=tuple(map(current, f.explains)), bound=bound(f.bound))
                     for f in analysis.findings)
    entries = tuple(replace(e, findings=tuple(map(current, e.findings)),
                            root_causes=tuple(map(current, e.root_causes))) for e in analysis.entries)
    outcomes = tuple(replace(o, name=current(o.name)) for o in analysis.outcomes)
    not_applicable = tuple(replace(n, name=current(n.name)) for n in analysis.not_applicable)
    settings = analysis.settings
    if settings is not None:
        settings = replace(settings, hidden=tuple(replace(h, name=current(h.name)) for h in settings.hidden))
    return replace(analysis, findings=findings, entries=entries, outcomes=outcomes, not_applicable=not_applicable,
                   settings=settings)


def is_analysis(data: Any) -> bool:
    return isinstance(data, dict) and "schema_version" in data and "advisor_version" in data


def read_if_analysis(path: Path, limit: int, limit_source: str) -> Analysis | None:
    """The analysis in `path` when it is an advisor analysis JSON; None for anything else (a
    profile, or a file the profile adapters will explain the problem with). The file is checked
    against the schema, and its size against `limit` (bytes; `limit_source` says where it comes from:
    inputs.limits.saved_analysis_limit), before anything is built from it."""
    if path.suffix.lower() != ".json":
        return None
    try:
        require_regular_file(path)
    except AdvisorError:
        return None  # missing, a FIFO, a device or a folder: the profile readers refuse it with their own line
    too_large = AdvisorError(str(path), f"a saved analysis larger than the {units.bytes_(limit)} limit "
                                        f"({limit_source}); raise --max-memory to read it")
    with open_regular(path, "an analysis JSON") as handle:  # checked again on the open handle
        head = handle.read(4096)
        if b'"advisor_version"' not in head and b'"schema_version"' not in head:
            return None
        if os.fstat(handle.fileno()).st_size > limit:
            raise too_large
        data = head + read_at_most(handle, max(limit - len(head), 0))  # never reserves the whole limit
    if len(data) > limit:  # it grew while being read
        raise too_large
    return decode_analysis(data, str(path))


def decode_analysis(data: bytes, where: str) -> Analysis | None:
    """A saved analysis from its bytes, checked against the schema; None when they are not one."""
    try:
        header = msgspec.json.decode(data, type=Header)
    except (msgspec.DecodeError, RecursionError) as exc:
        _refuse_if_analysis(data, where, exc)
        return None
    if header.schema_version is msgspec.UNSET or header.advisor_version is msgspec.UNSET:
        return None
    if header.schema_version not in READ_SCHEMA_VERSIONS or isinstance(header.schema_version, bool):
        raise _unsupported(header.schema_version, where)
    try:
        doc = msgspec.json.decode(data, type=AnalysisDoc)
    except msgspec.ValidationError as exc:
        message = str(exc)  # a count past its cap needs no second reading of a file that large
        raise AdvisorError(where, field_problem(message, None if " of length <= " in message else _untyped(data))
                           ) from None
    except RecursionError:
        raise AdvisorError(where, "nested too deeply for an advisor analysis JSON") from None
    return _build(msgspec.to_builtins(doc), where)


MARKERS = (b'"schema_version"', b'"advisor_version"')  # the fields every analysis advisor writes begins with


def _refuse_if_analysis(data: bytes, where: str, exc: Exception) -> None:
    """Bytes that are an analysis but not strict JSON are refused as an analysis, never read again as a profile
    ("no profile metrics in it"): a NaN or Infinity (Python's reader takes them, so the value is named), or broken
    JSON with both markers at its head. Other bytes pass: a profile adapter explains what they are."""
    untyped = _untyped(data)
    broken = "nested too deeply" if isinstance(exc, RecursionError) else f"not valid JSON ({exc})"
    if is_analysis(untyped):
        raise AdvisorError(where, non_finite_problem(untyped) or f"an advisor analysis JSON, but {broken}")
    if untyped is None and all(marker in data[:4096] for marker in MARKERS):
        raise AdvisorError(where, f"an advisor analysis JSON, but {broken}")


def _untyped(data: bytes) -> Any:
    """The file as plain JSON values, to show the offending one in an error (None when that fails). Python's
    reader, which reads 1e400 as infinity where msgspec refuses it."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None
