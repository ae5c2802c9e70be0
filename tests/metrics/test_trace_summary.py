"""The shared trace-summary builder (advisor/metrics/trace_summary.py), on measurements worked out by hand: times
in ns in, seconds out."""

import numpy as np
import pytest

from advisor.core.trace import DMA_SIZE_EDGES, Gap
from advisor.metrics.trace_summary import (
    NS,
    GapRule,
    Group,
    Measured,
    Span,
    build_summary,
    engines,
    idle_gaps,
    size_counts,
    utilisation,
)


def intervals(*pairs):
    return np.array([float(s) for s, _ in pairs]), np.array([float(d) for _, d in pairs])


def test_two_engines_with_overlapping_intervals_each_count_their_union():
    tensor = Group("tensor", "Tensor Engine", ("TensorMatrix", "TensorE"), True,
                   intervals=intervals((0, 100), (50, 100)))  # [0, 150): 150 ns
    vector = Group("vector", "Vector Engine", ("Vector",), True, intervals=intervals((100, 300)))  # 300 ns
    ranked = engines([tensor, vector])
    assert [(e.engine, e.busy) for e, _ in ranked] == [("vector", 300 * NS), ("tensor", 150 * NS)]
    assert ranked[1][0].rows == ("TensorMatrix", "TensorE") and ranked[1][0].compute


def test_a_kinds_own_busy_time_is_kept_and_unrecognised_rows_rank_last_ties_in_the_given_order():
    ranked = engines([Group("", "Mystery", ("Mystery",), False, busy=9.0), Group("b", "B", (), False, busy=1.0),
                      Group("a", "A", (), False, busy=1.0)])
    assert [e.title for e, _ in ranked] == ["B", "A", "Mystery"]
    assert ranked[2][0].busy == 9.0  # seconds, as given: not a union of intervals


def test_the_size_histogram_counts_transfers_per_bin_from_512_bytes_up():
    counts = size_counts(np.array([0.0, 511.0, 512.0, 4095.0, 4096.0, 2.0**30]))
    assert len(counts) == len(DMA_SIZE_EDGES) - 1
    assert counts[0] == 2  # 0 and 511: [0, 512)
    assert counts[1] == 1  # 512: [512, 1024)
    assert counts[3] == 1 and counts[4] == 1  # 4095 closes [2048, 4096); 4096 opens [4096, 8192)
    assert counts[-1] == 1  # 1 GiB: ≥ 1 MiB
    assert sum(counts) == 6
    assert size_counts(()) == (0,) * (len(DMA_SIZE_EDGES) - 1)


def test_utilisation_over_time_is_the_busy_share_of_each_bin_from_the_origin():
    span = Span(length=100.0, origin=1000.0)  # the run starts 1 µs into the trace
    edges, shares = utilisation({"Compute": intervals((0, 25), (50, 50))}, span, bins=4)
    assert edges == pytest.approx((1000 * NS, 1025 * NS, 1050 * NS, 1075 * NS, 1100 * NS))
    assert shares == {"Compute": (1.0, 0.0, 1.0, 1.0)}
    assert utilisation({"Compute": intervals((0, 1))}, Span(0.0), bins=4) == ((), {})  # no span, no bins
    assert utilisation({}, span, bins=4) == ((), {})  # no rows, no bins


def test_a_gap_has_its_start_from_the_traces_zero_and_its_length_in_seconds():
    starts, ends = np.array([10.0, 60.0]), np.array([40.0, 70.0])  # busy [10, 40) and [60, 70) from the origin
    found = idle_gaps((starts, ends), Span(100.0, origin=500.0), GapRule())
    # longest first: 30 ns after the last segment, 20 ns between the two, 10 ns of warm-up
    assert found == (Gap(570 * NS, 30 * NS), Gap(540 * NS, 20 * NS), Gap(500 * NS, 10 * NS))


def test_with_no_work_the_whole_span_is_one_gap_only_when_the_kind_says_so():
    empty = (np.empty(0), np.empty(0))
    assert idle_gaps(empty, Span(100.0, origin=20.0), GapRule(whole_span_when_idle=True)) == (Gap(20 * NS, 100 * NS),)
    assert idle_gaps(empty, Span(100.0), GapRule()) == ()
    assert idle_gaps(empty, Span(0.0), GapRule(whole_span_when_idle=True)) == ()  # no span: no gap
    assert idle_gaps(None, Span(100.0), GapRule(whole_span_when_idle=True)) == ()  # nothing measured


def test_an_instant_splits_a_gap_unless_only_lasting_segments_count():
    segments = (np.array([0.0, 50.0, 90.0]), np.array([10.0, 50.0, 100.0]))  # an instant at 50
    assert idle_gaps(segments, Span(100.0), GapRule()) == (Gap(50 * NS, 40 * NS), Gap(10 * NS, 40 * NS))
    assert idle_gaps(segments, Span(100.0), GapRule(lasting_only=True)) == (Gap(10 * NS, 80 * NS),)


def test_the_summary_puts_it_together_in_seconds():
    compute = Group("compute", "Compute", ("stream 7",), True, intervals=intervals((0, 40)))
    summary = build_summary(Measured(
        events={"kernel": 2, "memcpy": 1}, span=Span(100.0, origin=1000.0), groups=[compute],
        more_rows={"Copies": intervals((60, 20))}, busy_segments=(np.array([0.0, 60.0]), np.array([40.0, 80.0])),
        transfer_sizes=np.array([1024.0]), warnings=("sampled",), skipped={"kernel": 1}, last_event_end=1080.0,
        breakdowns=(None,), busy_union=60 * NS, dma_busy=20 * NS))
    assert summary.span == pytest.approx(100 * NS) and summary.last_event_end == pytest.approx(1080 * NS)
    assert [e.busy for e in summary.engines] == [pytest.approx(40 * NS)]
    assert list(summary.timeline) == ["Compute", "Copies"]  # the engines' rows, then the kind's own
    assert summary.timeline_edges[0] == pytest.approx(1000 * NS) and len(summary.timeline_edges) == 61
    # two gaps of 20 ns, between the segments and after the last; of equal ones, the later first
    assert summary.gaps == (Gap((80 + 1000) * NS, 20 * NS), Gap((40 + 1000) * NS, 20 * NS))
    assert summary.dma_size_counts[2] == 1 and summary.breakdowns == ()
    assert (summary.busy_union, summary.dma_busy, summary.compute_busy) == (60 * NS, 20 * NS, None)
    assert summary.warnings == ("sampled",) and summary.skipped == {"kernel": 1} and summary.facts == {}


def test_gaps_read_early_are_kept_as_they_are():
    early = (Gap(0.0, 1.0),)
    summary = build_summary(Measured(events={}, span=Span(10.0), gaps=early,
                                     busy_segments=(np.array([5.0]), np.array([6.0]))))
    assert summary.gaps == early
