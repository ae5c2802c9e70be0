"""The toy kind's one report section."""

from __future__ import annotations

from advisor.core.model import Analysis
from advisor.report.document import Paragraph, Section, Table
from advisor.report.view import View


def tldr(analysis: Analysis) -> list[tuple[int, str]]:
    return [(1, f"**SM busy {View(analysis).show('sm_busy_percent')}** of {View(analysis).show('total_time')}.")]


def setup_rows(analysis: Analysis) -> list[tuple[str, str]]:
    return [("Device", analysis.info.get("device", "unknown"))]


PLACES = ("utilisation",)  # where sections() puts its sections (kinds.contract.PLACES)


def sections(analysis: Analysis) -> dict[str, list[Section]]:
    view = View(analysis)
    rows = tuple((name, view.show(name)) for name in ("sm_busy_percent", "dram_bytes", "dram_throughput"))
    return {"utilisation": [Section("Toy utilisation", (Paragraph("What the toy profiler measured."),
                                                        Table(("Metric", "Value"), rows)), "toy")]}
