"""A fleet of full event traces on a local dask cluster against the serial run (issue 26, item 3).

    python benchmarks/fleet_traces.py [--count 400] [--workers 2] [--repeat 1] [--folder DIR] [--keep]
                                      [--no-standing]

The summary fleet (benchmarks/fleet.py) is 2,000 profiles of ≈ 4 ms each: the run's serial part (start-up,
discovery, hashing, the cluster's start) is too large a share of it for two workers to reach 1.7× on two
cores (docs/scaling.md). This fleet is what a team's nightly full-trace captures look like (2.7 GB and about
45 s of analysis serially at the default 400): `--count` traces, half Neuron legacy full JSON (`neuron-profile
view --output-format json`, benchmarks/make_legacy_json.py, 8–16 MiB) and half RBLN Perfetto traces
(samples/make_rbln_samples.py `write_large_trace`, 0.7–1.4 MB), each 70–190 ms of analysis, every one
different (its own seed and size). It runs each of these as a fresh
`advisor` process (fleet.py's runner: wall, CPU, the client's and the workers' peak RSS):

(0) `advisor report TRACE -o x.json` for the smallest and the largest trace of each kind: what one costs
    with the process's start-up; and the analysis alone (`load_analysis`, as a fleet task runs it, warm)
(a) `advisor fleet DIR --store S1 --workers 1 --quiet`          serial, in the client process
(b) `advisor fleet DIR --store S2 --workers N --quiet`          a LocalCluster of N workers started by the run
(b') `advisor fleet DIR --store S3 --scheduler ADDRESS --quiet` the same N workers already up (skip: --no-standing)

(a) and (b) take turns, `--repeat` rounds of both: the machine's speed drifts by ±15 % over minutes, and runs in
a row would take that for a difference. Target: (b) at least 1.7× faster than (a). Wall times are only meaningful
on an otherwise idle machine: each run prints how many cores other processes kept busy meanwhile.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))

from fleet import (  # siblings
    Run,
    advisor,
    on_standing_cluster,
    print_machine,
    print_runs,
    print_speedups,
    serial_and_cluster,
    timed,
    work_folder,
)

NIGHTS = ("2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19", "2026-11-20")
NEURON_MIB = (8.0, 16.0)  # legacy JSON sizes: ≈ 70–105 ms of analysis each
RBLN_BYTES = (700_000, 1_400_000)  # RBLN trace sizes: ≈ 105–185 ms each
KERNELS = ("qkv_proj", "o_proj", "mlp_up", "mlp_down", "attn_scores", "lm_head", "rmsnorm", "rope",
           "expert_up", "expert_down", "router_topk", "moe_gate", "conv_in", "attn_proj", "cross_attn",
           "resnet_block", "embedding", "layernorm", "ffn_in", "ffn_out")


def _size(low: float, high: float, k: int, n: int) -> float:
    return low + (high - low) * (k / max(1, n - 1))


def write_traces(folder: Path, count: int, seed: int = 0) -> list[Path]:
    """`count` traces under `folder/<night>/<kind>/<kernel>/`: one trace a folder, named after its kernel
    (a folder of files whose names differ only by a number would be one per-rank profile set)."""
    from make_legacy_json import generate
    from make_rbln_samples import write_large_trace

    paths = []
    neuron = count - count // 2
    for k in range(count):
        night, kernel = NIGHTS[k % len(NIGHTS)], KERNELS[(k // len(NIGHTS)) % len(KERNELS)]
        copy = k // (len(NIGHTS) * len(KERNELS))  # more traces than nights × kernels: a second rank
        if k < neuron:
            path = folder / night / "neuron" / f"nc{copy}" / f"{kernel}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            generate(path, _size(*NEURON_MIB, k, neuron), seed * 10_000 + k)
        else:
            j = k - neuron
            path = folder / night / f"rbln{copy}" / kernel / "trace.pb"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_large_trace(path, int(_size(*RBLN_BYTES, j, count - neuron)), seed * 10_000 + k)
        paths.append(path)
    return paths


def traces_in(folder: Path, count: int) -> list[Path]:
    """The traces under `folder`, written there first when it is empty or absent."""
    if not (folder.is_dir() and any(folder.iterdir())):
        started = time.perf_counter()
        write_traces(folder, count)
        print(f"wrote {count} traces under {folder} in {time.perf_counter() - started:.1f} s", flush=True)
    return sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".pb"))


ANALYSIS_ALONE = """
import sys, time
from pathlib import Path
from advisor.api import AnalyzeOptions, load_analysis
options = AnalyzeOptions()
for name in sys.argv[1:]:
    load_analysis(Path(name), options, jobs=1)  # imports and rule packs, once per process as on a worker
    runs = []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        load_analysis(Path(name), options, jobs=1)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    wall, cpu = sorted(runs)[1]
    print(f"    {name}: {1000 * wall:.0f} ms wall, {1000 * cpu:.0f} ms CPU (median of 3)", flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400, help="traces to generate (default 400, half each kind)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers of the cluster runs (default 2)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each: median wall, largest RSS; (a) and (b) take turns")
    parser.add_argument("--folder", type=Path, help="the traces to use (written there when it is empty or absent)")
    parser.add_argument("--no-standing", action="store_true", help="skip (b'), the cluster already up")
    parser.add_argument("--keep", action="store_true", help="keep the generated traces and the stores")
    args = parser.parse_args()

    print_machine()
    with work_folder("advisor-fleet-traces-", args.keep, args.folder) as work:
        folder = args.folder or work / "traces"
        traces = traces_in(folder, args.count)
        size = sum(p.stat().st_size for p in traces)
        print(f"{len(traces)} traces, {size / 1e6:.0f} MB: {sum(p.suffix == '.json' for p in traces)} Neuron legacy "
              f"JSON, {sum(p.suffix == '.pb' for p in traces)} RBLN Perfetto", flush=True)

        singles: dict[str, Run] = {}
        ends = []
        for suffix in (".json", ".pb"):
            kind = sorted((p for p in traces if p.suffix == suffix), key=lambda p: p.stat().st_size)
            for path in (kind[0], kind[-1]) if kind else ():
                ends.append(path)
                command = [*advisor(), "report", str(path), "-o", str(work / "single.json")]
                singles[f"{path.stat().st_size / 1e6:.1f} MB {suffix}"] = timed("(0) one trace", command, args.repeat)
        print(f"(0) the analysis alone: {sys.executable} -c ANALYSIS_ALONE TRACE…", flush=True)
        subprocess.run([sys.executable, "-c", ANALYSIS_ALONE, *map(str, ends)], check=True)

        serial, cluster, rounds = serial_and_cluster(folder, work, args.workers, args.repeat)
        warm = None if args.no_standing else on_standing_cluster(folder, work, args.workers, args.repeat)

        print()
        rows = [(f"(0) `advisor report` of one {name} trace", r) for name, r in singles.items()]
        rows += [(f"(a) serial, {len(traces)} traces", serial), (f"(b) {args.workers} workers, {len(traces)} traces",
                                                                  cluster)]
        if warm is not None:
            rows.append((f"(b') {args.workers} workers already up, {len(traces)} traces", warm))
        print_runs(rows)
        print()
        print(f"per trace, serially: {1000 * serial.wall / len(traces):.0f} ms wall, "
              f"{1000 * serial.cpu / len(traces):.0f} ms CPU (start-up, discovery and hashing included)")
        print_speedups(serial, cluster, rounds, warm)
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
