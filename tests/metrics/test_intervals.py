"""The interval algebra every event-trace kind uses, on intervals whose answers are worked out by hand."""

import numpy as np
import pytest

from advisor.metrics.intervals import concat, covered, gaps, intersect, segments, timeline, union, usable


def test_usable_drops_negative_and_non_finite_events():
    start, duration, keep = usable(np.array([0.0, -1.0, 5.0, np.nan]), np.array([1.0, 1.0, -2.0, 1.0]))
    assert start.tolist() == [0.0] and duration.tolist() == [1.0] and keep.tolist() == [True, False, False, False]


def test_union_counts_overlaps_once_and_merges_touching_segments():
    start, duration = np.array([10.0, 0.0, 5.0, 30.0]), np.array([10.0, 10.0, 2.0, 5.0])
    assert union(start, duration) == 25.0  # [0, 20) and [30, 35)
    starts, ends = segments(start, duration)
    assert starts.tolist() == [0.0, 30.0] and ends.tolist() == [20.0, 35.0]
    assert union(np.empty(0), np.empty(0)) == 0.0


def test_segments_of_nested_intervals():
    starts, ends = segments(np.array([0.0, 2.0, 3.0]), np.array([10.0, 1.0, 1.0]))
    assert starts.tolist() == [0.0] and ends.tolist() == [10.0]


def test_concat_then_union_is_the_union_of_all():
    a = (np.array([0.0]), np.array([10.0]))
    b = (np.array([5.0]), np.array([10.0]))
    assert union(*concat([a, b])) == 15.0
    assert len(concat([])[0]) == 0


def test_timeline_counts_overlaps_once():
    start = np.array([0.0, 0.0, 50.0])  # two overlapping intervals in the first half, one in the second
    duration = np.array([50.0, 50.0, 25.0])
    edges, rows = timeline({"DMA": (start, duration)}, 100.0, 60)
    busy = rows["DMA"]
    assert len(edges) == len(busy) + 1 == 61 and edges[-1] == 100.0
    half = len(busy) // 2
    assert all(b == pytest.approx(1.0) for b in busy[:half])  # not 2.0: overlap counted once
    assert sum(busy[half:]) * (100.0 / len(busy)) == pytest.approx(25.0)


def test_gaps_warm_up_longest_inside_and_tail():
    merged = np.array([10.0, 25.0, 60.0]), np.array([20.0, 30.0, 70.0])
    # longest first, the window's head and tail among them (of equal ones the later first)
    assert gaps(*merged, 100.0) == [(70.0, 30.0), (30.0, 30.0), (0.0, 10.0), (20.0, 5.0)]
    assert gaps(*merged, 70.0) == [(30.0, 30.0), (0.0, 10.0), (20.0, 5.0)]  # the run ends with the last event
    assert gaps(*merged, 100.0, longest=1) == [(70.0, 30.0), (30.0, 30.0), (0.0, 10.0)]
    assert gaps(np.empty(0), np.empty(0), 100.0) == []


def test_gaps_of_equal_length_the_later_first():
    starts, ends = np.array([0.0, 10.0, 20.0, 30.0]), np.array([5.0, 15.0, 25.0, 35.0])
    assert gaps(starts, ends, 35.0, longest=2) == [(25.0, 5.0), (15.0, 5.0)]


def test_intersect_keeps_what_both_sets_cover_and_not_where_they_only_touch():
    a = (np.array([0.0, 10.0, 30.0]), np.array([5.0, 20.0, 40.0]))
    b = (np.array([3.0, 20.0, 35.0]), np.array([12.0, 30.0, 50.0]))  # touches [10, 20) at 20 and [30, 40) at 30
    start, end = intersect(*a, *b)
    assert start.tolist() == [3.0, 10.0, 35.0] and end.tolist() == [5.0, 12.0, 40.0]
    assert intersect(*a, np.empty(0), np.empty(0))[0].size == 0


def test_covered_is_the_length_up_to_each_point():
    points = np.array([-1.0, 2.0, 7.0, 12.0, 100.0])
    assert covered(np.array([0.0, 10.0]), np.array([5.0, 20.0]), points).tolist() == [0.0, 2.0, 5.0, 7.0, 15.0]
    assert covered(np.empty(0), np.empty(0), points).tolist() == [0.0] * 5
