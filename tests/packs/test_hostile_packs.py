"""The hostile rule-pack corpus through `advisor rules validate` and `advisor report --rules`."""

import pytest
from conftest import run_cli
from tests_support import FIXTURES, SAMPLES

CORPUS = FIXTURES / "hostile_packs"
REFUSED = {
    "attribute_access.yaml": "attribute access is not allowed",
    "dunder_name.yaml": "unknown name '__builtins__'",
    "import_call.yaml": "only the functions",
    "eval_call.yaml": "only the functions",
    "lambda.yaml": "only the functions",
    "comprehension.yaml": "comprehensions are not allowed",
    "power_bomb.yaml": "powers (**) are not allowed",
    "walrus.yaml": "assignment (:=) is not allowed",
    "string_literal.yaml": "only numbers are allowed",
    "subscript.yaml": "subscripts are not allowed",
    "message_attribute.yaml": "must be a plain metric or param name",
    "message_index.yaml": "must be a plain metric or param name",
    "message_conversion.yaml": "may only have a format spec",
    "unknown_metric.yaml": "did you mean 'total_time'",
    "python_tag.yaml": "invalid YAML",
    "python_name_tag.yaml": "invalid YAML",
    "alias_bomb.yaml": "aliases",
    "non_string_keys.yaml": "keys must be strings",
    "cycle.yaml": "forms a cycle: rule-a -> rule-b -> rule-a",
    "duplicate_id.yaml": "rule id 'H001' is already used",
    # advisor's own 64-level guard, or libyaml's (PyYAML ≥ 6.0.4 stops 1,000-deep nesting first): either refuses
    "deep_nesting.yaml": ("nested deeper than", "exceeded maximum nesting depth"),
    "not_a_mapping.yaml": "must be a YAML mapping",
}


def test_corpus_is_covered():
    names = {p.name for p in CORPUS.glob("*.yaml")}
    assert names == set(REFUSED) | {"slow_expression.yaml"}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name, tmp_path):
    done = run_cli("rules", "validate", CORPUS / name, cwd=tmp_path)  # a hang fails: run_cli's timeout
    assert done.returncode == 2, done.stdout + done.stderr
    expected = REFUSED[name]
    assert any(text in done.stderr for text in ((expected,) if isinstance(expected, str) else expected)), done.stderr
    assert all(line.startswith("advisor: error: ") or line.startswith("    ")
               for line in done.stderr.splitlines()), done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no side effect (no `pwned`, nothing written)


def test_refused_pack_stops_a_report_before_any_output(tmp_path):
    done = run_cli("report", SAMPLES / "mp2_energy" / "summary.json", "--rules", CORPUS / "import_call.yaml",
                   "-o", tmp_path / "r.md", cwd=tmp_path)
    assert done.returncode == 2 and "only the functions" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_large_valid_expression_loads_and_runs(tmp_path):
    done = run_cli("report", SAMPLES / "mp2_energy" / "summary.json", "--rules", CORPUS / "slow_expression.yaml",
                   "-o", tmp_path / "r.json")
    assert done.returncode == 0, done.stderr


def test_huge_pack_file_refused(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("pack: x\nversion: 1\ndescription: '" + "x" * (5 * 1024 * 1024) + "'\n")
    done = run_cli("rules", "validate", path)
    assert done.returncode == 2 and "larger than 4 MiB" in done.stderr
