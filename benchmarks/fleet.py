"""The fleet on a local dask cluster against the serial run, in one run (issue 14, item 5).

    python benchmarks/fleet.py [--count 2000] [--workers 2] [--repeat 1] [--sizes 500,1000] [--folder DIR] [--keep]

Writes `--count` realistic profiles (benchmarks/fleet_profiles.py: Neuron summary-json and summary-text,
Nsight Compute CSV and text, a few RBLN traces and per-rank folders, five nights of the same kernels), then
runs each of these as a fresh `advisor` process, timing its wall time and the client's own peak RSS:

(a) `advisor fleet DIR --store S1 --workers 1 --quiet`          serial, in the client process
(b) `advisor fleet DIR --store S2 --workers N --quiet`          a LocalCluster of N workers (default 2), started
                                                                and stopped by the run, as by default
(b') `advisor fleet DIR --store S3 --scheduler ADDRESS --quiet` the same on a cluster already up (`dask scheduler`
                                                                and `dask worker --nworkers N --nthreads 1`, warmed
                                                                by one small run, with the dask settings of
                                                                fleet_run.yaml's `local_cluster:`): what a nightly
                                                                job on a standing cluster pays
(c) (b) again on the same store, nothing changed                every profile skipped by its stored hash
(d) (b) on 500, 1000, … profiles (`--sizes`), fresh stores: the client's peak RSS against the count
(e) `advisor fleet --store S -o overview.json` for each of those stores: the overview alone (it reads the
    whole store), to tell its share of (d)'s peak from the run's

The client's peak RSS is its own VmHWM (/proc/<pid>/status), polled every 50 ms until it exits: the
dask workers are its child processes, so getrusage(RUSAGE_CHILDREN) would report the largest worker
instead. The workers' peaks are polled the same way and shown apart.

Targets: (b) at least 1.7× faster than (a); (c) under 10 % of (b)'s time; the client's peak RSS flat in
the number of profiles.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet_profiles import write_profiles  # the benchmark's sibling, not a package

MIB = 1 << 20
POLL = 0.05  # seconds between RSS samples


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    client_rss: int  # bytes: the advisor process's own peak
    worker_rss: int  # bytes: the largest peak of its child processes (0 when it has none)
    cpu: float  # CPU seconds of the client and the workers it waited for (wait4)
    others: float  # cores other processes kept busy meanwhile: the machine is shared, so say how much


def advisor() -> list[str]:
    script = Path(sys.executable).parent / "advisor"
    return [str(script)] if script.exists() else [shutil.which("advisor") or "advisor"]


def _hwm(pid: int) -> int:
    """VmHWM of a process in bytes (0 once it is gone or a zombie)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _busy() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def measured(command: list[str]) -> Run:
    """Runs `command`, polling its peak RSS and its children's until it exits; raises if it fails."""
    busy, started = _busy(), time.perf_counter()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        client, workers = 0, {}
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)  # reaps it: its rusage counts its children
            if pid:
                break
            client = max(client, _hwm(process.pid))
            for child in _children(process.pid):
                workers[child] = max(workers.get(child, 0), _hwm(child))
            time.sleep(POLL)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            err.seek(0)
            raise SystemExit(f"failed ({process.returncode}): {shlex.join(command)}\n"
                             f"{err.read().decode(errors='replace')[-3000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return Run(wall, client, max(workers.values(), default=0), cpu, max(0.0, _busy() - busy - cpu) / wall)


def fleet(folder: Path, store: Path, workers: int | None, scheduler: str | None = None) -> list[str]:
    where = ["--scheduler", scheduler] if scheduler else ["--workers", str(workers)]
    return [*advisor(), "fleet", str(folder), "--store", str(store), *where, "--quiet"]


def dask_config(folder: Path) -> dict[str, str]:
    """The environment that gives `dask` processes the settings advisor's own local cluster runs with
    (advisor/data/fleet_run.yaml, `local_cluster: dask:`), as a config file in DASK_CONFIG: what docs/scaling.md
    recommends for a standing cluster. A file, not DASK_* variables: those are lower-cased, and one setting
    unsets the MALLOC_TRIM_THRESHOLD_ dask gives its workers."""
    import yaml

    from advisor.fleet.discover import run_settings

    nested: dict = {}
    for key, value in run_settings()["local_cluster"]["dask"].items():
        *path, last = key.split(".")
        where = nested
        for part in path:
            where = where.setdefault(part, {})
        where[last] = value
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "advisor-fleet.yaml").write_text(yaml.safe_dump(nested), encoding="utf-8")
    return {**os.environ, "DASK_CONFIG": str(folder)}


class StandingCluster:
    """`dask scheduler` and `dask worker` processes, as a team's standing cluster would run them, with the
    settings docs/scaling.md recommends (`dask_config`)."""

    def __init__(self, workers: int, folder: Path):
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        bin_dir = Path(sys.executable).parent
        env = dask_config(folder / "dask-config")
        self.processes = [subprocess.Popen([str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                                            str(port), "--dashboard-address", ":0"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
        time.sleep(2)
        self.processes.append(subprocess.Popen([str(bin_dir / "dask"), "worker", self.address, "--nworkers",
                                                str(workers), "--nthreads", "1", "--dashboard-address", ":0"],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        warm = folder / "warm-up"
        write_profiles(warm / "profiles", 4 * workers)
        for _ in range(60):  # the workers register, then import advisor on a first small run
            if subprocess.run(fleet(warm / "profiles", warm / "store", None, self.address),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                return
            time.sleep(1)
        raise SystemExit(f"the standing cluster at {self.address} did not start")

    def close(self) -> None:
        for process in reversed(self.processes):
            process.terminate()
            process.wait(timeout=30)


def stored(store: Path) -> str:
    """The store's rows as the contract's Store reads them: a check that every profile was stored once."""
    from advisor.fleet.store import Store

    rows = Store.open(store).profiles()
    errors = int((rows["status"] == "error").sum())
    return f"{len(rows)} rows, {errors} errors, {rows['hash'].nunique()} distinct hashes"


def timed(label: str, command: list[str], repeat: int, fresh: Path | None = None) -> Run:
    """The median wall time and the largest peaks of `repeat` runs; `fresh` is removed before each."""
    return alternated({label: (command, fresh)}, repeat)[0][label]


def alternated(commands: dict[str, tuple[list[str], Path | None]], repeat: int
               ) -> tuple[dict[str, Run], list[float]]:
    """Each command `repeat` times, taking turns (a, b, a, b, …), its `fresh` folder removed before each run:
    this machine's speed drifts by ±15 % over minutes (other tenants of its host), and runs in a row would
    take the drift for a difference between the commands. Returns each command's median wall and largest
    peaks, and each round's ratio of the first command's wall to the last's."""
    for label, (command, _) in commands.items():
        print(f"{label}: {shlex.join(command)}", flush=True)
    runs: dict[str, list[Run]] = {label: [] for label in commands}
    for _ in range(repeat):
        for label, (command, fresh) in commands.items():
            if fresh is not None:
                shutil.rmtree(fresh, ignore_errors=True)
            runs[label].append(measured(command))
            r = runs[label][-1]
            print(f"    {label.split()[0]} {r.wall:.2f} s, client {r.client_rss / MIB:.0f} MiB, {r.cpu:.1f} CPU s; "
                  f"other processes kept {r.others:.2f} cores busy", flush=True)
    first, last = runs[next(iter(runs))], runs[list(runs)[-1]]
    ratios = [a.wall / b.wall for a, b in zip(first, last, strict=True)]
    return {label: Run(statistics.median(r.wall for r in rs), max(r.client_rss for r in rs),
                       max(r.worker_rss for r in rs), statistics.median(r.cpu for r in rs),
                       statistics.median(r.others for r in rs)) for label, rs in runs.items()}, ratios


@contextlib.contextmanager
def work_folder(prefix: str, keep: bool, given: Path | None) -> Iterator[Path]:
    """A new temporary folder for the generated profiles and the stores, removed afterwards unless `keep`. Only
    this folder is ever removed: a `--folder` the user gave (`given`) is written into only when it is empty or
    absent, and kept."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        if keep:
            print(f"kept {work}" + (f" and {given}" if given else ""))
        else:
            shutil.rmtree(work, ignore_errors=True)


def print_machine() -> None:
    """The versions, cores and load the figures were measured with."""
    import dask
    import distributed

    print(f"python {platform.python_version()}, dask {dask.__version__}, distributed {distributed.__version__}, "
          f"{os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


def serial_and_cluster(folder: Path, work: Path, workers: int, repeat: int) -> tuple[Run, Run, list[float]]:
    """(a) serial and (b) on a LocalCluster of `workers`, taking turns, each on a fresh store under `work`:
    their runs and each round's speedup."""
    serial_store, cluster_store = work / "S1", work / "S2"
    walls, rounds = alternated({"(a) serial": (fleet(folder, serial_store, 1), serial_store),
                                f"(b) {workers} workers": (fleet(folder, cluster_store, workers), cluster_store)},
                               repeat)
    serial, cluster = walls.values()
    print(f"    stores: {stored(serial_store)}; {stored(cluster_store)}")
    return serial, cluster, rounds


def on_standing_cluster(folder: Path, work: Path, workers: int, repeat: int) -> Run:
    """(b') the same fleet on `workers` dask workers already up, on a fresh store under `work`."""
    standing = StandingCluster(workers, work)
    try:
        store = work / "S3"
        run = timed(f"(b') {workers} workers already up", fleet(folder, store, None, standing.address), repeat, store)
        print(f"    store: {stored(store)}")
        return run
    finally:
        standing.close()


def print_runs(rows: list[tuple[str, Run]]) -> None:
    """The runs as a Markdown table."""
    print("| run | wall s | CPU s | client peak RSS MiB | largest worker peak MiB | other load (cores) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows:
        worker = f"{r.worker_rss / MIB:.0f}" if r.worker_rss else "–"
        print(f"| {name} | {r.wall:.2f} | {r.cpu:.1f} | {r.client_rss / MIB:.0f} | {worker} | {r.others:.2f} |")


def print_speedups(serial: Run, cluster: Run, rounds: list[float], warm: Run | None) -> None:
    """The cluster's speedups over the serial run against the 1.7× target, and a warning when other
    processes kept the machine busy meanwhile."""
    for what, run, extra in (("cluster speedup", cluster, f", the LocalCluster's start included; each round "
                                                          f"{min(rounds):.2f}–{max(rounds):.2f}×"),
                             ("on a cluster already up", warm, "")):
        if run is not None:
            speedup = serial.wall / run.wall
            print(f"{what}: {speedup:.2f}× ({serial.wall:.1f} s → {run.wall:.1f} s{extra}; target ≥ 1.7×: "
                  f"{'met' if speedup >= 1.7 else 'NOT met'})")
    if max(serial.others, cluster.others) > 0.2:
        print(f"the machine was shared: other processes kept {serial.others:.2f} cores busy during (a) and "
              f"{cluster.others:.2f} during (b) of {os.cpu_count()}; the speedup is only meaningful when idle")


def profiles_in(folder: Path, count: int) -> Path:
    """`folder` with `count` profiles written into it, unless it holds files already (then used as is)."""
    if folder.is_dir() and any(folder.iterdir()):
        return folder
    started = time.perf_counter()
    paths = write_profiles(folder, count)
    print(f"wrote {len(paths)} profiles under {folder} in {time.perf_counter() - started:.1f} s", flush=True)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="profiles to generate (default 2000)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers of the cluster runs (default 2)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of (a), (b), (b'), (c): median wall, largest RSS; (a) and (b) take turns")
    parser.add_argument("--sizes", default="500,1000",
                        help="smaller profile counts for the memory check (comma-separated; --count is added)")
    parser.add_argument("--folder", type=Path, help="the profiles to use (written there when it is empty or absent)")
    parser.add_argument("--keep", action="store_true", help="keep the generated profiles and the stores")
    args = parser.parse_args()

    print_machine()
    with work_folder("advisor-fleet-", args.keep, args.folder) as work:
        folder = profiles_in(args.folder or work / "profiles", args.count)
        serial, cluster, rounds = serial_and_cluster(folder, work, args.workers, args.repeat)
        warm = on_standing_cluster(folder, work, args.workers, args.repeat)
        cluster_store = work / "S2"
        rerun = timed("(c) re-run of (b), nothing changed", fleet(folder, cluster_store, args.workers), args.repeat)
        print(f"    store: {stored(cluster_store)}")

        memory, overview = {}, {}
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()} - {args.count})
        for size in sizes:
            subset = profiles_in(work / f"profiles-{size}", size)
            store = work / f"S-{size}"
            memory[size] = timed(f"(d) {size} profiles", fleet(subset, store, args.workers), 1, store)
        memory[args.count] = cluster
        for size in memory:  # the overview alone: it reads the whole store, so its share of the peak shows apart
            store = cluster_store if size == args.count else work / f"S-{size}"
            command = [*advisor(), "fleet", "--store", str(store), "--quiet", "-o", str(work / "overview.json")]
            overview[size] = timed(f"(e) overview of the {size}-profile store", command, 1)

        share = rerun.wall / cluster.wall  # the first run of the same store
        print()
        print_runs([(f"(a) serial, {args.count} profiles", serial),
                    (f"(b) {args.workers} workers, {args.count} profiles", cluster),
                    (f"(b') {args.workers} workers already up, {args.count} profiles", warm),
                    ("(c) re-run of (b), nothing changed", rerun)])
        print()
        print(f"| profiles | fleet run: client peak RSS MiB ({args.workers} workers) | wall s "
              "| overview alone (-o .json): peak RSS MiB | wall s |")
        print("|---:|---:|---:|---:|---:|")
        for size, r in sorted(memory.items()):
            o = overview[size]
            print(f"| {size:,} | {r.client_rss / MIB:.0f} | {r.wall:.2f} | {o.client_rss / MIB:.0f} | {o.wall:.2f} |")
        print()
        print_speedups(serial, cluster, rounds, warm)
        print(f"re-run: {rerun.wall:.2f} s = {share:.1%} of the first run (target < 10 %: "
              f"{'met' if share < 0.10 else 'NOT met'})")
        low, high = memory[min(memory)], memory[max(memory)]
        growth = high.client_rss / low.client_rss - 1
        print(f"client peak RSS {low.client_rss / MIB:.0f} MiB at {min(memory):,} profiles → "
              f"{high.client_rss / MIB:.0f} MiB at {max(memory):,} ({growth:+.0%}; flat: within ±15 % — "
              f"{'met' if abs(growth) <= 0.15 else 'NOT met'})")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
