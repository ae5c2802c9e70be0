"""Small Perfetto traces built in the tests with Perfetto's own TraceProtoBuilder: `Tb` writes the
packets an RBLN profiler would (process and thread tracks, slices with Slice Arguments, flows), in
whichever encoding a test asks for."""

from __future__ import annotations

from pathlib import Path

import pytest

CLEARED, NEEDS = 1, 2


class Tb:
    """A trace under construction. Times in ns; `seq` is the trusted_packet_sequence_id."""

    def __init__(self) -> None:
        from perfetto.trace_builder.proto_builder import TraceProtoBuilder

        self.builder = TraceProtoBuilder()
        self.cleared: set[int] = set()
        self.iids: dict[tuple[int, str], int] = {}

    def packet(self, seq: int = 1, flags: int | None = None):
        p = self.builder.add_packet()
        p.trusted_packet_sequence_id = seq
        if flags is not None:
            p.sequence_flags = flags
        return p

    def process(self, uuid: int, pid: int, name: str | None = None, seq: int = 1) -> None:
        d = self.packet(seq).track_descriptor
        d.uuid, d.process.pid = uuid, pid
        if name is not None:
            d.process.process_name = name

    def thread(self, uuid: int, parent: int | None, pid: int, tid: int, name: str, seq: int = 1) -> None:
        d = self.packet(seq).track_descriptor
        d.uuid, d.thread.pid, d.thread.tid, d.thread.thread_name = uuid, pid, tid, name
        if parent is not None:
            d.parent_uuid = parent

    def track(self, uuid: int, parent: int | None, name: str, seq: int = 1) -> None:
        d = self.packet(seq).track_descriptor
        d.uuid, d.name = uuid, name
        if parent is not None:
            d.parent_uuid = parent

    def atom(self, pid: int = 1000, name: str | None = "rbln0", base: int = 1,
             categories: tuple[str, ...] = ("Host", "Neural Engine Clusters", "Neural DMA", "Task DMA",
                                            "External HDMA")) -> dict[str, int]:
        """A device process and one thread track per category: {category: uuid}."""
        self.process(base, pid, name)
        out = {}
        for k, category in enumerate(categories, 1):
            self.thread(base + k, base, pid, pid + k, category)
            out[category] = base + k
        return out

    def slice_packet(self, kind: int, ts: int, track: int | None, seq: int = 1, interned: bool = False,
                     clear: bool = False):
        """A TrackEvent packet; with `interned`, the sequence's incremental state is used (cleared
        first when the sequence is new or `clear`)."""
        flags = None
        if interned:
            flags = CLEARED if clear or seq not in self.cleared else NEEDS
            if flags == CLEARED:
                self.cleared.add(seq)
                self.iids = {k: v for k, v in self.iids.items() if k[0] != seq}
        p = self.packet(seq, flags)
        p.timestamp = ts
        p.track_event.type = kind
        if track is not None:
            p.track_event.track_uuid = track
        return p

    def begin(self, ts: int, track: int | None, name: str, args: str | None = None, flows: tuple[int, ...] = (),
              term: tuple[int, ...] = (), seq: int = 1, interned: bool = False, clear: bool = False):
        p = self.slice_packet(1, ts, track, seq, interned, clear)
        te = p.track_event
        if interned:
            key = (seq, name)
            if key not in self.iids:
                self.iids[key] = iid = len([k for k in self.iids if k[0] == seq]) + 1
                p.interned_data.event_names.add(iid=iid, name=name)
            te.name_iid = self.iids[key]
        else:
            te.name = name
        if args is not None:
            a = te.debug_annotations.add()
            a.name, a.string_value = "Slice Arguments", args
        te.flow_ids.extend(flows)
        te.terminating_flow_ids.extend(term)
        return p

    def end(self, ts: int, track: int | None, seq: int = 1, interned: bool = False):
        return self.slice_packet(2, ts, track, seq, interned)

    def complete(self, ts: int, dur_us: int, track: int, name: str, seq: int = 1):
        p = self.packet(seq)
        p.timestamp = ts
        te = p.track_event
        te.track_uuid, te.name = track, name
        te.legacy_event.phase, te.legacy_event.duration_us = ord("X"), dur_us
        return p

    def bytes(self) -> bytes:
        return self.builder.serialize()

    def write(self, path: Path) -> Path:
        path.write_bytes(self.bytes())
        return path


def atom_trace(interned: bool = False) -> Tb:
    """The reference trace of these tests: one ATOM device `rbln0` (pid 1000), two sequences of
    host → upload → Task DMA → Neural DMA ∥ Neural Engine, with flows upload → Task DMA → NE."""
    tb = Tb()
    t = tb.atom()
    for s, base in enumerate((1_000_000, 2_000_000)):
        kw = {"interned": interned}
        tb.begin(base, t["Host"], f"{s}_host_preprocess_0", **kw)
        tb.end(base + 20_000, t["Host"], **kw)
        tb.begin(base + 30_000, t["External HDMA"], f"{s}_input_0", '{"transfer": [":602112Byte"]}',
                 flows=(100 + s,), **kw)
        tb.end(base + 100_000, t["External HDMA"], **kw)
        tb.begin(base + 110_000, t["Task DMA"], f"{s}_fused(conv1+bn1+relu)_0",
                 '{"transfer": [":4096Byte", ":2048Byte"]}', flows=(100 + s, 200 + s), **kw)
        tb.end(base + 115_000, t["Task DMA"], **kw)
        tb.begin(base + 116_000, t["Neural DMA"], f"{s}_fused(conv1+bn1+relu)_1", '{"transfer": [":65536Byte"]}',
                 **kw)
        tb.begin(base + 117_000, t["Neural Engine Clusters"], f"{s}_fused(conv1+bn1+relu)_2",
                 '{"comp_cycle": [7000, "3000"]}', term=(200 + s,), **kw)
        tb.end(base + 121_000, t["Neural DMA"], **kw)
        tb.end(base + 127_000, t["Neural Engine Clusters"], **kw)
    return tb


@pytest.fixture
def tb_class():
    return Tb


@pytest.fixture
def reference_trace():
    return atom_trace
