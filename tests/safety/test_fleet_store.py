"""Issue 22, sections 4 and 5, for fleets: the store is untrusted input and advisor's own folder. Each test is
one item of the checklist; its docstring names it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fleet.fleet_support import neuron_profiles
from hypothesis import given
from hypothesis import strategies as st
from tests_support import ROOT, SAMPLES

from advisor.cli import main
from advisor.core.files import TEMPORARY_SUFFIX, temporary_prefix
from advisor.fleet import store as store_module
from advisor.fleet.cluster import executor, max_workers
from advisor.fleet.run import SerialExecutor
from advisor.fleet.store import PART, Store, StoreError, _is_temporary, check_hash


def fleet(tmp: Path, *extra: str) -> int:
    return main(["fleet", str(tmp / "p"), "--store", str(tmp / "st"), "--workers", "1", "--quiet", *extra])


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A store of two profiles in tmp_path/st, from profiles in tmp_path/p."""
    neuron_profiles(tmp_path / "p", 2)
    assert fleet(tmp_path) == 0
    return tmp_path


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("advisor: error: "), err
    return err.strip()


def test_recovery_never_follows_a_symlinked_analyses_folder(stored, capsys):
    """Item 1 (§5): store recovery follows a symlinked `analyses/` and deletes `*.tmp` outside the store."""
    outside = stored / "outside"
    (outside / "ab").mkdir(parents=True)
    (outside / ".victim.tmp").write_text("mine")
    (outside / "ab" / ".keep.abcdefgh.tmp").write_text("mine too")
    before = tree(outside)
    for name in ("analyses", "profiles", "findings"):
        real = stored / "st" / name
        real.rename(stored / f"moved-{name}")
        real.symlink_to(outside)
        assert fleet(stored, "--force") == 2
        assert one_line(capsys) == (f"advisor: error: {real}: is a symlink, not a folder; advisor follows no link "
                                    "inside a store (put the folder itself there)")
        assert tree(outside) == before  # nothing deleted, nothing written there
        real.unlink()
        (stored / f"moved-{name}").rename(real)
    assert fleet(stored) == 0


def test_a_symlinked_shard_or_part_or_manifest_is_refused(stored, capsys):
    """Item 1: analyses/<xx>/, a part file or store.json that is a symlink is refused, never read or written."""
    st_ = stored / "st"
    shard = next((st_ / "analyses").iterdir())
    shard.rename(stored / "shard")
    shard.symlink_to(stored / "shard")
    assert main(["fleet", "--store", str(st_), "--format", "json"]) == 2
    assert one_line(capsys).startswith(f"advisor: error: {shard}: is a symlink, not a folder")
    shard.unlink()
    (stored / "shard").rename(shard)
    part = st_ / "profiles" / "part-000001.parquet"
    part.rename(stored / "part")
    part.symlink_to(stored / "part")
    assert main(["history", "kernel_0000", "--store", str(st_)]) == 2
    assert one_line(capsys) == f"advisor: error: {part}: is a symlink, not a regular file; advisor follows no " \
                               "link inside a store"


def test_recovery_removes_only_temporary_files_advisor_wrote(stored):
    """Item 1: recovery deletes only `.<name>.<random>.tmp` names write_atomic makes, in the store's folders."""
    st_ = stored / "st"
    shard = next((st_ / "analyses").iterdir())
    full = next(shard.iterdir()).name
    ours = [st_ / "profiles" / ".part-000007.parquet.k2_9zq0a.tmp",
            st_ / "findings" / ".part-000007.parquet.abcdefgh.tmp", st_ / f".{MANIFEST_NAME}.abcdefgh.tmp",
            shard / f"{temporary_prefix(full)}abcdefgh{TEMPORARY_SUFFIX}"]
    theirs = [st_ / "profiles" / "notes.tmp", st_ / "profiles" / ".notes.abcdefgh.tmp",
              st_ / "profiles" / ".part-000007.parquet.tmp", shard / ".zz.abcdefgh.tmp", st_ / ".x.abcdefgh.tmp",
              st_ / "analyses" / ".part-000007.parquet.abcdefgh.tmp"]
    for path in ours + theirs:
        path.write_text("x")
    Store.open(st_).recover()
    assert [p.exists() for p in ours] == [False] * len(ours)
    assert [p.exists() for p in theirs] == [True] * len(theirs)


MANIFEST_NAME = store_module.MANIFEST


@given(st.text(min_size=1, max_size=80))
def test_only_write_atomic_names_count_as_temporary(name):
    """Item 1 (property): a name counts as advisor's temporary file only in write_atomic's exact form."""
    if _is_temporary(name, PART, "part-000001.parquet"):
        stem = name[1:-len(f".abcdefgh{TEMPORARY_SUFFIX}")]
        assert name.startswith(".") and name.endswith(TEMPORARY_SUFFIX) and PART.fullmatch(stem)


def test_write_atomic_temporary_names_are_recognised(tmp_path):
    """Item 1: the temporary names write_atomic really makes are the ones recovery removes."""
    final = f"{'ab' * 32}.json"
    for _ in range(50):
        fd, name = tempfile.mkstemp(prefix=temporary_prefix(final), suffix=TEMPORARY_SUFFIX, dir=tmp_path)
        os.close(fd)
        shard = store_module.re.compile("ab[0-9a-f]{62}\\.json")
        assert _is_temporary(Path(name).name, shard, "0" * 64 + ".json")


@given(st.one_of(st.text(max_size=80), st.binary(max_size=70).map(bytes.hex), st.none(), st.integers()))
def test_every_hash_is_checked_before_a_path_is_built(value):
    """Item 2 (property): only 64 lowercase hex characters are a hash; anything else is a StoreError."""
    valid = isinstance(value, str) and len(value) == 64 and set(value) <= set("0123456789abcdef")
    try:
        assert check_hash(value, "w") == value and valid
    except StoreError as exc:
        assert not valid and exc.where == "w"


def _edit_hash(part: Path, value: str) -> None:
    data = pq.read_table(part)
    data = data.set_column(data.schema.get_field_index("hash"), "hash", pa.array([value] * data.num_rows))
    pq.write_table(data, part)


@pytest.mark.parametrize("argv", [["fleet", "--store", "{st}", "-o", "{tmp}/out/fleet.md"],
                                  ["history", "kernel_0000", "--store", "{st}"],
                                  ["compare", "store:kernel_0000", "store:kernel_0001", "--store", "{st}"]])
def test_an_edited_hash_is_an_error_naming_the_part_and_row(stored, capsys, argv):
    """Item 2 (§5): a `hash` cell edited to `/../../../..$TMP/x` is never followed (no sweep, no read)."""
    evil = f"/../../../..{stored}/x"
    (stored / "x.json").write_text("{}")
    (stored / "out").mkdir()
    for table in ("profiles", "findings"):
        _edit_hash(stored / "st" / table / "part-000001.parquet", evil)
    assert main([a.format(st=stored / "st", tmp=stored) for a in argv]) == 2
    line = one_line(capsys)  # a long value is cut in the message ('…'…): how long depends on the tmp path
    shown = re.fullmatch(rf"advisor: error: {re.escape(str(stored))}/st/profiles/part-000001\.parquet: row 0: hash "
                         r"'(/\.\./\.\./\.\./\.\..*)'…? is not a sha256 digest \(64 lowercase hex characters\); the "
                         r"store was edited or damaged", line)
    assert shown is not None and evil.startswith(shown.group(1)), line
    assert list((stored / "out").iterdir()) == []


def test_an_edited_hash_is_refused_in_every_reader(stored):
    """Item 2: every read of the store's rows checks the hash (profiles, findings, index, a path by hash)."""
    store = Store.open(stored / "st")
    _edit_hash(stored / "st" / "profiles" / "part-000001.parquet", "../x")
    for read in (store.profiles, store.findings, store.index, store.compact):
        with pytest.raises(StoreError, match=r"part-000001.parquet: row 0: hash '../x' is not a sha256 digest"):
            read()
    with pytest.raises(StoreError, match="is not a sha256 digest"):
        store.analysis_path("../" * 20 + "x")


@pytest.mark.parametrize(("damage", "problem"), [
    (lambda p: p.write_bytes(b"PAR1 not parquet"), "unreadable part of the store"),
    (lambda p: pq.write_table(pa.table({"hash": pa.array([1]), "part": pa.array([1])}), p),
     "column 'hash' is int64, not string; the store was edited or damaged"),
])
def test_a_damaged_part_is_one_line(stored, capsys, damage, problem):
    """Item 2: a part that is not parquet, or has cells of the wrong type, is one line naming it."""
    part = stored / "st" / "profiles" / "part-000001.parquet"
    damage(part)
    assert main(["fleet", "--store", str(stored / "st"), "--format", "json"]) == 2
    assert problem in one_line(capsys)


@pytest.mark.parametrize(("text", "problem"), [
    ("[" * 100_000, "unreadable store manifest"),
    (" " * (2 << 20), "store manifest larger than 1024 KiB; not advisor's"),
    ('{"format": "advisor-fleet-store", "version": 1, "units": {"a": 5}}', "'units' must map each metric column"),
])
def test_a_damaged_manifest_is_one_line(stored, capsys, text, problem):
    """Item 2: store.json deeply nested, huge or of the wrong shape: one line, no RecursionError."""
    (stored / "st" / "store.json").write_text(text)
    assert main(["fleet", "--store", str(stored / "st"), "--format", "json"]) == 2
    assert problem in one_line(capsys)


def test_a_store_that_is_a_file_or_a_dangling_link_is_one_line(tmp_path, capsys):
    """Item 3: the store folder given with --store is a regular file, or a link to nowhere."""
    neuron_profiles(tmp_path / "p", 1)
    (tmp_path / "st").write_text("mine")
    assert fleet(tmp_path) == 2
    assert one_line(capsys) == f"advisor: error: {tmp_path / 'st'}: is a file, not a store folder"
    assert (tmp_path / "st").read_text() == "mine"
    (tmp_path / "st").unlink()
    (tmp_path / "st").symlink_to(tmp_path / "gone")
    assert fleet(tmp_path) == 2
    assert one_line(capsys) == f"advisor: error: {tmp_path / 'st'}: is a symlink to a missing folder"


def test_a_store_the_user_named_through_a_link_is_followed(stored, capsys):
    """Item 3: a symlink the user named with --store is their choice: the store it leads to is used."""
    (stored / "link").symlink_to(stored / "st")
    assert main(["history", "kernel_0001", "--store", str(stored / "link"), "--format", "json"]) == 0
    assert '"name": "kernel_0001"' in capsys.readouterr().out


def test_a_read_only_store_is_one_line_before_any_work(stored, capsys, monkeypatch):
    """Item 3: a read-only store (permissions or a read-only file system) is refused before a profile is read."""
    if os.geteuid() != 0:
        (stored / "st").chmod(0o555)
    else:  # root writes anywhere: the check is what a read-only file system answers
        monkeypatch.setattr(store_module.os, "access", lambda path, mode: False)
    before = tree(stored / "st")
    try:
        assert fleet(stored, "--force") == 2
    finally:
        (stored / "st").chmod(0o755)
    assert one_line(capsys) == (f"advisor: error: {stored / 'st'}: cannot write to the store: read-only (permission "
                                "denied or a read-only file system)")
    assert tree(stored / "st") == before


def test_a_symlinked_lock_file_is_refused(stored, capsys):
    """Item 3: the lock file is never opened through a link (it would create or lock a file elsewhere)."""
    (stored / "st" / ".lock").unlink()
    (stored / "st" / ".lock").symlink_to(stored / "elsewhere")
    assert fleet(stored, "--force") == 2
    assert one_line(capsys) == (f"advisor: error: {stored / 'st' / '.lock'}: is a symlink; advisor follows no link "
                                "inside a store")
    assert not (stored / "elsewhere").exists()


def _start(tmp: Path, *extra: str, session: bool = False) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "advisor", "fleet", str(tmp / "p"), "--store", str(tmp / "st"),
                             "--quiet", *extra], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=session)


def _wait_for(path: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not path.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path.exists() and process.poll() is None, "the run ended before it was interrupted"


def test_two_runs_at_once_and_a_stale_lock_after_sigkill(tmp_path, capsys):
    """Item 3: a second run into a store in use is refused with one line; a SIGKILLed run's lock is recovered."""
    neuron_profiles(tmp_path / "p", 600)
    first = _start(tmp_path, "--workers", "1")
    _wait_for(tmp_path / "st" / "profiles" / "part-000001.parquet", first)  # the lock is held
    assert fleet(tmp_path) == 2
    assert one_line(capsys) == f"advisor: error: {tmp_path / 'st'}: the store is in use by another advisor fleet run"
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert (tmp_path / "st" / ".lock").exists()  # left behind, but unlocked: the next run takes it
    assert fleet(tmp_path) == 0
    rows = Store.open(tmp_path / "st").profiles()
    assert len(rows) == 600 and not rows["hash"].duplicated().any()


@pytest.mark.parametrize("argv", [["history", "../../x", "--store", "{st}"],
                                  ["history", "/etc/passwd", "--store", "{st}"],
                                  ["compare", "store:../../x@latest", "store:kernel_0000", "--store", "{st}"],
                                  ["compare", "store:kernel_0000@../../y", "store:kernel_0001", "--store", "{st}"]])
def test_hostile_store_names_are_matched_never_used_as_paths(stored, capsys, argv):
    """Item 4: `store:../../x@latest` and `history ../../x`: matched against stored names, one clear line."""
    assert main([a.format(st=stored / "st") for a in argv]) == 2
    line = one_line(capsys)
    assert "no profile named" in line or "is labelled" in line


@pytest.mark.parametrize(("output", "problem"), [
    ("st/store.json", "lies inside {tmp}/st, which advisor keeps; write the output elsewhere"),
    ("st/profiles/part-000001.parquet", "lies inside {tmp}/st, which advisor keeps; write the output elsewhere"),
    ("st/new.json", "lies inside {tmp}/st, which advisor keeps; write the output elsewhere"),
    ("p/summary.json", "lies inside {tmp}/p, a folder this run reads; write the output elsewhere"),
    ("p/kernel_0000/summary.json", "lies inside {tmp}/p, a folder this run reads; write the output elsewhere"),
])
def test_an_output_that_is_read_or_inside_the_store_is_refused_before_any_work(stored, capsys, output, problem):
    """Item 5 (§5): `-o PROFILES/summary.json`, `-o st/store.json`, `-o st/profiles/part-…` are refused first."""
    before = tree(stored)
    assert fleet(stored, "--force", "--format", "json", "-o", str(stored / output)) == 2
    assert one_line(capsys) == f"advisor: error: {stored / output}: {problem.format(tmp=stored)}"
    assert tree(stored) == before  # nothing analysed, nothing written


def test_an_output_a_glob_would_read_next_time_is_refused(stored, capsys):
    """Item 5: a new file where a glob of the run would find it next time is refused too."""
    glob = str(stored / "p" / "*" / "summary.json")
    assert main(["fleet", glob, "--store", str(stored / "st"), "-o", str(stored / "p" / "new.json")]) == 2
    assert one_line(capsys) == (f"advisor: error: {stored / 'p' / 'new.json'}: lies inside {stored / 'p'}, a folder "
                                "this run reads; write the output elsewhere")


def test_history_never_writes_into_its_store(stored, capsys):
    """Item 5: `advisor history -o` inside the store it reads is refused."""
    assert main(["history", "kernel_0000", "--store", str(stored / "st"), "-o", str(stored / "st" / "h.md")]) == 2
    assert "which advisor keeps" in one_line(capsys)


def test_ctrl_c_is_one_line_leaves_no_worker_and_a_consistent_store(tmp_path):
    """Item 6 (§5): Ctrl-C during `advisor fleet` on a local cluster: one line, exit 130 or 2, no process left."""
    neuron_profiles(tmp_path / "p", 1500)  # enough that the run is still going
    process = _start(tmp_path, "--workers", "2", session=True)
    _wait_for(tmp_path / "st" / "profiles" / "part-000001.parquet", process)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: to every process of the group
    _, err = process.communicate(timeout=120)
    assert (process.returncode, err.decode()) == (130, "advisor: error: interrupted\n"), err.decode()[-2000:]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the workers end with the cluster (or on seeing their parent gone)
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("worker processes outlived the interrupted run")
    store = Store.open(tmp_path / "st")
    rows = store.profiles()
    assert 0 < len(rows) < 1500 and all(store.analysis_path(h).is_file() for h in rows["hash"])
    assert fleet(tmp_path) == 0 and len(Store.open(tmp_path / "st").profiles()) == 1500


@pytest.mark.parametrize(("argv", "problem"), [
    (["--workers", "0"], "--workers"), (["--workers", "-3"], "--workers"),
    (["--workers", str(max_workers() + 1)], "--workers"), (["--workers", "1e9"], "--workers"),
    (["--top", "0"], "--top"), (["--top", "nan"], "--top"),
    (["--noise", "nan"], "--noise"), (["--noise", "inf"], "--noise"), (["--noise", "-1"], "--noise"),
])
def test_absurd_settings_are_one_line(stored, capsys, argv, problem):
    """Item 7: --workers 0, negative or absurd, and NaN/Inf/negative --top and --noise: one line, exit 2."""
    before = tree(stored)
    assert exit_code(["fleet", str(stored / "p"), "--store", str(stored / "st"), "--force", *argv]) == 2
    assert problem in one_line(capsys)
    if argv[0] == "--noise":
        assert exit_code(["history", "kernel_0000", "--store", str(stored / "st"), *argv]) == 2
        assert problem in one_line(capsys)
    assert tree(stored) == before


def exit_code(argv: list[str]) -> int:
    """`main`'s exit code, also when argparse refuses a value (it exits with one line)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_workers_are_capped_at_the_work_available():
    """Item 7 (§5): `--workers 200` for one profile starts no cluster: one profile runs in this process."""
    with executor(200, None, 1) as (pool, width):
        assert isinstance(pool, SerialExecutor) and width == 1


def test_a_store_error_in_a_worker_cancels_the_run_with_one_line(tmp_path, capsys, monkeypatch):
    """Item 8: the store becoming unwritable is fatal at once (not an error row per profile), one line."""
    neuron_profiles(tmp_path / "p", 30)
    calls: list[Path] = []

    def full(path, data, durable=False):
        calls.append(path)
        raise store_module.AdvisorError(str(path), "cannot write: no space left on device")

    Store.open(tmp_path / "st", create=True)
    monkeypatch.setattr(store_module, "write_atomic", full)
    assert main(["fleet", str(tmp_path / "p"), "--store", str(tmp_path / "st"), "--workers", "1", "--quiet"]) == 2
    assert one_line(capsys) == f"advisor: error: {calls[0]}: cannot write: no space left on device"
    assert len(calls) <= 4  # each task in flight stopped at its first profile; none submitted after it
    monkeypatch.undo()
    assert len(Store.open(tmp_path / "st").profiles()) == 0  # no profile stored as failed for it


def test_samples_still_run_through_the_checks(tmp_path):
    """The checks accept what advisor itself writes: a run over the samples, re-run, and its overview."""
    assert main(["fleet", str(SAMPLES / "weight_reload"), "--store", str(tmp_path / "st"), "--workers", "1",
                 "--quiet", "-o", str(tmp_path / "f.md")]) == 0
    assert main(["fleet", str(SAMPLES / "weight_reload"), "--store", str(tmp_path / "st"), "--workers", "1",
                 "--quiet", "--force", "-o", str(tmp_path / "f.md")]) == 0


def test_a_future_cancelled_by_ctrl_c_is_no_log_line():
    """A run of the suite (issue 36's) caught tornado logging `InvalidStateError: CANCELLED` with a traceback while
    Ctrl-C closed the cluster, before the run silenced the logs: that record is dropped, any other kept."""
    import logging
    from concurrent.futures import InvalidStateError

    from advisor.fleet.interrupts import CancelledFutureNoise

    def record(error: BaseException) -> logging.LogRecord:
        return logging.LogRecord("tornado.application", logging.ERROR, __file__, 1, "Exception in callback", (),
                                 (type(error), error, None))

    noise = CancelledFutureNoise()
    assert not noise.filter(record(InvalidStateError("CANCELLED: <Future at 0x1 state=cancelled>")))
    assert noise.filter(record(ValueError("a real problem")))
