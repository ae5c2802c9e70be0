"""advisor on a full trace against the pipeline a user would write and the raw-decode floor, in one
run on the same file: wall time and peak RSS of fresh processes (median wall, max RSS of --repeat).

    python benchmarks/make_legacy_json.py /tmp/legacy200.json --size-mb 200
    python benchmarks/trace_speed.py /tmp/legacy200.json [--repeat 3]

Targets (issue #7) on a 200 MB file: advisor at least 3× faster than the hand pipeline, within 1.5×
of the floor, peak RSS at most 1.5× the file size.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trace_baselines import child_cmd, have, measure

MIB = 1 << 20


def advisor_cmd(path: str, out: str) -> list[str]:
    script = Path(sys.executable).parent / "advisor"
    return [str(script) if script.exists() else shutil.which("advisor") or "advisor", "report", path, "-o", out]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--advisor-only", action="store_true",
                        help="measure advisor alone (for files the baselines cannot load, e.g. 2 GB)")
    args = parser.parse_args()
    size = os.path.getsize(args.file)
    with tempfile.TemporaryDirectory() as tmp:
        pipelines = {"advisor report → analysis JSON": advisor_cmd(args.file, f"{tmp}/a.json"),
                     "hand pipeline (json.load + pandas)": child_cmd("hand", args.file),
                     "floor (msgspec, untyped)": child_cmd("msgspec", args.file)}
        if have("orjson"):
            pipelines["floor (orjson, untyped)"] = child_cmd("orjson", args.file)
        if args.advisor_only:
            pipelines = {k: v for k, v in pipelines.items() if k.startswith("advisor")}
        results = {}
        for name, cmd in pipelines.items():
            runs = [measure(cmd) for _ in range(args.repeat)]
            results[name] = (statistics.median(w for w, _ in runs), max(r for _, r in runs))
    print(f"File: {args.file}, {size / MIB:.0f} MiB\n")
    print("| pipeline | wall s | peak RSS MiB | RSS ÷ file size |")
    print("|---|---:|---:|---:|")
    for name, (wall, rss) in results.items():
        print(f"| {name} | {wall:.2f} | {rss / MIB:.0f} | {rss / size:.2f} |")
    if args.advisor_only:
        return 0
    ours = results["advisor report → analysis JSON"][0]
    hand = results["hand pipeline (json.load + pandas)"][0]
    floor = min(w for n, (w, _) in results.items() if n.startswith("floor"))
    print(f"\nadvisor vs hand pipeline: {hand / ours:.2f}× faster; "
          f"advisor vs floor: {ours / floor:.2f}× the floor's time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
