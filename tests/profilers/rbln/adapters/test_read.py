"""The RBLN reader on traces built here: values with their units (ns, bytes, cycles), categories,
device and chiplet labels, flows, every encoding giving the same tables, and what it says about
input it cannot fully read."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.rbln.adapters import load, load_trace
from advisor.profilers.rbln.adapters.quality import ReadQuality, TrackInfo


def read(tmp_path, data: bytes, name: str = "trace.pb", workers: int = 1):
    path = tmp_path / name
    path.write_bytes(data)
    return load_trace(path, workers)


def _listed(column) -> list | None:
    """A column's values; None for a table that carries none (bytes, cycles are kept per table)."""
    return None if column is None else column.tolist()


def table_values(profile) -> dict:
    """Everything a table holds, as plain values (for comparing encodings)."""
    out = {}
    for key, t in profile.trace.tables.items():
        out[key] = {
            "start": t.start.tolist(), "duration": t.duration.tolist(),
            "track": [t.track.value(i) for i in range(len(t))], "name": [t.name.value(i) for i in range(len(t))],
            "bytes": _listed(t.bytes), "cycles": _listed(t.extra["cycles"]), "id": t.extra["id"].tolist(),
            "device": [t.extra["device"].value(i) for i in range(len(t))],
            "chiplet": [t.extra["chiplet"].value(i) for i in range(len(t))]}
    froms, tos = profile.trace.extra["flows"]
    out["flows"] = sorted(zip(froms.tolist(), tos.tolist(), strict=True))
    return out


def nan_equal(a: dict, b: dict) -> bool:
    return repr(a) == repr(b)  # nan reprs alike, so NaN == NaN here


def test_reference_trace_values(tmp_path, reference_trace):
    profile = read(tmp_path, reference_trace().bytes())
    trace = profile.trace
    assert profile.kind == "rbln"
    assert profile.source.format == "perfetto-pb"
    assert profile.values["total_time"] == pytest.approx(1_127_000e-9)  # s: first start to last end
    assert profile.units == {"total_time": "s"}
    assert profile.info == {"generation": "ATOM", "devices": "1", "chiplets": "0", "name_format": "{seq}_{layer}_{cmd}"}
    assert list(trace.tables) == ["host", "neural_engine", "neural_dma", "task_dma", "external_hdma"]
    ne = trace.tables["neural_engine"]
    assert ne.start.dtype == np.float64 and ne.duration.dtype == np.float64
    assert ne.start.tolist() == [117_000.0, 1_117_000.0]  # ns from the first slice
    assert ne.duration.tolist() == [10_000.0, 10_000.0]  # ns
    assert ne.extra["cycles"].tolist() == [10_000.0, 10_000.0]  # 7000 + "3000"
    assert ne.bytes is None  # no Neural Engine slice moves bytes: the table has no column (sparse)
    assert trace.tables["host"].extra["cycles"] is None and trace.tables["host"].bytes is None
    assert [ne.name.value(i) for i in range(2)] == ["0_fused(conv1+bn1+relu)_2", "1_fused(conv1+bn1+relu)_2"]
    assert ne.track.names == ("rbln0 / Neural Engine Clusters",)
    assert ne.extra["device"].names == ("rbln0",) and ne.extra["chiplet"].names == ("",)
    assert ne.extra["id"].tolist() == [4, 9]
    tdma = trace.tables["task_dma"]
    assert tdma.bytes.tolist() == [6144.0, 6144.0]  # ":4096Byte" + ":2048Byte"
    assert tdma.extra["cycles"] is None  # cycles only where the Neural Engine table is
    assert trace.tables["external_hdma"].bytes.tolist() == [602112.0, 602112.0]
    assert trace.tables["neural_dma"].duration.tolist() == [5_000.0, 5_000.0]
    assert trace.tables["host"].start.tolist() == [0.0, 1_000_000.0]
    # the tables share one table of names (what the event analysis expects)
    assert all(t.name.names is ne.name.names for t in trace.tables.values())
    froms, tos = trace.extra["flows"]
    assert froms.dtype == np.int32 and tos.dtype == np.int32  # slice ids: int32 below 2**31 slices
    assert sorted(zip(froms.tolist(), tos.tolist(), strict=True)) == [(1, 2), (2, 4), (6, 7), (7, 9)]
    q = trace.extra["quality"]
    assert isinstance(q, ReadQuality)
    assert (q.packets, q.slices, q.instants, q.unclosed_begins, q.unmatched_ends, q.dropped_packets) == (
        26, 10, 0, 0, 0, 0)
    assert (q.truncated, q.truncated_at, q.gzip, q.compressed_packets, q.skipped_packets, q.clock_note) == (
        False, None, False, 0, 0, "")
    assert trace.extra["tracks"][0] == TrackInfo("rbln0 / Host", "host", "rbln0", "", 2)
    assert trace.metadata["generation"] == "ATOM" and trace.metadata["devices"] == 1
    assert trace.metadata["protobuf_backend"] in ("upb", "cpp", "python")
    assert trace.summary == {} and trace.warnings == () and profile.notes == ()


def test_load_through_the_kind_interface(tmp_path, reference_trace):
    path = reference_trace().write(tmp_path / "t.pb")
    (profile,) = load(path, LoadOptions())
    assert profile.values["total_time"] == pytest.approx(1.127e-3)


def test_interned_names_give_the_same_tables(tmp_path, reference_trace):
    inline = table_values(read(tmp_path, reference_trace(False).bytes(), "a.pb"))
    interned = table_values(read(tmp_path, reference_trace(True).bytes(), "b.pb"))
    assert nan_equal(inline, interned)


def test_reinterning_after_a_clear_and_two_sequences(tmp_path, tb_class):
    """The same iid names different slices before and after a clear; two sequences intern apart."""
    tb = tb_class()
    t = tb.atom()
    tb.begin(0, t["Task DMA"], "0_a_0", interned=True, seq=1)
    tb.end(10, t["Task DMA"], interned=True, seq=1)
    tb.begin(5, t["Neural DMA"], "0_b_0", interned=True, seq=2)  # iid 1 on sequence 2
    tb.end(15, t["Neural DMA"], interned=True, seq=2)
    tb.begin(20, t["Task DMA"], "1_c_0", interned=True, seq=1, clear=True)  # iid 1 again, a new name
    tb.end(30, t["Task DMA"], interned=True, seq=1)
    trace = read(tmp_path, tb.bytes()).trace
    tdma = trace.tables["task_dma"]
    assert [tdma.name.value(i) for i in range(2)] == ["0_a_0", "1_c_0"]
    assert trace.tables["neural_dma"].name.value(0) == "0_b_0"
    assert trace.extra["quality"].dropped_packets == 0


def test_complete_events_match_begin_end(tmp_path, tb_class):
    def build(complete: bool) -> bytes:
        tb = tb_class()
        t = tb.atom()
        for k in range(3):
            if complete:
                tb.complete(1000 + k * 50_000, 20 + k, t["Neural Engine Clusters"], f"0_l{k}_0")
            else:
                tb.begin(1000 + k * 50_000, t["Neural Engine Clusters"], f"0_l{k}_0")
                tb.end(1000 + k * 50_000 + (20 + k) * 1000, t["Neural Engine Clusters"])
        return tb.bytes()

    a, b = read(tmp_path, build(False), "a.pb"), read(tmp_path, build(True), "b.pb")
    assert nan_equal(table_values(a), table_values(b))
    assert b.trace.tables["neural_engine"].duration.tolist() == [20_000.0, 21_000.0, 22_000.0]  # duration_us in ns


def test_nested_slices_pair_with_the_innermost_open_begin(tmp_path, tb_class):
    tb = tb_class()
    t = tb.atom()
    tb.begin(0, t["Host"], "outer")
    tb.begin(10, t["Host"], "inner")
    tb.end(20, t["Host"])
    tb.end(100, t["Host"])
    host = read(tmp_path, tb.bytes()).trace.tables["host"]
    assert dict(zip([host.name.value(i) for i in range(2)], host.duration.tolist(), strict=True)) == {
        "outer": 100.0, "inner": 10.0}


def test_defaults_give_the_track(tmp_path, tb_class):
    tb = tb_class()
    t = tb.atom()
    p = tb.packet(7, 1)
    p.trace_packet_defaults.track_event_defaults.track_uuid = t["Task DMA"]
    tb.begin(0, None, "0_x_0", seq=7)
    tb.end(50, None, seq=7)
    tdma = read(tmp_path, tb.bytes()).trace.tables["task_dma"]
    assert tdma.duration.tolist() == [50.0] and tdma.track.names == ("rbln0 / Task DMA",)


@pytest.mark.parametrize("form", ["json", "legacy_json", "dict", "nested_interned", "top_level"])
def test_slice_arguments_forms(tmp_path, tb_class, form):
    tb = tb_class()
    t = tb.atom()
    p = tb.begin(0, t["Task DMA"], "0_x_0", seq=1, interned=form == "nested_interned")
    te = p.track_event
    if form == "json":
        a = te.debug_annotations.add(name="Slice Arguments")
        a.string_value = '{"transfer": [":1024Byte", ":512Byte"], "comp_cycle": ["40", 2]}'
    elif form == "legacy_json":
        a = te.debug_annotations.add(name="Slice Arguments")
        a.legacy_json_value = "{'transfer': [':1024Byte', ':512Byte'], 'comp_cycle': [40, 2]}"
    elif form == "dict":
        a = te.debug_annotations.add(name="Slice Arguments")
        e = a.dict_entries.add(name="transfer")
        e.array_values.add(string_value=":1024Byte")
        e.array_values.add(string_value=":512Byte")
        c = a.dict_entries.add(name="comp_cycle")
        c.array_values.add(string_value="40")
        c.array_values.add(uint_value=2)
    elif form == "nested_interned":  # names and a value interned on the sequence
        p.interned_data.debug_annotation_names.add(iid=1, name="Slice Arguments")
        p.interned_data.debug_annotation_names.add(iid=2, name="transfer")
        p.interned_data.debug_annotation_string_values.add(iid=1, str=b":1024Byte")
        a = te.debug_annotations.add(name_iid=1)
        e = a.dict_entries.add(name_iid=2)
        e.array_values.add(string_value_iid=1)
        e.array_values.add(string_value=":512Byte")
        c = a.dict_entries.add(name="comp_cycle")
        c.array_values.add(int_value=40)
        c.array_values.add(double_value=2.0)
    else:  # top-level annotations named after the keys
        te.debug_annotations.add(name="transfer").string_value = ":1024Byte"
        te.debug_annotations.add(name="transfer").string_value = ":512Byte"
        te.debug_annotations.add(name="comp_cycle").uint_value = 42
    tb.end(10, t["Task DMA"], seq=1, interned=form == "nested_interned")
    tdma = read(tmp_path, tb.bytes()).trace.tables["task_dma"]
    assert tdma.bytes.tolist() == [1536.0]  # bytes
    assert tdma.extra["cycles"].tolist() == [42.0]  # cycles


def test_incremental_clock(tmp_path, tb_class):
    """A sequence-scoped clock 64 in µs, delta-encoded: ts = snapshot + Σ deltas × 1000 ns."""
    tb = tb_class()
    t = tb.atom()
    p = tb.packet(1, 1)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=5_000_000)
    p.clock_snapshot.clocks.add(clock_id=64, timestamp=5_000, is_incremental=True, unit_multiplier_ns=1000)
    for delta, kind in ((10, 1), (7, 2), (3, 1), (2, 2)):  # begin +10 µs, end +7 µs, begin +3, end +2
        q = tb.packet(1, 2)
        q.timestamp, q.timestamp_clock_id = delta, 64
        q.track_event.type, q.track_event.track_uuid = kind, t["Neural Engine Clusters"]
        if kind == 1:
            q.track_event.name = "0_x_0"
    profile = read(tmp_path, tb.bytes())
    ne = profile.trace.tables["neural_engine"]
    assert ne.start.tolist() == [0.0, 10_000.0]  # ns: begins at 5 000 010 µs and 5 000 020 µs
    assert ne.duration.tolist() == [7_000.0, 2_000.0]
    q = profile.trace.extra["quality"]
    assert q.clock_note == "timestamps on clock 64 (delta-encoded, 1,000 ns units): converted to ns"
    assert q.clock_note in profile.notes and not profile.trace.warnings


def test_compressed_packets_and_gzip(tmp_path, reference_trace):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    plain = reference_trace(True).bytes()
    packets = Trace.FromString(plain).packet
    wrapped = Trace()
    for k in range(0, len(packets), 5):
        inner = Trace(packet=packets[k:k + 5]).SerializeToString()
        wrapped.packet.add().compressed_packets = zlib.compress(inner)
    reference = table_values(read(tmp_path, plain, "plain.pb"))
    compressed = read(tmp_path, wrapped.SerializeToString(), "compressed.pb")
    assert nan_equal(table_values(compressed), reference)
    assert compressed.trace.extra["quality"].compressed_packets == 6
    zipped = read(tmp_path, gzip.compress(plain), "trace.pb.gz")
    assert nan_equal(table_values(zipped), reference)
    assert zipped.source.format == "perfetto-pb.gz" and zipped.trace.extra["quality"].gzip


def test_truncated_file_keeps_the_whole_packets(tmp_path, reference_trace):
    data = reference_trace().bytes()
    cut = len(data) - 3  # inside the last packet (the last NE END)
    profile = read(tmp_path, data[:cut])
    q = profile.trace.extra["quality"]
    assert q.truncated and q.truncated_at is not None and 0 < q.truncated_at < cut
    assert q.unclosed_begins == 1  # the NE slice whose END was cut
    ne = profile.trace.tables["neural_engine"]
    assert ne.duration.tolist()[0] == 10_000.0 and np.isnan(ne.duration[1])
    assert f"the file ends inside a packet at byte {q.truncated_at:,}: the last whole packet was read, " \
           "the rest ignored" in profile.trace.warnings
    assert "1 slice began and never ended: left out" in profile.notes


def test_garbage_after_valid_packets(tmp_path, reference_trace):
    data = reference_trace().bytes()
    profile = read(tmp_path, data + b"\x0f\xff\x00garbage")  # wire type 7: not a protobuf field
    q = profile.trace.extra["quality"]
    assert q.truncated and q.truncated_at == len(data) and q.slices == 10
    assert any(w.startswith(f"the packet framing breaks at byte {len(data):,} (wire type 7)")
               for w in profile.trace.warnings)


@pytest.mark.parametrize("data", [b"\x0f\xff\x00garbage", b"\x0a" + b"\xff" * 11, b"\x0a\x7f\x08\x01",
                                  b"\x1f\x8b\x08\x00garbage-after-a-gzip-magic"])
def test_nothing_usable_is_not_a_perfetto_trace(tmp_path, data):
    with pytest.raises(AdvisorError, match="not a Perfetto trace"):
        read(tmp_path, data)


def test_trace_without_slices_is_an_error(tmp_path, tb_class):
    tb = tb_class()
    t = tb.atom()
    p = tb.packet()
    p.track_event.type, p.track_event.track_uuid, p.track_event.name = 3, t["Host"], "marker"  # an instant
    with pytest.raises(AdvisorError, match=r"a Perfetto trace without slices .*1 instant event"):
        read(tmp_path, tb.bytes())


def test_unmatched_and_unclosed(tmp_path, tb_class):
    tb = tb_class()
    t = tb.atom()
    tb.end(5, t["Task DMA"])  # no open slice
    tb.begin(10, t["Task DMA"], "0_a_0")
    tb.end(20, t["Task DMA"])
    tb.end(25, t["Task DMA"])  # again none
    tb.begin(30, t["Neural DMA"], "0_b_0")  # never ends
    p = tb.packet()
    p.timestamp, p.track_event.type, p.track_event.track_uuid, p.track_event.name = 40, 3, t["Host"], "i"
    profile = read(tmp_path, tb.bytes())
    q = profile.trace.extra["quality"]
    assert (q.unmatched_ends, q.unclosed_begins, q.instants, q.slices) == (2, 1, 1, 2)
    assert np.isnan(profile.trace.tables["neural_dma"].duration[0])
    assert "2 END events had no open slice on their track: ignored" in profile.trace.warnings
    assert "1 slice began and never ended: left out" in profile.trace.warnings


def test_interned_data_on_a_never_cleared_sequence_is_dropped(tmp_path, tb_class):
    tb = tb_class()
    t = tb.atom()
    tb.begin(0, t["Task DMA"], "0_a_0")
    tb.end(10, t["Task DMA"])
    for ts in (20, 30):  # NEEDS_INCREMENTAL_STATE on sequence 9, never cleared
        p = tb.packet(9, 2)
        p.timestamp = ts
        p.track_event.type, p.track_event.track_uuid, p.track_event.name = 1, t["Task DMA"], "x"
    profile = read(tmp_path, tb.bytes())
    q = profile.trace.extra["quality"]
    assert q.dropped_packets == 2 and q.slices == 1
    assert any(w.startswith("2 packets needed interned data") and w.endswith("dropped, as Perfetto does")
               for w in profile.trace.warnings)


def test_unknown_tracks_are_kept_as_other(tmp_path, tb_class):
    tb = tb_class()
    t = tb.atom()
    tb.thread(50, 1, 1000, 1050, "Mystery Engine")
    tb.begin(0, t["Task DMA"], "0_a_0")
    tb.end(10, t["Task DMA"])
    tb.begin(0, 50, "0_m_0")
    tb.end(40, 50)
    profile = read(tmp_path, tb.bytes())
    other = profile.trace.tables["other"]
    assert other.track.names == ("rbln0 / Mystery Engine",) and other.duration.tolist() == [40.0]
    assert list(profile.trace.tables)[-1] == "other"
    assert profile.trace.extra["quality"].unknown_tracks == ("rbln0 / Mystery Engine",)
    assert "tracks no category pattern matches: rbln0 / Mystery Engine (category other)" in profile.notes


def test_no_rbln_tracks_is_a_profile_that_says_so(tmp_path, tb_class):
    tb = tb_class()
    tb.process(1, 42, "chrome")
    tb.thread(2, 1, 42, 43, "CrBrowserMain")
    tb.begin(0, 2, "MessageLoop::RunTask")
    tb.end(100, 2)
    profile = read(tmp_path, tb.bytes())
    assert list(profile.trace.tables) == ["other"]
    assert any(n.startswith("no RBLN command tracks were found") for n in profile.notes)


def test_rebel100_chiplets_and_devices(tmp_path, tb_class):
    tb = tb_class()
    tb.process(1, 2000, "rbln0")
    tb.track(2, 1, "Device Workload")
    for k in range(2):
        tb.track(10 + k, 1, f"Chiplet {k}")
        tb.track(20 + k, 10 + k, "Neural DMA")
        tb.track(30 + k, 10 + k, "General Compute Engine 7")  # trailing id ignored
    tb.process(100, 3000)  # a second device without a name
    tb.thread(101, 100, 3000, 3001, "Neural Engine Clusters")
    tb.begin(0, 2, "i0_0_W0_prefill_0")
    for k in range(2):
        tb.begin(10 + k, 20 + k, f"i0_0_W0_linear_{k}")
        tb.end(20 + k, 20 + k)
        tb.begin(30, 30 + k, f"i0_0_W0_gce_{k}")
        tb.end(35, 30 + k)
    tb.begin(0, 101, "i0_0_W0_mm_0")
    tb.end(5, 101)
    tb.end(100, 2)
    profile = read(tmp_path, tb.bytes())
    trace = profile.trace
    ndma = trace.tables["neural_dma"]
    assert ndma.track.names == ("rbln0 / Chiplet 0 / Neural DMA", "rbln0 / Chiplet 1 / Neural DMA")
    assert ndma.extra["chiplet"].names == ("Chiplet 0", "Chiplet 1")
    assert trace.tables["general_compute"].track.names[0] == "rbln0 / Chiplet 0 / General Compute Engine 7"
    assert trace.tables["device_workload"].extra["chiplet"].names == ("",)
    assert trace.tables["neural_engine"].extra["device"].names == ("pid 3000",)
    assert profile.info["generation"] == "Rebel100" and profile.info["chiplets"] == "2"
    assert profile.info["devices"] == "2" and profile.info["name_format"] == "v0.12 (i/W prefixes)"


def test_legacy_thread_descriptors_without_track_uuid(tmp_path, tb_class):
    tb = tb_class()
    p = tb.packet(3)
    p.process_descriptor.pid, p.process_descriptor.process_name = 500, "rbln1"
    p = tb.packet(3)
    p.thread_descriptor.pid, p.thread_descriptor.tid, p.thread_descriptor.thread_name = 500, 501, "Task DMA"
    for ts, kind in ((100, 1), (180, 2)):
        q = tb.packet(3)
        q.timestamp, q.track_event.type = ts, kind
        if kind == 1:
            q.track_event.name = "0_x_0"
    tdma = read(tmp_path, tb.bytes()).trace.tables["task_dma"]
    assert tdma.track.names == ("rbln1 / Task DMA",) and tdma.duration.tolist() == [80.0]


def test_flows_legacy_fields_and_termination(tmp_path, tb_class):
    tb = tb_class()
    t = tb.atom()
    names = []
    for k in range(4):
        p = tb.begin(k * 100, t["Task DMA"], f"0_s{k}_0")
        names.append(p)
        tb.end(k * 100 + 10, t["Task DMA"])
    names[0].track_event.flow_ids_old.append(7)
    names[1].track_event.terminating_flow_ids_old.append(7)  # closes the chain
    names[2].track_event.flow_ids_old.append(7)  # starts a new one
    names[3].track_event.flow_ids.append(7)
    froms, tos = read(tmp_path, tb.bytes()).trace.extra["flows"]
    assert list(zip(froms.tolist(), tos.tolist(), strict=True)) == [(0, 1), (2, 3)]


def test_random_bytes_never_raise_anything_but_advisor_error(tmp_path, reference_trace):
    rng = np.random.default_rng(3)
    data = bytearray(reference_trace().bytes())
    for trial in range(60):
        mutated = bytearray(data)
        for _ in range(1 + trial % 5):
            mutated[int(rng.integers(len(mutated)))] = int(rng.integers(256))
        try:
            profile = read(tmp_path, bytes(mutated), f"m{trial}.pb")
        except AdvisorError:
            continue
        assert profile.trace.extra["quality"].slices == sum(len(t) for t in profile.trace.tables.values())


def test_every_encoding_of_the_sample_generator_gives_the_same_tables(tmp_path):
    """The samples' generator writes one model in each encoding of reference §8.4 (interned or inline
    names, complete events, defaults, incremental clock, dict or legacy-JSON arguments, old flow fields,
    compressed_packets, gzip): the tables must not change."""
    import sys

    from tests_support import SAMPLES

    sys.path.insert(0, str(SAMPLES))
    try:  # the generator is part of the repository: a rename must fail this test, not switch it off
        from make_rbln_samples import ENCODINGS, build_scenario
    finally:
        sys.path.remove(str(SAMPLES))
    for scenario in ("rebel100",):  # chiplet groups, named tracks under parents, flows
        reference = None
        for encoding in ENCODINGS:
            values = table_values(read(tmp_path, build_scenario(scenario, encoding), f"{scenario}.{encoding}.pb"))
            if reference is None:
                reference = values
            assert nan_equal(values, reference), (scenario, encoding)


def test_progress_and_folders(tmp_path, reference_trace):
    from advisor.inputs.perfetto import reader
    from advisor.profilers.rbln.adapters import read

    seen: list[str] = []
    path = reference_trace().write(tmp_path / "t.pb")
    read(path, 1, seen.append)
    assert seen and seen[-1] == "reading t.pb: 100%"
    with pytest.raises(AdvisorError, match="no Perfetto trace"):
        load(tmp_path, LoadOptions())
    assert 1 <= reader.default_workers() <= reader.MAX_WORKERS
