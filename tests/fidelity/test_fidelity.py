"""The real-trace fidelity suite (tests/fidelity/run.py): no real trace grades below its entry in baseline.yaml,
docs/fidelity.md is the runner's output, and every expectation is well formed; plus the grader's own rules,
checked on made-up analyses (no trace needed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

HERE = Path(__file__).resolve().parent


def _load_runner():
    spec = importlib.util.spec_from_file_location("fidelity_run", HERE / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


run = _load_runner()
needs_reference = pytest.mark.skipif(not run.REFERENCE.is_dir(),
                                     reason=f"the shared real traces are not at {run.REFERENCE}")


@pytest.fixture(scope="module")
def results():
    return run.run()  # every trace analysed once (a few seconds in all)


@needs_reference
def test_every_expectation_is_well_formed_and_its_trace_is_there():
    names = run.torch_rule_names()
    problems = {}
    for path in run.expectation_files():
        exp = run.load(path)
        errors = run.check_expectation(exp, names)
        if exp.get("trace") and not (run.REFERENCE / exp["trace"]).exists():
            errors.append(f"no trace at {run.REFERENCE / exp['trace']}")
        if errors:
            problems[path.name] = errors
    assert run.expectation_files(), "no expectations under tests/fidelity/expectations"
    assert not problems, problems


@needs_reference
def test_no_trace_grades_below_its_baseline(results):
    baseline = run.read_baseline()
    graded = {r.name: r for r in results}
    missing = sorted(set(graded) - set(baseline))
    stale = sorted(set(baseline) - set(graded))
    assert not missing, f"traces without a baseline grade (add them to {run.BASELINE.name}): {missing}"
    assert not stale, f"baseline entries without an expectation or a trace: {stale}"
    worse = {name: f"{baseline[name]} -> {r.grade}: {'; '.join(r.problems)}" for name, r in graded.items()
             if run.GRADES.index(r.grade) < run.GRADES.index(baseline[name])}
    assert not worse, f"traces graded below their baseline: {worse}"


@needs_reference
def test_the_scoreboard_document_is_up_to_date(results):
    assert run.DOC.exists(), "docs/fidelity.md is missing: python -m tests.fidelity.run --write docs/fidelity.md"
    assert run.DOC.read_text(encoding="utf-8") == run.render(results), (
        "docs/fidelity.md is out of date: python -m tests.fidelity.run --write docs/fidelity.md")


# ------------------------------------------------------------------ the grader's rules, on made-up analyses


def finding(name, severity="high", root_cause=True, estimate=None, text="", explains=()):
    return SimpleNamespace(name=name, severity=severity, root_cause=root_cause, estimated_speedup=estimate,
                           title=name, message=text, recommendation="", root_cause_text="", explains=explains)


def analysis(*findings, **metrics):
    return SimpleNamespace(findings=findings,
                           metrics={k: SimpleNamespace(value=v) for k, v in metrics.items()})


EXPECTED = {"trace": "x.json.gz", "verdict": "host-bound", "why": "because",
            "acceptable_root_causes": ["host-bound"],
            "must_not_fire": [{"rule": "launch-overhead", "reason": "kernels outlast their launches"},
                              {"rule": "warm-up-dominated", "reason": "steady steps", "as_root_cause_only": True}],
            "max_estimate": {"host-bound": 0.5},
            "figures": {"device_busy_fraction": {"value": 0.25, "tolerance": 0.01},
                        "kernel_count": {"value": None}}}


def test_an_acceptable_verdict_with_nothing_violated_is_right():
    got = run.grade("t", EXPECTED, analysis(finding("host-bound", estimate=0.4), finding("trace-coverage", "info"),
                                            device_busy_fraction=0.255, kernel_count=None))
    assert (got.grade, got.problems, got.top) == ("right", [], "host-bound")


def test_a_violation_beside_an_acceptable_verdict_is_partly():
    cases = [
        analysis(finding("host-bound", estimate=0.6), device_busy_fraction=0.25),  # estimate above its bound
        analysis(finding("host-bound", estimate=0.4), finding("launch-overhead", root_cause=False),
                 device_busy_fraction=0.25),  # must not fire, even as a symptom
        analysis(finding("host-bound", estimate=0.4), device_busy_fraction=0.3),  # a figure out of tolerance
        analysis(finding("host-bound", estimate=0.4), device_busy_fraction=0.25, kernel_count=12),  # not unavailable
        analysis(finding("host-bound", estimate=0.4), finding("memory-ops-dominant", estimate=-0.1),
                 device_busy_fraction=0.25),  # a negative estimate
        analysis(finding("host-bound", estimate=0.0), device_busy_fraction=0.25),  # a 0 % verdict
        analysis(finding("host-bound", estimate=0.4)),  # a figure not reported
    ]
    for case in cases:
        got = run.grade("t", EXPECTED, case)
        assert got.grade == "partly" and len(got.problems) == 1, got


def test_an_acceptable_cause_ranked_second_is_partly_and_anything_else_wrong():
    second = run.grade("t", EXPECTED, analysis(finding("sync-in-step", estimate=0.3),
                                               finding("host-bound", estimate=0.2), device_busy_fraction=0.25))
    assert second.grade == "partly" and "only second" in second.problems[0]
    wrong = run.grade("t", EXPECTED, analysis(finding("sync-in-step", estimate=0.3), device_busy_fraction=0.25))
    assert wrong.grade == "wrong"
    nothing = run.grade("t", EXPECTED, analysis(finding("trace-coverage", "info"), device_busy_fraction=0.25))
    assert nothing.grade == "wrong" and nothing.top is None


def test_none_is_right_only_when_nothing_above_info_fires():
    exp = {**EXPECTED, "acceptable_root_causes": ["none"], "max_estimate": {}, "figures": {}}
    assert run.grade("t", exp, analysis(finding("trace-coverage", "info"))).grade == "right"
    assert run.grade("t", exp, analysis(finding("host-bound", estimate=0.2))).grade == "wrong"


def test_a_symptom_may_fire_when_only_its_root_cause_role_is_forbidden():
    exp = {**EXPECTED, "acceptable_root_causes": ["host-bound"], "figures": {}}
    as_symptom = analysis(finding("host-bound", estimate=0.4), finding("warm-up-dominated", root_cause=False))
    assert run.grade("t", exp, as_symptom).grade == "right"
    exp = {**exp, "acceptable_root_causes": ["warm-up-dominated", "host-bound"]}
    as_cause = analysis(finding("warm-up-dominated"), finding("host-bound", estimate=0.4))
    assert run.grade("t", exp, as_cause).grade == "partly"


def test_another_vendors_words_are_flagged_whatever_the_severity():
    exp = {**EXPECTED, "figures": {}, "must_not_say": ["CUDA"]}
    said = analysis(finding("host-bound", estimate=0.4), finding("trace-coverage", "info", text="use CUDA graphs"))
    got = run.grade("t", exp, said)
    assert got.grade == "partly" and "'CUDA'" in got.problems[0]
    quiet = analysis(finding("host-bound", estimate=0.4), finding("trace-coverage", "info", text="torch.cuda is fine"))
    assert run.grade("t", exp, quiet).grade == "right"


def test_the_expectation_checker_names_what_is_wrong():
    names = {"host-bound", "launch-overhead", "warm-up-dominated"}
    assert run.check_expectation(EXPECTED, names) == []
    bad = {**EXPECTED, "acceptable_root_causes": ["host-bond"], "max_estimate": {"host-bound": 1.5},
           "figures": {"total_time": {"value": 1.0}}, "extra": 1}
    errors = run.check_expectation(bad, names)
    assert len(errors) == 4 and any("host-bond" in e for e in errors), errors
