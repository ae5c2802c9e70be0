"""The Nsight Compute kind's modules held to the kind contract by mypy (read only by mypy: docs/architecture.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.kinds.contract import KindAdapters, KindReport, ReportRows, ReportTldr
    from advisor.profilers.ncu import adapters as _adapters
    from advisor.profilers.ncu import report as _report

    _ADAPTERS: KindAdapters = _adapters
    _REPORT: KindReport = _report
    _TLDR: ReportTldr = _report.tldr
    _SETUP_ROWS: ReportRows = _report.setup_rows
    _HARDWARE_ROWS: ReportRows = _report.hardware_rows
