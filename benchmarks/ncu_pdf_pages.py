"""Pages of an Nsight Compute PDF report, and how many of them the data notes and the raw appendix take.

    python benchmarks/ncu_pdf_pages.py [--baseline TREE]

Inputs: the real T4 `.ncu-rep` (one launch, 1,131 metrics; tests/fixtures/ncu-examples), a five-launch report made
from it, and the three ncu samples. The five-launch report stands in for the held-out H800 report
(../shared/reference/nsight-compute-rules.md §2.1: four launches with data and a failed `flash_fwd_kernel`, NaN
values and 35 ERR/WRN rule results): the T4 launch four times (durations × 1, 0.8, 0.6, 0.4) and a failed launch
with NaN values and 35 could-not-evaluate results, served by wrapping `ncu_report.load_report` (the library cannot
write a report). `--five-timed` gives the failed launch a duration (× 3), so it is the launch analysed and its 35
results fill the verdicts table. Needs `ncu-report` (`pip install 'advisor[ncu]'`) and poppler's `pdfinfo` and
`pdftotext`. `--baseline TREE` renders the same inputs from another source tree (say `git archive HEAD | tar -x -C
TREE`) beside this one. Page counts do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
T4 = ROOT / "tests" / "fixtures" / "ncu-examples" / "ncu_rep_T4_matrix_add2d_uncoalesced.ncu-rep"
INPUTS = {"T4 .ncu-rep (1 launch)": [str(T4)], "five-launch .ncu-rep": ["--five", str(T4)],
          "five-launch, failed one timed": ["--five-timed", str(T4)],
          "ncu_multi_kernel details CSV": [str(ROOT / "samples" / "ncu_multi_kernel" / "details.csv")],
          "ncu_seed004 details CSV": [str(ROOT / "samples" / "ncu_seed004" / "details.csv")]}
_RULES = [("SpeedOfLight", "SOLBottleneck"), ("SpeedOfLight", "SOLFPRoofline"),
          ("ComputeWorkloadAnalysis", "HighPipeUtilization"), ("MemoryWorkloadAnalysis", "MemoryCacheAccessPattern"),
          ("MemoryWorkloadAnalysis", "MemoryL2Compression"), ("LaunchStats", "LaunchConfiguration"),
          ("Occupancy", "TheoreticalOccupancy"), ("Occupancy", "AchievedOccupancy"),
          ("SchedulerStats", "IssueSlotUtilization"), ("WarpStateStats", "CPIStall"),
          ("SourceCounters", "UncoalescedGlobalAccess"), ("SourceCounters", "ThreadDivergence"),
          ("InstructionStats", "FPInstructions"), ("SourceCounters", "UncoalescedSharedAccess")]


class _Metric:
    def __init__(self, metric: Any, scale: float = 1.0, nan: bool = False):
        self.metric, self.scale, self.nan = metric, scale, nan

    def unit(self) -> str:
        return self.metric.unit()

    def value(self) -> Any:
        value = self.metric.value()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (self.nan or self.scale != 1.0):
            return math.nan if self.nan else value * self.scale  # an unscaled integer stays one ("7", not "7.0")
        return value


class _Launch:
    """The real launch, its duration scaled."""

    def __init__(self, action: Any, scale: float):
        self.action, self.scale = action, scale

    def name(self, *args: Any) -> str:
        return self.action.name(*args)

    def metric_names(self) -> list[str]:
        return list(self.action.metric_names())

    def metric_by_name(self, name: str) -> _Metric:
        return _Metric(self.action.metric_by_name(name), self.scale if name.startswith("gpu__time_duration") else 1.0)

    def rule_results_as_dicts(self) -> list[dict[str, Any]]:
        return list(self.action.rule_results_as_dicts())


class _Failed(_Launch):
    """A launch ncu could not measure: NaN values, no launch metrics, 35 ERR/WRN results."""

    def __init__(self, action: Any, timed: bool):
        super().__init__(action, 3.0)
        self.timed = timed

    def name(self, *args: Any) -> str:
        return "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits>(Flash_fwd_params)"

    def metric_names(self) -> list[str]:
        return [n for n in self.action.metric_names() if not n.startswith("launch__")]

    def metric_by_name(self, name: str) -> _Metric:
        timed = self.timed and name.startswith("gpu__time_duration")
        return _Metric(self.action.metric_by_name(name), self.scale if timed else 1.0, nan=not timed)

    def rule_results_as_dicts(self) -> list[dict[str, Any]]:
        results = []
        for i in range(35):
            section, rule = _RULES[i % len(_RULES)]
            text = (f"Rule {rule} returned an error: metric is NaN" if i % 3 else
                    "Required metric sm__throughput.avg.pct_of_peak_sustained_elapsed could not be found")
            results.append({"rule_identifier": rule, "section_identifier": section, "name": rule,
                            "rule_message": {"title": "", "message": text, "type": 3 if i in (5, 20) else 4}})
        return results


class _Range:
    def __init__(self, actions: list[Any]):
        self.actions = actions

    def num_actions(self) -> int:
        return len(self.actions)

    def action_by_idx(self, i: int) -> Any:
        return self.actions[i]


class _Context:
    def __init__(self, actions: list[Any]):
        self.range = _Range(actions)

    def num_ranges(self) -> int:
        return 1

    def range_by_idx(self, i: int) -> _Range:
        return self.range


def _render(argv: list[str]) -> int:
    """In this process (the tree on PYTHONPATH): `[--five|--five-timed] INPUT OUTPUT`."""
    import ncu_report

    mode = argv.pop(0) if argv[0].startswith("--five") else ""
    if mode:
        load = ncu_report.load_report

        def five(path: str) -> _Context:
            real = load(path).range_by_idx(0).action_by_idx(0)
            return _Context([*(_Launch(real, s) for s in (1.0, 0.8, 0.6, 0.4)), _Failed(real, mode == "--five-timed")])

        ncu_report.load_report = five
    from advisor.cli import main

    return main(["report", argv[0], "-o", argv[1]])


def _text(pdf: Path, page: int) -> str:
    return subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout


def pages(pdf: Path) -> tuple[int, int | None, int | None]:
    """(pages, the page the data notes start on, the page the raw appendix starts on)."""
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    total = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    starts: dict[str, int] = {}
    for page in range(1, total + 1):
        lines = _text(pdf, page).splitlines()
        for heading in ("Data notes", "Raw profile data"):
            if heading in lines:
                starts.setdefault(heading, page)
    return total, starts.get("Data notes"), starts.get("Raw profile data")


def main() -> int:
    if sys.argv[1:2] == ["--render"]:
        return _render(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another source tree to render the same inputs from")
    args = parser.parse_args()
    trees = {"this tree": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    print("| input | tree | pages | data notes from page | raw appendix from page |")
    print("|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, argv in INPUTS.items():
            for tree_name, tree in trees.items():
                out = Path(tmp) / f"{len(os.listdir(tmp))}.pdf"
                env = {**os.environ, "PYTHONPATH": str(tree), "SOURCE_DATE_EPOCH": "0"}
                subprocess.run([sys.executable, __file__, "--render", *argv, str(out)], check=True, env=env,
                               cwd=tmp, capture_output=True)
                total, notes, raw = pages(out)
                print(f"| {label} | {tree_name} | {total} | {notes or '—'} | {raw or '—'} |")
    baseline = f" --baseline {args.baseline}" if args.baseline else ""
    print(f"\ncommand: python benchmarks/ncu_pdf_pages.py{baseline}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
