"""Issue 22 §2 and §3, checklist: settings and numeric options can never quietly weaken a CI gate, and a
malformed settings file anywhere up the tree is one line naming it."""

from __future__ import annotations

import os

import pytest
from tests_support import SAMPLES

from advisor.cli import main

MP2 = SAMPLES / "mp2_energy" / "summary.json"
BEFORE, AFTER = SAMPLES / "weight_reload" / "summary.json", SAMPLES / "weight_reload_fixed" / "summary.json"


def _usage_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("advisor: error: usage: argument ")
    return err


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e309", "-1", "five"])
@pytest.mark.parametrize("option", ["--fail-on-regression", "--noise"])
def test_compare_gate_percentages_refuse_non_finite_and_negative(capsys, option, value):
    """`--fail-on-regression nan` tripped on every comparison; `inf` and `1e309` never tripped."""
    err = _usage_error(capsys, ["compare", str(BEFORE), str(AFTER), f"{option}={value}"])
    assert option in err


@pytest.mark.parametrize(("argv", "option"), [
    (["fleet", "--store", "s", "--noise=nan"], "--noise"), (["history", "k", "--store", "s", "--noise=inf"], "--noise"),
    (["fleet", "--store", "s", "--top", "0"], "--top"), (["fleet", "--store", "s", "--top", "-1"], "--top"),
    (["fleet", "x", "--store", "s", "--workers", "1e3"], "--workers"), (["report", str(MP2), "--jobs", "0"], "--jobs"),
    (["report", str(MP2), "--jobs", "9" * 30], "--jobs"),
])
def test_every_numeric_option_refuses_out_of_range_values(tmp_path, monkeypatch, capsys, argv, option):
    monkeypatch.chdir(tmp_path)
    assert option in _usage_error(capsys, argv)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf", "1e400", "99999999999999999999999999999999999TiB"])
def test_max_memory_refuses_what_is_not_a_size(capsys, value):
    assert main(["report", str(MP2), f"--max-memory={value}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("advisor: error: --max-memory: ") and "internal" not in err


@pytest.mark.parametrize("severity", ["HIGH", "High", " high"])
def test_severities_are_case_insensitive(tmp_path, monkeypatch, capsys, severity):
    assert main(["report", str(MP2), "--fail-on", severity, "-o", str(tmp_path / "r.json")]) == 1
    assert "advisor: gate: 1 finding(s) at or above high" in capsys.readouterr().err
    (tmp_path / "advisor.toml").write_text(f'fail_on = "{severity}"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(MP2), "-o", str(tmp_path / "r.json")]) == 1


@pytest.mark.parametrize("text", ["tool = 5\n", "[tool]\nadvisor = 5\n", "[tool\n", "a = " + "[" * 5000 + "]" * 5000])
def test_a_malformed_pyproject_up_the_tree_is_one_line_naming_it(tmp_path, monkeypatch, capsys, text):
    (tmp_path / "pyproject.toml").write_text(text)
    inner = tmp_path / "work" / "deeper"
    inner.mkdir(parents=True)
    monkeypatch.chdir(inner)
    assert main(["report", str(MP2), "-o", str(inner / "r.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"advisor: error: {tmp_path / 'pyproject.toml'}: ") and err.count("\n") == 1
    assert "internal error" not in err and list(inner.iterdir()) == []


def test_a_settings_file_that_is_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    fifo = tmp_path / "advisor.toml"
    os.mkfifo(fifo)
    assert main(["report", str(MP2), "--config", str(fifo)]) == 2
    assert "is a named pipe (FIFO), not a settings file" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "text", "line"), [
    ("--context", "title: mine\nworkload:\n  target_speedup: 3\n  target_speedup: 30\n", 4),
    ("--hardware", "name: mine\nname: other\n", 2),
])
def test_a_key_given_twice_in_any_yaml_file_is_refused(tmp_path, capsys, option, text, line):
    """§3: a context or hardware file read by YAML's loader would silently keep the last of two keys."""
    path = tmp_path / "given.yaml"
    path.write_text(text)
    assert main(["report", str(MP2), option, str(path), "-o", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"advisor: error: {path}:{line}: duplicate key ") and err.count("\n") == 1
    assert not (tmp_path / "r.md").exists()
