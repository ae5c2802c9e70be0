"""One explanation of a rule, rendered as `rules show` text, `rules show --json` and the rule reference page:
every field of a rule's definition is shown in each, or listed as left out on purpose with the reason."""

import dataclasses
import json

import pytest

from advisor.cli import main
from advisor.engine.docs import rule_page
from advisor.engine.explain import CATCH_ALL, HIDDEN, HIDDEN_IN, SHOWN, as_json, as_text, explain
from advisor.packs.load import load_packs
from advisor.packs.model import RuleDef

# every key a rule may have, each with a value no other field shares
PACK = """\
pack: stripes
version: 1.0.0
kinds: [neuron]
rules:
  - id: ZEB001
    name: zebra-rule
    aliases: [zebra-former]
    title: Zebra title
    category: zebra-category
    severity: low
    requires: [memory-bound]
    explains: [weight-reload]
    params: {max_zebra: 0.42}
    when: vector_engine_active_time_percent > max_zebra
    message: Zebra message {vector_engine_active_time_percent}.
    root_cause: Zebra root cause.
    recommendation: Zebra recommendation.
    estimated_speedup: vector_engine_active_time_percent * 0.5
    speedup_scope: local
    global_with: [low-tensor-engine-utilization]
    capped_by: [idle_time]
    claims: zebra-time
    catch_all: true
    references: [Zebra reference]
    examples:
      - {hardware: trn1, expect: fire, params: {max_zebra: 0.25}, metrics: {vector_engine_active_time_percent: 0.9,
         memory_zebra_witness: null}}
"""


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    path = tmp_path_factory.mktemp("zebra") / "zebra.yaml"
    # the example's metrics must be declared names: the null one is an input of this pack
    path.write_text(PACK + "inputs:\n  - {name: memory_zebra_witness, unit: fraction}\n")
    ruleset = load_packs([path])
    rule = ruleset.rule("zebra-rule")
    e = explain(rule, ruleset)
    return rule, {"text": as_text(e), "json": json.dumps(as_json(e), ensure_ascii=False), "markdown": rule_page(e)}


def witnesses(rule: RuleDef, name: str) -> list[str]:
    """What of a field's value a reader must find in a rendering."""
    value = getattr(rule, name)
    if name == "when":
        return [value.text]
    if name == "estimated_speedup":
        return [value.text]
    if name == "params":
        return [*value, *(f"{v:g}" for v in value.values())]
    if name == "param_units":
        return list(value.values())
    if name == "examples":
        return [k for ex in value for k in (*ex.metrics, *ex.params, ex.expect, ex.hardware)]
    if name == "catch_all":
        return ["catch"]
    if name == "caps_only":  # said in the estimate's meaning, when true (test_a_ceiling_says_it_claims_no_time)
        return ["A ceiling, not a gain"] if value else []
    if isinstance(value, tuple):
        return list(value)
    return [str(value)]


def test_every_field_is_shown_or_hidden_on_purpose():
    fields = {f.name for f in dataclasses.fields(RuleDef)}
    assert fields == set(SHOWN) | set(HIDDEN), "a RuleDef field is neither explained nor hidden on purpose"
    assert not set(SHOWN) & set(HIDDEN)
    assert all(reason for reasons in (HIDDEN, *HIDDEN_IN.values()) for reason in reasons.values())


@pytest.mark.parametrize("rendering", ["text", "json", "markdown"])
def test_every_shown_field_is_in_each_rendering(explained, rendering):
    rule, rendered = explained
    out = rendered[rendering]
    hidden = HIDDEN_IN.get(rendering, {})
    for name in SHOWN:
        for witness in witnesses(rule, name):
            if name in hidden:
                assert witness not in out, f"{rendering} shows {name}, listed as hidden"
            else:
                assert witness in out, f"{rendering} lacks {name}: {witness!r}"


def test_a_local_estimate_says_what_it_is_a_share_of(explained):
    _, rendered = explained
    meaning = ("Of that unit's own inefficiency (local), as Nsight Compute estimates it, capped by the estimate of "
               "`memory-bound`; global when `low-tensor-engine-utilization` fired, then capped by that rule's "
               "estimate. Once global, the bounds below cap it.")
    for out in rendered.values():
        assert meaning in out.replace('\\"', '"')
        assert "share of total time" not in out.lower()
    assert CATCH_ALL in rendered["markdown"]
    assert "    capped by idle_time: " in rendered["text"]


def test_rules_show_json(capsys):
    assert main(["rules", "show", "ncu/memory-bound", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["id"], data["name"], data["qualified"], data["aliases"]) == (
        "NCU001", "memory-bound", ["ncu/memory-bound"], ["memory-throughput-bound"])
    assert data["estimate"]["scope"] == "global" and data["estimate"]["capped_by"][0]["name"] == "compute_busy"
    assert data["estimate"]["capped_by"][0]["title"] == "Compute (SM) busy time"


def test_rules_show_by_former_name_or_with_kind(capsys):
    assert main(["rules", "show", "memory-throughput-bound"]) == 0  # a former name only ncu's rule had
    assert capsys.readouterr().out.startswith("NCU001 ncu/memory-bound: ")
    assert main(["rules", "show", "memory-bound", "--kind", "neuron"]) == 0
    assert capsys.readouterr().out.startswith("NRN001 neuron/memory-bound: ")
    assert main(["rules", "show", "memory-bound"]) == 2
    assert capsys.readouterr().err == (
        "advisor: error: memory-bound: ambiguous: rules of several profile kinds answer to it (ncu/memory-bound, "
        "neuron/memory-bound); name one as KIND/NAME or give --kind\n")
    assert main(["rules", "show", "ncu/weight-reload"]) == 2
    assert "advisor: error: ncu/weight-reload: no such rule" in capsys.readouterr().err


def test_a_ceiling_says_it_claims_no_time():
    """Issue 36: Nsight Compute's throughput lead caps its causes and is no gain of its own; its page says so."""
    ruleset = load_packs(kind="ncu")
    e = explain(ruleset.rule("memory-bound"), ruleset)
    assert e.estimate is not None and e.estimate.meaning.startswith("A ceiling, not a gain")
    assert "claims no time of its own" in as_text(e)
