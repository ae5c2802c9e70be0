"""The default human-readable `ncu` output (and `ncu -i x.ncu-rep` printed without --csv).

Built to a real log: per launch a `[pid] process@host` line, a header line
`  <signature> (gx, gy, gz)x(bx, by, bz), Context N, Stream N, Device N, CC X.Y`, then per section
`    Section: <display name>`, a table framed by dashed rules and, after it, rule blocks
(`    OPT   text`, continuation lines indented 10 spaces, padded to 120 columns, several rules
separated by a dashed line). Columns are cut where the dashed rule says they are: labels hold
spaces and units may be empty. Also read: `--metrics` tables (metric names as labels, with or
without the `Metric Name` header of older versions), `--print-summary per-kernel` tables (the
`Average` column; the header says `Invocations N` instead of context and stream), older headers with
a timestamp and no launch dimensions, and application output or `==PROF==` lines anywhere.

The text carries no rule ids: rule results get `rule=""` and the section's display name, and are
matched by section and message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from advisor.core.errors import AdvisorError
from advisor.kinds.ncu.adapters.launches import RULE_TYPES, Launch, Row, vendor_finding

NAME = "ncu-text"
_PROCESS = re.compile(r"^\[(\d+)\] (.+)@(\S+)\s*$")
# The launch header: the signature, then ", Key Value" pairs to the end of the line; the signature
# itself holds commas, so the lazy group grows until only known pairs remain.
_HEADER = re.compile(r"^  (?P<sig>\S.*?)(?P<tail>(?:, (?:Context|Stream|Device|CC|Invocations) [^,]+)+)\s*$")
_DIMS = re.compile(r"\s*\((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\)$")
_TIMESTAMP = re.compile(r", \d{4}-\w{3}-\d{1,2} \d{1,2}:\d{2}:\d{2}$")  # older versions: launch time, no dims
_SECTION = re.compile(r"^    Section: (\S.*?)\s*$")
_ANY_SECTION = re.compile(_SECTION.pattern, re.MULTILINE)
_DASHES = re.compile(r"^    -+( +-+)+\s*$")  # a table rule, or the line between two rules of a section
_RULE_START = re.compile(rf"^    ({'|'.join(RULE_TYPES)})   (.*)$")
_SPEEDUP = re.compile(r"^Est\. (?:(Local|Global) )?Speedup: ([-\d.,]+)%\s*(.*)$")
_CONTINUATION = " " * 10
_SEPARATOR = "-----"  # the first dash group of the line between two rules; table columns are wider
_IDENTITY = {"Context": "context", "Stream": "stream", "Device": "device", "CC": "compute_capability",
             "Invocations": "invocations"}
_VALUE_COLUMNS = ("Metric Value", "Average")  # the value, or the summary's mean over invocations


@dataclass
class _Rule:
    section: str
    type: str
    lines: list[str] = field(default_factory=list)


@dataclass
class _Table:
    """Column spans from a dashed rule, and which column holds the value."""

    spans: list[tuple[int, int]]
    value: int = -1  # index into spans; the last column unless the header names another
    headed: bool = False  # the `Metric Name …` header line was seen


def _spans(rule: str) -> list[tuple[int, int]]:
    """Each column runs from its dashes to the start of the next column's dashes."""
    starts = [m.start() for m in re.finditer(r"-+", rule)]
    return [(start, starts[i + 1] if i + 1 < len(starts) else 10**6) for i, start in enumerate(starts)]


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    return [line[start:end].strip() for start, end in spans]


def _header(line: str) -> tuple[str, dict[str, str]] | None:
    found = _HEADER.match(line)
    if not found:
        return None
    identity: dict[str, str] = {}
    for pair in found.group("tail").split(", ")[1:]:
        key, _, value = pair.partition(" ")
        identity[_IDENTITY[key]] = value.strip()
    signature = _TIMESTAMP.sub("", found.group("sig").rstrip())
    dims = _DIMS.search(signature)
    if dims:
        identity["grid_dims"] = "({}, {}, {})".format(*dims.groups()[:3])
        identity["block_dims"] = "({}, {}, {})".format(*dims.groups()[3:])
        signature = signature[: dims.start()]
    return signature.strip(), identity


def sniff(text: str) -> bool:
    return bool(_ANY_SECTION.search(text)) and any(
        _header(line) for line in text.splitlines() if line.startswith("  ") and not line.startswith("   "))


def _finish(rule: _Rule | None, launch: Launch) -> None:
    if rule is None or not rule.lines:
        return
    first, rest = rule.lines[0], rule.lines[1:]
    scope, speedup = "", None
    found = _SPEEDUP.match(first)
    if found:  # `Est. Speedup: N%` (global) or `Est. Local Speedup: N%`; the message follows
        scope, speedup = (found.group(1) or "global").lower(), found.group(2)
        first = found.group(3)
    message = " ".join([first, *rest])
    launch.rules.append(vendor_finding("", rule.section, rule.type, message, scope, speedup))


def parse(text: str, where: str) -> list[Launch]:
    launches: list[Launch] = []
    process: dict[str, str] = {}
    launch: Launch | None = None
    section = ""
    table: _Table | None = None
    state = "outside"  # outside | section | head | rows | rules
    rule: _Rule | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.startswith("  "):  # application output, ==PROF== lines, the [pid] line
            found = _PROCESS.match(line)
            if found:
                process = {"process_name": found.group(2), "host_name": found.group(3)}
            if launch is not None and line:
                _finish(rule, launch)
                rule = None
            continue
        if not line.startswith("   ") and (header := _header(line)):
            if launch is not None:
                _finish(rule, launch)
            rule, state, section = None, "outside", ""
            signature, identity = header
            launch = Launch(id=str(len(launches)), kernel=signature, identity={**process, **identity})
            launches.append(launch)
            continue
        if launch is None:
            continue
        if found := _SECTION.match(line):
            _finish(rule, launch)
            rule, section, table, state = None, found.group(1), None, "section"
            continue
        if state in ("head", "rows") and table is not None:
            if state == "head" and not table.headed and _cells(line, table.spans)[0] == "Metric Name":
                table.headed = True
                cells = _cells(line, table.spans)
                table.value = next((i for i, c in enumerate(cells) if c in _VALUE_COLUMNS), len(cells) - 1)
            elif _DASHES.match(line):  # under the header line it opens the rows; after rows it closes them
                state = "rows" if state == "head" and table.headed else "rules"
            elif line.strip():  # older --metrics tables have no header line: rows follow the first rule
                state = "rows"
                cells = _cells(line, table.spans)
                if len(cells) >= 3 and cells[0]:
                    launch.rows.append(Row(section, cells[0], cells[1], cells[table.value]))
            continue
        # between tables: rule blocks, separators between two rules, or another table's first rule
        if found := _RULE_START.match(line):
            _finish(rule, launch)
            rule, state = _Rule(section, found.group(1), [found.group(2).strip()]), "rules"
        elif _DASHES.match(line):
            _finish(rule, launch)
            rule = None
            if not (state == "rules" and line.split()[0] == _SEPARATOR):  # a table (sections may hold several)
                table, state = _Table(_spans(line)), "head"
        elif rule is not None and line.startswith(_CONTINUATION):
            rule.lines.append(line.strip())
    if launch is not None:
        _finish(rule, launch)
    if not launches:
        raise AdvisorError(where, "no ncu launch header (`  <kernel> (grid)x(block), Context N, …`) in it")
    return launches
