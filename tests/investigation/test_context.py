import pytest
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.core.errors import AdvisorError
from advisor.investigation.context import amdahl

MP2 = SAMPLES / "mp2_energy" / "summary.json"
CONTEXT = SAMPLES / "mp2_energy" / "investigation.yaml"


def with_context(path):
    return analyze(MP2, AnalyzeOptions(context=path)).investigation


def test_seed_002_amdahl_numbers():
    inv = with_context(CONTEXT)
    a = inv.amdahl
    assert a.changed == ("energy",)
    assert a.fraction == pytest.approx(2.83 / 8.03)
    assert a.step_speedup == pytest.approx(2.83 / 0.21)
    assert a.predicted == pytest.approx(1.48, abs=0.01)
    assert a.measured == pytest.approx(1.48, abs=0.01)
    assert a.ceiling == pytest.approx(1.54, abs=0.01)
    assert a.target == 3.0 and a.target_reachable is False and a.needed_step_speedup is None


def test_seed_002_expectation_and_hypotheses():
    inv = with_context(CONTEXT)
    [hbm] = inv.expectations
    assert hbm.metric == "hbm_read_bytes" and hbm.verdict == "matches"
    assert hbm.expected == 64 * 64 * 4 * 401408
    assert hbm.relative_difference < 0.001
    assert [h.verdict for h in inv.hypotheses] == ["falsified"] * 4
    assert inv.title == "_mp2_energy_kernel profile findings" and inv.tracker == "#33" and inv.date == "2026-04-15"


def test_reachable_target():
    a = amdahl({"a": 1.0, "b": 9.0}, {"a": 1.0, "b": 3.0}, target=2.0)
    assert a.fraction == pytest.approx(0.9)
    assert a.target_reachable is True
    # 1/2 = 0.1 + 0.9/s  ->  s = 2.25
    assert a.needed_step_speedup == pytest.approx(2.25)


def test_nothing_changed():
    a = amdahl({"a": 1.0}, {"a": 1.0}, None)
    assert a.changed == () and a.fraction == 0 and a.predicted == 1.0 and a.measured == 1.0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("workload:\n  baseline: {a: 1}\n  optimized: {b: 1}\n", "optimized has steps not in baseline: b"),
        ("workload:\n  baseline: {a: 1, b: 2}\n  optimized: {a: 1}\n", "baseline has steps not in optimized: b"),
        ("workload:\n  baseline: {a: fast}\n  optimized: {a: 1}\n", "must be a time in seconds"),
        ("workload:\n  baseline: {a: 1}\n  optimized: {a: 1}\n  target_speedup: 0.5\n", "above 1"),
        ("titel: x\n", "did you mean 'title'"),
        ("expectations:\n  hbm_raed_bytes: {expr: '1'}\n", "did you mean 'hbm_read_bytes'"),
        ("expectations:\n  hbm_read_bytes: {expr: '__import__(\"os\")'}\n", "only the functions"),
        ("hypotheses:\n  - {name: x, expect: 'dma_active_time_percent.real > 1'}\n", "attribute access"),
        ("hypotheses: [{name: x}]\n", "needs a name and an expect"),
        ("- a list\n", "must be a YAML mapping"),
        ("title: [unclosed\n", "invalid YAML"),
    ],
)
def test_bad_context_files(write, text, problem):
    with pytest.raises(AdvisorError) as info:
        with_context(write("ctx.yaml", text))
    assert problem in info.value.problem
    assert info.value.where.endswith("ctx.yaml")


def test_undecided_hypothesis(write):
    inv = with_context(write("ctx.yaml", "hypotheses:\n  - {name: spills, expect: 'spill_reload_bytes > 0'}\n"))
    assert inv.hypotheses[0].verdict == "undecided"


def test_context_schema_accepts_the_sample():
    import json
    from importlib import resources

    import jsonschema
    import yaml

    schema = json.loads((resources.files("advisor") / "data" / "context.schema.json").read_text())
    as_json = json.loads(json.dumps(yaml.safe_load(CONTEXT.read_text()), default=str))  # YAML dates -> text
    jsonschema.validate(as_json, schema)


@pytest.mark.parametrize(("text", "problem"), [
    ("workload:\n  baseline: {gemm: 5.2, energy: 0}\n  optimized: {gemm: 5.2, energy: 0.21}\n", "(> 0)"),
    ("hypotheses:\n  - {name: x, expect: 'dma_active_time_percent > 50'}\n", "did you mean 0.5?"),
])
def test_context_values_that_cannot_be_meant(write, text, problem):
    with pytest.raises(AdvisorError) as info:
        with_context(write("ctx.yaml", text))
    assert problem in " ".join(getattr(info.value, "problems", [info.value.problem]))


def test_next_steps_follow_the_amdahl_result():
    from advisor.report.findings import ranked_steps

    steps = ranked_steps(analyze(MP2, AnalyzeOptions(context=CONTEXT)))
    assert steps[0].startswith("Shorten the unchanged steps — gemm (5.2 s)")
    assert "must get 2.11× faster" in steps[0]
    # issue 36: the Vector Engine at its limit claims no gain (no waste shown), so its step names no workload share
    assert "(`vector-engine-bound`)" in steps[1] and "of the workload" not in steps[1]


def test_every_fraction_mistake_is_listed(write):
    from advisor.core.errors import Problems

    text = ("hypotheses:\n  - {name: a, expect: 'dma_active_time_percent > 1.5'}\n"
            "  - {name: b, expect: 'dma_active_time_percent >= 100'}\n"
            "  - {name: c, expect: 'dma_active_time_percent >= 250'}\n")
    with pytest.raises(Problems) as info:
        with_context(write("ctx.yaml", text))
    problems = info.value.problems
    assert len(problems) == 3
    assert "did you mean 0.015" in problems[0] and "did you mean 1?" in problems[1]
    assert "did you mean" not in problems[2]  # 250 is no percent: no guess


# --- values YAML recognises but no calendar or float holds ---------------------------------------------

@pytest.mark.parametrize(("text", "line", "problem"), [
    ("date: 2026-02-30\n", 1, "date: 2026-02-30 is not a valid date (day is out of range for month)"),
    ("title: t\ndate: 2026-13-01\n", 2, "date: 2026-13-01 is not a valid date (month must be in 1..12)"),
    ("date: 2026-04-15 25:00:00\n", 1, "date: 2026-04-15 25:00:00 is not a valid date (hour must be in 0..23)"),
    ("hypotheses:\n  - name: x\n    expect: total_time > 0\n    note: 2026-02-30\n", 4,
     "hypotheses[0].note: 2026-02-30 is not a valid date (day is out of range for month)"),
    ("workload:\n  target_speedup: " + "9" * 5000 + "\n", 2,
     "workload.target_speedup: " + "9" * 39 + "… is not a valid integer (too many digits)"),
])
def test_an_impossible_value_names_the_context_file_its_line_and_field(write, text, line, problem):
    """YAML reads `2026-02-30` as a date and Python cannot build it: that ValueError was an internal error
    blamed on the profile."""
    path = write("ctx.yaml", text)
    with pytest.raises(AdvisorError) as info:
        with_context(path)
    assert (info.value.where, info.value.problem) == (f"{path}:{line}", problem)


def test_an_impossible_date_in_quotes_is_refused_too(write):
    path = write("ctx.yaml", 'date: "2026-02-30"\n')
    with pytest.raises(AdvisorError) as info:
        with_context(path)
    assert (info.value.where, info.value.problem) == (str(path), "date: 2026-02-30 is not a valid date (day is out "
                                                                 "of range for month)")


def test_dates_a_calendar_holds_are_kept_as_written(write):
    assert with_context(write("ctx.yaml", "date: 2024-02-29\n")).date == "2024-02-29"
    assert with_context(write("ctx.yaml", "date: Q2 2026\n")).date == "Q2 2026"


def test_an_impossible_context_date_is_one_line_naming_the_context_file(tmp_path, capsys):
    from advisor.cli import main

    context = tmp_path / "ctx.yaml"
    context.write_text(CONTEXT.read_text().replace("date: 2026-04-15", "date: 2026-02-30"))
    assert main(["report", str(MP2), "--context", str(context), "-o", str(tmp_path / "r.md")]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"advisor: error: {context}:5: date: 2026-02-30 is not a valid date (day is out of "
                              "range for month)\n")
    assert not (tmp_path / "r.md").exists()


def test_step_times_whose_speedup_leaves_float_range_are_refused(write):
    """1e300 s against 1e-300 s made the step speedup infinite and the prediction a division by zero (an
    internal error blamed on the profile)."""
    path = write("ctx.yaml", "workload:\n  baseline: {a: 1.0e+300, b: 1}\n  optimized: {a: 1.0e-300, b: 1}\n")
    with pytest.raises(AdvisorError) as info:
        with_context(path)
    assert (info.value.where, info.value.problem) == (str(path), "workload.baseline.a must be a time in seconds "
                                                                 "(> 0) from 1e-15 to 1e+15, not 1e+300")
