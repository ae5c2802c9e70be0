"""The skeleton places the shared trace blocks where a kind's report.yaml `blocks:` says (report/trace_layout.py)."""

from dataclasses import dataclass, field

import pytest

from advisor.core.errors import AdvisorError
from advisor.core.trace import DMA_SIZE_EDGES, Gap, TraceSummary
from advisor.report.document import Chart, Paragraph, Section, Table
from advisor.report.trace_layout import with_trace_blocks

US = 1e-6
TRACE = TraceSummary(events={"dma": 2}, span=100 * US, engines=(), busy_union=60 * US, dma_size_edges=DMA_SIZE_EDGES,
                     dma_size_counts=(0, 0, 3) + (0,) * 10, timeline_edges=(0.0, 50 * US, 100 * US),
                     timeline={"DMA": (0.5, 0.25)}, gaps=(Gap(40 * US, 20 * US),), warnings=())
GAPS = {"intro": "Nothing runs.", "share": "Share of the run"}
TIMELINE = {"alt": "Utilisation", "section": {"title": "Utilisation over time", "anchor": "timeline",
                                              "intro": "Busy share per bin."}}
SIZES = {"title": "Transfers by size", "alt": "Sizes", "key": "Size", "count": "Transfers", "xlabel": "%"}


@dataclass
class Analysed:  # what the skeleton reads of an analysis: its trace and its metrics
    trace: TraceSummary | None = TRACE
    metrics: dict = field(default_factory=dict)
    kind: str = "rbln"

    def value(self, name):
        return self.metrics.get(name)


def kind_sections():
    return {"utilisation": [Section("Categories", (), "categories")],
            "trace": [Section("Layers", (), "layers"), Section("Data quality", (), "quality")]}


def anchors(parts):
    return {place: [s.anchor for s in sections] for place, sections in parts.items()}


def test_a_block_with_a_place_is_a_section_at_the_end_of_that_place_or_before_the_named_section():
    parts = with_trace_blocks(kind_sections(), Analysed(), {
        "timeline": {**TIMELINE, "place": "utilisation"}, "gaps": {**GAPS, "place": "trace", "before": "quality"}})
    assert anchors(parts) == {"utilisation": ["categories", "timeline"], "trace": ["layers", "gaps", "quality"]}
    timeline = parts["utilisation"][1]
    assert timeline.title == "Utilisation over time"
    assert timeline.blocks[0] == Paragraph("Busy share per bin.") and isinstance(timeline.blocks[1], Chart)


def test_before_a_section_the_kind_does_not_draw_is_the_end_and_a_new_place_is_made():
    parts = with_trace_blocks(kind_sections(), Analysed(), {
        "gaps": {**GAPS, "place": "trace", "before": "warnings"}, "sizes": {**SIZES, "place": "memory", "section": {
            "title": "Transfer sizes", "anchor": "sizes", "intro": "By size."}}})
    assert anchors(parts)["trace"] == ["layers", "quality", "gaps"]
    assert [type(b) for b in parts["memory"][0].blocks] == [Paragraph, Table, Chart]


def test_into_appends_to_the_kinds_section_and_is_left_out_without_it():
    parts = with_trace_blocks(kind_sections(), Analysed(), {
        "timeline": {**TIMELINE, "into": "layers"}, "sizes": {**SIZES, "into": "dma-sizes"}})
    assert anchors(parts) == anchors(kind_sections())  # no section of their own
    assert [type(b) for b in parts["trace"][0].blocks] == [Chart]


def test_needs_a_metric_wording_only_and_no_trace_draw_nothing():
    wording = {"timeline": {**TIMELINE, "place": "utilisation", "needs": "device_busy"}, "gaps": GAPS}
    assert anchors(with_trace_blocks(kind_sections(), Analysed(), wording)) == anchors(kind_sections())
    drawn = with_trace_blocks(kind_sections(), Analysed(metrics={"device_busy": 1.0}), wording)
    assert anchors(drawn)["utilisation"] == ["categories", "timeline"]
    everything = {"timeline": {**TIMELINE, "place": "utilisation"}, "gaps": {**GAPS, "place": "trace"}}
    assert anchors(with_trace_blocks(kind_sections(), Analysed(trace=None), everything)) == anchors(kind_sections())


def test_a_trace_without_bins_or_gaps_gets_no_empty_section():
    quiet = Analysed(trace=TraceSummary(**{**TRACE.__dict__, "timeline": {}, "timeline_edges": (), "gaps": ()}))
    parts = with_trace_blocks(kind_sections(), quiet, {
        "timeline": {**TIMELINE, "place": "utilisation"}, "gaps": {**GAPS, "place": "trace"}})
    assert anchors(parts) == anchors(kind_sections())


def test_a_chart_placed_in_a_section_of_its_own_without_its_heading_is_refused_naming_the_entry():
    with pytest.raises(AdvisorError) as refused:
        with_trace_blocks(kind_sections(), Analysed(), {"timeline": {"alt": "Utilisation", "place": "utilisation"}})
    assert refused.value.where == "profile kind 'rbln' (report.yaml blocks.timeline)"
    assert refused.value.problem == "placed in a section of its own, which needs `section: {title, anchor, intro}`"
