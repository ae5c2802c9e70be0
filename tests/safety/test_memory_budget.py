"""Safety issue item 8: the default memory budget fits the process's hard limits (RLIMIT_AS, the cgroup it
runs in), and a read reserves what the file holds, never the whole limit it is allowed: under
`ulimit -v 4000000` a 1 KB summary was 'out of memory' because its read reserved half the budget."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor.core import serialize
from advisor.core.errors import AdvisorError
from advisor.core.regular import read_regular
from advisor.inputs.limits import MEMORY_MINIMUM, machine_max_memory, saved_analysis_limit
from advisor.inputs.text import read_bytes

MP2 = SAMPLES / "mp2_energy" / "summary.json"
GIB = 1 << 30
HUGE = 1 << 50  # a limit no machine can reserve: a read that preallocated its limit fails with MemoryError


def _meminfo(tmp_path: Path, available: int) -> Path:
    path = tmp_path / "meminfo"
    path.write_text(f"MemTotal:       24684084 kB\nMemAvailable:   {available // 1024} kB\n")
    return path


def _no_limit() -> None:
    return None


# --- reads take what the file holds -------------------------------------------------------------------

def test_a_small_file_read_under_a_huge_limit_reserves_only_its_size(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(b'{"total_time": 1}')
    assert read_bytes(path, HUGE) == b'{"total_time": 1}'
    assert read_regular(path, HUGE, "a YAML file") == b'{"total_time": 1}'


def test_a_saved_analysis_is_read_without_reserving_its_limit(tmp_path):
    from advisor.api import analyze

    path = tmp_path / "a.json"
    path.write_text(serialize.dumps(analyze(MP2)))
    assert serialize.read_if_analysis(path, *saved_analysis_limit(HUGE)) is not None


def test_a_file_that_grows_while_read_is_still_refused_past_the_limit(tmp_path, monkeypatch):
    """The read asks for the size fstat gave plus one byte: more than that is a file that grew, read on in
    bounded steps and refused once past the limit."""
    import os

    path = tmp_path / "t.json"
    path.write_bytes(b"x" * 100)
    real = os.fstat
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((*real(fd)[:6], 10, *real(fd)[7:])))
    with pytest.raises(AdvisorError, match="over the input size limit"):
        read_bytes(path, 50)
    assert read_bytes(path, 1000) == b"x" * 100  # fstat said 10 bytes; all 100 are read


# --- the default budget fits the process's hard limits -------------------------------------------------

def test_the_address_space_limit_bounds_the_default_budget(tmp_path):
    """`ulimit -v 4000000` (about 3.8 GiB, of which the interpreter already maps some): half of what is left."""
    meminfo = _meminfo(tmp_path, 22 * GIB)
    assert machine_max_memory(meminfo, tmp_path / "no-cgroup", address_room=_no_limit) == 11 * GIB
    assert machine_max_memory(meminfo, tmp_path / "no-cgroup", address_room=lambda: 3 * GIB) == 3 * GIB // 2


def test_a_hard_limit_is_never_raised_to_the_floor(tmp_path):
    """The 1 GiB floor is for MemAvailable (the kernel reclaims caches); a hard limit is not exceeded for it,
    down to the least budget --max-memory takes."""
    meminfo = _meminfo(tmp_path, 22 * GIB)
    assert machine_max_memory(meminfo, tmp_path / "none", address_room=lambda: GIB) == GIB // 2
    assert machine_max_memory(meminfo, tmp_path / "none", address_room=lambda: 1 << 20) == MEMORY_MINIMUM


def test_the_processes_own_cgroup_bounds_the_default_budget(tmp_path):
    """/proc/self/cgroup names the cgroup the process runs in; its limit (or a parent's) counts, not only the
    root's (a host's nested cgroup, v2 and v1)."""
    root = tmp_path / "cgroup"
    own = root / "user.slice" / "job"
    own.mkdir(parents=True)
    (root / "user.slice" / "memory.max").write_text(f"{4 * GIB}\n")
    (root / "user.slice" / "memory.current").write_text(f"{GIB}\n")
    (own / "memory.max").write_text("max\n")
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text("0::/user.slice/job\n")
    meminfo = _meminfo(tmp_path, 22 * GIB)
    assert machine_max_memory(meminfo, root, self_cgroup, address_room=_no_limit) == 3 * GIB // 2
    v1 = tmp_path / "v1"
    (v1 / "memory" / "batch").mkdir(parents=True)
    (v1 / "memory" / "batch" / "memory.limit_in_bytes").write_text(f"{2 * GIB}\n")
    self_cgroup.write_text("4:memory:/batch\n0::/\n")
    assert machine_max_memory(meminfo, v1, self_cgroup, address_room=_no_limit) == GIB


def test_a_report_runs_under_ulimit_v():
    """The issue's reproduction: `ulimit -v 4000000; advisor report summary.json` was 'out of memory'."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4_000_000 * 1024, 4_000_000 * 1024))

    done = subprocess.run([sys.executable, "-m", "advisor", "report", str(MP2), "--format", "json", "--quiet"],
                          capture_output=True, text=True, preexec_fn=limited, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert '"total_time"' in done.stdout
