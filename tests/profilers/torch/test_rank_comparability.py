"""Rank folders whose members cannot be compared, and the bound of a rebalancing estimate (issue 34, class 8):
ranks that differ in device, world size or step count get a note saying so and no straggler or imbalance
finding; rebalancing a rank's compute gives back no more than moving work between the ranks can."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor.api import analyze

STRAGGLERS = SAMPLES / "torch_straggler_ranks"
CROSS_RANK = ("straggler-rank", "straggler-rank-device", "straggler-rank-host", "straggler-rank-comm",
              "rank-compute-imbalance")


def _read(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _write(path: Path, trace: dict) -> None:
    path.write_bytes(gzip.compress(json.dumps(trace).encode()))


def _folder(tmp_path: Path, change=None, rank: int = 0) -> Path:
    """The four ranks of torch_straggler_ranks, `change` applied to one rank's trace."""
    out = tmp_path / "ranks"
    shutil.copytree(STRAGGLERS, out, ignore=shutil.ignore_patterns("*.md", "*.yaml"))
    if change is not None:
        path = out / f"rank{rank}.pt.trace.json.gz"
        trace = _read(path)
        change(trace)
        _write(path, trace)
    return out


def _on_v100(trace: dict) -> None:
    for device in trace["deviceProperties"]:
        device.update(name="Tesla V100-SXM2-32GB", computeMajor=7, computeMinor=0, numSms=80)


def _of_world_8(trace: dict) -> None:
    trace["distributedInfo"]["world_size"] = 8


def _one_step_fewer(trace: dict) -> None:
    last = max(int(e["name"].split("#")[1]) for e in trace["traceEvents"] if e.get("name", "").startswith(
        "ProfilerStep#"))
    trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("name") != f"ProfilerStep#{last}"]


def _cross_rank(a) -> list[str]:
    return [f.name for f in a.findings if f.name in CROSS_RANK]


def _note(a) -> str:
    return next((n for n in a.notes if "not comparable" in n), "")


def test_the_sample_ranks_are_comparable_and_keep_their_straggler(tmp_path):
    a = analyze(_folder(tmp_path), jobs=1)
    assert not _note(a)
    assert "straggler-rank" in _cross_rank(a)


@pytest.mark.parametrize(("change", "field"), [(_on_v100, "device_name"), (_of_world_8, "world_size"),
                                               (_one_step_fewer, "step_count")])
def test_ranks_that_differ_get_a_note_and_no_straggler(tmp_path, change, field):
    # rank 2 (throttled) is analysed: a straggler on comparable ranks; rank 0 differs here
    a = analyze(_folder(tmp_path, change), jobs=1)
    note = _note(a)
    assert f"{field} differs" in note and "rank 0" in note, a.notes
    assert "no straggler or rank imbalance is judged" in note
    assert not _cross_rank(a), [(f.name, f.severity) for f in a.findings]
    assert a.value("straggler_excess_percent") is None and a.value("member_count") == 4
    assert a.metrics["straggler_excess_percent"].missing == ("comparable_members",)
    assert any(n.name == "straggler-rank" for n in a.not_applicable)


def test_a_cpu_only_rank_beside_a_v100_rank_is_no_straggler(tmp_path):
    """The issue's shape: a CPU-only rank of one step and a V100 rank of six steps gave straggler-rank 'up to
    89.86 %' with no word on the two being different machines."""
    out = tmp_path / "mixed"
    out.mkdir()
    shutil.copy(SAMPLES / "torch_cpu_only" / "cpu_only_rank34.pt.trace.json.gz", out / "rank1.pt.trace.json.gz")
    v100 = _read(STRAGGLERS / "rank0.pt.trace.json.gz")
    _on_v100(v100)
    _write(out / "rank0.pt.trace.json.gz", v100)
    a = analyze(out, jobs=1)
    note = _note(a)
    assert "device_name differs" in note and "Tesla V100-SXM2-32GB" in note
    assert "step_count differs" in note and "world_size differs" in note
    assert not _cross_rank(a)
    assert all(f.severity == "info" for f in a.findings if "rank" in f.name)


def test_rebalancing_two_ranks_gives_back_at_most_half_their_compute_difference():
    """Balanced, both ranks compute the mean of the two: rank 0 gives back half its 74.43 ms extra compute,
    12.23 % of its 304.16 ms window, not the 24.47 % the others' whole wait suggested."""
    a = analyze(SAMPLES / "torch_ddp_imbalance", jobs=1)
    finding = next(f for f in a.findings if f.name == "rank-compute-imbalance")
    half = a.value("straggler_compute_time_excess") / 2 / a.value("total_time")
    assert half == pytest.approx(0.1223, abs=1e-4)
    assert 0 < finding.estimated_speedup <= half + 1e-9
    assert finding.estimated_speedup == pytest.approx(half)
    assert not _note(a)


def _markdown(path: Path, out: Path) -> str:
    from advisor.cli import main

    assert main(["report", str(path), "-o", str(out)]) == 0
    return out.read_text()


def test_two_clusters_of_ranks_are_groups_not_outliers_of_a_median(tmp_path):
    """torch_tp_slow_link: ranks 0-1 (NVLink, 282 ms) and 2-3 (PCIe, 667 ms). The median of the four (474 ms) lies
    between the pairs, and all four were its "outliers"; the two pairs are the finding."""
    text = _markdown(SAMPLES / "torch_tp_slow_link", tmp_path / "tp.md")
    assert "Window outliers" not in text
    assert ("Window: two groups, 2.36× apart — the faster rank 0, rank 1 (median 282.1 ms), the slower rank 2, "
            "rank 3 (median 666.7 ms). Outliers within a group (outside 0.8–1.25× its own median): none.") in text


def test_ranks_of_one_group_keep_their_outliers_of_the_median(tmp_path):
    text = _markdown(STRAGGLERS, tmp_path / "s.md")  # 231.7, 231.8, 265.7, 293.2 ms: one group, widest gap 1.15×
    assert "Window outliers (outside 0.8–1.25× the median 248.8 ms): none." in text and "two groups" not in text


def test_the_overview_warns_that_the_ranks_are_not_comparable(tmp_path):
    text = _markdown(_folder(tmp_path, _on_v100), tmp_path / "v100.md")
    ranks = text.split("## Ranks", 1)[1].split("\n## ", 1)[0]
    assert "**Not comparable.**" in ranks and "device_name differs (rank 0 Tesla V100-SXM2-32GB" in ranks
