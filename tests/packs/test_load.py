"""Loading and validating packs: the built-in pack, custom packs, and hostile ones."""

import json
from importlib import resources

import jsonschema
import pytest
import yaml
from tests_support import ROOT

from advisor.core.errors import AdvisorError
from advisor.packs.load import load_packs, pack_units
from advisor.packs.model import PackError
from advisor.packs.read import builtin_pack_paths

GOOD_RULE = """
  - id: T001
    name: test-rule
    title: A test rule
    category: memory
    severity: high
    when: weight_reload_ratio > min_ratio
    params: {min_ratio: 2}
    message: Reload {weight_reload_ratio:.1f}x of {weight_size_bytes}.
    recommendation: Reuse weights.
"""


def pack_text(rules: str = GOOD_RULE, head: str = "pack: test\nversion: 1.0.0\n") -> str:
    return head + "rules:" + rules


def refused(write, text: str, name: str = "pack.yaml") -> str:
    """Load a pack that must be refused, without touching any other file; return the message."""
    path = write(name, text)
    before = sorted(p.name for p in path.parent.iterdir())
    with pytest.raises(AdvisorError) as info:
        load_packs([path])
    assert sorted(p.name for p in path.parent.iterdir()) == before
    exc = info.value
    return "\n".join(exc.problems) if isinstance(exc, PackError) else f"{exc.where}: {exc.problem}"


def test_builtin_pack_loads_with_required_rules():
    ruleset = load_packs()
    names = {r.name for r in ruleset.rules}
    for required in ("memory-bound", "compute-bound", "low-tensor-engine-utilization", "dma-wait", "sbuf-spill",
                     "weight-reload", "dma-fragmentation", "transpose-overhead", "low-model-flops-share",
                     "throttling", "device-idle", "vector-engine-bound", "mfu-below-achievable"):
        assert required in names
    order = [r.name for r in ruleset.rules]
    assert order.index("memory-bound") < order.index("weight-reload")


def test_builtin_pack_files_match_the_json_schema():
    schema = _schema()
    files = [f for p in builtin_pack_paths() for f in (sorted(p.glob("*.yaml")) if p.is_dir() else [p])]
    files.append(ROOT / "docs" / "examples" / "team-pack.yaml")
    for file in files:
        jsonschema.validate(yaml.safe_load(file.read_text()), schema)


def _schema() -> dict:
    return json.loads((resources.files("advisor") / "data" / "rule-pack.schema.json").read_text())


def test_schema_units_are_the_unit_registry():
    """The schema's unit enums list exactly the units the loader accepts in a pack for every kind: the generic
    ones (core/units.py) and those each kind adds (its data/conventions.yaml `units:`)."""
    schema = _schema()
    for section in ("inputs", "metrics"):
        assert schema["properties"][section]["items"]["properties"]["unit"]["enum"] == list(pack_units(()).names())


def test_schema_knows_kinds_and_aliases():
    schema = _schema()
    pack = {"pack": "x", "version": "1", "kinds": ["neuron"], "rules": [
        {"id": "X1", "name": "new-name", "aliases": ["old-name", "OLD1"], "title": "t", "severity": "low",
         "when": "1 > 0", "message": "m", "recommendation": "r"}]}
    jsonschema.validate(pack, schema)
    for bad in ({**pack, "kinds": []}, {**pack, "kinds": "neuron"},
                {**pack, "rules": [{**pack["rules"][0], "aliases": ["Old Name"]}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_custom_pack_loads_and_can_require_builtin(write):
    text = pack_text(GOOD_RULE.replace("    when:", "    requires: [memory-bound]\n    when:"),
                     head="pack: test\nversion: 1.0.0\nkinds: [neuron]\n")
    path = write("p.yaml", text)
    ruleset = load_packs([path])
    rule = ruleset.rule("test-rule")
    assert rule.requires == ("memory-bound",)  # the neuron rule: the pack is for neuron profiles
    assert ruleset.for_kind("neuron").rule("memory-bound").pack == "neuron"
    assert rule.param_units == {"min_ratio": "ratio"}
    assert rule.placeholders == (("weight_reload_ratio", ".1f"), ("weight_size_bytes", ""))


def test_pack_folder(tmp_path):
    folder = tmp_path / "org"
    folder.mkdir()
    (folder / "pack.yaml").write_text("pack: org\nversion: 2\n")
    (folder / "memory.yaml").write_text("rules:" + GOOD_RULE)
    assert load_packs([folder]).rule("T001").pack == "org"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("when: weight_reload_ratio > min_ratio", "when: weight_reload_ratio.__class__ > 1"), "attribute access"),
        (("when: weight_reload_ratio > min_ratio", "when: __import__('os').system('touch pwned')"),
         "only the functions"),
        (("when: weight_reload_ratio > min_ratio", "when: weight_reload_ratio[0] > 1"), "subscripts"),
        (("when: weight_reload_ratio > min_ratio", "when: weight_reload_ration > 1"),
         "did you mean 'weight_reload_ratio'"),
        (("when: weight_reload_ratio > min_ratio", "when: 9 ** 9 ** 9 > 1"), "powers"),
        (("message: Reload", "message: Reload {weight_reload_ratio.__class__}"), "plain metric or param name"),
        (("message: Reload", "message: Reload {weight_reload_ratio[0]}"), "plain metric or param name"),
        (("message: Reload", "message: Reload {hbm_raed_bytes}"), "did you mean 'hbm_read_bytes'"),
        (("severity: high", "severity: severe"), "severity 'severe'"),
        (("severity: high", "serverity: high"), "did you mean 'severity'"),
        (("name: test-rule", "name: Test Rule"), "kebab-case"),
        (("params: {min_ratio: 2}", "params: {min_ratio: lots}"), "must be a number"),
    ],
)
def test_bad_rules_refused_with_file_line_and_rule(write, change, expected):
    message = refused(write, pack_text(GOOD_RULE.replace(*change)))
    assert expected in message
    assert "pack.yaml:" in message


def test_caret_under_the_offending_part(write):
    message = refused(write, pack_text(GOOD_RULE.replace("when: weight_reload_ratio > min_ratio",
                                                         "when: weight_reload_ratio > 1 and hbm_read_bytes.real > 2")))
    lines = message.splitlines()
    expr_line = next(i for i, line in enumerate(lines) if line.strip().startswith("weight_reload_ratio > 1 and"))
    caret = lines[expr_line + 1]
    assert caret.index("^") == lines[expr_line].index("hbm_read_bytes.real")


def test_duplicate_id_and_name(write):
    message = refused(write, pack_text(GOOD_RULE + GOOD_RULE))
    assert "rule name 'test-rule' is already used" in message
    assert "rule id 'T001' is already used" in message


def test_duplicate_name_of_a_builtin(write):
    message = refused(write, pack_text(GOOD_RULE.replace("name: test-rule", "name: memory-bound")))
    assert "rule name 'memory-bound' is already used" in message


def test_cycle_named(write):
    a = GOOD_RULE.replace("    when:", "    requires: [rule-b]\n    when:").replace("test-rule", "rule-a")
    b = GOOD_RULE.replace("    when:", "    requires: [rule-a]\n    when:").replace("test-rule", "rule-b")
    message = refused(write, pack_text(a + b.replace("T001", "T002")))
    assert "forms a cycle" in message and "rule-a" in message and "rule-b" in message


def test_unknown_requirement(write):
    message = refused(write, pack_text(GOOD_RULE.replace("    when:", "    requires: [memory-bond]\n    when:")))
    assert "requires unknown rule 'memory-bond'; did you mean 'memory-bound'?" in message


def test_python_tag_refused_without_running(write, tmp_path):
    message = refused(write, "pack: x\nversion: 1\nrules: !!python/object/apply:os.system ['touch pwned']\n")
    assert "invalid YAML" in message
    assert not (tmp_path / "pwned").exists()


def test_alias_bomb_refused_quickly(write):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9))
    message = refused(write, "pack: x\nversion: 1\n" + bomb)
    assert "aliases" in message


def test_hundred_thousand_term_expression(write):
    expr = " + ".join(["weight_reload_ratio"] * 100_000)
    message = refused(write, pack_text(GOOD_RULE.replace("weight_reload_ratio > min_ratio", f"{expr} > 1")))
    assert "the limit is" in message


def test_non_string_keys_and_non_mapping(write):
    assert "keys must be strings" in refused(write, "1: x\npack: x\nversion: 1\n")
    assert "must be a YAML mapping" in refused(write, "- just\n- a list\n")


def test_deeply_nested_yaml(write):
    assert "YAML" in refused(write, "pack: x\nversion: 1\nrules: " + "[" * 10_000 + "]" * 10_000 + "\n")


def test_missing_pack_header(write):
    assert "exactly one file with `pack:`" in refused(write, "rules:" + GOOD_RULE)


def test_ten_thousand_rules_load(write):
    """A pack of 10,000 rules loads, every rule in it (marked slow in conftest.py: seconds). How fast is
    benchmarks/pack_load.py's to measure, with its target in docs/performance.md, never a bound here."""
    rules = "".join(GOOD_RULE.replace("T001", f"T{i:05d}").replace("test-rule", f"rule-{i}") for i in range(10_000))
    path = write("big.yaml", pack_text(rules))
    ruleset = load_packs([path])
    assert len(ruleset.rules) > 10_000


def test_every_problem_listed(write):
    text = pack_text(GOOD_RULE.replace("severity: high", "severity: nope").replace(
        "weight_reload_ratio > min_ratio", "nope_metric > 1"))
    message = refused(write, text)
    assert "severity 'nope'" in message and "unknown name 'nope_metric'" in message


def test_missing_pack_path(tmp_path):
    with pytest.raises(AdvisorError, match="no such rule pack"):
        load_packs([tmp_path / "none.yaml"])


def test_explains_cycle_refused(write):
    a = GOOD_RULE.replace("    when:", "    explains: [rule-b]\n    when:").replace("test-rule", "rule-a")
    b = GOOD_RULE.replace("    when:", "    explains: [rule-a]\n    when:").replace("test-rule", "rule-b")
    assert "`explains` forms a cycle" in refused(write, pack_text(a + b.replace("T001", "T002")))


def test_percent_written_for_a_fraction_is_refused(write):
    message = refused(write, pack_text(GOOD_RULE.replace("weight_reload_ratio > min_ratio",
                                                         "dma_active_time_percent > 50")))
    assert "did you mean 0.5?" in message
    message = refused(write, pack_text(GOOD_RULE.replace("when: weight_reload_ratio > min_ratio",
                                                         "when: dma_active_time_percent > min_ratio")))
    assert "min_ratio = 2 but it is a fraction" in message


def test_a_profile_of_one_kind_reads_only_the_headers_of_the_other_kinds_builtin_packs(monkeypatch, tmp_path):
    """The built-in packs of other kinds are most of the YAML a report would parse; with only built-in packs
    their pack.yaml says they do not apply, and nothing else of them is read. A pack of the user's own makes
    every pack be read again (its names are checked against every kind's)."""
    import advisor.packs.read as read

    seen: list[str] = []
    real = read.read_file
    monkeypatch.setattr(read, "read_file", lambda path: seen.append(path.as_posix()) or real(path))
    ruleset = load_packs(kind="torch")
    assert {p.name for p in ruleset.packs} == {"torch"}
    others = [p for p in seen if "/rules/torch/" not in p]
    assert others and all(p.endswith("/pack.yaml") for p in others)
    assert any(p.endswith("/rules/torch/rules.yaml") for p in seen)
    seen.clear()
    mine = tmp_path / "mine.yaml"
    mine.write_text("pack: mine\nversion: '1'\nkinds: [torch]\nrules: []\n")
    load_packs([mine], kind="torch")
    assert any(p.endswith("/rules/ncu/rules.yaml") for p in seen)
