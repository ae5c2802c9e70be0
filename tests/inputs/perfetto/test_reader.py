"""The shared Perfetto reader (inputs/perfetto/) with no kind's knowledge: BEGIN/END pairing on a stack per
track, complete events, flows into slice edges, tracks as the trace described them, and slice figures
under whatever annotation keys the caller names (`Arguments`), in one process or several. Times in ns."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from advisor.inputs.perfetto import reader
from advisor.inputs.perfetto.arguments import Arguments
from advisor.inputs.perfetto.flows import flow_edges
from advisor.inputs.perfetto.rows import OPEN

ARGS = Arguments(container="args", bytes_key="bytes", cycles_key="cycles")
LIMIT = 1 << 30  # bytes


def _trace() -> bytes:
    """A CPU thread that launches two kernels on a GPU stream track (flows), a nested CPU slice, a
    complete event, an END with nothing open and a BEGIN never ended."""
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder

    b = TraceProtoBuilder()

    def packet(ts: int | None = None):
        p = b.add_packet()
        p.trusted_packet_sequence_id = 1
        if ts is not None:
            p.timestamp = ts
        return p

    d = packet().track_descriptor
    d.uuid, d.process.pid, d.process.process_name = 1, 42, "python"
    d = packet().track_descriptor
    d.uuid, d.parent_uuid, d.thread.pid, d.thread.tid, d.thread.thread_name = 2, 1, 42, 43, "main"
    d = packet().track_descriptor
    d.uuid, d.parent_uuid, d.name = 3, 1, "stream 7"

    def slice_(kind: int, ts: int, track: int, name: str = "", args: str | None = None, flows=(), term=()):
        te = packet(ts).track_event
        te.type, te.track_uuid = kind, track
        if name:
            te.name = name
        if args is not None:
            a = te.debug_annotations.add()
            a.name, a.string_value = "args", args
        te.flow_ids.extend(flows)
        te.terminating_flow_ids.extend(term)

    slice_(1, 100, 2, "step")  # 0: CPU [100, 900)
    slice_(1, 200, 2, "launch gemm", flows=(7,))  # 1: nested [200, 250)
    slice_(2, 250, 2)
    slice_(1, 300, 3, "gemm", '{"bytes": 4096, "cycles": [100, 20]}', term=(7,))  # 2: GPU [300, 700)
    slice_(2, 700, 3)
    slice_(2, 800, 3)  # an END with nothing open on its track
    slice_(2, 900, 2)
    complete = packet(1000).track_event  # 3: a complete event (legacy X), 5 µs
    complete.track_uuid, complete.name = 3, "memcpy"
    complete.legacy_event.phase, complete.legacy_event.duration_us = ord("X"), 5
    slice_(1, 2000, 2, "never ends")  # 4
    return b.serialize()


@pytest.fixture
def trace_file(tmp_path):
    path = tmp_path / "t.pftrace"
    path.write_bytes(_trace())
    return path


def test_slices_pair_per_track_with_their_figures_and_flows(trace_file):
    result = reader.read(trace_file, ARGS, 1, limit=LIMIT)
    r = result.resolved
    assert r.start.tolist() == [100, 200, 300, 1000, 2000]  # ns
    assert r.end.tolist() == [900, 250, 700, 6000, OPEN]
    assert r.unmatched_ends == 1 and result.problem is None and result.workers == 1
    names = [r.names.text(c).decode() for c in r.name]
    assert names == ["step", "launch gemm", "gemm", "memcpy", "never ends"]
    nbytes, cycles = np.frombuffer(r.bytes), np.frombuffer(r.cycles)
    assert np.isnan(nbytes[[0, 1, 3, 4]]).all() and nbytes[2] == 4096.0  # bytes
    assert cycles[2] == 120.0  # cycles, summed
    assert r.track_keys == [2, 3] and r.track.tolist() == [0, 0, 1, 1, 0]
    assert (r.tracks[3].name, r.tracks[3].parent, r.tracks[2].thread_name, r.processes) == \
        ("stream 7", 1, "main", {42: "python"})
    froms, tos = flow_edges(r.flow_slices, r.flow_ids, r.flow_ends)
    assert (froms.tolist(), tos.tolist()) == ([1], [2])  # the launch precedes the kernel


def test_other_keys_are_not_read_and_ranges_in_workers_give_the_same(trace_file, monkeypatch):
    other = reader.read(trace_file, Arguments("Slice Arguments", "transfer", "comp_cycle"), 1, limit=LIMIT)
    assert np.isnan(np.frombuffer(other.resolved.bytes)).all()
    one = reader.read(trace_file, ARGS, 1, limit=LIMIT).resolved
    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reader, "CHUNK_BYTES", 64)
    monkeypatch.setattr(reader, "RANGE_BYTES", 64)
    many = reader.read(trace_file, ARGS, 2, limit=LIMIT)
    assert many.workers == 2
    for field in ("start", "end", "track", "name", "flow_slices", "flow_ids"):
        assert getattr(many.resolved, field).tolist() == getattr(one, field).tolist(), field
    assert np.array_equal(np.frombuffer(many.resolved.bytes), np.frombuffer(one.bytes), equal_nan=True)


def test_a_trace_over_the_limit_is_refused_with_the_option(trace_file):
    from advisor.core.errors import AdvisorError

    with pytest.raises(AdvisorError, match="--max-memory"):
        reader.read(trace_file, ARGS, 1, limit=16)


def test_arguments_travel_to_workers_and_read_json_text():
    assert pickle.loads(pickle.dumps(ARGS)) == ARGS
    assert pickle.loads(pickle.dumps(ARGS)).pattern.pattern == ARGS.pattern.pattern
    assert ARGS.json_sums('{"bytes": [":4096Byte", ":2048Byte"], "cycles": 7}') == (6144.0, 7.0)
    assert ARGS.json_sums('{"bytes": "none", "other": 3}') == (None, None)  # no number: unavailable
    rbln_like = Arguments("Slice Arguments", "transfer", "comp_cycle")
    before = r"""["']?(transfer|comp_cycle)["']?\s*:\s*(\[[^\[\]]*\]|"[^"]*"|'[^']*'|[-+\d.eE]+)"""
    assert rbln_like.pattern.pattern == before  # the regex RBLN used before it was shared, to the byte
