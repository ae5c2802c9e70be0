"""Pack headers' `kinds:`: which packs a profile kind loads, which `hw_*` names they may read, and the
kinds in `advisor rules list`.

A second kind, "gadget", is made here by replacing the registry's list of kinds (the plug-in route,
by entry point, is tested in tests/kinds/)."""

import pytest
from tests_support import installed_kinds

import advisor.kinds
from advisor.cli import main
from advisor.core.errors import AdvisorError
from advisor.engine.examples import example_kind, run_example
from advisor.kinds.base import ProfileKind
from advisor.packs.load import hardware_names, load_packs
from advisor.packs.model import PackError

NEURON = advisor.kinds.get("neuron")
NCU = advisor.kinds.get("ncu")
RBLN = advisor.kinds.get("rbln")
INSTALLED = advisor.kinds.available()

RULE = """
  - id: {rid}
    name: {name}
    title: A test rule
    severity: high
    when: {when}
    message: Fired.
    recommendation: Fix it.
"""


def pack(name: str, kinds: str | None, rules: str) -> str:
    head = f"pack: {name}\nversion: 1.0.0\n" + (f"kinds: {kinds}\n" if kinds is not None else "")
    return head + "rules:" + rules


def rule(rid: str, name: str, when: str = "total_time > 0") -> str:
    return RULE.format(rid=rid, name=name, when=when)


def problems(exc_info) -> str:
    return "\n".join(exc_info.value.problems)


@pytest.fixture
def gadget(tmp_path, monkeypatch):
    """A second profile kind with its own hardware table and its own pack folder."""
    data = tmp_path / "gadget" / "data"
    data.mkdir(parents=True)
    (data / "hardware.yaml").write_text(
        "units: {widget_rate: Hz}\ntargets:\n  g1: {description: Gadget one, values: {widget_rate: 1.0e9}}\n")
    rules = tmp_path / "gadget" / "rules"
    rules.mkdir()
    (rules / "pack.yaml").write_text(
        pack("gadget-rules", "[gadget]", rule("GAD001", "widget-slow", "widgets / total_time < hw_widget_rate"))
        + "    examples:\n      - {hardware: g1, expect: fire, metrics: {widgets: 1, total_time: 1}}\n"
        + "      - {hardware: g1, expect: pass, metrics: {widgets: 1.0e10, total_time: 1}}\n"
        + "inputs:\n  - {name: widgets, unit: count}\n  - {name: total_time, unit: s}\n")
    kind = ProfileKind(name="gadget", title="Gadget", formats="none", package="gadget_kind_not_imported",
                       folder=data, packs=(rules,))
    monkeypatch.setattr(advisor.kinds, "available", lambda: (*INSTALLED, kind))
    return kind


# ------------------------------------------------------------------------------------ the header


def test_builtin_packs_declare_their_kind_and_each_kind_loads_only_its_own():
    everything, for_neuron, for_ncu = load_packs(), load_packs(kind="neuron"), load_packs(kind="ncu")
    per_kind = {name: load_packs(kind=name) for name in advisor.kinds.names()}  # each kind brings one pack
    assert sorted(p.kinds for p in everything.packs) == sorted((name,) for name in per_kind)
    assert all([p.name for p in ruleset.packs] == [name] for name, ruleset in per_kind.items())
    assert set(r.name for r in everything.rules) == {r.name for ruleset in per_kind.values() for r in ruleset.rules}
    assert (everything.kind, for_neuron.kind, for_ncu.kind) == (None, "neuron", "ncu")
    assert "hw_hbm_bandwidth" in for_neuron.hardware_names and "hw_hbm_bandwidth" not in for_ncu.hardware_names
    assert for_neuron.hardware_names == hardware_names("neuron")


def test_pack_without_kinds_applies_to_neuron(write):
    path = write("org.yaml", pack("org", None, rule("ORG001", "org-rule")))
    ruleset = load_packs([path], kind="neuron")
    org = next(p for p in ruleset.packs if p.name == "org")
    assert org.kinds == () and org.applies_to("neuron") and org.applies_to("anything")
    assert ruleset.rule("org-rule").pack == "org"


def test_pack_for_neuron_applies_to_neuron_and_to_no_kind(write):
    path = write("org.yaml", pack("org", "[neuron]", rule("ORG001", "org-rule")))
    assert load_packs([path], kind="neuron").rule("org-rule") is not None
    assert load_packs([path]).rule("org-rule") is not None


def test_unknown_kind_in_a_header_is_refused_with_line_and_suggestion(write):
    path = write("org.yaml", pack("org", "\n  - neuron\n  - nueron", rule("ORG001", "org-rule")))
    for kind in (None, "neuron"):  # refused whatever the kind loaded: a typo must not drop the pack silently
        with pytest.raises(PackError) as info:
            load_packs([path], kind=kind)
        assert problems(info) == (f"{path}:5: unknown profile kind 'nueron' (installed: {installed_kinds()}); "
                                  "did you mean 'neuron'?")


@pytest.mark.parametrize(("kinds", "expected"), [
    ("[]", "'kinds' is empty; leave it out for a pack that applies to every kind"),
    ("neuron", "'kinds' must be a list of profile kind names"),
    ("[1]", "'kinds' must be a list of profile kind names"),
])
def test_malformed_kinds(write, kinds, expected):
    path = write("org.yaml", pack("org", kinds, rule("ORG001", "org-rule")))
    with pytest.raises(PackError) as info:
        load_packs([path])
    assert problems(info) == f"{path}: {expected}"


def test_kinds_belong_in_the_header_file(tmp_path):
    folder = tmp_path / "org"
    folder.mkdir()
    (folder / "pack.yaml").write_text("pack: org\nversion: 1\n")
    (folder / "rules.yaml").write_text("kinds: [neuron]\nrules:" + rule("ORG001", "org-rule"))
    with pytest.raises(PackError) as info:
        load_packs([folder])
    assert problems(info) == f"{folder / 'rules.yaml'}: 'kinds' belongs in the pack's header (the file with `pack:`)"


def test_unknown_kind_argument_is_one_error():
    with pytest.raises(AdvisorError) as info:
        load_packs(kind="nuron")
    assert (info.value.where, info.value.problem) == ("--kind", f"unknown profile kind 'nuron' (installed: "
                                                                f"{installed_kinds()}); did you mean 'neuron'?")


# ------------------------------------------------------------------------------ two kinds at once


def test_each_kind_loads_its_own_packs_and_hardware_names(gadget):
    everything = load_packs()
    built_in = sorted((name, (name,)) for name in advisor.kinds.names() if name != "gadget")
    assert [(p.name, p.kinds) for p in everything.packs] == [*built_in, ("gadget-rules", ("gadget",))]
    assert {"hw_widget_rate", "hw_hbm_bandwidth"} <= set(everything.hardware_names)
    assert everything.rule("widget-slow") and everything.rule("neuron/memory-bound")

    for_gadget = load_packs(kind="gadget")
    assert [p.name for p in for_gadget.packs] == ["gadget-rules"]
    assert for_gadget.hardware_names == ("hw_widget_rate",)
    assert [r.name for r in for_gadget.rules] == ["widget-slow"]

    for_neuron = load_packs(kind="neuron")
    assert [p.name for p in for_neuron.packs] == ["neuron"]
    assert "hw_widget_rate" not in for_neuron.hardware_names
    assert for_neuron.rule("widget-slow") is None


def test_a_pack_for_all_kinds_may_read_any_kinds_figures(gadget, write):
    path = write("org.yaml", pack("org", None, rule("ORG001", "org-rule", "hw_widget_rate > 0")))
    assert load_packs([path], kind="gadget").rule("org-rule").when.names == ("hw_widget_rate",)
    assert load_packs([path]).rule("org-rule") is not None  # no kind: every kind's figures
    # on a Neuron profile the gadget figure is missing: the rule loads and ends "not applicable"
    assert load_packs([path], kind="neuron").rule("org-rule").when.names == ("hw_widget_rate",)
    typo = write("typo.yaml", pack("typo", None, rule("TYP001", "typo-rule", "hw_widget_rat > 0")))
    with pytest.raises(PackError) as info:  # a name no kind declares is still a mistake
        load_packs([typo], kind="neuron")
    assert "unknown name 'hw_widget_rat'" in problems(info)


def test_a_dropped_pack_is_not_checked_against_names_it_could_not_know(gadget, write):
    """A gadget pack reading a gadget figure loads for neuron (it is left out) and for no kind; its own
    mistakes are still found when every pack is loaded."""
    good = write("g.yaml", pack("g", "[gadget]", rule("G001", "g-rule", "hw_widget_rate > widgets")))
    assert load_packs([good], kind="neuron").rule("g-rule") is None
    assert load_packs([good]).rule("g-rule").pack == "g"
    bad = write("bad.yaml", pack("bad", "[gadget]", rule("B001", "b-rule", "hw_widget_rat > 0")))
    assert load_packs([bad], kind="neuron").rule("b-rule") is None
    with pytest.raises(PackError) as info:
        load_packs([bad])
    assert "unknown name 'hw_widget_rat'" in problems(info) and "did you mean 'hw_widget_rate'" in problems(info)


def test_requiring_a_rule_of_a_pack_left_out_says_why(gadget, write):
    text = pack("org", None, rule("ORG001", "org-rule").replace("    when:", "    requires: [memory-bound]\n    when:"))
    path = write("org.yaml", text)
    assert load_packs([path], kind="neuron").rule("org-rule").requires == ("memory-bound",)
    assert load_packs([path], kind="ncu").rule("org-rule").requires == ("memory-bound",)  # ncu's own memory-bound
    for kind in ("gadget", None):  # no kind: the pack is checked as each kind would load it
        with pytest.raises(PackError) as info:
            load_packs([path], kind=kind)
        assert ("requires rule 'memory-bound' of packs ncu, neuron, which do not apply to profile kind 'gadget' "
                "(a pack without `kinds:` applies to every kind: name the kinds it is for?)" in problems(info))
    only_neuron = write("org.yaml", text.replace("requires: [memory-bound]", "requires: [neuron/memory-bound]"))
    with pytest.raises(PackError) as info:
        load_packs([only_neuron], kind="ncu")
    assert "requires rule 'neuron/memory-bound' is not of profile kind 'ncu', which this pack applies to" in problems(
        info)


def test_names_are_each_kinds_own(gadget, write, capsys):
    """Two kinds may each have a rule of one name; with no kind known the bare name is ambiguous."""
    path = write("org.yaml", pack("org", "[neuron]", rule("ORG001", "widget-slow")))
    assert load_packs([path], kind="neuron").rule("widget-slow").pack == "org"
    assert load_packs([path], kind="gadget").rule("widget-slow").pack == "gadget-rules"
    everything = load_packs([path])
    assert everything.rule("neuron/widget-slow").pack == "org"
    assert everything.rule("gadget/widget-slow").pack == "gadget-rules"
    with pytest.raises(AdvisorError) as info:
        everything.rule("widget-slow")
    assert info.value.problem == ("ambiguous: rules of several profile kinds answer to it (gadget/widget-slow, "
                                  "neuron/widget-slow); name one as KIND/NAME")
    assert main(["rules", "show", "widget-slow", "--rules", str(path)]) == 2
    assert capsys.readouterr().err == (
        "advisor: error: widget-slow: ambiguous: rules of several profile kinds answer to it (gadget/widget-slow, "
        "neuron/widget-slow); name one as KIND/NAME or give --kind\n")
    assert main(["rules", "show", "widget-slow", "--kind", "neuron", "--rules", str(path)]) == 0
    assert capsys.readouterr().out.startswith("ORG001 neuron/widget-slow: A test rule\n")


def test_names_stay_unique_within_a_kind(gadget, write):
    path = write("org.yaml", pack("org", "[gadget]", rule("ORG001", "widget-slow")))
    for kind in ("gadget", None):
        with pytest.raises(PackError) as info:
            load_packs([path], kind=kind)
        assert "rule name 'widget-slow' is already used at" in problems(info)
    assert load_packs([path], kind="neuron").rule("widget-slow") is None  # both packs are left out


def test_examples_run_as_profiles_of_their_pack_kind(gadget):
    ruleset = load_packs()
    rule_def = ruleset.rule("widget-slow")
    fire, passing = rule_def.examples
    assert example_kind(ruleset, rule_def, fire).name == "gadget"
    neuron_rule = ruleset.rule("neuron/memory-bound")
    assert example_kind(ruleset, neuron_rule, neuron_rule.examples[0]).name == "neuron"
    ncu_rule = ruleset.rule("ncu/memory-bound")
    assert run_example(ruleset, ncu_rule, ncu_rule.examples[0]).outcome == "fired"  # run with ncu's rules
    assert run_example(ruleset, rule_def, fire).outcome == "fired"
    assert run_example(ruleset, rule_def, passing).outcome == "passed"


# ---------------------------------------------------------------------------------- rules list


def _rows(out: str) -> dict[str, list[str]]:
    lines = out.splitlines()
    header = lines[0].split()
    assert header == ["ID", "NAME", "SEVERITY", "CATEGORY", "PACK", "KINDS", "TITLE"]
    return {line.split()[1]: line.split()[:6] for line in lines[1:]}


def test_rules_list_kinds_column_and_filter(gadget, write, capsys):
    org = write("org.yaml", pack("org", None, rule("ORG001", "org-rule")))
    assert main(["rules", "list", "--rules", str(org)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["weight-reload"] == ["NRN006", "weight-reload", "high", "memory", "neuron", "neuron"]
    assert rows["widget-slow"][4:] == ["gadget-rules", "gadget"]
    assert rows["org-rule"][4:] == ["org", "all"]

    assert main(["rules", "list", "--kind", "neuron", "--rules", str(org)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert "weight-reload" in rows and "org-rule" in rows and "widget-slow" not in rows

    assert main(["rules", "list", "--kind", "gadget", "--rules", str(org)]) == 0
    assert sorted(_rows(capsys.readouterr().out)) == ["org-rule", "widget-slow"]


def test_rules_list_for_neuron(capsys):
    assert main(["rules", "list", "--kind", "neuron"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert len(rows) == len(load_packs(kind="neuron").rules)
    assert {row[5] for row in rows.values()} == {"neuron"}


def test_rules_list_unknown_kind_is_one_line_exit_2(capsys):
    assert main(["rules", "list", "--kind", "nueron"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("advisor: error: --kind: unknown profile kind 'nueron' "
                            f"(installed: {installed_kinds()}); "
                            "did you mean 'neuron'?\n")


def test_rules_show_prints_kinds(capsys):
    assert main(["rules", "show", "weight-reload"]) == 0
    assert "  pack neuron · kinds neuron · severity high · category memory" in capsys.readouterr().out
