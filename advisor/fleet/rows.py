"""An analysis as the store's rows: one profile row (identity, headline metrics, the largest recoverable
time) and one row per fired finding. Built where the profile was analysed, so the client only writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.core.model import SEVERITIES, Analysis
from advisor.kinds import get as get_kind


@dataclass(frozen=True)
class Item:
    """One profile of a task, as the client found it."""

    path: Path
    hash: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Outcome:
    """What a task returns per profile: its row, its findings' rows and the units of its metric columns."""

    row: dict[str, Any]
    findings: tuple[dict[str, Any], ...] = ()
    units: dict[str, str] = field(default_factory=dict)


def fleet_spec(kind: str) -> dict[str, Any]:
    """The kind's `fleet:` section of report.yaml: identity fields and headline metrics."""
    return get_kind(kind).data("report.yaml").get("fleet") or {}


def headline_metrics(kinds: list[str]) -> list[str]:
    """Every kind's headline metric columns, in kind order, each once."""
    names: list[str] = []
    for kind in kinds:
        names += [m for m in fleet_spec(kind).get("metrics", ()) if m not in names]
    return names


def _first(info: dict[str, str], fields: list[str]) -> str | None:
    return next((info[f] for f in fields if info.get(f)), None)


def path_name(path: Path, generic_stems: frozenset[str]) -> str:
    """A name from the path: the stem, or the folder's name when the stem says nothing (summary.json)."""
    if path.is_dir() or path.stem.lower() not in generic_stems or not path.parent.name:
        return path.name if path.is_dir() else path.stem
    return path.parent.name


def _base(item: Item, label: str | None) -> dict[str, Any]:
    return {"hash": item.hash, "path": str(item.path), "size": item.size, "mtime_ns": item.mtime_ns, "label": label}


def error_outcome(item: Item, message: str, label: str | None, name: str) -> Outcome:
    return Outcome({**_base(item, label), "status": "error", "error": message, "name": name, "findings": 0,
                    "root_causes": ""})


def outcome(analysis: Analysis, item: Item, label: str | None, generic_stems: frozenset[str]) -> Outcome:
    spec = fleet_spec(analysis.kind)
    info = dict(analysis.info)
    total = analysis.value("total_time")
    scoped = [f for f in analysis.findings if f.global_speedup is not None]
    scoped = [f for f in scoped if f.root_cause] or scoped  # a root cause's gain includes its symptoms' time
    best = max(scoped, key=lambda f: (f.estimated_speedup or 0.0, f.name), default=None)
    gain = best.estimated_speedup if best else None
    severities = [SEVERITIES.index(f.severity) for f in analysis.findings if f.severity in SEVERITIES]
    name = _first(info, spec.get("name", [])) or path_name(item.path, generic_stems)
    row = {
        **_base(item, label), "kind": analysis.kind, "status": "ok", "name": name,
        "device": _first(info, spec.get("device", [])), "profiler_version": _first(info, spec.get("profiler_version",
                                                                                                   [])),
        "captured": _first(info, spec.get("captured", [])), "total_time": total, "gain": gain,
        "gain_finding": best.name if best else None,
        "recoverable_time": gain * total if gain is not None and total is not None else None,
        "findings": len(analysis.findings),
        "root_causes": ",".join(f.name for f in analysis.findings if f.root_cause),
        "top_severity": SEVERITIES[max(severities)] if severities else None,
        **{m: analysis.value(m) for m in spec.get("metrics", ())},
    }
    units = {m: analysis.metrics[m].unit for m in spec.get("metrics", ()) if m in analysis.metrics}
    findings = tuple({
        "hash": item.hash, "path": str(item.path), "name": name, "kind": analysis.kind, "label": label,
        "rule": f.name, "rule_id": f.id, "severity": f.severity, "title": f.title, "root_cause": f.root_cause,
        "gain": f.estimated_speedup, "scope": f.speedup_scope, "total_time": total,
        "recoverable_time": (f.estimated_speedup * total if f.speedup_scope == "global" and total is not None
                             and f.estimated_speedup is not None else None),
    } for f in analysis.findings)
    return Outcome(row, findings, units)
