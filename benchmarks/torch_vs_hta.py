"""advisor against Meta's HolisticTraceAnalysis (HTA) on PyTorch-profiler traces, in one run: for each trace,
advisor's whole `advisor report TRACE -o analysis.json` against HTA's `TraceAnalysis` load plus its temporal,
idle-time and kernel breakdowns, each a fresh process, with its wall time and peak RSS (from `wait4`).

    python3 -m venv /tmp/benchvenv && /tmp/benchvenv/bin/pip install -e '.[bench]'
    python benchmarks/torch_vs_hta.py --hta-python /tmp/benchvenv/bin/python [--repeat 3] [--size-mb 1024]

Traces: the two largest real ones (samples/torch_a100_ddp, samples/torch_mtia_inference) and generated traces of
--size-mb MiB shaped like the A100 DDP one (benchmarks/make_kineto_trace.py; written once under --big-dir, then
reused). A generated trace above half of advisor's default --max-memory, which advisor streams, is also measured
decoded in memory (--max-memory 4GiB). Goals (issue 25, item 6): advisor at least 3× faster than HTA and at most
half its peak RSS; on the generated 1 GB trace, advisor's peak RSS below 1.5× the file size. HTA is given
--hta-timeout seconds (20 minutes) per run; a run that times out or fails (say, out of memory) is reported as
such.

HTA is never a dependency of advisor: it runs in the interpreter named by --hta-python (or $ADVISOR_HTA_PYTHON,
or this one when it can import `hta`), which may be a separate venv. Both tools run as installed packages do:
bytecode cached (PYTHONPYCACHEPREFIX, a temporary folder, so nothing is written into the source tree) and one
untimed run of each first. The medians of --repeat runs are shown with the largest peak RSS. HTA runs with its
defaults (the JSON parser backend, the last profiler step dropped, ns rounded to µs); `--hta-backend` picks
another parser backend (say ijson_batch_and_compress, its leanest).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib.util
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from advisor.inputs.limits import DEFAULT_MAX_MEMORY, whole_trace_limit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REAL = [ROOT / "samples" / "torch_a100_ddp" / "a100_ddp_rank0_of2.json.gz",
        ROOT / "samples" / "torch_mtia_inference" / "mtia_inference_rank0.json.gz"]
MIB = 1 << 20
GOAL_SPEED, GOAL_RSS, GOAL_FILE = 3.0, 0.5, 1.5
GOAL_FILE_FROM = 512 * MIB  # the RSS ÷ file goal is for the 1 GB trace (small files: start-up dominates)
HTA_RUN = r"""
import json, logging, sys, time, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
started = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
imported = time.perf_counter()
if len(sys.argv) > 2:
    from hta.common.trace_parser import set_default_trace_parsing_backend
    from hta.configs.parser_config import ParserBackend
    set_default_trace_parsing_backend(ParserBackend(sys.argv[2]))
ta = TraceAnalysis(trace_dir=sys.argv[1])
loaded = time.perf_counter()
t = ta.get_temporal_breakdown(visualize=False).iloc[0]
ta.get_idle_time_breakdown(visualize=False)
ta.get_gpu_kernel_breakdown(visualize=False)
print(json.dumps({"import_s": imported - started, "load_s": loaded - imported,
                  "breakdowns_s": time.perf_counter() - loaded,
                  "idle": float(t["idle_time_pctg"]), "compute": float(t["compute_time_pctg"]),
                  "non_compute": float(t["non_compute_time_pctg"])}))
"""


@dataclass
class Run:
    wall_s: float
    rss: int  # bytes
    code: int  # exit code (-9 when killed at the time limit)
    timed_out: bool
    out: str
    err: str


def run(cmd: list[str], env: dict[str, str], timeout: float, limit: int = 0) -> Run:
    """`cmd` in a fresh process: wall time and its own peak RSS (`wait4`: this child and what it waited for),
    killed after `timeout` seconds; `limit` > 0 caps its address space (bytes)."""
    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, preexec_fn=cap if limit else None)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(wall, usage.ru_maxrss * 1024, proc.returncode, timed_out, out.read().decode(errors="replace"),
                   err.read().decode(errors="replace"))


def hta_python(chosen: str | None) -> str | None:
    if chosen:
        return chosen
    if os.environ.get("ADVISOR_HTA_PYTHON"):
        return os.environ["ADVISOR_HTA_PYTHON"]
    return sys.executable if importlib.util.find_spec("hta") is not None else None


def advisor_exe() -> str:
    script = Path(sys.executable).parent / "advisor"
    return str(script) if script.exists() else shutil.which("advisor") or "advisor"


def hta_folder(trace: Path, tmp: Path) -> Path:
    """HTA reads a folder of rank traces: one holding a link to this one."""
    folder = tmp / f"hta-{trace.name}"
    folder.mkdir(exist_ok=True)
    link = folder / (trace.name if trace.name.endswith((".json", ".json.gz")) else trace.name + ".json")
    if not link.exists():
        link.symlink_to(trace)
    return folder


def shares(analysis: Path) -> dict[str, float] | None:
    try:
        metrics = json.loads(analysis.read_text())["metrics"]
        return {k: 100 * metrics[f"{m}_fraction"]["value"] for k, m in
                (("idle", "device_idle"), ("compute", "compute"), ("non_compute", "non_compute"))}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def describe(runs: list[Run]) -> tuple[str, str, float | None, int | None]:
    """(wall text, RSS text, median wall, max RSS) — the failure in words when a run did not finish."""
    bad = next((r for r in runs if r.timed_out or r.code != 0), None)
    rss = max(r.rss for r in runs)
    if bad is not None:
        if bad.timed_out:
            why = f"did not finish in {bad.wall_s:.0f} s (time limit)"
        else:
            tail = (bad.err.strip().splitlines() or ["?"])[-1][:100]
            why = f"failed after {bad.wall_s:.1f} s (exit {bad.code}: {tail})"
        return why, f"{rss / MIB:,.0f} (when stopped)", None, None
    wall = statistics.median(r.wall_s for r in runs)
    return f"{wall:.2f}", f"{rss / MIB:,.0f}", wall, rss


def inflated_size(trace: Path) -> int:
    """The bytes advisor and HTA parse: a gzip file's inflated size."""
    if not trace.name.endswith(".gz"):
        return trace.stat().st_size
    with gzip.open(trace, "rb") as f:
        return sum(len(chunk) for chunk in iter(lambda: f.read(1 << 20), b""))


@dataclass
class Row:
    label: str
    trace: Path
    size: int  # parsed bytes (inflated for gzip)
    ours: tuple[str, str, float | None, int | None]
    theirs: tuple[str, str, float | None, int | None]
    hta_runs: list[Run]
    shares: dict[str, float] | None
    real: bool


def measure_trace(trace: Path, variants: dict[str, list[str]], theirs: list[str], env: dict[str, str],
                  args: argparse.Namespace, limit: int, tmp: Path, real: bool) -> list[Row]:
    size, repeat = inflated_size(trace), args.repeat if real else args.big_repeat
    on_disk = trace.stat().st_size
    print(f"\n## {trace.name}: {on_disk / MIB:,.1f} MiB" + (f" ({size / MIB:,.1f} MiB inflated)" if size != on_disk
                                                              else "") + "\n", flush=True)
    for label, cmd in variants.items():
        print(f"{label}: " + shlex.join(cmd).replace(str(tmp), "$TMP"))
    print("HTA: " + shlex.join([*theirs[:2], "HTA_RUN", *theirs[3:]]).replace(str(tmp), "$TMP")
          + "  (HTA_RUN: TraceAnalysis(trace_dir) and its get_temporal_breakdown, get_idle_time_breakdown, "
            "get_gpu_kernel_breakdown)", flush=True)
    runs: dict[str, list[Run]] = {label: [] for label in variants}
    found: dict[str, dict[str, float] | None] = {}
    hta_runs: list[Run] = []
    for _ in range(repeat):  # interleaved, so both tools see the same machine
        for label, cmd in variants.items():
            (tmp / "analysis.json").unlink(missing_ok=True)  # a failed run must not leave the last one's figures
            runs[label].append(run(cmd, env, 3600))
            found[label] = shares(tmp / "analysis.json")
        hta_runs.append(run(theirs, env, args.hta_timeout, limit))
    theirs_desc = describe(hta_runs)
    rows = [Row(label, trace, size, describe(runs[label]), theirs_desc, hta_runs, found[label], real)
            for label in variants]
    for row in rows:
        print(f"{row.label}: {row.ours[0]} s, peak RSS {row.ours[1]} MiB")
    print(f"HTA: {theirs_desc[0]} s, peak RSS {theirs_desc[1]} MiB", flush=True)
    return rows


def report(rows: list[Row]) -> None:
    print("\n| trace | MiB parsed | run | advisor s | HTA s | HTA ÷ advisor time (goal ≥ 3) | advisor peak RSS MiB "
          "| HTA peak RSS MiB | advisor ÷ HTA RSS (goal ≤ 0.5) | advisor RSS ÷ file |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    goals = []
    for row in rows:
        a, h, name = row.ours, row.theirs, row.trace.name
        speed = f"{h[2] / a[2]:.2f}×" if a[2] and h[2] else "–"
        stopped = max(r.rss for r in row.hta_runs)  # a lower bound of HTA's peak when it did not finish
        memory = f"{a[3] / h[3]:.2f}" if a[3] and h[3] else f"< {a[3] / stopped:.2f}" if a[3] else "–"
        per_file = f"{a[3] / row.size:.2f}" if a[3] else "–"
        print(f"| {name} | {row.size / MIB:,.1f} | {row.label} | {a[0]} | {h[0]} | {speed} | {a[1]} | {h[1]} "
              f"| {memory} | {per_file} |")
        if a[2] and h[2]:
            goals.append(f"{name}, {row.label}: {h[2] / a[2]:.2f}× faster than HTA "
                         f"({'met' if h[2] / a[2] >= GOAL_SPEED else 'NOT met'}), {a[3] / h[3]:.2f} of its peak RSS "
                         f"({'met' if a[3] / h[3] <= GOAL_RSS else 'NOT met'})")
        elif a[2]:
            goals.append(f"{name}, {row.label}: HTA {h[0]}, so no ratio (advisor took {a[0]} s)")
        if not row.real and a[3] and row.size >= GOAL_FILE_FROM:
            goals.append(f"{name}, {row.label}: peak RSS {a[3] / row.size:.2f}× the file "
                         f"({'met' if a[3] / row.size < GOAL_FILE else 'NOT met'}: goal below {GOAL_FILE}×)")
    print("\nGoals:\n" + "\n".join(f"- {g}" for g in goals))
    print("\nShares of the window in %, advisor (complete steps, the last kept, ns kept) / HTA (its defaults: last "
          "step dropped, µs), to check that both computed the breakdowns; HTA's own timing:")
    keys = ("idle", "compute", "non_compute")
    for row in rows:
        theirs = None
        for r in row.hta_runs:
            if r.code == 0 and r.out.strip():
                with contextlib.suppress(ValueError):
                    theirs = json.loads(r.out.strip().splitlines()[-1])
        cells = [f"{key} {row.shares[key]:.2f}" if row.shares else f"{key} –" for key in keys]
        if theirs:
            cells = [f"{cell} / {theirs[key]:.2f}" for cell, key in zip(cells, keys, strict=True)]
            cells.append(f"HTA: import {theirs['import_s']:.2f} s, load {theirs['load_s']:.2f} s, breakdowns "
                         f"{theirs['breakdowns_s']:.2f} s")
        print(f"- {row.trace.name}, {row.label}: " + ", ".join(cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hta-python", help="a Python that can import hta (default: $ADVISOR_HTA_PYTHON, or this one)")
    parser.add_argument("--hta-backend", help="HTA's trace parser backend (default: HTA's own default, json)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool on each real trace (median wall)")
    parser.add_argument("--big-repeat", type=int, default=1, help="runs per tool on a generated trace")
    parser.add_argument("--size-mb", type=float, nargs="*", default=[1024],
                        help="generated traces' sizes in MiB (default 1024; none: the real traces only)")
    parser.add_argument("--big-dir", type=Path, default=Path("/tmp"),
                        help="where generated traces are written once and reused (advisor-kineto-<size>mb.json)")
    parser.add_argument("--no-real", action="store_true", help="the generated traces only")
    parser.add_argument("--hta-timeout", type=float, default=1200, help="seconds HTA is given per run (20 min)")
    parser.add_argument("--hta-memory-limit", type=float, default=0,
                        help="cap HTA's address space at this many GiB (0: none), to protect a shared machine")
    args = parser.parse_args()
    python = hta_python(args.hta_python)
    if python is None:
        print("HTA is not installed: make a venv for it, e.g.\n  python3 -m venv /tmp/benchvenv && "
              "/tmp/benchvenv/bin/pip install -e '.[bench]'\nthen pass --hta-python /tmp/benchvenv/bin/python")
        return 2
    big = []
    for size_mb in args.size_mb:
        path = args.big_dir / f"advisor-kineto-{size_mb:g}mb.json"
        if not path.exists():
            gen = [sys.executable, str(HERE / "make_kineto_trace.py"), str(path), "--size-mb", f"{size_mb:g}"]
            print("$ " + shlex.join(gen), flush=True)
            subprocess.run(gen, check=True)
        big.append(path)
    hta_extra = [args.hta_backend] if args.hta_backend else []
    limit = int(args.hta_memory_limit * (1 << 30))
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="torch-vs-hta-") as tmp_name:
        tmp = Path(tmp_name)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")  # bytecode cached as for an installed package

        def ours(trace: Path, *extra: str) -> list[str]:
            return [advisor_exe(), "report", str(trace), "-o", str(tmp / "analysis.json"), *extra]

        def theirs(trace: Path) -> list[str]:
            return [python, "-c", HTA_RUN, str(hta_folder(trace, tmp)), *hta_extra]

        run(ours(REAL[0]), env, 600)  # untimed: compiles advisor's bytecode once, warms the file cache
        run(theirs(REAL[0]), env, 600, limit)
        for trace in [] if args.no_real else REAL:
            rows += measure_trace(trace, {"advisor": ours(trace)}, theirs(trace), env, args, limit, tmp, True)
        for trace in big:
            variants = {"advisor": ours(trace)}
            if trace.stat().st_size > whole_trace_limit(DEFAULT_MAX_MEMORY):  # streamed by default: decode too
                variants["advisor --max-memory 4GiB (in memory)"] = ours(trace, "--max-memory", "4GiB")
            rows += measure_trace(trace, variants, theirs(trace), env, args, limit, tmp, False)
    report(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
