"""`--format github` (workflow-command annotations, parsed back here as the runner reads them) for report,
compare and fleet, and `--format junit` for the compare and fleet gates (issue 37)."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest
from tests_support import SAMPLES

from advisor.cli import main
from advisor.report.github import command

BEFORE = SAMPLES / "weight_reload" / "summary.json"  # weight-reload (high) and two medium findings
AFTER = SAMPLES / "weight_reload_fixed" / "summary.json"  # 1.67× faster: those fixed, compute-bound (low) new
LINE = re.compile(r"::(?P<command>[a-z]+)(?: (?P<properties>[^:]*))?::(?P<message>.*)")


def unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def parse(output: str) -> list[tuple[str, dict[str, str], str]]:
    """(command, properties, message) of each line, unescaped as GitHub's runner does; a line that is no
    workflow command fails the test."""
    parsed = []
    for line in output.splitlines():
        match = LINE.fullmatch(line)
        assert match, f"not a workflow command: {line!r}"
        properties = {}
        for pair in filter(None, (match["properties"] or "").split(",")):
            key, _, value = pair.partition("=")
            properties[key] = unescape_data(value.replace("%3A", ":").replace("%2C", ","))
        parsed.append((match["command"], properties, unescape_data(match["message"])))
    return parsed


def analysis_of(path, tmp_path) -> dict:
    out = tmp_path / "analysis-of-test.json"
    assert main(["report", str(path), "-o", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    return data


def test_escaping_round_trips_every_special_character():
    tricky = "100 %: a, b\r\nnext line %0A not a newline ::error::"
    line = command("error", tricky, {"file": "a,b:c%d\ne.json", "title": "x: y, z"})
    assert "\n" not in line and "\r" not in line
    assert parse(line) == [("error", {"file": "a,b:c%d\ne.json", "title": "x: y, z"}, tricky)]


def test_report_annotates_every_finding_with_its_file_and_level(tmp_path, monkeypatch, capsys):
    odd = tmp_path / "odd, name: 100%" / "summary.json"  # a path with every property character
    odd.parent.mkdir()
    shutil.copy(BEFORE, odd)
    monkeypatch.chdir(tmp_path)
    given = "odd, name: 100%/summary.json"
    findings = analysis_of(given, tmp_path)["findings"]
    assert main(["report", given, "--format", "github", "--quiet"]) == 0
    annotations = parse(capsys.readouterr().out)
    levels = {"critical": "error", "high": "error", "medium": "warning", "low": "notice", "info": "notice"}
    assert [a[0] for a in annotations] == [levels[f["severity"]] for f in findings]
    for (_, properties, message), finding in zip(annotations, findings, strict=True):
        assert properties["file"] == given
        assert properties["title"] == f"advisor neuron/{finding['name']} ({finding['severity']}): {finding['title']}"
        assert message == f"{finding['message']}\nRecommendation: {finding['recommendation']}"


def test_report_annotates_only_findings_at_or_above_fail_on(tmp_path, capsys):
    out = tmp_path / "annotations.txt"
    assert main(["report", str(BEFORE), "--format", "github", "--fail-on", "high", "-o", str(out), "--quiet"]) == 1
    annotations = parse(out.read_text(encoding="utf-8"))
    assert [(a[0], a[1]["title"].split(" ")[1]) for a in annotations] == [("error", "neuron/weight-reload")]
    assert capsys.readouterr().out == ""  # -o: nothing on stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["annotations.txt"]


def test_compare_annotates_gates_fixed_and_new_findings(capsys):
    assert main(["compare", str(AFTER), str(BEFORE), "--fail-on-regression", "5", "--fail-on-new", "high",
                 "--format", "github", "--quiet"]) == 1
    annotations = parse(capsys.readouterr().out)
    errors = [a for a in annotations if a[0] == "error"]
    assert [a[1]["title"] for a in errors] == ["advisor compare: regression gate failed",
                                               "advisor compare: new findings gate failed"]
    assert errors[0][2].startswith("total time +66.7 % (") and errors[0][2].endswith("more than 5 %")
    assert errors[1][2] == "new finding(s) at or above high: weight-reload (high)"
    assert all(a[1]["file"] == str(BEFORE) for a in annotations)  # the last input, as given
    assert [a[1]["title"] for a in annotations if a[0] == "notice"] == ["advisor compare: fixed compute-bound (low)"]
    warned = [a[1]["title"] for a in annotations if a[0] == "warning"]  # new, and not already a gate's error
    assert warned == ["advisor compare: new finding memory-bound (medium)",
                      "advisor compare: new finding low-tensor-engine-utilization (medium)"]


def test_compare_that_passes_annotates_no_error(capsys):
    assert main(["compare", str(BEFORE), str(AFTER), "--fail-on-regression", "5", "--format", "github",
                 "--quiet"]) == 0
    annotations = parse(capsys.readouterr().out)
    assert {a[0] for a in annotations} == {"notice", "warning"}
    assert len([a for a in annotations if a[0] == "notice"]) == 3  # the three fixed findings


def suite(path) -> ET.Element:
    root = ET.parse(path).getroot()  # well-formed, or this raises
    assert root.tag == "testsuites"
    (only,) = root.findall("testsuite")
    for key in ("tests", "failures", "errors", "skipped"):
        assert root.get(key) == only.get(key)
    cases = only.findall("testcase")
    assert int(only.get("tests")) == len(cases)
    assert int(only.get("failures")) == sum(c.find("failure") is not None for c in cases)
    assert int(only.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
    return only


@pytest.mark.parametrize(("inputs", "options", "failed", "skipped", "code"), [
    ((AFTER, BEFORE), ["--fail-on-regression", "5", "--fail-on-new", "high"], ["regression", "new"], [], 1),
    ((AFTER, BEFORE), ["--fail-on-regression", "80"], [], ["new"], 0),
    ((BEFORE, AFTER), ["--fail-on-regression", "5", "--fail-on-new", "low"], ["new"], [], 1),
    ((BEFORE, AFTER), [], [], ["regression", "new"], 0),
])
def test_compare_junit_has_one_case_per_gate(tmp_path, inputs, options, failed, skipped, code):
    out = tmp_path / "gates.xml"  # .xml: JUnit without --format
    assert main(["compare", *map(str, inputs), *options, "-o", str(out), "--quiet"]) == code
    testsuite = suite(out)
    assert testsuite.get("name") == "advisor compare"
    cases = {c.get("name").split(" ")[0]: c for c in testsuite.findall("testcase")}
    assert sorted(cases) == ["new", "regression"]
    assert sorted(n for n, c in cases.items() if c.find("failure") is not None) == sorted(failed)
    assert sorted(n for n, c in cases.items() if c.find("skipped") is not None) == sorted(skipped)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gates.xml"]


def test_formats_a_command_cannot_write_are_usage_errors(tmp_path, capsys):
    for wrong in (["compare", str(BEFORE), str(AFTER), "--format", "sarif"], ["report", str(BEFORE), "--format",
                                                                             "junit"]):
        with pytest.raises(SystemExit) as stopped:  # argparse's choices: a usage error
            main(wrong)
        assert stopped.value.code == 2
    assert main(["compare", str(BEFORE), str(AFTER), "-o", str(tmp_path / "x.sarif")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert all(line.startswith("advisor: error: ") for line in err) and len(err) == 3
    assert not list(tmp_path.iterdir())


@pytest.fixture(scope="module")
def fleet_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ci-fleet")
    runs = folder / "runs"
    (runs / "good").mkdir(parents=True)
    shutil.copy(BEFORE, runs / "good" / "summary.json")
    (runs / "broken").mkdir()
    (runs / "broken" / "summary.json").write_text('{"summary": [{"total_time": "soon"', encoding="utf-8")
    main(["fleet", str(runs), "--store", str(folder / "store"), "--workers", "1", "--quiet"])
    return folder


def test_fleet_junit_fails_the_profiles_that_could_not_be_analysed(fleet_store):
    out = fleet_store / "fleet.xml"
    assert main(["fleet", "--store", str(fleet_store / "store"), "-o", str(out), "--quiet"]) == 0
    testsuite = suite(out)
    cases = {c.get("name"): c for c in testsuite.findall("testcase")}
    assert sorted(cases) == [str(fleet_store / "runs" / "broken" / "summary.json"),
                             str(fleet_store / "runs" / "good" / "summary.json")]
    assert cases[str(fleet_store / "runs" / "broken" / "summary.json")].find("failure") is not None
    good = cases[str(fleet_store / "runs" / "good" / "summary.json")]
    assert good.find("failure") is None and "neuron/weight-reload (high)" in good.find("system-out").text


def test_fleet_github_annotates_failures_and_findings(fleet_store, capsys):
    assert main(["fleet", "--store", str(fleet_store / "store"), "--format", "github", "--quiet"]) == 0
    annotations = parse(capsys.readouterr().out)
    broken = str(fleet_store / "runs" / "broken" / "summary.json")
    assert [a for a in annotations if a[0] == "error" and a[1]["file"] == broken]
    titles = {a[1]["title"] for a in annotations if a[1]["file"] == str(fleet_store / "runs" / "good" / "summary.json")}
    assert "advisor neuron/weight-reload (high)" in titles
