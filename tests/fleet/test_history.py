"""A name's history: attempts in order, speedups against the first and the previous, findings fixed
and new, regressions under the noise floor; its document and JSON."""

from __future__ import annotations

import json

import pytest
from fleet.frames import finding, frames, profile

from advisor.core.errors import AdvisorError
from advisor.fleet.history import build_history, history_document, history_json
from advisor.fleet.summary import limits
from advisor.report.markdown import render_markdown


def _attempts():
    rows = [profile("gemm", "g1", 0.010, run=1, label="mon"), profile("gemm", "g2", 0.005, run=2, label="tue"),
            profile("gemm", "g3", 0.0055, run=3, label="wed"),
            profile("gemm", "g4", kind=None, status="error", error="truncated", run=3, path="/p/gemm-bad.json"),
            profile("conv", "c1", 0.001)]
    findings = [finding(rows[0], "weight-reload"), finding(rows[1], "compute-bound"), finding(rows[2], "compute-bound"),
                finding(rows[2], "dma-wait")]
    return frames(rows, findings)


def test_attempts_in_order_with_speedups_and_findings():
    h = build_history(*_attempts(), "gemm", "/s")
    assert [(a.label, a.total_time, a.verdict) for a in h.attempts] == [
        ("mon", 0.010, "n/a"), ("tue", 0.005, "better"), ("wed", 0.0055, "worse")]
    tue, wed = h.attempts[1], h.attempts[2]
    assert (tue.vs_first, tue.vs_previous) == (2.0, 2.0)
    assert wed.vs_first == pytest.approx(0.010 / 0.0055) and wed.vs_previous == pytest.approx(0.005 / 0.0055)
    assert (tue.fixed, tue.new) == (("weight-reload",), ("compute-bound",))
    assert (wed.fixed, wed.new, wed.regression) == ((), ("dma-wait",), True)
    assert [f.path for f in h.failures] == ["/p/gemm-bad.json"]


def test_an_attempt_of_several_ranks_is_their_median():
    rows = [profile("step", f"m{r}", t, run=1, label="mon", path=f"/mon/rank{r}.json") for r, t in
            enumerate((0.010, 0.030))]
    rows.append(profile("step", "t0", 0.010, run=2, label="tue", path="/tue/rank0.json"))
    h = build_history(*frames(rows, [finding(rows[1], "straggler")]), "step", "/s")
    mon, tue = h.attempts
    assert (mon.paths, mon.total_time, mon.findings) == (("/mon/rank0.json", "/mon/rank1.json"), 0.020,
                                                         ("straggler",))
    assert (tue.vs_first, tue.fixed, tue.verdict) == (2.0, ("straggler",), "better")
    text = render_markdown(history_document(h, limits()))
    assert "mon: 2 profiles (neuron, trn1.2xlarge), median time 20 ms" in text
    assert "`store:step@tue`" in text and "`store:step@mon`" not in text  # mon names two profiles


def test_noise_floor_decides_the_regression():
    assert not build_history(*_attempts(), "gemm", "/s", noise=0.2).attempts[2].regression


def test_document_table_and_chart():
    doc = history_document(build_history(*_attempts(), "gemm", "/s"), limits())
    text = render_markdown(doc)
    assert doc.title == "History: gemm"
    assert "| 2 | tue | 5 ms | 2× | 2× | better | `weight-reload` | `compute-bound` |" in text
    assert "| 3 | wed | 5.5 ms | 1.82× | 0.909× | **regression** | — | `dma-wait` |" in text
    assert "- **1 regression(s)**: wed." in text
    chart = next(b for s in doc.sections for b in s.blocks if getattr(b, "kind", "") == "chart")
    assert chart.spec["kind"] == "series" and chart.spec["labels"] == ["mon", "tue", "wed"]
    assert chart.spec["values"] == pytest.approx([10.0, 5.0, 5.5]) and chart.spec["ylabel"] == "total time (ms)"


def test_many_attempts_get_a_plain_line():
    many = limits()["history"]["labelled_points"] + 1
    rows = [profile("k", f"h{i}", 0.001 * (i + 1), run=i + 1) for i in range(many)]
    doc = history_document(build_history(*frames(rows, []), "k", "/s"), limits())
    chart = next(b for s in doc.sections for b in s.blocks if getattr(b, "kind", "") == "chart")
    assert chart.spec["kind"] == "line" and len(chart.spec["values"]) == len(rows)


def test_json_is_deterministic():
    h = build_history(*_attempts(), "gemm", "/s")
    data = json.loads(history_json(h))
    assert data["format"] == "advisor-fleet-history"
    assert [a["regression"] for a in data["attempts"]] == [False, False, True]
    assert history_json(h) == history_json(build_history(*_attempts(), "gemm", "/s"))


def test_unknown_name_lists_known_and_suggests():
    with pytest.raises(AdvisorError) as caught:
        build_history(*_attempts(), "gem", "/s")
    assert caught.value.problem == "no profile named 'gem' in the store; known: conv, gemm; did you mean 'gemm'?"


@pytest.mark.parametrize(("paths", "expected"), [
    (["/in/after.csv", "/in/before.csv"], ["/in/before.csv", "/in/after.csv"]),  # not by path: after came second
    (["/t/attempt_10.json", "/t/attempt_2.json"], ["/t/attempt_2.json", "/t/attempt_10.json"]),  # numbers as numbers
    (["/t/tuned.json", "/t/baseline.json"], ["/t/baseline.json", "/t/tuned.json"]),
])
def test_attempts_of_one_run_follow_the_order_their_names_make_evident(paths, expected):
    """Issue 36: `advisor history` ordered one run's attempts by path, so `after` came before `before` and the fix
    read as "0.627× … 1 regression"."""
    times = {"/in/before.csv": 0.00082, "/in/after.csv": 0.0005125}
    rows = [profile("k", f"h{i}", times.get(p, 0.001), run=1, path=p) for i, p in enumerate(paths)]
    h = build_history(*frames(rows, []), "k", "/s")
    assert [a.paths[0] for a in h.attempts] == expected
    if paths[0] == "/in/after.csv":
        assert h.attempts[1].vs_first == pytest.approx(0.00082 / 0.0005125) and not h.attempts[1].regression


def test_an_order_the_names_do_not_give_is_said_to_be_unknown():
    rows = [profile("k", "h1", 0.001, run=1, path="/in/gemm.csv"), profile("k", "h2", 0.002, run=1, path="/in/fma.csv")]
    h = build_history(*frames(rows, []), "k", "/s")
    text = render_markdown(history_document(h, limits()))
    assert "is not known (no capture time, one run, and no before/after or numbered names)" in text
    captured = [profile("k", "h1", 0.001, run=1, path="/in/gemm.csv", captured="2026-11-01T10:00"),
                profile("k", "h2", 0.002, run=1, path="/in/fma.csv", captured="2026-11-02T10:00")]
    assert "is not known" not in render_markdown(history_document(build_history(*frames(captured, []), "k", "/s"),
                                                                  limits()))
