"""Issue 22 §3 and §5, checklist: no silent weakening. The settings an analysis ran with are recorded,
shown and compared; what --ignore hid is said; compare's gates cannot be switched off by odd numbers.
Every test here was a reproduced defect, or a promise the fix rests on."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tests_support import FIXTURES, SAMPLES

from advisor.api import AnalyzeOptions, analyze, compare_inputs
from advisor.cli import main
from advisor.comparing.diff import compare
from advisor.core import serialize
from advisor.core.errors import AdvisorError
from advisor.engine.evaluate import Selection
from advisor.gates import compare_gates, regression_gate
from advisor.inputs.limits import saved_analysis_limit

WEIGHT_RELOAD = SAMPLES / "weight_reload" / "summary.json"  # weight-reload requires memory-bound, which explains
FIXED = SAMPLES / "weight_reload_fixed" / "summary.json"  # low-tensor-engine-utilization


def _saved(tmp_path: Path, name: str, *args: str, source: Path = WEIGHT_RELOAD) -> Path:
    path = tmp_path / name
    assert main(["report", str(source), "-o", str(path), "--quiet", *args]) == 0
    return path


def test_settings_are_recorded_in_the_analysis_json(tmp_path, monkeypatch):
    """§3 settings recorded: --select, --ignore, --set, --hardware and the settings file are in `settings`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "advisor.toml").write_text('ignore = ["dma-wait"]\n')
    path = _saved(tmp_path, "a.json", "--ignore", "memory-bound", "--set", "weight-reload.min_ratio=4",
                  "--hardware", "trn1", "--select", "memory,roofline")
    settings = json.loads(path.read_text())["settings"]
    assert settings["select"] == ["memory", "roofline"]
    assert settings["ignore"] == ["dma-wait", "memory-bound"]
    assert settings["set"] == {"weight-reload.min_ratio": 4.0}
    assert settings["hardware"] == "trn1"
    assert settings["config"] == str(tmp_path / "advisor.toml")
    saved = serialize.read_if_analysis(path, *saved_analysis_limit())
    assert json.loads(path.read_text())["packs"] == {"neuron": saved.packs["neuron"]}


def test_settings_are_shown_in_the_setup_table(tmp_path):
    """§3 settings shown: the report's setup table says what the rules ran with, defaults included."""
    report = tmp_path / "r.md"
    assert main(["report", str(WEIGHT_RELOAD), "-o", str(report), "--ignore", "dma-wait",
                 "--set", "weight-reload.min_ratio=4"]) == 0
    assert "| Settings | --ignore `dma-wait`; --set `weight-reload.min_ratio=4` |" in report.read_text()
    assert main(["report", str(WEIGHT_RELOAD), "-o", str(report)]) == 0
    assert "| Settings | defaults (no --select, --ignore, --set, --hardware or settings file) |" in report.read_text()


def test_ignoring_a_parent_says_what_it_hid(tmp_path):
    """§3 --ignore of a rule whose children fire: the report names the findings hidden and why
    (weight-reload requires memory-bound; memory-bound explains low-tensor-engine-utilization)."""
    analysis = analyze(WEIGHT_RELOAD, AnalyzeOptions(selection=Selection(ignore=("memory-bound",))))
    hidden = {h.name: h.reason for h in analysis.settings.hidden}
    assert hidden == {"weight-reload": "requires ignored rule memory-bound",
                      "low-tensor-engine-utilization": "shown as a root cause: ignored rule memory-bound explains it"}
    assert [f.name for f in analysis.findings] == ["low-tensor-engine-utilization"]
    report = tmp_path / "r.md"
    assert main(["report", str(WEIGHT_RELOAD), "--ignore", "memory-bound", "-o", str(report)]) == 0
    text = report.read_text()
    assert "## Hidden by --ignore" in text
    assert "| `weight-reload` | Weights are being reloaded from HBM | requires ignored rule memory-bound |" in text
    no_parent = analyze(WEIGHT_RELOAD, AnalyzeOptions(selection=Selection(ignore=("weight-reload",))))
    assert no_parent.settings.hidden == ()  # ignoring a leaf hides only its own finding


def test_compare_warns_about_different_settings(tmp_path, capsys):
    """§3 compare warns: two sides analysed with different settings get a warning line in the report."""
    before = _saved(tmp_path, "before.json")
    after = _saved(tmp_path, "after.json", "--ignore", "memory-bound", source=FIXED)
    out = tmp_path / "c.md"
    assert main(["compare", str(before), str(after), "-o", str(out)]) == 0
    assert ("- Different --ignore: none (before) → memory-bound (after); findings may differ because the settings "
            "did.") in out.read_text()
    same = _saved(tmp_path, "same.json", source=FIXED)
    result = compare_inputs([before, same], ["a", "b"])
    assert not [w for w in result.warnings if "settings" in w.lower() or "Different --" in w]


def test_old_analyses_have_unknown_settings(tmp_path):
    """§3: an analysis saved before settings were recorded still loads; its settings read as unknown in the
    setup table and in compare."""
    old = serialize.read_if_analysis(FIXTURES / "analysis_before_kinds.json", *saved_analysis_limit())
    assert old is not None and old.settings is None
    report = tmp_path / "r.md"
    assert main(["report", str(FIXTURES / "analysis_before_kinds.json"), "-o", str(report)]) == 0
    assert "| Settings | unknown (saved before advisor recorded them) |" in report.read_text()
    new = analyze(WEIGHT_RELOAD)
    warnings = compare(old, new, ("old", "new")).warnings
    assert any(w.startswith("Settings unknown for old") for w in warnings)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e309, -5.0, True])
def test_the_regression_gate_refuses_odd_allowances(value):
    """§3/§5 gates: --fail-on-regression NaN (tripped on every comparison), inf and 1e309 (never tripped)
    and negative values are refused by the API too, so a caller cannot switch the gate off."""
    result = compare(analyze(WEIGHT_RELOAD), analyze(FIXED))
    with pytest.raises(AdvisorError, match="must be a finite percentage, 0 or more"):
        regression_gate(result, value)
    assert regression_gate(result, 5.0) == []


@pytest.mark.parametrize("value", ["nan", "inf", "1e309", "-5"])
def test_the_regression_gate_refuses_odd_allowances_on_the_command_line(value, capsys):
    """§5 gates: `compare --fail-on-regression nan|inf|1e309|-5` is exit 2 with one line (it was exit 1 on
    every comparison for nan, and exit 0 always for inf and 1e309)."""
    with pytest.raises(SystemExit) as stopped:  # argparse refuses it, before anything is read
        main(["compare", str(WEIGHT_RELOAD), str(WEIGHT_RELOAD), f"--fail-on-regression={value}"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("advisor: error:") and "--fail-on-regression" in err


def test_compare_refuses_a_non_finite_noise():
    """§3 --noise through the API: a NaN or infinite noise floor is refused, not compared with."""
    a = analyze(WEIGHT_RELOAD)
    for noise in (math.nan, math.inf, -0.1, 1.5):
        with pytest.raises(AdvisorError, match="--noise: must be a percentage"):
            compare(a, a, noise=noise)


def test_an_unavailable_total_time_with_a_gate_is_exit_2(tmp_path, capsys):
    """§5: a gate on a comparison whose total time is unavailable on one side is exit 2 with one line,
    never a pass (exit 0)."""
    before = _saved(tmp_path, "before.json")
    data = json.loads(before.read_text())
    data["metrics"]["total_time"]["value"] = None
    after = tmp_path / "after.json"
    after.write_text(json.dumps(data))
    out = tmp_path / "c.md"
    assert main(["compare", str(before), str(after), "--fail-on-regression", "5", "-o", str(out)]) == 2
    assert capsys.readouterr().err.strip() == ("advisor: error: --fail-on-regression: total time is unavailable for "
                                               "before or after, so a regression cannot be judged")
    assert not out.exists()
    with pytest.raises(AdvisorError):
        compare_gates(compare_inputs([before, after], ["b", "a"]), fail_on_regression=0.0)


def test_severities_are_case_insensitive_in_gates():
    """§3: a severity in any case is the same severity (HIGH is high) in the API's gates too."""
    from advisor.gates import findings_at_or_above

    findings = analyze(WEIGHT_RELOAD).findings
    assert findings_at_or_above(findings, "HIGH") == findings_at_or_above(findings, "high") != []
