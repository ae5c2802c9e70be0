"""Time to produce each report format for every bundled sample, as a user runs it (a fresh
`advisor` process per report, so imports count). Prints a Markdown table for docs/performance.md.

    python benchmarks/report_speed.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def advisor() -> list[str]:
    script = Path(sys.executable).parent / "advisor"
    return [str(script)] if script.exists() else [shutil.which("advisor") or "advisor"]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the median is printed")
    args = parser.parse_args()
    samples = sorted(p for p in (ROOT / "samples").glob("*/summary*.*") if p.suffix in (".json", ".txt"))
    print("| sample | --help | .md (with charts) | .json | .html | .pdf |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        help_time = statistics.median(timed([*advisor(), "--help"]) for _ in range(args.repeat))
        for sample in samples:
            cells = []
            for ext in ("md", "json", "html", "pdf"):
                out = Path(tmp) / f"r.{ext}"
                runs = [timed([*advisor(), "report", str(sample), "-o", str(out)]) for _ in range(args.repeat)]
                cells.append(f"{statistics.median(runs):.2f} s")
            name = sample.relative_to(ROOT / "samples")
            print(f"| {name} | {help_time:.2f} s | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
