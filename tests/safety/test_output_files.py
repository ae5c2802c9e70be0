"""Issue 22 §1 and §5, checklist: advisor writes only what it was asked to write and deletes only what it
wrote. Every test here was a reproduced defect (or a promise the fixes rest on)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import advisor_command, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from tests_support import SAMPLES

from advisor.cli import main
from advisor.core.errors import AdvisorError
from advisor.core.owned import MANIFEST, write_owned
from advisor.report.output import write_report

MP2 = SAMPLES / "mp2_energy" / "summary.json"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _char_device(path: Path) -> Path:
    """A private character device (major 1, minor 3 is what /dev/null is): never the real /dev/null."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return path


@contextlib.contextmanager
def _tmpfs(folder: Path, options: str):
    """A small tmpfs mounted on `folder` (root only), for disk-full and read-only file systems."""
    folder.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("needs root and mount for a private file system")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


# --- cleaning a folder removes only what advisor wrote there ------------------------------------------

def test_rules_docs_keeps_a_users_file_and_removes_only_its_own_stale_pages(tmp_path, capsys):
    """`advisor rules docs DIR` deleted a user's NOTES.md sitting in DIR."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "NOTES.md").write_text("my notes\n")
    assert main(["rules", "docs", str(folder)]) == 0
    assert (folder / "NOTES.md").read_text() == "my notes\n"
    assert "left 1 file advisor did not write as it was: NOTES.md" in capsys.readouterr().err
    pages = {p.relative_to(folder).as_posix() for p in folder.rglob("*.md")} - {"NOTES.md"}
    assert "neuron/weight-reload.md" in pages and (folder / MANIFEST).is_file()
    # a page advisor wrote and no rule has any more goes; one the user edited since is theirs now: kept
    manifest = (folder / MANIFEST).read_text()
    (folder / MANIFEST).write_text(manifest.replace('"neuron/weight-reload.md"', '"gone-rule.md"', 1))
    (folder / "gone-rule.md").write_bytes((folder / "neuron" / "weight-reload.md").read_bytes())
    assert main(["rules", "docs", str(folder)]) == 0
    assert not (folder / "gone-rule.md").exists() and (folder / "NOTES.md").exists()


def test_markdown_report_keeps_foreign_files_in_its_chart_folder_including_an_input(tmp_path, capsys):
    """Markdown output deleted PNG files in <name>_files/ that advisor had not written (one was an input)."""
    charts = tmp_path / "r_files"
    charts.mkdir()
    (charts / "photo.png").write_bytes(b"\x89PNG mine")
    (charts / "sub").mkdir()
    (charts / "sub" / "old-0000000000.png").write_bytes(b"\x89PNG also mine")
    assert main(["report", str(MP2), "-o", str(tmp_path / "r.md")]) == 0
    assert (charts / "photo.png").read_bytes() == b"\x89PNG mine"
    assert (charts / "sub" / "old-0000000000.png").read_bytes() == b"\x89PNG also mine"
    assert "photo.png" in capsys.readouterr().err
    # an input inside the chart folder: refused before any work, nothing touched
    profile = charts / "summary.json"
    shutil.copy(MP2, profile)
    before = _tree(charts)
    assert main(["report", str(profile), "-o", str(tmp_path / "r.md")]) == 2
    assert "holds an input" in capsys.readouterr().err and _tree(charts) == before


def test_a_forged_manifest_cannot_make_advisor_delete_outside_or_foreign_files(tmp_path):
    """The manifest is untrusted: `..`, absolute names, symlinked folders and changed files are never removed."""
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    folder = tmp_path / "o_files"
    folder.mkdir()
    (folder / "edited.png").write_bytes(b"user changed this")
    (folder / "linkdir").symlink_to(tmp_path)
    digest_of_outside = __import__("hashlib").sha256(b"keep").hexdigest()
    forged = {name: {"sha256": sha, "by": ["o.md"]} for name, sha in (
        ("../outside.txt", digest_of_outside), (str(outside), digest_of_outside),
        ("linkdir/outside.txt", digest_of_outside), ("edited.png", "0" * 64))}
    (folder / MANIFEST).write_text(__import__("json").dumps({"advisor": 1, "files": forged}))
    result = write_owned(folder, "o.md", {"new.png": b"x"})
    assert outside.read_text() == "keep" and (folder / "edited.png").exists()
    assert result.removed == () and "edited.png" in result.kept


# --- output paths: regular files or new names only, checked without following links out of place --------

@pytest.mark.parametrize("name", ["null.md", "null"])
def test_output_onto_a_character_device_is_refused_and_the_device_kept(tmp_path, capsys, name):
    """Run as root, `-o /dev/null` replaced the device node with a regular file and made /dev/null_files/."""
    device = _char_device(tmp_path / name)
    args = ["report", str(MP2), "-o", str(device)] + ([] if name.endswith(".md") else ["--format", "md"])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a character device; advisor writes only regular files" in err
    assert stat.S_ISCHR(os.lstat(device).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_output_onto_a_fifo_socket_or_folder_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.md"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    folder = tmp_path / "dir.md"
    folder.mkdir()
    try:
        for target, what in ((fifo, "is a named pipe (FIFO)"), (sock_path, "is a socket"), (folder, "is a folder")):
            assert main(["report", str(MP2), "-o", str(target)]) == 2
            assert what in capsys.readouterr().err
    finally:
        server.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.md", "fifo.md", "s.md"]


def test_a_symlink_the_user_named_is_followed_one_in_a_folder_advisor_owns_is_not(tmp_path):
    real = tmp_path / "reports" / "real.md"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.md"
    link.symlink_to(real)
    assert main(["report", str(MP2), "-o", str(link)]) == 0
    assert link.is_symlink() and real.read_text().startswith("# ")  # written through the link the user named
    assert (tmp_path / "reports" / "latest_files").is_dir()  # beside the file the links are read from
    device = _char_device(tmp_path / "dev")
    (tmp_path / "to-device.md").symlink_to(device)
    assert main(["report", str(MP2), "-o", str(tmp_path / "to-device.md")]) == 2
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_the_last_check_is_made_just_before_the_rename(tmp_path, monkeypatch):
    """A device that appears at the name while the report renders is not replaced (checked again at the
    rename, which itself never writes through a name)."""
    import advisor.core.files as files

    target = tmp_path / "r.md"
    real_stage = files._stage

    def stage_then_swap(path, data, durable):
        staged = real_stage(path, data, durable)
        if path == target:
            _char_device(target)
        return staged

    monkeypatch.setattr(files, "_stage", stage_then_swap)
    with pytest.raises(AdvisorError, match="character device"):
        write_report(target, b"# r\n", {}, None)
    assert stat.S_ISCHR(os.lstat(target).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["r.md"]


# --- a failed write leaves nothing; names of any length and alphabet -------------------------------------

def test_disk_full_leaves_nothing_and_says_what_happened(tmp_path, capsys):
    with _tmpfs(tmp_path / "small", "size=48k") as small:
        assert main(["report", str(MP2), "-o", str(small / "r.md")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no space left on device" in err and "internal error" not in err
        assert list(small.iterdir()) == []  # no chart folder, no report, no temporary file


def test_read_only_folder_is_reported_as_what_it_is(tmp_path, capsys):
    with _tmpfs(tmp_path / "ro", "size=1m,ro") as read_only:
        assert main(["report", str(MP2), "-o", str(read_only / "r.md")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "read-only file system" in err and str(read_only) in err
        assert "internal error" not in err and str(MP2) not in err  # not blamed on the input


def test_a_very_long_file_name_is_one_line(tmp_path, capsys):
    assert main(["report", str(MP2), "-o", str(tmp_path / ("a" * 300 + ".md"))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file name is 303 bytes; the file system allows 255" in err
    assert main(["report", str(MP2), "-o", str(tmp_path / ("b" * 250 + ".md"))]) == 2  # its chart folder is 256
    assert "_files: file name is 256 bytes" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["my report.md", "отчёт (v2) #1.md", "rapport été.md"])
def test_image_links_work_whatever_the_name_holds(tmp_path, name):
    out = tmp_path / name
    assert main(["report", str(MP2), "-o", str(out)]) == 0
    html = MarkdownIt("commonmark").enable("table").render(out.read_text())
    sources = [part.split('"')[0] for part in html.split('<img src="')[1:]]
    assert len(sources) >= 2
    for source in sources:
        assert (tmp_path / unquote(source)).is_file(), source


# --- output never one of the files read, never inside a folder read --------------------------------------

def test_output_cannot_overwrite_a_rank_file_just_read(tmp_path, capsys):
    ranks = tmp_path / "ranks"
    shutil.copytree(SAMPLES / "multi_rank", ranks)
    before = _tree(ranks)
    for output in ("profile_rank_0.json", "report.md"):
        assert main(["report", str(ranks), "-o", str(ranks / output)]) == 2
        assert "a folder this run reads" in capsys.readouterr().err
    assert _tree(ranks) == before


# --- operating-system errors are what they are --------------------------------------------------------

def test_os_errors_name_the_path_not_an_internal_error(tmp_path, capsys, monkeypatch):
    import advisor.core.files as files

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "r.md"))

    monkeypatch.setattr(files.tempfile, "mkstemp", denied)
    assert main(["report", str(MP2), "-o", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"advisor: error: {tmp_path}/r_files/") and err.count("\n") == 1
    assert err.endswith(": cannot write: permission denied\n") and list(tmp_path.iterdir()) == []


def test_an_os_error_anywhere_is_one_line_naming_its_path(tmp_path, capsys, monkeypatch):
    """An OSError no reader wrapped (here: the report's writer) is what it is, not an 'internal error'."""
    import advisor.cli.output as output

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", "/some/where/r.md")

    monkeypatch.setattr(output, "emit", full)
    monkeypatch.setattr("advisor.cli.report.emit", full)
    assert main(["report", str(MP2), "-o", str(tmp_path / "r.md")]) == 2
    assert capsys.readouterr().err == "advisor: error: /some/where/r.md: no space left on device\n"


# --- SIGINT and SIGKILL ----------------------------------------------------------------------------------

@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5])
def test_ctrl_c_is_one_line_exit_130_and_no_output(tmp_path, delay):
    out = tmp_path / "r.pdf"
    process = subprocess.Popen([*advisor_command(), "report", str(MP2), "-o", str(out)], stderr=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, text=True, start_new_session=True)
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("the report finished before the signal")
    assert process.returncode == 130 and err == "advisor: error: interrupted\n", err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_the_chart_drawing_process_ends_with_a_killed_parent(tmp_path):
    process = subprocess.Popen([*advisor_command(), "report", str(MP2), "-o", str(tmp_path / "r.pdf")],
                               stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    children: list[int] = []
    deadline = time.monotonic() + 20
    while not children and time.monotonic() < deadline and process.poll() is None:
        path = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        with contextlib.suppress(OSError):
            children = [int(pid) for pid in path.read_text().split()]
        time.sleep(0.02)
    if not children:
        process.kill()
        pytest.skip("no drawing process was started (one core?)")
    process.kill()
    process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() and
                                              "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
                                              for pid in children if Path(f"/proc/{pid}/stat").exists()):
        time.sleep(0.05)
    alive = [pid for pid in children if Path(f"/proc/{pid}/stat").exists()
             and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"]
    assert alive == []


# --- run_cli as a user runs it: the installed script ---------------------------------------------------

def test_installed_script_refuses_a_device_output_too(tmp_path):
    device = _char_device(tmp_path / "n.md")
    done = run_cli("report", MP2, "-o", device)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and stat.S_ISCHR(os.lstat(device).st_mode)


# --- the manifest rule as a property: whatever runs happen, foreign files stay and stale ones go ------------

_NAMES = st.sampled_from(["a.png", "b.png", "reports/x.md", "reports/x_files/c.png", "reports/y.md", "d.md"])


@settings(max_examples=200)
@given(runs=st.lists(st.tuples(st.sampled_from(["r.md", "r.html"]),
                               st.dictionaries(_NAMES, st.binary(min_size=1, max_size=4), max_size=4)),
                     min_size=1, max_size=6),
       foreign=st.dictionaries(st.sampled_from(["NOTES.md", "a.png", "reports/mine.txt", "reports/x.md"]),
                               st.binary(min_size=5, max_size=6), max_size=3))
def test_owned_folder_property(tmp_path_factory, runs, foreign):
    folder = tmp_path_factory.mktemp("owned") / "r_files"
    folder.mkdir()
    for name, data in foreign.items():  # the user's files, there before advisor ever wrote
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    latest: dict[str, dict[str, bytes]] = {}
    for owner, files in runs:
        files = {name: data for name, data in files.items() if name not in foreign}  # a foreign name is never ours
        write_owned(folder, owner, files)
        latest[owner] = files
        expected = {name: data for written in latest.values() for name, data in written.items()}
        on_disk = {k: v for k, v in _tree(folder).items() if k != MANIFEST}
        for name, data in foreign.items():
            assert on_disk[name] == data  # never deleted, never changed
        ours = {name: data for name, data in on_disk.items() if name not in foreign}
        assert set(ours) == set(expected)  # everything written now is there; every stale file of ours went
        assert all(ours[name] == latest[owner][name] for name in latest[owner])


def test_the_fleet_overview_keeps_the_users_files_in_its_folder(tmp_path, capsys):
    """The fleet overview deleted a NOTES.md, a photo and a whole reports/mydata_files/ in fleet_files/."""
    store, out = tmp_path / "store", tmp_path / "fleet.md"
    assert main(["fleet", str(SAMPLES / "weight_reload"), str(SAMPLES / "mp2_energy"), "--store", str(store),
                 "--workers", "1", "--quiet", "-o", str(out)]) == 0
    folder = tmp_path / "fleet_files"
    mine = {"NOTES.md": b"notes", "photo.jpg": b"\xff\xd8 jpeg", "reports/mydata_files/keep.png": b"\x89PNG"}
    for name, data in mine.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    for fmt in ("md", "html", "md"):
        assert main(["fleet", "--store", str(store), "--top", "1", "-o", str(tmp_path / f"fleet.{fmt}")]) == 0
    assert {name: (folder / name).read_bytes() for name in mine} == mine
    assert "photo.jpg" in capsys.readouterr().err


def test_a_symlinked_subfolder_in_an_owned_folder_is_refused_and_nothing_written(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "o_files"
    folder.mkdir()
    (folder / "reports").symlink_to(elsewhere)
    with pytest.raises(AdvisorError, match="is a symlink, not a plain folder"):
        write_report(tmp_path / "o.md", b"# o\n", {"o_files/a.png": b"a", "o_files/reports/x.md": b"x"}, "o_files")
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in folder.iterdir()) == ["reports"]
    assert not (tmp_path / "o.md").exists()


def test_compare_never_writes_into_the_store_it_reads(tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["fleet", str(SAMPLES / "weight_reload"), "--store", str(store), "--workers", "1", "--quiet"]) == 0
    capsys.readouterr()
    before = _tree(store)
    for output, fmt in ((store / "x.md", "md"), (store / "store.json", "json"),
                        (store / "profiles" / "part-000001.parquet", "json")):
        assert main(["compare", str(MP2), str(MP2), "--store", str(store), "-o", str(output), "--format", fmt]) == 2
        assert "which advisor keeps" in capsys.readouterr().err
    assert _tree(store) == before
