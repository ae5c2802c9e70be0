"""The report's appendix: the data notes, near-identical ones grouped, and the profile's fields as read.

Most kinds list every field. A kind whose exports carry far more fields than advisor reads (report.yaml
`raw_appendix: used`: an Nsight Compute launch has 1,100+ metrics, two thirds of a PDF) lists only the fields
this report used, and points to the analysis JSON, which keeps them all. A field is used when:
- a section of the report looked it up: the document is built on an analysis whose metrics and text fields note
  every lookup (`watch`), so the sections need no list of their own;
- a fired rule's condition read it (the finding's evidence), a time-budget bound or the investigation read it, or
  the cross-checks table shows it;
- a rule pack declares it as an input: its rules and derived metrics read only declared inputs, fired or not (the
  analysis records what fired rules read, not what passed ones read); a declared input carries the pack's
  description, which a field the packs never read lacks;
- a derived metric that is used reads it (its inputs, down to the profile's fields).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from dataclasses import replace
from typing import Generic, TypeVar

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.kinds import get as get_kind
from advisor.report.document import CodeBlock, Paragraph, Section, code, escape

V = TypeVar("V")


class Reads(Mapping[str, V], Generic[V]):
    """A read-only mapping that notes the keys looked up (`[]`, `get`, `in`); iterating notes nothing, so a
    section that walks every metric to pick some does not mark them all."""

    __slots__ = ("_data", "names")

    def __init__(self, data: Mapping[str, V]):
        self._data = data
        self.names: set[str] = set()

    def __getitem__(self, key: str) -> V:
        self.names.add(key)
        return self._data[key]

    def get(self, key: str, default: V | None = None) -> V | None:  # type: ignore[override]
        self.names.add(key)
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.names.add(key)
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> KeysView[str]:
        return self._data.keys()

    def values(self) -> ValuesView[V]:
        return self._data.values()

    def items(self) -> ItemsView[str, V]:
        return self._data.items()


def lists_used(analysis: Analysis) -> bool:
    """Whether the kind's appendix lists only the fields used (report.yaml `raw_appendix`)."""
    return get_kind(analysis.kind).data("report.yaml").get("raw_appendix", "all") == "used"


def watch(analysis: Analysis) -> Analysis:
    """The analysis with its metrics and text fields noting each lookup (see `Reads`)."""
    return replace(analysis, metrics=Reads(analysis.metrics), info=Reads(analysis.info))


def _noted(mapping: Mapping[str, object]) -> set[str]:
    return mapping.names if isinstance(mapping, Reads) else set(mapping)


def used_fields(analysis: Analysis, watched: Analysis) -> tuple[set[str], set[str]]:
    """(metric names, text field names) the report used; `watched` is `watch(analysis)` after the sections
    were built on it."""
    metrics = analysis.metrics
    seeds = set(_noted(watched.metrics))
    for finding in analysis.findings:
        seeds.update(finding.evidence)
    for bound in analysis.bounds:
        seeds.update(bound.inputs)
    for missing in analysis.not_applicable:
        seeds.update(missing.missing)
    inv = analysis.investigation
    if inv is not None:
        seeds.update(e.metric for e in inv.expectations)
        seeds.update(n for h in inv.hypotheses for n in h.evidence)
    seeds.update(n for n, m in metrics.items() if m.check is not None or (m.source == "reported" and m.description))
    used: set[str] = set()
    pending = list(seeds)
    while pending:
        name = pending.pop()
        if name in used:
            continue
        used.add(name)
        metric = metrics.get(name)
        if metric is not None and (metric.source != "reported" or metric.check is not None):
            pending.extend(metric.inputs)  # a derived value, or a reported one the cross-checks recompute
    return used, _noted(watched.info) & set(analysis.info)


def _plain_number(value: float | None) -> float | int | None:
    """Integral values as integers, as the profiler wrote them (18935, not 18935.0)."""
    if value is not None and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def raw_section(analysis: Analysis, used: tuple[set[str], set[str]] | None = None) -> Section:
    """Every reported field and text field; with `used`, only those, and a line saying where the rest are."""
    reported = {n: m for n, m in analysis.metrics.items() if m.source == "reported"}
    info = dict(sorted(analysis.info.items()))
    intro = ("The fields as read, in machine units (seconds, bytes, FLOPs; `*_percent` as fractions 0..1; "
             "null = unavailable).")
    if used is not None:
        names, texts = used
        total = len(reported) + len(info)
        reported = {n: m for n, m in reported.items() if n in names}
        info = {k: v for k, v in info.items() if k in texts}
        shown = len(reported) + len(info)
        if shown < total:
            intro = (f"The {fmt.count(shown)} of the profile's {fmt.count(total)} fields that advisor's rules and "
                     "this report's sections read, as read, in machine units (seconds, bytes, FLOPs; `*_percent` "
                     "as fractions 0..1; null = unavailable). All of them are in the analysis JSON: "
                     f"{code(f'advisor report {shlex.quote(analysis.source.path)} -o analysis.json')}.")
    data = {**{n: _plain_number(m.value) for n, m in reported.items()}, **info}
    text = json.dumps(data, indent=2, ensure_ascii=False).replace("```", "'''")
    anchor = "raw-used" if used is not None else "raw"  # the HTML styles the shorter list in two columns
    return Section("Raw profile data", (Paragraph(intro), CodeBlock(text, "json")), anchor)


FIELD_LIMIT = 300  # characters of a field name in a note ("<field>: <what was done>", as conventions word them)
GROUP_AT = 3  # this many notes saying the same of different fields become one bullet
NAMED = 4  # fields a grouped bullet names; the analysis JSON has every note


def grouped_notes(notes: tuple[str, ...]) -> tuple[str, ...]:
    """The notes as bullets; notes that say the same of several fields (a .ncu-rep: 40 fields whose unit advisor
    does not know) become one bullet, where the first of them was, with the count and the fields named."""
    split = [_field_note(note) for note in notes]
    fields: dict[str, list[str]] = {}
    for field, said in split:
        if field:
            fields.setdefault(said, []).append(field)
    bullets: list[str] = []
    for note, (field, said) in zip(notes, split, strict=True):
        names = fields.get(said, []) if field else []
        if len(names) < GROUP_AT:
            bullets.append(escape(note))
        elif names[0] == field:
            named = ", ".join(code(n) for n in names[:NAMED])
            more = f" and {len(names) - NAMED} more" if len(names) > NAMED else ""
            bullets.append(f"{len(names)} fields ({named}{more}): {escape(said)}")
    return tuple(bullets)


def _field_note(note: str) -> tuple[str, str]:
    """("<field>", "<what was done>") of a note about one field, or ("", note)."""
    field, colon, said = note.partition(": ")
    if colon and said and 0 < len(field) <= FIELD_LIMIT and not any(c.isspace() for c in field):
        return field, said
    return "", note
