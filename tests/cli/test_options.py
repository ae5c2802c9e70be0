"""advisor/cli/options.py and its helpers: each kind's options from its data/options.yaml, --set and
the settings' set table (one parser), sizes, and arguments plus settings into AnalyzeOptions."""

import argparse
from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor.cli import build_parser
from advisor.cli.options import add_kind_options, analyze_options, kind_options, set_params
from advisor.cli.settings import Settings, parse_settings, rule_param
from advisor.core.errors import AdvisorError
from advisor.core.numbers import parse_size
from advisor.inputs.limits import machine_max_memory
from advisor.kinds import LoadOptions
from advisor.kinds import get as get_kind
from advisor.kinds.base import ProfileKind
from advisor.kinds.option_specs import KindOption, kind_option_specs

NEURON = get_kind("neuron")


def kind(tmp_path: Path, name: str, title: str, options_yaml: str | None) -> ProfileKind:
    folder = tmp_path / name
    folder.mkdir()
    if options_yaml is not None:
        (folder / "options.yaml").write_text(options_yaml)
    return ProfileKind(name=name, title=title, formats="x", package=f"{name}_kind", folder=folder)


def parser_with(*kinds: ProfileKind) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="advisor report")
    parser.add_argument("--hardware")
    add_kind_options(parser, kinds)
    return parser


# --- kind options ----------------------------------------------------------------------------------------

def test_neuron_declares_its_three_options():
    assert kind_option_specs(NEURON) == [
        KindOption("AWS Neuron", "--neuron-profile", "neuron_profile",
                   "neuron-profile or neuron-explorer executable for .ntff", "store", "PATH"),
        KindOption("AWS Neuron", "--neff", "neff",
                   "the NEFF the .ntff was captured from (default: the only *.neff beside it)", "store", "PATH"),
        KindOption("AWS Neuron", "--trace", "trace",
                   "for an .ntff: convert the full event trace (neuron-profile --output-format json, or "
                   "neuron-explorer's Parquet) instead of the summary: adds per-engine busy times, hotspots, DMA "
                   "sizes, tensor loads and the event rules; slower, and needs temporary disk for it",
                   "store_true"),
    ]


def test_only_given_values_reach_the_load_options():
    parser = build_parser()
    args = parser.parse_args(["report", "x.json"])
    assert kind_options(args) == {}
    args = parser.parse_args(["report", "x.ntff", "--neff", "k.neff", "--trace", "--max-memory", "2G"])
    assert kind_options(args) == {"neff": "k.neff", "trace": True}
    options = analyze_options(args, Settings())
    assert options.load == LoadOptions(entry=None, max_memory=2 << 30, kind_options={"neff": "k.neff", "trace": True})
    assert options.load.option("neuron_profile") is None


def test_every_input_command_has_the_kind_options_and_rules_does_not():
    parser = build_parser()
    for command in (["report", "x"], ["metrics", "x"], ["compare", "a", "b"]):
        assert kind_options(parser.parse_args([*command, "--neuron-profile", "/opt/np"])) == {
            "neuron_profile": "/opt/np"}
    with pytest.raises(SystemExit):
        parser.parse_args(["rules", "list", "--trace"])


def test_a_kind_without_options_yaml_adds_no_group(tmp_path):
    bare = kind(tmp_path, "bare", "Bare", None)
    assert kind_option_specs(bare) == []
    assert [g.title for g in parser_with(bare)._action_groups][2:] == []


def test_a_kind_group_is_titled_after_it_and_defaults_follow_the_flag(tmp_path):
    toy = kind(tmp_path, "toy", "Toy Profiler", "options:\n"
               "  - {flag: --toy-level, help: 'detail level, 0-3 (100 %)'}\n"
               "  - {flag: --toy-raw, action: store_true, help: keep raw counters}\n")
    parser = parser_with(toy)
    group = parser._action_groups[-1]
    assert group.title == "Toy Profiler options"
    assert [(a.option_strings, a.metavar) for a in group._group_actions] == [(["--toy-level"], "TOY_LEVEL"),
                                                                            (["--toy-raw"], None)]
    assert "detail level, 0-3 (100 %)" in parser.format_help()  # a % in a help text is text
    assert kind_options(parser.parse_args(["--toy-level", "2", "--toy-raw"])) == {"toy_level": "2", "toy_raw": True}


def test_two_kinds_may_share_a_flag_declared_alike(tmp_path):
    a = kind(tmp_path, "a", "A", "options:\n  - {flag: --trace, dest: trace, action: store_true, help: a's trace}\n")
    b = kind(tmp_path, "b", "B", "options:\n  - {flag: --trace, dest: trace, action: store_true, help: b's trace}\n"
                                 "  - {flag: --b-only, help: only b}\n")
    parser = parser_with(a, b)
    assert [g.title for g in parser._action_groups][-2:] == ["A options", "B options"]
    assert kind_options(parser.parse_args(["--trace"])) == {"trace": True}


@pytest.mark.parametrize(("yaml_text", "problem"), [
    ("- {flag: --x, help: y}\n", "must be a mapping with `options:`, a list of {flag, dest, metavar, help, action}"),
    ("options: {flag: --x}\n", "must be a mapping with `options:`, a list of {flag, dest, metavar, help, action}"),
    ("options: [--x]\n", "options[0]: must be a mapping of flag, dest, metavar, help, action, entry"),
    ("options:\n  - {flag: --x, help: y, type: int}\n", "options[0]: unknown key 'type'; known: flag, dest, metavar, "
                                                        "help, action, entry"),
    ("options:\n  - {flag: -x, help: y}\n", "options[0]: flag must be a long option such as --neff"),
    ("options:\n  - {flag: --x, dest: 'a-b', help: y}\n", "options[0] (--x): dest must be a Python identifier"),
    ("options:\n  - {flag: --x}\n", "options[0] (--x): help is required"),
    ("options:\n  - {flag: --x, help: y, action: append}\n", "options[0] (--x): action must be one of store, "
                                                             "store_true"),
    ("options:\n  - {flag: --x, help: y, action: store_true, metavar: N}\n",
     "options[0] (--x): metavar must be text, and only for action store"),
])
def test_a_bad_options_file_names_the_file_and_entry(tmp_path, yaml_text, problem):
    bad = kind(tmp_path, "bad", "Bad", yaml_text)
    with pytest.raises(AdvisorError) as caught:
        kind_option_specs(bad)
    assert caught.value.where == str(bad.folder / "options.yaml")
    assert caught.value.problem == problem


def test_a_kind_option_may_not_take_a_command_option(tmp_path):
    clash = kind(tmp_path, "clash", "Clash", "options:\n  - {flag: --hardware, help: mine}\n")
    with pytest.raises(AdvisorError) as caught:
        parser_with(clash)
    assert caught.value.problem == "--hardware is already an option of `advisor report`"


def test_two_kinds_declaring_a_flag_differently_is_an_error(tmp_path):
    a = kind(tmp_path, "a", "A", "options:\n  - {flag: --trace, action: store_true, help: t}\n")
    b = kind(tmp_path, "b", "B", "options:\n  - {flag: --trace, metavar: FILE, help: t}\n")
    with pytest.raises(AdvisorError) as caught:
        parser_with(a, b)
    assert caught.value.problem == "--trace is declared differently by A (dest trace, action store_true)"


# --- RULE.PARAM=NUMBER, one parser for --set and the settings file ----------------------------------------

@pytest.mark.parametrize(("key", "value", "parsed"), [
    ("weight-reload.min_ratio", "4", ("weight-reload.min_ratio", 4.0)),
    (" NRN006.min_ratio ", 2.5, ("NRN006.min_ratio", 2.5)),
    ("weight-reload.min_ratio", "1e3", ("weight-reload.min_ratio", 1000.0)),
    ("min_ratio", 4, None),  # no rule
    ("weight-reload.", 4, None),  # no param
    (".min_ratio", 4, None),
    ("weight-reload.min_ratio", "lots", None),
    ("weight-reload.min_ratio", "nan", None),
    ("weight-reload.min_ratio", True, None),  # TOML true is not a number
])
def test_rule_param(key, value, parsed):
    assert rule_param(key, value) == parsed


def test_set_params_and_its_message():
    assert set_params(["weight-reload.min_ratio=4", "memory-bound.max=0.5"]) == {
        "weight-reload.min_ratio": 4.0, "memory-bound.max": 0.5}
    for bad in ("weight-reload.min_ratio", "weight-reload.min_ratio=", "=4"):
        with pytest.raises(AdvisorError) as caught:
            set_params([bad])
        assert (caught.value.where, caught.value.problem) == (
            "--set", f"'{bad}' must be RULE.PARAM=NUMBER, e.g. weight-reload.min_ratio=4")


def test_settings_set_table_uses_the_same_parser(tmp_path):
    path = tmp_path / "advisor.toml"
    assert parse_settings({"set": {"weight-reload.min_ratio": 4}}, path).params == {"weight-reload.min_ratio": 4.0}
    with pytest.raises(AdvisorError) as caught:
        parse_settings({"set": {"weight-reload.": 4}}, path)
    assert caught.value.problem == "set: 'weight-reload.' must be \"rule.param\" = number"


def test_command_line_over_settings():
    args = build_parser().parse_args(["report", "x", "--select", "a,b", "--ignore", "c", "--set", "r.p=2",
                                      "--rules", "extra.yaml"])
    found = Settings(select=("z",), ignore=("y",), params={"r.p": 1.0, "s.q": 3.0}, rules=(Path("/org/pack"),),
                     hardware="trn2")
    options = analyze_options(args, found)
    assert options.selection.select == ("a", "b") and options.selection.ignore == ("y", "c")
    assert options.selection.params == {"r.p": 2.0, "s.q": 3.0}
    assert list(options.rule_paths) == [Path("/org/pack"), Path("extra.yaml")]
    assert options.hardware == "trn2"


# --- sizes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "size"), [
    ("2GiB", 2 << 30), ("2G", 2 << 30), ("2g", 2 << 30), ("512MiB", 512 << 20), ("512M", 512 << 20),
    ("1KiB", 1024), ("1.5GiB", 3 << 29), ("4096", 4096), ("4096B", 4096), (" 2 GiB ", 2 << 30),
    ("1GB", 10**9), ("1kB", 1000), ("1TiB", 1 << 40), ("1PiB", 1 << 50), ("1EiB", 1 << 60), ("1p", 1 << 50),
    ("", None), ("GiB", None), ("2 lots", None), ("-1G", None), ("0", None), ("0.1", None), ("1e9", None),
    ("1kb", None), ("1Gb", None), ("1gib", None), ("1b", None),  # a lowercase b is bits, never taken as bytes
    ("1e", None),  # no bare E: 1e reads as the start of 1e9
])
def test_parse_size(text, size):
    assert parse_size(text) == size


GIB = 1 << 30


def meminfo(tmp_path: Path, available_kib: int) -> Path:
    path = tmp_path / "meminfo"
    path.write_text(f"MemTotal:       24684084 kB\nMemAvailable:   {available_kib} kB\n")
    return path


@pytest.mark.parametrize(("available", "budget"), [
    (8 * GIB, 4 * GIB),  # half of what is available
    (1 * GIB, 1 * GIB),  # never under the floor
    (64 * GIB, 16 * GIB),  # nor over the ceiling
])
def test_the_default_budget_is_a_share_of_the_available_memory(tmp_path, available, budget):
    assert machine_max_memory(meminfo(tmp_path, available // 1024), tmp_path / "no-cgroup") == budget


def test_a_containers_memory_limit_bounds_the_default_budget(tmp_path):
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    (cgroup / "memory.max").write_text(f"{6 * GIB}\n")
    (cgroup / "memory.current").write_text(f"{2 * GIB}\n")
    assert machine_max_memory(meminfo(tmp_path, 20 * GIB // 1024), cgroup) == 2 * GIB  # half of the 4 GiB left
    (cgroup / "memory.max").write_text("max\n")  # no limit
    assert machine_max_memory(meminfo(tmp_path, 20 * GIB // 1024), cgroup) == 10 * GIB


def test_max_memory_given_wins_over_the_machines(monkeypatch):
    monkeypatch.setattr("advisor.inputs.limits.default_max_memory", lambda: 3 * GIB)
    parser = build_parser()
    assert analyze_options(parser.parse_args(["report", "x"]), Settings()).load.max_memory == 3 * GIB
    given = parser.parse_args(["report", "x", "--max-memory", "1GiB"])
    assert analyze_options(given, Settings()).load.max_memory == GIB


def test_a_bad_options_file_is_one_error_line_for_every_command(tmp_path, monkeypatch, capsys):
    from advisor.cli import main

    bad = kind(tmp_path, "bad", "Bad", "options:\n  - {flag: --x}\n")
    monkeypatch.setattr("advisor.kinds.available", lambda: (NEURON, bad))
    assert main(["rules", "list"]) == 2
    assert capsys.readouterr().err == f"advisor: error: {bad.folder / 'options.yaml'}: options[0] (--x): help is " \
                                      "required\n"
    with pytest.raises(AdvisorError):
        main(["--debug", "rules", "list"])


@pytest.mark.parametrize(("fmt", "output", "jobs", "drawn_by"), [
    ("pdf", "r.pdf", None, "process"), ("html", "r.html", None, "process"), ("md", "r.md", None, "process"),
    ("md", None, None, None),  # Markdown on stdout: no charts to draw, no drawer
    ("json", "r.json", None, None), ("pdf", "r.pdf", 1, "here"),  # --jobs 1: this process only
])
def test_charts_are_drawn_in_a_second_process_only_where_there_are_charts_and_jobs_allow(fmt, output, jobs, drawn_by):
    from advisor.cli.options import chart_drawer
    from advisor.report.drawing import LocalDrawer, ProcessDrawer, usable_cores

    with chart_drawer(argparse.Namespace(output=output, jobs=jobs), fmt) as drawer:
        if drawn_by is None:
            assert drawer is None
        else:
            expected = ProcessDrawer if drawn_by == "process" and usable_cores() >= 2 else LocalDrawer
            assert type(drawer) is expected


def test_a_json_report_imports_no_drawing_machinery(tmp_path):
    """JSON output draws nothing: the chart drawer's process pool and matplotlib loader stay unimported."""
    import subprocess
    import sys

    code = ("import sys; from advisor.cli import main; "
            "main(['report', 'samples/torch_host_bound/host_bound.pt.trace.json.gz', '-o', sys.argv[1], '--quiet']); "
            "print('advisor.report.drawing' in sys.modules, 'concurrent.futures.process' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.json")], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[2]).stdout
    assert out.split() == ["False", "False"]


def test_noise_is_a_checked_fraction():
    from advisor.cli.options import noise

    assert noise(argparse.Namespace(noise=2.0)) == pytest.approx(0.02)
    assert noise(argparse.Namespace(noise=0.0)) == 0.0
    for bad in (-1.0, 100.0):
        with pytest.raises(AdvisorError, match="must be a percentage from 0 to 100"):
            noise(argparse.Namespace(noise=bad))


def test_kind_reads_an_input_as_the_named_kind(tmp_path, capsys):
    """--kind NAME skips detection: the named kind reads the file, or says in one line why it cannot."""
    from advisor.cli import main

    assert main(["report", str(SAMPLES / "mp2_energy" / "summary.json"), "--kind", "neuron",
                 "-o", str(tmp_path / "r.md"), "--quiet"]) == 0
    assert main(["report", str(SAMPLES / "mp2_energy" / "summary.json"), "--kind", "ncu",
                 "-o", str(tmp_path / "x.md")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("advisor: error: ") and "ncu output" in err[0]
    assert not (tmp_path / "x.md").exists()
