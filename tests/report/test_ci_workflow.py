"""The workflows of docs/ci.md, run as far as they go without GitHub or GitLab (issue 37): every advisor
command of their YAML blocks, in order, in a checkout laid out as they expect (the nightly profile and the
baseline analysis from bundled samples), with the installed console script as CI runs it."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import xml.etree.ElementTree as ET

import pytest
from conftest import run_cli
from jsonschema import Draft202012Validator
from tests_support import FIXTURES, ROOT, SAMPLES

DOC = ROOT / "docs" / "ci.md"
FAST = SAMPLES / "weight_reload_fixed" / "summary.json"  # 1.67× faster than SLOW, its high finding fixed
SLOW = SAMPLES / "weight_reload" / "summary.json"


def workflows() -> dict[str, list[str]]:
    """The advisor commands of each YAML block of docs/ci.md, by the block's first key (the workflow)."""
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    found = {}
    for block in blocks:
        name = block.split(":", 1)[0].strip()
        found[name] = [m.group(1).strip() for m in re.finditer(r"^\s*(?:-\s+)?(?:run:\s+)?(advisor .*)$", block, re.M)]
    return found


def test_the_doc_has_both_workflows_with_every_step():
    found = workflows()
    assert sorted(found) == ["name", "nightly-profile"]  # the GitHub workflow starts with `name:`
    github, gitlab = found["name"], found["nightly-profile"]
    assert any("-o reports/findings.pdf" in c for c in github) and any("-o reports/findings.sarif" in c for c in github)
    gate = "advisor compare baseline.json reports/analysis.json --fail-on-regression 5"
    assert any(c.startswith(gate) for c in github)
    assert any(c.endswith("-o reports/gates.xml") for c in gitlab)
    text = DOC.read_text(encoding="utf-8")
    assert "github/codeql-action/upload-sarif" in text and "actions/upload-artifact" in text
    assert "junit: reports/gates.xml" in text


def checkout(tmp_path, profile, baseline):
    """A checkout as the workflows expect it: the nightly profile, the committed baseline analysis."""
    (tmp_path / "profiles" / "nightly").mkdir(parents=True)
    shutil.copy(profile, tmp_path / "profiles" / "nightly" / "summary.json")
    done = run_cli("report", baseline, "-o", tmp_path / "baseline.json", "--quiet")
    assert done.returncode == 0, done.stderr
    (tmp_path / "reports").mkdir()  # the workflows' `mkdir -p reports`


def run(commands, tmp_path) -> list:
    return [run_cli(*shlex.split(c)[1:], cwd=tmp_path) for c in commands]


@pytest.mark.parametrize("workflow", ["name", "nightly-profile"])
def test_a_good_night_passes_every_step(tmp_path, workflow):
    checkout(tmp_path, FAST, SLOW)
    results = run(workflows()[workflow], tmp_path)
    for command, done in zip(workflows()[workflow], results, strict=True):
        assert done.returncode == 0, f"{command}: {done.stderr}"
        assert "advisor: error" not in done.stderr
    reports = tmp_path / "reports"
    assert (reports / "findings.pdf").read_bytes().startswith(b"%PDF")
    assert (reports / "findings.md").read_text(encoding="utf-8").strip()
    log = json.loads((reports / "findings.sarif").read_text(encoding="utf-8"))
    schema = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert not list(Draft202012Validator(schema).iter_errors(log))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert location == "profiles/nightly/summary.json"  # relative to the checkout, as code scanning wants it
    if workflow == "name":  # GitHub: the annotations of the report and of the passing gate
        assert all(line.startswith("::") for done in results[-2:] for line in done.stdout.splitlines())
        assert "::error" not in results[-1].stdout
    else:  # GitLab: the gates as JUnit, both passing
        suite = ET.parse(reports / "gates.xml").getroot().find("testsuite")
        assert suite.get("tests") == "2" and suite.get("failures") == "0"


@pytest.mark.parametrize("workflow", ["name", "nightly-profile"])
def test_a_regression_fails_the_gate_step_only(tmp_path, workflow):
    checkout(tmp_path, SLOW, FAST)  # tonight is 1.67× slower than the baseline, and weight-reload is back
    commands = workflows()[workflow]
    results = run(commands, tmp_path)
    for command, done in zip(commands, results, strict=True):
        gate = command.startswith("advisor compare")
        assert done.returncode == (1 if gate else 0), f"{command}: {done.stderr}"
    assert "advisor: gate: total time +66.7 %" in results[-1].stderr
    if workflow == "name":
        errors = [line for line in results[-1].stdout.splitlines() if line.startswith("::error")]
        assert len(errors) == 2  # the regression and the new high finding
    else:
        suite = ET.parse(tmp_path / "reports" / "gates.xml").getroot().find("testsuite")
        assert suite.get("failures") == "2"
