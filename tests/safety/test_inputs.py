"""Issue 22, section 2, for every reader's way in (advisor/inputs) and the Neuron text and JSON readers:
non-regular inputs refused before a read, limits derived from --max-memory with a one-line refusal
naming the limit, odd numbers as unavailable values, deep or huge JSON as one line."""

from __future__ import annotations

import json
import math
import os
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest
from conftest import advisor_command
from hypothesis import given
from hypothesis import strategies as st
from tests_support import SAMPLES, one_line_error

from advisor.cli import main
from advisor.core.errors import AdvisorError
from advisor.inputs.limits import MAX_JSON_DEPTH, MAX_STRING_CHARS, TextLimits
from advisor.inputs.text import open_regular, read_bytes, read_head, require_regular_file
from advisor.kinds.base import LoadOptions
from advisor.profilers.ncu.adapters import load as load_ncu
from advisor.profilers.neuron.adapters import load_profiles

SUMMARY = {"total_time": 0.5, "hbm_read_bytes": 1000, "vector_engine_active_time_percent": 0.25}
NCU_CSV = SAMPLES / "ncu_multi_kernel" / "details.csv"


# --- 2.1 non-regular inputs ---------------------------------------------------------------------------

def test_a_fifo_is_refused_at_once(tmp_path):
    """Item 2.1: `advisor report FIFO` answers at once with one line; opening a FIFO blocks until a writer
    comes, so the check is made before any open. Run in a subprocess: a hang fails, never blocks the suite."""
    fifo = tmp_path / "profile.json"
    os.mkfifo(fifo)
    done = subprocess.run([*advisor_command(), "report", str(fifo), "-o", str(tmp_path / "r.md")],
                          capture_output=True, text=True, timeout=120, check=False)  # a hang fails, generously
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"advisor: error: {fifo}: is a named pipe (FIFO), not a profile file: "
                                        "advisor reads regular files only"]
    assert not (tmp_path / "r.md").exists()


def test_dev_zero_is_refused_before_reading(capsys):
    """Item 2.1: /dev/zero (endless) is refused as a character device, not read for a megabyte first."""
    line = one_line_error(capsys, Path("/dev/zero"))
    assert line.endswith("is a character device, not a profile file: advisor reads regular files only")


def test_a_private_character_device_is_refused(tmp_path, capsys):
    """Item 2.1: a character device made with mknod in a temporary folder (the same as /dev/null) is
    refused by name; skipped where the system does not allow mknod."""
    device = tmp_path / "null.json"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("mknod is not permitted here")
    assert one_line_error(capsys, device).endswith("is a character device, not a profile file: advisor reads "
                                                   "regular files only")
    assert stat.S_ISCHR(device.stat().st_mode)  # left as it was


def test_a_socket_is_refused(tmp_path, capsys):
    """Item 2.1: a Unix socket where a profile is expected is refused by name."""
    path = tmp_path / "s.json"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        assert one_line_error(capsys, path).endswith("is a socket, not a profile file: advisor reads regular "
                                                     "files only")
    finally:
        server.close()


def test_a_directory_where_a_file_is_expected_is_refused(tmp_path):
    """Item 2.1: every way a reader opens a profile file refuses a directory; only detection (which asks
    folders for rank files or Parquet tables) sees it as an empty head."""
    for opener in (require_regular_file, read_bytes, lambda p: open_regular(p).__enter__()):
        with pytest.raises(AdvisorError, match="is a folder, not a profile file"):
            opener(tmp_path)
    assert read_head(tmp_path, 10) == b""


def test_a_fifo_is_refused_by_every_opener(tmp_path):
    """Item 2.1: the shared check (require_regular_file) is what read_head, read_bytes and open_regular use;
    each refuses a FIFO without opening it (a child process, so a regression cannot hang the suite)."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    script = ("import sys; from pathlib import Path; from advisor.inputs import text\n"
              "from advisor.core.errors import AdvisorError\n"
              "for call in (lambda p: text.read_head(p, 10), text.read_bytes,\n"
              "             lambda p: text.open_regular(p).__enter__()):\n"
              "    try:\n        call(Path(sys.argv[1]))\n    except AdvisorError as e:\n        print(e.problem)\n")
    done = subprocess.run([*_python(), "-c", script, str(fifo)], capture_output=True, text=True, timeout=60,
                          check=False)
    refusal = "is a named pipe (FIFO), not a profile file: advisor reads regular files only"
    assert done.stdout.splitlines() == [refusal] * 3


def test_a_fifo_named_like_a_capture_or_a_table_is_refused(tmp_path):
    """Item 2.1: an .ntff FIFO (neuron-profile would block on it until its 30-minute timeout) and a FIFO named
    like a Parquet table part inside an Explorer folder are refused by name; a child process, as above."""
    ntff = tmp_path / "capture.ntff"
    os.mkfifo(ntff)
    folder = tmp_path / "explorer"
    folder.mkdir()
    for table in (SAMPLES / "explorer_parquet").glob("*.parquet"):
        (folder / table.name).write_bytes(table.read_bytes())
    os.mkfifo(folder / "Instruction_9.parquet")
    for path, named in ((ntff, ntff), (folder, folder / "Instruction_9.parquet")):
        done = subprocess.run([*advisor_command(), "report", str(path), "-o", str(tmp_path / "r.md")],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [f"advisor: error: {named}: is a named pipe (FIFO), not a profile file: "
                                            "advisor reads regular files only"]


def _python() -> list[str]:
    import sys

    return [sys.executable]


# --- 2.2 limits -------------------------------------------------------------------------------------

def test_limits_follow_max_memory_with_floors():
    """Item 2.2: the text limits are fractions of --max-memory (at the 2 GiB default: 256 MiB, 16 Mi lines,
    4 MiB per line), never below floors every real summary fits in."""
    default = TextLimits.for_memory(2 << 30)
    assert (default.max_bytes, default.max_lines, default.max_line_chars) == (256 << 20, 16 << 20, 4 << 20)
    tiny = TextLimits.for_memory(16)
    assert (tiny.max_bytes, tiny.max_lines, tiny.max_line_chars) == (1 << 20, 100_000, 1 << 16)


def test_every_sample_and_reference_file_is_within_the_default_limits():
    """Item 2.2: the defaults are generous: every text sample passes the line checks."""
    limits = TextLimits.for_memory(2 << 30)
    for path in [*SAMPLES.rglob("*.csv"), *SAMPLES.rglob("*.txt"), *SAMPLES.rglob("*.log"), *SAMPLES.rglob("*.json")]:
        if path.stat().st_size <= limits.max_bytes:
            limits.check_lines(path.read_text(encoding="utf-8", errors="replace"), str(path))


def test_a_file_over_the_size_limit_names_it_and_the_option(tmp_path, capsys, monkeypatch):
    """Item 2.2: an ncu export over the text size limit (an eighth of --max-memory) is one line naming the
    limit and how to raise it, before it is read."""
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    path = tmp_path / "big.csv"
    path.write_text(NCU_CSV.read_text() + "==PROF== padding\n" * 200_000)  # 3.4 MB
    line = one_line_error(capsys, path, "--max-memory", "8MiB")
    assert "over the size limit for text exports of 1 MiB (set by --max-memory; raise it with --max-memory SIZE)" \
        in line
    assert main(["report", str(path), "-o", str(tmp_path / "r.md")]) == 0  # the default reads it


def test_too_many_lines_names_the_line_count_limit(tmp_path, capsys, monkeypatch):
    """Item 2.2: a file of form feeds is as many lines as a file of newlines (str.splitlines splits on
    both); past the line-count limit it is refused before any list of lines is built."""
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    path = tmp_path / "lines.csv"
    path.write_text(NCU_CSV.read_text() + "\x0c" * 200_000)
    line = one_line_error(capsys, path, "--max-memory", "8MiB")
    assert "lines, over the line-count limit of 100,000 (set by --max-memory; raise it with --max-memory SIZE)" in line


def test_a_line_too_long_names_the_line_length_limit(tmp_path, capsys, monkeypatch):
    """Item 2.2: one line past the line-length limit (a 512th of --max-memory, at least 64 KiB) is refused."""
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    path = tmp_path / "summary.txt"
    path.write_text("total_time  0.5\nhbm_read_bytes  1000\nnote  " + "x" * 100_000 + "\n")
    line = one_line_error(capsys, path, "--max-memory", "8MiB")
    assert "a line of 100,006 characters, over the line-length limit of 65,536" in line
    assert "raise it with --max-memory SIZE" in line


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deep_summary_json_is_one_line(tmp_path, capsys, depth):
    """Item 7: a summary-json nested past the depth limit, shallow enough to decode or deep enough to
    exhaust the decoder's recursion, is one line naming the limit."""
    path = tmp_path / "deep.json"
    path.write_text('{"hbm_read_bytes": 1, "x": ' + "[" * depth + "]" * depth + "}")
    line = one_line_error(capsys, path)
    assert line.endswith(f"JSON nested too deeply: past the nesting-depth limit of {MAX_JSON_DEPTH} levels (a "
                         "profile nests at most 4 levels)")


def test_deep_legacy_trace_json_is_one_line(tmp_path, capsys):
    """Item 7: the legacy full JSON trace with a member nested 100,000 deep (msgspec's RecursionError was
    an internal error) is one line, read whole or streamed."""
    path = tmp_path / "trace.json"
    path.write_text('{"summary": [{"total_time": 1}], "instruction": [], "warnings": ' + "[" * 100_000
                    + "]" * 100_000 + "}")
    assert "nested too deeply" in one_line_error(capsys, path)


def test_a_huge_string_in_summary_json_is_one_line(tmp_path, capsys):
    """Item 7: a text value past the string-length limit in a summary-json is one line naming the limit."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**SUMMARY, "instance_type": "x" * (MAX_STRING_CHARS + 1)}))
    assert f"over the string-length limit of {MAX_STRING_CHARS:,}" in one_line_error(capsys, path)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_huge_string_in_a_legacy_trace_is_one_line(tmp_path, capsys, streamed, monkeypatch):
    """Item 7: an event label past the string-length limit in a legacy JSON trace is one line, whether the
    trace is read whole or streamed (--max-memory below twice its size)."""
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    path = tmp_path / "trace.json"
    event = {"timestamp": 0, "duration": 10, "label": "x" * (MAX_STRING_CHARS + 1), "hlo_name": "h"}
    path.write_text(json.dumps({"summary": [{"total_time": 1e-3, "hbm_read_bytes": 100}], "instruction": [event],
                                "dma": []}))
    extra = ("--max-memory", "1MiB") if streamed else ()
    assert "over the string-length limit" in one_line_error(capsys, path, *extra)


# --- 2.3 numbers ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "expected"), [("9" * 5000, None), ("-" + "9" * 5000, None), ("1e308", 1e308),
                                               ("1e309", None), ("NaN", None), ("-Infinity", None),
                                               ("9" * 300, float("9" * 300)), ("0", 0.0), ("-1", None)])
def test_numbers_in_summary_json(tmp_path, raw, expected):
    """Item 2.3: a 5,000-digit integer (int() raises past 4,300 digits: it was an internal error), 1e309,
    NaN and Infinity are unavailable; 1e308, 300 digits and 0 are values; -1 is the unavailable sentinel."""
    path = tmp_path / "s.json"
    path.write_text('{"total_time": 0.5, "hbm_read_bytes": ' + raw + "}")
    [profile] = load_profiles(path)
    assert profile.values["hbm_read_bytes"] == expected


@pytest.mark.parametrize(("raw", "expected"), [("9" * 5000, None), ("1e309", None), ("nan", None), ("inf B", None),
                                               ("1e308", 1e308), ("0", 0.0), ("1" * 4000 + " x y", "text")])
@pytest.mark.hang_guard
def test_numbers_in_summary_text(tmp_path, raw, expected):
    """Item 2.3: the same numbers in summary-text; a 4,000-digit value followed by two words (which took
    the old value pattern over 9 minutes) is text, at once."""
    path = tmp_path / "s.txt"
    path.write_text(f"total_time  0.5\nhbm_read_bytes  {raw}\n")
    start = time.perf_counter()
    [profile] = load_profiles(path)
    assert time.perf_counter() - start < 120  # a hang guard (the old pattern took 9 minutes), not a speed target
    value = profile.values.get("hbm_read_bytes")
    assert value is None if expected in (None, "text") else value == expected


NUMERIC_TOKENS = st.one_of(
    st.integers().map(str), st.text(alphabet="0123456789", min_size=300, max_size=6000),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e308", "1e309", "-1e309", "NaN", "Infinity", "-Infinity", "nan", "inf", "-0", "0", "-1",
                     "1,234", "1,2,3", ".5", "5.", "1e", "e1", "--1", "+1", "0x10", "1_000"]),
    st.text(alphabet="0123456789.,eE+-", min_size=1, max_size=40))


def _finite_or_none(values: dict[str, object]) -> bool:
    return all(v is None or isinstance(v, str) or (isinstance(v, float) and math.isfinite(v))
               for v in values.values())


def _read_or_refuse(path: Path, loader) -> None:
    try:
        profiles = loader(path)
    except AdvisorError:
        return  # a clear error is an allowed answer
    assert all(_finite_or_none(p.values) for p in profiles)


@given(token=NUMERIC_TOKENS)
def test_any_numeric_token_in_a_summary_json_field(tmp_path_factory, token):
    """Item 2.3 (property): any numeric token as a summary-json value gives finite values or None, or one
    clear error; never another exception."""
    path = tmp_path_factory.mktemp("j") / "s.json"
    path.write_text('{"total_time": 0.5, "hbm_read_bytes": ' + token + ', "dma_transfer_count": "' + token + '"}')
    _read_or_refuse(path, load_profiles)


@given(token=NUMERIC_TOKENS)
def test_any_numeric_token_in_a_summary_text_field(tmp_path_factory, token):
    """Item 2.3 (property): the same for a summary-text line's value, bare and with a unit."""
    path = tmp_path_factory.mktemp("t") / "s.txt"
    path.write_text(f"total_time  0.5\nhbm_read_bytes  {token}\nhbm_write_bytes  {token} GiB\n")
    _read_or_refuse(path, load_profiles)


@given(token=NUMERIC_TOKENS)
def test_any_numeric_token_in_an_ncu_csv_field(tmp_path_factory, token):
    """Item 2.3 (property): the same for an ncu details CSV's metric value (a unit-less cycle count: scaled
    units are the next test's) and its launch dimensions."""
    lines = []
    for line in NCU_CSV.read_text().splitlines()[:40]:
        if line.startswith('"0",') and '"Elapsed Cycles","cycle"' in line:
            line = line[:line.rindex('","')] + f'","{token}",'
        lines.append(line.replace('"(256, 1, 1)"', f'"({token}, 1, 1)"'))
    path = tmp_path_factory.mktemp("c") / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    _read_or_refuse(path, lambda p: load_ncu(p, LoadOptions()))


def test_a_value_that_overflows_its_unit_is_unavailable(tmp_path):
    """Item 2.3: 1e308 Mbyte is finite as printed and infinite in bytes: unavailable, never inf."""
    lines = [line[:line.rindex('","')] + '","1e308",' if line.startswith('"0",') and '"Mbyte"' in line else line
             for line in NCU_CSV.read_text().splitlines()]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    assert all(_finite_or_none(p.values) for p in load_ncu(path, LoadOptions()))
