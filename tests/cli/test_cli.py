"""The `advisor` command line. Most cases call `advisor.cli.main([...])` in-process (fast); a few
run the installed console script as a user does: the entry point, exit codes, no traceback, --debug
and progress on a terminal."""

import json
import os
import sys
from types import SimpleNamespace

import pytest
from conftest import run_cli
from tests_support import FAKE_BIN, SAMPLES

from advisor.cli import main
from advisor.kinds import available

MP2 = SAMPLES / "mp2_energy" / "summary.json"


@pytest.fixture
def cli(capsys):
    """cli(*args) runs `advisor ARGS` in this process: returncode, stdout, stderr as a subprocess gives them."""

    def run(*args: object) -> SimpleNamespace:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: --help, usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return run


# --- the installed console script (smoke tests) --------------------------------------------------------


def test_help_lists_commands_and_examples():
    done = run_cli("--help")
    assert done.returncode == 0
    assert "report" in done.stdout and "metrics" in done.stdout and "examples:" in done.stdout
    titles = ", ".join(kind.title for kind in available())
    assert f"Rules-based performance advisor for ML-accelerator profiles (kinds: {titles})" in done.stdout
    assert titles.startswith("AWS Neuron, NVIDIA Nsight Compute, Rebellions RBLN profiler")
    report = run_cli("report", "--help")
    assert report.returncode == 0 and "\nAWS Neuron options:\n  --neuron-profile PATH" in report.stdout
    assert "--neff PATH" in report.stdout and "--trace " in report.stdout
    assert "\nNVIDIA Nsight Compute options:\n  --kernel NAME|ID" in report.stdout


def test_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path):
    done = run_cli("report", tmp_path / "missing.json", "-o", tmp_path / "out.md")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"advisor: error: {tmp_path / 'missing.json'}: no such file\n"
    assert list(tmp_path.iterdir()) == []  # no output left behind
    usage = run_cli("report", MP2, "--fail-on", "huge")
    assert usage.returncode == 2 and usage.stderr.startswith("advisor: error: usage: argument --fail-on: invalid "
                                                             "choice: 'huge'")
    assert usage.stderr.rstrip().endswith("(see `advisor report --help`)") and len(usage.stderr.splitlines()) == 1


def test_fail_on_gate(tmp_path):
    done = run_cli("report", WEIGHT_RELOAD, "-o", tmp_path / "a.json", "--fail-on", "high")
    assert done.returncode == 1
    assert done.stderr == (f"advisor: wrote {tmp_path / 'a.json'}: 3 findings, verdict weight-reload\n"
                           "advisor: gate: 1 finding(s) at or above high: weight-reload (high)\n")
    assert (tmp_path / "a.json").exists()  # the report is still written when the gate fails
    assert run_cli("report", WEIGHT_RELOAD, "-o", tmp_path / "b.json", "--fail-on", "critical").returncode == 0


def test_debug_shows_traceback(tmp_path):
    done = run_cli("--debug", "report", tmp_path / "missing.json")
    assert done.returncode != 0 and "Traceback" in done.stderr


# --- in-process ------------------------------------------------------------------------------------------


def test_report_markdown_on_the_seed_sample(tmp_path, cli):
    out = tmp_path / "findings.md"
    done = cli("report", MP2, "-o", out)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "**Vector Engine: 96.45 % active**" in text
    assert "30.79 GB/s" in text
    assert "| Vector Engine | 96.45 % | 206.2 ms |" in text
    assert "trn1.2xlarge" in text


def test_report_is_deterministic(tmp_path, cli):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = tmp_path / "a" / "r.md", tmp_path / "b" / "r.md"
    assert cli("report", MP2, "-o", a).returncode == 0
    assert cli("report", MP2, "-o", b).returncode == 0
    assert a.read_bytes() == b.read_bytes()
    charts = sorted(p.name for p in (tmp_path / "a" / "r_files").iterdir())
    assert charts and charts == sorted(p.name for p in (tmp_path / "b" / "r_files").iterdir())
    for name in charts:
        assert (tmp_path / "a" / "r_files" / name).read_bytes() == (tmp_path / "b" / "r_files" / name).read_bytes()


def test_report_without_output_prints_markdown(cli):
    done = cli("report", MP2)
    assert done.returncode == 0
    assert done.stdout.startswith("# Profile findings")


def test_report_json_is_the_analysis_contract(tmp_path, cli):
    out = tmp_path / "analysis.json"
    assert cli("report", MP2, "-o", out).returncode == 0
    data = json.loads(out.read_text())
    assert data["schema_version"] == 3
    assert data["source"]["format"] == "summary-json"
    assert data["source"]["instance_type"] == "trn1.2xlarge"
    assert data["source"]["profiler_version"].startswith("2.29.18.0")
    bw = data["metrics"]["hbm_read_bandwidth"]
    assert bw["unit"] == "bytes/s" and bw["source"] == "derived" and bw["value"] == pytest.approx(30.79e9, rel=1e-3)
    assert data["metrics"]["mm_arithmetic_intensity"]["value"] is None
    assert data["hardware"]["name"] == "trn1"
    assert isinstance(data["findings"], list) and isinstance(data["not_applicable"], list)


def test_metrics_command(cli):
    done = cli("metrics", MP2)
    assert done.returncode == 0
    line = next(row for row in done.stdout.splitlines() if row.startswith("hbm_read_bandwidth "))
    assert "30.79 GB/s" in line and "derived" in line
    done = cli("metrics", MP2, "--json")
    assert json.loads(done.stdout)["vector_engine_active_time_percent"]["source"] == "reported"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["report", "missing.json"], "missing.json: no such file"),
        (["report", "{tmp}/empty.json"], "empty.json: file is empty"),
        (["report", MP2, "-o", "{tmp}/x.docx"], "cannot tell the output format"),
        (["report", MP2, "--hardware", "tpu"], "--hardware: 'tpu' is neither"),
        (["report", MP2, "-o", "{tmp}/nofolder/x.md"], "does not exist"),
        (["report", MP2, "-o", "{tmp}/x.pdf", "--format", "md"], "does not match the extension"),
        (["report", MP2, "--select", "nosuchrule"], "matches no rule"),
        (["report", MP2, "--format", "pdf"], "-o: a PDF needs an output file: -o report.pdf"),
        (["report", MP2, "--max-memory", "2 lots"], "--max-memory: '2 lots' is not a size such as 512MiB or 4GiB"),
        (["report", MP2, "--set", "min_ratio=4"], "--set: 'min_ratio=4' must be RULE.PARAM=NUMBER, e.g. "
                                                  "weight-reload.min_ratio=4"),
        (["report", MP2, "--set", "weight-reload.min_ratio=lots"], "'weight-reload.min_ratio=lots' must be RULE"),
        (["report", MP2, "--jobs", "0"], "--jobs: '0' must be a whole number from 1 to 100000"),
        (["metrics", MP2, "--trace"], "--trace converts an .ntff capture"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, cli, args, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.json").write_text("")
    done = cli(*[str(a).format(tmp=tmp_path) for a in args])
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in done.stderr


def test_no_output_left_behind_on_failure(tmp_path, cli):
    out = tmp_path / "out.md"
    done = cli("report", tmp_path / "missing.json", "-o", out)
    assert done.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_refuses_to_overwrite_its_input(tmp_path, cli):
    copy = tmp_path / "s.json"
    copy.write_bytes(MP2.read_bytes())
    done = cli("report", copy, "-o", copy)
    assert done.returncode == 2 and "input" in done.stderr
    assert copy.read_bytes() == MP2.read_bytes()


def test_ntff_without_tools_names_the_command(tmp_path, monkeypatch, cli):
    (tmp_path / "k.neff").write_bytes(b"NEFF")
    (tmp_path / "profile.ntff").write_bytes(b"NTFF\x03")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    done = cli("report", "profile.ntff", "-o", "f.md")
    assert done.returncode == 2
    assert "neuron-profile view -n" in done.stderr and "--output-format summary-json" in done.stderr
    assert not (tmp_path / "f.md").exists()


def test_ntff_with_fake_tool(tmp_path, monkeypatch, cli):
    (tmp_path / "k.neff").write_bytes(b"NEFF")
    (tmp_path / "profile.ntff").write_bytes(b"NTFF\x03")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    done = cli("report", "profile.ntff", "-o", "f.md")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "f.md").read_text()
    assert "96.45 %" in text and "neuron-profile view -n" in text
    assert "`advisor report … --trace` on the .ntff" in text  # how to get the event rules
    done = cli("report", "profile.ntff", "--trace", "-o", "t.md")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "t.md").read_text()
    assert "| Format | ntff (full trace: 2 instructions, 2 DMA transfers; read whole in memory) |" in text
    assert "| `input0` | IN | 64 KiB | 192 KiB | 1 | 3× |" in text  # loaded three times its size
    assert "| **DMA** | all queues | 56.48 ms | 26.42 % | 56.48 ms | agrees |" in text  # a share of total_time
    assert "| after the last event | 206.2 ms | 7.581 ms | 3.55 % |" in text  # the run goes on past the events


def test_ntff_kind_options_reach_the_adapter(tmp_path, monkeypatch, cli):
    """--neuron-profile and --neff (from the Neuron kind's options.yaml) name the tool and the NEFF."""
    capture = tmp_path / "capture"
    capture.mkdir()
    (capture / "profile.ntff").write_bytes(b"NTFF\x03")
    neff = tmp_path / "elsewhere.neff"
    neff.write_bytes(b"NEFF")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    done = cli("report", capture / "profile.ntff", "--neuron-profile", FAKE_BIN / "neuron-profile", "--neff", neff,
               "-o", tmp_path / "f.md")
    assert done.returncode == 0, done.stderr
    assert f"neuron-profile view -n {neff.resolve()}" in (tmp_path / "f.md").read_text()


TEAM_PACK = SAMPLES.parent / "docs" / "examples" / "team-pack.yaml"
WEIGHT_RELOAD = SAMPLES / "weight_reload" / "summary.json"


@pytest.fixture
def findings_of(tmp_path, monkeypatch, cli):
    """findings_of(*args): the names of the findings `advisor report ARGS` gives, run in tmp_path."""
    monkeypatch.chdir(tmp_path)

    def run(*args):
        out = tmp_path / "a.json"
        done = cli("report", *args, "-o", out)
        assert done.returncode == 0, done.stderr
        return [f["name"] for f in json.loads(out.read_text())["findings"]]

    return run


def test_custom_pack_requiring_a_builtin_rule(findings_of):
    assert "weight-budget" in findings_of(WEIGHT_RELOAD, "--rules", TEAM_PACK)
    assert "weight-budget" not in findings_of(WEIGHT_RELOAD, "--rules", TEAM_PACK,
                                              "--set", "weight-budget.max_ratio=16")
    # the built-in rule it requires does not fire on the fixed kernel, so neither does it
    assert "weight-budget" not in findings_of(SAMPLES / "weight_reload_fixed" / "summary.json",
                                              "--rules", TEAM_PACK)


def test_settings_file_is_found_from_the_working_directory(tmp_path, findings_of):
    (tmp_path / "advisor.toml").write_text(f'rules = ["{TEAM_PACK}"]\nignore = ["low-tensor-engine-utilization"]\n'
                                           '[set]\n"weight-budget.max_ratio" = 16\n')
    names = findings_of(WEIGHT_RELOAD)
    assert "weight-budget" not in names and "low-tensor-engine-utilization" not in names
    assert "weight-reload" in names


def test_command_line_set_overrides_the_settings_file(tmp_path, findings_of):
    (tmp_path / "advisor.toml").write_text(f'rules = ["{TEAM_PACK}"]\n[set]\n"weight-budget.max_ratio" = 16\n')
    assert "weight-budget" not in findings_of(WEIGHT_RELOAD)
    assert "weight-budget" in findings_of(WEIGHT_RELOAD, "--set", "weight-budget.max_ratio=2")


def test_settings_set_table_needs_rule_dot_param(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "advisor.toml").write_text('[set]\n"min_ratio" = 4\n')
    done = cli("report", WEIGHT_RELOAD)
    assert done.returncode == 2
    settings = tmp_path / "advisor.toml"
    assert done.stderr == f"advisor: error: {settings}: set: 'min_ratio' must be \"rule.param\" = number\n"


def test_pyproject_tool_advisor(tmp_path, findings_of):
    (tmp_path / "pyproject.toml").write_text('[tool.advisor]\nselect = ["roofline"]\n')
    assert findings_of(WEIGHT_RELOAD) == ["memory-bound"]


def test_fail_on_from_the_settings_file(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "advisor.toml").write_text('fail_on = "high"\n')
    done = cli("report", WEIGHT_RELOAD, "-o", tmp_path / "a.json", "--quiet")
    assert done.returncode == 1
    assert done.stderr == "advisor: gate: 1 finding(s) at or above high: weight-reload (high)\n"
    assert cli("report", WEIGHT_RELOAD, "-o", tmp_path / "a.json", "--fail-on", "critical").returncode == 0


def test_rules_list_show_validate_test(cli):
    listing = cli("rules", "list")
    assert listing.returncode == 0 and "NRN006  weight-reload" in listing.stdout
    show = cli("rules", "show", "NRN006")
    assert "when: weight_reload_ratio > min_ratio" in show.stdout and "requires: memory-bound" in show.stdout
    assert cli("rules", "validate", TEAM_PACK).returncode == 0
    test = cli("rules", "test", TEAM_PACK)
    assert test.returncode == 0 and "3 passed, 0 failed" in test.stdout
    assert cli("rules", "test").returncode == 0


def test_rules_validate_lists_every_problem(tmp_path, cli):
    bad = tmp_path / "bad.yaml"
    bad.write_text(TEAM_PACK.read_text().replace("severity: critical", "severity: huge")
                   .replace("requires: [weight-reload]", "requires: [weight-relaod]"))
    done = cli("rules", "validate", bad)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("advisor: error: ")]
    assert len(errors) == 2
    assert any("severity 'huge'" in e for e in errors) and any("did you mean 'weight-reload'" in e for e in errors)


def test_rules_test_fails_on_a_wrong_example(tmp_path, cli):
    bad = tmp_path / "bad.yaml"
    bad.write_text(TEAM_PACK.read_text().replace("expect: skip", "expect: fire"))
    done = cli("rules", "test", bad)
    assert done.returncode == 1 and "FAIL" in done.stdout and "2 passed, 1 failed" in done.stdout


def test_set_typo_is_an_error(cli):
    done = cli("report", WEIGHT_RELOAD, "--set", "weight-reload.min_ration=3")
    assert done.returncode == 2 and "has no param 'min_ration'" in done.stderr


def test_no_command_prints_help_and_exits_2(cli):
    done = cli()
    assert done.returncode == 2 and "usage: advisor" in done.stdout


def test_an_internal_error_is_one_line(monkeypatch, cli):
    def broken(*args, **kwargs):
        raise ValueError("boom\n  at line 3")

    monkeypatch.setattr("advisor.api._analyze_input", broken)  # what every profile input reaches
    done = cli("report", MP2)
    assert done.returncode == 2
    assert done.stderr == (f"advisor: error: {MP2}: internal error (ValueError: boom at line 3); rerun with --debug "
                           "and report it\n")


# advisor with --max-memory's floor lowered: a 1 MiB trace is streamed only under a budget below 2 MiB
_UNDER_THE_FLOOR = [sys.executable, "-c", "import sys, advisor.inputs.limits as b; b.MEMORY_MINIMUM = 1; "
                    "from advisor.cli import main; sys.exit(main(sys.argv[1:]))"]


def _stderr_on_a_terminal(*args: object, command: list[str] | None = None) -> str:
    """Run advisor with stderr on a pseudo-terminal (as a person watching it) and return what it printed there."""
    import pty
    import subprocess

    from conftest import advisor_command

    leader, follower = pty.openpty()
    try:
        done = subprocess.run([*(command or advisor_command()), *map(str, args)], stdout=subprocess.DEVNULL,
                              stderr=follower, timeout=120, check=False)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal is closed once everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    assert done.returncode == 0
    return b"".join(chunks).decode()


def test_progress_only_on_a_terminal_and_not_with_quiet(tmp_path):
    trace = SAMPLES / "legacy_trace" / "profile.json"
    shown = _stderr_on_a_terminal("report", trace, "-o", tmp_path / "a.json")
    assert "advisor: reading 845 DMA transfers: 100 %" in shown and "advisor: analysing the events" in shown
    streamed = _stderr_on_a_terminal("report", trace, "--max-memory", "1KiB", "-o", tmp_path / "b.json",
                                     command=_UNDER_THE_FLOOR)
    assert "advisor: streaming 1 MiB: 100 %" in streamed
    assert _stderr_on_a_terminal("report", trace, "--quiet", "-o", tmp_path / "c.json") == ""
    # a pipe, not a terminal: no progress, only the closing line
    assert run_cli("report", trace, "-o", tmp_path / "d.json").stderr == (
        f"advisor: wrote {tmp_path / 'd.json'}: 7 findings, verdict tensor-reload\n")
