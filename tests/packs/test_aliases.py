"""Rule aliases: a renamed rule keeps answering to its former names everywhere a rule is named, and
no name, id or alias may mean two rules."""

import pytest

from advisor.cli import main
from advisor.core.errors import AdvisorError
from advisor.engine.docs import generate
from advisor.engine.evaluate import Selection, resolve_params
from advisor.packs.load import load_packs
from advisor.packs.model import PackError

RENAMED = """
  - id: T001
    name: weight-budget
    aliases: [reload-budget, OLD001]
    title: Weight reloads exceed the budget
    category: team
    severity: high
    requires: [weight-reload]
    params: {max_ratio: 8}
    when: weight_reload_ratio > max_ratio
    message: Reloaded {weight_reload_ratio:.1f}x.
    recommendation: Reuse weights.
"""

CHILD = """
  - id: T002
    name: budget-detail
    title: A rule naming the renamed one by its old name
    severity: low
    requires: [reload-budget]
    explains: [OLD001, reload-budget]
    when: weight_reload_ratio > 100
    message: Far over.
    recommendation: Reuse weights.
"""


def pack_text(rules: str) -> str:
    return "pack: team\nversion: 1.0.0\nkinds: [neuron]\nrules:" + rules


@pytest.fixture
def ruleset(write):
    return load_packs([write("team.yaml", pack_text(RENAMED + CHILD))])


def refused(write, rules: str) -> tuple[str, str]:
    path = write("team.yaml", pack_text(rules))
    with pytest.raises(PackError) as info:
        load_packs([path])
    return str(path), "\n".join(info.value.problems)


def test_canonical_maps_names_ids_and_aliases(ruleset):
    assert ruleset.canonical("weight-budget") == "weight-budget"
    assert ruleset.canonical("reload-budget") == "weight-budget"
    assert ruleset.canonical("OLD001") == "weight-budget"
    assert ruleset.canonical("T001") == "weight-budget"
    assert ruleset.canonical("NRN006") == "weight-reload"
    assert ruleset.canonical("no-such-rule") is None
    assert ruleset.rule("reload-budget") is ruleset.rule("weight-budget")
    assert ruleset.rule("weight-budget").aliases == ("reload-budget", "OLD001")
    assert ruleset.names["reload-budget"] == "weight-budget"  # one dict, built once


def test_requires_and_explains_are_stored_under_current_names(ruleset):
    child = ruleset.rule("budget-detail")
    assert child.requires == ("weight-budget",)
    assert child.explains == ("weight-budget",)  # two names of one rule: once
    order = [r.name for r in ruleset.rules]
    assert order.index("weight-reload") < order.index("weight-budget") < order.index("budget-detail")


def test_select_and_ignore_accept_aliases_and_globs_match_them(ruleset):
    assert Selection(select=("reload-budget",)).resolve(ruleset) == {"weight-budget", "weight-reload",
                                                                      "memory-bound"}
    assert Selection(select=("OLD00*",)).resolve(ruleset) == {"weight-budget", "weight-reload", "memory-bound"}
    everything = {r.name for r in ruleset.rules}
    assert Selection(ignore=("reload-budget",)).resolve(ruleset) == everything - {"weight-budget"}
    assert Selection(ignore=("reload-*",)).resolve(ruleset) == everything - {"weight-budget"}


def test_set_accepts_an_alias(ruleset):
    params = resolve_params(ruleset, {"reload-budget.max_ratio": 16})
    assert params["weight-budget"] == {"max_ratio": 16.0}
    assert resolve_params(ruleset, {"OLD001.max_ratio": 4})["weight-budget"] == {"max_ratio": 4.0}
    with pytest.raises(AdvisorError, match="no rule named 'reload-budgt'; did you mean 'reload-budget'"):
        resolve_params(ruleset, {"reload-budgt.max_ratio": 16})
    with pytest.raises(AdvisorError, match="rule weight-budget has no param 'min_ratio'"):
        resolve_params(ruleset, {"reload-budget.min_ratio": 16})


def test_alias_in_another_pack_resolves(write):
    team = write("team.yaml", pack_text(RENAMED))
    other = write("other.yaml", "pack: other\nversion: 1\nkinds: [neuron]\nrules:" + CHILD.replace("T002", "X002"))
    assert load_packs([team, other]).rule("budget-detail").requires == ("weight-budget",)


def test_alias_of_another_rules_name_is_refused_with_both_lines(write):
    path, message = refused(write, RENAMED.replace("[reload-budget, OLD001]", "[memory-bound]"))
    assert f"{path}:5: rule alias 'memory-bound' is already used at " in message
    assert "rules/neuron/rules.yaml:" in message and "as the name of rule 'memory-bound'" in message


def test_name_that_is_another_rules_alias_is_refused(write):
    second = CHILD.replace("name: budget-detail", "name: reload-budget")
    path, message = refused(write, RENAMED + second)
    assert message == f"{path}:17: rule name 'reload-budget' is already used at {path}:5 as the alias of rule " \
                      "'weight-budget'"


def test_the_same_alias_on_two_rules_is_refused(write):
    second = CHILD.replace("    requires:", "    aliases: [reload-budget]\n    requires:")
    path, message = refused(write, RENAMED + second)
    assert f"{path}:17: rule alias 'reload-budget' is already used at {path}:5" in message


def test_alias_that_is_an_id_in_use_is_refused(write):
    path, message = refused(write, RENAMED.replace("[reload-budget, OLD001]", "[NRN006]"))
    assert f"{path}:5: rule alias 'NRN006' is already used at " in message and "as the id of rule 'weight-reload'" \
        in message


def test_alias_that_is_the_rules_own_name_is_refused(write):
    path, message = refused(write, RENAMED.replace("[reload-budget, OLD001]", "[weight-budget]"))
    assert message == f"{path}:5: rule alias 'weight-budget' is already used at {path}:5 as the name of rule " \
                      "'weight-budget'"


def test_an_id_may_equal_its_own_rules_name(write):
    path = write("team.yaml", pack_text(RENAMED.replace("id: T001", "id: wb")).replace("name: weight-budget",
                                                                                         "name: wb"))
    assert load_packs([path]).canonical("wb") == "wb"


@pytest.mark.parametrize(("aliases", "expected"), [
    ("[Old Name]", "alias 'Old Name' must be a kebab-case name (or a former id)"),
    ("old-name", "'aliases' must be a list of former rule names"),
    ("[1]", "'aliases' must be a list of former rule names"),
])
def test_malformed_aliases(write, aliases, expected):
    path, message = refused(write, RENAMED.replace("[reload-budget, OLD001]", aliases))
    assert message == f"{path}:5: rule T001 (weight-budget): {expected}"


def test_unknown_requirement_suggests_aliases_too(write):
    _, message = refused(write, RENAMED + CHILD.replace("requires: [reload-budget]", "requires: [reload-budgit]"))
    assert "requires unknown rule 'reload-budgit'; did you mean 'reload-budget'?" in message


def test_rules_show_by_alias_prints_the_aliases(write, capsys):
    path = write("team.yaml", pack_text(RENAMED))
    assert main(["rules", "show", "reload-budget", "--rules", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("T001 neuron/weight-budget: Weight reloads exceed the budget\n")
    assert "  pack team · kinds neuron · severity high" in out
    assert "  aliases: reload-budget, OLD001 (former names, still accepted)\n" in out


def test_rule_docs_show_kinds_and_aliases(ruleset):
    pages = generate(ruleset)
    page = pages["team/weight-budget.md"]
    assert "Pack `team` · kinds `neuron` · severity **high** · category `team`" in page
    assert "Also accepted under its former names: `reload-budget`, `OLD001`" in page
    assert "Requires (fires only after): [`weight-reload`](../neuron/weight-reload.md)" in page
    assert ("| T001 | [`weight-budget`](team/weight-budget.md) (formerly `reload-budget`, `OLD001`) |"
            in pages["index.md"])
    assert "## Pack `neuron` 1.0.0\n\nKinds: `neuron`." in pages["index.md"]
    assert "Pack `neuron` · kinds `neuron` · severity" in pages["neuron/memory-bound.md"]
    assert "Pack `ncu` · kinds `ncu` · severity" in pages["ncu/memory-bound.md"]
