"""The top-level framing of a Perfetto trace: `Trace { repeated TracePacket packet = 1; }` serialised, so
a file is a run of `0x0A <varint length> <packet>` fields (Perfetto's trace.proto).

The walk never decodes a packet: it finds where each one starts and ends, so a file of any size is
split into whole-packet ranges (decoded elsewhere, a range at a time) without reading it into memory.
It works on anything indexable by byte (bytes, mmap, memoryview) and stops, recording why, at the
first field that is cut by the end of the data or is not a valid protobuf field — it never yields a
span outside the data.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PACKET_KEY = 0x0A  # field 1, wire type 2: one TracePacket
MAX_VARINT_BYTES = 10  # a 64-bit varint; longer is corruption, not a long number
TRUNCATED, CORRUPT = "truncated", "corrupt"


@dataclass(frozen=True)
class FramingProblem:
    """Where the walk stopped early: the offset of the field it could not take, and why."""

    offset: int
    kind: str  # TRUNCATED: the data ends inside this field; CORRUPT: not a protobuf field
    detail: str

    def sentence(self) -> str:
        if self.kind == TRUNCATED:
            return (f"the file ends inside a packet at byte {self.offset:,}: the last whole packet was read, "
                    "the rest ignored")
        return (f"the packet framing breaks at byte {self.offset:,} ({self.detail}): the packets before it were "
                "read, the rest ignored")


class _Stop(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def _varint(buf: Any, pos: int, end: int) -> tuple[int, int]:
    """The varint at `pos` and the offset after it."""
    value = shift = 0
    for i in range(MAX_VARINT_BYTES):
        if pos + i >= end:
            raise _Stop(TRUNCATED, "the data ends inside a varint")
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + i + 1
        shift += 7
    raise _Stop(CORRUPT, f"a varint longer than {MAX_VARINT_BYTES} bytes")


def _field_end(buf: Any, pos: int, end: int) -> tuple[int, int, int]:
    """One top-level field at `pos`: (its payload offset, its end, 1 when it is a packet else 0)."""
    key, at = _varint(buf, pos, end)
    field, wire = key >> 3, key & 7
    if field == 0:
        raise _Stop(CORRUPT, "field number 0")
    if wire == 2:
        length, at = _varint(buf, at, end)
        if at + length > end:
            raise _Stop(TRUNCATED, f"a {length:,}-byte field with {end - at:,} bytes left")
        return at, at + length, int(field == 1)
    if wire == 0:
        return at, _varint(buf, at, end)[1], 0
    size = {1: 8, 5: 4}.get(wire)
    if size is None:
        raise _Stop(CORRUPT, f"wire type {wire}")
    if at + size > end:
        raise _Stop(TRUNCATED, "the data ends inside a fixed-size field")
    return at, at + size, 0


class Splitter:
    """Walks `buf[start:end]` field by field. After a walk, `position` is where it stopped (`end`
    when the data was whole) and `problem` says why it stopped early (None when it did not)."""

    def __init__(self, buf: Any, start: int = 0, end: int | None = None):
        self.buf = buf
        self.start = start
        self.end = len(buf) if end is None else min(end, len(buf))
        self.position = start
        self.problem: FramingProblem | None = None

    def packets(self) -> Iterator[tuple[int, int]]:
        """(offset, length) of each packet's bytes, in order; other top-level fields are skipped
        (a newer writer may add some: forward compatible)."""
        buf, pos, end = self.buf, self.position, self.end
        try:
            while pos < end:
                if buf[pos] == PACKET_KEY and pos + 1 < end and buf[pos + 1] < 0x80:  # a packet under 128 bytes
                    at, stop, packet = pos + 2, pos + 2 + buf[pos + 1], 1
                    if stop > end:
                        raise _Stop(TRUNCATED, f"a {stop - at:,}-byte field with {end - at:,} bytes left")
                else:
                    at, stop, packet = _field_end(buf, pos, end)
                if packet:
                    yield at, stop - at
                pos = self.position = stop
        except _Stop as stop:
            self.problem = FramingProblem(pos, stop.kind, stop.detail)
        self.position = pos

    def chunks(self, size: int, limit: int | None = None) -> Iterator[tuple[int, int, int]]:
        """Runs of whole top-level fields of about `size` bytes each: (start, end, packets). With
        `limit`, the walk ends at the first field boundary at or after it (a range of a larger file;
        the next range starts there)."""
        buf, pos, end = self.buf, self.position, self.end
        limit = end if limit is None else min(limit, end)
        first, count = pos, 0
        target = min(pos + size, limit)
        try:
            while pos < limit:
                key = buf[pos]
                if key == PACKET_KEY and pos + 1 < end and buf[pos + 1] < 0x80:
                    stop = pos + 2 + buf[pos + 1]
                    if stop > end:
                        raise _Stop(TRUNCATED, f"a {stop - pos - 2:,}-byte field with {end - pos - 2:,} bytes left")
                    count += 1
                else:
                    stop, packet = _field_end(buf, pos, end)[1:]
                    count += packet
                pos = stop
                if pos >= target:
                    self.position = pos
                    yield first, pos, count
                    first, count, target = pos, 0, min(pos + size, limit)
        except _Stop as stop:
            self.problem = FramingProblem(pos, stop.kind, stop.detail)
        self.position = pos
        if pos > first:
            yield first, pos, count
