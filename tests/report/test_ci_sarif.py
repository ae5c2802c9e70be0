"""`advisor report --format sarif` (issue 37): SARIF 2.1.0 that validates against the official OASIS schema
(tests/fixtures/sarif-schema-2.1.0.json, vendored byte for byte), one result per finding with the qualified
rule name, the level from the severity and the profile as the artifact, as given."""

from __future__ import annotations

import json
import shutil

import pytest
from jsonschema import Draft202012Validator
from tests_support import FIXTURES, SAMPLES

from advisor.cli import main
from advisor.report.sarif import LEVELS, artifact_uri

SCHEMA = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
CASES = {  # a profile of each kind that fires findings of several severities
    "neuron": SAMPLES / "weight_reload" / "summary.json",
    "ncu": SAMPLES / "ncu_seed004" / "output.txt",
    "torch": SAMPLES / "torch_host_bound",
}


def test_the_vendored_schema_is_the_official_2_1_0_one():
    assert SCHEMA["$id"] == "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]
    Draft202012Validator.check_schema({k: v for k, v in SCHEMA.items() if k != "definitions"})


@pytest.fixture
def sarif(tmp_path, monkeypatch):
    """`advisor report SAMPLE -o findings.sarif` run from a folder holding a copy of the sample, by a relative
    path: the log and the analysis JSON of the same run."""
    monkeypatch.chdir(tmp_path)

    def run(kind: str) -> tuple[dict, dict, str]:
        source = CASES[kind]
        copied = tmp_path / "profiles" / kind / source.name
        if source.is_dir():
            shutil.copytree(source, copied)
        else:
            copied.parent.mkdir(parents=True)
            shutil.copy(source, copied)
        given = f"profiles/{kind}/{source.name}"
        assert main(["report", given, "-o", "findings.sarif", "--quiet"]) == 0
        assert main(["report", given, "-o", "analysis.json", "--quiet"]) == 0
        return (json.loads((tmp_path / "findings.sarif").read_text(encoding="utf-8")),
                json.loads((tmp_path / "analysis.json").read_text(encoding="utf-8")), given)

    return run


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_log_validates_and_has_one_result_per_finding(sarif, kind):
    log, analysis, given = sarif(kind)
    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "advisor" and driver["version"] == analysis["advisor_version"]
    findings = analysis["findings"]
    assert findings, f"the {kind} sample fires no finding"
    assert [r["ruleId"] for r in run["results"]] == [f"{kind}/{f['name']}" for f in findings]
    assert [r["message"]["text"] for r in run["results"]] == [f["message"] for f in findings]
    assert [r["level"] for r in run["results"]] == [LEVELS[f["severity"]] for f in findings]
    for result, finding in zip(run["results"], findings, strict=True):
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == given  # relative, as given
        assert result["properties"]["estimated_speedup"] == finding["estimated_speedup"]
        assert result["properties"]["root_cause"] is finding["root_cause"]
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_every_rule_that_fired_is_described_with_its_help(sarif, kind):
    log, analysis, _ = sarif(kind)
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert sorted(rules) == sorted({f"{kind}/{f['name']}" for f in analysis["findings"]})
    for finding in analysis["findings"]:
        rule = rules[f"{kind}/{finding['name']}"]
        assert rule["name"] == finding["name"] and rule["shortDescription"]["text"] == finding["title"]
        assert finding["recommendation"] in rule["help"]["text"]
        assert rule["properties"]["severity"] == finding["severity"]
        assert rule["properties"]["category"] == finding["category"]
        page = f"docs/rules/{finding['pack']}/{finding['name']}.md"
        assert rule["helpUri"] == page and (SAMPLES.parent / page).is_file()  # relative to the repository's root


def test_levels_follow_the_severity():
    assert LEVELS == {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}


def test_artifact_uris_are_uri_references():
    assert artifact_uri("profiles/a b/summary.json") == "profiles/a%20b/summary.json"
    assert artifact_uri("c:odd/x.json") == "c%3Aodd/x.json"  # never read as a scheme
    assert artifact_uri("/abs/p q.json") == "file:///abs/p%20q.json"


def test_sarif_from_the_extension_and_the_flag_alike(tmp_path, capsys):
    profile = SAMPLES / "weight_reload" / "summary.json"
    assert main(["report", str(profile), "-o", str(tmp_path / "a.sarif"), "--quiet"]) == 0
    assert main(["report", str(profile), "--format", "sarif", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed) == json.loads((tmp_path / "a.sarif").read_text(encoding="utf-8"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sarif"]  # only the asked path


def test_a_format_that_contradicts_the_extension_is_refused_before_any_work(tmp_path, capsys):
    profile = SAMPLES / "weight_reload" / "summary.json"
    assert main(["report", str(profile), "--format", "sarif", "-o", str(tmp_path / "a.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"advisor: error: {tmp_path / 'a.md'}: --format sarif does not match") and not list(
        tmp_path.iterdir())


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "summary.json"
    bad.write_text("{ not json", encoding="utf-8")
    assert main(["report", str(bad), "-o", str(tmp_path / "f.sarif")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"advisor: error: {bad}: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]
