"""Packets to slices, in two phases (reference rbln-profiler.md §4.2).

Phase 1, `extract` (stateless, so byte ranges of one file run in parallel processes): every packet of
a range is decoded with Perfetto's generated `TracePacket` and reduced to one compact row — the
event's type, sequence, raw timestamp and clock, track uuid, name (inline text or interned id) — plus
sparse side columns (transfer bytes and cycles parsed from `Slice Arguments`, flow ids, durations
of complete events) and a small tuple for each packet that changes state (interned data, defaults,
track and thread descriptors, clock snapshots, incremental-state clears).

Phase 2, `Resolver` (in file order, in one process): each sequence's incremental state (interning,
defaults, clocks), BEGIN/END pairing on a stack per track, slice ids, and flows. It sees only the
rows, never a decoded message, so its per-row work is a few dictionary and list operations.
"""

from __future__ import annotations

import math
import re
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from typing import Any

from advisor.kinds.rbln.adapters.packets import FramingProblem, Splitter
from advisor.kinds.rbln.adapters.tracks import Descriptor

# row kinds (a STATE row precedes the event row of the same packet)
STATE, BEGIN, END, INSTANT, COMPLETE = 0, 1, 2, 3, 4
# row flags
HAS_TRACK, NEEDS_STATE, INTERNED_NAME, INLINE_NAME, SAME_PACKET, DEFERRED_ARGS = 1, 2, 4, 8, 16, 32
WIDTH = 7  # kind, sequence, flags, timestamp, clock, track, name
# pseudo clock ids for legacy TrackEvent microsecond timestamps
LEGACY_ABSOLUTE_US, LEGACY_DELTA_US = 0xFFFF_FFF0, 0xFFFF_FFF1
U64 = 1 << 64
OPEN = -(1 << 63)  # end of a slice never closed
MAX_TIME = 1 << 62  # ns (146 years): a timestamp or duration past it is garbage, not a trace
TRACE_CLOCK = 6  # BOOTTIME, Perfetto's default trace clock
SEQUENCE_CLOCKS = range(64, 128)  # clock ids scoped to one sequence
DENSE_GAP = 1 << 16  # an interned id this far past the last keeps the table a dict, not an array
MAX_INFLATED = 1 << 30  # one compressed_packets container; larger is a bomb, not a trace
CHUNK_BYTES = 1 << 20  # packets decoded together with one Trace.FromString

_LEGACY_PHASES = {66: BEGIN, 69: END, 88: COMPLETE, 73: INSTANT, 105: INSTANT, 82: INSTANT}  # B E X I i R
_ARGS_NAME = "slice arguments"
_KEYS = ("transfer", "comp_cycle")
# linear on any text: a value's scan stops at the next bracket or quote, where the next key's value would
# start, so findall never rescans the rest of the text from each `transfer:[` (unclosed brackets were quadratic)
_JSON_ARGS = re.compile(r"""["']?(transfer|comp_cycle)["']?\s*:\s*(\[[^\[\]]*\]|"[^"]*"|'[^']*'|[-+\d.eE]+)""")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


class Defer(Exception):
    """An annotation names an interned string the worker does not have: resolved in phase 2."""


def _text(value: Any) -> str:
    """upb hands a proto2 string that is not UTF-8 back as bytes."""
    return value if isinstance(value, str) else bytes(value).decode("utf-8", "replace")


def _numbers(text: str) -> float:
    """The sum of the numbers in `text`; NaN (unavailable) when it has none or one is beyond float range."""
    numbers = _NUMBER.findall(text)
    total = sum(map(float, numbers)) if numbers else math.nan  # no number: unavailable, not 0
    return total if math.isfinite(total) else math.nan


class _Sums:
    __slots__ = ("bytes", "cycles")

    def __init__(self) -> None:
        self.bytes: float | None = None
        self.cycles: float | None = None

    def add(self, key: str, value: float) -> None:
        if key == "transfer":
            self.bytes = (self.bytes or 0.0) + value
        else:
            self.cycles = (self.cycles or 0.0) + value

    def text(self, key: str | None, text: str) -> None:
        """A string value: numbers under a key (`":4096Byte"`), or JSON text holding the keys."""
        if key is not None:
            value = _numbers(text)
            if not math.isnan(value):
                self.add(key, value)
            return
        nbytes, cycles = _json_sums(text)
        if nbytes is not None:
            self.add("transfer", nbytes)
        if cycles is not None:
            self.add("comp_cycle", cycles)


def _walk(annotation: Any, key: str | None, sums: _Sums, names: Callable[[int], str],
          strings: Callable[[int], str]) -> None:
    """One debug annotation's value into the sums; `key` is the transfer/comp_cycle entry it is under."""
    kind = annotation.WhichOneof("value")
    if kind in ("string_value", "legacy_json_value"):
        sums.text(key, _text(getattr(annotation, kind)))
    elif kind == "string_value_iid":
        sums.text(key, strings(annotation.string_value_iid))
    elif kind in ("int_value", "uint_value", "double_value"):
        if key is not None:
            value = float(getattr(annotation, kind))
            if math.isfinite(value):
                sums.add(key, value)
    elif kind == "nested_value":
        _nested(annotation.nested_value, key, sums)
    for entry in annotation.dict_entries:
        name = entry.name if entry.WhichOneof("name_field") != "name_iid" else names(entry.name_iid)
        lowered = _text(name).strip().lower()
        _walk(entry, key or (lowered if lowered in _KEYS else None), sums, names, strings)
    for item in annotation.array_values:
        _walk(item, key, sums, names, strings)


def _nested(value: Any, key: str | None, sums: _Sums) -> None:
    """The older NestedValue form of dictionaries and arrays."""
    for name, sub in zip(value.dict_keys, value.dict_values, strict=False):
        lowered = _text(name).strip().lower()
        _nested(sub, key or (lowered if lowered in _KEYS else None), sums)
    for sub in value.array_values:
        _nested(sub, key, sums)
    if key is not None:
        if value.HasField("string_value"):
            sums.text(key, _text(value.string_value))
        elif value.HasField("int_value"):
            sums.add(key, float(value.int_value))
        elif value.HasField("double_value") and math.isfinite(value.double_value):
            sums.add(key, value.double_value)


def annotation_sums(annotations: Iterable[Any], names: Callable[[int], str],
                    strings: Callable[[int], str]) -> tuple[float | None, float | None]:
    """Transfer bytes and compute cycles of a slice's debug annotations: the `Slice Arguments`
    annotation (JSON text, legacy JSON or nested dictionaries), or top-level `transfer`/`comp_cycle`."""
    sums = _Sums()
    for annotation in annotations:
        name = names(annotation.name_iid) if annotation.WhichOneof("name_field") == "name_iid" else annotation.name
        lowered = _text(name).strip().lower()
        if lowered == _ARGS_NAME:
            _walk(annotation, None, sums, names, strings)
        elif lowered in _KEYS:
            _walk(annotation, lowered, sums, names, strings)
    return sums.bytes, sums.cycles


def _defer(_: int) -> str:
    raise Defer


class Records:
    """Phase 1's output for one byte range: rows of WIDTH unsigned ints, and side columns keyed by row."""

    def __init__(self) -> None:
        self.rows = array("Q")
        self.durations = array("q")  # COMPLETE rows, in order: ns
        self.arg_rows = array("Q")
        self.arg_bytes = array("d")  # NaN where the slice names no transfer
        self.arg_cycles = array("d")
        self.flow_rows = array("Q")
        self.flow_ids = array("Q")
        self.flow_ends = array("B")  # 1: a terminating flow id
        self.states: list[tuple[Any, ...]] = []  # one per STATE row
        self.deferred: list[tuple[int, tuple[bytes, ...]]] = []  # (row, serialized annotations)
        self.strings: list[str] = []  # event names (inline and interned), by index, while extracting
        self.name_blob = b""  # then: the names as UTF-8, one after the other (compact to send and keep)
        self.name_ends = array("q")  # end offset of each name in name_blob
        self.packets = self.skipped = self.compressed = 0
        self.problem: FramingProblem | None = None
        self.budget = MAX_INFLATED  # bytes compressed_packets containers may inflate to in this range
        self.inflated = 0  # bytes they did inflate to
        self.over = False  # a container passed the budget: the range stopped there
        self._codes: dict[str, int] = {}  # name -> index while extracting

    @property
    def count(self) -> int:
        return len(self.rows) // WIDTH

    def local(self, text: Any) -> int:
        """The index of an event name in this range's table."""
        text = text if isinstance(text, str) else _text(text)
        codes = self._codes
        code = codes.get(text)
        if code is None:
            code = codes[text] = len(self.strings)
            self.strings.append(text)
        return code

    def close(self) -> None:
        """The names table packed into name_blob/name_ends (a str costs ~80 bytes, its UTF-8 ~30)."""
        encoded = [text.encode("utf-8", "surrogatepass") for text in self.strings]
        self.name_blob = b"".join(encoded)
        self.name_ends = array("q", accumulate(map(len, encoded)))
        self.strings = []
        self._codes = {}


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
    descriptor = None
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


def _json_sums(text: Any) -> tuple[float | None, float | None]:
    """The common `Slice Arguments` value: JSON text with transfer and/or comp_cycle (one regex pass)."""
    nbytes = cycles = None
    for key, found in _JSON_ARGS.findall(text if isinstance(text, str) else _text(text)):
        numbers = _NUMBER.findall(found)
        value = float(numbers[0]) if len(numbers) == 1 else sum(map(float, numbers))
        if not numbers or not math.isfinite(value):  # no number, 1e999, a 400-digit size: unavailable
            continue
        if key == "transfer":
            nbytes = value if nbytes is None else nbytes + value
        else:
            cycles = value if cycles is None else cycles + value
    return nbytes, cycles


_STATE_KINDS = frozenset({"track_descriptor", "process_descriptor", "thread_descriptor", "clock_snapshot"})


def _feed(packets: Sequence[Any], rec: Records, outer_sequence: int, depth: int = 0) -> None:
    """Rows for decoded packets, in order. The hot loop (a few µs a packet, nearly all of it upb field
    access): names bound locally, and every field read before anything is appended, so a packet that
    will not read is skipped whole."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    which_of = TracePacket.WhichOneof
    has_field = TracePacket.HasField
    rows = rec.rows
    rows_extend = rows.extend
    arg_rows, arg_bytes, arg_cycles = rec.arg_rows.append, rec.arg_bytes.append, rec.arg_cycles.append
    local = rec.local
    state_kinds = _STATE_KINDS
    json_sums = _json_sums
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
                    _inflate(p.compressed_packets, rec, seq)
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
                    if (len(annotations) == 1 and first.name == "Slice Arguments"
                            and first.WhichOneof("value") == "string_value"):
                        sums = json_sums(first.string_value)
                    else:
                        sums = annotation_sums(annotations, _defer, _defer)
                except Defer:
                    flags |= DEFERRED_ARGS
                    deferred = tuple(a.SerializeToString() for a in annotations)
            out, ends = te.flow_ids, te.terminating_flow_ids
            old_out, old_ends = te.flow_ids_old, te.terminating_flow_ids_old
            legacy = te.legacy_event if kind == COMPLETE or (not te.type and te.HasField("legacy_event")) else None
            duration = None
            if kind == COMPLETE:
                duration = legacy.duration_us * 1000
                if not 0 <= duration < MAX_TIME:
                    raise ValueError("duration out of range")
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


def _inflate(data: bytes, rec: Records, sequence: int) -> None:
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
        _feed(_decode(Trace, inflated, start, end, rec), rec, sequence, depth=1)
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


def extract(buf: Any, start: int = 0, end: int | None = None, release: Callable[[int, int], None] | None = None,
            chunk_bytes: int = CHUNK_BYTES, budget: int = MAX_INFLATED) -> Records:
    """Phase 1 over buf[start:end] (whole fields; the walk stops early at a framing problem).
    `release(start, end)` is told when a span is done with (to drop mapped pages); `budget` bounds what
    compressed_packets containers may inflate to (past it the range stops with `over` set)."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    rec = Records()
    rec.budget = budget
    splitter = Splitter(buf, start, end)
    for first, last, _ in splitter.chunks(chunk_bytes):
        _feed(_decode(Trace, buf, first, last, rec), rec, 0)
        if release is not None:
            release(first, last)
        if rec.over:
            break
    rec.problem = splitter.problem
    rec.close()
    return rec


# ---------------------------------------------------------------------------------------------------
# Phase 2


class _Clock:
    __slots__ = ("incremental", "last", "multiplier", "reference", "trace_ns")

    def __init__(self, value: int, incremental: bool, multiplier: int, trace_ns: int):
        self.reference = self.last = value
        self.incremental = incremental
        self.multiplier = multiplier
        self.trace_ns = trace_ns


class _Sequence:
    """One trusted_packet_sequence_id's incremental state."""

    __slots__ = ("annotation_names", "clocks", "default_track", "legacy_us", "names", "strings", "thread", "valid")

    def __init__(self) -> None:
        self.valid = False  # an incremental-state clear was seen
        self.thread: tuple[int, int] | None = None  # legacy thread descriptor (pid, tid)
        self.legacy_us = 0
        self.reset()

    def reset(self) -> None:
        # event-name iid -> name code (-1: none): an array while the ids are dense, as writers number
        # them 1, 2, 3, … (4 bytes an entry), a dict once they are not
        self.names: array | dict[int, int] = array("i")
        self.annotation_names: dict[int, str] = {}
        self.strings: dict[int, str] = {}
        self.default_track: int | None = None
        self.clocks: dict[int, _Clock] = {}


@dataclass
class Resolved:
    """Phase 2's output: one entry per slice in file order (its id), plus tracks and counters."""

    start: array = field(default_factory=lambda: array("q"))  # ns on the trace clock
    end: array = field(default_factory=lambda: array("q"))  # OPEN when never closed
    track: array = field(default_factory=lambda: array("i"))  # index into track_keys
    name: array = field(default_factory=lambda: array("i"))  # code into names
    bytes: array = field(default_factory=lambda: array("d"))  # transfer bytes; NaN where the slice names none
    cycles: array = field(default_factory=lambda: array("d"))  # compute cycles; NaN likewise
    flow_slices: array = field(default_factory=lambda: array("q"))
    flow_ids: array = field(default_factory=lambda: array("Q"))
    flow_ends: array = field(default_factory=lambda: array("B"))
    # event names by raw code, as UTF-8 one after the other (the same text may recur: merged at the end)
    name_blob: bytearray = field(default_factory=bytearray)
    name_ends: array = field(default_factory=lambda: array("q"))
    track_keys: list[object] = field(default_factory=list)
    tracks: dict[object, Descriptor] = field(default_factory=dict)
    processes: dict[int, str] = field(default_factory=dict)
    threads: dict[tuple[int, int], str] = field(default_factory=dict)
    packets: int = 0
    instants: int = 0
    unmatched_ends: int = 0
    dropped: int = 0
    skipped: int = 0
    compressed: int = 0
    clocks_used: set[tuple[int, bool, int]] = field(default_factory=set)  # (clock id, incremental, multiplier)
    unknown_clocks: set[int] = field(default_factory=set)


class Resolver:
    """Phase 2: feed each range's Records in file order, then `finish()`."""

    def __init__(self) -> None:
        self.out = Resolved()
        self.sequences: dict[int, _Sequence] = {}
        self.stacks: dict[object, list[int]] = {}
        self.track_index: dict[object, int] = {}
        self.global_clocks: dict[int, _Clock] = {}
        self.trace_clock = TRACE_CLOCK

    def _sequence(self, seq: int) -> _Sequence:
        found = self.sequences.get(seq)
        if found is None:
            found = self.sequences[seq] = _Sequence()
        return found

    def _apply(self, st: _Sequence, state: tuple[Any, ...], base: int) -> None:
        """A state row; `base` is the raw code of the range's first name."""
        cleared, interned, defaults, descriptor, clocks = state
        out = self.out
        if cleared:
            st.reset()
            st.valid = True
        if interned is not None and interned[0]:
            table = st.names
            for iid, local in interned[0]:
                code = base + local
                if type(table) is dict or iid < len(table):
                    table[iid] = code
                elif iid == len(table):
                    table.append(code)
                elif iid < len(table) + DENSE_GAP:
                    table.extend(repeat(-1, iid - len(table)))
                    table.append(code)
                else:
                    table = st.names = {i: c for i, c in enumerate(table) if c >= 0}
                    table[iid] = code
        if interned is not None:
            if interned[1]:
                st.annotation_names.update((iid, _text(text)) for iid, text in interned[1])
            if interned[2]:
                st.strings.update((iid, _text(text)) for iid, text in interned[2])
        if defaults != -1:
            st.default_track = defaults
        if descriptor is not None:
            if descriptor[0] == "track":
                _, uuid, parent, name, pid, tid, thread_name, process_name = descriptor
                out.tracks[uuid] = Descriptor(name=name, parent=parent, pid=pid, tid=tid, thread_name=thread_name,
                                              process_name=process_name)
                if process_name and pid is not None:
                    out.processes[pid] = process_name
                if thread_name and tid is not None:
                    out.threads[(pid, tid)] = thread_name
            elif descriptor[0] == "process":
                if descriptor[2]:
                    out.processes[descriptor[1]] = descriptor[2]
            else:
                _, pid, tid, thread_name, reference_us = descriptor
                st.thread = (pid, tid)
                st.legacy_us = reference_us
                if thread_name:
                    out.threads[(pid, tid)] = thread_name
        if clocks is not None:
            primary, entries = clocks
            self.trace_clock = primary
            trace_ns = next((ts for cid, ts, _, _ in entries if cid == primary), None)
            if trace_ns is None:
                trace_ns = next((ts for cid, ts, _, _ in entries if cid not in SEQUENCE_CLOCKS), 0)
            for cid, ts, incremental, multiplier in entries:
                if cid in SEQUENCE_CLOCKS:
                    st.clocks[cid] = _Clock(ts, incremental, multiplier, trace_ns)
                elif cid != primary:
                    self.global_clocks[cid] = _Clock(ts, incremental, multiplier, trace_ns)

    def _time(self, st: _Sequence, clock: int, value: int) -> int:
        if clock == LEGACY_ABSOLUTE_US:
            st.legacy_us = value
            return max(-MAX_TIME, min(MAX_TIME, value * 1000))
        if clock == LEGACY_DELTA_US:
            st.legacy_us += value - U64 if value >= 1 << 63 else value
            return max(-MAX_TIME, min(MAX_TIME, st.legacy_us * 1000))
        if clock == self.trace_clock:
            return value
        found = st.clocks.get(clock) or self.global_clocks.get(clock)
        if found is None:
            self.out.unknown_clocks.add(clock)
            return value
        self.out.clocks_used.add((clock, found.incremental, found.multiplier))
        if found.incremental:
            found.last += value
            value = found.last
        return max(-MAX_TIME, min(MAX_TIME, found.trace_ns + (value - found.reference) * found.multiplier))

    def _track(self, st: _Sequence, seq: int) -> object:
        """The track of an event without track_uuid: the sequence's default, else its thread."""
        if st.default_track is not None:
            return st.default_track
        if st.thread is not None:
            return ("thread", *st.thread)
        return ("sequence", seq)

    def feed(self, rec: Records) -> None:
        import numpy as np

        out = self.out
        out.packets += rec.packets
        out.skipped += rec.skipped
        out.compressed += rec.compressed
        count = rec.count
        row_slice = array("q", [-1]) * count
        local_base = len(out.name_ends)
        if len(rec.name_ends):
            shift = len(out.name_blob)
            out.name_blob += rec.name_blob
            out.name_ends.frombytes((np.frombuffer(rec.name_ends, dtype=np.int64) + shift).tobytes())
        empty = -1  # code of the empty name, made when a slice has none
        states = iter(rec.states)
        durations = iter(rec.durations)
        deferred = dict(rec.deferred) if rec.deferred else {}
        deferred_sums: list[tuple[int, float | None, float | None]] = []
        starts, ends, tracks, names = out.start, out.end, out.track, out.name
        start_append, end_append, track_append, name_append = starts.append, ends.append, tracks.append, names.append
        first_slice = len(starts)
        stacks, track_index = self.stacks, self.track_index
        sequence = self._sequence
        time = self._time
        last_seq, st = -1, None
        unmatched = dropped = instants = 0
        row = -1
        for kind, seq, flags, ts, clock, track, name in zip(*[iter(rec.rows)] * WIDTH, strict=False):
            row += 1
            if seq != last_seq:
                st, last_seq = sequence(seq), seq
            if flags & NEEDS_STATE and not st.valid:
                if kind == STATE:
                    next(states)
                    dropped += 1
                elif not flags & SAME_PACKET:
                    dropped += 1
                if kind == COMPLETE:
                    next(durations)
                continue
            if kind == END:
                key = track if flags & HAS_TRACK else self._track(st, seq)
                stack = stacks.get(key)
                if stack:
                    sid = stack.pop()
                    ends[sid] = time(st, clock, ts) if clock else ts
                    row_slice[row] = sid
                else:
                    unmatched += 1
                continue
            if kind == STATE:
                self._apply(st, next(states), local_base)
                continue
            if kind == INSTANT:
                instants += 1
                continue
            # BEGIN or COMPLETE
            if flags & INTERNED_NAME:
                table = st.names
                code = table.get(name, -1) if type(table) is dict else table[name] if name < len(table) else -1
                if code < 0:
                    dropped += 1
                    if kind == COMPLETE:
                        next(durations)
                    continue
            elif flags & INLINE_NAME:
                code = local_base + name
            else:
                if empty < 0:
                    empty = len(out.name_ends)
                    out.name_ends.append(len(out.name_blob))
                code = empty
            key = track if flags & HAS_TRACK else self._track(st, seq)
            index = track_index.get(key)
            if index is None:
                index = track_index[key] = len(track_index)
                out.track_keys.append(key)
            sid = len(starts)
            begin = time(st, clock, ts) if clock else ts
            start_append(begin)
            track_append(index)
            name_append(code)
            row_slice[row] = sid
            if kind == BEGIN:
                end_append(OPEN)
                stack = stacks.get(key)
                if stack is None:
                    stacks[key] = [sid]
                else:
                    stack.append(sid)
            else:
                end_append(begin + next(durations))
            if flags & DEFERRED_ARGS:
                from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import DebugAnnotation

                names_of, strings_of = st.annotation_names, st.strings
                try:
                    nbytes, cycles = annotation_sums(
                        (DebugAnnotation.FromString(b) for b in deferred[row]),
                        lambda iid, d=names_of: d.get(iid, ""), lambda iid, d=strings_of: d.get(iid, ""))
                except Exception:  # an undecodable annotation: a slice without arguments
                    nbytes = cycles = None
                deferred_sums.append((sid, nbytes, cycles))
        out.unmatched_ends += unmatched
        out.dropped += dropped
        out.instants += instants
        # side columns, by the slice their row became: a slice's arguments come from its own row only, so
        # each is written once (0.0 + value: the sum of the one value, as a -0.0 comes out of a sum)
        slices = np.frombuffer(row_slice, dtype=np.int64) if count else np.zeros(0, np.int64)
        unset = array("d", [math.nan]) * (len(starts) - first_slice)
        out.bytes.extend(unset)
        out.cycles.extend(unset)
        del unset
        if len(rec.arg_rows) or deferred_sums:
            nbytes_of = np.frombuffer(out.bytes, dtype=np.float64)[first_slice:]
            cycles_of = np.frombuffer(out.cycles, dtype=np.float64)[first_slice:]
            if len(rec.arg_rows):
                at = slices[np.frombuffer(rec.arg_rows, dtype=np.uint64).astype(np.int64)]
                keep = at >= 0
                at = at[keep] - first_slice
                for column, values in ((nbytes_of, rec.arg_bytes), (cycles_of, rec.arg_cycles)):
                    values = np.frombuffer(values, dtype=np.float64)[keep]
                    has = ~np.isnan(values)
                    column[at[has]] = values[has] + 0.0
            for sid, nbytes, cycles in deferred_sums:
                if nbytes is not None and not math.isnan(nbytes):
                    nbytes_of[sid - first_slice] = nbytes + 0.0
                if cycles is not None and not math.isnan(cycles):
                    cycles_of[sid - first_slice] = cycles + 0.0
            del nbytes_of, cycles_of  # the arrays grow again on the next feed
        if len(rec.flow_rows):
            at = slices[np.frombuffer(rec.flow_rows, dtype=np.uint64).astype(np.int64)]
            keep = at >= 0
            out.flow_slices.extend(at[keep].tolist())
            out.flow_ids.extend(np.frombuffer(rec.flow_ids, dtype=np.uint64)[keep].tolist())
            out.flow_ends.extend(np.frombuffer(rec.flow_ends, dtype=np.uint8)[keep].tolist())

    def finish(self) -> Resolved:
        return self.out


def flow_edges(slices: Any, ids: Any, ends: Any) -> tuple[Any, Any]:
    """(from, to) slice ids: consecutive slices carrying one flow id, in emission order; a terminating
    id closes its chain (the next slice with that id starts a new one)."""
    import numpy as np

    slices = np.asarray(slices, dtype=np.int64)
    if len(slices) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ids = np.asarray(ids, dtype=np.uint64)
    ends = np.asarray(ends, dtype=np.uint8)
    order = np.argsort(ids, kind="stable")
    s, i, e = slices[order], ids[order], ends[order]
    link = (i[1:] == i[:-1]) & (e[:-1] == 0) & (s[1:] != s[:-1])
    return s[:-1][link].copy(), s[1:][link].copy()
