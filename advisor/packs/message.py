"""Rule-message templates: `{name}` or `{name:spec}` placeholders, formatted by a restricted formatter.

Python's format() builds whatever a spec asks for: `{x:.999999999f}` or `{x:>999999999}` is a
gigabyte string for every finding. Here a spec is a number format of bounded width and precision,
checked at load (a problem names file, line and rule) and checked again at run time, so a rule built
in code without the loader cannot blow up either: a spec the loader would refuse falls back to the
value's own unit format.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field

from advisor.core import units as fmt
from advisor.core.errors import suggest

MAX_WIDTH = 40  # characters: wider than any table cell a message lands in
MAX_PRECISION = 20  # digits after the point: more than a double holds
MAX_SPEC_LENGTH = 16  # the longest valid spec within these bounds is 13 characters
MAX_MESSAGE_LENGTH = 2000  # characters, as for expressions; the built-in packs' longest is under 600
MAX_PLACEHOLDERS = 64

IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
# The format-spec mini-language for numbers, [[fill]align][sign][z][#][0][width][grouping][.precision][type];
# anchored, and no two adjacent quantified parts can match the same character (the zero flag is `0`,
# a width starts at 1-9), so matching is linear; the spec's length is capped before it runs anyway.
_SPEC = re.compile(
    r"^(?:(?P<fill>[^{}])?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?#?0?(?P<width>[1-9][0-9]*)?[,_]?"
    r"(?:\.(?P<precision>[0-9]+))?(?P<type>[eEfFgGn%])?$")


def check_spec(spec: str) -> str | None:
    """The problem with a placeholder's format spec, or None when it is a bounded number format."""
    if spec in ("", "%"):  # the unit's own format; a fraction as a percent, like every percent in the report
        return None
    if len(spec) > MAX_SPEC_LENGTH:
        return f"format spec {spec[:MAX_SPEC_LENGTH]!r}… is longer than {MAX_SPEC_LENGTH} characters"
    if "{" in spec or "}" in spec:
        return "nested placeholders in a format spec are not allowed"
    found = _SPEC.match(spec)
    if found is None:
        return f"{spec!r} is not a number format (e.g. .2f, ,.0f, .1%, >10.3g)"
    width, precision = found.group("width"), found.group("precision")
    if width is not None and int(width) > MAX_WIDTH:
        return f"width {width} is over the limit of {MAX_WIDTH}"
    if precision is not None and int(precision) > MAX_PRECISION:
        return f"precision {precision} is over the limit of {MAX_PRECISION}"
    try:
        format(1.5, spec)  # combinations the grammar allows but format() refuses, such as `,n`
    except ValueError as exc:
        return f"{spec!r} is not a valid number format: {exc}"
    return None


def _finite(value: object) -> float | None:
    """A value a number format can show: finite, not a bool; an int too large for a float is unavailable."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def format_value(value: object, unit: str, spec: str) -> str:
    """One placeholder: the value in its unit's own format, or by a checked spec. Never raises."""
    number = _finite(value)
    if check_spec(spec) is not None:
        spec = ""
    if not spec:
        return fmt.value(number, unit)
    if spec == "%":
        return fmt.percent(number)
    if number is None:
        return fmt.UNAVAILABLE
    return format(number, spec)


@dataclass
class Template:
    """A checked message: its placeholders (name, spec) and the problems found."""

    placeholders: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _fields(message: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """The parsed template: (literal, field name, spec, conversion); ValueError for unbalanced braces."""
    return list(string.Formatter().parse(message))


def check_template(message: str, known: set[str]) -> Template:
    """Check a rule's message: plain names the rule can read, bounded specs, bounded size."""
    out = Template()
    if len(message) > MAX_MESSAGE_LENGTH:
        out.problems.append(f"{len(message)} characters; the limit is {MAX_MESSAGE_LENGTH}")
        return out
    try:
        parsed = _fields(message)
    except ValueError as exc:
        out.problems.append(str(exc))
        return out
    named = [(name, spec or "", conversion) for _, name, spec, conversion in parsed if name is not None]
    if len(named) > MAX_PLACEHOLDERS:
        out.problems.append(f"{len(named)} placeholders; the limit is {MAX_PLACEHOLDERS}")
        return out
    for name, spec, conversion in named:
        problems = _placeholder_problems(name, spec, conversion, known)
        out.problems.extend(problems)
        if not problems:
            out.placeholders.append((name, spec))
    return out


def _placeholder_problems(name: str, spec: str, conversion: str | None, known: set[str]) -> list[str]:
    if not IDENT.match(name):
        return [f"placeholder {{{name}}} must be a plain metric or param name (no attributes, indexes or calls)"]
    if conversion is not None:
        return [f"placeholder {{{name}!{conversion}}} may only have a format spec"]
    problem = check_spec(spec)
    if problem is not None:
        return [f"placeholder {{{name}}}: {problem}"]
    if name not in known:
        return [f"unknown name '{name}'{suggest(name, known)}"]
    return []


def format_message(message: str, env: Mapping[str, object], units: Mapping[str, str]) -> str:
    """The message with each placeholder formatted (bounded). A template the loader would refuse
    (too long, unbalanced braces, too many placeholders) is shown as written, never raised."""
    if len(message) > MAX_MESSAGE_LENGTH:
        return message[:MAX_MESSAGE_LENGTH]
    try:
        parsed = _fields(message)
    except ValueError:
        return message
    if sum(name is not None for _, name, _, _ in parsed) > MAX_PLACEHOLDERS:
        return message
    parts = []
    for literal, name, spec, _ in parsed:
        parts.append(literal)
        if name is not None:
            parts.append(format_value(env.get(name), units.get(name, ""), spec or ""))
    return "".join(parts)
