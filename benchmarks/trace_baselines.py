"""Baselines for reading a Neuron legacy full JSON: what a user's hand-written pandas script costs, and the
fastest raw decode (the floor). Each pipeline runs in a fresh process; wall time and peak RSS are measured
from outside, so interpreter start-up and imports count, as they do for a user.

    python benchmarks/trace_baselines.py FILE.json [--expect STATS.json] [--repeat N]

`--expect` takes the `--stats` file of make_legacy_json.py and checks the hand pipeline's numbers against
it. Other scripts can `from trace_baselines import measure` to time, e.g., `advisor report FILE -o x.json`
the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIB = 1024 * 1024


def run_measured(cmd: list[str]) -> tuple[float, int, int, str]:
    """Run `cmd` as a child; return (wall seconds, peak RSS bytes, exit code, stdout).

    Peak RSS comes from `wait4` on this very child (its own `ru_maxrss`, including any descendants it
    waited for), so repeated calls in one process do not see each other's peaks, unlike
    `getrusage(RUSAGE_CHILDREN)`."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return wall, usage.ru_maxrss * 1024, proc.returncode, text  # ru_maxrss is in KiB on Linux


def measure(cmd: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of running `cmd` in a fresh process; raises if it fails."""
    wall, rss, code, _ = run_measured(cmd)
    if code != 0:
        raise subprocess.CalledProcessError(code, cmd)
    return wall, rss


# --- the pipelines, run in the child process --------------------------------------------------------------


def hand_pipeline(path: str) -> dict:
    """What a user would write: json.load, two DataFrames, busy time per engine row, DMA size statistics."""
    import numpy as np
    import pandas as pd

    t0 = time.perf_counter()
    with open(path) as f:
        data = json.load(f)
    t1 = time.perf_counter()
    instr = pd.DataFrame(data["instruction"])
    dma = pd.DataFrame(data["dma"])
    t2 = time.perf_counter()
    busy = {}
    for label, rows in instr[["label", "timestamp", "duration"]].groupby("label", sort=True):
        rows = rows.sort_values("timestamp", kind="stable")
        start = rows["timestamp"].to_numpy(dtype=np.int64)
        end = start + rows["duration"].to_numpy(dtype=np.int64)
        reach = np.maximum.accumulate(end)  # merge: the part of each interval past everything before it
        before = np.concatenate(([start[0]], reach[:-1]))
        busy[label] = int(np.maximum(end - np.maximum(start, before), 0).sum())
    size = dma["transfer_size"].to_numpy(dtype=np.int64)
    result = {
        "busy_ns_by_label": busy,
        "dma_total_bytes": int(size.sum()),
        "dma_count": len(size),
        "dma_mean_bytes": float(size.mean()),
        "dma_share_under_4k": float((size < 4096).mean()),
        "dma_share_under_32k": float((size < 32768).mean()),
        "instruction_count": len(instr),
        "phases_s": {"json.load": t1 - t0, "DataFrame": t2 - t1, "compute": time.perf_counter() - t2},
    }
    summary = data.get("summary") or [{}]
    result["summary_dma_transfer_count"] = summary[0].get("dma_transfer_count")
    result["summary_dma_transfer_total_bytes"] = summary[0].get("dma_transfer_total_bytes")
    return result


def floor_msgspec(path: str) -> dict:
    import gc

    import msgspec

    gc.disable()
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        data = msgspec.json.decode(f.read())
    return {"decode_s": time.perf_counter() - t0, "members": len(data)}


def floor_orjson(path: str) -> dict:
    import gc

    import orjson

    gc.disable()
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        data = orjson.loads(f.read())
    return {"decode_s": time.perf_counter() - t0, "members": len(data)}


CHILDREN = {"hand": hand_pipeline, "msgspec": floor_msgspec, "orjson": floor_orjson}


def child_cmd(name: str, path: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", name, path]


def have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def check(got: dict, expect: dict) -> list[str]:
    """Differences between the hand pipeline's numbers and the generator's statistics."""
    problems = []
    if got["busy_ns_by_label"] != expect["busy_ns_by_label"]:
        problems.append(f"busy time: got {got['busy_ns_by_label']}, expected {expect['busy_ns_by_label']}")
    for key, theirs in (("dma_total_bytes", "dma_total_bytes"), ("dma_count", "dma_count"),
                        ("instruction_count", "instruction_count")):
        if got[key] != expect[theirs]:
            problems.append(f"{key}: got {got[key]}, expected {expect[theirs]}")
    for key in ("dma_mean_bytes", "dma_share_under_4k", "dma_share_under_32k"):
        if abs(got[key] - expect[key]) > 1e-9 * max(1.0, abs(expect[key])):
            problems.append(f"{key}: got {got[key]}, expected {expect[key]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="legacy full JSON (neuron-profile view --output-format json)")
    parser.add_argument("--expect", type=Path, help="statistics from make_legacy_json.py --stats, to check against")
    parser.add_argument("--repeat", type=int, default=1, help="runs per pipeline: median wall, max peak RSS")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args.file)))
        return 0

    file_mib = os.path.getsize(args.file) / MIB
    rows = []  # (key, table name, wall, rss, in-process phases)

    def run(key: str) -> tuple[float, int, dict] | None:
        """Median wall, largest peak RSS and the last child's output over --repeat runs."""
        walls, peaks, result = [], [], None
        for _ in range(args.repeat):
            wall, rss, code, out = run_measured(child_cmd(key, args.file))
            if code != 0:
                print(f"{key} failed (exit {code})", file=sys.stderr)
                return None
            walls.append(wall)
            peaks.append(rss)
            result = json.loads(out)
        return statistics.median(walls), max(peaks), result

    got = run("hand")
    if got is None:
        return 1
    hand = got[2]
    rows.append(("hand", "hand pipeline (json.load + pandas)", got[0], got[1], hand["phases_s"]))
    floors = []
    for key in ("msgspec", "orjson"):
        if have(key) and (got := run(key)) is not None:
            call = "msgspec.json.decode" if key == "msgspec" else "orjson.loads"
            floors.append((key, f"{call}, untyped, gc off", got[0], got[1], {"decode": got[2]["decode_s"]}))
    best = min(floors, key=lambda r: r[2])[0] if floors else None
    rows += [(k, ("floor: " if k == best else "") + name, *rest) for k, name, *rest in floors]

    print("| pipeline | wall s | peak RSS MiB | file MiB |")
    print("|---|---:|---:|---:|")
    for _, name, wall, rss, _ in rows:
        print(f"| {name} | {wall:.2f} | {rss / MIB:.0f} | {file_mib:.1f} |")
    print()
    print("In-process phases (s): " + "; ".join(
        f"{key}: " + ", ".join(f"{k} {v:.2f}" for k, v in phases.items()) for key, _, _, _, phases in rows))
    print()
    print("Hand pipeline results (cross-check values for an advisor implementation):")
    print()
    print("| engine row (label) | busy ns (union of [timestamp, timestamp+duration)) |")
    print("|---|---:|")
    for label, ns in hand["busy_ns_by_label"].items():
        print(f"| {label} | {ns} |")
    print()
    print(f"- instructions: {hand['instruction_count']}")
    print(f"- DMA transfers: {hand['dma_count']} (summary says {hand['summary_dma_transfer_count']})")
    print(f"- DMA bytes: {hand['dma_total_bytes']} (summary says {hand['summary_dma_transfer_total_bytes']})")
    print(f"- mean transfer: {hand['dma_mean_bytes']:.1f} B")
    print(f"- transfers < 4 KiB: {hand['dma_share_under_4k']:.4f}; < 32 KiB: {hand['dma_share_under_32k']:.4f}")
    if args.expect:
        problems = check(hand, json.loads(args.expect.read_text()))
        print()
        print("Check against " + str(args.expect) + ": " + ("OK" if not problems else "MISMATCH"))
        for p in problems:
            print(f"  - {p}")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
