import os
import stat

import pytest

from advisor.core.errors import AdvisorError
from advisor.core.files import write_atomic


def test_written_whole_with_no_temporary_left(tmp_path):
    target = tmp_path / "report.md"
    target.write_bytes(b"old")
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["report.md"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names open files through /proc")
def test_durable_flushes_the_file_then_the_folder_holding_the_rename(tmp_path, monkeypatch):
    synced: list[str] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd)))
    write_atomic(tmp_path / "store.json", b"{}", durable=True)
    assert len(synced) == 2 and synced[0].startswith(str(tmp_path / ".store.json.")) and synced[1] == str(tmp_path)
    synced.clear()
    write_atomic(tmp_path / "report.md", b"x")
    assert synced == []  # a report needs no trip to the disk


def test_a_missing_folder_is_one_error_and_nothing_written(tmp_path):
    with pytest.raises(AdvisorError, match="does not exist"):
        write_atomic(tmp_path / "no" / "x.md", b"x")
