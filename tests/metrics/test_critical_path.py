"""The critical path (metrics/critical_path.py) over any table of events: same-track order plus flows,
walking back along the last arrival; the path's event time and waits add up to its length. Times in ns."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from advisor.metrics.critical_path import critical_path, flow_rows


@dataclass(frozen=True)
class Events:
    """The smallest PathTable: rows sorted by start."""

    start: Any
    duration: Any
    track: Any
    ident: Any = None

    def __len__(self) -> int:
        return len(self.start)

    def end(self, rows: Any = None) -> Any:
        ends = self.start + self.duration
        return ends if rows is None else ends[rows]


def events(rows: list[tuple[float, float, int]], ids: list[int] | None = None) -> Events:
    start, duration, track = (np.array(c) for c in zip(*rows, strict=True))
    return Events(start.astype(float), duration.astype(float), track.astype(np.int32),
                  None if ids is None else np.array(ids, dtype=np.int64))


def test_a_launch_then_a_kernel_through_a_flow():
    # a CPU launch [0, 2) on track 0 starts a kernel [5, 15) on track 1; a longer CPU op [3, 13) on track 0
    # ends before the kernel: the path is launch -> kernel, with 3 ns of waiting between them
    t = events([(0, 2, 0), (3, 10, 0), (5, 10, 1)], ids=[10, 11, 12])
    path = critical_path(t, np.ones(3, dtype=bool), (np.array([10]), np.array([12])))
    assert path is not None
    assert path.rows.tolist() == [0, 2]
    assert path.time.tolist() == [2.0, 10.0] and path.wait == 3.0  # ns
    assert float(path.time.sum()) + path.wait == 15.0  # the path's length: first start to last end


def test_without_flows_the_path_follows_the_last_track():
    t = events([(0, 4, 0), (1, 2, 1), (5, 5, 1), (6, 1, 0)])
    path = critical_path(t, np.ones(4, dtype=bool), None)
    assert path is not None and path.rows.tolist() == [1, 2]  # track 1 ends last (10 ns)
    assert path.time.tolist() == [2.0, 5.0] and path.wait == 2.0


def test_the_latest_arrival_wins_and_masked_rows_are_not_nodes():
    # the kernel [10, 14) has two predecessors by flow: [0, 9) and [2, 6); the later-ending one is on the path
    t = events([(0, 9, 0), (2, 4, 1), (10, 4, 2)], ids=[1, 2, 3])
    flows = (np.array([1, 2]), np.array([3, 3]))
    path = critical_path(t, np.ones(3, dtype=bool), flows)
    assert path is not None and path.rows.tolist() == [0, 2]
    without_first = critical_path(t, np.array([False, True, True]), flows)
    assert without_first is not None and without_first.rows.tolist() == [1, 2]
    assert critical_path(t, np.zeros(3, dtype=bool), flows) is None


@pytest.mark.parametrize("offset", [2**32, -2**40])
def test_flow_ids_beyond_32_bits_match_exactly(offset):
    t = events([(0, 1, 0), (2, 1, 1), (4, 1, 2)], ids=[offset, offset + 1, 2**32 * 3 + 1])
    pred, succ = flow_rows(t, (np.array([offset, 1 + offset, 1]), np.array([1 + offset, 2**32 * 3 + 1, 2])))
    assert pred.tolist() == [0, 1, -1] and succ.tolist() == [1, 2, -1]  # id 1 agrees only in the low 32 bits
    empty = flow_rows(events([(0, 1, 0)]), (np.array([1]), np.array([2])))  # a table without ids
    assert [e.tolist() for e in empty] == [[], []]


def _reference(t: Events, nodes: Any, flows: Any) -> tuple[list[int], list[float], float]:
    """The path by its definition, one edge at a time: each row's predecessor is the edge's end that ends
    latest, of equal ends the later edge (same-track edges by track, then flows in their order)."""
    rows = [int(r) for r in np.flatnonzero(nodes)]
    ends = t.end()
    edges = []
    for track in sorted({int(t.track[r]) for r in rows}):
        on = [r for r in rows if t.track[r] == track]
        edges += list(pairwise(on))
    row_of: dict[int, int] = {}
    for r in range(len(t)):
        row_of.setdefault(int(t.ident[r]), r)  # an id's first row
    for a, b in zip(*flows, strict=True) if flows is not None else ():
        edges.append((row_of.get(int(a), -1), row_of.get(int(b), -1)))
    best: dict[int, int] = {}
    for a, b in edges:
        if 0 <= a < b and nodes[a] and nodes[b] and (b not in best or ends[a] >= ends[best[b]]):
            best[b] = a
    v = max(rows, key=lambda r: (ends[r], -r))  # the first row that ends last
    chain = [v]
    while chain[-1] in best:
        chain.append(best[chain[-1]])
    chain.reverse()
    start, end = t.start[chain], ends[chain]
    after = np.minimum.accumulate(np.append(start[1:], end[-1])[::-1])[::-1]
    return chain, np.clip(np.minimum(end, after) - start, 0, None).tolist(), float(np.clip(after - end, 0, None).sum())


@pytest.mark.parametrize("tracks", [3, 80])  # a track at a time, or one sort by track (more than FEW_TRACKS)
def test_the_path_is_its_definition_on_random_tables_with_ties(tracks):
    rng = np.random.default_rng(tracks)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        t = Events(np.sort(rng.integers(0, 40, n)).astype(float), rng.integers(0, 15, n).astype(float),
                   rng.integers(0, tracks, n).astype(np.int16),
                   (rng.permutation(2 * n)[:n] if rng.random() < 0.5 else rng.integers(-3, 10**6, n)).astype(np.int64))
        nodes = rng.random(n) < 0.8
        pool = np.concatenate([t.ident, [-7, 2**40]])
        flows = tuple(pool[rng.integers(0, len(pool), 2 * n)] for _ in range(2)) if rng.random() < 0.9 else None
        path = critical_path(t, nodes, flows)
        if not nodes.any():
            assert path is None
            continue
        rows, time, wait = _reference(t, nodes, flows)
        assert path is not None and path.rows.tolist() == rows and path.time.tolist() == time and path.wait == wait
