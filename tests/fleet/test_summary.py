"""The fleet summary from hand-built store tables: counts, root causes, offenders, distributions,
outliers, failures and trends, value by value."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet.frames import NAN, finding, frames, profile

from advisor.fleet.summary import histogram, limits, robust_z, summarize


def _summary(profiles, findings, noise=0.02, top=10):
    p, f = frames(profiles, findings)
    units = {"total_time": "s", "dma_active_time_percent": "fraction"}
    return summarize(p, f, units, "/s", lambda h: Path("/s/analyses") / f"{h}.json", noise=noise, top=top)


def _fleet():
    a = profile("a", "h1", 0.010, gain=0.5, gain_finding="weight-reload", dma=0.4)
    b = profile("b", "h2", 0.004, gain=0.25, gain_finding="memory-bound", dma=0.5)
    c = profile("c", "h3", 0.002, dma=0.6)
    k = profile("k", "h4", 0.001, kind="ncu", gain=0.1, gain_finding="fp32-non-fused", device="8.0")
    bad = profile("broken", "h5", kind=None, status="error", error="unknown format", path="/p/broken.json")
    findings = [finding(a, "weight-reload", 0.5), finding(b, "weight-reload", 0.1), finding(b, "memory-bound", 0.25),
                finding(c, "memory-bound"), finding(k, "fp32-non-fused", 0.1),
                finding(k, "uncoalesced", 0.3, scope="local")]
    return [a, b, c, k, bad], findings


def test_counts_per_kind_with_failures():
    s = _summary(*_fleet())
    assert (s.profiles, s.ok, s.failed) == (5, 4, 1)
    by_kind = {k.kind: k for k in s.kinds}
    assert [k.kind for k in s.kinds] == ["ncu", "neuron", "unknown"]
    assert by_kind["neuron"].total_time == pytest.approx(0.016)
    assert (by_kind["unknown"].failed, by_kind["unknown"].total_time) == (1, None)
    assert s.failures[0].path == "/p/broken.json" and s.failures[0].message == "unknown format"


def test_root_causes_ranked_by_recoverable_time_with_frequency():
    s = _summary(*_fleet())
    ranked = [(c.rule, c.recoverable_time, c.profiles, c.frequency_rank) for c in s.root_causes]
    assert ranked[0] == ("weight-reload", pytest.approx(0.0054), 2, 1)  # 0.5 × 10 ms + 0.1 × 4 ms
    assert ranked[1] == ("memory-bound", pytest.approx(0.001), 2, 1)  # c has no estimate: not counted as 0
    assert ranked[2] == ("fp32-non-fused", pytest.approx(0.0001), 1, 3)
    assert ranked[3] == ("uncoalesced", None, 1, 3)  # a local estimate is never summed
    assert s.root_causes[0].share == pytest.approx(2 / 3)
    assert s.root_causes[2].share == 1.0


def test_offenders_by_recoverable_time_capped():
    s = _summary(*_fleet(), top=2)
    assert [(o.name, o.recoverable_time, o.finding) for o in s.offenders] == [
        ("a", pytest.approx(0.005), "weight-reload"), ("b", pytest.approx(0.001), "memory-bound")]
    assert s.offenders[0].analysis == "/s/analyses/h1.json"
    assert s.offenders[0].attempt == "run 1"


def test_histogram_bins_linear_log_and_single():
    edges, counts, log = histogram([1.0, 2.0, 3.0, 4.0], 12, 100)
    assert (log, len(counts), sum(counts), edges[0], edges[-1]) == (False, 3, 4, 1.0, 4.0)
    edges, counts, log = histogram([1e-6, 1e-5, 1e-3], 12, 100)
    assert log and sum(counts) == 3 and edges[1] / edges[0] == pytest.approx(edges[2] / edges[1])
    assert histogram([2.0, 2.0, 2.0], 12, 100) == ((1.9, 2.1), (3,), False)


def test_distributions_need_enough_values():
    s = _summary(*_fleet())
    found = {(d.kind, d.metric): d for d in s.distributions}
    assert set(found) == {("neuron", "total_time"), ("neuron", "dma_active_time_percent")}  # ncu has one profile
    dma = found["neuron", "dma_active_time_percent"]
    assert (dma.count, dma.minimum, dma.median, dma.maximum, dma.unit) == (3, 0.4, 0.5, 0.6, "fraction")


def test_robust_z_and_its_fallback_when_most_values_tie():
    median, zs = robust_z([1.0, 2.0, 3.0, 4.0, 100.0])
    assert median == 3.0 and zs[-1] == pytest.approx(97 / 1.4826)
    median, zs = robust_z([1.0, 1.0, 1.0, 1.0, 6.0])  # MAD is 0: the mean absolute deviation scales
    assert zs[-1] == pytest.approx(5 / (1.253314 * 1.0))
    assert robust_z([2.0, 2.0, 2.0]) is None


def test_outliers_of_total_time_within_a_name_group():
    rows = [profile("gemm", f"g{i}", t, run=i + 1) for i, t in enumerate([1.0, 1.01, 0.99, 1.02, 0.98, 5.0])]
    rows += [profile("small", f"s{i}", t) for i, t in enumerate([1.0, 1.0, 1.0, 9.0])]  # a group of 4: not judged
    s = _summary(rows, [])
    assert [(o.name, o.hash, o.metric, o.median, o.group_size) for o in s.outliers] == [
        ("gemm", "g5", "total_time", pytest.approx(1.005), 6)]
    assert s.outliers[0].z > limits()["outliers"]["threshold"]


def test_trends_flag_regressions_first_with_findings_of_the_last_step():
    slow = [profile("gemm", "g1", 0.010, run=1, label="mon"), profile("gemm", "g2", 0.012, run=2, label="tue")]
    fast = [profile("conv", "c1", 0.010, run=1, label="mon"), profile("conv", "c2", 0.005, run=2, label="tue")]
    same = [profile("once", "o1", 0.010, run=1, path="/x/once.json"), profile("once", "o2", 0.01, run=1)]
    findings = [finding(slow[0], "a"), finding(slow[1], "a"), finding(slow[1], "b"), finding(fast[0], "c")]
    s = _summary([*slow, *fast, *same], findings)
    assert [(t.name, t.verdict, t.first, t.last) for t in s.trends] == [("gemm", "worse", "mon", "tue"),
                                                                        ("conv", "better", "mon", "tue")]
    gemm, conv = s.trends
    assert gemm.change == pytest.approx(0.2) and gemm.new == ("b",) and gemm.fixed == ()
    assert conv.fixed == ("c",) and conv.new == ()
    assert s.regressions == 1 and s.trends_total == 2  # "once" was stored twice in one run: no trend


def test_a_run_that_stored_a_name_per_rank_is_one_point_at_its_median():
    ranks = [profile("step", f"m{r}", t, run=1, label="mon", path=f"/mon/rank{r}.json") for r, t in
             enumerate((0.010, 0.011, 0.030))]  # one straggler rank
    ranks += [profile("step", f"t{r}", t, run=2, label="tue", path=f"/tue/rank{r}.json") for r, t in
              enumerate((0.012, 0.0125, 0.013))]
    findings = [finding(ranks[2], "straggler"), finding(ranks[4], "dma-wait")]
    trend = _summary(ranks, findings).trends[0]
    assert (trend.attempts, trend.profiles, trend.first_time, trend.last_time) == (2, 6, 0.011, 0.0125)
    assert trend.verdict == "worse" and trend.change == pytest.approx(0.0125 / 0.011 - 1)
    assert (trend.new, trend.fixed) == (("dma-wait",), ("straggler",))


def test_trend_within_the_noise_floor_is_unchanged():
    rows = [profile("gemm", "g1", 0.0100, run=1), profile("gemm", "g2", 0.0101, run=2)]
    assert _summary(rows, [], noise=0.02).trends[0].verdict == "unchanged"
    assert _summary(rows, [], noise=0.001).trends[0].verdict == "worse"


def test_capture_time_orders_before_run():
    rows = [profile("gemm", "g1", 0.010, run=1, captured="2026-11-23T10:00:00"),
            profile("gemm", "g2", 0.020, run=2, captured="2026-11-20T10:00:00")]
    trend = _summary(rows, []).trends[0]
    assert (trend.first, trend.first_time, trend.last_time) == ("2026-11-20T10:00:00", 0.020, 0.010)


def test_empty_store_summary():
    s = _summary([], [])
    assert (s.profiles, s.kinds, s.root_causes, s.offenders, s.trends, s.failures) == (0, (), (), (), (), ())


def test_unknown_time_stays_unavailable():
    rows = [profile("x", "h1", NAN), profile("x", "h2", NAN, path="/q")]
    s = _summary(rows, [])
    assert s.kinds[0].total_time is None and s.distributions == ()


def test_history_across_a_rule_rename_is_one_rule():
    """A store keeps the name a rule had when the profile was analysed: the ncu speed-of-light rule stored
    as memory-throughput-bound in run 1 and memory-bound in run 2 persists; it is neither fixed nor new."""
    from advisor.fleet.render import current_rule_name

    runs = [profile("gemm", "g1", 0.010, kind="ncu", run=1, label="mon"),
            profile("gemm", "g2", 0.012, kind="ncu", run=2, label="tue")]
    findings = [finding(runs[0], "memory-throughput-bound"), finding(runs[1], "memory-bound")]
    p, f = frames(runs, findings)
    s = summarize(p, f, {"total_time": "s"}, "/s", lambda h: Path(f"/s/{h}.json"), renamed=current_rule_name())
    (gemm,) = s.trends
    assert gemm.fixed == () and gemm.new == ()
    assert [(c.kind, c.rule) for c in s.root_causes] == [("ncu", "memory-bound")]
    # without the mapping the same rows read as one rule fixed and another new
    assert _summary(runs, findings).trends[0].new == ("memory-bound",)
    assert current_rule_name()("ncu", "compute-throughput-bound") == "compute-bound"
    assert current_rule_name()("nosuchkind", "x") == "x"
