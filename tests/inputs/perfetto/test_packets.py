"""The packet splitter: exact spans on valid traces, and on any bytes only in-bounds spans or a stop with
its reason recorded (hypothesis: random bytes, truncations and mutations of a valid trace); a mutated
trace then reads (through the RBLN kind, the reader's user) or fails with one line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.core.errors import AdvisorError
from advisor.inputs.perfetto.packets import CORRUPT, TRUNCATED, Splitter


def _valid() -> bytes:
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder

    b = TraceProtoBuilder()
    for k in range(40):
        p = b.add_packet()
        p.timestamp = 1000 + k
        p.trusted_packet_sequence_id = 1
        p.track_event.type = 1 + k % 2
        p.track_event.track_uuid = 7
        p.track_event.name = "x" * (k * 7 % 300)  # packets under and over 127 bytes (1- and 2-byte lengths)
    return b.serialize()


VALID = _valid()


def _spans(data: bytes) -> list[tuple[int, int]]:
    return list(Splitter(data).packets())


def check_walk(data: bytes) -> Splitter:
    """The invariants on any input: spans inside the data, in order, not overlapping; the walk ends at
    the end of the data or at a recorded problem."""
    splitter = Splitter(data)
    last = 0
    for offset, length in splitter.packets():
        assert last <= offset and length >= 0 and offset + length <= len(data)
        last = offset + length
    if splitter.problem is None:
        assert splitter.position == len(data)
    else:
        assert splitter.problem.offset == splitter.position < len(data)
        assert splitter.problem.kind in (TRUNCATED, CORRUPT) and splitter.problem.sentence()
    chunks = Splitter(data)
    covered = 0
    for start, end, count in chunks.chunks(97):
        assert start == covered and start < end <= len(data) and count >= 0
        covered = end
    assert covered == chunks.position == splitter.position and chunks.problem == splitter.problem
    return splitter


def test_valid_trace_splits_into_its_packets():
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TracePacket

    spans = _spans(VALID)
    packets = Trace.FromString(VALID).packet
    assert len(spans) == len(packets) == 40
    for (offset, length), packet in zip(spans, packets, strict=True):
        assert TracePacket.FromString(VALID[offset:offset + length]) == packet
    assert check_walk(VALID).problem is None


def test_other_top_level_fields_are_skipped():
    prefix = b"\x10\x05" + b"\x19" + bytes(8) + b"\x25" + bytes(4) + b"\x12\x01z"  # fields 2, 3, 4, 2
    assert _spans(prefix + VALID) == [(o + len(prefix), n) for o, n in _spans(VALID)]


@pytest.mark.parametrize(("data", "kind", "offset"), [
    (b"\x0a\x05abc", TRUNCATED, 0),  # a length past the end
    (b"\x0a" + b"\xff" * 11, CORRUPT, 0),  # a varint longer than 10 bytes
    (b"\x0a\x80", TRUNCATED, 0),  # the data ends inside the length
    (b"\x0a\x01a\x0b", CORRUPT, 3),  # wire type 3 (start group)
    (b"\x0a\x01a\x0c", CORRUPT, 3),  # wire type 4
    (b"\x0a\x01a\x0e", CORRUPT, 3),  # wire type 6
    (b"\x0a\x01a\x0f", CORRUPT, 3),  # wire type 7
    (b"\x0a\x01a\x02", CORRUPT, 3),  # field number 0
    (b"\x0a\x01a\x09\x00", TRUNCATED, 3),  # a fixed64 cut
    (b"\x0a\x8a\x80\x80\x80\x80\x80\x80\x80\x80\x01", TRUNCATED, 0),  # a length of 2**63-ish
])
def test_bad_framing_stops_with_its_reason(data, kind, offset):
    splitter = check_walk(data)
    assert splitter.problem is not None
    assert (splitter.problem.kind, splitter.problem.offset) == (kind, offset)


def test_problem_sentences():
    truncated = check_walk(VALID[:-3]).problem
    assert truncated.kind == TRUNCATED
    assert truncated.sentence().startswith(f"the file ends inside a packet at byte {truncated.offset:,}")
    corrupt = check_walk(VALID + b"\x0f").problem
    assert corrupt.sentence() == (f"the packet framing breaks at byte {len(VALID):,} (wire type 7): the packets "
                                  "before it were read, the rest ignored")


@given(st.binary(max_size=2048))
def test_random_bytes(data):
    check_walk(data)


@given(st.integers(min_value=0, max_value=len(VALID)))
def test_truncations_of_a_valid_trace(cut):
    whole = _spans(VALID)
    splitter = check_walk(VALID[:cut])
    spans = _spans(VALID[:cut])
    assert spans == [s for s in whole if s[0] + s[1] <= cut]
    boundaries = {0} | {o + n for o, n in whole}
    assert (splitter.problem is None) == (cut in boundaries)


@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(VALID) - 1), st.integers(0, 255)),
                min_size=1, max_size=8))
def test_mutations_of_a_valid_trace(changes):
    data = bytearray(VALID)
    for at, value in changes:
        data[at] = value
    check_walk(bytes(data))


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(VALID) - 1), st.integers(0, 255)),
                min_size=1, max_size=6))
def test_mutated_traces_read_or_fail_cleanly(tmp_path_factory, changes):
    from advisor.profilers.rbln.adapters import load_trace

    data = bytearray(VALID)
    for at, value in changes:
        data[at] = value
    path = tmp_path_factory.mktemp("mutated") / "t.pb"
    path.write_bytes(bytes(data))
    try:
        profile = load_trace(path, 1)
    except AdvisorError:
        return
    assert profile.trace.extra["quality"].slices >= 1
