"""Issue 23, history: `advisor history` must never merge a before and an after into one attempt with a
median time. One run (or one label) that stored two captures of a name holds two attempts; the ranks or
cores of one capture (paths that differ only by a number: rank0.pb, rank1.pb) stay one point."""

from __future__ import annotations

import re

import pytest
from fleet.frames import frames, profile

from advisor.core.errors import AdvisorError
from advisor.fleet.attempts import attempt, points
from advisor.fleet.history import build_history, history_document
from advisor.fleet.lookup import pick
from advisor.fleet.summary import limits
from advisor.report.markdown import render_markdown


def _before_after(**extra):
    return [profile("gemm", "b1", 0.010, run=1, label="mon", path="/w/before/gemm.json", **extra),
            profile("gemm", "a1", 0.004, run=1, label="mon", path="/w/after/gemm.json", **extra)]


def test_a_before_and_an_after_in_one_run_are_two_attempts():
    """Issue 23 "Fleet and history": before (10 ms) and after (4 ms) stored in one run with one label were one
    attempt "mon: 2 profiles, median time 7 ms"; they are two attempts, each with its own time."""
    h = build_history(*frames(_before_after(), []), "gemm", "/s")
    assert sorted(a.total_time for a in h.attempts) == [0.004, 0.010]
    assert all(len(a.paths) == 1 for a in h.attempts)
    assert 0.007 not in [a.total_time for a in h.attempts]
    text = render_markdown(history_document(h, limits()))
    assert "2 profiles" not in text and "`store:gemm@mon" not in text  # a label that names two captures
    assert "mon (/w/after/gemm.json): `/w/after/gemm.json`" in text


def test_two_captures_without_label_or_capture_time_are_two_attempts():
    """The same defect without a label: `before_gemm.json` and `after_gemm.json` of one run are two attempts."""
    rows = [profile("gemm", "b1", 0.010, run=3, path="/w/gemm_before.json"),
            profile("gemm", "a1", 0.004, run=3, path="/w/gemm_after.json")]
    steps = points(frames(rows, [])[0].to_dict("records"), {}, captures=True)
    assert len(steps) == 2 and {s.total_time for s in steps} == {0.004, 0.010}


def test_the_ranks_of_one_capture_stay_one_point_at_their_median():
    """A run that stored a kernel once per rank (rank0 … rank3: paths differing only by a number) is one
    point at the median, as before: 10, 12, 14, 40 ms give 13 ms."""
    rows = [profile("step", f"r{r}", t, run=1, label="mon", path=f"/cap/rank{r}.pb")
            for r, t in enumerate((0.010, 0.012, 0.014, 0.040))]
    h = build_history(*frames(rows, []), "step", "/s")
    assert len(h.attempts) == 1 and h.attempts[0].total_time == pytest.approx(0.013) and len(h.attempts[0].paths) == 4


def test_per_rank_folders_of_one_capture_stay_one_point():
    """Ranks written one folder each (`/cap/rank0/profile.json`) are one capture too."""
    rows = [profile("step", f"r{r}", 0.01 * (r + 1), run=1, path=f"/cap/rank{r}/profile.json") for r in range(3)]
    assert len({attempt(r) for r in rows}) == 1


def test_two_labels_in_one_run_are_two_attempts():
    """Two labels stored in one run (`--label before`, `--label after`) are two attempts, never one median."""
    rows = [profile("gemm", "b1", 0.010, run=1, label="before", path="/w/gemm.json"),
            profile("gemm", "a1", 0.004, run=1, label="after", path="/w/gemm.json")]
    assert len({attempt(r) for r in rows}) == 2


def test_latest_of_a_run_with_two_captures_is_still_refused_not_merged():
    """`store:gemm@latest` cannot tell which of two captures of one run is later: it is refused naming both
    paths (one line, an AdvisorError), never answered with one of them or a median."""
    rows = sorted(_before_after(), key=lambda r: r["path"])
    with pytest.raises(AdvisorError, match=re.escape("/w/after/gemm.json, /w/before/gemm.json")):
        pick(rows, "gemm", None, "store:gemm")
