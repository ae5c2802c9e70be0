"""PDF report latency as a multiple of the floor: a fresh Python that imports what every chart-drawing
report needs (`import matplotlib.figure, jinja2, numpy`). The floor, the Markdown report and the PDF
report run as subprocesses in turn, round after round, so machine noise falls on all three alike;
the medians and their ratios to the floor are printed (ratios travel between machines, seconds do not).

    python benchmarks/pdf_latency.py [--rounds 7] [--sample samples/mp2_energy] [--baseline TREE]

`--baseline TREE` also times the PDF from another source tree (say `git archive HEAD | tar -x -C TREE`)
in the same rounds, so a change is measured against what it replaces under the same load.
`pdf --jobs 1` is the PDF without the second process that draws the charts (a one-core machine).
Target (issue 15): PDF ≤ 3× the floor.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR = [sys.executable, "-c", "import matplotlib.figure, jinja2, numpy"]


def advisor() -> list[str]:
    """`python -m advisor`: the same entry for this tree and a baseline tree on PYTHONPATH (whose console
    script may differ)."""
    return [sys.executable, "-m", "advisor"]


def timed(command: list[str], env: dict[str, str], cwd: str) -> float:
    """Run from `cwd`, not this tree: `python -m` puts the working directory first on the path."""
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved runs of each command; medians printed")
    parser.add_argument("--sample", type=Path, default=ROOT / "samples" / "mp2_energy",
                        help="a folder with summary.json and investigation.yaml")
    parser.add_argument("--baseline", type=Path, help="a source tree of advisor to time the PDF from as well")
    args = parser.parse_args()
    # bytecode is cached as on a user's machine: with PYTHONDONTWRITEBYTECODE set (some shells and CI images set
    # it), every run compiles advisor's ~90 modules again, 0.09 s of the PDF that the floor's imports never pay
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"SOURCE_DATE_EPOCH": "0"}
    envs = {"baseline pdf": {**env, "PYTHONPATH": str(args.baseline.resolve())}} if args.baseline else {}
    with tempfile.TemporaryDirectory() as tmp:
        sample = args.sample.resolve()
        report = [*advisor(), "report", str(sample / "summary.json"), "--context", str(sample / "investigation.yaml"),
                  "-o"]
        commands = {"floor": FLOOR, "md": [*report, str(Path(tmp) / "findings.md")],
                    "pdf": [*report, str(Path(tmp) / "findings.pdf")],
                    "pdf --jobs 1": [*report, str(Path(tmp) / "serial.pdf"), "--jobs", "1"]}  # one core's figure
        if args.baseline:
            commands["baseline pdf"] = [*report, str(Path(tmp) / "baseline.pdf")]
        for name, command in commands.items():  # warm the page cache and any bytecode once, untimed
            timed(command, envs.get(name, env), tmp)
        runs: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                runs[name].append(timed(command, envs.get(name, env), tmp))
    floor = statistics.median(runs["floor"])
    print(f"{args.rounds} rounds, median wall time, ratio to the floor "
          f"(`{' '.join(Path(FLOOR[0]).name if i == 0 else p for i, p in enumerate(FLOOR))}`):")
    for name, times in runs.items():
        median = statistics.median(times)
        print(f"  {name:13} {median:6.2f} s  {median / floor:5.2f}×  (min {min(times):.2f} s, max {max(times):.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
