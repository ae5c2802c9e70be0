"""The synthetic RBLN trace generator (samples/make_rbln_samples.py): deterministic bytes, valid
Perfetto framing, the documented track and slice names, identical slices in every encoding, and the
shape each scenario is meant to have — checked with an independent decoder and interval unions here,
not with advisor's reader, so the samples can be trusted while the reader is being written."""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import statistics
import sys
import zlib
from dataclasses import dataclass, field

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from tests_support import SAMPLES


def _load():
    spec = importlib.util.spec_from_file_location("make_rbln_samples", SAMPLES / "make_rbln_samples.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


gen = _load()

TITLE_KEY = {
    "Host": "host", "Neural Engine Clusters": "ne", "Neural DMA": "ndma", "Task DMA": "tdma",
    "External HDMA": "ehdma", "Device HDMA": "dhdma", "Device Sync": "dsync", "General Compute Engine": "gce",
    "CCL Workload": "ccl", "CCL": "ccl", "Device Workload": "device_workload",
}
DEV = {"ne", "ndma", "tdma", "ehdma", "dhdma", "dsync", "gce", "ccl"}
NAME = re.compile(r"^(?:i(?P<inst>\d+)_)?(?P<seq>\d+)_(?:W(?P<wl>\d+)_)?(?P<layer>.+?)_(?P<cmd>\d+)$")
BYTES = re.compile(r":(\d+)Byte")
WEIGHT_FAMILIES = {"linear", "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head",
                   "fc"}
INLINE_OPS = {"relu", "add", "gelu", "silu", "mul"}


# ---------------------------------------------------------------------------------------------
# an independent decoder: every encoding of reference §4.2 the generator writes


@dataclass(frozen=True)
class Row:
    path: str
    cat: str
    device: str
    chiplet: str
    name: str
    start: int  # ns
    dur: int  # ns
    nbytes: int | None
    cycles: int | None

    @property
    def end(self) -> int:
        return self.start + self.dur


@dataclass
class Decoded:
    rows: list[Row] = field(default_factory=list)
    flows: list[tuple[int, int]] = field(default_factory=list)  # row indices
    packets: int = 0
    sequences: set[int] = field(default_factory=set)
    clears: int = 0
    tracks: dict[int, dict] = field(default_factory=dict)

    def canonical(self) -> tuple[list[tuple], set[tuple]]:
        rows = sorted((r.path, r.name, r.start, r.dur, r.nbytes, r.cycles) for r in self.rows)
        key = [(r.path, r.name, r.start) for r in self.rows]
        return rows, {(key[a], key[b]) for a, b in self.flows}


def _packets(data: bytes) -> list:
    out = []
    for p in pb.Trace.FromString(data).packet:
        if p.HasField("compressed_packets"):
            out.extend(_packets(zlib.decompress(p.compressed_packets)))
        else:
            out.append(p)
    return out


def _args(a, ann_names: dict[int, str]) -> tuple[str, dict]:
    name = a.name or ann_names[a.name_iid]
    if a.HasField("string_value"):
        return name, json.loads(a.string_value)
    if a.HasField("legacy_json_value"):
        return name, json.loads(a.legacy_json_value)
    value = {}
    for e in a.dict_entries:
        value[e.name] = [v.string_value if v.HasField("string_value") else v.uint_value for v in e.array_values]
    return name, value


def decode(data: bytes) -> Decoded:
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out = Decoded()
    names: dict[int, dict[int, str]] = {}
    anns: dict[int, dict[int, str]] = {}
    defaults: dict[int, int] = {}
    clocks: dict[int, list[int]] = {}
    open_: dict[int, list[tuple]] = {}
    begun: list[tuple] = []  # (uuid, name, start, dur, args, out flows, in flows) in emission order
    packets = _packets(data)
    out.packets = len(packets)
    for p in packets:
        seq = p.trusted_packet_sequence_id
        out.sequences.add(seq)
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            out.clears += 1
            names[seq], anns[seq] = {}, {}
            defaults.pop(seq, None)
            clocks.pop(seq, None)
        if p.HasField("trace_packet_defaults"):
            defaults[seq] = p.trace_packet_defaults.track_event_defaults.track_uuid
        if p.HasField("interned_data"):
            names[seq].update({e.iid: e.name for e in p.interned_data.event_names})
            anns[seq].update({e.iid: e.name for e in p.interned_data.debug_annotation_names})
        if p.HasField("clock_snapshot"):
            boot = next(c.timestamp for c in p.clock_snapshot.clocks if c.clock_id == 6)
            for c in p.clock_snapshot.clocks:
                if c.clock_id == 64:
                    assert c.is_incremental
                    clocks[seq] = [boot, c.unit_multiplier_ns]
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            kind = "process" if d.HasField("process") else "thread" if d.HasField("thread") else "named"
            name = d.name or (d.thread.thread_name if kind == "thread" else d.process.process_name)
            out.tracks[d.uuid] = {"name": name, "parent": d.parent_uuid if d.HasField("parent_uuid") else None,
                                  "kind": kind}
        if not p.HasField("track_event"):
            continue
        ts = p.timestamp
        if p.timestamp_clock_id == 64:
            clocks[seq][0] += ts * clocks[seq][1]
            ts = clocks[seq][0]
        te = p.track_event
        uuid = te.track_uuid if te.HasField("track_uuid") else defaults[seq]
        if te.type == pb.TrackEvent.TYPE_SLICE_END:
            rec = open_[uuid].pop()
            rec[3] = ts - rec[2]
            continue
        name = te.name or names[seq][te.name_iid]
        args = dict(_args(a, anns.get(seq, {})) for a in te.debug_annotations)
        rec = [uuid, name, ts, None, args.get("Slice Arguments"),
               [*te.flow_ids, *te.flow_ids_old], [*te.terminating_flow_ids, *te.terminating_flow_ids_old]]
        if te.HasField("legacy_event") and te.legacy_event.phase == ord("X"):
            rec[3] = te.legacy_event.duration_us * 1000
        else:
            assert te.type == pb.TrackEvent.TYPE_SLICE_BEGIN
            open_.setdefault(uuid, []).append(rec)
        begun.append(rec)
    assert not any(open_.values()), "a BEGIN was never closed"
    last: dict[int, int] = {}
    for i, (uuid, name, ts, dur, args, fo, fi) in enumerate(begun):
        path, cat, device, chiplet = _track(out.tracks, uuid)
        nbytes = cycles = None
        if args:
            if "transfer" in args:
                nbytes = sum(int(x) for v in args["transfer"] for x in BYTES.findall(str(v)))
            if "comp_cycle" in args:
                cycles = sum(int(v) for v in args["comp_cycle"])
        out.rows.append(Row(path, cat, device, chiplet, name, ts, dur, nbytes, cycles))
        for f in fi:
            out.flows.append((last.pop(f), i))
        for f in fo:
            if f in last:
                out.flows.append((last[f], i))
            last[f] = i
    return out


def _track(tracks: dict[int, dict], uuid: int) -> tuple[str, str, str, str]:
    chain, u = [], uuid
    while u is not None:
        chain.append(tracks[u])
        u = tracks[u]["parent"]
    cat = next((TITLE_KEY[t["name"]] for t in chain if t["name"] in TITLE_KEY), "other")
    device = next((t["name"] for t in chain if t["kind"] == "process"), "device")
    chiplet = next((t["name"] for t in chain if t["name"].startswith("Chiplet ")), "")
    return " / ".join(t["name"] for t in reversed(chain)), cat, device, chiplet


# ---------------------------------------------------------------------------------------------
# the contract's metrics, with plain interval unions (/tmp/rbln_contract.md)


def merged(iv) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def ulen(iv) -> int:
    return sum(b - a for a, b in merged(iv))


def clip(iv, lo: int, hi: int) -> list[tuple[int, int]]:
    return [(max(a, lo), min(b, hi)) for a, b in iv if min(b, hi) > max(a, lo)]


def minus(a, b) -> list[tuple[int, int]]:
    """a \\ b for merged interval lists."""
    out, j, b = [], 0, merged(b)
    for s, e in merged(a):
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def family(layer: str) -> str:
    if "." in layer and not layer.startswith("fused("):
        return layer.rsplit(".", 1)[1]
    return re.sub(r"_\d+$", "", layer)


def metrics(d: Decoded) -> dict[str, float]:
    rows = d.rows
    dev = [r for r in rows if r.cat in DEV]
    iv = {}  # (unit, cat) -> intervals
    chiplets: dict[str, set[str]] = {}
    for r in dev:
        if r.chiplet:
            chiplets.setdefault(r.device, set()).add(r.chiplet)
    for r in dev:  # a device-level DEV track (CCL) on a chiplet device counts for each of its chiplets
        for c in ([r.chiplet] if r.chiplet or r.device not in chiplets else sorted(chiplets[r.device])):
            iv.setdefault(((r.device, c), r.cat), []).append((r.start, r.end))
    units = sorted({u for u, _ in iv})
    lo, hi = min(r.start for r in dev), max(r.end for r in dev)
    span = hi - lo

    def per_unit(f) -> float:
        return statistics.fmean(f(lambda *cats, u=u: [x for c in cats for x in iv.get((u, c), [])]) for u in units)

    m: dict[str, float] = {"device_span_ms": span / 1e6, "units": len(units)}
    for cat, key in (("ne", "neural_engine"), ("ndma", "neural_dma"), ("tdma", "task_dma"),
                     ("ehdma", "external_hdma"), ("gce", "general_compute")):
        m[f"{key}_busy_fraction"] = per_unit(lambda g, c=cat: ulen(g(c))) / span
    all_dev = [(r.start, r.end) for r in dev]
    m["device_idle_fraction_per_unit"] = 1 - per_unit(lambda g: ulen(g(*DEV))) / span
    m["device_idle_fraction"] = 1 - ulen(all_dev) / span
    gaps = [b[0] - a[1] for a, b in zip(merged(all_dev), merged(all_dev)[1:], strict=False)]
    m["largest_gap_fraction"] = max(gaps, default=0) / span
    m["ne_only_fraction"] = per_unit(lambda g: ulen(g("ne", "ndma", "tdma")) - ulen(g("ndma", "tdma"))) / span
    m["dma_only_fraction"] = per_unit(lambda g: ulen(g("ne", "ndma", "tdma")) - ulen(g("ne"))) / span
    m["ne_starved_fraction"] = per_unit(lambda g: ulen(g("ne", "tdma", "ehdma")) - ulen(g("ne"))) / span
    # the Neural Engine idle while Neural DMA runs and no Task DMA or External HDMA does (those are ne_starved's)
    m["ne_idle_under_neural_dma_fraction"] = per_unit(
        lambda g: ulen(g("ne", "ndma", "tdma", "ehdma")) - ulen(g("ne", "tdma", "ehdma"))) / span
    # perfect pipeline: the span less the busiest unit (communication counted as one)
    busiest = max(per_unit(lambda g, c=c: ulen(g(*c))) for c in (("ne",), ("ndma",), ("tdma",), ("ehdma",), ("gce",),
                                                                  ("dhdma", "dsync", "ccl")))
    m["pipeline_headroom_fraction"] = 1 - busiest / span
    m["comm_exposed_fraction"] = per_unit(lambda g: ulen(g("ne", "dhdma", "dsync", "ccl")) - ulen(g("ne"))) / span

    # sequences
    seqs: dict[tuple, list[Row]] = {}
    parsed = {}
    for r in rows:
        mt = NAME.match(r.name)
        parsed[id(r)] = mt
        if mt and r.cat in DEV:
            seqs.setdefault((mt["inst"], int(mt["seq"])), []).append(r)
    spans = {k: (min(r.start for r in v), max(r.end for r in v)) for k, v in seqs.items()}
    lengths = [b - a for a, b in spans.values()]
    m["sequence_count"] = len(lengths)
    m["sequence_span_cv"] = statistics.stdev(lengths) / statistics.fmean(lengths) if len(lengths) >= 3 else 0.0
    total_seq = sum(lengths)
    barrier = tail = 0
    for v in seqs.values():
        ne = [r for r in v if r.cat == "ne"]
        io = [r for r in v if r.cat == "ehdma"]
        if ne and io:
            first_ne, first_io = min(r.start for r in ne), min(r.start for r in io)
            barrier += max(0, first_ne - first_io)
            tail += max(0, max(r.end for r in io) - max(r.end for r in ne))
    m["first_command_barrier_share"] = barrier / total_seq
    m["output_tail_share"] = tail / total_seq
    first_end = min(spans.values())[1]
    io_all = [(r.start, r.end) for r in dev if r.cat == "ehdma"]
    m["external_hdma_after_warmup_fraction"] = ulen(clip(io_all, first_end, hi)) / (hi - first_end)

    # host
    first, last = min(r.start for r in rows), max(r.end for r in rows)
    host = [(r.start, r.end) for r in rows if r.cat == "host"]
    exposed = minus(host, all_dev)
    inside = ulen([x for x in clip_many(exposed, list(spans.values()))])
    m["host_in_sequence_share"] = inside / (last - first)
    m["host_between_sequences_share"] = (ulen(exposed) - inside) / (last - first)

    # layers
    ne_rows = [r for r in dev if r.cat == "ne"]
    ne_union = ulen([(r.start, r.end) for r in ne_rows])
    layer_ne: dict[str, list] = {}
    layer_dma: dict[str, list] = {}
    layer_all: dict[str, list] = {}
    for r in dev:
        mt = parsed[id(r)]
        key = mt["layer"] if mt else r.name
        layer_all.setdefault(key, []).append((r.start, r.end))
        if r.cat == "ne":
            layer_ne.setdefault(key, []).append((r.start, r.end))
        if r.cat in ("ndma", "tdma"):
            layer_dma.setdefault(key, []).append((r.start, r.end))
    shares = sorted((ulen(v) / ne_union for v in layer_ne.values()), reverse=True)
    m["top_layer_share"] = shares[0]
    m["top3_layer_share"] = sum(shares[:3])
    bound = [x for k, v in layer_all.items() if ulen(layer_dma.get(k, [])) >= 1.5 * ulen(layer_ne.get(k, []))
             and layer_dma.get(k) for x in v]
    m["dma_bound_layer_fraction"] = ulen(bound) / span
    ndma = [r for r in dev if r.cat == "ndma"]
    weights = [(r.start, r.end) for r in ndma if parsed[id(r)] and family(parsed[id(r)]["layer"]) in WEIGHT_FAMILIES]
    m["weight_stream_share"] = ulen(weights) / max(1, ulen([(r.start, r.end) for r in ndma]))
    unattributable = [(r.start, r.end) for r in ne_rows
                      if not parsed[id(r)] or parsed[id(r)]["layer"] in INLINE_OPS]
    repeated = set()
    for v in seqs.values():  # command order per unit: devices and chiplets run side by side
        for unit in {(r.device, r.chiplet) for r in v}:
            order = [parsed[id(r)]["layer"] for r in sorted(v, key=lambda r: r.start)
                     if r.cat == "ne" and (r.device, r.chiplet) == unit]
            runs = [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]
            repeated |= {k for k in set(runs) if runs.count(k) > 1}
    rep = [(r.start, r.end) for r in ne_rows if parsed[id(r)] and parsed[id(r)]["layer"] in repeated]
    m["unattributable_ne_share"] = (ulen(unattributable) + ulen(rep)) / ne_union
    density = sorted(r.cycles / r.dur for r in ne_rows if r.cycles)
    m["ne_efficiency_median"] = statistics.median(density) / density[int(0.9 * (len(density) - 1))]
    seqn = max(1, len(lengths))
    m["task_dma_mib_per_sequence"] = sum(r.nbytes or 0 for r in dev if r.cat == "tdma") / seqn / 2**20

    # devices and chiplets
    per_dev: dict[str, list] = {}
    for r in dev:
        per_dev.setdefault(r.device, []).append((r.start, r.end))
    busy = {k: ulen(v) for k, v in per_dev.items()}
    m["device_imbalance"] = max(busy.values()) / statistics.fmean(busy.values()) if len(busy) > 1 else 1.0
    m["straggler_device"] = float(sorted(busy).index(max(busy, key=busy.get))) if len(busy) > 1 else -1.0
    chip = {u: ulen([x for c in DEV for x in iv.get((u, c), [])]) for u in units if u[1]}
    m["chiplet_imbalance"] = max(chip.values()) / statistics.fmean(chip.values()) if len(chip) > 1 else 1.0
    m["straggler_chiplet"] = float(max(chip, key=chip.get)[1].split()[-1]) if chip else -1.0
    ne_dev = {k: ulen([(r.start, r.end) for r in ne_rows if r.device == k]) for k in busy}
    m["ne_imbalance_ratio"] = max(ne_dev.values()) / min(ne_dev.values())
    return m


def clip_many(iv, windows) -> list[tuple[int, int]]:
    return [x for a, b in merged(windows) for x in clip(iv, a, b)]


# Rule conditions of the contract (warning-level and the info rule a scenario may mean to show),
# as (metric, threshold, direction); a rule fires when all its terms hold (any, for `any` rules).
RULES = {
    "ne-compute-bound": ("all", [("neural_engine_busy_fraction", 0.90, ">="), ("dma_only_fraction", 0.05, "<=")]),
    "weight-dma-bound": ("all", [("neural_dma_busy_fraction", 0.90, ">="), ("ne_only_fraction", 0.10, "<="),
                                 ("weight_stream_share", 0.5, ">="), ("ne_efficiency_median", 0.5, "<=")]),
    "ne-starved-by-transfers": ("all", [("ne_starved_fraction", 0.20, ">=")]),
    "ne-idle-under-neural-dma": ("all", [("ne_idle_under_neural_dma_fraction", 0.15, ">="),
                                         ("pipeline_headroom_fraction", 0.15, ">=")]),
    "activation-spill-task-dma": ("all", [("task_dma_busy_fraction", 0.30, ">="),
                                          ("task_dma_mib_per_sequence", 256, ">=")]),
    "host-bound-dispatch": ("all", [("host_between_sequences_share", 0.20, ">=")]),
    # the union over all devices: with the contract's mean-per-unit idle, any imbalance >= 1.15 is
    # >= 13 % idle by itself (reported to the lead)
    "device-idle-gaps": ("any", [("device_idle_fraction", 0.15, ">="), ("largest_gap_fraction", 0.05, ">=")]),
    "io-dominated": ("any", [("external_hdma_busy_fraction", 0.15, ">="), ("output_tail_share", 0.10, ">=")]),
    "multi-device-comm-exposed": ("all", [("comm_exposed_fraction", 0.15, ">=")]),
    "device-imbalance": ("all", [("device_imbalance", 1.15, ">=")]),
    "hot-layer": ("any", [("top_layer_share", 0.25, ">="), ("top3_layer_share", 0.50, ">=")]),
    "dma-bound-layers": ("all", [("dma_bound_layer_fraction", 0.20, ">=")]),
    "unattributable-names": ("all", [("unattributable_ne_share", 0.10, ">=")]),
    "first-command-barrier": ("all", [("first_command_barrier_share", 0.10, ">=")]),
    "chiplet-imbalance": ("all", [("chiplet_imbalance", 1.15, ">=")]),
    "host-fallback": ("all", [("host_in_sequence_share", 0.05, ">=")]),
    "weight-streaming": ("all", [("external_hdma_after_warmup_fraction", 0.30, ">=")]),
    "sequence-jitter": ("all", [("sequence_span_cv", 0.15, ">="), ("sequence_count", 5, ">=")]),
}


def _holds(value: float, thr: float, op: str, margin: float = 0.0) -> bool:
    """value op thr, with `margin` (a share of the threshold, of its distance from 1 for ratios >= 1)
    as the clearance demanded."""
    room = margin * (min(thr, 1 - thr) if thr < 1 else thr - 1 if thr < 2 else thr)
    return value >= thr + room if op == ">=" else value <= thr - room


def fired(m: dict[str, float], margin: float = 0.0) -> set[str]:
    """Rules whose condition holds with the given clearance."""
    out = set()
    for rule, (how, terms) in RULES.items():
        ok = [_holds(m[k], t, op, margin) for k, t, op in terms]
        if (all if how == "all" else any)(ok):
            out.add(rule)
    return out


def not_fired(m: dict[str, float], margin: float) -> set[str]:
    """Rules that certainly stay silent: their condition fails with the given clearance."""
    out = set()
    for rule, (how, terms) in RULES.items():
        flip = {">=": "<=", "<=": ">="}
        fails = [_holds(m[k], t, flip[op], margin) for k, t, op in terms]
        if (any if how == "all" else all)(fails):
            out.add(rule)
    return out


# ---------------------------------------------------------------------------------------------
# tests

CHECKED_IN = {
    "rbln_atom_cnn/trace.pb": "atom_cnn", "rbln_atom_rsd/trace.pb": "atom_rsd", "rbln_rebel100/trace.pb": "rebel100",
    "rbln_before_after/before.pb": "before", "rbln_before_after/after.pb": "after",
}
WARNING_RULES = set(RULES) - gen.INFO_RULES


def frames(data: bytes) -> int:
    """Walk the top-level framing (field 1, length-delimited) to the last byte; the packet count."""
    pos = n = 0
    while pos < len(data):
        assert data[pos] == 0x0A, f"not a packet at byte {pos}"
        pos, length, shift = pos + 1, 0, 0
        while True:
            byte = data[pos]
            length |= (byte & 0x7F) << shift
            pos, shift = pos + 1, shift + 7
            if byte < 0x80:
                break
        pos += length
        n += 1
    assert pos == len(data)
    return n


def test_generating_twice_gives_identical_bytes():
    for name in ("atom_rsd", "rebel100", "kv_spill", "host_fallback"):
        assert gen.build_scenario(name) == gen.build_scenario(name), name
    for enc in gen.ENCODINGS:
        assert gen.build_scenario("clean", enc) == gen.build_scenario("clean", enc), enc
    assert gen.build_scenario("clean", seed=1) != gen.build_scenario("clean")


def test_checked_in_samples_are_what_the_generator_writes(tmp_path):
    written = gen.write_samples(tmp_path)
    assert {p.relative_to(tmp_path).as_posix() for p in written} >= {*CHECKED_IN, "rbln_ranks/rank1.pb"}
    for p in written:
        rel = p.relative_to(tmp_path)
        assert (SAMPLES / rel).read_bytes() == p.read_bytes(), f"{rel} is stale: run samples/make_rbln_samples.py"
        if p.suffix == ".pb":
            assert p.stat().st_size < 1_000_000, rel
            text = (p.parent / "README.md").read_text(encoding="utf-8")
            assert "**Synthetic.**" in text and "make_rbln_samples.py" in text and "should find" in text


@pytest.mark.parametrize("rel", sorted(CHECKED_IN) + [f"rbln_ranks/rank{r}.pb" for r in range(4)])
def test_sample_files_frame_and_decode(rel):
    data = (SAMPLES / rel).read_bytes()
    trace = pb.Trace.FromString(data)
    assert frames(data) == len(trace.packet) > 1000
    assert trace.SerializeToString() == data  # nothing unknown, nothing out of place


@pytest.mark.parametrize("enc", gen.ENCODINGS)
def test_every_encoding_frames_and_decodes(enc):
    data = gen.build_scenario("atom_rsd", enc)
    if enc == "gzip":
        assert data[:2] == b"\x1f\x8b"
        data = gzip.decompress(data)
    trace = pb.Trace.FromString(data)
    assert frames(data) == len(trace.packet)
    if enc == "compressed":
        assert all(p.HasField("compressed_packets") for p in trace.packet)
        assert sum(frames(zlib.decompress(p.compressed_packets)) for p in trace.packet) > 1000


@pytest.mark.parametrize("name", ["atom_rsd", "rebel100", "kv_spill"])
def test_all_encodings_describe_the_same_slices(name):
    base = decode(gen.build_scenario(name, "interned"))
    rows, flows = base.canonical()
    assert len(rows) == len(gen.scenario_model(name).slices) and len(flows) == len(gen.scenario_model(name).flows)
    assert base.sequences == {1, 2} and base.clears == 4  # first packet of each sequence, then mid-file
    for enc in gen.ENCODINGS[1:]:
        d = decode(gen.build_scenario(name, enc))
        assert d.canonical() == (rows, flows), enc
    packets = {enc: _packets(_plain(gen.build_scenario(name, enc))) for enc in ("inline", "complete", "defaults",
                                                                                "incremental_clock", "dict_args",
                                                                                "legacy_json", "flow_old")}
    events = {enc: [p.track_event for p in ps if p.HasField("track_event")] for enc, ps in packets.items()}
    assert all(e.name and not e.name_iid for e in events["inline"] if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN)
    assert all(e.legacy_event.phase == ord("X") for e in events["complete"])
    assert not any(e.HasField("track_uuid") for e in events["defaults"])
    assert all(p.timestamp_clock_id == 64 for p in packets["incremental_clock"] if p.HasField("track_event"))
    assert any(a.dict_entries for e in events["dict_args"] for a in e.debug_annotations)
    assert any(a.legacy_json_value for e in events["legacy_json"] for a in e.debug_annotations)
    assert any(e.flow_ids_old for e in events["flow_old"]) and not any(e.flow_ids for e in events["flow_old"])


def _plain(data: bytes) -> bytes:
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


@pytest.mark.parametrize("name", list(gen.SCENARIOS))
def test_tracks_and_names_follow_the_documented_conventions(name):
    d = decode(gen.build_scenario(name))
    kinds = {}
    for t in d.tracks.values():
        kinds.setdefault(t["kind"], set()).add(t["name"])
    rebel = name == "rebel100"
    if rebel:  # layout C: named tracks, Chiplet groups of the eight categories
        assert kinds["process"] == {"rbln0"} and "thread" not in kinds
        assert {f"Chiplet {c}" for c in range(4)} | {"Device Workload", "CCL Workload", "CCL"} <= kinds["named"]
        for c in range(4):
            group = next(u for u, t in d.tracks.items() if t["name"] == f"Chiplet {c}")
            children = {t["name"] for t in d.tracks.values() if t["parent"] == group}
            assert children == set(TITLE_KEY) - {"CCL Workload", "CCL", "Device Workload"}
    else:  # layout A (B: one process per device): thread tracks named by category
        assert kinds["thread"] == set(TITLE_KEY) - {"General Compute Engine", "CCL Workload", "CCL", "Device Workload"}
        assert kinds["process"] == {f"rbln{k}" for k in range(len(kinds["process"]))}
    for r in d.rows:
        assert r.start % 1000 == 0 and r.dur % 1000 == 0 and r.dur > 0
        assert r.cat != "other", r.path
        if r.cat == "device_workload":
            assert r.name in ("prefill", "decoder")
            continue
        mt = NAME.match(r.name)
        assert mt, r.name
        assert (mt["inst"] is not None) == rebel and (mt["wl"] is not None) == (rebel and r.cat != "host"), r.name
        layer = mt["layer"]
        if layer.startswith("fused("):
            assert re.fullmatch(r"fused\([^()+]+(\+[^()+]+)+\)", layer), layer
        if r.cat in ("ndma", "tdma", "ehdma", "dhdma") or r.path.endswith(("CCL Send", "CCL Recv")):
            assert r.nbytes and r.nbytes > 0 and r.cycles is None, r.name
        if r.cat == "ne":
            assert r.cycles and r.cycles > 0 and r.nbytes is None, r.name
    cats = {(d.rows[a].cat, d.rows[b].cat) for a, b in d.flows}
    assert not {c for pair in cats for c in pair} & {"ndma"}  # Neural DMA dependencies are never drawn
    assert {("ehdma", "tdma"), ("tdma", "ne"), ("ne", "tdma"), ("tdma", "ehdma")} <= cats
    if name == "atom_rsd":
        assert {("dhdma", "dsync"), ("dsync", "dhdma"), ("dsync", "dsync")} <= cats
        assert any(d.rows[a].device != d.rows[b].device for a, b in d.flows)
    for a, b in d.flows:
        assert d.rows[a].start <= d.rows[b].start


@pytest.mark.parametrize("name", ["atom_cnn", "atom_rsd", "rebel100", "kv_spill"])
def test_a_command_moves_the_same_bytes_and_cycles_in_every_call(name):
    seen: dict[tuple, tuple] = {}
    for r in decode(gen.build_scenario(name)).rows:
        mt = NAME.match(r.name)
        if mt and r.cat != "host":
            key = (r.path, mt["inst"], mt["wl"], mt["layer"], mt["cmd"])
            assert seen.setdefault(key, (r.nbytes, r.cycles)) == (r.nbytes, r.cycles), key


@pytest.mark.parametrize("name", list(gen.SCENARIOS))
def test_scenario_has_its_intended_shape(name):
    m = metrics(decode(gen.build_scenario(name)))
    for key, (lo, hi) in gen.scenario_shape(name).items():
        assert lo <= m[key] <= hi, f"{name}: {key} = {m[key]:.4g} outside [{lo}, {hi}]"
    meant = set(gen.SCENARIOS[name])
    assert fired(m) & WARNING_RULES == meant - gen.INFO_RULES
    assert meant <= fired(m, margin=0.15), "a rule fires only narrowly"
    assert set(RULES) - meant <= not_fired(m, margin=0.15), "a rule stays silent only narrowly"


def _tile_in_before_its_command(d: Decoded) -> float:
    """Of the Neural Engine commands with a Neural DMA before them on their unit, the share whose latest
    Neural DMA (their tile) had ended when they started: prefetched (double-buffered), not streamed in while
    the command waits."""
    ndma: dict[tuple, list[Row]] = {}
    for r in d.rows:
        if r.cat == "ndma":
            ndma.setdefault((r.device, r.chiplet), []).append(r)
    done = total = 0
    for r in d.rows:
        if r.cat != "ne":
            continue
        # strictly before: the next tile's Neural DMA starts with this command (into the other buffer)
        before = [x for x in ndma.get((r.device, r.chiplet), ()) if x.start < r.start]
        if before:
            total += 1
            done += max(before, key=lambda x: x.start).end <= r.start
    return done / total


@pytest.mark.parametrize("name", list(gen.SCENARIOS))
def test_neural_dma_is_prefetched_except_where_a_scenario_models_its_absence(name):
    """Issue 23: the Neural Engine idle under Neural DMA is a finding only where a scenario means it. Every
    scenario double-buffers Neural DMA (the tile is in before its command starts) except atom_cnn (no prefetch:
    the ~23 % the rule is about) and weight_dma (Neural DMA is the busiest unit: nothing to hide it under)."""
    d = decode(gen.build_scenario(name))
    share, m = _tile_in_before_its_command(d), metrics(d)
    if name in gen.NOT_PREFETCHED:
        assert share < 0.1
        assert m["ne_idle_under_neural_dma_fraction"] >= 0.18
    else:
        assert share > 0.9
        assert m["ne_idle_under_neural_dma_fraction"] < 0.1
    assert {"atom_cnn", "weight_dma"} == gen.NOT_PREFETCHED


def test_atom_cnn_idles_under_neural_dma_and_weight_dma_cannot_hide_it():
    cnn = metrics(decode((SAMPLES / "rbln_atom_cnn" / "trace.pb").read_bytes()))
    assert cnn["ne_idle_under_neural_dma_fraction"] == pytest.approx(0.227, abs=0.005)  # of the device span
    assert cnn["pipeline_headroom_fraction"] > cnn["ne_idle_under_neural_dma_fraction"]  # all of it recoverable
    weights = metrics(decode(gen.build_scenario("weight_dma")))
    assert weights["ne_idle_under_neural_dma_fraction"] > 0.18 and weights["pipeline_headroom_fraction"] < 0.04


def test_before_and_after():
    before = metrics(decode((SAMPLES / "rbln_before_after" / "before.pb").read_bytes()))
    after = metrics(decode((SAMPLES / "rbln_before_after" / "after.pb").read_bytes()))
    assert after["device_span_ms"] < 0.8 * before["device_span_ms"]
    assert before["ne_starved_fraction"] >= 0.2 > 0.1 > after["ne_starved_fraction"]
    assert max(before["ne_idle_under_neural_dma_fraction"], after["ne_idle_under_neural_dma_fraction"]) < 0.08


def test_atom_rsd_and_rebel100_stragglers():
    rsd = metrics(decode((SAMPLES / "rbln_atom_rsd" / "trace.pb").read_bytes()))
    assert rsd["straggler_device"] == 2 and rsd["ne_imbalance_ratio"] == pytest.approx(1.55, abs=0.05)
    rebel = metrics(decode((SAMPLES / "rbln_rebel100" / "trace.pb").read_bytes()))
    assert rebel["straggler_chiplet"] == 3


def test_ranks_are_one_model_on_separate_clocks_with_a_straggler():
    decoded = [decode((SAMPLES / "rbln_ranks" / f"rank{r}.pb").read_bytes()) for r in range(4)]
    firsts = [min(r.start for r in d.rows) for d in decoded]
    assert min(abs(a - b) for i, a in enumerate(firsts) for b in firsts[i + 1:]) > 1e9  # > 1 s apart
    assert len({tuple(sorted({r.name for r in d.rows})) for d in decoded}) == 1  # the same compiled commands
    ms = [metrics(d) for d in decoded]
    spans = [m["device_span_ms"] for m in ms]
    others = statistics.median(spans[:1] + spans[2:])
    assert spans[1] / others == pytest.approx(1.2, abs=0.04)
    for m in ms:
        assert not fired(m) & WARNING_RULES


def test_large_trace_is_rbln_shaped_and_protobuf_exact(tmp_path):
    path = tmp_path / "large.pb"
    n = gen.write_large_trace(path, 400_000, seed=3)
    data = path.read_bytes()
    assert n == len(data) >= 400_000
    trace = pb.Trace.FromString(data)
    assert trace.SerializeToString() == data  # the hand-assembled packets are protobuf's own bytes
    d = decode(data)
    assert {r.cat for r in d.rows} == {"host", "ne", "ndma", "tdma", "ehdma"}
    seqs = {int(NAME.match(r.name)["seq"]) for r in d.rows}
    assert seqs == set(range(len(seqs))) and len(seqs) >= 4
    assert d.clears == len(seqs)  # re-interned at every call
    assert all(r.nbytes for r in d.rows if r.cat in ("ndma", "tdma", "ehdma"))
    assert all(r.cycles for r in d.rows if r.cat == "ne")
    assert len(d.flows) > len(d.rows) / 4
    assert gen.write_large_trace(tmp_path / "again.pb", 400_000, seed=3) == n
    assert (tmp_path / "again.pb").read_bytes() == data
