"""An analysis as the store's rows: one profile row (identity, headline metrics, its recoverable time with
each piece of time counted once, the key of its capture) and one row per fired finding (a root cause's part
of that time). Built where the profile was analysed, so the client only writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.core.model import SEVERITIES, Analysis, Finding
from advisor.engine.budget import bound_values, claimed_together
from advisor.fleet.capture import capture_key
from advisor.fleet.discover import run_settings
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


def _recoverable_share(analysis: Analysis) -> tuple[float | None, Finding | None]:
    """The profile's recoverable share, each piece of time once: what its report gives as "All findings
    together, each claim once" (root causes only), and the root cause with the largest estimate. A profile
    whose root causes name no share of time falls back to its largest global estimate (a finding no root
    cause explains), as its report's table shows it."""
    together = claimed_together(analysis.findings, bound_values(analysis.bounds))
    scoped = [f for f in analysis.findings if f.global_speedup is not None]
    roots = [f for f in scoped if f.root_cause]
    best = max(roots or scoped, key=lambda f: (f.estimated_speedup or 0.0, f.name), default=None)
    if together is None:
        return (best.estimated_speedup if best else None), best
    return together, best


def attributed(findings: Sequence[Finding], total: float | None) -> dict[str, float]:
    """Each root cause's part of the profile's recoverable share `total` (`_recoverable_share`), so the parts
    of one profile add up to it: in the engine's order (root causes first, by estimate), each claim goes to its
    first root cause, at the claim's largest estimate or what is left if less; a later root cause of a claim
    already attributed gets 0. Symptoms and root causes with no global estimate get nothing here."""
    if total is None:
        return {}
    roots = [f for f in findings if f.root_cause and f.global_speedup is not None]
    largest: dict[str, float] = {}
    for f in roots:
        largest[f.claim] = max(largest.get(f.claim, 0.0), f.global_speedup or 0.0)
    parts: dict[str, float] = {}
    left = total
    for f in roots:
        if f.claim not in largest:  # its claim went to an earlier root cause
            parts[f.name] = 0.0
            continue
        parts[f.name] = min(largest.pop(f.claim), left)
        left -= parts[f.name]
    return parts


def _finding_rows(analysis: Analysis, base: dict[str, Any], share: float | None,
                  total: float | None) -> tuple[dict[str, Any], ...]:
    """One row per finding; `recoverable_time` is a root cause's part of the profile's recoverable time
    (`attributed`), None for a symptom (its time is its causes') and for a local or missing estimate."""
    parts = attributed(analysis.findings, share)
    return tuple({
        **base, "rule": f.name, "rule_id": f.id, "severity": f.severity, "title": f.title, "root_cause": f.root_cause,
        "gain": f.estimated_speedup, "scope": f.speedup_scope, "total_time": total,
        "recoverable_time": parts[f.name] * total if f.name in parts and total is not None else None,
    } for f in analysis.findings)


def outcome(analysis: Analysis, item: Item, label: str | None, generic_stems: frozenset[str],
            same_capture: Mapping[str, Any] | None = None) -> Outcome:
    """`same_capture`: fleet_run.yaml's settings of the capture key (read here when not given)."""
    spec = fleet_spec(analysis.kind)
    info = dict(analysis.info)
    total = analysis.value("total_time")
    gain, best = _recoverable_share(analysis)
    severities = [SEVERITIES.index(f.severity) for f in analysis.findings if f.severity in SEVERITIES]
    name = _first(info, spec.get("name", [])) or path_name(item.path, generic_stems)
    settings = same_capture if same_capture is not None else run_settings()["same_capture"]
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
        "capture": capture_key(analysis, spec, settings),
        **{m: analysis.value(m) for m in spec.get("metrics", ())},
    }
    units = {m: analysis.metrics[m].unit for m in spec.get("metrics", ()) if m in analysis.metrics}
    base = {"hash": item.hash, "path": str(item.path), "name": name, "kind": analysis.kind, "label": label}
    return Outcome(row, _finding_rows(analysis, base, gain, total), units)
