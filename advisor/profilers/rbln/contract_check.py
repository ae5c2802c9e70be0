"""The RBLN kind's modules held to the kind contract by mypy (read only by mypy: docs/architecture.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.kinds.contract import KindAdapters, KindEvents, KindMembers, KindReport, ReportRows, ReportTldr
    from advisor.profilers.rbln import adapters as _adapters
    from advisor.profilers.rbln import events as _events
    from advisor.profilers.rbln import report as _report

    _ADAPTERS: KindAdapters = _adapters
    _MEMBERS: KindMembers = _adapters
    _EVENTS: KindEvents = _events
    _REPORT: KindReport = _report
    _TLDR: ReportTldr = _report.tldr
    _SETUP_ROWS: ReportRows = _report.setup_rows
