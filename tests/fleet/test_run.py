"""Fleet runs end to end: serially and on a real dask LocalCluster, corrupt and duplicate files, re-runs,
--force, a task lost as a whole, and a run killed part-way then resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import Future
from contextlib import nullcontext
from pathlib import Path

import pandas as pd
import pytest
from fleet.fleet_support import mixed_folder, neuron_profiles
from tests_support import ROOT, SAMPLES

from advisor.api import AnalyzeOptions
from advisor.core.errors import AdvisorError
from advisor.core.serialize import dumps, read_if_analysis
from advisor.fleet.attempts import records
from advisor.fleet.cluster import executor
from advisor.fleet.discover import Candidate, discover, run_settings
from advisor.fleet.run import SerialExecutor, batches, run_fleet
from advisor.fleet.store import Store
from advisor.inputs.limits import saved_analysis_limit
from advisor.kinds import names as kind_names


def serial(paths, folder: Path, workers: int = 1, **kwargs):
    store = Store.open(folder, create=True)
    found = discover([str(p) for p in paths], folder)
    return store, run_fleet(found, store, AnalyzeOptions(), lambda: executor(workers, None), **kwargs)


@pytest.mark.parametrize("workers", [1, 2], ids=["serial", "LocalCluster"])
def test_a_folder_of_every_kind_with_a_corrupt_file_and_a_duplicate(tmp_path, workers):
    root = mixed_folder(tmp_path / "fleet")
    store, result = serial([root], tmp_path / "store", workers, label="night 1")
    assert (result.found, result.analysed, result.failed, result.skipped_files) == (6, 4, 1, 2)
    assert result.duplicates == (f"{root / 'other' / 'copy.json'} (same content as {root / 'neuron.json'})",)
    rows = pd.read_parquet(tmp_path / "store" / "profiles")  # the store as any pandas user reads it
    assert sorted(rows["path"].str.replace(str(root) + "/", "")) == ["broken.json", "ncu.csv", "neuron.json",
                                                                     "ranks", "rbln.pb"]
    by_path = rows.set_index(rows["path"].str.replace(str(root) + "/", ""))
    assert by_path.loc["broken.json", "status"] == "error"
    assert by_path.loc["broken.json", "error"] == "invalid JSON at line 1 column 28: Expecting value"
    assert pd.isna(by_path.loc["broken.json", "kind"])
    assert dict(by_path.loc[["neuron.json", "ncu.csv", "rbln.pb", "ranks"], "kind"]) == {
        "neuron.json": "neuron", "ncu.csv": "ncu", "rbln.pb": "rbln", "ranks": "neuron"}
    neuron = by_path.loc["neuron.json"]
    assert neuron["name"] == "neuron" and neuron["device"] == "trn1.2xlarge" and neuron["label"] == "night 1"
    assert neuron["total_time"] == pytest.approx(0.00040625033)  # seconds
    assert neuron["root_causes"] == "weight-reload" and neuron["gain_finding"] in {"weight-reload", "memory-bound"}
    assert neuron["recoverable_time"] == pytest.approx(neuron["gain"] * neuron["total_time"])
    assert 0 < neuron["tensor_engine_active_time_percent"] < 1  # a fraction, unit in store.json
    assert store.units()["tensor_engine_active_time_percent"] == "fraction"
    assert by_path.loc["ranks", "total_time"] == pytest.approx(0.05543, rel=1e-3)  # the slowest rank
    assert pd.isna(by_path.loc["ncu.csv", "tensor_engine_active_time_percent"])  # another kind's column
    saved = read_if_analysis(store.analysis_path(neuron["hash"]), *saved_analysis_limit())
    assert saved is not None and saved.kind == "neuron" and saved.value("total_time") == neuron["total_time"]
    stored = store.analysis_path(neuron["hash"]).read_text(encoding="utf-8")  # compact: one line
    assert stored.count("\n") == 1 and json.loads(stored) == json.loads(dumps(saved))
    findings = store.findings()
    mine = findings[findings["hash"] == neuron["hash"]]
    assert sorted(mine["rule"]) == sorted(f.name for f in saved.findings)
    assert len(mine) == neuron["findings"]
    assert not findings.duplicated(["hash", "rule"]).any()


def test_rerun_skips_what_is_stored_and_force_reanalyses_without_duplicates(tmp_path):
    root = mixed_folder(tmp_path / "fleet")
    store, _ = serial([root], tmp_path / "store")
    _, again = serial([root], tmp_path / "store")
    assert (again.analysed, again.failed, again.unchanged) == (0, 0, 6)
    os.utime(root / "neuron.json", ns=(1, 1))  # touched, same bytes: hashed, still stored
    _, touched = serial([root], tmp_path / "store")
    assert (touched.analysed, touched.unchanged) == (0, 6)
    (root / "ncu2.csv").write_bytes((SAMPLES / "ncu_before_after" / "before.csv").read_bytes())
    _, added = serial([root], tmp_path / "store")
    assert (added.analysed, added.unchanged, added.run) == (1, 6, 2)
    _, forced = serial([root], tmp_path / "store", force=True)
    assert (forced.analysed, forced.failed) == (5, 1)
    raw = pd.read_parquet(tmp_path / "store" / "profiles")
    assert len(raw) == 6 and not raw["hash"].duplicated().any()  # superseded rows compacted away
    assert sorted(store.profiles()["run"]) == [3] * 6
    raw_findings = pd.read_parquet(tmp_path / "store" / "findings")
    assert set(raw_findings["run"]) == {3} and not raw_findings.duplicated(["hash", "rule"]).any()


def test_the_client_loads_the_commit_libraries_ahead_only_when_tasks_are_out(tmp_path, monkeypatch):
    from concurrent.futures import ProcessPoolExecutor  # never threads: the analysis is not thread-safe (3.11)

    from advisor.fleet import run as fleet_run

    neuron_profiles(tmp_path / "fleet", 3)
    found = discover([str(tmp_path / "fleet")])
    store = Store.open(tmp_path / "store", create=True)
    prepared: list[int] = []
    monkeypatch.setattr(fleet_run, "prepare_commit", lambda: prepared.append(1))
    touched = found.candidates[0].path
    for expected in (3, 0, 0):  # first run; nothing changed; a file touched, its bytes already stored
        before = len(prepared)
        with ProcessPoolExecutor(2) as pool:
            result = run_fleet(found, store, AnalyzeOptions(), lambda pool=pool: nullcontext((pool, 2)))
        assert result.analysed == expected and len(prepared) - before == (1 if expected else 0)
        os.utime(touched, ns=(time.time_ns(), time.time_ns()))
        found = discover([str(tmp_path / "fleet")])


def test_tasks_group_a_few_full_traces_or_many_summaries_and_the_largest_run_first():
    kib, mib = 1024, 1024 * 1024
    sizes = [7 * kib] * 6 + [80 * mib] + [12 * mib] * 4 + [1 * mib] * 2 + [7 * kib]  # summaries, traces, a summary
    candidates = [Candidate(Path(f"p{i}"), size, 0) for i, size in enumerate(sizes)]
    settings = {"max_per_task": 64, "traces_per_task": 3, "trace_bytes": 256 * kib, "task_bytes": 64 * mib,
                "tasks_per_worker": 2}
    tasks = [[int(c.path.name[1:]) for c in task] for task in batches(candidates, 2, settings)]
    # 7 traces for 2 workers × 2 tasks: 2 a task, the 80 MiB one alone (over 64 MiB), and the next one too
    # (80 + 12 MiB); the 7 summaries 2 a task as well; the largest tasks first
    assert tasks == [[6], [7, 8], [9, 10], [11, 12], [0, 1], [2, 3], [4, 5], [13]]
    many = [Candidate(Path(f"t{i}"), 1 * mib, 0) for i in range(40)]
    assert [len(task) for task in batches(many, 2, settings)] == [3] * 13 + [1]  # traces_per_task at most


def test_each_task_is_hashed_when_submitted_and_what_was_analysed_before_an_unreadable_file_is_kept(
        tmp_path, monkeypatch):
    from advisor.fleet import run as fleet_run

    neuron_profiles(tmp_path / "fleet", 5)
    found = discover([str(tmp_path / "fleet")])
    # 5 profiles for 1 worker: tasks of 2 (4 tasks per worker), the largest first
    planned = [[c.path.parent.name for c in task] for task in batches(found.candidates, 1, run_settings()["batching"])]
    assert [len(task) for task in planned] == [2, 2, 1]
    unreadable = next(c.path for c in found.candidates if c.path.parent.name == planned[1][1])
    events: list[str] = []
    hash_of = fleet_run.content_hash

    def hashing(path: Path) -> str:
        events.append(f"hash {path.parent.name}")
        if path == unreadable:
            raise AdvisorError(str(path), "cannot be read (Permission denied)")
        return hash_of(path)

    class Recording(SerialExecutor):
        def submit(self, fn, /, *args, **kwargs):
            events.append("submit " + ",".join(item.path.parent.name for item in args[0]))
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(fleet_run, "content_hash", hashing)
    store = Store.open(tmp_path / "store", create=True)
    with pytest.raises(AdvisorError, match="cannot be read"):
        run_fleet(found, store, AnalyzeOptions(), lambda: nullcontext((Recording(), 1)))
    # each task hashed as it is submitted, not the whole fleet before the first: the workers need not wait
    # for every file to be read
    assert events == [*(f"hash {n}" for n in planned[0]), f"submit {','.join(planned[0])}",
                      *(f"hash {n}" for n in planned[1])]
    # the task analysed before the error was committed, so the next run skips it
    assert sorted(store.profiles()["name"]) == sorted(planned[0])


class _Failing(SerialExecutor):
    """An executor whose first task fails as a whole, as dask reports a task whose workers kept dying."""

    def __init__(self):
        self.failed = False

    def submit(self, fn, /, *args, **kwargs):
        if self.failed:
            return super().submit(fn, *args, **kwargs)
        self.failed = True
        future: Future = Future()
        future.set_exception(RuntimeError("KilledWorker: worker died 3 times"))
        return future


def test_a_task_lost_as_a_whole_is_not_stored_and_the_next_run_analyses_it(tmp_path):
    neuron_profiles(tmp_path / "fleet", 5)
    store = Store.open(tmp_path / "store", create=True)
    lost = run_fleet(discover([str(tmp_path / "fleet")]), store, AnalyzeOptions(), lambda: nullcontext((_Failing(), 1)))
    # 5 profiles for 1 worker: tasks of 2 (4 tasks per worker), the first one (the largest) lost
    assert (len(lost.lost), lost.analysed) == (2, 3) and "KilledWorker" in lost.lost[0]
    gone = {Path(line.split(": ")[0]).parent.name for line in lost.lost}  # kernel_NNNN/summary.json
    assert sorted(store.profiles()["name"]) == sorted({f"kernel_{i:04d}" for i in range(5)} - gone)
    _, retried = serial([tmp_path / "fleet"], tmp_path / "store")
    assert (retried.analysed, retried.unchanged) == (2, 3)


def test_local_cluster_gives_the_serial_rows_on_the_samples(tmp_path):
    store_serial, _ = serial([SAMPLES], tmp_path / "serial")
    store = Store.open(tmp_path / "cluster", create=True)
    with executor(2, None) as (pool, width):
        result = run_fleet(discover([str(SAMPLES)]), store, AnalyzeOptions(), lambda: nullcontext((pool, width)))
    # the sample profiles of each installed kind (a kind whose folders are removed takes its samples along)
    samples = {k: n for k, n in {"neuron": 13, "ncu": 8, "rbln": 6, "torch": 17}.items() if k in kind_names()}
    # and of those, second formats of one capture (not counted as analysed): legacy_trace / explorer_parquet,
    # multi_core / multi_rank, matmul_text's two layouts; four Nsight Compute CSV / text pairs
    formats = sum(n for k, n in {"neuron": 3, "ncu": 4}.items() if k in samples)
    assert (width, result.analysed, result.failed, len(result.duplicates)) == (
        2, sum(samples.values()) - formats, 0, 2 + formats)
    columns = ["hash", "path", "kind", "name", "total_time", "root_causes", "recoverable_time"]
    assert store.profiles()[columns].equals(store_serial.profiles()[columns])
    assert store.findings().drop(columns="part").equals(store_serial.findings().drop(columns="part"))
    assert dict(store.profiles()["kind"].value_counts()) == samples


def test_a_killed_run_resumes_with_nothing_lost_and_nothing_duplicated(tmp_path):
    neuron_profiles(tmp_path / "fleet", 700)
    command = [sys.executable, "-m", "advisor", "fleet", str(tmp_path / "fleet"), "--store", str(tmp_path / "store"),
               "--workers", "1", "--quiet", "-o", str(tmp_path / "fleet.json")]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first_part = tmp_path / "store" / "profiles" / "part-000001.parquet"
    deadline = time.monotonic() + 120
    while not first_part.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()
    assert not (tmp_path / "fleet.json").exists()
    stored = len(Store.open(tmp_path / "store").profiles())
    assert 0 < stored < 700  # killed part-way
    _, resumed = serial([tmp_path / "fleet"], tmp_path / "store")
    assert (resumed.analysed, resumed.unchanged) == (700 - stored, stored)
    store = Store.open(tmp_path / "store")
    rows = pd.read_parquet(tmp_path / "store" / "profiles")
    assert len(rows) == 700 and rows["path"].nunique() == 700 and not rows["hash"].duplicated().any()
    findings = pd.read_parquet(tmp_path / "store" / "findings")
    assert set(findings["hash"]) == set(rows["hash"]) and not findings.duplicated(["hash", "rule"]).any()
    assert all(store.analysis_path(h).is_file() for h in rows["hash"])


def test_a_force_run_killed_before_it_compacted_is_compacted_by_the_next(tmp_path):
    neuron_profiles(tmp_path / "fleet", 3)
    store, _ = serial([tmp_path / "fleet"], tmp_path / "store")
    stored = pd.read_parquet(tmp_path / "store" / "profiles")
    # what a killed --force run leaves: its marker and a part holding contents already stored
    (tmp_path / "store" / ".superseding").write_bytes(b"")
    store.commit(records(stored.drop(columns="part")), [], {}, [])
    assert pd.read_parquet(tmp_path / "store" / "profiles")["hash"].duplicated().sum() == 3
    assert len(store.profiles()) == 3  # readers keep the latest row per content meanwhile
    _, after = serial([tmp_path / "fleet"], tmp_path / "store")
    raw = pd.read_parquet(tmp_path / "store" / "profiles")
    assert after.unchanged == 3 and len(raw) == 3 and set(raw["part"]) == {2}
    assert not (tmp_path / "store" / ".superseding").exists()


def test_a_worker_killed_mid_run_is_replaced_and_nothing_is_lost(tmp_path):
    from distributed import Client, LocalCluster

    neuron_profiles(tmp_path / "fleet", 400)
    store = Store.open(tmp_path / "store", create=True)
    killed: list[int] = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        pids = sorted(client.run(os.getpid).values())

        def kill_one(progress):  # after the first results: a worker dies with tasks still to run
            if not killed and progress.done < progress.total:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        result = run_fleet(discover([str(tmp_path / "fleet")]), store, AnalyzeOptions(),
                           lambda: nullcontext((client.get_executor(), 2)), progress=kill_one)
    assert killed and (result.analysed, result.failed, result.lost) == (400, 0, ())
    rows = pd.read_parquet(tmp_path / "store" / "profiles")
    assert len(rows) == 400 and not rows["hash"].duplicated().any()


def test_a_profile_overwritten_in_place_is_analysed_again(tmp_path):
    """Issue 24 item 8 (mutation 12 of the review survived the suite): the nightly pattern is a profile rewritten
    at the same path. Its size or mtime changes, so the re-run hashes it, finds new content and analyses it; the
    store then holds the new analysis for that path, not the stale one."""
    root = mixed_folder(tmp_path / "fleet")
    serial([root], tmp_path / "store")
    target = root / "neuron.json"
    profile = json.loads(target.read_text())  # a flat summary-json
    profile["total_time"] *= 2  # a slower run of the same kernel, written over the old file
    target.write_text(json.dumps(profile))
    store, again = serial([root], tmp_path / "store")
    assert (again.analysed, again.unchanged) == (1, 5)
    rows = store.profiles()
    mine = rows[rows["path"] == str(target)].sort_values("run")
    # the store keeps each content it saw (history compares them); the latest run's row is the new content
    assert mine["total_time"].iloc[-1] == pytest.approx(profile["total_time"])
    assert mine["run"].iloc[-1] == rows["run"].max() and mine["hash"].nunique() == len(mine)
