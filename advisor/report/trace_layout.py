"""The shared trace blocks placed in the report by the skeleton, not by each kind: utilisation over time, the
idle gaps and the transfer-size histogram (report/trace_blocks.py), drawn from the analysis' trace summary
wherever the kind's data/report.yaml `blocks:` entry says. A kind's report module adds only its own sections.

Each entry's place, beside its wording:
- `place: <a report place>`: a section of its own at the end of that place's sections, or `before: <anchor>`
  one of the kind's sections there (at the end when the kind draws no such section); a block that is not a
  section already (the timeline chart) gets `section: {title, anchor, intro}`;
- `into: <anchor>`: at the end of that one of the kind's sections (left out when the kind draws none);
- `needs: <metric>`: drawn only when the analysis has that metric (a trace whose busy times are a sample's
  has no idle gaps to show).
An entry with neither `place` nor `into` is wording only: a kind that draws the block itself reads it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis
from advisor.core.trace import TraceSummary
from advisor.report.document import Block, Paragraph, Section
from advisor.report.trace_blocks import gaps_section, size_histogram, timeline_chart


def _timeline(t: TraceSummary, wording: Mapping[str, Any]) -> Section | tuple[Block, ...]:
    chart = timeline_chart(t, wording)
    return (chart,) if chart else ()


def _gaps(t: TraceSummary, wording: Mapping[str, Any]) -> Section | tuple[Block, ...]:
    return gaps_section(t, wording) or ()


def _sizes(t: TraceSummary, wording: Mapping[str, Any]) -> Section | tuple[Block, ...]:
    return size_histogram(t, wording)


# The blocks the skeleton draws, in the order it places them: name -> what it draws from the summary (a section
# of its own, or blocks; nothing when the summary has none)
DRAWN: dict[str, Callable[[TraceSummary, Mapping[str, Any]], Section | tuple[Block, ...]]] = {
    "timeline": _timeline, "gaps": _gaps, "sizes": _sizes}


def _as_section(drawn: Section | tuple[Block, ...], wording: Mapping[str, Any], where: str) -> Section:
    """A section as it is; blocks under the entry's `section:` heading, after its intro."""
    if isinstance(drawn, Section):
        return drawn
    head = wording.get("section")
    if not isinstance(head, Mapping):  # kinds.check cannot tell: only a drawn block is known not to be a section
        raise AdvisorError(where, "placed in a section of its own, which needs `section: {title, anchor, intro}`")
    return Section(head["title"], (Paragraph(head["intro"]), *drawn), head["anchor"])


def _placed(sections: list[Section], drawn: list[Section], before: str | None) -> list[Section]:
    at = next((i for i, s in enumerate(sections) if before is not None and s.anchor == before), len(sections))
    return [*sections[:at], *drawn, *sections[at:]]


def _into(sections: list[Section], anchor: str, blocks: tuple[Block, ...]) -> list[Section]:
    return [replace(s, blocks=(*s.blocks, *blocks)) if s.anchor == anchor else s for s in sections]


def with_trace_blocks(parts: Mapping[str, Sequence[Section]], analysis: Analysis,
                      entries: Mapping[str, Any]) -> dict[str, list[Section]]:
    """The kind's sections by place, with the shared trace blocks its report.yaml `blocks:` (`entries`) places."""
    out = {place: list(sections) for place, sections in parts.items()}
    t = analysis.trace
    if t is None:
        return out
    for name, draw in DRAWN.items():
        wording = entries.get(name) or {}
        needs = wording.get("needs")
        if not ("place" in wording or "into" in wording) or (needs and analysis.value(needs) is None):
            continue
        drawn = draw(t, wording)
        if "into" in wording:
            blocks = drawn.blocks if isinstance(drawn, Section) else drawn
            for place, sections in out.items():
                out[place] = _into(sections, wording["into"], blocks)
        elif drawn:
            section = _as_section(drawn, wording, f"profile kind '{analysis.kind}' (report.yaml blocks.{name})")
            out[wording["place"]] = _placed(out.get(wording["place"], []), [section], wording.get("before"))
    return out
