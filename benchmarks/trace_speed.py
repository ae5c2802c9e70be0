"""advisor on a full trace against the pipeline a user would write and the raw-decode floor, in one
run on the same file: wall time and peak RSS of fresh processes (median wall, max RSS of --repeat).

    python benchmarks/make_legacy_json.py /tmp/legacy200.json --size-mb 200
    python benchmarks/trace_speed.py /tmp/legacy200.json [--repeat 3]

Targets (issue #7) on a 200 MB file: advisor at least 3× faster than the hand pipeline, within 1.5×
of the floor, peak RSS at most 1.5× the file size.

`--paths` instead times advisor's two ways of reading a trace on the same file, run after run alternately:
decoded whole in memory (`--max-memory` four times the file) and streamed (`--max-memory BUDGET`, default the
file size: the file is over half of it), and prints each one's seconds per GB and the streamed-to-in-memory
ratio (issue 26: at most 2×). `--baseline TREE` times another source tree (say `git archive HEAD | tar -x -C
TREE`) in the same rounds.

    python benchmarks/trace_speed.py /tmp/legacy1200.json --paths --budget 1GiB [--repeat 2] [--baseline TREE]
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


def advisor_module_cmd(path: str, out: str, budget: int, tree: Path | None) -> list[str]:
    """`python -m advisor report` with an explicit budget, from this tree or another one on PYTHONPATH."""
    env = ["env", f"PYTHONPATH={tree.resolve()}"] if tree else []
    return [*env, sys.executable, "-m", "advisor", "report", path, "-o", out, "--max-memory", f"{budget}B", "--quiet"]


def paths(args: argparse.Namespace, size: int) -> int:
    """In memory against streamed, alternately, for this tree (and a baseline tree)."""
    from advisor.core.numbers import parse_size

    budget = parse_size(args.budget) if args.budget else size
    whole = max(4 * size, 1 << 30)
    trees = {"": None} | ({"baseline ": args.baseline} if args.baseline else {})
    runs: dict[str, list[tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for label, tree in trees.items():
                for mode, limit in (("in memory", whole), ("streamed", budget)):
                    cmd = advisor_module_cmd(args.file, f"{tmp}/a.json", limit, tree)
                    runs.setdefault(f"{label}{mode}", []).append(measure(cmd))
    print(f"File: {args.file}, {size / MIB:,.0f} MiB; streamed under --max-memory {budget / MIB:,.0f} MiB, "
          f"in memory under {whole / MIB:,.0f} MiB; {args.repeat} alternated runs each (median wall, max RSS)\n")
    print("| tree | path | wall s | s per GB | peak RSS MiB | RSS ÷ file size | runs (s) |")
    print("|---|---|---:|---:|---:|---:|---|")
    medians = {}
    for name, got in runs.items():
        wall = medians[name] = statistics.median(w for w, _ in got)
        rss = max(r for _, r in got)
        tree, mode = ("baseline", name[9:]) if name.startswith("baseline ") else ("this", name)
        print(f"| {tree} | {mode} | {wall:.2f} | {wall / (size / 1e9):.2f} | {rss / MIB:,.0f} | {rss / size:.2f} | "
              f"{', '.join(f'{w:.2f}' for w, _ in got)} |")
    for label in trees:
        ratio = medians[f"{label}streamed"] / medians[f"{label}in memory"]
        print(f"\n{label.strip() or 'this tree'}: streamed ÷ in memory, per byte: {ratio:.2f}×")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--advisor-only", action="store_true",
                        help="measure advisor alone (for files the baselines cannot load, e.g. 2 GB)")
    parser.add_argument("--paths", action="store_true", help="advisor in memory against streamed (issue 26)")
    parser.add_argument("--budget", help="--max-memory for the streamed runs (default: the file size)")
    parser.add_argument("--baseline", type=Path, help="with --paths: another source tree timed in the same rounds")
    args = parser.parse_args()
    size = os.path.getsize(args.file)
    if args.paths:
        return paths(args, size)
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
