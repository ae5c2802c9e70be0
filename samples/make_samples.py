#!/usr/bin/env python3
"""Regenerate the sample Neuron profiler summaries under samples/ (all but mp2_energy).

    python samples/make_samples.py

Stdlib only and deterministic. Each scenario is written as a few primary inputs (a matmul shape,
the bytes it moves, total time, how busy each engine is); every derived field is computed from
them with the profiler's own formulas (shared/reference/neuron-profiler.md section 4), so each
file is internally consistent:

    <e>_engine_active_time_percent = <e>_engine_active_time / total_time   (likewise dma, total)
    mm_arithmetic_intensity        = (hardware_flops - transpose_flops) / (hbm_read + hbm_write)
    mbu_estimated_percent          = (hbm_read + hbm_write) / total_time / HBM bandwidth (one stack)
    mfu_estimated_percent          = model_flops / (TE peak * total_time)   (hfu: hardware_flops)
    mfu_max_achievable_..._percent = model_flops / (hbm_read + hbm_write) / peak_flops_bandwidth_ratio
    neuroncore_cycle_count         = round(total_time * base clock)
    dma_transfer_average_bytes     = dma_transfer_total_bytes / dma_transfer_count

Units are the machine units of summary-json: seconds, bytes, FLOP counts, and every *_percent a
fraction 0..1. samples/mp2_energy/summary.json is a real profile copied verbatim and is not
touched here.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Per-NeuronCore constants the profiler uses (reference section 4-5).
HW = {
    "trn1": {"te_peak": 91.75e12, "hbm_bw": 410e9, "ridge": 223.78, "clock": 1.4e9},  # also inf2
    "trn2": {"te_peak": 78.64e12, "hbm_bw": 716e9, "ridge": 109.83687150837989, "clock": 1.2e9},
}

ENGINES = ("tensor", "vector", "scalar", "gpsimd", "sync")

TRN1_VERSIONS = {
    "compiler_version": "2.24.5133.0+58f8de22",
    "runtime_version": "2.31.24 (0b044)",
    "profiler_version": "2.29.18.0%kaena-tools/2.29@d5fe7ba",
}
TRN2_VERSIONS = {
    "compiler_version": "2.24.5133.0+58f8de22",
    "runtime_version": "2.31.24 (0b044)",
    "profiler_version": "2.29.18.0%kaena-tools/2.29@d5fe7ba",
}


def t(seconds: float) -> float:
    """A time as the profiler prints it (picosecond resolution)."""
    return round(seconds, 12)


def profile_id(tag: str) -> str:
    return "n_" + hashlib.sha1(tag.encode()).hexdigest()


def build(p: dict) -> dict:
    """The summary metrics dict, in the profiler's natural order, from primary inputs `p`.

    p["engines"][e] = (instruction_count, active fraction of total_time, overlap) where overlap
    = instruction_time / active_time (>= 1: instruction durations are summed, overlaps counted).
    """
    hw = HW[p["hw"]]
    T = t(p["total_time"])
    d: dict = {}
    d["total_time"] = T
    d["total_exec_time"] = t(T * p.get("exec_factor", 1.004))
    active_times = {e: t(T * p["engines"][e][1]) for e in ENGINES}
    dma_active = t(T * p["dma_active"])
    total_active = t(T * p["total_active"])
    assert max(max(active_times.values()), dma_active) <= total_active <= T, p["name"]
    d["total_active_time"] = total_active
    d["total_active_time_percent"] = total_active / T
    d["neuroncore_cycle_count"] = round(T * hw["clock"])

    d["model_flops"] = p["model_flops"]
    d["hardware_flops"] = p["hardware_flops"]
    d["transpose_flops"] = p["transpose_flops"]
    hbm = p["hbm_read_bytes"] + p["hbm_write_bytes"]
    d["mm_arithmetic_intensity"] = (p["hardware_flops"] - p["transpose_flops"]) / hbm
    d["peak_flops_bandwidth_ratio"] = hw["ridge"]

    for e in ENGINES:
        count, _, overlap = p["engines"][e]
        active = active_times[e]
        instr_time = t(active * overlap)
        mean = instr_time / count if count else 0.0
        assert count == 0 or 10e-9 <= mean <= 5e-6, (p["name"], e, mean)
        d[f"{e}_engine_instruction_count"] = count
        d[f"{e}_engine_instruction_time"] = instr_time
        d[f"{e}_engine_active_time"] = active
        d[f"{e}_engine_active_time_percent"] = active / T
    d["matmul_instruction_count"] = p["matmul_instruction_count"]
    assert p["matmul_instruction_count"] <= p["engines"]["tensor"][0]

    d["mfu_estimated_percent"] = p["model_flops"] / (hw["te_peak"] * T)
    d["mfu_max_achievable_estimated_percent"] = (p["model_flops"] / hbm) / hw["ridge"]
    d["hfu_estimated_percent"] = p["hardware_flops"] / (hw["te_peak"] * T)

    d["dma_active_time"] = dma_active
    d["dma_active_time_percent"] = dma_active / T
    dma_bytes = hbm + p.get("dma_extra_bytes", 0)
    count = round(dma_bytes / p["dma_avg_target"])
    d["dma_transfer_count"] = count
    d["dma_transfer_total_bytes"] = dma_bytes
    d["dma_transfer_average_bytes"] = dma_bytes / count
    d["dma_transfer_time"] = t(dma_active * p["dma_transfer_time_factor"])
    d["dma_queue_count"] = p["dma_queue_count"]

    d["hbm_read_bytes"] = p["hbm_read_bytes"]
    d["hbm_write_bytes"] = p["hbm_write_bytes"]
    d["mbu_estimated_percent"] = hbm / T / hw["hbm_bw"]
    for key in ("sbuf_read_bytes", "sbuf_write_bytes", "spill_save_bytes", "spill_reload_bytes",
                "psum_read_bytes", "psum_write_bytes", "input_queue_bytes", "output_queue_bytes",
                "weight_queue_bytes", "weight_size_bytes", "inputs_and_weights_size_bytes"):
        d[key] = p[key]

    d["cc_op_count"] = p.get("cc_op_count", 0)
    if "cc_op_time" in p:
        d["cc_op_time"] = t(p["cc_op_time"])
        d["cc_op_active_time"] = t(p["cc_op_active_time"])
        d["cc_op_active_time_percent"] = d["cc_op_active_time"] / T
        assert d["cc_op_active_time"] <= total_active

    d["instance_type"] = p["instance_type"]
    d.update(p["versions"])
    d["nc_idx"] = p.get("nc_idx", 0)
    d["nd_idx"] = p.get("nd_idx", 0)
    d.update(p.get("sentinels", {}))  # real-world "unavailable" values, overriding the above
    return d


def matmul_bytes(m: int, k: int, n: int, dtype_bytes: int = 2) -> tuple[int, int, int]:
    """(input, weight, output) sizes of an [m,k] x [k,n] matmul."""
    return m * k * dtype_bytes, k * n * dtype_bytes, m * n * dtype_bytes


# --------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------

def matmul_fragmented_dma() -> dict:
    # Small-batch projection: x[42, 8192] @ W[8192, 28672] (bf16). Weight streaming dominates, so
    # the kernel is memory-bound; W is loaded as 768-element (1536 B) row segments -> fragmented DMA.
    m, k, n = 42, 8192, 28672
    inp, w, out = matmul_bytes(m, k, n)
    model = 2 * m * k * n
    transpose = 2 * m * k * 128  # x tiles transposed on the Tensor Engine
    bias = n * 2
    read, write = w + inp + bias, out
    total_time = model / (0.10 * HW["trn1"]["te_peak"])  # MFU 10 %
    return {
        "name": "matmul_fragmented_dma", "hw": "trn1", "instance_type": "trn1.32xlarge",
        "versions": TRN1_VERSIONS, "nc_idx": 0, "nd_idx": 0,
        "total_time": total_time, "exec_factor": 1.0046, "total_active": 0.957,
        "engines": {"tensor": (3776, 0.352, 1.06), "vector": (1232, 0.094, 1.02),
                    "scalar": (448, 0.041, 1.0), "gpsimd": (36, 0.0021, 1.0),
                    "sync": (2461, 0.061, 1.1)},
        "matmul_instruction_count": (k // 128) * (n // 512),
        "model_flops": model, "hardware_flops": model + transpose, "transpose_flops": transpose,
        "dma_active": 0.901, "dma_extra_bytes": 1245184, "dma_avg_target": 1533.7,
        "dma_transfer_time_factor": 1.63, "dma_queue_count": 16,
        "hbm_read_bytes": read, "hbm_write_bytes": write,
        "sbuf_read_bytes": w + inp * (n // 512) + write + 1245184,
        "sbuf_write_bytes": read + 1245184 + out,
        "spill_save_bytes": 0, "spill_reload_bytes": 0,
        "psum_read_bytes": m * n * 4, "psum_write_bytes": m * n * 4 * (k // 128),
        "input_queue_bytes": inp, "output_queue_bytes": out,
        "weight_queue_bytes": w, "weight_size_bytes": w, "inputs_and_weights_size_bytes": inp + w,
    }


# Per-attempt knobs of the weight_reload kernel, keyed by how often W is read from HBM (the number
# of x row blocks / the row blocks sharing one W pass). 12: the original, one W load per 128-row
# block; 6: a partial fix, W reused across 2 row blocks (256 rows); 1: W kept in SBUF throughout.
# time: total_time relative to the 12x run; sync: (instruction count, active fraction);
# the rest feed build() directly.
WEIGHT_RELOAD_ATTEMPTS = {
    12: {"name": "weight_reload", "time": 1.0, "sync": (1210, 0.063), "dma_active": 0.931,
         "dma_avg_target": 117492, "dma_transfer_time_factor": 1.18, "total_active": 0.968},
    6: {"name": "weight_reload_partial", "time": 0.75, "sync": (780, 0.055), "dma_active": 0.687,
        "dma_avg_target": 104858, "dma_transfer_time_factor": 1.08, "total_active": 0.941},
    1: {"name": "weight_reload_fixed", "time": 0.60, "sync": (420, 0.041), "dma_active": 0.294,
        "dma_avg_target": 81037, "dma_transfer_time_factor": 0.92, "total_active": 0.884},
}
PARTIAL_RELOADS = 6  # attempt 2 of weight_reload_series; 4 would already be compute-bound (AI 279)


def weight_reload(reloads: int) -> dict:
    # y[1536, 2048] = x[1536, 2048] @ W[2048, 2048] (bf16). W (8 MiB) is read from HBM `reloads`
    # times: 12 = once per row block of x (weight_queue 12x weight_size), 1 = W stays in SBUF.
    a = WEIGHT_RELOAD_ATTEMPTS[reloads]
    m, k, n = 1536, 2048, 2048
    inp, w, out = matmul_bytes(m, k, n)
    model = 2 * m * k * n
    transpose = 2 * m * k * 32
    bias = 16384
    read, write = reloads * w + inp + bias, out
    before_time = (12 * w + inp + bias + out) / (0.68 * HW["trn1"]["hbm_bw"])  # MBU 68 % at 12x
    total_time = before_time * a["time"]  # x 1.0 is exact: the 12x run keeps before_time
    # The same work on the compute engines in every run: keep their active *time*, not fraction.
    def frac(before_fraction: float) -> float:
        return before_fraction * before_time / total_time
    sync_count, sync_active = a["sync"]
    p = {
        "name": a["name"], "hw": "trn1",
        "instance_type": "trn1.2xlarge", "versions": TRN1_VERSIONS, "nc_idx": 0, "nd_idx": 0,
        "total_time": total_time, "exec_factor": 1.006,
        "engines": {"tensor": (808, frac(0.42), 1.03), "vector": (384, frac(0.118), 1.01),
                    "scalar": (192, frac(0.052), 1.0), "gpsimd": (12, frac(0.0009), 1.0),
                    "sync": (sync_count, sync_active, 1.05)},
        "matmul_instruction_count": (m // 128) * (k // 128) * (n // 512),
        "model_flops": model, "hardware_flops": model + transpose, "transpose_flops": transpose,
        "dma_active": a["dma_active"], "dma_extra_bytes": 0,
        "dma_avg_target": a["dma_avg_target"],
        "dma_transfer_time_factor": a["dma_transfer_time_factor"], "dma_queue_count": 8,
        "total_active": a["total_active"],
        "hbm_read_bytes": read, "hbm_write_bytes": write,
        "sbuf_read_bytes": w * (m // 128) + inp * (n // 512) + out,
        "sbuf_write_bytes": read + out,
        "spill_save_bytes": 0, "spill_reload_bytes": 0,
        "psum_read_bytes": m * n * 4, "psum_write_bytes": m * n * 4 * (k // 128),
        "input_queue_bytes": inp, "output_queue_bytes": out,
        "weight_queue_bytes": reloads * w, "weight_size_bytes": w,
        "inputs_and_weights_size_bytes": inp + w,
    }
    return p


def sbuf_spill() -> dict:
    # Fused RMSNorm + QKV projection for a 128-token chunk: x[128, 8192] @ Wqkv[8192, 10240].
    # Without spills this would sit just above the trn2 ridge (AI ~124); fp32 partial sums that do
    # not fit SBUF are spilled to HBM and reloaded, which drags AI down to ~55 (memory-bound).
    m, k, n = 128, 8192, 10240
    inp, w, out = matmul_bytes(m, k, n)
    model = 2 * m * k * n
    transpose = 2 * m * k * 128
    norm_w = 32768
    spill_reload = 108 * 2**20
    spill_save = 100 * 2**20
    read = w + inp + norm_w + spill_reload
    write = out + spill_save
    total_time = (read + write) / (0.60 * HW["trn2"]["hbm_bw"])  # MBU 60 %
    return {
        "name": "sbuf_spill", "hw": "trn2", "instance_type": "trn2.48xlarge",
        "versions": TRN2_VERSIONS, "nc_idx": 5, "nd_idx": 2,
        "total_time": total_time, "exec_factor": 1.0031, "total_active": 0.962,
        "engines": {"tensor": (1380, 0.41, 1.05), "vector": (2890, 0.29, 1.04),
                    "scalar": (1210, 0.17, 1.02), "gpsimd": (312, 0.035, 1.0),
                    "sync": (6120, 0.08, 1.12)},
        "matmul_instruction_count": (k // 128) * (n // 512),
        "model_flops": model, "hardware_flops": model + transpose, "transpose_flops": transpose,
        "dma_active": 0.873, "dma_extra_bytes": 2 * inp, "dma_avg_target": 28876,
        "dma_transfer_time_factor": 1.21, "dma_queue_count": 16,
        "hbm_read_bytes": read, "hbm_write_bytes": write,
        "sbuf_read_bytes": w + inp * (n // 512) + write + 2 * inp + m * n * 4,
        "sbuf_write_bytes": read + 2 * inp + m * n * 4 * 2,
        "spill_save_bytes": spill_save, "spill_reload_bytes": spill_reload,
        "psum_read_bytes": m * n * 4 * 2, "psum_write_bytes": m * n * 4 * (k // 128),
        "input_queue_bytes": inp, "output_queue_bytes": out,
        "weight_queue_bytes": w + norm_w, "weight_size_bytes": w + norm_w,
        "inputs_and_weights_size_bytes": inp + w + norm_w,
        # This capture's tool could not read the PSUM counters: the real-world sentinel.
        "sentinels": {"psum_read_bytes": -1, "psum_write_bytes": -1},
    }


def compute_bound_tuned() -> dict:
    # Well-tuned large projection: x[16384, 4096] @ W[4096, 2048] (bf16), W resident in SBUF.
    m, k, n = 16384, 4096, 2048
    inp, w, out = matmul_bytes(m, k, n)
    model = 2 * m * k * n
    tile_transpose = 2 * 128 ** 3
    transpose = 1360 * tile_transpose  # ~2 % of hardware FLOPs
    padding = 1097 * tile_transpose    # partial tiles at the edges
    bias = 4096
    read, write = inp + w + bias, out
    total_time = model / (0.80 * HW["trn2"]["te_peak"])  # MFU 80 %
    return {
        "name": "compute_bound_tuned", "hw": "trn2", "instance_type": "trn2.3xlarge",
        "versions": TRN2_VERSIONS, "nc_idx": 0, "nd_idx": 0,
        "total_time": total_time, "exec_factor": 1.0012, "total_active": 0.968,
        "engines": {"tensor": (17900, 0.931, 1.01), "vector": (2048, 0.21, 1.01),
                    "scalar": (1024, 0.12, 1.0), "gpsimd": (16, 0.0004, 1.0),
                    "sync": (3400, 0.04, 1.08)},
        "matmul_instruction_count": (m // 128) * (k // 128) * (n // 512),
        "model_flops": model, "hardware_flops": model + transpose + padding,
        "transpose_flops": transpose,
        "dma_active": 0.342, "dma_extra_bytes": 0, "dma_avg_target": 196608,
        "dma_transfer_time_factor": 0.97, "dma_queue_count": 16,
        "hbm_read_bytes": read, "hbm_write_bytes": write,
        "sbuf_read_bytes": w * (m // 128) + inp * (n // 512) + out,
        "sbuf_write_bytes": read + out,
        "spill_save_bytes": 0, "spill_reload_bytes": 0,
        "psum_read_bytes": m * n * 4, "psum_write_bytes": m * n * 4 * (k // 128),
        "input_queue_bytes": inp, "output_queue_bytes": out,
        "weight_queue_bytes": w, "weight_size_bytes": w, "inputs_and_weights_size_bytes": inp + w,
    }


def multi_core_rank(rank: int) -> dict:
    # One data-parallel training step of a ~151M-parameter model slice, 2048 tokens per rank,
    # followed by gradient all-reduce. Rank 2 is the straggler: ~15 % longer, all in extra DMA time.
    params, tokens = 150_994_944, 2048
    model = 6 * params * tokens
    padding = model // 50
    hardware = round((model + padding) / 0.96)
    transpose = hardware - model - padding  # 4 % of hardware FLOPs
    jitter = {0: 1.000, 1: 1.0061, 2: 1.0, 3: 0.9947}[rank]
    base_time = 0.04820 * jitter
    straggler = rank == 2
    extra_dma = 0.15 * 0.04820 if straggler else 0.0
    total_time = base_time + extra_dma
    # The same compute on every rank: engine active *time* is fixed, its fraction follows total_time.
    def frac(base_fraction: float) -> float:
        return base_fraction * base_time / total_time
    dma_time = 0.618 * base_time + extra_dma
    read = 6_912_471_040 + rank * 65536
    write = 3_051_356_160 + rank * 32768
    cc_time = {0: 0.006121, 1: 0.006187, 2: 0.005338, 3: 0.006093}[rank]
    return {
        "name": f"multi_core rank {rank}", "hw": "trn1", "instance_type": "trn1.32xlarge",
        "versions": TRN1_VERSIONS, "nc_idx": rank, "nd_idx": rank // 2,
        "total_time": total_time, "exec_factor": 1.0021,
        "total_active": (0.931 * base_time + extra_dma) / total_time,
        "engines": {"tensor": (41216 + rank * 3, frac(0.503), 1.04),
                    "vector": (88412 + rank * 11, frac(0.381), 1.03),
                    "scalar": (30144 + rank * 5, frac(0.219), 1.02),
                    "gpsimd": (2210, frac(0.041), 1.0),
                    "sync": (61877 + (9120 if straggler else rank * 17), frac(0.094) * (1.2 if straggler else 1.0), 1.06)},
        "matmul_instruction_count": 38912,
        "model_flops": model, "hardware_flops": hardware, "transpose_flops": transpose,
        "dma_active": dma_time / total_time, "dma_extra_bytes": 402653184,
        "dma_avg_target": 88420 * (0.998 + 0.001 * rank),
        "dma_transfer_time_factor": 1.27 if straggler else 1.12, "dma_queue_count": 32,
        "hbm_read_bytes": read, "hbm_write_bytes": write,
        "sbuf_read_bytes": 21_474_836_480 + rank * 131072,
        "sbuf_write_bytes": 13_958_643_712 + rank * 65536,
        "spill_save_bytes": 201_326_592, "spill_reload_bytes": 234_881_024,
        "psum_read_bytes": 3_221_225_472, "psum_write_bytes": 12_884_901_888,
        "input_queue_bytes": 16_777_216, "output_queue_bytes": 301_989_888,
        "weight_queue_bytes": 905_969_664, "weight_size_bytes": 301_989_888,
        "inputs_and_weights_size_bytes": 318_767_104,
        "cc_op_count": 24, "cc_op_time": cc_time, "cc_op_active_time": cc_time * 0.862,
    }


def matmul_text() -> dict:
    # bf16 projection on inf2: x[160, 8192] @ W[8192, 28672]; moderately memory-bound (AI ~156).
    m, k, n = 160, 8192, 28672
    inp, w, out = matmul_bytes(m, k, n)
    model = 2 * m * k * n
    transpose = 2 * m * k * 128
    bias = n * 2
    read, write = w + inp + bias, out
    total_time = (model + transpose) / (0.48 * HW["trn1"]["te_peak"])  # HFU 48 %
    return {
        "name": "matmul_text", "hw": "trn1", "instance_type": "inf2.xlarge",
        "versions": TRN1_VERSIONS, "nc_idx": 0, "nd_idx": 0,
        "total_time": total_time, "exec_factor": 1.0039, "total_active": 0.934,
        "engines": {"tensor": (3776, 0.601, 1.03), "vector": (1288, 0.142, 1.02),
                    "scalar": (512, 0.063, 1.0), "gpsimd": (24, 0.0011, 1.0),
                    "sync": (1840, 0.052, 1.06)},
        "matmul_instruction_count": (k // 128) * (n // 512),
        "model_flops": model, "hardware_flops": model + transpose, "transpose_flops": transpose,
        "dma_active": 0.823, "dma_extra_bytes": 0, "dma_avg_target": 49152 * 1.0213,
        "dma_transfer_time_factor": 1.09, "dma_queue_count": 16,
        "hbm_read_bytes": read, "hbm_write_bytes": write,
        "sbuf_read_bytes": w + inp * (n // 512) + write,
        "sbuf_write_bytes": read + out,
        "spill_save_bytes": 0, "spill_reload_bytes": 0,
        "psum_read_bytes": m * n * 4, "psum_write_bytes": m * n * 4 * (k // 128),
        "input_queue_bytes": inp, "output_queue_bytes": out,
        "weight_queue_bytes": w, "weight_size_bytes": w, "inputs_and_weights_size_bytes": inp + w,
    }


# --------------------------------------------------------------------------------------------
# summary-text rendering
# --------------------------------------------------------------------------------------------

def group_of(key: str) -> str:
    if key in ("total_time", "total_exec_time", "total_active_time", "total_active_time_percent",
               "neuroncore_cycle_count"):
        return "time"
    if key.startswith("dma_"):
        return "dma"
    if key.startswith("cc_"):
        return "collectives"
    if key in ("instance_type", "compiler_version", "runtime_version", "profiler_version",
               "nc_idx", "nd_idx"):
        return "system"
    if key.endswith("_bytes") or key.startswith("mbu_"):
        return "memory"
    return "compute"


def sig(x: float, digits: int = 4) -> str:
    """x with `digits` significant figures, fixed-point."""
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def human(key: str, value) -> str:
    if isinstance(value, str):
        return value
    if key.endswith("_percent"):
        return f"{sig(value * 100)} %"
    if key in ("mm_arithmetic_intensity", "peak_flops_bandwidth_ratio"):
        return f"{value:.3f}"
    if key.endswith("_count") or key in ("nc_idx", "nd_idx"):
        return str(value)
    if key.endswith("_flops"):
        for unit, scale in (("PFLOPS", 1e15), ("TFLOPS", 1e12), ("GFLOPS", 1e9), ("MFLOPS", 1e6),
                            ("KFLOPS", 1e3)):
            if abs(value) >= scale:
                return f"{value / scale:.3f} {unit}"
        return f"{value} FLOPS"
    if key.endswith("_bytes"):
        for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if abs(value) >= scale:
                return f"{value / scale:.3f} {unit}"
        return f"{round(value)} B"
    if key.endswith("_time"):
        for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
            if abs(value) >= scale:
                return f"{sig(value / scale)} {unit}"
        return f"{sig(value / 1e-9)} ns"
    return sig(value)


def summary_text(d: dict) -> str:
    rows = [(group_of(k), k, human(k, v)) for k, v in d.items()]
    order = ["time", "compute", "dma", "memory", "collectives", "system"]
    rows.sort(key=lambda r: order.index(r[0]))  # stable: keeps the profiler's order in a group
    w1 = max(len(r[0]) for r in rows) + 2
    w2 = max(len(r[1]) for r in rows) + 2
    lines = [f"{'group':<{w1}}{'metric':<{w2}}value"]
    lines += [f"{g:<{w1}}{k:<{w2}}{v}" for g, k, v in rows]
    return "\n".join(lines) + "\n"


UNIT_SCALE = {"FLOPS": 1, "KFLOPS": 1e3, "MFLOPS": 1e6, "GFLOPS": 1e9, "TFLOPS": 1e12, "PFLOPS": 1e15,
              "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def shown_ai(d: dict) -> float:
    """mm_arithmetic_intensity recomputed from the humanised (rounded) values summary.txt shows."""
    def back(key: str) -> float:
        number, unit = human(key, d[key]).split()
        return float(number) * UNIT_SCALE[unit]
    return (back("hardware_flops") - back("transpose_flops")) / (back("hbm_read_bytes") + back("hbm_write_bytes"))


def summary_raw(d: dict) -> str:
    w = max(len(k) for k in d) + 2
    return "".join(f"{k:<{w}}{v}\n" for k, v in d.items())


# --------------------------------------------------------------------------------------------
# READMEs
# --------------------------------------------------------------------------------------------

def pct(x: float) -> str:
    return f"{x * 100:.1f} %"


def size(b: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b:.0f} B"


def ms(s: float) -> str:
    return f"{s * 1e3:.3f} ms"


def busiest(d: dict) -> str:
    e = max(ENGINES, key=lambda e: d[f"{e}_engine_active_time_percent"])
    names = {"tensor": "Tensor", "vector": "Vector", "scalar": "Scalar", "gpsimd": "GpSimd", "sync": "Sync"}
    return f"{names[e]} Engine {pct(d[f'{e}_engine_active_time_percent'])} active"


def key_numbers(d: dict) -> list[str]:
    ai, ridge = d["mm_arithmetic_intensity"], d["peak_flops_bandwidth_ratio"]
    bound = "memory-bound" if ai < ridge else "compute-bound"
    lines = [
        f"- total_time {ms(d['total_time'])}; Tensor Engine {pct(d['tensor_engine_active_time_percent'])} active, "
        f"Vector {pct(d['vector_engine_active_time_percent'])}, DMA {pct(d['dma_active_time_percent'])}, "
        f"any engine/DMA {pct(d['total_active_time_percent'])}",
        f"- arithmetic intensity {ai:.1f} FLOP/B vs ridge {ridge:.2f} -> {bound}",
        f"- MFU {pct(d['mfu_estimated_percent'])}, HFU {pct(d['hfu_estimated_percent'])}, "
        f"MBU {pct(d['mbu_estimated_percent'])} (of one HBM stack), "
        f"transpose {pct(d['transpose_flops'] / d['hardware_flops'])} of hardware FLOPs",
        f"- HBM reads {size(d['hbm_read_bytes'])}, writes {size(d['hbm_write_bytes'])}; "
        f"{d['dma_transfer_count']:,} DMA transfers averaging {size(d['dma_transfer_average_bytes'])}",
    ]
    if d["mfu_max_achievable_estimated_percent"] > 1:
        lines.append(f"- mfu_max_achievable_estimated_percent is {d['mfu_max_achievable_estimated_percent']:.3f} (> 1, "
                     "i.e. above 100 %): the formula is not capped, so compute-bound kernels exceed 1; not an error")
    if d["weight_size_bytes"] > 0:
        lines.append(f"- weight reload ratio (weight_queue/weight_size) {d['weight_queue_bytes'] / d['weight_size_bytes']:.2f}; "
                     f"spill share (spill_reload/hbm_read) {pct(d['spill_reload_bytes'] / d['hbm_read_bytes'])}")
    return lines


def readme(title: str, intro: list[str], fmt: str, d: dict, conclusion: list[str]) -> str:
    body = [f"# {title}", ""] + intro + [
        "",
        f"Format: {fmt}",
        f"Instance: `{d['instance_type']}` (`peak_flops_bandwidth_ratio` {d['peak_flops_bandwidth_ratio']:.2f}).",
        "",
        "Key numbers:",
        "",
    ] + key_numbers(d) + ["", "What a performance engineer concludes:", ""] + conclusion + [
        "",
        "Synthetic but consistent: generated by `python samples/make_samples.py` with the profiler's formulas.",
    ]
    return "\n".join(body) + "\n"


def series_readme(series: list[dict]) -> str:
    """README of weight_reload_series/: a table of the key numbers per attempt, then the story."""
    first, mid, last = series
    ridge = first["peak_flops_bandwidth_ratio"]
    files = " ".join(f"samples/weight_reload_series/attempt_{i}.json" for i in range(1, len(series) + 1))
    labels = " ".join(f'--label "attempt {i}"' for i in range(1, len(series) + 1))
    rows = []
    for i, d in enumerate(series, 1):
        ai = d["mm_arithmetic_intensity"]
        rows.append(
            f"| {i} | `attempt_{i}.json` | {ms(d['total_time'])} | {pct(d['total_time'] / first['total_time'] - 1) if i > 1 else '-'} | "
            f"{d['weight_queue_bytes'] / d['weight_size_bytes']:.2f} | {size(d['hbm_read_bytes'])} | "
            f"{pct(d['dma_active_time_percent'])} | {pct(d['tensor_engine_active_time_percent'])} | "
            f"{pct(d['mfu_estimated_percent'])} | {ai:.1f} {'<' if ai < ridge else '>'} {ridge:.2f} | "
            f"{'memory-bound' if ai < ridge else 'compute-bound'} |")
    body = [
        "# weight_reload_series: three attempts at fixing the weight reload",
        "",
        "The weight_reload kernel, a bf16 projection x[1536, 2048] @ W[2048, 2048] on one trn1.2xlarge "
        "NeuronCore, through three optimisation attempts, for `advisor compare` (which compares the inputs "
        "in the order given). Same instance type, compiler, runtime and profiler versions, same FLOPs "
        "in every attempt; only how often the 8 MiB weight W is read from HBM changes.",
        "",
        f"- `attempt_1.json`: the \"before\", byte-identical to `../weight_reload/summary.json`: W re-read "
        f"for each of the 12 row blocks of x ({first['weight_queue_bytes'] / first['weight_size_bytes']:.0f}x).",
        f"- `attempt_2.json`: a partial fix: W reused across 2 row blocks (256 rows of x per W pass), so it is "
        f"read {mid['weight_queue_bytes'] / mid['weight_size_bytes']:.0f}x. HBM reads, DMA time and total_time "
        "fall part of the way; still memory-bound.",
        f"- `attempt_3.json`: the fix, byte-identical to `../weight_reload_fixed/summary.json`: W kept in SBUF "
        f"and read once ({last['weight_queue_bytes'] / last['weight_size_bytes']:.0f}x).",
        "",
        "Format: a flat summary-json metrics dict per file (as people paste it), like `weight_reload/`.",
        "",
        "Key numbers:",
        "",
        "| attempt | file | total_time | vs attempt 1 | weight reload ratio | HBM reads | DMA active "
        "| Tensor Engine active | MFU | arithmetic intensity vs ridge | bound |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ] + rows + [
        "",
        "What the series shows:",
        "",
        f"- attempt 1 -> 2: halving the reloads cuts HBM reads {size(first['hbm_read_bytes'])} -> "
        f"{size(mid['hbm_read_bytes'])} and DMA active time {ms(first['dma_active_time'])} -> "
        f"{ms(mid['dma_active_time'])}; total_time {pct(1 - mid['total_time'] / first['total_time'])} lower. "
        f"The Tensor Engine does the same work in less wall time, so it is busier "
        f"({pct(first['tensor_engine_active_time_percent'])} -> {pct(mid['tensor_engine_active_time_percent'])}). "
        f"AI rises {first['mm_arithmetic_intensity']:.1f} -> {mid['mm_arithmetic_intensity']:.1f} FLOP/B but stays "
        f"below the ridge {ridge:.2f}: still memory-bound, and the weight reload ratio "
        f"{mid['weight_queue_bytes'] / mid['weight_size_bytes']:.2f} is still the finding to fix.",
        f"- attempt 2 -> 3: W resident in SBUF (8 MiB fits in 24 MiB): HBM reads {size(last['hbm_read_bytes'])}, "
        f"total_time {ms(last['total_time'])} ({pct(1 - last['total_time'] / first['total_time'])} below attempt 1), "
        f"Tensor Engine {pct(last['tensor_engine_active_time_percent'])} active, AI "
        f"{last['mm_arithmetic_intensity']:.1f} > {ridge:.2f}: compute-bound; the reload finding is gone.",
        "- the step from 6x to 1x buys less time than the step from 12x to 6x: once memory traffic stops "
        "being the limit, the fixed Tensor Engine work dominates.",
        "",
        "Compare the attempts:",
        "",
        "```",
        f"advisor compare {files} {labels} -o series.md",
        "```",
        "",
        "Synthetic but consistent: generated by `python samples/make_samples.py` with the profiler's formulas "
        "(`weight_reload(reloads)` with reloads 12, 6 and 1).",
    ]
    return "\n".join(body) + "\n"


# --------------------------------------------------------------------------------------------

def write(rel: str, text: str) -> None:
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def dump(obj) -> str:
    return json.dumps(obj, indent=2) + "\n"


def main() -> None:
    # 2. fragmented DMA
    d = build(matmul_fragmented_dma())
    write("matmul_fragmented_dma/summary.json", dump({profile_id("matmul_fragmented_dma"): d}))
    write("matmul_fragmented_dma/README.md", readme(
        "matmul_fragmented_dma: memory-bound matmul with fragmented DMA",
        ["A small-batch bf16 projection, x[42, 8192] @ W[8192, 28672], on one NeuronCore.",
         "The 448 MiB weight is streamed from HBM once, but in 1.5 KiB pieces."],
        "summary-json, `{\"n_<40 hex>\": {metrics}}` with one entry (as `neuron-profile view "
        "--output-format summary-json` writes it).", d,
        [f"- memory-bound: arithmetic intensity {d['mm_arithmetic_intensity']:.1f} FLOP/B < ridge 223.78, "
         f"so at most {pct(d['mfu_max_achievable_estimated_percent'])} MFU is reachable; MFU is {pct(d['mfu_estimated_percent'])}.",
         f"- DMA fragmented: average transfer {size(d['dma_transfer_average_bytes'])} over "
         f"{d['dma_transfer_count']:,} transfers (target >= 32 KiB; AWS's timeline warns below 4 KiB). "
         f"DMA is {pct(d['dma_active_time_percent'])} busy yet moves only {pct(d['mbu_estimated_percent'])} of one HBM stack's bandwidth.",
         "- no weight reload (ratio 1.00) and no spills: fix the access pattern (larger, contiguous "
         "weight tiles per descriptor), not the data volume."]))

    # 3. weight reload, before and after
    before = build(weight_reload(12))
    after = build(weight_reload(1))
    write("weight_reload/summary.json", dump(before))
    write("weight_reload_fixed/summary.json", dump(after))
    write("weight_reload/README.md", readme(
        "weight_reload: weights re-read from HBM",
        ["A bf16 projection x[1536, 2048] @ W[2048, 2048] whose 8 MiB weight is loaded again for each of 12 "
         "row blocks of x. `weight_reload_fixed/` is the same kernel after the fix."],
        "a flat summary-json metrics dict (as people paste it).", before,
        [f"- weights reloaded: weight_queue_bytes {size(before['weight_queue_bytes'])} = "
         f"{before['weight_queue_bytes'] / before['weight_size_bytes']:.1f}x weight_size_bytes {size(before['weight_size_bytes'])}; "
         f"{pct((before['weight_queue_bytes'] - before['weight_size_bytes']) / before['hbm_read_bytes'])} of HBM reads are repeats.",
         f"- memory-bound because of it: AI {before['mm_arithmetic_intensity']:.1f} FLOP/B < ridge 223.78, "
         f"DMA {pct(before['dma_active_time_percent'])} active with healthy {size(before['dma_transfer_average_bytes'])} transfers "
         "(not fragmentation), Tensor Engine waiting.",
         "- fix: keep W resident in SBUF (8 MiB fits in 24 MiB) and loop over row blocks inside; "
         f"see weight_reload_fixed (total_time {ms(before['total_time'])} -> {ms(after['total_time'])})."]))
    write("weight_reload_fixed/README.md", readme(
        "weight_reload_fixed: the \"after\" of weight_reload",
        ["The same kernel, instance and compiler as `weight_reload/`, after the fix: W is loaded into "
         "SBUF once and kept there while all 12 row blocks of x stream past it."],
        "a flat summary-json metrics dict (as people paste it).", after,
        [f"- weight_queue_bytes now equals weight_size_bytes (ratio {after['weight_queue_bytes'] / after['weight_size_bytes']:.2f}); "
         f"HBM reads {size(before['hbm_read_bytes'])} -> {size(after['hbm_read_bytes'])}.",
         f"- total_time {ms(before['total_time'])} -> {ms(after['total_time'])} "
         f"({pct(1 - after['total_time'] / before['total_time'])} lower); Tensor Engine "
         f"{pct(before['tensor_engine_active_time_percent'])} -> {pct(after['tensor_engine_active_time_percent'])} active, "
         f"MFU {pct(before['mfu_estimated_percent'])} -> {pct(after['mfu_estimated_percent'])}.",
         f"- now compute-bound (AI {after['mm_arithmetic_intensity']:.1f} > 223.78); the next lever is Tensor Engine "
         "efficiency, not memory traffic."]))

    # 3b. weight reload as a three-attempt series for `advisor compare`: the same 12x and 1x profiles
    # (byte-identical files), with a partial fix in between.
    partial = build(weight_reload(PARTIAL_RELOADS))
    assert partial["mm_arithmetic_intensity"] < partial["peak_flops_bandwidth_ratio"], "attempt 2 must stay memory-bound"
    series = [before, partial, after]
    for i, d in enumerate(series, 1):
        write(f"weight_reload_series/attempt_{i}.json", dump(d))
    write("weight_reload_series/README.md", series_readme(series))

    # 4. SBUF spill, legacy shape, trn2
    d = build(sbuf_spill())
    write("sbuf_spill/summary.json", dump({"summary": [d], "instruction": []}))
    real_read = d["hbm_read_bytes"] - d["spill_reload_bytes"]
    real_write = d["hbm_write_bytes"] - d["spill_save_bytes"]
    ai_no_spill = (d["hardware_flops"] - d["transpose_flops"]) / (real_read + real_write)
    write("sbuf_spill/README.md", readme(
        "sbuf_spill: SBUF spills turn a kernel memory-bound (trn2)",
        ["A fused RMSNorm + QKV projection for a 128-token chunk, x[128, 8192] @ Wqkv[8192, 10240] (bf16), "
         "on one trn2 NeuronCore. fp32 partial sums that do not fit SBUF are spilled to HBM and reloaded.",
         "Realism: `psum_read_bytes` and `psum_write_bytes` are -1, the profiler's \"unavailable\" sentinel "
         "(this capture could not read the PSUM counters); a reader must not treat them as numbers."],
        "legacy full-JSON shape `{\"summary\": [ {metrics} ], \"instruction\": []}` (summary is a list "
         "with one dict; the instruction list is left empty).", d,
        [f"- spills: spill_reload_bytes {size(d['spill_reload_bytes'])} = {pct(d['spill_reload_bytes'] / d['hbm_read_bytes'])} "
         f"of HBM reads (AWS flags > 25 %), spill_save_bytes {size(d['spill_save_bytes'])}; "
         f"useful reads only {pct(real_read / d['hbm_read_bytes'])}.",
         f"- memory-bound: AI {d['mm_arithmetic_intensity']:.1f} FLOP/B < ridge 109.84; without the spill traffic "
         f"it would be {ai_no_spill:.1f}, just above the ridge: the spills alone make it memory-bound.",
         "- fix: shrink the live working set (accumulate fewer output columns per pass, evacuate PSUM to "
         "bf16 sooner) so intermediates stay in SBUF."]))

    # 5. compute-bound, tuned, log lines before the JSON
    d = build(compute_bound_tuned())
    instructions = sum(d[f"{e}_engine_instruction_count"] for e in ENGINES)
    logs = ("2026-11-02 10:14:03.123 INFO  Reading NTFF file profile.ntff\n"
            "2026-11-02 10:14:03.481 INFO  Reading NEFF file file.neff\n"
            f"2026-11-02 10:14:05.902 INFO  Processed {instructions} instructions, "
            f"{d['dma_transfer_count']} DMA transfers\n")
    write("compute_bound_tuned/summary.json", logs + dump({profile_id("compute_bound_tuned"): d}))
    write("compute_bound_tuned/README.md", readme(
        "compute_bound_tuned: a well-tuned, compute-bound matmul (trn2)",
        ["A large bf16 projection x[16384, 4096] @ W[4096, 2048] with W resident in SBUF, on one trn2 "
         "NeuronCore. The baseline a rules engine should have (almost) nothing to say about.",
         "The file starts with three log lines, exactly as `neuron-profile view ... --output-format "
         "summary-json > summary.json` captures stdout; the JSON starts at the first `{`."],
        "summary-json `{\"n_<40 hex>\": {metrics}}` with one entry, preceded by log lines.", d,
        [f"- compute-bound: AI {d['mm_arithmetic_intensity']:.1f} FLOP/B >> ridge 109.84; Tensor Engine "
         f"{pct(d['tensor_engine_active_time_percent'])} active, MFU {pct(d['mfu_estimated_percent'])}, "
         f"HFU {pct(d['hfu_estimated_percent'])}.",
         f"- no memory problems: average DMA {size(d['dma_transfer_average_bytes'])}, weight reload 1.00, no spills, "
         f"transposes {pct(d['transpose_flops'] / d['hardware_flops'])} of hardware FLOPs (< 10 %).",
         "- little left to gain inside the kernel; look elsewhere (graph-level fusion, overlap with other work)."]))

    # 6. multi-core data-parallel step
    ranks = [build(multi_core_rank(r)) for r in range(4)]
    write("multi_core/summary.json", dump({profile_id(f"multi_core/rank{r}"): d for r, d in enumerate(ranks)}))
    fast = [d["total_time"] for i, d in enumerate(ranks) if i != 2]
    median_fast = sorted(fast)[1]
    s = ranks[2]
    write("multi_core/README.md", readme(
        "multi_core: four ranks of one data-parallel step, one straggler",
        ["One training step of the same model on four NeuronCores of a trn1.32xlarge (nc_idx 0-3 on Neuron "
         "devices 0-1), data-parallel, ending in 24 gradient all-reduce collectives per rank "
         "(`cc_op_count`, `cc_op_time`, `cc_op_active_time`, `cc_op_active_time_percent`).",
         "Ranks 0, 1 and 3 agree within 1 %; rank 2 (nc_idx 2) is the straggler. Key numbers below are rank 0's."],
        "summary-json with four `{\"n_<40 hex>\": {metrics}}` entries, one per core (as with `-d DIR`).",
        ranks[0],
        [f"- straggler: nc_idx 2 total_time {ms(s['total_time'])} vs {ms(median_fast)} for the others "
         f"({pct(s['total_time'] / median_fast - 1)} longer); its DMA active time is {ms(s['dma_active_time'])} vs "
         f"{ms(ranks[0]['dma_active_time'])} ({pct(s['dma_active_time_percent'])} vs "
         f"{pct(ranks[0]['dma_active_time_percent'])} active) while compute engine time is the same.",
         f"- same FLOPs and bytes on every rank, so the extra time is DMA (slower transfers), not extra work; "
         f"its MFU drops to {pct(s['mfu_estimated_percent'])} vs {pct(ranks[0]['mfu_estimated_percent'])}.",
         f"- collectives: {ranks[0]['cc_op_count']} ops, cc_op_time {ms(ranks[0]['cc_op_time'])} on rank 0 "
         f"({pct(ranks[0]['cc_op_active_time_percent'])} active) vs {ms(s['cc_op_time'])} on the straggler; "
         "in data-parallel training every rank waits for the slowest, so fix rank 2's DMA (placement, "
         "HBM contention) first.",
         "- weight reload ratio 3.00 on every rank is inherent to a training step (weights are read in the "
         "forward pass and twice in the backward pass; 288 MiB cannot stay in a 24 MiB SBUF), not the finding here."]))

    # 7. summary-text, humanised and raw
    d = build(matmul_text())
    write("matmul_text/summary.txt", summary_text(d))
    write("matmul_text/summary_raw.txt", summary_raw(d))
    write("matmul_text/README.md", readme(
        "matmul_text: a bf16 matmul as summary-text (humanised and raw)",
        ["A bf16 projection x[160, 8192] @ W[8192, 28672] on inf2 (NeuronCore-v2: trn1 constants).",
         "`summary.txt` is the humanised layout of `neuron-profile view --output-format summary-text`: a header "
         f"line, then `group  metric  value` with units (`{human('total_time', d['total_time'])}`, "
         f"`{human('weight_size_bytes', d['weight_size_bytes'])}`, `{human('model_flops', d['model_flops'])}`, "
         f"`{human('tensor_engine_active_time_percent', d['tensor_engine_active_time_percent'])}`; "
         "sizes in binary units, FLOP counts labelled GFLOPS as the profiler does, percents x100).",
         "`summary_raw.txt` is the same profile in the older raw layout: `name  value`, no header, machine "
         "units (seconds, bytes, *_percent as fractions)."],
        "summary-text, humanised (`summary.txt`) and raw (`summary_raw.txt`).", d,
        [f"- moderately memory-bound: AI {d['mm_arithmetic_intensity']:.1f} FLOP/B < ridge 223.78 "
         f"(max achievable MFU {pct(d['mfu_max_achievable_estimated_percent'])}); Tensor Engine "
         f"{pct(d['tensor_engine_active_time_percent'])} active (< 70 %), DMA {pct(d['dma_active_time_percent'])}.",
         f"- summary.txt cross-check: mm_arithmetic_intensity recomputed from the displayed hardware_flops, "
         f"transpose_flops, hbm_read_bytes and hbm_write_bytes gives {shown_ai(d):.2f} (displayed "
         f"{human('mm_arithmetic_intensity', d['mm_arithmetic_intensity'])}).",
         "- healthy DMA sizes, no reload, no spills: the weight stream itself is the limit; more tokens per "
         "weight pass (larger batch) is what raises the intensity."]))

    print("wrote samples under", HERE)


if __name__ == "__main__":
    main()
