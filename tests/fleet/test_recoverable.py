"""One profile's recoverable time is counted once (issue 36 §4): the profile row carries what its report gives
as "All findings together, each claim once", and its root causes' rows split exactly that, in the engine's
order, so the fleet's Root causes table never adds one piece of time under two root causes."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from fleet.frames import frames
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, load_analysis
from advisor.core.model import Finding
from advisor.engine.budget import bound_values, claimed_together
from advisor.fleet.rows import Item, attributed, outcome
from advisor.fleet.summary import summarize

ITEM = Item(Path("/p/profile"), "a" * 64, 1, 1)


def _outcome(analysis):
    return outcome(analysis, ITEM, None, frozenset())


def _parts(result) -> dict[str, float | None]:
    return {f["rule"]: f["recoverable_time"] for f in result.findings}


def _check_adds_up(analysis, result) -> None:
    """The profile's recoverable time is the report's figure; its root causes' parts add up to it exactly;
    symptoms carry none."""
    together = claimed_together(analysis.findings, bound_values(analysis.bounds))
    total = analysis.value("total_time")
    assert result.row["gain"] == together
    assert result.row["recoverable_time"] == pytest.approx(together * total, rel=1e-12)
    roots = [f["recoverable_time"] for f in result.findings if f["root_cause"] and f["recoverable_time"] is not None]
    assert math.fsum(roots) == pytest.approx(result.row["recoverable_time"], rel=1e-12)
    assert all(f["recoverable_time"] is None for f in result.findings if not f["root_cause"])


def test_two_root_causes_and_a_bound_on_their_sum():
    """ncu before.csv: uncoalesced 51.15 % and two root causes sharing the issue-slots claim at 42 %: 93 % in
    all, which the compute_busy bound both claims name caps at 77.6 %. Before: the row said 51.15 % and the
    table summed 51.15 + 42 + 42 % of the same kernel."""
    analysis = load_analysis(SAMPLES / "ncu_before_after" / "before.csv", AnalyzeOptions())
    result = _outcome(analysis)
    _check_adds_up(analysis, result)
    total = analysis.value("total_time")
    assert result.row["gain"] == pytest.approx(0.776)
    parts = _parts(result)
    assert parts["uncoalesced-global-access"] == pytest.approx(0.5115 * total)
    assert parts["occupancy-limited-by-registers"] == pytest.approx((0.776 - 0.5115) * total)
    assert parts["long-scoreboard-stalls"] == 0.0  # its claim went to the root cause before it


def test_two_root_causes_that_add_up():
    """legacy_trace: tensor-reload 28.55 % and small-dma-payloads 10.24 %, separate claims: 38.79 % together
    (the row said 28.55 %); weight-reload, a symptom at 28.55 %, is its cause's time and carries none."""
    analysis = load_analysis(SAMPLES / "legacy_trace" / "profile.json", AnalyzeOptions())
    result = _outcome(analysis)
    _check_adds_up(analysis, result)
    total = analysis.value("total_time")
    assert result.row["gain"] == pytest.approx(0.3879, abs=1e-4)
    parts = _parts(result)
    assert parts["tensor-reload"] == pytest.approx(0.28552 * total, rel=1e-4)
    assert parts["small-dma-payloads"] == pytest.approx(0.10235 * total, rel=1e-4)
    assert parts["weight-reload"] is None and parts["dma-wait"] is None


def _finding(name: str, gain: float | None, root: bool = True, claims: str = "", scope: str = "global") -> Finding:
    return Finding(id=name.upper(), name=name, pack="test", severity="high", category="test", title=name,
                   message="", root_cause=root, because=(), evidence={}, params={}, estimated_speedup=gain,
                   recommendation="", claims=claims, speedup_scope=scope)


def test_a_constructed_analysis():
    """Root causes in the engine's order: a shared claim counts once, a local estimate and a root cause with
    none keep None, a symptom keeps none, and claims that would take the whole run count as the largest."""
    base = load_analysis(SAMPLES / "weight_reload" / "summary.json", AnalyzeOptions())
    findings = (_finding("a", 0.5, claims="x"), _finding("c", 0.3), _finding("b", 0.4, claims="x"),
                _finding("none", None), _finding("local", 0.9, scope="local"), _finding("symptom", 0.6, root=False))
    analysis = replace(base, findings=findings, bounds=())
    result = _outcome(analysis)
    _check_adds_up(analysis, result)
    total = analysis.value("total_time")
    assert result.row["gain"] == pytest.approx(0.8)  # 0.5 (claim x, once) + 0.3
    assert _parts(result) == {"a": pytest.approx(0.5 * total), "c": pytest.approx(0.3 * total), "b": 0.0,
                              "none": None, "local": None, "symptom": None}
    whole = (_finding("p", 0.7), _finding("q", 0.6), _finding("r", 0.2))  # 150 %: only the largest counts
    assert attributed(whole, claimed_together(whole, {})) == {"p": 0.7, "q": 0.0, "r": 0.0}
    assert attributed((_finding("p", 0.2, claims="x"), _finding("q", 0.5, claims="x")), 0.5) == {"p": 0.5, "q": 0.0}


def test_the_fleet_table_counts_one_profile_once():
    """The Root causes table and the top offender from the ncu profile's rows: the root causes' recoverable
    times add up to the profile's, not to 51 + 42 + 42 % of it."""
    analysis = load_analysis(SAMPLES / "ncu_before_after" / "before.csv", AnalyzeOptions())
    result = _outcome(analysis)
    row = {**result.row, "run": 1, "part": 1}
    p, f = frames([row], [{**x, "run": 1, "part": 1} for x in result.findings])
    s = summarize(p, f, {"total_time": "s"}, "/s", lambda h: Path("/s") / f"{h}.json")
    summed = math.fsum(c.recoverable_time or 0.0 for c in s.root_causes)
    assert summed == pytest.approx(s.offenders[0].recoverable_time, rel=1e-12)
    assert s.offenders[0].recoverable_time == pytest.approx(0.776 * analysis.value("total_time"))
    assert [c.rule for c in s.root_causes][:2] == ["uncoalesced-global-access", "occupancy-limited-by-registers"]
