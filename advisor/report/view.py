"""Formatted access to an analysis' metrics, for report sections of every kind."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.kinds import get as get_kind


def subject(analysis: Analysis) -> str:
    """What one profile of the kind is, in the report's sentences: a kernel, or a traced run (the
    kind's report.yaml `subject`)."""
    return str(get_kind(analysis.kind).data("report.yaml").get("subject", "kernel"))


@dataclass(frozen=True)
class View:
    """Formatted access to an analysis' metrics."""

    analysis: Analysis

    def raw(self, name: str) -> float | None:
        return self.analysis.value(name)

    def show(self, name: str | None) -> str:
        if not name:
            return "—"
        metric = self.analysis.metrics.get(name)
        return fmt.UNAVAILABLE if metric is None else fmt.value(metric.value, metric.unit)

    def hw(self, key: str) -> float | None:
        hw = self.analysis.hardware
        return hw.values.get(key) if hw else None
