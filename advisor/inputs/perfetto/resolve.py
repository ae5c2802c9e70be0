"""Phase 2 of packets to slices: rows in file order to slices, tracks and flow ids.

Phase 2, `Resolver` (in file order, in one process): each sequence's incremental state (interning,
defaults, clocks), BEGIN/END pairing on a stack per track, slice ids, and flows. It sees only the
rows, never a decoded message, so its per-row work is a few dictionary and list operations. Tracks
come out as the trace described them (`Descriptor`s by key): what a track means is the kind's to say.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from advisor.inputs.perfetto.arguments import Arguments
from advisor.inputs.perfetto.names import NameTable
from advisor.inputs.perfetto.rows import (
    BEGIN,
    COMPLETE,
    DEFERRED_ARGS,
    DENSE_GAP,
    END,
    HAS_TRACK,
    INLINE_NAME,
    INSTANT,
    INTERNED_NAME,
    LEGACY_ABSOLUTE_US,
    LEGACY_DELTA_US,
    MAX_TIME,
    NEEDS_STATE,
    OPEN,
    SAME_PACKET,
    SEQUENCE_CLOCKS,
    STATE,
    TRACE_CLOCK,
    U64,
    WIDTH,
    Records,
    _text,
)

_Sums = tuple[int, float | None, float | None]  # a slice id, the bytes and cycles its arguments give


@dataclass
class Descriptor:
    """What the trace said about one track (the last descriptor of a uuid wins)."""

    name: str = ""  # the track's own name (name or static_name)
    parent: object = None  # parent track key
    pid: int | None = None  # owning process (process tracks, thread tracks)
    tid: int | None = None
    thread_name: str = ""
    process_name: str = ""  # for a process track


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
    bytes: array = field(default_factory=lambda: array("d"))  # bytes moved; NaN where the slice names none
    cycles: array = field(default_factory=lambda: array("d"))  # cycles computed; NaN likewise
    flow_slices: array = field(default_factory=lambda: array("q"))
    flow_ids: array = field(default_factory=lambda: array("Q"))
    flow_ends: array = field(default_factory=lambda: array("B"))
    # event names by raw code, compressed (the same text may recur: merged at the end)
    names: NameTable = field(default_factory=NameTable)
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


def _dropped(kind: int, flags: int, states: Iterator[tuple[Any, ...]], durations: Iterator[int]) -> int:
    """A row passed over (its sequence's state is not known yet, or it names an interned name never given):
    its state or duration is skipped; 1 when it counts as dropped, 0 for a state row's event of the same
    packet (the packet is counted once)."""
    if kind == STATE:
        next(states)
        counted = 1
    else:
        counted = 0 if flags & SAME_PACKET else 1
    if kind == COMPLETE:
        next(durations)
    return counted


class Resolver:
    """Phase 2: feed each range's Records in file order, then `finish()`. `arguments`: the annotations
    that carry a slice's bytes and cycles, for those phase 1 deferred (interned names or strings)."""

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.out = Resolved()
        self.sequences: dict[int, _Sequence] = {}
        self.stacks: dict[object, list[int]] = {}  # open BEGINs by track, each made with its track
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
                if isinstance(table, dict) or iid < len(table):
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
        """One range's Records, after those of the ranges before it: its slices, then their bytes and cycles
        and their flows (side columns, placed by the slice each row became)."""
        import numpy as np

        out = self.out
        out.packets += rec.packets
        out.skipped += rec.skipped
        out.compressed += rec.compressed
        first_slice = len(out.start)
        row_slice = array("q", [-1]) * rec.count  # the slice each row became; -1: none
        local_base = len(out.names)  # the range's names follow those of the ranges before it
        out.names.extend(rec.names)
        deferred_sums = self._slices(rec, row_slice, local_base)
        slices = np.frombuffer(row_slice, dtype=np.int64) if rec.count else np.zeros(0, np.int64)
        self._arguments(rec, slices, first_slice, deferred_sums)
        if len(rec.flow_rows):
            at = slices[np.frombuffer(rec.flow_rows, dtype=np.uint64).astype(np.int64)]
            keep = at >= 0
            out.flow_slices.extend(at[keep].tolist())
            out.flow_ids.extend(np.frombuffer(rec.flow_ids, dtype=np.uint64)[keep].tolist())
            out.flow_ends.extend(np.frombuffer(rec.flow_ends, dtype=np.uint8)[keep].tolist())

    def _slices(self, rec: Records, row_slice: array[int], local_base: int) -> list[_Sums]:
        """The hot loop, a row at a time (a few dictionary and list operations each; rare cases are calls):
        fills `row_slice`; returns the sums of the slices whose arguments phase 1 deferred."""
        out = self.out
        states, durations, deferred = iter(rec.states), iter(rec.durations), dict(rec.deferred)
        deferred_sums: list[_Sums] = []
        starts, ends, start_append, end_append = out.start, out.end, out.start.append, out.end.append
        track_append, name_append = out.track.append, out.name.append
        stacks, track_index, sequence, time = self.stacks, self.track_index, self._sequence, self._time
        # st: replaced at the first row (no sequence id is -1); empty: the empty name's code, made when needed
        last_seq, st, empty, row = -1, _Sequence(), -1, -1
        for kind, seq, flags, ts, clock, track, name in zip(*[iter(rec.rows)] * WIDTH, strict=False):
            row += 1  # a counter, not enumerate(): unpacking its pairs costs more per row
            if seq != last_seq:
                st, last_seq = sequence(seq), seq
            if flags & NEEDS_STATE and not st.valid:
                out.dropped += _dropped(kind, flags, states, durations)
                continue
            if kind == END:
                stack = stacks.get(track if flags & HAS_TRACK else self._track(st, seq))
                if stack:
                    sid = row_slice[row] = stack.pop()
                    ends[sid] = time(st, clock, ts) if clock else ts
                else:
                    out.unmatched_ends += 1
                continue
            if kind == STATE:
                self._apply(st, next(states), local_base)
                continue
            if kind == INSTANT:
                out.instants += 1
                continue
            # BEGIN or COMPLETE
            if flags & INTERNED_NAME:
                table = st.names
                code = table.get(name, -1) if type(table) is dict else table[name] if name < len(table) else -1
                if code < 0:
                    out.dropped += _dropped(kind, 0, states, durations)
                    continue
            elif flags & INLINE_NAME:
                code = local_base + name
            else:
                code = empty = empty if empty >= 0 else self._empty_name()
            key = track if flags & HAS_TRACK else self._track(st, seq)
            index = track_index.get(key)
            if index is None:
                index = self._new_track(key)
            sid = row_slice[row] = len(starts)
            begin = time(st, clock, ts) if clock else ts
            start_append(begin)
            track_append(index)
            name_append(code)
            if kind == BEGIN:
                end_append(OPEN)
                stacks[key].append(sid)
            else:
                end_append(begin + next(durations))
            if flags & DEFERRED_ARGS:
                deferred_sums.append((sid, *self._deferred_sums(st, deferred[row])))
        return deferred_sums

    def _empty_name(self) -> int:
        """The code of the empty name, made when the first slice without a name is met."""
        code = len(self.out.names)
        self.out.names.add_empty()
        return code

    def _new_track(self, key: object) -> int:
        """A track met for the first time: its index, and its stack of open BEGINs (made here, so the hot loop
        finds it for every slice's track)."""
        index = self.track_index[key] = len(self.track_index)
        self.out.track_keys.append(key)
        self.stacks[key] = []
        return index

    def _deferred_sums(self, st: _Sequence, annotations: tuple[bytes, ...]) -> tuple[float | None, float | None]:
        """Bytes and cycles of a slice whose annotations (serialized) name interned names or strings, read with
        its sequence's interned data; none when an annotation will not decode (a slice without arguments)."""
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import DebugAnnotation

        names_of, strings_of = st.annotation_names, st.strings
        try:
            return self.arguments.annotation_sums((DebugAnnotation.FromString(b) for b in annotations),
                                                  lambda iid: names_of.get(iid, ""),
                                                  lambda iid: strings_of.get(iid, ""))
        except Exception:  # an undecodable annotation: a slice without arguments
            return None, None

    def _arguments(self, rec: Records, slices: Any, first_slice: int, deferred_sums: list[_Sums]) -> None:
        """The new slices' bytes and cycles, NaN where a slice names none: each slice's come from its own row
        only, so each is written once (0.0 + value: the sum of the one value, as a -0.0 comes out of a sum)."""
        import numpy as np

        out = self.out
        unset = array("d", [math.nan]) * (len(out.start) - first_slice)
        out.bytes.extend(unset)
        out.cycles.extend(unset)
        del unset
        if not len(rec.arg_rows) and not deferred_sums:
            return
        nbytes_of = np.frombuffer(out.bytes, dtype=np.float64)[first_slice:]
        cycles_of = np.frombuffer(out.cycles, dtype=np.float64)[first_slice:]
        if len(rec.arg_rows):
            at = slices[np.frombuffer(rec.arg_rows, dtype=np.uint64).astype(np.int64)]
            keep = at >= 0
            at = at[keep] - first_slice
            for column, given in ((nbytes_of, rec.arg_bytes), (cycles_of, rec.arg_cycles)):
                values = np.frombuffer(given, dtype=np.float64)[keep]
                has = ~np.isnan(values)
                column[at[has]] = values[has] + 0.0
        for sid, nbytes, cycles in deferred_sums:
            if nbytes is not None and not math.isnan(nbytes):
                nbytes_of[sid - first_slice] = nbytes + 0.0
            if cycles is not None and not math.isnan(cycles):
                cycles_of[sid - first_slice] = cycles + 0.0
        del nbytes_of, cycles_of  # the arrays grow again on the next feed

    def finish(self) -> Resolved:
        """What every range fed comes to."""
        return self.out

