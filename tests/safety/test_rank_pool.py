"""Issue 22 §2, checklist: a folder of per-rank profiles is bounded. Thousands of broken rank files fail
fast (the pool is cancelled at the first failure, the message names the first bad file and the count),
--jobs never starts more processes than ranks and refuses 0, and a folder holds at most --max-ranks
files. Every test here was a reproduced defect, or a promise the fix rests on."""

from __future__ import annotations

import shutil
from concurrent.futures import Future
from pathlib import Path

import pytest
from conftest import SerialExecutor
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.cli import main
from advisor.core.errors import AdvisorError

RANKS = SAMPLES / "multi_rank"


def _broken_folder(folder: Path, count: int) -> Path:
    folder.mkdir()
    for i in range(count):
        (folder / f"profile_rank_{i}.json").write_bytes(b"")
    return folder


class _CountingPool(SerialExecutor):
    """A pool that counts the work that actually ran: cancelled work never does. Serial, never threads: the
    analysis is not thread-safe under CPython 3.11 (see conftest.SerialExecutor)."""

    def __init__(self) -> None:
        self.ran = 0

    def submit(self, fn, /, *args, **kwargs) -> Future:
        def counted(*a, **k):
            self.ran += 1
            return fn(*a, **k)

        return super().submit(counted, *args, **kwargs)


def test_a_folder_of_broken_ranks_fails_fast(tmp_path):
    """§2 thousands of broken rank files: the first failure cancels the rest (structurally: of 3,000 files
    only a handful are ever read), and the message names the first bad file and the count."""
    folder = _broken_folder(tmp_path / "ranks", 3000)
    with _CountingPool() as pool, pytest.raises(AdvisorError) as caught:
        analyze(folder, executor=pool)
    assert pool.ran < 100  # before: all 3,000 were read before the error surfaced
    assert caught.value.where == str(folder / "profile_rank_0.json")
    assert caught.value.problem.startswith("file is empty; ")
    assert caught.value.problem.endswith(" of 3000 rank files failed before the run stopped")


def test_the_process_pool_fails_fast_with_one_line(tmp_path, capsys):
    """§2 the same through the command line's process pool: one line, exit 2, the first file named."""
    folder = _broken_folder(tmp_path / "ranks", 300)
    assert main(["report", str(folder), "--jobs", "2", "-o", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert err.startswith(f"advisor: error: {folder / 'profile_rank_0.json'}: file is empty; ")
    assert err.rstrip().endswith("of 300 rank files failed before the run stopped")
    assert not (tmp_path / "r.md").exists()


def test_serial_ranks_stop_at_the_first_failure(tmp_path):
    """§2 with --jobs 1: the first bad rank stops the run, counted as 1 of N."""
    folder = tmp_path / "ranks"
    folder.mkdir()
    shutil.copy(RANKS / "profile_rank_0.json", folder / "profile_rank_0.json")
    (folder / "profile_rank_1.json").write_text('{"total_time": ')
    for i in range(2, 50):
        (folder / f"profile_rank_{i}.json").write_bytes(b"")
    with pytest.raises(AdvisorError) as caught:
        analyze(folder, jobs=1)
    assert caught.value.where == str(folder / "profile_rank_1.json")
    assert caught.value.problem.endswith("; 1 of 50 rank files failed before the run stopped")


def test_jobs_are_capped_at_the_ranks(monkeypatch):
    """§2 --jobs 64 on a folder of 4 ranks starts 4 processes, never more than the work available."""
    started = []

    class Recording(SerialExecutor):  # records the size asked for; runs the ranks here, never in threads
        def __init__(self, max_workers: int) -> None:
            started.append(max_workers)

    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", Recording)  # api imports it where it pools
    analysis = analyze(RANKS, jobs=64)
    assert started == [4] and len(analysis.entries) == 4


@pytest.mark.parametrize("jobs", [0, -3])
def test_jobs_below_one_are_refused(jobs):
    """§2 --jobs 0 or negative: refused by the API too, one line naming --jobs."""
    with pytest.raises(AdvisorError, match="--jobs: must be at least 1"):
        analyze(RANKS, jobs=jobs)


def test_a_folder_holds_at_most_max_ranks_files(tmp_path):
    """§2 number of files in a folder: past the limit (default 4096) one line says which limit and how to
    raise it, before any file is read."""
    assert AnalyzeOptions().max_ranks == 4096
    folder = tmp_path / "ranks"
    folder.mkdir()
    for i in range(5):
        shutil.copy(RANKS / f"profile_rank_{i % 4}.json", folder / f"profile_rank_{i}.json")
    with _CountingPool() as pool, pytest.raises(AdvisorError) as caught:
        analyze(folder, AnalyzeOptions(max_ranks=4), executor=pool)
    assert pool.ran == 0
    assert str(caught.value) == f"{folder}: 5 rank files, more than the limit of 4 in one folder; raise it with " \
                                 "--max-ranks N"
    assert len(analyze(folder, AnalyzeOptions(max_ranks=5), jobs=1).entries) == 5


def test_an_error_not_about_a_rank_file_is_said_as_it_is():
    """§2: a bad setting found while analysing the ranks (--set of an unknown rule) is its own one line,
    not blamed on a rank file or counted as one."""
    from advisor.engine.evaluate import Selection

    with pytest.raises(AdvisorError) as caught:
        analyze(RANKS, AnalyzeOptions(selection=Selection(params={"no-such-rule.x": 1.0})), jobs=2)
    assert caught.value.where == "--set" and "rank files failed" not in caught.value.problem
