"""`.ncu-rep` reports, read with NVIDIA's `ncu_report` package (pip `ncu-report`).

The package is proprietary and may not be redistributed, so it is an optional extra imported only
here, only when a report is read. Checked against `ncu-report` 2026.3.1 (`ncu_report/__init__.py`):
`load_report(path)` -> context -> ranges (`num_ranges`, `range_by_idx`) -> actions (`num_actions`,
`action_by_idx`); an action has `name(name_base)`, `metric_names()`, `metric_by_name(n)`,
`rule_results_as_dicts()`; a metric has `unit()` and `value()` (the aggregate for instanced metrics).
The library loads garbage as an empty context without an error, so the magic bytes are checked and
an empty result refused.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.model import VendorFinding
from advisor.kinds.base import LoadOptions
from advisor.kinds.ncu.adapters.launches import Launch, Row, vendor_finding

NAME = "ncu-rep"
MAGIC = b"NVR\0"
MISSING = ("reading .ncu-rep needs NVIDIA's ncu_report package: pip install 'advisor[ncu]' (or export a CSV: "
           "ncu -i FILE --csv --page details --print-units base > FILE.csv)")
EMPTY = "not an Nsight Compute report, or an empty one (no kernel results)"
MSG_TYPES = {1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}  # MsgType OK, OPTIMIZATION, WARNING, ERROR; NONE=0 skipped
SPEEDUP_TYPES = {1: "local", 2: "global"}  # SpeedupType LOCAL, GLOBAL; UNKNOWN=0 has no scope
NAME_BASE_DEMANGLED = 1  # IAction.NameBase_DEMANGLED in every version seen; the attribute wins when present
# Message markup (documented in rule_results_as_dicts): render it as the CSV and text exports do.
_URL = re.compile(r"@url:([^:@]*):([^@]*)@")
_LINK = re.compile(r"@(?:section:[^:@]*|sass:[^:@]*|source:[^:@]*:[^:@]*):([^@]*)@")


def sniff(head: bytes) -> bool:
    return head.startswith(MAGIC)


def _text(value: Any) -> str | None:
    """A metric value as an export prints it; None when the metric has no value."""
    if value is None:
        return None
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    return str(value)


def _markup(message: str) -> str:
    return _LINK.sub(r"\1", _URL.sub(r"\1 (\2)", message))


def _rules(results: list[dict[str, Any]]) -> list[VendorFinding]:
    findings = []
    for result in results:
        message = result.get("rule_message") or {}
        rule_type = MSG_TYPES.get(int(message.get("type") or 0))
        text = str(message.get("message") or "").strip()
        if rule_type is None or not text:  # MsgType NONE rows, or empty text: nothing was said
            continue
        speedup = result.get("speedup_estimation") or {}
        findings.append(vendor_finding(
            str(result.get("rule_identifier") or ""), str(result.get("section_identifier") or ""), rule_type,
            _markup(text), SPEEDUP_TYPES.get(int(speedup.get("type") or 0), ""), speedup.get("speedup"),
            title=str(message.get("title") or result.get("name") or "")))
    return findings


def _launch(action: Any, launch_id: int) -> Launch:
    values: dict[str, str] = {}
    rows: list[Row] = []
    for name in action.metric_names():
        metric = action.metric_by_name(name)
        text = _text(metric.value()) if metric is not None else None
        if text is None:
            continue
        values[name] = text
        rows.append(Row("", name, metric.unit() or "", text))
    identity = {"device_name": values.get("device__attribute_display_name", ""),
                "context": values.get("launch__context_id", ""), "stream": values.get("launch__stream_id", ""),
                "device": values.get("launch__device_id", "")}
    major, minor = (values.get(f"device__attribute_compute_capability_{p}") for p in ("major", "minor"))
    if major and minor:
        identity["compute_capability"] = f"{major}.{minor}"
    for kind in ("block", "grid"):
        dims = [values.get(f"launch__{kind}_dim_{axis}", "") for axis in "xyz"]
        if all(dims):
            identity[f"{kind}_dims"] = f"({', '.join(dims)})"
    demangled = getattr(action, "NameBase_DEMANGLED", NAME_BASE_DEMANGLED)
    kernel = action.name(demangled) or action.name()
    return Launch(id=str(launch_id), kernel=kernel, identity=identity, rows=rows,
                  rules=_rules(list(action.rule_results_as_dicts())))


def load(path: Path, options: LoadOptions) -> list[Launch]:
    where = str(path)
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(MAGIC))
    except OSError as error:
        raise AdvisorError(where, f"cannot read it: {error.strerror or error}") from None
    if not sniff(head):
        raise AdvisorError(where, EMPTY)
    try:
        import ncu_report  # optional extra (proprietary): only a report needs it
    except ImportError:
        raise AdvisorError(where, MISSING) from None
    try:
        context = ncu_report.load_report(str(path))
    except (OSError, RuntimeError, ValueError) as error:
        raise AdvisorError(where, f"ncu_report could not load it: {str(error).strip()[:200]}") from None
    launches: list[Launch] = []
    for r in range(context.num_ranges()):
        result_range = context.range_by_idx(r)
        for a in range(result_range.num_actions()):
            launches.append(_launch(result_range.action_by_idx(a), len(launches)))
    if not launches:
        raise AdvisorError(where, EMPTY)
    return launches
