"""Terms (issue 34, class 4): phrases of advice chosen by a text field of the profile, so a trace of one vendor is
never told another vendor's tools. A rule's texts name a term as `{name}`; a profile without an entry for its
value has no such term and the clause naming it is dropped, as for a missing number."""

from __future__ import annotations

import pytest

from advisor.core.model import Metric
from advisor.engine.evaluate import evaluate
from advisor.packs.load import load_packs
from advisor.packs.model import PackError

HEAD = "pack: org\nversion: 1.0.0\nkinds: [torch]\ninputs:\n  - {name: org_busy, unit: fraction}\n"
TERMS = """terms:
  - name: org_profiler
    from: device_vendor
    values: {nvidia: Nsight Compute, amd: rocprofv3}
"""
RULE = """rules:
  - id: ORG001
    name: org-busy
    title: Busy
    severity: low
    when: org_busy > 0.5
    message: The device is busy {org_busy}; profile its kernels ({org_profiler}).
    recommendation: Profile the top kernels with the vendor's kernel profiler ({org_profiler}).
"""


def _findings(write, info: dict[str, str]):
    ruleset = load_packs([write("org.yaml", HEAD + TERMS + RULE)], builtin=False, kind="torch")
    metrics = {"org_busy": Metric("org_busy", 0.9, "fraction", "reported")}
    return evaluate(ruleset, metrics, None, info=info).findings


def test_a_term_is_the_text_for_the_profiles_vendor(write):
    (finding,) = _findings(write, {"device_vendor": "amd"})
    assert finding.message == "The device is busy 90.00 %; profile its kernels (rocprofv3)."
    assert finding.recommendation == "Profile the top kernels with the vendor's kernel profiler (rocprofv3)."


@pytest.mark.parametrize("info", [{"device_vendor": "mtia"}, {}])
def test_a_vendor_without_an_entry_gets_the_sentence_without_the_clause(write, info):
    (finding,) = _findings(write, info)
    assert finding.message == "The device is busy 90.00 %; profile its kernels."
    assert finding.recommendation == "Profile the top kernels with the vendor's kernel profiler."
    assert "Nsight" not in finding.message + finding.recommendation


@pytest.mark.parametrize(("change", "problem"), [
    (("org_busy > 0.5", "org_profiler > 0.5"), "unknown name 'org_profiler'"),  # never a number
    (("({org_profiler})", "({org_profiler:.2f})"), "a term is text and takes no format spec"),
    (("amd: rocprofv3", "amd: 'rocprof {x}'"), "without braces"),
    (("from: device_vendor", "from: Device Vendor"), "must name a profile's text field"),
    (("name: org_profiler", "name: org_busy"), "has the name of an input, metric or hardware figure"),
    (("values: {nvidia: Nsight Compute, amd: rocprofv3}", "values: {}"), "values must map each value"),
])
def test_a_term_used_or_written_wrong_is_refused_at_load(write, change, problem):
    text = HEAD + TERMS + RULE
    old, new = change
    assert old in text
    with pytest.raises(PackError) as info:
        load_packs([write("org.yaml", text.replace(old, new, 1))], builtin=False, kind="torch")
    assert any(problem in p for p in info.value.problems), info.value.problems


def test_two_terms_of_one_name_are_refused(write):
    with pytest.raises(PackError) as info:
        load_packs([write("org.yaml", HEAD + TERMS + TERMS.replace("terms:\n", "") + RULE)], builtin=False,
                   kind="torch")
    assert any("term 'org_profiler' is already declared" in p for p in info.value.problems)


def test_the_torch_packs_advice_names_only_the_traces_vendor():
    ruleset = load_packs(kind="torch")
    assert ruleset.texts({"device_vendor": "nvidia"})["kernel_profiler"].startswith("Nsight Compute")
    assert ruleset.texts({"device_vendor": "amd"})["matrix_units"] == "matrix cores"
    assert ruleset.texts({"device_vendor": "mtia"}) == {}  # no NVIDIA or AMD words on an MTIA trace


def test_a_term_without_values_quotes_the_profiles_own_text(write):
    """A fact the trace names in words (the operator stack of a blocking copy) is quoted as it is, on one line and
    at most 300 characters; a profile without it drops the clause."""
    terms = "terms:\n  - name: org_profiler\n    from: org_stack\n"
    ruleset = load_packs([write("org.yaml", HEAD + terms + RULE)], builtin=False, kind="torch")
    metrics = {"org_busy": Metric("org_busy", 0.9, "fraction", "reported")}
    (finding,) = evaluate(ruleset, metrics, None, info={"org_stack": "## step ##\n> aten::to"}).findings
    assert finding.message == "The device is busy 90.00 %; profile its kernels (## step ## > aten::to)."
    assert len(ruleset.texts({"org_stack": "x" * 5000})["org_profiler"]) == 300
    (bare,) = evaluate(ruleset, metrics, None, info={}).findings
    assert bare.message == "The device is busy 90.00 %; profile its kernels."
