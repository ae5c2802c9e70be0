"""Decoding in worker processes gives exactly what one process gives: byte ranges cut anywhere between
packets, slices open across a cut, interned names defined in an earlier range, flows across ranges."""

from __future__ import annotations

import random

import pytest

from advisor.inputs.perfetto import reader
from advisor.profilers.rbln.adapters import load_trace, read


def table_values(profile) -> dict:
    out = {}
    for key, t in profile.trace.tables.items():
        out[key] = [t.start.tolist(), t.duration.tolist(), t.bytes is None or t.bytes.tolist(),
                    t.extra["cycles"] is None or t.extra["cycles"].tolist(),
                    t.extra["id"].tolist(), [t.name.value(i) for i in range(len(t))],
                    [t.track.value(i) for i in range(len(t))], [t.extra["device"].value(i) for i in range(len(t))]]
    out["flows"] = [a.tolist() for a in profile.trace.extra["flows"]]
    return out


def _busy_trace(tb_class) -> bytes:
    tb = tb_class()
    t = tb.atom()
    rng = random.Random(5)
    time = 1_000
    flow = 1
    for s in range(60):
        seq = 1 + s % 3  # three writer sequences, interleaved
        clear = s % 17 == 16  # re-interning now and then
        tb.begin(time, t["Host"], f"{s}_host_preprocess_0", seq=seq, interned=True, clear=clear)
        for k in range(rng.randint(3, 9)):
            d = rng.randint(1_000, 9_000)
            tb.begin(time + 10, t["Task DMA"], f"{s}_layer{k}_{3 * k}", f'{{"transfer": [":{d * 8}Byte"]}}',
                     flows=(flow,), seq=seq, interned=True)
            tb.end(time + 10 + d, t["Task DMA"], seq=seq, interned=True)
            tb.begin(time + 20 + d, t["Neural Engine Clusters"], f"{s}_layer{k}_{3 * k + 1}",
                     f'{{"comp_cycle": [{d * 3}]}}', term=(flow,), seq=seq, interned=True)
            tb.end(time + 30 + 2 * d, t["Neural Engine Clusters"], seq=seq, interned=True)
            time += 40 + 2 * d
            flow += 1
        tb.end(time, t["Host"], seq=seq, interned=True)  # the host slice spans many packets
        time += 500
    tb.end(time, t["Neural DMA"])  # an END with nothing open
    tb.begin(time + 1, t["Neural DMA"], "never_ends")
    return tb.bytes()


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_give_identical_output(tmp_path, tb_class, monkeypatch, workers):
    path = tmp_path / "busy.pb"
    path.write_bytes(_busy_trace(tb_class))
    one = load_trace(path, 1)
    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reader, "CHUNK_BYTES", 512)  # ranges of ~512 bytes: dozens of cuts
    monkeypatch.setattr(reader, "RANGE_BYTES", 512)
    many = read(path, workers)
    assert many.workers == workers
    from advisor.profilers.rbln.adapters.trace import build

    split = build(path, many)
    assert repr(table_values(split)) == repr(table_values(one))
    for key, table in one.trace.tables.items():
        other = split.trace.tables[key]
        assert other.name.names == table.name.names and other.track.names == table.track.names
        assert other.name.codes.tolist() == table.name.codes.tolist()
    assert split.trace.extra["quality"] == one.trace.extra["quality"]
    assert split.trace.extra["tracks"] == one.trace.extra["tracks"]
    assert (split.values, split.info, split.notes) == (one.values, one.info, one.notes)
    q = one.trace.extra["quality"]
    assert (q.unmatched_ends, q.unclosed_begins, q.dropped_packets) == (1, 1, 0)
    assert len(one.trace.extra["flows"][0]) > 100
