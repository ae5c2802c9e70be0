"""The report's next steps (advisor/report/findings.py), from findings built here: no sample has a catch-all and
specific root causes that all carry recommendations, so their order had no test (review 4 §4.4 R4 survived)."""

from __future__ import annotations

from advisor.core.model import Analysis, Finding, SourceInfo
from advisor.report.document import Bullets
from advisor.report.findings import next_steps_section, ranked_steps


def cause(name: str, gain: float, recommendation: str, catch_all: bool = False) -> Finding:
    """A root cause with a global estimate and its recommendation."""
    return Finding(id=name.upper(), name=name, pack="neuron", severity="high", category="c", title=name, message="",
                   root_cause=True, because=(), evidence={}, params={}, estimated_speedup=gain,
                   recommendation=recommendation, catch_all=catch_all)


def analysis(*findings: Finding) -> Analysis:
    return Analysis(advisor_version="test", source=SourceInfo("x", "json", ""), info={}, hardware=None, metrics={},
                    findings=findings, kind="neuron")


def test_next_steps_list_a_catch_all_after_the_specific_causes_whatever_its_gain():
    """The catch-all's 80 % is the largest gain, and it comes first in the findings: its step still comes last,
    after the specific causes ranked by their own gains."""
    found = analysis(cause("mfu-below-achievable", 0.8, "Raise the achieved FLOP rate.", catch_all=True),
                     cause("dma-wait", 0.1, "Overlap DMA with compute."),
                     cause("weight-reload", 0.3, "Keep the weights resident."))
    steps = ranked_steps(found)
    assert [s.split(" (")[0] for s in steps] == [
        "Keep the weights resident.", "Overlap DMA with compute.", "Raise the achieved FLOP rate."]
    assert steps[0] == "Keep the weights resident. (`weight-reload`, estimated gain up to 30.00 % of the kernel's time)"
    section = next_steps_section(found)
    assert section is not None
    listed = section.blocks[0]
    assert isinstance(listed, Bullets) and listed.ordered and listed.items == tuple(steps)
