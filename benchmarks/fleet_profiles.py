"""Writes a team's nightly profile tree for the fleet benchmark (issue 14): `count` small, realistic
profiles of every kind, with kernel names repeating across five nights so trends per kernel exist.

    python benchmarks/fleet_profiles.py /tmp/fleet --count 2000 [--seed 0]

Layout (one profile per file, except the per-rank capture folders, which are one profile set each):

    <night>/<model>/nc<i>/<kernel>.json|.txt       Neuron summary-json (flat, `{"n_<hash>": …}`, legacy
                                                   `{"summary": [...]}`, log lines first) or summary-text
    <night>/<app>/gpu<i>/<kernel>.csv|.txt         Nsight Compute details CSV or default text output
    <night>/<model>/rbln0/<kernel>.pb              RBLN Perfetto trace, one per folder (a folder of traces
                                                   is one profile set)
    <night>/<model>/step/profile_rank_<r>.json     a per-rank Neuron capture folder (one profile set)

Every figure comes from the samples' own generators (samples/make_samples.py, make_ncu_samples.py,
make_rbln_samples.py), so each file is internally consistent; here only their primary inputs are varied
(weight reloads, DMA transfer size, spills, transposes, engine mix, collectives, throttling) and the run
is stretched per night and rank (regressions, fixes, stragglers), so different rules fire. Deterministic
for a given count and seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "samples"))

import make_ncu_samples as ncu  # noqa: E402  (the samples' generators, not a package)
import make_samples as nrn  # noqa: E402

NIGHTS = ("2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-20")
MP2_ENERGY = ROOT / "samples" / "mp2_energy" / "summary.json"  # the one real profile: Vector Engine bound
# fractions of total_time: they shrink when the same work takes longer
TIME_SHARES = ("total_active_time_percent", "dma_active_time_percent", "cc_op_active_time_percent",
               "mfu_estimated_percent", "hfu_estimated_percent", "mbu_estimated_percent",
               *(f"{e}_engine_active_time_percent" for e in nrn.ENGINES))


@dataclass(frozen=True)
class Kernel:
    """One kernel the team profiles every night, on up to `ranks` devices."""

    family: str  # neuron | neuron-text | ncu | ncu-text | rbln | ranks
    model: str
    name: str
    archetype: str
    ranks: int


def catalogue() -> list[Kernel]:
    """The team's kernels; names repeat every night. Archetypes are named after the rules they trip."""
    k = []
    neuron = {
        "llama3-8b": [("qkv_proj", "weight-reload"), ("o_proj", "fragmented"), ("mlp_up", "weight-reload"),
                      ("mlp_down", "fragmented"), ("rmsnorm", "vector"), ("rope", "scalar"),
                      ("attn_scores", "transpose"), ("lm_head", "tuned")],
        "mixtral-8x7b": [("expert_up", "weight-reload"), ("expert_down", "spill"), ("router_topk", "vector"),
                         ("attn_qkv", "fragmented"), ("moe_gate", "padding"), ("expert_silu", "scalar")],
        "bert-large": [("attn_qkv", "tuned"), ("ffn_in", "text"), ("ffn_out", "spill"),
                       ("layernorm", "vector"), ("embedding", "fragmented")],
        "sd-unet": [("conv_in", "padding"), ("attn_proj", "transpose"), ("groupnorm", "scalar"),
                    ("resnet_block", "tuned"), ("cross_attn", "text")],
        "gpt-neox-20b": [("fwd_bwd_step", "collective"), ("grad_allreduce", "collective"),
                         ("optimizer_step", "vector")],
    }
    for model, kernels in neuron.items():
        for name, archetype in kernels:
            family = "neuron-text" if archetype == "text" else "neuron"
            # bert and sd kernels are named per model so trends stay per model (`attn_qkv` is in two)
            k.append(Kernel(family, model, f"{model.split('-')[0]}_{name}" if model == "bert-large" else name,
                            archetype, 32))
    for name, archetype in (("layernorm", 0), ("tensor_gemm", 1), ("attention_softmax", 2), ("bias_residual", 4),
                            ("sgemm", 5), ("gelu", 6), ("gather_scale", 7), ("softmax_rows", 8),
                            ("cudnn_conv", 11)):
        family = "ncu-text" if name in ("gelu", "softmax_rows") else "ncu"
        k.append(Kernel(family, "orin-vision" if archetype == 11 else "a100-inference", name, str(archetype), 8))
    k.append(Kernel("rbln", "resnet50-rbln", "resnet50", "before", 1))
    k.append(Kernel("rbln", "llama-rbln", "decode", "kv_spill", 1))
    k.append(Kernel("ranks", "gpt-neox-20b", "step", "ranks", 1))
    return k


# --- per-night and per-rank variation ------------------------------------------------------------


@dataclass(frozen=True)
class Variation:
    night: int
    rank: int
    stretch: float  # the same work took this much longer (>= 1): regressions, stragglers, jitter
    fixed: bool  # the kernel's problem was fixed on or before this night
    throttled: bool  # a hot device


def variation(kernel: Kernel, night: int, rank: int, seed: int) -> Variation:
    """What happened to this kernel on this night and rank: a few kernels regress from some night on,
    a few get fixed, one rank in twelve straggles, and now and then a device throttles."""
    fate = random.Random(f"{seed}:fate:{kernel.model}:{kernel.name}")
    story = fate.choices(("steady", "regress", "fix"), (6, 2, 2))[0]
    turn = fate.randint(1, len(NIGHTS) - 1)
    rng = random.Random(f"{seed}:{kernel.model}:{kernel.name}:{night}:{rank}")
    stretch = 1 + abs(rng.gauss(0, 0.012))
    if story == "regress" and night >= turn:
        stretch *= 1.15 + 0.1 * fate.random()
    if rng.random() < 1 / 12:
        stretch *= 1.12 + 0.1 * rng.random()
    return Variation(night, rank, stretch, story == "fix" and night >= turn, rng.random() < 0.02)


def stretched(d: dict, f: float) -> dict:
    """The summary of the same work taking `f` times as long: every busy time stays, the shares of
    total_time and the FLOP/bandwidth utilisations fall by f (the profiler's formulas, samples/make_samples.py)."""
    d = dict(d)
    for key in ("total_time", "total_exec_time"):
        if key in d:
            d[key] = nrn.t(d[key] * f)
    if "neuroncore_cycle_count" in d:
        d["neuroncore_cycle_count"] = round(d["neuroncore_cycle_count"] * f)
    for key in TIME_SHARES:
        if isinstance(d.get(key), float):
            d[key] /= f
    return d


# --- Neuron -----------------------------------------------------------------------------------------


def neuron_inputs(kernel: Kernel, v: Variation, seed: int) -> dict | None:
    """make_samples' primary inputs for the kernel's archetype (None: the real mp2_energy profile)."""
    rng = random.Random(f"{seed}:shape:{kernel.model}:{kernel.name}")
    a = kernel.archetype
    if a == "weight-reload":
        return nrn.weight_reload(1 if v.fixed else rng.choice((12, 12, 6)))
    if a == "fragmented":
        p = nrn.matmul_fragmented_dma()
        # 1.5 KiB pieces (fragmented) … 48 KiB (healthy); a fix makes them large
        p["dma_avg_target"] = 49152.0 if v.fixed else rng.choice((1533.7, 2900.0, 6144.0, 49152.0))
        return p
    if a == "spill":
        return nrn.sbuf_spill()
    if a == "tuned":
        return nrn.compute_bound_tuned()
    if a == "collective":
        p = nrn.multi_core_rank(v.rank % 4)
        scale = 1.0 if v.fixed else rng.choice((1.0, 2.6, 3.4))  # unhidden all-reduce: collectives-heavy
        p["cc_op_time"] *= scale
        p["cc_op_active_time"] *= scale
        return p
    if a in ("text", "transpose", "padding", "scalar"):
        p = nrn.matmul_text()
        model = p["model_flops"]
        if a == "transpose" and not v.fixed:  # operands arrive in the wrong layout
            p["transpose_flops"] = round(model * rng.uniform(0.14, 0.3))
            p["hardware_flops"] = model + p["transpose_flops"]
        if a == "padding" and not v.fixed:  # shapes not multiples of 128: most Tensor Engine work is padding
            p["hardware_flops"] = round(model * rng.uniform(2.1, 2.8)) + p["transpose_flops"]
        if a == "scalar":  # activations on the Scalar Engine are the critical path
            p["engines"] = {**p["engines"], "scalar": (640, 0.78 if v.fixed else 0.88, 1.0),
                            "tensor": (3776, 0.31, 1.03)}
            p["total_active"] = 0.95
        return p
    return None


def neuron_summary(kernel: Kernel, v: Variation, seed: int) -> dict:
    p = neuron_inputs(kernel, v, seed)
    if p is None:
        d = json.loads(MP2_ENERGY.read_text(encoding="utf-8"))
        if v.fixed:  # element-wise work moved off the Vector Engine
            d["vector_engine_active_time_percent"] *= 0.55
    else:
        d = nrn.build(p)
    d = stretched(d, v.stretch)
    if v.throttled and d.get("hardware_flops"):
        d["active_throttled_flops_percent"] = 0.08 + 0.1 * random.Random(f"{seed}:hot:{v.night}:{v.rank}").random()
    d["nc_idx"], d["nd_idx"] = v.rank % 32, v.rank // 2  # where it ran: one NeuronCore per rank
    return d


def neuron_json(d: dict, tag: str, shape: int) -> str:
    """The shapes people save summary-json in: flat, keyed by profile id, legacy, or after log lines."""
    if shape == 0:
        return nrn.dump(d)
    if shape == 1:
        return nrn.dump({nrn.profile_id(tag): d})
    if shape == 2:
        return nrn.dump({"summary": [d], "instruction": []})
    logs = ("2026-11-20 02:14:03.123 INFO  Reading NTFF file profile.ntff\n"
            "2026-11-20 02:14:03.481 INFO  Reading NEFF file file.neff\n")
    return logs + nrn.dump({nrn.profile_id(tag): d})


# --- Nsight Compute ---------------------------------------------------------------------------------


def ncu_launch_inputs() -> list[dict]:
    """Every sample launch's primary inputs, as the samples' scenarios hand them to build()."""
    seen: list[dict] = []
    real = ncu.build
    ncu.build = lambda p: (seen.append(dict(p)), real(p))[1]  # record, then build as usual
    try:
        ncu.multi_kernel()
        ncu.before_after()
        ncu.seed004()
    finally:
        ncu.build = real
    return seen  # 0-6 multi_kernel; 7, 8 before (gather, softmax); 9, 10 after; 11 seed004


def ncu_launch(inputs: list[dict], kernel: Kernel, v: Variation) -> dict:
    index = int(kernel.archetype)
    if kernel.name == "gather_scale" and v.fixed:
        index = 9  # __launch_bounds__ and coalesced loads
    p = dict(inputs[index], id=v.rank, pid=2417 + 100 * v.night + v.rank)  # one process per GPU and night
    p.pop("expect", None)  # the seed's printed figures hold for its own duration only
    if "elapsed_cycles" in p:
        p["elapsed_cycles"] = round(p["elapsed_cycles"] * v.stretch)
        p["sm_active_cycles"] *= v.stretch
    else:
        p["duration_us"] = p["duration_us"] * v.stretch
    return ncu.build(p)


# --- RBLN --------------------------------------------------------------------------------------------


def rbln_trace(kernel: Kernel, v: Variation, seed: int) -> bytes:
    import make_rbln_samples as rbln  # needs the perfetto package: imported only when a trace is written

    scenario = "after" if kernel.archetype == "before" and v.fixed else kernel.archetype
    return rbln.build_scenario(scenario, seed=seed * 100 + v.night)


# --- the tree ------------------------------------------------------------------------------------------


def slots(count: int) -> Iterator[tuple[int, Kernel, int]]:
    """(night, kernel, rank) for `count` profiles: each night gets its share, filled rank by rank over
    the catalogue, so every kernel appears every night and more profiles mean more ranks."""
    kernels = catalogue()
    for night in range(len(NIGHTS)):
        share = count // len(NIGHTS) + (night < count % len(NIGHTS))
        made, rank = 0, 0
        while made < share:
            for kernel in kernels:
                if made < share and rank < kernel.ranks:
                    yield night, kernel, rank
                    made += 1
            rank += 1


def write_profile(folder: Path, night: int, kernel: Kernel, rank: int, seed: int,
                  launches: Callable[[], list[dict]]) -> Path:
    v = variation(kernel, night, rank, seed)
    base = folder / NIGHTS[night] / kernel.model
    shape = int(hashlib.sha1(f"{kernel.model}/{kernel.name}".encode()).hexdigest(), 16) % 4
    if kernel.family == "ranks":
        path = base / kernel.name
        path.mkdir(parents=True, exist_ok=True)
        for r in range(4):
            d = stretched(nrn.build(nrn.multi_core_rank(r)), variation(kernel, night, r, seed).stretch)
            (path / f"profile_rank_{r}.json").write_text(nrn.dump(d), encoding="utf-8")
        return path
    if kernel.family == "rbln":
        path = base / f"rbln{rank}" / f"{kernel.name}.pb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rbln_trace(kernel, v, seed))
        return path
    if kernel.family.startswith("ncu"):
        k = ncu_launch(launches(), kernel, v)
        text = kernel.family == "ncu-text"
        path = base / f"gpu{rank}" / f"{kernel.name}.{'txt' if text else 'csv'}"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = ncu.write_text([k], *ncu.prof_lines([k], "/usr/bin/python3.10")) if text else ncu.write_csv([k])
        path.write_text(body, encoding="utf-8")
        return path
    d = neuron_summary(kernel, v, seed)
    if kernel.family == "neuron-text":
        path = base / f"nc{rank}" / f"{kernel.name}.txt"
        body = nrn.summary_raw(d) if shape % 2 else nrn.summary_text(d)
    else:
        path = base / f"nc{rank}" / f"{kernel.name}.json"
        body = neuron_json(d, f"{NIGHTS[night]}/{kernel.model}/{kernel.name}/{rank}", shape)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


def write_profiles(folder: Path, count: int, seed: int = 0) -> list[Path]:
    """Writes `count` profiles under `folder`; returns them (files, and the per-rank folders as one each)."""
    cached: list[list[dict]] = []

    def launches() -> list[dict]:
        if not cached:
            cached.append(ncu_launch_inputs())
        return cached[0]

    return [write_profile(folder, night, kernel, rank, seed, launches) for night, kernel, rank in slots(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--count", type=int, default=2000, help="profiles to write (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = write_profiles(args.folder, args.count, args.seed)
    files = [f for p in paths for f in (sorted(p.iterdir()) if p.is_dir() else [p])]
    size = sum(f.stat().st_size for f in files)
    print(f"wrote {len(paths)} profiles ({len(files)} files, {size / 1e6:.1f} MB) under {args.folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
