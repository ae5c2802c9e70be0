"""Several profiles of one input (cores of a file, ranks of a capture, kernels of a run): the chosen
analysis, carrying one overview row per profile with the columns the kind's report.yaml names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from advisor.core.model import Analysis, OverviewColumn, ProfileOverview
from advisor.kinds import get as get_kind


def _where(analysis: Analysis, fields: Sequence[str]) -> str | None:
    """`nd_idx 0, nc_idx 1`: the named fields the profile has, as text or numbers."""
    parts = []
    for name in fields:
        text = analysis.info.get(name)
        number = analysis.value(name)
        if text or number is not None:
            parts.append(f"{name} {text or f'{number:g}'}")
    return ", ".join(parts) or None


def _column(analysis: Analysis, spec: dict[str, Any]) -> OverviewColumn:
    """The first of the spec's metrics the analysis has a value for (a fallback chain)."""
    for name in spec["metrics"]:
        if analysis.value(name) is not None:
            return OverviewColumn(spec["title"], analysis.value(name), analysis.metrics[name].unit)
    first = analysis.metrics.get(spec["metrics"][0])
    return OverviewColumn(spec["title"], None, first.unit if first else "")


def overview_row(analysis: Analysis, name: str, analysed: bool) -> ProfileOverview:
    spec = get_kind(analysis.kind).data("report.yaml").get("overview") or {}
    estimated = [f for f in analysis.findings if f.estimated_speedup is not None and f.speedup_scope == "global"]
    best = max(estimated, key=lambda f: f.estimated_speedup or 0.0, default=None)
    return ProfileOverview(
        name=name, total_time=analysis.value("total_time"), where=_where(analysis, spec.get("where", {}).get(
            "fields", ())), columns=tuple(_column(analysis, c) for c in spec.get("columns", ())),
        analysed=analysed, findings=tuple(f.name for f in analysis.findings),
        root_causes=tuple(f.name for f in analysis.findings if f.root_cause),
        gain=best.estimated_speedup if best else None, gain_finding=best.name if best else "")


def with_overview(analyses: Sequence[Analysis], names: Sequence[str], chosen: int) -> Analysis:
    """The chosen analysis, carrying an overview of all of them."""
    rows = tuple(overview_row(a, n, i == chosen) for i, (a, n) in enumerate(zip(analyses, names, strict=True)))
    return replace(analyses[chosen], entries=rows)
