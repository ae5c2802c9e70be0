"""Interval unions per group (metrics/grouped.py): exact against a brute-force union, groups never mixed,
one group without offsets, and point coverage of merged segments. Times in ns."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.metrics.grouped import covered, end_order, ordered, segments, union


def brute_union(start, duration) -> float:
    """Covered length of the intervals, one at a time."""
    total, reach = 0.0, -np.inf
    for a, b in sorted(zip(start.tolist(), (start + duration).tolist(), strict=True)):
        total += max(0.0, b - max(a, reach))
        reach = max(reach, b)
    return total


def test_end_order_keeps_each_end_once_bit_for_bit():
    start = np.array([0.0, 1.0, 2.0, 3.0])
    duration = np.array([10.0, 1.0, 0.5, 4.0])
    rank, ends = end_order(start, duration)
    assert ends.tolist() == [2.0, 2.5, 7.0, 10.0]  # ns, ascending
    assert ends[rank].tolist() == (start + duration).tolist() and rank.dtype == np.int32


def test_union_per_group_counts_overlaps_once_and_groups_apart():
    # group 0: [0, 10) ∪ [5, 12) = 12 ns; group 1: [3, 4) ∪ [11, 20) = 10 ns (it overlaps group 0 in time:
    # the groups must not merge with each other)
    start = np.array([0.0, 3.0, 5.0, 11.0])
    duration = np.array([10.0, 1.0, 7.0, 9.0])
    table = ordered(start, duration)
    rows = np.arange(4, dtype=np.int32)
    assert union(table, rows, np.array([0, 1, 0, 1]), 2).tolist() == [12.0, 10.0]
    a, b, g = segments(table, rows, np.array([0, 1, 0, 1]))
    assert (a.tolist(), b.tolist(), g.tolist()) == ([0.0, 3.0, 11.0], [12.0, 4.0, 20.0], [0, 1, 1])


def test_one_group_and_empty_rows():
    start, duration = np.array([0.0, 2.0, 8.0]), np.array([5.0, 1.0, 2.0])
    table = ordered(start, duration)
    rows = np.arange(3, dtype=np.int32)
    assert union(table, rows, np.full(3, 3), 4).tolist() == [0.0, 0.0, 0.0, 7.0]  # ns in group 3 only
    empty = np.zeros(0, dtype=np.int32)
    assert union(table, empty, empty, 2).tolist() == [0.0, 0.0]
    assert union(table, empty, empty, 0).tolist() == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_groups_match_the_brute_force_union(seed):
    rng = np.random.default_rng(seed)
    n, groups = 500, 7
    start = np.sort(np.round(rng.uniform(0, 2000, n)))
    duration = np.round(rng.uniform(0, 80, n))
    group = rng.integers(0, groups, n)
    keep = rng.random(n) < 0.8
    table = ordered(start, duration)
    rows = np.flatnonzero(keep).astype(np.int32)
    got = union(table, rows, group[rows], groups)
    for g in range(groups):
        chosen = keep & (group == g)
        assert got[g] == pytest.approx(brute_union(start[chosen], duration[chosen]))


def test_covered_points_of_merged_segments():
    starts, ends = np.array([0.0, 10.0]), np.array([5.0, 12.0])
    x = np.array([-1.0, 0.0, 4.9, 5.0, 9.0, 10.0, 11.5, 12.0])
    assert covered(x, starts, ends).tolist() == [False, True, True, False, False, True, True, False]
