"""Phase 1 of packets to slices: the packets of a byte range to compact rows (Perfetto's TrackEvent:
BEGIN, END, COMPLETE and INSTANT events, legacy JSON-style phases included).

Packets to slices go in two phases. Phase 1, `extract` (stateless, so byte ranges of one file run in parallel
processes): every packet of a range is decoded with Perfetto's generated `TracePacket` and reduced to one
compact row — the event's type, sequence, raw timestamp and clock, track uuid, name (inline text or interned id) — plus
sparse side columns (bytes and cycles parsed from the annotations the kind's `Arguments` name, flow ids,
durations of complete events) and a small tuple for each packet that changes state (interned data,
defaults, track and thread descriptors, clock snapshots, incremental-state clears).

Phase 2, `Resolver`, is in `resolve` and `flow_edges` in `flows`.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

from advisor.inputs.perfetto.arguments import Arguments, Defer, defer
from advisor.inputs.perfetto.packets import Splitter
from advisor.inputs.perfetto.rows import (
    BEGIN,
    CHUNK_BYTES,
    COMPLETE,
    DEFERRED_ARGS,
    END,
    HAS_TRACK,
    INLINE_NAME,
    INSTANT,
    INTERNED_NAME,
    LEGACY_ABSOLUTE_US,
    LEGACY_DELTA_US,
    MAX_INFLATED,
    MAX_TIME,
    NEEDS_STATE,
    SAME_PACKET,
    STATE,
    TRACE_CLOCK,
    U64,
    WIDTH,
    Records,
    _text,
)

_LEGACY_PHASES = {66: BEGIN, 69: END, 88: COMPLETE, 73: INSTANT, 105: INSTANT, 82: INSTANT}  # B E X I i R


def _state(p: Any, which: str | None, cleared: int, interned_data: bool, defaults_set: bool,
           rec: Records) -> tuple[Any, ...]:
    """A packet that changes its sequence's state, or the tracks: (cleared, interned, defaults,
    descriptor, clocks); defaults is -1 when the packet sets none. Interned event names go to the
    range's name table (the tuple holds their index there); annotation names and strings may be bytes
    (not UTF-8): phase 2 makes them text."""
    interned = None
    if interned_data:
        data = p.interned_data
        names, annotation_names, strings = data.event_names, data.debug_annotation_names, \
            data.debug_annotation_string_values
        local = rec.local
        interned = (tuple([(e.iid, local(e.name)) for e in names]) if names else (),
                    tuple([(e.iid, e.name) for e in annotation_names]) if annotation_names else (),
                    tuple([(e.iid, e.str) for e in strings]) if strings else ())
    defaults: Any = -1
    if defaults_set:
        event_defaults = p.trace_packet_defaults.track_event_defaults
        defaults = event_defaults.track_uuid if event_defaults.HasField("track_uuid") else None
    descriptor: tuple[Any, ...] | None = None
    if which == "track_descriptor":
        d = p.track_descriptor
        name = _text(d.name or d.static_name or d.atrace_name)
        process = d.process if d.HasField("process") else None
        thread = d.thread if d.HasField("thread") else None
        pid = thread.pid if thread is not None else process.pid if process is not None else None
        descriptor = ("track", d.uuid, d.parent_uuid if d.HasField("parent_uuid") else None, name, pid,
                      thread.tid if thread is not None else None, _text(thread.thread_name) if thread else "",
                      _text(process.process_name) if process is not None else "")
    elif which == "process_descriptor":
        descriptor = ("process", p.process_descriptor.pid, _text(p.process_descriptor.process_name))
    elif which == "thread_descriptor":
        t = p.thread_descriptor
        descriptor = ("thread", t.pid, t.tid, _text(t.thread_name), t.reference_timestamp_us)
    clocks = None
    if which == "clock_snapshot":
        snapshot = p.clock_snapshot
        clocks = (snapshot.primary_trace_clock or TRACE_CLOCK,
                  tuple((c.clock_id, c.timestamp, c.is_incremental, c.unit_multiplier_ns or 1)
                        for c in snapshot.clocks))
    return bool(cleared), interned, defaults, descriptor, clocks


_STATE_KINDS = frozenset({"track_descriptor", "process_descriptor", "thread_descriptor", "clock_snapshot"})


def _feed(packets: Sequence[Any], rec: Records, outer_sequence: int, arguments: Arguments, depth: int = 0) -> None:
    """Rows for decoded packets, in order. The hot loop (a few µs a packet, nearly all of it upb field
    access): names bound locally, and every field read before anything is appended, so a packet that
    will not read is skipped whole. `arguments`: which annotations carry a slice's bytes and cycles."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    which_of = TracePacket.WhichOneof
    has_field = TracePacket.HasField
    rows = rec.rows
    rows_extend = rows.extend
    arg_rows, arg_bytes, arg_cycles = rec.arg_rows.append, rec.arg_bytes.append, rec.arg_cycles.append
    local = rec.local
    state_kinds = _STATE_KINDS
    json_sums = arguments.json_sums
    annotation_sums = arguments.annotation_sums
    container = arguments.container
    nan = math.nan
    rec.packets += len(packets)
    for p in packets:
        try:
            seq = p.trusted_packet_sequence_id or outer_sequence
            sflags = p.sequence_flags
            cleared = sflags & 1 if sflags else p.incremental_state_cleared
            needs = NEEDS_STATE if sflags & 2 and not cleared else 0
            state = None
            interned = has_field(p, "interned_data")
            defaults = has_field(p, "trace_packet_defaults")
            if not has_field(p, "track_event"):
                which = which_of(p, "data")
                if cleared or interned or defaults or which in state_kinds:
                    rec.states.append(_state(p, which, cleared, interned, defaults, rec))
                    rows_extend((STATE, seq, needs, 0, 0, 0, 0))
                elif which == "compressed_packets" and depth == 0:
                    _inflate(p.compressed_packets, rec, seq, arguments)
                    if rec.over:
                        return
                continue
            if cleared or interned or defaults:
                state = _state(p, "track_event", cleared, interned, defaults, rec)
                flags = needs | SAME_PACKET
            else:
                flags = needs
            te = p.track_event
            kind = te.type
            if not 0 < kind < 4:
                kind = _LEGACY_PHASES.get(te.legacy_event.phase, 0) if not kind and te.HasField("legacy_event") else 0
                if not kind:  # counters and newer types: not slices
                    if state is not None:
                        rec.states.append(state)
                        rows_extend((STATE, seq, needs, 0, 0, 0, 0))
                    continue
            ts, clock = p.timestamp, p.timestamp_clock_id
            if not ts and not clock:
                if te.HasField("timestamp_absolute_us"):
                    ts, clock = te.timestamp_absolute_us % U64, LEGACY_ABSOLUTE_US
                elif te.HasField("timestamp_delta_us"):
                    ts, clock = te.timestamp_delta_us % U64, LEGACY_DELTA_US
            if ts >= MAX_TIME and clock != LEGACY_DELTA_US:
                raise ValueError("timestamp out of range")
            track = te.track_uuid
            if track or te.HasField("track_uuid"):
                flags |= HAS_TRACK
            if kind == END:  # an END names its track only: its arguments and flows are not read
                if state is not None:
                    rec.states.append(state)
                    rows_extend((STATE, seq, needs, 0, 0, 0, 0))
                rows_extend((END, seq, flags, ts, clock, track, 0))
                continue
            text = None
            name = te.name_iid
            if name:
                flags |= INTERNED_NAME
            else:
                text = te.name
                if text:
                    text = _text(text)
                    flags |= INLINE_NAME
                elif te.HasField("legacy_event"):
                    name = te.legacy_event.name_iid
                    if name:
                        flags |= INTERNED_NAME
            sums = deferred = None
            annotations = te.debug_annotations
            if annotations:
                try:
                    first = annotations[0]
                    if (len(annotations) == 1 and first.name == container
                            and first.WhichOneof("value") == "string_value"):
                        sums = json_sums(first.string_value)
                    else:
                        sums = annotation_sums(annotations, defer, defer)
                except Defer:
                    flags |= DEFERRED_ARGS
                    deferred = tuple(a.SerializeToString() for a in annotations)
            out, ends = te.flow_ids, te.terminating_flow_ids
            old_out, old_ends = te.flow_ids_old, te.terminating_flow_ids_old
            legacy = duration = None
            if kind == COMPLETE:
                legacy = te.legacy_event
                duration = legacy.duration_us * 1000
                if not 0 <= duration < MAX_TIME:
                    raise ValueError("duration out of range")
            elif not te.type and te.HasField("legacy_event"):
                legacy = te.legacy_event
            # everything read: append
            if text is not None:
                name = local(text)
            if state is not None:
                rec.states.append(state)
                rows_extend((STATE, seq, needs, 0, 0, 0, 0))
            row = len(rows) // WIDTH
            rows_extend((kind, seq, flags, ts, clock, track, name))
            if sums is not None:
                nbytes, cycles = sums
                if nbytes is not None or cycles is not None:
                    arg_rows(row)
                    arg_bytes(nan if nbytes is None else nbytes)
                    arg_cycles(nan if cycles is None else cycles)
            elif deferred is not None:
                rec.deferred.append((row, deferred))
            if out or ends or old_out or old_ends:
                for ids, end in ((out, 0), (ends, 1), (old_out, 0), (old_ends, 1)):
                    if ids:
                        rec.flow_rows.extend(repeat(row, len(ids)))
                        rec.flow_ids.extend(ids)
                        rec.flow_ends.extend(repeat(end, len(ids)))
            if legacy is not None:
                if legacy.bind_id and legacy.flow_direction:  # v1 flows: bind_id with a direction
                    rec.flow_rows.append(row)
                    rec.flow_ids.append(legacy.bind_id)
                    rec.flow_ends.append(1 if legacy.flow_direction == 1 else 0)
                if duration is not None:
                    rec.durations.append(duration)
        except Exception:  # a packet whose fields will not read is skipped and counted
            rec.skipped += 1


def _inflate(data: bytes, rec: Records, sequence: int, arguments: Arguments) -> None:
    """A compressed_packets container: a deflated serialized Trace, split and fed like the file. What it
    inflates to counts against the range's budget (--max-memory): past it, the range stops (`rec.over`)."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    rec.compressed += 1
    cap = max(0, min(MAX_INFLATED, rec.budget - rec.inflated))
    inflated = b""
    for wbits in (47, -15):  # zlib or gzip header, else raw deflate
        try:
            inflater = zlib.decompressobj(wbits)
            inflated = inflater.decompress(data, cap + 1)  # never more than one byte past the cap
            break
        except zlib.error:
            continue
    else:
        rec.skipped += 1
        return
    rec.inflated += len(inflated)
    if len(inflated) > cap:
        rec.over = True
        return
    splitter = Splitter(inflated)
    for start, end, _ in splitter.chunks(CHUNK_BYTES):
        _feed(_decode(Trace, inflated, start, end, rec), rec, sequence, arguments, depth=1)
    if splitter.problem is not None:
        rec.skipped += 1


def _decode(trace_type: Any, buf: Any, start: int, end: int, rec: Records) -> Sequence[Any]:
    """The packets of whole fields buf[start:end]: all at once, else one by one (skipping and
    counting those that will not decode)."""
    from google.protobuf.message import DecodeError

    try:
        return trace_type.FromString(buf[start:end]).packet
    except (DecodeError, RecursionError, ValueError):
        pass
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    packets = []
    for offset, length in Splitter(buf, start, end).packets():
        try:
            packets.append(TracePacket.FromString(buf[offset:offset + length]))
        except (DecodeError, RecursionError, ValueError):
            rec.skipped += 1
    return packets


def extract(buf: Any, arguments: Arguments, start: int = 0, end: int | None = None,
            release: Callable[[int, int], None] | None = None, chunk_bytes: int = CHUNK_BYTES,
            budget: int = MAX_INFLATED) -> Records:
    """Phase 1 over buf[start:end] (whole fields; the walk stops early at a framing problem).
    `arguments` names the annotations that carry a slice's bytes and cycles; `release(start, end)` is
    told when a span is done with (to drop mapped pages); `budget` bounds what compressed_packets
    containers may inflate to (past it the range stops with `over` set)."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    rec = Records()
    rec.budget = budget
    splitter = Splitter(buf, start, end)
    for first, last, _ in splitter.chunks(chunk_bytes):
        _feed(_decode(Trace, buf, first, last, rec), rec, 0, arguments)
        if release is not None:
            release(first, last)
        if rec.over:
            break
    rec.problem = splitter.problem
    rec.close()
    return rec
