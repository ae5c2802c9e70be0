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
    if number is None or not fmt.in_range(number, unit):  # a spec like .0f would print 1e300 as 301 digits
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


def check_template(message: str, known: set[str], terms: set[str] | frozenset[str] = frozenset()) -> Template:
    """Check a rule's message: plain names the rule can read (`terms` among them: text, so no spec), bounded
    specs, bounded size."""
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
        if name in terms and spec and not problems:
            problems = [f"placeholder {{{name}:{spec}}}: a term is text and takes no format spec"]
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


# A missing value never reaches a report as "unavailable of 5 ms" or a raw placeholder: the clause that
# carries it is dropped instead (see _drop_missing). The marker is a private-use character no template keeps.
_MISSING = "\ue000"
# A parenthesised group without nested parentheses: [^()] cannot match a bracket, so each scan stops at
# the next one and the whole substitution is linear.
_GROUP = re.compile(r" ?\(([^()]*)\)")
# A missing value ending a sentence part, after a preposition ("active 40 % of {total_time} (...)"):
# the preposition goes with it. One alternation, then a fixed marker: linear.
_TRAILING = re.compile(r" (?:of|for|against|across|over|on|in|at|after|by|to|with|from|above|below|under) "
                       + _MISSING + r"(?=[,;:.)]| \(|$)")
# A missing share that a phrase goes on to qualify ("{x} of the time"): the phrase still reads.
_SHARE = re.compile(_MISSING + " of ")
_SENTENCE = re.compile(r"(?<=[.!?]) (?=[A-Z{])")
_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?] ))[a-z]")
# A count of exactly 1 is followed by a marker, so the noun after it reads singular ("1 complete step", "1 copy
# call"): the first of the next two words that looks plural. The marker is private-use, like _MISSING.
_ONE = "\ue001"
_AFTER_ONE = re.compile(_ONE + r"( (?:[a-z-]+ )?)([a-z]+)\b")
_NOT_PLURAL = frozenset({"was", "has", "this", "its", "plus", "less", "across", "always", "does", "goes", "thus"})


def _singular(found: re.Match[str]) -> str:
    first, word = found.group(1).strip(), found.group(2)
    if first and _plural_noun(first):  # "1 kernels shorter": the first word is the noun
        return f" {_one(first)} {word}"
    return f"{found.group(1)}{_one(word)}"  # "1 copies", "1 complete steps"


def _plural_noun(word: str) -> bool:
    return (len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
            and word not in _NOT_PLURAL)


def _one(word: str) -> str:
    if not _plural_noun(word):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1]


def _drop_items(group: str) -> str:
    """A parenthesised group without the list items (split at `;`, then `,`) that hold a missing value."""
    parts = []
    for part in group.split("; "):
        items = [item for item in part.split(", ") if _MISSING not in item]
        if items:
            parts.append(", ".join(items))
    return "; ".join(parts)


def _group(found: re.Match[str]) -> str:
    inner = found.group(1)
    if _MISSING not in inner:
        return found.group(0)
    kept = _drop_items(inner)
    return f"{found.group(0)[:found.start(1) - found.start(0)]}{kept})" if kept else ""


def _clauses(sentence: str, outside_parentheses: bool) -> list[str]:
    """The sentence split after each `,`, `;` or `:` followed by a space; with `outside_parentheses`, only at the
    top level, so that a clause never ends inside a parenthesis it opened."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(sentence):
        depth += (char == "(") - (char == ")")
        if (depth <= 0 or not outside_parentheses) and char in ",;:" and sentence[i + 1:i + 2] == " ":
            parts.append(sentence[start:i + 1])
            start = i + 2
    return [*parts, sentence[start:]]


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0


def _drop_clauses(sentence: str) -> str:
    """The sentence without its clauses (split after `,`, `;`, `:`) that hold a missing value, while one is left."""
    if _MISSING not in sentence:
        return sentence
    kept = [c for c in _clauses(sentence, False) if _MISSING not in c]
    if not _balanced(" ".join(kept)):
        # a dropped clause opened a parenthesis a kept one closes (issue 36: "Warps 12 blocks, the SM 24 blocks):
        # theoretical occupancy …"): drop whole top-level clauses instead
        kept = [c for c in _clauses(sentence, True) if _MISSING not in c]
    if not kept:
        return sentence.replace(_MISSING, "not measured")
    text = " ".join(kept).rstrip(",;: ")
    end = sentence.rstrip()[-1:] if sentence.rstrip()[-1:] in ".!?" else ""
    text = text if text.endswith(end) else text + end
    return text[:1].upper() + text[1:]


def _drop_missing(text: str) -> str:
    """The text with every missing value's clause dropped: first the list item or parenthesis holding it,
    then "of <value>" at the end of a phrase, then its clause of the sentence; a value that is the
    sentence's only clause reads "not measured"."""
    for _ in range(MAX_PLACEHOLDERS):  # innermost groups first; nesting is bounded by the placeholders
        if _MISSING not in text:
            break
        dropped = _GROUP.sub(_group, text)
        if dropped == text:
            break
        text = dropped
    text = _SHARE.sub("an unmeasured share of ", _TRAILING.sub("", text))
    if _MISSING in text:
        text = " ".join(_drop_clauses(s) for s in _SENTENCE.split(text))
    text = text.replace(_MISSING, "not measured")
    return _SENTENCE_START.sub(lambda m: m.group(0).upper(), text)


def format_message(message: str, env: Mapping[str, object], units: Mapping[str, str]) -> str:
    """The message with each placeholder formatted (bounded). A template the loader would refuse
    (too long, unbalanced braces, too many placeholders) is shown as written, never raised. A message
    that is one placeholder shows a missing value as unavailable, like every table cell."""
    if len(message) > MAX_MESSAGE_LENGTH:
        return message[:MAX_MESSAGE_LENGTH]
    try:
        parsed = _fields(message)
    except ValueError:
        return message
    if sum(name is not None for _, name, _, _ in parsed) > MAX_PLACEHOLDERS:
        return message
    if len(parsed) == 1 and not parsed[0][0] and parsed[0][1] is not None:
        return format_value(env.get(parsed[0][1]), units.get(parsed[0][1], ""), parsed[0][2] or "")
    parts = []
    for literal, name, spec, _ in parsed:
        parts.append(literal.replace(_MISSING, "").replace(_ONE, ""))
        if name is not None:
            value = env.get(name)
            if isinstance(value, str):  # a term (a word of advice chosen by the profile): as written
                parts.append(value.replace(_MISSING, "").replace(_ONE, "") or _MISSING)
            else:
                shown = _MISSING if _finite(value) is None else format_value(value, units.get(name, ""), spec or "")
                parts.append(shown + _ONE if shown == "1" and units.get(name) == "count" else shown)
    return _AFTER_ONE.sub(_singular, _drop_missing("".join(parts))).replace(_ONE, "")


def text_placeholders(text: str) -> list[str] | None:
    """The names free text formats (`format_text`): its placeholders when every one is a plain name, else
    None (the text is shown as written)."""
    if "{" not in text and "}" not in text:
        return []
    try:
        parsed = _fields(text)
    except ValueError:
        return None
    if any(name is not None and (not IDENT.match(name) or conversion) for _, name, _, conversion in parsed):
        return None
    return [name for _, name, _, _ in parsed if name is not None]


def format_text(text: str, env: Mapping[str, object], units: Mapping[str, str]) -> str:
    """Free text that may hold placeholders (a recommendation naming `{device_max_smem_per_sm}`): formatted
    like a message when every placeholder is a plain name, else shown as written (literal braces in code)."""
    return text if not text_placeholders(text) else format_message(text, env, units)
