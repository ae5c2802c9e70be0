"""Issue 22, section 3 (rule packs: no silent weakening), as a checklist.

- a pack metric or input whose name shadows a built-in one is refused, with file and line;
- a duplicate key in a YAML or JSON pack, at any level, is refused, with file and line;
- a metric cycle is refused, naming the cycle, file and line;
- an example naming an unknown metric is refused, with file and line;
- message templates go through a bounded formatter: width, precision and nesting are bounded, a bad
  spec is a validation error at load, and formatting at run time never blows up or raises.

Every refusal is checked through `advisor rules validate` (one `advisor: error:` line per problem,
exit 2, nothing written) and at load time (`load_packs`, as `advisor report --rules` loads them).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests_support import FIXTURES

from advisor.cli import main
from advisor.core.expr import compile_expression
from advisor.core.model import Metric
from advisor.engine.evaluate import evaluate
from advisor.packs.load import load_packs
from advisor.packs.message import MAX_PRECISION, MAX_WIDTH, check_spec, format_message, format_value
from advisor.packs.model import PackError

CORPUS = FIXTURES / "hostile_packs" / "issue22"
RULE = """
  - id: H001
    name: hostile-rule
    title: Hostile
    severity: high
    when: total_time > 1
    message: x
    recommendation: none
"""


def validate(capsys, path: Path) -> tuple[int, list[str]]:
    """`advisor rules validate PATH`: exit code and the error lines."""
    code = main(["rules", "validate", str(path)])
    err = capsys.readouterr().err
    return code, err.splitlines()


def refused(capsys, path: Path, expected: str) -> str:
    """The pack is refused by `rules validate` (exit 2, every line `advisor: error: FILE:LINE: ...`,
    one naming `expected`) and at load time; the matching line is returned."""
    code, lines = validate(capsys, path)
    assert code == 2, lines
    assert lines and all(line.startswith(f"advisor: error: {path}:") for line in lines), lines
    matching = [line for line in lines if expected in line]
    assert matching, lines
    with pytest.raises(PackError) as info:
        load_packs([path], kind="neuron")
    assert any(expected in p for p in info.value.problems)
    return matching[0]


def pack(tmp_path: Path, text: str, name: str = "org.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -------------------------------------------------------------------------- 1. shadowing built-ins


def test_metric_named_after_a_builtin_input_is_refused(capsys):
    """Item 3.1: an org metric `total_time` would change what every rule reads: refused with file:line."""
    path = CORPUS / "shadow_metric.yaml"
    line = refused(capsys, path, "metric 'total_time'")
    assert line.startswith(f"advisor: error: {path}:5: metric 'total_time' has the name of the built-in input ")
    assert "/inputs.yaml:" in line
    assert line.endswith("it would change what every rule reading it sees; choose another name")


def test_input_named_after_a_builtin_input_is_refused(capsys):
    """Item 3.1: an org input re-declaring `hbm_read_bytes` (with another unit) is refused."""
    path = CORPUS / "shadow_input.yaml"
    line = refused(capsys, path, "input 'hbm_read_bytes'")
    assert line.startswith(f"advisor: error: {path}:5: input 'hbm_read_bytes' has the name of the built-in input ")


def test_metric_named_after_a_builtin_metric_is_refused(tmp_path, capsys):
    """Item 3.1: a built-in derived metric (`hbm_read_bandwidth`) cannot be redefined either."""
    path = pack(tmp_path, "pack: org\nversion: 1\nmetrics:\n  - {name: hbm_read_bandwidth, expr: '1', "
                          "unit: bytes/s}\nrules:" + RULE)
    line = refused(capsys, path, "metric 'hbm_read_bandwidth'")
    assert f"{path}:4: metric 'hbm_read_bandwidth' has the name of the built-in metric " in line


def test_metric_named_after_a_hardware_figure_is_refused(tmp_path, capsys):
    """Item 3.1: a metric named like a hardware figure (`hw_hbm_bandwidth`) would replace the table's value."""
    path = pack(tmp_path, "pack: org\nversion: 1\nmetrics:\n  - {name: hw_hbm_bandwidth, expr: '1', "
                          "unit: bytes/s}\nrules:" + RULE)
    refused(capsys, path, "metric 'hw_hbm_bandwidth' has the name of a hardware figure")


def test_metric_named_after_a_profile_field_is_refused(tmp_path, capsys):
    """Item 3.1: a metric named after a field a kind reads from its profiles (Nsight Compute's
    `sm_active_cycles`) would be derived in place of the profile's own value when it is missing."""
    path = pack(tmp_path, "pack: org\nversion: 1\nmetrics:\n  - {name: sm_active_cycles, expr: '1', "
                          "unit: cycles}\nrules:" + RULE)
    refused(capsys, path, "metric 'sm_active_cycles'")


def test_two_org_packs_defining_one_metric_are_refused(tmp_path, capsys):
    """Item 3.1: the same metric in two packs: the last loaded would silently win."""
    first = pack(tmp_path, "pack: org-a\nversion: 1\nmetrics:\n  - {name: org_ratio, expr: '1', unit: ''}\n", "a.yaml")
    second = pack(tmp_path, "pack: org-b\nversion: 1\nmetrics:\n  - {name: org_ratio, expr: '2', unit: ''}\n",
                  "b.yaml")
    with pytest.raises(PackError) as info:
        load_packs([first, second])
    assert info.value.problems == [f"{second}:4: metric 'org_ratio' is already defined by pack org-a at {first}:4"]


def test_builtin_packs_are_not_flagged_against_themselves(capsys, tmp_path):
    """Item 3.1, the other side: the built-in packs (their inputs that are also metrics, the same
    `total_time` in every kind's pack) load for every kind, and an org pack may read built-in names,
    declare its own inputs and metrics, and derive one of its own inputs."""
    for kind in (None, "neuron", "ncu", "rbln"):
        load_packs(kind=kind)
    code, lines = validate(capsys, Path("rules/neuron"))
    assert (code, lines) == (0, [])
    path = pack(tmp_path, "pack: org\nversion: 1\ninputs:\n  - {name: org_steps, unit: count}\n"
                          "metrics:\n  - {name: org_steps, expr: total_time * 1000, unit: count}\n"
                          "  - {name: org_rate, expr: org_steps / total_time, unit: ratio}\nrules:" + RULE)
    assert [m.name for m in load_packs([path]).packs[-1].metrics] == ["org_steps", "org_rate"]


# ------------------------------------------------------------------------------- 2. duplicate keys


def test_duplicate_key_in_a_yaml_pack_is_refused(capsys):
    """Item 3.1: a second `when:` in one rule (YAML keeps the last, weakening the gate) is refused at its line."""
    path = CORPUS / "duplicate_key.yaml"
    line = refused(capsys, path, "duplicate key")
    assert line == f"advisor: error: {path}:12: duplicate key 'when' (first at line 9); only one would be kept"


def test_duplicate_key_in_a_json_pack_is_refused(capsys):
    """Item 3.1: the same in a JSON pack: the second "severity" is refused at its line."""
    path = CORPUS / "duplicate_key.json"
    line = refused(capsys, path, "duplicate key")
    assert line == f"advisor: error: {path}:7: duplicate key 'severity' (first at line 5); only one would be kept"


@pytest.mark.parametrize(("text", "key", "line"), [
    ("pack: org\nversion: 1\nrules:" + RULE + "rules: []\n", "rules", 11),
    ("pack: org\nversion: 1\nrules:" + RULE + "    params: {a: 1, b: 2, a: 3}\n", "a", 11),
    ("pack: org\nversion: 1\nrules:" + RULE + "    examples:\n      - expect: fire\n        metrics:\n"
     "          total_time: 2\n          total_time: 0\n", "total_time", 15),
    ("pack: org\nversion: 1\nversion: 2\nrules:" + RULE, "version", 3),
    ("pack: org\nversion: 1\ntrue: 1\nTrue: 2\n", "True", 4),  # the same key as loaded, not as written
])
def test_duplicate_key_at_any_level_is_refused(tmp_path, capsys, text, key, line):
    """Item 3.1: at the top level, in params, in an example's metrics: every level."""
    path = pack(tmp_path, text)
    found = refused(capsys, path, "duplicate key")
    assert found.startswith(f"advisor: error: {path}:{line}: duplicate key '{key}'")


# --------------------------------------------------------------------------------- 3. metric cycles


def test_metric_cycle_is_refused_naming_it(capsys):
    """Item 3.1: a -> b -> c -> a can never be computed; refused naming the cycle, at the first metric's line."""
    path = CORPUS / "metric_cycle.yaml"
    line = refused(capsys, path, "metric cycle")
    assert line == (f"advisor: error: {path}:6: metric cycle: hostile_a -> hostile_b -> hostile_c -> hostile_a "
                    "(a metric may derive one that derives it only when both are inputs a profile reports)")


def test_self_referencing_metric_is_refused(tmp_path, capsys):
    """Item 3.1: a cycle of length one."""
    path = pack(tmp_path, "pack: org\nversion: 1\nmetrics:\n  - {name: org_x, expr: org_x + 1, unit: s}\n"
                          "rules:" + RULE)
    refused(capsys, path, "metric cycle: org_x -> org_x")


def test_cycle_through_one_reported_input_is_still_refused(tmp_path, capsys):
    """Item 3.1: only a cycle made wholly of inputs (either side fills the other) is allowed."""
    path = pack(tmp_path, "pack: org\nversion: 1\ninputs:\n  - {name: org_a, unit: s}\nmetrics:\n"
                          "  - {name: org_a, expr: org_b * 2, unit: s}\n  - {name: org_b, expr: org_a / 2, unit: s}\n"
                          "rules:" + RULE)
    refused(capsys, path, "metric cycle: org_a -> org_b -> org_a")


# ------------------------------------------------------------------------------ 4. unknown examples


def test_example_naming_an_unknown_metric_is_refused(capsys):
    """Item 3.1: an example's misspelt metric tests nothing; refused with file, line, rule and a suggestion."""
    path = CORPUS / "example_unknown_metric.yaml"
    line = refused(capsys, path, "unknown metric")
    assert line == (f"advisor: error: {path}:5: rule H001 (hostile-rule): example 1: unknown metric 'totl_time'; "
                    "did you mean 'total_time'?")


# --------------------------------------------------------------------------- 5. message templates


@pytest.mark.parametrize(("name", "expected"), [
    ("huge_precision.yaml", f"precision 999999999 is over the limit of {MAX_PRECISION}"),
    ("huge_width.yaml", f"width 999999999 is over the limit of {MAX_WIDTH}"),
    ("nested_spec.yaml", "nested placeholders in a format spec are not allowed"),
])
@pytest.mark.hang_guard
def test_unbounded_format_spec_is_refused_at_load(capsys, name, expected):
    """Item 3.2: `{total_time:.999999999f}`, `{x:>999999999}` and `{x:{y}}` are validation errors
    (file, line, rule), found at once."""
    path = CORPUS / name
    start = time.monotonic()
    line = refused(capsys, path, expected)
    assert time.monotonic() - start < 120  # a hang guard, not a speed target
    assert line.startswith(f"advisor: error: {path}:5: rule H001 (hostile-rule): message: ")


@pytest.mark.parametrize("spec", ["d", "x", "+d", "#x", "s", "c", ",n", "10000", ".", "!r", "<" * 30, ".f5", "0" * 20])
def test_bad_format_specs_are_validation_errors(spec):
    """Item 3.2: a spec that is not a bounded number format is a problem, not an exception."""
    assert check_spec(spec) is not None


@pytest.mark.parametrize(("spec", "value", "text"), [
    ("", 0.25, "0.25"), ("%", 0.25, "25.00 %"), (".1f", 2.25, "2.2"), (",.0f", 12345.6, "12,346"),
    (".0%", 0.5, "50%"), (">8.2f", 1.5, "    1.50"), (".20f", 1.5, "1.50000000000000000000"),
    (".2f", None, "unavailable"), (".2f", math.nan, "unavailable"), (".2f", 10 ** 400, "unavailable"),
])
def test_bounded_formatter_formats_what_packs_use(spec, value, text):
    """Item 3.2: the specs the built-in packs use format as before; a missing, NaN or too-large value is unavailable."""
    assert check_spec(spec) is None
    assert format_value(value, "", spec) == text


@pytest.mark.hang_guard
def test_run_time_formatting_is_bounded_for_a_rule_built_without_the_loader():
    """Item 3.2: a RuleDef built in code with `{total_time:.999999999f}` goes through the same bounded
    formatter when the rule fires: a short message, at once (format() itself would build 1 GB)."""
    ruleset = load_packs(kind="neuron")
    hostile = replace(ruleset.rules[0], message="{total_time:.999999999f} {total_time:>999999999} "
                                                "{total_time:{total_time}} {", when=compile_expression("1 > 0"),
                      requires=(), explains=(), global_with=(), estimated_speedup=None)
    metrics = {"total_time": Metric(name="total_time", value=0.5, unit="s", source="reported")}
    start = time.monotonic()
    result = evaluate(replace(ruleset, rules=(hostile,)), metrics, None)
    assert time.monotonic() - start < 120  # a hang guard, not a speed target
    assert len(result.findings) == 1 and len(result.findings[0].message) < 200


def test_run_time_message_formatting_never_raises():
    """Item 3.2: unbalanced braces, conversions, indexes and unknown names in a message are shown, not raised."""
    env = {"x": 1.5, "big": 10 ** 400, "nan": math.nan}
    for template in ("{", "}", "{x!r}", "{x[0]}", "{x.real}", "{nope}", "{big:.2f}", "{nan}", "{x:{x}}", "{x:%}"):
        assert isinstance(format_message(template, env, {"x": "s"}), str)


SPEC_CHARS = st.sampled_from([*list("<>=^+- z#0123456789,_.eEfFgGn%dxsc{}!rab:"), "999999999", "🙂"])
VALUES = st.one_of(st.none(), st.booleans(), st.floats(), st.integers(min_value=-(10 ** 500), max_value=10 ** 500))
UNITS = st.sampled_from(["", "s", "bytes", "fraction", "count", "bytes/s", "FLOP/s", "ratio", "no-such-unit"])
# The longest a bounded placeholder can be: 309 digits of the largest float, 20 decimals, grouping, sign.
MAX_FORMATTED = 512


@given(spec=st.lists(SPEC_CHARS, max_size=12).map("".join) | st.text(max_size=20), value=VALUES, unit=UNITS)
def test_any_format_spec_validates_and_formats_quickly_or_is_an_error(spec, value, unit):
    """Item 3.2 (property): any spec either validates and then formats any value (float, int, None)
    into a bounded string, or is a validation error; format time never raises, whatever the spec."""
    problem = check_spec(spec)
    formatted = format_value(value, unit, spec)
    assert isinstance(formatted, str) and len(formatted) <= MAX_FORMATTED
    if problem is None:
        assert len(spec) <= 16
        assert format_message("{v:" + spec + "}", {"v": value}, {"v": unit}) == formatted
    else:
        assert isinstance(problem, str) and problem


@pytest.mark.parametrize("field", ["recommendation", "root_cause"])
def test_an_unknown_name_in_a_recommendation_or_root_cause_is_refused(tmp_path, capsys, field):
    """Issue 23 (templates): a recommendation or root cause naming `{device_max_smem_per_sm}` is formatted like
    the message, so a name the pack does not know would reach the report raw; it is refused at load."""
    text = "pack: org\nversion: 1\nrules:" + RULE.replace("    recommendation: none\n", "") + \
        f"    {field}: Keep it under {{totl_time}}.\n" + ("    recommendation: none\n" if field == "root_cause" else "")
    line = refused(capsys, pack(tmp_path, text), f"{field}: unknown name {{totl_time}}")
    assert "did you mean 'total_time'" in line


def test_literal_braces_in_a_recommendation_are_text_not_names(tmp_path, capsys):
    text = "pack: org\nversion: 1\nrules:" + RULE.replace("recommendation: none", "recommendation: 'use {1, 2}'")
    code, lines = validate(capsys, pack(tmp_path, text))
    assert code == 0, lines


def test_a_known_name_in_a_recommendation_leaves_the_rule_as_declared(tmp_path):
    """The check of a recommendation's names must not touch the rule it reads (a loop once renamed NCU011
    after the `{device_max_smem_per_sm}` its recommendation names)."""
    named = RULE.replace("recommendation: none", "recommendation: 'under {total_time}'")
    text = "pack: org\nversion: 1\nrules:" + named
    rules = {r.id: r.name for r in load_packs([pack(tmp_path, text)]).rules}
    assert rules["H001"] == "hostile-rule"
    assert {r.id: r.name for r in load_packs().rules}["NCU011"] == "occupancy-limited-by-shared-memory"
