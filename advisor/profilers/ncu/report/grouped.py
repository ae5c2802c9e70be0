"""Rows of the verdicts table that say the same thing, shown once with their count. A launch whose metrics ncu
could not collect carries dozens of near-identical ERR and WRN results ("Rule X returned an error: metric is
NaN", one per rule of `--set full`); a reader needs them once, with the rules and metric names that differ."""

from __future__ import annotations

import re
from collections.abc import Callable

from advisor.profilers.ncu.verdicts import NOT_EVALUATED, Verdict
from advisor.report.document import code, escape

Row = tuple[str, ...]
# a metric name in a message (sm__throughput.avg.pct_of_peak_sustained_elapsed), with any full stop after it
_METRIC = re.compile(r"\b[a-z][a-z0-9]{0,40}__[A-Za-z0-9_.]{1,200}")
INPUT_PATTERNS = {"ncu metric name in a rule message": (_METRIC, ("a__", "a", "."))}
_MASK = "…"
NAMED = 6  # rules or metric names a grouped row names before "and N more"
GROUP_AT = 3  # this many rows saying the same become one (two stay apart: each is read at a glance)


def _masked(verdict: Verdict, metrics: bool = True) -> tuple[str, tuple[str, ...]]:
    """The message with the rule's and section's own ids masked, and any metric name unless `metrics` is false;
    and the metric names it holds."""
    vendor = verdict.vendor
    if vendor is None:
        return "", ()
    text = vendor.message
    for own in (vendor.rule, vendor.section):
        if own:
            text = re.sub(rf"\b{re.escape(own)}\b", _MASK, text)
    if metrics:
        text = _METRIC.sub(lambda m: _MASK + m.group()[len(m.group().rstrip(".")):], text)
    return text, tuple(m.rstrip(".") for m in _METRIC.findall(vendor.message))


def _named(names: list[str]) -> str:
    """Inline Markdown items, the first NAMED of them."""
    more = f" and {len(names) - NAMED} more" if len(names) > NAMED else ""
    return ", ".join(names[:NAMED]) + more


def _distinct(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


def _key(verdict: Verdict, row: Row) -> tuple[str, ...]:
    if verdict.status == NOT_EVALUATED and verdict.vendor is not None:
        return ("unusable", verdict.vendor.type, _masked(verdict)[0], verdict.note)
    return ("row", *row)


def _one_row(key: tuple[str, ...], members: list[tuple[Verdict, Row]], first_sentence: Callable[[str], str]) -> Row:
    first = members[0][1]
    if key[0] == "row":
        return (f"{first[0]} (× {len(members)})", *first[1:])
    rules = _distinct([code(v.vendor.rule) if v.vendor.rule else escape(v.vendor.section)
                       for v, _ in members if v.vendor])
    metrics = _distinct([m for v, _ in members for m in _masked(v)[1]])
    said = key[2] if len(metrics) > 1 else _masked(members[0][0], metrics=False)[0]  # one metric: name it there
    theirs = f"{escape(key[1])} × {len(members)}: {_named(rules)}: {escape(first_sentence(said))}"
    named = f" The metrics ncu named: {_named([code(m) for m in metrics])}." if len(metrics) > 1 else ""
    note = first[4].replace("this rule;", "these rules;")  # verdicts.py's note, said of the group
    return (theirs, *first[1:4], note + named)


def grouped(pairs: list[tuple[Verdict, Row]], first_sentence: Callable[[str], str]) -> list[Row]:
    """The rows in their order, each group of GROUP_AT or more shown once where its first row was: ncu results it
    could not evaluate whose messages differ only in the rule's id or a metric name, and rows that are the same
    cell for cell. `first_sentence(text)` shortens a message as the other rows are."""
    keys = [_key(verdict, row) for verdict, row in pairs]
    groups: dict[tuple[str, ...], list[int]] = {}
    for at, key in enumerate(keys):
        groups.setdefault(key, []).append(at)
    rows: list[Row] = []
    for at, key in enumerate(keys):
        members = groups[key]
        if len(members) < GROUP_AT:
            rows.append(pairs[at][1])
        elif members[0] == at:
            rows.append(_one_row(key, [pairs[i] for i in members], first_sentence))
    return rows
