"""Issue 36: rbln_before's verdict said "up to 29.55 %" (the DMA-bound layers, with the Neural Engine's starved
time as their symptom), and the fix the sample's after models gave 37.7 %: the "up to" was broken. The starved
time is a cause of its own (transfers issued without prefetch starve it in every layer), and the bound holds."""

from __future__ import annotations

from pathlib import Path

from advisor.api import analyze
from advisor.engine.budget import bound_values, claimed_together
from advisor.report.findings import root_causes

PAIR = Path(__file__).parents[3] / "samples" / "rbln_before_after"


def test_the_before_estimate_bounds_what_the_after_gained():
    before, after = analyze(PAIR / "before.pb"), analyze(PAIR / "after.pb")
    measured = 1 - after.value("total_time") / before.value("total_time")
    assert 0.35 < measured < 0.40
    causes = root_causes(before)
    assert [c.name for c in causes][:2] == ["ne-starved-by-transfers", "dma-bound-layers"]
    assert causes[0].estimated_speedup >= measured
    assert claimed_together(before.findings, bound_values(before.bounds)) >= measured
