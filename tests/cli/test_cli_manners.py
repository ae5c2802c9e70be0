"""Issue 37 §3, CLI manners as ruff and sqlfluff users expect them: "did you mean" for a misspelt command,
option or choice, each usage error pointing to the help of the command it was given to; global options
before or after the command; one closing line on stderr naming what was written and its verdict, which
--quiet silences."""

from __future__ import annotations

import pytest
from tests_support import SAMPLES

from advisor.cli import build_parser, main
from advisor.core.errors import AdvisorError

MP2 = str(SAMPLES / "mp2_energy" / "summary.json")
BEFORE = str(SAMPLES / "weight_reload" / "summary.json")
AFTER = str(SAMPLES / "weight_reload_fixed" / "summary.json")
OTHER_WORK = str(SAMPLES / "matmul_text" / "summary.txt")


def _usage(capsys, argv: list[str]) -> str:
    """The one stderr line of a usage error (exit 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == ""
    assert err.count("\n") == 1, err
    return err.rstrip("\n")


# --- did you mean ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "line"), [
    (["reprot", "x.json"], "unknown command 'reprot'; did you mean `report`? (see `advisor report --help`)"),
    (["compre", "a", "b"], "unknown command 'compre'; did you mean `compare`? (see `advisor compare --help`)"),
    (["zzzz"], "unknown command 'zzzz' (see `advisor --help`)"),
    (["rules", "lst"], "unknown action 'lst'; did you mean `list`? (see `advisor rules list --help`)"),
])
def test_a_misspelt_command_is_named_with_the_closest_one(capsys, argv, line):
    assert _usage(capsys, argv) == f"advisor: error: usage: {line}"


@pytest.mark.parametrize(("argv", "line"), [
    (["report", "x.json", "--fial-on", "high"],
     "unknown option --fial-on; did you mean --fail-on? (see `advisor report --help`)"),
    (["report", "--fial-on", "high", "x.json"],  # the typo's value taken as the input: still the typo is named
     "unknown option --fial-on; did you mean --fail-on? (see `advisor report --help`)"),
    (["report", "x.json", "--formt", "md"],
     "unknown option --formt; did you mean --format? (see `advisor report --help`)"),
    (["report", "x.json", "--formt=md"],
     "unknown option --formt; did you mean --format? (see `advisor report --help`)"),
    (["compare", "a", "b", "--fail-on-regresion", "5"],
     "unknown option --fail-on-regresion; did you mean --fail-on-regression? (see `advisor compare --help`)"),
    (["history", "k", "--stroe", "s"],  # --store is required: the typo, not the missing option, is the problem
     "unknown option --stroe; did you mean --store? (see `advisor history --help`)"),
    (["rules", "list", "--knd", "neuron"],
     "unknown option --knd; did you mean --kind? (see `advisor rules list --help`)"),
    (["--degub", "report", "x.json"], "unknown option --degub; did you mean --debug? (see `advisor report --help`)"),
    (["--verison"], "unknown option --verison; did you mean --version? (see `advisor --help`)"),
    (["report", "x.json", "--zzzzzz"], "unknown option --zzzzzz (see `advisor report --help`)"),
    (["report", "x.json", "y.json"], "unrecognized arguments: y.json (see `advisor report --help`)"),
])
def test_a_misspelt_option_is_named_with_the_closest_one_of_its_command(capsys, argv, line):
    assert _usage(capsys, argv) == f"advisor: error: usage: {line}"


@pytest.mark.parametrize(("argv", "line"), [
    (["report", "x.json", "--fail-on", "hgh"],
     "argument --fail-on: invalid choice: 'hgh' (choose from 'info', 'low', 'medium', 'high', 'critical'); "
     "did you mean `high`? (see `advisor report --help`)"),
    (["report", "x.json", "--page-size", "leter"],
     "argument --page-size: invalid choice: 'leter' (choose from 'a4', 'letter'); did you mean `letter`? "
     "(see `advisor report --help`)"),
    (["compare", "a", "b", "--noise", "five"],
     "argument --noise: 'five' is not a number (see `advisor compare --help`)"),
    (["report", "--jobs", "0", "x.json"],
     "argument --jobs: '0' must be a whole number from 1 to 100000 (see `advisor report --help`)"),
    (["fleet", "--store", "s", "--top", "-1"],
     "argument --top: '-1' must be a whole number from 1 to 100000 (see `advisor fleet --help`)"),
    (["report"], "the following arguments are required: input (see `advisor report --help`)"),
])
def test_a_bad_value_points_to_its_commands_help(capsys, argv, line):
    assert _usage(capsys, argv) == f"advisor: error: usage: {line}"


# --- global options after the command -------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["report", "x.json"], ["compare", "a", "b"], ["fleet", "--store", "s"], ["history", "k", "--store", "s"],
    ["metrics", "x.json"], ["rules", "list"], ["rules", "show", "weight-reload"],
])
@pytest.mark.parametrize("flag", ["--debug", "--quiet"])
def test_a_global_option_works_before_or_after_the_command(argv, flag):
    dest = flag[2:]
    parser = build_parser()
    assert getattr(parser.parse_args(argv), dest) is False
    assert getattr(parser.parse_args([flag, *argv]), dest) is True
    assert getattr(parser.parse_args([*argv, flag]), dest) is True


def test_debug_after_the_command_shows_the_traceback(tmp_path):
    with pytest.raises(AdvisorError, match="no such file"):
        main(["report", str(tmp_path / "missing.json"), "--debug"])


# --- the closing line ------------------------------------------------------------------------------------


def test_a_report_names_what_it_wrote_and_the_verdict(tmp_path, capsys):
    out = tmp_path / "findings.md"
    assert main(["report", BEFORE, "-o", str(out)]) == 0
    assert capsys.readouterr() == ("", f"advisor: wrote {out}: 3 findings, verdict weight-reload\n")
    assert main(["report", MP2, "-o", str(tmp_path / "one.json")]) == 0
    one = tmp_path / "one.json"
    assert capsys.readouterr().err == f"advisor: wrote {one}: 1 finding, verdict vector-engine-bound\n"
    assert main(["report", MP2, "--select", "weight-reload", "-o", str(tmp_path / "none.md")]) == 0
    assert capsys.readouterr().err == f"advisor: wrote {tmp_path / 'none.md'}: 0 findings, no cause found\n"


def test_to_stdout_only_the_document_goes_to_stdout(capsys):
    assert main(["report", MP2]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("#") and "advisor: wrote" not in out
    assert err == "advisor: wrote Markdown to stdout: 1 finding, verdict vector-engine-bound\n"
    assert main(["report", MP2, "--format", "json"]) == 0
    assert capsys.readouterr().err == "advisor: wrote JSON to stdout: 1 finding, verdict vector-engine-bound\n"


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_silences_the_closing_line_but_not_the_gate(tmp_path, capsys, where):
    argv = ["report", BEFORE, "-o", str(tmp_path / "a.md"), "--fail-on", "high"]
    assert main(["--quiet", *argv] if where == "before" else [*argv, "--quiet"]) == 1
    assert capsys.readouterr() == ("", "advisor: gate: 1 finding(s) at or above high: weight-reload (high)\n")


def test_the_gate_follows_the_closing_line(tmp_path, capsys):
    assert main(["report", BEFORE, "-o", str(tmp_path / "a.md"), "--fail-on", "high"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"advisor: wrote {tmp_path / 'a.md'}: 3 findings, verdict weight-reload",
        "advisor: gate: 1 finding(s) at or above high: weight-reload (high)"]


@pytest.mark.parametrize(("inputs", "verdict"), [
    ([BEFORE, AFTER], "1.67× faster, 3 fixed, 1 new"),
    ([AFTER, BEFORE], "1.67× slower, 1 fixed, 3 new"),
    ([BEFORE, BEFORE], "unchanged within the 2.00 % noise floor, 0 fixed, 0 new"),
    ([BEFORE, OTHER_WORK], "not like-for-like (different work), time 4.22× longer, 1 fixed, 0 new"),
    ([BEFORE, AFTER, BEFORE], "3 attempts, first to last unchanged within the 2.00 % noise floor, 0 fixed, 0 new"),
])
def test_a_comparison_names_the_speedup_and_the_findings_fixed_and_new(tmp_path, capsys, inputs, verdict):
    out = tmp_path / "cmp.md"
    assert main(["compare", *inputs, "-o", str(out)]) == 0
    assert capsys.readouterr() == ("", f"advisor: wrote {out}: {verdict}\n")




def test_fleet_names_the_overview_after_its_run_line(tmp_path, capsys):
    out = tmp_path / "fleet.md"
    assert main(["fleet", str(SAMPLES / "weight_reload"), "--store", str(tmp_path / "s"), "--workers", "1",
                 "-o", str(out)]) == 0
    assert capsys.readouterr().err.splitlines()[-2:] == [
        "advisor: fleet: run 1: 1 profile found; 1 analysed, 0 failed, 0 already stored, 3 other files skipped",
        f"advisor: wrote {out}: 1 profile, 0 failed, top root cause weight-reload, 0 regressions"]
    assert main(["fleet", "--store", str(tmp_path / "s"), "--format", "json", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
