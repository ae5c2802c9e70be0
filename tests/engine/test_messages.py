"""Issue 23, templates: no placeholder (`{device_max_smem_per_sm}`) and no "unavailable of …" ever
reaches a report. Every built-in rule's message and recommendation is rendered with each of its
values missing in turn; the clause holding a missing value is dropped by the formatter, not by the rule."""

from __future__ import annotations

import re

import pytest

from advisor import kinds
from advisor.core.model import Profile, SourceInfo
from advisor.engine.evaluate import evaluate
from advisor.metrics import hardware
from advisor.metrics.derive import derive
from advisor.packs.load import load_packs
from advisor.packs.message import IDENT, format_message, format_text

RULESET = load_packs()
# What a reader must never see: a raw placeholder, the table word for a missing value inside a sentence,
# or the leftovers of a dropped clause.
JUNK = re.compile(r"[{}]|unavailable of|of unavailable|not measured of|of not measured|\(\s*\)|\( | \)|\s[,;:.]|,,|  ")
# A plausible value per unit, so that only the value under test is missing.
VALUE_OF_UNIT = {"fraction": 0.25, "s": 0.002, "bytes": 4096.0, "count": 12.0, "ratio": 1.5}


def _placeholders(text: str) -> list[str]:
    return sorted({name for name in re.findall(r"\{([a-z_][a-z0-9_]*)", text) if IDENT.match(name)})


def _units(rule) -> dict[str, str]:
    units = {d.name: d.unit for d in RULESET.inputs.values()}
    units.update({m.name: m.unit for m in RULESET.metrics})
    return {**units, **rule.param_units}


def _cases():
    for rule in RULESET.rules:
        for field in ("message", "recommendation", "root_cause"):
            text = getattr(rule, field)
            for name in _placeholders(text):
                yield pytest.param(rule, field, name, id=f"{rule.name}.{field}-without-{name}")


@pytest.mark.parametrize(("rule", "field", "missing"), list(_cases()))
def test_every_message_reads_as_a_sentence_with_each_value_missing(rule, field, missing):
    """Issue 23 "Templates": each rule's text with one value missing (e.g. `{device_max_smem_per_sm}`,
    `{total_time}` in "active only 40 % of unavailable") shows no placeholder, no "unavailable of …"
    and no dangling punctuation: the clause with the missing value is dropped."""
    text = getattr(rule, field)
    units = _units(rule)
    env = {n: VALUE_OF_UNIT.get(units.get(n, ""), 3.0) for n in _placeholders(text)}
    env.update(rule.params)
    env[missing] = None
    shown = format_text(text, env, units)
    written = re.sub(r"\{[^{}]*\}", "X", text)
    assert len(JUNK.findall(shown)) <= len(JUNK.findall(written)), shown
    assert shown.count("unavailable") <= text.count("unavailable"), shown
    assert shown[:1].isupper() or shown[:1].isdigit(), shown


@pytest.mark.parametrize("rule", RULESET.rules, ids=[RULESET.qualified(r)[0] for r in RULESET.rules])
def test_every_message_keeps_every_value_when_all_are_known(rule):
    """Issue 23 "Templates": dropping clauses never touches a message whose values are all known."""
    units = _units(rule)
    env = {n: VALUE_OF_UNIT.get(units.get(n, ""), 3.0) for n in _placeholders(rule.message)}
    env.update(rule.params)
    shown = format_message(rule.message, env, units)
    assert "{" not in shown and "not measured" not in shown
    assert shown.count("(") == rule.message.count("(")


def test_a_missing_value_drops_its_clause_not_the_sentence():
    """Issue 23 "Templates": "active only 40.00 % of unavailable (…; MFU unavailable)" becomes
    "active only 40.00 % (…)": the preposition and the parenthesised item go with the missing value."""
    env = {"a": 0.4, "m": 0.5, "r": 2.0}
    units = {"a": "fraction", "r": "ratio"}
    shown = format_message("The engine is active only {a} of {t} (AWS flags below {m:%}; MFU {f}).", env, units)
    assert shown == "The engine is active only 40.00 % (AWS flags below 50.00 %)."
    shown = format_message("Intensity is {ai}, below the ridge of {r}: memory sets the pace (MBU {b}).", env, units)
    assert shown == "Below the ridge of 2×: memory sets the pace."


def test_a_message_of_one_placeholder_shows_unavailable_like_a_table_cell():
    """The one case where the word stays: a template that is only a value, as a table cell shows it."""
    assert format_message("{x:.2f}", {}, {}) == "unavailable"


def test_recommendation_placeholders_are_filled_in_a_fired_finding():
    """Issue 23 "Templates": ncu `occupancy-limited-by-shared-memory` printed its recommendation with a raw
    `{device_max_smem_per_sm}`; the engine now formats recommendations like messages."""
    ncu = kinds.get("ncu")
    ruleset = load_packs(kind="ncu")
    rule = ruleset.rule("occupancy-limited-by-shared-memory")
    example = next(ex for ex in rule.examples if ex.expect == "fire")
    hw = hardware.resolve(ncu, {}, example.hardware)
    profile = Profile(SourceInfo("t", "test", "test"), dict(example.metrics), {}, kind="ncu")
    finding = next(f for f in evaluate(ruleset, derive(profile, hw, ruleset), hw).findings if f.name == rule.name)
    assert "{" not in finding.recommendation and "}" not in finding.recommendation
    assert finding.recommendation.endswith("cudaFuncAttributeMaxDynamicSharedMemorySize), up to 100 KiB per SM "
                                           "on this GPU.")  # cc 8.6


def test_literal_braces_in_free_text_are_kept():
    """A recommendation quoting code with braces (`dim3{1, 2}`, `{}`) is shown as written, not formatted."""
    assert format_text("Use dim3{1, 2} or {}.", {}, {}) == "Use dim3{1, 2} or {}."
    assert format_text("Unbalanced { brace", {}, {}) == "Unbalanced { brace"


@pytest.mark.parametrize(("template", "value", "expected"), [
    ("Start-up ({n:,.0f} complete steps; slow)", 1, "Start-up (1 complete step; slow)"),
    ("Start-up ({n:,.0f} complete steps; slow)", 3, "Start-up (3 complete steps; slow)"),
    ("{n:,.0f} copies moved 4 bytes.", 1, "1 copy moved 4 bytes."),
    ("Blocked in {n:,.0f} copy calls for 3 ms", 1, "Blocked in 1 copy call for 3 ms"),
    ("{n:,.0f} kernels shorter than launches.", 1, "1 kernel shorter than launches."),
    ("{n:,.0f} launches, {n:,.0f} processes.", 1, "1 launch, 1 process."),
    ("{n} of 5 ranks.", 1, "1 of 5 ranks."),  # the noun is not the count's
    ("{n} class.", 1, "1 class."),
])
def test_a_count_of_one_reads_singular(template, value, expected):
    """Issue 34: "1 complete steps" and "1 copies" in real reports. A count placeholder that shows exactly 1 makes
    the plural noun after it singular; other units ("1 ms") and other numbers are left alone."""
    assert format_message(template, {"n": value}, {"n": "count"}) == expected
    assert format_message("{r:.0f} times faster runs", {"r": 1}, {"r": "ratio"}) == "1 times faster runs"  # no count


def test_a_dropped_clause_never_ends_inside_a_parenthesis():
    """Issue 36: a missing value cut the start off a sentence, leaving "Warps 12 blocks, the SM 24 blocks):
    theoretical occupancy 16.67 %". The clause holding it goes whole, parenthesis included."""
    template = ("More than one resource allows only {b} per SM (registers {r}, warps {w}, the SM {m}): theoretical "
                "occupancy {o}, and easing any one of them alone fits no further block.")
    text = format_message(template, {"b": None, "r": None, "w": 12, "m": 24, "o": 0.1667},
                          {"w": "count", "m": "count", "o": "fraction"})
    assert text == "Theoretical occupancy 16.67 %, and easing any one of them alone fits no further block."
    assert "blocks):" not in text and ")" not in text
