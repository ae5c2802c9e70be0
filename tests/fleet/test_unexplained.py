"""Device idle with no identified cause ranks last (issue 36 §4): the rules advisor/data/fleet.yaml lists under
`root_causes: unexplained:` measure time the device waits on something outside the profile. They come after
every root cause with an owner in the Root causes table, the TL;DR and an offender's "Behind it"."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet.frames import finding, frames, profile

from advisor.fleet.overview_report import fleet_document
from advisor.fleet.summary import limits, summarize, unexplained_rules
from advisor.packs.load import load_packs
from advisor.report.markdown import render_markdown


def _summary(rows, findings):
    p, f = frames(rows, findings)
    return summarize(p, f, {"total_time": "s"}, "/s", lambda h: Path("/s") / f"{h}.json")


def _fleet():
    """Device idle is the biggest time (60 % of 10 ms), then weight-reload (20 % of 10 ms and 50 % of 2 ms)."""
    idle = profile("idle", "h1", 0.010, gain=0.8, gain_finding="device-idle", root_causes="device-idle,weight-reload")
    other = profile("other", "h2", 0.002, gain=0.5, gain_finding="weight-reload", root_causes="weight-reload")
    gaps = profile("gaps", "h3", 0.004, kind="rbln", gain=0.5, gain_finding="device-idle-gaps",
                   root_causes="device-idle-gaps", device="ATOM")
    findings = [finding(idle, "device-idle", 0.6), finding(idle, "weight-reload", 0.2),
                finding(other, "weight-reload", 0.5), finding(gaps, "device-idle-gaps", 0.5)]
    return [idle, other, gaps], findings


def test_the_list_names_rules_that_exist():
    listed = unexplained_rules(limits())
    assert {"neuron/device-idle", "rbln/device-idle-gaps", "torch/unexplained-queued-wait"} <= listed
    for entry in listed:
        kind, rule = entry.split("/")
        assert load_packs(kind=kind).canonical(rule) == rule, entry


def test_root_causes_with_an_owner_rank_first():
    s = _summary(*_fleet())
    assert [(c.rule, c.unexplained) for c in s.root_causes] == [
        ("weight-reload", False), ("device-idle", True), ("device-idle-gaps", True)]
    assert s.root_causes[1].recoverable_time == pytest.approx(0.006)  # the biggest time, still after
    assert s.root_causes[1].frequency_rank == 2  # ranking by count is unchanged
    assert s.offenders[0].causes == ("weight-reload", "device-idle")  # the report's order put idle first


def test_the_overview_says_why():
    text = render_markdown(fleet_document(_summary(*_fleet()), limits()))
    assert "- Biggest recoverable time: `weight-reload` (neuron), 3 ms over 2 profile(s)" in text
    assert "| 2 | `device-idle` (*no cause identified*) | neuron | 6 ms | 1 (50.00 %) | 2 |" in text
    assert "ranked last, after every root cause with an owner" in text
    assert "behind it `weight-reload`, `device-idle`." in text


def test_only_unexplained_time():
    rows, findings = _fleet()
    rows = [r for r in rows if r["name"] == "gaps"]
    text = render_markdown(fleet_document(_summary(rows, [f for f in findings if f["hash"] == "h3"]), limits()))
    assert ("- Biggest recoverable time: `device-idle-gaps` (rbln), 2 ms over 1 profile(s) (100.00 % of the kind's) "
            "(*no cause identified*), and no root cause with an owner has an estimate.") in text
