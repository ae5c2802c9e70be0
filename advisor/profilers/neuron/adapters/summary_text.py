"""summary-text, in both layouts `neuron-profile view --output-format summary-text` has printed:

- humanised: an optional header line, an optional group column, values with units
  (`53.78 ms`, `4.334 GiB`, `654.344 GFLOPS`, `13.26 %`);
- raw (older tools): `name  value` in machine units (`total_time  0.017`).

Values are converted to machine units here, so `13.26 %` becomes the fraction 0.1326, the same
number summary-json carries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.kinds.conventions import Conventions
from advisor.profilers.neuron.adapters.bounds import MAX_FIELDS, check_text_lines, field_refusal

NAME = "summary-text"

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_FIELD = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")  # snake_case with at least one underscore
_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?$")
# The number's digits and the unit never compete for a character (a unit starts with no digit, sign,
# dot or comma), so a failed match gives characters back one at a time: linear in the line.
_VALUE = re.compile(r"^(?P<number>[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)[ \t]*"
                    r"(?P<unit>[^\s\d.,+-]\S*)?$", re.IGNORECASE)
_HEADER_WORDS = {"group", "category", "metric", "name", "field", "value", "unit", "units", "description"}
_RULE_LINE = re.compile(r"^[\s=\-_*+|#]*$")
INPUT_PATTERNS = {"summary-text identifier": (_IDENT, ("a", "_", "1")),
                  "summary-text field": (_FIELD, ("a", "_a", "_", "1")),
                  "summary-text number": (_NUMBER, ("1", ",123", ".5", "e1", "1,")),
                  "summary-text value": (_VALUE, ("1", ",", ".5", "e1", " ", "ms", "1 x")),
                  "summary-text rule line": (_RULE_LINE, ("=", " ", "-", "x"))}


def _content_lines(lines: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """(line number, tokens) of each line that is not a rule or a comment. Lazy: a long file is held
    only as its lines (bounded by the line-count limit), never also as rows of tokens."""
    for number, line in enumerate(lines, 1):
        if _RULE_LINE.match(line) or line.lstrip().startswith("#"):
            continue
        yield number, line.split()


def _is_header(tokens: list[str]) -> bool:
    return bool(tokens) and tokens[0].lower().strip(":") in _HEADER_WORDS and (
        {t.lower().strip(":") for t in tokens} <= _HEADER_WORDS)


def _grouped(rows: Iterable[list[str]]) -> bool:
    """Whether lines carry a group column: decided once for the file, by which column holds the
    snake_case field names on most lines (header lines are left out by the callers)."""
    first = second = 0
    for t in rows:
        first += bool(t and _FIELD.match(t[0]))
        second += len(t) >= 3 and bool(_IDENT.match(t[0]) and _FIELD.match(t[1]))
    return second > first


def sniff(text: str) -> bool:
    rows = [t for _, t in _content_lines(text[:65536].splitlines()) if not _is_header(t)]
    grouped = _grouped(rows)
    named = sum(1 for t in rows if len(t) >= (3 if grouped else 2) and _FIELD.match(t[1 if grouped else 0]))
    return named >= 2 and named >= len(rows) // 2


def _value(text: str, conv: Conventions) -> Any:
    """A number in machine units, or the text itself when it is not a number with a known unit."""
    match = _VALUE.match(text)
    if not match:
        return text
    number_text, unit = match.group("number").replace(",", ""), match.group("unit")
    number = float(number_text)  # 1e309 and 300-digit values are inf: unavailable, as the conventions read it
    if unit is None:
        return number
    factor = conv.factor(unit)
    return text if factor is None else number * factor


def parse(text: str, where: str, conv: Conventions) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """One profile from the `name value` lines: two linear passes over at most MAX_TEXT_LINES lines, each
    holding one row of tokens at a time."""
    lines = text.splitlines()
    check_text_lines(lines, where)
    grouped = _grouped(t for _, t in _content_lines(lines) if not _is_header(t))
    fields: dict[str, Any] = {}
    first_line: dict[str, int] = {}
    units = False
    for number, tokens in _content_lines(lines):
        if _is_header(tokens):
            continue
        units = units or _has_unit(tokens, conv)
        offset = 1 if grouped and len(tokens) >= 3 else 0
        if len(tokens) < offset + 2 or not _IDENT.match(tokens[offset]):
            continue
        name, value_text = tokens[offset], " ".join(tokens[offset + 1:])
        if name in fields:  # the last would silently replace the first
            raise AdvisorError(where, f'the metric "{name}" appears twice (lines {first_line[name]} and {number}): '
                                      "only one value would be read")
        if len(fields) == MAX_FIELDS:
            raise AdvisorError(where, field_refusal("metric lines"))
        first_line[name] = number
        if value_text.lower() in ("n/a", "na", "-", "none", "null"):
            fields[name] = None
        else:
            fields[name] = _value(value_text, conv)
    if not fields:
        raise AdvisorError(where, "no `metric value` lines found in this summary-text")
    humanised = units and any(isinstance(v, float) for v in fields.values())
    layout = "humanised" if humanised else "raw"
    return f"{layout} layout" + (" with group column" if grouped else ""), [("profile", fields)]


def _has_unit(tokens: list[str], conv: Conventions) -> bool:
    """Whether the line ends in a number and a unit the humanised layout prints (`53.78 ms`)."""
    return (len(tokens) >= 2 and tokens[-1] in conv.text_units
            and bool(_NUMBER.match(tokens[-2].replace(",", "") or "x")))
