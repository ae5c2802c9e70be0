"""advisor compare: before/after, rule-level diff, series and the CI gate."""

import json

import pytest
from conftest import run_cli
from tests_support import SAMPLES

from advisor.api import analyze, compare_inputs, default_labels
from advisor.comparing.diff import compare
from advisor.core.comparison import Series
from advisor.inputs.limits import saved_analysis_limit

BEFORE = SAMPLES / "weight_reload" / "summary.json"
AFTER = SAMPLES / "weight_reload_fixed" / "summary.json"


def test_speedup_and_rule_diff():
    c = compare(analyze(BEFORE), analyze(AFTER))
    assert c.speedup == pytest.approx(0.40625033 / 0.243750198, rel=1e-6)
    status = {f.name: f.status for f in c.findings}
    assert status["weight-reload"] == "fixed"
    assert status["compute-bound"] == "new"
    assert c.root_cause_before[0] == "weight-reload" and c.root_cause_after[0] == "compute-bound"
    assert c.warnings == ()


def test_metric_verdicts_follow_direction_and_noise():
    c = compare(analyze(BEFORE), analyze(AFTER))
    assert c.metrics["total_time"].verdict == "better"
    assert c.metrics["total_time"].change == pytest.approx(-0.4, abs=1e-3)
    assert c.metrics["weight_reload_ratio"].verdict == "better"
    assert c.metrics["hardware_flops"].verdict == "unchanged"
    assert c.metrics["mbu_estimated_percent"].verdict == "n/a"  # no direction of goodness
    reverse = compare(analyze(AFTER), analyze(BEFORE))
    assert reverse.metrics["total_time"].verdict == "worse"
    assert compare(analyze(BEFORE), analyze(AFTER), noise=0.5).metrics["total_time"].verdict == "unchanged"


def test_persisting_findings_carry_both_sides():
    c = compare(analyze(BEFORE), analyze(SAMPLES / "matmul_fragmented_dma" / "summary.json"))
    persisting = [f for f in c.findings if f.status == "persisting"]
    assert persisting and all(f.before and f.after for f in persisting)


def test_comparability_warnings():
    c = compare(analyze(BEFORE), analyze(SAMPLES / "sbuf_spill" / "summary.json"))
    text = " ".join(c.warnings)
    assert "Different hardware: trn1 → trn2" in text and "Different instance types" in text


def test_series():
    paths = [BEFORE, SAMPLES / "matmul_fragmented_dma" / "summary.json", AFTER]
    result = compare_inputs(paths, default_labels(paths))
    assert isinstance(result, Series)
    assert len(result.steps) == 2
    assert result.overall.before.label == "weight_reload/summary"
    assert result.overall.after.label == "weight_reload_fixed/summary"


def test_default_labels():
    assert default_labels([BEFORE, AFTER]) == ["weight_reload/summary", "weight_reload_fixed/summary"]
    assert default_labels([SAMPLES / "a.json", SAMPLES / "b.json"]) == ["a", "b"]


def test_cli_pair_markdown_and_json(tmp_path):
    done = run_cli("compare", BEFORE, AFTER, "-o", tmp_path / "diff.md")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "diff.md").read_text()
    assert "**weight_reload_fixed/summary is 1.67× faster**" in text
    assert "The bottleneck moved from `weight-reload` to `compute-bound`." in text
    assert "](diff_files/compare-engines-" in text
    done = run_cli("compare", BEFORE, AFTER, "-o", tmp_path / "diff.json")
    data = json.loads((tmp_path / "diff.json").read_text())
    assert data["schema_version"] == 2 and data["speedup"] == pytest.approx(1.6667, abs=1e-3)
    assert "weight-reload" in data["findings"]["fixed"]
    assert data["metrics"]["total_time"]["verdict"] == "better"
    assert data["root_cause"] == {"before": ["weight-reload"],
                                  "after": ["compute-bound"]}
    assert data["before"]["label"] == "weight_reload/summary"


def test_cli_regression_gate(tmp_path):
    forward = run_cli("compare", BEFORE, AFTER, "--fail-on-regression", "5", "-o", tmp_path / "a.md")
    assert forward.returncode == 0
    backward = run_cli("compare", AFTER, BEFORE, "--fail-on-regression", "5", "-o", tmp_path / "b.md")
    assert backward.returncode == 1
    assert "advisor: gate: total time +66.7 %" in backward.stderr
    assert (tmp_path / "b.md").exists()  # the report is written, then the gate fails


def test_cli_new_finding_gate(tmp_path):
    done = run_cli("compare", AFTER, BEFORE, "--fail-on-new", "high")
    assert done.returncode == 1 and "weight-reload (high)" in done.stderr
    assert run_cli("compare", AFTER, BEFORE, "--fail-on-new", "critical").returncode == 0


def test_saved_analysis_against_fresh_profile(tmp_path):
    saved = tmp_path / "baseline.json"
    assert run_cli("report", BEFORE, "-o", saved).returncode == 0
    done = run_cli("compare", saved, AFTER, "-o", tmp_path / "diff.json")
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "diff.json").read_text())
    assert data["before"]["source"]["path"] == str(BEFORE)  # the original profile, from the saved analysis
    assert "weight-reload" in data["findings"]["fixed"]


SERIES = [SAMPLES / "weight_reload_series" / f"attempt_{i}.json" for i in (1, 2, 3)]


def test_cli_series_renders_chart(tmp_path):
    done = run_cli("compare", *SERIES, "--label", "attempt 1", "--label", "attempt 2", "--label", "attempt 3",
                   "-o", tmp_path / "series.md")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "series.md").read_text()
    assert text.startswith("# Attempts: attempt 1 → attempt 2 → attempt 3")
    chart = next((tmp_path / "series_files").glob("series-*.png"))
    assert chart.read_bytes().startswith(b"\x89PNG") and f"](series_files/{chart.name})" in text
    data = json.loads(run_cli("compare", *SERIES, "--format", "json").stdout)
    assert [a["label"] for a in data["attempts"]] == ["attempt_1", "attempt_2", "attempt_3"]
    first, second = data["steps"]
    assert {"weight-reload", "memory-bound"} <= set(first["findings"]["persisting"])  # a partial fix
    assert "weight-reload" in second["findings"]["fixed"]
    assert data["overall"]["speedup"] == pytest.approx(1.6667, abs=1e-3)


@pytest.mark.parametrize(("args", "problem"), [
    (["compare", BEFORE], "at least two inputs"),
    (["compare", BEFORE, AFTER, "--label", "x"], "1 labels for 2 inputs"),
    (["compare", BEFORE, SAMPLES / "none.json"], "no such file"),
    (["compare", BEFORE, AFTER, "--format", "pdf"], "a PDF needs an output file"),
])
def test_cli_errors(args, problem):
    done = run_cli(*args)
    assert done.returncode == 2 and problem in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_regression_gate_refuses_to_judge_without_total_time(tmp_path):
    data = json.loads(BEFORE.read_text())
    data["total_time"] = 0
    broken = tmp_path / "t0.json"
    broken.write_text(json.dumps(data))
    done = run_cli("compare", broken, AFTER, "--fail-on-regression", "5", "-o", tmp_path / "d.md")
    assert done.returncode == 2 and "cannot be judged" in done.stderr
    assert not (tmp_path / "d.md").exists()


def test_an_analysis_saved_before_engines_were_grouped_still_loads(tmp_path):
    from advisor.core.serialize import read_if_analysis

    done = run_cli("report", SAMPLES / "legacy_trace" / "profile.json", "-o", tmp_path / "new.json")
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "new.json").read_text())
    engines = data["trace"].pop("engines")  # the earlier layout: busy seconds per timeline row
    data["trace"]["engine_busy"] = {e["title"]: e["busy"] for e in engines}
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = read_if_analysis(tmp_path / "old.json", *saved_analysis_limit())
    assert old is not None and old.trace is not None
    assert [(e.title, e.rows, e.engine) for e in old.trace.engines][:1] == [("Vector Engine", ("Vector Engine",), "")]


def test_a_breakdown_row_on_one_side_is_marked_with_the_side_it_is_on():
    """Issue 24 item 8 (mutation 13 of the review, "only before"/"only after" swapped, survived): a layer the
    change removed is "only before" with no after value, a new one "only after" with no before value."""
    from dataclasses import replace

    from advisor.api import analyze
    from advisor.comparing.diff import compare

    before = analyze(SAMPLES / "rbln_before_after" / "before.pb")
    assert before.trace is not None
    layers = before.trace.breakdown("layers")
    assert layers is not None
    (gone_key, gone_values), *kept = layers.rows
    new_row = ("a_new_layer", gone_values)
    changed = replace(layers, rows=(*kept, new_row), total_rows=None)
    after = replace(before, trace=replace(before.trace, breakdowns=tuple(
        changed if b.name == "layers" else b for b in before.trace.breakdowns)))
    rows = {r.key: r for b in compare(before, after).breakdowns if b.name == "layers" for r in b.rows}
    assert rows[gone_key].verdict == "only before" and rows[gone_key].after is None
    assert rows[gone_key].before is not None
    assert rows["a_new_layer"].verdict == "only after" and rows["a_new_layer"].before is None


def test_a_finding_the_other_side_could_not_evaluate_is_not_comparable_never_fixed():
    """Issue 36: one capture exported twice (details CSV, then a metrics-only CSV) read "Fixed: occupancy-limited-
    by-registers, latency-bound, issue-slots-underused", rules the second export could not evaluate."""
    from dataclasses import replace
    from pathlib import Path

    from advisor.api import analyze
    from advisor.comparing.diff import compare
    from advisor.core.model import RuleOutcome
    from advisor.report.compare_build import headline

    before = analyze(Path(__file__).resolve().parents[2] / "samples" / "ncu_before_after" / "before.csv")
    fired = {f.name for f in before.findings}
    unjudged = replace(before, findings=(), outcomes=tuple(
        RuleOutcome(o.name, "not_applicable" if o.name in fired else o.outcome) for o in before.outcomes))
    c = compare(before, unjudged)
    assert {f.status for f in c.findings} == {"not comparable"} and len(c.findings) == len(fired)
    text = " ".join(headline(c))
    assert "Fixed: none." in text and "Not comparable: " in text and "neither fixed nor new" in text
    # evaluated and passed on the other side: fixed
    passed = replace(unjudged, outcomes=tuple(RuleOutcome(o.name, "passed") for o in before.outcomes))
    assert {f.status for f in compare(before, passed).findings} == {"fixed"}
    assert {f.status for f in compare(passed, before).findings} == {"new"}
    assert {f.status for f in compare(unjudged, before).findings} == {"not comparable"}


def test_a_breakdown_compare_keeps_the_top_rows_its_kind_asks_for_largest_first():
    """compare.yaml's `top` cuts a long table's comparison to its largest rows (review 4 §4.4 X2: ignoring `top`
    was killed by a golden only). rbln_before_after has 58 layers a side; the comparison keeps the top 20."""
    from advisor.kinds import get as get_kind

    pair = SAMPLES / "rbln_before_after"
    before, after = analyze(pair / "before.pb"), analyze(pair / "after.pb")
    top = next(s["top"] for s in get_kind("rbln").data("compare.yaml")["breakdowns"] if s["name"] == "layers")
    old, new = (b.trace.breakdown("layers") if b.trace else None for b in (before, after))
    assert old is not None and new is not None
    sides = (old, new)
    assert min(len(s.rows) for s in sides) > top
    largest: dict[str, float] = {}
    for side in sides:
        for key, _ in side.rows:
            largest[key] = max(largest.get(key, 0.0), side.value(key, "time") or 0.0)
    layers = next(b for b in compare(before, after).breakdowns if b.name == "layers")
    assert len(layers.rows) == top
    assert [max(r.before or 0.0, r.after or 0.0) for r in layers.rows] == sorted(largest.values(), reverse=True)[:top]
