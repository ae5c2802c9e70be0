"""A folder of per-rank profiles: analysed in parallel, the slowest in full, a cross-rank overview."""

import json
import shutil

import pytest
from conftest import run_cli
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions

RANKS = SAMPLES / "multi_rank"


def test_slowest_rank_is_analysed_with_an_overview():
    a = analyze(RANKS, jobs=1)
    assert [e.name for e in a.entries] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    assert [e.analysed for e in a.entries] == [False, False, True, False]
    assert a.value("total_time") == max(e.total_time for e in a.entries)
    # weight reads at 3x are a training step's own (context); rank 2's extra DMA time makes it the straggler, the
    # first fix, ahead of the roofline's memory-bound, which claims no gain of its own (issue 36)
    assert a.entries[2].root_causes[0] == "straggler-dma" and "memory-bound" in a.entries[2].root_causes
    assert a.entries[0].column("Collective time") == pytest.approx(0.005276302)


def test_parallel_and_serial_agree(tmp_path):
    serial, parallel = tmp_path / "serial.json", tmp_path / "parallel.json"
    assert run_cli("report", RANKS, "--jobs", "1", "-o", serial).returncode == 0
    assert run_cli("report", RANKS, "--jobs", "2", "-o", parallel).returncode == 0
    assert serial.read_bytes() == parallel.read_bytes()


def test_an_injected_executor_runs_the_members():
    """The fan-out seam: any concurrent.futures.Executor (a process pool here; dask's Client.get_executor()
    on a cluster) gives the same analysis as the serial run. Never a thread pool: the analysis is not
    thread-safe under CPython 3.11 (its `ast` module state is shared between threads)."""
    from concurrent.futures import ProcessPoolExecutor

    from advisor.core.serialize import dumps

    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = analyze(RANKS, executor=pool)
        assert pool.submit(abs, -1).result() == 1  # the caller's executor is the caller's to shut down
    assert dumps(pooled) == dumps(analyze(RANKS, jobs=1))


def test_report_names_the_straggler_and_the_skew(tmp_path):
    out = tmp_path / "r.md"
    done = run_cli("report", RANKS, "-o", out)
    assert done.returncode == 0  # no progress when stderr is not a terminal: only the closing line
    assert done.stderr.startswith(f"advisor: wrote {out}: ") and done.stderr.count("\n") == 1
    text = out.read_text()
    assert "## Ranks (4)" in text
    assert "The slowest is rank 2 (nd_idx 1, nc_idx 2): 55.43 ms, 1.147× the median 48.35 ms" in text
    assert "`mfu-below-achievable` fires on rank 2 only" in text


def test_entry_picks_another_rank():
    a = analyze(RANKS, AnalyzeOptions(load=LoadOptions(entry="0")), jobs=1)
    assert a.entries[0].analysed and a.value("total_time") == pytest.approx(a.entries[0].total_time)
    with pytest.raises(AdvisorError, match="no such entry; the folder holds rank 0, rank 1"):
        analyze(RANKS, AnalyzeOptions(load=LoadOptions(entry="9")), jobs=1)


def test_bad_folders(tmp_path):
    with pytest.raises(AdvisorError, match="a folder no profile kind reads"):
        analyze(tmp_path)
    shutil.copy(RANKS / "profile_rank_0.json", tmp_path / "profile_rank_0.json")
    shutil.copy(RANKS / "profile_rank_1.json", tmp_path / "profile_rank_00.json")
    with pytest.raises(AdvisorError, match="rank 0 twice"):
        analyze(tmp_path)


def test_a_broken_rank_is_one_clear_error(tmp_path):
    shutil.copy(RANKS / "profile_rank_0.json", tmp_path / "profile_rank_0.json")
    (tmp_path / "profile_rank_1.json").write_text('{"total_time": ')
    done = run_cli("report", tmp_path, "--jobs", "2")
    assert done.returncode == 2 and "profile_rank_1.json: invalid JSON" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_analysis_json_keeps_the_overview(tmp_path):
    out = tmp_path / "a.json"
    assert run_cli("report", RANKS, "-o", out).returncode == 0
    entries = json.loads(out.read_text())["entries"]
    assert [e["analysed"] for e in entries] == [False, False, True, False]


def test_an_entry_is_matched_by_its_launch_id_before_its_position():
    """Issue 24 item 8 (mutation 16 of the review survived): `--kernel 12` names launch ID 12 (`12 gemm`), which
    need not be the 13th profile of the file; the position is only the fallback."""
    from advisor.core.model import Profile, SourceInfo
    from advisor.kinds.entries import choose

    def launch(entry, name, time):
        return Profile(source=SourceInfo("run.csv", "ncu-csv", "", entry=entry), values={"total_time": time},
                       info={"kernel_name": name}, kind="ncu")

    profiles = [launch(f"{i + 10} k{i}", f"k{i}", 1e-3) for i in range(4)]  # launch IDs 10..13 at positions 0..3
    assert choose(profiles, "12", "run.csv", "--kernel") is profiles[2]  # ID 12, not position 12 (none) or 1
    assert choose(profiles, "k3", "run.csv", "--kernel") is profiles[3]  # the function's name, the other word
    with pytest.raises(AdvisorError, match=r"--kernel k: matches 4 different kernels \(10 k0, 11 k1, 12 k2, 13 k3\)"):
        choose(profiles, "k", "run.csv", "--kernel")  # part of several kernels' names: ambiguous, refused
    # issue 36: an integer is an ID, never a position where the entries carry IDs, nor text in a signature
    with pytest.raises(AdvisorError, match=r"--kernel 1: no entry with that ID or rank; the file holds: 10 k0"):
        choose(profiles, "1", "run.csv", "--kernel")
    signed = [launch("3 rng", "distribution_kernel<(int)4>(int, PhiloxState)", 1e-3), launch("5 gemm", "gemm", 1e-3)]
    with pytest.raises(AdvisorError, match="--kernel 4: no entry with that ID"):
        choose(signed, "4", "run.csv", "--kernel")  # "(int)4" in launch 3's signature is not launch 4
    bare = [Profile(source=SourceInfo("x", "f", ""), values={"total_time": 1.0}, info={}, kind="ncu")] * 2
    assert choose(bare, "1", "x", "--entry") is bare[1]  # entries without IDs: the position
