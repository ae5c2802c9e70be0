"""The fleet's top target (issue 23): never a profile whose own report says it is near its bound, and what is
behind an offender lists root causes before the symptom its estimate belongs to."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet.frames import finding, frames, profile

from advisor.fleet.overview_report import fleet_document
from advisor.fleet.summary import limits, summarize
from advisor.report.markdown import render_markdown


def _summary(rows, findings=()):
    p, f = frames(rows, list(findings))
    return summarize(p, f, {"total_time": "s"}, "/s", lambda h: Path("/s/analyses") / f"{h}.json")


def test_a_long_profile_near_its_bound_is_no_target():
    # 3 % of 10 s (300 ms) would outrank 50 % of 100 ms (50 ms), but its report says it is near its bound
    near = profile("tuned", "h1", 10.0, gain=0.03, gain_finding="dma-wait", root_causes="dma-wait")
    slow = profile("slow", "h2", 0.1, gain=0.5, gain_finding="weight-reload", root_causes="weight-reload")
    s = _summary([near, slow], [finding(near, "dma-wait", 0.03), finding(slow, "weight-reload", 0.5)])
    assert limits()["offenders"]["near_bound"] == 0.05
    assert [(o.name, o.recoverable_time) for o in s.offenders] == [("slow", pytest.approx(0.05))]
    assert (s.near_bound, s.near_bound_limit) == (1, 0.05)
    text = render_markdown(fleet_document(s, limits()))
    assert "- Top offender: **slow** (neuron, trn1.2xlarge): 50 ms recoverable of 100 ms, behind it `weight-reload`." \
        in text
    assert ("1 profile(s) are near their bound by their own reports (every estimate under 5.00 % of their time) "
            "and are no target") in text
    # its root cause still counts in the fleet's recoverable time: it is time, only not a target
    assert {c.rule: c.recoverable_time for c in s.root_causes}["dma-wait"] == pytest.approx(0.3)


def test_only_profiles_near_their_bound_leave_no_target():
    near = profile("tuned", "h1", 10.0, gain=0.02, gain_finding="dma-wait", root_causes="dma-wait")
    s = _summary([near], [finding(near, "dma-wait", 0.02)])
    assert s.offenders == () and s.near_bound == 1
    text = render_markdown(fleet_document(s, limits()))
    assert "No analysed profile has an estimate of recoverable time. 1 profile(s) are near their bound" in text


def test_a_profile_without_estimates_is_not_near_its_bound():
    unknown = profile("unknown", "h1", 1.0, root_causes="memory-bound")  # no estimate: unknown, not near
    assert _summary([unknown]).near_bound == 0


def test_behind_it_lists_root_causes_before_the_symptom():
    # the largest estimate is a catch-all symptom's: the root causes come first, the symptom is marked
    p = profile("legacy", "h1", 0.001, gain=0.33, gain_finding="mfu-below-achievable",
                root_causes="memory-bound,dma-wait")
    s = _summary([p], [finding(p, "memory-bound", 0.2), finding(p, "dma-wait", 0.04),
                       finding(p, "mfu-below-achievable", 0.33, root_cause=False)])
    o = s.offenders[0]
    assert (o.causes, o.symptom) == (("memory-bound", "dma-wait"), "mfu-below-achievable")
    assert o.behind == ("memory-bound", "dma-wait", "mfu-below-achievable")
    text = render_markdown(fleet_document(s, limits()))
    assert "| `memory-bound`, `dma-wait`, symptom `mfu-below-achievable` |" in text
    assert "behind it `memory-bound`, `dma-wait`, symptom `mfu-below-achievable`." in text


def test_behind_it_keeps_a_root_cause_estimate_in_its_place():
    p = profile("ranks", "h1", 0.05543, gain=0.5626, gain_finding="memory-bound",
                root_causes="memory-bound,straggler-dma")
    o = _summary([p], [finding(p, "memory-bound", 0.5626)]).offenders[0]
    assert (o.symptom, o.behind) == (None, ("memory-bound", "straggler-dma"))
