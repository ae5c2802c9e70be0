"""CI gates (advisor.gates): which findings trip a severity gate, and compare's regression and
new-finding gates, with the exact messages the command line prints after `advisor: gate: `."""

from dataclasses import replace
from types import SimpleNamespace

import pytest
from tests_support import SAMPLES

from advisor.api import analyze, compare_inputs
from advisor.comparing.diff import compare
from advisor.core.errors import AdvisorError
from advisor.gates import (
    compare_gates,
    findings_at_or_above,
    new_findings_gate,
    overall,
    regression_gate,
    severity_gate,
)

BEFORE = SAMPLES / "weight_reload" / "summary.json"
AFTER = SAMPLES / "weight_reload_fixed" / "summary.json"
SERIES = [SAMPLES / "weight_reload_series" / f"attempt_{i}.json" for i in (1, 2, 3)]


def finding(name, severity):
    return SimpleNamespace(name=name, severity=severity)


FINDINGS = [finding("weight-reload", "high"), finding("memory-bound", "medium"), finding("mfu-unavailable", "info"),
            finding("oom-risk", "critical")]


@pytest.fixture(scope="module")
def analyses():
    return analyze(BEFORE), analyze(AFTER)


@pytest.fixture(scope="module")
def faster(analyses):
    """weight_reload → weight_reload_fixed: 1.67× faster, compute-bound (low) new."""
    return compare(analyses[0], analyses[1], ("before", "after"))


@pytest.fixture(scope="module")
def slower(analyses):
    """The other way round: +66.7 % total time, three findings new."""
    return compare(analyses[1], analyses[0], ("fixed", "reloading"))


@pytest.mark.parametrize(("severity", "names"), [
    ("info", ["weight-reload", "memory-bound", "mfu-unavailable", "oom-risk"]),
    ("low", ["weight-reload", "memory-bound", "oom-risk"]),
    ("medium", ["weight-reload", "memory-bound", "oom-risk"]),
    ("high", ["weight-reload", "oom-risk"]),
    ("critical", ["oom-risk"]),
])
def test_findings_at_or_above_keeps_order(severity, names):
    assert [f.name for f in findings_at_or_above(FINDINGS, severity)] == names


def test_findings_at_or_above_nothing_and_unknown_severity():
    assert findings_at_or_above([], "info") == []
    assert findings_at_or_above([finding("a", "low")], "medium") == []
    with pytest.raises(AdvisorError, match=r"unknown severity 'hihg'; did you mean 'high'\?; known: info, low, "
                                           r"medium, high, critical"):
        findings_at_or_above(FINDINGS, "hihg")


def test_severity_gate_messages():
    assert severity_gate(FINDINGS, "high") == [
        "2 finding(s) at or above high: weight-reload (high), oom-risk (critical)"]
    assert severity_gate(FINDINGS[:3], "critical") == []
    assert severity_gate(FINDINGS, None) == []  # no gate asked for


def test_severity_gate_on_a_real_analysis(analyses):
    assert severity_gate(analyses[0].findings, "high") == ["1 finding(s) at or above high: weight-reload (high)"]
    assert severity_gate(analyses[1].findings, "medium") == []  # the fixed kernel: compute-bound (low) only


def test_regression_gate(faster, slower):
    assert regression_gate(faster, 5) == []  # faster passes any threshold
    assert regression_gate(faster, 0) == []
    assert regression_gate(slower, 5) == ["total time +66.7 % (fixed → reloading), more than 5 %"]
    assert regression_gate(slower, 66.6) == ["total time +66.7 % (fixed → reloading), more than 66.6 %"]
    assert regression_gate(slower, 70) == []  # within the allowance
    assert regression_gate(slower, None) == []  # no gate asked for


def test_regression_gate_at_exactly_the_threshold_passes(faster):
    exactly = replace(faster, speedup=1 / 1.05)  # 5 % slower
    assert regression_gate(exactly, 5) == []  # 1.05 / 1 - 1 is 0.05000000000000004 in floats
    assert regression_gate(exactly, 4.9) == ["total time +5.0 % (before → after), more than 4.9 %"]


def test_regression_gate_refuses_to_judge_without_total_time(faster):
    with pytest.raises(AdvisorError) as caught:
        regression_gate(replace(faster, speedup=None), 5)
    assert (caught.value.where, caught.value.problem) == (
        "--fail-on-regression", "total time is unavailable for before or after, so a regression cannot be judged")
    assert regression_gate(replace(faster, speedup=None), None) == []  # only when the gate is asked for


def test_new_findings_gate(faster, slower):
    assert new_findings_gate(slower, "high") == ["new finding(s) at or above high: weight-reload (high)"]
    assert new_findings_gate(slower, "medium") == [
        "new finding(s) at or above medium: weight-reload (high), memory-bound (medium), "
        "low-tensor-engine-utilization (medium)"]
    assert new_findings_gate(slower, "critical") == []
    assert new_findings_gate(faster, "info") == ["new finding(s) at or above info: compute-bound (low)"]
    assert new_findings_gate(faster, "medium") == []  # weight-reload is fixed, not new
    assert new_findings_gate(faster, None) == []


def test_compare_gates_in_order(slower, faster):
    assert compare_gates(slower, 5, "high") == ["total time +66.7 % (fixed → reloading), more than 5 %",
                                                "new finding(s) at or above high: weight-reload (high)"]
    assert compare_gates(faster, 5, "high") == []
    assert compare_gates(slower) == []


def test_series_gates_judge_first_against_last():
    series = compare_inputs(SERIES, ["a1", "a2", "a3"])
    assert overall(series) is series.overall
    assert compare_gates(series, 0, "info") == ["new finding(s) at or above info: compute-bound (low)"]
    backwards = compare_inputs(SERIES[::-1], ["a3", "a2", "a1"])
    assert compare_gates(backwards, 10, "high") == ["total time +66.7 % (a3 → a1), more than 10 %",
                                                    "new finding(s) at or above high: weight-reload (high)"]
