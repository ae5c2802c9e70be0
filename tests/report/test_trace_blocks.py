"""The report blocks trace kinds share (advisor/report/trace_blocks.py), worded by the kind's report.yaml."""

import pytest

from advisor.core.trace import DMA_SIZE_EDGES, Breakdown, BreakdownColumn, Gap, TraceSummary
from advisor.kinds import get
from advisor.report.document import Chart, Section, Table
from advisor.report.trace_blocks import (
    breakdown_table,
    gaps_section,
    roofline_chart,
    roofline_placement,
    size_histogram,
    timeline_chart,
)

US = 1e-6


def trace(**changes) -> TraceSummary:
    fields = {"events": {"instruction": 3, "dma": 2}, "span": 100 * US, "engines": (), "busy_union": 60 * US,
              "dma_size_edges": DMA_SIZE_EDGES, "dma_size_counts": (0, 0, 3, 0, 1) + (0,) * 8,
              "timeline_edges": (0.0, 50 * US, 100 * US), "timeline": {"DMA": (0.5, 0.25)},
              "gaps": (Gap(0.0, 10 * US), Gap(40 * US, 20 * US), Gap(90 * US, 10 * US)), "warnings": (),
              "last_event_end": 90 * US}
    return TraceSummary(**{**fields, **changes})


def gaps(t: TraceSummary, kind: str) -> tuple[Section, Table]:
    """The idle gaps section as `kind` words it, and its table."""
    section = gaps_section(t, get(kind).data("report.yaml")["blocks"]["gaps"])
    assert section is not None
    table = section.blocks[1]
    assert isinstance(table, Table)
    return section, table


def drawn(chart: Chart | None) -> Chart:
    assert chart is not None
    return chart


def test_idle_gaps_say_where_each_is_when_the_kind_names_the_places():
    section, table = gaps(trace(), "neuron")
    assert (section.title, section.anchor) == ("Idle gaps", "gaps")
    assert table.headers == ("Where", "Starts at", "Length", "Share of the run")
    assert [row[0] for row in table.rows] == ["warm-up (before the first event)", "inside the run",
                                              "after the last event"]
    assert table.rows[1][1:] == ("40 µs", "20 µs", "20.00 %")  # of the 100 µs run


def test_idle_gaps_without_places_and_none_without_gaps():
    _, table = gaps(trace(), "rbln")
    assert table.headers == ("Starts at", "Length", "Share of the span")
    assert table.rows[0] == ("0 s", "10 µs", "10.00 %")
    assert gaps_section(trace(gaps=()), get("rbln").data("report.yaml")["blocks"]["gaps"]) is None


def test_timeline_chart_only_with_bins():
    chart = drawn(timeline_chart(trace(), {"alt": "Per-engine utilisation"}))
    assert chart.spec["rows"] == {"DMA": [0.5, 0.25]} and chart.alt == "Per-engine utilisation"
    assert timeline_chart(trace(timeline={}), {"alt": "x"}) is None


def test_size_histogram_keeps_the_empty_bins_between_used_ones():
    table, chart = size_histogram(trace(), get("neuron").data("report.yaml")["blocks"]["sizes"])
    assert [row[:2] for row in table.rows] == [("1 KiB – 2 KiB", "3"), ("2 KiB – 4 KiB", "0"), ("4 KiB – 8 KiB", "1")]
    assert chart.spec["values"] == [75.0, 0.0, 25.0]  # % of the 4 transfers


@pytest.mark.parametrize("values", [(0.0, 1e9, 2.0, 1e9), (1e12, float("inf"), 2.0, 1e9), (1e12, 1e9, None, 1e9)])
def test_no_roofline_chart_without_four_finite_non_zero_figures(
        values: tuple[float | None, float | None, float | None, float | None]) -> None:
    assert roofline_chart(*values, {"title": "Roofline"}) is None


def test_roofline_placement_and_chart():
    wording = {"ridge": "a ridge point", "title": "Roofline (FP32 peak)"}
    assert roofline_placement(2.0, 10.0, "2 FLOP/B", "10 FLOP/B", wording) == (
        "Arithmetic intensity **2 FLOP/B** against a ridge point of 10 FLOP/B: the memory-bound side of the roofline.")
    assert roofline_placement(None, 10.0, "", "", wording) is None
    chart = drawn(roofline_chart(1e12, 1e11, 2.0, 1e11, wording))
    assert chart.title == "Roofline (FP32 peak)" and chart.spec["ai"] == 2.0  # FLOP/B


def test_a_breakdown_table_shows_each_column_in_its_unit():
    b = Breakdown("hotspots_hlo", "Hotspots", "HLO op", (BreakdownColumn("time", "Instruction time", "s"),
                                                         BreakdownColumn("count", "Instructions", "count")),
                  (("%dot.1", (7.2e-6, 1600.0)),))
    table = breakdown_table(b, key_as_code=True)
    assert table.headers == ("HLO op", "Instruction time", "Instructions")
    assert table.rows == (("`%dot.1`", "7.2 µs", "1,600"),)


def test_size_histogram_keeps_its_last_used_bin_even_the_open_ended_one():
    """The histogram runs to the last bin used, inclusive: the ≥ 1 MiB bin when it is that one (review 4 §4.4 R2)."""
    wording = get("neuron").data("report.yaml")["blocks"]["sizes"]
    only_last, _ = size_histogram(trace(dma_size_counts=(0,) * 12 + (2,)), wording)
    assert only_last.rows == (("≥ 1 MiB", "2", "100.00 %"),)
    both_ends, chart = size_histogram(trace(dma_size_counts=(1,) + (0,) * 11 + (3,)), wording)
    assert len(both_ends.rows) == 13 and both_ends.rows[0][:2] == ("0 – 512 B", "1")
    assert both_ends.rows[-1][:2] == ("≥ 1 MiB", "3") and chart.spec["values"][-1] == 75.0


def test_no_gap_is_after_the_last_event_when_its_end_is_unknown():
    """Where the trace does not know when its last event ended, a gap past the start is inside the run, never
    "after the last event" (review 4 §4.4 R1: the place of a gap)."""
    _, table = gaps(trace(last_event_end=None), "neuron")
    assert [row[0] for row in table.rows] == ["warm-up (before the first event)", "inside the run", "inside the run"]
    _, late = gaps(trace(last_event_end=30 * US), "neuron")  # both later gaps start past its end
    assert [row[0] for row in late.rows] == ["warm-up (before the first event)", "after the last event",
                                             "after the last event"]
