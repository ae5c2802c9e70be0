#!/usr/bin/env python3
"""Synthetic RBLN (Rebellions NPU) profiler traces: the samples under samples/rbln_*/ and a large
trace for the speed benchmark.

    python samples/make_rbln_samples.py                                  # regenerate every sample
    python samples/make_rbln_samples.py --large /tmp/big.pb --size-mb 500

No real RBLN trace is public (../shared/reference/rbln-profiler.md §2), so these are written from
what the RBLN docs and one public reader say a trace holds (reference §1.4-§1.6, §3, §8):

    tracks      ATOM: one process per device (`rbln0`, pid 1000 + device) with seven thread tracks named
                by category (Host, Neural Engine Clusters, Neural DMA, Task DMA, External HDMA, Device
                HDMA, Device Sync); Rebel100: named groups `Chiplet 0..3` under the process, each with the
                eight category tracks (General Compute Engine added), a `Device Workload` track, a
                `CCL Workload` track and a `CCL` group
    slices      one per command, `{seq}_{layer}_{cmd}` (v0.12 multi-stream: `i{inst}_{seq}_W{wl}_{layer}_{cmd}`,
                no `W` on Host commands); fused layers `fused(a+b+c)`; command indices may skip
    arguments   a `Slice Arguments` debug annotation, JSON text: `{"transfer": [":<N>Byte"]}` on transfers,
                `{"comp_cycle": [<n>]}` on Neural Engine commands
    schedule    Neural DMA double-buffered (a command's tile streams in while the previous command
                computes) except where a scenario models its absence (atom_cnn: the Neural Engine idles
                under each tile's Neural DMA) or Neural DMA is the bottleneck (weight_dma)
    flows       External HDMA upload -> first Task DMA; Task DMA -> its Neural Engine command; Neural Engine
                -> spill Task DMA -> next command; last command -> output Task DMA -> External HDMA
                download; RSD: leaf Device HDMA -> root Device Sync -> root Device HDMA and -> each leaf's
                Device Sync; Rebel100: each chiplet's last W0 command -> CCL Send -> CCL Recv -> each
                chiplet's first W1 Task DMA; never Neural DMA (its dependencies are not drawn)

Every time is a whole number of microseconds (kept in µs here, written as ns), so the legacy complete
events (`duration_us`) and the µs incremental clock describe exactly the same slices as the ns
encodings. Deterministic: fixed seeds, no dates; `build_scenario` gives the same bytes every time.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent

# category key -> track name (the RBLN profiler's category strings)
TITLES = {
    "host": "Host",
    "ne": "Neural Engine Clusters",
    "ndma": "Neural DMA",
    "tdma": "Task DMA",
    "ehdma": "External HDMA",
    "dhdma": "Device HDMA",
    "dsync": "Device Sync",
    "gce": "General Compute Engine",
}
ATOM_CATEGORIES = ("host", "ne", "ndma", "tdma", "ehdma", "dhdma", "dsync")
REBEL_CATEGORIES = (*ATOM_CATEGORIES, "gce")
DEV = frozenset({"ne", "ndma", "tdma", "ehdma", "dhdma", "dsync", "gce", "ccl"})  # device command categories

ENCODINGS = ("interned", "inline", "complete", "defaults", "incremental_clock", "dict_args", "legacy_json",
             "flow_old", "compressed", "gzip")

# Rules each scenario is meant to fire (rules/rbln names, /tmp/rbln_contract.md). INFO_RULES are
# info-level: a scenario lists one when it is meant to show it; tests compare the rest exactly.
INFO_RULES = frozenset({"trace-quality", "unattributable-names"})
SCENARIOS: dict[str, tuple[str, ...]] = {
    "atom_cnn": ("hot-layer", "ne-idle-under-neural-dma"),
    "atom_rsd": ("multi-device-comm-exposed", "device-imbalance"),
    "rebel100": ("chiplet-imbalance",),
    "before": ("ne-starved-by-transfers", "dma-bound-layers"),
    "after": (),
    "ne_compute": ("ne-compute-bound",),
    "weight_dma": ("weight-dma-bound",),
    "kv_spill": ("activation-spill-task-dma",),
    "host_gaps": ("host-bound-dispatch", "device-idle-gaps"),
    "host_fallback": ("host-fallback",),
    "io_heavy": ("io-dominated",),
    "first_barrier": ("first-command-barrier",),
    # weights streamed from the host every call: External HDMA busy is then necessarily above
    # io-dominated's 15 % too (its 30 % after warm-up is the stronger condition)
    "weight_streaming": ("weight-streaming", "io-dominated"),
    "jitter": ("sequence-jitter",),
    "inline_names": ("unattributable-names",),
    "clean": (),
}

# Scenarios whose Neural DMA is not double-buffered (every other one prefetches each command's tile under
# the previous command): atom_cnn models the missing prefetch, weight_dma streams weights as fast as Neural
# DMA can (it is the busiest unit, so prefetch could not hide it).
NOT_PREFETCHED = frozenset({"atom_cnn", "weight_dma"})

# The documented name pattern (reference §3.3; advisor/profilers/rbln/data/names.yaml).
NAME_RE = re.compile(r"^(?:i(?P<inst>\d+)_)?(?P<seq>\d+)_(?:W(?P<wl>\d+)_)?(?P<layer>.+?)_(?P<cmd>\d+)$")

# Transfer models (reference §8.2), bytes per µs: External HDMA 6 µs + bytes / 8.4 GB/s (heteropilot's
# 8 MB -> 1 ms); Task DMA 2 µs + bytes / 100 GB/s (4 KiB-1 MiB in 2-12 µs); Neural DMA at 256 GB/s;
# Device HDMA 3 µs + bytes / 12 GB/s (device to device over PCIe).
EHDMA_BPUS = 8400.0
TDMA_BPUS = 100_000.0
NDMA_BPUS = 256_000.0
DHDMA_BPUS = 12_000.0
FLOW_BASE = 0x5EED_0000


def ehdma_us(nbytes: int) -> int:
    return 6 + round(nbytes / EHDMA_BPUS)


def tdma_us(nbytes: int) -> int:
    return 2 + round(nbytes / TDMA_BPUS)


def dhdma_us(nbytes: int) -> int:
    return 3 + round(nbytes / DHDMA_BPUS)


# ---------------------------------------------------------------------------------------------
# the trace model: tracks, slices (µs), flows


@dataclass
class Track:
    uuid: int
    kind: str  # process | thread | named
    name: str
    parent: int | None = None
    pid: int | None = None
    tid: int | None = None
    cat: str = ""  # category key of the slices on it ("" for containers: process, groups)
    side: str = "device"  # interned encoding: "host" tracks go on sequence 1, the rest on 2


@dataclass
class Slice:
    track: int
    name: str
    start: int  # µs from the trace epoch
    dur: int  # µs
    transfer: int | None = None
    cycles: int | None = None


@dataclass
class Model:
    epoch_us: int
    tracks: list[Track] = field(default_factory=list)
    slices: list[Slice] = field(default_factory=list)
    flows: list[tuple[int, int]] = field(default_factory=list)
    ends: dict[int, int] = field(default_factory=dict)  # track uuid -> end of its last slice

    def track(self, kind: str, name: str, uuid: int, **kw) -> int:
        self.tracks.append(Track(uuid, kind, name, **kw))
        return uuid

    def add(self, track: int, name: str, start: int, dur: int, transfer: int | None = None,
            cycles: int | None = None) -> int:
        assert dur >= 1 and start >= self.ends.get(track, 0), (name, start, self.ends.get(track))
        assert isinstance(start, int) and isinstance(dur, int), name
        self.ends[track] = start + dur
        self.slices.append(Slice(track, name, start, dur, transfer, cycles))
        return len(self.slices) - 1

    def flow(self, src: int | None, dst: int) -> None:
        """A dependency src -> dst; src must begin first (a flow links slices in emission order)."""
        if src is not None:
            assert (self.slices[src].start, src) < (self.slices[dst].start, dst), (src, dst)
            self.flows.append((src, dst))

    def end(self, index: int) -> int:
        s = self.slices[index]
        return s.start + s.dur


@dataclass
class Unit:
    """The category tracks of one device (ATOM) or one chiplet (Rebel100)."""

    tracks: dict[str, int]
    free: dict[str, int] = field(default_factory=dict)

    def at(self, cat: str, t: int) -> int:
        return max(t, self.free.get(cat, 0))

    def add(self, m: Model, cat: str, name: str, start: int, dur: int, **kw) -> int:
        i = m.add(self.tracks[cat], name, start, dur, **kw)
        self.free[cat] = start + dur
        return i


def atom_device(m: Model, dev: int) -> Unit:
    """Layout A: process `rbln<dev>` (pid 1000 + dev) with the seven category thread tracks."""
    pid = 1000 + dev
    proc = m.track("process", f"rbln{dev}", pid << 8, pid=pid)
    tracks = {}
    for k, cat in enumerate(ATOM_CATEGORIES, 1):
        side = "host" if cat in ("host", "ehdma") else "device"
        tracks[cat] = m.track("thread", TITLES[cat], (pid << 8) + k, parent=proc, pid=pid, tid=pid * 10 + k,
                              cat=cat, side=side)
    return Unit(tracks)


# ---------------------------------------------------------------------------------------------
# layers and the command stream of one sequence (reference §8.2)


@dataclass(frozen=True)
class Layer:
    name: str
    cmds: int  # Neural Engine commands
    ne: float  # µs per Neural Engine command
    tdma: int = 0  # Task DMA bytes per command (weights / activations into shared memory); 0: none
    ndma: float = 0.5  # Neural DMA duration as a share of the Neural Engine command
    density: float = 0.6  # comp_cycle per ns of Neural Engine time
    serial: bool = False  # Task DMA waits for the previous command to finish (no prefetch)
    spill: int = 0  # bytes written back to device DRAM after each command (Task DMA, flows both ways)
    engine: str = "ne"  # "gce": runs on Rebel100's General Compute Engine


@dataclass(frozen=True)
class Knobs:
    # Neural DMA double-buffered (the compiler's prefetch): a command's tile streams in while the previous
    # command computes, and the command starts once it is in. False: it streams in just before its own
    # command, `lead` of it with the Neural Engine idle (no prefetch: the NE idles under Neural DMA).
    prefetch: bool = True
    gap: float = 0.08  # Neural Engine idle before each command (dispatch; without prefetch the Neural DMA
    # lead runs then), share of the command
    lead: float = 0.8  # without prefetch: Neural DMA starts this share of its own length before its command
    tail: int = 1  # without prefetch: a Neural Engine command ends at least this long after its Neural DMA (µs)
    dep: int = 1  # Task DMA end -> Neural Engine start (µs)
    spread: float = 0.03  # ± relative spread of every duration from call to call
    slow: float = 1.0  # Neural Engine commands take this much longer (same cycles: a slower device)
    skip: float = 0.12  # chance a command index is skipped (omitted at compile time)


def jit(rng: random.Random, x: float, spread: float) -> int:
    return max(1, round(x * rng.uniform(1 - spread, 1 + spread)))


def _compiled(layer: Layer, what: str) -> random.Random:
    """What the compiler fixed for a layer (command indices, transfer sizes, work per command) is the
    same in every call, on every device and rank: drawn from the layer's name, not the run."""
    return random.Random(zlib.crc32(f"{what}:{layer.name}".encode()))


class _Names:
    """Command indices of one layer: issue order, some skipped (omitted at compile time, seed 003)."""

    def __init__(self, layer: Layer, skip: float, prefix: str) -> None:
        self.rng, self.skip, self.prefix, self.idx = _compiled(layer, "names"), skip, prefix, 0

    def __call__(self) -> str:
        if self.idx and self.rng.random() < self.skip:
            self.idx += 1
        self.idx += 1
        return f"{self.prefix}_{self.idx - 1}"


def run_layers(m: Model, u: Unit, pfx: str, layers: Iterable[Layer], t: int, rng: random.Random, kn: Knobs,
               scale: float = 1.0, sources: Iterable[int] = (), later: Iterable[int] = ()) -> int | None:
    """Schedule the layers' commands on unit u, none before t. `sources` flow into the first Task DMA
    (or command); each of `later` (uploads still running) into the first Task DMA starting after it
    ends. Returns the index of the last Neural Engine command (its end is u.free["ne"])."""
    pending, waiting = list(sources), sorted(later, key=m.end)
    prev_start = prev_end = u.at("ne", t)
    last = spill_src = None
    spill_due: tuple[int, int] | None = None  # (command, bytes): written back after the next prefetch

    def flush() -> int | None:
        nonlocal spill_due
        if spill_due is None:
            return None
        src, nbytes = spill_due
        spill_due = None
        i = u.add(m, "tdma", f"{m.slices[src].name.rsplit('_', 1)[0]}_{spill_idx}",
                  u.at("tdma", m.end(src)), tdma_us(nbytes), transfer=nbytes)
        m.flow(src, i)
        return i

    spill_idx = 0
    for layer in layers:
        name, crng = _Names(layer, kn.skip, f"{pfx}{layer.name}"), _compiled(layer, "commands")
        for _ in range(layer.cmds):
            work = layer.ne * scale * crng.uniform(0.9, 1.1)  # µs this command needs at full speed
            t_bytes = max(64, round(layer.tdma * crng.uniform(0.9, 1.1)) // 64 * 64)
            n_bytes = max(64, round(work * layer.ndma * crng.uniform(0.9, 1.1) * NDMA_BPUS) // 64 * 64)
            cycles = round(work * 1000 * layer.density * crng.uniform(0.95, 1.05))
            s_bytes = max(64, round(layer.spill * crng.uniform(0.9, 1.1)) // 64 * 64)
            d = jit(rng, work * kn.slow, kn.spread)
            ready = t
            t_idx = None
            if layer.tdma:
                start = u.at("tdma", max(t, prev_end if layer.serial else prev_start))
                t_idx = u.add(m, "tdma", name(), start, jit(rng, tdma_us(t_bytes), kn.spread), transfer=t_bytes)
                while waiting and m.end(waiting[0]) <= start:
                    pending.append(waiting.pop(0))
                for src in pending:
                    m.flow(src, t_idx)
                pending = []
                ready = u.free["tdma"] + kn.dep
            spill_src = flush()
            if spill_src is not None:
                ready = max(ready, u.free["tdma"] + kn.dep)
            dn = jit(rng, n_bytes / NDMA_BPUS, kn.spread) if layer.ndma else 0
            if kn.prefetch:  # into the second buffer while the previous command computes from the first
                if dn:
                    u.add(m, "ndma", name(), u.at("ndma", max(t, prev_start)), dn, transfer=n_bytes)
                s = max(u.at(layer.engine, t) + round(kn.gap * d), ready, u.free["ndma"] if dn else 0)
            else:
                lead = max(round(kn.lead * dn), dn + kn.tail - d) if dn else 0
                s = max(u.at(layer.engine, t) + round(kn.gap * d), ready, u.at("ndma", t) + lead)
                if dn:
                    u.add(m, "ndma", name(), s - lead, dn, transfer=n_bytes)
            e_idx = u.add(m, layer.engine, name(), s, d, cycles=cycles if layer.engine == "ne" else None)
            for src in [t_idx, spill_src, *pending]:  # pending: no Task DMA yet, the upload feeds the command
                m.flow(src, e_idx)
            pending, spill_src = [], None
            if layer.spill:  # the intermediate does not fit on chip: to device DRAM, back for the next command
                spill_due = (e_idx, s_bytes)
                spill_idx = int(name().rsplit("_", 1)[1])
            prev_start, prev_end = s, s + d
            if layer.engine == "ne":
                last = e_idx
    flush()
    return last


def sync(units: Iterable[Unit], t: int) -> None:
    """Nothing more runs on these units' compute and Task DMA tracks before t."""
    for u in units:
        for cat in ("ne", "tdma", "gce"):
            u.free[cat] = max(u.free.get(cat, 0), t)


@dataclass(frozen=True)
class Io:
    upload: int = 150_528  # input bytes (External HDMA, host -> device)
    download: int = 4_096  # output bytes (Task DMA out of shared memory, External HDMA to the host)
    chunks: int = 1  # upload commands; with chunk_gap 0 only the first precedes the first command
    chunk_gap: int = 0  # µs between upload commands that all precede the first command (host submission)
    host_pre: int = 30  # µs
    host_post: int = 15  # µs


def atom_sequence(m: Model, u: Unit, pfx: str, layers: list[Layer], t: int, rng: random.Random, kn: Knobs,
                  io: Io, scale: float = 1.0, fallbacks: dict[int, tuple[str, int, int]] | None = None) -> int:
    """One runtime call on one device: host pre-processing, input upload, the layers, output Task DMA,
    download, host post-processing. `fallbacks`: layer position -> (host op, µs, activation bytes): the
    op runs on the host before that layer (download, host, upload). Returns the end of the call."""
    h = u.add(m, "host", f"{pfx}host_preprocess_0", t, jit(rng, io.host_pre, 0.15))
    t = m.end(h)
    before = io.chunks if io.chunk_gap else 1
    nbytes = io.upload // io.chunks
    ups = []
    for k in range(before):
        ups.append(u.add(m, "ehdma", f"{pfx}input_{k}", u.at("ehdma", t), ehdma_us(nbytes), transfer=nbytes))
        t = u.free["ehdma"] + (io.chunk_gap if k < before - 1 else 0)
    later = [u.add(m, "ehdma", f"{pfx}input_{k}", u.at("ehdma", t), ehdma_us(nbytes), transfer=nbytes)
             for k in range(before, io.chunks)]  # the rest of the input streams in while the first layers run
    sync([u], t)
    fallbacks = fallbacks or {}
    last_ne, pos = None, 0
    for group in _split(layers, sorted(fallbacks)):
        if pos in fallbacks:
            op, dur, act = fallbacks[pos]
            out = u.add(m, "ehdma", f"{pfx}{op}_0", u.at("ehdma", u.free["ne"]), ehdma_us(act), transfer=act)
            m.flow(last_ne, out)
            cpu = u.add(m, "host", f"{pfx}{op}_1", u.at("host", m.end(out)), jit(rng, dur, 0.05))
            m.flow(out, cpu)
            back = u.add(m, "ehdma", f"{pfx}{op}_2", u.at("ehdma", m.end(cpu)), ehdma_us(act), transfer=act)
            m.flow(cpu, back)
            ups = [back]
            sync([u], m.end(back))
        last_ne = run_layers(m, u, pfx, group, t, rng, kn, scale, sources=ups, later=later)
        ups, later, pos = [], [], pos + len(group)
    return finish_sequence(m, u, pfx, last_ne, rng, io)


def finish_sequence(m: Model, u: Unit, pfx: str, last_ne: int | None, rng: random.Random, io: Io,
                    wl: str = "") -> int:
    """Output Task DMA after the last command, External HDMA download, host post-processing on u."""
    out = u.add(m, "tdma", f"{pfx}{wl}output_0", u.at("tdma", u.free["ne"]), tdma_us(io.download),
                transfer=io.download)
    m.flow(last_ne, out)
    dl = u.add(m, "ehdma", f"{pfx}{wl}output_1", u.at("ehdma", m.end(out)), ehdma_us(io.download),
               transfer=io.download)
    m.flow(out, dl)
    post = u.add(m, "host", f"{pfx}host_postprocess_0", u.at("host", m.end(dl)), jit(rng, io.host_post, 0.15))
    return m.end(post)


def _split(layers: list[Layer], cuts: Iterable[int]) -> list[list[Layer]]:
    out, prev = [], 0
    for c in [*cuts, len(layers)]:
        out.append(layers[prev:c])
        prev = c
    return out


# ---------------------------------------------------------------------------------------------
# layer sets (names per reference §1.5 and seed 003)


def resnet50(batch: int = 1, *, weights: float = 1.0, serial: bool = False, hot: float = 0.0,
             ndma: float = 0.5) -> list[Layer]:
    """ResNet-50 as the RBLN compiler names it: fused conv+bn(+relu) groups with members sorted, the
    reused `relu` attribute named only at its first use, the residual add+relu as the block itself
    (`fused(layer1.2+layer1.2.bn3+layer1.2.conv3)`, seed 003), then `avgpool` and `fc`.
    Neural Engine time ~ MACs at 8 TMAC/s, split into ~12 µs commands; Task DMA per command = the
    layer's int8 weights x `weights` over its commands + 4 KiB of activations; `serial`: Task DMA is
    not prefetched; `hot`: the 7x7 stem on 3 channels runs (1 + hot) times slower (poor mapping)."""
    def conv(name: str, macs: float, wbytes: int, density: float = 0.6, slow: float = 1.0) -> Layer:
        us = macs * batch / 8e6 * slow
        n = max(1, round(us / 12))
        return Layer(name, n, us / n, round(wbytes * weights / n) + 4096, ndma=ndma, density=density / slow,
                     serial=serial)

    out = [conv("fused(bn1+conv1+relu)", 118e6, 9408, slow=1 + hot),
           Layer("maxpool", 1, 2 + 0.1 * batch, 0, ndma=ndma, density=0.3)]
    for s, blocks in enumerate((3, 4, 6, 3), 1):
        mid, hw = 64 << (s - 1), (56 >> (s - 1)) ** 2
        cout = 4 * mid
        for b in range(blocks):
            p = f"layer{s}.{b}"
            cin = (64 if s == 1 else 2 * mid) if b == 0 else cout
            out.append(conv(f"fused({p}.bn1+{p}.conv1+{p}.relu)", hw * cin * mid, cin * mid))
            out.append(conv(f"fused({p}.bn2+{p}.conv2)", hw * 9 * mid * mid, 9 * mid * mid))
            if b == 0:
                out.append(conv(f"fused({p}.downsample.0+{p}.downsample.1)", hw * cin * cout, cin * cout))
            out.append(conv(f"fused({p}+{p}.bn3+{p}.conv3)", hw * mid * cout, mid * cout))
    out.append(Layer("avgpool", 1, 2 + 0.2 * batch, 0, ndma=ndma, density=0.3))
    out.append(conv("fc", 2048 * 1000, 2048 * 1000))
    return out


@dataclass(frozen=True)
class Llm:
    """A Llama-like decode step (GQA) as optimum-rbln names it; sizes in µs of Neural Engine time."""

    blocks: int = 4
    proj: float = 14.0  # per hidden x hidden weight (q_proj); k/v 0.25x, gate/up/down 2.7x
    attn: float = 18.0  # per paged-attention command
    attn_cmds: int = 2
    kv_tdma: int = 262_144  # KV-cache bytes per attention command (Task DMA)
    tdma: int = 65_536  # Task DMA bytes per projection command
    lm_head: float = 4.0  # lm_head's weight relative to q_proj
    ndma: float = 0.5
    density: float = 0.6
    attn_density: float = 0.6
    attn_ndma: float = 0.3
    norm_density: float = 0.5
    op_base: int = 37  # op ids of the attention kernels, `paged_attn_decode_<op>` (like `linear_196`)


def llm_layers(c: Llm) -> list[Layer]:
    p = "causal_lm.model"

    def proj(name: str, size: float) -> Layer:
        us = c.proj * size
        n = max(1, round(us / 12))
        return Layer(name, n, us / n, c.tdma, ndma=c.ndma, density=c.density)

    out = [Layer(f"{p}.embed_tokens", 1, 3, 16_384, ndma=c.ndma, density=0.3),
           Layer(p, 1, 4, 0, ndma=0.0, density=0.8)]  # RoPE: a command the compiler adds (seed 003)
    for i in range(c.blocks):
        b = f"{p}.{i}"
        norm = Layer(f"{b}.input_layernorm", 1, 3, 0, ndma=0.0, density=c.norm_density)
        out += [norm, proj(f"{b}.self_attn.q_proj", 1.0), proj(f"{b}.self_attn.k_proj", 0.25),
                proj(f"{b}.self_attn.v_proj", 0.25),
                Layer(f"paged_attn_decode_{c.op_base + 7 * i}", c.attn_cmds, c.attn, c.kv_tdma, ndma=c.attn_ndma,
                      density=c.attn_density),
                proj(f"{b}.self_attn.o_proj", 1.0), replace(norm, name=f"{b}.post_attention_layernorm"),
                proj(f"{b}.mlp.gate_proj", 2.7),
                proj(f"{b}.mlp.up_proj", 2.7), proj(f"{b}.mlp.down_proj", 2.7)]
    out += [Layer(f"{p}.norm", 1, 3, 0, ndma=0.0, density=0.5), proj("lm_head", c.lm_head)]
    return out


# ---------------------------------------------------------------------------------------------
# scenarios

EPOCH_US = 4_215_337_000  # a device clock's epoch is arbitrary (here ~70 min of uptime)
LLM_IO = Io(upload=4096, download=256_512)  # token ids in, fp16 logits of a 128k vocabulary out


def _atom(rng: random.Random, layers: Callable[[int], list[Layer]], seqs: int, kn: Knobs, io: Io,
          scale: Callable[[int], float] = lambda s: 1.0, epoch: int = EPOCH_US, dev: int = 0,
          fallbacks: dict | None = None) -> Model:
    m = Model(epoch)
    u = atom_device(m, dev)
    t = 0
    for s in range(seqs):
        t = atom_sequence(m, u, f"{s}_", layers(s), t, rng, kn, io, scale(s), fallbacks)
    return m


NO_PREFETCH = Knobs(prefetch=False, gap=0.3)  # each tile's Neural DMA runs before its command, the NE idle


def scn_atom_cnn(rng: random.Random) -> Model:
    layers = resnet50(4, hot=16.0)
    return _atom(rng, lambda s: layers, 6, NO_PREFETCH, Io(upload=4 * 150_528))


def scn_clean(rng: random.Random) -> Model:
    layers = llm_layers(Llm())
    return _atom(rng, lambda s: layers, 6, Knobs(), LLM_IO)


def scn_before(rng: random.Random) -> Model:
    layers = resnet50(1, serial=True)
    return _atom(rng, lambda s: layers, 6, Knobs(), Io())


def scn_after(rng: random.Random) -> Model:
    layers = resnet50(1, weights=0.0)  # weights resident in the 32 MB shared memory: activations only
    return _atom(rng, lambda s: layers, 6, Knobs(), Io())


def scn_ne_compute(rng: random.Random) -> Model:
    layers = resnet50(16, ndma=0.2)
    return _atom(rng, lambda s: layers, 4, Knobs(gap=0.02), Io(upload=16 * 150_528, chunks=16))


def scn_weight_dma(rng: random.Random) -> Model:
    c = Llm(blocks=8, proj=40.0, ndma=1.3, density=0.22, attn_density=0.85, attn_ndma=1.3, norm_density=0.8,
            lm_head=9.0, tdma=8192, kv_tdma=65_536, attn_cmds=4, attn=12.0)
    layers = llm_layers(c)
    # Neural DMA is the bottleneck: each tile streams in as its command consumes it, prefetch or not
    return _atom(rng, lambda s: layers, 5, Knobs(prefetch=False, gap=0.0), LLM_IO)


def scn_kv_spill(rng: random.Random) -> Model:
    c = Llm(blocks=8, attn_cmds=6, attn=95.0, kv_tdma=8 << 20, proj=18.0)
    layers = [replace(x, spill=65_536) if x.name.startswith("paged_attn") else x for x in llm_layers(c)]
    return _atom(rng, lambda s: layers, 4, Knobs(), LLM_IO)


def scn_host_gaps(rng: random.Random) -> Model:
    layers = llm_layers(Llm())
    return _atom(rng, lambda s: layers, 6, Knobs(), replace(LLM_IO, host_pre=420, host_post=90))


def scn_host_fallback(rng: random.Random) -> Model:
    layers = resnet50(4)
    fb = {i: (f"{blk}.topk", 110, 65_536) for blk in ("layer2.3", "layer3.5")
          for i, x in enumerate(layers) if x.name.startswith(f"fused({blk}.bn1")}
    # no dispatch gap: the host operations are the device's idle time this scenario is about
    return _atom(rng, lambda s: layers, 6, Knobs(gap=0.0), Io(upload=4 * 150_528), fallbacks=fb)


def scn_io_heavy(rng: random.Random) -> Model:
    layers = resnet50(9)
    return _atom(rng, lambda s: layers, 5, Knobs(), Io(upload=8 << 20, download=1_258_291, chunks=8))


def scn_first_barrier(rng: random.Random) -> Model:
    layers = resnet50(1, weights=0.3)
    # no dispatch gap: the wait for the upload is the device's idle time this scenario is about
    return _atom(rng, lambda s: layers, 6, Knobs(gap=0.0), Io(upload=4 * 110_000, chunks=4, chunk_gap=12))


JITTER_CTX = (1.0, 2.6, 0.6, 1.9, 0.5, 2.4, 0.9, 1.5)  # context length of each decode step, relative


def scn_jitter(rng: random.Random) -> Model:
    def layers(s: int) -> list[Layer]:
        x = JITTER_CTX[s]
        return llm_layers(Llm(attn=60.0 * x, kv_tdma=round(786_432 * x)))

    return _atom(rng, layers, len(JITTER_CTX), Knobs(), LLM_IO)


def scn_inline_names(rng: random.Random) -> Model:
    """ResNet-50 written with inline torch.add / F.relu: those commands carry no module path."""
    out = []
    for x in resnet50(4):
        if x.name.startswith("fused(layer") and ".bn3" in x.name:
            blk = x.name[6:].split("+")[0]
            out.append(replace(x, name=f"fused({blk}.bn3+{blk}.conv3)"))
            out.append(Layer("add", 1, x.ne * x.cmds * 0.45, 0, ndma=0.5, density=0.3))
            out.append(Layer("relu", 1, x.ne * x.cmds * 0.2, 0, ndma=0.5, density=0.3))
        else:
            out.append(x)
    return _atom(rng, lambda s: out, 6, Knobs(), Io(upload=4 * 150_528))


def scn_weight_streaming(rng: random.Random) -> Model:
    """The model does not fit device memory: blocks 1.. and lm_head are streamed from the host
    (External HDMA) on every call, each just ahead of the block that needs it."""
    layers = llm_layers(Llm(blocks=6, proj=30.0))
    cuts = [i for i, x in enumerate(layers) if x.name.endswith("q_proj")] + [len(layers) - 1]
    m = Model(EPOCH_US)
    u = atom_device(m, 0)
    kn, io = Knobs(gap=0.15), LLM_IO
    t = 0
    for s in range(5):
        pfx = f"{s}_"
        h = u.add(m, "host", f"{pfx}host_preprocess_0", t, jit(rng, io.host_pre, 0.15))
        up = u.add(m, "ehdma", f"{pfx}input_0", m.end(h), ehdma_us(io.upload), transfer=io.upload)
        sync([u], m.end(up))
        groups = _split(layers, cuts)
        chunk = 1_572_864
        streamed = [u.add(m, "ehdma", f"{pfx}weights_{k}", u.at("ehdma", m.end(up)), ehdma_us(chunk),
                          transfer=chunk) for k in range(len(groups) - 2)]
        last_ne = None
        for k, grp in enumerate(groups):
            src = [up] if k == 0 else [streamed[k - 2]] if k >= 2 else []
            last_ne = run_layers(m, u, pfx, grp, m.end(src[0]) if src else 0, rng, kn, sources=src)
        t = finish_sequence(m, u, pfx, last_ne, rng, io)
    return m


def scn_atom_rsd(rng: random.Random) -> Model:
    """Tensor-parallel LLM decode on four ATOM devices (one process each). After attention, after the
    MLP of every block and after lm_head the leaves send their partial results to the root (device 0)
    over Device HDMA, the root's Device Sync gathers them, its Device HDMA sends the result back and
    each leaf's Device Sync is released (reference §1.6). Device 2 holds the larger shard and the
    others wait for it, idle, at every sync point."""
    m = Model(EPOCH_US)
    units = [atom_device(m, d) for d in range(4)]
    root = units[0]
    layers = llm_layers(Llm(blocks=4, proj=16.0, attn=22.0))
    cuts = [i + 1 for i, x in enumerate(layers) if x.name.endswith(("o_proj", "down_proj", "lm_head"))]
    kn, io = Knobs(), LLM_IO
    part = 327_680  # bytes of one partial result
    t = 0
    for s in range(5):
        pfx = f"{s}_"
        h = root.add(m, "host", f"{pfx}host_preprocess_0", t, jit(rng, io.host_pre, 0.15))
        ups = [u.add(m, "ehdma", f"{pfx}input_0", m.end(h), ehdma_us(io.upload), transfer=io.upload) for u in units]
        for u, i in zip(units, ups, strict=True):
            sync([u], m.end(i))
        last: list[int | None] = [None] * 4
        for g, grp in enumerate(_split(layers, cuts)):
            if not grp:
                continue
            for d, u in enumerate(units):
                last[d] = run_layers(m, u, pfx, grp, u.free["ne"], rng, kn, RSD_SHARD[d],
                                     sources=[ups[d]] if g == 0 else [])
            k = f"{pfx}all_reduce_{g}"
            sends = []
            for d in (1, 2, 3):
                u = units[d]
                sends.append(u.add(m, "dhdma", f"{k}_0", u.at("dhdma", u.free["ne"]), dhdma_us(part), transfer=part))
                m.flow(last[d], sends[-1])
            gather = root.add(m, "dsync", f"{k}_1", max(root.free["ne"], *(m.end(i) for i in sends)),
                              jit(rng, 6, 0.2))
            for i in sends:
                m.flow(i, gather)
            bcast = root.add(m, "dhdma", f"{k}_2", m.end(gather), dhdma_us(part), transfer=part)
            m.flow(gather, bcast)
            sync([root], m.end(bcast))
            begin = m.slices[gather].start + 1  # the leaves' syncs are released by the root's
            for d in (1, 2, 3):
                rel = units[d].add(m, "dsync", f"{k}_3", begin, m.end(bcast) + jit(rng, 3, 0.3) - begin)
                m.flow(gather, rel)
                sync([units[d]], m.end(rel))
        t = finish_sequence(m, root, pfx, last[0], rng, io)
    return m


RSD_SHARD = (1.0, 1.0, 1.55, 1.0)  # Neural Engine and DMA time of each device's shard, relative
REBEL_SHARE = (1.0, 1.0, 1.0, 1.35)  # work of each chiplet, relative


def scn_rebel100(rng: random.Random) -> Model:
    """One Rebel100 device serving an LLM: instance 0 runs a prefill, instance 1 five decode steps (a
    multi-stream file: `i{inst}_{seq}_W{wl}_...`, no W on Host commands). Each call runs as two
    workloads (W0: blocks 0-1, W1: blocks 2-3 and lm_head, one Device Workload slice each) with an
    all-reduce on the CCL tracks between them. Every chiplet runs its part of each command (the same
    names in the four Chiplet groups); chiplet 3 holds 1.35x the work and the others wait for it at the
    end of each workload. RoPE runs on the General Compute Engine."""
    m = Model(EPOCH_US)
    base = 1000 << 8
    proc = m.track("process", "rbln0", base, pid=1000)
    dw = m.track("named", "Device Workload", base + 1, parent=proc, cat="device_workload", side="host")
    units = []
    for c in range(4):
        g = m.track("named", f"Chiplet {c}", base + 16 * (c + 1), parent=proc)
        units.append(Unit({cat: m.track("named", TITLES[cat], base + 16 * (c + 1) + k, parent=g, cat=cat,
                                        side="host" if cat in ("host", "ehdma") else "device")
                           for k, cat in enumerate(REBEL_CATEGORIES, 1)}))
    ccl_w = m.track("named", "CCL Workload", base + 2, parent=proc, cat="ccl", side="host")
    ccl_g = m.track("named", "CCL", base + 3, parent=proc)
    send = m.track("named", "CCL Send", base + 4, parent=ccl_g, cat="ccl")
    recv = m.track("named", "CCL Recv", base + 5, parent=ccl_g, cat="ccl")
    kn, io = Knobs(), LLM_IO
    dec = [replace(x, engine="gce") if x.name == "causal_lm.model" else x
           for x in llm_layers(Llm(blocks=4, proj=16.0, attn=20.0))]
    pre = [replace(x, ne=x.ne * 1.2, density=min(0.9, x.density * 1.4)) for x in dec]
    half = next(i for i, x in enumerate(dec) if x.name.startswith("causal_lm.model.2."))
    host = units[0]
    t = 0
    for inst, seq, layers, call in [(0, 0, pre, "prefill"), *((1, s, dec, "decoder") for s in range(5))]:
        pfx = f"i{inst}_{seq}_"
        h = host.add(m, "host", f"{pfx}host_preprocess_0", t, jit(rng, io.host_pre, 0.15))
        up = host.add(m, "ehdma", f"{pfx}W0_input_0", m.end(h), ehdma_us(io.upload), transfer=io.upload)
        sync(units, m.end(up))
        w_start, src = m.slices[up].start, up
        last: list[int | None] = [None] * 4
        for w, grp in enumerate((layers[:half], layers[half:])):
            for c, u in enumerate(units):
                last[c] = run_layers(m, u, f"{pfx}W{w}_", grp, u.free["ne"], rng, kn, REBEL_SHARE[c], sources=[src])
            if w == 1:
                break
            w_end = max(max(u.free["ne"], u.free["gce"]) for u in units)
            m.add(dw, call, w_start, w_end - w_start)
            k = f"{pfx}W0_all_reduce"
            d_send, d_recv = dhdma_us(131_072), dhdma_us(131_072)
            cw = m.add(ccl_w, f"{k}_0", w_end, d_send + d_recv + 2)
            snd = m.add(send, f"{k}_1", w_end + 1, d_send, transfer=131_072)
            for i in last:
                m.flow(i, snd)
            src = m.add(recv, f"{k}_2", m.end(snd), d_recv, transfer=131_072)
            m.flow(snd, src)
            w_start = m.end(cw)
            sync(units, w_start)
        sync([host], max(u.free["ne"] for u in units))  # the output needs every chiplet's part
        t = finish_sequence(m, host, pfx, last[0], rng, io, wl="W1_")
        m.add(dw, call, w_start, host.free["ehdma"] - w_start)
    return m


SCENARIO_BUILDERS: dict[str, Callable[[random.Random], Model]] = {
    "atom_cnn": scn_atom_cnn, "atom_rsd": scn_atom_rsd, "rebel100": scn_rebel100, "before": scn_before,
    "after": scn_after, "ne_compute": scn_ne_compute, "weight_dma": scn_weight_dma, "kv_spill": scn_kv_spill,
    "host_gaps": scn_host_gaps, "host_fallback": scn_host_fallback, "io_heavy": scn_io_heavy,
    "first_barrier": scn_first_barrier, "weight_streaming": scn_weight_streaming, "jitter": scn_jitter,
    "inline_names": scn_inline_names, "clean": scn_clean,
}
assert set(SCENARIO_BUILDERS) == set(SCENARIOS)


def scenario_model(name: str, seed: int = 0) -> Model:
    """The slices of a scenario before encoding (the same for every encoding)."""
    return SCENARIO_BUILDERS[name](random.Random(f"rbln:{name}:{seed}"))


# ---------------------------------------------------------------------------------------------
# encoding (reference §4.2, §8.4): every encoding describes the same slices, times, bytes, flows


def _pb():
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2

    return perfetto_trace_pb2


def _args_text(s: Slice) -> str | None:
    if s.transfer is not None:
        return json.dumps({"transfer": [f":{s.transfer}Byte"]})
    if s.cycles is not None:
        return json.dumps({"comp_cycle": [s.cycles]})
    return None


def _annotate(te, s: Slice, style: str, name_iid: int = 0) -> None:
    text = _args_text(s)
    if text is None:
        return
    a = te.debug_annotations.add()
    if name_iid:
        a.name_iid = name_iid
    else:
        a.name = "Slice Arguments"
    if style == "dict_args":
        e = a.dict_entries.add()
        if s.transfer is not None:
            e.name = "transfer"
            e.array_values.add().string_value = f":{s.transfer}Byte"
        else:
            e.name = "comp_cycle"
            e.array_values.add().uint_value = s.cycles or 0
    elif style == "legacy_json":
        a.legacy_json_value = text
    else:
        a.string_value = text


def _describe(d, tr: Track) -> None:
    d.uuid = tr.uuid
    if tr.parent is not None:
        d.parent_uuid = tr.parent
    if tr.kind == "process":
        d.process.pid = tr.pid or 0
        d.process.process_name = tr.name
    elif tr.kind == "thread":
        d.thread.pid, d.thread.tid, d.thread.thread_name = tr.pid or 0, tr.tid or 0, tr.name
    else:
        d.name = tr.name


def encode(m: Model, encoding: str = "interned") -> bytes:
    """The model as a Perfetto trace in one of ENCODINGS."""
    if encoding == "gzip":
        return gzip.compress(encode(m, "interned"), compresslevel=9, mtime=0)
    pb = _pb()
    if encoding == "compressed":
        inner = pb.Trace.FromString(encode(m, "interned")).packet
        out = pb.Trace()
        for k in range(0, len(inner), 256):
            out.packet.add().compressed_packets = zlib.compress(pb.Trace(packet=inner[k:k + 256]).SerializeToString(), 6)
        return out.SerializeToString()
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}")
    return _encode_packets(m, encoding, pb).serialize()


def _encode_packets(m: Model, encoding: str, pb):
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder

    b = TraceProtoBuilder()
    cleared, needs = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED, pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
    stateful = encoding in ("interned", "defaults", "incremental_clock")
    by_uuid = {t.uuid: t for t in m.tracks}
    used = {s.track for s in m.slices}
    if encoding == "interned":  # host-side tracks on one writer sequence, device tracks on another
        seq_of = {t.uuid: 1 if t.side == "host" else 2 for t in m.tracks}
    elif encoding == "defaults":  # one writer sequence per track, its uuid given once as a default
        seq_of = {t.uuid: 16 + k for k, t in enumerate(m.tracks)}
    else:
        seq_of = {t.uuid: 1 for t in m.tracks}
    started: set[int] = set()
    interned: dict[int, dict[str, int]] = {}
    clear_pending: set[int] = set()

    def packet(seq: int, state: bool):
        pk = b.add_packet()
        pk.trusted_packet_sequence_id = seq
        if seq not in started:
            started.add(seq)
            pk.first_packet_on_sequence = True
            if stateful:
                pk.sequence_flags = cleared
                interned[seq] = {}
        elif seq in clear_pending:
            clear_pending.discard(seq)
            pk.sequence_flags = cleared
            interned[seq] = {}
        elif state and stateful:
            pk.sequence_flags = needs
        return pk

    for tr in m.tracks:  # descriptors first
        seq = seq_of[tr.uuid] if encoding == "defaults" and tr.uuid in used else 1
        pk = packet(seq, False)
        _describe(pk.track_descriptor, tr)
        if encoding == "defaults" and tr.uuid in used:
            pk.trace_packet_defaults.track_event_defaults.track_uuid = tr.uuid
    if encoding == "incremental_clock":  # timestamps as µs deltas on a sequence-scoped clock
        pk = b.add_packet()
        pk.trusted_packet_sequence_id = 1
        pk.sequence_flags = cleared
        first = min(s.start for s in m.slices) + m.epoch_us
        pk.timestamp = first * 1000
        for cid, ts, inc, mult in ((6, first * 1000, False, 0), (64, first, True, 1000)):
            c = pk.clock_snapshot.clocks.add()
            c.clock_id, c.timestamp = cid, ts
            if inc:
                c.is_incremental, c.unit_multiplier_ns = True, mult
        prev_us = first

    flows_out: dict[int, list[int]] = {}
    flows_in: dict[int, list[int]] = {}
    for e, (a, z) in enumerate(m.flows):
        flows_out.setdefault(a, []).append(FLOW_BASE + e)
        flows_in.setdefault(z, []).append(FLOW_BASE + e)
    if encoding == "complete":
        events = sorted((s.start, 1, i) for i, s in enumerate(m.slices))
    else:
        events = sorted([(s.start, 1, i) for i, s in enumerate(m.slices)]
                        + [(s.start + s.dur, 0, i) for i, s in enumerate(m.slices)])
    half = len(events) // 2
    for n, (ts, begin, i) in enumerate(events):
        if encoding == "interned" and n == half:  # re-intern from scratch mid-file
            clear_pending.update(k for k in started if k in (1, 2))
        s = m.slices[i]
        seq = seq_of[s.track]
        pk = packet(seq, True)
        if encoding == "incremental_clock":
            pk.timestamp_clock_id = 64
            pk.timestamp = m.epoch_us + ts - prev_us
            prev_us = m.epoch_us + ts
        else:
            pk.timestamp = (m.epoch_us + ts) * 1000
        te = pk.track_event
        if encoding != "defaults":
            te.track_uuid = s.track
        if not begin:
            te.type = pb.TrackEvent.TYPE_SLICE_END
            continue
        if encoding == "complete":
            te.legacy_event.phase = ord("X")
            te.legacy_event.duration_us = s.dur
        else:
            te.type = pb.TrackEvent.TYPE_SLICE_BEGIN
        if encoding == "interned":
            names = interned[seq]
            if s.name not in names:
                names[s.name] = len(names) + 1
                en = pk.interned_data.event_names.add()
                en.iid, en.name = names[s.name], s.name
            te.name_iid = names[s.name]
            ann = 0
            if _args_text(s) is not None:
                if "\0args" not in names:  # debug annotation names have their own iid space
                    names["\0args"] = 1
                    dn = pk.interned_data.debug_annotation_names.add()
                    dn.iid, dn.name = 1, "Slice Arguments"
                ann = 1
            _annotate(te, s, encoding, ann)
        else:
            te.name = s.name
            _annotate(te, s, encoding)
        out, inn = flows_out.get(i, ()), flows_in.get(i, ())
        if encoding == "flow_old":
            te.flow_ids_old.extend(out)
            te.terminating_flow_ids_old.extend(inn)
        else:
            te.flow_ids.extend(out)
            te.terminating_flow_ids.extend(inn)
    assert by_uuid  # every slice's track is described
    return b


def build_scenario(name: str, encoding: str = "interned", seed: int = 0) -> bytes:
    """A scenario's trace, encoded. Deterministic: the same arguments give the same bytes."""
    return encode(scenario_model(name, seed), encoding)


# ---------------------------------------------------------------------------------------------
# the large trace for the speed benchmark: streamed, from pre-serialised packet templates


def _varint(v: int) -> bytes:
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


# Hand-assembled packets, fields in number order as protobuf writes them (the tests re-serialise and
# compare): TracePacket.timestamp (8) key 0x40, trusted_packet_sequence_id (10) = 1, track_event (11)
# key 0x5A, sequence_flags (13) = SEQ_NEEDS_INCREMENTAL_STATE; inside the event, after the template,
# flow_ids (47) and terminating_flow_ids (48), fixed64, keys 0xF9 0x02 and 0x81 0x03.
_FLOW, _TERM, _TS, _SEQ, _TE, _FLAGS = b"\xf9\x02", b"\x81\x03", b"\x40", b"\x50\x01", b"\x5a", b"\x68\x02"


def large_template(seed: int = 0, variant: int = 0) -> Model:
    """One runtime call of the large trace (ResNet-50, batch 4, layout A) with names lacking the
    `{seq}_` prefix; variants differ in durations, bytes and skipped command indices."""
    rng = random.Random(f"rbln:large:{seed}:{variant}")
    m = Model(EPOCH_US)
    u = atom_device(m, 0)
    atom_sequence(m, u, "", resnet50(4), 0, rng, Knobs(), Io(upload=4 * 150_528))
    return m


def write_large_trace(path: Path, target_bytes: int, seed: int = 0) -> int:
    """Write an RBLN-shaped trace of about target_bytes (whole runtime calls, stopping at the first
    call that reaches it) and return the bytes written. Layout A (seven category thread tracks),
    interned names re-interned at every call (SEQ_INCREMENTAL_STATE_CLEARED, so each call's names
    reuse the same iids), `Slice Arguments` JSON on transfers and Neural Engine commands, flows.
    Memory stays flat: each call's packets are assembled from pre-serialised templates and written."""
    from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

    pb = _pb()
    variants = []
    for v in range(3):
        m = large_template(seed, v)
        names = list(dict.fromkeys(s.name for s in m.slices))
        iid = {n: k + 1 for k, n in enumerate(names)}
        flows_out: dict[int, list[int]] = {}
        flows_in: dict[int, list[int]] = {}
        for e, (a, z) in enumerate(m.flows):
            flows_out.setdefault(a, []).append(e)
            flows_in.setdefault(z, []).append(e)
        events = sorted([(s.start, 1, i) for i, s in enumerate(m.slices)]
                        + [(s.start + s.dur, 0, i) for i, s in enumerate(m.slices)])
        first = events[0]
        assert first[1] == 1 and m.slices[first[2]].name == "host_preprocess_0"
        rows = []
        for ts, begin, i in events[1:]:
            s = m.slices[i]
            te = pb.TrackEvent(track_uuid=s.track)
            if begin:
                te.type, te.name_iid = pb.TrackEvent.TYPE_SLICE_BEGIN, iid[s.name]
                _annotate(te, s, "interned")
            else:
                te.type = pb.TrackEvent.TYPE_SLICE_END
            out, inn = (flows_out.get(i, []), flows_in.get(i, [])) if begin else ([], [])
            rows.append((ts, te.SerializeToString(), out, inn))
        period = max(s.start + s.dur for s in m.slices)
        variants.append((names, m.slices[first[2]].track, rows, period, len(m.flows)))
    span = max(v[4] for v in variants)
    written = 0
    with Path(path).open("wb") as f:
        b = StreamingTraceProtoBuilder(f)
        head = pb.Trace()
        for tr in large_template(seed, 0).tracks:
            _describe(head.packet.add(trusted_packet_sequence_id=1).track_descriptor, tr)
        head.packet[0].first_packet_on_sequence = True
        for pk in head.packet:
            b.write_packet(pk)
        written = len(head.SerializeToString())
        t, seq = 0, 0
        pack = struct.Struct("<Q").pack
        while written < target_bytes:
            names, host_track, rows, period, _ = variants[seq % len(variants)]
            base_ns = (EPOCH_US + t) * 1000
            flow0 = FLOW_BASE + seq * span
            pk = pb.TracePacket(timestamp=base_ns, trusted_packet_sequence_id=1,
                                sequence_flags=pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
            for k, n in enumerate(names, 1):
                pk.interned_data.event_names.add(iid=k, name=f"{seq}_{n}")
            pk.track_event.type, pk.track_event.track_uuid = pb.TrackEvent.TYPE_SLICE_BEGIN, host_track
            pk.track_event.name_iid = 1
            b.write_packet(pk)
            written += len(pk.SerializeToString()) + 1 + len(_varint(pk.ByteSize()))
            chunk = []
            for ts, te, out, inn in rows:
                if out or inn:
                    te = te + b"".join(_FLOW + pack(flow0 + e) for e in out) + b"".join(_TERM + pack(flow0 + e)
                                                                                    for e in inn)
                body = _TS + _varint(base_ns + ts * 1000) + _SEQ + _TE + _varint(len(te)) + te + _FLAGS
                chunk.append(b"\n" + _varint(len(body)) + body)
            data = b"".join(chunk)
            f.write(data)
            written += len(data)
            t += period + 20
            seq += 1
    return written


# ---------------------------------------------------------------------------------------------
# intended shapes: the figures each scenario is built to show, as (low, high). Fractions are of the
# device span, busy times the mean over units (a device; a chiplet on Rebel100) of the union of the
# category's slices; shares as in the contract. device_idle_fraction is the idle time of the union over
# all units. tests/samples/test_make_rbln_samples.py measures them from the decoded bytes.

SHAPES: dict[str, dict[str, tuple[float, float]]] = {
    "atom_cnn": {"neural_engine_busy_fraction": (0.65, 0.80), "top_layer_share": (0.30, 0.40),
                 "top3_layer_share": (0.30, 0.45), "ne_starved_fraction": (0.0, 0.08),
                 "ne_idle_under_neural_dma_fraction": (0.20, 0.26)},
    "atom_rsd": {"comm_exposed_fraction": (0.18, 0.26), "device_imbalance": (1.22, 1.36),
                 "ne_imbalance_ratio": (1.45, 1.65), "straggler_device": (2, 2), "units": (4, 4),
                 "device_idle_fraction": (0.0, 0.05), "ne_idle_under_neural_dma_fraction": (0.0, 0.05)},
    "rebel100": {"chiplet_imbalance": (1.18, 1.30), "straggler_chiplet": (3, 3), "units": (4, 4),
                 "sequence_count": (6, 6), "comm_exposed_fraction": (0.005, 0.05),
                 "general_compute_busy_fraction": (0.001, 0.02), "ne_idle_under_neural_dma_fraction": (0.0, 0.05)},
    "before": {"ne_starved_fraction": (0.30, 0.50), "dma_bound_layer_fraction": (0.25, 0.40),
               "neural_engine_busy_fraction": (0.40, 0.60), "ne_idle_under_neural_dma_fraction": (0.0, 0.05)},
    "after": {"ne_starved_fraction": (0.0, 0.08), "dma_bound_layer_fraction": (0.0, 0.05),
              "neural_engine_busy_fraction": (0.72, 0.85), "ne_idle_under_neural_dma_fraction": (0.0, 0.08)},
    "ne_compute": {"neural_engine_busy_fraction": (0.95, 1.0), "dma_only_fraction": (0.0, 0.02),
                   "neural_dma_busy_fraction": (0.12, 0.25)},
    "weight_dma": {"neural_dma_busy_fraction": (0.95, 1.0), "neural_engine_busy_fraction": (0.70, 0.82),
                   "ne_only_fraction": (0.0, 0.03), "weight_stream_share": (0.80, 1.0),
                   "ne_efficiency_median": (0.0, 0.35), "top_layer_share": (0.0, 0.15),
                   # the Neural Engine idles under Neural DMA, but Neural DMA is the busiest unit: no room to hide it
                   "ne_idle_under_neural_dma_fraction": (0.18, 0.26), "pipeline_headroom_fraction": (0.0, 0.04)},
    "kv_spill": {"task_dma_busy_fraction": (0.40, 0.65), "task_dma_mib_per_sequence": (350, 450),
                 "ne_starved_fraction": (0.0, 0.15)},
    "host_gaps": {"host_between_sequences_share": (0.27, 0.36), "device_idle_fraction": (0.25, 0.38)},
    "host_fallback": {"host_in_sequence_share": (0.065, 0.10), "device_idle_fraction": (0.0, 0.12)},
    "io_heavy": {"external_hdma_busy_fraction": (0.18, 0.24), "first_command_barrier_share": (0.0, 0.05)},
    "first_barrier": {"first_command_barrier_share": (0.13, 0.20), "external_hdma_busy_fraction": (0.0, 0.12),
                      "ne_starved_fraction": (0.0, 0.16)},
    "weight_streaming": {"external_hdma_after_warmup_fraction": (0.38, 0.50), "ne_starved_fraction": (0.0, 0.12)},
    "jitter": {"sequence_span_cv": (0.22, 0.32), "sequence_count": (8, 8)},
    "inline_names": {"unattributable_ne_share": (0.18, 0.30)},
    "clean": {"neural_engine_busy_fraction": (0.76, 0.87), "neural_dma_busy_fraction": (0.30, 0.45),
              "host_between_sequences_share": (0.02, 0.06), "ne_idle_under_neural_dma_fraction": (0.0, 0.06)},
}
assert set(SHAPES) == set(SCENARIOS)


def scenario_shape(name: str) -> dict[str, tuple[float, float]]:
    """The figures scenario `name` is built to show, metric -> (low, high)."""
    return dict(SHAPES[name])


# ---------------------------------------------------------------------------------------------
# per-rank traces: one model on four devices, each file on its own device clock

RANK_EPOCHS_US = (4_215_337_000, 9_871_020_000, 2_604_455_000, 7_330_912_000)
RANK_NE_SCALE = (1.0, 1.22, 1.0, 1.0)  # rank 1's device runs its Neural Engine commands slower


def rank_models(seed: int = 0) -> list[Model]:
    """Data-parallel LLM decode, one trace per rank (`rbln<rank>`): same model, same steps; rank 1 is
    a straggler (its Neural Engine commands 22 % slower, its span ~20 % longer)."""
    layers = llm_layers(Llm())
    out = []
    for r, (epoch, scale) in enumerate(zip(RANK_EPOCHS_US, RANK_NE_SCALE, strict=True)):
        rng = random.Random(f"rbln:rank:{seed}:{r}")
        out.append(_atom(rng, lambda s: layers, 6, Knobs(slow=scale), LLM_IO, epoch=epoch, dev=r))
    return out


# ---------------------------------------------------------------------------------------------
# figures for the READMEs (the tests measure the same things independently)


def _union(iv: Iterable[tuple[int, int]]) -> int:
    total, cur_a, cur_b = 0, None, None
    for a, b in sorted(iv):
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    return total + (cur_b - cur_a if cur_b is not None else 0)


def figures(m: Model) -> dict:
    """Key figures of a model for its README: span, per-category busy (mean over units), NE idle
    while Task DMA or External HDMA run, NE idle while only Neural DMA runs, top layers, imbalance."""
    by_uuid = {t.uuid: t for t in m.tracks}

    def unit(t: Track) -> tuple[int, int]:
        p = by_uuid.get(t.parent) if t.parent is not None else None
        return (t.parent or 0, 0) if p is None or p.kind == "process" else (p.parent or 0, p.uuid)

    rows = [(s, by_uuid[s.track]) for s in m.slices if by_uuid[s.track].cat in DEV]
    units = sorted({unit(t) for _, t in rows if t.cat != "ccl"})
    lo, hi = min(s.start for s, _ in rows), max(s.start + s.dur for s, _ in rows)
    span = hi - lo

    def busy(cats: set[str], u=None) -> float:
        us = [u] if u else units
        return statistics.fmean(_union((s.start, s.start + s.dur) for s, t in rows
                                       if t.cat in cats and unit(t) == x) for x in us) / span

    parsed = {id(s): NAME_RE.match(s.name) for s, _ in rows}
    f = {"span_ms": span / 1000, "sequences": len({(p["inst"], p["seq"]) for p in parsed.values() if p}),
         "busy": {TITLES[c]: busy({c}) for c in ("ne", "ndma", "tdma", "ehdma", "dhdma", "dsync", "gce")
                  if any(t.cat == c for _, t in rows)}}
    f["ne_starved"] = busy({"ne", "tdma", "ehdma"}) - busy({"ne"})
    f["ne_idle_ndma"] = busy({"ne", "ndma", "tdma", "ehdma"}) - busy({"ne", "tdma", "ehdma"})
    f["comm_exposed"] = busy({"ne", "dhdma", "dsync"}) - busy({"ne"})
    ne = [(s, t) for s, t in rows if t.cat == "ne"]
    ne_all = _union((s.start, s.start + s.dur) for s, _ in ne)
    layers: dict[str, list] = {}
    for s, _ in ne:
        layers.setdefault(parsed[id(s)]["layer"], []).append((s.start, s.start + s.dur))
    f["layers"] = sorted(((_union(v) / ne_all, k) for k, v in layers.items()), reverse=True)[:3]
    per = [busy(DEV, u) for u in units]
    f["unit_busy"] = per
    f["imbalance"] = max(per) / statistics.fmean(per)
    return f


def pct(x: float) -> str:
    return f"{100 * x:.1f} %" if abs(x) < 0.01 else f"{100 * x:.0f} %"


# ---------------------------------------------------------------------------------------------
# the checked-in samples and their READMEs

HOW = ("**Synthetic.** No real RBLN trace is public, so this was written by `python samples/make_rbln_samples.py` "
       "with the `perfetto` package's trace builder, from what the RBLN profiler documentation and the one public "
       "reader of real traces say a trace holds (`../shared/reference/rbln-profiler.md` §1.4–§1.6, §3, §8 in the "
       "development tree). Deterministic: fixed seed, no dates; rerunning the script rewrites identical bytes.")
LAYOUT_A = ("Layout: one process per device (`rbln<n>`, pid 1000 + n) with seven thread tracks named by category "
            "(`Host`, `Neural Engine Clusters`, `Neural DMA`, `Task DMA`, `External HDMA`, `Device HDMA`, `Device Sync`). "
            "Encoding: TrackEvent begin/end slices with interned names (two writer sequences, re-interned mid-file), "
            "`Slice Arguments` JSON (`{\"transfer\": [\":<N>Byte\"]}`, `{\"comp_cycle\": [<n>]}`), flows "
            "(`flow_ids`/`terminating_flow_ids`); timestamps in ns on the device clock.")


def _stats(data: bytes, m: Model) -> str:
    return (f"{len(data) / 1024:,.0f} KiB, {len(m.slices):,} slices, {len(m.flows):,} flows, "
            f"{len({s.track for s in m.slices})} tracks with slices")


def _busy(f: dict) -> str:
    return ", ".join(f"{k} {pct(v)}" for k, v in f["busy"].items())


def _layers(f: dict) -> str:
    return ", ".join(f"`{k}` {pct(v)}" for v, k in f["layers"])


def _write(folder: Path, files: dict[str, bytes], text: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, data in files.items():
        (folder / name).write_bytes(data)
        out.append(folder / name)
    (folder / "README.md").write_text(text.strip() + "\n", encoding="utf-8")
    return [*out, folder / "README.md"]


def _expect(name: str) -> str:
    rules = [r for r in SCENARIOS[name] if r not in INFO_RULES]
    said = ", ".join(f"`{r}`" for r in rules) if rules else "no rule above info"
    return f"{said}{' and nothing else above info' if rules else ''}"


def write_samples(root: Path = HERE) -> list[Path]:
    """Write every checked-in RBLN sample folder under root; returns the files written."""
    out = []
    for name, folder, title, what in (
        ("atom_cnn", "rbln_atom_cnn", "ResNet-50 on one ATOM device",
         "ResNet-50 image classification, batch 4, six runtime calls (sequences 0–5) on one ATOM device. "
         "Layers are named the way the RBLN compiler names a PyTorch ResNet: fused conv+bn(+relu) groups "
         "(`0_fused(layer1.2+layer1.2.bn3+layer1.2.conv3)_3`), `maxpool`, `avgpool`, `fc`; command indices skip "
         "where commands were omitted. Each call: host pre-processing, the input upload (External HDMA, flow to "
         "the first Task DMA), per command a Task DMA of weights prefetched during the previous command (flow to "
         "its Neural Engine command), the command's Neural DMA (no flow) and the Neural Engine command with its "
         "`comp_cycle`; then the output Task DMA, the download and host post-processing. Neural DMA is not "
         "double-buffered here: each command's tile streams in only after the previous command ended, and the "
         "Neural Engine idles until most of it is in (the other samples prefetch it under the previous command). "
         "The 7×7 stem "
         "`fused(bn1+conv1+relu)` on three input channels is poorly mapped: it runs 17× longer than its MACs "
         "warrant, at a low cycle density."),
    ):
        m = scenario_model(name)
        data = encode(m)
        f = figures(m)
        text = f"""
# {folder} — {title} (synthetic)

{HOW} Scenario `{name}`, seed 0.

| file | contents |
|---|---|
| `trace.pb` | {_stats(data, m)} |

**What it models.** {what}

{LAYOUT_A}

**Key figures** (of the device span, {f['span_ms']:.2f} ms): {_busy(f)}; the Neural Engine idle while Task DMA or
External HDMA run {pct(f['ne_starved'])}, while only Neural DMA runs {pct(f['ne_idle_ndma'])}. Top layers by Neural
Engine time: {_layers(f)}.

**What advisor should find:** {_expect(name)} — the stem is {pct(f['layers'][0][0])} of the Neural Engine's busy
time (RBL010 fires at 25 %), and the Neural Engine waits for each command's Neural DMA {pct(f['ne_idle_ndma'])} of
the span (RBL019 fires at 15 %); Task DMA and the uploads are hidden under compute and the device is never idle
for long.
"""
        out += _write(root / folder, {"trace.pb": data}, text)
    out += _write_rsd(root)
    out += _write_rebel(root)
    out += _write_before_after(root)
    out += _write_ranks(root)
    return out


def _write_rsd(root: Path) -> list[Path]:
    m = scenario_model("atom_rsd")
    data = encode(m)
    f = figures(m)
    busy = ", ".join(f"`rbln{d}` {pct(b)}" for d, b in enumerate(f["unit_busy"]))
    text = f"""
# rbln_atom_rsd — tensor-parallel LLM decode on four ATOM devices (synthetic)

{HOW} Scenario `atom_rsd`, seed 0.

| file | contents |
|---|---|
| `trace.pb` | {_stats(data, m)} |

**What it models.** ATOM RSD: one host process drives four devices, so one file holds four processes
(`rbln0`…`rbln3`). A Llama-like decode step (four blocks, `causal_lm.model.{{i}}.self_attn.q_proj`, `…mlp.down_proj`,
`paged_attn_decode_<op>`, `causal_lm.model` for RoPE, `lm_head`), five steps, sharded over the devices. After
attention, after each MLP and after `lm_head` the partial results are all-reduced (`<seq>_all_reduce_<k>_<cmd>`): each
leaf's Device HDMA sends to the root (flow → the root's Device Sync), the root's Device Sync gathers and releases
the leaves' Device Syncs (flows), and the root's Device HDMA sends the result back (reference §1.6, case 1 then 2).
Device 2 holds the larger shard (its Neural Engine time is {RSD_SHARD[2]:.2f}× the others'); the others wait for it,
idle, at every sync point. Host commands and the output download run on `rbln0`.

{LAYOUT_A}

**Key figures** (mean over the four devices, of the device span {f['span_ms']:.2f} ms): {_busy(f)}. Busy share of
each device (union of its commands): {busy}; max/mean {f['imbalance']:.2f}.

**What advisor should find:** {_expect('atom_rsd')}: communication (Device HDMA and Device Sync while the Neural
Engine is idle) {pct(f['comm_exposed'])} of the device span (RBL008 at 15 %), device imbalance {f['imbalance']:.2f} with
`rbln2` the straggler (RBL009 at 1.15). The union of all devices is busy nearly the whole span; the three fast
devices are idle {pct(1 - max(f['unit_busy'][:2] + f['unit_busy'][3:]))}–{pct(1 - min(f['unit_busy']))} of it while
they wait (no slice: the waits are gaps, not long Device Sync slices).
"""
    return _write(root / "rbln_atom_rsd", {"trace.pb": data}, text)


def _write_rebel(root: Path) -> list[Path]:
    m = scenario_model("rebel100")
    data = encode(m)
    f = figures(m)
    busy = ", ".join(f"Chiplet {c} {pct(b)}" for c, b in enumerate(f["unit_busy"]))
    text = f"""
# rbln_rebel100 — LLM serving on one Rebel100 device, multi-stream names (synthetic)

{HOW} Scenario `rebel100`, seed 0.

| file | contents |
|---|---|
| `trace.pb` | {_stats(data, m)} |

**What it models.** One Rebel100 device (process `rbln0`) serving a Llama-like model: runtime instance 0 runs a
prefill, instance 1 five decode steps, merged into one multi-stream file with the v0.12 names
`i{{inst}}_{{seq}}_W{{workload}}_{{layer}}_{{cmd}}` (`i1_3_W0_causal_lm.model.1.mlp.up_proj_4`; Host commands carry no `W`:
`i1_3_host_preprocess_0`). Each call runs as two workloads (W0: blocks 0–1, W1: blocks 2–3 and `lm_head`), one
`Device Workload` slice each (`prefill` / `decoder`), with an all-reduce between them on the `CCL Workload` track and the
`CCL` group's `CCL Send` / `CCL Recv` tracks. Every command is split over the four chiplets, so the same name appears in
each `Chiplet <k>` group; RoPE (`causal_lm.model`) runs on the General Compute Engine. Chiplet 3 holds
{REBEL_SHARE[3]:.2f}× the work and the others wait for it at the end of each workload.

Layout (reference §8.1 C): process `rbln0` → named tracks `Device Workload`, `CCL Workload`, group `CCL` (→ `CCL Send`,
`CCL Recv`) and groups `Chiplet 0`…`Chiplet 3`, each holding eight named category tracks (`Host`, `Neural Engine
Clusters`, `Neural DMA`, `Task DMA`, `External HDMA`, `Device HDMA`, `Device Sync`, `General Compute Engine`; Host
commands and the input/output transfers on Chiplet 0). Encoding as the ATOM samples (interned names, `Slice
Arguments` JSON, flows).

**Key figures** (mean over the four chiplets, of the device span {f['span_ms']:.2f} ms): {_busy(f)}. Busy share of
each chiplet: {busy}; max/mean {f['imbalance']:.2f}.

**What advisor should find:** {_expect('rebel100')}: chiplet imbalance {f['imbalance']:.2f} with Chiplet 3 the
straggler (RBL014 at 1.15); the six calls vary little (the prefill is ~1.2× a decode step); collectives are
exposed ~2 % of the span. The `CCL` tracks belong to no chiplet group: they are device-level work.
"""
    return _write(root / "rbln_rebel100", {"trace.pb": data}, text)


def _write_before_after(root: Path) -> list[Path]:
    mb, ma = scenario_model("before"), scenario_model("after")
    b, a = encode(mb), encode(ma)
    fb, fa = figures(mb), figures(ma)
    text = f"""
# rbln_before_after — the same ResNet-50 before and after keeping its weights on chip (synthetic)

{HOW} Scenarios `before` and `after`, seed 0.

| file | contents |
|---|---|
| `before.pb` | {_stats(b, mb)} |
| `after.pb` | {_stats(a, ma)} |

**What it models.** ResNet-50, batch 1, six calls on one ATOM device, two attempts for `advisor compare`.
*Before*: every command's weights come from device DRAM by Task DMA, issued only after the previous Neural
Engine command finished (no prefetch), so the Neural Engine waits for each transfer; the stage-3/4 and `fc` layers
move more weight bytes than they compute. *After*: the int8 weights (~25 MB) stay resident in the 32 MB shared
memory and the small activation transfers are prefetched during the previous command. In both, each command's
Neural DMA is prefetched (double-buffered) under the previous command.

{LAYOUT_A}

| | device span | Neural Engine busy | Task DMA busy | NE idle while Task DMA or External HDMA run | NE idle while only Neural DMA runs |
|---|---:|---:|---:|---:|---:|
| before | {fb['span_ms']:.2f} ms | {pct(fb['busy']['Neural Engine Clusters'])} | {pct(fb['busy']['Task DMA'])} | {pct(fb['ne_starved'])} | {pct(fb['ne_idle_ndma'])} |
| after | {fa['span_ms']:.2f} ms | {pct(fa['busy']['Neural Engine Clusters'])} | {pct(fa['busy']['Task DMA'])} | {pct(fa['ne_starved'])} | {pct(fa['ne_idle_ndma'])} |

**What advisor should find:** before — {_expect('before')}: the Neural Engine idles while transfers run
{pct(fb['ne_starved'])} of the span (RBL003 at 20 %), and the layers whose DMA time is ≥ 1.5× their Neural Engine time
cover ~30 % of it (RBL011 at 20 %). After — {_expect('after')}; the comparison shows the span
{fb['span_ms'] / fa['span_ms']:.2f}× shorter and the per-layer DMA time gone.
"""
    return _write(root / "rbln_before_after", {"before.pb": b, "after.pb": a}, text)


def _write_ranks(root: Path) -> list[Path]:
    models = rank_models()
    files = {f"rank{r}.pb": encode(m) for r, m in enumerate(models)}
    figs = [figures(m) for m in models]
    rows = "\n".join(f"| `rank{r}.pb` | `rbln{r}` | {RANK_EPOCHS_US[r] / 1e6:,.3f} s | {f['span_ms']:.2f} ms | "
                     f"{pct(f['busy']['Neural Engine Clusters'])} | {len(files[f'rank{r}.pb']) / 1024:,.0f} KiB |"
                     for r, f in enumerate(figs))
    med = statistics.median(f["span_ms"] for f in figs)
    text = f"""
# rbln_ranks — one model on four data-parallel ranks, one trace per rank (synthetic)

{HOW} `rank_models(seed=0)`.

**What it models.** A data-parallel LLM decode (the `clean` scenario's model and shape: six steps of a four-block
Llama-like decoder) on four ATOM devices, one worker process per rank, so one `.pb` per rank (reference §1.3, §1.7).
Each file is on its own device clock: the epochs differ by seconds, so the files can only be compared by
durations, never by timestamps. Rank 1's device runs its Neural Engine commands {RANK_NE_SCALE[1]:.2f}× slower (its
transfers are unchanged), which makes its span ~{figs[1]['span_ms'] / med:.2f}× the median.

{LAYOUT_A}

| file | device | clock at first slice | device span | Neural Engine busy | size |
|---|---|---:|---:|---:|---:|
{rows}

**What advisor should find:** `advisor report samples/rbln_ranks` analyses each rank on its own (each is balanced:
no rule above info) and the overview names rank 1 the straggler, {figs[1]['span_ms'] / med:.2f}× the median device
span of {med:.2f} ms.
"""
    return _write(root / "rbln_ranks", files, text)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--large", type=Path, help="write the large benchmark trace here instead of the samples")
    ap.add_argument("--size-mb", type=float, default=500.0, help="size of the large trace in MB (1e6 bytes)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.large:
        n = write_large_trace(a.large, round(a.size_mb * 1e6), a.seed)
        print(f"{a.large}: {n:,} bytes")
        return
    for p in write_samples(HERE):
        print(f"{p.relative_to(HERE)}  {p.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
