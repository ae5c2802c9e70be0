"""The report's idle-time section: the device's idle time split as HTA splits it (host wait, kernel wait, other),
and the host wait split among the causes that own it (owners.py), each part with the rule that claims it."""

from __future__ import annotations

from typing import Any

from advisor.core import units as fmt
from advisor.core.trace import TraceSummary
from advisor.profilers.torch import KIND
from advisor.report.document import Chart, Paragraph, Section, Table, escape
from advisor.report.trace_blocks import breakdown_table
from advisor.report.view import View


def idle_section(t: TraceSummary | None, view: View) -> Section | None:
    if view.raw("device_idle") is None:
        return None
    total = view.raw("device_idle")
    rows = []
    for seconds, share, label, meaning in KIND.data("report.yaml")["idle_parts"]:
        part = view.raw(seconds)
        of_idle = fmt.percent(part / total if part is not None and total else None)
        rows.append((escape(label), view.show(seconds), view.show(share), of_idle, escape(meaning)))
    blocks: list[Any] = [Paragraph(
        f"The device is idle {view.show('device_idle')} ({view.show('device_idle_fraction')} of the window): no "
        "kernel, copy or set runs on any of its streams. The idle time is split by what the device waited for, as "
        "in HTA's idle-time breakdown; docs/torch.md says where advisor's definitions differ from HTA's."),
        Table(("Category", "Time", "Share of the window", "Share of the idle time", "Meaning"), tuple(rows),
              align=("left", "right", "right", "right", "left"))]
    known = [(label, v) for _, share, label, _ in KIND.data("report.yaml")["idle_parts"]
             if (v := view.raw(share)) is not None]
    if known:
        blocks.append(Chart("idle", "Idle time by what the device waited for", {
            "kind": "hbar", "labels": [label for label, _ in known], "values": [100 * v for _, v in known],
            "texts": [fmt.percent(v) for _, v in known], "xlabel": "% of the analysed window"},
            alt="Host wait, kernel wait and other idle time as shares of the window"))
    measured = t.breakdown("idle_breakdown") if t else None
    if measured and measured.note:
        blocks.append(Paragraph(escape(measured.note)))
    pace = t.breakdown("host_pace") if t else None  # the host's own pace by what fills it, operators named
    named = (Paragraph(escape(pace.note)), breakdown_table(pace)) if pace and pace.rows else ()
    return Section("Idle time", (*blocks, *_host_wait_owners(view), *named), "idle")


def _host_wait_owners(view: View) -> tuple[Any, ...]:
    """The host wait split among the causes that claim it, one owner per piece (owners.py)."""
    host_wait = view.raw("idle_host_wait")
    if not host_wait:
        return ()
    rows = []
    for seconds, share, label, rule, meaning in KIND.data("report.yaml")["host_wait_owners"]:
        part = view.raw(seconds)
        rows.append((escape(label), view.show(seconds), view.show(share),
                     fmt.percent(part / host_wait if part is not None else None), f"`{escape(rule)}`", escape(meaning)))
    return (Paragraph(
        f"Who owns the host wait ({view.show('idle_host_wait')}): each part is claimed by one finding only, so no "
        "piece of idle time is counted twice. The data loader's part comes first; the part after a synchronisation "
        "is what the host could have queued had it not been blocked; the rest is the host's own pace."),
        Table(("Part", "Time", "Share of the window", "Share of the host wait", "Owner (rule)", "Meaning"),
              tuple(rows), align=("left", "right", "right", "right", "left", "left")))
