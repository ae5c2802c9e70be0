"""summary-text, in both layouts `neuron-profile view --output-format summary-text` has printed:

- humanised: an optional header line, an optional group column, values with units
  (`53.78 ms`, `4.334 GiB`, `654.344 GFLOPS`, `13.26 %`);
- raw (older tools): `name  value` in machine units (`total_time  0.017`).

Values are converted to machine units here, so `13.26 %` becomes the fraction 0.1326, the same
number summary-json carries.
"""

from __future__ import annotations

import re
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.kinds.conventions import Conventions

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


def _content_lines(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if _RULE_LINE.match(line) or line.lstrip().startswith("#"):
            continue
        rows.append(line.split())
    return rows


def _is_header(tokens: list[str]) -> bool:
    return bool(tokens) and {t.lower().strip(":") for t in tokens} <= _HEADER_WORDS


def _grouped(rows: list[list[str]]) -> bool:
    """Whether lines carry a group column: decided once for the file, by the header if there is
    one, else by which column holds the snake_case field names on most lines."""
    for tokens in rows:
        if _is_header(tokens):
            return any(t.lower() in ("group", "category") for t in tokens)
    first = sum(1 for t in rows if t and _FIELD.match(t[0]))
    second = sum(1 for t in rows if len(t) >= 3 and _IDENT.match(t[0]) and _FIELD.match(t[1]))
    return second > first


def sniff(text: str) -> bool:
    rows = [t for t in _content_lines(text[:65536]) if not _is_header(t)]
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
    rows = _content_lines(text)
    grouped = _grouped([t for t in rows if not _is_header(t)])
    fields: dict[str, Any] = {}
    for tokens in rows:
        if _is_header(tokens):
            continue
        offset = 1 if grouped and len(tokens) >= 3 else 0
        if len(tokens) < offset + 2 or not _IDENT.match(tokens[offset]):
            continue
        name, value_text = tokens[offset], " ".join(tokens[offset + 1:])
        if value_text.lower() in ("n/a", "na", "-", "none", "null"):
            fields[name] = None
        else:
            fields[name] = _value(value_text, conv)
    if not fields:
        raise AdvisorError(where, "no `metric value` lines found in this summary-text")
    humanised = any(isinstance(v, float) for v in fields.values()) and _has_units(rows, conv)
    layout = "humanised" if humanised else "raw"
    return f"{layout} layout" + (" with group column" if grouped else ""), [("profile", fields)]


def _has_units(rows: list[list[str]], conv: Conventions) -> bool:
    return any(len(t) >= 2 and t[-1] in conv.text_units and _NUMBER.match(t[-2].replace(",", "") or "x") for t in rows)
