"""The time budget over every bundled sample of every kind: no estimate above a bound the same analysis
records, catch-alls within what the specific causes established, each piece of time counted once, root
causes before their symptoms and never less severe than them."""

from functools import cache
from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor.api import analyze
from advisor.core.errors import AdvisorError
from advisor.core.model import SEVERITIES, Analysis
from advisor.engine.budget import bound_values, claimed_together
from advisor.kinds import available
from advisor.packs.load import load_packs
from advisor.report.build import build_document

SKIP = {"README.md", ".advisor-written.json"}


def sample_inputs() -> list[Path]:
    """Each sample folder that is one input (rank folders, Explorer exports), else each of its files."""
    inputs = []
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        try:
            analyze_cached(folder)
            inputs.append(folder)
        except AdvisorError:
            inputs.extend(p for p in sorted(folder.iterdir())
                          if p.is_file() and p.name not in SKIP and p.suffix not in (".py", ".yaml"))
    return inputs


@cache
def analyze_cached(path: Path) -> Analysis:
    return analyze(path)


INPUTS = sample_inputs()
EPS = 1e-9


def test_every_kind_has_samples_here():
    kinds = {analyze_cached(p).kind for p in INPUTS}
    assert kinds >= {k.name for k in available() if k.name != "toy"}


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_no_estimate_exceeds_a_bound_the_analysis_records(path):
    a = analyze_cached(path)
    values = bound_values(a.bounds)
    everywhere = {n for f in a.findings if not f.catch_all for n in f.capped_by}
    for f in a.findings:
        causes = [c for c in a.findings if f.name in (*c.explains, *c.because)]
        established = {n for c in causes if not c.catch_all for n in c.capped_by} or everywhere
        if f.global_speedup is None:
            continue
        for name in f.capped_by:
            assert name in values, f"{f.name} is capped by {name}, which the analysis does not record"
            if values[name] is not None:
                assert f.global_speedup <= values[name] + EPS, (f.name, name, f.global_speedup, values[name])
        if f.catch_all:
            for name in established:
                if values.get(name) is not None:
                    assert f.global_speedup <= values[name] + EPS, (f.name, name)
        # a symptom's time is its causes', whatever it claims: never more than what they recover together
        known = [c for c in causes if c.global_speedup is not None]
        if causes and f.speedup_scope == "global":
            assert known, f"{f.name} claims time although none of its causes can ({[c.name for c in causes]})"
            assert f.global_speedup <= sum(c.global_speedup for c in known) + EPS, f.name


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_amdahl_totals_count_no_time_twice(path):
    a = analyze_cached(path)
    # only root causes' estimates count: a symptom's time is its causes', whatever it claims
    gains = [f for f in a.findings if f.global_speedup is not None and f.root_cause]
    together = claimed_together(a.findings, bound_values(a.bounds))
    if not gains:
        assert together is None
        return
    by_claim: dict[str, float] = {}
    for f in gains:
        by_claim[f.claim] = max(by_claim.get(f.claim, 0.0), f.global_speedup)
    assert together <= sum(by_claim.values()) + EPS  # a shared claim counts once
    assert together < 1.0
    caps = [bound_values(a.bounds)[n] for f in gains for n in f.capped_by
            if bound_values(a.bounds).get(n) is not None]
    if caps:
        assert together <= max(caps) + EPS


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_root_causes_precede_their_symptoms_everywhere(path):
    a = analyze_cached(path)
    order = [f.name for f in a.findings]
    by_name = {f.name: f for f in a.findings}
    roots = [f.root_cause for f in a.findings]
    assert roots == sorted(roots, reverse=True), "a symptom is listed before a root cause"
    specific = [f.catch_all for f in a.findings if f.root_cause]
    assert specific == sorted(specific), "a catch-all root cause is listed before a specific one"
    for f in a.findings:
        for symptom in (*f.explains, *f.because):
            if symptom in by_name:
                assert SEVERITIES.index(by_name[symptom].severity) <= SEVERITIES.index(f.severity), (symptom, f.name)
    # the report's lists follow the same order: next steps name rules in the findings' order
    document = build_document(a)
    steps = next((s for s in document.sections if s.anchor == "next-steps"), None)
    if steps is not None:
        text = repr(steps.blocks)
        named = sorted((text.find(f"`{n}`"), n) for n in order if f"`{n}`" in text)
        positions = [order.index(n) for _, n in named]
        assert positions == sorted(positions), f"next steps out of order: {[n for _, n in named]}"


def test_every_builtin_estimate_names_the_bounds_its_fix_cannot_move():
    unbounded = []
    for kind in available():
        rules = load_packs(kind=kind.name)
        bounds = {b.name for b in rules.bounds}
        for r in rules.rules:
            # a local estimate (Nsight Compute) is a share of one unit's inefficiency, capped by its global_with parent
            if r.estimated_speedup is not None and r.pack == kind.name and r.speedup_scope == "global":
                if not r.capped_by:
                    unbounded.append(f"{kind.name}/{r.name}")
                assert set(r.capped_by) <= bounds
    assert not unbounded, f"rules with an estimate and no capped_by: {', '.join(unbounded)}"


def test_an_overview_row_offers_a_root_cause_not_the_symptom_it_explains():
    """legacy_trace: memory-bound is a symptom of its causes (and since issue 36 claims no gain of its own); the
    overview and the fleet offer the root cause, whose fix gives that time back."""
    from advisor.overview import overview_row

    a = analyze_cached(SAMPLES / "legacy_trace" / "profile.json")
    row = overview_row(a, "legacy_trace", analysed=True)
    top = next(f for f in a.findings if f.name == row.gain_finding)
    assert top.root_cause and row.gain == pytest.approx(top.global_speedup)
    assert any(not f.root_cause for f in a.findings) and row.gain_finding != "memory-bound"


def _amdahl_total(markdown: str) -> str:
    """The share in the Markdown report's "All findings together" row."""
    row = next(line for line in markdown.splitlines() if line.startswith("| **All findings together**"))
    return row.split("|")[2].strip().strip("*")


ZERO_PACK = """pack: acme-zero
version: 0.1.0
kinds: [torch]
rules:
  - id: ACME001
    name: acme-host-note
    title: ACME note on the host wait
    category: host
    severity: low
    when: idle_host_wait_fraction > 0.1
    message: The host wait is {idle_host_wait_fraction}.
    recommendation: See the ACME wiki.
    estimated_speedup: ESTIMATE
    claims: host-wait
"""


def _report(tmp_path, sample, *args) -> str:
    from advisor.cli import main

    out = tmp_path / "findings.md"
    assert main(["report", str(sample), *map(str, args), "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_a_zero_estimate_pack_rule_sharing_a_symptoms_claim_cannot_raise_the_total(tmp_path):
    """Issue (safety): on torch_host_bound, launch-overhead (then 23.95 %, now 77.33 %: the idle launching explains,
    issue 34 class 7) explains host-bound (`host-wait`). A pack rule with a 0 % estimate and `claims: host-wait` made
    that a root cause's claim, and "All findings together" went from 23.95 % to 47.90 %."""
    sample = SAMPLES / "torch_host_bound" / "host_bound.pt.trace.json.gz"
    pack = tmp_path / "zero.yaml"
    pack.write_text(ZERO_PACK.replace("ESTIMATE", "0"), encoding="utf-8")
    assert _amdahl_total(_report(tmp_path, sample)) == "77.33 %"
    with_pack = _report(tmp_path, sample, "--rules", pack)
    assert "`acme-host-note`) | 0 % |" in with_pack  # it fired, with its 0 % estimate
    assert _amdahl_total(with_pack) == "77.33 %"


def test_an_estimate_above_the_whole_run_is_unavailable_and_says_so(tmp_path):
    """Issue (safety): an estimate that evaluates to 1e300 at run time was clamped to 100 % and took the verdict.
    It is unavailable instead, the finding names the rule, and no share in the report passes 100 %."""
    sample = SAMPLES / "torch_host_bound" / "host_bound.pt.trace.json.gz"
    pack = tmp_path / "big.yaml"
    pack.write_text(ZERO_PACK.replace("ESTIMATE", "idle_host_wait_fraction * 1e300").replace("claims: host-wait\n", ""),
                    encoding="utf-8")
    text = _report(tmp_path, sample, "--rules", pack)
    assert ("The host wait is 79.61 %. advisor: rule acme-host-note: estimated_speedup evaluated to 7.961e+299, "
            "more than the whole run (a share of time is 0..1); the estimate is unavailable.") in text
    # no estimate shows as the whole run (a share of kernel time tied to operators may well be 100.00 %)
    assert "up to 100.00 %" not in text and "save up to 100" not in text and "unbounded" not in text
    assert "(`acme-host-note`) |" not in text  # not in the Amdahl table: it names no share of time
    assert _amdahl_total(text) == "77.33 %"


@pytest.mark.parametrize(("path", "roots", "total"), [
    # tensor-reload 28.55 % + small-dma-payloads 10.24 %; weight-reload (36.96 %, a symptom of tensor-reload with
    # the same claim) no longer sets `repeated-loads`
    (SAMPLES / "legacy_trace" / "profile.json", {"tensor-reload", "small-dma-payloads"}, 0.3879),
    # ne-starved-by-transfers 40.12 % and dma-bound-layers 29.55 % share one claim: the larger counts (issue 36)
    (SAMPLES / "rbln_before_after" / "before.pb", {"ne-starved-by-transfers", "dma-bound-layers"}, 0.4012),
])
def test_sample_totals_are_their_root_causes_time(path, roots, total):
    a = analyze_cached(path)
    assert {f.name for f in a.findings if f.root_cause and f.global_speedup} == roots
    together = claimed_together(a.findings, bound_values(a.bounds))
    assert together == pytest.approx(total, abs=5e-5)  # the report's figure to its 0.01 %
    for f in a.findings:  # no symptom claims more than the root causes give
        if not f.root_cause and f.global_speedup is not None:
            assert f.global_speedup <= together + EPS, f.name
