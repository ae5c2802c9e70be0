"""Write a synthetic Neuron legacy full JSON (`neuron-profile view --output-format json`) of a given size.

The shape follows what neuron-profile 2.27 writes: one line, a top-level object
whose members are lists of objects, keys inside objects in varied order. The events describe a
memory-bound matmul kernel on one trn1 NeuronCore: a warm-up idle gap, then engines and DMA rings busy in
consecutive time windows. The `summary` is computed from the events (total time, per-engine active time as
the union of intervals, DMA counts and bytes, HBM bytes, FLOPs and the formulas built on them).

    python benchmarks/make_legacy_json.py OUT.json --size-mb 200 [--seed 1] [--stats STATS.json]

Generation streams: events are produced in chunks from per-chunk seeds (so every pass sees the same
numbers) and written as they are formatted; memory stays flat whatever the size. Passes: window lengths,
then statistics (for `summary` and `neff_node`), then writing. `neff_node` declares the inputs, weights and
outputs (`variable_name`, `type`, `size` as a string, `shape`), the names DMA events carry in `variable`
(15 % of transfers carry `unknown`, as dynamic DMA does); popular weights are loaded several times.
The last member, `semaphore_update`, fills the file up to the requested size. Output is deterministic for
a given size and seed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

CHUNK_INSTR = 4000  # instruction events per time window
N_PERMS = 12  # key orders per object kind
WARMUP_SHARE = 0.035  # idle warm-up at the start, share of total time
INSTR_SHARE = 0.615  # target shares of the file's bytes
DMA_SHARE = 0.36

HBM_BW = 410e9
PE_FREQ_GHZ = 2.8
BASE_CLOCK_HZ = 1.4e9
TE_PEAK = 2 * 128 * 128 * PE_FREQ_GHZ * 1e9  # FLOP/s
RIDGE = TE_PEAK / HBM_BW

LABELS = ("TensorMatrix", "TensorE", "Vector", "Scalar", "GpSimd", "Sync")
LABEL_P = (0.27, 0.10, 0.25, 0.17, 0.07, 0.14)
# The engine each row counts for in the summary.
ENGINE_OF = {"TensorMatrix": "tensor", "TensorE": "tensor", "Vector": "vector", "Scalar": "scalar",
             "GpSimd": "gpsimd", "Sync": "sync"}
ENGINES = ("tensor", "vector", "scalar", "gpsimd", "sync")

# (label, opcode, share within label, median duration ns, lognormal sigma, instruction_type, activation pool)
OPCODES = (
    ("TensorMatrix", "MATMUL", 1.0, 0, 0.0, "matmul", None),
    ("TensorE", "LoadStationary", 0.8, 60, 0.25, "load_stationary", None),
    ("TensorE", "Transpose", 0.2, 110, 0.3, "transpose", None),
    ("Vector", "TensorTensor", 0.4, 520, 0.6, "tensor_tensor", None),
    ("Vector", "TensorScalarPtr", 0.2, 380, 0.6, "tensor_scalar", None),
    ("Vector", "TensorReduce", 0.15, 650, 0.5, "tensor_reduce", None),
    ("Vector", "TensorCopy", 0.15, 300, 0.6, "tensor_copy", None),
    ("Vector", "Memset", 0.1, 150, 0.4, "memset", None),
    ("Scalar", "Activate", 0.75, 450, 0.55, "activation", ("gelu_apprx_tanh", "exp", "identity", "silu", "tanh")),
    ("Scalar", "TensorCopy", 0.25, 280, 0.5, "tensor_copy", None),
    ("GpSimd", "Iota", 0.3, 700, 0.5, "iota", None),
    ("GpSimd", "Memset", 0.2, 400, 0.5, "memset", None),
    ("GpSimd", "TensorCopy", 0.2, 600, 0.5, "tensor_copy", None),
    ("GpSimd", "AffineSelect", 0.3, 900, 0.5, "affine_select", None),
    ("Sync", "EVENT_SEMAPHORE", 0.6, 90, 0.5, "event_semaphore", None),
    ("Sync", "WRITE", 0.25, 120, 0.4, "write", None),
    ("Sync", "NOP", 0.15, 40, 0.3, "nop", None),
)
UTIL_TARGET = {"TensorMatrix": 0.5, "TensorE": 0.5, "Vector": 0.8, "Scalar": 0.75, "GpSimd": 0.6, "Sync": 0.8}
MATMUL_COLS = np.array([64, 128, 256, 512])

# DMA queues: (name, share, source, dest, semaphore, variable pool kind)
QUEUES = (
    ("qSyncIO0", 0.42, "WEIGHT", "SB", "S[22] (qSyncIO0)", "weight"),
    ("qScalarIO0", 0.14, "INPUT", "SB", "S[23] (qScalarIO0)", "input"),
    ("qVectorIO0", 0.10, "SB", "OUTPUT", "S[24] (qVectorIO0)", "output"),
    ("qSyncSpillReload0", 0.14, "SPILL", "SB", "S[8] (qSyncSpillReload0)", "spill"),
    ("qSyncSpillSave0", 0.08, "SB", "SPILL", "S[9] (qSyncSpillSave0)", "spill"),
    ("qGpSimdIO0", 0.12, "PSUM", "SB", "S[47] (qGpSimdIO0)", "spill"),
)
# Tensor names per queue kind, as DMA `variable` and neff_node `variable_name` carry them. Spill buffers
# are compiler-internal: the NEFF does not declare them.
VARIABLES = {
    "weight": [f"model.layers.{i}.{w}.weight" for i in range(12)
               for w in ("q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj", "gate_proj")],
    "input": ["input_ids", "attention_mask", "position_ids"] + [f"hidden_states.{i}" for i in range(12)],
    "output": ["logits", "output.0"] + [f"residual.{i}" for i in range(12)],
    "spill": ["deltaU", "deltaA", "scan_state"] + [f"tmp_sb_{i}" for i in range(40)],
}
NEFF_TYPE = {"weight": "WEIGHT", "input": "IN", "output": "OUT"}
VARIABLE_P = {}
for _kind, _names in VARIABLES.items():  # Zipf-like popularity: a few tensors loaded again and again
    _w = 1.0 / np.arange(1, len(_names) + 1) ** 1.1
    VARIABLE_P[_kind] = _w / _w.sum()
UNNAMED_SHARE = 0.15  # dynamic DMA without --enable-dge-notifs: variable = unknown
MAX_REPEAT = 8  # the most popular tensors are loaded up to this many times
N_DMA_ENGINES = 16
DMA_UTIL = 0.93
HBM_SIDES = ("WEIGHT", "INPUT", "OUTPUT", "SPILL")


def enc(values) -> np.ndarray:
    """JSON-encode each value once; an object array to index with numpy."""
    out = np.empty(len(values), dtype=object)
    out[:] = [json.dumps(v) for v in values]
    return out


def templates(keys: list[str], rng: np.random.Generator, n: int) -> list[str]:
    """`n` format strings writing the keys in different orders; argument i fills key i."""
    out = []
    for _ in range(n):
        order = rng.permutation(len(keys))
        out.append("{{" + ",".join(f'"{keys[i]}":{{{i}}}' for i in order) + "}}")
    return out


@dataclass
class Pools:
    """Strings the events draw from, built once from the seed."""

    hlo: np.ndarray
    layer: np.ndarray
    subgraph: np.ndarray
    nki: np.ndarray
    operands: list[np.ndarray]  # per opcode row
    activation: list[np.ndarray]
    variables: dict[str, np.ndarray]
    unknown: str = json.dumps("unknown")


def make_pools(rng: np.random.Generator) -> Pools:
    ops = ("add", "multiply", "dot", "custom-call", "exponential", "reduce", "transpose", "convert",
           "broadcast", "tanh", "divide", "subtract", "maximum", "select", "concatenate", "slice", "rsqrt")
    hlo = ["%add.1 = add(%dot, %custom-call.44)"]
    while len(hlo) < 200:
        op = ops[rng.integers(len(ops))]
        a, b = ops[rng.integers(len(ops))], ops[rng.integers(len(ops))]
        args = f"%{a}.{rng.integers(1, 400)}" if op in ("exponential", "tanh", "convert", "transpose", "rsqrt") \
            else f"%{a}.{rng.integers(1, 400)}, %{b}.{rng.integers(1, 400)}"
        hlo.append(f"%{op}.{rng.integers(1, 900)} = {op}({args})")
    layers = [f"model/layers.{i}/{part}" for i in range(12) for part in ("self_attn", "mlp")]
    subgraphs = [f"sg00/sg{i:02d}/nki_kernel_{j}" for i in range(8) for j in range(4)]
    nki = [f"{name}:{line}" for name in ("kernel.py", "attention.py", "mlp_kernel.py")
           for line in rng.integers(12, 420, 40).tolist()]
    operands = []
    for label, opcode, *_ in OPCODES:
        pool = []
        for _ in range(300):
            p = int(rng.choice([32, 64, 128]))
            f = int(rng.integers(1, 17)) * 64
            sb = int(rng.integers(0, 196608 // 64)) * 64
            if opcode == "MATMUL":
                text = (f"moving: sb[{p}][{f}] @0x{sb:x} bf16, stationary: loaded, "
                        f"dst: psum[{p}][{f}] bank {int(rng.integers(8))} fp32 acc_flags={int(rng.integers(4))}")
            elif label == "Sync":
                text = (f"sem: S[{int(rng.integers(1, 64))}] wait_value={int(rng.integers(1, 500))} "
                        f"wait_mode=ge, queue: q{rng.choice(['Sync', 'Vector', 'Scalar'])}IO0")
            else:
                text = (f"src0: sb[{p}][{f}] @0x{sb:x} {rng.choice(['bf16', 'fp32'])}, "
                        f"src1: {rng.choice(['psum', 'sb'])}[{p}][{f}] @0x{(sb + 4096) % 196608:x}, "
                        f"dst: sb[{p}][{f}] @0x{(sb + 8192) % 196608:x} {rng.choice(['bf16', 'fp32'])}")
            pool.append(text)
        operands.append(enc(pool))
    activation = [enc(list(acts) if acts else ["none"]) for *_, acts in OPCODES]
    variables = {k: enc(v) for k, v in VARIABLES.items()}
    return Pools(enc(hlo), enc(layers), enc(subgraphs), enc(nki), operands, activation, variables)


OPC_P = np.array([LABEL_P[LABELS.index(o[0])] * o[2] for o in OPCODES])
OPC_P /= OPC_P.sum()
OPC_LABEL = np.array([LABELS.index(o[0]) for o in OPCODES])
OPC_MU = np.log(np.array([max(o[3], 1) for o in OPCODES], dtype=float))
OPC_SIGMA = np.array([o[4] for o in OPCODES])
LABEL_ENC = enc(LABELS)
OPCODE_ENC = enc([o[1] for o in OPCODES])
ITYPE_ENC = enc([o[5] for o in OPCODES])
MATMUL_ROW = [o[1] for o in OPCODES].index("MATMUL")
TRANSPOSE_ROW = [o[1] for o in OPCODES].index("Transpose")
ACTIVATE_ROW = [o[1] for o in OPCODES].index("Activate")
Q_P = np.array([q[1] for q in QUEUES])
Q_P /= Q_P.sum()
Q_ENC = enc([q[0] for q in QUEUES])
Q_SRC_ENC = enc([[[q[2]]] for q in QUEUES])
Q_DST_ENC = enc([[q[3]] for q in QUEUES])
Q_SEM_ENC = enc([q[4] for q in QUEUES])
NO_SEM = json.dumps("-1")

INSTR_KEYS = ["timestamp", "duration", "label", "subgroup", "opcode", "operands", "hlo_name", "layer", "pc",
              "evt_wait_time", "instruction_type", "activation_fn", "bir_id", "penguin_id",
              "fully_qualified_subgraph", "id", "crc", "nki_source_location"]
DMA_KEYS = ["timestamp", "duration", "transfer_size", "read_size", "write_size", "transfer_rate", "source", "dest",
            "variable", "queue_type", "dma_queue", "dma_engine", "semaphore_id", "op", "is_cc_dma", "duplicate",
            "aggregated", "packet_idx", "packet_aggregation_id", "block_id", "subgroup", "id", "crc"]


@dataclass
class Chunk:
    """The numbers of one time window; text columns are indices into the pools."""

    n_i: int
    n_d: int
    opc: np.ndarray
    i_dur: np.ndarray
    cols: np.ndarray
    q: np.ndarray
    eng: np.ndarray
    size: np.ndarray
    d_dur: np.ndarray
    window: float
    rng: np.random.Generator  # for everything else, drawn after placement
    var: np.ndarray  # index into VARIABLES[kind of the transfer's queue]
    unnamed: np.ndarray  # the transfer carries variable = unknown
    i_ts: np.ndarray | None = None
    d_ts: np.ndarray | None = None


def transfer_sizes(rng: np.random.Generator, n: int) -> np.ndarray:
    """A realistic mix: ~40 % under 4 KiB, ~45 % 4–64 KiB, ~15 % 64 KiB–1 MiB."""
    kind = rng.choice(3, n, p=[0.40, 0.45, 0.15])
    lo = np.array([64, 4096, 65536])[kind]
    hi = np.array([4096, 65536, 1 << 20])[kind]
    size = np.exp(rng.uniform(np.log(lo), np.log(hi)))
    step = np.where(kind == 0, 32, 512)
    return np.maximum((size // step).astype(np.int64) * step, 32)


def gen_chunk(seed: int, k: int, n_i: int, n_d: int) -> Chunk:
    """Durations and categories of window `k` (not yet placed in time)."""
    rng = np.random.default_rng([seed, k, 0])
    opc = rng.choice(len(OPCODES), n_i, p=OPC_P)
    i_dur = np.exp(rng.normal(OPC_MU[opc], OPC_SIGMA[opc]))
    cols = MATMUL_COLS[rng.integers(0, len(MATMUL_COLS), n_i)]
    is_mm = opc == MATMUL_ROW
    i_dur[is_mm] = cols[is_mm] / PE_FREQ_GHZ + 45 + rng.exponential(12, int(is_mm.sum()))
    i_dur = np.maximum(np.rint(i_dur), 8).astype(np.int64)
    q = rng.choice(len(QUEUES), n_d, p=Q_P)
    eng = rng.integers(0, N_DMA_ENGINES, n_d)
    size = transfer_sizes(rng, n_d)
    # fixed descriptor/latency cost plus bytes at ~9 GB/s per ring
    d_dur = np.rint(1800 + rng.exponential(400, n_d) + size / 9.0).astype(np.int64)
    label = OPC_LABEL[opc]
    need = [np.sum(i_dur[label == j]) / UTIL_TARGET[name] for j, name in enumerate(LABELS)]
    need += [np.bincount(eng, weights=d_dur, minlength=N_DMA_ENGINES).max() / DMA_UTIL]
    var = np.zeros(n_d, dtype=np.int64)
    for qi, queue in enumerate(QUEUES):
        sel = q == qi
        p = VARIABLE_P[queue[5]]
        var[sel] = rng.choice(len(p), int(sel.sum()), p=p)
    unnamed = rng.random(n_d) < UNNAMED_SHARE
    return Chunk(n_i, n_d, opc, i_dur, cols, q, eng, size, d_dur, float(max(need)),
                 np.random.default_rng([seed, k, 1]), var, unnamed)


def place(dur: np.ndarray, group: np.ndarray, n_groups: int, start: float, window: float,
          rng: np.random.Generator, overlap_p: float) -> np.ndarray:
    """Start times: each group runs its events in order inside [start, start+window), with random idle gaps
    and, with probability `overlap_p`, an event starting before the previous one ends."""
    ts = np.empty(len(dur), dtype=np.int64)
    for g in range(n_groups):
        idx = np.flatnonzero(group == g)
        m = len(idx)
        if m == 0:
            continue
        d = dur[idx].astype(float)
        overlap = rng.random(m) < overlap_p
        overlap[0] = False
        neg = np.zeros(m)
        neg[1:] = -rng.uniform(0.1, 0.5, m - 1) * d[:-1]
        neg[~overlap] = 0.0
        pos = rng.exponential(1.0, m)
        pos[overlap] = 0.0
        budget = window * rng.uniform(0.96, 0.995) - d.sum() - neg.sum()
        gaps = neg + pos / pos.sum() * max(budget, 0.0)
        starts = start + np.cumsum(gaps + np.concatenate(([0.0], d[:-1])))
        ts[idx] = np.floor(starts).astype(np.int64)
    return ts


def place_chunk(c: Chunk, start: float) -> Chunk:
    c.i_ts = place(c.i_dur, OPC_LABEL[c.opc], len(LABELS), start, c.window, c.rng, 0.06)
    c.d_ts = place(c.d_dur, c.eng, N_DMA_ENGINES, start, c.window, c.rng, 0.0)
    return c


def union_add(ts: np.ndarray, end: np.ndarray, carry: int) -> tuple[int, int]:
    """Length of the union of [ts, end) not already covered up to `carry`; ts sorted. Returns (length, carry)."""
    if len(ts) == 0:
        return 0, carry
    reach = np.maximum.accumulate(end)
    before = np.concatenate(([carry], np.maximum(reach[:-1], carry)))
    length = int(np.maximum(end - np.maximum(ts, before), 0).sum())
    return length, max(carry, int(reach[-1]))


@dataclass
class Stats:
    busy: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LABELS, 0))
    carry: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LABELS, 0))
    engine_busy: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ENGINES, 0))
    engine_carry: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ENGINES, 0))
    label_count: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LABELS, 0))
    label_time: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LABELS, 0))
    dma_busy: int = 0
    dma_carry: int = 0
    compute_busy: int = 0  # Tensor, Vector, Scalar, GpSimd: everything but Sync
    compute_carry: int = 0
    compute_dma_busy: int = 0
    compute_dma_carry: int = 0
    tensor_bytes: dict[tuple[str, int], int] = field(default_factory=dict)  # named DMA bytes per tensor
    all_busy: int = 0
    all_carry: int = 0
    end: int = 0
    first: int = 1 << 62
    n_instr: int = 0
    n_dma: int = 0
    dma_bytes: int = 0
    dma_time: int = 0
    dma_small_4k: int = 0
    dma_small_32k: int = 0
    side_bytes: dict[str, int] = field(default_factory=dict)
    queue_bytes: dict[str, int] = field(default_factory=dict)
    hardware_flops: int = 0
    transpose_flops: int = 0
    matmul_count: int = 0
    activate_count: int = 0
    activate_time: int = 0

    def add(self, c: Chunk) -> None:
        label = OPC_LABEL[c.opc]
        i_end = c.i_ts + c.i_dur
        d_end = c.d_ts + c.d_dur
        for j, name in enumerate(LABELS):
            sel = label == j
            ts, end = c.i_ts[sel], i_end[sel]  # already increasing per label
            got, self.carry[name] = union_add(ts, end, self.carry[name])
            self.busy[name] += got
            self.label_count[name] += int(sel.sum())
            self.label_time[name] += int(c.i_dur[sel].sum())
        engine = np.array([ENGINES.index(ENGINE_OF[n]) for n in LABELS])[label]
        for j, name in enumerate(ENGINES):
            sel = engine == j
            order = np.argsort(c.i_ts[sel], kind="stable")
            got, self.engine_carry[name] = union_add(c.i_ts[sel][order], i_end[sel][order], self.engine_carry[name])
            self.engine_busy[name] += got
        order = np.argsort(c.d_ts, kind="stable")
        got, self.dma_carry = union_add(c.d_ts[order], d_end[order], self.dma_carry)
        self.dma_busy += got
        compute = engine != ENGINES.index("sync")
        c_ts, c_end = c.i_ts[compute], i_end[compute]
        order = np.argsort(c_ts, kind="stable")
        got, self.compute_carry = union_add(c_ts[order], c_end[order], self.compute_carry)
        self.compute_busy += got
        cd_ts, cd_end = np.concatenate((c_ts, c.d_ts)), np.concatenate((c_end, d_end))
        order = np.argsort(cd_ts, kind="stable")
        got, self.compute_dma_carry = union_add(cd_ts[order], cd_end[order], self.compute_dma_carry)
        self.compute_dma_busy += got
        for qi, queue in enumerate(QUEUES):
            sel = (c.q == qi) & ~c.unnamed
            moved = np.bincount(c.var[sel], weights=c.size[sel], minlength=len(VARIABLES[queue[5]]))
            for i, b in enumerate(moved.tolist()):
                key = (queue[5], i)
                self.tensor_bytes[key] = self.tensor_bytes.get(key, 0) + int(b)
        ts_all = np.concatenate((c.i_ts, c.d_ts))
        end_all = np.concatenate((i_end, d_end))
        order = np.argsort(ts_all, kind="stable")
        got, self.all_carry = union_add(ts_all[order], end_all[order], self.all_carry)
        self.all_busy += got
        self.end = max(self.end, int(end_all.max()))
        self.first = min(self.first, int(ts_all.min()))
        self.n_instr += c.n_i
        self.n_dma += c.n_d
        self.dma_bytes += int(c.size.sum())
        self.dma_time += int(c.d_dur.sum())
        self.dma_small_4k += int((c.size < 4096).sum())
        self.dma_small_32k += int((c.size < 32768).sum())
        for qi, (qname, _, src, dst, _, _) in enumerate(QUEUES):
            b = int(c.size[c.q == qi].sum())
            self.queue_bytes[qname] = self.queue_bytes.get(qname, 0) + b
            for side in (("src", src), ("dst", dst)):
                self.side_bytes[side] = self.side_bytes.get(side, 0) + b
        mm = c.opc == MATMUL_ROW
        self.matmul_count += int(mm.sum())
        self.hardware_flops += int((2 * 128 * 128 * c.cols[mm]).sum())
        tr = c.opc == TRANSPOSE_ROW
        self.transpose_flops += int(tr.sum()) * 2 * 128 * 128 * 128
        self.hardware_flops += int(tr.sum()) * 2 * 128 * 128 * 128
        act = c.opc == ACTIVATE_ROW
        self.activate_count += int(act.sum())
        self.activate_time += int(c.i_dur[act].sum())


def file_ids(ts: np.ndarray, id0: int) -> list[int]:
    """Ids numbered in file order (events are written sorted by timestamp)."""
    ids = np.empty(len(ts), dtype=np.int64)
    ids[np.argsort(ts, kind="stable")] = np.arange(id0, id0 + len(ts))
    return ids.tolist()


def format_instr(c: Chunk, pools: Pools, tpls: list[str], id0: int) -> list[str]:
    rng, n = c.rng, c.n_i
    opc = c.opc
    op_idx = rng.integers(0, 300, n)
    operands = np.empty(n, dtype=object)
    act = np.empty(n, dtype=object)
    for row in np.unique(opc):
        sel = opc == row
        operands[sel] = pools.operands[row][op_idx[sel]]
        acts = pools.activation[row]
        act[sel] = acts[rng.integers(0, len(acts), int(sel.sum()))]
    label = OPC_LABEL[opc]
    wait = np.where(label == LABELS.index("Sync"), rng.exponential(2500, n), rng.exponential(40, n) *
                    (rng.random(n) < 0.2)).astype(np.int64)
    has_nki = rng.random(n) < 0.5
    tpl_idx = rng.integers(0, N_PERMS, n) + N_PERMS * has_nki
    cols = [
        c.i_ts.tolist(), c.i_dur.tolist(), LABEL_ENC[label].tolist(),
        np.where(rng.random(n) < 0.9, '"main"', '"spill"').tolist(), OPCODE_ENC[opc].tolist(), operands.tolist(),
        pools.hlo[rng.integers(0, len(pools.hlo), n)].tolist(),
        pools.layer[rng.integers(0, len(pools.layer), n)].tolist(),
        (rng.integers(0, 1 << 18, n) * 4).tolist(), wait.tolist(), ITYPE_ENC[opc].tolist(), act.tolist(),
        rng.integers(1, 200000, n).tolist(), rng.integers(1, 50000, n).tolist(),
        pools.subgraph[rng.integers(0, len(pools.subgraph), n)].tolist(),
        file_ids(c.i_ts, id0), rng.integers(0, 1 << 32, n).tolist(),
        pools.nki[rng.integers(0, len(pools.nki), n)].tolist(),
    ]
    out = [tpls[t].format(*row) for t, row in zip(tpl_idx.tolist(), zip(*cols, strict=True), strict=True)]
    order = np.argsort(c.i_ts, kind="stable")  # the file lists events in time order
    return [out[i] for i in order.tolist()]


def format_dma(c: Chunk, pools: Pools, tpls: list[str], id0: int) -> list[str]:
    rng, n = c.rng, c.n_d
    variable = np.empty(n, dtype=object)
    for qi, q in enumerate(QUEUES):
        sel = c.q == qi
        variable[sel] = pools.variables[q[5]][c.var[sel]]
    variable[c.unnamed] = pools.unknown
    sem = np.where(rng.random(n) < 0.5, Q_SEM_ENC[c.q], NO_SEM)
    rate = np.round(c.size / c.d_dur * 1e9, 3)
    aggregated = rng.random(n) < 0.3
    cols = [
        c.d_ts.tolist(), c.d_dur.tolist(), c.size.tolist(), c.size.tolist(), c.size.tolist(), rate.tolist(),
        Q_SRC_ENC[c.q].tolist(), Q_DST_ENC[c.q].tolist(), variable.tolist(), ['"data"'] * n,
        Q_ENC[c.q].tolist(), c.eng.tolist(), sem.tolist(), np.where(rng.random(n) < 0.9, '"copy"', '"cast"').tolist(),
        ["false"] * n, np.where(rng.random(n) < 0.05, "true", "false").tolist(),
        np.where(aggregated, "true", "false").tolist(), rng.integers(0, 8, n).tolist(),
        np.where(aggregated, rng.integers(0, 1 << 20, n), -1).tolist(), rng.integers(0, 4096, n).tolist(),
        ['"0"'] * n, file_ids(c.d_ts, id0), rng.integers(0, 1 << 32, n).tolist(),
    ]
    tpl_idx = rng.integers(0, N_PERMS, n).tolist()
    out = [tpls[t].format(*row) for t, row in zip(tpl_idx, zip(*cols, strict=True), strict=True)]
    order = np.argsort(c.d_ts, kind="stable")
    return [out[i] for i in order.tolist()]


def shuffled(obj: dict, rng: np.random.Generator) -> dict:
    keys = list(obj)
    return {keys[i]: obj[keys[i]] for i in rng.permutation(len(keys))}


def tensor_table(s: Stats) -> list[dict]:
    """The NEFF's tensors (neff_node): inputs, weights and outputs with their sizes. A weight's size is
    what DMA loaded for it over a repeat that grows with its popularity (1 to MAX_REPEAT copies), so
    the trace shows a few heavily reloaded weights; inputs and outputs move once."""
    rows = []
    for kind, names in VARIABLES.items():
        if kind not in NEFF_TYPE:
            continue
        loaded = [s.tensor_bytes.get((kind, i), 0) for i in range(len(names))]
        total = sum(loaded) or 1
        for i, name in enumerate(names):
            repeat = min(MAX_REPEAT, max(1.0, loaded[i] / total * len(names))) if kind == "weight" else 1.0
            size = max(int(loaded[i] / repeat) // 256 * 256, 4096)
            rows.append({"variable_name": name, "type": NEFF_TYPE[kind], "size": str(size),
                         "shape": f"[{size // 256} 128]", "loaded": loaded[i]})
    return rows


def tensor_stats(s: Stats) -> dict:
    """What an analysis of the trace should find about tensor loads (inputs and weights)."""
    loads = [(r["loaded"], int(r["size"])) for r in tensor_table(s) if r["type"] in ("IN", "WEIGHT")]
    repeats = [loaded / size for loaded, size in loads]
    return {"tensors_loaded_over_twice": sum(r > 2 for r in repeats), "tensor_max_load_repeat": max(repeats),
            "tensor_reload_excess_bytes": sum(max(loaded - size, 0) for loaded, size in loads)}


def summary_of(s: Stats, warmup: int) -> dict:
    total_ns = s.end
    total = total_ns * 1e-9
    hbm_read = s.side_bytes.get(("src", "WEIGHT"), 0) + s.side_bytes.get(("src", "INPUT"), 0) \
        + s.side_bytes.get(("src", "SPILL"), 0)
    hbm_write = s.side_bytes.get(("dst", "OUTPUT"), 0) + s.side_bytes.get(("dst", "SPILL"), 0)
    model_flops = int((s.hardware_flops - s.transpose_flops) * 0.92)
    tensors = tensor_table(s)
    weight_size = sum(int(t["size"]) for t in tensors if t["type"] == "WEIGHT")
    input_size = sum(int(t["size"]) for t in tensors if t["type"] == "IN")
    out = {
        "total_time": total,
        "total_exec_time": (total_ns - warmup) * 1e-9,
        "total_active_time": s.all_busy * 1e-9,
        "total_active_time_percent": s.all_busy / total_ns,
        "neuroncore_cycle_count": round(total * BASE_CLOCK_HZ),
        "model_flops": model_flops,
        "hardware_flops": s.hardware_flops,
        "transpose_flops": s.transpose_flops,
        "adjusted_hardware_flops": s.hardware_flops,
        "mm_arithmetic_intensity": (s.hardware_flops - s.transpose_flops) / (hbm_read + hbm_write),
        "peak_flops_bandwidth_ratio": RIDGE,
        "mfu_estimated_percent": model_flops / (TE_PEAK * total),
        "hfu_estimated_percent": s.hardware_flops / (TE_PEAK * total),
        "mfu_max_achievable_estimated_percent": model_flops / (hbm_read + hbm_write) / RIDGE,
        "mbu_estimated_percent": (hbm_read + hbm_write) / total / HBM_BW,
        "matmul_instruction_count": s.matmul_count,
        "activate_instruction_count": s.activate_count,
        "activate_instruction_time": s.activate_time * 1e-9,
    }
    for e in ENGINES:
        labels = [n for n in LABELS if ENGINE_OF[n] == e]
        out[f"{e}_engine_instruction_count"] = sum(s.label_count[n] for n in labels)
        out[f"{e}_engine_instruction_time"] = sum(s.label_time[n] for n in labels) * 1e-9
        out[f"{e}_engine_active_time"] = s.engine_busy[e] * 1e-9
        out[f"{e}_engine_active_time_percent"] = s.engine_busy[e] / total_ns
    out |= {
        "dma_active_time": s.dma_busy * 1e-9,
        "dma_active_time_percent": s.dma_busy / total_ns,
        "dma_transfer_count": s.n_dma,
        "dma_transfer_total_bytes": s.dma_bytes,
        "dma_transfer_average_bytes": s.dma_bytes / s.n_dma,
        "dma_transfer_time": s.dma_time * 1e-9,
        "dma_queue_count": len(QUEUES),
        "hbm_read_bytes": hbm_read,
        "hbm_write_bytes": hbm_write,
        "sbuf_read_bytes": s.side_bytes.get(("src", "SB"), 0),
        "sbuf_write_bytes": s.side_bytes.get(("dst", "SB"), 0),
        "psum_read_bytes": s.side_bytes.get(("src", "PSUM"), 0),
        "spill_save_bytes": s.queue_bytes["qSyncSpillSave0"],
        "spill_reload_bytes": s.queue_bytes["qSyncSpillReload0"],
        "weight_queue_bytes": s.queue_bytes["qSyncIO0"],
        "weight_size_bytes": weight_size,
        "inputs_and_weights_size_bytes": weight_size + input_size,
        "input_queue_bytes": s.queue_bytes["qScalarIO0"],
        "output_queue_bytes": s.queue_bytes["qVectorIO0"],
        "instance_type": "trn1.2xlarge",
        "compiler_version": "2.21.18209.0+043b1bf7",
        "runtime_version": "2.27.23.0",
        "profiler_version": "2.27.1.0",
        "driver_version": "2.21.37.0",
        "collectives_version": "2.27.24.0",
        "nc_idx": 0,
        "nd_idx": 0,
    }
    return out


def head_members(s: Stats, warmup: int, rng: np.random.Generator) -> str:
    metadata = {
        "hbm_ddr_bandwidth": HBM_BW, "dma_ddr_bandwidth": 435e9, "pe_clock_freq": PE_FREQ_GHZ,
        "pe_clock_others": 1.4, "pe_num_rows": 128, "pe_num_cols": 128, "num_physical_cores": 2,
        "vnc_enabled": False, "ntff_version": 3, "ticks_per_nanosec": 1.4,
        "first_timestamp": s.first, "last_timestamp": s.end,
    }
    warnings = [
        {"category": "dma", "message": "Missing additional dynamic DMA metadata: DMA transfers issued by the DGE "
                                       "have no tensor names (variable = unknown). Capture the profile with "
                                       "--enable-dge-notifs to record them."},
        {"category": "profile", "message": "The profiled execution includes a warm-up period; consider "
                                           "--profile-nth-exec=2 to skip the first execution."},
        {"category": "hlo", "message": "HLO statistics are incomplete for NKI kernels: model_flops is estimated."},
    ]
    members = {
        "summary": [shuffled(summary_of(s, warmup), rng)],
        "metadata": [shuffled(metadata, rng)],
        "warnings": [shuffled(w, rng) for w in warnings],
    }
    return ",".join(f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}" for k, v in members.items())


def tail_members(s: Stats, pools: Pools, rng: np.random.Generator) -> str:
    layers = []
    share = rng.dirichlet(np.ones(len(pools.layer)))
    for name, w in zip(pools.layer.tolist(), share.tolist(), strict=True):
        layers.append(shuffled({
            "layer": json.loads(name),
            **{f"{e}_engine_active_time": s.engine_busy[e] * w * 1e-9 for e in ENGINES},
            "dma_active_time": s.dma_busy * w * 1e-9,
            "hardware_flops": int(s.hardware_flops * w),
            "mfu_estimated_percent": 0.92 * s.hardware_flops * w / (TE_PEAK * s.end * 1e-9),
            "hfu_estimated_percent": s.hardware_flops * w / (TE_PEAK * s.end * 1e-9),
        }, rng))
    profile_info = [shuffled({
        "profile_id": "n_" + "".join(f"{b:02x}" for b in rng.integers(0, 256, 20).tolist()),
        "neff": "file.neff", "ntff": "profile.ntff", "nc_idx": 0, "nd_idx": 0, "exec_idx": 1,
        "instance_type": "trn1.2xlarge", "profiler_version": "2.27.1.0",
    }, rng)]
    members = {"layer_summary": layers, "profile_info": profile_info}
    return ",".join(f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}" for k, v in members.items())


def semaphore_update(i: int, s: Stats, rng: np.random.Generator) -> str:
    """One semaphore update (a member neuron-profile writes for some profiles; its shape here is an
    assumption): filler that brings the file to the requested size and that a reader must skip."""
    queue = QUEUES[i % len(QUEUES)]
    return json.dumps(shuffled({"timestamp": int(s.first + i * 97 % max(s.end - s.first, 1)),
                                "semaphore_id": queue[4], "value": int(rng.integers(1, 5000)),
                                "engine": LABELS[i % len(LABELS)]}, rng), separators=(",", ":"))


def chunk_counts(n_instr: int, n_dma: int) -> list[tuple[int, int]]:
    counts = []
    k = 0
    while k * CHUNK_INSTR < n_instr:
        n_i = min(CHUNK_INSTR, n_instr - k * CHUNK_INSTR)
        lo, hi = n_dma * k * CHUNK_INSTR // n_instr, n_dma * (k * CHUNK_INSTR + n_i) // n_instr
        counts.append((n_i, hi - lo))
        k += 1
    return counts


def generate(out: Path, size_mb: float, seed: int) -> dict:
    t0 = time.perf_counter()
    target = int(size_mb * 1024 * 1024)
    rng = np.random.default_rng([seed, 1 << 30])
    pools = make_pools(rng)
    i_tpls = templates(INSTR_KEYS[:-1], rng, N_PERMS) + templates(INSTR_KEYS, rng, N_PERMS)
    d_tpls = templates(DMA_KEYS, rng, N_PERMS)

    # Calibrate bytes per event on one window placed late in the timeline (realistic digit counts).
    probe_n = 2000
    probe = gen_chunk(seed, 1 << 20, probe_n, probe_n)
    est_chunks = max(target / (CHUNK_INSTR * 1100), 1)
    place_chunk(probe, probe.window * est_chunks / 2)
    id0 = int(est_chunks * CHUNK_INSTR / 2)
    b_i = (sum(map(len, format_instr(probe, pools, i_tpls, id0))) + probe_n) / probe_n
    b_d = (sum(map(len, format_dma(probe, pools, d_tpls, id0))) + probe_n) / probe_n
    n_instr = max(int(target * INSTR_SHARE / b_i), 50)
    n_dma = max(int(target * DMA_SHARE / b_d), 50)
    counts = chunk_counts(n_instr, n_dma)

    # Pass 1: window lengths; pass 2: statistics for the summary.
    windows = [gen_chunk(seed, k, n_i, n_d).window for k, (n_i, n_d) in enumerate(counts)]
    warmup = int(WARMUP_SHARE * sum(windows) / (1 - WARMUP_SHARE))
    starts = (warmup + np.concatenate(([0.0], np.cumsum(windows)[:-1]))).tolist()
    stats = Stats()
    for k, (n_i, n_d) in enumerate(counts):
        stats.add(place_chunk(gen_chunk(seed, k, n_i, n_d), starts[k]))

    written = 0
    with open(out, "w", encoding="ascii", newline="") as f:

        def put(text: str) -> None:
            nonlocal written
            f.write(text)
            written += len(text)

        put("{" + head_members(stats, warmup, rng))
        for member, formatter, tpls in (("instruction", format_instr, i_tpls), ("dma", format_dma, d_tpls)):
            put(f',"{member}":[')
            next_id = 0
            for k, (n_i, n_d) in enumerate(counts):
                c = place_chunk(gen_chunk(seed, k, n_i, n_d), starts[k])
                text = ",".join(formatter(c, pools, tpls, next_id))
                next_id += c.n_i if member == "instruction" else c.n_d
                put(("," if k else "") + text)
            put("]")
        nodes = [shuffled({k: v for k, v in t.items() if k != "loaded"}, rng) for t in tensor_table(stats)]
        put("," + tail_members(stats, pools, rng) + ',"neff_node":' + json.dumps(nodes, separators=(",", ":"))
            + ',"semaphore_update":[')
        i = 0
        while True:  # fill up to the requested size
            update = semaphore_update(i, stats, rng)
            if i and written + len(update) + 3 > target:
                break
            put(("," if i else "") + update)
            i += 1
        put("]}")
    return {
        "file": str(out), "bytes": written, "target_bytes": target, "seconds": round(time.perf_counter() - t0, 2),
        "instruction_count": stats.n_instr, "dma_count": stats.n_dma, "neff_node_count": len(nodes),
        "semaphore_update_count": i,
        "total_time_ns": stats.end, "warmup_ns": warmup,
        "busy_ns_by_label": stats.busy,
        "dma_total_bytes": stats.dma_bytes,
        "dma_mean_bytes": stats.dma_bytes / stats.n_dma,
        "dma_share_under_4k": stats.dma_small_4k / stats.n_dma,
        "dma_share_under_32k": stats.dma_small_32k / stats.n_dma,
        "compute_busy_ns": stats.compute_busy,
        "dma_exposed_ns": stats.compute_dma_busy - stats.compute_busy,
        **tensor_stats(stats),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output .json file")
    parser.add_argument("--size-mb", type=float, default=200.0, help="file size in MiB (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stats", type=Path, help="also write the event statistics (expected results) here")
    args = parser.parse_args()
    if args.size_mb < 0.5:
        parser.error("--size-mb must be at least 0.5")
    result = generate(args.out, args.size_mb, args.seed)
    if args.stats:
        args.stats.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
