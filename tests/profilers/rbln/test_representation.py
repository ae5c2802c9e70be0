"""How an RBLN trace is held in memory (issue 26: a 500 MB trace analysed under 500 MiB). The event tables
are views of one copy of each column, in narrow types; bytes and cycles are kept only for the tables that
carry them; the event analysis sorts the trace's own columns in place (no second copy) and gives them back;
every batched or filtered shortcut gives exactly the figures of the plain computation."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
from tests_support import SAMPLES

from advisor.metrics import grouped
from advisor.metrics.grouped import ordered, segments
from advisor.profilers.rbln import busy, events, slices
from advisor.profilers.rbln.adapters import load_trace


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    sys.path.insert(0, str(SAMPLES))
    try:
        from make_rbln_samples import write_large_trace  # the benchmark's generator, at 3 MB
    finally:
        sys.path.remove(str(SAMPLES))
    path = tmp_path_factory.mktemp("rbln") / "large.pb"
    write_large_trace(path, 3_000_000, 0)
    return load_trace(path, 1)


def test_the_tables_are_narrow_views_of_one_copy_of_each_column(profile):
    trace = profile.trace
    columns = trace.extra["columns"]
    assert columns["ident"].dtype == np.int32 and columns["name"].dtype == np.int32  # ids and name codes
    assert np.asarray(trace.tables["host"].name.names._table.ends).dtype == np.int32  # name offsets
    assert all(a.dtype == np.int32 for a in trace.extra["flows"])  # flow edges: slice ids
    at = 0
    for table in trace.tables.values():
        for view, key in ((table.start, "start"), (table.duration, "duration"), (table.name.codes, "name"),
                          (table.extra["id"], "ident")):
            assert np.shares_memory(view, columns[key]) and view.base is not None, key
        for key in ("track", "device", "chiplet"):
            codes = table.track.codes if key == "track" else table.extra[key].codes
            assert codes.dtype == np.int8  # a few labels: a byte a slice
        at += len(table)
    assert at == len(columns["start"])


def test_bytes_and_cycles_are_kept_only_where_tables_carry_them(profile):
    tables = profile.trace.tables
    assert tables["host"].bytes is None and tables["neural_engine"].bytes is None
    assert all(t.extra["cycles"] is None for key, t in tables.items() if key != "neural_engine")
    assert np.isfinite(tables["neural_engine"].extra["cycles"]).all() and np.isfinite(tables["task_dma"].bytes).all()
    kept = profile.trace.extra["columns"]["bytes"]
    assert len(kept.values) < len(profile.trace.extra["columns"]["start"]) and kept.start > 0  # not one per slice


def test_the_analysis_sorts_the_trace_in_place_gives_it_back_and_measures_as_a_copy_would(profile, monkeypatch):
    trace = profile.trace
    before = {key: (t.start.copy(), t.duration.copy(), t.name.codes.copy(), t.extra["id"].copy())
              for key, t in trace.tables.items()}
    seen = []
    analyse = events._summarize

    def spy(trace_, s, skipped, total_time):
        columns = trace.extra["columns"]
        seen.append(all(np.shares_memory(getattr(s, attr), columns[key]) for attr, key in
                        (("start", "start"), ("duration", "duration"), ("name", "name"), ("ident", "ident"))))
        seen.append(isinstance(s.bytes, slices.Gathered) and isinstance(s.cycles, slices.Gathered))
        return analyse(trace_, s, skipped, total_time)

    monkeypatch.setattr(events, "_summarize", spy)
    summary, metrics = events.summarize(trace, profile.values["total_time"])
    assert seen == [True, True]  # the trace's own columns, not a copy of them
    for key, t in trace.tables.items():  # given back: the tables read as before
        assert all(np.array_equal(a, b) for a, b in zip(before[key], (t.start, t.duration, t.name.codes,
                                                                      t.extra["id"]), strict=True))
    copied = dataclasses.replace(trace, tables={key: dataclasses.replace(t, start=t.start.copy())
                                                for key, t in trace.tables.items()})
    assert slices.lent_parts(copied) is None  # not the reader's layout: the analysis copies the usable rows
    monkeypatch.setattr(events, "_summarize", analyse)
    assert events.summarize(copied, profile.values["total_time"]) == (summary, metrics)
    assert events.summarize(trace, profile.values["total_time"]) == (summary, metrics)


@pytest.mark.parametrize("fails", ["_finish", "release_heap"])
def test_a_failure_after_the_in_place_sort_leaves_the_trace_as_it_was(profile, monkeypatch, fails):
    trace = profile.trace
    columns = trace.extra["columns"]
    before = {key: columns[key].copy() for key in slices.BORROWED}

    def out_of_memory(*args):
        raise MemoryError

    monkeypatch.setattr(slices if fails == "_finish" else events, fails, out_of_memory)
    with pytest.raises(MemoryError):
        events.summarize(trace, profile.values["total_time"])
    assert all(np.array_equal(columns[key], before[key]) for key in slices.BORROWED)


def _table(rng, n):
    start = np.sort(rng.uniform(0, 1000, n).round(int(rng.integers(0, 3))))
    return ordered(start, rng.exponential(rng.choice([1, 10, 100]), n).round(int(rng.integers(0, 3))))


def test_batched_unions_are_the_plain_unions_bit_for_bit(monkeypatch):
    rng = np.random.default_rng(11)
    for _ in range(300):
        t = _table(rng, int(rng.integers(0, 300)))
        monkeypatch.setattr(grouped, "BATCH", int(rng.integers(1, 40)))
        mask = rng.random(len(t.start)) < rng.random()
        rows = np.flatnonzero(mask)
        assert np.array_equal(grouped.rows_of(mask), rows) and grouped.rows_of(mask).dtype == np.int32
        merged = segments(t, rows, np.zeros(len(rows), dtype=np.int64))
        one = grouped.one_group_segments(t, rows)
        assert merged[0].tobytes() == one[0].tobytes() and merged[1].tobytes() == one[1].tobytes()
        groups = int(rng.integers(1, 8))
        key = rng.choice(groups, len(rows), p=rng.dirichlet(np.ones(groups) * 0.3))
        at_once = grouped._union_at_once(t, rows, key, groups)
        assert at_once.tobytes() == grouped.union(t, rows, key, groups).tobytes()


def test_sequence_pairs_from_a_table_are_np_unique():
    from advisor.profilers.rbln.sequences import _pairs

    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 500))
        inst = rng.integers(-1, 3, n).astype(np.int8)
        seq = rng.integers(0, int(rng.choice([5, 50, 10**6])), n).astype(np.int32)  # dense, or sparse: np.unique
        uniq, first, inverse = _pairs(inst, seq)
        want, want_first, want_inverse = np.unique(np.column_stack([inst, seq]).astype(np.int64), axis=0,
                                                   return_index=True, return_inverse=True)
        assert np.array_equal(uniq, want) and np.array_equal(first, want_first)
        assert np.array_equal(inverse, want_inverse.ravel())


def test_host_split_over_host_edges_only_is_the_split_over_all_edges():
    from advisor.metrics.grouped import covered
    from advisor.metrics.intervals import segments as merge

    def every_edge(s, host, dev, qs, qe):  # the computation over every edge, as it was
        h_start, h_end = busy.merged(s, host)
        d_start, d_end = busy.merged(s, dev)
        q_start, q_end = merge(qs, qe - qs)
        edges = np.unique(np.concatenate([h_start, h_end, d_start, d_end, q_start, q_end]))
        left, width = edges[:-1], np.diff(edges)
        exposed = covered(left, h_start, h_end) & ~covered(left, d_start, d_end)
        inside = covered(left, q_start, q_end)
        return [float(width[x].sum()) * events.NS for x in (exposed, exposed & inside, exposed & ~inside)]

    rng = np.random.default_rng(5)
    for _ in range(200):
        t = _table(rng, int(rng.integers(1, 200)))
        host = rng.random(len(t.start)) < 0.3
        host[0] = True  # no host time: every figure unavailable, before any edge
        dev = ~host & (rng.random(len(t.start)) < 0.9)
        qs = np.sort(rng.uniform(0, 1000, 3).round())
        qe = qs + rng.uniform(0, 300, 3).round()
        got = events._host_split(t, host, dev, qs, qe)
        assert [got["host_exposed_time"], got["host_in_sequence_time"],
                got["host_between_sequences_time"]] == every_edge(t, host, dev, qs, qe)
