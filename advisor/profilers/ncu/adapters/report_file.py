"""`.ncu-rep` reports, read with NVIDIA's `ncu_report` package (pip `ncu-report`).

The package is proprietary and may not be redistributed, so it is an optional extra imported only
here, only when a report is read. Checked against `ncu-report` 2026.3.1 (`ncu_report/__init__.py`):
`load_report(path)` -> context -> ranges (`num_ranges`, `range_by_idx`) -> actions (`num_actions`,
`action_by_idx`); an action has `name(name_base)`, `metric_names()`, `metric_by_name(n)`,
`rule_results_as_dicts()`; a metric has `unit()` and `value()` (the aggregate for instanced metrics).
The library loads garbage as an empty context without an error and a truncated report as a partial one
(a launch without name or metrics), so the magic bytes and the block layout are checked first, and an
empty or partial result refused.

Layout (as Extra-P's reader of the format has it, and as the real report in the reference folder walks
exactly to its end): `NVR\0`, a u32 size and the file header, then blocks to the end of the file, each a
u32 size, a protobuf block header whose field 5 is the payload size, and the payload.
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.model import VendorFinding
from advisor.inputs.text import file_errors, open_regular
from advisor.kinds.base import LoadOptions
from advisor.profilers.ncu.adapters.launches import Launch, Row, vendor_finding

NAME = "ncu-rep"
MAGIC = b"NVR\0"
MISSING = ("reading .ncu-rep needs NVIDIA's ncu_report package: pip install 'advisor[ncu]' (or export a CSV: "
           "ncu -i FILE --csv --page details --print-units base > FILE.csv)")
EMPTY = "not an Nsight Compute report, or an empty one (no kernel results)"
TRUNCATED = "the report is truncated or damaged"
_PAYLOAD_SIZE_FIELD = 5  # BlockHeader.PayloadSize
MSG_TYPES = {1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}  # MsgType OK, OPTIMIZATION, WARNING, ERROR; NONE=0 skipped
SPEEDUP_TYPES = {1: "local", 2: "global"}  # SpeedupType LOCAL, GLOBAL; UNKNOWN=0 has no scope
NAME_BASE_DEMANGLED = 1  # IAction.NameBase_DEMANGLED in every version seen; the attribute wins when present
# Message markup (documented in rule_results_as_dicts): render it as the CSV and text exports do.
_URL = re.compile(r"@url:([^:@]*):([^@]*)@")
_LINK = re.compile(r"@(?:section:[^:@]*|sass:[^:@]*|source:[^:@]*:[^:@]*):([^@]*)@")
INPUT_PATTERNS = {"ncu-rep url markup": (_URL, ("@url:", "x:", "@url:x:")),
                  "ncu-rep link markup": (_LINK, ("@source:", "x:", "@section:"))}


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


def _whole(text: str) -> str:
    """ "32.0" -> "32": a count the report stores as a double; any other text as it is."""
    head, dot, tail = text.partition(".")
    return head if dot and head.isdigit() and tail and set(tail) == {"0"} else text


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
    major, minor = (_whole(values.get(f"device__attribute_compute_capability_{p}", "")) for p in ("major", "minor"))
    if major and minor:
        identity["compute_capability"] = f"{major}.{minor}"
    for kind in ("block", "grid"):
        # the report stores launch dimensions as doubles: "(32, 63, 1)", as the CSV prints them, not "(32.0, …)"
        dims = [_whole(values.get(f"launch__{kind}_dim_{axis}", "")) for axis in "xyz"]
        if all(dims):
            identity[f"{kind}_dims"] = f"({', '.join(dims)})"
    demangled = getattr(action, "NameBase_DEMANGLED", NAME_BASE_DEMANGLED)
    kernel = action.name(demangled) or action.name() or ""
    return Launch(id=str(launch_id), kernel=str(kernel), identity=identity, rows=rows,
                  rules=_rules(list(action.rule_results_as_dicts())))


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while at < len(data) and shift < 64:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at
    raise ValueError("varint")


def _payload_size(header: bytes) -> int | None:
    """The payload size a block header states; None when the header is not the protobuf expected
    (another layout: the library is left to judge it)."""
    at, size = 0, 0
    try:
        while at < len(header):
            key, at = _varint(header, at)
            wire = key & 7
            if wire == 0:
                value, at = _varint(header, at)
                size = value if key >> 3 == _PAYLOAD_SIZE_FIELD else size
            elif wire == 2:
                length, at = _varint(header, at)
                at += length
            elif wire in (1, 5):
                at += 8 if wire == 1 else 4
            else:
                return None
    except ValueError:
        return None
    return size if at == len(header) else None


def layout_problem(path: Path) -> str | None:
    """Why the report's blocks do not fill the file exactly (cut short: a copy or download interrupted),
    or None when they do or the layout is one this check does not know. Reads only block headers."""
    with open_regular(path) as stream, file_errors(path):
        total = stream.seek(0, 2)
        stream.seek(len(MAGIC))
        at, blocks = len(MAGIC), 0
        while at < total:
            prefix = stream.read(4)
            if len(prefix) < 4:
                return f"it ends inside a block header at byte {at:,}"
            (size,) = struct.unpack("<I", prefix)
            if at + 4 + size > total:
                return f"a block at byte {at:,} needs {size:,} bytes, the file ends {total - at - 4:,} bytes later"
            header = stream.read(size)
            payload = _payload_size(header) if blocks else 0  # the first is the file header: no payload
            if payload is None:
                return None
            at += 4 + size + payload
            if at > total:
                return f"block {blocks} states a {payload:,}-byte payload past the end of the file ({total:,} bytes)"
            stream.seek(at)
            blocks += 1
    return None


def load(path: Path, options: LoadOptions) -> list[Launch]:
    """The report's launches. The library is asked first (it may know layouts this module does not);
    when it finds nothing or a partial launch, the block layout says whether the file was cut short."""
    where = str(path)
    with open_regular(path) as stream, file_errors(path):
        head = stream.read(len(MAGIC))
    if not sniff(head):
        raise AdvisorError(where, EMPTY)
    try:
        import ncu_report  # optional extra (proprietary): only a report needs it
    except ImportError:
        raise AdvisorError(where, MISSING) from None
    try:
        launches = _read(ncu_report.load_report(str(path)))
    except _Partial as partial:
        cut = layout_problem(path)
        raise AdvisorError(where, f"{TRUNCATED}: {cut}" if cut else f"{TRUNCATED}: {partial}") from None
    except Exception as error:  # the library is native code on untrusted bytes: any failure is the file's
        said = " ".join(str(error).split())[:200] or type(error).__name__
        raise AdvisorError(where, f"ncu_report could not read it: {said}") from None
    if not launches:
        cut = layout_problem(path)
        raise AdvisorError(where, f"{EMPTY}; {TRUNCATED}: {cut}" if cut else EMPTY)
    return launches


class _Partial(Exception):
    """A launch the library half-loaded."""


def _read(context: Any) -> list[Launch]:
    """Every launch of the loaded report; a launch without a name or any metric is what the library
    makes of a cut-short report, and refused."""
    launches: list[Launch] = []
    for r in range(context.num_ranges()):
        result_range = context.range_by_idx(r)
        for a in range(result_range.num_actions()):
            launch = _launch(result_range.action_by_idx(a), len(launches))
            if not launch.kernel or not launch.rows:
                raise _Partial(f"kernel result {len(launches)} has no name or no metrics")
            launches.append(launch)
    return launches
