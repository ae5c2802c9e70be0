"""The malformed-input corpus through the installed CLI, as a user would meet it: each file gives a
report that marks what is unavailable, or exit 2 with one `advisor: error: <file>: <problem>` line.
Never a traceback, never a hang, never another exit code, never a half-written output."""

import builtins
import errno
import os
import pathlib

import pytest
from conftest import run_cli
from tests_support import FIXTURES, SAMPLES

from advisor.cli import main

CORPUS = FIXTURES / "malformed"

# file -> None (a report is expected) or the problem the one-line error must name
EXPECTED = {
    "empty.json": "file is empty",
    "truncated.json": "invalid JSON",
    "binary_garbage.json": "binary data",
    "array.json": "found a JSON array",
    "string.json": "unknown format",
    "no_metrics.json": "unknown format: no profile kind reads it",
    "unknown_format.csv": "unknown format",
    "prose.txt": "unknown format",
    "strings_only.json": "no usable metric (5 fields, none numeric)",
    "strings_for_numbers.json": None,
    "nan_infinity.json": None,
    "zero_time.json": None,
    "negative_times.json": None,
    "utf16.json": None,
    "utf8_bom.json": None,
    "beyond_float.json": None,
    "percent_out_of_range.json": None,
}


def assert_one_line_error(done, where, problem):
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"advisor: error: {where}"), lines[0]
    assert problem in lines[0]
    assert "Traceback" not in done.stderr


def test_corpus_is_covered():
    assert sorted(p.name for p in CORPUS.iterdir() if p.suffix != ".md" and p.suffix != ".yaml") == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("ext", ["md", "json"])
def test_malformed_input(name, ext, tmp_path):
    out = tmp_path / f"out.{ext}"
    done = run_cli("report", CORPUS / name, "-o", out)
    problem = EXPECTED[name]
    if problem is None:
        assert done.returncode == 0, done.stderr
        assert out.exists() and "Traceback" not in done.stderr
        if ext == "md":
            assert "unavailable" in out.read_text()
    else:
        assert_one_line_error(done, CORPUS / name, problem)
        assert list(tmp_path.iterdir()) == []  # nothing written


def test_odd_values_are_unavailable_not_zero(tmp_path):
    import json

    out = tmp_path / "a.json"
    assert run_cli("report", CORPUS / "nan_infinity.json", "-o", out).returncode == 0
    metrics = json.loads(out.read_text())["metrics"]
    assert metrics["hbm_read_bytes"]["value"] is None and metrics["hbm_write_bytes"]["value"] is None
    assert metrics["hbm_read_bandwidth"]["value"] is None  # derived from an unavailable input
    assert run_cli("report", CORPUS / "zero_time.json", "-o", out).returncode == 0
    metrics = json.loads(out.read_text())["metrics"]
    assert metrics["total_time"]["value"] is None  # zero time: the profiler measured nothing
    assert metrics["hbm_read_bandwidth"]["value"] is None  # division by zero time: unavailable


def test_deeply_nested_json(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"hbm_read_bytes": 1, "a":' + '{"a":' * 100_000 + "1" + "}" * 100_001)
    assert_one_line_error(run_cli("report", path), path, "nested too deeply")
    path.write_text('{"hbm_read_bytes": 1, "a":' + "[" * 100_000 + "]" * 100_000 + "}")
    assert_one_line_error(run_cli("report", path), path, "nested too deeply")


def test_missing_path_and_directory(tmp_path):
    assert_one_line_error(run_cli("report", tmp_path / "nope.json"), tmp_path / "nope.json", "no such file")
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    assert_one_line_error(run_cli("report", empty), empty, "a folder no profile kind reads; tried AWS Neuron")


def test_unreadable_file(tmp_path, monkeypatch, capsys):
    """Runs as root too (CI does), where chmod cannot make a file unreadable: every way of opening
    this one path raises the PermissionError the OS would give, and the CLI runs in-process."""
    path = tmp_path / "secret.json"
    path.write_text('{"total_time": 1}')
    path.chmod(0)
    denied = str(path)

    def refusing(original):
        def patched(self_or_file, *args, **kwargs):
            if isinstance(self_or_file, (str, os.PathLike)) and os.fspath(self_or_file) == denied:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), denied)
            return original(self_or_file, *args, **kwargs)
        return patched

    for name in ("open", "read_bytes", "read_text"):
        monkeypatch.setattr(pathlib.Path, name, refusing(getattr(pathlib.Path, name)))
    monkeypatch.setattr(builtins, "open", refusing(builtins.open))
    with pytest.raises(PermissionError):
        path.read_bytes()  # the patch is in force, whoever runs the test

    assert main(["report", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"advisor: error: {path}: permission denied"], err
    assert out == ""


@pytest.mark.parametrize(("name", "problem"), [("bad_context.yaml", "invalid YAML"),
                                               ("mismatched_context.yaml", "optimized has steps not in baseline")])
def test_malformed_context(name, problem, tmp_path):
    done = run_cli("report", SAMPLES / "mp2_energy" / "summary.json", "--context", CORPUS / name,
                   "-o", tmp_path / "r.md")
    assert_one_line_error(done, CORPUS / name, problem)
    assert list(tmp_path.iterdir()) == []


def test_missing_total_time_is_said_first(tmp_path):
    out = tmp_path / "r.md"
    assert run_cli("report", CORPUS / "zero_time.json", "-o", out).returncode == 0
    tldr = out.read_text().split("## TL;DR", 1)[1]
    assert tldr.lstrip().startswith("- **Data warning:** total_time = 0: the profiler measured no time")
