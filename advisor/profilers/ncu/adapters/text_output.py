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
from advisor.profilers.ncu.adapters.launches import RULE_TYPES, Launch, Row, vendor_finding

NAME = "ncu-text"
# Every pattern below runs on input lines, so each is anchored and free of adjacent quantifiers that
# can trade characters (what made the old launch-header pattern quadratic: 110 s for one 704 KB line);
# the launch header and the process line are taken apart with string methods instead.
_TIMESTAMP = re.compile(r", \d{4}-\w{3}-\d{1,2} \d{1,2}:\d{2}:\d{2}$")  # older versions: launch time, no dims
_DIMS = re.compile(r"\((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\)$")  # matched at the last "(" of "(…)x(…)"
_SECTION = re.compile(r"^    Section: (\S.*)$")
_ANY_SECTION = re.compile(_SECTION.pattern, re.MULTILINE)
_DASHES = re.compile(r"^    -+( +-+)+[ \t]*$")  # a table rule, or the line between two rules of a section
_RULE_START = re.compile(rf"^    ({'|'.join(RULE_TYPES)})   (.*)$")
_SPEEDUP = re.compile(r"^Est\. (?:(Local|Global) )?Speedup: ([-\d.,]+)%[ \t]*(.*)$")
_RUNS = re.compile(r"-+")
INPUT_PATTERNS = {  # pattern, and fragments of it a hostile line repeats (tests/safety/test_ncu_inputs.py)
    "ncu text timestamp": (_TIMESTAMP, (", 2024-Jan-1 1:00:00", ", 2024-", "1")),
    "ncu text launch dims": (_DIMS, ("(1, 1, 1)x(", "(1, ", "1")),
    "ncu text section": (_SECTION, ("    Section: x", " ", "\n")),
    "ncu text any section": (_ANY_SECTION, ("    Section: x", " ", "\n")),
    "ncu text table rule": (_DASHES, ("    -", " -", " ")),
    "ncu text rule start": (_RULE_START, ("    OPT   ", "x")),
    "ncu text speedup": (_SPEEDUP, ("Est. Speedup: ", "1.", "%")),
    "ncu text column runs": (_RUNS, ("-", " -")),
}
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
    starts = [m.start() for m in _RUNS.finditer(rule)]
    return [(start, starts[i + 1] if i + 1 < len(starts) else 10**6) for i, start in enumerate(starts)]


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    return [line[start:end].strip() for start, end in spans]


def _process(line: str) -> dict[str, str] | None:
    """`[pid] process@host` as the process and host names, or None."""
    pid, close, rest = line[1:].partition("] ")
    if not line.startswith("[") or not close or not pid.isdigit():
        return None
    name, at, host = rest.rstrip().rpartition("@")
    if not at or not name or not host or any(c.isspace() for c in host):
        return None
    return {"process_name": name, "host_name": host}


def _pair(text: str) -> tuple[str, str] | None:
    """`Context 1` as (context, "1"): a known key, a space and a value without commas."""
    key, space, value = text.partition(" ")
    if not space or key not in _IDENTITY or not value.strip() or "," in value:
        return None
    return _IDENTITY[key], value.strip()


def _header(line: str) -> tuple[str, dict[str, str]] | None:
    """The launch header: the signature, then `, Key Value` pairs to the end of the line. The signature
    itself holds commas, so pairs are taken from the right while they are known pairs (linear time)."""
    if not line.startswith("  ") or line[2:3].isspace() or len(line) < 3:
        return None
    signature, pairs = line.rstrip(), []
    while True:
        cut = signature.rfind(", ")
        pair = _pair(signature[cut + 2:]) if cut > 2 else None
        if pair is None:
            break
        pairs.append(pair)
        signature = signature[:cut]
    if not pairs:
        return None
    identity = dict(reversed(pairs))
    signature = signature[2:].rstrip()
    tail = len(signature) - 40  # the timestamp is at the end: the pattern runs on the end only
    stamp = _TIMESTAMP.search(signature, max(0, tail))
    if stamp:
        signature = signature[:stamp.start()]
    dims = _dims(signature)
    if dims:
        identity["grid_dims"] = "({}, {}, {})".format(*dims.groups()[:3])
        identity["block_dims"] = "({}, {}, {})".format(*dims.groups()[3:])
        signature = signature[: dims.start()]
    return signature.strip(), identity


def _dims(signature: str) -> re.Match[str] | None:
    """The `(gx, gy, gz)x(bx, by, bz)` ending the signature, matched from the last `(` before `)x(`."""
    middle = signature.rfind(")x(")
    start = signature.rfind("(", 0, middle) if middle > 0 else -1
    return _DIMS.match(signature, start) if start >= 0 else None


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


def _table_line(line: str, table: _Table, state: str, section: str, launch: Launch) -> str:
    """One line of a metrics table (`state` head or rows): its header line names the value column, a dashed
    line opens or closes the rows, a row is added to the launch. The state after the line."""
    if state == "head" and not table.headed and _cells(line, table.spans)[0] == "Metric Name":
        table.headed = True
        cells = _cells(line, table.spans)
        table.value = next((i for i, c in enumerate(cells) if c in _VALUE_COLUMNS), len(cells) - 1)
    elif _DASHES.match(line):  # under the header line it opens the rows; after rows it closes them
        return "rows" if state == "head" and table.headed else "rules"
    elif line.strip():  # older --metrics tables have no header line: rows follow the first rule
        cells = _cells(line, table.spans)
        if len(cells) >= 3 and cells[0]:
            launch.rows.append(Row(section, cells[0], cells[1], cells[table.value]))
        return "rows"
    return state


def parse(text: str, where: str) -> list[Launch]:
    """The launches of ncu's text output (`ncu` without --csv), line by line: a launch header opens a launch,
    `Section:` lines its sections, whose metrics tables give its rows and rule blocks its vendor findings."""
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
            found_process = _process(line)
            if found_process:
                process = found_process
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
            rule, section, table, state = None, found.group(1).rstrip(), None, "section"
            continue
        if state in ("head", "rows") and table is not None:
            state = _table_line(line, table, state, section, launch)
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
